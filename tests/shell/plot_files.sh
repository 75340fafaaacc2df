#!/bin/bash
# plot and :tape dot beyond one script's stdout (SPEC "Seeing it"): the
# locale picks braille or ASCII, colour only on a terminal, the SVG that
# plot writes is XML with both curves and a legend, the cone that
# ':tape dot NAME' prints, and pictures drawn by Graphviz when it is here.
BIN=${WG_BIN:-./wengert}
case "$BIN" in /*) ;; *) BIN="$PWD/$BIN" ;; esac
HERE="$(cd "$(dirname "$0")" && pwd)"
[ -n "$WENGERT_STDLIB" ] || export WENGERT_STDLIB="$HERE/../../stdlib"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
run() { "$@" >"$T/out" 2>"$T/err"; rc=$?; }
ok_run() { [ "$rc" = 0 ] || fail "$1: exit status $rc ($(head -3 "$T/err"))"; }
out_has() { grep -qF -- "$1" "$T/out" || fail "$2: stdout lacks [$1]"; }
out_lacks() { ! grep -qF -- "$1" "$T/out" || fail "$2: stdout has [$1]"; }
clean_env() { env -u LC_ALL -u LC_CTYPE -u LANG -u NO_COLOR "$@"; }
cd "$T"
SIN='plot(fn(x) => sin(x), -3, 3)'
ARR='plot([3, 1, 4, 1, 5, 9, 2, 6])'

# Locale: ASCII marks unless the locale is UTF-8; LC_ALL wins over LANG.
run clean_env LANG=C "$BIN" -e "$SIN
$ARR"
ok_run "ascii"
cmp -s "$T/out" "$HERE/plot_ascii.txt" || fail "ascii plot differs: $(diff "$HERE/plot_ascii.txt" "$T/out" | head -10)"
LC_ALL=C run clean_env LANG=C LC_ALL=POSIX "$BIN" -e "$SIN"
grep -q $'\xe2' "$T/out" && fail "LC_ALL=POSIX over LANG: not ASCII"
run clean_env "$BIN" -e "$SIN"
grep -q $'\xe2' "$T/out" && fail "no locale at all: not ASCII"
run clean_env LANG=C LC_CTYPE=en_US.utf8 "$BIN" -e "$SIN"
out_has "⠒⠒ f   ⠂⠂ f'" "LC_CTYPE=en_US.utf8 gives braille"
out_lacks $'\033[' "no colour when stdout is not a terminal"

# Colour only on a terminal, never with NO_COLOR or TERM=dumb.
if command -v script >/dev/null; then
    clean_env LANG=C.UTF-8 TERM=xterm script -qec "$BIN -e '$SIN'" /dev/null >"$T/out" 2>&1
    out_has $'\033[36m' "colour on a terminal (f)"
    out_has $'\033[35m' "colour on a terminal (f')"
    clean_env LANG=C.UTF-8 TERM=xterm NO_COLOR=1 script -qec "$BIN -e '$SIN'" /dev/null >"$T/out" 2>&1
    out_lacks $'\033[' "NO_COLOR"
    clean_env LANG=C.UTF-8 TERM=dumb script -qec "$BIN -e '$SIN'" /dev/null >"$T/out" 2>&1
    out_lacks $'\033[' "TERM=dumb"
fi

# SVG files, in every backend; the tape stays as it was.
PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(command -v python3)
for b in float64 float32 float16 bfloat16 posit8 posit16 posit32; do
    run "$BIN" --backend "$b" -e 'x = 2; y = x * x
:tape
plot(fn(t) => sin(t) * x, -3, 3, "f.svg")
plot(fn(t) => tan(t), -3, 3, "tan.svg")
plot([1, 0.5, 0.25, 0.125, 0/0, 0.03], "a.svg")
:tape'
    ok_run "svg in $b"
    out_has "wrote f.svg" "svg in $b"
    [ "$(grep -c '^tape: 2 entries' "$T/out")" = 2 ] || fail "$b: the tape changed: $(grep '^tape' "$T/out")"
    [ -n "$PY" ] || continue
    BACKEND=$b "$PY" - <<'PYEOF' || fail "svg check in $b"
import os, xml.etree.ElementTree as ET
ns = '{http://www.w3.org/2000/svg}'
def groups(path):
    root = ET.parse(path).getroot()
    assert root.tag == ns + 'svg', root.tag
    return {g.get('id'): g for g in root.iter(ns + 'g')}
g = groups('f.svg')
assert len(g['f'].findall(ns + 'polyline')) == 1, 'f: one unbroken curve'
assert len(g['df'].findall(ns + 'polyline')) == 1, "f': one unbroken curve"
texts = [t.text for t in g['legend'].iter(ns + 'text')]
assert texts[0] == 'f' and texts[1].startswith('f\u2032'), texts
g = groups('tan.svg')
if os.environ['BACKEND'] == 'float64':
    assert len(g['f'].findall(ns + 'polyline')) == 3, 'tan: broken at its two poles'
g = groups('a.svg')
assert 'df' not in g and len(g['f'].findall(ns + 'polyline')) == 2, 'array: broken at nan'
PYEOF
done

# Extreme ranges end, and write well-formed pictures.
run timeout 20 "$BIN" -e 'plot(fn(x) => x * x, -1e308, 1e308)
plot(fn(x) => x, 1, 1 + 1e-15)
plot(fn(x) => x, 0, 1e-320)
plot([0/0, 1/0, -1/0])
plot([7])
plot(fn(x) => x, 1, 1 + 1e-15, "narrow.svg")
plot(fn(x) => x * x, -1e308, 1e308, "wide.svg")
plot([0/0], "nan.svg")'
ok_run "extreme ranges"
out_has "a[i] against i (1 value)" "one value"
if [ -n "$PY" ]; then
    "$PY" -c 'import xml.etree.ElementTree as E
for f in ("narrow.svg", "wide.svg", "nan.svg"): E.parse(f)' || fail "extreme ranges: SVG not XML"
fi

# :tape dot NAME: the cone alone on stdout; a NAME that is not a variable.
run "$BIN" -e 'x = 2; z = x + 1; y = sin(x) * x
:tape dot y'
ok_run "tape dot NAME"
out_has 'label="the entries that y depends on";' "tape dot NAME"
out_has 'n3 [label="#3 sin' "tape dot NAME"
out_lacks 'n2 [' "tape dot NAME leaves out z"
run "$BIN" -e 'x = 2
:tape dot nosuch'
grep -qF "no variable named 'nosuch'" "$T/err" || fail "tape dot unknown NAME: $(cat "$T/err")"
run "$BIN" -e 'x = 2; y = x * 3
:tape dot y cone.gv
:tape dot all.dot'
out_has "wrote cone.gv (3 entries)" "tape dot NAME FILE"
grep -q '^digraph tape' cone.gv all.dot || fail "DOT files"

# Pictures through Graphviz, or an error that says how to get it.
run env PATH=/nonexistent "$BIN" -e 'x = 2
:tape dot x.svg'
[ "$rc" != 0 ] || fail "no dot: exit status 0"
grep -qF "apt-get install graphviz" "$T/err" || fail "no dot: $(cat "$T/err")"
if command -v dot >/dev/null; then
    # a third derivative expands the second (a second alone records nothing)
    run "$BIN" -e 'x = 2; y = x * x; g = d(y, x); h = d(g, x); k = d(h, x)
:tape dot k k.svg
:tape dot all.png'
    ok_run "dot render"
    out_has "wrote k.svg (6 entries)" "dot render"
    grep -q "expansion of d(#3)" k.svg || fail "k.svg lacks the expansion cluster"
    [ "$(head -c 4 all.png | tail -c 3)" = PNG ] || fail "all.png is not a PNG"
fi

[ "$fails" = 0 ]
