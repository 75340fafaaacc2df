#!/bin/bash
# The fixedpoint bar (issue 9): x = fixedpoint(fn(x) => 0.5 * cos(x) + a, 0)
# at a = 0.3 gives dx/da = 0.7593096028446834 and d2x/da2 =
# -0.16928024631058308 with under 60 tape entries in all: the whole session
# tape after the statements, counting what reclaiming gave back too,
# however many steps the iteration took (a tighter tol takes more steps and
# leaves as many entries).
set -u
BIN=${WG_BIN:-./wengert}
status=0
for tol in "" ", 1e-15, 5000"; do
    out=$("$BIN" -e "a = 0.3
x = fixedpoint(fn(x) => 0.5 * cos(x) + a, 0$tol)
dxa = d(x, a)
d2xa = d(d(x, a), a)
print(dxa)
print(d2xa)
:tape stats") || { echo "run failed"; exit 1; }
    first=$(echo "$out" | sed -n 1p)
    second=$(echo "$out" | sed -n 2p)
    kept=$(echo "$out" | sed -n 's/^tape: \([0-9]*\) entries.*/\1/p')
    gone=$(echo "$out" | sed -n 's/^ *reclaimed: \([0-9]*\) entries.*/\1/p')
    all=$((kept + ${gone:-0}))
    [ "$first" = 0.7593096028446834 ] || { echo "dx/da: got $first (tol '$tol')"; status=1; }
    [ "$second" = -0.16928024631058308 ] || { echo "d2x/da2: got $second (tol '$tol')"; status=1; }
    [ -n "$kept" ] && [ "$all" -lt 60 ] || { echo "tape: $kept kept + ${gone:-0} reclaimed entries, wanted under 60 (tol '$tol')"; status=1; }
    echo "tol '$tol': $kept entries kept, ${gone:-0} reclaimed, $all in all"
done
exit $status
