/* test_posit.c - fast unit test of src/posit.c against hand-worked cases and
 * the exact GMP reference (tests/unit/posit_ref.c).  Exit status 0 iff every
 * check passes.
 *
 *   gcc -std=c11 -O2 -Wall -Wextra tests/unit/test_posit.c tests/unit/posit_ref.c \
 *       src/posit.c -lgmp -lm -o test_posit && ./test_posit
 */
#include "posit_check.h"

#include <float.h>
#include <math.h>
#include <string.h>

/* ---- hand-worked cases -------------------------------------------------- */

enum { ADD, SUB, MUL, DIV, SQRT };

typedef struct {
    int n, op;
    uint32_t a, b, want;
    const char *why;
} edge;

/* Bit patterns used below (posit32 unless said):
 *   1 = 0x40000000, 2 = 0x48000000, 2^-28 = 0x00800000, 2^-29 = 0x00700000,
 *   2^56 = 0x7fff0000, 2^57 = 0x7fff2000, 1.25*2^57 = 0x7fff2800,
 *   2^59 = 0x7fff6000, 2^60 = 0x7fff8000, 2^-58 = 0x0000c000,
 *   2^-59 = 0x0000a000, 2^-60 = 0x00008000.
 *   Near maxpos: 0x7ffffffc = 2^112, 0x7ffffffd = 2^114, 0x7ffffffe = 2^116,
 *   0x7fffffff = 2^120: the last regimes leave one, then no, exponent bits. */
