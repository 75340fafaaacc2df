/* arith.c: scalar and elementwise arithmetic, and what it records. */
#include <stdio.h>
#include "arith.h"
#include "fwd.h"
#include "error.h"

uint32_t tape_id_of_const(double c) { return tape_push(OP_CONST, 0, 0, c); }

/* Whether the reverse rule of op reads operand values (so a constant
 * operand must be on the tape). add/sub/neg only pass adjoints through. */
static int needs_operand_values(int op)
{
    return !(op == OP_ADD || op == OP_SUB || op == OP_NEG || op == OP_COPY);
}

uint32_t arith_record(int op, Value a, Value b, double r)
{
    uint32_t ia = a.id, ib = 0;
    int arity = op_arity[op];
    if (arity == 2) ib = b.id;
    if (needs_operand_values(op)) {
        if (!ia) ia = tape_id_of_const(a.u.n);
        if (arity == 2 && !ib) ib = tape_id_of_const(b.u.n);
    }
    return tape_push(op, ia, ib, r);
}

static int is_number(Value v) { return v.t == V_NUM || v.t == V_DUAL; }

Value v_num_op(int op, Value a, Value b)
{
    if (a.t == V_NUM && (op_arity[op] < 2 || b.t == V_NUM)) return num_op(op, a, b);
    return fwd_op(op, a, b);
}

static const char *op_symbol(int op)
{
    switch (op) {
    case OP_ADD: return "+";
    case OP_SUB: return "-";
    case OP_MUL: return "*";
    case OP_DIV: return "/";
    case OP_POW: return "^";
    case OP_MOD: return "%";
    default: return op_names[op];
    }
}

static Value elementwise(int op, Value a, Value b)
{
    int unary = op_arity[op] < 2;
    int na = is_seq(a) ? seq_len(a) : -1, nb = (!unary && is_seq(b)) ? seq_len(b) : -1;
    if (na >= 0 && nb >= 0 && na != nb)
        wg_error("length mismatch in '%s': %d and %d elements", op_symbol(op), na, nb);
    int n = na >= 0 ? na : nb;
    char what[16];
    snprintf(what, sizeof what, unary ? "%s" : "'%s'", op_symbol(op));
    if (na >= 0) seq_check_numbers(a, what);
    if (nb >= 0) seq_check_numbers(b, what);
    Value r = arr_new(n);
    Storage *s = AS_ARR(r);
    /* A constant scalar meeting recorded elements goes on the tape once,
     * not once per element. */
    Value scalar = na < 0 ? a : b;
    int const_scalar = !unary && (na < 0 || nb < 0) && scalar.t == V_NUM && scalar.id == 0
                       && needs_operand_values(op);
    for (int i = 0; i < n; i++) {
        Value x = na >= 0 ? *seq_at(a, i) : a;
        Value y = unary ? b : nb >= 0 ? *seq_at(b, i) : b;
        Value *other = na >= 0 ? &x : &y;
        if (const_scalar && other->t == V_NUM && other->id && tape.recording) {
            if (!scalar.id) scalar.id = tape_id_of_const(scalar.u.n);
            if (na < 0) x = scalar;
            else y = scalar;
        }
        s->v[i] = v_num_op(op, x, y);
    }
    return r;
}

Value v_arith(int op, Value a, Value b)
{
    int unary = op_arity[op] < 2;
    if (is_number(a) && (unary || is_number(b))) return v_num_op(op, a, b);
    if ((is_seq(a) || is_number(a)) && (unary || is_seq(b) || is_number(b)))
        return elementwise(op, a, b);
    if (unary) wg_error("%s expects a number or an array, got %s", op_names[op], type_name(a));
    wg_error("cannot apply '%s' to %s and %s", op_symbol(op), type_name(a), type_name(b));
}
