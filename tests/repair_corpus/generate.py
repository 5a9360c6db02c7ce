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

Run from the repository root:
  python3 tests/repair_corpus/generate.py > target/repair-corpus-inputs.jsonl
"""

import json
import random
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

for case in cases:
    print(json.dumps(case, ensure_ascii=False))
print(f"{len(cases)} inputs", file=sys.stderr)
