/* fwd.c: forward mode. jvp(f, x, v) runs f on dual numbers x + v·ε_tag,
 * where every jvp call gets a tag of its own (the arithmetic of duals is
 * in dual.c). Tangents travel with the values, so memory stays constant however long a
 * loop runs. jvp keeps the session's recording rule (SPEC "Derivatives"):
 * what it computes from recorded values (x, v or captured variables) is
 * recorded, so d(jvp(f, w, 1), w) is a second derivative; on unrecorded
 * numbers nothing reaches the tape. */
#include <stdlib.h>
#include "fwd.h"
#include "dual.h"
#include "arith.h"
#include "eval.h"
#include "error.h"
#include "rng.h"

static uint32_t next_tag;
extern rng_t wg_rng;

static Value seed_dual(uint32_t tag, Value x, Value v)
{
    if (IS_NUMBER(x) && IS_NUMBER(v)) {
        v_retain(x);
        v_retain(v);
        return dual_new(tag, x, v);
    }
    if (is_seq(x) && is_seq(v)) {
        int n = seq_len(x);
        if (seq_len(v) != n) wg_error("jvp: x has %d elements but v has %d", n, seq_len(v));
        Value r = arr_new(n);
        for (int i = 0; i < n; i++) AS_ARR(r)->v[i] = seed_dual(tag, *seq_at(x, i), *seq_at(v, i));
        return r;
    }
    wg_error("jvp: x and v must both be numbers or both arrays, got %s and %s", type_name(x), type_name(v));
}

static Value tangent_of(Value r, uint32_t tag)
{
    if (r.t == V_DUAL) {
        Dual *d = AS_DUAL(r);
        if (d->tag == tag) {
            v_retain(d->t);
            return d->t;
        }
        /* A higher tag belongs to a jvp that has returned: its perturbation
         * escaped in a stored value and is dead; only the primal counts. */
        if (d->tag > tag) return tangent_of(d->p, tag);
        return num_val(0);
    }
    if (r.t == V_NUM) return num_val(0);
    if (is_seq(r)) {
        int n = seq_len(r);
        Value out = arr_new(n);
        for (int i = 0; i < n; i++) AS_ARR(out)->v[i] = tangent_of(*seq_at(r, i), tag);
        return out;
    }
    wg_error("jvp: the function must return a number or an array, got %s", type_name(r));
}

Value fwd_jvp(Value f, Value x, Value v)
{
    if (f.t != V_FN && f.t != V_BUILTIN) wg_error("jvp: expects a function, got %s", type_name(f));
    uint32_t tag = ++next_tag;
    Value xd = seed_dual(tag, x, v);
    Value r = call_value(f, 1, &xd);
    Value t = tangent_of(r, tag);
    v_release(r);
    v_release(xd);
    return t;
}

Value fwd_jvp_builtin(int argc, Value *argv)
{
    (void)argc;
    return fwd_jvp(argv[0], argv[1], argv[2]);
}

/* Baydin et al. (2022): (grad f(x) . v) v for v ~ N(0, I), one forward pass. */
Value fwd_fwdgrad(int argc, Value *argv)
{
    (void)argc;
    Value x = argv[1], v;
    if (IS_NUMBER(x)) v = num_val(num_round(rng_normal(&wg_rng)));
    else if (is_seq(x)) {
        int n = seq_len(x);
        v = arr_new(n);
        for (int i = 0; i < n; i++) AS_ARR(v)->v[i] = num_val(num_round(rng_normal(&wg_rng)));
    } else wg_error("fwdgrad: x must be a number or an array, got %s", type_name(x));
    Value s = fwd_jvp(argv[0], x, v);
    if (!IS_NUMBER(s)) {
        v_release(s);
        v_release(v);
        wg_error("fwdgrad: the function must return a number");
    }
    Value r = v_arith(OP_MUL, s, v);
    v_release(s);
    v_release(v);
    return r;
}
