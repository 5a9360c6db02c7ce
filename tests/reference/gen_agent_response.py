#!/usr/bin/env python3
"""Reference records for rules/agent-response from seed 004's Elisp parser.

A Python port of seed 004's `agent--extract-json` and `agent--parse-response`
("AI-IMP-017: JSON Response Protocol"):

    (defun agent--extract-json (text)
      (let ((json-text (string-trim text)))
        (when (string-match "```\\(?:json\\)?\\s*\n\\(\\(?:.\\|\n\\)*?\\)\n```" json-text)
          (setq json-text (string-trim (match-string 1 json-text))))
        json-text))

    (defun agent--parse-response (text)
      (condition-case err
          (let* ((json-text (agent--extract-json text))
                 (json-object (json-parse-string json-text :object-type 'plist
                                                 :null-object nil)))
            (list :eval (plist-get json-object :eval) ... :parse-success t))
        (error (list :eval nil :thought text :mood "uncertain" :confidence 0.5
                     :monologue "Parse error - see thought" :parse-success nil))))

How the port reads the Elisp (checked against GNU Emacs 28.2 running the seed's
functions on every generated output):

- `string-trim` trims `[ \t\n\r]+` at both ends (its default regexps).
- The fence regex. `\\s*` is read as the seed means it, "any run of whitespace-
  syntax characters", i.e. `\\s-*`. (Literally, Emacs reads `\\s*` as the syntax
  class `*`, which does not exist and matches nothing, so the seed's regex as
  written never matches and every fenced reply would fall back; that contradicts
  the seed's own acceptance scenario "JSON in markdown fence ... is extracted".)
  Whitespace syntax is the standard syntax table's: TAB, LF, FF, CR, SPACE,
  NBSP, U+2000-U+200B, U+202F, U+205F, U+3000. (In an Elisp-mode buffer LF and CR
  are not whitespace; no generated output depends on the difference.)
  `string-match` follows `case-fold-search`, t by default, so `json` matches
  `JSON` too. `.` is any character but LF, `\\(?:.\\|\n\\)*?` is non-greedy, and
  the first (leftmost) match wins, as with Python's backtracking `re.search`.
- `json-parse-string` (Emacs 28, libjansson) takes exactly one JSON value with
  only `[ \t\n\r]` around it; it rejects NaN/Infinity, integers outside int64,
  reals that overflow, `\\u0000` and lone surrogates. Any error gives the
  fallback plist.
- `plist-get` of a missing key is nil, like JSON null (so the reference gives
  `null` for a field the reply omits: the engine keeps it absent, which a null
  reference accepts). `false` reads as `:false` (JSON false), `true` as `t`.

The reference (a partial result record): `json` with the five fields (`eval`,
`thought`, `mood`, `confidence`, `monologue`: the seed's parsed values, or its
fallback values with the whole output as `thought` and `_raw_fallback: true`, the
seed's `:parse-success nil`), `extraction.raw_fallback` (not `:parse-success`) and
`extraction.tier` (`strict` when the whole trimmed reply parsed, `fence` when the
fence regex's content did, else `fallback`).

Left out (the seed's result is not well defined, not an object, or the engine
documents a different choice; see OUT_OF_SCOPE and DIFFERENCES below):
replies whose JSON is not an object (`plist-get` on a vector or a string),
field values holding an empty object (`{}` reads as nil, which JSON cannot tell
from null), and the probes in DIFFERENCES, where Tribunal and the seed disagree.

Run from the repository root: python3 tests/reference/gen_agent_response.py
(`--differences` prints the left-out probes with the seed's result instead).
Deterministic (fixed seed), Python 3.11 standard library only.
"""

import json
import math
import os
import random
import re
import sys

# ---------------------------------------------------------------------------
# The port.
# ---------------------------------------------------------------------------

# Characters of whitespace syntax in Emacs's standard syntax table.
WHITESPACE_SYNTAX = "\t\n\x0c\r \u00a0\u2000-\u200b\u202f\u205f\u3000"
# "```\\(?:json\\)?\\s*\n\\(\\(?:.\\|\n\\)*?\\)\n```", with case-fold-search t.
FENCE = re.compile(
    "```(?:[jJ][sS][oO][nN])?[" + WHITESPACE_SYNTAX + "]*\n((?:.|\n)*?)\n```"
)


