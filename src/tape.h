/* tape.h: the session tape, a flat append-only record of every recorded
 * number operation, kept for the life of the session (SPEC "Derivatives").
 * Entries are stored as parallel arrays (op byte, two operand indices, the
 * value): 17 bytes an entry. An entry's value is the value the reverse rules
 * need later, and it never changes: a variable that is overwritten gets a new
 * entry, so reads of old values are never confused with new ones (this is
 * the single-assignment form the seeds describe, built as the program runs).
 * Entry 0 is reserved: id 0 means "a constant, not on the tape". */
#ifndef WG_TAPE_H
#define WG_TAPE_H
#include <stddef.h>
#include <stdint.h>
#include "num.h"

#define TAPE_LABELED 0x80   /* op byte flag: the entry is a variable version */
#define TAPE_OPMASK  0x7f

typedef struct { uint32_t a, b; } TapeArgs;

/* One d(y, ...) call, so its result entries (OP_DERIV) can be expanded into
 * recorded operations when something differentiates them again. Cut
 * entries are held fixed by the sweep (their adjoints go no further): the
 * tangents of a place inside jvp, so that d(u, p) is the partial with
 * respect to p and not also through p's own tangent. */
typedef struct {
    uint32_t y;
    uint32_t wrt_off, nwrt;     /* wrt entry ids in the pool */
    uint32_t cut_off, ncut;     /* cut entry ids in the pool, highest first */
    uint32_t exp_lo;            /* first entry of the expansion, 0 = not yet */
    uint32_t exp_off;           /* expanded ids in the pool */
} DerivRec;

typedef struct {
    uint8_t  *op;
    TapeArgs *arg;
    double   *val;
    uint32_t  n, cap;
    uint32_t *pool;             /* operand lists of n-ary entries */
    size_t    npool, cappool;
    DerivRec *derivs;
    uint32_t  nderivs, capderivs;
    size_t    limit;            /* bytes */
    uint64_t  sweeps;           /* adjoint sweeps run */
    uint64_t  expansions;       /* derivative entries expanded for higher order */
    uint32_t  epoch;            /* bumped by clear: cached constant ids die */
    int       recording;        /* 0 inside nograd and forward-only jvp */
} Tape;

extern Tape tape;

void     tape_init(void);
void     tape_clear(void);
void     tape_grow(void);
size_t   tape_bytes(void);
void     tape_set_limit(size_t bytes);
uint32_t tape_pool_push(const uint32_t *ids, uint32_t n);
uint32_t tape_deriv_rec(uint32_t y, const uint32_t *wrt, uint32_t nwrt,
                        const uint32_t *cuts, uint32_t ncut);

static inline uint32_t tape_push(int op, uint32_t a, uint32_t b, double v)
{
    if (__builtin_expect(tape.n == tape.cap, 0)) tape_grow();
    uint32_t i = tape.n++;
    tape.op[i] = (uint8_t)op;
    tape.arg[i].a = a;
    tape.arg[i].b = b;
    tape.val[i] = v;
    return i;
}

static inline int tape_opcode(uint32_t i) { return tape.op[i] & TAPE_OPMASK; }

#endif
