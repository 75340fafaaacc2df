/* posit.c - posit<n,2> arithmetic (Posit Standard 2022) for n = 8, 16, 32.
 *
 * Every operation is written once over the width n and instantiated three
 * times with n constant, so the compiler specialises each copy.  All of it is
 * integer arithmetic: a value is unpacked to (sign, scale, significand), the
 * exact result (or its leading bits plus a sticky bit for everything below)
 * is formed, and encode() rounds it once on the bit pattern.
 */
#include "posit.h"
#include "state.h"

#include <math.h>
#include <string.h>

#if defined(__GNUC__)
#define HOT static inline __attribute__((always_inline))
#else
#define HOT static inline
#endif

/* ---- width constants ---------------------------------------------------- */

HOT uint32_t mask_of(int n) { return 0xffffffffu >> (32 - n); }
HOT uint32_t nar_of(int n) { return 1u << (n - 1); }
HOT uint32_t maxpos_of(int n) { return nar_of(n) - 1; }
/* |scale| of maxpos and minpos: 2^(4n-8). */
HOT int maxscale_of(int n) { return 4 * n - 8; }

HOT int clz64(uint64_t x) { return __builtin_clzll(x); }

/* ---- unpacking and rounding --------------------------------------------- */

/* A nonzero real posit is (-1)^neg * sig/2^31 * 2^scale with sig's top bit
 * set.  posit32 has at most 27 fraction bits, so 32 bits of sig hold any
 * posit exactly and two of them multiply in 64 bits. */
typedef struct {
    int neg;
    int scale;
    uint32_t sig;
} unpacked;

/* mag is the pattern of a positive real posit.  The regime is a run of
 * equal bits: one count of leading zeros of the body, or of its complement,
 * measures it. */
HOT unpacked decode_mag(uint32_t mag, int neg, int n)
{
    unpacked u;
    uint64_t body = (uint64_t)mag << (65 - n);     /* sign bit dropped */
    int ones = (int)(body >> 63);                  /* regime of 1s, not 0s */
    int m = clz64(body ^ (0 - (body >> 63)));      /* regime run length */
    int k = -m ^ -ones;                            /* m-1 for 1s, -m for 0s */
    uint64_t rest = (body << m) << 1;              /* exponent, then fraction */
    u.neg = neg;
    u.scale = 4 * k + (int)(rest >> 62);
    u.sig = (uint32_t)((rest << 2) >> 33) | 0x80000000u;
    return u;
}

/* All ones for a negative pattern, else 0. */
HOT uint32_t sign_mask(uint32_t x, int n) { return 0u - ((x >> (n - 1)) & 1); }

/* (x ^ m) - m: x when m is 0, -x when m is all ones; no branch to mispredict. */
HOT uint32_t cond_neg(uint32_t x, uint32_t m, int n) { return ((x ^ m) - m) & mask_of(n); }

/* x must be neither 0 nor NaR. */
HOT unpacked decode(uint32_t x, int n)
{
    uint32_t s = sign_mask(x, n);
    return decode_mag(cond_neg(x, s, n), (int)(s & 1), n);
}

/* Whether x is 0 or NaR: the two patterns with nothing below the sign bit. */
HOT int special(uint32_t x, int n) { return (x & (mask_of(n) >> 1)) == 0; }

/* Round (-1)^neg * 2^scale * (1 + frac/2^64 + tiny) to n bits, where tiny
 * is positive and below one unit of frac iff sticky.  The standard defines
 * rounding on the bit string: write regime, exponent and fraction without
 * limit, cut after n bits, round to nearest with ties to even.  So the string
 * is built in a 64-bit word and cut there; near maxpos/minpos, where the
 * exponent is cut too, the midpoint is that of the bit strings.  Outside
 * [minpos, maxpos] the standard clamps instead of rounding to 0 or NaR. */
