#!/bin/bash
# A statement that fails (here an error at the end of a long function
# under grad; Ctrl-C is tests/repl/repl_interrupt_reclaim.sh) leaves no
# dead recording behind (issue 25, bug 9): the REPL goes on (-i reads the
# lines as REPL input, errors do not stop it), the tape is as before the
# statement, and a grad needing most of the 64MB limit runs. Before, the
# 48 MB of the failed run stayed and the second grad reached the limit.
BIN=${WG_BIN:-./wengert}
case "$BIN" in /*) ;; *) BIN="$PWD/$BIN" ;; esac
[ -n "$WENGERT_STDLIB" ] || export WENGERT_STDLIB="$(cd "$(dirname "$0")/../.." && pwd)/stdlib"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
out=$("$BIN" -e ':tape limit 64MB' -i 2>&1 <<'WG'
bad = fn(x) { s = x; for k in 0..2e6 { s = sin(s) + x }; return s + [1][3] }
grad(bad)(0.5)
:tape limit
ok = fn(x) { s = x; for k in 0..2.5e6 { s = sin(s) + x }; return s }
print(grad(ok)(0.5) > 0)
WG
)
grep -qF '<repl 1>:1:73: error: index 3 out of range for array of length 1' <<<"$out" || fail "no located error: $out"
[ "$(grep '^tape limit:' <<<"$out" | tail -1)" = 'tape limit: 64.0 MB (in use: 12 bytes)' ] ||
    fail "the failed statement's recording stayed on the tape: $out"
grep -qx 'true' <<<"$out" || fail "the grad after the failed one did not run: $out"
grep -q 'tape limit of' <<<"$out" && fail "the tape limit was reached: $out"
[ "$fails" = 0 ] && echo "reclaim_after_error.sh: ok" || exit 1
