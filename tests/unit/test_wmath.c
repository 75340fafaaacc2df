/* test_wmath.c - every path of wm_exp_n and wm_tanh_n this CPU runs (the
 * scalar loop, SSE2, AVX2, AVX-512F: wm_paths in src/wmath.h) gives wm_exp's and
 * wm_tanh's bits on every element, and so do wm_exp_n / wm_tanh_n
 * themselves (the widest path). Each path sees, per function, about two million inputs:
 *   - random doubles in ranges that cross each of the loops' cases (the
 *     common one, |x| near 690 where exp hands over to wm_exp, 1/16 and 22
 *     where tanh does, tiny ones, under- and overflow);
 *   - random bit patterns (every exponent, nan payloads, subnormals);
 *   - the edges and their neighbours a few ulps away (+-690, +-2^-54,
 *     -708.4 .. -746 where results are subnormal or 0, 709.78, 710,
 *     +-inf, nan, -0 ...), each put in every lane of an 8-wide step;
 *   - every length n = 0..9 at every start offset 0..7 (each tail), with
 *     the elements past n checked untouched;
 *   - out == x (in place), with lanes that fall back among the others;
 *   - x and out ending at a page that faults when touched (nothing read or
 *     written past n, masked lanes included).
 * wm_exp_n_sum (exp_n_sum: the sum of the results too) is checked on the
 * same inputs against wm_exp's in-order sum.
 * A lane that took another lane's table entry, scale or mask gives other
 * bits on most random inputs: this fails. Exit 0 iff every check passes. */
#include "../../src/wmath.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "checks.h"

static uint64_t state = 88172645463325252ull;
static uint64_t next_bits(void)
{
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
}
static double uniform(void) { return (double)(next_bits() >> 11) * 0x1p-53; }

enum { N = 4099 };              /* odd: each width's tail is taken */
static double x[N + 16], out[N + 16], out2[N + 16];

static int same_bits(double a, double b) { return memcmp(&a, &b, sizeof a) == 0; }

struct fn {
    const char *name;
    double (*one)(double);
    wm_array_fn *(*of)(const struct wm_path *);
    int has_sum;                        /* exp: also exp_n_sum */
    const double (*ranges)[2];
    size_t nranges;
    const double *edges;
    size_t nedges;
};

/* out[i] against f->one(x[i]) for i < n; the first difference reported */
static void compare(const struct wm_path *p, const struct fn *f, unsigned n, const char *how)
{
    char what[200] = "";
    int same = 1;
    for (unsigned i = 0; i < n && same; i++) {
        double w = f->one(x[i]);
        same = same_bits(w, out[i]);
        if (!same)
            snprintf(what, sizeof what, "%s %s_n (%s) at %u: x %a gives %a, %s gives %a", p->name, f->name, how, i, x[i],
                     out[i], f->name, w);
    }
    check(same, what);
}

/* exp_n_sum on the same x[0 .. n): out's bits again (out holds exp_n's,
 * already compared), and the sum s0 + wm_exp(x[0]) + ... in that order,
 * s0 = 0 or a number that makes the first adds round */
static void compare_sum(const struct wm_path *p, const struct fn *f, unsigned n, const char *how)
{
    if (!f->has_sum) return;
    double s0 = n % 2 ? 0 : 0x1.123456789abcdp+3;
    double s = p->exp_n_sum(x, out2, n, s0), want = s0;
    for (unsigned i = 0; i < n; i++) want += wm_exp(x[i]);
    char what[200];
    snprintf(what, sizeof what, "%s exp_n_sum (%s), n = %u: sum %a, the loop's %a; elements %s", p->name, how, n, s, want,
             memcmp(out, out2, n * sizeof *out) ? "differ" : "the same");
    /* a nan's sign may differ: x86 keeps the first operand's nan of two,
     * and C leaves the compiler free to swap an add's operands */
    int same_sum = same_bits(s, want) || (s != s && want != want);
    check(same_sum && memcmp(out, out2, n * sizeof *out) == 0, what);
}

/* random doubles in each range: 50 rounds of N - (0 .. 7) inputs */
static void random_ranges(const struct wm_path *p, const struct fn *f)
{
    wm_array_fn *vec = f->of(p);
    for (size_t r = 0; r < f->nranges; r++)
        for (int rep = 0; rep < 50; rep++) {
            for (int i = 0; i < N; i++) x[i] = f->ranges[r][0] + (f->ranges[r][1] - f->ranges[r][0]) * uniform();
            unsigned n = N - (unsigned)(rep % 8);
            vec(x, out, n);
            char how[64];
            snprintf(how, sizeof how, "range [%g, %g]", f->ranges[r][0], f->ranges[r][1]);
            compare(p, f, n, how);
            compare_sum(p, f, n, how);
        }
}

