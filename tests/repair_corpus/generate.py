#!/usr/bin/env python3
"""Generates the repair corpus's inputs: LLM-style damaged JSON, by category.

Deterministic (fixed seed), Python 3 standard library only. Writes JSONL lines
`{"category": ..., "input": ...}` to stdout; `consensus.py` then keeps the inputs
on which two widely used repairers agree and records their answer.

Categories (the damage models emit, issue 15):
  unquoted_values      `"city": New York,`, `{key: value}`, `NaN`, `yes`
  placeholders         `...` / `…` for omitted items or members
  mismatched_closers   `["a", "b"}`, `{"a": [1, 2}, ...}`
  typographic_quotes   “ ” ‘ ’ as delimiters of keys and values
  missing_commas       between items or members
  numbers              `.25`, `1.`, `+1`, `1e`, `-.5`
  number_like_strings  `10-20`, `1/3`, `0..5`, `12:30`
  missing_quote        a value string's closing quote missing before the next key
  key_without_value    `{"a": 1, "b"}`
  doubled_quotes       `""text""`
  classic              trailing commas, single quotes, Python literals, comments
  multiple_values      several documents in a row, or with prose between them
                       (compared with `multiple_values: all`, what both repairers do)
  truncation           every prefix of a few valid documents, cut outside literals
  truncation_in_literal  prefixes cut inside `true`/`false`/`null`
  mongo_shell_types    `ObjectId("…")`, `ISODate("…")`, `NumberLong(42)`, `NumberInt("7")`
  string_concatenation `"a" + "b"`, across lines too
  json_in_string       the whole document written as one JSON string
  unterminated_string  the last string left open before the closers that end the text
  missing_quote_in_array  an array item's closing quote missing before the next item
                       (these five: issue 46; drawn from a random stream of their
                       own, so the categories above are the same inputs as before)
  jsonp                `callback({...});`, `/**/ jQuery3_1.cb([...])`, some damaged
                       inside (a stream of its own too)
  Round 4, from one more stream of their own, the damage the categories above lack:
  comments             `//`, `/* */` and `#` comments before, inside and after a document
  missing_colon        `{"key" "value"}`
  inner_quotes         `"he said "hi" to me"`, `"she said "no"."`, `"called "Ada""`
  raw_control          a raw newline, tab or carriage return inside a string
  invalid_escapes      an apostrophe, `x41`, `q` or a cut `u12` escaped with a backslash
  extra_closers        one or two closers too many after the document, or a stray one
  prose_around         prose before and after a document (the repairers never agree)
  fences               Markdown fences: info strings, prose around, unclosed, damaged inside
  trailing_commas      trailing commas at several depths
  unquoted_keys        bare keys with `-`, `_`, `$` and digits
  single_quotes        single-quoted keys and values, apostrophes inside some
  python_literals      `True`, `False`, `None` in arrays and nested objects
  undefined            JavaScript's `undefined` (the repairers never agree)
  special_whitespace   no-break, zero-width and ideographic spaces, byte-order marks
                       between tokens and around the document
  combined             two damages of different kinds in one document
  truncated_damaged    every fifth prefix of a few damaged documents, cut outside literals
  multiple_documents   NDJSON, blank lines, commas, prose or fences between documents

Run from the repository root:
  python3 tests/repair_corpus/generate.py > target/repair-corpus-inputs.jsonl
"""

import json
import random
import re
import sys

rng = random.Random(15001)

KEYS = ["name", "city", "status", "title", "summary", "label", "country", "role", "owner",
        "category", "mood", "verdict", "reason", "kind", "note"]
WORDS = ["New York", "Paris", "done", "pending review", "Ada Lovelace", "blue sky",
         "high priority", "in progress", "San Francisco", "the quick fox", "approved",
         "Jean-Luc", "O'Brien", "Zürich", "café au lait", "north east"]
STRINGS = ["hello", "a short note", "It works.", "two words", "x", "Lyon", "ok then",
           "multi word value", "émoji 🤔 inside", "tab\tin it"]
NUMS = ["1", "42", "-7", "3.5", "0", "1e3", "-0.25", "100"]


def jstr(s):
    return json.dumps(s, ensure_ascii=False)


def key():
    return rng.choice(KEYS)


def keys(n):
    return rng.sample(KEYS, n)


