/* num.c: number backends. float64 is native; float32, float16 and bfloat16
 * compute + - * / sqrt in double and round once to the format (innocuous
 * double rounding, since 53 >= 2p + 2: see ieee.c); posits convert exactly
 * to their bit patterns and use the integer posit core (posit.c). Math
 * functions (sin, exp, ...) compute in double and round once to the format:
 * correctly rounded for the basic operations, faithful for the rest. */
#include <ctype.h>
#include <fenv.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "num.h"
#include "ieee.h"
#include "posit.h"
#include "state.h"
#include "wmath.h"


const char *const num_op_names[OP_COUNT] = {
#define OP(e, name, kind, flags, f, da, db) name,
#include "ops.def"
#undef OP
};

/* The per-op tables of num.h, from each op's kind and flags. */
const int num_op_arity[OP_COUNT] = {
#define OP(e, name, kind, flags, f, da, db) OPK_ARITY_##kind,
#include "ops.def"
#undef OP
};
const uint8_t num_op_flags[OP_COUNT] = {
#define OP(e, name, kind, flags, f, da, db) flags,
#include "ops.def"
#undef OP
};
const uint8_t num_op_ids[OP_COUNT] = {
#define OP(e, name, kind, flags, f, da, db) OPK_IDS_##kind,
#include "ops.def"
#undef OP
};
const uint8_t num_op_side[OP_COUNT] = {
#define OP(e, name, kind, flags, f, da, db) OPK_SIDE_##kind,
#include "ops.def"
#undef OP
};
const uint8_t num_op_cone[OP_COUNT] = {
#define OP(e, name, kind, flags, f, da, db) OPK_CONE_##kind,
#include "ops.def"
#undef OP
};
const uint8_t num_op_near[OP_COUNT] = {
#define OP(e, name, kind, flags, f, da, db) OPK_NEAR_##kind,
#include "ops.def"
#undef OP
};

/* ------------------------------------------------------ the formats */

/* Adapters from each format's own functions (ieee.c, posit.c) to the
 * uniform signatures of the table below. */
static double f64_round(double x) { return x; }
static double f64_literal(const char *text) { return strtod(text, NULL); }
static uint64_t f64_bits(double x) { return ieee_bits_f64(x); }
static double f64_frombits(uint64_t b) { return ieee_from_bits_f64(b); }

#define IEEE_ADAPTERS(F, FMT)                                                       \
    static double F##_literal(const char *text) { return ieee_from_decimal(text, FMT); } \
    static uint64_t F##_bits(double x) { return ieee_bits_##F(x); }                 \
    static double F##_frombits(uint64_t b) { return ieee_from_bits_##F((uint32_t)b); }
IEEE_ADAPTERS(f32, IEEE_F32)
IEEE_ADAPTERS(f16, IEEE_F16)
IEEE_ADAPTERS(bf16, IEEE_BF16)
#undef IEEE_ADAPTERS

static double posit_literal(const char *text, const PositOps *p);

#define POSIT_ADAPTERS(P, Q, QT)                                                    \
    static double P##_round(double x) { return posit_##P##_to_double(posit_##P##_from_double(x)); } \
    static uint64_t P##_bits(double x) { return posit_##P##_from_double(x); }               \
    static double P##_frombits(uint64_t b) { return posit_##P##_to_double((uint32_t)b); }   \
    static void Q##_fma_w(uint64_t *w, uint32_t a, uint32_t b) { posit_##Q##_fma((QT *)w, a, b); } \
    static void Q##_add_w(uint64_t *w, uint32_t a) { posit_##Q##_add((QT *)w, a); }         \
    static uint32_t Q##_result_w(const uint64_t *w) { return posit_##Q##_to_posit((const QT *)w); } \
    static const PositOps P##_ops = {                                               \
        posit_##P##_from_double, posit_##P##_from_double_dir, posit_##P##_to_double,                        \
        { posit_##P##_add, posit_##P##_sub, posit_##P##_mul, posit_##P##_div }, posit_##P##_sqrt,                           \
        Q##_fma_w, Q##_add_w, Q##_result_w, sizeof(QT) * 8                          \
    };                                                                              \
    static double P##_literal(const char *text) { return posit_literal(text, &P##_ops); }
