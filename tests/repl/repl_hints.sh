#!/bin/bash
# An open block still continues at `..>` (the parser's incomplete-input
# signal is kept when an unclosed bracket is explained); errors at the
# prompt carry their notes (did you mean).
BIN=${WG_BIN:-./wengert}
case "$BIN" in /*) ;; *) BIN="$PWD/$BIN" ;; esac
[ -n "$WENGERT_STDLIB" ] || export WENGERT_STDLIB="$(cd "$(dirname "$0")/../.." && pwd)/stdlib"
H=$(mktemp -d)
SOCK="wg_hints_$$"
tm() { tmux -L "$SOCK" "$@"; }
trap 'tm kill-server 2>/dev/null; rm -rf "$H"' EXIT
tm new-session -d -s s -x 100 -y 40 "HOME=$H $BIN"
screen() { tm capture-pane -p -t s; }
wait_for() { # wait until the screen contains $1
    for _ in $(seq 100); do screen | grep -qF -- "$1" && return 0; sleep 0.05; done
    echo "FAIL: never saw: $1"; screen; exit 1
}
wait_for "wg>"
tm send-keys -t s 'fn twice(x) {' Enter
wait_for "..>"
tm send-keys -t s 'return 2 * x' Enter
tm send-keys -t s '}' Enter
tm send-keys -t s 'a = [1,' Enter
tm send-keys -t s '2]' Enter
tm send-keys -t s 'twice(len(a)) + 17' Enter
wait_for "21"
tm send-keys -t s 'twise(3)' Enter
wait_for "did you mean 'twice'?"
tm send-keys -t s 'print("still here")' Enter
wait_for "still here"
echo ok
