#!/usr/bin/env python3
"""Reference records for the `context-agent` pack, from a Python port of seed 003.

Seed 003 is the ContextAgent's `json_validator` postprocessor: three rule-based checks
of the LLM's result dict, a status from the number of issues, and the retry loop's
feedback text. `validate_result` below is the seed's code, assembled as written (the
seed's snippet reads `example` without defining it; it is `type_examples[t]`):

    readme = result.get("readme", "")
    if "TODO" in readme or "TBD" in readme or "FIXME" in readme: ...
    type_examples = result.get("type_examples", {})
    for t in ["type1", "type2", "type3", "type4"]: ...
    check_logic = result.get("check_logic", {})
    if not check_logic.get("parsing_method"): ...

with Python's own `in` and truthiness. Inputs on which the seed's code raises (e.g.
`"TODO" in None`, `"yaml" in 3`, `None.get(...)`, `"abc"["type1"]`) are not generated:
the seed has no answer for them.

Each output line: ``{"pack": "context-agent", "id", "output" (the result dict as
JSON text: mostly plain, some in a ```json fence or after prose), "reference":
{"status", "issues": [{"message"}...] (in order), "feedback" ("Previous issues:
[...]", Python's list repr, or null when there are no issues)}}``.

Deterministic (fixed seed). Run from the repository root:

    python3 tests/reference/gen_context_agent.py

Probe cases on which the engine is known to differ from the seed are listed in
``ENGINE_DIFFERENCES`` (bottom of the file) and are NOT written to the reference file;
``--differences PATH`` writes them, with the seed's reference and a note, to PATH.
"""

from __future__ import annotations

import json
import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
OUT = os.path.join(HERE, "context-agent.jsonl")
SEED = 20030
COUNT = 2000

# --------------------------------------------------------------------------------------
# The seed's logic.
# --------------------------------------------------------------------------------------


def validate_result(result: dict, config_summary=None) -> tuple[str, list[str]]:
    issues: list[str] = []

    # 1. TODO Residual Check
    readme = result.get("readme", "")
    if "TODO" in readme or "TBD" in readme or "FIXME" in readme:
        issues.append("README contains unfilled placeholders")

    # 2. Type Examples Completeness
    type_examples = result.get("type_examples", {})
    for t in ["type1", "type2", "type3", "type4"]:
        if t not in type_examples:
            issues.append(f"Missing {t} example")
        else:
            example = type_examples[t]
            if "yaml" not in example or "behavior" not in example:
                issues.append(f"{t} example incomplete")

    # 3. Check Logic Completeness
    check_logic = result.get("check_logic", {})
    if not check_logic.get("parsing_method"):
        issues.append("Missing parsing_method")
    if not check_logic.get("pass_fail_logic"):
        issues.append("Missing pass_fail_logic")

    # Status Determination
    if not issues:
        status = "PASS"
    elif len(issues) <= 2:
        status = "NEEDS_IMPROVEMENT"
    else:
        status = "FAIL"
    return status, issues


def seed_reference(result: dict) -> dict | None:
    """The seed's answer, or None where the seed's code raises."""
    try:
        status, issues = validate_result(result, None)
    except (TypeError, AttributeError, KeyError):
        return None
    # Integration with Retry Loop: `feedback = f"Previous issues: {issues}"` when the
    # status is not PASS (i.e. when there are issues).
    feedback = f"Previous issues: {issues}" if status != "PASS" else None
    return {
        "status": status,
        "issues": [{"message": m} for m in issues],
        "feedback": feedback,
    }


# --------------------------------------------------------------------------------------
# Generators.
# --------------------------------------------------------------------------------------

