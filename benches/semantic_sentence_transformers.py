#!/usr/bin/env python3
"""SEMANTIC's reference point: what a user would run instead of Tribunal's
SEMANTIC strategy, sentence-transformers on PyTorch (CPU), scoring the same pairs
`benches/semantic_data.py` generates (see benches/README.md, "SEMANTIC").

Not a project dependency and not run by any test: install it into a virtual
environment of its own, then run it beside `tribunal eval` on the same file:

    python3 -m venv /tmp/st && /tmp/st/bin/pip install sentence-transformers
    python3 benches/semantic_data.py 1000 > target/sem.jsonl
    HF_HUB_OFFLINE=1 /tmp/st/bin/python benches/semantic_sentence_transformers.py \
        target/sem.jsonl --threads 2

It loads the model scripts/setup installed (models/all-MiniLM-L6-v2), then times,
best of --repeat, the cosine similarity of every pair: the texts encoded in
batches of 32, 64 and 128 (sentence-transformers sorts them by length and pads
each batch to its longest), and the first 200 pairs one call per pair. It also
prints the tokens of all texts (special tokens included, without padding), from
which the model's floating-point work follows (about 21 MFLOP a token).
"""
import argparse
import json
import time

import torch
from sentence_transformers import SentenceTransformer


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", help="JSONL from benches/semantic_data.py")
    parser.add_argument("--model", default="models/all-MiniLM-L6-v2")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    with open(args.data, encoding="utf-8") as lines:
        records = [json.loads(line) for line in lines]
    outputs = [json.loads(r["output"])["summary"] for r in records]
    expected = [r["expected"]["summary"] for r in records]
    model = SentenceTransformer(args.model, device="cpu")
    tokens = sum(len(ids) for ids in model.tokenizer(outputs + expected)["input_ids"])
    print(f"{len(records)} pairs, {tokens} tokens, torch {torch.__version__}, "
          f"{args.threads} threads")
    for batch in (32, 64, 128):
        best = float("inf")
        for _ in range(args.repeat):
            start = time.perf_counter()
            a = model.encode(outputs, batch_size=batch, convert_to_tensor=True)
            b = model.encode(expected, batch_size=batch, convert_to_tensor=True)
            torch.nn.functional.cosine_similarity(a, b)
            best = min(best, time.perf_counter() - start)
        print(f"batches of {batch}: {best:.2f} s, {len(records) / best:.0f} pairs/s")
    start = time.perf_counter()
    for output, truth in zip(outputs[:200], expected[:200]):
        a, b = model.encode([output, truth], convert_to_tensor=True)
        torch.nn.functional.cosine_similarity(a, b, dim=0)
    print(f"one pair per call: {200 / (time.perf_counter() - start):.0f} pairs/s")


if __name__ == "__main__":
    main()
