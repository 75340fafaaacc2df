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
#include <stddef.h>
#include <string.h>
#include "arrayrun.h"
#include "eval.h"
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

/* Whether one of entries first .. first + n - 1 is a constant entry:
 * tested 64 codes a block with no branch (vectorised), as the answer is
 * nearly always no. */
static int any_const(uint32_t first, int n)
{
    const uint32_t *code = tape_codes() + first;
    int i = 0;
    for (; i + 64 <= n; i += 64) {
        uint32_t hit = 0;
        for (int j = 0; j < 64; j++) hit |= (code[i + j] & TAPE_OPMASK) == OP_CONST;
        if (hit) return 1;
    }
    for (; i < n; i++)
        if ((code[i] & TAPE_OPMASK) == OP_CONST) return 1;
    return 0;
}

/* One operand of a run: n elements e[j * stride] (is_arr) of storage st,
 * or the number x. */
typedef struct { int is_arr; RunElems e; Value x; Storage *st; } RunSide;

static inline __attribute__((always_inline)) RunSide run_side(Value x, int is_arr)
{
    RunSide s = { is_arr, { NULL, 0 }, x, NULL };
    if (is_arr) s.e = run_elems(x), s.st = storage_of(x);
    return s;
}

/* Operand s of n elements as a LIST: any ids, every element a recorded
 * number (so that every element records an entry, as the per-element
 * path would), its ids read back from the elements' entries (a leaf
 * before a run: ode's f(x, y) = x[0], then x[i] * y[i - 1]); 0 if some
 * element is not. */
static int run_list(const RunSide *s, int n, uint8_t *kind, uint32_t *id)
{
    const Value *e = s->e.e;
    for (int i = 0; i < n; i++, e += s->e.stride)
        if (e->t != V_NUM || !e->id) return 0;
    *kind = TAPE_RUN_LIST;
    *id = 0;
    return 1;
}

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
/* run_operand's test of n consecutive elements e[0 .. n - 1] (a long
 * run: ba's rows of 20000, ode's), two a pass: half the plain loop's own
 * instructions. Out of line, so that a short run (lstm's rows of 7) keeps
 * the plain loop as it was. Bits set where an element's type and id are
 * not want + i step. */
static __attribute__((noinline)) uint64_t run_words_off(const Value *e, int n, uint64_t want, uint64_t step)
{
    uint64_t bad = 0, bad1 = 0, want1 = want + step;
    int i = 0;
    for (; i + 2 <= n; i += 2, e += 2, want += 2 * step, want1 += 2 * step) {
        uint64_t w0, w1;
        memcpy(&w0, e, sizeof w0);
        memcpy(&w1, e + 1, sizeof w1);
        bad |= (w0 & 0xFFFFFFFF000000FFull) ^ want;
        bad1 |= (w1 & 0xFFFFFFFF000000FFull) ^ want1;
    }
    if (i < n) {
        uint64_t w;
        memcpy(&w, e, sizeof w);
        bad |= (w & 0xFFFFFFFF000000FFull) ^ want;
    }
    return bad | bad1;
}
#endif

/* The kind of operand s (n elements, or a number) and its id; 0 if it
 * cannot be part of a run. (A loop over 16-byte values gains nothing
 * from vectors: it is left scalar.) */
static int run_operand_scan(const RunSide *s, int n, uint8_t *kind, uint32_t *id);

/* short_side's short operand (n <= SHORT_SCAN, unit stride, elements e
 * of storage st) that no fresh mark vouches for: a SEQ if its elements
 * are numbers of ids first .. first + n - 1 (first not 0) and none of
 * those entries is a constant: run_operand_scan's answer for it, found
 * with no call, so that the operand takes short_run, not run_record's
 * set-up (lstm's h, a row of out written in place a step before, and
 * the row h *= tanh(s) writes: three operations a step). A whole array
 * so found is marked fresh, as run_operand_scan marks it. */
enum { SHORT_SCAN = 16 };
static inline __attribute__((always_inline)) int short_seq_scan(const Storage *st, const Value *e, int n, uint8_t *kind, uint32_t *id)
{
    uint32_t first = e[0].id;
    if (n > SHORT_SCAN || !first) return 0;
    uint32_t off = 0;
    unsigned others = 0;
    for (int i = 0; i < n; i++) {
        others |= e[i].t ^ V_NUM;
        off |= e[i].id ^ (first + (uint32_t)i);
    }
    if (others | off) return 0;
    const uint32_t *code = tape_codes() + first;
    unsigned consts = 0;
    for (int i = 0; i < n; i++) consts |= (code[i] & TAPE_OPMASK) == OP_CONST;
    if (consts) return 0;
    if (e == st->v && n == st->n) ((Storage *)st)->fresh = first;   /* a whole array: learnt */
    *kind = TAPE_RUN_SEQ;
    *id = first;
    return 1;
}

/* The quick cases, inlined in the callers (the call and its saved
 * registers were a fifth of the cost on lstm's rows of 7): a number, and
 * elements an array run made, untouched since (Storage.fresh: every
 * writer clears it), as far as their first and last ids still say: a
 * run, with no scan. Anything else: run_operand_scan. */
