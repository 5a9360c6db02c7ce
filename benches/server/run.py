#!/usr/bin/env python3
"""The server benchmark's driver (run by scripts/bench-server, which builds and
installs what it needs): one run, on the same bodies and the same machine, of

- the floor: a bare hello server on the same stack (hyper on tokio), which reads
  each body and answers a fixed JSON object; and the same with each answer
  made on another thread (`--hop`), as Tribunal's checks are: the ceiling of a
  server that never judges on its connections' threads;
- `tribunal serve rules/` answering `check`s (KSI and ContextAgent, ~4 KB each);
- a FastAPI + uvicorn service running the seeds' Python metrics, one worker per
  core (what a user would build instead);

each loaded by wrk (closed loop, keep-alive) for the most it answers, then the
open-loop latency (benches/loadgen) at a set rate: 5,000 requests/s for
Tribunal, and for both at the same rate FastAPI sustains (half its maximum).
Also a SEMANTIC check with a warm model against `tribunal check`, and, with
--soak SECONDS, a soak at half Tribunal's maximum with a reload halfway.

Prints a table; --json FILE writes the figures.
"""

import argparse
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
RELEASE = os.path.join(ROOT, "target", "release")
# TRIBUNAL_BIN: another build to measure (an A/B against an older commit).
TRIBUNAL = os.environ.get("TRIBUNAL_BIN", os.path.join(RELEASE, "tribunal"))
HELLO = os.path.join(RELEASE, "examples", "hello")
LOADGEN = os.path.join(RELEASE, "loadgen")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_ready(port, process, path="/healthz", timeout=120):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if process.poll() is not None:
            sys.exit(f"bench-server: a server exited at start (code {process.returncode})")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
                s.sendall(f"GET {path} HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n".encode())
                if s.recv(64).startswith(b"HTTP/1.1 200"):
                    return
        except OSError:
            pass
        time.sleep(0.1)
    sys.exit("bench-server: a server did not become ready")


class Server:
    def __init__(self, name, argv, port, env=None, cwd=ROOT):
        self.name, self.port = name, port
        self.log = tempfile.TemporaryFile()
        self.process = subprocess.Popen(argv, cwd=cwd, env=env, stdout=self.log,
                                        stderr=subprocess.STDOUT, start_new_session=True)
        wait_ready(port, self.process)

    def rss_kib(self):
        """Resident memory of the server and its children (uvicorn's workers)."""
        out = subprocess.run(["ps", "-o", "rss=", "--ppid", str(self.process.pid), "-p",
                              str(self.process.pid)], capture_output=True, text=True).stdout
        return sum(int(x) for x in out.split())

    def cpu_seconds(self):
        """User and system CPU time the server process has used so far."""
        with open(f"/proc/{self.process.pid}/stat", encoding="utf-8") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def stop(self):
        os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()


def url(port, pack):
    return f"http://127.0.0.1:{port}/v1/packs/{pack}/check"


def wrk(port, pack, bodies, seconds, connections):
    out = subprocess.run(
        ["wrk", "-t1", f"-c{connections}", f"-d{seconds}s", "--latency",
         "-s", os.path.join(ROOT, "benches", "server", "bodies.lua"), url(port, pack), "--", bodies],
        capture_output=True, text=True, check=True).stdout
    rate = float(re.search(r"Requests/sec:\s*([\d.]+)", out).group(1))
    non2xx = re.search(r"Non-2xx or 3xx responses:\s*(\d+)", out)
    errors = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", out)
    latency = {}
    for q, value, unit in re.findall(r"^\s+(50|90|99)%\s+([\d.]+)(us|ms|s)\s*$", out, re.M):
        scale = {"us": 1, "ms": 1000, "s": 1_000_000}[unit]
        latency[f"p{q}_us"] = float(value) * scale
    return {"rate": rate, "non_2xx": int(non2xx.group(1)) if non2xx else 0,
            "socket_errors": sum(map(int, errors.groups())) if errors else 0, **latency}


def loadgen(port, pack, bodies, rate, seconds, connections=50, warmup=0):
    if warmup:
        loadgen(port, pack, bodies, rate, warmup, connections)
    out = subprocess.run([LOADGEN, "--url", url(port, pack), "--bodies", bodies, "--rate",
                          str(rate), "--seconds", str(seconds), "--connections", str(connections)],
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out)


def at_rate_with_cpu(server, port, pack, bodies, args):
    """Open loop at --rate (after 3 s of warm-up), with the server's CPU per
    request (open loop: each request may wake a sleeping thread, which
    saturation hides)."""
    loadgen(port, pack, bodies, args.rate, 3)
    cpu = server.cpu_seconds()
    run = loadgen(port, pack, bodies, args.rate, args.latency_seconds)
    run["cpu_us_per_request"] = (server.cpu_seconds() - cpu) * 1e6 / max(run["requests"], 1)
    return run


