#!/bin/bash
# `wengert --kernel` (src/kernel.c) without Jupyter: JSON lines in, JSON
# lines out, compared as jansson writes them (compact, keys in order).
set -u
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"; [ -n "${COPROC_PID:-}" ] && kill "$COPROC_PID" 2>/dev/null' EXIT
cd "$tmp"
fail=0
coproc "$WG_BIN" --kernel

# Sends one request line; reads answers up to the one with "done".
ask() {
    printf '%s\n' "$1" >&"${COPROC[1]}"
    got=""
    local line
    while IFS= read -r -t 20 line <&"${COPROC[0]}"; do
        got+="$line"$'\n'
        [[ "$line" == '{"done"'* ]] && return 0
    done
    echo "FAIL no answer to $1"; fail=1
}
expect() {   # the whole answer
    [ "$got" == "$1"$'\n' ] || { echo "FAIL: after $2"; echo "  want: $1"; echo "  got:  $got"; fail=1; }
}
contains() {
    [[ "$got" == *"$1"* ]] || { echo "FAIL: after $2 no $1"; echo "  got: ${got:0:400}"; fail=1; }
}

IFS= read -r -t 20 hello <&"${COPROC[0]}"
[[ "$hello" == '{"ready":"wengert","version":'* ]] || { echo "FAIL hello: $hello"; fail=1; }

ask '{"op":"run","code":"1 + 1","name":"In[1]"}'
expect '{"done":"ok","value":"2"}' echo
ask '{"op":"run","code":"x = 2\nprint(\"x is\", x)\ny = x*x + sin(x)\nd(y, x)\n","name":"In[2]"}'
expect '{"stream":"stdout","text":"x is 2\n"}
{"done":"ok","value":"3.583853163452858"}' derivative
ask '{"op":"run","code":"x = 5","name":"In[3]"}'
expect '{"done":"ok","value":null}' "no value"
ask '{"op":"run","code":"z = 1\nw = y * nope\n","name":"In[4]"}'
expect '{"done":"error","error":{"message":"undefined variable '"'nope'"'","file":"In[4]","line":2,"col":9,"report":"In[4]:2:9: error: undefined variable '"'nope'"'\n    w = y * nope\n            ^\n"}}' error
ask '{"op":"run","code":"z + x"}'
expect '{"done":"ok","value":"6"}' "after the error"
ask '{"op":"check","code":"f = fn(t) {\n"}'
expect '{"done":"incomplete"}' check
ask '{"op":"check","code":"f = fn(t) { t }"}'
expect '{"done":"complete"}' check
ask '{"op":"check","code":"f = = 2"}'
expect '{"done":"invalid"}' check
ask '{"op":"complete","code":"y + pri","cursor":7}'
expect '{"done":"ok","matches":["print"],"start":4,"end":7}' complete
ask '{"op":"complete","code":":tape st","cursor":8}'
contains '"matches":["stats"' "complete :tape"
ask '{"op":"complete","code":":ba","cursor":3}'
expect '{"done":"ok","matches":[":backend"],"start":0,"end":3}' "complete :command"
ask '{"op":"inspect","code":"q = sin(3)","cursor":5}'
contains '"found":true,"text":"sin(x):' inspect
ask '{"op":"inspect","code":"nothing_here","cursor":3}'
expect '{"done":"ok","found":false,"text":""}' "inspect unknown"
ask '{"op":"run","code":"plot(fn(t) => t^2, -1, 1)"}'
contains '{"display":{"image/svg+xml":"<?xml' plot
contains '"text/plain":"' "plot fallback"
ask '{"op":"run","code":":tape dot y"}'
if command -v dot >/dev/null; then contains '{"display":{"image/svg+xml":' ":tape dot"
else contains '{"stream":"stdout","text":"digraph' ":tape dot"; fi
ask '{"op":"run","code":":tape stats"}'
contains '{"stream":"stdout","text":"' ":tape stats"

# bytes that are not UTF-8 (a script's strings) reach the notebook as '?'
printf 'print("a\xff\xe9b \xc3\xa9")\n' >bytes.wg
ask '{"op":"run","code":":load bytes.wg"}'
expect '{"stream":"stdout","text":"a??b \u00E9\n"}
{"done":"ok","value":null}' "not UTF-8"

# output streams while the cell runs; SIGINT stops it, and the session stays
printf '%s\n' '{"op":"run","code":"print(\"started\")\nn = 0\nwhile true { n = n + 1 }"}' >&"${COPROC[1]}"
IFS= read -r -t 5 line <&"${COPROC[0]}"
[ "$line" == '{"stream":"stdout","text":"started\n"}' ] || { echo "FAIL output while running: $line"; fail=1; }
sleep 0.2
kill -INT "$COPROC_PID"
IFS= read -r -t 20 line <&"${COPROC[0]}"
[[ "$line" == '{"done":"error","error":{"message":"interrupted"'* ]] || { echo "FAIL interrupt: $line"; fail=1; }
ask '{"op":"run","code":"n > 0"}'
expect '{"done":"ok","value":"true"}' "after the interrupt"

# A nograd block that an error leaves still ends (src/eval.c, eval_chunk):
# what it had assigned becomes places, as when it ends normally.
ask '{"op":"run","code":"ngx = 1"}'
ask '{"op":"run","code":"nograd { ngx = 5; ngy = [1, 2]; ngy[0] = 3; error(\"stop\") }"}'
contains '"message":"stop"' "an error inside nograd"
ask '{"op":"run","code":"ngz = ngx * ngy[0]\n[d(ngz, ngx), d(ngz, ngy)[0], d(ngz, ngy)[1]]"}'
contains '"value":"[3, 5, 0]"' "derivatives after an error inside nograd"
ask '{"op":"run","code":"nograd { ngx = 7 }\nd(ngx * ngx, ngx)"}'
contains '"value":"14"' "a nograd block after the error"

ask '{"op":"reset"}'
ask '{"op":"run","code":"x"}'
contains "undefined variable 'x'" reset

exec {COPROC[1]}>&-
wait "$COPROC_PID"
rc=$?
[ "$rc" = 0 ] || { echo "FAIL exit status $rc at the end of input"; fail=1; }
exit $fail
