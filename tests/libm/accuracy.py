#!/usr/bin/env python3
"""accuracy.py: the error of src/wmath.c's functions in ulps, against mpmath.

Usage: accuracy.py LIBWMATH.so [N]   (N random inputs per function and range)

LIBWMATH.so is src/wmath.c built as a shared library (tests/libm/same.sh
says how). Each function runs on N random inputs in each of its ranges
(and the points where it switches method); the result is compared with
mpmath's value at 200 bits, and the largest error in ulps of the true
value is printed, with glibc's (Python's math module) beside it."""
import ctypes
import math
import random
import struct
import sys

import mpmath
from mpmath import mp, mpf

mp.prec = 200


def ulp_of(v):
    """the ulp of a double near the real v (v != 0)"""
    if v == 0:
        return mpf(2) ** -1074
    e = mpmath.floor(mpmath.log(abs(v), 2))
    # the log may be a hair off at a power of two: fix the exponent
    while mpf(2) ** (e + 1) <= abs(v):
        e += 1
    while mpf(2) ** e > abs(v):
        e -= 1
    return mpf(2) ** max(e - 52, -1074)


def err(got, true):
    if math.isnan(got) or math.isinf(got):
        return 0.0 if (math.isinf(got) and abs(true) > mpf(2) ** 1024) else float("inf")
    return float(abs(mpf(got) - true) / ulp_of(true))


def rand_in(lo, hi, rng):
    """a random double, its exponent uniform between those of lo and hi (> 0)"""
    elo, ehi = math.frexp(lo)[1], math.frexp(hi)[1]
    while True:
        e = rng.randint(elo, ehi)
        m = rng.getrandbits(52)
        x = struct.unpack("<d", struct.pack("<Q", ((e + 1022) << 52) | m))[0]
        if lo <= x <= hi:
            return x


def main():
    lib = ctypes.CDLL(sys.argv[1])
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 20000
    for name in ("wm_exp", "wm_tanh", "wm_atan"):
        getattr(lib, name).restype = ctypes.c_double
        getattr(lib, name).argtypes = [ctypes.c_double]
    lib.wm_atan2.restype = ctypes.c_double
    lib.wm_atan2.argtypes = [ctypes.c_double, ctypes.c_double]
    rng = random.Random(30)

    cases = [
        ("exp", lib.wm_exp, math.exp, mpmath.exp, [(2.0**-54, 1), (1, 709.7), (-745, -1), (-1, -2.0**-54)]),
        ("tanh", lib.wm_tanh, math.tanh, mpmath.tanh,
         [(2.0**-27, 0.0625), (0.0625, 0.0626), (0.0625, 1), (1, 22), (-22, -2.0**-27)]),
        ("atan", lib.wm_atan, math.atan, mpmath.atan,
         [(2.0**-27, 1 / 32), (1 / 32, 1), (0.9, 1.1), (1, 32), (32, 2.0**60), (-2.0**60, -2.0**-27)]),
    ]
    print("%-6s %-22s %9s %12s %12s" % ("fn", "range", "inputs", "wmath ulp", "glibc ulp"))
    for name, f, g, true_f, ranges in cases:
        for lo, hi in ranges:
            worst = worst_g = 0.0
            for _ in range(n):
                x = rand_in(lo, hi, rng) if lo > 0 else -rand_in(-hi, -lo, rng)
                t = true_f(mpf(x))
                worst = max(worst, err(f(x), t))
                worst_g = max(worst_g, err(g(x), t))
            print("%-6s [%-9.3g, %9.3g] %9d %12.4f %12.4f" % (name, lo, hi, n, worst, worst_g))
    # atan2: random points in each octant, ratios over many exponents
    for desc, sx, sy in (("x>0", 1, 1), ("x<0", -1, 1), ("y<0", 1, -1), ("both<0", -1, -1)):
        worst = worst_g = 0.0
        for _ in range(n):
            a = rand_in(2.0**-30, 2.0**30, rng)
            b = a * rand_in(2.0**-62, 2.0**62, rng) if rng.random() < 0.5 else a * rng.uniform(0.5, 2)
            y, x = sy * a, sx * b
            t = mpmath.atan2(mpf(y), mpf(x))
            worst = max(worst, err(lib.wm_atan2(y, x), t))
            worst_g = max(worst_g, err(math.atan2(y, x), t))
        print("%-6s %-22s %9d %12.4f %12.4f" % ("atan2", desc, n, worst, worst_g))


if __name__ == "__main__":
    main()
