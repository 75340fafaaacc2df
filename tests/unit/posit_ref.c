/* posit_ref.c - exact reference for posit<n,2>; see posit_ref.h. */
#include "posit_ref.h"

#include <math.h>

static mpq_t t_val, t_a, t_b, t_x, t_sq;
static int ready;

void pref_init(void)
{
    if (ready)
        return;
    mpq_inits(t_val, t_a, t_b, t_x, t_sq, NULL);
    ready = 1;
}

void pref_free(void)
{
    if (!ready)
        return;
    mpq_clears(t_val, t_a, t_b, t_x, t_sq, NULL);
    ready = 0;
}

static uint64_t mask_of(int n) { return ((uint64_t)1 << n) - 1; }
static uint64_t nar_of(int n) { return (uint64_t)1 << (n - 1); }
static int bit(uint64_t x, int i) { return (int)((x >> i) & 1); }

/* The standard's field description, read literally: sign; two's complement
 * of negatives; a regime run of equal bits ended by the opposite bit or by
 * the end; up to two exponent bits (missing ones are 0); the rest fraction. */
int pref_decode(mpq_t out, uint64_t bits, int n)
{
    bits &= mask_of(n);
    if (bits == nar_of(n))
        return 0;
    if (bits == 0) {
        mpq_set_ui(out, 0, 1);
        return 1;
    }
    int neg = bit(bits, n - 1);
    if (neg)
        bits = ((uint64_t)1 << n) - bits;
    int i = n - 2, first = bit(bits, i), run = 0;
    while (i >= 0 && bit(bits, i) == first) {
        run++;
        i--;
    }
    i--;                                        /* the terminating bit */
    long k = first ? run - 1 : -run;
    long e = 0;
    for (int j = 0; j < 2; j++, i--)
        e = 2 * e + (i >= 0 ? bit(bits, i) : 0);
    unsigned long f = 1;                        /* the hidden bit, then fraction */
    int fbits = 0;
    for (; i >= 0; i--, fbits++)
        f = 2 * f + (unsigned long)bit(bits, i);
    long scale = 4 * k + e - fbits;
    mpq_set_ui(out, f, 1);
    if (scale >= 0)
        mpq_mul_2exp(out, out, (unsigned long)scale);
    else
        mpq_div_2exp(out, out, (unsigned long)-scale);
    if (neg)
        mpq_neg(out, out);
    return 1;
}

/* How a candidate c (a positive posit value) compares to the target: for
 * the plain rounding the target is |x|, for sqrt it is sqrt(|x|), which is
 * compared through c^2 so that nothing irrational is ever formed. */
typedef struct {
    const mpq_t *x;
    int square;
} target;

static int cmp_target(const target *t, uint64_t bits, int n)
{
    pref_decode(t_val, bits, n);
    if (t->square) {
        mpq_mul(t_sq, t_val, t_val);
        return mpq_cmp(t_sq, *t->x);
    }
    return mpq_cmp(t_val, *t->x);
}

/* Rounds a positive target to an n-bit pattern per the standard: clamp to
 * [minpos, maxpos]; otherwise find neighbours u < x < w among the posits and
 * compare x with the (n+1)-bit posit whose pattern is u's followed by 1.
 * dir breaks ties toward larger (+1) or smaller (-1) magnitude, and keeps a
 * value exactly at a posit on that posit. */
static uint32_t round_positive(const target *t, int dir, int n)
{
    uint64_t lo = 1, hi = nar_of(n) - 1;
    if (cmp_target(t, hi, n) <= 0)
        return (uint32_t)hi;
    if (cmp_target(t, lo, n) >= 0)
        return 1;
    while (hi - lo > 1) {                        /* val(lo) <= x < val(hi) */
        uint64_t mid = lo + (hi - lo) / 2;
        if (cmp_target(t, mid, n) <= 0)
            lo = mid;
        else
            hi = mid;
    }
    if (cmp_target(t, lo, n) == 0)
        return (uint32_t)lo;
    int m = cmp_target(t, (lo << 1) | 1, n + 1);
    if (m > 0)
        return (uint32_t)lo;                     /* midpoint above x */
    if (m < 0)
        return (uint32_t)hi;
    if (dir != 0)
        return (uint32_t)(dir > 0 ? hi : lo);
    return (uint32_t)((lo & 1) ? hi : lo);
}

