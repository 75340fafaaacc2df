/* num.h: the numeric layer. Every arithmetic operation, math builtin,
 * reverse-sweep step and forward tangent goes through here, so the active
 * backend decides how each result is rounded. Numbers are doubles holding
 * exactly a value of the active format (see value.h); float64 is the fast
 * path, tested with one predictable branch per operation. */
#ifndef WG_NUM_H
#define WG_NUM_H
#include <stdint.h>

/* ---- the ops and their kinds, from ops.def */

/* The structural kinds (KIND rows): OPK_UNARY ... */
typedef enum {
#define KIND(k, arity, ids, side, cone, near) OPK_##k,
#include "ops.def"
#undef KIND
    OPK_COUNT
} OpKind;

/* A kind's columns as constants: OPK_ARITY_UNARY, OPK_IDS_POOL, ... */
enum {
#define KIND(k, arity, ids, side, cone, near) \
    OPK_ARITY_##k = arity, OPK_IDS_##k = ids, OPK_SIDE_##k = side, OPK_CONE_##k = cone, OPK_NEAR_##k = near,
#include "ops.def"
#undef KIND
};

/* The flags column (ops.def explains them). */
enum {
    OPF_LINEAR = 1, OPF_BILINEAR = 2,
    OPF_KINK_AT0 = 4, OPF_KINK_WHOLE = 8, OPF_KINK_JUMP = 16, OPF_TIE = 32,
    OPF_KINKS = OPF_KINK_AT0 | OPF_KINK_WHOLE | OPF_KINK_JUMP | OPF_TIE
};

typedef enum {
#define OP(e, name, kind, flags, f, da, db) OP_##e,
#include "ops.def"
#undef OP
    OP_COUNT
} OpCode;

/* The ops outside the kinds UNARY and BINARY (whose partials come from
 * the rule columns): every switch over ops that names these one by one and
 * leaves the rest to `default:` asserts their number, so a new one does
 * not compile until each such switch knows it. */
enum {
    OPS_STRUCTURAL = 0
#define OP(e, name, kind, flags, f, da, db) + (OPK_##kind != OPK_UNARY && OPK_##kind != OPK_BINARY)
#include "ops.def"
#undef OP
};
/* The same among the kinds with a cone column (the second-order sweep). */
enum {
    OPS_CONE_STRUCTURAL = 0
#define OP(e, name, kind, flags, f, da, db) + (OPK_##kind != OPK_UNARY && OPK_##kind != OPK_BINARY && OPK_CONE_##kind)
#include "ops.def"
#undef OP
};
#define OPS_NAMED(count, n) _Static_assert((count) == (n) && OPK_COUNT == 9, \
    "an op outside UNARY and BINARY (or a kind) was added: name it in the switch below")

typedef enum { BK_F64, BK_F32, BK_F16, BK_BF16, BK_P8, BK_P16, BK_P32, BK_COUNT } Backend;

/* A posit format's integer core (posit.c), on bit patterns. */
typedef struct {
    uint32_t (*from_double)(double);
    uint32_t (*from_double_dir)(double, int);   /* dir: side of the exact value */
    double   (*to_double)(uint32_t);
    uint32_t (*arith[4])(uint32_t, uint32_t);   /* + - * /, correctly rounded */
    uint32_t (*sqrt)(uint32_t);
    void     (*quire_fma)(uint64_t *q, uint32_t a, uint32_t b);   /* q += a*b exactly */
    void     (*quire_add)(uint64_t *q, uint32_t a);
    uint32_t (*quire_result)(const uint64_t *q);                   /* one rounding */
    int      quire_bits;
} PositOps;

/* Everything that differs between number formats: one row a backend. */
typedef struct {
    const char *name;
    int width;                                /* bits of the pattern bits() shows */
    double   (*round)(double);                /* to the nearest value of the format */
    double   (*literal)(const char *text);    /* decimal text, rounded once */
    uint64_t (*to_bits)(double);
    double   (*from_bits)(uint64_t);
    double   below_one;                       /* IEEE formats: the largest value below 1 */
    const PositOps *posit;                    /* NULL for IEEE formats */
} Format;

extern const Format num_formats[BK_COUNT];
/* The backend running (G->num.backend) and the one :reset returns to (--backend). */
typedef struct { int backend, start_backend; } NumState;
extern const char *const num_op_names[OP_COUNT];
extern const int num_op_arity[OP_COUNT];        /* its kind's arity */
extern const uint8_t num_op_flags[OP_COUNT];    /* OPF_... */
extern const uint8_t num_op_ids[OP_COUNT];      /* its kind's columns */
extern const uint8_t num_op_side[OP_COUNT];
extern const uint8_t num_op_cone[OP_COUNT];
extern const uint8_t num_op_near[OP_COUNT];

int    num_backend_lookup(const char *name);      /* -1 if unknown */
int    num_backend_is_posit(int b);
double num_round(double x);                    /* into the active format */
double num_below_one(void);
double num_literal(const char *text);          /* decimal text, rounded once */
double num_apply_slow(int op, double a, double b);
double num_apply_f64(int op, double a, double b);   /* libm, no rounding */
/* out[j] = num_apply_f64(op, A[j * sa], B[j * sb]) for j < n (sa, sb: 0 or more) */
void   num_apply_f64_n(int op, const double *A, long sa, const double *B, long sb, double *out, uint32_t n);
void   num_format(double x, char *buf, int size);   /* shortest round trip */
int    num_bits(double x, char *buf, int size);      /* "0x3c00" */
int    num_frombits(const char *s, double *out);     /* 0 if malformed */
int    num_less(double a, double b);           /* backend order (posit NaR lowest) */
int    num_equal(double a, double b);

/* Apply a scalar op in the active backend. */
#endif

/* Needs the session state (state.h includes this file again). */
#if defined(WG_STATE_DONE) && !defined(WG_NUM_H_STATE)
#define WG_NUM_H_STATE
static inline __attribute__((always_inline)) double num_apply(int op, double a, double b)
{
    if (__builtin_expect(G->num.backend == BK_F64, 1)) {
        switch (op) {
        case OP_ADD: return a + b;
        case OP_SUB: return a - b;
        case OP_MUL: return a * b;
        case OP_DIV: return a / b;
        case OP_NEG: return -a;
        default: return num_apply_f64(op, a, b);
        }
    }
    return num_apply_slow(op, a, b);
}

/* Exact sums for the quire: the reverse sweep and sum/dot use these. */
typedef struct { uint64_t w[8]; int backend; double fsum; } NumAcc;
void   num_acc_clear(NumAcc *q);
void   num_acc_fma(NumAcc *q, double a, double b);    /* q += a*b */
void   num_acc_add(NumAcc *q, double a);
double num_acc_result(const NumAcc *q);

#endif
