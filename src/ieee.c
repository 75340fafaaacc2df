/* ieee.c - rounding to and encoding of IEEE binary32, binary16 and bfloat16,
 * in integer arithmetic on the bits of a double (see ieee.h for why computing
 * in double and rounding once per operation is exact). */
#include "ieee.h"
#include "state.h"

#include <fenv.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A binary format: p significand bits (with the hidden bit), normal exponents
 * emin..emax, width bits in all; the exponent field has width - p bits and
 * bias emax, as in every IEEE binary format and in bfloat16. */
typedef struct {
    int p, emin, emax, width;
} format;

static const format F32 = { 24, -126, 127, 32 };
static const format F16 = { 11, -14, 15, 16 };
static const format BF16 = { 8, -126, 127, 16 };

#define D_FRAC_BITS 52
#define D_FRAC_MASK ((UINT64_C(1) << D_FRAC_BITS) - 1)
#define D_HIDDEN (UINT64_C(1) << D_FRAC_BITS)
#define D_EXP_ALL 0x7ff
#define D_BIAS 1023
#define D_QUIET (UINT64_C(1) << 51)

static uint64_t bits_of(double d)
{
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    return u;
}

static double double_of(uint64_t u)
{
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

static int bit_length(uint64_t x)
{
    int n = 0;
    while (x != 0) {
        x >>= 1;
        n++;
    }
    return n;
}

static double signed_inf(int neg)
{
    return double_of((uint64_t)neg << 63 | (uint64_t)D_EXP_ALL << D_FRAC_BITS);
}

/* (-1)^neg * q * 2^e.  Callers guarantee the value is zero or a normal double
 * with q < 2^53, which holds for every value of the narrow formats. */
static double make_double(int neg, uint64_t q, int e)
{
    uint64_t sign = (uint64_t)neg << 63;
    if (q == 0)
        return double_of(sign);
    int len = bit_length(q);
    uint64_t m = q << (53 - len);
    uint64_t biased = (uint64_t)(e + len - 1 + D_BIAS);
    return double_of(sign | biased << D_FRAC_BITS | (m & D_FRAC_MASK));
}

/* A finite nonzero double as m * 2^(exp - 52) with m in [2^52, 2^53): the
 * same shape for subnormal doubles as for normal ones simplifies rounding. */
static void unpack(uint64_t u, uint64_t *m, int *exp)
{
    int be = (int)(u >> D_FRAC_BITS & D_EXP_ALL);
    uint64_t frac = u & D_FRAC_MASK;
    if (be != 0) {
        *m = frac | D_HIDDEN;
        *exp = be - D_BIAS;
    } else {
        int len = bit_length(frac);
        *m = frac << (53 - len);
        *exp = 1 - D_BIAS - D_FRAC_BITS + len - 1;
    }
}

/* The fraction bits of a double that survive in a format of precision p. */
static uint64_t kept_payload(uint64_t u, const format *f)
{
    int drop = D_FRAC_BITS - (f->p - 1);
    return (u & D_FRAC_MASK) >> drop << drop;
}

static int is_nan_bits(uint64_t u)
{
    return (u >> D_FRAC_BITS & D_EXP_ALL) == D_EXP_ALL && (u & D_FRAC_MASK) != 0;
}

/* Rounding a NaN behaves like a hardware conversion: the payload is cut to
 * the format's width and the NaN is quieted, so arithmetic never sees sNaN. */
static double round_nan(uint64_t u, const format *f)
{
    uint64_t keep = u & ~D_FRAC_MASK;
    return double_of(keep | kept_payload(u, f) | D_QUIET);
}

static int rounds_up(uint64_t q, uint64_t rem, uint64_t half, int mag_dir)
{
    if (rem != half)
        return rem > half;
    if (mag_dir != 0) /* not a true tie: the exact value lies to one side */
        return mag_dir > 0;
    return (int)(q & 1); /* tie: to even */
}

static double round_to(double d, int dir, const format *f)
{
    uint64_t u = bits_of(d);
    int neg = (int)(u >> 63);
    if (is_nan_bits(u))
        return round_nan(u, f);
    if (isinf(d) || d == 0)
        return d;

    uint64_t m;
    int exp;
    unpack(u, &m, &exp);
    if (exp > f->emax) /* |d| >= 2^(emax+1): beyond even the overflow midpoint */
        return signed_inf(neg);

    /* The format's unit in the last place at this magnitude; below emin the
     * spacing stops shrinking, which is what makes subnormals. */
    int ulp_exp = (exp > f->emin ? exp : f->emin) - (f->p - 1);
    int shift = ulp_exp - (exp - D_FRAC_BITS);
    /* m < 2^53, so for any shift >= 55 the result is 0; capping keeps the
     * shifts below defined without changing that answer. */
    if (shift > 60)
        shift = 60;
    uint64_t q = m >> shift;
    uint64_t rem = m & ((UINT64_C(1) << shift) - 1);
    uint64_t half = UINT64_C(1) << (shift - 1);
    int mag_dir = neg ? -dir : dir; /* above d means smaller magnitude if d < 0 */
    q += (uint64_t)rounds_up(q, rem, half, mag_dir);

    if (q != 0 && bit_length(q) - 1 + ulp_exp > f->emax)
        return signed_inf(neg);
    return make_double(neg, q, ulp_exp);
}

static uint32_t encode(double d, const format *f)
{
    uint64_t u = bits_of(d);
    uint32_t sign = (uint32_t)(u >> 63) << (f->width - 1);
    uint32_t exp_all = (UINT32_C(1) << (f->width - f->p)) - 1;
    uint32_t frac_mask = (UINT32_C(1) << (f->p - 1)) - 1;
    if (is_nan_bits(u)) {
        uint32_t payload = (uint32_t)(kept_payload(u, f) >> (D_FRAC_BITS - (f->p - 1)));
        if (payload == 0) /* payload only in bits the format lacks: stay a NaN */
            payload = UINT32_C(1) << (f->p - 2);
        return sign | exp_all << (f->p - 1) | payload;
    }
    d = round_to(d, 0, f); /* a no-op for values already in the format */
    if (isinf(d))
        return sign | exp_all << (f->p - 1);
    if (d == 0)
        return sign;

    uint64_t m;
    int exp;
    unpack(bits_of(d), &m, &exp);
    if (exp >= f->emin) {
        uint32_t frac = (uint32_t)(m >> (53 - f->p)) & frac_mask;
        return sign | (uint32_t)(exp + f->emax) << (f->p - 1) | frac;
    }
    return sign | (uint32_t)(m >> (53 - f->p + f->emin - exp));
}

static double decode(uint32_t b, const format *f)
{
    int neg = (int)(b >> (f->width - 1) & 1);
    uint32_t exp_all = (UINT32_C(1) << (f->width - f->p)) - 1;
    uint32_t biased = b >> (f->p - 1) & exp_all;
    uint64_t frac = b & ((UINT32_C(1) << (f->p - 1)) - 1);
    if (biased == exp_all) {
        if (frac == 0)
            return signed_inf(neg);
        uint64_t payload = frac << (D_FRAC_BITS - (f->p - 1));
        return double_of((uint64_t)neg << 63 | (uint64_t)D_EXP_ALL << D_FRAC_BITS | payload);
    }
    if (biased == 0)
        return make_double(neg, frac, f->emin - (f->p - 1));
    return make_double(neg, frac | UINT64_C(1) << (f->p - 1), (int)biased - f->emax - (f->p - 1));
}

double ieee_round_f32(double d) { return round_to(d, 0, &F32); }
double ieee_round_f16(double d) { return round_to(d, 0, &F16); }
double ieee_round_bf16(double d) { return round_to(d, 0, &BF16); }

double ieee_round_dir_f32(double d, int dir) { return round_to(d, dir, &F32); }
double ieee_round_dir_f16(double d, int dir) { return round_to(d, dir, &F16); }
double ieee_round_dir_bf16(double d, int dir) { return round_to(d, dir, &BF16); }

uint32_t ieee_bits_f32(double d) { return encode(d, &F32); }
uint16_t ieee_bits_f16(double d) { return (uint16_t)encode(d, &F16); }
uint16_t ieee_bits_bf16(double d) { return (uint16_t)encode(d, &BF16); }
uint64_t ieee_bits_f64(double d) { return bits_of(d); }

double ieee_from_bits_f32(uint32_t b) { return decode(b, &F32); }
double ieee_from_bits_f16(uint16_t b) { return decode(b, &F16); }
double ieee_from_bits_bf16(uint16_t b) { return decode(b, &BF16); }
double ieee_from_bits_f64(uint64_t b) { return double_of(b); }

static const format *format_of(ieee_fmt fmt)
{
    switch (fmt) {
    case IEEE_F32: return &F32;
    case IEEE_F16: return &F16;
    case IEEE_BF16: return &BF16;
    default: return NULL;
    }
}

double ieee_round(double d, ieee_fmt fmt)
{
    const format *f = format_of(fmt);
    return f ? round_to(d, 0, f) : d;
}

/* strtod under a given rounding mode.  glibc's strtod honours the mode (it
 * rounds the exact decimal value), and the calls are opaque to the compiler,
 * so they cannot be moved across fesetround. */
#ifdef __EMSCRIPTEN__
/* WebAssembly rounds to nearest only (web/, `make web`): the directed
 * results are the nearest double or its neighbour, by the side the
 * decimal's 113-bit long double lies on (as num.c's decimal_with_dir). */
static double strtod_in_mode(const char *s, int mode)
{
    double near = strtod(s, NULL);
    if (mode == FE_TONEAREST || isnan(near)) return near;
    long double x = strtold(s, NULL);
    if (mode == FE_DOWNWARD) return (long double)near > x ? nextafter(near, -INFINITY) : near;
    return (long double)near < x ? nextafter(near, INFINITY) : near;
}
#else
static double strtod_in_mode(const char *s, int mode)
{
    int saved = fegetround();
    fesetround(mode);
    double d = strtod(s, NULL);
    fesetround(saved);
    return d;
}
#endif

double ieee_from_decimal(const char *s, ieee_fmt fmt)
{
    const format *f = format_of(fmt);
    if (f == NULL)
        return strtod_in_mode(s, FE_TONEAREST);

    /* The exact value x lies in [lo, hi], two equal or adjacent doubles.  Every
     * rounding boundary of the narrow format (a midpoint, at most p+1 bits) is
     * a double, so an x strictly between lo and hi is on no boundary and
     * rounds like "just above lo": one rounding, from the exact value. */
    double lo = strtod_in_mode(s, FE_DOWNWARD);
    double hi = strtod_in_mode(s, FE_UPWARD);
    if (isnan(lo) || lo == hi)
        return round_to(lo, 0, f);
    if (isinf(lo)) /* below -DBL_MAX: hi is the finite neighbour */
        return round_to(hi, -1, f);
    return round_to(lo, +1, f);
}