static const edge EDGES[] = {
    { 32, ADD, 0x40000000, 0x40000000, 0x48000000, "1+1 = 2" },
    { 32, SUB, 0x40000000, 0x40000000, 0x00000000, "1-1 = 0" },
    { 32, ADD, 0x40000000, 0xc0000000, 0x00000000, "1+(-1) = 0" },
    { 32, MUL, 0x40000000, 0x40000000, 0x40000000, "1*1" },
    { 32, DIV, 0x40000000, 0x4c000000, 0x32aaaaab, "1/3: 0.0101.. rounds up at bit 27" },
    { 32, ADD, 0x40000000, 0x00800000, 0x40000000, "1+2^-28 is a tie: to even (1)" },
    { 32, ADD, 0x40000001, 0x00800000, 0x40000002, "(1+2^-27)+2^-28 is a tie: to even" },
    { 32, SUB, 0x40000000, 0x00700000, 0x40000000, "1-2^-29: tie below 1, to even (1)" },
    { 32, SUB, 0x40000000, 0x00800000, 0x3fffffff, "1-2^-28 is the posit below 1" },
    { 32, MUL, 0x7fffffff, 0x7fffffff, 0x7fffffff, "maxpos*maxpos stays maxpos" },
    { 32, ADD, 0x7fffffff, 0x7fffffff, 0x7fffffff, "maxpos+maxpos stays maxpos" },
    { 32, MUL, 0x7fffffff, 0x80000001, 0x80000001, "maxpos*-maxpos = -maxpos" },
    { 32, MUL, 0x00000001, 0x00000001, 0x00000001, "minpos*minpos stays minpos" },
    { 32, MUL, 0x00000001, 0xffffffff, 0xffffffff, "minpos*-minpos = -minpos" },
    { 32, DIV, 0x00000001, 0x7fffffff, 0x00000001, "minpos/maxpos = minpos" },
    { 32, DIV, 0x7fffffff, 0x00000001, 0x7fffffff, "maxpos/minpos = maxpos" },
    { 32, SUB, 0x00000001, 0x00000001, 0x00000000, "minpos-minpos = 0" },
    { 32, ADD, 0x7fffffff, 0x00000001, 0x7fffffff, "maxpos+minpos = maxpos" },
    { 32, MUL, 0x7fff6000, 0x7fff6000, 0x7ffffffe,
      "2^118 is the bit-string midpoint of 2^116 and 2^120: tie, to even" },
    { 32, MUL, 0x7fff8000, 0x7fff6000, 0x7fffffff,
      "2^119 > bit midpoint 2^118: maxpos (the arithmetic midpoint would say 2^116)" },
    { 32, MUL, 0x7fff0000, 0x7fff2000, 0x7ffffffc,
      "2^113 is the bit midpoint of 2^112 and 2^114 (one exponent bit cut): to even" },
    { 32, MUL, 0x7fff0000, 0x7fff2800, 0x7ffffffd,
      "1.25*2^113 is above the bit midpoint 2^113, below the arithmetic one" },
    { 32, MUL, 0x0000a000, 0x0000a000, 0x00000002,
      "2^-118: bit midpoint of minpos 2^-120 and 2^-116: tie, to even (0x2)" },
    { 32, MUL, 0x00008000, 0x0000a000, 0x00000001, "2^-119 below that midpoint: minpos" },
    { 32, MUL, 0x0000c000, 0x0000a000, 0x00000002,
      "2^-117 above the bit midpoint, below the arithmetic one: 2^-116" },
    { 32, SQRT, 0x40000003, 0, 0x40000001,
      "sqrt(1+3*2^-27) = 1+1.5*2^-27-1.125*2^-54..: just below a tie; "
      "through double it rounds onto the tie and then up to 0x40000002" },
    { 32, MUL, 0x45eea8a5, 0x3f43fcb4, 0x454af189,
      "product 1/2^26 ulp above a tie; rounded to double first it lands on the tie (..188)" },
    { 32, DIV, 0x41afc9a5, 0x3c365f76, 0x44b0e147,
      "quotient 0.2 double-ulp above a tie; through double: ..146" },
    { 32, SQRT, 0x40000000, 0, 0x40000000, "sqrt(1)" },
    { 32, SQRT, 0x50000000, 0, 0x48000000, "sqrt(4) = 2" },
    { 32, SQRT, 0x7fffffff, 0, 0x7fff8000, "sqrt(maxpos) = 2^60" },
    { 32, SQRT, 0x00000001, 0, 0x00008000, "sqrt(minpos) = 2^-60" },
    { 32, SQRT, 0x48000000, 0, 0x43504f33, "sqrt(2) = 1.0110101000001001111001100110|0.." },
    { 32, SQRT, 0xc0000000, 0, 0x80000000, "sqrt(-1) = NaR" },
    { 32, SQRT, 0x80000000, 0, 0x80000000, "sqrt(NaR) = NaR" },
    { 32, SQRT, 0x00000000, 0, 0x00000000, "sqrt(0) = 0" },
    { 32, ADD, 0x80000000, 0x40000000, 0x80000000, "NaR+1" },
    { 32, SUB, 0x80000000, 0x80000000, 0x80000000, "NaR-NaR" },
    { 32, MUL, 0x80000000, 0x00000000, 0x80000000, "NaR*0" },
    { 32, MUL, 0x00000000, 0x7fffffff, 0x00000000, "0*maxpos" },
    { 32, DIV, 0x40000000, 0x00000000, 0x80000000, "1/0 = NaR" },
    { 32, DIV, 0x00000000, 0x00000000, 0x80000000, "0/0 = NaR" },
    { 32, DIV, 0x00000000, 0x40000000, 0x00000000, "0/1 = 0" },
    { 32, DIV, 0x80000000, 0x40000000, 0x80000000, "NaR/1" },
    { 32, ADD, 0x00000000, 0x00000000, 0x00000000, "0+0" },

    /* posit16: 1 = 0x4000, maxpos 0x7fff = 2^56, 0x7ffe = 2^52, 2^27 = 0x7f60,
     * 2^28 = 0x7f80, 2^-12 = 0x0800 */
    { 16, ADD, 0x4000, 0x4000, 0x4800, "1+1" },
    { 16, DIV, 0x4000, 0x4c00, 0x32ab, "1/3" },
    { 16, ADD, 0x4000, 0x0800, 0x4000, "1+2^-12 tie, to even" },
    { 16, ADD, 0x4001, 0x0800, 0x4002, "(1+2^-11)+2^-12 tie, to even" },
    { 16, MUL, 0x7fff, 0x7fff, 0x7fff, "maxpos^2" },
    { 16, ADD, 0x7fff, 0x7fff, 0x7fff, "maxpos+maxpos" },
    { 16, MUL, 0x0001, 0x0001, 0x0001, "minpos^2" },
    { 16, MUL, 0x7f60, 0x7f60, 0x7ffe, "2^54: bit midpoint of 2^52 and 2^56, to even" },
    { 16, MUL, 0x7f80, 0x7f60, 0x7fff, "2^55 above the bit midpoint: maxpos" },
    { 16, DIV, 0x4000, 0x0000, 0x8000, "1/0" },
    { 16, SQRT, 0xc000, 0, 0x8000, "sqrt(-1)" },
    { 16, SQRT, 0x5000, 0, 0x4800, "sqrt(4)" },

    /* posit8: 1 = 0x40, maxpos 0x7f = 2^24, 0x7e = 2^20, 2^11 = 0x76,
     * 2^12 = 0x78, 2^-4 = 0x20 */
    { 8, ADD, 0x40, 0x40, 0x48, "1+1" },
    { 8, DIV, 0x40, 0x4c, 0x33, "1/3" },
    { 8, ADD, 0x40, 0x20, 0x40, "1+2^-4 tie, to even" },
    { 8, ADD, 0x41, 0x20, 0x42, "1.125+2^-4 tie, to even" },
    { 8, MUL, 0x7f, 0x7f, 0x7f, "maxpos^2" },
    { 8, MUL, 0x01, 0x01, 0x01, "minpos^2" },
    { 8, MUL, 0x81, 0x7f, 0x81, "-maxpos*maxpos" },
    { 8, MUL, 0x76, 0x76, 0x7e, "2^22: bit midpoint of 2^20 and 2^24, to even" },
    { 8, MUL, 0x78, 0x76, 0x7f, "2^23 above the bit midpoint: maxpos" },
    { 8, SUB, 0x80, 0x40, 0x80, "NaR-1" },
    { 8, DIV, 0x00, 0x00, 0x80, "0/0" },
};

