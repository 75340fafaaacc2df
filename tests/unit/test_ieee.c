/* test_ieee.c - checks the narrow-format rounding, encoding and decimal
 * conversion against references that share no code with src/ieee.c:
 *   - a table of every value of binary16 / bfloat16, decoded with ldexp from
 *     the field definitions, searched for the nearest value;
 *   - exact rational arithmetic with GMP (mpq), for all three formats;
 *   - the C conversion (float)d, for binary32.
 * Exit 0 iff every check passes.  Build with -lgmp -lm. */
#include "../../src/ieee.h"

#include <fenv.h>
#include <float.h>
#include <gmp.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long n_checks, n_failed;

static void check(int ok, const char *fmt, ...)
{
    n_checks++;
    if (ok)
        return;
    n_failed++;
    if (n_failed <= 40) { /* the first few say enough; millions would drown them */
        va_list ap;
        va_start(ap, fmt);
        printf("FAIL: ");
        vprintf(fmt, ap);
        printf("\n");
        va_end(ap);
    }
}

/* One offending input, printed but not counted: the sweep's own check counts. */
static void detail(const char *fmt, ...)
{
    static int shown;
    if (shown++ >= 40)
        return;
    va_list ap;
    va_start(ap, fmt);
    printf("  mismatch: ");
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
}

static uint64_t dbits(double d)
{
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    return u;
}

