#!/usr/bin/env python3
"""Reference records for the `json-eval` pack, from a Python port of seed 002.

Seed 002 ("Metrics Implementation Plan") compares the AIO (the model's JSON) with the
GT (ground truth) over their top-level keys:

* null: ``None``, ``""`` or a whitespace-only string (``str.strip() == ""``);
* Phase 0: the five key buckets;
* Phase 1: completeness; Phase 2: hallucination; Phase 3: accuracy (per-field
  strategies, IGNORE excluded); Phase 4: RQS with the default weights, clamped.

The strategies are resolved as the shipped pack configures them, with SEMANTIC
scored FUZZY (see PACK below; src/pack_tests/reference_records.rs applies the same overrides): explicit ``field_strategies``,
else auto-detection on the GT value (numbers, booleans, arrays, objects, ISO-8601
dates / date-times and e-mail addresses -> EXACT; any other string -> the pack's
``text_strategy``). EXACT and FUZZY are the seed's, as DESIGN.md refines them:

* EXACT: the seed's ``str(gt).lower() == str(aio).lower()`` (JSON-sorted for
  dict/list), refined by DESIGN.md: case-insensitive text, numerically equal numbers
  equal (2 == 2.0), objects equal regardless of key order, arrays in order, types
  must agree inside containers. At the top level a string and a number / boolean
  compare as the seed does, by ``str(x).lower()`` (so ``"2"`` matches ``2`` and
  ``"True"`` matches ``true``).
* FUZZY: when both values are strings, normalised Levenshtein similarity over the
  lower-cased Unicode characters, ``1 - distance / longer length``, matched when
  ``>= fuzzy_threshold`` (0.85); otherwise as EXACT.

Each output line: ``{"pack": "json-eval", "id", "output" (the AIO as JSON text:
mostly plain, some in a ```json fence or after prose), "expected" (the GT),
"reference": {"score", "metrics": {"json_compare": {"details": {completeness,
hallucination, accuracy, rqs, buckets}}}}}``. Bucket key lists are in the order the
built-in documents: GT keys in GT order, then AIO-only keys in AIO order.

Deterministic (fixed seed). Run from the repository root:

    python3 tests/reference/gen_json_eval.py

Probe cases on which the engine is known to differ from this port are listed in
``ENGINE_DIFFERENCES`` (bottom of the file) and are NOT written to the reference file;
``--differences PATH`` writes them (and ``NOT_EXACT_EXTRACTION``), with this port's
reference and a note, to PATH instead.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import random
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
PACK_YAML = os.path.join(ROOT, "rules", "json-eval", "pack.yaml")
OUT = os.path.join(HERE, "json-eval.jsonl")
SEED = 20020
COUNT = 3000

# --------------------------------------------------------------------------------------
# The configuration: the shipped pack's, with the seed's SEMANTIC fields (and
# auto-detected text) scored FUZZY, since this script has no embedding model.
# src/pack_tests/reference_records.rs loads rules/json-eval with the same overrides (--set).
# --------------------------------------------------------------------------------------

PACK = {
    "field_strategies": {
        "customer_name": "FUZZY",
        "address_line_1": "FUZZY",
        "phone_number": "EXACT",
        "internal_notes": "IGNORE",
        "description": "FUZZY",
    },
    "text_strategy": "fuzzy",
    "fuzzy_threshold": "0.85",
}
FIELD_STRATEGIES: dict[str, str] = PACK["field_strategies"]
TEXT_STRATEGY = PACK.get("text_strategy", "semantic").upper()
FUZZY_THRESHOLD = float(PACK.get("fuzzy_threshold", 0.85))
WEIGHTS = {"accuracy": 0.45, "completeness": 0.25, "hallucination": 0.15, "safety": 0.15}
WEIGHTS.update(PACK.get("weights", {}))
SAFETY = 1.0  # no safety_metric in the pack
assert FIELD_STRATEGIES == {
    "customer_name": "FUZZY",
    "address_line_1": "FUZZY",
    "phone_number": "EXACT",
    "internal_notes": "IGNORE",
    "description": "FUZZY",
}, FIELD_STRATEGIES
assert TEXT_STRATEGY == "FUZZY" and FUZZY_THRESHOLD == 0.85, (TEXT_STRATEGY, FUZZY_THRESHOLD)
assert WEIGHTS == {"accuracy": 0.45, "completeness": 0.25, "hallucination": 0.15, "safety": 0.15}

# --------------------------------------------------------------------------------------
# The seed's logic.
# --------------------------------------------------------------------------------------


def is_null(value) -> bool:
    """The seed's is_null, verbatim."""
    if value is None:
        return True
    if isinstance(value, str) and value.strip() == "":
        return True
    return False


def is_number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


_DATE = re.compile(
    r"([0-9]{4})-([0-9]{2})-([0-9]{2})"
    r"(?:[Tt ]([0-9]{2}):([0-9]{2})(?::([0-9]{2})(?:\.[0-9]+)?)?"
    r"(?:[Zz]|[+-]([0-9]{2}):?([0-9]{2}))?)?",
    re.ASCII,
)
_EMAIL = re.compile(r"[^@\s]+@[^@\s.]+(?:\.[^@\s.]+)+")


def is_iso_date(text: str) -> bool:
    """ISO-8601 calendar date (YYYY-MM-DD) or date-time (T or space, HH:MM, optional
    seconds and fraction, optional Z / +-HH:MM offset), with valid field ranges."""
    m = _DATE.fullmatch(text)
    if not m:
        return False
    y, mo, d, hh, mm, ss, oh, om = m.groups()
    try:
        _dt.date(int(y), int(mo), int(d))
    except ValueError:
        return False
    if hh is not None and (int(hh) > 23 or int(mm) > 59):
        return False
    if ss is not None and int(ss) > 60:  # 60: a leap second
        return False
    if oh is not None and (int(oh) > 23 or int(om) > 59):
        return False
    return True


