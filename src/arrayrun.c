/* arrayrun.c: recording whole-array operations as array runs (issue 27).
 *
 * Design. An elementwise op over n numbers (a + b, a * s, exp(a), ... on
 * plain arrays or views of numbers, or an array and a number) or a matrix
 * product a @ b, in float64 while recording, is recorded as
 *   - the n element entries that per-element recording would make: the
 *     same ops, the same operands, the same values, at consecutive ids
 *     base .. base + n - 1 (constants an op reads the values of come
 *     first: a run of constant entries for an array, one for a number), so
 *     that element reads and writes, versions x@k, views, checkpointed
 *     loops, kinks, :tape, the recorded sweeps and the second-order sweep
 *     see exactly what they always saw; and
 *   - one record (TapeRun, tape.h): the op, base, n, and each operand as a
 *     run of consecutive ids, one id (a broadcast number), constants, or
 *     nothing to differentiate.
 * The record is what makes it fast: the plain reverse sweep, reaching the
 * run's top entry, takes all n elements in one tight loop per operand
 * (sweep.c, "array runs"), a product as dA += dC B^T and dB += A^T dC;
 * reclaiming marks a run's operands from the record (tapegc.c). The record
 * is a summary and never the only truth: tape_rewind and tape_compact drop
 * the records whose elements they do not keep whole, and a sweep that
 * cannot take a run whole (a cut inside it, an operand's adjoints outside
 * its buffer, inf or nan in a product) steps through its elements.
 * An operand qualifies when its elements' entries are consecutive (what an
 * array op, a leaf array, grad's parameters or a loop filling an array
 * give), all constants, or (a LIST) any entries, every element recorded
 * (a leaf before a run: ode's f(x, y)); its ids are read back from the
 * elements' entries (or, a product's factor, which may hold any numbers,
 * from the dot entries: tape.h). Anything else (an array mixing recorded
 * and unrecorded numbers, duals, another backend) records element by
 * element as before. Recorded sweeps
 * (derivatives of derivatives) still record one adjoint op per element:
 * exact, not yet array-shaped. */
#include "arrayrun.h"
#include "arith.h"
#include "kinks.h"
#include "state.h"

/* Whether the reverse rule of op reads operand values (arith.c's test). */
static inline int needs_operand_values(int op) { return !(num_op_flags[op] & OPF_LINEAR); }

/* An array or view's elements: e[j * stride]. */
typedef struct { const Value *e; long stride; } RunElems;

static RunElems run_elems(Value x)
{
    if (x.t == V_ARR) return (RunElems){ AS_ARR(x)->v, 1 };
    const View *w = AS_VIEW(x);
    return (RunElems){ w->s->v + w->start, w->stride };
}

/* The element loops below are written for the compiler to vectorise. */
#define RUN_VECTORISE __attribute__((optimize("tree-vectorize", "vect-cost-model=cheap")))

/* Whether one of entries first .. first + n - 1 is a constant entry. */
static RUN_VECTORISE int any_const(uint32_t first, int n)
{
    const uint32_t *code = tape_codes() + first;
    uint32_t konst = 0;
    for (int i = 0; i < n; i++) konst |= (code[i] & TAPE_OPMASK) == OP_CONST;
    return konst != 0;
}

/* The kind of operand x (an array or view of n, or a number) and its id;
 * 0 if it cannot be part of a run. (A loop over 16-byte values gains
 * nothing from vectors: it is left scalar.) */
