/* test_rng.c - known answers, determinism, position replay and distribution
 * checks for the Philox4x32-10 generator.  Exit 0 iff every check passes. */
#include "../../src/rng.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checks.h"

/* Known-answer vectors (counter words, key words -> output words).
 * The first three are the philox4x32 10 lines of Random123's tests/kat_vectors
 * (github.com/DEShawResearch/random123, commit 9545ff64, lines 27-29); the
 * rest are from tests/old_kat_vectors of the same commit, chosen because they
 * set one counter word or one key word at a time, which pins down word order. */
typedef struct {
    uint32_t ctr[4], key[2], out[4];
} kat_t;

static const kat_t KATS[] = {
    { { 0x00000000, 0x00000000, 0x00000000, 0x00000000 }, { 0x00000000, 0x00000000 },
      { 0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8 } },
    { { 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff }, { 0xffffffff, 0xffffffff },
      { 0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd } },
    { { 0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344 }, { 0xa4093822, 0x299f31d0 },
      { 0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1 } },
    { { 0x00000001, 0x00000000, 0x00000000, 0x00000000 }, { 0x00000001, 0x00000000 },
      { 0xac08141b, 0xdfc5ccbe, 0x79c07a47, 0xa7f66093 } },
    { { 0x00000000, 0x00000001, 0x00000000, 0x00000000 }, { 0x00000001, 0x00000000 },
      { 0x833ff8dc, 0x225c963c, 0x232b88b3, 0x0b334b07 } },
    { { 0x00000000, 0x00000000, 0x00000001, 0x00000000 }, { 0x00000001, 0x00000000 },
      { 0x07071c12, 0x428264b6, 0x3909104b, 0x6da2bda2 } },
    { { 0x00000000, 0x00000000, 0x00000000, 0x00000001 }, { 0x00000001, 0x00000000 },
      { 0x127bee41, 0x1e047488, 0x48842b20, 0x0a393496 } },
    { { 0x00000001, 0x00000000, 0x00000000, 0x00000000 }, { 0x00000000, 0x00000001 },
      { 0xccf3076a, 0x6306f434, 0xbea71965, 0xd96fe48a } },
    { { 0x00000000, 0x00000000, 0x00000000, 0x00000001 }, { 0x00000000, 0x00000001 },
      { 0x96b27e8c, 0x28826d0f, 0x66d958ef, 0x081509dc } },
    { { 0x00000001, 0x00000000, 0x00000000, 0x00000000 }, { 0x00000000, 0x80000000 },
      { 0xe29b9f84, 0x2903d316, 0x42a1f56f, 0x1ad02eab } },
};

static void test_kat_block(void)
{
    for (size_t i = 0; i < sizeof KATS / sizeof KATS[0]; i++) {
        uint32_t out[4];
        char what[64];
        rng_philox4x32_10(KATS[i].ctr, KATS[i].key, out);
        snprintf(what, sizeof what, "philox4x32-10 known answer #%zu", i);
        check(memcmp(out, KATS[i].out, sizeof out) == 0, what);
    }
}

/* The stream reaches the same vectors through seed and position, which fixes
 * the documented mapping of seed -> key and word index -> counter. */
static void check_stream_kat(uint64_t seed, uint64_t pos, const uint32_t want[4], const char *what)
{
    rng_t r;
    rng_seed(&r, seed);
    rng_set_position(&r, pos);
    int ok = 1;
    for (int i = 0; i < 4; i++)
        ok &= rng_next_u32(&r) == want[i];
    check(ok, what);
}

static void test_kat_stream(void)
{
    check_stream_kat(0, 0, KATS[0].out, "seed 0 starts with the all-zero known answer");
    check_stream_kat(1, 4, KATS[3].out, "seed 1, block 1 = known answer ctr0=1 key0=1");
    check_stream_kat(1, UINT64_C(4) << 32, KATS[4].out, "seed 1, block 2^32 = known answer ctr1=1");
    check_stream_kat(UINT64_C(1) << 32, 4, KATS[7].out, "seed 2^32, block 1 = known answer key1=1");
    check_stream_kat(UINT64_C(1) << 63, 4, KATS[9].out, "seed 2^63, block 1 = known answer key1=2^31");

    rng_t r;
    rng_seed(&r, 0); /* a fresh generator needs no set_position */
    check(rng_next_u32(&r) == 0x6627e8d5u, "seed 0: first word without set_position");
}

static void test_determinism(void)
{
    rng_t a, b, c;
    rng_seed(&a, 12345);
    rng_seed(&b, 12345);
    rng_seed(&c, 12346);
    int same = 1, differ = 0;
    for (int i = 0; i < 100000; i++) {
        uint32_t x = rng_next_u32(&a);
        same &= x == rng_next_u32(&b);
        differ += x != rng_next_u32(&c);
    }
    check(same, "same seed, same words");
    check(differ > 99000, "neighbouring seeds give unrelated words");

    rng_seed(&a, 7);
    rng_seed(&b, 7);
    same = 1;
    for (int i = 0; i < 1000; i++) {
        same &= rng_uniform(&a) == rng_uniform(&b);
        same &= rng_normal(&a) == rng_normal(&b);
    }
    check(same, "same seed, same uniforms and normals");

    rng_seed(&a, 99);
    (void)rng_normal(&a);
    rng_seed(&a, 99); /* reseeding must forget everything, buffered words too */
    rng_seed(&b, 99);
    check(rng_next_u32(&a) == rng_next_u32(&b), "reseeding resets the stream");
}

