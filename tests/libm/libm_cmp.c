/* libm_cmp.c: the same inputs through the same maths functions in two
 * builds, to tell which results differ between glibc's libm (./wengert)
 * and musl's compiled to WebAssembly by emscripten (the page, `make web`).
 *
 *   libm_cmp list                  the functions' names
 *   libm_cmp dump FN N FILE        FN on N inputs; writes each result's bits
 *   libm_cmp cmp FN N FILE1 FILE2  how many of the N results differ between
 *                                  two dumps, the largest difference in ulps,
 *                                  and the first few inputs that differ
 *
 * The inputs come from a fixed generator (splitmix64), so both builds see
 * the same ones: special values first (zeros, infinities, nan, the
 * smallest and largest doubles, whole numbers and halves, multiples of
 * pi/4 ...), then random bit patterns with the exponent drawn in the
 * range that matters for the function (where it is neither constant nor
 * overflowing) and, for a quarter of them, over every exponent. Compiled
 * with -ffp-contract=off. The functions named w* are wengert's own
 * (src/wmath.c): tests/libm/same.sh requires them to agree bit for bit.
 * wexpn and wtanhn are their array forms (wm_exp_n, wm_tanh_n) on blocks of
 * 999 inputs: natively the widest vector loop the CPU has, in
 * WebAssembly the scalar loop. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef WITH_WMATH
#include "wmath.h"
#endif

static uint64_t seed;
static uint64_t next64(void)
{
    uint64_t z = (seed += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static double bits2d(uint64_t u) { double d; memcpy(&d, &u, 8); return d; }
static uint64_t d2bits(double d) { uint64_t u; memcpy(&u, &d, 8); return u; }

/* a random double with |x| in [2^lo, 2^(hi+1)), either sign (pos: positive) */
static double rnd(int lo, int hi, int pos)
{
    uint64_t r = next64();
    int e = lo + (int)(next64() % (uint64_t)(hi - lo + 1));
    uint64_t sign = pos ? 0 : (r >> 63) << 63;
    if (e < -1022) {            /* subnormal */
        int shift = -1022 - e;
        if (shift > 52) shift = 52;
        return bits2d(sign | ((r & 0xfffffffffffffull) >> shift));
    }
    return bits2d(sign | ((uint64_t)(e + 1023) << 52) | (r & 0xfffffffffffffull));
}

/* uniform-ish in [a, b] */
static double uni(double a, double b) { return a + (b - a) * ((double)(next64() >> 11) * 0x1p-53); }

static const double special[] = {
    0.0, -0.0, INFINITY, -INFINITY, NAN, 1, -1, 2, -2, 0.5, -0.5, 3, 10, 100, 1e300, -1e300,
    0x1p-1074, -0x1p-1074, 0x1p-1022, 0x1.fffffffffffffp1023, -0x1.fffffffffffffp1023,
    0x1p-26, 0x1p-28, 0x1p-54, 1e-8, 0.125, 0.25, 0.75, 1.5, 2.5, 0.4375, 2.4375, 0.54930614433405489, 0.6,
    0.7853981633974483, 1.5707963267948966, 3.141592653589793, 6.283185307179586, 22, 19.0615, 710, 709.78, 711,
    -745.1, -708.4, 18.714973875118524, 20, 40, 1e-300, 0x1.0p-511, 0x1.0p511, 0.99999999999999989, 1.0000000000000002,
};
#define NSPECIAL (sizeof special / sizeof special[0])

typedef struct {
    const char *name;
    int args;          /* 1 or 2 */
    int lo, hi;        /* exponent range of the random inputs (2: of both) */
    int pos;           /* positive inputs only (a domain) */
    double (*f1)(double);
    double (*f2)(double, double);
#ifdef WITH_WMATH
    void (*fn_n)(const double *x, double *out, unsigned n);   /* an array form */
#endif
} Fn;