static double dfrom(uint64_t u)
{
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

/* Bitwise identity, so that -0 differs from +0; any NaN matches any NaN. */
static int same(double a, double b)
{
    return (isnan(a) && isnan(b)) || dbits(a) == dbits(b);
}

/* splitmix64: a tiny, well-mixed generator for test inputs only. */
static uint64_t test_rand_state = 0x1234567887654321u;

static uint64_t rnd64(void)
{
    uint64_t z = (test_rand_state += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

static int rnd_int(int lo, int hi) /* inclusive */
{
    return lo + (int)(rnd64() % (uint64_t)(hi - lo + 1));
}

/* ------------------------------------------------------------------ formats */

typedef struct {
    const char *name;
    int p, emin, emax, width;
    double (*round)(double);
    double (*round_dir)(double, int);
    uint32_t (*bits)(double);
    double (*from_bits)(uint32_t);
    ieee_fmt fmt;
} fmt_t;

static uint32_t bits16(double d) { return ieee_bits_f16(d); }
static uint32_t bitsb16(double d) { return ieee_bits_bf16(d); }
static double from16(uint32_t b) { return ieee_from_bits_f16((uint16_t)b); }
static double fromb16(uint32_t b) { return ieee_from_bits_bf16((uint16_t)b); }

static const fmt_t FMT_F32 = { "f32", 24, -126, 127, 32, ieee_round_f32, ieee_round_dir_f32,
                               ieee_bits_f32, ieee_from_bits_f32, IEEE_F32 };
static const fmt_t FMT_F16 = { "f16", 11, -14, 15, 16, ieee_round_f16, ieee_round_dir_f16,
                               bits16, from16, IEEE_F16 };
static const fmt_t FMT_BF16 = { "bf16", 8, -126, 127, 16, ieee_round_bf16, ieee_round_dir_bf16,
                                bitsb16, fromb16, IEEE_BF16 };

static uint32_t exp_all(const fmt_t *f) { return (UINT32_C(1) << (f->width - f->p)) - 1; }
static uint32_t inf_pattern(const fmt_t *f) { return exp_all(f) << (f->p - 1); }

/* The value of a non-negative pattern, straight from the field definitions;
 * the infinity pattern yields 2^(emax+1), the bound that rounds to infinity. */
static double ref_decode(uint32_t b, const fmt_t *f)
{
    uint32_t biased = b >> (f->p - 1);
    double frac = (double)(b & ((UINT32_C(1) << (f->p - 1)) - 1));
    if (biased == 0)
        return ldexp(frac, f->emin - (f->p - 1));
    return ldexp(frac + ldexp(1, f->p - 1), (int)biased - f->emax - (f->p - 1));
}

/* ------------------------------------------------------- table reference */

typedef struct {
    const fmt_t *f;
    double *v; /* v[i] = value of pattern i, i = 0 .. inf_pattern */
    uint32_t n;
} table_t;

static table_t table_make(const fmt_t *f)
{
    table_t t = { f, NULL, inf_pattern(f) + 1 };
    t.v = malloc(t.n * sizeof *t.v);
    if (t.v == NULL) {
        perror("malloc");
        exit(2);
    }
    for (uint32_t i = 0; i < t.n; i++)
        t.v[i] = ref_decode(i, f);
    return t;
}

/* Nearest table entry to d + dir*eps; the midpoint of neighbours in the
 * table has at most p+1 bits, so computing it in double is exact. */
static double table_round(const table_t *t, double d, int dir)
{
    if (isnan(d))
        return d;
    double a = fabs(d);
    int mdir = signbit(d) ? -dir : dir;
    uint32_t last = t->n - 1;
    if (a >= t->v[last])
        return copysign(INFINITY, d);
    uint32_t lo = 0, hi = last; /* v[lo] <= a < v[hi] */
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (t->v[mid] <= a)
            lo = mid;
        else
            hi = mid;
    }
    double m = (t->v[lo] + t->v[hi]) / 2;
    uint32_t j;
    if (a != m)
        j = a < m ? lo : hi;
    else if (mdir != 0)
        j = mdir > 0 ? hi : lo;
    else
        j = (lo & 1) ? hi : lo;
    if (j == last)
        return copysign(INFINITY, d);
    return copysign(t->v[j], d);
}

/* --------------------------------------------------------- GMP reference */

static double mpq_round(double d, int dir, const fmt_t *f)
{
    if (isnan(d) || isinf(d) || d == 0)
        return d;
    int mdir = signbit(d) ? -dir : dir;
    mpq_t x, y, t;
    mpz_t q;
    mpq_inits(x, y, t, NULL);
    mpz_init(q);
    mpq_set_d(x, fabs(d));

    /* e = floor(log2 x), from the sizes of numerator and denominator. */
    long e = (long)mpz_sizeinbase(mpq_numref(x), 2) - (long)mpz_sizeinbase(mpq_denref(x), 2);
    mpq_set_ui(t, 1, 1);
    if (e >= 0)
        mpq_mul_2exp(t, t, (mp_bitcnt_t)e);
    else
        mpq_div_2exp(t, t, (mp_bitcnt_t)-e);
    if (mpq_cmp(x, t) < 0)
        e--;

    double r;
    if (e > f->emax) {
        r = INFINITY;
    } else {
        long ulp = (e > f->emin ? e : f->emin) - (f->p - 1);
        if (ulp >= 0)
            mpq_div_2exp(y, x, (mp_bitcnt_t)ulp);
        else
            mpq_mul_2exp(y, x, (mp_bitcnt_t)-ulp);
        mpz_fdiv_q(q, mpq_numref(y), mpq_denref(y));
        mpq_set_z(t, q);
        mpq_sub(t, y, t); /* fractional part */
        mpq_t half;
        mpq_init(half);
        mpq_set_ui(half, 1, 2);
        int c = mpq_cmp(t, half);
        mpq_clear(half);
        int up = c > 0 || (c == 0 && (mdir > 0 || (mdir == 0 && mpz_odd_p(q))));
        if (up)
            mpz_add_ui(q, q, 1);
        /* q * 2^ulp >= 2^(emax+1) means overflow. */
        if ((long)mpz_sizeinbase(q, 2) - 1 + ulp > f->emax && mpz_sgn(q) != 0) {
            r = INFINITY;
        } else {
            mpq_set_z(t, q);
            if (ulp >= 0)
                mpq_mul_2exp(t, t, (mp_bitcnt_t)ulp);
            else
                mpq_div_2exp(t, t, (mp_bitcnt_t)-ulp);
            r = mpq_get_d(t); /* exact: the value fits a double */
        }
    }
    mpq_clears(x, y, t, NULL);
    mpz_clear(q);
    return copysign(r, d);
}

/* ------------------------------------------------------------ test inputs */

/* A double in and around the format's range, random in sign and significand. */
static double gen_wide(const fmt_t *f)
{
    int e = rnd_int(f->emin - f->p - 4, f->emax + 3);
    double m = 1 + (double)(rnd64() >> 12) * 0x1p-52;
    double d = ldexp(m, e);
    return (rnd64() & 1) ? -d : d;
}

/* A double within a few double-ulps of a format value or of a midpoint
 * between two, the places where rounding decisions are made. */
static double gen_near(const fmt_t *f)
{
    uint32_t i = (uint32_t)(rnd64() % inf_pattern(f)); /* finite, non-negative */
    double a = ref_decode(i, f), c = ref_decode(i + 1, f);
    double d = (rnd64() & 1) ? (a + c) / 2 : a;
    int k = rnd_int(-3, 3);
    for (; k > 0; k--)
        d = nextafter(d, INFINITY);
    for (; k < 0; k++)
        d = nextafter(d, 0);
    return (rnd64() & 1) ? -d : d;
}

static double gen_any(void)
{
    return dfrom(rnd64());
}

static double gen_mixed(const fmt_t *f)
{
    switch (rnd64() % 4) {
    case 0: return gen_wide(f);
    case 1: return gen_any();
    default: return gen_near(f);
    }
}

/* Values at the edges of the format: overflow, underflow, the subnormal and
 * normal border, and doubles that are not numbers of any narrow format. */
static int edge_values(const fmt_t *f, double *out)
{
    double maxv = ref_decode(inf_pattern(f) - 1, f);
    double top = ldexp(1, f->emax + 1);
    double tiny = ldexp(1, f->emin - (f->p - 1)); /* smallest subnormal */
    double minn = ldexp(1, f->emin);
    double base[] = {
        0.0, maxv, (maxv + top) / 2, top, tiny, tiny / 2, 3 * tiny / 2, tiny / 4,
        minn, minn - tiny / 2, minn - tiny, minn + tiny / 2, 1.0, 1.5,
        DBL_MAX, DBL_MIN, DBL_TRUE_MIN, INFINITY, 1e300, 1e-300,
    };
    int n = 0;
    for (size_t i = 0; i < sizeof base / sizeof base[0]; i++) {
        double b = base[i];
        double v[3] = { b, nextafter(b, INFINITY), nextafter(b, 0) };
        for (int j = 0; j < 3; j++) {
            out[n++] = v[j];
            out[n++] = -v[j];
        }
    }
    out[n++] = NAN;
    out[n++] = -NAN;
    return n;
}

/* ------------------------------------------------------------------ tests */

static void test_patterns16(const fmt_t *f)
{
    long bad_trip = 0, bad_value = 0, bad_fixed = 0;
    for (uint32_t b = 0; b < 65536; b++) {
        double d = f->from_bits(b);
        if (f->bits(d) != b)
            bad_trip++;
        uint32_t mag = b & 0x7fff;
        int is_nan = mag > inf_pattern(f);
        if (is_nan) {
            bad_value += !isnan(d) || !!signbit(d) != !!(b & 0x8000);
            continue;
        }
        double want = mag == inf_pattern(f) ? INFINITY : ref_decode(mag, f);
        want = (b & 0x8000) ? -want : want;
        bad_value += !same(d, want);
        bad_fixed += !same(f->round(d), d);
        for (int dir = -1; dir <= 1; dir++)
            bad_fixed += !same(f->round_dir(d, dir), d);
    }
    check(bad_trip == 0, "%s: all 65536 patterns round-trip (%ld wrong)", f->name, bad_trip);
    check(bad_value == 0, "%s: decoded values match the field definition (%ld wrong)", f->name, bad_value);
    check(bad_fixed == 0, "%s: every value is a fixed point of rounding (%ld wrong)", f->name, bad_fixed);
}

static void test_bf16_is_truncated_f32(void)
{
    long bad = 0;
    for (uint32_t b = 0; b < 65536; b++) {
        double x = ieee_from_bits_bf16((uint16_t)b), y = ieee_from_bits_f32(b << 16);
        bad += !same(x, y) || (isnan(x) && ieee_bits_f32(x) != b << 16);
    }
    check(bad == 0, "bf16 pattern b has the value of f32 pattern b<<16 (%ld wrong)", bad);
}

static void test_f32_patterns(void)
{
    long bad = 0;
    for (long i = 0; i < 2000000; i++) {
        uint32_t b = (uint32_t)rnd64();
        if (i < 64) /* the ends of each range, deterministically */
            b = (uint32_t)((i & 1) ? (0x7f800000u + (uint32_t)i / 2 - 16) : ((uint32_t)i / 2));
        double d = ieee_from_bits_f32(b);
        float fl;
        memcpy(&fl, &b, sizeof fl);
        int ok = ieee_bits_f32(d) == b;
        if (isnan(fl))
            ok &= isnan(d) && !!signbit(d) == !!(b >> 31);
        else
            ok &= same(d, (double)fl);
        if (!ok && bad++ < 5)
            detail("f32 pattern %08x", (unsigned)b);
    }
    check(bad == 0, "f32: 2e6 random patterns round-trip and match the C float (%ld wrong)", bad);
}

/* Millions of doubles against the table, every direction. */
static void test_against_table(const fmt_t *f, long n)
{
    table_t t = table_make(f);
    double edges[200];
    int ne = edge_values(f, edges);
    long bad = 0;
    for (long i = 0; i < n + ne; i++) {
        double d = i < ne ? edges[i] : gen_mixed(f);
        int dir = rnd_int(-1, 1);
        double want = table_round(&t, d, dir);
        double got = dir == 0 ? f->round(d) : f->round_dir(d, dir);
        if (!same(got, want) && bad++ < 5)
            detail("%s round_dir(%a, %d) = %a, want %a", f->name, d, dir, got, want);
    }
    check(bad == 0, "%s: %ld doubles agree with the table reference (%ld wrong)", f->name, n + ne, bad);
    free(t.v);
}

static void test_against_gmp(const fmt_t *f, long n)
{
    double edges[200];
    int ne = edge_values(f, edges);
    long bad = 0;
    for (long i = 0; i < n + ne; i++) {
        double d = i < ne ? edges[i] : gen_mixed(f);
        int dir = rnd_int(-1, 1);
        double want = mpq_round(d, dir, f);
        double got = f->round_dir(d, dir);
        if (!same(got, want) && bad++ < 5)
            detail("%s round_dir(%a, %d) = %a, GMP says %a", f->name, d, dir, got, want);
    }
    check(bad == 0, "%s: %ld doubles agree with exact GMP rounding (%ld wrong)", f->name, n + ne, bad);
}

static void test_f32_cast(long n)
{
    double edges[200];
    int ne = edge_values(&FMT_F32, edges);
    long bad = 0;
    for (long i = 0; i < n + ne; i++) {
        double d = i < ne ? edges[i] : gen_mixed(&FMT_F32);
        double want = (double)(float)d;
        double got = ieee_round_f32(d);
        int ok = same(got, want) && (isnan(d) || !!signbit(got) == !!signbit(want));
        if (!isnan(d)) {
            float fl = (float)d;
            uint32_t fb;
            memcpy(&fb, &fl, sizeof fb);
            ok &= ieee_bits_f32(got) == fb;
        }
        if (!ok && bad++ < 5)
            detail("ieee_round_f32(%a) = %a, (float) gives %a", d, got, want);
    }
    check(bad == 0, "f32: %ld doubles agree with the C conversion (%ld wrong)", n + ne, bad);
}

static void test_nan_handling(void)
{
    const fmt_t *fs[] = { &FMT_F32, &FMT_F16, &FMT_BF16 };
    for (int k = 0; k < 3; k++) {
        const fmt_t *f = fs[k];
        double n = -NAN;
        double r = f->round(n);
        check(isnan(r) && signbit(r), "%s: round(-NaN) is a negative NaN", f->name);
        /* A double NaN whose payload lives only in bits the format lacks must
         * still encode as a NaN, not as infinity. */
        double low = dfrom(UINT64_C(0x7ff0000000000001));
        uint32_t b = f->bits(low);
        check((b & ((UINT32_C(1) << (f->p - 1)) - 1)) != 0 && (b >> (f->p - 1)) == exp_all(f),
              "%s: low-payload NaN encodes as NaN", f->name);
        check(isnan(f->round(low)), "%s: rounding a signalling double NaN gives NaN", f->name);
    }
}

/* Ties go to the even neighbour, in every binade and at both range ends. */
static void test_ties(void)
{
    struct {
        const fmt_t *f;
        double in, want;
    } cases[] = {
        { &FMT_F16, 1 + 0x1p-11, 1 },
        { &FMT_F16, 1 + 3 * 0x1p-11, 1 + 0x1p-9 },
        { &FMT_F16, 2049, 2048 },
        { &FMT_F16, 2051, 2052 },
        { &FMT_F16, 65520, INFINITY },
        { &FMT_F16, 0x1p-25, 0 },
        { &FMT_F16, 3 * 0x1p-25, 0x1p-23 },
        { &FMT_F16, -0x1p-25, -0.0 },
        { &FMT_F16, -65520, -INFINITY },
        { &FMT_BF16, 257, 256 },
        { &FMT_BF16, 259, 260 },
        { &FMT_BF16, 1 + 0x1p-8, 1 },
        { &FMT_BF16, 0x1.ffp127, INFINITY },
        { &FMT_BF16, 0x1p-134, 0 },
        { &FMT_BF16, 0x1.8p-133, 0x1p-132 },
        { &FMT_F32, 16777217, 16777216 },
        { &FMT_F32, 16777219, 16777220 },
        { &FMT_F32, 0x1.ffffffp127, INFINITY },
        { &FMT_F32, 0x1p-150, 0 },
        { &FMT_F32, 0x1.8p-149, 0x1p-148 },
        { &FMT_F32, -0x1.000001p0, -1 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        double got = cases[i].f->round(cases[i].in);
        check(same(cases[i].f->round(nextafter(cases[i].in, -INFINITY)), cases[i].f->round_dir(cases[i].in, -1)) &&
                  same(cases[i].f->round(nextafter(cases[i].in, INFINITY)), cases[i].f->round_dir(cases[i].in, +1)),
              "%s near tie %a: round_dir agrees with the neighbouring doubles", cases[i].f->name, cases[i].in);
        check(same(got, cases[i].want), "%s tie: round(%a) = %a, want %a", cases[i].f->name, cases[i].in, got,
              cases[i].want);
        /* A hair off the tie, either way, picks the side. */
        double up = cases[i].f->round_dir(cases[i].in, +1), dn = cases[i].f->round_dir(cases[i].in, -1);
        check(up >= got && dn <= got && up != dn, "%s near tie %a: dir picks a side",
              cases[i].f->name, cases[i].in);
    }

    /* Not ties: the direction must not matter. */
    struct {
        const fmt_t *f;
        double in, want;
    } near[] = {
        { &FMT_F16, 65519.99, 65504 },
        { &FMT_F32, 0x1.fffffefffffffp127, 0x1.fffffep127 },
        { &FMT_F32, 0x1.0000008p0, 1 },
        { &FMT_BF16, 1.5, 1.5 },
    };
    for (size_t i = 0; i < sizeof near / sizeof near[0]; i++) {
        const fmt_t *f = near[i].f;
        int ok = 1;
        for (int dir = -1; dir <= 1; dir++)
            ok &= same(f->round_dir(near[i].in, dir), near[i].want);
        check(ok, "%s: round_dir(%a, any) = %a", f->name, near[i].in, near[i].want);
    }
}

/* ---------------------------------------------------- decimal conversion */

static double naive_decimal(const char *s, const fmt_t *f)
{
    return f->round(strtod(s, NULL));
}

/* The exact decimal expansion of a double, as "d.ddd...e+XX" with no trailing
 * zeros in the significand; glibc's printf prints exact digits. */
static void exact_decimal(double d, char *buf, size_t size)
{
    char tmp[512];
    snprintf(tmp, sizeof tmp, "%.400e", d);
    char *e = strchr(tmp, 'e');
    char *z = e;
    while (z[-1] == '0')
        z--;
    if (z[-1] == '.')
        z--;
    snprintf(buf, size, "%.*s%s", (int)(z - tmp), tmp, e);
}

/* The decimal string of x moved by one unit in a digit far past its last
 * significant one: at least 30 significant digits in, so at most 1e-30
 * relative.  up = 1 adds, up = 0 subtracts (magnitude). */
static void nudged_decimal(const char *exact, int up, char *buf, size_t size)
{
    const char *e = strchr(exact, 'e');
    int mant_len = (int)(e - exact);
    int sig = mant_len - (strchr(exact, '.') && strchr(exact, '.') < e ? 1 : 0);
    int pos = sig + 1 > 31 ? sig + 1 : 31; /* significant digit that changes */
    char mant[512];
    int n = snprintf(mant, sizeof mant, "%.*s", mant_len, exact);
    if (!up)
        mant[n - 1]--; /* the last significant digit is nonzero: no borrow */
    if (!strchr(mant, '.'))
        mant[n++] = '.';
    for (int k = sig; k < pos - 1; k++)
        mant[n++] = up ? '0' : '9';
    mant[n++] = up ? '1' : '9';
    mant[n] = 0;
    snprintf(buf, size, "%s%s", mant, e);
}

static int is_exact_decimal(const char *s)
{
    fesetround(FE_DOWNWARD);
    double lo = strtod(s, NULL);
    fesetround(FE_UPWARD);
    double hi = strtod(s, NULL);
    fesetround(FE_TONEAREST);
    return lo == hi;
}

static void test_decimal_midpoints(const fmt_t *f, int count)
{
    long bad = 0, naive_wrong = 0, not_exact = 0;
    uint32_t last = inf_pattern(f);
    for (int i = 0; i < count; i++) {
        uint32_t b;
        switch (i % 4) {
        case 0: b = last - 1; break;              /* the overflow midpoint */
        case 1: b = (uint32_t)(rnd64() % 64); break; /* subnormals */
        default: b = (uint32_t)(rnd64() % last); break;
        }
        double a = ref_decode(b, f), c = ref_decode(b + 1, f);
        double even = (b & 1) ? c : a;
        int neg = (int)(rnd64() & 1);
        double sg = neg ? -1 : 1;
        double want_c = b + 1 == last ? INFINITY : c;
        if (even == c)
            even = want_c;
        char ex[512], above[600], below[600], s[600];
        exact_decimal((a + c) / 2, ex, sizeof ex);
        not_exact += !is_exact_decimal(ex);
        nudged_decimal(ex, 1, above, sizeof above);
        nudged_decimal(ex, 0, below, sizeof below);
        const char *strs[3] = { ex, above, below };
        double wants[3] = { even, want_c, a };
        for (int k = 0; k < 3; k++) {
            snprintf(s, sizeof s, "%s%s", neg ? "-" : "", strs[k]);
            double want = sg * wants[k];
            double got = ieee_from_decimal(s, f->fmt);
            if (!same(got, want) && bad++ < 5)
                detail("%s from_decimal(\"%s\") = %a, want %a", f->name, s, got, want);
            naive_wrong += !same(naive_decimal(s, f), want);
        }
    }
    check(not_exact == 0, "%s: midpoint strings are exact decimals (%ld not)", f->name, not_exact);
    check(bad == 0, "%s: %d midpoints, exact and nudged by <= 1e-30, round once (%ld wrong)", f->name,
          3 * count, bad);
    /* About half the nudged strings land on the wrong side via strtod. */
    check(naive_wrong > count / 2, "%s: strtod-then-round is wrong on %ld of them (expected many)", f->name,
          naive_wrong);
    printf("  %s: strtod-then-round wrong on %ld of %d midpoint strings; ieee_from_decimal on %ld\n", f->name,
           naive_wrong, 3 * count, bad);
}

/* Strings where rounding through double first gives the wrong answer. */
static void test_decimal_showcase(void)
{
    struct {
        const fmt_t *f;
        const char *s;
        uint32_t want;
    } cases[] = {
        /* 1 + 2^-24 is the f32 midpoint between 1 and 1 + 2^-23. */
        { &FMT_F32, "1.000000059604644775390625000001", 0x3f800001 },
        /* 1 + 3*2^-24: just below it the answer is the odd neighbour. */
        { &FMT_F32, "1.000000178813934326171874999999", 0x3f800001 },
        /* 2^-25, half of f16's smallest subnormal. */
        { &FMT_F16, "2.98023223876953125000000000001e-8", 0x0001 },
        /* Just below f16's overflow midpoint 65520. */
        { &FMT_F16, "65519.99999999999999999999999999", 0x7bff },
        { &FMT_BF16, "1.00390625000000000000000000000001", 0x3f81 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const fmt_t *f = cases[i].f;
        uint32_t got = f->bits(ieee_from_decimal(cases[i].s, f->fmt));
        uint32_t naive = f->bits(naive_decimal(cases[i].s, f));
        check(got == cases[i].want, "%s \"%s\": got %#x want %#x", f->name, cases[i].s, (unsigned)got,
              (unsigned)cases[i].want);
        check(naive != cases[i].want, "%s \"%s\": strtod-then-round should be wrong (gives %#x)", f->name,
              cases[i].s, (unsigned)naive);
        printf("  %s \"%s\": once-rounded %#x, strtod-then-round %#x\n", f->name, cases[i].s, (unsigned)got,
               (unsigned)naive);
    }
}

static void test_decimal_misc(void)
{
    struct {
        const fmt_t *f;
        const char *s;
        uint32_t want;
    } cases[] = {
        { &FMT_F32, "0.1", 0x3dcccccd },
        { &FMT_F16, "0.1", 0x2e66 },
        { &FMT_BF16, "0.1", 0x3dcd },
        { &FMT_F16, "65520", 0x7c00 },
        { &FMT_F16, "-65520", 0xfc00 },
        { &FMT_F16, "65504", 0x7bff },
        { &FMT_F16, "2.98023223876953125e-8", 0x0000 },
        { &FMT_F16, "-2.98023223876953125e-8", 0x8000 },
        { &FMT_F32, "1e400", 0x7f800000 },
        { &FMT_F32, "-1e400", 0xff800000 },
        { &FMT_F32, "1e-400", 0x00000000 },
        { &FMT_F32, "-1e-400", 0x80000000 },
        { &FMT_F32, "1e-50", 0x00000000 },
        { &FMT_F32, "1.4e-45", 0x00000001 },
        { &FMT_F32, "inf", 0x7f800000 },
        { &FMT_F32, "0x1.000001p0", 0x3f800000 },
        /* f32's overflow midpoint is 2^128 - 2^103 = 340282356779733661637539395458142568448. */
        { &FMT_F32, "3.4028235677973366163e38", 0x7f7fffff },
        { &FMT_F32, "340282356779733661637539395458142568448", 0x7f800000 },
        { &FMT_F32, "340282356779733661637539395458142568447.9999999", 0x7f7fffff },
        { &FMT_BF16, "3.3895313892515355e38", 0x7f7f },
        { &FMT_F16, "1e5", 0x7c00 },
        { &FMT_F16, "0", 0x0000 },
        { &FMT_F16, "-0", 0x8000 },
        { &FMT_F16, ".5", 0x3800 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const fmt_t *f = cases[i].f;
        uint32_t got = f->bits(ieee_from_decimal(cases[i].s, f->fmt));
        check(got == cases[i].want, "%s \"%s\": got %#x want %#x", f->name, cases[i].s, (unsigned)got,
              (unsigned)cases[i].want);
    }
    check(isnan(ieee_from_decimal("nan", IEEE_F16)), "\"nan\" is NaN");

    const char *f64s[] = { "0.1", "1e-320", "2.2250738585072011e-308", "1e400", "123456789012345678901234567890" };
    for (size_t i = 0; i < sizeof f64s / sizeof f64s[0]; i++)
        check(same(ieee_from_decimal(f64s[i], IEEE_F64), strtod(f64s[i], NULL)), "f64 \"%s\" is strtod's",
              f64s[i]);

    fesetround(FE_UPWARD);
    double d = ieee_from_decimal("0.1", IEEE_F64);
    int mode = fegetround();
    fesetround(FE_TONEAREST);
    check(d == 0.1, "f64 decimal rounds to nearest whatever the caller's mode");
    check(mode == FE_UPWARD, "the caller's rounding mode is restored");
    (void)ieee_from_decimal("0.3", IEEE_F32);
    check(fegetround() == FE_TONEAREST, "rounding mode is round-to-nearest after a conversion");
}

static void test_dispatch(void)
{
    double x = 0.1;
    check(same(ieee_round(x, IEEE_F32), ieee_round_f32(x)) && same(ieee_round(x, IEEE_F16), ieee_round_f16(x)) &&
              same(ieee_round(x, IEEE_BF16), ieee_round_bf16(x)) && same(ieee_round(x, IEEE_F64), x),
          "ieee_round dispatches by format");
    check(ieee_bits_f64(-0.0) == UINT64_C(0x8000000000000000) && same(ieee_from_bits_f64(0x3ff0000000000000), 1.0),
          "f64 bits");
    /* Encoding rounds a value that is not yet in the format. */
    check(ieee_bits_f16(1 + 0x1p-11 + 0x1p-30) == 0x3c01, "bits of an unrounded value round first");
}

int main(void)
{
    test_patterns16(&FMT_F16);
    test_patterns16(&FMT_BF16);
    test_bf16_is_truncated_f32();
    test_f32_patterns();
    test_nan_handling();
    test_ties();
    test_against_table(&FMT_F16, 2000000);
    test_against_table(&FMT_BF16, 2000000);
    test_f32_cast(4000000);
    test_against_gmp(&FMT_F16, 100000);
    test_against_gmp(&FMT_BF16, 100000);
    test_against_gmp(&FMT_F32, 100000);
    test_decimal_showcase();
    test_decimal_misc();
    test_decimal_midpoints(&FMT_F32, 1000);
    test_decimal_midpoints(&FMT_F16, 1000);
    test_decimal_midpoints(&FMT_BF16, 1000);
    test_dispatch();
    printf("test_ieee: %ld checks, %ld failed\n", n_checks, n_failed);
    return n_failed != 0;
}