static uint32_t run_fast(int op, uint32_t a, uint32_t b, int n)
{
    switch (op) {
    case ADD: return posit_add(a, b, n);
    case SUB: return posit_sub(a, b, n);
    case MUL: return posit_mul(a, b, n);
    case DIV: return posit_div(a, b, n);
    default: return posit_sqrt(a, n);
    }
}

static uint32_t run_ref(int op, uint32_t a, uint32_t b, int n)
{
    switch (op) {
    case ADD: return pref_add(a, b, n);
    case SUB: return pref_sub(a, b, n);
    case MUL: return pref_mul(a, b, n);
    case DIV: return pref_div(a, b, n);
    default: return pref_sqrt(a, n);
    }
}

/* Each case is checked against its worked answer twice: the fast library,
 * and the reference (so the reference is itself held to hand work). */
static void test_edges(void)
{
    static const char *names[] = { "add", "sub", "mul", "div", "sqrt" };
    for (size_t i = 0; i < sizeof EDGES / sizeof EDGES[0]; i++) {
        const edge *e = &EDGES[i];
        char name[64];
        snprintf(name, sizeof name, "p%d_%s [%s]", e->n, names[e->op], e->why);
        int nargs = e->op == SQRT ? 1 : 2;
        check_op(name, nargs, e->a, e->b, e->want, run_fast(e->op, e->a, e->b, e->n));
        snprintf(name, sizeof name, "ref p%d_%s [%s]", e->n, names[e->op], e->why);
        check_op(name, nargs, e->a, e->b, e->want, run_ref(e->op, e->a, e->b, e->n));
    }
}

/* ---- order and sign ----------------------------------------------------- */

static void test_order(void)
{
    for (uint32_t a = 0; a < 256; a++)
        for (uint32_t b = 0; b < 256; b++)
            CHECK(posit_p8_lt(a, b) == pref_lt(a, b, 8), "posit_p8_lt(0x%02x, 0x%02x)", a, b);
    for (int i = 0; i < 20000; i++) {
        uint32_t a = rand_posit(16), b = rand_posit(16), c = rand_posit(32), d = rand_posit(32);
        CHECK(posit_p16_lt(a, b) == pref_lt(a, b, 16), "posit_p16_lt(0x%04x, 0x%04x)", a, b);
        CHECK(posit_p32_lt(c, d) == pref_lt(c, d, 32), "posit_p32_lt(0x%08x, 0x%08x)", c, d);
        CHECK(posit_p32_le(c, d) == !pref_lt(d, c, 32), "posit_p32_le(0x%08x, 0x%08x)", c, d);
    }
    CHECK(posit_p32_lt(P32_NAR, 0xffffffffu) && !posit_p32_lt(P32_NAR, P32_NAR), "NaR is lowest, not below itself");
    check_op("posit_p32_neg", 1, P32_NAR, 0, P32_NAR, posit_p32_neg(P32_NAR));
    check_op("posit_p32_neg", 1, 0, 0, 0, posit_p32_neg(0));
    check_op("posit_p16_neg", 1, 0x4000, 0, 0xc000, posit_p16_neg(0x4000));
    check_op("posit_p8_neg", 1, 0x01, 0, 0xff, posit_p8_neg(0x01));
    check_op("posit_p32_abs", 1, 0xc0000000, 0, 0x40000000, posit_p32_abs(0xc0000000));
}

