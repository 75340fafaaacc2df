/* wmath.c - exp, tanh, atan and atan2 that round the same in every build.
 *
 * Why. glibc's libm (./wengert) and musl's (the page's WebAssembly) each
 * give results within an ulp of the truth, but not the same ones: tanh
 * differs on 2% of inputs, atan2 on 12%, and so on (tests/libm/README.md),
 * and the page printed other last digits than the terminal. These
 * functions use only IEEE + - * / and exact operations (fabs, copysign,
 * bit moves), which both builds round alike, with -ffp-contract=off so that
 * no compiler fuses a multiply and an add on one side only (the Makefile).
 *
 * How. Each function computes its result as a double-double hi + lo (a
 * sum of two doubles, about 106 bits) to an error near 2^-60 of the
 * result, then rounds hi + lo once: the result is within 0.5 ulp plus that
 * error, below one ulp (faithful), and mostly the correctly rounded one.
 * The building blocks are Dekker's exact product (two_prod, by Veltkamp's
 * splitting: no fused multiply-add) and Knuth's exact sum (two_sum).
 *   exp(x)    x = (32 m + j) ln2/32 + r, |r| <= ln2/64; e^x = 2^m 2^(j/32) e^r
 *             with 2^(j/32) from a table of double-doubles and e^r by its
 *             Taylor series to r^7 (truncation < 2^-67).
 *   tanh(x)   |x| < 1/16: the odd Taylor series to x^13; else (E - 1)/(E + 1)
 *             with E = e^2|x| from exp's double-double core, divided as
 *             double-doubles; 1 from |x| >= 22 (1 - tanh x < 2^-62 there).
 *   atan(x)   |x| > 1: pi/2 - atan(1/x), 1/x as a double-double; then for
 *             z in [0, 1] and c = j/16 the nearest sixteenth,
 *             atan z = atan c + atan t, t = (z - c)/(1 + z c) (|t| <= 1/32)
 *             as a double-double, atan c from a table, atan t by its
 *             Taylor series to t^11.
 *   atan2     the ratio of the smaller to the larger of |y|, |x| as a
 *             double-double, atan of it as above, and the octant by adding
 *             it to or taking it from pi/2 or pi (double-double constants).
 * The constants are derived with mpmath by tests/libm/wmath_consts.py
 * (this file holds its output).
 *
 * Accuracy: the largest error in ulps against mpmath at 200 bits over
 * 950 000 random inputs, 50 000 in each range (tests/libm/accuracy.py),
 * glibc's on the same inputs beside it:
 *   exp    |x| in [2^-54, 710), normal results   0.5000   (glibc 0.5033)
 *          subnormal results (x < -708.4)        0.7277   (two roundings)
 *   tanh   |x| < 1/16                            0.5012   (glibc 1.5706)
 *          [1/16, 1], [1, 22], negative          0.5005   (glibc 2.0876)
 *   atan   [2^-27, 1/32], [1/32, 1], [1, 2^60]   0.5001   (glibc 0.5144)
 *   atan2  each quadrant, ratios 2^-62 .. 2^62   0.5000   (glibc 0.5022)
 * 0.5 is the error of the correctly rounded result: these are nearly
 * always it. Cost (callgrind, one call on the W2 loop's arguments): tanh
 * 166 instructions (glibc's 117), atan 142 (glibc's 70).
 * Both builds give the same bits: tests/libm/same.sh, run by
 * `make test-web`, compares them on millions of inputs. */
#include "wmath.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* no fused multiply-add, whatever the build's flags (clang's default
 * fuses a * b + c within an expression, and AVX-512F has the instruction;
 * GCC takes -ffp-contract=off, the Makefile's, and knows no such pragma) */
#ifdef __clang__
#pragma STDC FP_CONTRACT OFF
#endif