static int run_operand(Value x, int is_arr, int n, uint8_t *kind, uint32_t *id)
{
    if (!is_arr) {
        if (x.t != V_NUM) return 0;
        *kind = x.id ? TAPE_RUN_ONE : TAPE_RUN_NONE;
        *id = x.id;
        return 1;
    }
    if (x.t != V_ARR && x.t != V_VIEW) return 0;
    RunElems r = run_elems(x);
    uint32_t first = r.e[0].id, ids = 0, off = 0;
    int nums = 1;
    /* off: some element's id is not first + its index (or, with first 0,
     * some element is recorded) */
    if (r.stride == 1 && (storage_of(x)->known & KNOWN_NOHEAP))     /* numbers, every one */
        for (int i = 0; i < n; i++) {
            ids |= r.e[i].id;
            off |= r.e[i].id - (first + (uint32_t)i);
        }
    else if (r.stride == 1)
        for (int i = 0; i < n; i++) {
            nums &= r.e[i].t == V_NUM;
            ids |= r.e[i].id;
            off |= r.e[i].id - (first + (uint32_t)i);
        }
    else
        for (int i = 0; i < n; i++) {
            const Value *e = &r.e[i * r.stride];
            nums &= e->t == V_NUM;
            ids |= e->id;
            off |= e->id - (first + (uint32_t)i);
        }
    if (!nums) return 0;
    if (!ids) {
        *kind = TAPE_RUN_NONE;
        *id = 0;
        return 1;
    }
    /* constant entries are not operands a run can give adjoints to */
    if (!off && first && !any_const(first, n)) {
        *kind = TAPE_RUN_SEQ;
        *id = first;
        return 1;
    }
    /* any other ids, every element recorded (so that every element
     * records an entry, as the per-element path would): a LIST, its ids
     * read back from the elements' entries (a leaf before a run: ode's
     * f(x, y) = x[0], then x[i] * y[i - 1]) */
    uint32_t zero = 0;
    for (int i = 0; i < n; i++) zero |= !r.e[i * r.stride].id;
    if (zero) return 0;
    *kind = TAPE_RUN_LIST;
    *id = 0;
    return 1;
}

/* A LIST operand's ids, element by element, in scratch (the caller frees). */
static uint32_t *list_ids(Value x, int n)
{
    RunElems r = run_elems(x);
    uint32_t *ids = err_scratch_uninit(sizeof(uint32_t) * (size_t)n);
    for (int i = 0; i < n; i++) ids[i] = r.e[i * r.stride].id;
    return ids;
}

/* The length of the run of consecutive ids at the start of l[0 .. m - 1]. */
static uint32_t seq_len_of(const uint32_t *l, uint32_t m)
{
    uint32_t k = 1;
    while (k < m && l[k] == l[0] + k) k++;
    return k;
}

/* tape_push_elems over n elements whose operands may be lists (la, lb
 * not NULL: element j reads la[j]): a piece at a time, each piece as long
 * as every list operand's ids stay consecutive. */
static void push_elems(int op, const uint32_t *la, uint32_t a, uint32_t sa, const uint32_t *lb, uint32_t b, uint32_t sb, uint32_t n)
{
    if (!la && !lb) {
        tape_push_elems(op, a, sa, b, sb, n);
        return;
    }
    for (uint32_t k = 0; k < n;) {
        uint32_t m = n - k, ia = a ? a + k * sa : 0, ib = b ? b + k * sb : 0;
        if (la) ia = la[k], m = seq_len_of(la + k, m);
        if (lb) ib = lb[k], m = seq_len_of(lb + k, m);
        tape_push_elems(op, ia, la ? 1 : sa, ib, lb ? 1 : sb, m);
        k += m;
    }
}

/* The len elements of x (a plain array or view of numbers) as a run of
 * constant entries, the ones arith_const_id would give them one after
 * another, written in one loop (tape_push_elems: no per-element push),
 * with a record of its own (an elementwise run of OP_CONST, no operand)
 * so that the plain sweep, meeting its top, goes on below it in one step
 * (sweep.c's array runs: nothing to give) instead of one an entry: llsq's
 * x @ P with P constant has 32768. Returns the first's id. */
static RUN_VECTORISE uint32_t run_push_consts(Value x, int len)
{
    RunElems r = run_elems(x);
    if (!tape_reserve((uint32_t)len)) {    /* at the memory cap: one by one, which says so */
        uint32_t first = arith_const_id(r.e[0].u.n);
        for (int i = 1; i < len; i++) arith_const_id(r.e[i * r.stride].u.n);
        return first;
    }
    double *v = tape_reserved_vals();
    if (r.stride == 1)
        for (int i = 0; i < len; i++) v[i] = r.e[i].u.n;
    else
        for (int i = 0; i < len; i++) v[i] = r.e[i * r.stride].u.n;
    uint32_t first = tape_push_elems(OP_CONST, 0, 0, 0, 0, (uint32_t)len);
    if (len >= 2) {
        TapeRun c = { .kind = TAPE_RUN_ELEMWISE, .op = OP_CONST, .base = first, .n = (uint32_t)len,
                      .ka = TAPE_RUN_NONE, .kb = TAPE_RUN_NONE };
        tape_run_add(&c);
    }
    return first;
}

/* Constant operands whose values op reads go on the tape: a number once,
 * an array as a run of constant entries. */
