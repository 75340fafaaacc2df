#!/bin/bash
# :tape dot on a tape too big to draw, and a Graphviz that writes nothing
# (issue 25, bug 9). After a 47-million-entry loop ':tape dot FILE.png'
# wrote 4.5 GB of DOT for three minutes, and when Graphviz was stopped
# (it exits 0 on SIGINT) said 'wrote FILE.png' of a file that was not
# there. Now a picture past 5000 entries and DOT text past 10^6 are
# refused at once, saying how to draw one variable's cone; dot draws into
# a temporary file that becomes FILE only when it is there, so a dot that
# writes nothing gives an error and leaves an old FILE as it was.
# (Ctrl-C while dot runs: tests/repl/repl_interrupt_dot.sh.)
BIN=${WG_BIN:-./wengert}
case "$BIN" in /*) ;; *) BIN="$PWD/$BIN" ;; esac
[ -n "$WENGERT_STDLIB" ] || export WENGERT_STDLIB="$(cd "$(dirname "$0")/../.." && pwd)/stdlib"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
run() { "$@" >"$T/out" 2>"$T/err"; rc=$?; }
cd "$T" || exit 1

# a picture of 12002 entries: refused, nothing written, the cone is drawn
# (by a stand-in dot that copies its input: Graphviz need not be here)
mkdir bin
printf '#!/bin/sh\n# dot -Tfmt -o OUT IN\ncp "$4" "$3"\n' >bin/dot
chmod +x bin/dot
run env PATH="$T/bin:$PATH" "$BIN" -e 'x = 2
a = range(6000) * x
y = a[3] * a[4]
:tape dot all.svg'
[ "$rc" = 1 ] || fail "a picture of 12002 entries: exit status $rc"
grep -qF "<-e>:4:1: error: the tape has 12002 entries, too many for a picture (at most 5000): draw what one variable depends on with ':tape dot NAME all.svg', or write the DOT text with ':tape dot FILE.dot'" "$T/err" ||
    fail "a picture of 12002 entries: $(cat "$T/err")"
[ -e all.svg ] && fail "a refused picture was written"
run env PATH="$T/bin:$PATH" "$BIN" -e 'x = 2
a = range(6000) * x
y = a[3] * a[4]
:tape dot y y.svg'
[ "$rc" = 0 ] || fail "the cone of y: exit status $rc: $(cat "$T/err")"
grep -qxF "wrote y.svg (6 entries)" "$T/out" || fail "the cone of y: $(cat "$T/out")"
grep -q '^digraph tape' y.svg || fail "the cone of y: y.svg is not what dot was given"
[ "$(stat -c %a y.svg)" = "$(umask -S >/dev/null; touch plain; stat -c %a plain)" ] || fail "y.svg has mode $(stat -c %a y.svg)"
ls | grep -q 'wengert-' && fail "a temporary file was left: $(ls)"

# a cone too big for a picture says so, naming the variable
run env PATH="$T/bin:$PATH" "$BIN" -e 'a = range(6000) * 2
s = sum(a)
:tape dot s s.png'
grep -qF "<-e>:3:1: error: 's' depends on 6001 entries, too many for a picture (at most 5000): draw a variable made in fewer steps (a smaller case of the computation, after ':tape clear'), or write the DOT text with ':tape dot NAME FILE.dot'" "$T/err" ||
    fail "a big cone: $(cat "$T/err")"

# DOT text past a million entries is refused too
run "$BIN" -e 'a = range(1200000) * 2
:tape dot a.dot'
grep -qF "<-e>:2:1: error: the tape has 1200000 entries, too many for DOT text (at most 1000000): draw what one variable depends on with ':tape dot NAME a.dot'" "$T/err" ||
    fail "big DOT text: $(cat "$T/err")"
[ -e a.dot ] && fail "refused DOT text was written"

# a dot that exits 0 and writes nothing (as Graphviz stopped by Ctrl-C):
# an error, not 'wrote', and an old picture stays as it was
printf '#!/bin/sh\nexit 0\n' >bin/dot
echo old >old.svg
run env PATH="$T/bin:$PATH" "$BIN" -e 'x = 2
y = x * x
:tape dot old.svg'
[ "$rc" = 1 ] || fail "a dot that wrote nothing: exit status $rc"
grep -q wrote "$T/out" && fail "a dot that wrote nothing: said $(cat "$T/out")"
grep -qF "<-e>:3:1: error: Graphviz's dot wrote nothing for 'old.svg'" "$T/err" || fail "a dot that wrote nothing: $(cat "$T/err")"
[ "$(cat old.svg)" = old ] || fail "the old picture was changed"
ls | grep -q 'wengert-' && fail "a temporary file was left: $(ls)"

[ "$fails" = 0 ] && echo "tape_dot_limits.sh: ok" || exit 1
