#!/usr/bin/env python3
"""wmath_consts.py: the constants of src/wmath.c, derived with mpmath.

Prints them as C; src/wmath.c holds this output (run it to check the
numbers there). A double-double constant is hi + lo: hi the double
nearest the value, lo the double nearest the rest."""
import mpmath
from mpmath import mp, mpf

mp.prec = 300


def hexd(x):
    return float(x).hex()


def dd(x):
    hi = mpf(float(x))
    lo = mpf(float(x - hi))
    return hi, lo


def trunc_bits(x, bits):
    """x with its significand cut to `bits` bits (toward zero)."""
    m, e = mpmath.frexp(x)
    scale = mpf(2) ** bits
    return mpmath.floor(m * scale) / scale * mpf(2) ** e


def main():
    ln2 = mpmath.log(2)
    # exp: x = (32 m + j) ln2/32 + r, |N| = |32 m + j| < 2^17 for |x| < 746
    step = ln2 / 32
    l1 = trunc_bits(step, 36)
    l2 = mpf(float(step - l1))
    l3 = mpf(float(step - l1 - l2))
    print("/* ln2/32 in three parts; EXP_L1 has 36 bits, so N * EXP_L1 is exact for |N| < 2^17 */")
    print("#define EXP_L1 %s" % hexd(l1))
    print("#define EXP_L2 %s" % hexd(l2))
    print("#define EXP_L3 %s" % hexd(l3))
    print("#define EXP_INV %s   /* 32 / ln2 */" % hexd(32 / ln2))
    print("/* 2^(j/32), j = 0..31, as t1 + t2 + t3 = exp_tab[0][j] + exp_tab[1][j]")
    print(" * + exp_tab[2][j]: t1 + t2 the double nearest it, t1 its first 26 bits,")
    print(" * t3 the double nearest the rest. By parts, so that the vector loops")
    print(" * fetch a part for all lanes at once (a gather, or a permute of registers) */")
    print("static _Alignas(64) const double exp_tab[3][32] = {")
    parts = [[], [], []]
    for j in range(32):
        hi, lo = dd(mpf(2) ** (mpf(j) / 32))
        t1 = trunc_bits(hi, 26)
        t2 = hi - t1
        assert mpf(float(t2)) == t2
        for k, t in enumerate((t1, t2, lo)):
            parts[k].append(hexd(t))
    for k in range(3):
        print("    {")
        for i in range(0, 32, 4):
            print("        %s," % ", ".join(parts[k][i:i + 4]))
        print("    },")
    print("};")
    print("/* exp(r) - 1 - r = r^2 (1/2 + r/6 + ...): the Taylor coefficients 1/k! */")
    for k in range(2, 8):
        print("#define EXP_C%d %s" % (k, hexd(1 / mpmath.factorial(k))))
    # tanh: odd Taylor series, x + x^3 T3 + ... + x^13 T13
    print("/* tanh(x) = x + T3 x^3 + ... + T13 x^13 + O(x^15) (Taylor) */")
    ser = mpmath.taylor(mpmath.tanh, 0, 13)
    for k in range(3, 14, 2):
        print("#define TANH_T%d %s" % (k, hexd(ser[k])))
    # atan: Taylor, t - t^3/3 + ... - t^15/15
    print("/* atan(t) = t - t^3/3 + t^5/5 - ...: the coefficients (-1)^k/(2k+1) */")
    for k in range(1, 6):
        print("#define ATAN_A%d %s" % (2 * k + 1, hexd(mpf(-1) ** k / (2 * k + 1))))
    print("/* atan(j/16), j = 0..16, as hi, lo */")
    print("static const double atan_tab[34] = {")
    for j in range(17):
        hi, lo = dd(mpmath.atan(mpf(j) / 16))
        print("    %s, %s," % (hexd(hi), hexd(lo)))
    print("};")
    for name, v in (("PI", mpmath.pi), ("PI_2", mpmath.pi / 2)):
        hi, lo = dd(v)
        print("#define %s_HI %s" % (name, hexd(hi)))
        print("#define %s_LO %s" % (name, hexd(lo)))


if __name__ == "__main__":
    main()
