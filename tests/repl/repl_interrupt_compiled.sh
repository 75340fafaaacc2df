#!/bin/bash
# Ctrl-C inside a closure running in the register form (src/regvm.c): the
# compiled loop polls as the tree walker's does, the REPL prints
# "interrupted" with the place, and the session goes on: the same closure
# (still compiled) and a recorded derivative through the recording form
# answer afterwards.
BIN=${WG_BIN:-./wengert}
case "$BIN" in /*) ;; *) BIN="$PWD/$BIN" ;; esac
[ -n "$WENGERT_STDLIB" ] || export WENGERT_STDLIB="$(cd "$(dirname "$0")/../.." && pwd)/stdlib"
command -v tmux >/dev/null || { echo "tmux not installed"; exit 1; }
T=$(mktemp -d)
tm() { tmux -S "$T/tmux.sock" -f /dev/null "$@"; }   # a private tmux server
trap 'tm kill-server >/dev/null 2>&1; rm -rf "$T"' EXIT
fails=0
screen() { tm capture-pane -p -J -t s -S -2000 2>/dev/null; }
fail() { echo "FAIL: $*"; fails=$((fails + 1)); echo "---- screen:"; screen | sed '/^$/d' | tail -25; echo "----"; }
lines() { screen | sed -e 's/[[:space:]]*$//' -e '/^$/d'; }
prompts() { lines | grep -c '^wg>'; }
at_prompt() { [ "$(lines | tail -1)" = "wg>" ]; }
new_prompt() { at_prompt && [ "$(prompts)" -gt "$1" ]; }
wait_until() { # poll every 50 ms, for at most 10 s
    local deadline=$((SECONDS + 10))
    until "$@"; do
        [ "$SECONDS" -ge "$deadline" ] && return 1
        sleep 0.05
    done
}
send() { tm send-keys -t s -l -- "$1"; tm send-keys -t s Enter; }
cmd() { local n; n=$(prompts); send "$1"; wait_until new_prompt "$n" || fail "no prompt after: $1"; }

tm new-session -d -s s -x 200 -y 50 \
    "env TERM=xterm WENGERT_STDLIB='$WENGERT_STDLIB' '$BIN'"
wait_until at_prompt || { fail "no prompt at start-up"; exit 1; }
cmd 'spin = fn(n) { x = 0; i = 0; while x < 1 { i = i + 1 }; return i }'
cmd 'sq = fn(a, n) { s = 0; for i in 0..n { s = s + a * a }; return s }'
n=$(prompts)
send 'spin(3)'
sleep 0.5
tm send-keys -t s C-c
wait_until new_prompt "$n" || fail "no prompt after Ctrl-C in a compiled loop"
lines | grep -q 'error: interrupted' || fail "Ctrl-C in a compiled loop printed no 'interrupted'"
lines | grep -q 'in <fn>, called at' || fail "no traceback to the call"
cmd 'sq(3, 4)'                    # compiled again, plain
lines | grep -qx '36' || fail "sq(3, 4) after the interrupt"
# the recording form: A captured, read only, its elements recorded
cmd 'g = fn(A) { f = fn(n) { s = 0; for i in 0..n { s = s + A[0] * A[1] }; return s }; return f(4) }'
cmd 'grad(g)([2, 3])'             # 4 A[1], 4 A[0]
lines | grep -qx '\[12, 8\]' || fail "grad through a compiled closure after the interrupt"

[ "$fails" = 0 ] && echo "repl_interrupt_compiled.sh: ok" || exit 1
