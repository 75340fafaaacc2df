/* posit_bench.c - ns per operation for posit32 and the same loops in double.
 *
 *   gcc -O2 bench/posit_bench.c src/posit.c -lm && ./a.out
 *
 * Each loop applies one operation to LEN operand pairs held in arrays (in
 * cache, independent of each other), REPS times; a run is timed as a whole
 * and the median of RUNS runs is printed.  Operands are log-uniform in
 * [2^-20, 2^20] with random signs (positive for sqrt).  A checksum of the
 * results is printed so that no loop can be optimised away.
 */
#define _POSIX_C_SOURCE 199309L
#include "../src/posit.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

enum { LEN = 4096, REPS = 500, RUNS = 9 };

static uint32_t pa[LEN], pb[LEN], pr[LEN];
static double da[LEN], db[LEN], dr[LEN];
static uint64_t checksum;

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static uint64_t rng_state = 0x2545F4914F6CDD1Dull;

static double rnd_unit(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (double)(rng_state >> 11) / 9007199254740992.0;
}

static void fill(int positive)
{
    for (int i = 0; i < LEN; i++) {
        double x = ldexp(1.0 + rnd_unit(), (int)(rnd_unit() * 40) - 20);
        double y = ldexp(1.0 + rnd_unit(), (int)(rnd_unit() * 40) - 20);
        if (!positive && rnd_unit() < 0.5)
            x = -x;
        if (!positive && rnd_unit() < 0.5)
            y = -y;
        pa[i] = posit_p32_from_double(x);
        pb[i] = posit_p32_from_double(y);
        da[i] = posit_p32_to_double(pa[i]);
        db[i] = posit_p32_to_double(pb[i]);
    }
}

typedef void (*loop_fn)(void);

#define POSIT_LOOP(name, expr)                              \
    static void name(void)                                  \
    {                                                       \
        for (int r = 0; r < REPS; r++)                      \
            for (int i = 0; i < LEN; i++)                   \
                pr[i] = (expr);                             \
        checksum += pr[LEN / 3];                            \
    }

#define DOUBLE_LOOP(name, expr)                             \
    static void name(void)                                  \
    {                                                       \
        for (int r = 0; r < REPS; r++)                      \
            for (int i = 0; i < LEN; i++)                   \
                dr[i] = (expr);                             \
        checksum += (uint64_t)(dr[LEN / 3] * 1e6);          \
    }

POSIT_LOOP(p_add, posit_p32_add(pa[i], pb[i]))
POSIT_LOOP(p_mul, posit_p32_mul(pa[i], pb[i]))
POSIT_LOOP(p_div, posit_p32_div(pa[i], pb[i]))
POSIT_LOOP(p_sqrt, posit_p32_sqrt(pa[i]))
DOUBLE_LOOP(d_add, da[i] + db[i])
DOUBLE_LOOP(d_mul, da[i] * db[i])
DOUBLE_LOOP(d_div, da[i] / db[i])
DOUBLE_LOOP(d_sqrt, sqrt(da[i]))

/* The quire loop accumulates the whole array and rounds once per pass. */
static void p_fma(void)
{
    for (int r = 0; r < REPS; r++) {
        quire32_t q;
        posit_q32_clear(&q);
        for (int i = 0; i < LEN; i++)
            posit_q32_fma(&q, pa[i], pb[i]);
        pr[r % LEN] = posit_q32_to_posit(&q);
    }
    checksum += pr[0];
}

static void d_fma(void)
{
    for (int r = 0; r < REPS; r++) {
        double s = 0;
        for (int i = 0; i < LEN; i++)
            s += da[i] * db[i];
        dr[r % LEN] = s;
    }
    checksum += (uint64_t)fabs(dr[0]);
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

static double median_ns_per_op(loop_fn f)
{
    double t[RUNS];
    f();                                        /* warm up */
    for (int k = 0; k < RUNS; k++) {
        double t0 = now_ns();
        f();
        t[k] = (now_ns() - t0) / ((double)LEN * REPS);
    }
    qsort(t, RUNS, sizeof t[0], cmp_double);
    return t[RUNS / 2];
}

int main(void)
{
    static const struct {
        const char *name;
        loop_fn posit, dbl;
        int positive;
    } ops[] = {
        { "add", p_add, d_add, 0 },
        { "mul", p_mul, d_mul, 0 },
        { "div", p_div, d_div, 0 },
        { "sqrt", p_sqrt, d_sqrt, 1 },
        { "quire fma", p_fma, d_fma, 0 },
    };
    printf("%-10s %12s %12s   (median of %d runs of %d ops)\n", "op",
           "posit32 ns", "double ns", RUNS, LEN * REPS);
    for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
        fill(ops[k].positive);
        double tp = median_ns_per_op(ops[k].posit);
        double td = median_ns_per_op(ops[k].dbl);
        printf("%-10s %12.2f %12.2f\n", ops[k].name, tp, td);
    }
    printf("checksum %llu\n", (unsigned long long)checksum);
    return 0;
}
