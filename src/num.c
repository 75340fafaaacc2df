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

int num_backend = BK_F64;
int wg_start_backend = BK_F64;   /* --backend: what :reset returns to */

const char *const backend_names[BK_COUNT] = {
    "float64", "float32", "float16", "bfloat16", "posit8", "posit16", "posit32"
};

const char *const op_names[OP_COUNT] = {
#define OP(e, name, arity, f, da, db) name,
#include "ops.def"
#undef OP
};

const int op_arity[OP_COUNT] = {
#define OP(e, name, arity, f, da, db) arity,
#include "ops.def"
#undef OP
};

int backend_lookup(const char *name)
{
    for (int i = 0; i < BK_COUNT; i++)
        if (strcmp(name, backend_names[i]) == 0) return i;
    return -1;
}

int backend_is_posit(int b) { return b >= BK_P8; }

/* ---------------------------------------------------------- posit glue */

static uint32_t to_posit(double x)
{
    switch (num_backend) {
    case BK_P8:  return p8_from_double(x);
    case BK_P16: return p16_from_double(x);
    default:     return p32_from_double(x);
    }
}

static double from_posit(uint32_t p)
{
    switch (num_backend) {
    case BK_P8:  return p8_to_double(p);
    case BK_P16: return p16_to_double(p);
    default:     return p32_to_double(p);
    }
}

static double num_posit_binary(int op, double a, double b)
{
    uint32_t x = to_posit(a), y = to_posit(b), r;
    switch (num_backend) {
    case BK_P8:
        r = op == OP_ADD ? p8_add(x, y) : op == OP_SUB ? p8_sub(x, y)
          : op == OP_MUL ? p8_mul(x, y) : p8_div(x, y);
        break;
    case BK_P16:
        r = op == OP_ADD ? p16_add(x, y) : op == OP_SUB ? p16_sub(x, y)
          : op == OP_MUL ? p16_mul(x, y) : p16_div(x, y);
        break;
    default:
        r = op == OP_ADD ? p32_add(x, y) : op == OP_SUB ? p32_sub(x, y)
          : op == OP_MUL ? p32_mul(x, y) : p32_div(x, y);
        break;
    }
    return from_posit(r);
}

static double num_posit_sqrt(double a)
{
    uint32_t x = to_posit(a);
    switch (num_backend) {
    case BK_P8:  return p8_to_double(p8_sqrt(x));
    case BK_P16: return p16_to_double(p16_sqrt(x));
    default:     return p32_to_double(p32_sqrt(x));
    }
}

double num_round(double x)
{
    switch (num_backend) {
    case BK_F64:  return x;
    case BK_F32:  return ieee_round_f32(x);
    case BK_F16:  return ieee_round_f16(x);
    case BK_BF16: return ieee_round_bf16(x);
    default:      return from_posit(to_posit(x));
    }
}

/* Floor modulo: the result takes the sign of the divisor (-1 % 3 is 2). */
static double floor_mod(double a, double b)
{
    double r = fmod(a, b);
    if (r != 0 && ((r < 0) != (b < 0))) r += b;
    if (r == 0) r = copysign(0, b);   /* as Python: -6 % 3 is 0 */
    return r;
}

static double sign_of(double a) { return a > 0 ? 1 : a < 0 ? -1 : a == 0 ? 0 : a; }

/* The exact (or libm) result in double, before rounding to the backend:
 * the value column of ops.def. */
static double apply_double(int op, double a, double b)
{
    (void)b;
    switch (op) {
#define OP(e, name, arity, f, da, db) case OP_##e: return f;
#include "ops.def"
#undef OP
    default: return a;
    }
}

double num_apply_f64(int op, double a, double b) { return apply_double(op, a, b); }

/* A libm result for a posit: a finite value that overflowed double (or
 * underflowed to 0) is still a real number, so it saturates at maxpos or
 * minpos as the standard asks; a true infinity (a pole, log(0)) is NaR. */
