#!/usr/bin/env python3
"""Reference records for rules/ksi-emission from seed 000's own Python metric.

`validate_json_emission` below is the seed's function verbatim (seed 000,
"Validate JSON Emission Metric"), called in evaluation mode (trace=None) with the
raw model output as the prediction. A string has none of the attributes the seed
looks for, so the seed scores `str(prediction)`, the output itself.

Each line of tests/reference/ksi-emission.jsonl is one generated output and the
partial result record the seed's logic gives for it:

- `score`: the seed's return value;
- `status`: "PASS" iff score >= 0.7, else "FAIL". The pack sets
  `scoring.min_score: 0.7` (rules/ksi-emission/pack.yaml) and the engine's status
  rule (crates/tribunal/src/pipeline/verdict.rs `status`) first counts error issues, then FAILs any score
  below min_score. A description of JSON emission is an error issue (alone it
  would give NEEDS_IMPROVEMENT), but it only happens when nothing matched, so the
  score is 0 and min_score makes the record FAIL. With a match there is no issue.
- `metrics.validate_json_emission.details`: `verdict` (the seed's bootstrapping
  bool, `score >= 0.7`), `matches` (len(json_matches)), `valid`
  (valid_json_count, 0 when nothing matched) and `described` (the seed took its
  description-penalty branch), recorded by an instrumented copy of the seed's
  logic that is checked against the verbatim function on every output.

Run from the repository root: python3 tests/reference/gen_ksi_emission.py
Deterministic (fixed seed), Python 3.11 standard library only.
"""

import json
import os
import random
import re

# ---------------------------------------------------------------------------
# Seed 000, verbatim.
# ---------------------------------------------------------------------------


def validate_json_emission(example, prediction, trace=None):
    """
    Validates if the prediction contains actual JSON emission rather than description.
    
    For DSPy optimization:
    - Returns float (0.0-1.0) when trace is None (evaluation mode)
    - Returns bool when trace is provided (bootstrapping mode)
    """
    import json
    import re
    
    # Get the actual response text
    if hasattr(prediction, 'optimized_instruction'):
        response = str(prediction.optimized_instruction)
    elif hasattr(prediction, 'answer'):
        response = str(prediction.answer)
    elif hasattr(prediction, 'response'):
        response = str(prediction.response)
    else:
        response = str(prediction)
    
    # Initialize score
    score = 0.0
    max_score = 1.0
    
    # Check 1: Find JSON objects in response (0.4 points)
    json_pattern = r'\{[^{}]*"event"\s*:\s*"[^"]+"\s*,[^{}]*"data"\s*:\s*\{[^{}]*\}[^{}]*\}'
    json_matches = re.findall(json_pattern, response)
    
    if json_matches:
        score += 0.4
        
        # Check 2: Validate JSON structure (0.3 points)
        valid_json_count = 0
        for match in json_matches:
            try:
                parsed = json.loads(match)
                if isinstance(parsed, dict) and "event" in parsed and "data" in parsed:
                    valid_json_count += 1
            except:
                pass
        
        if valid_json_count > 0:
            score += 0.3
            
            # Check 3: Check for legitimate KSI events (0.3 points)
            ksi_events = ["agent:status", "agent:spawn", "state:entity:create", 
                         "state:entity:update", "message:send", "message:publish"]
            
            for match in json_matches:
                try:
                    parsed = json.loads(match)
                    if parsed.get("event") in ksi_events:
                        score += 0.3
                        break
                except:
                    pass
    else:
        # Penalize descriptions of JSON emission
        description_patterns = [
            r"I (would|will|can|should) (emit|send|output|generate)",
            r"(emit|send|output|generate) (a|an|the) (JSON|event)",
            r"JSON (event|message|object) (would|will|should) be",
            r"here('s| is) (the|a|an) JSON"
        ]
        
        for pattern in description_patterns:
            if re.search(pattern, response, re.IGNORECASE):
                score = max(0.0, score - 0.2)  # Penalize but don't go negative
                break
    
    # For bootstrapping (when trace is provided), return bool
    if trace is not None:
        return score >= 0.7  # Threshold for accepting examples
    
    # For evaluation/optimization, return float score
    return min(score, max_score)


# ---------------------------------------------------------------------------
# The seed's intermediate values (same code, instrumented), for the details.
# ---------------------------------------------------------------------------

