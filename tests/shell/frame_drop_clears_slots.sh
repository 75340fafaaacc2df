#!/bin/bash
# A call's frame goes back to the spare list with every slot cleared
# (value_frame_drop: two slots a step, a pair holding an array or a string
# released out of line, an odd last slot alone), so the next call of the
# same size, which gets that frame, finds x undefined where the previous
# call had assigned it. Frames of 2 to 5 slots, the heap value in the first
# or second of a pair or in the odd last slot; the REPL goes on after each
# error.
BIN=${WG_BIN:-./wengert}
case "$BIN" in /*) ;; *) BIN="$PWD/$BIN" ;; esac
[ -n "$WENGERT_STDLIB" ] || export WENGERT_STDLIB="$(cd "$(dirname "$0")/../.." && pwd)/stdlib"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
out=$("$BIN" -i 2>&1 <<'WG' | sed -n '/^wengert /d; /^ /d; s/^<repl [0-9]*>:[0-9:]* error: /error: /; /^$/d; p'
fn g1(k) { if k == 1 { x = [1, 2] }; return x }
g1(1)
g1(0)
fn g2(k) { y = 0; if k == 1 { x = "s" }; return x }
g2(1)
g2(0)
fn g3(k) { if k == 1 { x = 5 }; y = [k]; return x }
g3(1)
g3(0)
fn g4(k) { a = [k]; b = [k, k]; if k == 1 { x = [3] }; return x }
g4(1)
g4(0)
fn g5(k) { a = 1; b = 2; c = 3; if k == 1 { x = [4] }; return x }
g5(1)
g5(0)
WG
)
expected="[1, 2]
error: undefined variable 'x'
s
error: undefined variable 'x'
5
error: undefined variable 'x'
[3]
error: undefined variable 'x'
[4]
error: undefined variable 'x'"
[ "$out" = "$expected" ] || fail "a spare frame kept a slot: $(diff <(echo "$expected") <(echo "$out"))"
[ "$fails" = 0 ] && echo "frame_drop_clears_slots.sh: ok" || exit 1
