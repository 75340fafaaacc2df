#!/bin/bash
# The command line outside a terminal: --help lists every option and points
# at the man page; the man page renders cleanly and `make install-man`
# installs it; usage mistakes exit 2; colour only when asked for (never in a
# pipe by default, never with NO_COLOR or TERM=dumb unless --color=always);
# -i after a piped script reads more input in the same session.
BIN=${WG_BIN:-./wengert}
case "$BIN" in /*) ;; *) BIN="$PWD/$BIN" ;; esac
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
[ -n "$WENGERT_STDLIB" ] || export WENGERT_STDLIB="$ROOT/stdlib"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

help=$("$BIN" --help) || fail "--help exit status"
for w in '-e CODE' '-i' '--backend NAME' '--color=WHEN' '--' 'FILE [ARG...]' 'args' 'man wengert' '--version' 'NO_COLOR'; do
    grep -qF -- "$w" <<<"$help" || fail "--help does not mention $w"
done

# :help fits on one screen, and every name it lists has an entry with an example
overview=$("$BIN" -e ':help')
[ "$(wc -l <<<"$overview")" -le 22 ] || fail ":help is longer than a screen"
names=$(sed 1d <<<"$overview" | sed -n 's/^[a-z]*: \{1,\}//p; s/^ \{11,\}//p' | grep -v "^x = 2" | tr ' ' '\n' | sed '/^$/d')
[ "$(wc -l <<<"$names")" -ge 80 ] || fail ":help lists too few names: $names"
set -f
for n in $names; do
    case "$n" in \[|\]|\(|\)) continue ;; esac
    "$BIN" -e ":help $n" 2>&1 | grep -q '^  example: ' || fail ":help $n has no example"
done

# the man page: no groff warnings, renders with man, installs
[ -z "$(groff -man -ww -z "$ROOT/docs/wengert.1" 2>&1)" ] || fail "groff warns about the man page"
page=$(MANWIDTH=80 man -l "$ROOT/docs/wengert.1" 2>"$T/manerr") || fail "man -l failed: $(cat "$T/manerr")"
for w in NAME SYNOPSIS OPTIONS COMMANDS ENVIRONMENT FILES EXAMPLES WENGERT_STDLIB NO_COLOR ':save FILE' ':load FILE' '--color=WHEN' '-i'; do
    grep -qF -- "$w" <<<"$page" || fail "the man page lacks $w"
done
make -s -C "$ROOT" install-man DESTDIR="$T/dest" PREFIX=/usr >/dev/null || fail "make install-man"
[ -f "$T/dest/usr/share/man/man1/wengert.1" ] || fail "make install-man did not install man1/wengert.1"

# usage mistakes
"$BIN" --bogus >/dev/null 2>"$T/err"; [ $? = 2 ] || fail "unknown option: exit status not 2"
grep -qF "unknown option '--bogus'" "$T/err" || fail "unknown option message"
"$BIN" -e >/dev/null 2>&1; [ $? = 2 ] || fail "-e without code: exit status not 2"
"$BIN" --color=sometimes -e 1 >/dev/null 2>"$T/err"; [ $? = 2 ] || fail "--color=sometimes accepted"
"$BIN" /nonexistent/x.wg 2>"$T/err"; [ $? = 1 ] || fail "missing file: exit status"
grep -qF "cannot open '/nonexistent/x.wg': No such file or directory" "$T/err" || fail "missing file message: $(cat "$T/err")"

"$BIN" "$T" 2>"$T/err"; [ $? = 1 ] || fail "a directory as FILE: exit status"
grep -qF "cannot open '$T': Is a directory" "$T/err" || fail "a directory as FILE: message $(cat "$T/err")"

# colour: none in a pipe by default, escape codes with --color=always
esc=$(printf '\033')
"$BIN" -e '[1][2]' 2>"$T/err"
grep -q "$esc" "$T/err" && fail "escape codes on a pipe"
grep -qF "error: index 2 out of range" "$T/err" || fail "plain error text"
"$BIN" --color=always -e '[1][2]' 2>"$T/err"
grep -qF "${esc}[1;31merror:${esc}[0m" "$T/err" || fail "--color=always: no red error:"
grep -qF "${esc}[1;32m^${esc}[0m" "$T/err" || fail "--color=always: no green caret"
NO_COLOR=1 "$BIN" --color=always -e '[1][2]' 2>"$T/err"
grep -q "$esc" "$T/err" || fail "--color=always loses to NO_COLOR"
"$BIN" --color=never -e '[1][2]' 2>"$T/err"
grep -q "$esc" "$T/err" && fail "--color=never printed escapes"

# -i: the script, then more input (here from a pipe) in the same session
out=$(printf 'print(x * 2)\n' | "$BIN" -e 'x = 21' -i 2>&1)
grep -qx '42' <<<"$out" || fail "-i did not continue the session: $out"

[ "$fails" = 0 ] && echo "ok" || exit 1
