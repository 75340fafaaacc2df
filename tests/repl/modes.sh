#!/bin/bash
# Ways of running wengert (SPEC "Running it", "REPL commands"): -e, script file,
# standard input that is not a terminal, exit statuses, --help, --version, and
# :-commands inside scripts (:vars :help :time :load :reset :quit).
BIN=${WG_BIN:-./wengert}
case "$BIN" in /*) ;; *) BIN="$PWD/$BIN" ;; esac
[ -n "$WENGERT_STDLIB" ] || export WENGERT_STDLIB="$(cd "$(dirname "$0")/../.." && pwd)/stdlib"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
trap 'exit 1' INT TERM HUP
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
# run CMD...: stdout to $T/out, stderr to $T/err, status to $rc
run() { "$@" >"$T/out" 2>"$T/err"; rc=$?; }
want_out() { # exact stdout
    if [ "$(cat "$T/out")" != "$1" ]; then fail "$2: stdout was [$(cat "$T/out")], wanted [$1]"; fi
}
want_rc0() { [ "$rc" = 0 ] || fail "$1: exit status $rc, wanted 0 (stderr: $(head -3 "$T/err"))"; }
want_rcbad() { [ "$rc" != 0 ] || fail "$1: exit status 0, wanted non-zero"; }
out_has() { grep -qF -- "$1" "$T/out" || fail "$2: stdout lacks [$1]: [$(head -20 "$T/out")]"; }
err_has() { grep -qF -- "$1" "$T/err" || fail "$2: stderr lacks [$1]: [$(head -5 "$T/err")]"; }
err_empty() { [ ! -s "$T/err" ] || fail "$1: stderr not empty: [$(head -5 "$T/err")]"; }
cd "$T"

# -e CODE runs CODE as a script
run "$BIN" -e 'x = 2; print(x * 21)'
want_rc0 "-e"; want_out "42" "-e"; err_empty "-e"
run "$BIN" -e 'print("a")
print("b")'
want_out "a
b" "-e multi-line"
# -e: bare expressions are not echoed
run "$BIN" -e '1 + 2'
want_rc0 "-e bare"; want_out "" "-e bare expression must not echo"
# -e: an error is non-zero, on stderr, and stops the rest
run "$BIN" -e 'print(1); print(nope); print(2)'
want_rcbad "-e error"; want_out "1" "-e error stops"; err_has "error:" "-e error"; err_has "nope" "-e error"

# a script file
printf 'x = 3\ny = x * x\nprint(y)\n' >ok.wg
run "$BIN" ok.wg
want_rc0 "script"; want_out "9" "script"; err_empty "script"
printf 'print("first")\na = [1, 2, 3]\nb = a[5]\nprint("second")\n' >bad.wg
run "$BIN" bad.wg
want_rcbad "script error"; want_out "first" "script error stops at first error"
err_has "bad.wg:3:7: error: index 5 out of range for array of length 3" "script error location"
# a syntax error in a script: nothing runs, non-zero
printf 'print("first")\nx = (1 +\n' >syn.wg
run "$BIN" syn.wg
want_rcbad "syntax error"; want_out "" "syntax error runs nothing"; err_has "syn.wg:" "syntax error names file"
# a missing script file: non-zero and a message
run "$BIN" no_such_file.wg
want_rcbad "missing file"; [ -s "$T/err" ] || fail "missing file: no message on stderr"

# standard input that is not a terminal: a script, no prompt, no echo
printf 'x = 4\nx\nx * 2\nprint(x + 1)\n' | "$BIN" >"$T/out" 2>"$T/err"; rc=$?
want_rc0 "stdin"; want_out "5" "stdin: no prompt, no echo"; err_empty "stdin"
grep -q 'wg>' "$T/out" "$T/err" && fail "stdin: a prompt was printed"
printf 'print(1)\nerror("stop here")\nprint(2)\n' | "$BIN" >"$T/out" 2>"$T/err"; rc=$?
want_rcbad "stdin error"; want_out "1" "stdin error stops"; err_has "stop here" "stdin error message"
"$BIN" <ok.wg >"$T/out" 2>"$T/err"; rc=$?
want_rc0 "stdin redirect"; want_out "9" "stdin redirect"

printf 'print(1)\nx = = 2\n' | "$BIN" >"$T/out" 2>"$T/err"; rc=$?
want_rcbad "stdin syntax error"; want_out "" "stdin syntax error runs nothing"; err_has ":2:5: error:" "stdin syntax error location"

# --help and --version
run "$BIN" --help
want_rc0 "--help"; grep -qi 'usage' "$T/out" || fail "--help: no usage on stdout"
out_has "-e" "--help mentions -e"; out_has "--backend" "--help mentions --backend"
run "$BIN" --version
want_rc0 "--version"; grep -qE '^wengert [0-9]+\.[0-9]+' "$T/out" || fail "--version: [$(cat "$T/out")]"
run "$BIN" --no-such-option
want_rcbad "unknown option"

# --backend NAME starts in that backend; a bad name or a missing -e argument is an error
run "$BIN" --backend float32 -e 'print(1 / 3)
:backend'
want_rc0 "--backend float32"; head -1 "$T/out" | grep -qx '0.33333334' || fail "--backend float32: 1/3 printed [$(head -1 "$T/out")]"
out_has "float32" ":backend after --backend float32"
run "$BIN" -e ':backend'
out_has "float64" ":backend by default"
run "$BIN" --backend no_such_backend -e 'print(1)'
want_rcbad "--backend bad name"; want_out "" "--backend bad name runs nothing"; [ -s "$T/err" ] || fail "--backend bad name: no message"
run "$BIN" -e
want_rcbad "-e without code"

# :vars in a script lists variables with values
printf 'alpha = 7\nbeta = [1, 2]\n:vars\n' >vars.wg
run "$BIN" vars.wg
want_rc0 ":vars"; grep -qE '^alpha = 7( |$)' "$T/out" || fail ":vars: no 'alpha = 7' line: [$(cat "$T/out")]"
grep -qE '^beta = \[1, 2\]( |$)' "$T/out" || fail ":vars: no 'beta = [1, 2]' line"

# :help, and :help NAME for the stdlib and builtins: one doc line naming it
run "$BIN" -e ':help'
want_rc0 ":help"; [ "$(wc -l <"$T/out")" -ge 3 ] || fail ":help printed too little"
for name in relu sigmoid softplus mean norm linspace \
    print len zeros ones sum prod dot view sin cos tan asin acos atan atan2 \
    sinh cosh tanh exp log sqrt abs sign floor min max assert error type pi; do
    run "$BIN" -e ":help $name"
    want_rc0 ":help $name"
    grep -q "^$name\b" "$T/out" || fail ":help $name: no line starting with the name: [$(cat "$T/out")]"
done

run "$BIN" -e ':help syntax'
want_rc0 ":help syntax"; [ -s "$T/out" ] || fail ":help syntax printed nothing"

# :time runs its statement, then reports the time and tape entries
printf ':time y = 2 + 3\nprint(y)\n' >time.wg
run "$BIN" time.wg
want_rc0 ":time"; tail -1 "$T/out" | grep -qx 5 || fail ":time did not run its statement: [$(cat "$T/out")]"
grep -qi 'time' "$T/out" || fail ":time printed no time"
grep -qi 'tape' "$T/out" || fail ":time printed no tape count"

# :load FILE, a relative path from the current directory
mkdir -p sub
printf 'fn triple(t) { return 3 * t }\nloaded = 11\n' >sub/lib.wg
printf ':load sub/lib.wg\nprint(triple(loaded))\n' >load.wg
run "$BIN" load.wg
want_rc0 ":load"; want_out "33" ":load relative"
(cd sub && "$BIN" -e ':load lib.wg
print(loaded)' >"$T/out" 2>"$T/err"); rc=$?
want_rc0 ":load from cwd"; want_out "11" ":load from the current directory"

# an error in a loaded file names that file and line, and stops the loading script
printf 'y = 1\nz = [1][3]\n' >sub/lbad.wg
printf 'print(1)\n:load sub/lbad.wg\nprint(2)\n' >lmain.wg
run "$BIN" lmain.wg
want_rcbad ":load error"; want_out "1" ":load error stops the script"
err_has "lbad.wg:2:9: error: index 3 out of range for array of length 1" ":load error location"

# an error inside a function from a loaded file, called later, is located in that file
printf 'fn bad(t) {\n    return t[5]\n}\n' >sub/lfn.wg
printf 'x = 1\n:load sub/lfn.wg\nprint(bad([1]))\n' >lm2.wg
run "$BIN" lm2.wg
want_rcbad ":load fn error"; err_has "lfn.wg:2:14: error: index 5 out of range for array of length 1" ":load fn error location"
err_has "    return t[5]" ":load fn error shows the loaded file's line"

# :reset gives a fresh session: variables gone, builtins and stdlib still there
printf 'x = 1\n:reset\nprint(pi, relu(-1))\nprint(x)\n' >reset.wg
run "$BIN" reset.wg
want_rcbad ":reset then undefined x"
tail -1 "$T/out" | grep -qx '3.141592653589793 0' || fail ":reset: builtins/stdlib after reset: [$(cat "$T/out")]"
err_has "reset.wg:4:7: error:" ":reset: x is undefined afterwards"

# :quit stops a script, status 0
printf 'print("a")\n:quit\nprint("b")\n' >quit.wg
run "$BIN" quit.wg
want_rc0 ":quit"; want_out "a" ":quit stops the script"
printf 'print("a")\n:quit\nprint("b")\n' | "$BIN" >"$T/out" 2>"$T/err"; rc=$?
want_rc0 ":quit stdin"; want_out "a" ":quit stops a piped script"

# an unknown command is an error
run "$BIN" -e ':frobnicate'
want_rcbad "unknown command"; err_has "error" "unknown command message"

echo "modes.sh: $fails failure(s)"
[ "$fails" = 0 ]
