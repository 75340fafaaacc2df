/* dualarr.c: whole-array operations on arrays of dual numbers (forward
 * mode's values, dual.c), below the evaluator beside arith.c, which calls
 * them: a dot of dual arrays and + or - of constants and duals, made as
 * whole array operations instead of one dual operation an element. Each
 * gives the duals dual.c's element-by-element route gives, to the bit;
 * what is recorded is recorded as whole dots and array operations (hvp's
 * forward over reverse: GradBench's kmeans, issue 27). */
#include <math.h>
#include <string.h>
#include "dualarr.h"
#include "arith.h"
#include "dual.h"
#include "fwd.h"
#include "tape.h"
#include "error.h"
#include "state.h"

/* --------------------------------------------------- dot of dual arrays */

/* An element of a dual dot: a number (no tangents: NULL d) or a dual of
 * the innermost jvp whose parts are finite numbers; td its tangents when
 * they are unboxed doubles (value.h; they record nothing), else NULL. */
typedef struct { double p; uint32_t id; const Dual *d; const double *td; } DotPart;

/* Tangent j of a dual part, its value and tape id (an unboxed one: 0). */
static inline double tan_val(const DotPart *o, int j) { return o->td ? o->td[j] : o->d->t[j].u.n; }
static inline uint32_t tan_id(const DotPart *o, int j) { return o->td ? 0 : o->d->t[j].id; }

/* The elements of an array or view: e[i * *stride]. */
static const Value *seq_elems(Value v, long *stride)
{
    if (v.t == V_ARR) {
        *stride = 1;
        return AS_ARR(v)->v;
    }
    const View *w = AS_VIEW(v);
    *stride = w->stride;
    return w->s->v + w->start;
}

/* v as a part (0: it cannot be one); *boxed set when its tangents are
 * Values (whose ids fwd_dot must look at). Inlined in fwd_dot's loop over
 * the elements (8000 a run of GradBench's kmeans). */
static inline __attribute__((always_inline)) int dot_part(Value v, uint32_t top, int *k, DotPart *o, int *boxed)
{
    if (v.t == V_NUM) {
        o->p = v.u.n;
        o->id = v.id;
        o->d = NULL;
        o->td = NULL;
        return isfinite(v.u.n);
    }
    if (v.t != V_DUAL) return 0;
    Dual *d = AS_DUAL(v);
    if (d->tag != top || d->p.t != V_NUM || (*k && d->k != *k)) return 0;
    *k = d->k;
    if (d->form & DUAL_UNBOXED) {      /* plain doubles (the common case): no Value each */
        const double *td = dual_td(d);
        for (int j = 0; j < d->k; j++)
            if (!isfinite(td[j])) return 0;
        o->td = td;
    } else {
        for (int j = 0; j < d->k; j++) {
            Value t = d->t[j];
            if (t.t != V_NUM || !isfinite(t.u.n)) return 0;
        }
        o->td = NULL;
        *boxed = 1;
    }
    o->p = d->p.u.n;
    o->id = d->p.id;
    o->d = d;
    return isfinite(o->p);
}

/* The tape ids of the dot's operands that are constants: each made once
 * and shared by every pair that names it (an element's primal in the
 * primal dot and in each tangent dot; a tangent equal to the last
 * constant tangent, as hvp's 1s and -1s are), instead of a const entry a
 * pair. */
typedef struct {
    uint32_t *cx, *cy;      /* n each: the const id of x[i].p, y[i].p, or 0 */
    double last;            /* the latest constant tangent made, and its id */
    uint32_t last_id;
} ConstIds;

static uint32_t const_once(double v, uint32_t *slot)
{
    if (!*slot) *slot = arith_const_id(v);
    return *slot;
}

/* A tape id for a part's primal: its own, or its (shared) constant's. */
static inline uint32_t primal_id(const DotPart *o, uint32_t *slot)
{
    return o->id ? o->id : const_once(o->p, slot);
}

/* A tape id for a tangent of value t and id: its own, or a constant's
 * (the same value to the bit as the latest constant tangent: the same
 * entry). */
static inline uint32_t tangent_id(double t, uint32_t id, ConstIds *c)
{
    if (id) return id;
    uint64_t a, b;
    memcpy(&a, &t, sizeof a);
    memcpy(&b, &c->last, sizeof b);
    if (!c->last_id || a != b) {
        c->last = t;
        c->last_id = arith_const_id(t);
    }
    return c->last_id;
}