def best(runs, key="rate"):
    return max(runs, key=lambda r: r[key])


def semantic(args, results):
    """A SEMANTIC check with a warm model (p50 over --semantic-requests) against
    `tribunal check` starting a process each time."""
    body_file = os.path.join(args.data, "json-eval-semantic.ndjson")
    records = [json.loads(line) for line in open(body_file, encoding="utf-8")]
    port = free_port()
    server = Server("tribunal", [TRIBUNAL, "serve", "rules/json-eval", "--listen",
                                 f"127.0.0.1:{port}", "--no-cache", "--no-reload"], port)
    try:
        # The model loads on the first SEMANTIC comparison; then each record's
        # texts are new (the generated records differ), so each check embeds.
        loadgen(port, "json-eval", body_file, 5, 1, connections=1)
        warm = loadgen(port, "json-eval", body_file, 20, args.semantic_seconds, connections=1)
    finally:
        server.stop()
    cold = []
    with tempfile.TemporaryDirectory() as tmp:
        for record in records[len(records) - args.semantic_processes:]:
            output, expected = os.path.join(tmp, "out.txt"), os.path.join(tmp, "expected.json")
            with open(output, "w", encoding="utf-8") as f:
                f.write(record["output"])
            with open(expected, "w", encoding="utf-8") as f:
                json.dump(record.get("expected"), f)
            started = time.perf_counter()
            subprocess.run([TRIBUNAL, "check", "rules/json-eval", output, "--expected", expected,
                            "--no-cache", "--json"], cwd=ROOT, capture_output=True)
            cold.append((time.perf_counter() - started) * 1e6)
    cold.sort()
    results["semantic"] = {"serve_p50_us": warm["p50_us"], "serve_p99_us": warm["p99_us"],
                           "check_process_p50_us": cold[len(cold) // 2] if cold else None,
                           "requests": warm["requests"], "non_200": warm["non_200"]}


def soak(args, results, rate):
    """--soak seconds at `rate` on a copy of the KSI pack, changed halfway."""
    with tempfile.TemporaryDirectory() as tmp:
        pack = os.path.join(tmp, "ksi-emission")
        shutil.copytree(os.path.join(ROOT, "rules", "ksi-emission"), pack)
        port = free_port()
        server = Server("tribunal", [TRIBUNAL, "serve", pack, "--listen", f"127.0.0.1:{port}"], port)
        samples = []
        try:
            run = subprocess.Popen([LOADGEN, "--url", url(port, "ksi-emission"), "--bodies",
                                    os.path.join(args.data, "ksi-emission.ndjson"), "--rate",
                                    str(rate), "--seconds", str(args.soak)],
                                   stdout=subprocess.PIPE, text=True)
            started, reloaded = time.time(), False
            while run.poll() is None:
                time.sleep(5)
                samples.append((round(time.time() - started), server.rss_kib()))
                if not reloaded and time.time() - started > args.soak / 2:
                    manifest = os.path.join(pack, "pack.yaml")
                    with open(manifest, encoding="utf-8") as f:
                        text = f.read()
                    with open(manifest, "w", encoding="utf-8") as f:
                        f.write(text.replace("version: 1.0.0", "version: 1.0.1"))
                    reloaded = True
            outcome = json.loads(run.stdout.read())
            version = json.loads(subprocess.run(
                ["curl", "-s", f"http://127.0.0.1:{port}/v1/packs/ksi-emission"],
                capture_output=True, text=True).stdout)["version"]
        finally:
            server.stop()
    settled = [kib for t, kib in samples if t >= 30] or [kib for _, kib in samples]
    results["soak"] = {"seconds": args.soak, "rate": rate, **outcome,
                       "rss_kib_first": settled[0], "rss_kib_last": settled[-1],
                       "rss_kib_max": max(settled), "reloaded_to": version, "samples": samples}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", default=os.path.join(ROOT, "target", "bench", "server"))
    parser.add_argument("--seconds", type=int, default=10, help="each wrk run")
    parser.add_argument("--repeat", type=int, default=2, help="wrk runs per server, best kept")
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--latency-seconds", type=int, default=20)
    parser.add_argument("--rate", type=int, default=5000, help="Tribunal's open-loop rate")
    parser.add_argument("--python", default=os.path.join(ROOT, "target", "bench", "server-venv", "bin", "python"))
    parser.add_argument("--semantic-seconds", type=int, default=10)
    parser.add_argument("--semantic-processes", type=int, default=10,
                        help="`tribunal check` processes timed (0: none)")
    parser.add_argument("--soak", type=int, default=0, help="soak seconds (0: no soak)")
    parser.add_argument("--soak-only", action="store_true", help="only the soak (needs --soak-rate)")
    parser.add_argument("--soak-rate", type=int, help="the soak's rate (default: half the most measured)")
    parser.add_argument("--semantic-only", action="store_true", help="only the SEMANTIC check")
    parser.add_argument("--json")
    args = parser.parse_args()
    cores = os.cpu_count() or 2
    results = {"cores": cores, "bodies": {}}
    packs = ["ksi-emission", "context-agent"]
    bodies = {p: os.path.join(args.data, f"{p}.ndjson") for p in packs}
    for pack, path in bodies.items():
        sizes = [len(line) for line in open(path, "rb")]
        results["bodies"][pack] = {"count": len(sizes), "mean_bytes": sum(sizes) / len(sizes)}

    if args.soak_only or args.semantic_only:
        if args.soak_only:
            soak(args, results, args.soak_rate)
            report_soak(results)
        if args.semantic_only:
            semantic(args, results)
            report_semantic(results)
        if args.json:
            with open(args.json, "w", encoding="utf-8") as out:
                json.dump(results, out, indent=2)
        return

    def closed(name, argv, port, env=None, cwd=ROOT):
        print(f"bench-server: {name}, closed loop", file=sys.stderr)
        server = Server(name, argv, port, env=env, cwd=cwd)
        try:
            return {pack: best([wrk(port, pack, bodies[pack], args.seconds, args.connections)
                                for _ in range(args.repeat)]) for pack in packs}
        finally:
            server.stop()

    port = free_port()
    results["floor"] = closed("hello", [HELLO, f"127.0.0.1:{port}"], port)
    # The bare server with each answer made on another thread, as a check is:
    # the floor of a design that never judges on the connections' threads.
    port = free_port()
    results["floor_hop"] = closed("hello --hop", [HELLO, f"127.0.0.1:{port}", "--hop"], port)
    port = free_port()
    tribunal_argv = [TRIBUNAL, "serve", "rules/", "--listen", f"127.0.0.1:{port}", "--no-reload"]
    results["tribunal"] = closed("tribunal", tribunal_argv, port)
    port = free_port()
    fastapi_argv = [args.python, "-m", "uvicorn", "fastapi_app:app", "--port", str(port),
                    "--workers", str(cores), "--no-access-log", "--log-level", "warning"]
    fastapi_cwd = os.path.join(ROOT, "benches", "server")
    results["fastapi"] = closed("fastapi", fastapi_argv, port, cwd=fastapi_cwd)

    # Open loop: Tribunal at --rate; both at half what FastAPI sustains.
    latency = {"tribunal": {}, "fastapi": {}}
    port = free_port()
    tribunal_argv[4] = f"127.0.0.1:{port}"
    server = Server("tribunal", tribunal_argv, port)
    try:
        for pack in packs:
            at_rate = at_rate_with_cpu(server, port, pack, bodies[pack], args)
            latency["tribunal"][pack] = {
                "at_rate": at_rate,
                "at_fastapi_rate": loadgen(port, pack, bodies[pack],
                                           int(results["fastapi"][pack]["rate"] / 2), args.latency_seconds,
                                           warmup=3),
            }
    finally:
        server.stop()
    # The bare server at the same rate, alone and with the hop: the CPU a
    # request costs the stack alone, and with a thread woken for its answer.
    for floor, hop in [("floor", []), ("floor_hop", ["--hop"])]:
        port = free_port()
        server = Server("hello", [HELLO, f"127.0.0.1:{port}", *hop], port)
        try:
            latency[floor] = {pack: {"at_rate": at_rate_with_cpu(server, port, pack, bodies[pack], args)}
                              for pack in packs}
        finally:
            server.stop()
    port = free_port()
    fastapi_argv[5] = str(port)
    server = Server("fastapi", fastapi_argv, port, cwd=fastapi_cwd)
    try:
        for pack in packs:
            latency["fastapi"][pack] = {
                "at_fastapi_rate": loadgen(port, pack, bodies[pack],
                                           int(results["fastapi"][pack]["rate"] / 2), args.latency_seconds,
                                           warmup=3)}
    finally:
        server.stop()
    results["latency"] = latency
    if args.semantic_seconds > 0:
        semantic(args, results)
    if args.soak > 0:
        soak(args, results, args.soak_rate or int(results["tribunal"]["ksi-emission"]["rate"] / 2))
    report(results, args)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as out:
            json.dump(results, out, indent=2)


def report(results, args):
    print(f"server benchmark: {results['cores']} cores, wrk -t1 -c{args.connections}, "
          f"best of {args.repeat} x {args.seconds}s; open loop {args.latency_seconds}s, 50 connections")
    for pack in ["ksi-emission", "context-agent"]:
        floor, hop, ours, theirs = (results[k][pack] for k in ("floor", "floor_hop", "tribunal", "fastapi"))
        size = results["bodies"][pack]["mean_bytes"]
        print(f"\n{pack} ({size:.0f}-byte bodies)")
        print(f"  {'':28} {'checks/s':>10} {'p50 µs':>9} {'p99 µs':>9}  non-2xx")
        for name, run in [("floor (hello, same stack)", floor), ("floor with the hop (--hop)", hop),
                          ("tribunal serve", ours), ("FastAPI + uvicorn", theirs)]:
            print(f"  {name:28} {run['rate']:>10.0f} {run.get('p50_us', 0):>9.0f} "
                  f"{run.get('p99_us', 0):>9.0f}  {run['non_2xx'] + run['socket_errors']}")
        print(f"  tribunal / floor: {ours['rate'] / floor['rate']:.0%}   "
              f"tribunal / FastAPI: {ours['rate'] / theirs['rate']:.1f}x")
        lat = results["latency"]
        at = lat["tribunal"][pack]["at_rate"]
        print(f"  open loop, tribunal at {args.rate}/s: achieved {at['rate']:.0f}/s, "
              f"p50 {at['p50_us']} µs, p99 {at['p99_us']} µs, p99.9 {at['p999_us']} µs, "
              f"non-200 {at['non_200']}, errors {at['errors']}, "
              f"server CPU {at['cpu_us_per_request']:.0f} µs a request")
        ours_same = lat["tribunal"][pack]["at_fastapi_rate"]
        theirs_same = lat["fastapi"][pack]["at_fastapi_rate"]
        print(f"  open loop, both at {theirs_same['rate']:.0f}/s (half FastAPI's most): "
              f"p99 tribunal {ours_same['p99_us']} µs, FastAPI {theirs_same['p99_us']} µs")
    report_targets(results, args)
    report_semantic(results)
    report_soak(results)


# The targets of the performance plan (issue 63): Tribunal's closed-loop rate at
# least this share of the bare server's, for both packs; and its CPU per request
# at 5,000 checks/s open loop at most half of the plan's figure (about 60 µs).
FLOOR_SHARE_TARGET = 0.80
CPU_TARGET_US = 30


def report_targets(results, args):
    print("\ntargets:")
    for pack in ["ksi-emission", "context-agent"]:
        share = results["tribunal"][pack]["rate"] / results["floor"][pack]["rate"]
        met = "met" if share >= FLOOR_SHARE_TARGET else "not met"
        line = f"- {pack}: tribunal / floor {share:.0%} (target ≥ {FLOOR_SHARE_TARGET:.0%}: {met})"
        hop = results["floor_hop"][pack]["rate"] / results["floor"][pack]["rate"]
        line += f" (ceiling: the floor with the hop, {hop:.0%})"
        cpu = results["latency"]["tribunal"][pack]["at_rate"]["cpu_us_per_request"]
        bare = results["latency"]["floor"][pack]["at_rate"]["cpu_us_per_request"]
        bare_hop = results["latency"]["floor_hop"][pack]["at_rate"]["cpu_us_per_request"]
        if args.rate == 5000:
            met = "met" if cpu <= CPU_TARGET_US else "not met"
            line += (f"; CPU at 5,000/s {cpu:.0f} µs a request (target ≤ {CPU_TARGET_US} µs: {met}; "
                     f"the bare server {bare:.0f} µs, with the hop {bare_hop:.0f} µs)")
        print(line)


def report_semantic(results):
    if "semantic" in results:
        s = results["semantic"]
        cold = s["check_process_p50_us"]
        cold = "not timed" if cold is None else f"p50 {cold / 1000:.0f} ms"
        print(f"\nSEMANTIC (json-eval, warm model): serve p50 {s['serve_p50_us'] / 1000:.1f} ms, "
              f"p99 {s['serve_p99_us'] / 1000:.1f} ms; `tribunal check` (a process each) {cold}")


def report_soak(results):
    if "soak" in results:
        s = results["soak"]
        print(f"\nsoak: {s['seconds']} s at {s['rate']}/s: {s['requests']} requests, "
              f"non-200 {s['non_200']}, errors {s['errors']}, p99 {s['p99_us']} µs; "
              f"RSS {s['rss_kib_first'] / 1024:.1f} -> {s['rss_kib_last'] / 1024:.1f} MiB "
              f"(max {s['rss_kib_max'] / 1024:.1f}); reloaded to {s['reloaded_to']}")


if __name__ == "__main__":
    main()
