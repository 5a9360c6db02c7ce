#!/usr/bin/env python3
"""Generates the side-by-side benchmark's data sets (seeded, so every run and
every machine gets the same bytes).

    python3 benches/side_by_side/generate.py OUT_DIR [--ksi N] [--json-eval N]
        [--context-agent N] [--seed S] [--shape mixed|long|prose|deep]

Writes OUT_DIR/ksi-emission.jsonl, json-eval.jsonl and context-agent.jsonl: one
`eval` input record per line, in the shapes the shipped packs and the seeds
describe, with the kinds of damage models produce mixed in.

`--shape` changes the outputs' shape, so that the ratios are not only the
generator's usual mix's: `long` (outputs ten to fifty times as long: long
notes, descriptions and READMEs), `prose` (every document in a fence with a
few sentences of prose before and after it) and `deep` (documents nested 16 to 40
levels deep, inside the members each pack leaves free).
"""

import argparse
import json
import os
import random

KSI_EVENTS = ["agent:status", "agent:spawn", "state:entity:create",
              "state:entity:update", "message:send", "message:publish"]
OTHER_EVENTS = ["custom:ping", "agent:heartbeat", "state:entity:delete"]
WORDS = ("the agent task step queue worker result status entity message plan "
         "update create spawn ready done pending retry check value record index "
         "order invoice customer report summary budget review deploy cluster").split()


def sentence(rng, lo, hi):
    words = [rng.choice(WORDS) for _ in range(rng.randint(lo, hi))]
    return " ".join(words).capitalize() + "."


SHAPE = "mixed"


def paragraph(rng, lo, hi):
    """`lo` to `hi` sentences (a long note, description or README section)."""
    return " ".join(sentence(rng, 6, 14) for _ in range(rng.randint(lo, hi)))


def nested(rng, depth):
    """An object nested `depth` levels deep, a few members at each level."""
    value = {"leaf": sentence(rng, 2, 5), "n": rng.randint(0, 999)}
    for level in range(depth - 1):
        value = {"level": depth - level, "tag": rng.choice(WORDS), "next": value}
    return value


def wrapped(rng, body):
    """`body` in a fence with prose before and after it (the form the Python
    a user would write reads too: a document inline in prose it does not find,
    where Tribunal's ladder does, so their results could not be compared)."""
    before, after = paragraph(rng, 1, 3), paragraph(rng, 1, 3)
    return f"{before}\n\n```json\n{body}\n```\n\n{after}"


def ksi_data(rng, i):
    kind = rng.random()
    if kind < 0.5:
        status = rng.choice(["ready", "busy", "done"])
        note = paragraph(rng, 20, 60) if SHAPE == "long" else sentence(rng, 3, 8)
        return {"step": i, "status": status, "note": note}
    return {"id": f"e{i}", "name": rng.choice(WORDS), "count": rng.randint(0, 99)}


def ksi_output(rng, i):
    event = rng.choice(KSI_EVENTS) if rng.random() < 0.85 else rng.choice(OTHER_EVENTS)
    data = ksi_data(rng, i)
    if SHAPE == "deep":
        data["detail"] = nested(rng, rng.randint(16, 40))
    body = json.dumps({"event": event, "data": data})
    if SHAPE == "prose":
        return wrapped(rng, body)
    prose = sentence(rng, 6, 14)
    kind = rng.random()
    if kind < 0.30:
        return body
    if kind < 0.50:
        return f"{prose}\n```json\n{body}\n```"
    if kind < 0.65:
        return f"{prose} {body} {sentence(rng, 3, 6)}"
    if kind < 0.75:
        # Python-dict-style data: the repair tier's work.
        python_dict = ", ".join(f"'{k}': {json.dumps(v)}" for k, v in data.items())
        return json.dumps({"event": event, "data": None}).replace("null", "{" + python_dict + "}")
    if kind < 0.90:
        return f"I would emit an {event} event once step {i} finishes. {prose}"
    return f"{prose} {sentence(rng, 6, 14)}"


FIRST = ["Maria", "John", "Priya", "Chen", "Fatima", "Lars", "Aiko", "Kwame", "Olga", "Diego"]
LAST = ["Gonzalez", "Smith", "Natarajan", "Wei", "Haddad", "Nilsson", "Tanaka", "Mensah", "Ivanova", "Rivera"]
STREETS = ["Harbour Street", "MG Road", "Elm Avenue", "Rue de la Paix", "Hauptstrasse", "Calle Mayor"]


