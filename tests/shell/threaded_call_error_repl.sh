#!/bin/bash
# An error inside a call made by threaded.c's inlined paths (x = f(...),
# an element read a[i * n + j]) names its place and the calls that led
# there, and the REPL goes on (-i reads the lines as REPL input): the
# call's state (depth, frame, traceback) is as before, so the same
# function then runs to its end, and recursion is as deep as before.
BIN=${WG_BIN:-./wengert}
case "$BIN" in /*) ;; *) BIN="$PWD/$BIN" ;; esac
[ -n "$WENGERT_STDLIB" ] || export WENGERT_STDLIB="$(cd "$(dirname "$0")/../.." && pwd)/stdlib"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
out=$("$BIN" -i 2>&1 <<'WG'
fn rows(k) { a = [1, 2, 3, 4]; n = 2; f = fn(i) { j = 1; return a[i * n + j] }; g = fn(i) { x = f(i); return x }; return g(k) }
rows(2)
rows(1)
fn down(k) { f = fn(m) { if m == 0 { return 0 }; x = f(m - 1); return x + 1 }; return f(k) }
down(1990)
down(1990)
WG
)
grep -qF '<repl 1>:1:73: error: index 5 out of range for array of length 4' <<<"$out" || fail "no located error: $out"
grep -qF 'in <fn>, called at <repl 1>:1:97' <<<"$out" || fail "no traceback through the inlined call: $out"
grep -qF 'in rows, called at <repl 2>:1:1' <<<"$out" || fail "no traceback to the statement: $out"
grep -qx '4' <<<"$out" || fail "rows(1) after the error did not run: $out"
[ "$(grep -cx '1990' <<<"$out")" = 2 ] || fail "the recursion after the error was not as deep: $out"
[ "$fails" = 0 ] && echo "threaded_call_error_repl.sh: ok" || exit 1
