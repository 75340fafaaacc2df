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
