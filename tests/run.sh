#!/bin/bash
# The test runner: golden script tests (tests/lang/*.wg and examples/*.wg,
# expectations in comments), the random-program route test (tests/gen/),
# C unit tests (build/unit/test_*), REPL tests driven in a terminal
# (tests/repl/*.sh), and shell tests of what one script cannot check alone
# (tests/shell/*.sh: files written, locales, colour; a line of theirs that
# starts with SKIP is shown).
# Ends with "N passed, N failed". WG_ONLY=GLOB runs just those scripts.
#
# In a .wg file:
#   # expect: TEXT          the next line of standard output is TEXT
#   # expect error: TEXT    the run fails (non-zero exit) and stderr contains TEXT
#   # expect stderr: TEXT   the run succeeds and stderr contains TEXT (notes)
#   # expect no stderr      the run succeeds and writes nothing on stderr
#   # args: --backend posit16   extra command-line arguments, before the file
#                               (shell words: -e 'print(1)' is one option)
#   # script-args: a "b c"      arguments after the file (the script's args)
#   # stdin: FILE               standard input from FILE (beside the test)
#   # env: LANG=C.UTF-8     environment for the run (LC_ALL, LC_CTYPE and
#                           NO_COLOR are unset first): plots depend on it
#   # fast paths only: WHY  skipped under WENGERT_SLOW=1 (make test-slow): what it
#                           expects is the fast paths' tape layout, not a value
# A file NAME.out beside NAME.wg holds the whole expected standard output instead
# (for pictures; any "# expect:" lines must then be lines of it); a file
# NAME.err the whole expected standard error (carets, tracebacks).
# An expected line containing * is matched as a shell glob (timings, sizes),
# except in .out and .err files, which are compared exactly.
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

# make test-slow: the scripts again with every fast path off (eval_fast_paths)
SLOW=; [ -n "$WENGERT_SLOW" ] && [ "$WENGERT_SLOW" != 0 ] && SLOW=1
skipped=0

run_script() {
    local f=$1
    if [ -n "$SLOW" ] && grep -q '^# fast paths only: ' "$f"; then skipped=$((skipped + 1)); return; fi
    local args sargs input
    args=$(sed -n 's/^# args: *//p' "$f" | head -1)
    local envs=()
    if grep -q '^# env: ' "$f"; then
        read -r -a envs <<<"env -u LC_ALL -u LC_CTYPE -u NO_COLOR $(sed -n 's/^# env: *//p' "$f" | head -1)"
    fi
    sargs=$(sed -n 's/^# script-args: *//p' "$f" | head -1)
    input=$(sed -n 's/^# stdin: *//p' "$f" | head -1)
    (cd "$(dirname "$f")" && eval "set -- $args \"\$(basename \"\$f\")\" $sargs" &&
        "${envs[@]}" timeout 120 "$BIN" "$@" <"${input:-/dev/null}" >"$tmp/out" 2>"$tmp/err"; echo $? >"$tmp/rc")
    local rc
    rc=$(cat "$tmp/rc")
    # the sanitizer build (make test SAN=1): a report fails the test even
    # where an error was expected (a leak found at exit after an error
    # exits non-zero too, and the expected message is there)
    if grep -qE '^==[0-9]+==ERROR: |runtime error: ' "$tmp/err"; then
        bad "$f" "$(grep -A12 -E '^==[0-9]+==ERROR: |runtime error: ' "$tmp/err")"; return
    fi
    local exact=""
    if [ -f "${f%.wg}.out" ]; then
        cp "${f%.wg}.out" "$tmp/want"
        # "# expect:" lines beside a .out file (an example with a picture)
        # must each be a line of it, so the comments stay true
        local line
        while IFS= read -r line; do
            grep -qxF -- "$line" "$tmp/want" || { bad "$f" "# expect: $line is not a line of ${f%.wg}.out"; return; }
        done < <(sed -n 's/.*# expect: \{0,1\}//p' "$f" | grep -v '^error:')
        exact=1
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
    # notes and warnings of a run that succeeds
    local errlines
    errlines=$(sed -n 's/.*# expect stderr: //p' "$f")
    if [ -n "$errlines" ]; then
        local missing=""
        while IFS= read -r e; do
            grep -qF -- "$e" "$tmp/err" || missing="$missing$e\n"
        done <<<"$errlines"
        if [ -n "$missing" ]; then bad "$f" "$(printf "stderr lacks:\n$missing\nstderr was:\n"; cat "$tmp/err")"; return; fi
    fi
    if grep -q '^# expect no stderr' "$f" && [ -s "$tmp/err" ]; then
        bad "$f" "$(echo "stderr should be empty, was:"; cat "$tmp/err")"; return
    fi
    if ! lines_match "$tmp/want" "$tmp/out" "$exact"; then bad "$f" "$(diff -u "$tmp/want" "$tmp/out")"; return; fi
    if [ -f "${f%.wg}.err" ] && ! lines_match "${f%.wg}.err" "$tmp/err" 1; then
        bad "$f" "$(diff -u "${f%.wg}.err" "$tmp/err")"; return
    fi
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
        if [ -z "$3" ] && [[ "$want" == *"*"* ]]; then
            # shellcheck disable=SC2053
            [[ "$got" == $want ]] || { exec 3<&- 4<&-; return 1; }
        elif [ "$want" != "$got" ]; then exec 3<&- 4<&-; return 1; fi
    done
}