/* ---- conversions -------------------------------------------------------- */

static void test_conversions(void)
{
    for (uint32_t p = 0; p < 256; p++)
        check_conversions(p, 8);
    for (uint32_t p = 0; p < 65536; p++)
        check_conversions(p, 16);
    for (int i = 0; i < 20000; i++)
        check_conversions(rand_posit(32), 32);
    static const int ns[] = { 8, 16, 32 };
    for (int k = 0; k < 3; k++) {
        int n = ns[k];
        uint32_t nar = posit_nar(n), maxpos = nar - 1, mneg = mask_n(n);
        check_op("from_double(NaN)", 1, (uint32_t)n, 0, nar, posit_from_double(NAN, n));
        check_op("from_double(inf)", 1, (uint32_t)n, 0, nar, posit_from_double(INFINITY, n));
        check_op("from_double(-inf)", 1, (uint32_t)n, 0, nar, posit_from_double_dir(-INFINITY, 1, n));
        check_op("from_double(-0)", 1, (uint32_t)n, 0, 0, posit_from_double(-0.0, n));
        check_op("from_double(1e300)", 1, (uint32_t)n, 0, maxpos, posit_from_double(1e300, n));
        check_op("from_double(-1e300)", 1, (uint32_t)n, 0, nar + 1, posit_from_double(-1e300, n));
        check_op("from_double(1e-300)", 1, (uint32_t)n, 0, 1, posit_from_double(1e-300, n));
        check_op("from_double(-denorm)", 1, (uint32_t)n, 0, mneg, posit_from_double(-DBL_TRUE_MIN, n));
        check_op("from_double_dir(0,+1)", 1, (uint32_t)n, 0, 1, posit_from_double_dir(0.0, 1, n));
        check_op("from_double_dir(0,-1)", 1, (uint32_t)n, 0, mneg, posit_from_double_dir(0.0, -1, n));
        check_op("from_double_dir(-0,0)", 1, (uint32_t)n, 0, 0, posit_from_double_dir(-0.0, 0, n));
        CHECK(isnan(posit_bits_to_double(nar, n)), "p%d_to_double(NaR) is NaN", n);
        random_from_double(n, 20000);
    }
    check_op("posit_p32_from_double(1/3)", 1, 0, 0, 0x32aaaaab, posit_p32_from_double(1.0 / 3.0));
    check_op("posit_p32_from_double(0.1)", 1, 0, 0, pref_from_double(0.1, 32), posit_p32_from_double(0.1));
}

/* ---- random operations against the reference ---------------------------- */

static void test_random_ops(void)
{
    for (int i = 0; i < N_BINOPS; i++)
        random_binop(&BINOPS[i], BINOPS[i].n == 8 ? 20000 : 100000);
    random_sqrt(32, 100000);
    for (uint32_t a = 0; a < 65536; a++)
        check_op("posit_p16_sqrt", 1, a, 0, pref_sqrt(a, 16), posit_p16_sqrt(a));
    for (uint32_t a = 0; a < 256; a++)
        check_op("posit_p8_sqrt", 1, a, 0, pref_sqrt(a, 8), posit_p8_sqrt(a));
}

/* ---- quire -------------------------------------------------------------- */

