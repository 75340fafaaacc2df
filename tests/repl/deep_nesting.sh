#!/bin/bash
# Absurdly deep nesting (generated here, too long for a .wg file) is a located
# error, never a crash: "FILE:LINE:COL: error:" with a real line and column (from 1).
BIN=${WG_BIN:-./wengert}
case "$BIN" in /*) ;; *) BIN="$PWD/$BIN" ;; esac
[ -n "$WENGERT_STDLIB" ] || export WENGERT_STDLIB="$(cd "$(dirname "$0")/../.." && pwd)/stdlib"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
trap 'exit 1' INT TERM HUP
cd "$T"
fails=0
check() { # check NAME: run NAME.wg, want a clean located error on line $2
    "$BIN" "$1.wg" >out 2>err
    local rc=$?
    if [ "$rc" = 0 ] || [ "$rc" -ge 128 ]; then
        echo "FAIL $1: exit status $rc (want an error, not success or a crash)"; fails=$((fails + 1)); return
    fi
    if [ -s out ]; then echo "FAIL $1: a syntax error must run nothing, stdout: $(head -c 100 out)"; fails=$((fails + 1)); fi
    if ! grep -qE "^$1\.wg:$2:[1-9][0-9]*: error: " err; then
        echo "FAIL $1: no '$1.wg:$2:COL: error:' line; stderr: $(head -1 err | cut -c1-120)"; fails=$((fails + 1))
    fi
}
n=20000
# 20000 nested parentheses on line 2
{ echo 'print("must not run")'; printf 'x = '; printf '(%.0s' $(seq $n); printf 1; printf ')%.0s' $(seq $n); echo; } >parens.wg
check parens 2
# 20000 unary minuses on line 2
{ echo 'print("must not run")'; printf 'x = '; printf -- '-%.0s' $(seq $n); echo 1; } >minus.wg
check minus 2
# 20000 right-associative powers on line 2
{ echo 'print("must not run")'; printf 'x = 2'; printf ' ^ 1%.0s' $(seq $n); echo; } >power.wg
check power 2
# 20000 nested blocks, one per line: the error is on some line >= 2
{ echo 'print("must not run")'; for i in $(seq $n); do echo 'if true {'; done; for i in $(seq $n); do echo '}'; done; } >blocks.wg
"$BIN" blocks.wg >out 2>err; rc=$?
if [ "$rc" = 0 ] || [ "$rc" -ge 128 ]; then echo "FAIL blocks: exit status $rc"; fails=$((fails + 1));
elif ! grep -qE '^blocks\.wg:[1-9][0-9]*:[1-9][0-9]*: error: ' err; then
    echo "FAIL blocks: error not located; stderr: $(head -1 err | cut -c1-120)"; fails=$((fails + 1)); fi
echo "deep_nesting.sh: $fails failure(s)"
[ "$fails" = 0 ]