TOOLS = ["cfgcheck", "lintyaml", "depguard", "schemacop", "portwatch", "certcheck", "envsafe"]
README_LINES = [
    "Validates service YAML files against the team's deployment rules.",
    "Usage: `{tool} path/to/service.yaml`",
    "Exit codes: 0 on PASS, 1 on FAIL.",
    "Runs in CI before every deploy.",
    "Checks replicas, image tags and resource limits.",
    "Configuration lives in `.{tool}.yaml` at the repository root.",
    "Écrit en Rust; messages en anglais.",
    "Supports JSON input too: `{tool} --json file.json`.",
    "See the type examples below for what passes and what fails.",
    "Braces in text: {{\"not\": \"json\"}} and `a[0]`.",
]
PLACEHOLDERS = [
    "TODO", "TBD", "FIXME", "TODO: exit codes", "(TBD)", "FIXME!", "see TODOS", "XTBDX",
    "FIXMEs pending", "— TODO —", "`TODO`", "TODO\u00a0later",
]
NOT_PLACEHOLDERS = [
    "todo", "Todo", "tbd", "Tbd", "fixme", "FixMe", "fIXME", "T0DO", "TO DO", "T.B.D.",
    "FIX ME", "ＴＯＤＯ", "TOD", "BD", "IXME", "toDO", "Tbd.", "t o d o",
]
YAMLS = ["replicas: 3", "replicas: 0", "image: api:latest", "image: api:1.4.2",
         "resources:\n  limits:\n    cpu: 500m", "port: 8080", "tls: true", ""]
BEHAVIORS = ["PASS: replicas within 1-10", "FAIL: replicas must be at least 1",
             "FAIL: the latest tag is not allowed", "PASS: pinned image tag",
             "WARN: no limits", "PASS", ""]
PARSING = ["yaml.safe_load, then walk the top-level keys", "json.loads", "regex over lines",
           "ruamel.yaml round-trip parser"]
PASS_FAIL = ["FAIL on the first rule violation, PASS otherwise", "PASS when no errors",
             "count violations; FAIL if any"]
FALSY = [None, "", 0, 0.0, -0.0, False, [], {}]
TRUTHY_ODD = [" ", "\t", "\n", "0", "false", "None", "null", 1, -1, 0.5, True, [0], [""],
              {"a": 1}, "\u3000", "TODO"]


def make_readme(rng: random.Random) -> str:
    tool = rng.choice(TOOLS)
    lines = [f"# {tool}"] + [
        rng.choice(README_LINES).replace("{tool}", tool).replace("{{", "{").replace("}}", "}")
        for _ in range(rng.randint(0, 4))
    ]
    r = rng.random()
    if r < 0.3:
        # a placeholder somewhere: start, middle, end, inside a word
        token = rng.choice(PLACEHOLDERS)
        pos = rng.randint(0, len(lines))
        if rng.random() < 0.3 and lines:
            i = rng.randrange(len(lines))
            j = rng.randint(0, len(lines[i]))
            lines[i] = lines[i][:j] + token + lines[i][j:]
        else:
            lines.insert(pos, token)
    elif r < 0.55:
        # something that looks like one but is not (case-sensitive `in`)
        lines.insert(rng.randint(0, len(lines)), rng.choice(NOT_PLACEHOLDERS) + rng.choice(["", ": write this"]))
    sep = rng.choice(["\n", "\n\n", " "])
    return sep.join(lines)


def make_example(rng: random.Random):
    r = rng.random()
    if r < 0.02:
        return rng.choice([None, 3, 0, True])  # the seed raises: skipped
    if r < 0.55:
        ex = {"yaml": rng.choice(YAMLS), "behavior": rng.choice(BEHAVIORS)}
        if rng.random() < 0.3:
            ex = dict(reversed(list(ex.items())))
        return ex
    if r < 0.70:
        # incomplete or odd dicts: a key missing, null / empty values (still present),
        # keys in another case, extra keys
        return rng.choice([
            {"yaml": rng.choice(YAMLS)},
            {"behavior": rng.choice(BEHAVIORS)},
            {},
            {"yaml": None, "behavior": None},
            {"yaml": "", "behavior": ""},
            {"YAML": "x", "behavior": "y"},
            {"yaml": "x", "Behavior": "y"},
            {"yaml": "x", "behaviour": "y"},
            {"yaml": "x", "behavior": "y", "notes": "TODO"},
            {"yml": "x", "behavior": "y"},
            {"yaml": {"replicas": 3}, "behavior": ["PASS"]},
            {"yaml": False, "behavior": 0},
        ])
    if r < 0.85:
        # strings: Python's `in` is a substring test
        return rng.choice([
            "yaml: replicas: 3\nbehavior: PASS",
            "behavior: PASS; yaml: port: 8080",
            "yaml only",
            "behavior only",
            "",
            "YAML and BEHAVIOR",
            "yamlbehavior",
            "the behaviour of this yaml",
            "no example",
        ])
    # lists: Python's `in` tests membership
    return rng.choice([
        ["yaml", "behavior"],
        ["behavior", "yaml", "extra"],
        ["yaml"],
        ["behavior"],
        [],
        ["yaml: x", "behavior: y"],
        [{"yaml": "x"}, {"behavior": "y"}],
        [["yaml"], ["behavior"]],
        [1, None, "yaml", True, "behavior"],
        ["YAML", "BEHAVIOR"],
    ])


