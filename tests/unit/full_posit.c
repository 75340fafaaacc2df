/* full_posit.c - the exhaustive suite for src/posit.c (run by `make test-full`).
 *
 * Against the exact GMP reference: every pair of posit8 values for + - * /,
 * every posit8 product added to a set of quire contents, every posit8 and
 * posit16 square root, every posit8 and posit16 value through the double
 * conversions (round trip, midpoints, directed rounding), and millions of
 * random operands per operation for posit16 and posit32.  An optional
 * argument multiplies the random counts (default 1).
 *
 *   gcc -std=c11 -O2 -Wall -Wextra tests/unit/full_posit.c tests/unit/posit_ref.c \
 *       src/posit.c -lgmp -lm -o full_posit && ./full_posit
 */
#include "posit_check.h"

#include <stdlib.h>
#include <time.h>

static double scale = 1.0;

static long scaled(long count) { return (long)(count * scale); }

static void progress(const char *what, clock_t t0)
{
    printf("  %-44s done (%.1f s, %ld checks so far, %ld failed)\n", what,
           (double)(clock() - t0) / CLOCKS_PER_SEC, checks, failures);
    fflush(stdout);
}

static void exhaustive_p8_pairs(void)
{
    for (int k = 0; k < N_BINOPS; k++) {
        const binop *op = &BINOPS[k];
        if (op->n != 8)
            continue;
        for (uint32_t a = 0; a < 256; a++)
            for (uint32_t b = 0; b < 256; b++)
                check_op(op->name, 2, a, b, op->slow(a, b, 8), op->fast(a, b));
    }
}

/* q = x*y, then q += a*b for every pair (a, b): one rounding of x*y + a*b. */
static void exhaustive_p8_quire(void)
{
    static const uint32_t starts[][2] = {
        { 0x00, 0x00 }, { 0x40, 0x40 }, { 0x7f, 0x81 }, { 0x01, 0x01 },
        { 0x7f, 0x7f }, { 0x33, 0xa7 }, { 0x01, 0xff },
    };
    for (size_t s = 0; s < sizeof starts / sizeof starts[0]; s++) {
        uint32_t va[2] = { starts[s][0], 0 }, vb[2] = { starts[s][1], 0 };
        for (uint32_t a = 0; a < 256; a++) {
            for (uint32_t b = 0; b < 256; b++) {
                quire8_t q;
                posit_q8_clear(&q);
                posit_q8_fma(&q, va[0], vb[0]);
                posit_q8_fma(&q, a, b);
                va[1] = a;
                vb[1] = b;
                check_op("q8 x*y+a*b", 2, a, b, pref_dot(va, vb, 2, 8), posit_q8_to_posit(&q));
            }
        }
    }
}

static void all_sqrt(void)
{
    for (uint32_t a = 0; a < 256; a++)
        check_op("posit_p8_sqrt", 1, a, 0, pref_sqrt(a, 8), posit_p8_sqrt(a));
    for (uint32_t a = 0; a < 65536; a++)
        check_op("posit_p16_sqrt", 1, a, 0, pref_sqrt(a, 16), posit_p16_sqrt(a));
}

static void all_conversions(void)
{
    for (uint32_t p = 0; p < 256; p++)
        check_conversions(p, 8);
    for (uint32_t p = 0; p < 65536; p++)
        check_conversions(p, 16);
}

/* ---- every posit16 pair, each result verified by its rounding interval ----
 *
 * A third, independent judge, fast enough for all 2^32 pairs: a result r is
 * right iff the exact value lies in r's rounding interval, whose ends are the
 * (n+1)-bit posits on either side of r (inclusive at an even r, exclusive at
 * an odd one; open to 0 below minpos and to infinity above maxpos).  The
 * comparisons are exact: posit16 values and the 17-bit ends are whole numbers
 * of 2^-60 below 2^60, so sums fit in __int128; products of posit16 values
 * (<= 24 bits) and of an end by a posit16 (<= 25 bits) are exact doubles. */