static void test_quire_extremes(void)
{
    quire32_t q;
    posit_q32_clear(&q);
    posit_q32_fma(&q, P32_MAXPOS, P32_MAXPOS);
    posit_q32_fma(&q, P32_MINPOS, P32_MINPOS);
    posit_q32_fms(&q, P32_MAXPOS, P32_MAXPOS);
    int only_lsb = q.w[0] == 1;
    for (int i = 1; i < 8; i++)
        only_lsb = only_lsb && q.w[i] == 0;
    CHECK(only_lsb, "q32: maxpos^2 + minpos^2 - maxpos^2 holds exactly minpos^2 (bit 0)");
    check_op("posit_q32_to_posit(minpos^2)", 1, 0, 0, P32_MINPOS, posit_q32_to_posit(&q));
    posit_q32_fms(&q, P32_MINPOS, P32_MINPOS);
    check_op("q32 back to zero", 1, 0, 0, 0, posit_q32_to_posit(&q));
    CHECK(q.w[7] == 0 && q.w[0] == 0, "q32 zero is all-zero words");

    quire16_t q16;
    posit_q16_clear(&q16);
    posit_q16_fma(&q16, P16_MAXPOS, P16_MAXPOS);
    posit_q16_fma(&q16, P16_MINPOS, P16_MINPOS);
    posit_q16_fms(&q16, P16_MAXPOS, P16_MAXPOS);
    CHECK(q16.w[0] == 1 && !q16.w[1] && !q16.w[2] && !q16.w[3], "q16 keeps minpos^2");
    check_op("posit_q16_to_posit(minpos^2)", 1, 0, 0, P16_MINPOS, posit_q16_to_posit(&q16));

    quire8_t q8;
    posit_q8_clear(&q8);
    posit_q8_fma(&q8, P8_MAXPOS, P8_MAXPOS);
    posit_q8_fma(&q8, 0xff, P8_MINPOS);              /* - minpos^2 */
    posit_q8_fms(&q8, P8_MAXPOS, P8_MAXPOS);
    CHECK(q8.w[0] == ~(uint64_t)0 && q8.w[1] == ~(uint64_t)0, "q8 holds -minpos^2 as all ones");
    check_op("posit_q8_to_posit(-minpos^2)", 1, 0, 0, 0xff, posit_q8_to_posit(&q8));

    posit_q32_clear(&q);
    posit_q32_fma(&q, P32_MAXPOS, P32_MAXPOS);
    posit_q32_add(&q, P32_ONE);
    posit_q32_fms(&q, P32_MAXPOS, P32_MAXPOS);
    check_op("q32: maxpos^2 + 1 - maxpos^2", 1, 0, 0, P32_ONE, posit_q32_to_posit(&q));
    posit_q32_fma(&q, P32_MAXPOS, P32_MAXPOS);
    check_op("q32: above maxpos clamps", 1, 0, 0, P32_MAXPOS, posit_q32_to_posit(&q));
}

/* Sums that step-by-step rounding gets wrong and the quire gets right. */
static void test_quire_vs_steps(void)
{
    /* 2^40*2^40 + 1*2^-30 - 2^40*2^40: each step rounds the 2^-30 away. */
    uint32_t big = posit_p32_from_double(0x1p40), tiny = posit_p32_from_double(0x1p-30);
    uint32_t a[] = { big, P32_ONE, posit_p32_neg(big) }, b[] = { big, tiny, big };
    quire32_t q;
    posit_q32_clear(&q);
    uint32_t steps = 0;
    for (int i = 0; i < 3; i++) {
        posit_q32_fma(&q, a[i], b[i]);
        steps = posit_p32_add(steps, posit_p32_mul(a[i], b[i]));
    }
    CHECK(steps == 0, "step-by-step gives 0 (got 0x%08x)", steps);
    check_op("q32 dot [2^40,1,-2^40].[2^40,2^-30,2^40]", 1, 0, 0, tiny, posit_q32_to_posit(&q));

    /* 1 + four times 2^-28: each step is a tie that falls back to 1; the
     * quire holds 1 + 2^-26 = 0x40000002. */
    posit_q32_clear(&q);
    posit_q32_add(&q, P32_ONE);
    steps = P32_ONE;
    for (int i = 0; i < 4; i++) {
        posit_q32_add(&q, 0x00800000);
        steps = posit_p32_add(steps, 0x00800000);
    }
    CHECK(steps == P32_ONE, "step-by-step 1+4*2^-28 stays 1 (got 0x%08x)", steps);
    check_op("q32 1+4*2^-28", 1, 0, 0, 0x40000002, posit_q32_to_posit(&q));
    posit_q32_sub(&q, P32_ONE);
    check_op("q32 (1+4*2^-28)-1", 1, 0, 0, posit_p32_from_double(0x1p-26), posit_q32_to_posit(&q));

    /* 1 + 2^-28 is a tie that goes to 1; minpos^2 at bit 0, 268 bits
     * further down, tips it either way. */
    posit_q32_clear(&q);
    posit_q32_add(&q, P32_ONE);
    posit_q32_add(&q, 0x00800000);
    check_op("q32 1+2^-28", 1, 0, 0, P32_ONE, posit_q32_to_posit(&q));
    posit_q32_fma(&q, P32_MINPOS, P32_MINPOS);
    check_op("q32 1+2^-28+minpos^2", 1, 0, 0, 0x40000001, posit_q32_to_posit(&q));
    posit_q32_fms(&q, P32_MINPOS, P32_MINPOS);
    posit_q32_fms(&q, P32_MINPOS, P32_MINPOS);
    check_op("q32 1+2^-28-minpos^2", 1, 0, 0, P32_ONE, posit_q32_to_posit(&q));

    /* posit8: 3*3 - 2.5*3.5 = 0.25 exactly; posit8 has unit spacing at 8,
     * so rounding 8.75 first (to 9) gives 0. */
    uint32_t three = posit_p8_from_double(3), t5 = posit_p8_from_double(2.5), t35 = posit_p8_from_double(3.5);
    quire8_t q8;
    posit_q8_clear(&q8);
    posit_q8_fma(&q8, three, three);
    posit_q8_fms(&q8, t5, t35);
    check_op("q8 3*3-2.5*3.5", 1, 0, 0, posit_p8_from_double(0.25), posit_q8_to_posit(&q8));
    check_op("p8 steps 3*3-2.5*3.5", 1, 0, 0, 0,
             posit_p8_sub(posit_p8_mul(three, three), posit_p8_mul(t5, t35)));
}

