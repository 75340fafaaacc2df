/* wmath_lanes.h - wm_exp_n's, wm_exp_n_sum's and wm_tanh_n's vector loops,
 * written once for every vector width (included only by wmath.c, once a
 * width). One text for every width is the point: each lane must do
 * exp_dd's and wm_tanh's IEEE operations in their order, so that the bits
 * are wm_exp's and wm_tanh's, and a change made to one width only would
 * break that on one kind of CPU alone.
 *
 * The includer defines
 *   VD, VI, VU   the vector types (__m256d, __m256i and wm_vu4 ...), on
 *                which + - * / & | < act lane by lane (GCC vector
 *                extensions), a scalar operand standing for all lanes
 *   LANES        how many doubles a VD holds
 *   LANE_FN      the functions' attributes (static, the target ISA)
 *   NAME(f)      f's name for this width (f_avx2 ...)
 *   LANE_BITS(m) bit k set iff lane k of the comparison mask m (a VI) is set
 *   TAB(j, k)    the VD of exp_tab[k][j[i]] for each lane i
 *   LESS(a, b), GEQ(a, b)  the VI mask of a < b, a >= b (b a double)
 *   LOAD_PART(p, m)        the VD of p[0 .. m), the other lanes 1 (0 < m < LANES)
 *   STORE_PART(p, v, m)    p[0 .. m) = v's first m lanes, nothing else written
 * and this file undefines them at its end, for the next width.
 *
 * -ffp-contract=off (the Makefile; wmath.c's FP_CONTRACT pragma under
 * clang) keeps the compiler from fusing any a * b + c below into one
 * rounding: AVX2 alone has no fused multiply-add, but AVX-512F has, and
 * `make test` checks the object holds none (tests/shell/wmath_nofma.sh). */

/* exp_dd of every lane of a, each in exp's common case (|a| < 690):
 * e^a = scale (hi + lo), scale = 2^m. s = a EXP_INV + 1.5 2^52 holds N in
 * its low bits, so j = N & 31 is s's low five bits and 2^m's bits are
 * (N - j) 2^47 + 1023 2^52 (integer operations alone); then exp_dd's
 * operations in its order, its helpers written out. */
LANE_FN inline void NAME(exp_dd)(VD a, VD *hi, VD *lo, VD *scale)
{
    VD s = a * EXP_INV + 0x1.8p52, nn = s - 0x1.8p52;
    VU u = (VU)s;
    VI j = (VI)(u & 31);
    *scale = (VD)((((u - 0x4338000000000000ULL) - (VU)j) << 47) + (1023ULL << 52));  /* unsigned: N < 0 wraps */
    VD T0 = TAB(j, 0), T1 = TAB(j, 1), T2 = TAB(j, 2);
    VD r0 = a - nn * EXP_L1, b0 = -(nn * EXP_L2);
    VD rh = r0 + b0, bb = rh - r0;                                  /* two_sum */
    VD rl = (r0 - (rh - bb)) + (b0 - bb);
    rl = rl - nn * EXP_L3;
    VD p = EXP_C6 + rh * EXP_C7;
    p = EXP_C5 + rh * p;
    p = EXP_C4 + rh * p;
    p = EXP_C3 + rh * p;
    p = EXP_C2 + rh * p;
    p = (rh * rh) * p;
    VD th = T0 + T1, tl = T2;
    VD c = 134217729.0 * rh, rh1 = c - (c - rh), rh2 = rh - rh1;  /* split */
    VD ph = T0 * rh1, pl = T0 * rh2 + T1 * rh;
    VD rest = pl + (th * (rl + p) + (tl + tl * rh));
    VD sh = th + ph, sl = ph - (sh - th);                           /* fast_two_sum */
    VD b1 = sl + rest;
    *hi = sh + b1;
    *lo = b1 - (*hi - sh);
}

/* wm_exp of every lane of a: every lane taken as exp's common case with
 * no branch (|x| in [2^-54, 690): 2^m a normal number, m in [-996, 996]);
 * a lane outside it runs on 0, and its bit in *common is clear: the
 * caller gives it wm_exp's */
LANE_FN inline __attribute__((always_inline)) VD NAME(exp_core)(VD a, unsigned *common)
{
    const VI absmask = (VI){ 0 } + 0x7fffffffffffffffLL;
    VD mag = (VD)((VI)a & absmask);
    VI in = LESS(mag, 690.0);
    *common = LANE_BITS(in & GEQ(mag, 0x1p-54));
    VD hi, lo, scale;
    NAME(exp_dd)((VD)((VI)a & in), &hi, &lo, &scale);              /* 0 outside */
    return (hi + lo) * scale;
}

/* wm_tanh of every lane of v: wm_tanh's branch for 1/16 <= |x| < 22 (E =
 * e^2|x| by exp_dd, 2|x| in exp's common case, 2^m exact for 0 <= m <=
 * 64), its operations in its order with its helpers written out; a lane
 * outside it runs on 0, its bit in *common clear */