def string_trim(text):
    """Emacs `string-trim` with its default regexps, "[ \\t\\n\\r]+"."""
    return re.sub(r"[ \t\n\r]+\Z", "", re.sub(r"\A[ \t\n\r]+", "", text))


def agent_extract_json(text):
    """`agent--extract-json`: (json-text, whether the fence regex matched)."""
    json_text = string_trim(text)
    match = FENCE.search(json_text)
    if match:
        return string_trim(match.group(1)), True
    return json_text, False


class ParseError(Exception):
    pass


def _reject_constant(name):
    raise ParseError(f"invalid token {name}")


def _int64(text):
    value = int(text)
    if not -(2**63) <= value < 2**63:
        raise ParseError("too big integer")
    return value


def _real(text):
    value = float(text)
    if math.isinf(value):
        raise ParseError("real number overflow")
    return value


def _check_strings(value):
    if isinstance(value, str):
        if "\x00" in value or any(0xD800 <= ord(c) <= 0xDFFF for c in value):
            raise ParseError("\\u0000 or a lone surrogate")
    elif isinstance(value, dict):
        for key, item in value.items():
            _check_strings(key)
            _check_strings(item)
    elif isinstance(value, list):
        for item in value:
            _check_strings(item)


def json_parse_string(text):
    """Emacs 28's `json-parse-string` (libjansson), as a Python value."""
    try:
        value = json.loads(text, parse_constant=_reject_constant, parse_int=_int64,
                           parse_float=_real)
    except (ValueError, RecursionError) as err:
        raise ParseError(str(err)) from err
    _check_strings(value)
    return value


FALLBACK = {"eval": None, "mood": "uncertain", "confidence": 0.5,
            "monologue": "Parse error - see thought"}
FIELDS = ["eval", "thought", "mood", "confidence", "monologue"]


def agent_parse_response(text):
    """`agent--parse-response`: (fields, parse_success, tier, parsed value)."""
    try:
        json_text, fenced = agent_extract_json(text)
        value = json_parse_string(json_text)
    except ParseError:
        fields = dict(FALLBACK, thought=text)
        return {k: fields[k] for k in FIELDS}, False, "fallback", None
    get = value.get if isinstance(value, dict) else (lambda key: None)
    fields = {k: get(k) for k in FIELDS}
    return fields, True, "fence" if fenced else "strict", value


def as_lisp(value):
    """A JSON value as the plist reader gives it, back in JSON terms: {} is nil."""
    if isinstance(value, dict):
        return {k: as_lisp(v) for k, v in value.items()} if value else None
    if isinstance(value, list):
        return [as_lisp(v) for v in value]
    return value


def reference(output):
    """The partial result record, or the reason the output is left out."""
    fields, success, tier, value = agent_parse_response(output)
    if success and not isinstance(value, dict):
        return None, "the JSON is not an object"
    if success:
        try:
            as_lisp(value)
        except RecursionError:
            return None, "nested too deeply"
        for k in FIELDS:
            if as_lisp(fields[k]) != fields[k]:
                return None, "a field holds an empty object (nil in the plist)"
    json_ref = dict(fields)
    if not success:
        json_ref["_raw_fallback"] = True
    return {
        "json": json_ref,
        "extraction": {"tier": tier, "raw_fallback": not success},
    }, None


# ---------------------------------------------------------------------------
# Generated outputs.
# ---------------------------------------------------------------------------

rng = random.Random(40004)

EVALS = ["(+ 2 2)", "(+ 1 1)", "(buffer-list)", "(message \"hello from the agent\")",
         "(find-file \"~/notes/todo.org\")", "(length (buffer-list))", "(save-buffer)",
         "(emacs-uptime)", "(kill-buffer \"*scratch*\")", "(org-agenda-list)",
         "(let ((x 1))\n  (* x 2))", "(insert \"\\t tab\")", "(string-match \"```\" s)",
         "(format \"%s\" 'sym)", "(setq a \"{not json}\")", "", " ", "(when t (message \"\u00e9t\u00e9 \U0001F914\"))"]