static double f_nearbyint(double x) { return nearbyint(x); }
static double f_round(double x) { return round(x); }
/* wengert rounds pixel positions with lround: long has 32 bits in WebAssembly */
static double f_lround(double x) { return fabs(x) < 0x1p30 ? (double)lround(x) : 0; }
static double f_ldexp(double x, double y) { return ldexp(x, (int)fmod(floor(y), 2200)); }
static double f_log10(double x) { return log10(x); }

#define U(n, e0, e1, p, f) {.name = n, .args = 1, .lo = e0, .hi = e1, .pos = p, .f1 = f}
#define B(n, e0, e1, p, f) {.name = n, .args = 2, .lo = e0, .hi = e1, .pos = p, .f2 = f}
#define A(n, e0, e1, f) {.name = n, .args = 1, .lo = e0, .hi = e1, .fn_n = f}
static const Fn fns[] = {
    U("sin", -30, 12, 0, sin), U("cos", -30, 12, 0, cos), U("tan", -30, 12, 0, tan),
    U("asin", -30, -1, 0, asin), U("acos", -30, -1, 0, acos),
    U("atan", -30, 60, 0, atan), B("atan2", -40, 40, 0, atan2),
    U("sinh", -30, 10, 0, sinh), U("cosh", -30, 10, 0, cosh), U("tanh", -30, 5, 0, tanh),
    U("exp", -30, 10, 0, exp), U("log", -1074, 1023, 1, log), U("log1p", -30, 30, 0, log1p),
    B("pow", -10, 10, 0, pow), B("fmod", -40, 40, 0, fmod), U("sqrt", -1074, 1023, 1, sqrt),
    U("log10", -1074, 1023, 1, f_log10),
    U("floor", -5, 60, 0, floor), U("ceil", -5, 60, 0, ceil), U("fabs", -1074, 1023, 0, fabs),
    U("nearbyint", -5, 60, 0, f_nearbyint), U("round", -5, 60, 0, f_round), U("lround", -5, 60, 0, f_lround),
    B("copysign", -1074, 1023, 0, copysign), B("nextafter", -1074, 1023, 0, nextafter),
    B("ldexp", -1074, 1023, 0, f_ldexp), B("fmax", -1074, 1023, 0, fmax), B("fmin", -1074, 1023, 0, fmin),
#ifdef WITH_WMATH
    U("wexp", -30, 10, 0, wm_exp), U("wtanh", -30, 5, 0, wm_tanh), U("watan", -30, 60, 0, wm_atan), B("watan2", -40, 40, 0, wm_atan2),
    A("wexpn", -30, 10, wm_exp_n), A("wtanhn", -30, 5, wm_tanh_n),
#endif
};
#define NFNS (int)(sizeof fns / sizeof fns[0])

static const Fn *lookup(const char *name)
{
    for (int i = 0; i < NFNS; i++)
        if (strcmp(fns[i].name, name) == 0) return &fns[i];
    return NULL;
}

static const Fn *find(const char *name)
{
    const Fn *f = lookup(name);
    if (f) return f;
    fprintf(stderr, "libm_cmp: no function %s\n", name);
    exit(2);
}

/* the i-th input (pair) of the function's sequence: call in order from 0 */
static void input(const Fn *f, long i, double *x, double *y)
{
    if (i < (long)(NSPECIAL * NSPECIAL) && (f->args == 2 || i < (long)NSPECIAL)) {
        if (f->args == 1) { *x = special[i]; *y = 0; }
        else { *x = special[i / NSPECIAL]; *y = special[i % NSPECIAL]; }
        return;
    }
    int wide = (next64() & 3) == 0;
    int lo = wide ? -1074 : f->lo, hi = wide ? 1023 : f->hi;
    *x = rnd(lo, hi, f->pos);
    *y = rnd(lo, hi, 0);
    if (!wide && (next64() & 7) == 0 && f->args == 1) {   /* some plain uniform ones too */
        double m = ldexp(1, f->hi + 1);
        *x = uni(f->pos ? 0 : -m, m);
    }
}