def typo(rng, text):
    if len(text) < 4:
        return text
    pos = rng.randrange(1, len(text) - 1)
    return text[:pos] + rng.choice("aeiouxyz") + text[pos + 1:]


def json_eval_record(rng, i):
    name = f"{rng.choice(FIRST)} {rng.choice(LAST)}"
    gt = {
        "customer_name": name,
        "email": name.lower().replace(" ", ".") + "@example.org",
        "phone_number": f"+1 555 {rng.randint(1000, 9999)}",
        "address_line_1": f"{rng.randint(1, 200)} {rng.choice(STREETS)}",
        "signup_date": f"2023-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}",
        "seats": rng.randint(1, 50),
        "active": rng.random() < 0.8,
        "internal_notes": None if rng.random() < 0.5 else sentence(rng, 3, 6),
        "description": paragraph(rng, 10, 40) if SHAPE == "long" else sentence(rng, 8, 16),
    }
    aio = dict(gt)
    damage = rng.random()
    if damage < 0.3:
        aio["customer_name"] = typo(rng, name)
    if rng.random() < 0.3:
        aio["description"] = typo(rng, typo(rng, gt["description"]))
    if rng.random() < 0.15:
        del aio["phone_number"]
    if rng.random() < 0.15:
        aio["seats"] = gt["seats"] + 1
    if rng.random() < 0.1:
        aio["loyalty_tier"] = "gold"
    if rng.random() < 0.1:
        aio["internal_notes"] = "no notes found"
    if SHAPE == "deep":
        deep = nested(rng, rng.randint(16, 40))
        gt["profile"] = deep
        aio["profile"] = deep if rng.random() < 0.8 else nested(rng, rng.randint(16, 40))
    body = json.dumps(aio)
    if SHAPE == "prose":
        body = wrapped(rng, body)
    elif rng.random() < 0.2:
        body = f"Here is the record:\n```json\n{body}\n```"
    return {"id": f"je-{i}", "output": body, "expected": gt}


def context_agent_output(rng, i):
    tool = f"{rng.choice(WORDS)}-check"
    intro = paragraph(rng, 20, 60) if SHAPE == "long" else sentence(rng, 6, 12)
    readme = f"# {tool}\n\n{intro}\n\n## Usage\n\n`{tool} <file>` exits 0 on PASS and 1 on FAIL."
    if rng.random() < 0.15:
        readme += " " + rng.choice(["TODO: document flags.", "Options: TBD", "FIXME"])
    types = {}
    for t in ["type1", "type2", "type3", "type4"]:
        roll = rng.random()
        if roll < 0.05:
            continue
        example = {"yaml": f"replicas: {rng.randint(0, 30)}",
                   "behavior": rng.choice(["PASS: ", "FAIL: "]) + sentence(rng, 3, 7)}
        if roll < 0.1:
            del example["behavior"]
        types[t] = example
    logic = {"parsing_method": sentence(rng, 5, 9), "pass_fail_logic": sentence(rng, 5, 9)}
    if rng.random() < 0.1:
        logic["pass_fail_logic"] = ""
    if SHAPE == "deep":
        logic["rules"] = nested(rng, rng.randint(16, 40))
    body = {"readme": readme, "type_examples": types, "check_logic": logic}
    text = json.dumps(body, indent=2 if rng.random() < 0.3 else None)
    if SHAPE == "prose":
        text = wrapped(rng, text)
    elif rng.random() < 0.1:
        text = f"```json\n{text}\n```"
    return text


def write(path, records):
    with open(path, "w", encoding="utf-8") as out:
        for record in records:
            out.write(json.dumps(record))
            out.write("\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out_dir")
    parser.add_argument("--ksi", type=int, default=200_000)
    parser.add_argument("--json-eval", type=int, default=100_000)
    parser.add_argument("--context-agent", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=12)
    parser.add_argument("--shape", choices=["mixed", "long", "prose", "deep"], default="mixed")
    args = parser.parse_args()
    global SHAPE
    SHAPE = args.shape
    os.makedirs(args.out_dir, exist_ok=True)
    rng = random.Random(args.seed)
    write(os.path.join(args.out_dir, "ksi-emission.jsonl"),
          ({"id": f"ksi-{i}", "output": ksi_output(rng, i)} for i in range(args.ksi)))
    write(os.path.join(args.out_dir, "json-eval.jsonl"),
          (json_eval_record(rng, i) for i in range(args.json_eval)))
    write(os.path.join(args.out_dir, "context-agent.jsonl"),
          ({"id": f"ca-{i}", "output": context_agent_output(rng, i)} for i in range(args.context_agent)))


if __name__ == "__main__":
    main()