/* tests/libm/wmath_consts.py writes the constants from here to the next rule */
/* ln2/32 in three parts; EXP_L1 has 36 bits, so N * EXP_L1 is exact for |N| < 2^17 */
#define EXP_L1 0x1.62e42fefa0000p-6
#define EXP_L2 0x1.cf79abc9e3b3ap-45
#define EXP_L3 -0x1.ff0342542fc33p-99
#define EXP_INV 0x1.71547652b82fep+5   /* 32 / ln2 */
/* 2^(j/32), j = 0..31, as t1 + t2 + t3 = exp_tab[0][j] + exp_tab[1][j]
 * + exp_tab[2][j]: t1 + t2 the double nearest it, t1 its first 26 bits,
 * t3 the double nearest the rest. By parts, so that the vector loops
 * fetch a part for all lanes at once (a gather, or a permute of registers) */
static _Alignas(64) const double exp_tab[3][32] = {
    {
        0x1.0000000000000p+0, 0x1.059b0d0000000p+0, 0x1.0b55868000000p+0, 0x1.11301d0000000p+0,
        0x1.172b838000000p+0, 0x1.1d48730000000p+0, 0x1.2387a68000000p+0, 0x1.29e9df0000000p+0,
        0x1.306fe08000000p+0, 0x1.371a730000000p+0, 0x1.3dea648000000p+0, 0x1.44e0860000000p+0,
        0x1.4bfdad0000000p+0, 0x1.5342b50000000p+0, 0x1.5ab07d8000000p+0, 0x1.6247eb0000000p+0,
        0x1.6a09e60000000p+0, 0x1.71f75e8000000p+0, 0x1.7a11470000000p+0, 0x1.8258998000000p+0,
        0x1.8ace540000000p+0, 0x1.93737b0000000p+0, 0x1.9c49180000000p+0, 0x1.a5503b0000000p+0,
        0x1.ae89f98000000p+0, 0x1.b7f76f0000000p+0, 0x1.c199bd8000000p+0, 0x1.cb720d8000000p+0,
        0x1.d5818d8000000p+0, 0x1.dfc9730000000p+0, 0x1.ea4afa0000000p+0, 0x1.f507658000000p+0,
    },
    {
        0x0.0p+0, 0x1.8ac2ba0000000p-27, 0x1.3e6243c000000p-26, 0x1.25b5100000000p-32,
        0x1.1f545ec000000p-26, 0x1.68b9aa0000000p-28, 0x1.9d588e0000000p-26, 0x1.47f7b84000000p-26,
        0x1.18db8a8000000p-27, 0x1.ceaa72c000000p-26, 0x1.048d088000000p-26, 0x1.8624b40000000p-30,
        0x1.4d8a89c000000p-26, 0x1.a753e08000000p-26, 0x1.52150a4000000p-26, 0x1.d2ac280000000p-31,
        0x1.9fcef34000000p-26, 0x1.d8bee80000000p-29, 0x1.f580c38000000p-27, 0x1.4cce130000000p-28,
        0x1.15506d8000000p-27, 0x1.9b8bca0000000p-29, 0x1.51f8480000000p-27, 0x1.1f12ae8000000p-27,
        0x1.5ad3ad0000000p-28, 0x1.7daf238000000p-27, 0x1.6154a70000000p-26, 0x1.3be41a4000000p-26,
        0x1.3ee921c000000p-26, 0x1.bdcdaf8000000p-27, 0x1.52486d0000000p-27, 0x1.b722a00000000p-27,
    },
    {
        0x0.0p+0, 0x1.d73e2a475b465p-55, 0x1.8a62e4adc610bp-54, -0x1.6c51039449b3ap-54,
        -0x1.19041b9d78a76p-55, 0x1.e016e00a2643cp-54, 0x1.9b07eb6c70573p-54, 0x1.612e8afad1255p-55,
        0x1.6f46ad23182e4p-55, -0x1.63aeabf42eae2p-54, 0x1.ada0911f09ebcp-55, 0x1.89b7a04ef80d0p-59,
        0x1.d4397afec42e2p-56, -0x1.07abe1db13cadp-55, 0x1.6324c054647adp-54, -0x1.383c17e40b497p-54,
        -0x1.bdd3413b26456p-54, -0x1.16e4786887a99p-55, -0x1.41577ee04992fp-55, -0x1.d4c1dd41532d8p-54,
        0x1.6e9f156864b27p-54, -0x1.75fc781b57ebcp-57, 0x1.c7c46b071f2bep-56, -0x1.d2f6edb8d41e1p-54,
        0x1.7a1cd345dcc81p-54, -0x1.5584f7e54ac3bp-56, 0x1.11065895048ddp-55, 0x1.503cbd1e949dbp-56,
        0x1.2ed02d75b3707p-55, -0x1.1a5cd4f184b5cp-54, -0x1.e9c23179c2893p-54, 0x1.9d3e12dd8a18bp-54,
    },
};
/* exp(r) - 1 - r = r^2 (1/2 + r/6 + ...): the Taylor coefficients 1/k! */
#define EXP_C2 0x1.0000000000000p-1
#define EXP_C3 0x1.5555555555555p-3
#define EXP_C4 0x1.5555555555555p-5
#define EXP_C5 0x1.1111111111111p-7
#define EXP_C6 0x1.6c16c16c16c17p-10
#define EXP_C7 0x1.a01a01a01a01ap-13
/* tanh(x) = x + T3 x^3 + ... + T13 x^13 + O(x^15) (Taylor) */
#define TANH_T3 -0x1.5555555555555p-2
#define TANH_T5 0x1.1111111111111p-3
#define TANH_T7 -0x1.ba1ba1ba1ba1cp-5
#define TANH_T9 0x1.664f4882c10fap-6
#define TANH_T11 -0x1.226e355e6c23dp-7
#define TANH_T13 0x1.d6d3d0e157de0p-9
/* atan(t) = t - t^3/3 + t^5/5 - ...: the coefficients (-1)^k/(2k+1) */
#define ATAN_A3 -0x1.5555555555555p-2
#define ATAN_A5 0x1.999999999999ap-3
#define ATAN_A7 -0x1.2492492492492p-3
#define ATAN_A9 0x1.c71c71c71c71cp-4
#define ATAN_A11 -0x1.745d1745d1746p-4
/* atan(j/16), j = 0..16, as hi, lo */
static const double atan_tab[34] = {
    0x0.0p+0, 0x0.0p+0,
    0x1.ff55bb72cfdeap-5, -0x1.c934d86d23f1dp-60,
    0x1.fd5ba9aac2f6ep-4, -0x1.cd37686760c17p-59,
    0x1.7b97b4bce5b02p-3, 0x1.347b0b4f881cap-58,
    0x1.f5b75f92c80ddp-3, 0x1.8ab6e3cf7afbdp-57,
    0x1.362773707ebccp-2, -0x1.963a544b672d8p-57,
    0x1.6f61941e4def1p-2, -0x1.c63aae6f6e918p-56,
    0x1.a64eec3cc23fdp-2, -0x1.24dec1b50b7ffp-56,
    0x1.dac670561bb4fp-2, 0x1.a2b7f222f65e2p-56,
    0x1.0657e94db30d0p-1, -0x1.d5b495f6349e6p-56,
    0x1.1e00babdefeb4p-1, -0x1.928df287a668fp-58,
    0x1.345f01cce37bbp-1, 0x1.1021137c71102p-55,
    0x1.4978fa3269ee1p-1, 0x1.2419a87f2a458p-56,
    0x1.5d58987169b18p-1, 0x1.0028e4bc5e7cap-57,
    0x1.700a7c5784634p-1, -0x1.8c34d25aadef6p-56,
    0x1.819d0b7158a4dp-1, -0x1.bf76229d3b917p-56,
    0x1.921fb54442d18p-1, 0x1.1a62633145c07p-55,
};
#define PI_HI 0x1.921fb54442d18p+1
#define PI_LO 0x1.1a62633145c07p-53
#define PI_2_HI 0x1.921fb54442d18p+0
#define PI_2_LO 0x1.1a62633145c07p-54