JSON_PATTERN = r'\{[^{}]*"event"\s*:\s*"[^"]+"\s*,[^{}]*"data"\s*:\s*\{[^{}]*\}[^{}]*\}'
DESCRIPTION_PATTERNS = [
    r"I (would|will|can|should) (emit|send|output|generate)",
    r"(emit|send|output|generate) (a|an|the) (JSON|event)",
    r"JSON (event|message|object) (would|will|should) be",
    r"here('s| is) (the|a|an) JSON",
]
KSI_EVENTS = ["agent:status", "agent:spawn", "state:entity:create",
              "state:entity:update", "message:send", "message:publish"]


def seed_internals(response):
    matches = re.findall(JSON_PATTERN, response)
    valid = 0
    for match in matches:
        try:
            parsed = json.loads(match)
            if isinstance(parsed, dict) and "event" in parsed and "data" in parsed:
                valid += 1
        except Exception:
            pass
    described = False
    if not matches:
        described = any(re.search(p, response, re.IGNORECASE) for p in DESCRIPTION_PATTERNS)
    return len(matches), valid, described


# ---------------------------------------------------------------------------
# Generated outputs.
# ---------------------------------------------------------------------------

rng = random.Random(20000)

UNKNOWN_EVENTS = ["agent:dance", "custom:ping", "custom:thing", "state:entity:delete",
                  "message:recv", "agent:Status", "AGENT:STATUS", "agent:status ",
                  " agent:status", "agent-status", "agent:statuses", "orchestrator:ready",
                  "completion:async", "system:health", "message", "event",
                  "state:entity:create:bulk", "agent:spawned", "agent:stat\u00fcs", "\u00e9v\u00e9nement"]
WORDS = ["ready", "busy", "done", "step", "alpha", "beta", "gamma", "queue", "agent", "task",
         "result", "status", "progress", "report", "note", "ok", "retry", "plan", "\u00e9t\u00e9",
         "\u65e5\u672c", "\U0001F914", "na\u00efve", "x", "value"]
KEYS = ["status", "agent_id", "step", "id", "to", "content", "entity", "progress", "count",
        "flag", "note", "score", "tags", "channel", "payload_size", "reason"]
PROSE = ["Starting now.", "Done.", "Here you go:", "Status update:", "Sure!", "OK", "Working on it.",
         "The task is complete.", "Let me report progress.", "Emitting:", "Result follows.",
         "I have finished step 3.", "Next I will look at the logs.", "All good.",
         "The weather is nice today.", "Please find the event below.", "Acknowledged.",
         "Thinking about the orchestrator...", "\U0001F914 hmm", "Voil\u00e0 :", "\u5b8c\u4e86\u3002"]
DESCRIPTIONS = [
    "I would emit an agent:status event to tell the orchestrator I am ready.",
    "I will send a message:send event once the task is done.",
    "I can output the JSON if you want.",
    "I should generate an event for this.",
    "Next, emit a JSON event with the status.",
    "You could send the event yourself.",
    "Then output an event describing the change.",
    "generate the JSON for the new entity",
    "The JSON event would be sent to the orchestrator.",
    "A JSON message will be published later.",
    "The JSON object should be well formed.",
    "Here's the JSON you asked for, more or less.",
    "Here is a JSON sketch: event agent:status with data.",
    "here is an JSON-ish summary",
    "I would emit",
    "I will output the result in plain text instead.",
    "If needed I can send an update.",
]
NEAR_DESCRIPTIONS = [
    "I'd emit an event later.",          # no pattern: I'd
    "I would  emit an event.",           # two spaces
    "We would emit an event.",           # not 'I '... but 'would emit' lacks 'I '
    "Here are the JSON fields.",
    "emit JSON now",                     # no article
    "the JSON payload would be sent",    # payload not in list
    "I would rather not emit anything.",
    "Heres the JSON",                    # no apostrophe
    "here's  the JSON",
    "I shall emit an event.",
    "outputting a JSON file",            # 'outputting a JSON' contains 'output' followed by 'ting'
    "Issued: emitted an event",
    "I wouldn't emit",
]


def swapcase_random(text):
    mode = rng.randrange(4)
    if mode == 0:
        return text.upper()
    if mode == 1:
        return text.lower()
    if mode == 2:
        return text.title()
    return "".join(c.upper() if rng.random() < 0.5 else c.lower() for c in text)


def word():
    return rng.choice(WORDS)


