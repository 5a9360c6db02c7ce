#!/usr/bin/env bash
# Two builds of `tribunal` side by side on the side-by-side benchmark's data:
# runs alternate (old, new, old, new, ...) so that the machine's drift hits both,
# each writes a new output file, and the best of N is compared per data set.
#
#   benches/ab.sh OLD_BINARY NEW_BINARY [--jobs J] [--runs N] [--callgrind RECORDS]
#
# The data is scripts/bench's (run it once first): target/bench/data/ksi200000-
# je100000-ca100000-seed12/. On a noisy 2-core VM wall times move by ±10% from run
# to run; `--callgrind 20000` also counts the instructions each build executes on
# the first 20,000 records of ksi-emission and context-agent (valgrind; steadier
# than time; json-eval's fuzzy matching runs for many minutes under valgrind).
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 2 ] || { sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
old="$1" new="$2"; shift 2
jobs=1 runs=5 callgrind=0
while [ $# -gt 0 ]; do
    case "$1" in
        --jobs) jobs="$2"; shift 2 ;;
        --runs) runs="$2"; shift 2 ;;
        --callgrind) callgrind="$2"; shift 2 ;;
        *) echo "benches/ab.sh: unknown argument $1" >&2; exit 2 ;;
    esac
done
data="${CARGO_TARGET_DIR:-target}/bench/data/ksi200000-je100000-ca100000-seed12"
[ -f "$data/done" ] || { echo "benches/ab.sh: no data in $data: run scripts/bench once" >&2; exit 2; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
now() { date +%s%N; }
for set in ksi-emission json-eval context-agent; do
    best_old="" best_new=""
    for _ in $(seq "$runs"); do
        for which in old new; do
            bin=$old; [ $which = new ] && bin=$new
            rm -f "$out/r.jsonl"
            start=$(now)
            "$bin" eval "rules/$set" --input "$data/$set.jsonl" --jobs "$jobs" --output "$out/r.jsonl" 2>/dev/null
            ms=$(( ($(now) - start) / 1000000 ))
            if [ $which = old ]; then
                if [ -z "$best_old" ] || [ "$ms" -lt "$best_old" ]; then best_old=$ms; fi
            elif [ -z "$best_new" ] || [ "$ms" -lt "$best_new" ]; then best_new=$ms; fi
        done
    done
    ratio=$(awk -v a="$best_new" -v b="$best_old" 'BEGIN { printf "%.3f", a / b }')
    line="$set --jobs $jobs: old $best_old ms, new $best_new ms, new/old $ratio (best of $runs)"
    if [ "$callgrind" -gt 0 ] && [ "$set" != json-eval ]; then
        head -n "$callgrind" "$data/$set.jsonl" > "$out/in.jsonl"
        count() {
            valgrind --tool=callgrind --callgrind-out-file=/dev/null "$1" eval "rules/$set" \
                --input "$out/in.jsonl" --jobs 1 --output "$out/r.jsonl" 2>&1 |
                sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
        }
        a=$(count "$old") b=$(count "$new")
        line="$line; instructions on $callgrind records: new/old $(awk -v a="$b" -v b="$a" 'BEGIN { printf "%.4f", a / b }')"
    fi
    echo "$line"
done
