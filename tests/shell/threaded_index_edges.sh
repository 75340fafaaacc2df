#!/bin/bash
# Element reads and writes by threaded.c's in-place paths (whole_index: one
# conversion and one unsigned compare for "a whole number in [0, n)"), each
# with indices at the edges of that test: -0 (element 0), n, -1, fractions,
# nan, +-inf, and numbers beyond int's range (2^31, 2^32 + 1, whose
# conversions wrap or saturate). An index the fast test wrongly accepted
# would read or write an element instead of the general path's error.
# Paths: p1 a local array, p2 a captured one, p3/p3b x * y + z indices
# (index_ma), p4/p4b x = a[i] (read_shape), p5/p5b/p5c a[i] = v
# (store_number, captured and local), p6 a computed index (index_at).
BIN=${WG_BIN:-./wengert}
case "$BIN" in /*) ;; *) BIN="$PWD/$BIN" ;; esac
[ -n "$WENGERT_STDLIB" ] || export WENGERT_STDLIB="$(cd "$(dirname "$0")/../.." && pwd)/stdlib"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
fns='fn p1(i) { a = [10, 20, 30]; return a[i] }
fn p2(i) { a = [10, 20, 30]; f = fn(k) { return a[k] }; return f(i) }
fn p3(i) { a = [10, 20, 30]; f = fn(k) { one = 1; z = 0; return a[k * one + z] }; return f(i) }
fn p3b(i) { a = [10, 20, 30]; one = 1; z = 0; return a[z + i * one] }
fn p4(i) { a = [10, 20, 30]; x = a[i]; return x }
fn p4b(i) { a = [10, 20, 30]; f = fn(k) { x = a[k]; return x }; return f(i) }
fn p5(i) { a = [10, 20, 30]; f = fn(k) { a[k] = 7; return a }; return f(i) }
fn p5b(i) { a = [10, 20, 30]; a[i] = 7; return a }
fn p5c(i) { a = [10, 20, 30]; v = 7; a[i] = v; return a }
fn p6(i) { a = [10, 20, 30]; return a[i + 0] }'
# index, then the general path's error for it (empty: a valid index)
cases='0|
-0|
1|
2|
3|index 3 out of range for array of length 3
-1|index -1 out of range for array of length 3
0.5|index 0.5 is not a whole number
2.5|index 2.5 is not a whole number
-0.5|index -0.5 is not a whole number
0/0|index nan is not a whole number
1e10|index 10000000000 out of range for array of length 3
-1e10|index -10000000000 out of range for array of length 3
2147483648|index 2147483648 out of range for array of length 3
2147483649|index 2147483649 out of range for array of length 3
4294967296|index 4294967296 out of range for array of length 3
4294967297|index 4294967297 out of range for array of length 3
-2147483648|index -2147483648 out of range for array of length 3
-2147483649|index -2147483649 out of range for array of length 3
1/0|index inf out of range for array of length 3
-1/0|index -inf out of range for array of length 3'
valid() {   # what f gives for a valid index i (0, -0, 1, 2)
    local f=$1 k=${2#-}
    case $f in
    p5*) case $k in 0) echo '[7, 20, 30]' ;; 1) echo '[10, 7, 30]' ;; 2) echo '[10, 20, 7]' ;; esac ;;
    *) echo $(( (k + 1) * 10 )) ;;
    esac
}
input="$fns"
expected=""
for f in p1 p2 p3 p3b p4 p4b p5 p5b p5c p6; do
    while IFS='|' read -r i err; do
        input+=$'\n'"$f($i)"
        if [ -n "$err" ]; then expected+="$f($i) => error: $err"$'\n'
        else expected+="$f($i) => $(valid $f $i)"$'\n'; fi
    done <<<"$cases"
done
out=$("$BIN" -i 2>&1 <<<"$input" | sed -n '/^wengert /d; /^ /d; s/^<repl [0-9]*>:[0-9:]* error: /error: /; /^$/d; p')
calls=$(sed -n 's/ => .*//p' <<<"$expected")
got=$(paste -d '|' <(echo "$calls") <(echo "$out") | sed 's/|/ => /')
diff <(echo "$expected" | sed '/^$/d') <(echo "$got") || fail "results differ from the general path's"
[ "$fails" = 0 ] && echo "threaded_index_edges.sh: ok" || exit 1