def make_type_examples(rng: random.Random):
    r = rng.random()
    if r < 0.05:
        # not a dict, and without "type1".."type4" members: all four missing
        return rng.choice(["", "none", "see below", [], [{"yaml": "x", "behavior": "y"}],
                           ["type 1", "Type1"], "TYPE1 TYPE2", {}])
    names = ["type1", "type2", "type3", "type4"]
    present = [n for n in names if rng.random() < 0.85]
    out = {}
    for n in present:
        out[n] = make_example(rng)
    if rng.random() < 0.15:
        out[rng.choice(["type5", "Type1", "type_1", "type0", "TYPE2"])] = make_example(rng)
    if rng.random() < 0.3:
        items = list(out.items())
        rng.shuffle(items)
        out = dict(items)
    return out


def make_check_logic(rng: random.Random) -> dict:
    out = {}
    for key, pool in (("parsing_method", PARSING), ("pass_fail_logic", PASS_FAIL)):
        r = rng.random()
        if r < 0.65:
            out[key] = rng.choice(pool)
        elif r < 0.75:
            pass  # missing
        elif r < 0.9:
            out[key] = rng.choice(FALSY)
        else:
            out[key] = rng.choice(TRUTHY_ODD)
    if rng.random() < 0.1:
        out[rng.choice(["Parsing_Method", "parsing", "pass_fail", "notes"])] = "x"
    if rng.random() < 0.3:
        items = list(out.items())
        rng.shuffle(items)
        out = dict(items)
    return out


def make_clean_result(rng: random.Random) -> dict:
    """A complete result (lower-case look-alikes allowed), sometimes with one flaw."""
    readme = make_readme(rng)
    while seed_reference({"readme": readme, **COMPLETE_REST})["issues"]:
        readme = make_readme(rng)
    examples = {}
    for n in ["type1", "type2", "type3", "type4"]:
        ex = make_example(rng)
        while not isinstance(ex, (dict, str, list)) or "yaml" not in ex or "behavior" not in ex:
            ex = make_example(rng)
        examples[n] = ex
    result = {
        "readme": readme,
        "type_examples": examples,
        "check_logic": {"parsing_method": rng.choice(PARSING), "pass_fail_logic": rng.choice(PASS_FAIL)},
    }
    flaw = rng.randrange(8)
    if flaw == 0:
        result["readme"] += rng.choice(["\n", " "]) + rng.choice(PLACEHOLDERS)
    elif flaw == 1:
        del result["type_examples"][rng.choice(list(examples))]
    elif flaw == 2:
        result["type_examples"][rng.choice(list(examples))] = rng.choice([{"yaml": "x"}, "behavior only", ["yaml"]])
    elif flaw == 3:
        result["check_logic"][rng.choice(["parsing_method", "pass_fail_logic"])] = rng.choice(FALSY)
    return result


COMPLETE_REST = {
    "type_examples": {t: {"yaml": "x", "behavior": "y"} for t in ["type1", "type2", "type3", "type4"]},
    "check_logic": {"parsing_method": "p", "pass_fail_logic": "q"},
}


def make_result(rng: random.Random) -> dict:
    if rng.random() < 0.35:
        return make_clean_result(rng)
    parts = []
    if rng.random() < 0.92:
        parts.append(("readme", make_readme(rng) if rng.random() > 0.01 else rng.choice([None, 1])))
    if rng.random() < 0.93:
        parts.append(("type_examples", make_type_examples(rng)))
    if rng.random() < 0.93:
        parts.append(("check_logic", make_check_logic(rng) if rng.random() > 0.01 else rng.choice([None, "n/a", []])))
    if rng.random() < 0.1:
        parts.append((rng.choice(["notes", "summary", "version"]), rng.choice(["TODO", "v1", 2, None])))
    if rng.random() < 0.2:
        rng.shuffle(parts)
    return dict(parts)


