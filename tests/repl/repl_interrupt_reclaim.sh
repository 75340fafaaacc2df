#!/bin/bash
# Ctrl-C during grad of a long function leaves its dead recording on the
# tape no more (issue 25, bug 9): it was 685 MB, and the next large grad
# reached the tape limit although ':tape reclaim' would have freed it. What
# the interrupted statement recorded and nothing holds goes at once, so
# the tape is as before it, and a grad that needs most of the limit runs.
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
wait_until() { # poll every 50 ms, for at most 20 s
    local deadline=$((SECONDS + 20))
    until "$@"; do
        [ "$SECONDS" -ge "$deadline" ] && return 1
        sleep 0.05
    done
}
send() { tm send-keys -t s -l -- "$1"; tm send-keys -t s Enter; }
cmd() { local n; n=$(prompts); send "$1"; wait_until new_prompt "$n" || fail "no prompt after: $1"; }
has_line() { lines | grep -qxF -- "$1"; }

tm new-session -d -s s -x 200 -y 50 "env TERM=xterm WENGERT_STDLIB='$WENGERT_STDLIB' '$BIN'"
wait_until at_prompt || { fail "no prompt at start-up"; exit 1; }
cmd ':tape limit 64MB'
# slow records two entries a step, and the empty inner loop makes the steps
# slow: by Ctrl-C it has recorded megabytes, far from the limit. (The inner
# loop was 0..100 until the threaded evaluator ran it fast enough for the
# 1.5 s to reach the limit: about 10 us a step now, 3 MB by Ctrl-C.)
cmd 'slow = fn(x) { s = x; for k in 0..1e7 { for q in 0..3000 { }; s = sin(s) + x }; return s }'
n=$(prompts)
send 'grad(slow)(0.5)'
sleep 1.5
tm send-keys -t s C-c
wait_until new_prompt "$n" || fail "no prompt after Ctrl-C"
lines | grep -q 'error: interrupted' || fail "Ctrl-C printed no 'interrupted'"
cmd ':tape limit'
[ "$(lines | grep '^tape limit:' | tail -1)" = 'tape limit: 64.0 MB (in use: 12 bytes)' ] ||
    fail "the interrupted recording stayed on the tape"
# 2.5e6 steps record about 60 MB: it fits only if the interrupted run is gone
cmd 'ok = fn(x) { s = x; for k in 0..2.5e6 { s = sin(s) + x }; return s }'
cmd 'grad(ok)(0.5) > 0'
has_line 'true' || fail "a grad after the interrupted one did not run"
lines | grep -q 'tape limit of' && fail "the tape limit was reached"

[ "$fails" = 0 ] && echo "repl_interrupt_reclaim.sh: ok" || exit 1
