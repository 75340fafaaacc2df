#!/bin/bash
# make bench-gradbench: wengert beside GradBench's manual, adol-c, codipack
# and pytorch on the same inputs in one run (docs/bench.md, "GradBench").
#
# GB_HOME holds a GradBench build made outside this repository (docs/bench.md
# says how): $GB_HOME/gradbench with tools/<tool>/bin/<eval> built and its
# Rust CLI in $GB_HOME/gb-cli/target/release/gradbench. Without them this
# says so and exits 0.
#
# 1. Sessions at issue 27's workloads, once: GradBench's CLI runs each eval
#    with its manual tool and logs every message and answer
#    ($GB_HOME/sessions/<eval>.jsonl); those answers are the reference.
# 2. bench/gradbench/peers.py sends every evaluation of them to wengert's tool
#    and to the peers, GB_MIN_RUNS runs each (default 3), checks every answer
#    and prints the tables; the JSON goes to $GB_HOME/out/.
#
# GB_EVALS picks evals (default all nine), GB_TOOLS tools
# (default wengert,manual,adol-c,codipack,pytorch). GB_BASELINE=DIR adds a
# column for an earlier build kept in DIR: DIR/wengert-gradbench, DIR/gradbench
# (its programs) and DIR/stdlib, e.g. made by
#   mkdir -p DIR && cp build/gradbench/wengert-gradbench DIR/ &&
#   cp -r bench/gradbench DIR/gradbench && cp -r stdlib DIR/stdlib
# at the earlier commit, so that before and after run in one command.
set -e
GB_HOME=${GB_HOME:-${TMPDIR:-/tmp}/gb}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
GB=$GB_HOME/gradbench
CLI=$GB_HOME/gb-cli/target/release/gradbench
if [ ! -x "$GB/tools/manual/bin/lse" ] || [ ! -x "$CLI" ]; then
    echo "bench-gradbench: skipped: no GradBench build in GB_HOME=$GB_HOME (docs/bench.md, \"GradBench\", says how to make one)"
    exit 0
fi
export PYTHONPATH=$GB/python/gradbench:$GB_HOME/pyshim
export CPATH=$GB_HOME/prefix/include:$GB_HOME/peers/CoDiPack/include
E=python/gradbench/gradbench/evals
declare -A ARGS=(
    [lse]="-n 10000 160000"
    [llsq]="-n 256 1024"
    [det]="-l 7 8"
    [ode]="-n 1000 10000 -s 10"
    [kmeans]="-k 10 100 -n 1000 -d 8"
    [gmm]="-d 10 20 -k 25"
    [lstm]="-l 2 4 -c 1024"
    [ba]="--min 1 --max 2"
    [ht]="--model small --max 2"
)
evals=${GB_EVALS:-"lse llsq det ode kmeans gmm lstm ba ht"}
mkdir -p "$GB_HOME/sessions" "$GB_HOME/out"
files=()
for ev in $evals; do
    s=$GB_HOME/sessions/$ev.jsonl
    if [ ! -s "$s" ]; then
        echo "recording $ev (${ARGS[$ev]}) with GradBench's manual tool"
        (cd "$GB" && /usr/bin/python3 -c 'import numpy' &&
         "$CLI" run --eval "/usr/bin/python3 $E/$ev/run.py ${ARGS[$ev]} --min-seconds 0" \
             --tool "/usr/bin/python3 python/gradbench/gradbench/cpp.py manual" -o "$s.tmp" >/dev/null) &&
            mv "$s.tmp" "$s" || { echo "recording $ev failed"; rm -f "$s.tmp"; continue; }
    fi
    files+=("$s")
done
stamp=$(date -u +%Y-%m-%dT%H%MZ)
commit=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)
make -s -C "$ROOT" gradbench-tool >&2
# peak RSS by wait4 from a small C parent (bench/runstat.c), as make bench measures
[ -x "$ROOT/build/bench/runstat" ] || { mkdir -p "$ROOT/build/bench" && gcc -O2 -o "$ROOT/build/bench/runstat" "$ROOT/bench/runstat.c"; }
base=()
[ -n "$GB_BASELINE" ] && base=(--baseline "$GB_BASELINE/wengert-gradbench,$GB_BASELINE/gradbench,$GB_BASELINE/stdlib")
/usr/bin/python3 "$ROOT/bench/gradbench/peers.py" --min-runs "${GB_MIN_RUNS:-3}" "${base[@]}" \
    --tools "${GB_TOOLS:-wengert,manual,adol-c,codipack,pytorch}" \
    --json "$GB_HOME/out/peers-$stamp.json" \
    --title "GradBench, $stamp, wengert $commit, GradBench ${GB_COMMIT:-f26651a7}" \
    "$ROOT/bench/gradbench/tool" "${files[@]}"