LANE_FN inline __attribute__((always_inline)) VD NAME(tanh_core)(VD v, unsigned *common)
{
    const VI absmask = (VI){ 0 } + 0x7fffffffffffffffLL;
    VD a = (VD)((VI)v & absmask);
    VI in = GEQ(a, 0.0625) & LESS(a, 22.0);
    *common = LANE_BITS(in);
    VD h, l, s;
    NAME(exp_dd)((VD)((VI)(a + a) & in), &h, &l, &s);              /* 0 outside */
    h = h * s;
    l = l * s;
    VD nh = h + -1.0, nl = -1.0 - (nh - h);                        /* fast_two_sum(h, -1) */
    VD dh = h + 1.0, dl = 1.0 - (dh - h);                          /* fast_two_sum(h, 1) */
    VD al = nl + l, bl = dl + l;
    /* dd_div(nh, al, dh, bl) */
    VD q = nh / dh, c = 134217729.0 * q, q1 = c - (c - q);
    VD cb = 134217729.0 * dh, b1 = cb - (cb - dh), b2 = dh - b1;
    VD r = ((nh - q1 * b1) - q1 * b2) + (al - q1 * bl);
    VD t = q1 + r / (dh + bl);
    return (VD)(((VI)t & absmask) | ((VI)v & ~absmask));           /* copysign(t, x) */
}

/* r's lanes k < m whose bit in common is clear (they ran on 0) replaced
 * by one(x[k]): before r is stored, so that x is still the input when out
 * is x (in place) */
#define FALL_BACK(r, common, one, x, m)                                               \
    do {                                                                              \
        if (__builtin_expect((common) != (1u << LANES) - 1, 0)) {                     \
            double t_[LANES];                                                         \
            memcpy(t_, &(r), sizeof t_);                                              \
            for (unsigned k_ = 0; k_ < (m); k_++)                                     \
                if (!((common) >> k_ & 1)) t_[k_] = one((x)[k_]);                     \
            memcpy(&(r), t_, sizeof t_);                                              \
        }                                                                             \
    } while (0)

/* out[k] = f(x[k]) for k < LANES, one vector step (core, and one for a
 * lane that falls back); out may be x */
#define STEP(core, one, x, out)                                                       \
    do {                                                                              \
        unsigned common_;                                                             \
        VD a_, r_;                                                                    \
        memcpy(&a_, (x), sizeof a_);                                                  \
        r_ = core(a_, &common_);                                                      \
        FALL_BACK(r_, common_, one, x, LANES);                                        \
        memcpy((out), &r_, sizeof r_);                                                \
    } while (0)

/* The last m < LANES elements as one step too: a partial load (the other
 * lanes 1, in both functions' common case, so none of them falls back)
 * and store. Short arrays are most of lstm's (4 elements): element by
 * element, each cost about a step. A function of its own, not inlined in
 * the loops: there it made GCC keep fewer of their constants in
 * registers (a step of 4 took 18 ns instead of 14). */
#define PART_FN(name, core, one)                                                      \
    LANE_FN __attribute__((noinline)) void name(const double *x, double *out, unsigned m) \
    {                                                                                 \
        unsigned common;                                                              \
        VD r = core(LOAD_PART(x, m), &common);                                        \
        FALL_BACK(r, common, one, x, m);                                              \
        STORE_PART(out, r, m);                                                        \
    }
PART_FN(NAME(exp_part), NAME(exp_core), wm_exp)
PART_FN(NAME(tanh_part), NAME(tanh_core), wm_tanh)

/* out[i] = wm_exp(x[i]) for i < n, LANES a step. With sum_too (a constant:
 * two copies), also sum + out[0] + out[1] + ... in that order, added
 * two steps behind the exps (those results are there by then): the adds'
 * chain of latencies runs beside the exps instead of after them all
 * (160 000 elements: exp 0.29 ms, exp then sum 0.42, this 0.31; summing
 * each step's own results 0.36). */
LANE_FN inline __attribute__((always_inline)) double NAME(exp_loop)(const double *x, double *out, unsigned n, int sum_too, double sum)
{
    const unsigned lag = 2 * LANES;
    unsigned i = 0;
    for (; i + LANES <= n; i += LANES) {
        STEP(NAME(exp_core), wm_exp, x + i, out + i);
        if (sum_too && i >= lag)
            for (unsigned k = i - lag; k < i - lag + LANES; k++) sum += out[k];
    }
    if (i < n) NAME(exp_part)(x + i, out + i, n - i);
    if (sum_too)
        for (unsigned k = i >= lag ? i - lag : 0; k < n; k++) sum += out[k];
    return sum;
}

LANE_FN void NAME(wm_exp_n)(const double *x, double *out, unsigned n)
{
    NAME(exp_loop)(x, out, n, 0, 0);
}

LANE_FN double NAME(wm_exp_n_sum)(const double *x, double *out, unsigned n, double sum)
{
    return NAME(exp_loop)(x, out, n, 1, sum);
}

LANE_FN void NAME(wm_tanh_n)(const double *x, double *out, unsigned n)
{
    unsigned i = 0;
    for (; i + LANES <= n; i += LANES) STEP(NAME(tanh_core), wm_tanh, x + i, out + i);
    if (i < n) NAME(tanh_part)(x + i, out + i, n - i);
}

#undef STEP
#undef FALL_BACK
#undef PART_FN
#undef VD
#undef VI
#undef VU
#undef LANES
#undef LANE_FN
#undef NAME
#undef LANE_BITS
#undef TAB
#undef LESS
#undef GEQ
#undef LOAD_PART
#undef STORE_PART