def value():
    r = rng.random()
    if r < 0.45:
        return jstr(rng.choice(STRINGS))
    if r < 0.75:
        return rng.choice(NUMS)
    if r < 0.85:
        return rng.choice(["true", "false", "null"])
    if r < 0.93:
        return "[" + ", ".join(rng.choice(NUMS) for _ in range(rng.randint(0, 3))) + "]"
    return "{" + jstr(key()) + ": " + value_simple() + "}"


def value_simple():
    return rng.choice([jstr(rng.choice(STRINGS)), rng.choice(NUMS)])


def obj(members, sep=", "):
    return "{" + sep.join(f"{k}: {v}" for k, v in members) + "}"


def members(n):
    return [(jstr(k), value()) for k in keys(n)]


def sp():
    return rng.choice([" ", "\n  ", ""])


cases = []


def add(category, text):
    cases.append({"category": category, "input": text})


for _ in range(60):
    m = members(rng.randint(1, 4))
    at = rng.randrange(len(m) + 1)
    word = rng.choice(WORDS + ["NaN", "Infinity", "yes", "no", "undefined_value", "n/a"])
    m.insert(at, (jstr(key() + "_x"), word))
    add("unquoted_values", obj(m))
for _ in range(20):
    ks = keys(rng.randint(1, 3))
    add("unquoted_values", "{" + ", ".join(f"{k}: {rng.choice(WORDS)}" for k in ks) + "}")

for _ in range(60):
    ph = rng.choice(["...", "…", "....", "..."])
    if rng.random() < 0.5:
        items = [value() for _ in range(rng.randint(1, 4))]
        items.insert(rng.randrange(len(items) + 1), ph)
        add("placeholders", "[" + ", ".join(items) + "]")
    else:
        m = [f"{k}: {v}" for k, v in members(rng.randint(1, 3))]
        m.append(ph)
        inner = "[" + ", ".join([value_simple(), ph]) + "]"
        m.insert(0, f"{jstr(key())}: {inner}")
        add("placeholders", "{" + ", ".join(m) + "}")

for _ in range(60):
    r = rng.random()
    if r < 0.3:
        add("mismatched_closers", "[" + ", ".join(value_simple() for _ in range(rng.randint(1, 4))) + "}")
    elif r < 0.6:
        arr = "[" + ", ".join(value_simple() for _ in range(rng.randint(1, 3))) + "}"
        m = members(rng.randint(1, 3))
        m.insert(rng.randrange(len(m) + 1), (jstr("list"), arr))
        add("mismatched_closers", obj(m))
    else:
        inner = "{" + f"{jstr(key())}: {value_simple()}" + "]"
        m = members(rng.randint(0, 2))
        m.insert(rng.randrange(len(m) + 1), (jstr("inner"), inner))
        add("mismatched_closers", obj(m) if m else "{\"a\": " + inner + "}")

for _ in range(60):
    m = []
    for k in keys(rng.randint(1, 4)):
        style = rng.random()
        word = rng.choice(["Paris", "hello world", "ok", "New York", "a b c"])
        if style < 0.5:
            m.append((f"“{k}”", f"“{word}”"))
        elif style < 0.75:
            m.append((jstr(k), f"“{word}”"))
        else:
            m.append((f"“{k}”", value()))
    add("typographic_quotes", obj(m))

for _ in range(60):
    if rng.random() < 0.5:
        items = [value() for _ in range(rng.randint(2, 5))]
        add("missing_commas", "[" + rng.choice([" ", "\n"]).join(items) + "]")
    else:
        m = members(rng.randint(2, 4))
        add("missing_commas", obj(m, sep=rng.choice([" ", "\n  ", "  "])))

for _ in range(60):
    m = members(rng.randint(0, 3))
    num = rng.choice([".25", "1.", "+1", "1e", "-.5", "+3.5", "2.E", "0.5e", "10.", "+0"])
    m.insert(rng.randrange(len(m) + 1), (jstr("n"), num))
    add("numbers", obj(m) if rng.random() < 0.7 else "[" + ", ".join([num] + [value_simple()]) + "]")

for _ in range(50):
    m = members(rng.randint(0, 3))
    s = rng.choice(["10-20", "1/3", "0..5", "12:30", "3-4 days", "2026-12-01", "5/10", "1.2.3"])
    m.insert(rng.randrange(len(m) + 1), (jstr("range"), s))
    add("number_like_strings", obj(m))