/* Tangent j of the dot over the parts x[i], y[i]: the products' tangents
 * t_i = pb ta + pa tb folded by +, with dual.c's rules for what is a
 * term: a tangent that is a constant 0 adds none, a 0 partial does (a
 * signed zero: the first product's tangent may be -0), but where every
 * part is plain (dual.c's double path) it records no pair; an
 * accumulator or a t_i that is a constant 0 is skipped by the fold as
 * dual.c skips it, so the value is the route's to the bit. The terms go
 * to terms[0 .. *m), each 2 i (b's primal, a's tangent) or 2 i + 1 (a's
 * primal, b's tangent), in order (term_pairs makes their pairs). Returns
 * the value; *recd: it records. */
static double dot_tangent(const DotPart *x, const DotPart *y, const uint32_t *ids_all, int n, int j, int rec,
                          uint32_t *terms, int *m, int *recd)
{
    double acc = 0;
    int acc_zero = 1, acc_rec = 0, q = 0;
    for (int i = 0; i < n; i++) {
        int plain = !rec || !ids_all[i];
        double t = 0;
        int t_rec = 0;
        if (x[i].d) {
            double ta = tan_val(&x[i], j);
            uint32_t ta_id = tan_id(&x[i], j);
            if (!(ta_id == 0 && ta == 0)) {
                t = y[i].p * ta;
                if (!(plain && y[i].p == 0)) {     /* (a plain 0 term records nothing) */
                    t_rec |= rec && (y[i].id | ta_id);
                    terms[q++] = 2 * (uint32_t)i;
                }
            }
        }
        if (y[i].d) {
            double tb = tan_val(&y[i], j);
            uint32_t tb_id = tan_id(&y[i], j);
            if (!(tb_id == 0 && tb == 0)) {
                t = t + x[i].p * tb;
                if (!(plain && x[i].p == 0)) {
                    t_rec |= rec && (x[i].id | tb_id);
                    terms[q++] = 2 * (uint32_t)i + 1;
                }
            }
        }
        int t_zero = !t_rec && t == 0;
        if (i == 0) {
            acc = t;
        } else {
            double s = acc_zero ? 0 : acc;
            if (!t_zero) s = s + t;
            acc = s;
        }
        acc_rec |= t_rec;
        acc_zero = !acc_rec && acc == 0;
    }
    *m = q;
    *recd = acc_rec;
    return acc;
}

/* The pairs of tangent j's terms (dot_tangent's), constants' ids from c. */
static void term_pairs(const DotPart *x, const DotPart *y, const uint32_t *terms, int m, int j, ConstIds *c,
                       uint32_t *pairs)
{
    for (int q = 0; q < m; q++) {
        int i = (int)(terms[q] >> 1);
        if (terms[q] & 1) {
            pairs[2 * q] = primal_id(&x[i], &c->cx[i]);
            pairs[2 * q + 1] = tangent_id(tan_val(&y[i], j), tan_id(&y[i], j), c);
        } else {
            pairs[2 * q] = primal_id(&y[i], &c->cy[i]);
            pairs[2 * q + 1] = tangent_id(tan_val(&x[i], j), tan_id(&x[i], j), c);
        }
    }
}

/* dot(a, b) of n elements where some are duals of the innermost jvp
 * (hvp's forward over reverse, or a jvp through a dot): the dual that
 * arith.c's route (the elementwise products folded by +) gives, made as
 * whole dots: the primal one dot entry over the n primal pairs, each
 * tangent one over the pairs (b's primal, a's tangent) and (a's primal,
 * b's tangent), where the route recorded several entries and made a dual
 * an element. The values are the route's to the bit (products and sums in
 * its order). float64 only and finite parts only (a strong zero against
 * inf or nan stays with dual.c); 0 if it does not apply. */