def scalar():
    kind = rng.randrange(9)
    if kind == 0:
        return json.dumps(word(), ensure_ascii=rng.random() < 0.5)
    if kind == 1:
        return str(rng.randrange(-1000, 100000))
    if kind == 2:
        return repr(round(rng.uniform(-100, 100), rng.randrange(1, 6)))
    if kind == 3:
        return rng.choice(["true", "false", "null"])
    if kind == 4:
        return "[" + ", ".join(json.dumps(word(), ensure_ascii=False) for _ in range(rng.randrange(0, 4))) + "]"
    if kind == 5:
        return rng.choice(["1e10", "-2.5E-3", "0", "-0", "0.0", "1E+2", "3.14159"])
    if kind == 6:
        return json.dumps(" ".join(word() for _ in range(rng.randrange(1, 6))), ensure_ascii=False)
    if kind == 7:
        return json.dumps("a \"quoted\" word, with: colon", ensure_ascii=False)
    return json.dumps(rng.choice(["", "line\nbreak", "tab\there", "back\\slash", "\u00e9", "\U0001F600"]),
                      ensure_ascii=rng.random() < 0.5)


def data_body(n=None, extra=None):
    if n is None:
        n = rng.randrange(0, 4)
    keys = rng.sample(KEYS, n)
    items = [f'"{k}": {scalar()}' for k in keys]
    if extra:
        items.insert(rng.randrange(len(items) + 1), extra)
    sep = rng.choice([", ", ",", ",\n  ", " , "])
    return sep.join(items)


def ws():
    return rng.choice(["", " ", " ", "  ", "\n", "\n  ", "\t", " \n"])


def event_obj(event=None, data=None, order="ed", extra_top=None, sp=None):
    if event is None:
        event = rng.choice(KSI_EVENTS)
    if data is None:
        data = "{" + data_body() + "}"
    if sp is None:
        sp = [ws() for _ in range(6)]
    ev = f'"event"{sp[0]}:{sp[1]}{json.dumps(event, ensure_ascii=False)}'
    da = f'"data"{sp[2]}:{sp[3]}{data}'
    parts = [ev, da] if order == "ed" else [da, ev]
    if extra_top:
        parts.insert(rng.randrange(len(parts) + 1), extra_top)
    return "{" + sp[4] + ("," + sp[5]).join(parts) + sp[4] + "}"


def around(obj):
    mode = rng.randrange(8)
    if mode == 0:
        return obj
    if mode == 1:
        return rng.choice(PROSE) + " " + obj
    if mode == 2:
        return obj + " " + rng.choice(PROSE)
    if mode == 3:
        return rng.choice(PROSE) + "\n" + obj + "\n" + rng.choice(PROSE)
    if mode == 4:
        return "```json\n" + obj + "\n```"
    if mode == 5:
        return rng.choice(PROSE) + "\n\n```json\n" + obj + "\n```\n" + rng.choice(PROSE)
    if mode == 6:
        return "```\n" + obj + "\n```"
    return rng.choice(DESCRIPTIONS) + " " + obj


def gen_valid_known():
    return around(event_obj())


def gen_valid_unknown():
    return around(event_obj(event=rng.choice(UNKNOWN_EVENTS)))


def gen_order_data_first():
    # "data" before "event": the seed's regex needs event first (within [^{}]*).
    return around(event_obj(order="de"))


def gen_extra_top_fields():
    extra = rng.choice(['"id": 7', '"ts": "2025-01-01T00:00:00Z"', '"agent": "a1"',
                        '"priority": null', '"tags": ["x", "y"]', '"ok": true'])
    return around(event_obj(event=rng.choice(KSI_EVENTS + UNKNOWN_EVENTS), extra_top=extra))


def gen_several():
    n = rng.randrange(2, 5)
    objs = []
    for _ in range(n):
        kind = rng.randrange(5)
        if kind == 0:
            objs.append(event_obj())
        elif kind == 1:
            objs.append(event_obj(event=rng.choice(UNKNOWN_EVENTS)))
        elif kind == 2:
            objs.append(invalid_match_obj())
        elif kind == 3:
            objs.append(nested_obj())
        else:
            objs.append(event_obj(event=rng.choice(KSI_EVENTS + UNKNOWN_EVENTS)))
    glue = [rng.choice([" ", "\n", " then ", "\n\n", ", ", " and "]) for _ in range(n)]
    text = rng.choice(PROSE) + " "
    for o, g in zip(objs, glue):
        text += o + g
    return text.rstrip() if rng.random() < 0.5 else text


def nested_obj():
    mode = rng.randrange(5)
    inner = "{" + data_body(rng.randrange(1, 3)) + "}"
    if mode == 0:
        data = "{" + data_body(extra=f'"nested": {inner}') + "}"
        return event_obj(data=data)
    if mode == 1:
        return event_obj(extra_top=f'"meta": {inner}')
    if mode == 2:
        return event_obj(data="{" + f'"list": [{inner}, {inner}]' + "}")
    if mode == 3:
        # Braces inside a string value defeat [^{}]* as well.
        return event_obj(data="{" + '"template": "Hello {name}!"' + "}")
    return "{" + f'"outer": {event_obj()}' + "}"