POSIT_ADAPTERS(p8, q8, quire8_t)
POSIT_ADAPTERS(p16, q16, quire16_t)
POSIT_ADAPTERS(p32, q32, quire32_t)
#undef POSIT_ADAPTERS

/* One row a format: a new backend is one more row (and its enum name). */
const Format num_formats[BK_COUNT] = {
    [BK_F64]  = { "float64",  64, f64_round,       f64_literal,  f64_bits,  f64_frombits,  0x1.fffffffffffffp-1, NULL },
    [BK_F32]  = { "float32",  32, ieee_round_f32,  f32_literal,  f32_bits,  f32_frombits,  0x1.fffffep-1, NULL },
    [BK_F16]  = { "float16",  16, ieee_round_f16,  f16_literal,  f16_bits,  f16_frombits,  0x1.ffcp-1, NULL },
    [BK_BF16] = { "bfloat16", 16, ieee_round_bf16, bf16_literal, bf16_bits, bf16_frombits, 0x1.fep-1, NULL },
    [BK_P8]   = { "posit8",    8, p8_round,        p8_literal,   p8_bits,   p8_frombits,  0, &p8_ops },
    [BK_P16]  = { "posit16",  16, p16_round,       p16_literal,  p16_bits,  p16_frombits,  0, &p16_ops },
    [BK_P32]  = { "posit32",  32, p32_round,       p32_literal,  p32_bits,  p32_frombits,  0, &p32_ops },
};

#define FMT (&num_formats[G->num.backend])

int num_backend_lookup(const char *name)
{
    for (int i = 0; i < BK_COUNT; i++)
        if (strcmp(name, num_formats[i].name) == 0) return i;
    return -1;
}

int num_backend_is_posit(int b) { return num_formats[b].posit != NULL; }

double num_round(double x) { return FMT->round(x); }

/* Floor modulo: the result takes the sign of the divisor (-1 % 3 is 2). */
static double floor_mod(double a, double b)
{
    double r = fmod(a, b);
    if (r != 0 && ((r < 0) != (b < 0))) r += b;
    if (r == 0) r = copysign(0, b);   /* as Python: -6 % 3 is 0 */
    return r;
}

/* a * b, but an exact 0 factor wins over inf and nan (OP_MUL0) */
static double mul0_of(double a, double b)
{
    double r = a * b;
    return r != r && (a == 0 || b == 0) ? 0 : r;
}

static double sign_of(double a) { return a > 0 ? 1 : a < 0 ? -1 : a == 0 ? 0 : a; }

/* 1 / (1 + e^-a) and log(1 + e^a) without overflow at either end: an
 * exponential of a large argument would be inf, and 0 * inf in a
 * derivative is nan. */
static double sigmoid_of(double a) { return a >= 0 ? 1 / (1 + wm_exp(-a)) : wm_exp(a) / (1 + wm_exp(a)); }
static double softplus_of(double a) { return a > 0 ? a + log1p(wm_exp(-a)) : log1p(wm_exp(a)); }

/* The exact (or libm) result in double, before rounding to the backend:
 * the value column of ops.def. */
static double apply_double(int op, double a, double b)
{
    (void)b;
    switch (op) {
#define OP(e, name, kind, flags, f, da, db) case OP_##e: return f;
#include "ops.def"
#undef OP
    default: return a;
    }
}

double num_apply_f64(int op, double a, double b) { return apply_double(op, a, b); }

/* out[j] = op(A[j * sa], B[j * sb]) for j < n in float64: apply_double's
 * value for each pair (the same column of ops.def, so the same bits), the
 * switch taken once, and the arithmetic in loops the compiler vectorises
 * (array runs, arrayrun.c). */
#define VECTORISE __attribute__((optimize("tree-vectorize", "vect-cost-model=cheap", "no-trapping-math")))
#define APPLY_LOOP(SA, SB, f) \
    for (uint32_t j = 0; j < n; j++) { double a = A[j * (SA)], b = B[j * (SB)]; (void)b; out[j] = (f); }
