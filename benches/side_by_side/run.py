#!/usr/bin/env python3
"""The side-by-side benchmark (run it with `scripts/bench`, which builds the
programs first): the same generated data through `tribunal eval` with one and
two jobs, the Python a user would write instead (this folder), and a Rust
program that only parses and writes each line (the I/O floor), in one run.
Prints one table of times and ratios, checks that Tribunal and the Python agree
on every record's score or status, and exits 1 if they do not.
"""

import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

# The json-eval pack with the strategies a run without the embedding model uses:
# the seed's SEMANTIC fields scored FUZZY (the Python does the same).
JSON_EVAL_SETS = [
    "--set", "json_compare.field_strategies={customer_name: FUZZY, address_line_1: FUZZY, "
             "phone_number: EXACT, internal_notes: IGNORE, description: FUZZY}",
    "--set", "json_compare.text_strategy=fuzzy",
]

WORKS = [
    # name, data file, pack, extra eval args, python scorer, what to compare
    ("ksi-emission", "ksi-emission.jsonl", "rules/ksi-emission", [], "ksi_emission.py", "score"),
    ("json-eval (EXACT/FUZZY)", "json-eval.jsonl", "rules/json-eval", JSON_EVAL_SETS,
     "json_eval.py", "score"),
    ("context-agent", "context-agent.jsonl", "rules/context-agent", [], "context_agent.py",
     "status"),
]


# The targets of the performance plan (issue 63), printed beside the figures:
# Python ÷ jobs 1 at least this much, per work; and KSI emission with two jobs
# within this much of the one-thread I/O floor.
SPEED_TARGETS = {"ksi-emission": 10.0, "json-eval (EXACT/FUZZY)": 6.0, "context-agent": 6.0}
FLOOR_TARGET = ("ksi-emission", 1.1)

GNU_TIME = "/usr/bin/time"


def timed(argv, source, output, repeat, scratch, fresh=True):
    """Best wall time of `repeat` runs, with that run's CPU time and peak RSS.

    Each run writes `output` afresh: the previous run's file is deleted before
    the clock starts, for every program alike. Replacing a file frees the old
    one's blocks and pages, about 20 ms for 100 MB on the development VM, and
    that is the leftover of the previous repeat, not the work measured.
    `fresh=False` keeps the file, for the line under the table that says what
    replacing costs. Before the clock starts the system's writeback of what
    earlier runs wrote is finished (`os.sync`), so that no run pays for
    another's: the system writes a new file's pages back some seconds after the
    program that wrote them has ended, and on two cores that work otherwise
    lands in whichever run comes then. And the input `source` is read once, so
    that every program reads it from memory: the development VMs drop part of
    the page cache now and then (a quarter of a data set was found evicted with
    18 GB free), and a run that reads from disk measures the disk.

    The peak RSS comes from GNU time, when it is there: a child's own
    `ru_maxrss` would count the pages of this (larger) process it was forked from.
    """
    best = None
    rss_file = os.path.join(scratch, "rss.txt")
    measure = [GNU_TIME, "-f", "%M", "-o", rss_file] if os.access(GNU_TIME, os.X_OK) else []
    for _ in range(repeat):
        if fresh and os.path.exists(output):
            os.remove(output)
        with open(source, "rb") as data:
            while data.read(1 << 20):
                pass
        os.sync()
        start = time.perf_counter()
        process = subprocess.Popen([*measure, *argv], stdout=subprocess.DEVNULL,
                                   stderr=subprocess.PIPE)
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - start
        stderr = process.stderr.read().decode(errors="replace")
        process.stderr.close()
        code = os.waitstatus_to_exitcode(status)
        if code not in (0, 1):  # 1: `eval` found records that did not pass
            sys.exit(f"bench: {' '.join(argv)} exited with {code}:\n{stderr}")
        rss_mb = None
        if measure:
            with open(rss_file, encoding="utf-8") as text:
                rss_mb = int(text.read().split()[-1]) / 1024
        run = {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "rss_mb": rss_mb}
        if best is None or run["wall"] < best["wall"]:
            best = run
    return best