static void run_constants(int op, Value x, int is_arr, int n, uint8_t *kind, uint32_t *id)
{
    if (*kind != TAPE_RUN_NONE || !needs_operand_values(op)) return;
    if (!is_arr) {
        *id = arith_const_id(x.u.n);
        *kind = TAPE_RUN_ONE;
        return;
    }
    *id = run_push_consts(x, n);
    *kind = TAPE_RUN_CONSTS;
}

/* An operand's values for the value loop: p[j * stride] for element j
 * (stride 0: one number). A run of entries (kind SEQ or CONSTS) is read
 * where the sweep reads it, in the tape's value column (consecutive: the
 * loops vectorise); another array where its elements are. */
typedef struct { const double *p; long stride; } RunVals;

static RunVals run_vals(const Value *x, int is_arr, uint8_t kind, uint32_t id)
{
    if (!is_arr) return (RunVals){ &x->u.n, 0 };
    if (kind == TAPE_RUN_SEQ || kind == TAPE_RUN_CONSTS) return (RunVals){ tape_vals() + id, 1 };
    RunElems r = run_elems(*x);
    return (RunVals){ &r.e[0].u.n, r.stride * (long)(sizeof(Value) / sizeof(double)) };
}

/* op over a and b as one array run, into a new array *out of n
 * elements; 0 if it does not apply (nothing was made or recorded then).
 * The values are computed into the tape's value column in one loop
 * (num_apply_f64_n: the op's value column, vectorised for arithmetic),
 * the n entries' codes written a chunk at a time (tape_push_elems: ids
 * base + j, operands a + j or one id), then the result's numbers. */
RUN_VECTORISE int arrayrun_elementwise(int op, Value a, Value b, int na, int nb, int n, Value *out)
{
    int unary = num_op_arity[op] < 2;
    if (n < 2 || !G->tape.recording || G->num.backend != BK_F64 || !num_op_ids[op] || num_op_arity[op] < 1) return 0;
    TapeRun r = { 0 };
    if (!run_operand(a, na >= 0, n, &r.ka, &r.a)) return 0;
    if (!unary && !run_operand(b, nb >= 0, n, &r.kb, &r.b)) return 0;
    if (r.ka == TAPE_RUN_NONE && (unary || r.kb == TAPE_RUN_NONE)) return 0;   /* nothing recorded: plain numbers */
    if (!tape_reserve(2 * (uint32_t)n + 2)) return 0;      /* the elements and constants */
    run_constants(op, a, na >= 0, n, &r.ka, &r.a);
    if (!unary) run_constants(op, b, nb >= 0, n, &r.kb, &r.b);
    else r.kb = TAPE_RUN_NONE, r.b = 0;
    RunVals va = run_vals(&a, na >= 0, r.ka, r.a), vb = unary ? va : run_vals(&b, nb >= 0, r.kb, r.b);
    uint32_t base = tape_size();
    double *v = tape_reserved_vals();
    num_apply_f64_n(op, va.p, va.stride, vb.p, vb.stride, v, (uint32_t)n);
    uint32_t sa = r.ka == TAPE_RUN_SEQ || r.ka == TAPE_RUN_CONSTS, sb = r.kb == TAPE_RUN_SEQ || r.kb == TAPE_RUN_CONSTS;
    uint32_t *la = r.ka == TAPE_RUN_LIST ? list_ids(a, n) : NULL, *lb = r.kb == TAPE_RUN_LIST ? list_ids(b, n) : NULL;
    push_elems(op, la, r.a, sa, lb, unary ? 0 : r.b, sb, (uint32_t)n);
    if (la) err_scratch_free(la);
    if (lb) err_scratch_free(lb);
    if ((KINK_OPS >> op) & 1)
        for (int j = 0; j < n; j++)
            kink_note_op(op, va.p[j * va.stride], unary ? 0 : vb.p[j * vb.stride], base + (uint32_t)j);
    Storage *s = value_storage_unfilled(n);
    s->known = KNOWN_NOHEAP;
    Value *e = s->v;
    for (int j = 0; j < n; j++) e[j] = num_rec(v[j], base + (uint32_t)j);
    *out = obj_val(V_ARR, s);
    r.kind = TAPE_RUN_ELEMWISE;
    r.op = (uint8_t)op;
    r.n = (uint32_t)n;
    r.base = base;
    tape_run_add(&r);
    return 1;
}