static inline __attribute__((always_inline)) int run_operand(const RunSide *s, int n, uint8_t *kind, uint32_t *id)
{
    if (!s->is_arr) {
        if (s->x.t != V_NUM) return 0;
        *kind = s->x.id ? TAPE_RUN_ONE : TAPE_RUN_NONE;
        *id = s->x.id;
        return 1;
    }
    const Value *e = s->e.e;
    const Storage *st = s->st;
    if (st && st->fresh && s->e.stride == 1) {
        uint32_t want = st->fresh + (uint32_t)(e - st->v);
        if (e[0].id == want && e[n - 1].id == want + (uint32_t)n - 1) {
            *kind = TAPE_RUN_SEQ;
            *id = want;
            return 1;
        }
    }
    if (st && s->e.stride == 1 && short_seq_scan(st, e, n, kind, id)) return 1;   /* (a broadcast's rows of 7) */
    return run_operand_scan(s, n, kind, id);
}

/* run_operand's array past its quick cases: the elements looked at. */
static __attribute__((noinline)) int run_operand_scan(const RunSide *s, int n, uint8_t *kind, uint32_t *id)
{
    const Value *e = s->e.e;
    long stride = s->e.stride;
    uint32_t first = e[0].id;
    const Storage *st = s->st;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    /* an element's type and id as one word (the padding between them
     * masked off), each checked in one pass with no branch: with first
     * set, every element a number of id first + i (a run); with first 0,
     * every element a number of id 0 (constants) */
    _Static_assert(offsetof(Value, t) == 0 && offsetof(Value, id) == 4, "Value's type and id in its first word");
    uint64_t bad = 0, want = (uint64_t)first << 32 | V_NUM, step = first ? 1ull << 32 : 0;
    if (stride == 1 && n >= 16) bad = run_words_off(e, n, want, step);
    else
        for (int i = 0; i < n; i++, e += stride, want += step) {
            uint64_t w;
            memcpy(&w, e, sizeof w);
            bad |= (w & 0xFFFFFFFF000000FFull) ^ want;
        }
    if (!bad && !first) {
        *kind = TAPE_RUN_NONE;
        *id = 0;
        return 1;
    }
    /* constant entries are not operands a run can give adjoints to */
    if (!bad && !any_const(first, n)) {
        *kind = TAPE_RUN_SEQ;
        *id = first;
        if (st && e == st->v && n == st->n) s->st->fresh = first;   /* a whole array: learnt */
        return 1;
    }
#else
    uint32_t ids = 0, off = 0;
    int nums = 1;
    /* off: some element's id is not first + its index (or, with first 0,
     * some element is recorded) */
    for (int i = 0; i < n; i++, e += stride) {
        nums &= e->t == V_NUM;
        ids |= e->id;
        off |= e->id ^ (first + (uint32_t)i);
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
#endif
    return run_list(s, n, kind, id);
}

/* A LIST operand's ids, element by element, in scratch (the caller frees). */
static uint32_t *list_ids(const RunSide *s, int n)
{
    uint32_t *ids = err_scratch_uninit(sizeof(uint32_t) * (size_t)n);
    for (int i = 0; i < n; i++) ids[i] = s->e.e[i * s->e.stride].id;
    return ids;
}

/* The length of the run of consecutive ids at the start of l[0 .. m - 1]
 * (m >= 16, l[1] follows l[0]): 16 ids a block, four to a vector (ode's
 * LIST, [x[0], then a run]; gcc leaves the plain loop scalar), then one
 * by one. Out of line: short pieces (kmeans') keep the plain loop. */
typedef uint32_t ids4 __attribute__((vector_size(16)));
static __attribute__((noinline)) uint32_t seq_len_long(const uint32_t *l, uint32_t m)
{
    uint32_t k = 1, first = l[0];
    for (; k + 16 <= m; k += 16) {
        ids4 off = { 0, 0, 0, 0 }, want = { first + k, first + k + 1, first + k + 2, first + k + 3 }, four = { 4, 4, 4, 4 };
        for (uint32_t j = 0; j < 16; j += 4, want += four) {
            ids4 x;
            memcpy(&x, l + k + j, sizeof x);
            off |= x ^ want;
        }
        if (off[0] | off[1] | off[2] | off[3]) break;
    }
    while (k < m && l[k] == first + k) k++;
    return k;
}

/* The length of the run of consecutive ids at the start of l[0 .. m - 1]. */
static inline uint32_t seq_len_of(const uint32_t *l, uint32_t m)
{
    if (m >= 64 && l[1] == l[0] + 1 && l[16] == l[0] + 16) return seq_len_long(l, m);
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

/* The len elements r (of a plain array or view of numbers) as a run of
 * constant entries, the ones arith_const_id would give them one after
 * another, written in one loop (tape_push_elems: no per-element push),
 * with a record of its own (an elementwise run of OP_CONST, no operand)
 * so that the plain sweep, meeting its top, goes on below it in one step
 * (sweep.c's array runs: nothing to give) instead of one an entry: llsq's
 * x @ P with P constant has 32768. Returns the first's id. */
static RUN_VECTORISE uint32_t run_push_consts(RunElems r, int len)
{
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
static __attribute__((noinline)) void push_constants(const RunSide *s, int n, uint8_t *kind, uint32_t *id);

static inline __attribute__((always_inline)) void run_constants(int op, const RunSide *s, int n, uint8_t *kind, uint32_t *id)
{
    if (*kind == TAPE_RUN_NONE && needs_operand_values(op)) push_constants(s, n, kind, id);
}

static void push_constants(const RunSide *s, int n, uint8_t *kind, uint32_t *id)
{
    if (!s->is_arr) {
        *id = arith_const_id(s->x.u.n);
        *kind = TAPE_RUN_ONE;
        return;
    }
    *id = run_push_consts(s->e, n);
    *kind = TAPE_RUN_CONSTS;
}

/* An operand's values for the value loop: p[j * stride] for element j
 * (stride 0: one number). A run of entries (kind SEQ or CONSTS) is read
 * where the sweep reads it, in the tape's value column (consecutive: the
 * loops vectorise); another array where its elements are. */
typedef struct { const double *p; long stride; } RunVals;

static RunVals run_vals(const RunSide *s, uint8_t kind, uint32_t id)
{
    if (!s->is_arr) return (RunVals){ &s->x.u.n, 0 };
    if (kind == TAPE_RUN_SEQ || kind == TAPE_RUN_CONSTS) return (RunVals){ tape_vals() + id, 1 };
    return (RunVals){ &s->e.e[0].u.n, s->e.stride * (long)(sizeof(Value) / sizeof(double)) };
}

/* Records op over a and b (their kinds in r, checked, the tape's room
 * reserved) as one run of n elements; returns its first id. The values
 * computed into the tape's value column in one loop
 * (num_apply_f64_n: the op's value column, vectorised for arithmetic),
 * the n entries' codes written a chunk at a time (tape_push_elems: ids
 * base + j, operands a + j or one id). */
static RUN_VECTORISE uint32_t run_record(int op, int unary, const RunSide *a, const RunSide *b, TapeRun r, int n, int add)
{
    run_constants(op, a, n, &r.ka, &r.a);
    if (!unary) run_constants(op, b, n, &r.kb, &r.b);
    else r.kb = TAPE_RUN_NONE, r.b = 0;
    RunVals va = run_vals(a, r.ka, r.a), vb = unary ? va : run_vals(b, r.kb, r.b);
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
    r.kind = TAPE_RUN_ELEMWISE;
    r.op = (uint8_t)op;
    r.n = (uint32_t)n;
    r.base = base;
    if (add) tape_run_add(&r);
    return base;
}

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
/* run_numbers for a long run (ba's, ode's): two elements a pass. Out of
 * line: a short run (lstm's rows of 7) keeps the plain loop. */
static __attribute__((noinline)) void run_numbers_long(uint64_t w0, const double *v, int n, char *to)
{
    uint64_t w1 = w0 + (1ull << 32);
    int j = 0;
    for (; j + 2 <= n; j += 2, w0 += 2ull << 32, w1 += 2ull << 32, to += 32) {
        memcpy(to, &w0, 8);
        memcpy(to + 8, &v[j], 8);
        memcpy(to + 16, &w1, 8);
        memcpy(to + 24, &v[j + 1], 8);
    }
    if (j < n) {
        memcpy(to, &w0, 8);
        memcpy(to + 8, &v[j], 8);
    }
}
#endif

/* The numbers of a run's n elements from base on, into e (made after the
 * recording: an error in it leaves no array of unset elements). */
static inline __attribute__((always_inline)) void run_numbers(uint32_t base, int n, Value *e)
{
    const double *v = tape_vals() + base;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    /* num_rec(v[j], base + j), as its two words: the type and id (the
     * padding 0), the value's bits */
    _Static_assert(sizeof(Value) == 16 && offsetof(Value, u) == 8, "a Value is two words");
    uint64_t w0 = (uint64_t)base << 32 | V_NUM;
    char *to = (char *)e;
    if (n >= 16) {
        run_numbers_long(w0, v, n, to);
        return;
    }
    for (int j = 0; j < n; j++, w0 += 1ull << 32, to += 16) {
        memcpy(to, &w0, 8);
        memcpy(to + 8, &v[j], 8);
    }
#else
    for (int j = 0; j < n; j++) e[j] = num_rec(v[j], base + (uint32_t)j);
#endif
}

static int run_applies(int op, int n)
{
    return n >= 2 && G->tape.recording && G->num.backend == BK_F64 && num_op_ids[op] && num_op_arity[op] >= 1;
}

/* num_apply_f64_n's values for a short run's + - * (lstm's rows of 7, a
 * dozen a step): a plain loop, as its vectorised loops' set-up and tails
 * cost more than the few elements; the same sums and products. */
static inline __attribute__((always_inline)) void run_apply(int op, RunVals va, RunVals vb, double *out, int n)
{
    const double *A = va.p, *B = vb.p;
    long sa = va.stride, sb = vb.stride;
    if (n <= SHORT_SCAN && (op == OP_ADD || op == OP_SUB || op == OP_MUL)) {
        if (op == OP_ADD) for (int j = 0; j < n; j++) out[j] = A[j * sa] + B[j * sb];
        else if (op == OP_SUB) for (int j = 0; j < n; j++) out[j] = A[j * sa] - B[j * sb];
        else for (int j = 0; j < n; j++) out[j] = A[j * sa] * B[j * sb];
        return;
    }
    num_apply_f64_n(op, A, sa, B, sb, out, (uint32_t)n);
}

/* run_record for operands that need nothing of its set-up (each a SEQ,
 * a ONE, or a NONE the op reads no value of; no kink; vals where
 * run_vals says): the same values, entries and run record. */
static inline __attribute__((always_inline)) uint32_t short_record(int op, TapeRun r, RunVals va, RunVals vb, int n, int add)
{
    uint32_t base = tape_size();
    run_apply(op, va, vb, tape_reserved_vals(), n);
    tape_push_elems(op, r.a, r.ka == TAPE_RUN_SEQ || r.ka == TAPE_RUN_CONSTS, r.b, r.kb == TAPE_RUN_SEQ || r.kb == TAPE_RUN_CONSTS, (uint32_t)n);
    r.kind = TAPE_RUN_ELEMWISE;
    r.op = (uint8_t)op;
    r.n = (uint32_t)n;
    r.base = base;
    if (add) tape_run_add(&r);
    return base;
}

/* One operand of short_run: a number (recorded: ONE; not: NONE, which a
 * linear op alone may take, as it reads no value), or an array or view
 * whose elements an array run made, untouched since (run_operand's quick
 * case), or a short one whose elements are such a run all the same
 * (short_seq_scan): a SEQ. 0 otherwise. */
static inline __attribute__((always_inline)) int short_side(int op, Value x, int is_arr, int n, uint8_t *kind, uint32_t *id)
{
    if (!is_arr) {
        if (x.t != V_NUM || (!x.id && needs_operand_values(op))) return 0;
        *kind = x.id ? TAPE_RUN_ONE : TAPE_RUN_NONE;
        *id = x.id;
        return 1;
    }
    const Value *e;
    const Storage *st;
    if (x.t == V_ARR) st = AS_ARR(x), e = st->v;
    else {
        const View *w = AS_VIEW(x);
        if (w->stride != 1) return 0;
        st = w->s, e = st->v + w->start;
    }
    uint32_t want = st->fresh + (uint32_t)(e - st->v);
    if (!st->fresh || e[0].id != want || e[n - 1].id != want + (uint32_t)n - 1) return short_seq_scan(st, e, n, kind, id);
    *kind = TAPE_RUN_SEQ;
    *id = want;
    return 1;
}

/* arrayrun_elementwise's common case, with nothing of the general one's
 * set-up (lstm's rows of 7, a dozen a step: each operand a fresh run or a
 * number, no constant to push, no kink to note): the same values, entries
 * and run record as run_record makes for it. 0 if it does not apply, -1
 * if the tape has no room (nothing was made or recorded then). */
static inline __attribute__((always_inline)) int short_run(int op, int unary, Value a, Value b, int na, int nb, int n, Value *out)
{
    TapeRun r = { 0 };
    if ((KINK_OPS >> op) & 1) return 0;
    if (!short_side(op, a, na >= 0, n, &r.ka, &r.a)) return 0;
    if (unary) r.kb = TAPE_RUN_NONE, r.b = 0;
    else if (!short_side(op, b, nb >= 0, n, &r.kb, &r.b)) return 0;
    if (r.ka == TAPE_RUN_NONE && r.kb == TAPE_RUN_NONE) return 0;   /* nothing recorded: plain numbers */
    if (!tape_reserve(2 * (uint32_t)n + 2)) return -1;     /* as the general case says then */
    /* (the value column's address after the reserve, which may move it) */
    RunVals va = na >= 0 ? (RunVals){ tape_vals() + r.a, 1 } : (RunVals){ &a.u.n, 0 };
    RunVals vb = unary ? va : nb >= 0 ? (RunVals){ tape_vals() + r.b, 1 } : (RunVals){ &b.u.n, 0 };
    uint32_t base = short_record(op, r, va, vb, n, 1);
    Storage *s = value_storage_unfilled(n);
    s->known = KNOWN_NOHEAP;
    run_numbers(base, n, s->v);
    s->fresh = base;
    *out = obj_val(V_ARR, s);
    return 1;
}

/* op over a and b as one array run, into a new array *out of n
 * elements; 0 if it does not apply (nothing was made or recorded then). */
int arrayrun_elementwise(int op, Value a, Value b, int na, int nb, int n, Value *out)
{
    int unary = num_op_arity[op] < 2;
    if (!eval_fast_paths || !run_applies(op, n)) return 0;
    int done = short_run(op, unary, a, b, na, nb, n, out);
    if (done) return done > 0;
    TapeRun r = { 0 };
    RunSide sa = run_side(a, na >= 0), sb = unary ? sa : run_side(b, nb >= 0);
    if (!run_operand(&sa, n, &r.ka, &r.a)) return 0;
    if (!unary && !run_operand(&sb, n, &r.kb, &r.b)) return 0;
    if (r.ka == TAPE_RUN_NONE && (unary || r.kb == TAPE_RUN_NONE)) return 0;   /* nothing recorded: plain numbers */
    if (!tape_reserve(2 * (uint32_t)n + 2)) return 0;      /* the elements and constants */
    uint32_t base = run_record(op, unary, &sa, &sb, r, n, 1);
    Storage *s = value_storage_unfilled(n);
    s->known = KNOWN_NOHEAP;
    run_numbers(base, n, s->v);
    s->fresh = base;
    *out = obj_val(V_ARR, s);
    return 1;
}

/* Side s's row i of a rows x cols broadcast (matrix.c): a whole row of
 * the matrix, its one row again, or one number (a column's). */
static inline __attribute__((always_inline)) RunSide broadcast_row(Storage *s, int i)
{
    long at = s->rows == 1 ? 0 : (long)i * s->cols;
    if (s->cols == 1) return (RunSide){ 0, { NULL, 0 }, s->v[at], NULL };
    return (RunSide){ 1, { s->v + at, 1 }, nil_val(), s };
}

/* One side of a ROWS run (tape.h) from the rows' kinds: every row's
 * the same kind, a SEQ's rows a fixed step apart (0: one row for all),
 * a ONE's the same id; 0 if they are not so. */
static int rows_side(const TapeRun *run, int rows, int which, uint8_t *kind, uint32_t *first, uint32_t *step)
{
    uint8_t k = which ? run[0].kb : run[0].ka;
    uint32_t a0 = which ? run[0].b : run[0].a, a1 = which ? run[1].b : run[1].a;
    if (k != TAPE_RUN_SEQ && k != TAPE_RUN_ONE && k != TAPE_RUN_NONE) return 0;
    uint32_t d = k == TAPE_RUN_SEQ ? a1 - a0 : 0;
    if (k == TAPE_RUN_SEQ && a1 < a0) return 0;        /* rows that step down: the sweep's span is upward */
    for (int i = 1; i < rows; i++) {
        uint8_t ki = which ? run[i].kb : run[i].ka;
        uint32_t ai = which ? run[i].b : run[i].a;
        if (ki != k || ai != a0 + (uint32_t)i * d) return 0;
    }
    if (k == TAPE_RUN_SEQ && (uint64_t)a0 + (uint64_t)d * (uint64_t)(rows - 1) >= 0xFFFFFFFFu) return 0;
    *kind = k, *first = a0, *step = d;
    return 1;
}

/* Whether a broadcast's rows (their kinds in run) make one ROWS run
 * (tape.h), and its record but for its base in *r: rows at least 2, each
 * side one kind a step apart (rows_side), and no constants for the op to
 * read (a side of none: a record a row, its constants before each). */
static int rows_run(int op, const TapeRun *run, int rows, int cols, TapeRun *r)
{
    if (rows < 2) return 0;
    *r = (TapeRun){ .kind = TAPE_RUN_ROWS, .op = (uint8_t)op, .n = (uint32_t)rows * (uint32_t)cols,
                    .rows = (uint32_t)rows, .inner = (uint32_t)cols };
    if (!rows_side(run, rows, 0, &r->ka, &r->a, &r->sa) || !rows_side(run, rows, 1, &r->kb, &r->b, &r->sb)) return 0;
    if ((r->ka == TAPE_RUN_NONE || r->kb == TAPE_RUN_NONE) && needs_operand_values(op)) return 0;
    return 1;
}

/* Whether a ROWS run's sides need none of run_record's set-up (each a
 * run of entries or one recorded number): short_record's case, every row. */
static int rows_short(const TapeRun *r)
{
    return (r->ka == TAPE_RUN_SEQ || r->ka == TAPE_RUN_ONE) && (r->kb == TAPE_RUN_SEQ || r->kb == TAPE_RUN_ONE);
}

/* arrayrun_broadcast's rows (their kinds in run, one ROWS run r, room
 * reserved), when rows_short says each row is short_record's: the same
 * values, row by row, then the codes of all the rows in one call
 * (tape_push_rows: a row whose fields are the row before's copies its
 * codes; lstm's X * w, 1023 rows of 7: a tape_push_elems call a row cost
 * more than the row's seven codes), and the one record. The matrix of
 * their numbers, rows x cols. */
static Storage *rows_record(int op, Storage *x, Storage *y, TapeRun *run, TapeRun *r, int rows, int cols)
{
    uint32_t base = tape_size();
    double *v = tape_reserved_vals();
    for (int i = 0; i < rows; i++) {
        RunSide sa = broadcast_row(x, i), sb = broadcast_row(y, i);
        RunVals va = run_vals(&sa, run[i].ka, run[i].a), vb = run_vals(&sb, run[i].kb, run[i].b);
        run_apply(op, va, vb, v + (long)i * cols, cols);
    }
    int seq_a = r->ka == TAPE_RUN_SEQ, seq_b = r->kb == TAPE_RUN_SEQ;
    tape_push_rows(op, r->a, (uint32_t)seq_a, seq_a ? r->sa : 0, r->b, (uint32_t)seq_b, seq_b ? r->sb : 0,
                   (uint32_t)rows, (uint32_t)cols);
    r->base = base;
    tape_run_add(r);
    Storage *s = value_storage_unfilled(rows * cols);
    s->known = KNOWN_NOHEAP;
    run_numbers(base, rows * cols, s->v);
    s->fresh = base;
    storage_set_shape(s, 2, rows, cols);
    return s;
}

/* A whole matrix side of a broadcast that is constants the op reads
 * (whole, kind NONE: lstm's sequence S in S * w), pushed as one run of
 * constant entries before the first row, each row's kind CONSTS from
 * there, rather than a row's constants before each row (run_constants):
 * the rows then follow one another, so the result is one run (fresh) and
 * a later broadcast reads it a row every cols entries, with codes that
 * repeat (tape_push_rows), not a row every 2 cols, each row's far slots
 * given anew. */
static void broadcast_constants(int op, Storage *x, Storage *y, const int whole[2], const uint8_t whole_k[2], TapeRun *run,
                                int rows, int cols)
{
    if (!needs_operand_values(op)) return;
    for (int s = 0; s < 2; s++) {
        if (!whole[s] || whole_k[s] != TAPE_RUN_NONE) continue;
        uint32_t first = run_push_consts((RunElems){ (s ? y : x)->v, 1 }, rows * cols);
        for (int i = 0; i < rows; i++) {
            if (s) run[i].kb = TAPE_RUN_CONSTS, run[i].b = first + (uint32_t)i * (uint32_t)cols;
            else run[i].ka = TAPE_RUN_CONSTS, run[i].a = first + (uint32_t)i * (uint32_t)cols;
        }
    }
}

/* x op y of two matrices where one or both are broadcast (a row or a
 * column against rows x cols) and a broadcast one is recorded (its
 * expanded copy repeats ids: no run, element by element), recorded as one
 * run a row: row i is the run x's row i op y's row i, as
 * arrayrun_elementwise records it for those rows as arrays (or a column's
 * number), the rows one after another: the elements per-element recording
 * makes, in its order, each row's constants before it. 0 if it does not
 * apply (a broadcast constant's expanded copy is a run already; some row's
 * operands cannot be a run, or record nothing): nothing was made or
 * recorded then. */
int arrayrun_broadcast(int op, Value a, Value b, int rows, int cols, Value *out)
{
    if (!eval_fast_paths || num_op_arity[op] != 2 || !run_applies(op, cols) || rows < 1) return 0;
    Storage *x = AS_ARR(a), *y = AS_ARR(b);
    /* every row's kinds first: nothing is recorded unless all qualify (a
     * broadcast row is looked at once) */
    TapeRun *run = err_scratch_uninit(sizeof(TapeRun) * (size_t)rows);
    int wide_a = x->rows != rows || x->cols != cols, wide_b = y->rows != rows || y->cols != cols, repeats = 0;
    /* a whole matrix side whose elements are one run (or constants) is
     * that run row by row: looked at once, not a row at a time */
    uint8_t whole_k[2] = { 0, 0 };
    uint32_t whole_id[2] = { 0, 0 };
    int whole[2] = { 0, 0 };
    for (int s = 0; s < 2; s++) {
        Storage *m = s ? y : x;
        uint32_t len = (uint32_t)rows * (uint32_t)cols, first = m->v[0].id;
        if ((s ? wide_b : wide_a) || rows < 2 || m->v[len - 1].id != (first ? first + len - 1 : 0)) continue;   /* (a quick no) */
        RunSide all = { 1, { m->v, 1 }, nil_val(), m };
        whole[s] = run_operand(&all, rows * cols, &whole_k[s], &whole_id[s])
                   && (whole_k[s] == TAPE_RUN_SEQ || whole_k[s] == TAPE_RUN_NONE);
    }
    for (int i = 0; i < rows; i++) {
        TapeRun *r = &run[i];
        *r = (TapeRun){ 0 };
        RunSide sa = broadcast_row(x, i), sb = broadcast_row(y, i);
        int ok = whole[0] ? (r->ka = whole_k[0], r->a = whole_id[0] ? whole_id[0] + (uint32_t)i * (uint32_t)cols : 0, 1)
               : i && x->rows == 1 ? (r->ka = run[0].ka, r->a = run[0].a, 1) : run_operand(&sa, cols, &r->ka, &r->a);
        ok = ok && (whole[1] ? (r->kb = whole_k[1], r->b = whole_id[1] ? whole_id[1] + (uint32_t)i * (uint32_t)cols : 0, 1)
                    : i && y->rows == 1 ? (r->kb = run[0].kb, r->b = run[0].b, 1) : run_operand(&sb, cols, &r->kb, &r->b));
        if (!ok || (r->ka == TAPE_RUN_NONE && r->kb == TAPE_RUN_NONE)) {
            err_scratch_free(run);
            return 0;
        }
        repeats |= (wide_a && r->ka != TAPE_RUN_NONE) || (wide_b && r->kb != TAPE_RUN_NONE);
    }
    if (!repeats) {     /* constants broadcast: the expanded arrays are one run (matrix.c) */
        err_scratch_free(run);
        return 0;
    }
    if ((uint64_t)rows * (2 * (uint64_t)cols + 2) > 0xF0000000u || !tape_reserve((uint32_t)rows * (2 * (uint32_t)cols + 2))) {
        err_scratch_free(run);
        return 0;
    }
    broadcast_constants(op, x, y, whole, whole_k, run, rows, cols);
    TapeRun whole_run;
    int as_rows = eval_fast_paths && rows_run(op, run, rows, cols, &whole_run);
    int kink = (KINK_OPS >> op) & 1;
    if (as_rows && !kink && rows_short(&whole_run)) {
        Storage *s = rows_record(op, x, y, run, &whole_run, rows, cols);
        err_scratch_free(run);
        *out = obj_val(V_ARR, s);
        return 1;
    }
    for (int i = 0; i < rows; i++) {
        RunSide sa = broadcast_row(x, i), sb = broadcast_row(y, i);
        /* a row of runs, or a run and a recorded number (lstm's X * w):
         * short_record, none of run_record's set-up */
        if (!kink && (run[i].ka == TAPE_RUN_SEQ || run[i].ka == TAPE_RUN_CONSTS || (run[i].ka == TAPE_RUN_ONE && !sa.is_arr))
            && (run[i].kb == TAPE_RUN_SEQ || run[i].kb == TAPE_RUN_CONSTS || (run[i].kb == TAPE_RUN_ONE && !sb.is_arr)))
            run[i].base = short_record(op, run[i], run_vals(&sa, run[i].ka, run[i].a), run_vals(&sb, run[i].kb, run[i].b), cols, !as_rows);
        else
            run[i].base = run_record(op, 0, &sa, &sb, run[i], cols, !as_rows);
    }
    Storage *s = value_storage_unfilled(rows * cols);
    s->known = KNOWN_NOHEAP;
    int seq = 1;     /* the rows one run after another (no constants between them) */
    for (int i = 0; i < rows; i++) {
        run_numbers(run[i].base, cols, s->v + (long)i * cols);
        seq &= run[i].base == run[0].base + (uint32_t)i * (uint32_t)cols;
    }
    if (as_rows) {
        if (seq) {
            whole_run.base = run[0].base;
            tape_run_add(&whole_run);
        } else          /* (rows_run said no constant comes between them: a record a row, as ever) */
            for (int i = 0; i < rows; i++) {
                TapeRun r = run[i];
                r.kind = TAPE_RUN_ELEMWISE, r.op = (uint8_t)op, r.n = (uint32_t)cols;
                tape_run_add(&r);
            }
    }
    if (seq) s->fresh = run[0].base;
    err_scratch_free(run);
    storage_set_shape(s, 2, rows, cols);
    *out = obj_val(V_ARR, s);
    return 1;
}

/* One factor of a product run: its len elements (a plain array or a
 * view of numbers) as a kind (tape.h: NONE when nothing is recorded, SEQ
 * when the entries are consecutive and none a constant, else LIST) and
 * the first id of a SEQ. 0 if it cannot be a factor of a run. */
static int product_factor(Value x, int len, uint8_t *kind, uint32_t *first)
{
    if (x.t != V_ARR && x.t != V_VIEW) return 0;
    const Storage *st = storage_of(x);
    value_known_check(st);
    if (st->known == KNOWN_CONSTS) {    /* numbers, none recorded (llsq's P): no scan */
        *kind = TAPE_RUN_NONE;
        *first = 0;
        return 1;
    }
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
    uint32_t t = 0;
    for (; t + 4 <= len; t += 4) {      /* four rows of Y a pass: the same additions in the same order */
        const double *restrict y0 = Y + (size_t)t * n, *restrict y1 = y0 + n, *restrict y2 = y1 + n, *restrict y3 = y2 + n;
        double v0 = x[t], v1 = x[t + 1], v2 = x[t + 2], v3 = x[t + 3];
        for (uint32_t j = 0; j < n; j++) {
            double s = out[j];
            s += v0 * y0[j];
            s += v1 * y1[j];
            s += v2 * y2[j];
            s += v3 * y3[j];
            out[j] = s;
        }
    }
    for (; t < len; t++) {
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

/* Element (i, j)'s k pairs when both factors are runs: pair t is
 * (a + t, b + t * n), written as one 64-bit word a pair (a little-endian
 * word's low half is the first id; ids stay below 2^32, so adding the
 * step never carries into the high half), in a loop the compiler
 * vectorises. */
typedef uint64_t pair_word __attribute__((aligned(4), may_alias));
static RUN_VECTORISE void pair_ids(uint32_t *pairs, uint32_t a, uint32_t b, uint32_t n, uint32_t k)
{
    pair_word *w = (pair_word *)pairs;
    uint64_t at = (uint64_t)b << 32 | a, step = (uint64_t)n << 32 | 1;
    _Pragma("GCC unroll 4")
    for (uint32_t t = 0; t < k; t++, at += step) w[t] = at;
}

/* Row i's pairs differ from row 0's only in A's ids (B's column j is
 * every row's): row 0's pairs as words (B's id high, A's low: a run's
 * ids, or 0 for a LIST's, which each row fills in), made once, so that a
 * row is one vectorised pass over them, not k n stores with strides
 * (gmm's X1 @ qmat(j): a constant run times a triangular LIST, ~14
 * instructions a pair before). NULL where a word is not two ids
 * (big-endian) or the first row is all the product has. */
static RUN_VECTORISE pair_word *product_pair_template(const uint32_t *first, uint32_t *const *fid, int ra_run, int rb_run, uint32_t k, uint32_t n)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (ra_run && rb_run) return NULL;     /* pair_ids writes them with no template */
    pair_word *w = err_scratch_uninit(sizeof(pair_word) * (size_t)k * n);
    for (uint32_t j = 0; j < n; j++)
        for (uint32_t t = 0; t < k; t++) {
            uint64_t b = rb_run ? first[1] + t * n + j : fid[1][(size_t)t * n + j];
            w[(size_t)j * k + t] = b << 32 | (ra_run ? first[0] + t : 0);
        }
    return w;
#else
    (void)first, (void)fid, (void)ra_run, (void)rb_run, (void)k, (void)n;
    return NULL;
#endif
}

/* A row's pairs from the template when A is a run: A's ids moved on by
 * `by` (the low halves: ids stay below 2^32, nothing carries). */
static RUN_VECTORISE void pairs_from_template(uint32_t *pairs, const pair_word *tmpl, uint32_t by, uint32_t count)
{
    pair_word *w = (pair_word *)pairs;
    for (uint32_t q = 0; q < count; q++) w[q] = tmpl[q] + by;
}

/* A row's pairs from the template when A is a LIST: its row's ids ra
 * (k of them) in every column's pairs. */
static RUN_VECTORISE void pairs_with_row(uint32_t *pairs, const pair_word *tmpl, const uint32_t *ra, uint32_t k, uint32_t n)
{
    pair_word *w = (pair_word *)pairs;
    for (uint32_t j = 0; j < n; j++, w += k, tmpl += k)
        for (uint32_t t = 0; t < k; t++) w[t] = tmpl[t] | ra[t];
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
    if (!eval_fast_paths || !G->tape.recording || G->num.backend != BK_F64 || k < 1 || m * n < 1) return 0;
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
            first[s] = run_push_consts(run_elems(x[s]), len[s]);
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
    int seq = 1;     /* the rows' dot entries one after another: r is a run (Storage.fresh) */
    int ra_run = kind[0] != TAPE_RUN_LIST, rb_run = kind[1] != TAPE_RUN_LIST;
    pair_word *tmpl = product_pair_template(first, fid, ra_run, rb_run, (uint32_t)k, (uint32_t)n);
    for (int i = 0; i < m; i++) {
        /* each sum from 0, t = 0, 1, ... (product_element's order) */
        dot_cols(fv[0] + (size_t)i * k, fv[1], (uint32_t)k, (uint32_t)n, row);
        uint32_t off, *pairs = tape_rec_operands(2 * (uint32_t)k * (uint32_t)n, &off);
        if (tmpl) {
            if (ra_run) pairs_from_template(pairs, tmpl, (uint32_t)(i * k), (uint32_t)k * (uint32_t)n);
            else pairs_with_row(pairs, tmpl, fid[0] + (size_t)i * k, (uint32_t)k, (uint32_t)n);
            uint32_t id = tape_rec_dot_run(off, (uint32_t)k, (uint32_t)n, row);
            if (i == 0) run.base = id;
            seq &= id == run.base + (uint32_t)(i * n);
            for (int j = 0; j < n; j++) out[(long)i * n + j] = num_rec(row[j], id + (uint32_t)j);
            continue;
        }
        /* element (i, j)'s pairs: A's (i, t) and B's (t, j), t = 0 .. k - 1;
         * a run's ids are its first + the element's place */
        const uint32_t *ra = ra_run ? NULL : fid[0] + (size_t)i * k;
        uint32_t a0 = first[0] + (uint32_t)(i * k);
        for (int j = 0; j < n; j++, pairs += 2 * k) {
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
            if (ra_run && rb_run) {         /* both runs: pair t as one word, a0 + t low, B's id high */
                pair_ids(pairs, a0, first[1] + (uint32_t)j, (uint32_t)n, (uint32_t)k);
                continue;
            }
#endif
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
        seq &= id == run.base + (uint32_t)(i * n);
        for (int j = 0; j < n; j++) out[(long)i * n + j] = num_rec(row[j], id + (uint32_t)j);
    }
    /* r is new (mat_product's): its elements are the run's entries, in
     * order, none a constant, so a run reading r whole needs no scan */
    if (seq) AS_ARR(r)->fresh = run.base;
    err_scratch_free(row);
    if (tmpl) err_scratch_free(tmpl);
    for (int s = 0; s < 2; s++)
        if (scratch[s]) err_scratch_free(scratch[s]);
    tape_run_add(&run);
    return 1;
}
