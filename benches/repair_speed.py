#!/usr/bin/env python3
"""The repair tier's speed against json_repair (PyPI) and jsonrepair (npm) on the
same inputs: every input `tests/repair_corpus/generate.py` writes (LLM-style
damaged JSON of every category), each repairer run over all of them in one
process, best of R runs, with ratios.

    python3 benches/repair_speed.py [--rounds R]

The repairers are the ones `tests/repair_corpus/consensus.py` installs under
target/repair-corpus/ (run it once first; it needs PyPI and npm). Each side
returns a parsed value, as a caller uses it: json_repair with
`return_objects=True`, jsonrepair's text through `JSON.parse`, Tribunal's
repair tier alone (`cargo bench --bench repair_speed`, release build).
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGET = os.environ.get("CARGO_TARGET_DIR") or os.path.join(ROOT, "target")
WORK = os.path.join(TARGET, "repair-corpus")
VENV_PY = os.path.join(WORK, "venv", "bin", "python")
NPM = os.path.join(WORK, "npm")

PY_TIMER = r"""
import json, sys, time
from json_repair import repair_json
inputs = [json.loads(line)["input"] for line in open(sys.argv[1], encoding="utf-8") if line.strip()]
best = None
for _ in range(int(sys.argv[2])):
    start = time.perf_counter()
    for text in inputs:
        try:
            repair_json(text, return_objects=True, skip_json_loads=True)
        except Exception:
            pass
    elapsed = time.perf_counter() - start
    best = elapsed if best is None else min(best, elapsed)
print(best / len(inputs) * 1e6)
"""

JS_TIMER = r"""
const fs = require('fs');
const { jsonrepair } = require(process.argv[1]);
const inputs = fs.readFileSync(process.argv[2], 'utf8').split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l).input);
let best = Infinity;
for (let r = 0; r < Number(process.argv[3]); r++) {
  const start = process.hrtime.bigint();
  for (const text of inputs) {
    try { JSON.parse(jsonrepair(text)); } catch {}
  }
  best = Math.min(best, Number(process.hrtime.bigint() - start) / 1e3);
}
console.log(best / inputs.length);
"""


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    if not os.path.exists(VENV_PY) or not os.path.isdir(os.path.join(NPM, "node_modules", "jsonrepair")):
        sys.exit("benches/repair_speed.py: run `python3 tests/repair_corpus/consensus.py` first (it installs the repairers)")
    with tempfile.TemporaryDirectory() as folder:
        inputs = os.path.join(folder, "inputs.jsonl")
        with open(inputs, "w", encoding="utf-8") as out:
            subprocess.run([sys.executable, os.path.join(ROOT, "tests/repair_corpus/generate.py")],
                           stdout=out, stderr=subprocess.DEVNULL, check=True)
        rounds = str(args.rounds)
        tribunal = subprocess.run(
            ["cargo", "bench", "-q", "--bench", "repair_speed", "--", inputs, rounds],
            cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()
        ours = float(tribunal.split()[-4])
        py = float(subprocess.run([VENV_PY, "-c", PY_TIMER, inputs, rounds],
                                  capture_output=True, text=True, check=True).stdout)
        js = float(subprocess.run(["node", "-e", JS_TIMER, os.path.join(NPM, "node_modules", "jsonrepair"),
                                   inputs, rounds], capture_output=True, text=True, check=True).stdout)
    print(tribunal)
    print(f"{'':34} {'us/input':>9} {'Tribunal is':>12}")
    print(f"{'Tribunal repair tier':34} {ours:9.2f}")
    print(f"{'json_repair (Python)':34} {py:9.2f} {py / ours:10.1f}x faster")
    print(f"{'jsonrepair (Node.js) + JSON.parse':34} {js:9.2f} {js / ours:10.1f}x faster")


if __name__ == "__main__":
    main()