def is_email(text: str) -> bool:
    return _EMAIL.fullmatch(text) is not None


def detect_strategy(gt_value) -> str:
    """Seed: numeric, boolean, date, email, array, object -> EXACT; text -> SEMANTIC
    (the shipped pack: `text_strategy`)."""
    if isinstance(gt_value, str):
        text = gt_value.strip()
        if is_iso_date(text) or is_email(text):
            return "EXACT"
        return TEXT_STRATEGY
    return "EXACT"


def resolve_strategy(key: str, gt_value) -> str:
    if key in FIELD_STRATEGIES:
        return FIELD_STRATEGIES[key]
    return detect_strategy(gt_value)


def py_str(v) -> str:
    """Python's str() of a JSON scalar."""
    return str(v)


def structural_eq(a, b) -> bool:
    """EXACT inside containers: the seed's lower-cased sorted JSON text, as DESIGN.md
    refines it (numbers numerically, strings and keys case-insensitively, objects in
    any key order, arrays in order, types agree)."""
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if is_number(a) or is_number(b):
        return is_number(a) and is_number(b) and a == b
    if isinstance(a, str) or isinstance(b, str):
        return isinstance(a, str) and isinstance(b, str) and a.lower() == b.lower()
    if isinstance(a, list) or isinstance(b, list):
        return (
            isinstance(a, list)
            and isinstance(b, list)
            and len(a) == len(b)
            and all(structural_eq(x, y) for x, y in zip(a, b))
        )
    assert isinstance(a, dict) and isinstance(b, dict)
    if len(a) != len(b):
        return False

    # Keys compare case-insensitively (the seed lower-cases the whole JSON text).
    # Keys that collide once lower-cased are paired in sorted order, as in the seed's
    # sort_keys=True dump.
    def groups(d):
        out: dict = {}
        for k in sorted(d):
            out.setdefault(k.lower(), []).append(d[k])
        return out

    ga, gb = groups(a), groups(b)
    if ga.keys() != gb.keys():
        return False
    return all(
        len(ga[k]) == len(gb[k]) and all(structural_eq(x, y) for x, y in zip(ga[k], gb[k]))
        for k in ga
    )


def exact_match(gt, aio) -> bool:
    """Seed: str(gt).lower() == str(aio).lower() (JSON-sorted for dict/list)."""
    scalar = lambda v: is_number(v) or isinstance(v, bool)  # noqa: E731
    if isinstance(gt, str) and scalar(aio):
        return gt.lower() == py_str(aio).lower()
    if scalar(gt) and isinstance(aio, str):
        return py_str(gt).lower() == aio.lower()
    return structural_eq(gt, aio)


def levenshtein(a: str, b: str) -> int:
    if len(a) < len(b):
        a, b = b, a
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            current.append(
                min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb))
            )
        previous = current
    return previous[-1]


def fuzzy_similarity(a: str, b: str) -> float:
    a, b = a.lower(), b.lower()
    longer = max(len(a), len(b))
    if longer == 0:
        return 1.0
    return 1.0 - levenshtein(a, b) / longer


def field_score(strategy: str, gt, aio) -> float:
    if strategy == "EXACT":
        return 1.0 if exact_match(gt, aio) else 0.0
    if strategy == "FUZZY":
        if isinstance(gt, str) and isinstance(aio, str):
            return 1.0 if fuzzy_similarity(gt, aio) >= FUZZY_THRESHOLD else 0.0
        return 1.0 if exact_match(gt, aio) else 0.0
    raise ValueError(f"strategy {strategy} is not available offline")


def evaluate(gt: dict, aio: dict) -> dict:
    """The seed's four phases."""
    gt_keys, aio_keys = list(gt), list(aio)
    # Phase 0 — key classification.
    extra_keys = [k for k in aio_keys if k not in gt]
    gt_null_aio_has_value = [
        k for k in gt_keys if is_null(gt[k]) and k in aio and not is_null(aio[k])
    ]
    gt_non_null = [k for k in gt_keys if not is_null(gt[k])]
    aio_missing_or_null = [k for k in gt_non_null if k not in aio or is_null(aio[k])]
    both_non_null = [k for k in gt_non_null if k in aio and not is_null(aio[k])]
    # Phase 1 — completeness.
    if len(gt_non_null) == 0:
        completeness = 1.0
    else:
        completeness = len(both_non_null) / len(gt_non_null)
    # Phase 2 — hallucination.
    total_distinct = len(set(gt_keys) | set(aio_keys))
    hallucination_count = len(extra_keys) + len(gt_null_aio_has_value)
    hallucination = 0.0 if total_distinct == 0 else hallucination_count / total_distinct
    # Phase 3 — accuracy.
    ignored = [k for k in both_non_null if resolve_strategy(k, gt[k]) == "IGNORE"]
    scorable_count = len(both_non_null) - len(ignored)
    total_acc_score = sum(
        field_score(resolve_strategy(k, gt[k]), gt[k], aio[k])
        for k in both_non_null
        if k not in ignored
    )
    accuracy = 1.0 if scorable_count == 0 else total_acc_score / scorable_count
    # Phase 4 — RQS.
    rqs = (
        WEIGHTS["accuracy"] * accuracy
        + WEIGHTS["completeness"] * completeness
        + WEIGHTS["safety"] * SAFETY
        - WEIGHTS["hallucination"] * hallucination
    )
    rqs = max(0.0, min(1.0, rqs))
    return {
        "completeness": completeness,
        "hallucination": hallucination,
        "accuracy": accuracy,
        "rqs": rqs,
        "buckets": {
            "extra_keys": extra_keys,
            "gt_null_aio_has_value": gt_null_aio_has_value,
            "gt_non_null": gt_non_null,
            "aio_missing_or_null": aio_missing_or_null,
            "both_non_null": both_non_null,
        },
    }


