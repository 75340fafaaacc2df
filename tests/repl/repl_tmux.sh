#!/bin/bash
# The REPL in a real terminal (tmux): prompt "wg> ", continuation "..> " for an
# open { ( [ or a trailing operator, echo of bare expression values (none for
# nil), located errors that keep the session, Ctrl-C in a loop and at the
# prompt, Tab completion of :ta -> :tape, history in $HOME/.wengert_history.
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

# ---------------------------------------------------------- session A
start A
cmd 'x = 2'
cmd 'x * 21'
expect_line '42'
followed_by 'wg> x = 2' 'wg> x * 21'          # an assignment echoes nothing
followed_by 'wg> x * 21' '42'
cmd 'f = fn() { }'
cmd 'f()'
cmd 'nil'
cmd 'print("mark1")'
expect_line 'mark1'
followed_by 'wg> f()' 'wg> nil'               # a nil value is not echoed
followed_by 'wg> nil' 'wg> print("mark1")'
followed_by 'mark1' 'wg>'                     # print's own nil is not echoed
cmd '"hello"'
expect_line 'hello'
cmd '[1, 2.5]'
expect_line '[1, 2.5]'
cmd '7; 8'                                    # each bare expression echoes
followed_by 'wg> 7; 8' '7'
followed_by '7' '8'

# continuation for an open {, (, [ and a trailing operator
cont 'fn sq(t) {'
cont 'return t * t'
cmd '}'
cmd 'sq(5)'
expect_line '25'
cont 'print(10,'
cmd '20)'
expect_line '10 20'
cont 'y = 100 +'
cmd '23'
cmd 'y'
expect_line '123'
cont 'b = [7,'
cmd '8]'
cmd 'b'
expect_line '[7, 8]'
cont 'if x > 100 {'
cont 'print("big")'
cont '} else {'
cont 'print("small")'
cmd '}'
expect_line 'small'

# an error prints the located message; the next prompt works, variables intact
cmd 'a = [1, 2, 3]'
cmd 'a[5]'
wait_until has_text 'error: index 5 out of range for array of length 3' || fail "no index error"
lines | grep -qE '^<repl [0-9]+>:[0-9]+:3: error: index 5 out of range for array of length 3$' ||
    fail "index error not located as <repl N>:LINE:3"
cmd 'x + 1000'
expect_line '1002'
cmd 'print(undefined_thing)'
wait_until has_text 'undefined_thing' || fail "no undefined-name error"
lines | grep -qE '^<repl [0-9]+>:[0-9]+:7: error: .*undefined_thing' || fail "undefined-name error not located at column 7"
cmd 'a'
expect_line '[1, 2, 3]'
# an error in a function typed earlier shows that function's line
cont 'fn g(t) {'
cont '  return t[5]'
cmd '}'
cmd 'g([1])'
wait_until has_text 'index 5 out of range for array of length 1' || fail "no error from g"
lines | grep -qE '^<repl [0-9]+>:2:12: error: index 5 out of range for array of length 1$' || fail "error in g not located at <repl N>:2:12"
expect_line '      return t[5]'

