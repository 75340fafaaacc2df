#!/bin/bash
# routes.py --slow sees a wrong primal that route agreement cannot: run
# against a wrapper of wengert that, under WENGERT_SLOW, prints each F(w)
# (the primal every route shares) a relative 1e-9 off, it must report slow
# mismatches and fail, while plain routes.py passes on the same wrapper;
# against the wrapper left alone (no WENGERT_SLOW effect) --slow passes.
# A check of the checker: make test's routes.py --slow runs pass vacuously
# if the comparison compared nothing.
BIN=${WG_BIN:-./wengert}
case "$BIN" in /*) ;; *) BIN="$PWD/$BIN" ;; esac
cd "$(dirname "$0")/../.." || exit 1
[ -n "$WENGERT_STDLIB" ] || export WENGERT_STDLIB="$PWD/stdlib"
PY=/usr/bin/python3; [ -x "$PY" ] || PY=python3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# $1: "off" prints F a relative 1e-9 off under WENGERT_SLOW; "same" does not
wrapper() {
    cat >"$tmp/wg-$1" <<EOF
#!/bin/bash
if [ "$1" = off ] && [ -n "\$WENGERT_SLOW" ]; then
    "$BIN" "\$@" | awk '\$2 == "F" && \$3 + 0 == \$3 { printf "%s F %.17g\n", \$1, \$3 * (1 + 1e-9); next } { print }'
    exit "\${PIPESTATUS[0]}"
fi
exec "$BIN" "\$@"
EOF
    chmod +x "$tmp/wg-$1"
}
wrapper off
wrapper same

"$PY" tests/gen/routes.py --bin "$tmp/wg-off" --count 30 --seed 1 --reduce 0 >"$tmp/plain" 2>&1 \
    || fail "plain routes.py fails on the wrapper: $(tail -1 "$tmp/plain")"
if "$PY" tests/gen/routes.py --bin "$tmp/wg-off" --slow --count 30 --seed 1 --reduce 0 >"$tmp/off" 2>&1; then
    fail "--slow passed a primal 1e-9 off: $(tail -1 "$tmp/off")"
else
    grep -q "slow; failing: slow:F" "$tmp/off" || fail "--slow failed, but not on F: $(head -3 "$tmp/off")"
    grep -q ", 30 slow mismatches," "$tmp/off" || fail "--slow missed some of the 30: $(tail -1 "$tmp/off")"
fi
"$PY" tests/gen/routes.py --bin "$tmp/wg-same" --slow --count 30 --seed 1 --reduce 0 >"$tmp/same" 2>&1 \
    || fail "--slow fails on the wrapper that changes nothing: $(tail -1 "$tmp/same")"
[ "$fails" = 0 ]