THOUGHTS = ["Testing basic arithmetic to verify eval works", "thinking", "test",
            "I want to see which buffers exist before touching anything",
            "Nothing needs doing this tick; waiting for the user", "The build failed again",
            "Counting buffers to see if I am leaking them", "Saving progress before trying something risky",
            "The last eval errored; I should read *Messages* before retrying",
            "A quote \" and a backslash \\ inside", "Line one\nLine two", "Braces {like} [these]",
            "Fences like ```json\n{}\n``` inside a string", "\u65e5\u672c\u8a9e\u306e\u601d\u8003",
            "Caf\u00e9 na\u00efve r\u00e9sum\u00e9", "", "   padded   ", "tab\there", "\U0001F914 emoji first",
            "[MOOD: focused] old habits", "x" * 300]
MOODS_KEYWORD = ["focused", "calm", "curious", "nervous", "determined", "tidy", "contemplative",
                 "FOCUSED", "Focused", ":focused", "uncertain", "smug", "reckless", "gloomy",
                 "lost", "happy-ish", "very focused", "", "focused\n"]
MOODS_EMOJI = ["\U0001F914", "\U0001F624", "\U0001F60A", "\U0001F915", "\U0001F9D8", "\u270D\uFE0F",
               "\U0001F468\u200D\U0001F4BB", "\U0001F44D\U0001F3FD", "\U0001F1EB\U0001F1F7", "\u2764\uFE0F",
               "\U0001F914\U0001F914", "\u00af\\_(\u30c4)_/\u00af", "\u2728", "\U0001FAE0"]
CONFIDENCES = ["0.85", "0.9", "0.7", "0.5", "0", "1", "0.0", "1.0", "0.95", "0.55", "0.33",
               "1e-1", "5E-1", "0.123456789", "-0.1", "1.4", "2", "-0", "1.5", "100",
               "\"0.8\"", "null", "true", "[0.5]"]
MONOLOGUES = ["First real interaction - attempting simple math", "testing", "hmm",
              "Surveyed my buffers", "Idle tick, no action", "Checkpoint commit", "Saved notes",
              "Third failed build today", "", "commit: fix the thing\n\nbody", "\U0001F914"]
EXTRAS = ['"lastEvalResult": "4"', '"lastEvalResult": 4', '"tags": ["a", "b"]', '"nested": {"k": "v"}',
          '"eval_2": null', '"note": "extra"', '"mood2": "\U0001F914"', '"flag": false',
          '"list": [1, [2, [3]]]', '"Eval": "(ignored)"']
PROSE_BEFORE = ["Here's my response:", "Sure, here you go:", "Here is the JSON:", "OK.",
                "Thinking about it...", "\U0001F914 Let me answer.", "Response:", "Alright!",
                "I'll evaluate something simple.", "Voil\u00e0 :"]
PROSE_AFTER = ["Hope that helps!", "Let me know.", "Done.", "(end)", "\U0001F44D",
               "That is my answer.", "Next tick I will continue."]


def jstr(text):
    return json.dumps(text, ensure_ascii=rng.random() < 0.3)


def value_of(field):
    if field == "eval":
        r = rng.random()
        if r < 0.25:
            return "null"
        if r < 0.9:
            return jstr(rng.choice(EVALS))
        return rng.choice(["4", "true", "false", "[\"(+ 1 2)\"]", "{\"code\": \"(+ 1 2)\"}", "\"\""])
    if field == "thought":
        if rng.random() < 0.95:
            return jstr(rng.choice(THOUGHTS))
        return rng.choice(["null", "42", "[\"a\", \"b\"]", "{\"a\": 1}", "false"])
    if field == "mood":
        r = rng.random()
        if r < 0.45:
            return jstr(rng.choice(MOODS_KEYWORD))
        if r < 0.95:
            return jstr(rng.choice(MOODS_EMOJI))
        return rng.choice(["null", "3", "[\"happy\"]", "true"])
    if field == "confidence":
        return rng.choice(CONFIDENCES)
    return jstr(rng.choice(MONOLOGUES)) if rng.random() < 0.95 else rng.choice(["null", "7"])