/* the strides of a run (1) and a broadcast number (0) known to the compiler */
#define APPLY_STRIDES(f)                                           \
    if (sa == 1 && sb == 1) APPLY_LOOP(1, 1, f)                    \
    else if (sa == 1 && sb == 0) APPLY_LOOP(1, 0, f)               \
    else if (sa == 0 && sb == 1) APPLY_LOOP(0, 1, f)               \
    else APPLY_LOOP(sa, sb, f)
/* out[j] = f(A[j * sa]) by f, the array form of a wmath.c function: A as
 * it is when contiguous, else gathered a chunk at a time */
static void unary_n(void (*f)(const double *, double *, unsigned), const double *A, long sa, double *out, uint32_t n)
{
    if (sa == 1) {
        f(A, out, n);
        return;
    }
    for (uint32_t c = 0; c < n; c += 256) {
        double x[256];
        uint32_t m = n - c < 256 ? n - c : 256;
        for (uint32_t j = 0; j < m; j++) x[j] = A[(c + j) * sa];
        f(x, out + c, m);
    }
}

VECTORISE void num_apply_f64_n(int op, const double *restrict A, long sa, const double *restrict B, long sb,
                               double *restrict out, uint32_t n)
{
    switch (op) {
    case OP_ADD: APPLY_STRIDES(a + b) return;
    case OP_SUB: APPLY_STRIDES(a - b) return;
    case OP_MUL: APPLY_STRIDES(a * b) return;
    case OP_DIV: APPLY_STRIDES(a / b) return;
    /* (abs and sign with the unit stride known: vectorised, ht's plan) */
    case OP_ABS: APPLY_STRIDES(fabs(a)) return;
    case OP_SIGN: APPLY_STRIDES(a > 0 ? 1 : a < 0 ? -1 : a == 0 ? 0 : a) return;   /* sign_of, inline (not across optimize attributes) */
    case OP_EXP: unary_n(wm_exp_n, A, sa, out, n); return;     /* wm_exp's bits, two at a time (wmath.c) */
    case OP_TANH: unary_n(wm_tanh_n, A, sa, out, n); return;   /* wm_tanh's, the same way */
    case OP_SIGMOID:    /* sigmoid_of's bits: both its branches take e^-|a|, two at a time */
        for (uint32_t c = 0; c < n; c += 256) {
            double x[256];
            uint32_t m = n - c < 256 ? n - c : 256;
            const double *Ac = A + c * sa;
            if (sa == 1)        /* (contiguous, as an array run's operand is: the loop vectorises) */
                for (uint32_t j = 0; j < m; j++) x[j] = -fabs(Ac[j]);
            else
                for (uint32_t j = 0; j < m; j++) x[j] = -fabs(Ac[j * sa]);
            wm_exp_n(x, out + c, m);
            for (uint32_t j = 0; j < m; j++) {
                double a = Ac[j * sa], e = out[c + j];
                out[c + j] = a >= 0 ? 1 / (1 + e) : a < 0 ? e / (1 + e) : sigmoid_of(a);   /* (nan: its own) */
            }
        }
        return;
    default: break;
    }
    switch (op) {
#define OP(e, name, kind, flags, f, da, db) case OP_##e: APPLY_LOOP(sa, sb, f) return;
#include "ops.def"
#undef OP
    default: APPLY_LOOP(sa, sb, a) return;
    }
}
#undef APPLY_STRIDES
#undef APPLY_LOOP

/* A libm result for a posit: a finite value that overflowed double (or
 * underflowed to 0) is still a real number, so it saturates at maxpos or
 * minpos as the standard asks; a true infinity (a pole, log(0)) is NaR. */
#ifdef __EMSCRIPTEN__
/* WebAssembly keeps no floating-point exception flags (web/, `make web`):
 * the flags posit_math reads are told from the operation instead. From
 * finite operands, an infinity is a pole (DIVBYZERO) only at one of these
 * exact points, and any other is an overflow; a 0 whose exact value is
 * not 0 is an underflow (sums of doubles underflow exactly, and the
 * other functions do not reach 0 from finite posits). */
