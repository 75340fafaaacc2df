#!/bin/bash
# Tab completion in the REPL (tmux): a directory after :load completes with
# a "/" and no space (into it); :tape Tab offers its subcommands and the
# variables of numbers, not builtins or functions; :tape of a builtin says
# what it is.
BIN=${WG_BIN:-./wengert}
case "$BIN" in /*) ;; *) BIN="$PWD/$BIN" ;; esac
[ -n "$WENGERT_STDLIB" ] || export WENGERT_STDLIB="$(cd "$(dirname "$0")/../.." && pwd)/stdlib"
command -v tmux >/dev/null || { echo "tmux not installed"; exit 1; }
T=$(mktemp -d)
H="$T/home"             # a private HOME: the history file goes here
mkdir "$H"
tm() { tmux -S "$T/tmux.sock" -f /dev/null "$@"; }   # a private tmux server
cleanup() { tm kill-server >/dev/null 2>&1; rm -rf "$T"; }
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
fails=0
fail() { echo "FAIL [$S]: $*"; fails=$((fails + 1)); echo "---- screen of $S:"; screen | sed '/^$/d' | tail -25; echo "----"; }

start() { # start NAME: a fresh REPL in session NAME, wait for its prompt
    S=$1
    tm new-session -d -s "$S" -x 100 -y 50 \
        "env HOME='$H' TERM=xterm WENGERT_STDLIB='$WENGERT_STDLIB' '$BIN'; echo \$? >'$T/status.$S'"
    tm set-option -t "$S" remain-on-exit on >/dev/null
    wait_until at_prompt || { fail "no 'wg> ' prompt at start-up"; exit 1; }
}
screen() { tm capture-pane -p -J -t "$S" -S -2000 2>/dev/null; }
lines() { screen | sed -e 's/[[:space:]]*$//' -e '/^$/d'; }
last() { lines | tail -1; }
at_prompt() { [ "$(last)" = "wg>" ]; }
at_cont() { [ "$(last)" = "..>" ]; }
last_is() { [ "$(last)" = "$1" ]; }
ended() { [ -s "$T/status.$S" ]; }   # the REPL has exited; its status is in that file
has_line() { lines | grep -qxF -- "$1"; }
has_text() { screen | grep -qF -- "$1"; }
wait_until() { # poll a condition every 50 ms, for at most 10 s
    local deadline=$((SECONDS + 10))
    until "$@"; do
        [ "$SECONDS" -ge "$deadline" ] && return 1
        sleep 0.05
    done
}
send() { tm send-keys -t "$S" -l -- "$1"; tm send-keys -t "$S" Enter; }
# enter LINE, then wait for a new prompt (counting prompts: the old one is
# still the last line until the keys reach the terminal)
prompts() { lines | grep -c '^wg>'; }
new_prompt() { at_prompt && [ "$(prompts)" -gt "$1" ]; }
cmd() { local n; n=$(prompts); send "$1"; wait_until new_prompt "$n" || fail "no prompt after: $1"; }
# enter LINE, expect the continuation prompt
cont() { send "$1"; wait_until at_cont || fail "no '..> ' after: $1"; }
expect_line() { wait_until has_line "$1" || fail "never showed the line: $1"; }
# the line on screen right after the line $1 is $2
followed_by() {
    local next
    next=$(lines | grep -xF -A1 -- "$1" | tail -1)
    [ "$next" = "$2" ] || fail "after [$1] came [$next], wanted [$2]"
}

W="$T/work"
mkdir -p "$W/examples_dir"
echo 'print(1)' >"$W/examples_dir/one.wg"
start_in() { # start_in NAME DIR
    S=$1
    tm new-session -d -s "$S" -c "$2" -x 100 -y 50 \
        "env HOME='$H' TERM=xterm WENGERT_STDLIB='$WENGERT_STDLIB' '$BIN'; echo \$? >'$T/status.$S'"
    tm set-option -t "$S" remain-on-exit on >/dev/null
    wait_until at_prompt || { fail "no 'wg> ' prompt at start-up"; exit 1; }
}

# ---------------------------------------------------------- session A
# :load exa<Tab> gives the directory with a '/', then its file
start_in A "$W"
tm send-keys -t "$S" -l ':load examples_'
tm send-keys -t "$S" Tab
wait_until last_is 'wg> :load examples_dir/' || fail "Tab did not complete the directory with a '/'"
tm send-keys -t "$S" Tab
wait_until last_is 'wg> :load examples_dir/one.wg' || fail "a second Tab did not complete the file in it"
tm send-keys -t "$S" Enter
expect_line '1'
wait_until at_prompt || fail "no prompt after :load"

# ---------------------------------------------------------- session B
# :tape <Tab><Tab> lists subcommands and variables of numbers only
start_in B "$W"
cmd 'xvar = 2'
cmd 'arrvar = [1, 2]'
cmd 'fnvar = fn(t) => t'
tm send-keys -t "$S" -l ':tape '
tm send-keys -t "$S" Tab
sleep 0.3
tm send-keys -t "$S" Tab
wait_until has_text 'xvar' || fail ":tape Tab Tab did not list xvar"
has_text 'arrvar' || fail ":tape Tab Tab did not list arrvar"
has_text 'stats' || fail ":tape Tab Tab did not list the subcommand stats"
lines | grep -v '^wg>' | grep -qw 'fnvar' && fail ":tape Tab Tab listed a function"
lines | grep -v '^wg>' | grep -qw 'cos' && fail ":tape Tab Tab listed the builtin cos"
tm send-keys -t "$S" C-u
tm send-keys -t "$S" C-c
wait_until at_prompt || fail "no prompt after C-c"
# :tape cos says what cos is
cmd ':tape cos'
expect_line "<repl 4>:1:1: error: 'cos' is a builtin function, not a variable: :tape NAME shows what a variable's numbers depend on"

echo "repl_complete.sh: $fails failure(s)"
[ "$fails" = 0 ]