def read_results(path, field):
    values = {}
    with open(path, encoding="utf-8") as lines:
        for line in lines:
            record = json.loads(line)
            values[record["id"]] = record.get(field)
    return values


def agreement(tribunal_path, python_path, field):
    ours = read_results(tribunal_path, field)
    theirs = read_results(python_path, field)
    same = 0
    first_difference = None
    for key, value in theirs.items():
        mine = ours.get(key)
        equal = (abs(mine - value) < 1e-9 if field == "score" and mine is not None
                 and value is not None else mine == value)
        if equal:
            same += 1
        elif first_difference is None:
            first_difference = (key, mine, value)
    return same, len(theirs), first_difference


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tribunal", required=True, help="the release binary")
    parser.add_argument("--floor", required=True, help="the io-floor binary")
    parser.add_argument("--python", default=sys.executable, help="the Python to run the scorers")
    parser.add_argument("--data", required=True, help="folder of the generated data")
    parser.add_argument("--out", required=True, help="folder for the outputs")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each; the best counts")
    parser.add_argument("--only", help="run only the works whose name contains this")
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    fuzzy = subprocess.run([args.python, "-c", "import json_eval; print(json_eval.FUZZY_IMPL)"],
                           cwd=HERE, capture_output=True, text=True, check=True).stdout.strip()

    empty_pack = os.path.join(args.out, "no-rules")
    os.makedirs(empty_pack, exist_ok=True)
    with open(os.path.join(empty_pack, "pack.yaml"), "w", encoding="utf-8") as manifest:
        manifest.write("name: no-rules\nversion: 1.0.0\n")
    rows = []
    mismatched = False
    for name, data, pack, extra, scorer, field in WORKS:
        if args.only and args.only not in name:
            continue
        source = os.path.join(args.data, data)
        records = sum(1 for line in open(source, encoding="utf-8") if line.strip())
        megabytes = os.path.getsize(source) / 1e6
        out = os.path.join(args.out, data.replace(".jsonl", ""))
        figures = {}
        def tribunal(jobs):
            output = f"{out}.tribunal-{jobs}.jsonl"
            return ([args.tribunal, "eval", os.path.join(ROOT, pack), "--input", source,
                     "--output", output, "--jobs", str(jobs), *extra], source, output)

        for jobs in (1, 2):
            figures[f"jobs{jobs}"] = timed(*tribunal(jobs), args.repeat, args.out)
        # The ceiling: the same records through a pack with no rules (each is
        # still read, its JSON found and written back in a full result record).
        for jobs, key in ((1, "no_rules"), (2, "no_rules_jobs2")):
            output = f"{out}.no-rules-{jobs}.jsonl"
            figures[key] = timed([args.tribunal, "eval", empty_pack, "--input", source,
                                  "--output", output, "--jobs", str(jobs)], source, output,
                                 args.repeat, args.out)
        # `--jobs 1` again, each run replacing the output the one before wrote.
        figures["jobs1_replacing"] = timed(*tribunal(1), args.repeat, args.out, fresh=False)
        output = f"{out}.python.jsonl"
        figures["python"] = timed([args.python, os.path.join(HERE, scorer), source, output],
                                  source, output, args.repeat, args.out)
        output = f"{out}.floor.jsonl"
        figures["floor"] = timed([args.floor, source, output], source, output, args.repeat,
                                 args.out)
        with open(f"{out}.tribunal-1.jsonl", "rb") as one, open(f"{out}.tribunal-2.jsonl", "rb") as two:
            identical = one.read() == two.read()
        same, total, first = agreement(f"{out}.tribunal-1.jsonl", f"{out}.python.jsonl", field)
        mismatched |= same != total or not identical
        rows.append({"name": name, "records": records, "megabytes": megabytes,
                     "figures": figures, "agree": (same, total), "first_difference": first,
                     "jobs_identical": identical,
                     "result_bytes": os.path.getsize(f"{out}.tribunal-1.jsonl") / records})

    def rss(run):
        return "n/a" if run["rss_mb"] is None else f"{run['rss_mb']:.0f}"

    def us(row, key):
        return row["figures"][key]["wall"] / row["records"] * 1e6

    print(f"FUZZY in the Python: {fuzzy}; best of {args.repeat} runs; times in µs per record\n")
    print("| work | records (MB) | Tribunal --jobs 1 | --jobs 2 | Python | I/O floor "
          "| Python ÷ jobs 1 | jobs 1 ÷ jobs 2 | jobs 2 ÷ floor | peak RSS j1/j2/py (MB) "
          "| result B/rec | agree |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for row in rows:
        f = row["figures"]
        print(f"| {row['name']} | {row['records']:,} ({row['megabytes']:.0f}) "
              f"| {us(row, 'jobs1'):.2f} | {us(row, 'jobs2'):.2f} | {us(row, 'python'):.2f} "
              f"| {us(row, 'floor'):.2f} "
              f"| {f['python']['wall'] / f['jobs1']['wall']:.2f}× "
              f"| {f['jobs1']['wall'] / f['jobs2']['wall']:.2f}× "
              f"| {f['jobs2']['wall'] / f['floor']['wall']:.2f}× "
              f"| {'/'.join(rss(f[key]) for key in ('jobs1', 'jobs2', 'python'))} "
              f"| {row['result_bytes']:.0f} "
              f"| {row['agree'][0]}/{row['agree'][1]}{'' if row['jobs_identical'] else ' (jobs 1 ≠ jobs 2!)'} |")
    print("\nEach run writes its output afresh. Replacing the previous run's output instead "
          "(a rerun into the same file; the old file's blocks are freed when it is replaced):")
    for row in rows:
        replacing, fresh = us(row, "jobs1_replacing"), us(row, "jobs1")
        print(f"- {row['name']}: Tribunal --jobs 1 {replacing:.2f} µs/record "
              f"({(replacing / fresh - 1) * 100:+.0f}%), "
              f"Python ÷ jobs 1 {row['figures']['python']['wall'] / row['figures']['jobs1_replacing']['wall']:.2f}×")
    print("\nTargets:")
    for row in rows:
        print("- " + targets_line(row))
    for row in rows:
        if row["first_difference"]:
            key, mine, theirs = row["first_difference"]
            print(f"\n{row['name']}: first disagreement at id {key}: Tribunal {mine!r}, Python {theirs!r}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as out:
            json.dump({"fuzzy": fuzzy, "repeat": args.repeat, "rows": rows}, out, indent=2)
    return 1 if mismatched else 0


def targets_line(row):
    """What the row's figures say against the targets: each ratio, its target,
    and whether it is met."""
    f = row["figures"]
    said = []
    speed = f["python"]["wall"] / f["jobs1"]["wall"]
    target = SPEED_TARGETS.get(row["name"])
    if target is not None:
        ceiling = f["python"]["wall"] / f["no_rules"]["wall"]
        said.append(f"Python ÷ jobs 1 {speed:.2f}× (target ≥ {target:g}×: "
                    f"{'met' if speed >= target else 'not met'}; a pack with no rules, "
                    f"the engine's fixed costs alone: {ceiling:.2f}×)")
    if row["name"] == FLOOR_TARGET[0]:
        floor = f["jobs2"]["wall"] / f["floor"]["wall"]
        ceiling = f["no_rules_jobs2"]["wall"] / f["floor"]["wall"]
        said.append(f"jobs 2 ÷ floor {floor:.2f}× (target ≤ {FLOOR_TARGET[1]:g}×: "
                    f"{'met' if floor <= FLOOR_TARGET[1] else 'not met'}; a pack with no "
                    f"rules on two jobs: {ceiling:.2f}× the floor)")
    return f"{row['name']}: " + ("; ".join(said) or "no target")


if __name__ == "__main__":
    sys.exit(main())