HOT uint32_t encode(int neg, int scale, uint64_t frac, int sticky, int n)
{
    uint32_t body;
    if (scale > maxscale_of(n)) {
        body = maxpos_of(n);
    } else if (scale < -maxscale_of(n)) {
        body = 1;
    } else {
        int k = ((scale + 128) >> 2) - 32;         /* floor(scale/4), portably */
        uint64_t e = (uint64_t)((scale + 128) & 3);
        /* "10" shifted right arithmetically by k gives k+1 ones and a zero;
         * "01" shifted right by -k-1 gives -k zeros and a one: the regime
         * either way, without a branch on the sign of k.  (>> of a negative
         * signed value sign-extends in GCC and Clang; C leaves it to them.) */
        int kneg = k < 0;
        int shift = kneg ? -k - 1 : k;
        uint64_t str = ((uint64_t)(2 - kneg) << 62) | (e << 60) | (frac >> 4);
        uint64_t u = (uint64_t)((int64_t)str >> shift);   /* the string, from bit 63 */
        uint64_t lost = (frac << (60 - shift)) | (uint64_t)sticky;
        body = (uint32_t)(u >> (65 - n));
        uint32_t guard = (uint32_t)(u >> (64 - n)) & 1;
        uint32_t below = ((u << n) | lost) != 0;
        body += guard & (below | (body & 1));
    }
    return cond_neg(body, 0u - (uint32_t)neg, n);
}

/* ---- arithmetic --------------------------------------------------------- */

HOT uint32_t add_n(uint32_t a, uint32_t b, int n)
{
    a &= mask_of(n);
    b &= mask_of(n);
    if (special(a, n) | special(b, n))
        return a == nar_of(n) || b == nar_of(n) ? nar_of(n) : a | b;
    uint32_t sa = sign_mask(a, n), sb = sign_mask(b, n);
    uint32_t ma = cond_neg(a, sa, n), mb = cond_neg(b, sb, n);
    uint32_t swap = 0u - (uint32_t)(ma < mb);  /* posit order is magnitude order */
    uint32_t differ = sa ^ sb, t = (ma ^ mb) & swap;
    ma ^= t;
    mb ^= t;
    sa ^= differ & swap;                       /* the sign of the larger */
    unpacked x = decode_mag(ma, (int)(sa & 1), n), y = decode_mag(mb, 0, n);
    int d = x.scale - y.scale;
    d = d > 63 ? 63 : d;
    uint64_t sx = (uint64_t)x.sig << 31;  /* hidden bit at 62: room for carry */
    uint64_t sy = (uint64_t)y.sig << 31;
    /* Bits of y shifted past bit 0 are dropped, and that never changes the
     * rounding.  sx has >= 35 trailing zeros (27 fraction bits at most), so
     * bits go only when d >= 36, leaving y's kept part t below 2^27.  The
     * exact sum is then within one unit of the computed one, c, and only c
     * itself could be a rounding midpoint on the way; but midpoints are
     * multiples of 2^33 (guard bit >= 33) while c is t or -t modulo 2^33,
     * which is nonzero unless t = 0, when c = x, a posit. */
    sy >>= d;
    uint64_t m = 0 - (uint64_t)(differ & 1);   /* signs differ: subtract */
    uint64_t s = sx + ((sy ^ m) - m);
    if (s == 0)
        return 0;
    int lz = clz64(s);
    return encode(x.neg, x.scale + 1 - lz, (s << lz) << 1, 0, n);
}

HOT uint32_t mul_n(uint32_t a, uint32_t b, int n)
{
    a &= mask_of(n);
    b &= mask_of(n);
    if (special(a, n) | special(b, n))
        return a == nar_of(n) || b == nar_of(n) ? nar_of(n) : 0;
    unpacked x = decode(a, n), y = decode(b, n);
    uint64_t p = (uint64_t)x.sig * y.sig;         /* exact, in [2^62, 2^64) */
    int top = (int)(p >> 63);
    return encode(x.neg ^ y.neg, x.scale + y.scale + top, p << (2 - top), 0, n);
}

HOT uint32_t div_n(uint32_t a, uint32_t b, int n)
{
    a &= mask_of(n);
    b &= mask_of(n);
    if (special(a, n) | special(b, n))
        return a == nar_of(n) || special(b, n) ? nar_of(n) : 0;
    unpacked x = decode(a, n), y = decode(b, n);
    /* 31+ quotient bits beyond the hidden one, plus the remainder as sticky,
     * decide the rounding of a result with at most 27 fraction bits. */
    uint64_t num = (uint64_t)x.sig << 32;
    uint64_t q = num / y.sig;
    int inexact = num % y.sig != 0;
    int top = (int)(q >> 32);                      /* quotient >= 1 */
    return encode(x.neg ^ y.neg, x.scale - y.scale - 1 + top, q << (33 - top),
                  inexact, n);
}

/* floor(sqrt(r)) exactly, and whether it was exact.  The double square root
 * is only a first guess (within one of the answer); the integer steps after
 * it decide, so no floating-point rounding can reach the result. */
