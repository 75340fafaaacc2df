/* ieee.h - IEEE 754 narrow formats carried in a C double.
 *
 * In the float32, float16 and bfloat16 backends every number is a double that
 * holds exactly a value of the format.  + - * / and sqrt are computed in
 * double and the result is rounded to the format with ieee_round_*.  That is
 * double rounding, and it is innocuous: when the wide precision q and the
 * narrow precision p satisfy q >= 2p + 2, rounding the correctly rounded
 * q-bit result of + - * / sqrt to p bits gives the correctly rounded p-bit
 * result (Figueroa, "When is double rounding innocuous?", SIGNUM 1995).
 * Here q = 53 and p = 24, 11, 8, so 53 >= 50, 24, 18.  Double's exponent range
 * also covers every exact intermediate (the extremes are products and
 * quotients of f32 values, 2^-298 .. 2^277), so the wide result never
 * underflows or overflows where the narrow one would not.  This does NOT hold
 * for fma or for chains of operations: round after every single operation.
 *
 * All rounding here is round-to-nearest, ties-to-even, overflow to infinity;
 * done in integer arithmetic on the double's bits, so it needs neither
 * _Float16 nor the current floating-point rounding mode.
 */
#ifndef WENGERT_IEEE_H
#define WENGERT_IEEE_H

#include <stdint.h>

typedef enum { IEEE_F64, IEEE_F32, IEEE_F16, IEEE_BF16 } ieee_fmt;

/* Round a double to the format.  NaN stays NaN (quieted, payload truncated to
 * what the format can hold, sign kept), infinities and signed zeros stay. */
double ieee_round_f32(double d);  /* binary32: p = 24, emin -126, max 0x1.fffffep127 */
double ieee_round_f16(double d);  /* binary16: p = 11, emin -14, subnormals, max 65504 */
double ieee_round_bf16(double d); /* bfloat16: p = 8, float32's exponent range */

/* Round the real number d + dir * epsilon: dir = -1, 0, +1 says the true value
 * is infinitesimally below d, exactly d, or infinitesimally above d.  Only
 * matters when d is exactly halfway between two values of the format. */
double ieee_round_dir_f32(double d, int dir);
double ieee_round_dir_f16(double d, int dir);
double ieee_round_dir_bf16(double d, int dir);

/* Bit patterns.  The argument should already be in the format; if it is not,
 * it is rounded first.  NaN payloads move to and from the top fraction bits
 * unchanged (a signalling NaN stays signalling), so for every pattern b,
 * ieee_bits_X(ieee_from_bits_X(b)) == b. */
uint32_t ieee_bits_f32(double d);
uint16_t ieee_bits_f16(double d);
uint16_t ieee_bits_bf16(double d);
uint64_t ieee_bits_f64(double d);
double   ieee_from_bits_f32(uint32_t b);
double   ieee_from_bits_f16(uint16_t b);
double   ieee_from_bits_bf16(uint16_t b);
double   ieee_from_bits_f64(uint64_t b);

/* Round a decimal (or anything strtod accepts: hex floats, inf, nan) to the
 * format once, from its exact value.  A string strtod does not accept gives
 * 0, as strtod does; callers pass lexer-validated literals. */
double ieee_from_decimal(const char *s, ieee_fmt fmt);

/* Dispatch by format; for IEEE_F64 the value is returned unchanged. */
double ieee_round(double d, ieee_fmt fmt);

#endif