def gen_nested():
    return around(nested_obj())


def invalid_match_obj():
    event = rng.choice(KSI_EVENTS + UNKNOWN_EVENTS[:4])
    mode = rng.randrange(11)
    if mode == 0:
        data = "{'status': 'ready'}"
    elif mode == 1:
        data = "{" + data_body(rng.randrange(1, 3)) + ",}"
    elif mode == 2:
        data = "{status: \"ready\"}"
    elif mode == 3:
        data = "{\"ok\": True, \"v\": None}"
    elif mode == 4:
        return event_obj(event=event) [:-1] + ",}"
    elif mode == 5:
        data = "{\"a\": 1 \"b\": 2}"
    elif mode == 6:
        data = "{\"s\": \"tab\there\"}"  # a raw tab inside a string
    elif mode == 7:
        data = "{\"n\": 01}"
    elif mode == 8:
        data = "{\"n\": .5}"
    elif mode == 9:
        data = "{\"s\": \"bad \\x escape\"}"
    else:
        # Single-quoted keys before a valid-looking event.
        return "{'id': 1, \"event\": \"" + event + "\", \"data\": {}}"
    return event_obj(event=event, data=data)


def gen_invalid_match():
    return around(invalid_match_obj())


def gen_python_json():
    event = rng.choice(KSI_EVENTS + UNKNOWN_EVENTS[:3])
    value = rng.choice(["NaN", "Infinity", "-Infinity", "1e400", "-1e400",
                        "123456789012345678901234567890", "1e-400", "2.5e308",
                        "\"\\ud800\"", "\"\\udc00x\"", "\"\\ud83d\\ude00\"", "-NaN", "nan",
                        "infinity", "+1", "1.", "0x10", "1e", "[NaN, Infinity]"])
    data = "{" + data_body(rng.randrange(0, 2), extra=f'"x": {value}') + "}"
    return around(event_obj(event=event, data=data))


def gen_escaped_and_duplicates():
    mode = rng.randrange(8)
    if mode == 0:
        return '{"event": "nope", "data": {}, "event": "agent:status"}'
    if mode == 1:
        return '{"event": "agent:status", "data": {}, "event": "nope"}'
    if mode == 2:
        return '{"event": "agent\\u003astatus", "data": {"emoji": "\\ud83d\\ude00"}}'
    if mode == 3:
        e = rng.choice(KSI_EVENTS)
        return '{"event": "' + e + '", "data": {}, "event": ["' + e + '"]}'
    if mode == 4:
        # "data" only inside a string: the regex matches, json has no data key.
        e = rng.choice(KSI_EVENTS)
        return rng.choice(PROSE) + ' {"event": "' + e + '", "note": "\\"data\\": {}"}'
    if mode == 5:
        # One match has a known event but no data key; another is valid.
        e = rng.choice(KSI_EVENTS)
        return ('{"event": "custom:x", "data": {"a": 1}} and {"event": "' + e +
                '", "note": "\\"data\\": {}"}')
    if mode == 6:
        e = rng.choice(KSI_EVENTS)
        return '{"event": "' + e + '", "data": {}, "data": 5}'
    e = rng.choice(KSI_EVENTS)
    return '{"event": "' + e.replace(":", "\\u003a") + '", "data": {"k": "v"}}'


def gen_whitespace_variants():
    spaces = ["\u001c", "\u001d", "\u001e", "\u001f", "\u00a0", "\u3000", "\u2003", "\u0085",
              "\u000b", "\u000c", "\r", "\u2028", "\u200b", "\ufeff", "\u180e"]
    sp = [rng.choice(spaces + ["", " "]) for _ in range(6)]
    sp[4] = rng.choice(["", " "])
    return around(event_obj(sp=sp))


def gen_description():
    text = rng.choice(DESCRIPTIONS)
    if rng.random() < 0.6:
        text = swapcase_random(text)
    mode = rng.randrange(4)
    if mode == 0:
        return text
    if mode == 1:
        return rng.choice(PROSE) + " " + text
    if mode == 2:
        # A description next to an event the regex cannot see.
        return text + "\n" + nested_obj()
    return text + " " + rng.choice(['{"event": "agent:status"}', "event: agent:status",
                                    '{"event": "agent:status", "data": "ready"}',
                                    "`agent:status`"])


def gen_unicode_case_description():
    # Python's re.IGNORECASE equivalences beyond ASCII (long s, dotless i, Kelvin...).
    text = rng.choice(["\u0131 would emit an event", "\u0130 WILL SEND THE event",
                       "here\u2019s the JSON", "HERE'\u017f THE JSON", "here i\u017f a JSON",
                       "the J\u017eON object should be", "JSON EVENT WOULD BE \u017fent",
                       "I would \u0435mit", "I WO\u03bcLD EMIT"])
    return text