PROSE_BEFORE = [
    "Here is the documentation for the check tool:",
    "Sure! The result:",
    "I filled in every section.",
    "Voilà :",
]
PROSE_AFTER = ["", "Let me know if you need changes.", "Done."]


def render_output(rng: random.Random, result: dict) -> str:
    ensure_ascii = rng.random() < 0.3
    indent = rng.choice([None, None, None, 2])
    text = json.dumps(result, ensure_ascii=ensure_ascii, indent=indent)
    r = rng.random()
    if r < 0.8:
        return text
    if r < 0.9:
        before = rng.choice(PROSE_BEFORE) + "\n" if rng.random() < 0.6 else ""
        after = "\n" + rng.choice(PROSE_AFTER) if rng.random() < 0.5 else ""
        return f"{before}```json\n{text}\n```{after}"
    return rng.choice(PROSE_BEFORE) + " " + text + " " + rng.choice(PROSE_AFTER)


COMPLETE = {
    "readme": "# cfgcheck\n\nValidates service YAML files.",
    "type_examples": {
        "type1": {"yaml": "replicas: 3", "behavior": "PASS"},
        "type2": {"yaml": "replicas: 0", "behavior": "FAIL"},
        "type3": {"yaml": "image: api:latest", "behavior": "FAIL"},
        "type4": {"yaml": "image: api:1.4.2", "behavior": "PASS"},
    },
    "check_logic": {"parsing_method": "yaml.safe_load", "pass_fail_logic": "FAIL on any violation"},
}


def with_(base: dict, **changes) -> dict:
    out = json.loads(json.dumps(base))
    for k, v in changes.items():
        if v is ...:
            out.pop(k, None)
        else:
            out[k] = v
    return out


def fixed_cases() -> list[tuple[str, dict]]:
    te = COMPLETE["type_examples"]
    return [
        ("complete", COMPLETE),
        ("empty-object", {}),
        ("lower-case-todo", with_(COMPLETE, readme="# cfgcheck\n\ntodo: nothing, this is fine")),
        ("readme-missing", with_(COMPLETE, readme=...)),
        ("readme-empty", with_(COMPLETE, readme="")),
        ("readme-TODO", with_(COMPLETE, readme="TODO")),
        ("readme-TBD", with_(COMPLETE, readme="Release date TBD.")),
        ("readme-FIXME", with_(COMPLETE, readme="xFIXMEx")),
        ("readme-all-three", with_(COMPLETE, readme="TODO TBD FIXME")),
        ("readme-list-exact-token", with_(COMPLETE, readme=["TODO"])),
        ("readme-list-empty", with_(COMPLETE, readme=[])),
        ("readme-list-clean", with_(COMPLETE, readme=["# tool", "all done"])),
        ("readme-dict-empty", with_(COMPLETE, readme={})),
        ("readme-dict-clean", with_(COMPLETE, readme={"title": "tool"})),
        ("type-examples-missing", with_(COMPLETE, type_examples=...)),
        ("type-examples-empty", with_(COMPLETE, type_examples={})),
        ("type-examples-string", with_(COMPLETE, type_examples="see below")),
        ("type-examples-empty-string", with_(COMPLETE, type_examples="")),
        ("type-examples-list", with_(COMPLETE, type_examples=[te["type1"], te["type2"]])),
        ("type-examples-null-members", with_(COMPLETE, type_examples={**te, "type2": {"yaml": None, "behavior": None}})),
        ("type-examples-string-member", with_(COMPLETE, type_examples={**te, "type3": "yaml: a / behavior: b"})),
        ("type-examples-string-member-incomplete", with_(COMPLETE, type_examples={**te, "type3": "only the yaml"})),
        ("type-examples-list-member", with_(COMPLETE, type_examples={**te, "type4": ["yaml", "behavior"]})),
        ("type-examples-list-member-incomplete", with_(COMPLETE, type_examples={**te, "type4": ["yaml: x", "behavior: y"]})),
        ("check-logic-missing", with_(COMPLETE, check_logic=...)),
        ("check-logic-empty", with_(COMPLETE, check_logic={})),
        ("check-logic-whitespace", with_(COMPLETE, check_logic={"parsing_method": " ", "pass_fail_logic": "\t\n"})),
        ("check-logic-zero", with_(COMPLETE, check_logic={"parsing_method": 0, "pass_fail_logic": 0.0})),
        ("check-logic-neg-zero", with_(COMPLETE, check_logic={"parsing_method": -0.0, "pass_fail_logic": False})),
        ("check-logic-empty-containers", with_(COMPLETE, check_logic={"parsing_method": [], "pass_fail_logic": {}})),
        ("check-logic-null", with_(COMPLETE, check_logic={"parsing_method": None, "pass_fail_logic": None})),
        ("check-logic-truthy-odd", with_(COMPLETE, check_logic={"parsing_method": "0", "pass_fail_logic": [0]})),
        ("check-logic-true-one", with_(COMPLETE, check_logic={"parsing_method": True, "pass_fail_logic": 1})),
        ("everything-wrong", {"readme": "TODO", "type_examples": {"type2": {"yaml": "x"}, "type4": {"behavior": "y"}}, "check_logic": {}}),
    ]


