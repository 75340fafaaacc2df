#!/bin/bash
# GradBench's programs at their default workloads must stay within 4 GB
# (issue 27, docs/bench.md "Peak memory at default workloads"): ode.wg runs
# its steps and gmm.wg its components in checkpointed loops, and det.wg adds
# or subtracts each term instead of multiplying it by its sign. Here, on
# small inputs: each program's derivative equals its plain twin's (the
# loops without `checkpoint`, det's sign as a product) to rounding, and the
# tape the derivative leaves, counting what reclaiming gave back, does not
# grow with the checkpointed trip count (ode's s, gmm's k) while the plain
# twin's does; det records two entries a term where the product took four.
set -u
BIN=${WG_BIN:-./wengert}
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
export WENGERT_STDLIB="$ROOT/stdlib"
P=$ROOT/bench/gradbench
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
status=0
sed 's/checkpoint for /for /' "$P/ode.wg" >"$T/ode_plain.wg"
sed 's/checkpoint for /for /' "$P/gmm.wg" >"$T/gmm_plain.wg"
sed 's/if sgn > 0 { total = total + A\[R0 \* l + Cj\] \* sub } else { total = total - A\[R0 \* l + Cj\] \* sub }/total = total + sgn * A[R0 * l + Cj] * sub/' "$P/det.wg" >"$T/det_plain.wg"
grep -q 'total = total + sgn \*' "$T/det_plain.wg" || { echo "det.wg's term line changed: update this test"; exit 1; }

# entries recorded by `g = DERIV()` after the inputs: kept plus reclaimed
entries() {    # SETUP PROGRAM DERIV
    out=$("$BIN" -e "$1
:load $2
:tape clear
g = $3()
:tape stats") || { echo "run failed: $2"; status=1; return; }
    kept=$(echo "$out" | sed -n 's/^tape: \([0-9]*\) entries.*/\1/p')
    gone=$(echo "$out" | sed -n 's/^ *reclaimed: \([0-9]*\) entries.*/\1/p')
    echo $((kept + ${gone:-0}))
}
# max |g - g_plain| / max |g_plain| of the derivative by both programs
agree() {      # SETUP PROGRAM DERIV
    r=$("$BIN" -e "$1
:load $T/$(basename "$2" .wg)_plain.wg
g0 = $3()
:load $2
g1 = $3()
print(max(abs(g1 - g0)) / max(abs(g0)))
print(max(abs(g0)) > 0)") || { echo "run failed: $2"; status=1; return; }
    echo "$r" | tail -2
}
check_agree() {    # NAME RESULT
    set -- "$1" $2
    [ "${3:-}" = true ] || { echo "$1: the plain twin's derivative is 0: not a test"; status=1; }
    awk -v e="$2" 'BEGIN { exit !(e + 0 <= 1e-12) }' || { echo "$1: derivatives differ by $2 (relative)"; status=1; }
    echo "$1: derivatives agree to $2"
}

ode() { echo "x = 1 + 0.1 * sin(range(30))
s = $1"; }
check_agree "ode s=10" "$(agree "$(ode 10)" "$P/ode.wg" gradient)"
a=$(entries "$(ode 10)" "$P/ode.wg" gradient); b=$(entries "$(ode 40)" "$P/ode.wg" gradient)
pa=$(entries "$(ode 10)" "$T/ode_plain.wg" gradient); pb=$(entries "$(ode 40)" "$T/ode_plain.wg" gradient)
echo "ode: s=10 $a entries, s=40 $b (plain: $pa, $pb)"
[ "$a" = "$b" ] && [ "$pb" -gt $((3 * pa)) ] && [ "$b" -lt $((pb / 10)) ] || { echo "ode: the checkpointed tape grows with s"; status=1; }

gmm() { echo "d = 3
k = $1
n = 20
m = 0
gamma = 1.0
x = sin(range(n * d) * 1.3)
alpha = cos(range(k))
mu = sin(range(k * d) * 0.7) * 0.5 + 0.5
q = cos(range(k * d) * 0.3) * 0.2
l = sin(range(k * d * (d - 1) / 2) * 0.11)"; }
check_agree "gmm k=4" "$(agree "$(gmm 4)" "$P/gmm.wg" jacobian)"
a=$(entries "$(gmm 4)" "$P/gmm.wg" jacobian); b=$(entries "$(gmm 16)" "$P/gmm.wg" jacobian)
pa=$(entries "$(gmm 4)" "$T/gmm_plain.wg" jacobian); pb=$(entries "$(gmm 16)" "$T/gmm_plain.wg" jacobian)
echo "gmm: k=4 $a entries, k=16 $b (plain: $pa, $pb)"
[ "$pb" -gt $((3 * pa)) ] && [ "$b" -lt $((pb / 2)) ] || { echo "gmm: the checkpointed tape grows like the plain one with k"; status=1; }

det() { echo "ell = 6
A = sin(range(36) * 1.7 + 0.3) + 0.1 * range(36)"; }
check_agree "det l=6" "$(agree "$(det)" "$P/det.wg" gradient)"
a=$(entries "$(det)" "$P/det.wg" gradient); pa=$(entries "$(det)" "$T/det_plain.wg" gradient)
echo "det: $a entries (plain: $pa)"
# l = 6 has 6!/1! + 6!/2! + ... + 6!/5! = 1236 terms: two entries fewer each
[ $((pa - a)) = 2472 ] || { echo "det: $((pa - a)) entries fewer, wanted 2472 (two a term)"; status=1; }
exit $status
