/* arith.h: arithmetic on values. Numbers are computed in the active backend
 * and recorded on the tape when an operand is recorded (and recording is
 * on); arrays and views work elementwise; dual numbers (forward mode) carry
 * tangents. Every caller, the evaluator, the builtins, and the recorded
 * reverse sweep, goes through arith_apply, so all of them record alike. */
#ifndef WG_ARITH_H
#define WG_ARITH_H
#include "value.h"
#include "tape.h"
#include "dual.h"

/* op is an OpCode; unary ops ignore b. Arguments are borrowed; the result
 * is owned by the caller. */
Value arith_apply(int op, Value a, Value b);
/* arith_apply of a binary op for a caller that releases a and b right
 * after, reading neither (the evaluator's a + b): an array operand that
 * only that reference holds, of plain numbers, may take the result in
 * place (arith.c, temporary_to_reuse). */
Value arith_apply_last(int op, Value a, Value b);
/* One step of an arithmetic tree in postfix order: a leaf (index: its
 * place among the leaves), or an operation (OP_ADD, OP_SUB, OP_MUL,
 * OP_DIV; OP_NEG of one value) on the values under it. */
typedef struct { uint8_t leaf, op; int8_t index; } ArithFuseItem;
enum { ARITH_FUSE_ITEMS = 24, ARITH_FUSE_LEAVES = 12 };
/* The tree prog (np items) over vals (nl leaves: numbers, arrays, views;
 * borrowed) element by element in one pass, when its arrays are of one
 * length, plain numbers that record nothing, and none is a matrix: each
 * element the value the tree's operations one at a time give it. 1 and
 * *out (owned) if it did; 0 (nothing made) for the general path.
 * reuse_first: vals[0] is a temporary the caller drops after (it may
 * take the result, arith_apply_last's way). */
int arith_fused(const ArithFuseItem *prog, int np, Value *vals, int nl, int reuse_first, Value *out);
#endif

/* Needs the session state (state.h includes this file again). */
#if defined(WG_STATE_DONE) && !defined(WG_ARITH_H_STATE)
#define WG_ARITH_H_STATE
static inline Value arith_num_op(int op, Value a, Value b);   /* scalars (numbers or duals) */
uint32_t arith_record(int op, Value a, Value b, double r);
/* arith_record of x op y in float64 (r), the operands' entries ia, ib */
uint32_t arith_record_add(uint32_t ia, uint32_t ib, double x, double y, double r);
uint32_t arith_record_sub(uint32_t ia, uint32_t ib, double x, double y, double r);
uint32_t arith_record_mul(uint32_t ia, uint32_t ib, double x, double y, double r);
uint32_t arith_record_div(uint32_t ia, uint32_t ib, double x, double y, double r);
uint32_t arith_const_id(double c);
/* Ops whose partials are constant (OPF_LINEAR: add, sub, neg, copy ...),
 * a bit each: their reverse rules read no operand values, so a constant
 * operand needs no entry. A constant, so that the test folds where the op
 * is known. */
static const uint64_t ARITH_LINEAR_OPS = 0
#define OP(e, name, kind, flags, f, da, db) | ((flags) & OPF_LINEAR ? 1ull << OP_##e : 0)
#include "ops.def"
#undef OP
    ;
/* arith_record's work for a binary op known where it is called (the
 * arith_record_* functions, the evaluator's recorded x op y): its
 * operands' entries and values apart (no Values to take apart, no arity
 * to look up, the constants and the kink test decided by the op). */
static inline __attribute__((always_inline)) uint32_t arith_record_binary(int op, uint32_t ia, uint32_t ib, double x,
                                                                         double y, double r)
{
    if (!((ARITH_LINEAR_OPS >> op) & 1)) {
        if (!ia) ia = arith_const_id(x);
        if (!ib) ib = arith_const_id(y);
    }
    uint32_t id = rec_op(op, ia, ib, r);
    if ((KINK_OPS >> op) & 1) kink_note_op(op, x, y, id);
    return id;
}
/* op on the elements of a and b in storage order, the shapes of matrices
 * unlooked at (arith_apply looks: matrix.c); the result is an array. */
Value arith_elementwise_flat(int op, Value a, Value b);
const char *arith_op_symbol(int op);     /* "+", "*", ..., or the op's name */

/* Reductions of an array or view of numbers: sum and dot record one n-ary
 * entry (the quire in posit backends); fold chains op left to right. */
Value arith_sum(Value a);
/* sum(a) over an array of plain numbers in float64, in one pass over the
 * elements (the sum, whether any is recorded, whether their entries are
 * consecutive); 0 if a is anything else (a view, a dual, a string, another
 * backend): then arith_sum has it, after the caller's checks. */
int   arith_sum_plain(Value a, Value *out);
Value arith_dot(Value a, Value b);
Value arith_fold(int op, Value a, const char *fname);

/* Fast path for two plain numbers. */
static inline Value num_op(int op, Value a, Value b)
{
    double r = num_apply(op, a.u.n, b.u.n);
    if (__builtin_expect((a.id | b.id) != 0, 0) && G->tape.recording)
        return num_rec(r, arith_record(op, a, b, r));
    return num_val(r);
}

/* Scalars: plain numbers here, duals in dual.c. Inline: the rules in values
 * (the recorded sweep) are chains of these. */
static inline Value arith_num_op(int op, Value a, Value b)
{
    if (a.t == V_NUM && (num_op_arity[op] < 2 || b.t == V_NUM)) return num_op(op, a, b);
    return dual_op(op, a, b);
}

/* An adjoint times a partial (sweep.c), or a partial times a tangent
 * (dual.c, fwd.c): mul, except where an exact 0 meets inf or nan, there
 * mul0 (ops.def), which gives 0 (strong zero) and has mul's derivatives.
 * So a tape shows mul0 only where the two differ. Out of line (arith.c):
 * the sweeps' hot loops keep their inlining. */
Value arith_mul_strong(Value a, Value b);


#endif