#define FE_DIVBYZERO 1
#define FE_OVERFLOW 2
#define FE_UNDERFLOW 4
static int fp_flags(int op, double a, double b, double r)
{
    if (isinf(r) && isfinite(a) && isfinite(b)) {
        int pole = (op == OP_DIV && b == 0) || (op == OP_POW && a == 0 && b < 0) ||
                   (op == OP_LOG && a == 0) || (op == OP_LOG1P && a == -1);
        return pole ? FE_DIVBYZERO : FE_OVERFLOW;
    }
    if (r == 0 && isfinite(a) && isfinite(b))
        switch (op) {
        case OP_EXP: case OP_SIGMOID: case OP_SOFTPLUS: return FE_UNDERFLOW;
        case OP_POW: case OP_DIV: return a != 0 ? FE_UNDERFLOW : 0;
        case OP_MUL: case OP_MUL0: return a != 0 && b != 0 ? FE_UNDERFLOW : 0;
        }
    return 0;
}
#endif

static double posit_math(int op, double a, double b)
{
#ifdef __EMSCRIPTEN__
    double r = apply_double(op, a, b);
    int flags = fp_flags(op, a, b, r);
#else
    feclearexcept(FE_OVERFLOW | FE_UNDERFLOW | FE_DIVBYZERO);
    double r = apply_double(op, a, b);
    int flags = fetestexcept(FE_OVERFLOW | FE_UNDERFLOW | FE_DIVBYZERO);
#endif
    if (isinf(r) && (flags & FE_OVERFLOW) && !(flags & FE_DIVBYZERO)) r = copysign(DBL_MAX, r);
    else if (r == 0 && (flags & FE_UNDERFLOW)) r = copysign(DBL_TRUE_MIN, r);
    return num_round(r);
}

/* Stored values keep their bits and are converted on use: operands are
 * rounded to the active format before the operation. */
double num_apply_slow(int op, double a, double b)
{
    a = num_round(a);
    b = num_round(b);
    const PositOps *p = FMT->posit;
    if (p) {
        switch (op) {
        case OP_ADD: return p->to_double(p->arith[0](p->from_double(a), p->from_double(b)));
        case OP_SUB: return p->to_double(p->arith[1](p->from_double(a), p->from_double(b)));
        case OP_MUL: return p->to_double(p->arith[2](p->from_double(a), p->from_double(b)));
        case OP_MUL0: if (a == 0 || b == 0) return 0;   /* NaR too */
                      return p->to_double(p->arith[2](p->from_double(a), p->from_double(b)));
        case OP_DIV: return p->to_double(p->arith[3](p->from_double(a), p->from_double(b)));
        case OP_SQRT: return p->to_double(p->sqrt(p->from_double(a)));
        case OP_NEG: return isnan(a) ? a : a == 0 ? 0 : -a;
        default: return posit_math(op, a, b);
        }
    }
    return num_round(apply_double(op, a, b));
}

/* ------------------------------------------------------------ ordering */

/* The largest value below 1 in the active format. */
double num_below_one(void)
{
    const PositOps *p = FMT->posit;
    return p ? p->to_double(p->from_double(1) - 1) : FMT->below_one;
}

int num_less(double a, double b)
{
    if (G->num.backend != BK_F64) {
        a = num_round(a);
        b = num_round(b);
    }
    if (num_backend_is_posit(G->num.backend)) {
        if (isnan(a)) return !isnan(b);   /* NaR is below every real */
        if (isnan(b)) return 0;
    }
    return a < b;
}

int num_equal(double a, double b)
{
    if (G->num.backend != BK_F64) {
        a = num_round(a);
        b = num_round(b);
    }
    if (num_backend_is_posit(G->num.backend) && isnan(a) && isnan(b)) return 1;
    return a == b;
}

/* ------------------------------------------------------------ literals */

/* The double nearest the decimal text, and which side of it the exact
 * decimal value lies (-1 below, 0 exact, +1 above): enough to round the
 * exact decimal once to any narrower format. glibc's strtod honours the
 * rounding mode. */