static double posit_math(int op, double a, double b)
{
    feclearexcept(FE_OVERFLOW | FE_UNDERFLOW | FE_DIVBYZERO);
    double r = apply_double(op, a, b);
    int flags = fetestexcept(FE_OVERFLOW | FE_UNDERFLOW | FE_DIVBYZERO);
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
    if (backend_is_posit(num_backend)) {
        if (op == OP_ADD || op == OP_SUB || op == OP_MUL || op == OP_DIV)
            return num_posit_binary(op, a, b);
        if (op == OP_SQRT) return num_posit_sqrt(a);
        if (op == OP_NEG) return isnan(a) ? a : a == 0 ? 0 : -a;
        return posit_math(op, a, b);
    }
    return num_round(apply_double(op, a, b));
}

/* ------------------------------------------------------------ ordering */

/* The largest value below 1 in the active format. */
double num_below_one(void)
{
    switch (num_backend) {
    case BK_F32:  return 1 - ldexp(1, -24);
    case BK_F16:  return 1 - ldexp(1, -11);
    case BK_BF16: return 1 - ldexp(1, -8);
    case BK_P8:   return p8_to_double(P8_ONE - 1);
    case BK_P16:  return p16_to_double(P16_ONE - 1);
    case BK_P32:  return p32_to_double(P32_ONE - 1);
    default:      return nextafter(1, 0);
    }
}

int num_less(double a, double b)
{
    if (num_backend != BK_F64) {
        a = num_round(a);
        b = num_round(b);
    }
    if (backend_is_posit(num_backend)) {
        if (isnan(a)) return !isnan(b);   /* NaR is below every real */
        if (isnan(b)) return 0;
    }
    return a < b;
}

int num_equal(double a, double b)
{
    if (num_backend != BK_F64) {
        a = num_round(a);
        b = num_round(b);
    }
    if (backend_is_posit(num_backend) && isnan(a) && isnan(b)) return 1;
    return a == b;
}

/* ------------------------------------------------------------ literals */

/* The double nearest the decimal text, and which side of it the exact
 * decimal value lies (-1 below, 0 exact, +1 above): enough to round the
 * exact decimal once to any narrower format. glibc's strtod honours the
 * rounding mode. */
static double decimal_with_dir(const char *text, int *dir)
{
    int mode = fegetround();
    double near = strtod(text, NULL);
    fesetround(FE_DOWNWARD);
    double down = strtod(text, NULL);
    fesetround(FE_UPWARD);
    double up = strtod(text, NULL);
    fesetround(mode);
    *dir = down == up ? 0 : near == down ? 1 : -1;
    return near;
}

double num_literal(const char *text)
{
    int dir;
    switch (num_backend) {
    case BK_F64:  return strtod(text, NULL);
    case BK_F32:  return ieee_from_decimal(text, IEEE_F32);
    case BK_F16:  return ieee_from_decimal(text, IEEE_F16);
    case BK_BF16: return ieee_from_decimal(text, IEEE_BF16);
    default: break;
    }
    double d = decimal_with_dir(text, &dir);
    /* beyond double's range a literal is still a real number: saturate */
    if (isinf(d)) d = DBL_MAX, dir = 1;
    else if (d == 0 && dir != 0) d = DBL_TRUE_MIN, dir = -1;
    switch (num_backend) {
    case BK_P8:  return p8_to_double(p8_from_double_dir(d, dir));
    case BK_P16: return p16_to_double(p16_from_double_dir(d, dir));
    default:     return p32_to_double(p32_from_double_dir(d, dir));
    }
}

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
    if (!backend_is_posit(num_backend) || x == 0 || isnan(x)) return 0;
    int n = num_backend == BK_P8 ? 8 : num_backend == BK_P16 ? 16 : 32;
    double maxpos = ldexp(1, 4 * n - 8), minpos = ldexp(1, -4 * n + 8);
    return fabs(x) == maxpos || fabs(x) == minpos;
}

/* Lay the digits out as Python's repr does: positional for 1e-4 <= |x| <
 * 1e16, exponent form otherwise; integral values drop the ".0". */
