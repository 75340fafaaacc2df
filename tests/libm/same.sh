#!/bin/sh
# same.sh DIR [N] [FN ...]: each function on the same N inputs in the native
# build of tests/libm/libm_cmp.c (DIR/libm_cmp, glibc) and in its
# WebAssembly build (DIR/libm_cmp.js under node, musl), one line per
# function with how many results differ; fails when any does. The default
# functions are wengert's own (src/wmath.c), which must agree bit for bit;
# `same.sh DIR N all` lists every libm function wengert calls as well (the
# table in tests/libm/README.md), where differences are expected.
dir=$1
n=${2:-2000000}
shift 2 2>/dev/null || shift $#
fns=$*
[ -n "$fns" ] || fns=$("$dir/libm_cmp" list | grep '^w')
[ "$fns" = all ] && fns=$("$dir/libm_cmp" list)
status=0
for f in $fns; do
    "$dir/libm_cmp" dump "$f" "$n" "$dir/native.bin" || exit 2
    node "$dir/libm_cmp.js" dump "$f" "$n" "$dir/wasm.bin" || exit 2
    "$dir/libm_cmp" cmp "$f" "$n" "$dir/native.bin" "$dir/wasm.bin" || status=1
done
rm -f "$dir/native.bin" "$dir/wasm.bin"
[ $status = 0 ] && echo "libm: the native and WebAssembly builds agree bit for bit on: $(echo $fns)"
exit $status