def json_object(drop=0.08, extra=0.2, pretty=None):
    items = []
    for field in FIELDS:
        if rng.random() < drop:
            continue
        items.append((json.dumps(field), value_of(field)))
    if rng.random() < extra:
        for e in rng.sample(EXTRAS, rng.randrange(1, 3)):
            k, v = e.split(": ", 1)
            items.insert(rng.randrange(len(items) + 1), (k, v))
    if rng.random() < 0.1:
        rng.shuffle(items)
    if rng.random() < 0.03 and items:
        # A duplicate key: json-parse-string keeps the last value.
        k, _ = rng.choice(items)
        items.append((k, value_of(json.loads(k)) if json.loads(k) in FIELDS else '"dup"'))
    if pretty is None:
        pretty = rng.random() < 0.35
    if pretty:
        indent = rng.choice(["  ", "    ", "\t"])
        body = (",\n").join(f"{indent}{k}: {v}" for k, v in items)
        return "{\n" + body + "\n}" if items else "{}"
    sep = rng.choice([", ", ",", " , "])
    colon = rng.choice([": ", ":", " : "])
    return "{" + sep.join(f"{k}{colon}{v}" for k, v in items) + "}"


def jws():
    """JSON whitespace, which both string-trim and libjansson skip."""
    return "".join(rng.choice(" \t\n\r") for _ in range(rng.choice([0, 0, 0, 1, 2, 3])))


def gen_valid():
    return jws() + json_object() + jws()


def gen_seed_examples():
    return rng.choice([
        '{"eval": "(+ 1 1)", "thought": "test", "mood": "focused", "confidence": 0.9, "monologue": "testing"}',
        "Here's my response:\n```json\n{\"eval\": null, \"thought\": \"thinking\", \"mood\": \"\U0001F914\", "
        "\"confidence\": 0.7, \"monologue\": \"hmm\"}\n```",
        '{"eval": null, "thought": "The build failed again", "mood": "\U0001F624", "confidence": 0.6, '
        '"monologue": "Third failed build today"}',
        "I'm not sure what to do {partial json",
        '{\n  "eval": "(+ 2 2)",\n  "thought": "Testing basic arithmetic to verify eval works",\n'
        '  "mood": "\U0001F914",\n  "confidence": 0.85,\n  "monologue": "First real interaction - attempting simple math"\n}',
        "[MOOD: focused] [CONFIDENCE: 0.8] text",
        '{"mood": "\U0001F624"}',
    ])


def fence_open():
    return rng.choice(["```json", "```json", "```json", "```", "```", "```JSON", "```Json",
                       "```json ", "```json  ", "``` ", "```json\t", "````json", "````"])


def fence_close(opener):
    ticks = len(opener) - len(opener.lstrip("`"))
    return "`" * max(3, ticks) if ticks > 3 else "```"


def gen_fenced():
    opener = fence_open()
    body = json_object()
    pad_top = rng.choice(["", "", "", "\n", "  \n", "\n\n"])
    pad_bottom = rng.choice(["", "", "", "\n", "  ", "\n\n"])
    block = opener + "\n" + pad_top + body + pad_bottom + "\n" + fence_close(opener)
    mode = rng.randrange(6)
    if mode == 0:
        return block
    if mode == 1:
        return rng.choice(PROSE_BEFORE) + "\n" + block
    if mode == 2:
        return rng.choice(PROSE_BEFORE) + "\n\n" + block + "\n\n" + rng.choice(PROSE_AFTER)
    if mode == 3:
        return block + "\n" + rng.choice(PROSE_AFTER)
    if mode == 4:
        # The fence opens at the end of a line of prose.
        return rng.choice(PROSE_BEFORE) + " " + block
    return jws() + rng.choice(PROSE_BEFORE) + "\n" + block + jws()


def gen_fenced_broken():
    opener = rng.choice(["```json", "```"])
    body = malformed_object()
    text = opener + "\n" + body + "\n```"
    if rng.random() < 0.5:
        text = rng.choice(PROSE_BEFORE) + "\n" + text
    return text