int fwd_dot(Value a, Value b, int n, Value *out)
{
    uint32_t top = G->fwd.top;
    if (!eval_fast_paths || !top || G->num.backend != BK_F64 || n < 1) return 0;
    int k = 0, rec = G->tape.recording, prec = 0, boxed = 0, consts = 0;
    /* the parts, once (x, y, and each element's ids of every part: dual.c
     * takes its double path for a product whose parts are all plain; and
     * the const ids of the primals, made when a pair first names them) */
    DotPart *x = err_scratch_uninit(sizeof(DotPart) * 2 * (size_t)n + sizeof(uint32_t) * 5 * (size_t)n), *y = x + n;
    uint32_t *ids_all = (uint32_t *)(y + n), *terms = ids_all + 3 * (size_t)n;
    long sa, sb;
    const Value *ea = seq_elems(a, &sa), *eb = seq_elems(b, &sb);
    int same = ea == eb && sa == sb;     /* dot(x, x): each element's parts once, y the same as x */
    if (same) y = x;
    ConstIds c = { ids_all + n, ids_all + 2 * (size_t)n, 0, 0 };
    double s = 0;
    int i = 0;
    for (; i < n; i++) {
        if (!dot_part(ea[i * sa], top, &k, &x[i], &boxed)) break;
        if (!same && !dot_part(eb[i * sb], top, &k, &y[i], &boxed)) break;
        s += x[i].p * y[i].p;      /* arith_dot's sum: 0 + a0 b0 + a1 b1 + ... */
        ids_all[i] = x[i].id | y[i].id;
        prec |= ids_all[i] != 0;
        consts |= !x[i].id || !y[i].id;
    }
    if (i < n || !k || k > FWD_CHUNK) {
        err_scratch_free(x);
        return 0;
    }
    if (boxed)      /* (unboxed tangents record nothing) */
        for (i = 0; i < n; i++)
            for (int l = 0; l < k; l++)
                ids_all[i] |= (x[i].d && !x[i].td ? x[i].d->t[l].id : 0) | (y[i].d && !y[i].td ? y[i].d->t[l].id : 0);
    /* const slots only where a primal is a constant (primal_id reads none
     * for a recorded one) */
    if (consts) memset(c.cx, 0, sizeof(uint32_t) * 2 * (size_t)n);
    Value P = num_val(s), T[FWD_CHUNK];
    if (prec && rec) {
        uint32_t off, *pairs = tape_rec_operands(2 * (uint32_t)n, &off);
        for (i = 0; i < n; i++) {
            pairs[2 * i] = primal_id(&x[i], &c.cx[i]);
            pairs[2 * i + 1] = primal_id(&y[i], &c.cy[i]);
        }
        P = num_rec(s, tape_rec_dot(off, (uint32_t)n, s));
    }
    for (int j = 0; j < k; j++) {
        int m, recd;
        double t = dot_tangent(x, y, ids_all, n, j, rec, terms, &m, &recd);
        T[j] = num_val(t);
        if (recd && m) {
            uint32_t off, *pairs = tape_rec_operands(2 * (uint32_t)m, &off);
            term_pairs(x, y, terms, m, j, &c, pairs);
            T[j] = num_rec(t, tape_rec_dot(off, (uint32_t)m, t));
        }
    }
    err_scratch_free(x);
    Dual *d = dual_alloc(top, k);
    d->p = P;
    for (int j = 0; j < k; j++) d->t[j] = T[j];
    dual_finish(d);
    *out = obj_val(V_DUAL, d);
    return 1;
}

/* ------------------------------------------- + and - of dual arrays */

/* a + b or a - b elementwise where one side is constants (plain numbers,
 * an array of them or one) and the other an array of duals of the
 * innermost jvp with plain tangents, its primals recorded or not (hvp's
 * `points - take(C, at)`): the primals as one array operation (recorded
 * as an array run when they are recorded, arith.c), the tangents copied
 * or negated, which is what dual.c gives element by element (partials 1
 * and -1, a constant 0 tangent staying 0). 0 if it does not apply. */
