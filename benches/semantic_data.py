#!/usr/bin/env python3
"""Writes the SEMANTIC benchmark's data set (benches/README.md, "SEMANTIC"): json-eval
records whose one field, `summary`, holds a distinct 8-14-word sentence in `expected`
and the same sentence with two words replaced in the output. Seeded.

    python3 benches/semantic_data.py [RECORDS] > sem.jsonl
"""
import json
import random
import sys

WORDS = (
    "the a quick brown fox jumps over lazy dog customer order shipped arrived late "
    "early package damaged refund requested support team replied promptly account "
    "balance updated invoice payment failed succeeded weather today sunny rainy "
    "meeting scheduled tomorrow morning project deadline extended report finished "
    "reviewed approved rejected server crashed restarted database backup completed "
    "user logged password reset email sent"
).split()


def main():
    records = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    rng = random.Random(7)
    for i in range(records):
        words = [rng.choice(WORDS) for _ in range(rng.randint(8, 14))]
        expected = " ".join(words).capitalize() + "."
        output = expected.split()
        for _ in range(2):
            output[rng.randrange(len(output))] = rng.choice(WORDS)
        record = {
            "id": f"s{i}",
            "output": json.dumps({"summary": " ".join(output)}),
            "expected": {"summary": expected},
        }
        print(json.dumps(record))


if __name__ == "__main__":
    main()