def gen_fenced_other_language():
    # Not a json/bare fence: the seed's regex finds no opener; the engine skips it.
    lang = rng.choice(["python", "elisp", "yaml", "text", "sh"])
    body = json_object(pretty=False)
    text = "```" + lang + "\n" + body + "\n```"
    if rng.random() < 0.5:
        text = rng.choice(PROSE_BEFORE) + "\n" + text
    return text


def malformed_object():
    obj = json_object(pretty=False, drop=0.0, extra=0.0)
    mode = rng.randrange(9)
    if mode == 0:
        return obj.replace('"', "'")
    if mode == 1:
        return obj[:-1] + ",}"
    if mode == 2:
        return re.sub(r'"(eval|thought|mood|confidence|monologue)"', r"\1", obj)
    if mode == 3:
        return obj.replace("null", "None").replace("true", "True").replace("false", "False") \
            .replace('"eval": None', '"eval": nil') if "null" in obj else obj.replace("{", "{'x': True, ", 1)
    if mode == 4:
        return obj.replace('"confidence"', '// a comment\n"confidence"', 1)
    if mode == 5:
        return re.sub(r'("confidence"\s*:\s*)[^,}]+', r"\1NaN", obj)
    if mode == 6:
        return obj + "}"
    if mode == 7:
        return obj + "\n" + obj
    return obj.replace(", ", " ", 1)


def gen_malformed():
    text = malformed_object()
    if rng.random() < 0.3:
        text = rng.choice(PROSE_BEFORE) + " " + text
    return text


def gen_partial():
    obj = json_object()
    cut = rng.randrange(1, len(obj))
    text = obj[:cut]
    mode = rng.randrange(4)
    if mode == 0:
        return text
    if mode == 1:
        return "```json\n" + text
    if mode == 2:
        return rng.choice(PROSE_BEFORE) + "\n```json\n" + text
    return rng.choice(PROSE_BEFORE) + " " + text


def gen_tags():
    mood = rng.choice(MOODS_KEYWORD[:10] + MOODS_EMOJI[:5])
    conf = rng.choice(["0.8", "0.6", "0.95", "1", "0.1"])
    text = rng.choice(THOUGHTS[:12])
    layout = rng.randrange(4)
    if layout == 0:
        return f"[MOOD: {mood}] [CONFIDENCE: {conf}] {text}"
    if layout == 1:
        return f"[MOOD: {mood}]\n[CONFIDENCE: {conf}]\n{text}"
    if layout == 2:
        return f"{text}\n\n[MOOD: {mood}] [CONFIDENCE: {conf}]"
    return f"[EVAL: (+ 1 1)] [MOOD: {mood}] [CONFIDENCE: {conf}]\n{text}"


def gen_prose_with_json():
    # JSON in prose without a fence: neither the seed nor the engine rescues it.
    obj = json_object(pretty=False)
    return rng.choice([rng.choice(PROSE_BEFORE) + " " + obj,
                       obj + " " + rng.choice(PROSE_AFTER),
                       rng.choice(PROSE_BEFORE) + "\n" + obj + "\n" + rng.choice(PROSE_AFTER)])


def gen_prose():
    n = rng.randrange(1, 4)
    text = " ".join(rng.choice(THOUGHTS[:12] + PROSE_BEFORE + PROSE_AFTER) for _ in range(n))
    return jws() + text + jws() if rng.random() < 0.3 else text


def gen_empty():
    return rng.choice(["", " ", "\n", "\t", "\r\n", "   \n\t  ", "\n\n\n", "```\n```",
                       "```json\n\n```", "``````", "{", "}", "{}", "null", "\"\""])


def gen_code_in_strings():
    # Valid JSON whose strings mention fences: the seed's regex needs a real newline
    # after the opening backticks, which a JSON string cannot hold, so the whole
    # reply is the JSON.
    thought = rng.choice(["use ```json\n{}\n``` blocks", "```", "```json", "see ```\ncode\n```",
                          "x\n```\ny", "\n```json\n{\"a\": 1}\n```\n"])
    obj = ('{"eval": null, "thought": ' + json.dumps(thought) + ', "mood": "' + rng.choice(MOODS_KEYWORD[:5])
           + '", "confidence": ' + rng.choice(CONFIDENCES[:8]) + ', "monologue": "fences"}')
    return obj if rng.random() < 0.7 else "```json\n" + obj + "\n```"


