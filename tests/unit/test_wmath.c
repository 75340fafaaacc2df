/* test_wmath.c - wm_exp_n and wm_tanh_n (an array's exp and tanh, two
 * elements at a time where SSE2 is there) give wm_exp's and wm_tanh's bits
 * on every element: random inputs in
 * ranges that cross each of its cases (the common one, |x| near 690 where
 * it hands over to wm_exp, tiny ones, under- and overflow), the special
 * values, and odd lengths (the last element alone). Exit 0 iff every
 * check passes. */
#include "../../src/wmath.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "checks.h"

static uint64_t state = 88172645463325252ull;
static double uniform(void)
{
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return (double)(state >> 11) * 0x1p-53;
}

enum { N = 4099 };
static double x[N], out[N];

/* The array form vec against the scalar form one, bit for bit: 50 rounds
 * of N - 0, 1 or 2 random inputs in each range, the first round with the
 * special values written in at offset at. */
static void check_array_form(const char *name, void (*vec)(const double *, double *, unsigned), double (*one)(double),
                             const double (*ranges)[2], size_t nranges, const double *special, size_t nspecial, int at)
{
    char what[160];
    for (size_t r = 0; r < nranges; r++)
        for (int rep = 0; rep < 50; rep++) {
            for (int i = 0; i < N; i++) x[i] = ranges[r][0] + (ranges[r][1] - ranges[r][0]) * uniform();
            if (rep == 0) memcpy(x + at, special, nspecial * sizeof *special);
            unsigned n = N - (unsigned)(rep % 3);
            vec(x, out, n);
            int same = 1;
            for (unsigned i = 0; i < n && same; i++) {
                double w = one(x[i]);
                same = memcmp(&w, &out[i], sizeof w) == 0;
                if (!same) snprintf(what, sizeof what, "%s_n(%a) = %a, %s gives %a", name, x[i], out[i], name, w);
            }
            check(same, what);
        }
}

int main(void)
{
    static const double ranges[][2] = { { -1, 1 }, { -40, 40 }, { -700, 700 }, { -746, 710 }, { -1e-12, 1e-12 },
                                        { -1e-16, 1e-16 }, { -900, 900 }, { 689.9, 690.1 }, { -690.1, -689.9 } };
    static const double special[] = { 0, -0.0, NAN, INFINITY, -INFINITY, 690, -690, 0x1p-54, -0x1p-54, 0x1.fffffffffffffp-55,
                                      1e-300, 709.78, 709.79, -708.4, -745.2, -746, 1, -1, 0.5, 1e-5 };
    check_array_form("wm_exp", wm_exp_n, wm_exp, ranges, sizeof ranges / sizeof ranges[0],
                     special, sizeof special / sizeof special[0], 7);
    /* wm_tanh_n: its vector branch is 1/16 <= |x| < 22; the ranges
     * cross both ends and the Taylor branch below it */
    static const double tranges[][2] = { { -1, 1 }, { -0.07, 0.07 }, { -25, 25 }, { 21.9, 22.1 }, { -1e-8, 1e-8 }, { -3, 3 } };
    static const double tspecial[] = { 0, -0.0, NAN, INFINITY, -INFINITY, 0.0625, -0.0625, 0x1.fffffffffffffp-5, 22, -22,
                                       0x1.5fffffffffffffp+4, 0x1p-27, 1, -1, 0.5, 1e-300, 19.06, -7.25 };
    check_array_form("wm_tanh", wm_tanh_n, wm_tanh, tranges, sizeof tranges / sizeof tranges[0],
                     tspecial, sizeof tspecial / sizeof tspecial[0], 5);
    wm_tanh_n(x, out, 0);
    x[0] = -0.75;
    wm_tanh_n(x, out, 1);
    check(out[0] == wm_tanh(-0.75), "tanh, one element");
    wm_exp_n(x, out, 0);                  /* nothing: no access */
    x[0] = 1;
    wm_exp_n(x, out, 1);
    check(out[0] == wm_exp(1), "one element");
    printf("test_wmath: %d checks, %d failed\n", n_checks, n_failed);
    return n_failed != 0;
}
