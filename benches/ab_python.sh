#!/usr/bin/env bash
# Two builds of the Python package side by side, in instructions: each way of
# calling it (benches/python_calls.py: a loop of `pack.evaluate`, one
# `evaluate_many` call with jobs=1, and a loop of calls with a pack that has no
# rules) is run under valgrind's callgrind for each build, on the first N KSI
# emission records of scripts/bench's data, and the instructions per record are
# printed with their ratio, new/old. The cost of reading the records and loading
# the packs (the mode `setup`) is taken off each count.
#
#   benches/ab_python.sh OLD_PYTHON NEW_PYTHON [--records N]
#
# OLD_PYTHON and NEW_PYTHON are interpreters with a build of the package each
# (say, a virtual environment with a wheel of the previous main, and
# target/python-venv/bin/python). Wall times of the bindings move by ±15%
# between runs on a 2-core VM; the counts do not. Default N: 20,000.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 2 ] || { sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
old="$1" new="$2"; shift 2
records=20000
while [ $# -gt 0 ]; do
    case "$1" in
        --records) records="$2"; shift 2 ;;
        *) echo "benches/ab_python.sh: unknown argument $1" >&2; exit 2 ;;
    esac
done
data="${CARGO_TARGET_DIR:-target}/bench/data/ksi200000-je100000-ca100000-seed12/ksi-emission.jsonl"
[ -f "$data" ] || { echo "benches/ab_python.sh: no data at $data: run scripts/bench once" >&2; exit 2; }
command -v valgrind > /dev/null || { echo "benches/ab_python.sh: valgrind is not installed" >&2; exit 2; }
count() {
    local counted
    counted=$(valgrind --tool=callgrind --callgrind-out-file=/dev/null "$1" benches/python_calls.py \
        "$2" "$data" --records "$records" 2>&1 | sed -n 's/.*Collected : \([0-9]*\).*/\1/p')
    [ -n "$counted" ] || { echo "benches/ab_python.sh: $1 benches/python_calls.py $2 failed" >&2; exit 1; }
    echo "$counted"
}
setup_old=$(count "$old" setup) setup_new=$(count "$new" setup)
printf '%-14s %14s %14s %9s\n' "instructions" "old/record" "new/record" "new/old"
for mode in evaluate evaluate_many empty; do
    a=$(count "$old" "$mode") b=$(count "$new" "$mode")
    awk -v mode="$mode" -v a="$a" -v b="$b" -v sa="$setup_old" -v sb="$setup_new" -v n="$records" 'BEGIN {
        o = (a - sa) / n; w = (b - sb) / n
        printf "%-14s %14.0f %14.0f %9.4f\n", mode, o, w, w / o
    }'
done