static void test_position(void)
{
    enum { N = 4099 };
    static uint32_t ref[N];
    rng_t r;
    rng_seed(&r, 2024);
    int ok = 1;
    for (uint64_t i = 0; i < N; i++) {
        ok &= rng_position(&r) == i;
        ref[i] = rng_next_u32(&r);
    }
    check(ok, "position counts words");

    /* Every start position, aligned to a block or not, replays the stream. */
    ok = 1;
    for (uint64_t p = 0; p + 9 < N; p += 1 + p / 64) {
        rng_t s;
        rng_seed(&s, 2024);
        rng_set_position(&s, p);
        ok &= rng_position(&s) == p;
        for (uint64_t k = 0; k < 9; k++)
            ok &= rng_next_u32(&s) == ref[p + k];
    }
    check(ok, "set_position replays from any word");

    /* Save, draw a mixture, restore: the mixture repeats exactly. */
    rng_seed(&r, 5);
    (void)rng_next_u32(&r);
    uint64_t saved = rng_position(&r);
    double u[3], z[3];
    uint32_t w[3];
    for (int i = 0; i < 3; i++) {
        u[i] = rng_uniform(&r);
        z[i] = rng_normal(&r);
        w[i] = rng_next_u32(&r);
    }
    check(rng_position(&r) == saved + 3 * (2 + 4 + 1), "uniform costs 2 words, normal 4");
    rng_set_position(&r, saved);
    ok = 1;
    for (int i = 0; i < 3; i++) {
        ok &= rng_uniform(&r) == u[i];
        ok &= rng_normal(&r) == z[i];
        ok &= rng_next_u32(&r) == w[i];
    }
    check(ok, "restore after a mixture of draws");

    /* Going backwards then forwards is the same as never having moved. */
    rng_set_position(&r, 1000);
    uint32_t x = rng_next_u32(&r);
    rng_set_position(&r, 3);
    rng_set_position(&r, 1000);
    check(rng_next_u32(&r) == x, "seek back and forth");

    /* At the end of the 2^64-word period the position wraps consistently. */
    uint64_t last = UINT64_MAX - 1;
    rng_seed(&r, 1);
    rng_set_position(&r, last);
    check(rng_position(&r) == last, "position near 2^64 reads back");
    (void)rng_next_u32(&r);
    (void)rng_next_u32(&r);
    check(rng_position(&r) == 0, "position wraps to 0 after 2^64 words");
    rng_t s;
    rng_seed(&s, 1);
    check(rng_next_u32(&r) == rng_next_u32(&s), "after wrap-around the stream restarts");
}

static void test_uniform(void)
{
    rng_t r;
    rng_seed(&r, 42);

    /* The mapping from two words is part of the contract. */
    uint64_t p = rng_position(&r);
    uint64_t a = rng_next_u32(&r), b = rng_next_u32(&r);
    rng_set_position(&r, p);
    check(rng_uniform(&r) == (double)((a << 21) | (b >> 11)) * 0x1p-53, "uniform = 53 bits of two words");

    enum { N = 1000000 };
    int in_range = 1;
    double sum = 0, sumsq = 0, lo = 1, hi = 0;
    long below_half = 0;
    for (int i = 0; i < N; i++) {
        double u = rng_uniform(&r);
        in_range &= u >= 0.0 && u < 1.0;
        sum += u;
        sumsq += u * u;
        lo = u < lo ? u : lo;
        hi = u > hi ? u : hi;
        below_half += u < 0.5;
    }
    double mean = sum / N, var = sumsq / N - mean * mean;
    check(in_range, "uniform in [0,1)");
    /* Tolerances are about 7 standard errors: a correct generator fails them
     * with negligible probability, a wrong scaling fails them for sure. */
    check(fabs(mean - 0.5) < 7 * sqrt(1.0 / 12 / N), "uniform mean 1/2");
    check(fabs(var - 1.0 / 12) < 7 * sqrt(1.0 / 180 / N), "uniform variance 1/12");
    check(lo < 1e-5 && hi > 1 - 1e-5, "uniform covers the interval");
    check(labs(below_half - N / 2) < 7 * 500, "uniform: half the draws below 1/2");
}

static void test_normal(void)
{
    rng_t r;
    rng_seed(&r, 0);
    enum { N = 1000000 };
    int finite = 1;
    double s1 = 0, s2 = 0, s3 = 0, s4 = 0;
    long within1 = 0;
    for (int i = 0; i < N; i++) {
        double z = rng_normal(&r);
        finite &= isfinite(z) && fabs(z) < 8.6;
        s1 += z;
        s2 += z * z;
        s3 += z * z * z;
        s4 += z * z * z * z;
        within1 += fabs(z) < 1.0;
    }
    double mean = s1 / N, var = s2 / N - mean * mean;
    check(finite, "normal draws finite and bounded by sqrt(106 log 2)");
    /* Standard errors: mean 1/sqrt(N), variance sqrt(2/N), third moment
     * sqrt(15/N), fourth sqrt(96/N); 7 of each. */
    check(fabs(mean) < 7 / sqrt((double)N), "normal mean 0");
    check(fabs(var - 1) < 7 * sqrt(2.0 / N), "normal variance 1");
    check(fabs(s3 / N) < 7 * sqrt(15.0 / N), "normal third moment 0");
    check(fabs(s4 / N - 3) < 7 * sqrt(96.0 / N), "normal fourth moment 3");
    double p1 = 0.6826894921370859; /* P(|Z| < 1) */
    check(fabs((double)within1 / N - p1) < 7 * sqrt(p1 * (1 - p1) / N), "normal: 68.27% within one sigma");
}

int main(void)
{
    test_kat_block();
    test_kat_stream();
    test_determinism();
    test_position();
    test_uniform();
    test_normal();
    printf("test_rng: %d checks, %d failed\n", n_checks, n_failed);
    return n_failed != 0;
}
