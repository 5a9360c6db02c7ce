#!/usr/bin/env python3
"""Reference records for rules/structured-output from seed 001's parser.

A Python port of `parse_agent_output(raw, allowed_kinds, fallback_kind)` as seed
001 ("Structured Output", section "The parser") describes it:

- Tier 1: `json.loads(raw)`;
- Tier 2: "a regex extracts the first {...} block and attempts to parse it":
  `re.search(r"\\{.*\\}", raw, re.DOTALL)` (greedy: from the first `{` to the
  last `}`), then `json.loads` of the match;
- Tier 3: the raw text wrapped in the fallback kind,
  `{"kind": fallback_kind, "text": raw, "_raw_fallback": True}`;
- "Kind validation": a `kind` outside `allowed_kinds` is replaced by
  `fallback_kind`; "Extra payload fields" are preserved.

with the pack's grant (rules/structured-output/pack.yaml): `may_emit:
[world.observed, judge.verdict]`, fallback kind `world.observed`, and its ladder
`[strict, embedded, fallback]`: Tier 1 is `strict`, Tier 2 `embedded`, Tier 3
`fallback`.

The reference (a partial result record): `json` (the parsed object after kind
validation, or the Tier 3 wrapper with `_raw_fallback: true`) and `extraction`
(`tier`, and `raw_fallback` true exactly for Tier 3).

Where the seed's greedy regex and the engine's string-aware, balanced `embedded`
tier legitimately differ (two objects in the prose, or a `}` in the prose after
the object), DESIGN.md's "the first balanced {...} in prose, string-aware" is the
reference: those records have ids starting `design-` and take the first balanced
object (which is valid JSON in every such case).

Left out (see OUT_OF_SCOPE and DIFFERENCES; `--differences` prints the latter with
the seed's result): replies whose Tier 1 value is not an object (the seed does not
say what happens), a missing or non-string `kind` (the pack's README: the engine
does not replace it), and Python-only JSON and whitespace where the engine and the
seed disagree.

Run from the repository root: python3 tests/reference/gen_structured_output.py
Deterministic (fixed seed), Python 3.11 standard library only.
"""

import json
import os
import random
import re
import sys

ALLOWED_KINDS = ["world.observed", "judge.verdict"]
FALLBACK_KIND = "world.observed"

# ---------------------------------------------------------------------------
# The port.
# ---------------------------------------------------------------------------

TIER2 = re.compile(r"\{.*\}", re.DOTALL)


def parse_agent_output(raw, allowed_kinds, fallback_kind):
    """Seed 001's three-tier parser. Returns (payload, tier)."""
    data, tier = None, None
    # Tier 1: direct JSON parse.
    try:
        data, tier = json.loads(raw), "strict"
    except ValueError:
        data = None
    # Tier 2: the first {...} block.
    if data is None:
        match = TIER2.search(raw)
        if match:
            try:
                data, tier = json.loads(match.group(0)), "embedded"
            except ValueError:
                data = None
    # Tier 3: wrap the raw text.
    if data is None:
        return {"kind": fallback_kind, "text": raw, "_raw_fallback": True}, "fallback"
    if not isinstance(data, dict):
        raise NotAnObject(tier)
    if data.get("kind") not in allowed_kinds:
        data["kind"] = fallback_kind
    return data, tier


class NotAnObject(Exception):
    pass


# ---------------------------------------------------------------------------
# DESIGN.md's Tier 2: the first balanced {...} in prose, string-aware.
# ---------------------------------------------------------------------------


def first_balanced_object(text):
    """The first balanced {...} span (quotes open strings only inside braces), or None."""
    depth, start, in_string, escaped = 0, None, False, False
    for i, c in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif c == "\\":
                escaped = True
            elif c == '"':
                in_string = False
            continue
        if c == "{":
            if depth == 0:
                start = i
            depth += 1
        elif c == "}" and depth:
            depth -= 1
            if depth == 0:
                return text[start:i + 1]
        elif c == '"' and depth:
            in_string = True
    return None


