#!/bin/bash
# src/wmath.c must give the same bits in every build (the terminal's and the
# page's WebAssembly, tests/libm/same.sh): no multiply and add fused into
# one rounding. Its vector loops are built for AVX2 and AVX-512F, and
# AVX-512F has the fused instructions, so only -ffp-contract=off (the
# Makefile) or the file's FP_CONTRACT pragma (clang) keeps the compiler
# from using them: the object must hold none, and must hold the 4- and
# 8-lane loops (ymm and zmm registers), else this checks nothing.
build=${WG_BUILD:-build}
obj=$build/wmath.o
command -v objdump >/dev/null || { echo "SKIP: no objdump"; exit 0; }
[ -f "$obj" ] || { echo "no $obj"; exit 1; }
dis=$(objdump -d --no-show-raw-insn "$obj") || exit 1
status=0
fused=$(grep -E '[[:space:]]vf(n)?m(add|sub)' <<<"$dis")
if [ -n "$fused" ]; then
    echo "$obj has fused multiply-adds:"
    head -5 <<<"$fused"
    status=1
fi
for r in ymm zmm; do
    grep -q "%$r" <<<"$dis" || { echo "$obj has no $r instructions: the vector loops were not built"; status=1; }
done
exit $status