int fwd_add_sub(int op, Value a, Value b, int na, int nb, int n, Value *out)
{
    uint32_t top = G->fwd.top;
    if (!eval_fast_paths || !top || (op != OP_ADD && op != OP_SUB) || n < 1) return 0;
    int dual_b = nb >= 0 && seq_at(b, 0)->t == V_DUAL;
    Value dv = dual_b ? b : a, cv = dual_b ? a : b;
    int nc = dual_b ? na : nb;
    if (!is_seq(dv) || (dual_b ? nb : na) < 0) return 0;
    int rec = G->tape.recording, k = 0;
    /* the constant side: plain numbers that record nothing */
    int cknown = nc < 0 ? 0 : storage_of(cv)->known;
    if (nc < 0) {
        if (cv.t != V_NUM || (cv.id && rec)) return 0;
    } else if (!(cknown == KNOWN_CONSTS || (cknown && !rec)))      /* (known: no look; kmeans' points) */
        for (int i = 0; i < n; i++) {
            const Value *e = seq_at(cv, i);
            if (e->t != V_NUM || (e->id && rec)) return 0;
        }
    long sd;
    const Value *ed = seq_elems(dv, &sd);
    /* the dual side looked at and its primals gathered in one pass */
    Value prim = value_arr_new(n);
    Value *pv = AS_ARR(prim)->v;
    for (int i = 0; i < n; i++) {
        const Value *e = &ed[i * sd];
        if (e->t != V_DUAL) goto decline;
        Dual *d = AS_DUAL(*e);
        if (d->tag != top || d->p.t != V_NUM || (k && d->k != k)) goto decline;
        k = d->k;
        if (!(d->form & DUAL_UNBOXED))     /* (unboxed tangents are plain numbers) */
            for (int j = 0; j < k; j++) {
                Value t = d->t[j];
                if (t.t != V_NUM || t.id) goto decline;
            }
        pv[i] = d->p;      /* a number: no reference */
    }
    Value r = dual_b ? arith_elementwise_flat(op, a, prim) : arith_elementwise_flat(op, prim, b);
    v_release(prim);
    double sign = dual_b && op == OP_SUB ? -1 : 1;
    Value res = value_arr_new(n);
    for (int i = 0; i < n; i++) {
        Dual *src = AS_DUAL(ed[i * sd]);
        Dual *d = dual_alloc_spare(top, k, 0);      /* the tangents are plain: as dual_finish packs them */
        if (!d) d = dual_alloc_unboxed(top, k);
        d->p = AS_ARR(r)->v[i];
        v_retain(d->p);
        d->plain = (uint8_t)dual_part_plain(d->p);
        double *td = dual_td(d);
        if (src->form & DUAL_UNBOXED)
            for (int j = 0; j < k; j++) {
                double t = dual_td(src)[j];
                td[j] = t == 0 ? 0 : sign * t;
            }
        else
            for (int j = 0; j < k; j++) {
                double t = src->t[j].u.n;
                td[j] = t == 0 ? 0 : sign * t;
            }
        AS_ARR(res)->v[i] = obj_val(V_DUAL, d);
    }
    v_release(r);
    *out = res;
    return 1;
decline:
    v_release(prim);     /* (numbers and zeros: nothing else to release) */
    return 0;
}

/* ------------------------------- posit backends: dot and sum in the quire */

/* In posit backends dot and sum accumulate in the quire and round once
 * (arith.c); on arrays that hold duals they must too, or a jvp runs a
 * different program than the one it differentiates: sum([1e8 t, t,
 * -1e8 t]) is t, and the fold (1e8 t + t) - 1e8 t gives it tangent 0.
 * A dual dot is Σ x_i y_i = Σ p(x_i) p(y_i) + ε_j Σ (t_j(x_i) p(y_i) +
 * p(x_i) t_j(y_i)): its primal and each tangent are themselves dots in
 * the quire, of the parts one tag down, so nested jvp and recorded parts
 * (hvp's forward over reverse) recurse to the quire of plain or recorded
 * numbers, recorded as dot and sum record them. A term whose tangent or
 * other factor is a constant 0 is left out, as dual.c leaves it out. */

/* Whether every number in v, at every level of its duals, is finite, and
 * each dual of a live tag has that tag's k (else the fold decides: a
 * strong zero against NaR stays dual.c's). */
static int quire_part_ok(Value v)
{
    if (v.t == V_NUM) return isfinite(v.u.n);
    if (v.t != V_DUAL) return 0;
    const Dual *d = AS_DUAL(v);
    if (!fwd_tag_dead(d->tag) && d->k != fwd_tag_k(d->tag)) return 0;
    if (!quire_part_ok(d->p)) return 0;
    for (int j = 0; j < d->k; j++)
        if (!quire_part_ok(dual_tan(d, j))) return 0;
    return 1;
}

/* A factor that makes a term nothing: a 0 that records nothing. */
static inline int quire_zero(Value v)
{
    return v.t == V_NUM && v.u.n == 0 && (v.id == 0 || !G->tape.recording);
}

/* Σ x_i y_i (y NULL: Σ x_i) over plain or recorded numbers: the quire,
 * recorded as arith.c's dot and sum record it. x and y are scratch. */
static Value quire_numbers(Value *x, Value *y, int n)
{
    NumAcc q;
    num_acc_clear(&q);
    uint32_t ids = 0;
    for (int i = 0; i < n; i++) {
        ids |= x[i].id | (y ? y[i].id : 0);
        if (y) num_acc_fma(&q, x[i].u.n, y[i].u.n);
        else num_acc_add(&q, x[i].u.n);
    }
    double s = n ? num_acc_result(&q) : 0;
    if (!ids || !G->tape.recording) return num_val(s);
    if (!y) {
        uint32_t off, *terms = tape_rec_operands((uint32_t)n, &off);
        for (int i = 0; i < n; i++) terms[i] = x[i].id;
        return num_rec(s, tape_rec_sum(off, (uint32_t)n, s));
    }
    for (int i = 0; i < n; i++) {     /* the constants first: entries of their own */
        if (!x[i].id) x[i].id = arith_const_id(x[i].u.n);
        if (!y[i].id) y[i].id = arith_const_id(y[i].u.n);
    }
    uint32_t off, *pairs = tape_rec_operands(2 * (uint32_t)n, &off);
    for (int i = 0; i < n; i++) {
        pairs[2 * i] = x[i].id;
        pairs[2 * i + 1] = y[i].id;
    }
    return num_rec(s, tape_rec_dot(off, (uint32_t)n, s));
}