def design_reference(raw):
    """The DESIGN.md result where the first balanced object is valid JSON."""
    span = first_balanced_object(raw)
    data = json.loads(span, parse_constant=_no_constants)
    assert isinstance(data, dict)
    if data.get("kind") not in ALLOWED_KINDS:
        data["kind"] = FALLBACK_KIND
    return data, "embedded"


def _no_constants(name):
    raise ValueError(name)


def record(output, payload, tier):
    return {
        "json": payload,
        "extraction": {"tier": tier, "raw_fallback": tier == "fallback"},
    }


def python_only(value):
    """Whether the value holds what only Python's json accepts (NaN, inf, lone surrogates)."""
    if isinstance(value, float):
        return value != value or value in (float("inf"), float("-inf"))
    if isinstance(value, str):
        return any(0xD800 <= ord(c) <= 0xDFFF for c in value)
    if isinstance(value, dict):
        return any(python_only(k) or python_only(v) for k, v in value.items())
    if isinstance(value, list):
        return any(python_only(v) for v in value)
    return False


def seed_reference(raw):
    """The seed's partial result record, or (None, why) when left out."""
    try:
        payload, tier = parse_agent_output(raw, ALLOWED_KINDS, FALLBACK_KIND)
    except NotAnObject:
        return None, "Tier 1 value is not an object"
    if tier != "fallback":
        try:
            original = json.loads(raw) if tier == "strict" else json.loads(TIER2.search(raw).group(0))
        except ValueError:
            original = {}
        if not isinstance(original.get("kind"), str):
            return None, "missing or non-string kind"
        if python_only(payload):
            return None, "Python-only JSON"
        if "_raw_fallback" in payload:
            return None, "the reply carries _raw_fallback itself"
    return record(raw, payload, tier), None


# ---------------------------------------------------------------------------
# Generated outputs.
# ---------------------------------------------------------------------------

rng = random.Random(10001)

KINDS_OK = ["world.observed", "judge.verdict"]
KINDS_OTHER = ["agent.spoke", "scene.rewrite", "World.Observed", "world.observed ", "judge",
               "world_observed", "", "judge.verdict.final", "\u4e16\u754c.observed"]
SENTENCES = ["A mossy ticket booth opens in a tree root.", "The path folds itself into a paper crane.",
             "I collect echoes.", "Lanterns drift upstream against the current.",
             "Frost writes its name on the window.", "The fox wins by a whisker.",
             "Moths spell out a warning on the lamp.", "The gate creaks.", "A crow laughs.",
             "Nobody comes.", "The mushrooms charge admission to their bioluminescent shows.",
             "Is the clock running backwards?", "What a night!", "Pi is 3.14 today.",
             "She whispers \"{not a brace}\" to the door.", "Braces {like these} float by.",
             "A quote: \"hello\", and a backslash \\ too.", "Caf\u00e9 lights flicker na\u00efvely.",
             "\u65e5\u672c\u306e\u591c\u3002", "\U0001F344 The mushrooms glow.",
             "Line one.\nLine two.", "Tabs\tand more tabs.", "The verdict: Mara, by a nose\u2026"]
EXTRA_FIELDS = [
    ("emotion", ['"wistful"', '"desperate"', '"calm"', '""', '3', 'null']),
    ("wants", ['"an answer"', '"to leave"', '["x", "y"]']),
    ("winner", ['"Mara"', '"Tobin"', 'null', '2', '""']),
    ("scores", ['{"Mara": 7, "Tobin": 5}', '{"Mara": 7.5}', '{}', '{"Mara": "7"}', '[1, 2]',
                '{"A": 0, "B": 10, "C": 3.25}']),
    ("mood", ['"tense"', '"\U0001F914"']),
    ("thought", ['"hidden reasoning"']),
    ("confidence", ['0.8', '1', '0']),
    ("tags", ['["a", {"b": [1, 2, {"c": null}]}]', '[]']),
    ("meta", ['{"turn": 3, "nested": {"deep": true}}']),
]
PROSE_BEFORE = ["Certainly! Here is the JSON:", "Here is my response:", "Sure thing!", "OK.",
                "Here you go -", "Output:", "As requested,", "The scene, as JSON:",
                "I'll describe the scene. Here's the object:", "She said \"go\" and", "\U0001F914",
                "Result (see below):", "Answer:\n", "Here's the JSON you asked for:"]