# --------------------------------------------------------------------------------------
# Generators.
# --------------------------------------------------------------------------------------

WHITESPACE = [
    " ", "\t", "\n", "\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x1f", "\x85",
    "\xa0", "\u1680", "\u2000", "\u2001", "\u2002", "\u2003", "\u2007", "\u2009",
    "\u200a", "\u2028", "\u2029", "\u202f", "\u205f", "\u3000",
]
# Look like blanks but are not whitespace to str.strip(): values, not nulls.
NOT_WHITESPACE = ["\u200b", "\ufeff", "\u180e", "\u2060", "\u200d"]
assert all(c.isspace() for c in WHITESPACE) and not any(c.isspace() for c in NOT_WHITESPACE)

NAMES = [
    "John Smith", "Maria Gonzalez", "Zoë Ångström", "José María Aznar", "Li Wei",
    "李小龙", "Ólafur Arnalds", "François Dupont", "Søren Kierkegaard", "Nguyễn Văn An",
    "Anna-Lena Müller", "O'Brien Patrick", "Ярослав Петренко", "Αλέξανδρος Νικολάου",
    "Siobhán Ní Bhriain", "Ahmed Al-Farsi", "Björn Borg", "Jean-Luc Picard",
    "Hannah Arendt", "Ines Çelik", "Łukasz Żółć", "Ørjan Nilsen", "Dvořák Antonín",
]
STREETS = [
    "12 Harbour Street", "742 Evergreen Terrace", "221B Baker Street", "1600 Pennsylvania Ave NW",
    "10 Downing Street", "Calle de Alcalá 48", "Straße des 17. Juni 135", "4 Privet Drive",
    "350 Fifth Avenue", "Rua Augusta 274", "Via del Corso 101", "8 Rue de Rivoli",
    "Ulica Długa 17", "Kungsgatan 44", "Nørrebrogade 12",
]
SENTENCES = [
    "Senior engineer with 10 years of experience in distributed systems.",
    "Prefers contact by e-mail in the morning.",
    "Customer reported a billing discrepancy in March.",
    "Long-time subscriber, upgraded to the premium plan last year.",
    "Café owner in the old town; pays invoices on time.",
    "Needs a wheelchair-accessible entrance.",
    "Interested in the annual plan with 12 seats.",
    "Relocated from München to Zürich in 2021.",
    "Ships to a PO box only.",
    "Asked for invoices in euros (€).",
]
WORDS = [
    "active", "pending", "closed", "gold", "silver", "bronze", "north", "south", "red",
    "blue", "alpha", "beta", "premium", "basic", "trial", "Lisbon", "Porto", "Zürich",
    "München", "São Paulo", "Kraków", "İstanbul", "Reykjavík",
]
DOMAINS = ["example.com", "example.org", "mail.example.co.uk", "exämple.de", "corp.io"]
PHONES = ["+1 555 0142", "+44 20 7946 0958", "555-0100", "(555) 010-4477", "+351 21 000 0000"]
GENERIC_KEYS = [
    "email", "signup_date", "seats", "active", "tags", "address", "city", "country",
    "score", "ratio", "created_at", "updated_at", "status", "plan", "notes", "bio",
    "count", "balance", "verified", "preferences", "items", "zip", "id", "nickname",
    "birthday", "Name", "NAME", "título", "città", "ключ", "名前", "a b", "x/y", "k~1",
    "contact.email", "",
]
PACK_KEYS = list(FIELD_STRATEGIES)


def mutate_chars(rng: random.Random, s: str, edits: int) -> str:
    """Applies `edits` random single-character edits (substitute, insert, delete)."""
    chars = list(s)
    alphabet = "abcdefghijklmnopqrstuvwxyzéüøß0123456789 "
    for _ in range(edits):
        op = rng.choice("sid") if chars else "i"
        if op == "s":
            i = rng.randrange(len(chars))
            new = rng.choice(alphabet)
            while new == chars[i].lower():
                new = rng.choice(alphabet)
            chars[i] = new
        elif op == "i":
            chars.insert(rng.randrange(len(chars) + 1), rng.choice(alphabet))
        else:
            del chars[rng.randrange(len(chars))]
    return "".join(chars)


def case_change(rng: random.Random, s: str) -> str:
    return rng.choice([s.upper(), s.lower(), s.swapcase(), s.title()])


def blank(rng: random.Random):
    kind = rng.randrange(6)
    if kind == 0:
        return None
    if kind == 1:
        return ""
    return "".join(rng.choice(WHITESPACE) for _ in range(rng.randint(1, 4)))


def not_quite_blank(rng: random.Random) -> str:
    """A value that looks empty but is not null to the seed."""
    return rng.choice(WHITESPACE) + rng.choice(NOT_WHITESPACE) + rng.choice(["", " "])


def rand_date(rng: random.Random) -> _dt.datetime:
    base = _dt.datetime(2015, 1, 1)
    return base + _dt.timedelta(minutes=rng.randrange(0, 12 * 365 * 24 * 60), seconds=rng.randrange(60))


def date_text(rng: random.Random, d: _dt.datetime) -> str:
    form = rng.randrange(8)
    if form <= 2:
        return d.strftime("%Y-%m-%d")
    if form == 3:
        return d.strftime("%Y-%m-%dT%H:%M:%SZ")
    if form == 4:
        return d.strftime("%Y-%m-%dT%H:%M")
    if form == 5:
        return d.strftime("%Y-%m-%d %H:%M:%S")
    if form == 6:
        return d.strftime("%Y-%m-%dT%H:%M:%S") + ".%03d" % rng.randrange(1000) + rng.choice(["+02:00", "-05:00", "Z"])
    return d.strftime("%Y-%m-%dT%H:%M:%S") + rng.choice(["+0100", "-0330", "+00:00"])


