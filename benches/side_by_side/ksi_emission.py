#!/usr/bin/env python3
"""Seed 000's `validate_json_emission`, as a user would run it over a JSONL file
instead of Tribunal: the seed's function unchanged (prediction = the record's
`output`), one JSON line per record out.

    python3 benches/side_by_side/ksi_emission.py INPUT.jsonl OUTPUT.jsonl
"""

import json
import re

from common import run


def validate_json_emission(example, prediction, trace=None):
    # The seed's code, verbatim from here to the end of the function
    # (its `hasattr` chain reduced to the one branch a string takes).
    response = str(prediction)

    score = 0.0
    max_score = 1.0

    json_pattern = r'\{[^{}]*"event"\s*:\s*"[^"]+"\s*,[^{}]*"data"\s*:\s*\{[^{}]*\}[^{}]*\}'
    json_matches = re.findall(json_pattern, response)

    if json_matches:
        score += 0.4
        valid_json_count = 0
        for match in json_matches:
            try:
                parsed = json.loads(match)
                if isinstance(parsed, dict) and "event" in parsed and "data" in parsed:
                    valid_json_count += 1
            except:  # noqa: E722 (the seed's)
                pass
        if valid_json_count > 0:
            score += 0.3
            ksi_events = ["agent:status", "agent:spawn", "state:entity:create",
                          "state:entity:update", "message:send", "message:publish"]
            for match in json_matches:
                try:
                    parsed = json.loads(match)
                    if parsed.get("event") in ksi_events:
                        score += 0.3
                        break
                except:  # noqa: E722
                    pass
    else:
        description_patterns = [
            r"I (would|will|can|should) (emit|send|output|generate)",
            r"(emit|send|output|generate) (a|an|the) (JSON|event)",
            r"JSON (event|message|object) (would|will|should) be",
            r"here('s| is) (the|a|an) JSON"
        ]
        for pattern in description_patterns:
            if re.search(pattern, response, re.IGNORECASE):
                score = max(0.0, score - 0.2)
                break

    if trace is not None:
        return score >= 0.7
    return min(score, max_score)


def score(record):
    value = validate_json_emission(None, record["output"])
    return {"id": record.get("id"), "score": value, "passed": value >= 0.7}


if __name__ == "__main__":
    run(score)