for _ in range(50):
    ks = keys(rng.randint(2, 4))
    cut = rng.randrange(len(ks) - 1)
    parts = []
    for i, k in enumerate(ks):
        v = jstr(rng.choice(STRINGS))
        if i == cut:
            v = v[:-1]
        parts.append(f"{jstr(k)}: {v}")
    add("missing_quote", "{" + ", ".join(parts) + "}")

for _ in range(40):
    m = members(rng.randint(1, 3))
    m.insert(rng.randrange(len(m) + 1), (jstr("orphan"), None))
    text = "{" + ", ".join(k if v is None else f"{k}: {v}" for k, v in m) + "}"
    add("key_without_value", text)

for _ in range(40):
    m = members(rng.randint(0, 3))
    word = rng.choice(["hello", "Paris", "yes", "two words"])
    m.insert(rng.randrange(len(m) + 1), (jstr("q"), f'""{word}""'))
    add("doubled_quotes", obj(m))

for _ in range(60):
    r = rng.random()
    m = members(rng.randint(1, 4))
    if r < 0.25:
        add("classic", obj(m)[:-1] + ",}")
    elif r < 0.5:
        add("classic", "{" + ", ".join(f"'{json.loads(k)}': {v}" for k, v in m) + "}")
    elif r < 0.75:
        py = [(k, rng.choice(["True", "False", "None"])) for k, _ in m]
        add("classic", obj(py))
    else:
        add("classic", "{\n  // the answer\n  " + ",\n  ".join(f"{k}: {v}" for k, v in m) + "\n}")

for _ in range(50):
    docs = [obj(members(rng.randint(1, 3))) for _ in range(rng.randint(2, 3))]
    sep = rng.choice(["", "\n", " ", "\n\n", "\nand also\n", " then "])
    add("multiple_values", sep.join(docs))

DOCS = [
    {"name": "Ada Lovelace", "born": 1815, "tags": ["math", "poetry"], "active": True,
     "address": {"city": "London", "zip": None}, "score": -12.5e-1},
    [{"id": 1, "label": "first item", "ok": False}, {"id": 2, "label": "second", "ok": True}],
    {"summary": "The model said \"hi\" and left.", "steps": [1, 2, 3], "meta": {"v": 2}},
    {"kind": "judge.verdict", "winner": "Mara", "scores": {"Mara": 7, "Tobin": 5.5}},
]
for doc in DOCS:
    for indent in [None, 2]:
        full = json.dumps(doc, indent=indent, ensure_ascii=False)
        for end in range(1, len(full)):
            prefix = full[:end]
            # Cut inside a literal: both repairers turn `tr` into the string "tr", a
            # guess at prose we consider wrong (the repair tier drops the cut member).
            tail = prefix.rstrip("truefalsn")
            in_literal = tail != prefix and tail.endswith((": ", ":", "[", ", ", ",", "\n ")) \
                and any(lit.startswith(prefix[len(tail):]) for lit in ("true", "false", "null")) \
                and prefix[len(tail):] not in ("true", "false", "null")
            add("truncation_in_literal" if in_literal else "truncation", prefix)

mongo = random.Random(46004)
SHELL = [
    lambda: f'ObjectId("{mongo.getrandbits(96):024x}")',
    lambda: f'ISODate("2024-0{mongo.randint(1, 9)}-1{mongo.randint(0, 9)}T10:2{mongo.randint(0, 9)}:00Z")',
    lambda: f"NumberLong({mongo.randint(-9000, 900000)})",
    lambda: f'NumberLong("{mongo.randint(0, 10**12)}")',
    lambda: f"NumberInt({mongo.randint(-50, 500)})",
    lambda: f'NumberDecimal("{mongo.randint(0, 999)}.{mongo.randint(10, 99)}")',
]
for _ in range(60):
    names = mongo.sample(KEYS, mongo.randint(2, 4))
    parts = []
    for name in names:
        shell = mongo.random() < 0.6
        parts.append(f'"{name}": ' + (mongo.choice(SHELL)() if shell else jstr(mongo.choice(STRINGS))))
    text = "{" + ", ".join(parts) + "}"
    if "(" not in text:
        text = text[:-1] + f', "_id": {SHELL[0]()}' + "}"
    add("mongo_shell_types", text if mongo.random() < 0.8 else "[" + text + "]")