static double decimal_with_dir(const char *text, int *dir)
{
#ifdef __EMSCRIPTEN__
    /* WebAssembly rounds to nearest only: the side is told by the
     * decimal's 113-bit long double (wrong only for a decimal within
     * 2^-113 of a double and not on it: over 30 digits) */
    double near = strtod(text, NULL);
    long double x = strtold(text, NULL);
    *dir = isnan(near) || (long double)near == x ? 0 : (long double)near < x ? 1 : -1;
    return near;
#else
    int mode = fegetround();
    double near = strtod(text, NULL);
    fesetround(FE_DOWNWARD);
    double down = strtod(text, NULL);
    fesetround(FE_UPWARD);
    double up = strtod(text, NULL);
    fesetround(mode);
    *dir = down == up ? 0 : near == down ? 1 : -1;
    return near;
#endif
}

/* A posit literal: the exact decimal rounded once, by way of the double
 * nearest it and the side the decimal lies on. */
static double posit_literal(const char *text, const PositOps *p)
{
    int dir;
    double d = decimal_with_dir(text, &dir);
    /* beyond double's range a literal is still a real number: saturate */
    if (isinf(d)) d = DBL_MAX, dir = 1;
    else if (d == 0 && dir != 0) d = DBL_TRUE_MIN, dir = -1;
    return p->to_double(p->from_double_dir(d, dir));
}

double num_literal(const char *text) { return FMT->literal(text); }

/* ------------------------------------------------------------ printing */

static int same_number(double a, double b)
{
    if (isnan(a) || isnan(b)) return isnan(a) && isnan(b);
    return a == b && signbit(a) == signbit(b);
}

/* The significant digits (trailing zeros dropped) and decimal exponent of
 * a number printed by "%.Ne". */
static void split_digits(const char *buf, char *digits, int *exp10)
{
    const char *e = strchr(buf, 'e');
    *exp10 = atoi(e + 1);
    int n = 0;
    for (const char *p = buf; p < e; p++)
        if (*p >= '0' && *p <= '9') digits[n++] = *p;
    while (n > 1 && digits[n - 1] == '0') n--;
    digits[n] = 0;
}

/* The p-digit decimal next to "%.{p-1}e" output s, one unit in the last
 * digit up (step 1) or down (step -1); 0 if the step leaves p digits. */
static int neighbour(const char *s, int p, int step, char *out, size_t size)
{
    char m[32];
    int n = 0, neg = s[0] == '-';
    const char *e = strchr(s, 'e');
    for (const char *q = s; q < e; q++)
        if (*q >= '0' && *q <= '9') m[n++] = *q;
    int i = n - 1;
    while (i >= 0 && m[i] == (step > 0 ? '9' : '0')) m[i--] = step > 0 ? '0' : '9';
    if (i < 0) return 0;
    m[i] = (char)(m[i] + step);
    if (m[0] == '0') return 0;
    snprintf(out, size, "%s%c%s%.*se%d", neg ? "-" : "", m[0], p > 1 ? "." : "", p - 1, m + 1, atoi(e + 1));
    return 1;
}

/* The shortest decimal that reads back to x in the active format, and of
 * those the nearest to x (as Python's repr). The nearest p-digit decimal
 * may miss where the one beside it does not: below a power of two the
 * format's gaps halve, so the reading-back interval is lopsided. */
static void shortest_digits(double x, char *digits, int *exp10)
{
    char buf[64], alt[64];
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, sizeof buf, "%.*e", prec - 1, x);
        if (prec == 17 || same_number(num_literal(buf), x)) break;
        int found = 0;
        long double best = 0;
        for (int step = -1; step <= 1; step += 2) {
            char cand[64];
            if (!neighbour(buf, prec, step, cand, sizeof cand) || !same_number(num_literal(cand), x)) continue;
            long double dist = fabsl(strtold(cand, NULL) - (long double)x);
            if (!found || dist < best) {
                snprintf(alt, sizeof alt, "%s", cand);
                best = dist;
                found = 1;
            }
        }
        if (found) {
            snprintf(buf, sizeof buf, "%s", alt);
            break;
        }
    }
    split_digits(buf, digits, exp10);
}