PROSE_AFTER = ["Hope that helps.", "Let me know if you need more.", "Done.", "(end of reply)",
               "That's all!", "\U0001F44D", "Is this what you wanted?", "Thanks; bye."]
PLAIN = ["The mushrooms charge admission to their bioluminescent shows.",
         "The gate creaks. A crow laughs. Nobody comes.", "I think the fox wins.",
         "Nothing happens.", "", " ", "\n", "kind: world.observed\ntext: A yaml reply.",
         "I would output {kind, text} but I cannot.", "Here are the fields: kind and text.",
         "[world.observed] The lamp flickers.", "The answer is 42."]


def jstr(text):
    return json.dumps(text, ensure_ascii=rng.random() < 0.3)


def text_value():
    n = rng.choice([1, 1, 1, 2, 2, 3, 4])
    return jstr(" ".join(rng.choice(SENTENCES) for _ in range(n)))


def obj(kind=None, pretty=None, extras=None, text=True):
    if kind is None:
        kind = rng.choice(KINDS_OK) if rng.random() < 0.7 else rng.choice(KINDS_OTHER)
    items = [('"kind"', jstr(kind))]
    if text:
        items.append(('"text"', text_value()))
    if extras is None:
        extras = rng.choice([0, 0, 0, 1, 1, 2, 3])
    for name, values in rng.sample(EXTRA_FIELDS, extras):
        items.append((json.dumps(name), rng.choice(values)))
    if rng.random() < 0.15:
        rng.shuffle(items)
    if pretty is None:
        pretty = rng.random() < 0.3
    if pretty:
        indent = rng.choice(["  ", "    ", "\t"])
        return "{\n" + ",\n".join(f"{indent}{k}: {v}" for k, v in items) + "\n}"
    sep, colon = rng.choice([", ", ","]), rng.choice([": ", ":"])
    return "{" + sep.join(f"{k}{colon}{v}" for k, v in items) + "}"


def jws():
    return "".join(rng.choice(" \t\n\r") for _ in range(rng.choice([0, 0, 0, 1, 2])))


def gen_strict():
    return jws() + obj() + jws()


def gen_seed_examples():
    return rng.choice([
        '{"kind": "world.observed", "text": "The path folds itself into a paper crane."}',
        'Certainly! Here is the JSON: {"kind": "agent.spoke", "text": "I collect echoes."}',
        "The mushrooms charge admission to their bioluminescent shows.",
        '{"kind": "judge.verdict", "text": "The fox wins by a whisker."}',
        '{"kind": "world.observed", "text": "A mossy ticket booth opens in a tree root."}',
        '{"kind": "agent.spoke", "text": "I collect echoes.", "emotion": "wistful", "wants": "an answer"}',
    ])


def gen_kind_validation():
    return obj(kind=rng.choice(KINDS_OTHER + KINDS_OK), extras=rng.choice([0, 1]))


def gen_prose_before():
    return rng.choice(PROSE_BEFORE) + rng.choice([" ", "\n", "\n\n"]) + obj()


def gen_prose_after():
    return obj() + rng.choice([" ", "\n", "\n\n"]) + rng.choice(PROSE_AFTER)


def gen_prose_around():
    return (rng.choice(PROSE_BEFORE) + rng.choice([" ", "\n"]) + obj() + rng.choice([" ", "\n"])
            + rng.choice(PROSE_AFTER))


def gen_fenced():
    fence = rng.choice(["```json", "```", "```JSON", "~~~json"])
    close = "~~~" if fence.startswith("~") else "```"
    text = fence + "\n" + obj() + "\n" + close
    mode = rng.randrange(3)
    if mode == 1:
        text = rng.choice(PROSE_BEFORE) + "\n" + text
    elif mode == 2:
        text = rng.choice(PROSE_BEFORE) + "\n\n" + text + "\n" + rng.choice(PROSE_AFTER)
    return text


def gen_plain():
    n = rng.randrange(1, 3)
    return " ".join(rng.choice(PLAIN) for _ in range(n))


