#!/bin/bash
# wm_exp_n, wm_exp_n_sum and wm_tanh_n take the widest vector path this CPU
# runs (src/wmath.c): AVX-512F here, maybe AVX2 or SSE2 on CI's machine or
# under valgrind. Every path must give the same bits; test_wmath checks the
# functions on each, and this checks the programs that use them: with
# WENGERT_WMATH naming each narrower path (the test hook), the recorded
# GradBench sessions whose evaluations take an array's exp, logsumexp or
# tanh (lse, lstm, gmm) must give the default path's answers to the bit,
# and test_wmath must report that path taken.
# (`WENGERT_WMATH=sse2 make test` runs the whole suite on one path.)
BUILD=${WG_BUILD:-build}
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
case "$BUILD" in /*) B="$BUILD" ;; *) B="$ROOT/$BUILD" ;; esac
DRV="$B/gradbench/wengert-gradbench" UNIT="$B/unit/test_wmath"
SD=$(ls -d "$ROOT"/../shared/gradbench/sessions /work/shared/gradbench/sessions 2>/dev/null | head -1)
[ -x "$UNIT" ] || { echo "SKIP: $UNIT not built"; exit 0; }
bad=0
# the paths this CPU runs, as test_wmath lists them
paths=$(WENGERT_WMATH= "$UNIT" | sed -n 's/^test_wmath: path //p')
[ -n "$paths" ] || { echo "FAIL: test_wmath listed no paths"; exit 1; }
for p in $paths; do
    took=$(WENGERT_WMATH=$p "$UNIT" | sed -n 's/^test_wmath: wm_exp_n takes //p')
    [ "$took" = "$p" ] || { echo "FAIL: WENGERT_WMATH=$p: wm_exp_n takes '$took'"; bad=1; }
done
if [ ! -x "$DRV" ]; then echo "SKIP: $DRV not built (make gradbench-tool)"; exit $bad; fi
if [ -z "$SD" ]; then echo "SKIP: no recorded sessions"; exit $bad; fi
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
for s in lse lstm gmm; do
    f="$SD/$s.jsonl"
    [ -f "$f" ] || { echo "SKIP: no $s session"; continue; }
    python3 "$ROOT/tests/shell/gb_session.py" messages "$f" >"$T/$s.msgs"
    for p in default $paths; do
        env=$p; [ "$p" = default ] && env=
        WENGERT_WMATH=$env WENGERT_STDLIB="$ROOT/stdlib" "$DRV" "$ROOT/bench/gradbench" <"$T/$s.msgs" 2>"$T/$s.$p.err" |
            python3 "$ROOT/tests/shell/gb_session.py" answers >"$T/$s.$p"
    done
    n=$(grep -c '"output"' "$T/$s.default")
    if [ "$n" -lt 1 ]; then echo "FAIL: $s: no answers"; head -5 "$T/$s.default.err"; bad=1; continue; fi
    for p in $paths; do
        if cmp -s "$T/$s.default" "$T/$s.$p"; then echo "$s on $p: $n answers identical"
        else echo "FAIL: $s on $p: the answers differ from the default path's"; diff "$T/$s.default" "$T/$s.$p" | head -c 600; bad=1; fi
    done
done
exit $bad