for _ in range(60):
    names = mongo.sample(KEYS, mongo.randint(1, 3))
    parts = []
    for name in names:
        pieces = [jstr(mongo.choice(STRINGS)) for _ in range(mongo.randint(2, 3))]
        parts.append(f'"{name}": ' + mongo.choice([" + ", " +\n  ", "+"]).join(pieces))
    add("string_concatenation", "{" + ", ".join(parts) + "}")

for _ in range(40):
    doc = json.loads(obj(members(mongo.randint(1, 3))))
    add("json_in_string", json.dumps(json.dumps(doc, ensure_ascii=False), ensure_ascii=False))

for _ in range(60):
    items = [jstr(mongo.choice(STRINGS)) for _ in range(mongo.randint(1, 4))]
    last = mongo.choice(WORDS)
    array = "[" + ", ".join(items + ['"' + last]) + "]"
    text = array if mongo.random() < 0.5 else "{" + f'"{mongo.choice(KEYS)}": ' + array + mongo.choice(["}", "\n}", " }\n"])
    add("unterminated_string", text)

for _ in range(60):
    items = [mongo.choice(WORDS) for _ in range(mongo.randint(3, 5))]
    cut = mongo.randrange(len(items) - 1)
    text = ", ".join(('"' + w) if i == cut else jstr(w) for i, w in enumerate(items))
    add("missing_quote_in_array", "[" + text + "]" if mongo.random() < 0.5 else '{"tags": [' + text + "]}")

jsonp = random.Random(46006)
CALLEES = ["callback", "cb", "jQuery3_1_1_1700000000", "window.handle", "$jsonp_7", "parseResponse"]
for _ in range(60):
    doc = obj(members(jsonp.randint(1, 3)), sep=jsonp.choice([", ", ",", ",\n  "]))
    if jsonp.random() < 0.3:
        doc = "[" + doc + "]"
    if jsonp.random() < 0.3:
        # Damaged inside: a trailing comma before the last closer.
        doc = doc[:-1] + "," + doc[-1]
    text = jsonp.choice(CALLEES) + jsonp.choice(["(", " ("]) + doc + ")" + jsonp.choice(["", ";", ";\n", " ;"])
    add("jsonp", ("/**/ " if jsonp.random() < 0.2 else "") + text)

# Round 4: the damage the categories above lack, each from a stream of its own (so every
# case above is the same input as before), every document built from the same words.
r4 = random.Random(4004)


def r4_members(r, n):
    return [(jstr(k), r4_value(r)) for k in r.sample(KEYS, n)]


def r4_value(r, depth=0):
    x = r.random()
    if x < 0.4:
        return jstr(r.choice(STRINGS + WORDS))
    if x < 0.65:
        return r.choice(NUMS)
    if x < 0.75:
        return r.choice(["true", "false", "null"])
    if depth >= 1 or x < 0.87:
        return "[" + ", ".join(r.choice(NUMS + ['"a"', '"b c"']) for _ in range(r.randint(0, 3))) + "]"
    return r4_obj(r4_members(r, r.randint(1, 2)))


def r4_obj(m, sep=", "):
    return "{" + sep.join(f"{k}: {v}" for k, v in m) + "}"


def r4_doc(r):
    """A document: an object of one to four members, one time in five an array of objects."""
    if r.random() < 0.2:
        return "[" + ", ".join(r4_obj(r4_members(r, r.randint(1, 2))) for _ in range(r.randint(1, 3))) + "]"
    return r4_obj(r4_members(r, r.randint(1, 4)))


def r4_pretty(r, doc):
    """The document as a model writes it: compact, or pretty with two spaces."""
    return json.dumps(json.loads(doc), indent=2, ensure_ascii=False) if r.random() < 0.4 else doc


def r4_in_literal(prefix):
    """Whether `prefix` ends inside a literal in value position (`"a": tr`): the cut the
    repair tier drops and both repairers turn into a string (`truncation_in_literal`)."""
    word = re.search(r"[A-Za-z]+$", prefix)
    if not word or not prefix[: word.start()].rstrip().endswith((":", "[", ",")):
        return False
    return any(lit.startswith(word.group()) and lit != word.group()
               for lit in ("true", "false", "null", "True", "False", "None"))


def r4_cut(r, doc, low=None):
    """`doc` cut at a random place from `low` (half its length by default) on, not
    inside a literal."""
    low = len(doc) // 2 if low is None else low
    while True:
        prefix = doc[: r.randrange(low, len(doc))]
        if not r4_in_literal(prefix):
            return prefix