HOT uint32_t isqrt64(uint64_t r, int *inexact)
{
    uint64_t s = (uint64_t)(int64_t)sqrt((double)(int64_t)(r >> 1) * 2.0);
    if (s > 0xffffffffu)
        s = 0xffffffffu;
    while (s * s > r)
        s--;
    uint64_t rem = r - s * s;
    while (rem > 2 * s) {               /* (s+1)^2 <= r */
        rem -= 2 * s + 1;
        s++;
    }
    *inexact = rem != 0;
    return (uint32_t)s;
}

HOT uint32_t sqrt_n(uint32_t a, int n)
{
    a &= mask_of(n);
    if (a == 0)
        return 0;
    if (a & nar_of(n))                  /* NaR or negative */
        return nar_of(n);
    unpacked x = decode(a, n);
    int odd = (x.scale + 128) & 1;
    /* An even power of two comes out of the root whole; the significand
     * (doubled when the scale is odd) is scaled to 62 or 63 bits so its
     * root has 32 bits with the leading one at bit 31. */
    int inexact;
    uint32_t r = isqrt64((uint64_t)x.sig << (31 + odd), &inexact);
    return encode(0, (x.scale - odd) / 2, (uint64_t)r << 33, inexact, n);
}

HOT uint32_t neg_n(uint32_t a, int n) { return (0u - a) & mask_of(n); }

HOT uint32_t abs_n(uint32_t a, int n) { return cond_neg(a, sign_mask(a, n), n); }

/* Flipping the sign bit turns signed n-bit order into unsigned order. */
HOT int lt_n(uint32_t a, uint32_t b, int n)
{
    return ((a ^ nar_of(n)) & mask_of(n)) < ((b ^ nar_of(n)) & mask_of(n));
}

/* ---- conversions -------------------------------------------------------- */

/* Every posit up to 32 bits is a normal double (28 significant bits, scale
 * within +-120), so the bits can be assembled directly. */
HOT double to_double_n(uint32_t a, int n)
{
    a &= mask_of(n);
    if (a == 0)
        return 0.0;
    if (a == nar_of(n))
        return NAN;
    unpacked x = decode(a, n);
    uint64_t bits = ((uint64_t)x.neg << 63) | ((uint64_t)(x.scale + 1023) << 52)
                    | (((uint64_t)x.sig << 21) & 0x000fffffffffffffu);
    double d;
    memcpy(&d, &bits, sizeof d);
    return d;
}

HOT uint32_t signed_minpos(int neg, int n) { return neg ? mask_of(n) : 1u; }

/* dir: the true value is d (0), or infinitesimally above (+1) or below (-1)
 * it.  A true value just beyond d in magnitude is d plus a sticky bit; one
 * just short of d is d less one unit at 2^-64 of its scale, plus sticky.  No
 * rounding boundary of a posit lies that close to a double, so either form
 * rounds exactly as the true value. */
HOT uint32_t from_double_dir_n(double d, int dir, int n)
{
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    int neg = (int)(u >> 63);
    int ex = (int)((u >> 52) & 0x7ff);
    uint64_t frac = u << 12;
    if (ex == 0x7ff)
        return nar_of(n);               /* inf and NaN */
    if (ex == 0 && frac == 0)
        return dir == 0 ? 0 : signed_minpos(dir < 0, n);
    if (ex == 0)
        return signed_minpos(neg, n);   /* subnormal: far below minpos */
    int scale = ex - 1023;
    int outward = dir == 0 ? 0 : ((dir > 0) != neg ? 1 : -1);
    if (outward < 0) {
        if (frac == 0)
            scale--;
        frac -= 1;
    }
    return encode(neg, scale, frac, outward != 0, n);
}

/* ---- quire -------------------------------------------------------------- */

/* The quire is a W-word (16n-bit) two's-complement integer Q with value
 * Q * 2^-(8n-16): that puts minpos^2 at bit 0 and maxpos^2 at bit 16n-32,
 * leaving 31 carry-guard bits and the sign.  Every posit is a multiple of
 * minpos, so every product is a whole number of units: nothing is lost. */
HOT int quire_lsb_scale(int n) { return 8 * n - 16; }

HOT int quire_nar(const uint64_t *w, int W)
{
    if (w[W - 1] != (uint64_t)1 << 63)
        return 0;
    for (int i = 0; i < W - 1; i++)
        if (w[i])
            return 0;
    return 1;
}

HOT void quire_set_nar(uint64_t *w, int W)
{
    for (int i = 0; i < W - 1; i++)
        w[i] = 0;
    w[W - 1] = (uint64_t)1 << 63;
}