/* Exact decimal digits of x (posit maxpos and minpos print exactly). */
static void exact_digits(double x, char *digits, int *exp10)
{
    char buf[200];
    snprintf(buf, sizeof buf, "%.150e", x);
    split_digits(buf, digits, exp10);
}

static int is_posit_extreme(double x)
{
    if (!num_backend_is_posit(G->num.backend) || x == 0 || isnan(x)) return 0;
    int n = FMT->width;
    double maxpos = ldexp(1, 4 * n - 8), minpos = ldexp(1, -4 * n + 8);
    return fabs(x) == maxpos || fabs(x) == minpos;
}

/* Lay the digits out as Python's repr does: positional for 1e-4 <= |x| <
 * 1e16, exponent form otherwise; integral values drop the ".0". */
void num_format(double x, char *out, int size)
{
    x = num_round(x);     /* a value stored in another format prints as it is used */
    if (isnan(x)) { snprintf(out, size, "%s", num_backend_is_posit(G->num.backend) ? "NaR" : "nan"); return; }
    if (isinf(x)) { snprintf(out, size, "%s", x > 0 ? "inf" : "-inf"); return; }
    if (x == 0) { snprintf(out, size, "%s", signbit(x) ? "-0" : "0"); return; }
    char digits[200];
    int e, pos = 0;
    if (is_posit_extreme(x)) exact_digits(x, digits, &e);
    else shortest_digits(x, digits, &e);
    int nd = (int)strlen(digits);
    char buf[400];
    if (x < 0) buf[pos++] = '-';
    if (e >= -4 && e < 16) {
        if (e < 0) {
            pos += sprintf(buf + pos, "0.");
            for (int i = 0; i < -e - 1; i++) buf[pos++] = '0';
            pos += sprintf(buf + pos, "%s", digits);
        } else {
            for (int i = 0; i <= e || i < nd; i++) {
                if (i == e + 1) buf[pos++] = '.';
                buf[pos++] = i < nd ? digits[i] : '0';
            }
        }
    } else {
        buf[pos++] = digits[0];
        if (nd > 1) pos += sprintf(buf + pos, ".%s", digits + 1);
        pos += sprintf(buf + pos, "e%c%02d", e < 0 ? '-' : '+', e < 0 ? -e : e);
    }
    buf[pos] = 0;
    snprintf(out, size, "%s", buf);
}

/* ---------------------------------------------------------------- bits */

int num_bits(double x, char *buf, int size)
{
    return snprintf(buf, size, "0x%0*llx", FMT->width / 4, (unsigned long long)FMT->to_bits(x));
}

int num_frombits(const char *s, double *out)
{
    if (s[0] != '0' || (s[1] != 'x' && s[1] != 'X')) return 0;
    int digits = (int)strlen(s + 2);
    if (digits == 0 || digits > FMT->width / 4) return 0;
    for (const char *p = s + 2; *p; p++)
        if (!isxdigit((unsigned char)*p)) return 0;   /* strtoull would take signs and spaces */
    char *end;
    unsigned long long b = strtoull(s + 2, &end, 16);
    if (*end) return 0;
    *out = FMT->from_bits(b);
    return 1;
}

/* ---------------------------------------------------------- accumulator */

void num_acc_clear(NumAcc *q)
{
    memset(q, 0, sizeof *q);
    q->backend = G->num.backend;
}

void num_acc_fma(NumAcc *q, double a, double b)
{
    const PositOps *p = num_formats[q->backend].posit;
    if (p) p->quire_fma(q->w, p->from_double(a), p->from_double(b));
    else q->fsum = num_apply(OP_ADD, q->fsum, num_apply(OP_MUL, a, b));
}

void num_acc_add(NumAcc *q, double a)
{
    const PositOps *p = num_formats[q->backend].posit;
    if (p) p->quire_add(q->w, p->from_double(a));
    else q->fsum = num_apply(OP_ADD, q->fsum, a);
}

double num_acc_result(const NumAcc *q)
{
    const PositOps *p = num_formats[q->backend].posit;
    return p ? p->to_double(p->quire_result(q->w)) : q->fsum;
}