void num_format(double x, char *out, int size)
{
    x = num_round(x);     /* a value stored in another format prints as it is used */
    if (isnan(x)) { snprintf(out, size, "%s", backend_is_posit(num_backend) ? "NaR" : "nan"); return; }
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
    switch (num_backend) {
    case BK_F64:  return snprintf(buf, size, "0x%016llx", (unsigned long long)ieee_bits_f64(x));
    case BK_F32:  return snprintf(buf, size, "0x%08x", (unsigned)ieee_bits_f32(x));
    case BK_F16:  return snprintf(buf, size, "0x%04x", (unsigned)ieee_bits_f16(x));
    case BK_BF16: return snprintf(buf, size, "0x%04x", (unsigned)ieee_bits_bf16(x));
    case BK_P8:   return snprintf(buf, size, "0x%02x", (unsigned)p8_from_double(x));
    case BK_P16:  return snprintf(buf, size, "0x%04x", (unsigned)p16_from_double(x));
    default:      return snprintf(buf, size, "0x%08x", (unsigned)p32_from_double(x));
    }
}

static int backend_width(void)
{
    static const int widths[BK_COUNT] = { 64, 32, 16, 16, 8, 16, 32 };
    return widths[num_backend];
}

int num_frombits(const char *s, double *out)
{
    if (s[0] != '0' || (s[1] != 'x' && s[1] != 'X')) return 0;
    int digits = (int)strlen(s + 2);
    if (digits == 0 || digits > backend_width() / 4) return 0;
    for (const char *p = s + 2; *p; p++)
        if (!isxdigit((unsigned char)*p)) return 0;   /* strtoull would take signs and spaces */
    char *end;
    unsigned long long b = strtoull(s + 2, &end, 16);
    if (*end) return 0;
    switch (num_backend) {
    case BK_F64:  *out = ieee_from_bits_f64(b); break;
    case BK_F32:  *out = ieee_from_bits_f32((uint32_t)b); break;
    case BK_F16:  *out = ieee_from_bits_f16((uint32_t)b); break;
    case BK_BF16: *out = ieee_from_bits_bf16((uint32_t)b); break;
    case BK_P8:   *out = p8_to_double((uint32_t)b); break;
    case BK_P16:  *out = p16_to_double((uint32_t)b); break;
    default:      *out = p32_to_double((uint32_t)b); break;
    }
    return 1;
}

/* ---------------------------------------------------------- accumulator */

void acc_clear(NumAcc *q)
{
    memset(q, 0, sizeof *q);
    q->backend = num_backend;
}

void acc_fma(NumAcc *q, double a, double b)
{
    switch (q->backend) {
    case BK_P8:  q8_fma((quire8_t *)q->w, p8_from_double(a), p8_from_double(b)); break;
    case BK_P16: q16_fma((quire16_t *)q->w, p16_from_double(a), p16_from_double(b)); break;
    case BK_P32: q32_fma((quire32_t *)q->w, p32_from_double(a), p32_from_double(b)); break;
    default:     q->fsum = num_apply(OP_ADD, q->fsum, num_apply(OP_MUL, a, b)); break;
    }
}

void acc_add(NumAcc *q, double a)
{
    switch (q->backend) {
    case BK_P8:  q8_add((quire8_t *)q->w, p8_from_double(a)); break;
    case BK_P16: q16_add((quire16_t *)q->w, p16_from_double(a)); break;
    case BK_P32: q32_add((quire32_t *)q->w, p32_from_double(a)); break;
    default:     q->fsum = num_apply(OP_ADD, q->fsum, a); break;
    }
}

double acc_result(const NumAcc *q)
{
    switch (q->backend) {
    case BK_P8:  return p8_to_double(q8_to_posit((const quire8_t *)q->w));
    case BK_P16: return p16_to_double(q16_to_posit((const quire16_t *)q->w));
    case BK_P32: return p32_to_double(q32_to_posit((const quire32_t *)q->w));
    default:     return q->fsum;
    }
}