# Ctrl-C during a long loop: interrupted error, prompt back, variables intact
send 'while true { }'
wait_until last_is 'wg> while true { }' || fail "loop line not shown"
sleep 0.2   # let the loop get going; there is nothing on screen to poll for
tm send-keys -t "$S" C-c
wait_until has_text 'interrupted' || fail "Ctrl-C in a loop printed no 'interrupted'"
lines | grep -qE '^(\^C)?<repl [0-9]+>:[0-9]+:[0-9]+: error: .*interrupted' || fail "interrupted error not located"
wait_until at_prompt || fail "no prompt after Ctrl-C in a loop"
cmd 'x + 2000'
expect_line '2002'
cmd 'd(x * x, x)'                             # the tape is still usable
expect_line '4'
# the loop's own progress is kept: k holds the value it had when Ctrl-C struck
cmd 'k = 0'
send 'nograd { while true { k += 1 } }'
wait_until last_is 'wg> nograd { while true { k += 1 } }' || fail "loop line not shown"
sleep 0.2
tm send-keys -t "$S" C-c
wait_until at_prompt || fail "no prompt after Ctrl-C in a second loop"
cmd 'k > 0'
expect_line 'true'
cmd 'x + 2500'
expect_line '2502'
# Ctrl-C inside a checkpointed loop, and inside the recomputation a
# derivative through one runs: the session and the tape stay intact
cmd 'cw = 0.9'
cmd 'ch = 0.1'
send 'checkpoint while true { ch = tanh(cw * ch + 0.1) }'
wait_until last_is 'wg> checkpoint while true { ch = tanh(cw * ch + 0.1) }' || fail "checkpoint loop line not shown"
sleep 0.2
tm send-keys -t "$S" C-c
wait_until at_prompt || fail "no prompt after Ctrl-C in a checkpointed loop"
cmd 'ch > 0.5'
expect_line 'true'
cmd 'ch = 0.1'
cmd 'checkpoint for i in 0..3000000 { ch = tanh(cw * ch + 0.1) }'
nint=$(screen | grep -c 'interrupted')
send 'd(ch, cw) + 1000'
sleep 0.15
tm send-keys -t "$S" C-c
wait_until at_prompt || fail "no prompt after Ctrl-C in a derivative through a checkpointed loop"
ck_interrupted() { [ "$(screen | grep -c 'interrupted')" -gt "$nint" ]; }
wait_until ck_interrupted || fail "Ctrl-C did not interrupt the recomputation"
cmd 'd(ch, cw) + 2000'
expect_line '2001.1499715244795'
cmd 'ch + 3000'
expect_line '3000.501595967536'
# Ctrl-C while fixedpoint iterates (x = 1 - x never converges; a huge
# maxiter keeps it going): the session, recording and the tape stay intact
cmd 'fa = 0.3'
n_int=$(screen | grep -c 'interrupted')
send 'xf = fixedpoint(fn(x) => 1 - x + 0 * fa, 0.25, 1e-12, 1e9)'
wait_until last_is 'wg> xf = fixedpoint(fn(x) => 1 - x + 0 * fa, 0.25, 1e-12, 1e9)' || fail "fixedpoint line not shown"
sleep 0.2
tm send-keys -t "$S" C-c
more_interrupted() { [ "$(screen | grep -c 'interrupted')" -gt "$n_int" ]; }
wait_until more_interrupted || fail "Ctrl-C in fixedpoint printed no 'interrupted'"
wait_until at_prompt || fail "no prompt after Ctrl-C in fixedpoint"
cmd 'xg = fixedpoint(fn(x) => 0.5 * cos(x) + fa, 0)'
cmd 'd(xg, fa)'
expect_line '0.7593096028446834'
cmd 'd(fa * fa, fa)'
expect_line '0.6'

# :quit leaves and the history is saved
send ':quit'
wait_until ended || fail ":quit did not end the REPL"
[ "$(cat "$T/status.$S")" = 0 ] || fail ":quit exit status $(cat "$T/status.$S"), wanted 0"
wait_until test -s "$H/.wengert_history" || fail "no $H/.wengert_history after :quit"
hist=$(sed 's/\\040/ /g' "$H/.wengert_history" 2>/dev/null)
for entry in 'x = 2' 'x * 21' 'sq(5)' 'a[5]'; do
    grep -qxF -- "$entry" <<<"$hist" || fail "history lacks [$entry]: $(head -c 300 <<<"$hist")"
done

# ---------------------------------------------------------- session B
# Ctrl-C at the prompt drops the half-typed line and gives a fresh prompt
start B
cmd 'x = 5'
tm send-keys -t "$S" -l 'zzz_partial + '
wait_until has_text 'zzz_partial' || fail "typed text not shown"
tm send-keys -t "$S" C-c
wait_until at_prompt || fail "Ctrl-C at the prompt gave no fresh prompt"
cmd 'x + 3000'
expect_line '3005'
has_text 'undefined' && fail "the dropped line was evaluated"
cmd 'x + 4000'
expect_line '4005'

# ---------------------------------------------------------- session C
# Tab completes :ta to :tape; Ctrl-D on an empty line leaves
start C
tm send-keys -t "$S" -l ':ta'
tm send-keys -t "$S" Tab
wait_until last_is 'wg> :tape' || fail "Tab did not complete :ta to :tape"
tm send-keys -t "$S" Enter
wait_until has_text 'tape: ' || fail ":tape after completion printed no 'tape: '"
wait_until at_prompt || fail "no prompt after :tape"
tm send-keys -t "$S" C-d
wait_until ended || fail "Ctrl-D did not end the REPL"
[ "$(cat "$T/status.$S" 2>/dev/null)" = 0 ] || fail "Ctrl-D exit status not 0"

echo "repl_tmux.sh: $fails failure(s)"
[ "$fails" = 0 ]