def gen_two_objects():
    a, b = json_object(pretty=False), json_object(pretty=False)
    return rng.choice([a + b, a + "\n" + b, "[" + a + ", " + b + "]"])


def gen_fence_edge_cases():
    obj = json_object(pretty=rng.random() < 0.3)
    return rng.choice([
        "  ```json\n" + obj + "\n```",                       # indented opening fence
        "````json\n" + obj + "\n````",                       # four backticks
        "````\n```json\n" + obj + "\n```\n````",             # a fence inside a fence
        obj + "\n```json\n" + obj + "\n```",                  # JSON, then a fence
        "```json\n" + obj + "\nthat's it\n```",              # prose inside the fence
        "```json\u3000\n" + obj + "\n```",                   # ideographic space after info
        "```json\u00a0\n" + obj + "\n```",                   # NBSP after info
        "```json " + obj + " ```",                            # all on one line
        "```json\n" + obj + " ```",                           # closing fence mid-line
        "```json\n" + obj + "\n```\n",                        # trailing newline
        "```json\n" + obj + "\n```\n\n```json\n{}\n```",      # two fences, first valid
        "Here:\n```json\n" + obj + "\n```\n```python\nx = 1\n```",
    ])


GENERATORS = [
    (gen_seed_examples, 7),
    (gen_fence_edge_cases, 120),
    (gen_valid, 620),
    (gen_fenced, 520),
    (gen_fenced_broken, 90),
    (gen_fenced_other_language, 50),
    (gen_malformed, 180),
    (gen_partial, 220),
    (gen_tags, 110),
    (gen_prose_with_json, 90),
    (gen_prose, 60),
    (gen_empty, 15),
    (gen_code_in_strings, 40),
    (gen_two_objects, 40),
]

# Probes where Tribunal and the seed disagree, left out of the reference file.
# `--differences` prints each with the seed's result. O is a valid reply object.
O = '{"eval": null, "thought": "t", "mood": "focused", "confidence": 0.8, "monologue": "m"}'
BAD = '{"eval": null, "thought": \'bad\', "mood": "x", "confidence": 0.1, "monologue": "m"}'
DIFFERENCES = [
    # Documented in rules/agent-response/README.md ("Fences": longer fences, ~~~,
    # js/json5 info strings are also accepted by the engine's fence tier).
    ("documented-tilde-fence", "~~~json\n" + O + "\n~~~",
     "seed: fallback; Tribunal: fence"),
    ("documented-js-info", "```js\n" + O + "\n```", "seed: fallback; Tribunal: fence"),
    ("documented-json5-info", "```json5\n" + O + "\n```", "seed: fallback; Tribunal: fence"),
    ("jsonc-info", "```jsonc\n" + O + "\n```", "seed: fallback; Tribunal: fence"),
    # Not documented in the pack's README.
    ("unclosed-fence", "```json\n" + O + "\n",
     "seed: fallback (the regex needs a closing \\n```); Tribunal: fence (a block never "
     "closed runs to the end of the text)"),
    ("unclosed-fence-after-prose", "Here's my response:\n```json\n" + O,
     "seed: fallback; Tribunal: fence"),
    ("indented-closing-fence", "```json\n" + O + "\n  ```",
     "seed: fallback (needs \\n``` with no indentation); Tribunal: fence"),
    ("closing-fence-with-trailing-text", "```json\n" + O + "\n``` Hope that helps!",
     "seed: fence (\\n``` closes whatever follows); Tribunal: fallback (not a closing "
     "line, so the block runs to the end and its content does not parse)"),
    ("closing-fence-glued-to-text", "```json\n" + O + "\n```end",
     "seed: fence; Tribunal: fallback"),
    ("first-fence-invalid-second-valid",
     "```json\n" + BAD + "\n```\nFixed:\n```json\n" + O + "\n```",
     "seed: fallback (only the first match is parsed); Tribunal: fence (the second block)"),
    ("python-fence-then-json-fence", "```python\nprint(1)\n```\n```json\n" + O + "\n```",
     "seed: fallback (the regex's first match opens at the python block's closing ```, "
     "so its content is '```json\\n{...}'); Tribunal: fence"),
    ("space-before-json-info", "``` json\n" + O + "\n```",
     "seed: fallback (after ``` the regex allows json, then whitespace, then a newline); "
     "Tribunal: fence"),
    ("info-string-with-attributes", "```json title=reply\n" + O + "\n```",
     "seed: fallback; Tribunal: fence"),
    ("backtick-earlier-on-the-line", "Use `eval`: ```json\n" + O + "\n```",
     "seed: fence (the regex is not anchored); Tribunal: fallback (a mid-line fence must "
     "be the line's first backtick)"),
    ("zero-width-space-after-info", "```json\u200b\n" + O + "\n```",
     "seed: fence (U+200B has whitespace syntax in Emacs); Tribunal: fallback (info "
     "string 'json\\u200b' is not JSON-like)"),
    ("nbsp-before-fence-content", "```json\n\u00a0" + O + "\n```",
     "seed: fallback (string-trim keeps U+00A0, libjansson rejects it); Tribunal: fence "
     "(trims Unicode whitespace)"),
    ("formfeed-before-json", "\f" + O,
     "seed: fallback (string-trim trims [ \\t\\n\\r] only; libjansson rejects \\f); "
     "Tribunal: strict (trims Unicode whitespace)"),
    ("vertical-tab-after-json", O + "\v", "seed: fallback; Tribunal: strict"),
    ("nbsp-before-json", "\u00a0" + O, "seed: fallback; Tribunal: strict"),
    ("bom-before-json", "\ufeff" + O, "seed: fallback; Tribunal: strict (skips a BOM)"),
    ("line-separator-after-json", O + "\u2028", "seed: fallback; Tribunal: strict"),
    # Depend on the Emacs version (libjansson in Emacs 27-29; Emacs 30 has its own
    # parser); shown for Emacs 28.2.
    ("nul-escape", O.replace('"t"', '"a\\u0000b"'),
     "seed (Emacs 28): fallback (\\u0000 not allowed); Tribunal: strict"),
    ("integer-beyond-int64", O.replace("0.8", "9223372036854775808"),
     "seed (Emacs 28): fallback (too big integer); Tribunal: strict"),
]