def email_text(rng: random.Random) -> str:
    name = rng.choice(NAMES).split()[0]
    local = "".join(c for c in name.lower() if c.isalnum()) or "user"
    local += rng.choice(["", ".x", "+tag", "_1", "42"])
    return f"{local}@{rng.choice(DOMAINS)}"


def nested_object(rng: random.Random, depth: int = 0) -> dict:
    keys = rng.sample(["a", "b", "street", "City", "zip", "geo", "list", "flag", "n", "note"], rng.randint(1, 4))
    out = {}
    for k in keys:
        out[k] = nested_value(rng, depth + 1)
    return out


def nested_value(rng: random.Random, depth: int):
    choices = ["int", "float", "str", "bool", "null"]
    if depth < 3:
        choices += ["obj", "arr"]
    kind = rng.choice(choices)
    if kind == "int":
        return rng.randint(-50, 5000)
    if kind == "float":
        return round(rng.uniform(-100, 100), rng.randint(1, 3))
    if kind == "str":
        return rng.choice(WORDS + NAMES[:6])
    if kind == "bool":
        return rng.random() < 0.5
    if kind == "null":
        return None
    if kind == "obj":
        return nested_object(rng, depth)
    return [nested_value(rng, depth + 1) for _ in range(rng.randint(0, 3))]


def gt_value(rng: random.Random, key: str):
    """A GT value; the key biases the kind (pack fields get text), then anything goes."""
    if key == "customer_name":
        kind = rng.choice(["name", "name", "name", "int", "null"])
    elif key == "address_line_1":
        kind = rng.choice(["street", "street", "street", "null", "obj"])
    elif key == "description":
        kind = rng.choice(["sentence", "sentence", "word", "null", "arr"])
    elif key == "phone_number":
        kind = rng.choice(["phone", "phone", "int", "null"])
    elif key == "internal_notes":
        kind = rng.choice(["sentence", "word", "null", "int"])
    elif key in ("email", "contact.email"):
        kind = rng.choice(["email", "email", "email", "null"])
    elif key in ("signup_date", "created_at", "updated_at", "birthday"):
        kind = rng.choice(["date", "date", "date", "textdate", "null"])
    else:
        kind = rng.choice([
            "name", "street", "sentence", "word", "word", "int", "int", "float", "bool",
            "bool", "date", "email", "obj", "arr", "arr", "null", "phone", "numstr", "boolstr",
        ])
    if kind == "name":
        return rng.choice(NAMES)
    if kind == "street":
        return rng.choice(STREETS)
    if kind == "sentence":
        return rng.choice(SENTENCES)
    if kind == "word":
        return rng.choice(WORDS)
    if kind == "phone":
        return rng.choice(PHONES)
    if kind == "int":
        return rng.choice([0, 1, 2, 7, 12, -3, 42, 100, 2024, 99999, 10**12])
    if kind == "float":
        return rng.choice([0.5, 2.5, -1.25, 3.14159, 99.99, 0.1, 1.0, 2.0, 1e-3, 12345.678])
    if kind == "bool":
        return rng.random() < 0.5
    if kind == "date":
        return date_text(rng, rand_date(rng))
    if kind == "textdate":
        return rand_date(rng).strftime(rng.choice(["%B %d, %Y", "%d/%m/%Y", "%d.%m.%Y", "%b %Y"]))
    if kind == "email":
        return email_text(rng)
    if kind == "obj":
        return nested_object(rng)
    if kind == "arr":
        return [nested_value(rng, 1) for _ in range(rng.randint(0, 4))]
    if kind == "numstr":
        return rng.choice(["2", "3", "42", "0", "2.5", "1.0", "-7"])
    if kind == "boolstr":
        return rng.choice(["true", "True", "FALSE", "false"])
    return blank(rng)


def reorder(rng: random.Random, value):
    """Same value, object keys shuffled at every level (arrays keep their order)."""
    if isinstance(value, dict):
        keys = list(value)
        rng.shuffle(keys)
        return {k: reorder(rng, value[k]) for k in keys}
    if isinstance(value, list):
        return [reorder(rng, v) for v in value]
    return value


def recase(rng: random.Random, value):
    """Same value, strings (and some keys) in another case."""
    if isinstance(value, str):
        return case_change(rng, value)
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            nk = case_change(rng, k) if rng.random() < 0.3 else k
            if nk.lower() != k.lower() or nk in out:
                nk = k
            out[nk] = recase(rng, v)
        return out
    if isinstance(value, list):
        return [recase(rng, v) for v in value]
    return value


