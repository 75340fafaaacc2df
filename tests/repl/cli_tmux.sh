#!/bin/bash
# The REPL as issue 15 wants it, in a real terminal (tmux): tracebacks that
# leave the session usable, ans, -i, :load beside the current folder, :save
# of a session that then runs as a script, Tab completion wherever a name is
# expected, and colour (error: red, caret green) that NO_COLOR and TERM=dumb
# turn off.
BIN=${WG_BIN:-./wengert}
case "$BIN" in /*) ;; *) BIN="$PWD/$BIN" ;; esac
[ -n "$WENGERT_STDLIB" ] || export WENGERT_STDLIB="$(cd "$(dirname "$0")/../.." && pwd)/stdlib"
command -v tmux >/dev/null || { echo "tmux not installed"; exit 1; }
T=$(mktemp -d)
H="$T/home"             # a private HOME: the history file goes here
W="$T/work"             # the REPL's current folder
mkdir -p "$H" "$W/sub"
tm() { tmux -S "$T/tmux.sock" -f /dev/null "$@"; }   # a private tmux server
cleanup() { tm kill-server >/dev/null 2>&1; sleep 0.3; rm -rf "$T"; }
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
fails=0
fail() { echo "FAIL [$S]: $*"; fails=$((fails + 1)); echo "---- screen of $S:"; screen | sed '/^$/d' | tail -25; echo "----"; }

start() { # start NAME [ENV=VALUE...] [-- ARGS...]: a fresh REPL in $W, wait for its prompt
    S=$1; shift
    local envs="" args=""
    while [ $# -gt 0 ] && [ "$1" != "--" ]; do envs="$envs '$1'"; shift; done
    [ "$1" = "--" ] && shift
    for a in "$@"; do args="$args '$a'"; done
    tm new-session -d -s "$S" -x 120 -y 50 -c "$W" \
        "env HOME='$H' TERM=xterm WENGERT_STDLIB='$WENGERT_STDLIB' $envs '$BIN' $args; echo \$? >'$T/status.$S'"
    tm set-option -t "$S" remain-on-exit on >/dev/null
    wait_until at_prompt || { fail "no 'wg> ' prompt at start-up"; exit 1; }
}
screen() { tm capture-pane -p -J -t "$S" -S -2000 2>/dev/null; }
colour_screen() { tm capture-pane -e -p -J -t "$S" -S -2000 2>/dev/null; }
lines() { screen | sed -e 's/[[:space:]]*$//' -e '/^$/d'; }
last() { lines | tail -1; }
at_prompt() { [ "$(last)" = "wg>" ]; }
last_is() { [ "$(last)" = "$1" ]; }
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
# enter LINE and wait for the next prompt (one more line starting "wg>" than
# before, so that the old prompt is not taken for the new one)
prompts() { lines | grep -c '^wg>'; }
new_prompt() { [ "$(prompts)" -gt "$1" ] && at_prompt; }
cmd() { local n; n=$(prompts); send "$1"; wait_until new_prompt "$n" || fail "no prompt after: $1"; }
expect_line() { wait_until has_line "$1" || fail "never showed the line: $1"; }
followed_by() {
    local next
    next=$(lines | grep -xF -A1 -- "$1" | tail -1)
    [ "$next" = "$2" ] || fail "after [$1] came [$next], wanted [$2]"
}
# type TEXT, press Tab, expect the line to read WANT; then clear the line
completes() {
    tm send-keys -t "$S" -l -- "$1"
    tm send-keys -t "$S" Tab
    wait_until last_is "wg> $2" || fail "Tab after [$1] gave [$(last)], wanted [wg> $2]"
    tm send-keys -t "$S" C-u
    wait_until at_prompt || fail "C-u did not clear the line"
}

# ---------------------------------------------------------- tracebacks, ans
start A
cmd 'fn inner(a) { return a[5] }'
cmd 'fn middle(a) { return inner(a) + 1 }'
cmd 'fn outer(a) { return middle(a) * 2 }'
cmd 'print(outer([1, 2]))'
# each input has its number: the error is in input 1 (inner), called from
# inputs 2, 3 and 4
expect_line '<repl 1>:1:24: error: index 5 out of range for array of length 2'
expect_line '  in inner, called at <repl 2>:1:23'
expect_line '  in middle, called at <repl 3>:1:22'
followed_by '  in middle, called at <repl 3>:1:22' '  in outer, called at <repl 4>:1:7'
cmd 'print(outer([1, 2, 3, 4, 5, 6]))'          # the session is still usable
expect_line '14'
cmd 'x = 3'
cmd 'x^2'
followed_by 'wg> x^2' '9'
cmd 'd(ans, x)'
followed_by 'wg> d(ans, x)' '6'
cmd 'print("p")'
cmd 'ans'
followed_by 'wg> ans' '6'

# :load at the prompt looks in the current folder; the loaded file's own
# :load looks beside it; "cannot open" says why
printf ':load b.wg\nfrom_a = from_b * 2\n' >"$W/sub/a.wg"
printf 'from_b = 21\n' >"$W/sub/b.wg"
cmd ':load sub/a.wg'
cmd 'from_a'
followed_by 'wg> from_a' '42'
cmd ':load nothere.wg'
expect_line "<repl 13>:1:1: error: cannot open 'nothere.wg': No such file or directory"

# :save writes what ran without error; the file runs as a script
cmd 'error("not saved")'
cmd 'w = [1, 2] * from_a'
cmd ':save saved.wg'
expect_line 'saved 12 inputs to saved.wg'
cmd ':save saved.wg'
expect_line "<repl 17>:1:1: error: 'saved.wg' exists; ':save! saved.wg' overwrites it"
grep -q 'not saved' "$W/saved.wg" && fail "an input that failed was saved"
out=$(cd "$W" && printf 'print(w, x, from_a)\n' >>saved.wg && "$BIN" saved.wg 2>&1)
[ "$(tail -1 <<<"$out")" = "[42, 84] 3 42" ] || fail "the saved session did not rebuild the variables: $out"

# ---------------------------------------------------------- completion
start B
cmd 'myvariable = 1'
completes 'whi' 'while'
completes 'nogr' 'nograd'
completes 'prin' 'print'
completes 'sigm' 'sigmoid'
completes 'myvar' 'myvariable'
completes 'y = 2 * myv' 'y = 2 * myvariable'
completes ':sa' ':save'
completes ':tape sta' ':tape stats'
completes ':tape myv' ':tape myvariable'
completes ':tape dot myv' ':tape dot myvariable'
touch "$W/graph_out.gv"
completes ':tape dot myvariable graph_o' ':tape dot myvariable graph_out.gv'
completes ':backend bfl' ':backend bfloat16'
completes ':backend posit1' ':backend posit16'
completes ':help checkp' ':help checkpoint'
completes ':load sub/' ':load sub/'
completes ':load saved.' ':load saved.wg'

# ---------------------------------------------------------- -i
printf 'from_script = 7\nprint("script ran")\n' >"$W/script.wg"
start C -- -i script.wg
expect_line 'script ran'
cmd 'from_script * 6'
followed_by 'wg> from_script * 6' '42'

# -i after a script that failed: the REPL still starts, with what ran
printf 'before = 5\nerror("boom")\n' >"$W/fails.wg"
start C2 -- -e 'e_code = 2' -i fails.wg
expect_line 'fails.wg:2:6: error: boom'
cmd 'before * e_code'
followed_by 'wg> before * e_code' '10'

# ---------------------------------------------------------- colour
esc=$(printf '\033')
start D
cmd '[1][2]'
colour_screen | grep 'error:' | grep -q "$esc" || fail "no colour on the error line in a terminal"
colour_screen | grep -F 'wg> [1][2]' | grep -q "$esc" && fail "the prompt line is coloured"
start E NO_COLOR=1
cmd '[1][2]'
expect_line '<repl 1>:1:5: error: index 2 out of range for array of length 1'
colour_screen | grep 'error:' | grep -q "$esc" && fail "colour despite NO_COLOR"
start F TERM=dumb
cmd '[1][2]'
colour_screen | grep 'error:' | grep -q "$esc" && fail "colour despite TERM=dumb"
start G NO_COLOR=1 -- --color=always
cmd '[1][2]'
colour_screen | grep 'error:' | grep -q "$esc" || fail "--color=always gave no colour"

echo "cli_tmux.sh: $fails failure(s)"
[ "$fails" = 0 ]