/* One factor of a product run: its len elements (a plain array or a
 * view of numbers) as a kind (tape.h: NONE when nothing is recorded, SEQ
 * when the entries are consecutive and none a constant, else LIST) and
 * the first id of a SEQ. 0 if it cannot be a factor of a run. */
static int product_factor(Value x, int len, uint8_t *kind, uint32_t *first)
{
    if (x.t != V_ARR && x.t != V_VIEW) return 0;
    RunElems r = run_elems(x);
    uint32_t f = r.e[0].id, ids = 0, off = 0;
    int nums = 1;
    if (r.stride == 1 && !f)            /* not a run (a constant factor, or LIST): no offsets */
        for (int p = 0; p < len; p++) {
            nums &= r.e[p].t == V_NUM;
            ids |= r.e[p].id;
        }
    else if (r.stride == 1)
        for (int p = 0; p < len; p++) {
            nums &= r.e[p].t == V_NUM;
            ids |= r.e[p].id;
            off |= r.e[p].id - (f + (uint32_t)p);
        }
    else
        for (int p = 0; p < len; p++) {
            const Value *e = &r.e[p * r.stride];
            nums &= e->t == V_NUM;
            ids |= e->id;
            off |= e->id - (f + (uint32_t)p);
        }
    if (!nums) return 0;
    int seq = f != 0 && !off;
    if (seq)
        for (int p = 0; p < len && seq; p++) seq = tape_opcode(f + (uint32_t)p) != OP_CONST;
    *kind = !ids ? TAPE_RUN_NONE : seq ? TAPE_RUN_SEQ : TAPE_RUN_LIST;
    *first = seq ? f : 0;
    return 1;
}

/* A LIST factor's ids and values row by row (rows x cols), an element
 * without an entry given a constant (product_element's way). */
static void factor_fill(Value x, int len, uint32_t *ids, double *v)
{
    RunElems r = run_elems(x);
    for (int p = 0; p < len; p++) {
        const Value *e = &r.e[p * r.stride];
        v[p] = e->u.n;
        ids[p] = e->id ? e->id : arith_const_id(e->u.n);
    }
}

/* out[j] = x . column j of Y for the n columns of Y (len x n, row-major),
 * each sum from 0 over t = 0, 1, ... in order, as arrayrun_dot_rows
 * makes it (the same additions, so the same bits), a row of Y at a time:
 * a loop over j the compiler vectorises, no transposed copy of Y. */
static RUN_VECTORISE void dot_cols(const double *restrict x, const double *restrict Y, uint32_t len, uint32_t n, double *restrict out)
{
    for (uint32_t j = 0; j < n; j++) out[j] = 0;
    for (uint32_t t = 0; t < len; t++) {
        const double *restrict y = Y + (size_t)t * n;
        double v = x[t];
        for (uint32_t j = 0; j < n; j++) out[j] += v * y[j];
    }
}

/* out[r] = x . Y's row r for the rows of Y (row-major, len numbers a row),
 * each sum from 0 over t = 0, 1, ... in order (the per-element paths'
 * order, so the values are theirs to the bit), four rows at a time: the
 * product's recording and its plain sweep share it. */
void arrayrun_dot_rows(const double *x, const double *Y, uint32_t rows, uint32_t len, double *out)
{
    uint32_t r = 0;
    for (; r + 4 <= rows; r += 4) {
        const double *y0 = Y + (size_t)r * len, *y1 = y0 + len, *y2 = y1 + len, *y3 = y2 + len;
        double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
        for (uint32_t t = 0; t < len; t++) {
            double v = x[t];
            s0 += v * y0[t];
            s1 += v * y1[t];
            s2 += v * y2[t];
            s3 += v * y3[t];
        }
        out[r] = s0, out[r + 1] = s1, out[r + 2] = s2, out[r + 3] = s3;
    }
    for (; r < rows; r++) {
        const double *y = Y + (size_t)r * len;
        double s = 0;
        for (uint32_t t = 0; t < len; t++) s += x[t] * y[t];
        out[r] = s;
    }
}