/* random bit patterns: 100 rounds of N */
static void random_bits(const struct wm_path *p, const struct fn *f)
{
    wm_array_fn *vec = f->of(p);
    for (int rep = 0; rep < 100; rep++) {
        for (int i = 0; i < N; i++) {
            uint64_t u = next_bits();
            memcpy(&x[i], &u, sizeof u);
        }
        vec(x, out, N);
        compare(p, f, N, "random bits");
        compare_sum(p, f, N, "random bits");
    }
}

/* each edge and its neighbours up to 3 ulps either side, in every lane of
 * an 8-wide step: the edge list shifted by 0 .. 7 places, the rest of the
 * array random in the common range */
static void edges(const struct wm_path *p, const struct fn *f)
{
    wm_array_fn *vec = f->of(p);
    static double near[512];
    size_t m = 0;
    for (size_t e = 0; e < f->nedges; e++) {
        double v = f->edges[e], lo = v, hi = v;
        near[m++] = v;
        for (int k = 0; k < 3; k++) {
            lo = nextafter(lo, -INFINITY);
            hi = nextafter(hi, INFINITY);
            near[m++] = lo;
            near[m++] = hi;
        }
    }
    for (unsigned shift = 0; shift < 8; shift++) {
        for (int i = 0; i < N; i++) x[i] = 4 * uniform() - 2;
        memcpy(x + shift, near, m * sizeof *near);
        vec(x, out, (unsigned)m + 16);
        compare(p, f, (unsigned)m + 16, "edges");
        compare_sum(p, f, (unsigned)m + 16, "edges");
    }
}

/* every length 0 .. 9 from every offset 0 .. 7: the results, and nothing
 * written past them */
static void lengths(const struct wm_path *p, const struct fn *f)
{
    wm_array_fn *vec = f->of(p);
    const double sentinel = -12345.678;
    int untouched = 1;
    for (unsigned off = 0; off < 8; off++)
        for (unsigned n = 0; n <= 9; n++) {
            for (int i = 0; i < 32; i++) {
                x[i] = 6 * uniform() - 3;
                out[i] = sentinel;
            }
            if (n > 2) x[off + 1] = NAN;     /* one lane off the vector case */
            vec(x + off, out + off, n);
            for (unsigned i = 0; i < 32; i++)
                if ((i < off || i >= off + n) && !same_bits(out[i], sentinel)) untouched = 0;
            memmove(x, x + off, n * sizeof *x);
            memmove(out, out + off, n * sizeof *out);
            char how[64];
            snprintf(how, sizeof how, "n = %u, offset %u", n, off);
            compare(p, f, n, how);
            compare_sum(p, f, n, how);
        }
    char what[80];
    snprintf(what, sizeof what, "%s %s_n writes only out[0 .. n)", p->name, f->name);
    check(untouched, what);
}

/* in place (out == x, as the scalar loop allows): every length 0 .. 19,
 * with lanes that fall back to the scalar function (tiny, nan, large,
 * tanh's |x| < 1/16) among common ones; the fallback must read the input,
 * not the step's result already stored over it */
static void in_place(const struct wm_path *p, const struct fn *f)
{
    wm_array_fn *vec = f->of(p);
    static const double mix[] = { 0.75, 1e-20, -3.5, 0.01, NAN, 2.25, 800, -0.03, 1.5, -0x1p-60, 5, -1e-3, 0.5, 700, -2 };
    enum { M = sizeof mix / sizeof mix[0] };
    for (unsigned n = 0; n <= 19; n++) {
        double buf[24], sbuf[24];
        for (unsigned i = 0; i < n; i++) x[i] = mix[(i * 7 + n) % M];
        memcpy(buf, x, n * sizeof *x);
        vec(buf, buf, n);
        memcpy(out, buf, n * sizeof *out);
        char how[64];
        snprintf(how, sizeof how, "in place, n = %u", n);
        compare(p, f, n, how);
        if (f->has_sum) {
            memcpy(sbuf, x, n * sizeof *x);
            double s = p->exp_n_sum(sbuf, sbuf, n, 0), want = 0;
            for (unsigned i = 0; i < n; i++) want += wm_exp(x[i]);
            char what[120];
            snprintf(what, sizeof what, "%s exp_n_sum in place, n = %u: sum %a, the loop's %a", p->name, n, s, want);
            check((same_bits(s, want) || (s != s && want != want)) && memcmp(sbuf, buf, n * sizeof *buf) == 0, what);
        }
    }
}

/* x and out each ending at a page that may not be touched (PROT_NONE):
 * a load or store of any lane past n, masked or not, faults, where the
 * static arrays above (and valgrind or ASan on them) would not see it;
 * every length 0 .. 17, unaligned too (x and out one double off the
 * vector width), and in place */