static double apply(const Fn *f, double x, double y) { return f->args == 1 ? f->f1(x) : f->f2(x, y); }

/* distance in ulps between two doubles of the same sign (big for others) */
static double ulps(double a, double b)
{
    if (a != a && b != b) return 0;
    if (a != a || b != b) return INFINITY;
    int64_t ia = (int64_t)d2bits(a), ib = (int64_t)d2bits(b);
    if (ia < 0) ia = INT64_MIN - ia;
    if (ib < 0) ib = INT64_MIN - ib;
    if ((ia < 0) != (ib < 0)) return fabs((double)ia - (double)ib);
    return (double)(ia > ib ? ia - ib : ib - ia);
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "list") == 0) {
        for (int i = 0; i < NFNS; i++) printf("%s\n", fns[i].name);
        return 0;
    }
    if (argc < 5) {
        fprintf(stderr, "usage: libm_cmp list | dump FN N FILE | cmp FN N FILE1 FILE2\n");
        return 2;
    }
    const Fn *f = find(argv[2]);
    long n = atol(argv[3]);
    /* the seed from the name, so wtanh sees the inputs tanh does */
    seed = 0x5eed0000u;
    for (const char *c = f->name + (f->name[0] == 'w' && lookup(f->name + 1)); *c; c++) seed = seed * 131 + (uint64_t)*c;
    if (strcmp(argv[1], "dump") == 0) {
        FILE *out = fopen(argv[4], "wb");
        if (!out) { perror(argv[4]); return 2; }
        enum { BLOCK = 999 };            /* odd: each width's last partial step too */
        double xs[BLOCK], rs[BLOCK];
        for (long i = 0; i < n;) {
            unsigned m = 0;
            for (; m < BLOCK && i < n; m++, i++) {
                double y;
                input(f, i, &xs[m], &y);
#ifdef WITH_WMATH
                if (!f->fn_n)
#endif
                    rs[m] = apply(f, xs[m], y);
            }
#ifdef WITH_WMATH
            if (f->fn_n) f->fn_n(xs, rs, m);
#endif
            for (unsigned k = 0; k < m; k++) {
                uint64_t u = d2bits(rs[k]);
                if (rs[k] != rs[k]) u = 0x7ff8000000000000ull;   /* any nan is nan */
                fwrite(&u, 8, 1, out);
            }
        }
        return fclose(out) != 0;
    }
    if (strcmp(argv[1], "cmp") == 0 && argc == 6) {
        FILE *a = fopen(argv[4], "rb"), *b = fopen(argv[5], "rb");
        if (!a || !b) { perror("open"); return 2; }
        long diff = 0, shown = 0;
        double worst = 0, wx = 0, wy = 0;
        for (long i = 0; i < n; i++) {
            double x, y;
            input(f, i, &x, &y);
            uint64_t ua, ub;
            if (fread(&ua, 8, 1, a) != 1 || fread(&ub, 8, 1, b) != 1) { fprintf(stderr, "short dump\n"); return 2; }
            if (ua == ub) continue;
            diff++;
            double u = ulps(bits2d(ua), bits2d(ub));
            if (u > worst) { worst = u; wx = x; wy = y; }
            if (shown++ < 3) {
                if (f->args == 1) fprintf(stderr, "  %s(%a): %a vs %a\n", f->name, x, bits2d(ua), bits2d(ub));
                else fprintf(stderr, "  %s(%a, %a): %a vs %a\n", f->name, x, y, bits2d(ua), bits2d(ub));
            }
        }
        printf("%-10s %9ld inputs %8ld differ (%.4f%%)", f->name, n, diff, 100.0 * diff / n);
        if (diff && f->args == 1) printf(", at most %g ulp (at %a)", worst, wx);
        if (diff && f->args == 2) printf(", at most %g ulp (at %a, %a)", worst, wx, wy);
        printf("\n");
        return diff != 0;
    }
    fprintf(stderr, "libm_cmp: bad arguments\n");
    return 2;
}
