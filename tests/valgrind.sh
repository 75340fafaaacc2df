#!/bin/bash
# Memory check under valgrind: every example and every 5th golden test (in
# name order) must run with no memory error and no definite leak at exit.
# A script's own error (exit status 1 or 2) is fine; valgrind's findings exit 99.
# Ends with "N passed, N failed", as tests/run.sh does.
BIN=${1:-./wengert}
case "$BIN" in /*) ;; *) BIN="$PWD/$BIN" ;; esac
export WENGERT_STDLIB="$PWD/stdlib" BIN
command -v valgrind >/dev/null || { echo "valgrind is not installed (make deps)"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export tmp

check() {
    local f=$1 args log
    args=$(sed -n 's/^# args: *//p' "$f" | head -1)
    log="$tmp/$(echo "$f" | tr / _).log"
    (cd "$(dirname "$f")" && timeout 300 valgrind -q --error-exitcode=99 --leak-check=full \
        --errors-for-leak-kinds=definite --show-leak-kinds=definite \
        "$BIN" $args "$(basename "$f")" >/dev/null 2>"$log")
    local rc=$?
    if [ $rc -gt 2 ]; then        # 99: valgrind found something; 124: timeout; 128+: a signal
        echo "FAIL $f (status $rc)"; grep '^==' "$log" | head -40 | sed 's/^/    /'
    else
        echo "ok $f"
    fi
}
export -f check

{ ls examples/*.wg; ls tests/lang/*.wg | awk 'NR % 5 == 1'; } |
    xargs -P "$(nproc)" -I{} bash -c 'check {}' >"$tmp/results"
grep -v '^ok ' "$tmp/results"
pass=$(grep -c '^ok ' "$tmp/results")
fail=$(grep -c '^FAIL ' "$tmp/results")
echo "valgrind: $pass passed, $fail failed"
[ "$fail" = 0 ]
