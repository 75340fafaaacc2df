#!/bin/bash
# The fixedpoint bar (issue 9): x = fixedpoint(fn(x) => 0.5 * cos(x) + a, 0)
# at a = 0.3 gives dx/da = 0.7593096028446834 and d2x/da2 =
# -0.16928024631058308 with under 60 tape entries in all (the whole session
# tape after the three statements), however many steps the iteration took;
# a tighter tol (more steps) leaves as many entries.
set -u
BIN=${WG_BIN:-./wengert}
status=0
for tol in "" ", 1e-15, 5000"; do
    out=$("$BIN" -e "a = 0.3
x = fixedpoint(fn(x) => 0.5 * cos(x) + a, 0$tol)
print(d(x, a))
print(d(d(x, a), a))
:tape") || { echo "run failed"; exit 1; }
    first=$(echo "$out" | sed -n 1p)
    second=$(echo "$out" | sed -n 2p)
    n=$(echo "$out" | sed -n 's/^tape: \([0-9]*\) entries.*/\1/p')
    [ "$first" = 0.7593096028446834 ] || { echo "dx/da: got $first (tol '$tol')"; status=1; }
    [ "$second" = -0.16928024631058308 ] || { echo "d2x/da2: got $second (tol '$tol')"; status=1; }
    [ -n "$n" ] && [ "$n" -lt 60 ] || { echo "tape: '$n' entries, wanted under 60 (tol '$tol')"; status=1; }
    [ -n "$n" ] && echo "tol '$tol': $n entries"
done
exit $status