static double v16[65536];            /* each pattern's value (NaR unused) */
static __int128 x16[65536];          /* the same in units of 2^-60 */
static double end_d[32768];          /* end_d[p]: the 17-bit posit above p */
static __int128 end_x[32768];

static void build_p16_tables(void)
{
    mpq_t q;
    mpq_init(q);
    for (uint32_t p = 0; p < 65536; p++) {
        v16[p] = pref_decode(q, p, 16) ? mpq_get_d(q) : 0.0;   /* exact */
        x16[p] = (__int128)ldexp(v16[p], 60);
    }
    for (uint32_t p = 1; p < 32767; p++) {
        pref_decode(q, ((uint64_t)p << 1) | 1, 17);
        end_d[p] = mpq_get_d(q);
        end_x[p] = (__int128)ldexp(end_d[p], 60);
    }
    mpq_clear(q);
}

/* cl, cu: how |x| compares with r's lower and upper ends. */
static int in_interval(uint32_t mag, int cl, int cu)
{
    int even = !(mag & 1);
    if (mag == 1)
        cl = 1;                                  /* nothing rounds to 0 */
    if (mag == 0x7fff)
        cu = -1;                                 /* nor past maxpos */
    return (cl > 0 || (cl == 0 && even)) && (cu < 0 || (cu == 0 && even));
}

/* Whether r (nonzero, real) has x's sign; then its magnitude pattern. */
static int split(uint32_t r, int neg, uint32_t *mag)
{
    if (r == 0 || r == 0x8000 || ((r >> 15) & 1) != (uint32_t)neg)
        return 0;
    *mag = neg ? (0x10000 - r) & 0xffff : r;
    return 1;
}

static int cmp_x(__int128 a, __int128 b) { return (a > b) - (a < b); }
static int cmp_d(double a, double b) { return (a > b) - (a < b); }

static int judge_add(uint32_t a, uint32_t b, int sub, uint32_t r)
{
    __int128 x = sub ? x16[a] - x16[b] : x16[a] + x16[b];
    if (x == 0)
        return r == 0;
    uint32_t m;
    if (!split(r, x < 0, &m))
        return 0;
    if (x < 0)
        x = -x;
    int cl = m > 1 ? cmp_x(x, end_x[m - 1]) : 1;
    int cu = m < 0x7fff ? cmp_x(x, end_x[m]) : -1;
    return in_interval(m, cl, cu);
}

static int judge_mul(uint32_t a, uint32_t b, uint32_t r)
{
    if (a == 0 || b == 0)
        return r == 0;
    double x = v16[a] * v16[b];                  /* exact */
    uint32_t m;
    if (!split(r, x < 0, &m))
        return 0;
    x = fabs(x);
    int cl = m > 1 ? cmp_d(x, end_d[m - 1]) : 1;
    int cu = m < 0x7fff ? cmp_d(x, end_d[m]) : -1;
    return in_interval(m, cl, cu);
}

/* |a|/|b| against an end e, as |a| against e*|b| (exact). */
static int judge_div(uint32_t a, uint32_t b, uint32_t r)
{
    if (b == 0)
        return r == 0x8000;
    if (a == 0)
        return r == 0;
    uint32_t m;
    if (!split(r, (v16[a] < 0) != (v16[b] < 0), &m))
        return 0;
    double x = fabs(v16[a]), y = fabs(v16[b]);
    int cl = m > 1 ? cmp_d(x, end_d[m - 1] * y) : 1;
    int cu = m < 0x7fff ? cmp_d(x, end_d[m] * y) : -1;
    return in_interval(m, cl, cu);
}

static int judge(int op, uint32_t a, uint32_t b, uint32_t r)
{
    if (a == 0x8000 || b == 0x8000)
        return r == 0x8000;
    if (op < 2)
        return judge_add(a, b, op, r);
    return op == 2 ? judge_mul(a, b, r) : judge_div(a, b, r);
}