static void guarded(const struct wm_path *p, const struct fn *f)
{
    static char *pages;
    long pg = sysconf(_SC_PAGESIZE);
    if (!pages) {
        pages = mmap(NULL, 4 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (pages == MAP_FAILED || mprotect(pages + pg, pg, PROT_NONE) || mprotect(pages + 3 * pg, pg, PROT_NONE)) {
            check(0, "guard pages");
            return;
        }
    }
    wm_array_fn *vec = f->of(p);
    int same = 1;
    for (unsigned n = 0; n <= 17; n++) {
        double *gx = (double *)(pages + pg) - n, *gout = (double *)(pages + 3 * pg) - n;
        for (unsigned i = 0; i < n; i++) gx[i] = x[i] = (i % 5 == 3) ? 1e-30 : 5 * uniform() - 2.5;
        vec(gx, gout, n);
        for (unsigned i = 0; i < n; i++) same &= same_bits(gout[i], f->one(x[i]));
        if (f->has_sum) {
            double s = p->exp_n_sum(gx, gout, n, 0), want = 0;
            for (unsigned i = 0; i < n; i++) want += wm_exp(x[i]);
            same &= same_bits(s, want);
        }
        vec(gout, gout, n);                               /* in place, ending at the guard */
        for (unsigned i = 0; i < n; i++) same &= same_bits(gout[i], f->one(f->one(x[i])));
    }
    char what[80];
    snprintf(what, sizeof what, "%s %s_n up to a guard page", p->name, f->name);
    check(same, what);
}

static wm_array_fn *exp_of(const struct wm_path *p) { return p->exp_n; }
static wm_array_fn *tanh_of(const struct wm_path *p) { return p->tanh_n; }

int main(void)
{
    static const double ranges[][2] = { { -1, 1 },           { -40, 40 },         { -700, 700 },       { -746, 710 },
                                        { -1e-12, 1e-12 },   { -1e-16, 1e-16 },   { -900, 900 },       { 689.9, 690.1 },
                                        { -690.1, -689.9 },  { -750, -700 },      { 709, 711 } };
    static const double special[] = { 0, -0.0, NAN, -NAN, INFINITY, -INFINITY, 690, -690, 0x1p-54, -0x1p-54,
                                      0x1p-1074, 1e-300, 709.78, 709.79, 710, -708, -708.4, -709, -720, -740,
                                      -745, -745.13, -745.2, -746, 1, -1, 0.5, 1e-5, 0x1p-26, 0x1.62e42fefa39efp-1 };
    static const double tranges[][2] = { { -1, 1 }, { -0.07, 0.07 }, { -25, 25 }, { 21.9, 22.1 }, { -1e-8, 1e-8 }, { -3, 3 },
                                         { -22.1, -21.9 } };
    static const double tspecial[] = { 0, -0.0, NAN, -NAN, INFINITY, -INFINITY, 0.0625, -0.0625, 22, -22, 0x1p-27,
                                       -0x1p-27, 1, -1, 0.5, 1e-300, 0x1p-1074, 19.06, -7.25, 345, 690, -700 };
    const struct fn fns[] = {
        { "wm_exp", wm_exp, exp_of, 1, ranges, sizeof ranges / sizeof ranges[0], special, sizeof special / sizeof special[0] },
        { "wm_tanh", wm_tanh, tanh_of, 0, tranges, sizeof tranges / sizeof tranges[0], tspecial,
          sizeof tspecial / sizeof tspecial[0] },
    };
    unsigned npaths;
    const struct wm_path *paths = wm_paths(&npaths);
    check(npaths >= 1 && strcmp(paths[0].name, "scalar") == 0, "the scalar path is there, first");
    for (unsigned k = 0; k < npaths; k++) {
        printf("test_wmath: path %s\n", paths[k].name);
        for (size_t f = 0; f < sizeof fns / sizeof fns[0]; f++) {
            random_ranges(&paths[k], &fns[f]);
            random_bits(&paths[k], &fns[f]);
            edges(&paths[k], &fns[f]);
            lengths(&paths[k], &fns[f]);
            in_place(&paths[k], &fns[f]);
            guarded(&paths[k], &fns[f]);
        }
    }
    /* the entry points: the widest path, or the one WENGERT_WMATH names
     * if this CPU runs it (tests/shell/wmath_paths.sh) */
    const struct wm_path *used = wm_path_used(), *want = &paths[npaths - 1];
    const char *env = getenv("WENGERT_WMATH");
    for (unsigned k = 0; env && k < npaths; k++)
        if (strcmp(paths[k].name, env) == 0) want = &paths[k];
    printf("test_wmath: wm_exp_n takes %s\n", used->name);
    check(used == want, "wm_exp_n takes the widest path, or the one WENGERT_WMATH names");
    for (int i = 0; i < N; i++) x[i] = 1400 * uniform() - 700;
    wm_exp_n(x, out, N);
    compare(used, &fns[0], N, "wm_exp_n itself");
    compare_sum(used, &fns[0], N, "wm_exp_n itself");
    double s = wm_exp_n_sum(x, out2, N, 1.5);
    check(same_bits(s, used->exp_n_sum(x, out2, N, 1.5)) && s == s, "wm_exp_n_sum itself");
    wm_tanh_n(x, out, N);
    compare(used, &fns[1], N, "wm_tanh_n itself");
    printf("test_wmath: %d checks, %d failed\n", n_checks, n_failed);
    return n_failed != 0;
}
