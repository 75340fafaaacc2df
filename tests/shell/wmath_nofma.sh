#!/bin/bash
# src/wmath.c must give the same bits in every build (the terminal's and the
# page's WebAssembly, tests/libm/same.sh): no multiply and add fused into
# one rounding. Its vector loops are built for AVX2 and AVX-512F, and
# AVX-512F has the fused instructions, so only -ffp-contract=off (the
# Makefile) or the file's FP_CONTRACT pragma (clang) keeps the compiler
# from using them: the object must hold none, and must hold the 4- and
# 8-lane loops (ymm and zmm registers), else this checks nothing.
# clang (`make fuzz` builds wmath.c with it, without -ffp-contract=off)
# fuses a * b + c within an expression by default: if clang is here, the
# file built by it with no such flag must hold none either (the pragma).
build=${WG_BUILD:-build}
obj=$build/wmath.o
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
command -v objdump >/dev/null || { echo "SKIP: no objdump"; exit 0; }
# (the vector loops and the instruction names below are x86-64's)
[ "$(uname -m)" = x86_64 ] || { echo "SKIP: not x86-64 (the vector loops are x86-64's)"; exit 0; }
[ -f "$obj" ] || { echo "no $obj"; exit 1; }
status=0
# fused: OBJECT WHO -- fails if OBJECT holds a fused multiply-add
fused() {
    local f
    f=$(objdump -d --no-show-raw-insn "$1" | grep -E '[[:space:]]vf(n)?m(add|sub)')
    [ -z "$f" ] && return 0
    echo "$2 has fused multiply-adds:"
    head -5 <<<"$f"
    return 1
}
fused "$obj" "$obj" || status=1
dis=$(objdump -d --no-show-raw-insn "$obj") || exit 1
for r in ymm zmm; do
    grep -q "%$r" <<<"$dis" || { echo "$obj has no $r instructions: the vector loops were not built"; status=1; }
done
if command -v clang >/dev/null && [ "$(uname -m)" = x86_64 ]; then
    T=$(mktemp -d)
    trap 'rm -rf "$T"' EXIT
    if clang -O2 -std=c11 -D_GNU_SOURCE -I"$ROOT/src" -c -o "$T/wmath.o" "$ROOT/src/wmath.c"; then
        fused "$T/wmath.o" "wmath.c built by clang (no -ffp-contract=off)" || status=1
    else
        echo "clang could not build src/wmath.c"; status=1
    fi
fi
exit $status
