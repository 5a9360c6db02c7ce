#!/usr/bin/env python3
"""The server benchmark's request bodies: `check` records of about 4 KB, from
the side-by-side generator's data (seeded), as agents send them.

    python3 benches/server/bodies.py OUT_DIR [--count N] [--seed S]

Writes OUT_DIR/ksi-emission.ndjson and context-agent.ndjson, one record
(`{"id", "output"}`) per line: KSI outputs with prose before what they emit,
ContextAgent outputs with a README of several paragraphs; and json-eval.ndjson,
the side-by-side's json-eval records (with `expected`); json-eval-semantic.ndjson,
the same with typos in the SEMANTIC fields, so that every check embeds.
"""

import argparse
import json
import os
import random
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "side_by_side"))
import generate  # noqa: E402

TARGET = 4096


def prose(rng, size):
    text = []
    while sum(len(s) + 1 for s in text) < size:
        text.append(generate.sentence(rng, 8, 16))
    return " ".join(text)


def ksi(rng, i):
    output = generate.ksi_output(rng, i)
    pad = TARGET - len(output) - 40
    return {"id": f"ksi-{i}", "output": prose(rng, pad) + "\n\n" + output}


def context_agent(rng, i):
    body = json.loads(strip_fence(generate.context_agent_output(rng, i)))
    readme = body["readme"]
    extra = TARGET - len(json.dumps(body)) - 40
    paragraphs = []
    while sum(len(p) + 2 for p in paragraphs) < extra:
        paragraphs.append(prose(rng, 400))
    head, _, usage = readme.partition("## Usage")
    body["readme"] = head + "\n\n".join(paragraphs) + "\n\n## Usage" + usage
    return {"id": f"ca-{i}", "output": json.dumps(body)}


def semantic(rng, i):
    """A json-eval record whose SEMANTIC fields (the description, the address)
    differ from the ground truth by typos: each check embeds its texts."""
    record = generate.json_eval_record(rng, i)
    output = json.loads(strip_fence(record["output"].split("\n", 1)[-1]
                                    if record["output"].startswith("Here") else record["output"]))
    expected = record["expected"]
    output["description"] = generate.typo(rng, expected["description"])
    output["address_line_1"] = generate.typo(rng, expected["address_line_1"])
    record["output"] = json.dumps(output)
    return record


def strip_fence(text):
    if text.startswith("```"):
        return text.split("\n", 1)[1].rsplit("\n```", 1)[0]
    return text


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--count", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=12)
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    for name, make in [("ksi-emission", ksi), ("context-agent", context_agent),
                       ("json-eval", generate.json_eval_record),
                       ("json-eval-semantic", semantic)]:
        rng = random.Random(f"{args.seed}-{name}")
        with open(os.path.join(args.out, f"{name}.ndjson"), "w", encoding="utf-8") as out:
            for i in range(args.count):
                out.write(json.dumps(make(rng, i)) + "\n")


if __name__ == "__main__":
    main()
