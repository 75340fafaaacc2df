#!/bin/bash
# `make run` builds quietly: linking ./wengert (statically, where the
# archives are) shows none of libedit's expected getpwent/getpwnam_r
# warnings, which a newcomer reads as a failed build; the binary works.
# Links the plain build's objects into a scratch path (SKIP without them).
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
if ! [ -f "$root/build/main.o" ]; then
    echo "SKIP tests/shell/build_quiet.sh: no plain build in build/ (make first)"
    exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
out=$(make -s -C "$root" --no-print-directory SAN= BIN="$tmp/wengert" "$tmp/wengert" 2>&1)
rc=$?
[ $rc = 0 ] || { echo "FAIL: the link failed ($rc): $out"; exit 1; }
[ -z "$out" ] || { echo "FAIL: the quiet build printed:"; echo "$out"; exit 1; }
[ "$(WENGERT_STDLIB="$root/stdlib" "$tmp/wengert" -e 'print(1 + 1)')" = 2 ] || { echo "FAIL: the binary does not run"; exit 1; }
# and a real link error still shows (the filter only drops the expected lines)
out=$(make -s -C "$root" --no-print-directory SAN= BIN="$tmp/wengert2" "$tmp/wengert2" BINLIBS=-lnonexistent_wg 2>&1)
[ $? != 0 ] && grep -q 'nonexistent_wg' <<<"$out" || { echo "FAIL: a link error was hidden: $out"; exit 1; }
echo "build_quiet.sh: ok"
