#!/bin/bash
# A front end with a display (the notebook kernel, the web page) gets a
# plot as SVG with "the text the terminal would have shown" (wengert.h):
# that text must be the terminal's picture itself. It used to be drawn from
# the SVG's samples (400 points, not the terminal's 144 columns of dots),
# so its dots differed from the terminal's.
set -u
export LANG=C.UTF-8 LC_ALL= LC_CTYPE= NO_COLOR=1 TERM=dumb
plot='plot(fn(t) => abs(t) * t + 1 / (1 + t*t), -2, 2)'
want=$("$WG_BIN" -e "$plot")
got=$(printf '{"op":"run","code":"%s"}\n' "$plot" | "$WG_BIN" --kernel |
      /usr/bin/python3 -c '
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if "display" in m:
        sys.stdout.write(m["display"]["text/plain"])
')
if [ "$got" != "$want" ]; then
    echo "FAIL: the display's text is not the terminal's picture"
    diff <(printf '%s\n' "$want") <(printf '%s\n' "$got") | head -10
    exit 1
fi
echo "ok plot display text"
