#!/usr/bin/env python3
"""Builds the committed repair corpus: the generated inputs on which two widely used
JSON repairers agree, with their common answer.

The repairers are json_repair (PyPI) and jsonrepair (npm). This script installs them
under the target folder (a venv and an npm folder; neither is committed), runs both on
every input of `generate.py`, and keeps the cases where both return the same object or
array (compared as parsed values: numbers by value, so `1.0` equals `1`; a boolean is
never a number). It writes `tests/repair_corpus/corpus.jsonl`, one line per case:
`{"category", "input", "expected"}`. Only their answers are kept, none of their code.

Run from the repository root (network access to PyPI and npm the first time):
  python3 tests/repair_corpus/consensus.py
The Rust test `tests/repair_corpus.rs` reads the committed file; it needs neither.
"""

import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TARGET = os.environ.get("CARGO_TARGET_DIR") or os.path.join(ROOT, "target")
WORK = os.path.join(TARGET, "repair-corpus")
VENV = os.path.join(WORK, "venv")
NPM = os.path.join(WORK, "npm")
OUT = os.path.join(ROOT, "tests", "repair_corpus", "corpus.jsonl")

PY_RUNNER = r"""
import json, sys
from json_repair import repair_json
for line in open(sys.argv[1], encoding="utf-8"):
    text = json.loads(line)
    try:
        print(json.dumps({"ok": repair_json(text, return_objects=True, skip_json_loads=True)}))
    except Exception as error:  # a refusal is an answer too
        print(json.dumps({"error": type(error).__name__}))
"""

JS_RUNNER = r"""
const { jsonrepair } = require(process.argv[2]);
const fs = require("fs");
for (const line of fs.readFileSync(process.argv[3], "utf8").split("\n")) {
  if (!line) continue;
  const text = JSON.parse(line);
  try { console.log(JSON.stringify({ ok: JSON.parse(jsonrepair(text)) })); }
  catch (error) { console.log(JSON.stringify({ error: String(error.name) })); }
}
"""


def install():
    python = os.path.join(VENV, "bin", "python")
    if not os.path.exists(python):
        subprocess.run([sys.executable, "-m", "venv", VENV], check=True)
    subprocess.run([python, "-m", "pip", "install", "-q", "json_repair"], check=True)
    os.makedirs(NPM, exist_ok=True)
    if not os.path.exists(os.path.join(NPM, "node_modules", "jsonrepair")):
        subprocess.run(["npm", "install", "--silent", "--prefix", NPM, "jsonrepair"], check=True)
    return python


def same(a, b):
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def main():
    python = install()
    generated = subprocess.run([sys.executable, os.path.join(ROOT, "tests", "repair_corpus", "generate.py")],
                               check=True, capture_output=True, text=True).stdout
    # Lines end at `\n` only: `splitlines` would also split at a U+2028 inside a case.
    cases = [json.loads(line) for line in generated.split("\n") if line]
    with tempfile.TemporaryDirectory() as tmp:
        inputs = os.path.join(tmp, "inputs.jsonl")
        with open(inputs, "w", encoding="utf-8") as f:
            for case in cases:
                f.write(json.dumps(case["input"]) + "\n")
        py_runner = os.path.join(tmp, "runner.py")
        with open(py_runner, "w") as f:
            f.write(PY_RUNNER)
        js_runner = os.path.join(tmp, "runner.js")
        with open(js_runner, "w") as f:
            f.write(JS_RUNNER)
        py = subprocess.run([python, py_runner, inputs], check=True, capture_output=True, text=True).stdout
        js = subprocess.run(["node", js_runner, os.path.join(NPM, "node_modules", "jsonrepair"), inputs],
                            check=True, capture_output=True, text=True).stdout
    py, js = py.split("\n")[:-1], js.split("\n")[:-1]
    assert len(py) == len(js) == len(cases), (len(py), len(js), len(cases))
    kept, per = [], {}
    for case, a, b in zip(cases, py, js):
        a, b = json.loads(a), json.loads(b)
        total, agreed = per.get(case["category"], (0, 0))
        agree = "ok" in a and "ok" in b and isinstance(a["ok"], (dict, list)) and same(a["ok"], b["ok"])
        per[case["category"]] = (total + 1, agreed + agree)
        if agree:
            kept.append({"category": case["category"], "input": case["input"], "expected": a["ok"]})
    with open(OUT, "w", encoding="utf-8") as f:
        for case in kept:
            f.write(json.dumps(case, ensure_ascii=False) + "\n")
    for category, (total, agreed) in per.items():
        print(f"{category:24} {agreed:4} of {total:4} inputs where both agree", file=sys.stderr)
    print(f"wrote {len(kept)} cases to {os.path.relpath(OUT, ROOT)}", file=sys.stderr)


if __name__ == "__main__":
    main()
