/* posit.h - posit arithmetic per the Posit Standard 2022 (es = 2), n = 8, 16, 32.
 *
 * A posit is held in the low n bits of a uint32_t.  Every operation rounds
 * once, to nearest with ties to even on the bit pattern; nonzero results never
 * round to zero or past maxpos; anything undefined gives NaR.  The quires are
 * 16n-bit two's-complement fixed-point accumulators that are exact until the
 * (astronomical) sum limit, past which they become NaR.  See docs/posit.md.
 */
#ifndef WENGERT_POSIT_H
#define WENGERT_POSIT_H

#include <stdint.h>

#define P32_NAR 0x80000000u
#define P16_NAR 0x8000u
#define P8_NAR  0x80u

#define P32_ONE 0x40000000u
#define P16_ONE 0x4000u
#define P8_ONE  0x40u

#define P32_MAXPOS 0x7fffffffu
#define P16_MAXPOS 0x7fffu
#define P8_MAXPOS  0x7fu
#define P32_MINPOS 0x1u
#define P16_MINPOS 0x1u
#define P8_MINPOS  0x1u

typedef struct { uint64_t w[8]; } quire32_t;   /* 512 bits = 16n; w[0] least significant */
typedef struct { uint64_t w[4]; } quire16_t;   /* 256 bits */
typedef struct { uint64_t w[2]; } quire8_t;    /* 128 bits */

#define POSIT_DECLARE(P)                                                   \
    uint32_t P##_add(uint32_t a, uint32_t b);                              \
    uint32_t P##_sub(uint32_t a, uint32_t b);                              \
    uint32_t P##_mul(uint32_t a, uint32_t b);                              \
    uint32_t P##_div(uint32_t a, uint32_t b);                              \
    uint32_t P##_sqrt(uint32_t a);                                         \
    uint32_t P##_neg(uint32_t a);                                          \
    uint32_t P##_abs(uint32_t a);                                          \
    int      P##_lt(uint32_t a, uint32_t b);                               \
    int      P##_le(uint32_t a, uint32_t b);                               \
    int      P##_is_nar(uint32_t a);                                       \
    double   P##_to_double(uint32_t a);                                    \
    uint32_t P##_from_double(double d);                                    \
    uint32_t P##_from_double_dir(double d, int dir);

POSIT_DECLARE(posit_p32)
POSIT_DECLARE(posit_p16)
POSIT_DECLARE(posit_p8)
#undef POSIT_DECLARE

/* Standard order: NaR equals itself and lies below every real, which is the
 * order of the patterns read as signed n-bit integers.  p_lt covers it; ==
 * on the bits is equality. */

#define QUIRE_DECLARE(Q, T)                                                \
    void     Q##_clear(T *q);                                              \
    void     Q##_fma(T *q, uint32_t a, uint32_t b);  /* q += a*b exactly */ \
    void     Q##_fms(T *q, uint32_t a, uint32_t b);  /* q -= a*b exactly */ \
    void     Q##_add(T *q, uint32_t a);              /* q += a exactly */   \
    void     Q##_sub(T *q, uint32_t a);              /* q -= a exactly */   \
    uint32_t Q##_to_posit(const T *q);               /* one rounding */     \
    int      Q##_is_nar(const T *q);

QUIRE_DECLARE(posit_q32, quire32_t)
QUIRE_DECLARE(posit_q16, quire16_t)
QUIRE_DECLARE(posit_q8, quire8_t)
#undef QUIRE_DECLARE

/* Generic forms over the width n (8, 16 or 32) for code that is not in a hot
 * loop.  Any other n is treated as 32. */
uint32_t posit_nar(int n);
uint32_t posit_add(uint32_t a, uint32_t b, int n);
uint32_t posit_sub(uint32_t a, uint32_t b, int n);
uint32_t posit_mul(uint32_t a, uint32_t b, int n);
uint32_t posit_div(uint32_t a, uint32_t b, int n);
uint32_t posit_sqrt(uint32_t a, int n);
uint32_t posit_neg(uint32_t a, int n);
int      posit_lt(uint32_t a, uint32_t b, int n);
double   posit_bits_to_double(uint32_t a, int n);
uint32_t posit_from_double(double d, int n);
uint32_t posit_from_double_dir(double d, int dir, int n);

#endif