def gen_malformed():
    o = obj(pretty=False)
    mode = rng.randrange(7)
    if mode == 0:
        bad = o.replace('"', "'")
    elif mode == 1:
        bad = o[:-1] + ",}"
    elif mode == 2:
        bad = re.sub(r'"(kind|text)":', r"\1:", o)
    elif mode == 3:
        bad = o.replace("null", "None") if "null" in o else o[:-1] + ', "ok": True}'
    elif mode == 4:
        bad = o.replace(", ", " ", 1) if ", " in o else o.replace(",", " ", 1)
    elif mode == 5:
        bad = o[:-1] + ' // trailing comment\n}'
    else:
        bad = "{" + o
    if rng.random() < 0.4:
        bad = rng.choice(PROSE_BEFORE) + " " + bad
    return bad


def gen_truncated():
    o = obj()
    cut = rng.randrange(1, len(o))
    text = o[:cut]
    if rng.random() < 0.3:
        text = rng.choice(PROSE_BEFORE) + " " + text
    if rng.random() < 0.2:
        text = "```json\n" + text
    return text


def gen_unbalanced_prose_brace():
    # An unclosed `{` in the prose before the object: the seed's regex starts there
    # and fails; the engine's unclosed brace hides the object. Both fall back.
    return rng.choice(["Note {see below. Here: ", "Use { to start: ", "{ oops "]) + obj(pretty=False)


def gen_nested_braces_in_strings():
    inner = rng.choice(['"{"', '"}"', '"{}}{"', '"a {b} c"', '"\\"}\\""', '"\\\\"'])
    k = rng.choice(KINDS_OK + KINDS_OTHER[:2])
    o = '{"kind": ' + jstr(k) + ', "text": ' + text_value() + ', "raw": ' + inner + '}'
    return rng.choice([o, rng.choice(PROSE_BEFORE) + " " + o, o + " " + rng.choice(PROSE_AFTER)])


def gen_duplicate_keys():
    k1, k2 = rng.choice(KINDS_OK + KINDS_OTHER[:2]), rng.choice(KINDS_OK + KINDS_OTHER[:2])
    return rng.choice([
        '{"kind": ' + jstr(k1) + ', "text": "One.", "kind": ' + jstr(k2) + '}',
        '{"kind": ' + jstr(k1) + ', "text": "One.", "text": "Two."}',
    ])


def gen_design_two_objects():
    a, b = obj(pretty=False), obj(pretty=False)
    return rng.choice([
        a + " " + b,
        a + "\n" + b,
        a + b,
        rng.choice(PROSE_BEFORE) + " " + a + " and also " + b,
        "First: " + a + "\nSecond: " + b + "\n" + rng.choice(PROSE_AFTER),
    ])


def gen_design_brace_after():
    a = obj(pretty=rng.random() < 0.3)
    tail = rng.choice(["Use {name} next time.", "That's it :-}", "} extra", "(see {note})",
                       "Template: {kind, text}", "} }"])
    return rng.choice(["", rng.choice(PROSE_BEFORE) + " "]) + a + " " + tail


GENERATORS = [
    (gen_seed_examples, 6),
    (gen_strict, 560),
    (gen_kind_validation, 160),
    (gen_prose_before, 220),
    (gen_prose_after, 160),
    (gen_prose_around, 160),
    (gen_fenced, 170),
    (gen_plain, 40),
    (gen_malformed, 170),
    (gen_truncated, 160),
    (gen_unbalanced_prose_brace, 40),
    (gen_nested_braces_in_strings, 80),
    (gen_duplicate_keys, 20),
]
DESIGN_GENERATORS = [
    (gen_design_two_objects, 40),
    (gen_design_brace_after, 30),
]