# WG_ONLY="tests/lang/reclaim_*.wg": those scripts alone, nothing else.
for f in ${WG_ONLY:-tests/lang/*.wg examples/*.wg}; do
    [ -f "$f" ] && run_script "$f"
done
if [ -n "$WG_ONLY" ]; then
    [ -n "$SLOW" ] && echo "WENGERT_SLOW: $skipped scripts marked '# fast paths only' skipped"
    echo "$pass passed, $fail failed"
    [ "$fail" = 0 ]; exit
fi

# Every listing in the README and docs/ is what wengert prints: REPL
# transcripts typed into the REPL, scripts with their output (docs/testing.md).
PY=/usr/bin/python3; [ -x "$PY" ] || PY=python3
if "$PY" tests/docs/check_blocks.py "$BIN" README.md docs/*.md >"$tmp/docs" 2>&1; then ok
else bad "tests/docs/check_blocks.py README.md docs/*.md" "$(cat "$tmp/docs")"; fi

# Random programs: every derivative route agrees (tests/gen/routes.py). One
# entry; on failure, the summary and the first failing program, reduced.
PY=/usr/bin/python3; [ -x "$PY" ] || PY=python3
# A program's time limit (routes.py's default 20 s) under the sanitizers:
# seed 1's program 22 takes 3 s plain and 11 s of CPU under ASan, which a
# second job on the machine stretched past 20 s of wall time.
RT=; case "$BUILD" in *san*) RT="--timeout 90" ;; esac
# Checkpointed loops give what plain loops give (tests/gen/checkpoint_vs_plain.py),
# the same random programs with every loop checkpointed, at k = 1 and 2, each
# with a wide block of its own (nested checkpointed loops, nograd, jvp/grad/d
# inside bodies and conditions, closures writing captured arrays).
for k in 1 2; do
    if "$PY" tests/gen/checkpoint_vs_plain.py --bin "$BIN" --seed 7 --count 300 --k $k --jobs 2 >"$tmp/ckvp" 2>/dev/null; then ok
    else bad "tests/gen/checkpoint_vs_plain.py --k $k" "$(tail -5 "$tmp/ckvp")"; fi
done
# An assignment inside nograd is the assignment of detach(...): the same
# random programs with some assignments in nograd, against detach twins.
if "$PY" tests/gen/nograd_vs_detach.py --bin "$BIN" --seed 4 --count 400 >"$tmp/ngvd" 2>/dev/null; then ok
else bad "tests/gen/nograd_vs_detach.py" "$(tail -5 "$tmp/ngvd")"; fi
# Branch notes appear exactly when moving the place differentiated by a
# relative 1e-9 flips a comparison the program evaluated (tests/gen/branch_notes.py).
if "$PY" tests/gen/branch_notes.py --bin "$BIN" --seed 5 --count 200 >"$tmp/bnotes" 2>&1; then ok
else bad tests/gen/branch_notes.py "$(tail -1 "$tmp/bnotes"; sed -n '/^=====/,$p' "$tmp/bnotes" | sed -n '1,60p')"; fi
# arithmetic trees over long arrays give the same text taken whole in one
# pass (fuse.c) as one operation at a time (WENGERT_SLOW=1)
if "$PY" tests/gen/fuse_fuzz.py --bin "$BIN" --seed 11 --count 40 >"$tmp/fufu" 2>&1; then ok
else bad tests/gen/fuse_fuzz.py "$(tail -3 "$tmp/fufu")"; fi
# a closure's captured array element is a place as its top-level twin's is
if "$PY" tests/gen/closure_elements.py --bin "$BIN" --seed 7 --count 150 >"$tmp/cloel" 2>&1; then ok
else bad tests/gen/closure_elements.py "$(tail -1 "$tmp/cloel"; sed -n '/^=====/,$p' "$tmp/cloel" | sed -n '1,40p')"; fi
# simple scalar closures give the same values and errors compiled (src/regvm.c) as tree-walked (WENGERT_SLOW=1)
if "$PY" tests/gen/regvm_fuzz.py --bin "$BIN" --seed 1 --count 150 >"$tmp/regvm" 2>&1; then ok
else bad tests/gen/regvm_fuzz.py "$(tail -1 "$tmp/regvm"; sed -n '/^=====/,$p' "$tmp/regvm" | sed -n '1,60p')"; fi
# and differentiated: the recording form's gradients and tape listings (half under reclaim stress)
if "$PY" tests/gen/regvm_fuzz.py --bin "$BIN" --seed 2 --count 80 --grad >"$tmp/regvmg" 2>&1; then ok
else bad "tests/gen/regvm_fuzz.py --grad" "$(tail -1 "$tmp/regvmg"; sed -n '/^=====/,$p' "$tmp/regvmg" | sed -n '1,60p')"; fi
# and run by jvp: the forward form's tangents (a tangent beside each register)
if "$PY" tests/gen/regvm_fuzz.py --bin "$BIN" --seed 3 --count 60 --jvp >"$tmp/regvmj" 2>&1; then ok
else bad "tests/gen/regvm_fuzz.py --jvp" "$(tail -1 "$tmp/regvmj"; sed -n '/^=====/,$p' "$tmp/regvmj" | sed -n '1,60p')"; fi
# the same with about half the while loops checkpointed: their notes are the plain loop's
if "$PY" tests/gen/branch_notes.py --bin "$BIN" --seed 6 --count 200 --checkpoint >"$tmp/bnotes" 2>&1; then ok
else bad "tests/gen/branch_notes.py --checkpoint" "$(tail -1 "$tmp/bnotes"; sed -n '/^=====/,$p' "$tmp/bnotes" | sed -n '1,60p')"; fi
if "$PY" tests/gen/routes.py --bin "$BIN" $RT --reduce 1 >"$tmp/routes" 2>&1; then ok
else bad tests/gen/routes.py "$(tail -1 "$tmp/routes"; sed -n '/^=====/,$p' "$tmp/routes" | sed -n '2,60p')"; fi
# The same property on a long tape: 70000 entries between w and y = F(w), so
# d(y, w) takes the sparse sweep (a small cone far up the tape).
if "$PY" tests/gen/routes.py --bin "$BIN" $RT --count 500 --seed 3 --pad 70000 --reduce 1 >"$tmp/routes" 2>&1; then ok
else bad "tests/gen/routes.py --pad 70000" "$(tail -1 "$tmp/routes"; sed -n '/^=====/,$p' "$tmp/routes" | sed -n '2,60p')"; fi
# The same property with a reclaiming pass at every chance (docs/design.md,
# "Reclaiming"): every derivative must come out as without it.
if WENGERT_RECLAIM_STRESS=1 "$PY" tests/gen/routes.py --bin "$BIN" $RT --count 300 --seed 2 --reduce 1 >"$tmp/routes" 2>&1; then ok
else bad "tests/gen/routes.py (WENGERT_RECLAIM_STRESS=1)" "$(tail -1 "$tmp/routes"; sed -n '/^=====/,$p' "$tmp/routes" | sed -n '2,60p')"; fi
# What the fast paths print is what the general path prints (WENGERT_SLOW=1,
# eval_fast_paths): route agreement cannot see a wrong primal, which every
# route computes by the same fast path. ~12 s (the long tape: the sparse sweep).
for fl in "--seed 8 --count 300" "--seed 9 --wide --count 300" "--seed 10 --gathers --matrices --count 300" \
          "--seed 11 --pad 70000 --count 150" "--seed 12 --wide --backend posit32 --count 150"; do
    # shellcheck disable=SC2086
    if "$PY" tests/gen/routes.py --bin "$BIN" $RT --slow $fl --reduce 1 >"$tmp/routes" 2>&1; then ok
    else bad "tests/gen/routes.py --slow $fl" "$(tail -2 "$tmp/routes"; sed -n '/^=====/,$p' "$tmp/routes" | sed -n '2,60p')"; fi
done
# Compound assignments of gathers, v op= take(a, idx), into arrays, views,
# rows and columns (exec_compound's in-place gather and its fallbacks:
# the target aliased with the source, views, recorded numbers, versions).
if "$PY" tests/gen/routes.py --bin "$BIN" $RT --gathers --count 150 --seed 4 --reduce 1 >"$tmp/routes" 2>&1; then ok
else bad "tests/gen/routes.py --gathers" "$(tail -1 "$tmp/routes"; sed -n '/^=====/,$p' "$tmp/routes" | sed -n '2,60p')"; fi
# The wider generator (issue 25): checkpointed loops, closures writing
# captured arrays, draws and side-effecting conditions, fixed points, nograd,
# kinks and ties hit exactly, strong zeros and element writes inside
# functions, in float64 and in the float32 and posit32 backends.
WIDE="--wide"
for be in float64 float32 posit32; do
    n=800; [ $be = float64 ] || n=300
    if "$PY" tests/gen/routes.py --bin "$BIN" $WIDE --backend $be --count $n --seed 5 --reduce 1 >"$tmp/routes" 2>&1; then ok
    else bad "tests/gen/routes.py $WIDE --backend $be" "$(tail -1 "$tmp/routes"; sed -n '/^=====/,$p' "$tmp/routes" | sed -n '2,60p')"; fi
done

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

for r in tests/repl/*.sh tests/shell/*.sh; do
    [ -f "$r" ] || continue
    t=120; [ "$r" = tests/shell/course.sh ] && t=900    # twenty scripts and twenty notebooks
    if WG_BIN="$BIN" WG_BUILD="$BUILD" timeout $t bash "$r" >"$tmp/rout" 2>&1; then ok; else bad "$r" "$(tail -30 "$tmp/rout")"; fi
    grep '^SKIP' "$tmp/rout"     # a test that cannot run here says so, and passes
done

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
