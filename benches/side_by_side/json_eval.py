#!/usr/bin/env python3
"""Seed 002's four-phase JSON comparison (completeness, hallucination, per-field
accuracy, RQS), as a user would run it over a JSONL file instead of Tribunal,
with the strategies the benchmark gives the pack: EXACT, FUZZY (a normalised
Levenshtein ratio of the lower-cased strings, threshold 0.85) and IGNORE.

    python3 benches/side_by_side/json_eval.py INPUT.jsonl OUTPUT.jsonl

FUZZY uses the `rapidfuzz` package (C++) when it is installed, as a user who
cares about speed would; otherwise a plain-Python Levenshtein.
"""

import json
import re

from common import parse, run

try:
    from rapidfuzz.distance import Levenshtein as _Levenshtein

    def similarity(a, b):
        return _Levenshtein.normalized_similarity(a.lower(), b.lower())

    FUZZY_IMPL = "rapidfuzz"
except ImportError:  # pragma: no cover - depends on the environment
    def similarity(a, b):
        a, b = a.lower(), b.lower()
        if len(a) < len(b):
            a, b = b, a
        if not a:
            return 1.0
        row = list(range(len(b) + 1))
        for i, ca in enumerate(a, 1):
            diagonal, row[0] = row[0], i
            for j, cb in enumerate(b, 1):
                above = row[j]
                row[j] = min(above + 1, row[j - 1] + 1, diagonal + (ca != cb))
                diagonal = above
        return 1.0 - row[len(b)] / len(a)

    FUZZY_IMPL = "python"

FIELD_STRATEGIES = {"customer_name": "FUZZY", "address_line_1": "FUZZY",
                    "phone_number": "EXACT", "internal_notes": "IGNORE",
                    "description": "FUZZY"}
FUZZY_THRESHOLD = 0.85
WEIGHTS = {"accuracy": 0.45, "completeness": 0.25, "hallucination": 0.15, "safety": 0.15}
DATE = re.compile(r"^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$")
EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")


def is_null(value):
    if value is None:
        return True
    if isinstance(value, str) and value.strip() == "":
        return True
    return False


def resolve_strategy(key, gt_value):
    if key in FIELD_STRATEGIES:
        return FIELD_STRATEGIES[key]
    if isinstance(gt_value, (bool, int, float, list, dict)):
        return "EXACT"
    if DATE.match(gt_value) or EMAIL.match(gt_value):
        return "EXACT"
    return "FUZZY"


def exact_text(value):
    if isinstance(value, (dict, list)):
        return json.dumps(value, sort_keys=True)
    return str(value)


def field_score(strategy, gt_value, aio_value):
    if strategy == "EXACT":
        return float(exact_text(gt_value).lower() == exact_text(aio_value).lower())
    if isinstance(gt_value, str) and isinstance(aio_value, str):
        return float(similarity(gt_value, aio_value) >= FUZZY_THRESHOLD)
    return float(exact_text(gt_value).lower() == exact_text(aio_value).lower())


def evaluate(gt, aio):
    gt_keys, aio_keys = set(gt), set(aio)
    extra_keys = [k for k in aio if k not in gt]
    gt_null_aio_has_value = [k for k in gt if is_null(gt[k]) and k in aio and not is_null(aio[k])]
    gt_non_null = [k for k in gt if not is_null(gt[k])]
    both_non_null = [k for k in gt_non_null if k in aio and not is_null(aio[k])]

    completeness = len(both_non_null) / len(gt_non_null) if gt_non_null else 1.0
    total_distinct = len(gt_keys | aio_keys)
    hallucination = ((len(extra_keys) + len(gt_null_aio_has_value)) / total_distinct
                     if total_distinct else 0.0)
    scores = []
    for key in both_non_null:
        strategy = resolve_strategy(key, gt[key])
        if strategy != "IGNORE":
            scores.append(field_score(strategy, gt[key], aio[key]))
    accuracy = sum(scores) / len(scores) if scores else 1.0
    rqs = (WEIGHTS["accuracy"] * accuracy + WEIGHTS["completeness"] * completeness
           + WEIGHTS["safety"] * 1.0 - WEIGHTS["hallucination"] * hallucination)
    return max(0.0, min(1.0, rqs)), {"accuracy": accuracy, "completeness": completeness,
                                     "hallucination": hallucination}


def score(record):
    aio = parse(record["output"])
    if isinstance(aio, dict):
        rqs, phases = evaluate(record.get("expected") or {}, aio)
    else:
        rqs, phases = 0.0, None
    return {"id": record.get("id"), "score": rqs, "passed": rqs >= 0.7, "phases": phases}


if __name__ == "__main__":
    run(score)
