#!/bin/bash
# Ctrl-C while Graphviz draws ':tape dot FILE.svg' (issue 25, bug 9):
# Graphviz exits 0 when SIGINT stops it, and wengert said 'wrote FILE' of
# a file that was not there. Now the command stops with "interrupted",
# says nothing was written, and leaves no FILE and no temporary file. The
# dot here is a stand-in that waits, and exits 0 on SIGINT as Graphviz does.
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

mkdir "$T/bin" "$T/work"
cat >"$T/bin/dot" <<'SH'
#!/bin/sh
trap 'exit 0' INT
touch "$HOME/dot-started"
sleep 30 &
wait
SH
chmod +x "$T/bin/dot"
tm new-session -d -s s -x 200 -y 50 -c "$T/work" \
    "env HOME='$T' PATH='$T/bin:$PATH' TERM=xterm WENGERT_STDLIB='$WENGERT_STDLIB' '$BIN'"
wait_until at_prompt || { fail "no prompt at start-up"; exit 1; }
cmd 'x = 2'
cmd 'y = x * x'
n=$(prompts)
send ':tape dot y y.svg'
wait_until test -e "$T/dot-started" || fail "dot did not start"
tm send-keys -t s C-c
wait_until new_prompt "$n" || fail "no prompt after Ctrl-C"
lines | grep -q 'error: interrupted' || fail "Ctrl-C while dot ran printed no 'interrupted'"
lines | grep -q 'wrote y.svg' && fail "said it wrote a file after Ctrl-C"
[ -z "$(ls "$T/work")" ] || fail "files left: $(ls "$T/work")"
cmd 'd(y, x)'                     # the session goes on
lines | grep -qx '4' || fail "d(y, x) after the interrupted dot"

[ "$fails" = 0 ] && echo "repl_interrupt_dot.sh: ok" || exit 1