static void test_quire_nar(void)
{
    quire32_t q;
    posit_q32_clear(&q);
    posit_q32_fma(&q, P32_ONE, P32_ONE);
    posit_q32_fma(&q, P32_NAR, 0);
    CHECK(posit_q32_is_nar(&q), "q32 NaR*0 makes NaR");
    posit_q32_fma(&q, P32_ONE, P32_ONE);
    posit_q32_add(&q, P32_ONE);
    CHECK(posit_q32_is_nar(&q), "q32 NaR is sticky");
    check_op("posit_q32_to_posit(NaR)", 1, 0, 0, P32_NAR, posit_q32_to_posit(&q));
    posit_q32_clear(&q);
    CHECK(!posit_q32_is_nar(&q) && posit_q32_to_posit(&q) == 0, "posit_q32_clear resets");

    /* The 128-bit quire8 overflows past 2^79 (units 2^-48); set it near the
     * top directly rather than adding 2^31 products. */
    quire8_t q8 = { { ~(uint64_t)0, 0x7fffffffffffffffull } };
    CHECK(!posit_q8_is_nar(&q8), "q8 at its largest value is not NaR");
    check_op("q8 largest", 1, 0, 0, P8_MAXPOS, posit_q8_to_posit(&q8));
    posit_q8_add(&q8, P8_MINPOS);
    CHECK(posit_q8_is_nar(&q8), "q8 overflow past the top gives NaR");
    quire8_t q8n = { { (uint64_t)1 << 24, (uint64_t)1 << 63 } };   /* -2^127 + minpos */
    CHECK(!posit_q8_is_nar(&q8n), "q8 near the bottom is not NaR");
    check_op("q8 most negative", 1, 0, 0, P8_MAXPOS + 2, posit_q8_to_posit(&q8n));
    posit_q8_sub(&q8n, P8_MINPOS);
    CHECK(posit_q8_is_nar(&q8n), "q8 overflow past the bottom gives NaR");
    quire16_t q16;
    posit_q16_clear(&q16);
    posit_q16_fms(&q16, 0x4000, P16_NAR);
    CHECK(posit_q16_is_nar(&q16) && posit_q16_to_posit(&q16) == P16_NAR, "q16 fms with NaR");
}

static void test_quire(void)
{
    test_quire_extremes();
    test_quire_vs_steps();
    test_quire_nar();
    static const int ns[] = { 8, 16, 32 };
    for (int k = 0; k < 3; k++) {
        random_dots(ns[k], 3000);
        random_quire_round(ns[k], 20000);
        random_quire_ties(ns[k], 20000);
    }
}

int main(void)
{
    pref_init();
    test_edges();
    test_order();
    test_conversions();
    test_random_ops();
    test_quire();
    pref_free();
    return finish("test_posit");
}