def probe_cases() -> list[tuple[str, dict]]:
    """Inputs the seed answers (it does not raise) where an implementation could part
    from Python's `in`: readme given as a list or an object."""
    return [
        ("readme-list-token-inside", with_(COMPLETE, readme=["# tool", "TODO: usage"])),
        ("readme-list-nested-token", with_(COMPLETE, readme=[["TODO"]])),
        ("readme-dict-token-key", with_(COMPLETE, readme={"TODO": "usage"})),
        ("readme-dict-token-value", with_(COMPLETE, readme={"usage": "TODO"})),
        ("readme-dict-token-key-and-value", with_(COMPLETE, readme={"TBD": "FIXME"})),
    ]


def record(rid: str, result: dict, output: str) -> dict | None:
    ref = seed_reference(result)
    if ref is None:
        return None
    return {"pack": "context-agent", "id": rid, "output": output, "reference": ref}


def main(argv: list[str]) -> int:
    differences_path = None
    if argv[:1] == ["--differences"] and len(argv) == 2:
        differences_path = argv[1]
    elif argv:
        print(__doc__, file=sys.stderr)
        return 2
    rng = random.Random(SEED)
    records = []
    for name, result in fixed_cases():
        rec = record(f"ca-fixed-{name}", result, json.dumps(result, ensure_ascii=False))
        assert rec is not None, name
        records.append(rec)
    for name, result in probe_cases():
        rec = record(f"ca-probe-{name}", result, json.dumps(result, ensure_ascii=False))
        assert rec is not None, name
        records.append(rec)
    i = skipped = 0
    while len(records) < COUNT + len(ENGINE_DIFFERENCES):
        result = make_result(rng)
        output = render_output(rng, result)
        rec = record(f"ca-{i:05d}", result, output)
        i += 1
        if rec is None:
            skipped += 1  # the seed's code raises on this input
            continue
        records.append(rec)
    kept = [r for r in records if r["id"] not in ENGINE_DIFFERENCES]
    known = [r for r in records if r["id"] in ENGINE_DIFFERENCES]
    missing = set(ENGINE_DIFFERENCES) - {r["id"] for r in known}
    assert not missing, f"ENGINE_DIFFERENCES names no record: {sorted(missing)}"
    with open(OUT, "w", encoding="utf-8") as f:
        for r in kept:
            f.write(json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n")
    print(f"wrote {len(kept)} records to {os.path.relpath(OUT, ROOT)} "
          f"({len(known)} known engine differences left out, {skipped} inputs skipped "
          f"because the seed's code raises on them)")
    if differences_path:
        with open(differences_path, "w", encoding="utf-8") as f:
            for r in known:
                r = {**r, "difference": ENGINE_DIFFERENCES[r["id"]]}
                f.write(json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n")
        print(f"wrote {len(known)} known engine differences to {differences_path}")
    return 0


# --------------------------------------------------------------------------------------
# Where the engine differs from the seed (found by running the reference test). Each
# case is generated (so `--differences` can reproduce it) but left out of the file.
# --------------------------------------------------------------------------------------

ENGINE_DIFFERENCES: dict[str, str] = {}


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