/* w += lo + hi*2^64 at word i, carrying as far as needed. */
HOT void words_add(uint64_t *w, int W, int i, uint64_t lo, uint64_t hi)
{
    uint64_t t = w[i] + lo;
    uint64_t c = t < lo;
    w[i] = t;
    t = w[i + 1] + hi;
    uint64_t c2 = t < hi;
    t += c;
    c2 |= t < c;
    w[i + 1] = t;
    for (int j = i + 2; c2 && j < W; j++)
        c2 = ++w[j] == 0;
}

HOT void words_sub(uint64_t *w, int W, int i, uint64_t lo, uint64_t hi)
{
    uint64_t b = w[i] < lo;
    w[i] -= lo;
    uint64_t b2 = w[i + 1] < hi;
    w[i + 1] -= hi;
    b2 |= w[i + 1] < b;
    w[i + 1] -= b;
    for (int j = i + 2; b2 && j < W; j++)
        b2 = w[j]-- == 0;
}

/* Q += or -= p * 2^(scale-62) exactly; beyond the sum limit Q becomes NaR. */
HOT void quire_accum(uint64_t *w, int W, int n, int neg, int scale, uint64_t p)
{
    int pos = scale - 62 + quire_lsb_scale(n);
    if (pos < 0) {                      /* only zero bits fall off */
        p >>= -pos;
        pos = 0;
    }
    int i = pos >> 6, b = pos & 63;
    uint64_t lo = p << b, hi = b ? p >> (64 - b) : 0;
    uint64_t sign_before = w[W - 1] >> 63;
    if (neg)
        words_sub(w, W, i, lo, hi);
    else
        words_add(w, W, i, lo, hi);
    /* Moving away from zero and flipping the sign means it wrapped. */
    if (sign_before == (uint64_t)neg && (w[W - 1] >> 63) != sign_before)
        quire_set_nar(w, W);
}

HOT void quire_fma(uint64_t *w, int W, int n, uint32_t a, uint32_t b, int negate)
{
    const uint32_t nar = nar_of(n);
    a &= mask_of(n);
    b &= mask_of(n);
    if (w[W - 1] == (uint64_t)1 << 63 && quire_nar(w, W))
        return;
    if (a == nar || b == nar) {
        quire_set_nar(w, W);
        return;
    }
    if (a == 0 || b == 0)
        return;
    unpacked x = decode(a, n), y = decode(b, n);
    uint64_t p = (uint64_t)x.sig * y.sig;         /* sig product * 2^-62 */
    quire_accum(w, W, n, x.neg ^ y.neg ^ negate, x.scale + y.scale, p);
}

HOT void quire_add_posit(uint64_t *w, int W, int n, uint32_t a, int negate)
{
    quire_fma(w, W, n, a, nar_of(n) >> 1, negate);   /* a * 1 */
}

/* Rounds |Q| once: its leading 64 bits after the top one, and a sticky bit
 * for every bit below them. */
static uint32_t quire_round(const uint64_t *src, int W, int n)
{
    uint64_t w[8];
    if (quire_nar(src, W))
        return nar_of(n);
    int neg = (int)(src[W - 1] >> 63);
    uint64_t carry = 1;
    for (int j = 0; j < W; j++) {
        w[j] = neg ? ~src[j] + carry : src[j];
        carry = carry && w[j] == 0;
    }
    int i = W - 1;
    while (i >= 0 && w[i] == 0)
        i--;
    if (i < 0)
        return 0;
    int lz = clz64(w[i]);
    int scale = 64 * i + 63 - lz - quire_lsb_scale(n);
    uint64_t frac = (w[i] << lz) << 1;
    int sticky = 0;
    if (i > 0) {
        frac |= w[i - 1] >> (63 - lz);
        sticky = ((w[i - 1] << lz) << 1) != 0;
        for (int j = 0; j < i - 1; j++)
            sticky |= w[j] != 0;
    }
    return encode(neg, scale, frac, sticky, n);
}

/* ---- the exported per-width functions ----------------------------------- */

