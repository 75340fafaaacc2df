/* rng.h - the session's random-number generator: Philox4x32-10.
 *
 * Philox4x32-10 is the counter-based generator of Salmon, Moraes, Dror and
 * Shaw, "Parallel random numbers: as easy as 1, 2, 3" (SC 2011).  A block of
 * four 32-bit words is a pure function of a 64-bit key and a 128-bit counter,
 * so a stream is fully described by (key, position) and the same seed gives
 * the same draws on every machine.
 *
 * Stream layout (the contract other modules and saved tapes rely on):
 *   key     = the 64-bit seed; key word 0 = low 32 bits, word 1 = high 32 bits
 *   block b = philox(counter = {low32(b), high32(b), 0, 0}, key)
 *   the stream is block 0 words 0..3, block 1 words 0..3, ...
 *   position = number of 32-bit words consumed since rng_seed.
 * Consequently seed 0 starts with the published known-answer vector for the
 * all-zero counter and key: 6627e8d5 e169c58d bc57ac4c 9b00dbd8.
 *
 * Cost in stream words: rng_next_u32 1, rng_uniform 2, rng_normal 4.
 * The position wraps modulo 2^64 words (period of the stream).
 */
#ifndef WENGERT_RNG_H
#define WENGERT_RNG_H

#include <stdint.h>

typedef struct {
    uint64_t key;     /* the seed */
    uint64_t counter; /* index of the next block to compute */
    uint32_t buf[4];  /* the last computed block (index counter - 1) */
    int nbuf;         /* words of buf not yet handed out; they are the last nbuf */
} rng_t;

void     rng_seed(rng_t *r, uint64_t seed);
uint32_t rng_next_u32(rng_t *r);
/* In [0,1): 53 random bits from two words a, b: ((a << 21) | (b >> 11)) * 2^-53. */
double   rng_uniform(rng_t *r);
/* Standard normal by Box-Muller: u1 = 1 - rng_uniform (in (0,1], so log is
 * finite), u2 = rng_uniform, result sqrt(-2 log u1) * cos(2 pi u2).  The sine
 * partner is discarded so that a draw depends on the stream position only. */
double   rng_normal(rng_t *r);
uint64_t rng_position(const rng_t *r);
void     rng_set_position(rng_t *r, uint64_t pos);

/* The raw bijection: one Philox4x32-10 block.  Exported for known-answer tests
 * and for callers that want random access without an rng_t. */
void rng_philox4x32_10(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4]);

#endif
