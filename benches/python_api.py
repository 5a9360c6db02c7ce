#!/usr/bin/env python3
"""The Python API against the Python a user would write instead, in memory (no
I/O on either side): seed 000's metric function called in a loop over KSI
emission records, `pack.evaluate` called in the same loop, and
`pack.evaluate_many` over all of them with 1 and 2 threads, and in calls of 1,000
records (as Ray's `map_batches` makes them). Prints one table of
times and ratios, and the boundary's per-call overhead.

    python benches/python_api.py DATA.jsonl [--records N] [--repeat R]

Run by `scripts/bench` (with the Python that scripts/python-test builds the
package into); DATA is its generated KSI emission set.
"""

import argparse
import json
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "side_by_side"))

import tribunal_engine as tribunal  # noqa: E402
from ksi_emission import validate_json_emission  # noqa: E402  (the seed's function)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def best(repeat, work):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return min(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", help="KSI emission records (JSONL)")
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    with open(args.data, encoding="utf-8") as lines:
        records = [json.loads(line) for _, line in zip(range(args.records), lines)]
    outputs = [r["output"] for r in records]
    n = len(records)
    pack = tribunal.Pack.load(os.path.join(ROOT, "rules/ksi-emission"))

    # Both sides agree before they are timed.
    for record, result in zip(records[:2000], pack.evaluate_many(records[:2000])):
        assert abs(validate_json_emission(None, record["output"]) - result.score) < 1e-9

    def python_loop():
        for output in outputs:
            validate_json_emission(None, output)

    def evaluate_loop():
        for output in outputs:
            pack.evaluate(output).score

    def in_calls(size, jobs):
        for start in range(0, n, size):
            pack.evaluate_many(records[start:start + size], jobs=jobs)

    rows = [
        ("Python loop of the seed's metric", best(args.repeat, python_loop)),
        ("Python loop of pack.evaluate", best(args.repeat, evaluate_loop)),
        ("pack.evaluate_many, jobs=1", best(args.repeat, lambda: pack.evaluate_many(records, jobs=1))),
        ("pack.evaluate_many, jobs=2", best(args.repeat, lambda: pack.evaluate_many(records, jobs=2))),
        # In calls on batches, as Ray's `map_batches` makes them.
        ("  in calls of 1,000, jobs=1", best(args.repeat, lambda: in_calls(1_000, 1))),
        ("  in calls of 1,000, jobs=2", best(args.repeat, lambda: in_calls(1_000, 2))),
    ]
    baseline = rows[0][1]
    print(f"\nPython API, {n:,} KSI emission records in memory, best of {args.repeat} "
          f"(tribunal {tribunal.__version__}, {os.cpu_count()} CPUs)")
    print(f"{'':36} {'seconds':>8} {'us/record':>10} {'vs Python':>10}")
    for name, seconds in rows:
        print(f"{name:36} {seconds:8.3f} {seconds / n * 1e6:10.2f} {baseline / seconds:9.2f}x")
    # The boundary's cost per call: `evaluate` of a short text without JSON with
    # a pack that has no rules (the engine's fixed cost per record included).
    with tempfile.TemporaryDirectory() as folder:
        with open(os.path.join(folder, "pack.yaml"), "w", encoding="utf-8") as manifest:
            manifest.write("name: empty\nversion: 1.0.0\n")
        empty = tribunal.Pack.load(folder)

        def empty_loop():
            for _ in outputs:
                empty.evaluate("no json here")

        call = best(args.repeat, empty_loop) / n * 1e6
    print(f"one pack.evaluate call with a pack that has no rules (the boundary's per-call "
          f"cost, the engine's fixed cost included): {call:.2f} us")


if __name__ == "__main__":
    main()