def gen_near_description():
    text = rng.choice(NEAR_DESCRIPTIONS)
    if rng.random() < 0.5:
        text = swapcase_random(text)
    return text


def gen_prose():
    n = rng.randrange(1, 4)
    return " ".join(rng.choice(PROSE) for _ in range(n))


def gen_truncated():
    obj = event_obj(event=rng.choice(KSI_EVENTS + UNKNOWN_EVENTS[:3]))
    cut = rng.randrange(1, len(obj))
    text = obj[:cut]
    if rng.random() < 0.3:
        text = "```json\n" + text
    return rng.choice(["", rng.choice(PROSE) + " "]) + text


def gen_fenced_python_or_yaml():
    e = rng.choice(KSI_EVENTS)
    mode = rng.randrange(3)
    if mode == 0:
        return "```python\nemit({'event': '" + e + "', 'data': {}})\n```"
    if mode == 1:
        return "```yaml\nevent: " + e + "\ndata:\n  status: ready\n```"
    return "`{\"event\": \"" + e + "\", \"data\": {}}`"


def gen_empty_event_or_data():
    mode = rng.randrange(6)
    if mode == 0:
        return '{"event": "", "data": {}}'
    if mode == 1:
        return '{"event": "agent:status", "data": []}'
    if mode == 2:
        return '{"event": "agent:status", "data": null}'
    if mode == 3:
        return '{"event": "agent:status" "data": {}}'
    if mode == 4:
        return '{"event": agent:status, "data": {}}'
    return '{"event": "agent:status", "data": {}'


def gen_big_numbers():
    digits = rng.choice([4299, 4300, 4301, 5000])
    e = rng.choice(KSI_EVENTS)
    sign = rng.choice(["", "-"])
    frac = rng.choice(["", ".5"])
    return '{"event": "' + e + '", "data": {"n": ' + sign + "9" * digits + frac + '}}'


def gen_empty_like():
    return rng.choice(["", " ", "\n", "{}", "{\"event\": {}}", "null", "[]", "```json\n```",
                       "{\"data\": {}, \"event\": \"agent:status\"}"])


GENERATORS = [
    (gen_valid_known, 520),
    (gen_valid_unknown, 300),
    (gen_order_data_first, 80),
    (gen_extra_top_fields, 150),
    (gen_several, 330),
    (gen_nested, 220),
    (gen_invalid_match, 300),
    (gen_python_json, 170),
    (gen_escaped_and_duplicates, 60),
    (gen_whitespace_variants, 120),
    (gen_description, 300),
    (gen_unicode_case_description, 20),
    (gen_near_description, 80),
    (gen_prose, 120),
    (gen_truncated, 150),
    (gen_fenced_python_or_yaml, 40),
    (gen_empty_event_or_data, 30),
    (gen_big_numbers, 8),
    (gen_empty_like, 20),
]

# Outputs where the engine is known to differ from the seed, left out of the
# reference file. None so far: every generated output agrees.
EXCLUDED = set()


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    path = os.path.join(here, "ksi-emission.jsonl")
    seen = set()
    records = []
    for gen, count in GENERATORS:
        name = gen.__name__[4:].replace("_", "-")
        made = 0
        attempts = 0
        while made < count and attempts < count * 20:
            attempts += 1
            output = gen()
            if output in seen:
                continue
            seen.add(output)
            made += 1
            score = validate_json_emission(None, output)
            verdict = validate_json_emission(None, output, trace=True)
            matches, valid, described = seed_internals(output)
            assert verdict == (score >= 0.7)
            assert (matches == 0) == (score == 0.0) or (matches > 0 and score == 0.4)
            assert (valid > 0) == (score >= 0.7)
            if output in EXCLUDED:
                continue
            records.append({
                "pack": "ksi-emission",
                "id": f"{name}-{made:04d}",
                "output": output,
                "reference": {
                    "status": "PASS" if score >= 0.7 else "FAIL",
                    "score": score,
                    "metrics": {"validate_json_emission": {
                        "score": score,
                        "details": {"verdict": verdict, "matches": matches,
                                    "valid": valid, "described": described},
                    }},
                },
            })
    with open(path, "w", encoding="utf-8", newline="\n") as out:
        for record in records:
            out.write(json.dumps(record, ensure_ascii=False) + "\n")
    print(f"wrote {len(records)} records to {os.path.relpath(path)}")


if __name__ == "__main__":
    main()
