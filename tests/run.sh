#!/bin/bash
# The test runner: golden script tests (tests/lang/*.wg and examples/*.wg,
# expectations in comments), the random-program route test (tests/gen/),
# C unit tests (build/unit/test_*), and REPL
# tests driven in a terminal (tests/repl/*.sh). Ends with "N passed, N failed".
#
# In a .wg file:
#   # expect: TEXT          the next line of standard output is TEXT
#   # expect error: TEXT    the run fails (non-zero exit) and stderr contains TEXT
#   # args: --backend posit16   extra command-line arguments
# A file NAME.out beside NAME.wg holds the whole expected standard output instead.
# An expected line containing * is matched as a shell glob (timings, sizes).
BIN=${1:-./wengert}
BUILD=${2:-build}
MODE=${3:-fast}
case "$BIN" in /*) ;; *) BIN="$PWD/$BIN" ;; esac
export WENGERT_STDLIB="$PWD/stdlib"
pass=0
fail=0
failed=()
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); failed+=("$1"); echo "FAIL $1"; [ -n "$2" ] && echo "$2" | head -30 | sed 's/^/    /'; }

run_script() {
    local f=$1
    local args
    args=$(sed -n 's/^# args: *//p' "$f" | head -1)
    (cd "$(dirname "$f")" && timeout 120 "$BIN" $args "$(basename "$f")" >"$tmp/out" 2>"$tmp/err"; echo $? >"$tmp/rc")
    local rc
    rc=$(cat "$tmp/rc")
    if [ -f "${f%.wg}.out" ]; then
        cp "${f%.wg}.out" "$tmp/want"
    else
        sed -n 's/.*# expect: \{0,1\}//p' "$f" | grep -v '^error:' >"$tmp/want"
        # lines written as "# expect:" with nothing after mean an empty line
    fi
    local errwant
    errwant=$(sed -n 's/.*# expect error: //p' "$f")
    if [ -n "$errwant" ]; then
        if [ "$rc" = 0 ]; then bad "$f" "expected an error, exit status was 0"; return; fi
        local missing=""
        while IFS= read -r e; do
            grep -qF -- "$e" "$tmp/err" || missing="$missing$e\n"
        done <<<"$errwant"
        if [ -n "$missing" ]; then bad "$f" "$(printf "stderr lacks:\n$missing\nstderr was:\n"; cat "$tmp/err")"; return; fi
    elif [ "$rc" != 0 ]; then
        bad "$f" "$(echo "exit status $rc"; cat "$tmp/err")"; return
    fi
    if ! lines_match "$tmp/want" "$tmp/out"; then bad "$f" "$(diff -u "$tmp/want" "$tmp/out")"; return; fi
    ok
}

# Line by line; an expected line with * matches as a glob (for timings).
lines_match() {
    local want got
    exec 3<"$1" 4<"$2"
    while true; do
        IFS= read -r want <&3; local a=$?
        IFS= read -r got <&4; local b=$?
        if [ $a != 0 ] || [ $b != 0 ]; then exec 3<&- 4<&-; [ $a = $b ]; return; fi
        if [[ "$want" == *"*"* ]]; then
            # shellcheck disable=SC2053
            [[ "$got" == $want ]] || { exec 3<&- 4<&-; return 1; }
        elif [ "$want" != "$got" ]; then exec 3<&- 4<&-; return 1; fi
    done
}

for f in tests/lang/*.wg examples/*.wg; do
    [ -f "$f" ] && run_script "$f"
done

# Random programs: every derivative route agrees (tests/gen/routes.py). One
# entry; on failure, the summary and the first failing program, reduced.
PY=/usr/bin/python3; [ -x "$PY" ] || PY=python3
if "$PY" tests/gen/routes.py --bin "$BIN" --reduce 1 >"$tmp/routes" 2>&1; then ok
else bad tests/gen/routes.py "$(tail -1 "$tmp/routes"; sed -n '/^=====/,$p' "$tmp/routes" | sed -n '2,60p')"; fi

for u in "$BUILD"/unit/test_*; do
    [ -x "$u" ] || continue
    if timeout 300 "$u" >"$tmp/uout" 2>&1; then ok; else bad "$u" "$(tail -20 "$tmp/uout")"; fi
done
if [ "$MODE" = full ]; then
    for u in "$BUILD"/unit/full_*; do
        [ -x "$u" ] || continue
        if timeout 3000 "$u" >"$tmp/uout" 2>&1; then ok; else bad "$u" "$(tail -20 "$tmp/uout")"; fi
    done
fi

for r in tests/repl/*.sh; do
    [ -f "$r" ] || continue
    if WG_BIN="$BIN" timeout 120 bash "$r" >"$tmp/rout" 2>&1; then ok; else bad "$r" "$(tail -30 "$tmp/rout")"; fi
done

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
