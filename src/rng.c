/* rng.c - Philox4x32-10, written from the definition in Salmon et al. (SC 2011). */
#include "rng.h"
#include "state.h"

#include <math.h>

/* Multipliers and Weyl key increments of the paper (the W are the golden ratio
 * and sqrt(3) - 1 in 0.32 fixed point). */
#define PHILOX_M0 UINT32_C(0xD2511F53)
#define PHILOX_M1 UINT32_C(0xCD9E8D57)
#define PHILOX_W0 UINT32_C(0x9E3779B9)
#define PHILOX_W1 UINT32_C(0xBB67AE85)
#define PHILOX_ROUNDS 10

/* The position counts words; a block holds 4, so block indices live modulo
 * 2^62 and position == 4 * counter - nbuf holds exactly, even on wrap-around. */
#define BLOCK_MASK ((UINT64_C(1) << 62) - 1)

static const double TWO_PI = 6.283185307179586476925286766559;

static void philox_round(uint32_t x[4], uint32_t k0, uint32_t k1)
{
    uint64_t p0 = (uint64_t)PHILOX_M0 * x[0];
    uint64_t p1 = (uint64_t)PHILOX_M1 * x[2];
    uint32_t y0 = (uint32_t)(p1 >> 32) ^ x[1] ^ k0;
    uint32_t y1 = (uint32_t)p1;
    uint32_t y2 = (uint32_t)(p0 >> 32) ^ x[3] ^ k1;
    uint32_t y3 = (uint32_t)p0;
    x[0] = y0;
    x[1] = y1;
    x[2] = y2;
    x[3] = y3;
}

void rng_philox4x32_10(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4])
{
    uint32_t x[4] = { ctr[0], ctr[1], ctr[2], ctr[3] };
    uint32_t k0 = key[0], k1 = key[1];
    for (int i = 0; i < PHILOX_ROUNDS; i++) {
        philox_round(x, k0, k1);
        k0 += PHILOX_W0; /* unsigned: the key schedule is defined modulo 2^32 */
        k1 += PHILOX_W1;
    }
    for (int i = 0; i < 4; i++)
        out[i] = x[i];
}

static void compute_block(const rng_t *r, uint64_t block, uint32_t out[4])
{
    uint32_t ctr[4] = { (uint32_t)block, (uint32_t)(block >> 32), 0, 0 };
    uint32_t key[2] = { (uint32_t)r->key, (uint32_t)(r->key >> 32) };
    rng_philox4x32_10(ctr, key, out);
}

static void refill(rng_t *r)
{
    compute_block(r, r->counter, r->buf);
    r->counter = (r->counter + 1) & BLOCK_MASK;
    r->nbuf = 4;
}

void rng_seed(rng_t *r, uint64_t seed)
{
    r->key = seed;
    r->counter = 0;
    r->nbuf = 0;
    for (int i = 0; i < 4; i++)
        r->buf[i] = 0;
}

uint32_t rng_next_u32(rng_t *r)
{
    if (r->nbuf == 0)
        refill(r);
    return r->buf[4 - r->nbuf--];
}

double rng_uniform(rng_t *r)
{
    uint64_t a = rng_next_u32(r);
    uint64_t b = rng_next_u32(r);
    /* 53 bits fill a double's significand exactly, so every value k * 2^-53
     * is produced with equal probability and 1.0 never is. */
    return (double)((a << 21) | (b >> 11)) * 0x1p-53;
}

double rng_normal(rng_t *r)
{
    /* 1 - u is exact (every k * 2^-53 in (0,1] is a double) and never 0, so the
     * log is finite and the largest |result| is sqrt(106 log 2) ~ 8.57. */
    double u1 = 1.0 - rng_uniform(r);
    double u2 = rng_uniform(r);
    return sqrt(-2.0 * log(u1)) * cos(TWO_PI * u2);
}

uint64_t rng_position(const rng_t *r)
{
    return (r->counter << 2) - (uint64_t)r->nbuf;
}

void rng_set_position(rng_t *r, uint64_t pos)
{
    r->counter = pos >> 2;
    r->nbuf = 0;
    unsigned skip = (unsigned)(pos & 3);
    if (skip != 0) {
        refill(r);
        r->nbuf = 4 - (int)skip;
    }
}
