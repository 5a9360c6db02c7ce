#!/usr/bin/env bash
# How a pack's per-turn steps scale with a transcript's length: one transcript
# of N messages (a user question, an assistant question, a user "yes", an
# assistant reply giving a booking reference, over and over), judged by
# examples/packs/travel-agent (claims_confirmed runs on each assistant turn),
# for N = 1,000, 10,000 and 100,000. Linear time shows as ~10x per row.
#
#   benches/transcript_turns.sh [TRIBUNAL_BINARY]
set -euo pipefail
cd "$(dirname "$0")/.."
bin="${1:-target/release/tribunal}"
[ -x "$bin" ] || { echo "benches/transcript_turns.sh: no $bin (cargo build --release)" >&2; exit 2; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for n in 1000 10000 100000; do
    python3 - "$n" > "$out/in.jsonl" <<'PY'
import json, sys
n = int(sys.argv[1])
messages = [{"role": "system", "content": "You book flights."}]
i = 0
while len(messages) < n:
    i += 1
    messages += [
        {"role": "user", "content": f"Find me flight {i}?"},
        {"role": "assistant", "content": f"Shall I book flight {i}?"},
        {"role": "user", "content": "yes"},
        {"role": "assistant", "content": f"Your reference is QX7P2K now ({i})"},
    ]
print(json.dumps({"id": f"n{n}", "messages": messages[:n]}))
PY
    start=$(date +%s%N)
    "$bin" eval examples/packs/travel-agent --input "$out/in.jsonl" --output "$out/r.jsonl" \
        --max-record-bytes 16000000 --set limits.max_operations=0 2>/dev/null || true
    ms=$(( ($(date +%s%N) - start) / 1000000 ))
    status=$(python3 -c 'import json,sys; r=json.loads(open(sys.argv[1]).readline()); print(r["status"], r.get("error") or "")' "$out/r.jsonl")
    echo "$n messages: $ms ms ($status)"
done