O = '{"kind": "world.observed", "text": "The lamp flickers."}'
# Probes where Tribunal and the seed disagree, left out of the reference file.
DIFFERENCES = [
    ("nan-in-object", O[:-1] + ', "confidence": NaN}',
     "seed: Tier 1 (Python's json.loads accepts NaN); Tribunal: fallback"),
    ("infinity-in-object", O[:-1] + ', "confidence": -Infinity}',
     "seed: Tier 1; Tribunal: fallback"),
    ("float-overflow", O[:-1] + ', "n": 1e400}', "seed: Tier 1 (inf); Tribunal: fallback"),
    ("lone-surrogate", O.replace("flickers", "flickers \\ud800"),
     "seed: Tier 1 (a lone surrogate); Tribunal: fallback"),
    ("nan-in-prose-object", "Here: " + O[:-1] + ', "confidence": NaN}',
     "seed: Tier 2; Tribunal: fallback"),
    ("nbsp-before-json", "\u00a0" + O,
     "seed: Tier 2 (json.loads skips only [ \\t\\n\\r]); Tribunal: strict (same json)"),
    ("bom-before-json", "\ufeff" + O, "seed: Tier 2; Tribunal: strict (same json)"),
    ("formfeed-after-json", O + "\f", "seed: Tier 2; Tribunal: strict (same json)"),
    ("ideographic-space-around-json", "\u3000" + O + "\u3000",
     "seed: Tier 2; Tribunal: strict (same json)"),
    # DESIGN.md's "first balanced {...}" does not say what happens when that span is
    # not JSON; the engine tries the next one, the seed's greedy regex fails.
    ("non-json-braces-before-object", "Use {name} placeholders: " + O,
     "seed: fallback; Tribunal: embedded (skips {name})"),
]

OUT_OF_SCOPE = [
    "[" + O + "]",                                   # Tier 1 gives a list
    "42", "null", '"text"', "true",                  # Tier 1 gives a scalar
    '{"text": "No kind at all."}',                   # the engine does not add a kind
    '{"kind": 3, "text": "A numeric kind."}',        # nor replace a non-string one
    '{"kind": null, "text": "A null kind."}',
]


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    if "--differences" in sys.argv:
        for name, output, note in DIFFERENCES:
            ref, why = seed_reference(output)
            if ref is None:
                payload, tier = parse_agent_output(output, ALLOWED_KINDS, FALLBACK_KIND)
                ref = {"json": repr(payload), "extraction": {"tier": tier}}
            print(json.dumps({"id": name, "output": output, "seed": ref, "note": note},
                             ensure_ascii=True))
        return
    left_out = {output for _, output, _ in DIFFERENCES} | set(OUT_OF_SCOPE)
    seen, records, skipped = set(), [], {}
    for gen, count in GENERATORS + DESIGN_GENERATORS:
        design = (gen, count) in DESIGN_GENERATORS
        name = ("design-" if design else "") + gen.__name__[4:].replace("design_", "").replace("_", "-")
        made = attempts = 0
        while made < count and attempts < count * 30:
            attempts += 1
            output = gen()
            if output in seen or output in left_out:
                continue
            seen.add(output)
            ref, why = seed_reference(output)
            if ref is None:
                skipped[why] = skipped.get(why, 0) + 1
                continue
            if design:
                payload, tier = design_reference(output)
                if ref["json"] == payload and ref["extraction"]["tier"] == tier:
                    continue  # the seed agrees here: not a design- case
                if not isinstance(json.loads(first_balanced_object(output)).get("kind"), str):
                    continue
                ref = record(output, payload, tier)
            else:
                # Every other record is one where the seed's greedy regex and the
                # first balanced object agree (or neither applies).
                span = first_balanced_object(output)
                if ref["extraction"]["tier"] != "strict" and span is not None:
                    try:
                        alt = design_reference(output)
                    except (ValueError, AssertionError):
                        alt = None
                    if alt is not None and (ref["json"], ref["extraction"]["tier"]) != alt:
                        skipped["seed and DESIGN.md differ"] = skipped.get("seed and DESIGN.md differ", 0) + 1
                        continue
            made += 1
            records.append({"pack": "structured-output", "id": f"{name}-{made:04d}",
                            "output": output, "reference": ref})
    path = os.path.join(here, "structured-output.jsonl")
    with open(path, "w", encoding="utf-8", newline="\n") as out:
        for rec in records:
            out.write(json.dumps(rec, ensure_ascii=False) + "\n")
    print(f"wrote {len(records)} records to {os.path.relpath(path)}"
          + "".join(f"; skipped {n} ({why})" for why, n in sorted(skipped.items())))


if __name__ == "__main__":
    main()