/* Σ x_i y_i (y NULL: Σ x_i) of n borrowed values, x and y scratch the
 * call may overwrite: a number, or a dual of the highest live tag among
 * them (owned). */
static Value quire_dot(Value *x, Value *y, int n)
{
    uint32_t tag = 0;
    int k = 1;
    for (int s = 0; s < (y ? 2 : 1); s++)
        for (int i = 0; i < n; i++) {
            Value *v = s ? &y[i] : &x[i];
            *v = fwd_live_part(*v);
            if (v->t == V_DUAL && AS_DUAL(*v)->tag > tag) tag = AS_DUAL(*v)->tag, k = AS_DUAL(*v)->k;
        }
    if (!tag) return quire_numbers(x, y, n);
    const Dual **dx = err_scratch_uninit(sizeof(Dual *) * 2 * (size_t)n + sizeof(Value) * (4 * (size_t)n + (size_t)k));
    const Dual **dy = dx + n;
    Value *xs = (Value *)(void *)(dy + n), *ys = xs + 2 * (size_t)n, *T = ys + 2 * (size_t)n;
    for (int i = 0; i < n; i++) {      /* the parts of tag, and the primals */
        dx[i] = x[i].t == V_DUAL && AS_DUAL(x[i])->tag == tag ? AS_DUAL(x[i]) : NULL;
        dy[i] = y && y[i].t == V_DUAL && AS_DUAL(y[i])->tag == tag ? AS_DUAL(y[i]) : NULL;
        xs[i] = dx[i] ? dx[i]->p : x[i];
        if (y) ys[i] = dy[i] ? dy[i]->p : y[i];
    }
    Value P = quire_dot(xs, y ? ys : NULL, n);
    for (int j = 0; j < k; j++) {
        int m = 0;
        for (int i = 0; i < n; i++) {
            Value xp = dx[i] ? dx[i]->p : x[i], yp = !y ? num_val(1) : dy[i] ? dy[i]->p : y[i];
            if (dx[i]) {
                Value t = dual_tan(dx[i], j);
                if (!quire_zero(t) && !quire_zero(yp)) xs[m] = t, ys[m] = yp, m++;
            }
            if (dy[i]) {
                Value t = dual_tan(dy[i], j);
                if (!quire_zero(t) && !quire_zero(xp)) xs[m] = xp, ys[m] = t, m++;
            }
        }
        T[j] = m ? quire_dot(xs, y ? ys : NULL, m) : num_val(0);
    }
    Dual *d = dual_alloc(tag, k);
    d->p = P;
    for (int j = 0; j < k; j++) d->t[j] = T[j];
    dual_finish(d);
    err_scratch_free(dx);
    return obj_val(V_DUAL, d);
}

/* The quire's dot (b nil: sum) of n elements at a[i * sa], b[i * sb]. */
static int quire_strided(const Value *a, long sa, const Value *b, long sb, int n, Value *out)
{
    if (!num_backend_is_posit(G->num.backend)) return 0;
    for (int i = 0; i < n; i++)
        if (!quire_part_ok(a[i * sa]) || (b && !quire_part_ok(b[i * sb]))) return 0;
    Value *x = err_scratch_uninit(sizeof(Value) * 2 * (size_t)(n ? n : 1)), *y = b ? x + n : NULL;
    for (int i = 0; i < n; i++) {
        x[i] = a[i * sa];
        if (b) y[i] = b[i * sb];
    }
    *out = quire_dot(x, y, n);
    err_scratch_free(x);
    return 1;
}

int fwd_quire_dot(const Value *a, long sa, const Value *b, long sb, int n, Value *out)
{
    return quire_strided(a, sa, b, sb, n, out);
}

int fwd_quire_seq(Value a, Value b, int n, Value *out)
{
    if (!num_backend_is_posit(G->num.backend)) return 0;
    Value *e = err_scratch_uninit(sizeof(Value) * 2 * (size_t)(n ? n : 1));
    for (int i = 0; i < n; i++) {
        e[i] = *seq_at(a, i);
        if (b.t != V_NIL) e[n + i] = *seq_at(b, i);
    }
    int r = quire_strided(e, 1, b.t != V_NIL ? e + n : NULL, 1, n, out);
    err_scratch_free(e);
    return r;
}
