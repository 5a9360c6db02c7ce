"""What the three scorers share: reading a model's JSON as a user would (the
whole output, else its ```json fence), and the JSONL loop."""

import json
import re
import sys

FENCE = re.compile(r"```(?:json)?\s*\n(.*?)\n```", re.DOTALL)


def parse(output):
    """The output's JSON: the whole text, else the first fenced block; None if neither parses."""
    try:
        return json.loads(output)
    except ValueError:
        fence = FENCE.search(output)
        if fence:
            try:
                return json.loads(fence.group(1))
            except ValueError:
                pass
    return None


def run(score):
    """Reads the JSONL file argv[1] and writes score(record), one JSON line per record, to argv[2]."""
    source, target = sys.argv[1], sys.argv[2]
    with open(source, encoding="utf-8") as lines, open(target, "w", encoding="utf-8") as out:
        for line in lines:
            if not line.strip():
                continue
            out.write(json.dumps(score(json.loads(line))))
            out.write("\n")
