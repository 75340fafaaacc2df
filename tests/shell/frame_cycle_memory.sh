#!/bin/bash
# A frame kept by a closure in its own slot (a recursive local function:
# det's minor, gmm's put, ht's at) is a reference cycle. It used to wait for
# the cycle collector, which runs only between top-level statements: a
# loop inside a function that called such a function kept every frame, and
# the arrays in them, to its end (300 calls of 1.6 MB each: 470 MB). The
# frame goes when its call ends, if nothing else holds it (value.c's
# value_frame_drop_slow): the loop stays at a few MB. Also: a closure that
# is returned, or stored elsewhere, keeps its frame (the values it reads
# are still there).
set -u
BIN=${WG_BIN:-./wengert}
case "$BIN" in *san*) echo "SKIP: peak memory under the sanitizer (its quarantine keeps freed blocks)"; exit 0 ;; esac
[ -x /usr/bin/time ] || { echo "SKIP: no /usr/bin/time"; exit 0; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
cat >"$T/cycle.wg" <<'WG'
fn frame_with_cycle(i) {
    a = zeros(100000) + i
    at = fn(k) { if k == 0 { return a[0] }; return at(k - 1) }
    return at(3)
}
fn run(n) { s = 0; for i in 0..n { s = s + frame_with_cycle(i) }; return s }
print(run(300))
fn keeper(i) {
    a = zeros(10) + i
    at = fn(k) { if k == 0 { return a[k] }; return at(k - 1) }
    other = at
    return at
}
fn kept(n) { f1 = keeper(1); f2 = keeper(2); g = keeper(3); return f1(2) + f2(1) + g(0) }
print(kept(1))
WG
out=$(/usr/bin/time -f "%M" "$BIN" "$T/cycle.wg" 2>"$T/err") || { echo "run failed: $out $(cat "$T/err")"; exit 1; }
want="44850
6"
[ "$out" = "$want" ] || { echo "got: $out"; exit 1; }
kb=$(tail -1 "$T/err")
[ "$kb" -lt 100000 ] || { echo "peak RSS $kb KB (at most 100000 KB: every frame was kept)"; exit 1; }
echo "ok: peak RSS $kb KB"