# Inputs where the seed's result is not well defined, or depends on the Emacs
# version or on the current buffer's syntax table (see the module docstring).
OUT_OF_SCOPE = [
    "[" + O + "]",                                   # plist-get on a vector
    "```json\n[" + O + "]\n```",
    '"just a string"',
    "42",
    O.replace("null", "{}"),                         # {} reads as nil
    "```json\r\n" + O + "\r\n```",                   # CR: whitespace syntax or not
    O.replace("0.8", "1e400"),                       # Emacs-version dependent
    O.replace('"t"', '"\\ud800"'),
]


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    if "--differences" in sys.argv:
        for name, output, note in DIFFERENCES:
            ref, _ = reference(output)
            print(json.dumps({"id": name, "output": output, "seed": ref, "note": note},
                             ensure_ascii=False))
        return
    left_out = {output for _, output, _ in DIFFERENCES} | set(OUT_OF_SCOPE)
    seen = set()
    records = []
    skipped = {}
    for gen, count in GENERATORS:
        name = gen.__name__[4:].replace("_", "-")
        made = attempts = 0
        while made < count and attempts < count * 30:
            attempts += 1
            output = gen()
            if output in seen or output in left_out:
                continue
            seen.add(output)
            ref, why = reference(output)
            if ref is None:
                skipped[why] = skipped.get(why, 0) + 1
                continue
            made += 1
            records.append({"pack": "agent-response", "id": f"{name}-{made:04d}",
                            "output": output, "reference": ref})
    path = os.path.join(here, "agent-response.jsonl")
    with open(path, "w", encoding="utf-8", newline="\n") as out:
        for record in records:
            out.write(json.dumps(record, ensure_ascii=False) + "\n")
    print(f"wrote {len(records)} records to {os.path.relpath(path)}"
          + "".join(f"; skipped {n} ({why})" for why, n in sorted(skipped.items())))


if __name__ == "__main__":
    main()