static const char *const P16_NAMES[] = { "posit_p16_add", "posit_p16_sub", "posit_p16_mul", "posit_p16_div" };
static const fast2 P16_FAST[] = { posit_p16_add, posit_p16_sub, posit_p16_mul, posit_p16_div };
static const slow2 P16_SLOW[] = { pref_add, pref_sub, pref_mul, pref_div };

/* The judge must also say no: the neighbours of a right answer are wrong. */
static void judge_self_test(void)
{
    for (int i = 0; i < 200000; i++) {
        int op = (int)(rnd64() % 4);
        uint32_t a = rand_posit(16), b = rand_partner(a, 16);
        uint32_t r = P16_SLOW[op](a, b, 16);
        CHECK(judge(op, a, b, r), "judge rejects the reference's %s(0x%04x, 0x%04x) = 0x%04x",
              P16_NAMES[op], a, b, r);
        for (int d = -1; d <= 1; d += 2) {
            uint32_t w = (r + (uint32_t)d) & 0xffff;
            CHECK(!judge(op, a, b, w), "judge accepts %s(0x%04x, 0x%04x) = 0x%04x (right: 0x%04x)",
                  P16_NAMES[op], a, b, w, r);
        }
    }
}

static void exhaustive_p16(int op)
{
    for (uint32_t a = 0; a < 65536; a++) {
        for (uint32_t b = 0; b < 65536; b++) {
            uint32_t r = P16_FAST[op](a, b);
            if (judge(op, a, b, r))
                continue;
            if (++failures <= MAX_REPORTS)
                printf("FAIL %s(0x%04x, 0x%04x): got 0x%04x, outside its rounding "
                       "interval (reference: 0x%04x)\n", P16_NAMES[op], a, b, r,
                       P16_SLOW[op](a, b, 16));
        }
    }
    checks += 65536L * 65536L;
}

static void random_ops(int n, long count)
{
    for (int k = 0; k < N_BINOPS; k++)
        if (BINOPS[k].n == n)
            random_binop(&BINOPS[k], count);
    random_sqrt(n, count);
    for (long i = 0; i < count / 4; i++) {
        uint32_t a = rand_posit(n), b = rand_partner(a, n);
        CHECK(posit_lt(a, b, n) == pref_lt(a, b, n), "p%d_lt(0x%08x, 0x%08x)", n, a, b);
    }
}

int main(int argc, char **argv)
{
    if (argc > 1)
        scale = atof(argv[1]);
    pref_init();
    clock_t t0 = clock();
    exhaustive_p8_pairs();
    progress("posit8: all pairs, + - * /", t0);
    exhaustive_p8_quire();
    progress("quire8: x*y + a*b for all pairs (a, b)", t0);
    all_sqrt();
    progress("sqrt: all posit8 and posit16", t0);
    all_conversions();
    progress("conversions: all posit8 and posit16", t0);
    build_p16_tables();
    judge_self_test();
    for (int op = 0; op < 4; op++) {
        exhaustive_p16(op);
        char what[64];
        snprintf(what, sizeof what, "posit16: all 2^32 pairs, %s", P16_NAMES[op]);
        progress(what, t0);
    }
    random_ops(16, scaled(2000000));
    progress("posit16: random, + - * / sqrt", t0);
    random_ops(32, scaled(2000000));
    progress("posit32: random, + - * / sqrt", t0);
    for (long i = 0; i < scaled(1000000); i++)
        check_conversions(rand_posit(32), 32);
    random_from_double(8, scaled(200000));
    random_from_double(16, scaled(1000000));
    random_from_double(32, scaled(2000000));
    progress("conversions: random posit32 and doubles", t0);
    static const int ns[] = { 8, 16, 32 };
    for (int k = 0; k < 3; k++) {
        random_dots(ns[k], (int)scaled(30000));
        random_quire_round(ns[k], (int)scaled(300000));
        random_quire_ties(ns[k], (int)scaled(300000));
    }
    progress("quires: random dot products and roundings", t0);
    pref_free();
    return finish("full_posit");
}