def r4_commas(text):
    """The places (indices) of the commas between members and items, outside strings."""
    out, in_string, escaped = [], False, False
    for i, c in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif c == "\\":
                escaped = True
            elif c == '"':
                in_string = False
        elif c == '"':
            in_string = True
        elif c == ",":
            out.append(i)
    return out


PROSE_BEFORE = ["Here is the JSON:\n", "Sure! Here you go: ", "Output:\n", "Result:\n\n", "Answer: ",
                "Here's the data you asked for:\n"]
PROSE_AFTER = ["\nHope this helps!", " Let me know if you need anything else.", "\n\nDone.", " That's all.",
               "\n\nI hope this helps!"]

# comments: `//`, `/* */` and `#` comments before, inside and after a document.
for _ in range(60):
    m = r4_members(r4, r4.randint(1, 4))
    style = r4.choice(["//", "/*", "#", "//", "/*"])
    note = r4.choice(["note", "the answer", "TODO: check", "generated", "see above"])
    comment = f"/* {note} */" if style == "/*" else f"{style} {note}\n"
    where = r4.random()
    if where < 0.3:
        parts = [f"{k}: {v}" for k, v in m]
        at = r4.randrange(len(parts) + 1)
        parts.insert(at, comment.rstrip("\n") + ("\n" if style != "/*" else ""))
        text = "{\n  " + "\n  ".join(p + ("," if i < len(parts) - 1 and not p.startswith(style) else "")
                                     for i, p in enumerate(parts)) + "\n}"
    elif where < 0.55:
        text = comment + ("" if comment.endswith("\n") else "\n") + r4_obj(m)
    elif where < 0.8:
        text = r4_obj(m) + " " + comment.rstrip("\n")
    else:
        items = ", ".join(r4.choice(NUMS) for _ in range(r4.randint(2, 4)))
        text = "{" + ", ".join(f"{k}: {v}" for k, v in m) + f', "list": [{items} {comment.rstrip()}' + "\n]}"
    add("comments", text)

# missing_colon: `{"key" "value"}`, the colon after a key left out.
for _ in range(50):
    m = r4_members(r4, r4.randint(1, 4))
    at = r4.randrange(len(m))
    parts = []
    for i, (k, v) in enumerate(m):
        if i == at:
            v = r4.choice([jstr(r4.choice(WORDS)), jstr(r4.choice(STRINGS)), v])
            parts.append(f"{k} {v}")
        else:
            parts.append(f"{k}: {v}")
    add("missing_colon", "{" + ", ".join(parts) + "}")

# inner_quotes: double quotes inside a value string, left unescaped.
QUOTED = ['he said "hi" to me', 'a "quoted" word', 'the "best" one', 'she said "no".', 'called "Ada"',
          '"quoted" first', 'size 5" screen', 'x "y"', 'it is "done", mostly', 'say "yes" or "no"']
for _ in range(60):
    m = r4_members(r4, r4.randint(0, 3))
    q = '"' + r4.choice(QUOTED) + '"'
    if r4.random() < 0.25:
        text = "[" + ", ".join([q] + [jstr(r4.choice(STRINGS)) for _ in range(r4.randint(0, 2))]) + "]"
    else:
        m.insert(r4.randrange(len(m) + 1), (jstr(r4.choice(["text", "quote", "summary", "note"])), q))
        text = r4_obj(m)
    add("inner_quotes", text)

# raw_control: a raw newline, tab or carriage return inside a string.
for _ in range(50):
    m = r4_members(r4, r4.randint(0, 3))
    s = r4.choice(["line one\nline two", "a\tb", "first\n\nsecond", "col1\tcol2\tcol3", "end\r\nnext",
                   "tabbed\t", "\nleading"])
    m.insert(r4.randrange(len(m) + 1), (jstr("text"), '"' + s + '"'))
    add("raw_control", r4_obj(m))

# invalid_escapes: escapes JSON does not allow, and cut `\u` escapes.
for _ in range(50):
    m = r4_members(r4, r4.randint(0, 3))
    s = r4.choice(["it\\'s", "C:\\dir\\file", "\\x41", "a\\qb", "\\u12", "\\u00e", "100\\%", "a\\-b",
                   "don\\'t stop", "\\$5", "\\uZZZZ", "tab\\	x"])
    m.insert(r4.randrange(len(m) + 1), (jstr("s"), '"' + s + '"'))
    add("invalid_escapes", r4_obj(m))