/* ------------------------------------------------------- exact pieces */

/* s + e = a + b exactly (Knuth) */
static inline void two_sum(double a, double b, double *s, double *e)
{
    double t = a + b, bb = t - a;
    *s = t;
    *e = (a - (t - bb)) + (b - bb);
}

/* s + e = a + b exactly, when |a| >= |b| or a is 0 (Dekker) */
static inline void fast_two_sum(double a, double b, double *s, double *e)
{
    double t = a + b;
    *s = t;
    *e = b - (t - a);
}

/* hi + lo = a with hi of 26 bits (Veltkamp; |a| < 2^995) */
static inline void split(double a, double *hi, double *lo)
{
    double c = 134217729.0 * a;     /* 2^27 + 1 */
    double h = c - (c - a);
    *hi = h;
    *lo = a - h;
}

/* p + e = a b exactly (Dekker), without a fused multiply-add */
static inline void two_prod(double a, double b, double *p, double *e)
{
    double ah, al, bh, bl, t = a * b;
    split(a, &ah, &al);
    split(b, &bh, &bl);
    *p = t;
    *e = ((ah * bh - t) + ah * bl + al * bh) + al * bl;
}

/* (ah + al) / (bh + bl) as a double-double q1 + q2: q1 is the quotient
 * cut to 26 bits and bh = b1 + b2 with b1 of 26 bits, so that q1 b1 is
 * exact and ah - q1 b1 too (Sterbenz: within 2^-25 of ah); q2 is the
 * remainder's quotient (cheaper than Dekker's product of q and bh) */
