/* posit_check.h - what test_posit.c and full_posit.c share: counting and
 * reporting checks, a seeded generator of operands, and the op tables that
 * pair each fast function with its reference.  Header-only (static). */
#ifndef POSIT_CHECK_H
#define POSIT_CHECK_H

#include "../../src/posit.h"
#include "posit_ref.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static long checks, failures;

enum { MAX_REPORTS = 60 };

/* One check of an operation's bits.  nargs is 1 or 2 (b unused for 1). */
static void check_op(const char *name, int nargs, uint32_t a, uint32_t b,
                     uint32_t want, uint32_t got)
{
    checks++;
    if (want == got)
        return;
    if (++failures <= MAX_REPORTS) {
        if (nargs == 2)
            printf("FAIL %s(0x%08x, 0x%08x): expected 0x%08x, got 0x%08x\n",
                   name, a, b, want, got);
        else
            printf("FAIL %s(0x%08x): expected 0x%08x, got 0x%08x\n",
                   name, a, want, got);
    } else if (failures == MAX_REPORTS + 1) {
        printf("(further failures counted, not printed)\n");
    }
}

/* A check of a condition, described by a printf-style label. */
#define CHECK(cond, ...)                                           \
    do {                                                           \
        checks++;                                                  \
        if (!(cond) && ++failures <= MAX_REPORTS) {                \
            printf("FAIL ");                                       \
            printf(__VA_ARGS__);                                   \
            printf("\n");                                          \
        }                                                          \
    } while (0)

static int finish(const char *prog)
{
    printf("%s: %ld checks, %ld failed\n", prog, checks, failures);
    return failures != 0;
}

/* splitmix64: deterministic, so a failure can be reproduced. */
static uint64_t rng_state = 0x5eed0f9051720ull;