# extra_closers: one or two closers too many at the end, or a stray one after a value.
for _ in range(50):
    doc = r4_doc(r4)
    x = r4.random()
    if x < 0.6:
        text = doc + r4.choice(["}", "]", "}}", "]}", "\n}", " ]"])
    else:
        at = r4.choice(r4_commas(doc) or [len(doc) - 1])
        text = doc[:at] + r4.choice(["}", "]"]) + doc[at:]
    add("extra_closers", text)

# prose_around: text before and after a document, damaged or not.
for _ in range(60):
    doc = r4_pretty(r4, r4_doc(r4))
    if r4.random() < 0.3:
        doc = doc.replace('"', "'") if r4.random() < 0.5 else doc[:-1].rstrip() + ",\n" + doc[-1]
    text = doc
    x = r4.random()
    if x < 0.4:
        text = r4.choice(PROSE_BEFORE) + text
    elif x < 0.7:
        text = text + r4.choice(PROSE_AFTER)
    else:
        text = r4.choice(PROSE_BEFORE) + text + r4.choice(PROSE_AFTER)
    add("prose_around", text)

# fences: Markdown code fences with prose, unclosed, or damaged inside.
for _ in range(60):
    doc = r4_pretty(r4, r4_doc(r4))
    x = r4.random()
    if x < 0.25:
        doc = doc[:-1].rstrip() + ",\n" + doc[-1]
    elif x < 0.4:
        doc = doc.replace('"', "'")
    elif x < 0.5:
        doc = r4_cut(r4, doc)
    info = r4.choice(["json", "json", "", "JSON", "jsonc", "javascript"])
    closing = r4.choice(["\n```", "\n```", "\n```\n", ""])
    text = "```" + info + "\n" + doc + closing
    if r4.random() < 0.5:
        text = r4.choice(PROSE_BEFORE) + text
    if closing and r4.random() < 0.4:
        text += r4.choice(PROSE_AFTER)
    add("fences", text)

# trailing_commas: in nested arrays and objects, at several depths.
for _ in range(50):
    doc = r4_pretty(r4, r4_doc(r4))
    closers = [i for i, c in enumerate(doc) if c in "}]" and doc[:i].rstrip()[-1:] not in "[{,"]
    chosen = sorted(r4.sample(closers, min(len(closers), r4.randint(1, 3))), reverse=True)
    for i in chosen:
        j = len(doc[:i].rstrip())
        doc = doc[:j] + "," + doc[j:]
    add("trailing_commas", doc)

# unquoted_keys: bare keys, with `-`, `_`, `$` and digits, and quoted values.
BARE = ["name", "first_name", "user-id", "$id", "item2", "x", "camelCase", "_private", "max-tokens", "v1"]
for _ in range(50):
    ks = r4.sample(BARE, r4.randint(1, 4))
    text = "{" + ", ".join(f"{k}: {r4_value(r4, 1)}" for k in ks) + "}"
    add("unquoted_keys", text)

# single_quotes: single-quoted keys and values, apostrophes inside some, mixed with double quotes.
for _ in range(50):
    m = r4_members(r4, r4.randint(1, 4))
    parts = []
    for k, v in m:
        k = "'" + json.loads(k) + "'" if r4.random() < 0.7 else k
        if v.startswith('"') and r4.random() < 0.7:
            v = "'" + json.loads(v).replace("'", r4.choice(["'", "\\'"])) + "'"
        parts.append(f"{k}: {v}")
    add("single_quotes", "{" + ", ".join(parts) + "}")

# python_literals: `True`, `False`, `None` in arrays and nested objects.
for _ in range(40):
    items = [r4.choice(["True", "False", "None", "1", '"x"']) for _ in range(r4.randint(1, 4))]
    arr = "[" + ", ".join(items) + "]"
    x = r4.random()
    if x < 0.4:
        text = arr
    elif x < 0.7:
        text = "{" + jstr(r4.choice(KEYS)) + ": " + arr + ", " + jstr(r4.choice(KEYS) + "_ok") + ": " + r4.choice(["True", "False", "None"]) + "}"
    else:
        text = "[{" + jstr("ok") + ": " + r4.choice(["True", "False"]) + ", " + jstr("v") + ": None}, " + arr + "]"
    add("python_literals", text)

