#!/bin/bash
# Where a binary finds its standard library without WENGERT_STDLIB (issue
# 25, bug 10): beside it (./wengert), installed (bin/../share/wengert/
# stdlib), or, built a folder or two down inside the source tree, the
# tree's (build/san/wengert, the sanitizer build, said "no standard library
# at /usr/local/share/..." when run from outside the tree). The binary
# under test is copied into each layout and run from elsewhere. Also: the
# stray fuzz log log2 is gone, and fuzz logs cannot be committed again.
BIN=${WG_BIN:-./wengert}
case "$BIN" in /*) ;; *) BIN="$PWD/$BIN" ;; esac
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
unset WENGERT_STDLIB

# finds BINARY: mean (a stdlib function) works, and no warning
finds() {
    local out
    out=$(cd / && "$1" -e 'print(mean([1, 2, 6]))' 2>&1)
    [ "$out" = 3 ] || fail "$2: $out"
}
layout() { # layout DIR BINPATH: the tree's stdlib and marker under DIR, the binary at BINPATH
    mkdir -p "$1/src" "$(dirname "$2")"
    cp -r "$ROOT/stdlib" "$1/stdlib"
    : >"$1/src/wengert.c"
    cp "$BIN" "$2"
}
layout "$T/tree" "$T/tree/build/san/wengert"
finds "$T/tree/build/san/wengert" "two folders down in a source tree (build/san/wengert)"
cp "$BIN" "$T/tree/build/wengert-dyn"
finds "$T/tree/build/wengert-dyn" "one folder down in a source tree (build/wengert-dyn)"
cp "$BIN" "$T/tree/wengert"
finds "$T/tree/wengert" "beside the stdlib (./wengert)"
mkdir -p "$T/inst/bin" "$T/inst/share/wengert"
cp -r "$ROOT/stdlib" "$T/inst/share/wengert/stdlib"; cp "$BIN" "$T/inst/bin/wengert"
finds "$T/inst/bin/wengert" "installed (bin/../share/wengert/stdlib)"
# a folder named stdlib two up that is not a wengert tree is not taken
mkdir -p "$T/other/a/b"; cp -r "$ROOT/stdlib" "$T/other/stdlib"; cp "$BIN" "$T/other/a/b/wengert"
out=$(cd / && "$T/other/a/b/wengert" -e 'print(1)' 2>&1)
grep -qF "no standard library" <<<"$out" || fail "a stdlib outside a source tree was taken: $out"

# log2 (a committed fuzz log) is gone; logs and libFuzzer artifacts are ignored
if git -C "$ROOT" rev-parse --git-dir >/dev/null 2>&1; then
    [ -z "$(git -C "$ROOT" ls-files log2)" ] || fail "log2 is still committed"
    for f in log2 log fuzz-3.log build.log crash-1234abcd leak-99 timeout-abc oom-1 slow-unit-2; do
        git -C "$ROOT" check-ignore -q --no-index "$f" || fail "$f is not ignored"
    done
    git -C "$ROOT" check-ignore -q --no-index tests/fuzz/regress/crash-x.wg && fail "regression seeds are ignored"
fi
[ "$fails" = 0 ] && echo "stdlib_lookup.sh: ok" || exit 1