#define POSIT_DEFINE(P, N)                                                         \
    uint32_t P##_add(uint32_t a, uint32_t b) { return add_n(a, b, N); }            \
    uint32_t P##_sub(uint32_t a, uint32_t b) { return add_n(a, neg_n(b, N), N); }  \
    uint32_t P##_mul(uint32_t a, uint32_t b) { return mul_n(a, b, N); }            \
    uint32_t P##_div(uint32_t a, uint32_t b) { return div_n(a, b, N); }            \
    uint32_t P##_sqrt(uint32_t a) { return sqrt_n(a, N); }                         \
    uint32_t P##_neg(uint32_t a) { return neg_n(a, N); }                           \
    uint32_t P##_abs(uint32_t a) { return abs_n(a, N); }                           \
    int P##_lt(uint32_t a, uint32_t b) { return lt_n(a, b, N); }                   \
    int P##_le(uint32_t a, uint32_t b) { return !lt_n(b, a, N); }                  \
    int P##_is_nar(uint32_t a) { return (a & mask_of(N)) == nar_of(N); }           \
    double P##_to_double(uint32_t a) { return to_double_n(a, N); }                 \
    uint32_t P##_from_double(double d) { return from_double_dir_n(d, 0, N); }      \
    uint32_t P##_from_double_dir(double d, int dir)                                \
    {                                                                              \
        return from_double_dir_n(d, dir, N);                                       \
    }

POSIT_DEFINE(posit_p32, 32)
POSIT_DEFINE(posit_p16, 16)
POSIT_DEFINE(posit_p8, 8)

#define QUIRE_DEFINE(Q, T, N, W)                                                   \
    void Q##_clear(T *q) { memset(q->w, 0, sizeof q->w); }                         \
    void Q##_fma(T *q, uint32_t a, uint32_t b) { quire_fma(q->w, W, N, a, b, 0); } \
    void Q##_fms(T *q, uint32_t a, uint32_t b) { quire_fma(q->w, W, N, a, b, 1); } \
    void Q##_add(T *q, uint32_t a) { quire_add_posit(q->w, W, N, a, 0); }          \
    void Q##_sub(T *q, uint32_t a) { quire_add_posit(q->w, W, N, a, 1); }          \
    uint32_t Q##_to_posit(const T *q) { return quire_round(q->w, W, N); }          \
    int Q##_is_nar(const T *q) { return quire_nar(q->w, W); }

QUIRE_DEFINE(posit_q32, quire32_t, 32, 8)
QUIRE_DEFINE(posit_q16, quire16_t, 16, 4)
QUIRE_DEFINE(posit_q8, quire8_t, 8, 2)

/* ---- generic over n ----------------------------------------------------- */

uint32_t posit_nar(int n) { return n == 8 ? P8_NAR : n == 16 ? P16_NAR : P32_NAR; }

#define DISPATCH(call8, call16, call32) \
    return n == 8 ? (call8) : n == 16 ? (call16) : (call32)

uint32_t posit_add(uint32_t a, uint32_t b, int n) { DISPATCH(posit_p8_add(a, b), posit_p16_add(a, b), posit_p32_add(a, b)); }
uint32_t posit_sub(uint32_t a, uint32_t b, int n) { DISPATCH(posit_p8_sub(a, b), posit_p16_sub(a, b), posit_p32_sub(a, b)); }
uint32_t posit_mul(uint32_t a, uint32_t b, int n) { DISPATCH(posit_p8_mul(a, b), posit_p16_mul(a, b), posit_p32_mul(a, b)); }
uint32_t posit_div(uint32_t a, uint32_t b, int n) { DISPATCH(posit_p8_div(a, b), posit_p16_div(a, b), posit_p32_div(a, b)); }
uint32_t posit_sqrt(uint32_t a, int n) { DISPATCH(posit_p8_sqrt(a), posit_p16_sqrt(a), posit_p32_sqrt(a)); }
uint32_t posit_neg(uint32_t a, int n) { DISPATCH(posit_p8_neg(a), posit_p16_neg(a), posit_p32_neg(a)); }
int posit_lt(uint32_t a, uint32_t b, int n) { DISPATCH(posit_p8_lt(a, b), posit_p16_lt(a, b), posit_p32_lt(a, b)); }
double posit_bits_to_double(uint32_t a, int n) { DISPATCH(posit_p8_to_double(a), posit_p16_to_double(a), posit_p32_to_double(a)); }
uint32_t posit_from_double(double d, int n) { DISPATCH(posit_p8_from_double(d), posit_p16_from_double(d), posit_p32_from_double(d)); }
uint32_t posit_from_double_dir(double d, int dir, int n)
{
    DISPATCH(posit_p8_from_double_dir(d, dir), posit_p16_from_double_dir(d, dir), posit_p32_from_double_dir(d, dir));
}
