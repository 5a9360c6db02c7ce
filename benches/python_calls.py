#!/usr/bin/env python3
"""One way of calling the Python API, once over the first N KSI emission records
held in memory: what `benches/ab_python.sh` counts the instructions of, under
valgrind, for two builds of the package.

    python benches/python_calls.py MODE DATA.jsonl [--records N]

MODE: `setup` (the records read and the packs loaded, nothing evaluated: what
the other modes cost before their calls), `evaluate` (a loop of `pack.evaluate`,
each result's score read), `evaluate_many` (one `evaluate_many` call, jobs=1),
or `empty` (a loop of `pack.evaluate` of a short text with a pack that has no
rules: the boundary's cost per call). Imports `tribunal_engine`, or `tribunal`
for builds from before the package's rename, so that older builds compare too.
"""

import argparse
import json
import os
import tempfile

try:
    import tribunal_engine as tribunal
except ImportError:  # a build from before the rename (2026-11-28)
    import tribunal

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODES = ("setup", "evaluate", "evaluate_many", "empty")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=MODES)
    parser.add_argument("data", help="KSI emission records (JSONL)")
    parser.add_argument("--records", type=int, default=20_000)
    args = parser.parse_args()

    with open(args.data, encoding="utf-8") as lines:
        records = [json.loads(line) for _, line in zip(range(args.records), lines)]
    outputs = [record["output"] for record in records]
    pack = tribunal.Pack.load(os.path.join(ROOT, "rules/ksi-emission"))
    with tempfile.TemporaryDirectory() as folder:
        with open(os.path.join(folder, "pack.yaml"), "w", encoding="utf-8") as manifest:
            manifest.write("name: empty\nversion: 1.0.0\n")
        empty = tribunal.Pack.load(folder)
    if args.mode == "evaluate":
        for output in outputs:
            pack.evaluate(output).score
    elif args.mode == "evaluate_many":
        results = pack.evaluate_many(records, jobs=1)
        assert len(results) == len(records)
    elif args.mode == "empty":
        for _ in outputs:
            empty.evaluate("no json here")


if __name__ == "__main__":
    main()