static uint32_t with_sign(uint32_t p, int neg, int n)
{
    return neg ? (uint32_t)(((uint64_t)1 << n) - p) : p;
}

uint32_t pref_round_dir(const mpq_t x, int dir, int n)
{
    int s = mpq_sgn(x);
    if (s == 0)
        return dir == 0 ? 0 : with_sign(1, dir < 0, n);
    mpq_abs(t_x, x);
    target t = { (const mpq_t *)&t_x, 0 };
    return with_sign(round_positive(&t, s < 0 ? -dir : dir, n), s < 0, n);
}

uint32_t pref_round(const mpq_t x, int n) { return pref_round_dir(x, 0, n); }

static int decode2(uint32_t a, uint32_t b, int n)
{
    return pref_decode(t_a, a, n) && pref_decode(t_b, b, n);
}

uint32_t pref_add(uint32_t a, uint32_t b, int n)
{
    if (!decode2(a, b, n))
        return (uint32_t)nar_of(n);
    mpq_add(t_a, t_a, t_b);
    return pref_round(t_a, n);
}

uint32_t pref_sub(uint32_t a, uint32_t b, int n)
{
    if (!decode2(a, b, n))
        return (uint32_t)nar_of(n);
    mpq_sub(t_a, t_a, t_b);
    return pref_round(t_a, n);
}

uint32_t pref_mul(uint32_t a, uint32_t b, int n)
{
    if (!decode2(a, b, n))
        return (uint32_t)nar_of(n);
    mpq_mul(t_a, t_a, t_b);
    return pref_round(t_a, n);
}

uint32_t pref_div(uint32_t a, uint32_t b, int n)
{
    if (!decode2(a, b, n) || mpq_sgn(t_b) == 0)
        return (uint32_t)nar_of(n);
    mpq_div(t_a, t_a, t_b);
    return pref_round(t_a, n);
}

uint32_t pref_sqrt(uint32_t a, int n)
{
    if (!pref_decode(t_a, a, n) || mpq_sgn(t_a) < 0)
        return (uint32_t)nar_of(n);
    if (mpq_sgn(t_a) == 0)
        return 0;
    mpq_set(t_x, t_a);
    target t = { (const mpq_t *)&t_x, 1 };
    return round_positive(&t, 0, n);
}

uint32_t pref_from_double_dir(double d, int dir, int n)
{
    if (isnan(d) || isinf(d))
        return (uint32_t)nar_of(n);
    mpq_set_d(t_a, d);                           /* exact */
    return pref_round_dir(t_a, dir, n);
}

uint32_t pref_from_double(double d, int n) { return pref_from_double_dir(d, 0, n); }

uint32_t pref_dot(const uint32_t *a, const uint32_t *b, int len, int n)
{
    mpq_t sum;
    mpq_init(sum);
    int nar = 0;
    for (int i = 0; i < len && !nar; i++) {
        nar = !decode2(a[i], b[i], n);
        if (!nar) {
            mpq_mul(t_a, t_a, t_b);
            mpq_add(sum, sum, t_a);
        }
    }
    uint32_t r = nar ? (uint32_t)nar_of(n) : pref_round(sum, n);
    mpq_clear(sum);
    return r;
}

uint32_t pref_quire_round(const uint64_t *w, int W, int n)
{
    int nar = w[W - 1] == (uint64_t)1 << 63;
    for (int i = 0; i < W - 1; i++)
        nar = nar && w[i] == 0;
    if (nar)
        return (uint32_t)nar_of(n);
    mpz_t z;
    mpz_init(z);
    mpz_import(z, (size_t)W, -1, sizeof w[0], 0, 0, w);
    if (w[W - 1] >> 63) {                        /* two's complement */
        mpz_t m;
        mpz_init(m);
        mpz_ui_pow_ui(m, 2, (unsigned long)(64 * W));
        mpz_sub(z, z, m);
        mpz_clear(m);
    }
    mpq_set_z(t_a, z);
    mpq_div_2exp(t_a, t_a, (unsigned long)(8 * n - 16));
    mpz_clear(z);
    return pref_round(t_a, n);
}
