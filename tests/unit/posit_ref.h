/* posit_ref.h - a slow, exact reference for posit<n,2> (n <= 32) on GMP rationals.
 *
 * It shares no code or method with src/posit.c: a posit is decoded by walking
 * its fields bit by bit into an exact rational, results are computed exactly
 * in mpq_t, and rounding follows the standard's definition literally: binary
 * search over the (monotone) posit patterns for the two neighbours, then a
 * comparison with the (n+1)-bit posit that lies between them on the bit
 * string.  Not thread-safe (it keeps scratch rationals).
 */
#ifndef POSIT_REF_H
#define POSIT_REF_H

#include <stdint.h>
#include <gmp.h>

void pref_init(void);
void pref_free(void);

/* Exact value of an n-bit posit (n <= 33); returns 0 for NaR, 1 otherwise. */
int pref_decode(mpq_t out, uint64_t bits, int n);

/* The n-bit posit for the real x (dir as in posit_p32_from_double_dir: the true
 * value is x, or infinitesimally above (+1) or below (-1) it). */
uint32_t pref_round(const mpq_t x, int n);
uint32_t pref_round_dir(const mpq_t x, int dir, int n);

uint32_t pref_add(uint32_t a, uint32_t b, int n);
uint32_t pref_sub(uint32_t a, uint32_t b, int n);
uint32_t pref_mul(uint32_t a, uint32_t b, int n);
uint32_t pref_div(uint32_t a, uint32_t b, int n);
uint32_t pref_sqrt(uint32_t a, int n);
uint32_t pref_from_double(double d, int n);
uint32_t pref_from_double_dir(double d, int dir, int n);

/* A quire-free exact dot product: sum a[i]*b[i] in mpq, rounded once. */
uint32_t pref_dot(const uint32_t *a, const uint32_t *b, int len, int n);

/* Round the quire integer (W words, two's complement, LSB weight
 * 2^-(8n-16)) given as raw words; NaR pattern gives NaR. */
uint32_t pref_quire_round(const uint64_t *w, int W, int n);

#endif
