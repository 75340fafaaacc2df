#!/bin/bash
# In the REPL, a complete `if { }` waits one line for an `else`/`elif`
# (as in scripts, where else may begin the line after `}`); any other line
# runs the if first and then itself. No echo inside blocks.
BIN=${WG_BIN:-./wengert}
case "$BIN" in /*) ;; *) BIN="$PWD/$BIN" ;; esac
[ -n "$WENGERT_STDLIB" ] || export WENGERT_STDLIB="$(cd "$(dirname "$0")/../.." && pwd)/stdlib"
H=$(mktemp -d)
SOCK="wg_else_$$"
tm() { tmux -L "$SOCK" "$@"; }
trap 'tm kill-server 2>/dev/null; rm -rf "$H"' EXIT
tm new-session -d -s s -x 100 -y 40 "HOME=$H $BIN"
screen() { tm capture-pane -p -t s; }
wait_for() { # wait until the screen contains $1
    for _ in $(seq 100); do screen | grep -qF -- "$1" && return 0; sleep 0.05; done
    echo "FAIL: never saw: $1"; screen; exit 1
}
wait_for "wg>"
tm send-keys -t s 'x = 5' Enter
tm send-keys -t s 'if x > 10 { print("big") }' Enter
wait_for "..>"
tm send-keys -t s 'else { print("small") }' Enter
wait_for "small"
tm send-keys -t s 'if x > 1 { print("yes") }' Enter
tm send-keys -t s 'x + 1' Enter
wait_for "6"
screen | grep -qx "yes" || { echo "FAIL: the if did not run before the next line"; screen; exit 1; }
tm send-keys -t s 'if true { 99 }' Enter
tm send-keys -t s 'print("after")' Enter
wait_for "after"
if screen | grep -qx "99"; then echo "FAIL: a bare expression inside a block was echoed"; screen; exit 1; fi
echo "repl_else.sh: ok"
