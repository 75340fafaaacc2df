#!/usr/bin/env python3
"""goldens.py: which of two printed values is nearer the truth, for the
golden outputs that changed when wengert's tanh became src/wmath.c's.

Each case is the recurrence h <- tanh(w h + b) (bench W2 and its
relatives in tests/lang/ckpt_*.wg and the examples) carried exactly with
mpmath at 60 digits, with its derivatives by forward mode:
h_w, h_b, h_ww. The old (glibc) and new printed values are compared with
the exact one; the printed decimal is the double the program holds."""
import mpmath
from mpmath import mp, mpf

mp.dps = 60


def run(w, b, h0, n):
    w, b, h = mpf(w), mpf(b), mpf(h0)
    hw = hb = hww = mpf(0)
    back = mpf(1)
    for _ in range(n):
        u = w * h + b
        uw, ub, uww = h + w * hw, w * hb + 1, 2 * hw + w * hww
        t = mpmath.tanh(u)
        s = 1 - t * t
        h, hw, hb, hww = t, s * uw, s * ub, s * uww - 2 * t * s * uw * uw
        back *= w * s
    return {"h": h, "h_w": hw, "h_b": hb, "h_ww": hww, "w(1-h^2)": w * (1 - h * h), "dh_n/dh_0": back}


# (where, w, b, h0, steps, quantity, old printed, new printed)
CASES = [
    ("tests/lang/ckpt_w2.wg h", 0.9, 0.1, 0.1, 100000, "h", "0.5015959675361122", "0.5015959675361125"),
    ("tests/lang/ckpt_w2.wg d(h, w)", 0.9, 0.1, 0.1, 100000, "h_w", "1.1499715244795448", "1.1499715244795439"),
    ("tests/lang/ckpt_w2.wg d(h, b)", 0.9, 0.1, 0.1, 100000, "h_b", "2.292625138372453", "2.292625138372451"),
    ("tests/lang/ckpt_clear.wg h", 0.9, 0.1, 0.1, 100, "h", "0.5015959675361122", "0.5015959675361125"),
    ("tests/lang/ckpt_clear.wg d(h, w)", 0.9, 0.1, 0.1, 100, "h_w", "1.1499715244795452", "1.1499715244795443"),
    ("tests/lang/ckpt_second.wg d(d(h, w), w)", 0.9, 0.1, 0.1, 300, "h_ww", "-0.1573696243770735", "-0.1573696243770763"),
    ("tests/lang/ckpt_function.wg d(h, w)", 0.5, 0.1, 0, 100, "h_w", "0.3613408020408415", "0.3613408020408416"),
    ("examples/09 reverse (grad)", 0.5, 0.1, 0, 1000, "h_w", "0.3613408020408415", "0.3613408020408416"),
    ("examples/06 d(h, w)", 0.5, 0.1, 0, 3, "h_w", "0.1915710713283959", "0.19157107132839593"),
    ("examples/15 hc@1002", 0.5, 0.1, 0, 1000, "h", "0.1949451481582441", "0.19494514815824412"),
    ("course 04 dh_T/dh_0", 0.9, 0.1, 0.5, 30, "dh_n/dh_0", "7.132339661103031e-06", "7.132339661103027e-06"),
    ("course 06 reverse mode", 0.5, 0.1, 0, 1000, "h_w", "0.3613408020408415", "0.3613408020408416"),
    ("course 08 h@995..1001", 0.5, 0.1, 0, 1000, "h", "0.1949451481582441", "0.19494514815824412"),
    ("examples/17 g[T - 1]", 0.9, 0.1, 0.5, 30, "w(1-h^2)", "0.6735613470710877", "0.6735613470710876"),
]


def main():
    for where, w, b, h0, n, q, old, new in CASES:
        true = run(w, b, h0, n)[q]
        eo, en = abs(mpf(float(old)) - true), abs(mpf(float(new)) - true)
        ulp = mpmath.ldexp(1, int(mpmath.floor(mpmath.log(abs(true), 2))) - 52)
        better = "new" if en < eo else "old" if eo < en else "tie"
        print("%-42s true %s  old %+.2f ulp  new %+.2f ulp  nearer: %s" % (
            where, mpmath.nstr(true, 20), float((mpf(float(old)) - true) / ulp),
            float((mpf(float(new)) - true) / ulp), better))


if __name__ == "__main__":
    main()