def renumber(value):
    """Same value with ints as floats and integral floats as ints (2 <-> 2.0)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return float(value)
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return int(value)
    if isinstance(value, dict):
        return {k: renumber(v) for k, v in value.items()}
    if isinstance(value, list):
        return [renumber(v) for v in value]
    return value


def tweak(rng: random.Random, value):
    """A different value of the same shape (one leaf changed, or an array reordered)."""
    if isinstance(value, bool):
        return not value
    if is_number(value):
        return value + rng.choice([1, -1, 0.5, 10])
    if isinstance(value, str):
        return mutate_chars(rng, value, rng.randint(1, 3)) if value else "x"
    if isinstance(value, list):
        if len(value) >= 2 and rng.random() < 0.5:
            rotated = value[1:] + value[:1]
            if not structural_eq(rotated, value):
                return rotated
        if value and rng.random() < 0.5:
            return value[:-1]
        return value + [rng.choice(WORDS)]
    if isinstance(value, dict):
        if not value or rng.random() < 0.3:
            return {**value, "extra": 1}
        k = rng.choice(list(value))
        return {**value, k: tweak(rng, value[k]) if value[k] is not None else 0}
    return "x"


def aio_for(rng: random.Random, gt) -> tuple[bool, object]:
    """(present, value) for the AIO side of one GT key."""
    r = rng.random()
    if r < 0.08:
        return False, None  # missing
    if r < 0.16:
        return True, blank(rng)
    if r < 0.19:
        return True, not_quite_blank(rng)
    if is_null(gt):
        # GT expects nothing: the AIO may still say something (hallucination).
        return True, rng.choice([gt_value(rng, "x"), "n/a", 0, False, [], {}])
    r = rng.random()
    if r < 0.30:
        return True, gt
    if r < 0.42:
        return True, recase(rng, gt)
    if r < 0.52:
        return True, reorder(rng, renumber(gt))
    if r < 0.68 and isinstance(gt, str):
        # near misses around the fuzzy threshold
        edits = rng.choice([1, 1, 2, 2, 3, 4, 6])
        return True, mutate_chars(rng, gt, edits)
    if r < 0.74 and isinstance(gt, str) and gt.strip():
        # surrounding whitespace: not null, but not equal either
        return True, rng.choice(WHITESPACE) + gt + rng.choice(["", " "])
    if r < 0.80:
        # top-level cross-type, as the seed's str(...).lower() sees it
        if isinstance(gt, bool):
            return True, rng.choice([str(gt), str(gt).lower(), str(gt).upper(), int(gt), "yes"])
        if is_number(gt):
            return True, rng.choice([str(gt), repr(float(gt)), str(gt) + " ", f"{gt}", str(-gt)])
        if isinstance(gt, str):
            try:
                num = json.loads(gt)
            except ValueError:
                num = None
            if is_number(num) or isinstance(num, bool):
                return True, num
            return True, rng.choice([42, True, [gt], {"value": gt}])
        return True, rng.choice(["n/a", 0, True, [gt] if isinstance(gt, dict) else {"items": gt}])
    return True, tweak(rng, gt)


def extra_value(rng: random.Random):
    r = rng.random()
    if r < 0.15:
        return blank(rng)
    return gt_value(rng, rng.choice(GENERIC_KEYS))


def make_case(rng: random.Random) -> tuple[dict, dict]:
    size = rng.choice([0, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 7, 8])
    pool = PACK_KEYS + GENERIC_KEYS
    keys = rng.sample(pool, min(size, len(pool)))
    gt = {}
    for k in keys:
        gt[k] = gt_value(rng, k) if rng.random() > 0.1 else blank(rng)
    aio = {}
    for k, v in gt.items():
        present, value = aio_for(rng, v)
        if present:
            aio[k] = value
    for _ in range(rng.choice([0, 0, 0, 0, 1, 1, 2, 3])):
        k = rng.choice(GENERIC_KEYS + ["extra_field", "confidence", "_comment", "Email", "EMAIL"])
        if k not in gt and k not in aio:
            aio[k] = extra_value(rng)
    if rng.random() < 0.4:
        items = list(aio.items())
        rng.shuffle(items)
        aio = dict(items)
    return gt, aio


PROSE_BEFORE = [
    "Here is the extracted record:",
    "Sure! Below is the JSON you asked for.",
    "Result:",
    "I extracted the following fields from the document.",
    "Voilà — the data:",
]
PROSE_AFTER = ["", "Let me know if anything is missing.", "Hope this helps!", "(All values taken verbatim.)"]


def render_output(rng: random.Random, aio: dict) -> str:
    ensure_ascii = rng.random() < 0.3
    indent = rng.choice([None, None, None, None, None, 2])
    text = json.dumps(aio, ensure_ascii=ensure_ascii, indent=indent)
    r = rng.random()
    if r < 0.75:
        return rng.choice(["", "", "\n", "  "]) + text + rng.choice(["", "", "\n"])
    if r < 0.87:
        fence = rng.choice(["```json", "```", "````json", "```JSON"])
        close = "````" if fence.startswith("````") else "```"
        before = rng.choice(PROSE_BEFORE) + "\n" if rng.random() < 0.6 else ""
        after = "\n" + rng.choice(PROSE_AFTER) if rng.random() < 0.5 else ""
        return f"{before}{fence}\n{text}\n{close}{after}"
    # embedded in prose, no fence
    return rng.choice(PROSE_BEFORE) + rng.choice([" ", "\n"]) + text + " " + rng.choice(PROSE_AFTER)


def fixed_cases() -> list[tuple[str, dict, dict]]:
    """Hand-written cases: the seed's walkthrough and Phase-0 edge cases, EXACT / FUZZY
    details the random cases might miss."""
    cases = [
        # The seed's walkthrough (pack strategies: name and bio are plain text -> FUZZY).
        ("walkthrough",
         {"name": "John Smith", "email": "john@example.com",
          "bio": "Senior engineer with 10 years of experience...", "internal_id": None, "status": "active"},
         {"name": "John Smyth", "email": "john@example.com",
          "bio": "Experienced senior engineer, 10+ years...", "internal_id": "abc123", "extra_field": "surprise"}),
        # Phase 0 edge cases, one each.
        ("gt-null-aio-absent", {"a": None, "b": 1}, {"b": 1}),
        ("gt-null-aio-null", {"a": None, "b": 1}, {"a": None, "b": 1}),
        ("gt-blank-aio-blank", {"a": " ", "b": 1}, {"a": "\u3000\t", "b": 1}),
        ("gt-null-aio-value", {"a": None}, {"a": "abc123"}),
        ("gt-empty-aio-false", {"a": ""}, {"a": False}),
        ("gt-empty-aio-zero", {"a": ""}, {"a": 0}),
        ("gt-empty-aio-empty-list", {"a": ""}, {"a": []}),
        ("gt-empty-aio-empty-object", {"a": ""}, {"a": {}}),
        ("extra-key", {"a": 1}, {"a": 1, "b": 2}),
        ("extra-key-null", {"a": 1}, {"a": 1, "b": None}),
        ("gt-value-aio-absent", {"a": 1, "b": 2}, {"a": 1}),
        ("gt-value-aio-null", {"a": 1, "b": 2}, {"a": 1, "b": None}),
        ("gt-value-aio-blank", {"a": 1, "b": 2}, {"a": 1, "b": "\u2028\u2029"}),
        ("both-empty", {}, {}),
        ("gt-empty", {}, {"a": 1, "b": None}),
        ("aio-empty", {"a": 1, "b": None}, {}),
        ("phase1-example", {f"k{i}": i for i in range(50)}, {f"k{i}": i for i in range(49)}),
        ("all-hallucinated-clamp", {"a": None, "b": None}, {"a": 1, "b": 2, "c": 3, "d": 4}),
        # Whitespace: every str.strip() whitespace character is null; lookalikes are not.
        ("ws-all", {f"w{i}": "x" for i in range(len(WHITESPACE))},
         {f"w{i}": c for i, c in enumerate(WHITESPACE)}),
        ("ws-not", {f"n{i}": "x" for i in range(len(NOT_WHITESPACE))},
         {f"n{i}": c for i, c in enumerate(NOT_WHITESPACE)}),
        ("ws-gt-all", {f"w{i}": c * 2 for i, c in enumerate(WHITESPACE)},
         {f"w{i}": "v" for i in range(len(WHITESPACE))}),
        # EXACT.
        ("exact-int-float", {"n": 2, "m": 2.0, "z": 0, "neg": -0.0}, {"n": 2.0, "m": 2, "z": 0.0, "neg": 0}),
        ("exact-num-str", {"n": 2, "f": 2.5, "s": "3", "t": "2.5"}, {"n": "2", "f": "2.5", "s": 3, "t": 2.5}),
        ("exact-num-str-2", {"n": 2, "f": 2.0, "s": "2"}, {"n": "2.0", "f": "2", "s": 2.0}),
        ("exact-bool-str", {"b": True, "c": False, "s": "True", "t": "false"},
         {"b": "true", "c": "FALSE", "s": True, "t": False}),
        ("exact-bool-int", {"b": True, "c": False, "one": 1, "zero": 0}, {"b": 1, "c": 0, "one": True, "zero": False}),
        ("exact-bool-yes", {"b": True}, {"b": "yes"}),
        ("exact-email-case", {"email": "Jane.Doe@Example.org"}, {"email": "jane.doe@example.org"}),
        ("exact-email-near", {"email": "jane.doe@example.org"}, {"email": "jane.doe@example.com"}),
        ("exact-date-near", {"d": "2024-05-01"}, {"d": "2024-05-02"}),
        ("exact-datetime-case", {"d": "2024-05-01T10:30:00Z"}, {"d": "2024-05-01t10:30:00z"}),
        ("exact-datetime-space", {"d": "2024-05-01 10:30"}, {"d": "2024-05-01 10:31"}),
        ("exact-datetime-offset", {"d": "2024-05-01T10:30:15.123+02:00"}, {"d": "2024-05-01T10:30:15.123+02:01"}),
        ("text-date-is-fuzzy", {"d": "May 1, 2024"}, {"d": "May 2, 2024"}),
        ("exact-obj-order", {"o": {"a": 1, "b": [1, "X"], "c": {"d": None}}},
         {"o": {"c": {"d": None}, "b": [1.0, "x"], "a": 1}}),
        ("exact-obj-key-case", {"o": {"Street": "Main", "zip": "123"}}, {"o": {"street": "MAIN", "ZIP": "123"}}),
        ("exact-obj-extra", {"o": {"a": 1}}, {"o": {"a": 1, "b": 2}}),
        ("exact-obj-null-vs-missing", {"o": {"a": 1, "b": None}}, {"o": {"a": 1}}),
        ("exact-arr-order", {"l": [1, 2, 3]}, {"l": [3, 2, 1]}),
        ("exact-arr-types", {"l": ["2", True]}, {"l": [2, "true"]}),
        ("exact-arr-nested-num", {"l": [[1, 2.5], {"k": 1}]}, {"l": [[1.0, 2.5], {"k": 1.0}]}),
        ("exact-arr-empty", {"l": [], "o": {}}, {"l": [], "o": {}}),
        ("exact-arr-vs-obj", {"l": [], "o": {}}, {"l": {}, "o": []}),
        ("exact-obj-vs-str", {"o": {"a": 1}, "l": [1]}, {"o": "n/a", "l": "none"}),
        ("exact-nested-bool-num", {"o": {"a": True}}, {"o": {"a": 1}}),
        ("exact-nested-null", {"l": [None, 1]}, {"l": [None, 1.0]}),
        ("exact-nested-unicode-case", {"o": {"city": "ZÜRICH", "n": "Ελένη"}}, {"o": {"city": "zürich", "n": "ΕΛΈΝΗ"}}),
        ("phone-exact", {"phone_number": "+1 555 0142"}, {"phone_number": "+1 555 0143"}),
        ("phone-exact-case", {"phone_number": "555-CALL-NOW"}, {"phone_number": "555-call-now"}),
        ("phone-int", {"phone_number": 5550142}, {"phone_number": "5550142"}),
        # IGNORE.
        ("ignore-notes", {"internal_notes": "secret", "a": 1}, {"internal_notes": "other", "a": 1}),
        ("ignore-notes-missing", {"internal_notes": "secret"}, {}),
        ("ignore-notes-extra", {"a": 1}, {"a": 1, "internal_notes": "x"}),
        ("ignore-only", {"internal_notes": 5}, {"internal_notes": [1]}),
        # FUZZY (explicit and auto).
        ("fuzzy-name", {"customer_name": "Maria Gonzalez"}, {"customer_name": "Maria Gonzales"}),
        ("fuzzy-case", {"customer_name": "MARIA GONZALEZ"}, {"customer_name": "maria gonzalez"}),
        ("fuzzy-boundary-20-3", {"customer_name": "abcdefghijklmnopqrst"}, {"customer_name": "abcdefghijklmnopqXYZ"}),
        ("fuzzy-boundary-20-4", {"customer_name": "abcdefghijklmnopqrst"}, {"customer_name": "abcdefghijklmnopWXYZ"}),
        ("fuzzy-insert", {"address_line_1": "221B Baker Street"}, {"address_line_1": "221 B Baker Street"}),
        ("fuzzy-num", {"customer_name": 42}, {"customer_name": "42"}),
        ("fuzzy-num-float", {"customer_name": 42}, {"customer_name": 42.0}),
        ("fuzzy-str-vs-num", {"description": "2.5"}, {"description": 2.5}),
        ("fuzzy-str-vs-list", {"description": "a"}, {"description": ["a"]}),
        ("fuzzy-obj", {"address_line_1": {"street": "Main"}}, {"address_line_1": {"STREET": "main"}}),
        ("fuzzy-unicode", {"city": "Kraków"}, {"city": "Krakow"}),
        ("fuzzy-cjk", {"customer_name": "李小龙"}, {"customer_name": "李小虎"}),
        ("fuzzy-short", {"city": "Lisbon"}, {"city": "Lisboa"}),
        ("fuzzy-numeric-text", {"code": "12345678"}, {"code": "12345679"}),
        ("fuzzy-emoji", {"nickname": "star ⭐ player"}, {"nickname": "star ⭐ playr"}),
        ("fuzzy-astral", {"nickname": "𝒜𝓁𝒾𝒸ℯ in wonderland"}, {"nickname": "𝒜𝓁𝒾𝒸ℯ in wonderlands"}),
        ("fuzzy-german-sharp-s", {"street": "Hauptstraße 5"}, {"street": "HAUPTSTRASSE 5"}),
        # Keys.
        ("keys-case-distinct", {"Name": "x", "name": "y"}, {"name": "y", "NAME": "z"}),
        ("keys-unicode", {"名前": "太郎", "città": "Roma"}, {"città": "roma", "名前": "太郎"}),
        ("keys-odd", {"": 1, "a/b": 2, "c~d": 3, " ": 4}, {"": 1, "a/b": 2, "c~d": 4, " ": None}),
    ]
    return cases


def record(rid: str, gt: dict, aio: dict, output: str) -> dict:
    details = evaluate(gt, aio)
    return {
        "pack": "json-eval",
        "id": rid,
        "output": output,
        "expected": gt,
        "reference": {
            "score": details["rqs"],
            "metrics": {"json_compare": {"details": details}},
        },
    }


def extraction_is_exact(output: str, aio: dict) -> bool:
    """Best-effort check that the output's JSON is exactly the AIO (strict, fence or
    first balanced {...}); the generator only writes outputs built from `aio` anyway."""
    try:
        return json.loads(output) == aio
    except ValueError:
        pass
    m = re.search(r"```+[A-Za-z]*\n(.*?)\n```", output, re.S)
    if m:
        return json.loads(m.group(1)) == aio
    start = output.index("{")
    return json.loads(output[start:output.rindex("}") + 1]) == aio


def main(argv: list[str]) -> int:
    differences_path = None
    if argv[:1] == ["--differences"] and len(argv) == 2:
        differences_path = argv[1]
    elif argv:
        print(__doc__, file=sys.stderr)
        return 2
    left_out = {**ENGINE_DIFFERENCES, **NOT_EXACT_EXTRACTION}
    rng = random.Random(SEED)
    records = []
    for name, gt, aio in fixed_cases():
        records.append(record(f"je-fixed-{name}", gt, aio, json.dumps(aio, ensure_ascii=False)))
    for name, gt, aio, *raw in probe_cases():
        output = raw[0] if raw else json.dumps(aio, ensure_ascii=False)
        records.append(record(f"je-probe-{name}", gt, aio, output))
    i = 0
    while len(records) < COUNT + len(left_out):
        gt, aio = make_case(rng)
        output = render_output(rng, aio)
        assert extraction_is_exact(output, aio), output
        records.append(record(f"je-{i:05d}", gt, aio, output))
        i += 1
    kept = [r for r in records if r["id"] not in left_out]
    known = [r for r in records if r["id"] in left_out]
    missing = set(left_out) - {r["id"] for r in known}
    assert not missing, f"left-out ids name no record: {sorted(missing)}"
    with open(OUT, "w", encoding="utf-8") as f:
        for r in kept:
            f.write(json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n")
    print(f"wrote {len(kept)} records to {os.path.relpath(OUT, ROOT)} "
          f"({len(known)} known differences left out)")
    if differences_path:
        with open(differences_path, "w", encoding="utf-8") as f:
            for r in known:
                r = {**r, "difference": left_out[r["id"]]}
                f.write(json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n")
        print(f"wrote {len(known)} left-out records to {differences_path}")
    return 0


# --------------------------------------------------------------------------------------
# Where the engine differs from this port (found by running the reference test). Each
# case is generated (so `--differences` can reproduce it) but left out of the file.
# --------------------------------------------------------------------------------------


def probe_cases() -> list[tuple]:
    """Edge cases probing where an implementation could part from the seed:
    (name, gt, aio[, raw output text]). Those on which the engine differs are listed
    below and left out of the reference file."""
    return [
        ("obj-case-colliding-keys", {"o": {"a": 1, "A": 2}}, {"o": {"a": 1, "A": 2}}),
        ("obj-case-colliding-keys-2", {"o": {"A": 2, "a": 1}}, {"o": {"a": 1, "A": 2}}),
        ("obj-case-colliding-keys-3", {"o": {"a": 1, "A": 2}}, {"o": {"a": 2, "A": 1}}),
        ("fuzzy-final-sigma", {"customer_name": "ΟΔΟΣ"}, {"customer_name": "οδος"}),
        ("fuzzy-final-sigma-2", {"customer_name": "ΟΔΥΣΣΕΑΣ"}, {"customer_name": "οδυσσεας"}),
        ("auto-text-final-sigma", {"name": "ΟΔΟΣ"}, {"name": "οδος"}),
        ("exact-final-sigma", {"phone_number": "ΟΔΟΣ"}, {"phone_number": "οδος"}),
        ("exact-nested-final-sigma", {"o": {"s": "ΟΔΟΣ"}}, {"o": {"s": "οδος"}}),
        ("bigint-vs-float", {"n": 9007199254740993}, {"n": 9007199254740992.0}),
        ("bigint-u64-overflow", {"n": 18446744073709551616}, {"n": 18446744073709551617}),
        ("bigint-u64-overflow-same", {"n": 18446744073709551616}, {"n": 18446744073709551616}),
        ("bigint-str", {"n": 10**20}, {"n": "100000000000000000000"}),
        ("float-str-1e16", {"n": 1e16}, {"n": "1e+16"}),
        ("float-str-1e16-b", {"n": 1e16}, {"n": "1e16"}),
        ("float-str-1e-05", {"n": 1e-05}, {"n": "1e-05"}),
        ("float-str-1e-05-b", {"n": 1e-05}, {"n": "1e-5"}),
        ("str-float-1e-05", {"s": "1e-05"}, {"s": 1e-05}),
        ("str-float-1e+20", {"s": "1e+20"}, {"s": 1e20}),
        ("str-float-1e20", {"s": "1e20"}, {"s": 1e20}),
        ("float-str-0.0001", {"n": 0.0001}, {"n": "0.0001"}),
        ("float-str-1e15", {"n": 1e15}, {"n": "1000000000000000.0"}),
        ("neg-zero-int", {"n": 0}, {"n": "0"}, '{"n": "0"}'),
        ("neg-zero-int-raw", {"n": 0}, {"n": 0}, '{"n": -0}'),
        ("neg-zero-str", {"s": "0"}, {"s": 0}, '{"s": -0}'),
        ("raw-fallback-key", {"a": 1}, {"a": 1, "_raw_fallback": True}),
        ("date-invalid-day", {"d": "2024-02-30"}, {"d": "2024-02-31"}),
        ("date-year-month", {"d": "2024-05"}, {"d": "2024-06"}),
        ("date-basic", {"d": "20240501"}, {"d": "20240502"}),
        ("date-hour-only", {"d": "2024-05-01T10"}, {"d": "2024-05-01T11"}),
        ("date-ordinal", {"d": "2024-123"}, {"d": "2024-124"}),
        ("date-week", {"d": "2024-W18-3"}, {"d": "2024-W18-4"}),
        ("date-leap-second", {"d": "2016-12-31T23:59:60Z"}, {"d": "2016-12-31T23:59:61Z"}),
        ("date-comma-fraction", {"d": "2024-05-01T10:30:15,5Z"}, {"d": "2024-05-01T10:30:15,6Z"}),
        ("date-24h", {"d": "2024-05-01T24:00"}, {"d": "2024-05-01T24:01"}),
        ("date-offset-hours", {"d": "2024-05-01T10:30+02"}, {"d": "2024-05-01T10:30+03"}),
        ("float-str-1.5e-07", {"n": 1.5e-07}, {"n": "1.5E-07"}),
        ("float-str-1e-100", {"n": 1e-100}, {"n": "1e-100"}),
        ("float-str-1e+100", {"n": 1e100}, {"n": "1E+100"}),
        ("float-str-repr", {"n": 0.1 + 0.2}, {"n": "0.30000000000000004"}),
        ("float-str-big", {"n": 1.2345678901234568e+17}, {"n": "1.2345678901234568e+17"}),
        ("email-no-dot", {"e": "admin@localhost"}, {"e": "admin@localhast"}),
        ("email-unicode-space", {"e": "jane\u00a0doe@example.org"}, {"e": "jane\u00a0doe@example.orf"}),
    ]


ENGINE_DIFFERENCES: dict[str, str] = {
    # Numbers beyond 2^53 / 2^64: the engine's JSON numbers are i64, u64 or f64, so an
    # integer above u64 is read as a float and an integer is compared with a float
    # through f64: distinct numbers can compare equal, and 10**20 is spelt '1e+20'.
    "je-probe-bigint-vs-float": "EXACT: 9007199254740993 vs 9007199254740992.0 match (seed: differ)",
    "je-probe-bigint-u64-overflow": "EXACT: 2**64 vs 2**64+1 match (seed: differ; both parsed as f64)",
    "je-probe-bigint-str": "EXACT: 10**20 vs '100000000000000000000' differ (seed str(): match; engine text '1e+20')",
    # JSON `-0` is parsed as the float -0.0 (text '-0.0'); Python reads the int 0.
    "je-probe-neg-zero-str": "FUZZY (auto) -> EXACT: '0' vs -0 differ (seed: match)",
}

# Records whose output the engine does not read back as exactly the AIO (so the brief's
# condition "extraction yields exactly the AIO object" fails); their scores agree.
NOT_EXACT_EXTRACTION: dict[str, str] = {
    "je-probe-bigint-u64-overflow-same": "2**64 is extracted as the float 1.8446744073709552e19",
    "je-probe-neg-zero-int-raw": "-0 is extracted as the float -0.0",
}


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
