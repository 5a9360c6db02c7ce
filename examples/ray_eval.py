#!/usr/bin/env python3
"""Score a JSONL data set with a Tribunal pack on Ray, and write the results.

    python examples/ray_eval.py rules/ksi-emission examples/data/ksi-emission.jsonl results.jsonl

Starts a local Ray instance with --workers scorers (2 by default) unless
RAY_ADDRESS names a cluster to join, reads the input one line per record
(`ray.data.read_text`, so records whose fields differ in type are fine), scores
the lines on --workers workers with `tribunal_engine.ray.Scorer` (each loads the pack
once), and writes one result record per input line, in input order: the
`tribunal eval` result records, without their `line` (a line's place in the
output is its line number). Exit status 1 when any record is not PASS.

On a cluster, the pack, the input and the output path must be where every node
can read them (a shared file system, or `--runtime-env-dir` to ship the working
folder with the job), and the workers need `pip install ./python` (or the wheel).
"""

import argparse
import json
import os
import sys

import ray

import tribunal_engine.ray


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("pack", help="the rule pack (a folder with pack.yaml)")
    parser.add_argument("input", help="JSONL records: id, output, expected, meta")
    parser.add_argument("output", help="where to write the result records (JSONL)")
    parser.add_argument("--workers", type=int, default=2, help="scorers to run (default 2)")
    parser.add_argument(
        "--set", action="append", default=[], metavar="COMPONENT.KEY=JSON",
        help="override a component's config (the value is JSON), like eval --set",
    )
    parser.add_argument("--batch-size", type=int, default=1024, help="records per batch")
    parser.add_argument(
        "--runtime-env-dir", help="ship this folder to the workers (Ray's working_dir)"
    )
    args = parser.parse_args()

    overrides = {}
    for spec in args.set:
        key, _, value = spec.partition("=")
        try:
            overrides[key] = json.loads(value)
        except ValueError:
            overrides[key] = value

    runtime_env = {"working_dir": args.runtime_env_dir} if args.runtime_env_dir else None
    if os.environ.get("RAY_ADDRESS"):
        ray.init(runtime_env=runtime_env)
    else:
        # One CPU per scorer, and one for the tasks that read the input (with
        # only the scorers' CPUs, the read could never be scheduled).
        ray.init(num_cpus=args.workers + 1, runtime_env=runtime_env, include_dashboard=False)
    # Results in input order.
    ray.data.DataContext.get_current().execution_options.preserve_order = True

    pack_path = os.path.abspath(args.pack) if not args.runtime_env_dir else args.pack
    scored = ray.data.read_text(os.path.abspath(args.input)).map_batches(
        tribunal_engine.ray.Scorer,
        fn_constructor_args=(pack_path,),
        fn_constructor_kwargs={"overrides": overrides, "json_column": "text"},
        batch_size=args.batch_size,
        concurrency=args.workers,
    )
    counts: dict = {}
    with open(args.output, "w", encoding="utf-8") as out:
        for batch in scored.iter_batches(batch_size=args.batch_size):
            for line, status in zip(batch["result"], batch["status"]):
                out.write(line + "\n")
                counts[status] = counts.get(status, 0) + 1
    total = sum(counts.values())
    summary = ", ".join(f"{counts[s]} {s}" for s in sorted(counts))
    print(f"{total} records: {summary} -> {args.output}", file=sys.stderr)
    return 0 if counts.get("PASS", 0) == total else 1


if __name__ == "__main__":
    sys.exit(main())
