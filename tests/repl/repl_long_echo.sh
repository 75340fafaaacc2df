#!/bin/bash
# At the prompt a long array echoes as its ends and its length; print
# writes it whole.
BIN=${WG_BIN:-./wengert}
case "$BIN" in /*) ;; *) BIN="$PWD/$BIN" ;; esac
[ -n "$WENGERT_STDLIB" ] || export WENGERT_STDLIB="$(cd "$(dirname "$0")/../.." && pwd)/stdlib"
H=$(mktemp -d)
SOCK="wg_long_$$"
tm() { tmux -L "$SOCK" "$@"; }
trap 'tm kill-server 2>/dev/null; rm -rf "$H"' EXIT
tm new-session -d -s s -x 120 -y 40 "HOME=$H $BIN"
screen() { tm capture-pane -p -t s; }
wait_for() { # wait until the screen contains $1
    for _ in $(seq 100); do screen | grep -qF -- "$1" && return 0; sleep 0.05; done
    echo "FAIL: never saw: $1"; screen; exit 1
}
wait_for "wg>"
tm send-keys -t s 'a = range(1000000) + 1' Enter
tm send-keys -t s 'a' Enter
wait_for "[1, 2, 3, ..., 999998, 999999, 1000000] (1000000 elements)"
tm send-keys -t s 'a[0:100]' Enter
wait_for ", 98, 99, 100]"
tm send-keys -t s 'print(a[0:101])' Enter
wait_for ", 99, 100, 101]"
screen | grep -qF "(101 elements)" && { echo "FAIL: print shortened"; screen; exit 1; }
tm send-keys -t s 'a[0:101]' Enter
wait_for "(101 elements)"
echo ok