static inline void dd_div(double ah, double al, double bh, double bl, double *qh, double *ql)
{
    double q1, q0, b1, b2;
    split(ah / bh, &q1, &q0);
    split(bh, &b1, &b2);
    double r = ((ah - q1 * b1) - q1 * b2) + (al - q1 * bl);
    *qh = q1;
    *ql = r / (bh + bl);                          /* r is 2^-26 of ah: bl counts */
}

/* 2^k for -1022 <= k <= 1023 */
static inline double pow2(int k)
{
    uint64_t u = (uint64_t)(k + 1023) << 52;
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

/* ---------------------------------------------------------------- exp */

/* e^x = 2^m (hi + lo), for |x| < 746 (not nan); hi + lo in [0.98, 2.03)
 * to about 2^-63 of itself */
static inline void exp_dd(double x, int *m, double *hi, double *lo)
{
    double n = (x * EXP_INV + 0x1.8p52) - 0x1.8p52;    /* nearest whole number */
    int N = (int)n, j = N & 31;
    *m = (N - j) / 32;
    /* r = x - n ln2/32 as rh + rl: x - n L1 is exact (n L1 has 53 bits
     * and is within a factor 2 of x when n is not 0) */
    double r0 = x - n * EXP_L1, rh, rl;
    two_sum(r0, -(n * EXP_L2), &rh, &rl);
    rl -= n * EXP_L3;
    /* e^r - 1 - rh = rl + p (the rl rh term is below 2^-66) */
    double p = rh * rh * (EXP_C2 + rh * (EXP_C3 + rh * (EXP_C4 + rh * (EXP_C5 + rh * (EXP_C6 + rh * EXP_C7)))));
    double t1 = exp_tab[0][j], t2 = exp_tab[1][j], t3 = exp_tab[2][j];
    double th = t1 + t2, tl = t3;
    /* T (1 + u) = th + th rh + [th (rl + p) + tl + tl rh]; th rh = ph + pl
     * with ph = t1 rh1 exact (26 bits by 26) and pl below 2^-31 */
    double rh1, rh2, sh, sl;
    split(rh, &rh1, &rh2);
    double ph = t1 * rh1, pl = t1 * rh2 + t2 * rh;
    double rest = pl + (th * (rl + p) + (tl + tl * rh));
    fast_two_sum(th, ph, &sh, &sl);
    fast_two_sum(sh, sl + rest, hi, lo);
}

/* e^x, faithfully rounded; a subnormal result within one ulp (two
 * roundings) */
double wm_exp(double x)
{
    if (!(x > -746)) {                              /* nan, or 0: exact at -inf, else an underflow */
        if (x != x) return x + x;
        return x == -INFINITY ? 0 : 0x1p-1074 / -x;   /* 0, raising FE_UNDERFLOW as libm does */
    }
    if (!(x < 710)) return x * 0x1p1023;            /* overflow, +inf */
    if (fabs(x) < 0x1p-54) return 1 + x;
    int m;
    double h, l;
    exp_dd(x, &m, &h, &l);
    if (m > 1000) return ((h + l) * 0x1p1000) * pow2(m - 1000);   /* may overflow to inf */
    if (m < -1000) return ((h + l) * pow2(m + 1000)) * 0x1p-1000; /* may be subnormal */
    return (h + l) * pow2(m);
}

/* ------------------------------------------- an array's exp and tanh */

/* wm_exp_n and wm_tanh_n give wm_exp's and wm_tanh's bits on every
 * element, several at a time: the loops' text is src/wmath_lanes.h,
 * built here for each x86-64 vector width (SSE2: 2 lanes, every x86-64;
 * AVX2: 4; AVX-512F: 8), and the first call takes the widest one this CPU
 * runs (cpuid, by __builtin_cpu_supports: valgrind, which emulates no
 * AVX-512, hides it there). Elsewhere (the page's WebAssembly) they are
 * the scalar loops. tests/unit/test_wmath.c runs every path the CPU has
 * against the scalar functions (wmath.h lists them: wm_paths). */
static void exp_n_scalar(const double *x, double *out, unsigned n)
{
    for (unsigned i = 0; i < n; i++) out[i] = wm_exp(x[i]);
}

static double exp_n_sum_scalar(const double *x, double *out, unsigned n, double sum)
{
    for (unsigned i = 0; i < n; i++) sum += out[i] = wm_exp(x[i]);
    return sum;
}

static void tanh_n_scalar(const double *x, double *out, unsigned n)
{
    for (unsigned i = 0; i < n; i++) out[i] = wm_tanh(x[i]);
}

static int always(void) { return 1; }

#if defined(__SSE2__) && defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

/* unsigned 64-bit lanes: 2^m's bits are made by shifts that would be
 * undefined on negative signed ones */
typedef unsigned long long wm_vu2 __attribute__((vector_size(16)));
typedef unsigned long long wm_vu4 __attribute__((vector_size(32)));
typedef unsigned long long wm_vu8 __attribute__((vector_size(64)));

#define VD __m128d
#define VI __m128i
#define VU wm_vu2
#define LANES 2
#define LANE_FN static
#define NAME(f) f##_sse2
#define LANE_BITS(m) (unsigned)_mm_movemask_pd((__m128d)(m))
#define TAB(j, k) ((VD){ exp_tab[k][(j)[0]], exp_tab[k][(j)[1]] })
/* by intrinsics: GCC 12 turns `x & (a < b)` of 2-lane vectors into a
 * select done one lane at a time in general registers (tanh of 160 000
 * doubles 2.0 ms that way, 1.44 this way) */
#define LESS(a, b) ((VI)_mm_cmplt_pd((a), _mm_set1_pd(b)))
#define GEQ(a, b) ((VI)_mm_cmpge_pd((a), _mm_set1_pd(b)))
#define LOAD_PART(p, m) _mm_loadl_pd(_mm_set1_pd(1.0), (p))          /* m is 1 */
#define STORE_PART(p, v, m) _mm_storel_pd((p), (v))
#include "wmath_lanes.h"

/* AVX2 without FMA: the target attribute adds AVX and AVX2 alone */
/* lanes k < m set (AVX2's masked loads and stores take a vector) */
__attribute__((target("avx2"))) static inline __m256i first_lanes_avx2(unsigned m)
{
    return _mm256_cmpgt_epi64(_mm256_set1_epi64x(m), _mm256_setr_epi64x(0, 1, 2, 3));
}

/* p[0 .. m), the other lanes 1; a masked load reads nothing past m */
__attribute__((target("avx2"))) static inline __m256d load_part_avx2(const double *p, unsigned m)
{
    __m256i k = first_lanes_avx2(m);
    return _mm256_blendv_pd(_mm256_set1_pd(1.0), _mm256_maskload_pd(p, k), _mm256_castsi256_pd(k));
}

#define VD __m256d
#define VI __m256i
#define VU wm_vu4
#define LANES 4
#define LANE_FN static __attribute__((target("avx2")))
#define NAME(f) f##_avx2
#define LANE_BITS(m) (unsigned)_mm256_movemask_pd((__m256d)(m))
#define TAB(j, k) _mm256_i64gather_pd(exp_tab[k], (j), 8)   /* faster here than 4 loads + a transpose */
#define LESS(a, b) ((VI)((a) < (b)))
#define GEQ(a, b) ((VI)((a) >= (b)))
#define LOAD_PART(p, m) load_part_avx2((p), (m))
#define STORE_PART(p, v, m) _mm256_maskstore_pd((p), first_lanes_avx2(m), (v))
#include "wmath_lanes.h"

/* AVX-512F: part[j] for each lane's j (0 .. 31) from the 32 doubles of
 * part held in four registers, by two two-register permutes (j's low four
 * bits) and a blend (its fifth): no memory access by lane, 0.28 ms where a
 * gather takes 0.38 (exp of 160 000 doubles) */
__attribute__((target("avx512f"))) static inline __m512d part_avx512(__m512i j, const double *part)
{
    __m512d lo = _mm512_permutex2var_pd(_mm512_load_pd(part), j, _mm512_load_pd(part + 8));
    __m512d hi = _mm512_permutex2var_pd(_mm512_load_pd(part + 16), j, _mm512_load_pd(part + 24));
    return _mm512_mask_blend_pd(_mm512_test_epi64_mask(j, _mm512_set1_epi64(16)), lo, hi);
}

#define VD __m512d
#define VI __m512i
#define VU wm_vu8
#define LANES 8
#define LANE_FN static __attribute__((target("avx512f")))
#define NAME(f) f##_avx512
#define LANE_BITS(m) (unsigned)_mm512_test_epi64_mask((m), (m))
#define TAB(j, k) part_avx512((j), exp_tab[k])
#define LESS(a, b) ((VI)((a) < (b)))
#define GEQ(a, b) ((VI)((a) >= (b)))
#define LOAD_PART(p, m) _mm512_mask_loadu_pd(_mm512_set1_pd(1.0), (__mmask8)((1u << (m)) - 1), (p))
#define STORE_PART(p, v, m) _mm512_mask_storeu_pd((p), (__mmask8)((1u << (m)) - 1), (v))
#include "wmath_lanes.h"

static int has_avx2(void)
{
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2");
}

static int has_avx512(void)
{
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("avx512f");
}

/* slowest first; each needs what the one before it needs */
static const struct wm_path paths[] = {
    { "scalar", exp_n_scalar, exp_n_sum_scalar, tanh_n_scalar, always },
    { "sse2", wm_exp_n_sse2, wm_exp_n_sum_sse2, wm_tanh_n_sse2, always },
    { "avx2", wm_exp_n_avx2, wm_exp_n_sum_avx2, wm_tanh_n_avx2, has_avx2 },
    { "avx512f", wm_exp_n_avx512, wm_exp_n_sum_avx512, wm_tanh_n_avx512, has_avx512 },
};
#else
static const struct wm_path paths[] = {
    { "scalar", exp_n_scalar, exp_n_sum_scalar, tanh_n_scalar, always },
};
#endif

const struct wm_path *wm_paths(unsigned *n)
{
    static unsigned usable;                        /* 0: not asked yet */
    unsigned k = __atomic_load_n(&usable, __ATOMIC_RELAXED);
    if (!k) {
        while (k < sizeof paths / sizeof paths[0] && paths[k].runs_here()) k++;
        __atomic_store_n(&usable, k, __ATOMIC_RELAXED);
    }
    *n = k;
    return paths;
}

/* The path wm_exp_n and wm_tanh_n take, found once: the widest this CPU
 * runs, or the one WENGERT_WMATH names (scalar, sse2, avx2, avx512f) if
 * this CPU runs it: for tests, which run the golden programs on each
 * narrower path too (tests/shell/wmath_paths.sh; CI's CPU may lack
 * AVX-512F, and valgrind hides it). */
const struct wm_path *wm_path_used(void)
{
    static const struct wm_path *used;
    const struct wm_path *p = __atomic_load_n(&used, __ATOMIC_RELAXED);
    if (!p) {
        unsigned n;
        const struct wm_path *all = wm_paths(&n);
        const char *want = getenv("WENGERT_WMATH");
        p = all + (n - 1);
        for (unsigned k = 0; want && k < n; k++)
            if (strcmp(all[k].name, want) == 0) p = all + k;
        __atomic_store_n(&used, p, __ATOMIC_RELAXED);
    }
    return p;
}

void wm_exp_n(const double *x, double *out, unsigned n)
{
    wm_path_used()->exp_n(x, out, n);
}

double wm_exp_n_sum(const double *x, double *out, unsigned n, double sum)
{
    return wm_path_used()->exp_n_sum(x, out, n, sum);
}

void wm_tanh_n(const double *x, double *out, unsigned n)
{
    wm_path_used()->tanh_n(x, out, n);
}

/* --------------------------------------------------------------- tanh */

double wm_tanh(double x)
{
    double a = fabs(x), r;
    if (!(a < 22)) return a == a ? copysign(1, x) : x + x;   /* nan stays nan */
    if (a < 0x1p-27) return x;                   /* tanh x = x (1 - x^2/3 ...): rounds to x */
    if (a < 0.0625) {
        double z = a * a;
        double p = z * (TANH_T3 + z * (TANH_T5 + z * (TANH_T7 + z * (TANH_T9 + z * (TANH_T11 + z * TANH_T13)))));
        r = a + a * p;
    } else {
        int m;
        double h, l, nh, nl, dh, dl, qh, ql;
        exp_dd(2 * a, &m, &h, &l);
        double s = pow2(m);                       /* 0 <= m <= 64: exact */
        h *= s;
        l *= s;
        fast_two_sum(h, -1, &nh, &nl);            /* E - 1 and E + 1, exactly (E > 1) */
        fast_two_sum(h, 1, &dh, &dl);
        dd_div(nh, nl + l, dh, dl + l, &qh, &ql);
        r = qh + ql;
    }
    return copysign(r, x);
}

/* --------------------------------------------------------------- atan */

/* atan(z) as hi + lo, for z = zh + zl in [0, 1] (|zl| <= ulp(zh)) */
static void atan_dd(double zh, double zl, double *hi, double *lo)
{
    int j = (int)(zh * 16 + 0.5);
    double th, tl;
    if (j == 0) {                                 /* z < 1/32: t = z */
        th = zh;
        tl = zl;
    } else {
        /* t = (z - c) / (1 + z c), c = j/16: z - c is exact (Sterbenz);
         * with zh = z1 + z2 (26 and 27 bits), z1 c and z2 c are exact
         * (c has 5 bits) */
        double c = j * 0.0625, z1, z2, dh, dl;
        split(zh, &z1, &z2);
        fast_two_sum(1, z1 * c, &dh, &dl);
        dd_div(zh - c, zl, dh, dl + (z2 * c + zl * c), &th, &tl);
    }
    /* atan t = t + t^3 (A3 + t^2 A5 + ... + t^8 A11), |t| <= 1/32: the
     * rest is below 2^-63 t */
    double t = th + tl, t2 = t * t;
    double p = t * t2 * (ATAN_A3 + t2 * (ATAN_A5 + t2 * (ATAN_A7 + t2 * (ATAN_A9 + t2 * ATAN_A11))));
    double ah = atan_tab[2 * j], al = atan_tab[2 * j + 1], sh, sl;
    if (j == 0) fast_two_sum(th, tl + p, hi, lo);
    else {
        fast_two_sum(ah, th, &sh, &sl);           /* atan c >= 1/16 > |t| */
        fast_two_sum(sh, sl + (al + (tl + p)), hi, lo);
    }
}

/* 1/a as zh + zl (1 - zh a is exact: zh a is within a rounding of 1) */
static void recip_dd(double a, double *zh, double *zl)
{
    double z = 1 / a, p, e;
    two_prod(z, a, &p, &e);
    *zh = z;
    *zl = ((1 - p) - e) / a;
}

double wm_atan(double x)
{
    double a = fabs(x), hi, lo, sh, sl;
    if (!(a <= 0x1p60)) return a == a ? copysign(PI_2_HI, x) : x + x;   /* pi/2 - 1/x rounds to PI_2_HI */
    if (a < 0x1p-27) return x;                    /* atan x = x (1 - x^2/3 ...): rounds to x */
    if (a <= 1) {
        atan_dd(a, 0, &hi, &lo);
        return copysign(hi + lo, x);
    }
    double zh, zl;
    recip_dd(a, &zh, &zl);
    atan_dd(zh, zl, &hi, &lo);
    fast_two_sum(PI_2_HI, -hi, &sh, &sl);
    return copysign(sh + (sl + (PI_2_LO - lo)), x);
}

/* b scaled by the power of two that brings a into [1, 2); a normal */
static double scale_as(double a, double b)
{
    uint64_t u;
    memcpy(&u, &a, sizeof u);
    int k = 1023 - (int)(u >> 52 & 0x7ff);        /* -1023 <= k <= 1022 */
    return b * pow2(k / 2) * pow2(k - k / 2);
}

double wm_atan2(double y, double x)
{
    if (x != x || y != y) return x + y;
    double ay = fabs(y), ax = fabs(x), r;
    if (ay == 0) r = signbit(x) ? PI_HI : 0;       /* atan2(+-0, -0 or x < 0) = +-pi */
    else if (ax == 0) r = PI_2_HI;
    else if (isinf(ax)) r = isinf(ay) ? (x > 0 ? PI_2_HI / 2 : 0x1.2d97c7f3321d2p+1) : (x > 0 ? 0 : PI_HI);
    else if (isinf(ay)) r = PI_2_HI;
    else {
        int swap = ay > ax;                        /* z = small / large <= 1 */
        double num = swap ? ax : ay, den = swap ? ay : ax, zh = num / den, zl = 0, hi, lo, sh, sl;
        if (zh >= 0x1p-60) {
            /* the remainder of num / den, both scaled so that den is in [1, 2) */
            if (den < 0x1p-1000) { num *= 0x1p600; den *= 0x1p600; }
            double n2 = scale_as(den, num), d2 = scale_as(den, den), p, e;
            two_prod(zh, d2, &p, &e);
            zl = ((n2 - p) - e) / d2;
            atan_dd(zh, zl, &hi, &lo);
        } else {
            hi = zh;                               /* atan z = z (1 - z^2/3 ...) */
            lo = 0;
        }
        if (!swap && x > 0) r = hi + lo;
        else if (!swap) {                          /* pi - atan z */
            fast_two_sum(PI_HI, -hi, &sh, &sl);
            r = sh + (sl + (PI_LO - lo));
        } else if (x > 0) {                        /* pi/2 - atan z */
            fast_two_sum(PI_2_HI, -hi, &sh, &sl);
            r = sh + (sl + (PI_2_LO - lo));
        } else {                                   /* pi/2 + atan z */
            fast_two_sum(PI_2_HI, hi, &sh, &sl);
            r = sh + (sl + (PI_2_LO + lo));
        }
    }
    return copysign(r, y);
}