static uint64_t rnd64(void)
{
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static uint32_t mask_n(int n) { return (uint32_t)(((uint64_t)1 << n) - 1); }

/* Operands that reach every path: uniform patterns (mostly near 1), the
 * far ends of the range (few fraction bits, truncated exponents), the
 * specials, and the neighbours of 1. */
static uint32_t rand_posit(int n)
{
    uint32_t m = mask_n(n), r = (uint32_t)rnd64() & m, sign = 1u << (n - 1);
    switch (rnd64() % 16) {
    case 0: return r & (sign | (m >> (n / 2)));          /* tiny magnitude */
    case 1: return (r | (m >> 3)) & ~(sign >> 1);        /* huge or -tiny */
    case 2: {
        static const uint32_t sp[] = { 0, 1, 2, 3 };
        uint32_t s = sp[rnd64() % 4];
        return (rnd64() & 1) ? (0u - s) & m : s;         /* 0, +-minpos and up */
    }
    case 3: return ((sign >> 1) + (uint32_t)(rnd64() % 9) - 4) & m;  /* near 1 */
    case 4: return (sign - 1 - (uint32_t)(rnd64() % 4)) & m;        /* near maxpos */
    case 5: return sign;                                             /* NaR */
    default: return r;
    }
}

/* For + and -, the second operand is often close to +-the first, so that
 * massive cancellation and exact zeros are common. */
static uint32_t rand_partner(uint32_t a, int n)
{
    if (rnd64() % 4)
        return rand_posit(n);
    uint32_t near = a + (uint32_t)(rnd64() % 33) - 16;
    return ((rnd64() & 1) ? near : 0u - near) & mask_n(n);
}

typedef uint32_t (*fast2)(uint32_t, uint32_t);
typedef uint32_t (*slow2)(uint32_t, uint32_t, int);

typedef struct {
    const char *name;
    int n;
    fast2 fast;
    slow2 slow;
    int additive;
} binop;

static const binop BINOPS[] = {
    { "posit_p32_add", 32, posit_p32_add, pref_add, 1 }, { "posit_p32_sub", 32, posit_p32_sub, pref_sub, 1 },
    { "posit_p32_mul", 32, posit_p32_mul, pref_mul, 0 }, { "posit_p32_div", 32, posit_p32_div, pref_div, 0 },
    { "posit_p16_add", 16, posit_p16_add, pref_add, 1 }, { "posit_p16_sub", 16, posit_p16_sub, pref_sub, 1 },
    { "posit_p16_mul", 16, posit_p16_mul, pref_mul, 0 }, { "posit_p16_div", 16, posit_p16_div, pref_div, 0 },
    { "posit_p8_add", 8, posit_p8_add, pref_add, 1 },    { "posit_p8_sub", 8, posit_p8_sub, pref_sub, 1 },
    { "posit_p8_mul", 8, posit_p8_mul, pref_mul, 0 },    { "posit_p8_div", 8, posit_p8_div, pref_div, 0 },
};
enum { N_BINOPS = sizeof BINOPS / sizeof BINOPS[0] };

static void random_binop(const binop *op, long count)
{
    for (long i = 0; i < count; i++) {
        uint32_t a = rand_posit(op->n);
        uint32_t b = op->additive ? rand_partner(a, op->n) : rand_posit(op->n);
        check_op(op->name, 2, a, b, op->slow(a, b, op->n), op->fast(a, b));
    }
}

static void random_sqrt(int n, long count)
{
    for (long i = 0; i < count; i++) {
        uint32_t a = rand_posit(n);
        if (rnd64() & 1)
            a &= mask_n(n) >> 1;                         /* mostly in the domain */
        check_op(n == 32 ? "posit_p32_sqrt" : n == 16 ? "posit_p16_sqrt" : "posit_p8_sqrt", 1, a, 0,
                 pref_sqrt(a, n), posit_sqrt(a, n));
    }
}

/* ---- conversions: shared by both tests ---- */

static void check_double_exact(uint32_t p, int n)
{
    double d = posit_bits_to_double(p, n);
    mpq_t x, y;
    mpq_inits(x, y, NULL);
    if (!pref_decode(x, p, n)) {
        CHECK(isnan(d), "p%d_to_double(0x%08x) = %a, want NaN", n, p, d);
    } else {
        mpq_set_d(y, d);
        CHECK(mpq_equal(x, y), "p%d_to_double(0x%08x) = %a is not exact", n, p, d);
    }
    mpq_clears(x, y, NULL);
}

/* The double value of the (n+1)-bit posit between p and p+1. */
static double midpoint(uint32_t p, int n)
{
    mpq_t m;
    mpq_init(m);
    pref_decode(m, ((uint64_t)p << 1) | 1, n + 1);
    double d = mpq_get_d(m);                    /* exact: <= 29 bits */
    mpq_clear(m);
    return d;
}

/* Everything about one posit p of width n: exact to_double, round trip,
 * directed rounding of an exact posit, and (for 0 < p < maxpos) rounding of
 * its upper midpoint and the doubles either side of it, for both signs. */
static void check_conversions(uint32_t p, int n)
{
    char name[48];
    snprintf(name, sizeof name, "p%d_from_double", n);
    check_double_exact(p, n);
    double d = posit_bits_to_double(p, n);
    check_op(name, 1, p, 0, p, posit_from_double(d, n));
    snprintf(name, sizeof name, "p%d_from_double_dir(+1)", n);
    check_op(name, 1, p, 0, p ? p : 1, posit_from_double_dir(d, 1, n));
    snprintf(name, sizeof name, "p%d_from_double_dir(-1)", n);
    check_op(name, 1, p, 0, p ? p : mask_n(n), posit_from_double_dir(d, -1, n));
    uint32_t maxpos = mask_n(n) >> 1;
    if (p == 0 || p >= maxpos)
        return;
    double m = midpoint(p, n);
    uint32_t even = (p & 1) ? p + 1 : p;
    for (int s = 0; s < 2; s++) {
        double x = s ? -m : m;
        uint32_t lo = s ? posit_neg(p, n) : p, hi = s ? posit_neg(p + 1, n) : p + 1;
        uint32_t ev = s ? posit_neg(even, n) : even;
        snprintf(name, sizeof name, "p%d_from_double(mid)", n);
        check_op(name, 1, lo, hi, ev, posit_from_double(x, n));
        snprintf(name, sizeof name, "p%d_from_double(mid+)", n);
        check_op(name, 1, lo, hi, hi, posit_from_double(nextafter(x, 2 * x), n));
        snprintf(name, sizeof name, "p%d_from_double(mid-)", n);
        check_op(name, 1, lo, hi, lo, posit_from_double(nextafter(x, 0), n));
        snprintf(name, sizeof name, "p%d_from_double_dir(mid,out)", n);
        check_op(name, 1, lo, hi, hi, posit_from_double_dir(x, s ? -1 : 1, n));
        snprintf(name, sizeof name, "p%d_from_double_dir(mid,in)", n);
        check_op(name, 1, lo, hi, lo, posit_from_double_dir(x, s ? 1 : -1, n));
    }
}

static double rand_double(void)
{
    uint64_t u = rnd64();
    switch (rnd64() % 4) {
    case 0: break;                                          /* any double */
    case 1: u = (u & 0x800fffffffffffffull) | ((uint64_t)(1023 - 140 + rnd64() % 281) << 52); break;
    case 2: u = (u & 0x800000000fffffffull) | ((uint64_t)(1023 - 30 + rnd64() % 61) << 52); break;
    default: u = (u & 0x800fffffffffffffull) | ((uint64_t)(1023 - 60 + rnd64() % 121) << 52); break;
    }
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

static void random_from_double(int n, long count)
{
    char name[48];
    for (long i = 0; i < count; i++) {
        double d = rand_double();
        int dir = (int)(rnd64() % 3) - 1;
        uint32_t want = pref_from_double_dir(d, dir, n);
        uint32_t got = posit_from_double_dir(d, dir, n);
        checks++;
        if (want != got && ++failures <= MAX_REPORTS)
            printf("FAIL p%d_from_double_dir(%a, %d): expected 0x%08x, got 0x%08x\n",
                   n, d, dir, want, got);
        if (dir == 0) {
            snprintf(name, sizeof name, "p%d_from_double", n);
            check_op(name, 1, (uint32_t)i, 0, want, posit_from_double(d, n));
        }
    }
}

/* ---- order and quire: shared by both tests ---- */

static uint32_t quire_to_posit_n(const uint64_t *w, int n);

/* NaR equals itself and lies below every real. */
static int pref_lt(uint32_t a, uint32_t b, int n)
{
    mpq_t x, y;
    mpq_inits(x, y, NULL);
    int ra = pref_decode(x, a, n), rb = pref_decode(y, b, n);
    int lt = !ra ? rb : rb && mpq_cmp(x, y) < 0;
    mpq_clears(x, y, NULL);
    return lt;
}

/* Random sequences of fma/fms/add/sub, checked against one exact sum. */
static void random_dots(int n, int count)
{
    enum { MAXLEN = 48 };
    uint32_t a[MAXLEN], b[MAXLEN];
    for (int t = 0; t < count; t++) {
        int len = 1 + (int)(rnd64() % MAXLEN);
        quire32_t q32;
        quire16_t q16;
        quire8_t q8;
        posit_q32_clear(&q32);
        posit_q16_clear(&q16);
        posit_q8_clear(&q8);
        for (int i = 0; i < len; i++) {
            a[i] = rand_posit(n);
            b[i] = (rnd64() % 3) ? rand_posit(n) : (uint32_t)1 << (n - 2);
            if (rnd64() % 64 && (a[i] == posit_nar(n) || b[i] == posit_nar(n)))
                a[i] = 0;                      /* keep NaR rare */
            int sub = (int)(rnd64() & 1);
            if (n == 32)
                (sub ? posit_q32_fms : posit_q32_fma)(&q32, a[i], b[i]);
            else if (n == 16)
                (sub ? posit_q16_fms : posit_q16_fma)(&q16, a[i], b[i]);
            else
                (sub ? posit_q8_fms : posit_q8_fma)(&q8, a[i], b[i]);
            if (sub)
                a[i] = posit_neg(a[i], n);
        }
        uint32_t got = n == 32 ? posit_q32_to_posit(&q32) : n == 16 ? posit_q16_to_posit(&q16) : posit_q8_to_posit(&q8);
        char name[32];
        snprintf(name, sizeof name, "q%d dot #%d (len %d)", n, t, len);
        check_op(name, 1, a[0], 0, pref_dot(a, b, len, n), got);
    }
}

/* Quires with arbitrary contents: the rounding of long values whose low
 * words matter only as sticky bits. */
static void random_quire_round(int n, int count)
{
    int W = n / 4;
    uint64_t w[8];
    for (int t = 0; t < count; t++) {
        int top = (int)(rnd64() % (uint64_t)W);
        for (int i = 0; i < W; i++)
            w[i] = i < top ? rnd64() : i == top ? rnd64() >> (rnd64() % 64) : 0;
        if (rnd64() % 4 == 0)
            w[0] = 0;
        if (rnd64() & 1) {                     /* negate */
            uint64_t c = 1;
            for (int i = 0; i < W; i++) {
                w[i] = ~w[i] + c;
                c = c && w[i] == 0;
            }
        }
        uint32_t got = quire_to_posit_n(w, n);
        char name[40];
        snprintf(name, sizeof name, "q%d_to_posit(random #%d)", n, t);
        check_op(name, 1, (uint32_t)w[W - 1], 0, pref_quire_round(w, W, n), got);
    }
}

static uint32_t quire_to_posit_n(const uint64_t *w, int n)
{
    if (n == 32) {
        quire32_t q;
        memcpy(q.w, w, sizeof q.w);
        return posit_q32_to_posit(&q);
    }
    if (n == 16) {
        quire16_t q;
        memcpy(q.w, w, sizeof q.w);
        return posit_q16_to_posit(&q);
    }
    quire8_t q;
    memcpy(q.w, w, sizeof q.w);
    return posit_q8_to_posit(&q);
}

/* Quire contents exactly at a rounding midpoint of some posit, or off it by
 * one unit in the last place or a power of two: there the lowest words decide
 * the rounding through the sticky bit, which random words never exercise. */
static void random_quire_ties(int n, int count)
{
    int W = n / 4;
    uint64_t w[8];
    mpq_t m;
    mpz_t z, d;
    mpq_init(m);
    mpz_inits(z, d, NULL);
    for (int t = 0; t < count; t++) {
        uint32_t p = 1 + (uint32_t)(rnd64() % ((mask_n(n) >> 1) - 1));
        pref_decode(m, ((uint64_t)p << 1) | 1, n + 1);
        mpq_mul_2exp(m, m, (unsigned long)(8 * n - 16));
        mpz_set(z, mpq_numref(m));             /* a whole number of units */
        int kind = (int)(rnd64() % 5);
        if (kind) {
            mpz_ui_pow_ui(d, 2, kind > 2 ? (unsigned long)(rnd64() % 48) : 0);
            (kind & 1 ? mpz_add : mpz_sub)(z, z, d);
        }
        if (rnd64() & 1) {                     /* negative: two's complement */
            mpz_ui_pow_ui(d, 2, (unsigned long)(64 * W));
            mpz_sub(z, d, z);
        }
        memset(w, 0, sizeof w);
        mpz_export(w, NULL, -1, sizeof w[0], 0, 0, z);
        char name[40];
        snprintf(name, sizeof name, "q%d_to_posit(tie #%d)", n, t);
        check_op(name, 1, p, (uint32_t)kind, pref_quire_round(w, W, n), quire_to_posit_n(w, n));
    }
    mpq_clear(m);
    mpz_clears(z, d, NULL);
}

#endif