/* The product as one array run (tape.h): plain arrays or views of
 * numbers in float64 while recording, at least one element recorded.
 * A factor whose entries are consecutive is a run (SEQ), one that records
 * nothing a run of constant entries made first (CONSTS), any other (a
 * mixed matrix: a triangular factor, a broadcast row) a LIST whose ids the
 * sweep reads from the dot entries themselves, its elements without an
 * entry each given a constant first, as product_element gives them.
 * Element (i, j) is the dot entry product_element makes, the same pairs
 * in the same order and the same sum; the run's record lets the plain
 * sweep take the whole product as two matrix products (sweep.c).
 * 0 if it does not apply (nothing recorded then). */
int arrayrun_product(Value a, Value b, int m, int k, int n, Value r)
{
    if (!G->tape.recording || G->num.backend != BK_F64 || k < 1 || m * n < 1) return 0;
    uint8_t kind[2];
    uint32_t first[2];
    if (!product_factor(a, m * k, &kind[0], &first[0]) || !product_factor(b, k * n, &kind[1], &first[1])) return 0;
    if (kind[0] == TAPE_RUN_NONE && kind[1] == TAPE_RUN_NONE) return 0;
    Value x[2] = { a, b };
    int len[2] = { m * k, k * n };
    /* room for the constants, a LIST's constants and the m n elements, so
     * that the tape's values stay where they are while they are read */
    if (!tape_reserve((uint32_t)(len[0] + len[1] + m * n))) return 0;
    for (int s = 0; s < 2; s++)
        if (kind[s] == TAPE_RUN_NONE) {     /* the dot entries read their values */
            first[s] = run_push_consts(x[s], len[s]);
            kind[s] = TAPE_RUN_CONSTS;
        }
    /* the factors' values row by row: a run's are its entries' (tape_vals),
     * a LIST's copied with its ids */
    double *fv[2] = { NULL, NULL }, *scratch[2] = { NULL, NULL };
    uint32_t *fid[2] = { NULL, NULL };
    for (int s = 0; s < 2; s++)
        if (kind[s] == TAPE_RUN_LIST) {
            scratch[s] = fv[s] = err_scratch_uninit((size_t)len[s] * (sizeof(double) + sizeof(uint32_t)));
            fid[s] = (uint32_t *)(fv[s] + len[s]);
            factor_fill(x[s], len[s], fid[s], fv[s]);
        }
    for (int s = 0; s < 2; s++)
        if (!fv[s]) fv[s] = (double *)tape_vals() + first[s];
    TapeRun run = { .kind = TAPE_RUN_MATMUL, .n = (uint32_t)(m * n), .a = first[0], .b = first[1],
                    .ka = kind[0], .kb = kind[1], .rows = (uint32_t)m, .inner = (uint32_t)k };
    Value *out = AS_ARR(r)->v;
    double *row = err_scratch_uninit(sizeof(double) * (size_t)n);
    int ra_run = kind[0] != TAPE_RUN_LIST, rb_run = kind[1] != TAPE_RUN_LIST;
    for (int i = 0; i < m; i++) {
        /* each sum from 0, t = 0, 1, ... (product_element's order) */
        dot_cols(fv[0] + (size_t)i * k, fv[1], (uint32_t)k, (uint32_t)n, row);
        uint32_t off, *pairs = tape_rec_operands(2 * (uint32_t)k * (uint32_t)n, &off);
        /* element (i, j)'s pairs: A's (i, t) and B's (t, j), t = 0 .. k - 1;
         * a run's ids are its first + the element's place */
        const uint32_t *ra = ra_run ? NULL : fid[0] + (size_t)i * k;
        uint32_t a0 = first[0] + (uint32_t)(i * k);
        for (int j = 0; j < n; j++, pairs += 2 * k) {
            if (ra_run)
                for (int t = 0; t < k; t++) pairs[2 * t] = a0 + (uint32_t)t;
            else
                for (int t = 0; t < k; t++) pairs[2 * t] = ra[t];
            if (rb_run)
                for (int t = 0; t < k; t++) pairs[2 * t + 1] = first[1] + (uint32_t)(t * n + j);
            else
                for (int t = 0; t < k; t++) pairs[2 * t + 1] = fid[1][(size_t)t * n + j];
        }
        uint32_t id = tape_rec_dot_run(off, (uint32_t)k, (uint32_t)n, row);
        if (i == 0) run.base = id;
        for (int j = 0; j < n; j++) out[(long)i * n + j] = num_rec(row[j], id + (uint32_t)j);
    }
    err_scratch_free(row);
    for (int s = 0; s < 2; s++)
        if (scratch[s]) err_scratch_free(scratch[s]);
    tape_run_add(&run);
    return 1;
}