# undefined: JavaScript's `undefined` as a value.
for _ in range(30):
    m = r4_members(r4, r4.randint(1, 3))
    m.insert(r4.randrange(len(m) + 1), (jstr("missing"), "undefined"))
    add("undefined", r4_obj(m) if r4.random() < 0.7 else "[1, undefined, " + jstr("x") + "]")

# special_whitespace: no-break spaces, zero-width spaces, byte-order marks, between tokens.
SPACES = ["\u00a0", "\u200b", "\ufeff", "\u2003", "\u3000", "\u202f", "\u2028"]
for _ in range(50):
    doc = r4_doc(r4)
    out, in_string, escaped = [], False, False
    for c in doc:
        out.append(c)
        if in_string:
            if escaped:
                escaped = False
            elif c == "\\":
                escaped = True
            elif c == '"':
                in_string = False
        elif c == '"':
            in_string = True
        elif c in ":,[{" and r4.random() < 0.35:
            out.append(r4.choice(SPACES))
    text = "".join(out)
    if r4.random() < 0.3:
        text = r4.choice(SPACES) + text + r4.choice(["", "\u00a0", "\u200b"])
    add("special_whitespace", text)


# combined: two damages of different kinds in one document.
def r4_damage(r, doc, kind):
    commas = r4_commas(doc)
    if kind == "trailing_comma":
        return doc[:-1].rstrip() + "," + doc[-1]
    if kind == "single_quotes":
        return doc.replace('"', "'")
    if kind == "unquoted_keys":
        return re.sub(r'"([A-Za-z_][A-Za-z_0-9]*)":', r"\1:", doc)
    if kind == "python":
        return doc.replace("true", "True").replace("false", "False").replace("null", "None")
    if kind == "comment":
        return "// answer\n" + doc
    if kind == "missing_comma" and commas:
        at = r.choice(commas)
        return doc[:at] + doc[at + 1:]
    if kind == "truncated":
        return r4_cut(r, doc)
    if kind == "fence":
        return "```json\n" + doc + "\n```"
    if kind == "prose":
        return r.choice(PROSE_BEFORE) + doc
    if kind == "extra_closer":
        return doc + "}"
    return doc


KINDS = ["trailing_comma", "single_quotes", "unquoted_keys", "python", "comment", "missing_comma",
         "truncated", "fence", "prose", "extra_closer"]
for _ in range(60):
    doc = r4_pretty(r4, r4_doc(r4))
    first, second = r4.sample(KINDS, 2)
    # Wrappers (fence, prose) and truncation go last, so they apply to the damaged document.
    order = sorted([first, second], key=lambda k: k in ("truncated", "fence", "prose", "comment"))
    for kind in order:
        doc = r4_damage(r4, doc, kind)
    add("combined", doc)

# truncated_damaged: every fifth prefix of a few damaged documents, cut outside literals.
DAMAGED = [
    "{'name': 'Ada', 'tags': ['math', 'poetry'], 'active': True, 'note': None}",
    '{name: "Ada Lovelace", born: 1815, address: {city: "London", zip: null},}',
    '{\n  // the verdict\n  "winner": "Mara",\n  "scores": [7, 5.5,],\n}',
    '[{"id": 1, "label": \'first\'}, {"id": 2 "label": "second"}]',
    '{"summary": "He said "hi" and left", "steps": [1, 2, 3]}',
]
for doc in DAMAGED:
    for end in range(1, len(doc), 5):
        if not r4_in_literal(doc[:end]):
            add("truncated_damaged", doc[:end])

# multiple_documents: NDJSON, blank lines, commas, prose or fences between documents.
for _ in range(60):
    docs = [r4_doc(r4) for _ in range(r4.randint(2, 3))]
    x = r4.random()
    if x < 0.25:
        text = "\n".join(docs) + r4.choice(["", "\n"])
    elif x < 0.4:
        text = "\n\n".join(r4_pretty(r4, d) for d in docs)
    elif x < 0.55:
        text = r4.choice([",\n", ", ", ","]).join(docs)
    elif x < 0.7:
        text = "".join(f"Result {i + 1}: {d}\n" for i, d in enumerate(docs))
    elif x < 0.85:
        text = "\n\n".join("```json\n" + d + "\n```" for d in docs)
    else:
        text = "\n".join(docs)
        text = r4_cut(r4, text, len(text) - 8)
    add("multiple_documents", text)

for case in cases:
    print(json.dumps(case, ensure_ascii=False))
print(f"{len(cases)} inputs", file=sys.stderr)
