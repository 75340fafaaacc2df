#!/bin/bash
# A kink an element costs no more than the arithmetic around it (the notes'
# text waits until one is shown): floor over 1500000 recorded zeros and the
# derivative of their sum within 3 s of CPU time
# (they took about 6 s when each note formatted its numbers; the sanitizer
# build gets 5 times as long).
set -u
BIN=${WG_BIN:-./wengert}
limit=3
case "$BIN" in *san*) limit=15 ;; esac
out=$( (ulimit -t $limit; "$BIN" -e "x = zeros(1500000)
y = floor(x)
g = d(sum(y), x)
print(sum(g))
:tape kinks") 2>&1) || { echo "failed or over $limit s of CPU: $out"; exit 1; }
want="note: this derivative passed a kink: floor(x) at x = 0 (<-e>:2:5); :tape kinks for all
0
kinks: 1 in the latest derivative
  kink: floor(x) at x = 0 (<-e>:2:5)"
[ "$out" = "$want" ] || { echo "got: $out"; exit 1; }
echo "ok within $limit s of CPU"
# Distinct notes, each listed once: a derivative passes each note it
# reached and lists it unless an earlier one says the same (pass() in
# src/kinks.c). Checking each against all before it took 0.75 s for 20000
# notes at one place, growing as the square (100000: 20 s); by hash sets
# it is linear. 100000 notes at one place (one group: the first test
# decides), then 2 x 40000 at two places (two groups: the texts are
# compared, through a hash of each), listed, within the same 3 s of CPU
# (about 0.8 s here, most of it the listing).
out=$( (ulimit -t $limit; "$BIN" -e "v = range(100000)
g = d(sum(floor(v)), v)
print(sum(g))
:tape kinks
w = range(40000)
h = d(sum(floor(w)) + sum(floor(2 * w)), w)
print(sum(h))
:tape kinks") 2>&1) || { echo "distinct notes: failed or over $limit s of CPU: $(echo "$out" | head -5)"; exit 1; }
got=$(echo "$out" | grep -v '^  kink: ')
want="note: this derivative passed a kink: floor(v) at v = 0 (<-e>:2:11); :tape kinks for all
0
kinks: 100000 in the latest derivative
note: this derivative passed a kink: floor(w) at w = 0 (<-e>:6:11); :tape kinks for all
0
kinks: 80000 in the latest derivative"
[ "$got" = "$want" ] || { echo "distinct notes: got: $(echo "$got" | head -8)"; exit 1; }
[ "$(echo "$out" | grep -c '^  kink: ')" = 180000 ] || { echo "distinct notes: not 180000 lines listed"; exit 1; }
# in tape order: the last of each listing
echo "$out" | grep -qx '  kink: floor at 79998 (<-e>:6:27)' || { echo "distinct notes: no last kink of floor(2 * w)"; exit 1; }
echo "ok: 180000 distinct notes within $limit s of CPU"
# The same notes when what made them is reclaimed (at the end of the
# statement: the array was a function's local): the latest derivative's
# list keeps them, renumbered in one pass (each was counted against every
# note before it: 40000 took 1.4 s, growing as the square).
out=$( (ulimit -t $limit; "$BIN" -e "fn F(n) { v = range(n) * 1; return d(sum(floor(v)), v)[0] }
print(F(100000))
:tape kinks") 2>&1) || { echo "reclaimed notes: failed or over $limit s of CPU: $(echo "$out" | head -5)"; exit 1; }
echo "$out" | grep -qx 'kinks: 100000 in the latest derivative' || { echo "reclaimed notes: got $(echo "$out" | head -4)"; exit 1; }
echo "$out" | grep -qx '  kink: floor(v) at v = 99999 (<-e>:1:42)' || { echo "reclaimed notes: no last kink"; exit 1; }
echo "ok: 100000 reclaimed notes within $limit s of CPU"
