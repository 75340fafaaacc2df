/* jacobian.c: the whole derivative of a function from n numbers to m
 * (SPEC "Derivatives", the `jacobian` bullet).
 *
 * jacobian(f)(x) is the m x n matrix J. Forward mode (one jvp per column)
 * when n <= m, reverse mode otherwise: f is recorded once on fresh copies
 * of x (as grad records it) and swept once per output, each row of J
 * being grad of that output. hessian(f)(x) is jacobian(grad(f)) by forward
 * mode (forward over reverse), made exactly symmetric. vjp(f, x, u) is one
 * reverse sweep from u . f(x).
 *
 * Sparse requests. The pattern is found from the tape: f is recorded once
 * on fresh copies of x and the entries recorded since are walked forward
 * with index sets (which inputs each entry depends on). That walk is one
 * pass over what f recorded, needs no new kind of value, sees through
 * every entry the tape knows (sums, dots, derivative entries, checkpointed
 * loops, conservatively), and in the same pass gives the Hessian's
 * nonlinear interactions: an entry whose second derivative is not 0
 * couples the index sets of its operands (mul: a's with b's; sin: a's
 * with a's). Entries with zero derivative (sign, floor) depend on
 * nothing. The pattern is what the recorded path reads: a comparison on a
 * value that depends on x (an if, a while, and/or) could take another path
 * at another x, so a sparse request that meets one is an error, unless
 * asked to fall back to the dense passes ("dense-fallback").
 *
 * Jacobian: columns that share no row get one colour (greedy distance-2
 * colouring), one forward pass (jvp) per colour with the sum of the
 * colour's unit vectors, and J[i][j] is row i of the pass of j's colour.
 * Hessian: a star colouring (neighbours differ, and every path of four
 * vertices has three colours), which uses the symmetry: H[i][j] is read
 * from row i of j's pass when j is the only neighbour of i in its colour,
 * else from row j of i's pass. An arrowhead needs 2 passes, where
 * columns sharing no row would need n. Each pass is jvp of grad(f).
 *
 * The forward passes go through jac_forward_columns (J V for an n x k V,
 * fwd.c's chunked forward mode), or, when nothing records them, over the
 * pattern's own recording (tape_columns). A Jacobian's rows are coloured
 * too (rows sharing no column), and when that takes fewer colours the
 * passes are reverse sweeps over that recording (rev_rows), one a colour.
 *
 * The pattern is kept by rows (Lists), never as an m x n array, so with
 * "triplets" the result is the pattern's entries as a 3 x nnz matrix (rows,
 * columns, values, in row-major order) and a Jacobian far larger than a
 * matrix may be still comes out (GradBench's ba: 95529 x 477645). */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include "jacobian.h"
#include "ad.h"
#include "arith.h"
#include "builtins.h"
#include "eval.h"
#include "error.h"
#include "fwd.h"
#include "dual.h"
#include "kinks.h"
#include "matrix.h"
#include "tape.h"
#include "fixtape.h"
#include "state.h"
#include "rules.h"

enum { JM_AUTO, JM_FWD, JM_REV, JM_SPARSE };
#define JM_FALLBACK 16     /* with JM_SPARSE: dense passes when the pattern may change */
#define JM_TRIPLETS 32     /* with JM_SPARSE: the nonzeros as (row, column, value) triplets */

/* ------------------------------------------------------------ shapes */

static int n_of(Value x) { return is_seq(x) ? seq_len(x) : 1; }

static void check_point(Value x, const char *fname)
{
    if (!IS_NUMBER(x) && !is_seq(x))
        err_raise("%s: x must be a number or an array of numbers, got %s", fname, value_type_name(x));
    if (is_seq(x)) value_seq_check_numbers(x, fname);
}

/* The outputs of f as a count m, checking they are numbers. */
static int m_of(Value r, const char *fname)
{
    if (IS_NUMBER(r)) return 1;
    if (is_seq(r)) {
        int m = seq_len(r);
        for (int i = 0; i < m; i++)
            if (!IS_NUMBER(*seq_at(r, i))) {
                const char *what = value_type_name(*seq_at(r, i));
                v_release(r);
                err_raise("%s: the function must return a number or an array of numbers, but element %d of its result is %s",
                          fname, i, what);
            }
        return m;
    }
    const char *what = value_type_name(r);   /* before the release: a matrix is read */
    v_release(r);
    err_raise("%s: the function must return a number or an array of numbers, got %s", fname, what);
}

/* Element i of a number (i = 0) or an array, retained. */
static Value elem(Value r, int i)
{
    Value e = IS_NUMBER(r) ? r : *seq_at(r, i);
    v_retain(e);
    return e;
}

static void put(Value J, int i, int j, Value e)   /* takes e */
{
    Storage *s = AS_ARR(J);
    Value *slot = &s->v[(long)i * s->cols + j];
    storage_dirty(s);
    v_release(*slot);
    *slot = e;
}

/* ------------------------------------------------------ forward mode */

/* J V for V an n x k matrix (columns: directions), as an m x k matrix:
 * fwd.c's chunked forward mode runs f once for every FWD_CHUNK columns,
 * each number carrying that many tangents. */
static Value jac_forward_columns(Value f, Value x, Value V)
{
    int k = AS_ARR(V)->cols;
    Value J = fwd_jvp_chunk(f, x, V);
    G->jac.fwd_passes += (uint64_t)(k + FWD_CHUNK - 1) / FWD_CHUNK;
    G->jac.fwd_directions += (uint64_t)k;
    return J;
}

static Value identity_seeds(int n)
{
    Value I = mat_new(n, n);
    for (int j = 0; j < n; j++) AS_ARR(I)->v[(long)j * n + j] = num_val(num_round(1));
    return I;
}

/* f at x by plain evaluation, for its output count when no pass runs (n = 0). */
static int outputs_at(Value f, Value x, const char *fname)
{
    v_retain(x);
    Value r = eval_call_value(f, 1, &x);
    v_release(x);
    int m = m_of(r, fname);
    v_release(r);
    return m;
}

static Value jacobian_forward(Value f, Value x)
{
    int n = n_of(x);
    if (n == 0) return mat_new(outputs_at(f, x, "jacobian"), 0);
    Value I = identity_seeds(n);
    Value J = jac_forward_columns(f, x, I);
    v_release(I);
    return J;
}

/* ------------------------------------------------------ reverse mode */

/* f recorded on fresh copies of x (*xp), as grad records it; its result. */
static Value record_at(Value f, Value x, Value *xp, const char *fname)
{
    int saved = rec_on();
    G->ad.nesting++;
    *xp = ad_fresh_point(x);
    v_retain(*xp);
    Value arg = *xp;
    Value r = eval_call_value(f, 1, &arg);
    v_release(arg);
    rec_restore(saved);
    G->ad.nesting--;
    G->jac.recordings++;
    Value keep = r;
    v_retain(keep);
    m_of(r, fname);      /* releases r on an error */
    v_release(keep);
    return r;
}

/* The rows by reverse sweeps of f recorded once; auto: forward instead
 * when that recording shows n <= m (the recording is one pass more). */
static Value jacobian_reverse(Value f, Value x, int automatic)
{
    Value xp, r = record_at(f, x, &xp, "jacobian");
    int n = n_of(x), m = m_of(r, "jacobian");
    if (automatic && n <= m) {
        v_release(r);
        v_release(xp);
        return jacobian_forward(f, x);
    }
    Value J = mat_new(m, n);
    kink_begin();
    for (int i = 0; i < m; i++) {
        Value ri = IS_NUMBER(r) ? r : *seq_at(r, i);
        Value g = ad_gradient_at(ri, xp);
        G->jac.rev_sweeps++;
        for (int j = 0; j < n; j++) put(J, i, j, elem(g, j));
        v_release(g);
    }
    kink_end();
    v_release(r);
    v_release(xp);
    return J;
}

/* -------------------------------------------------------- the pattern */

/* Index sets over the entries f recorded, [lo, top]: set(e) lists the
 * inputs e depends on (unsorted, each once), in a pool; entries with one
 * contributing operand share its list. Every buffer is scratch (error.h):
 * an error or Ctrl-C during the walk frees them. */
typedef struct {
    uint32_t lo, top;
    int n;
    uint32_t *off, *len;       /* by e - lo */
    int32_t *input;            /* by e - lo: which input, -1 none */
    uint32_t *pool;
    size_t npool, cap;
    uint32_t *stamp, now;      /* by input */
    uint8_t *cone;             /* by e - lo: reaches the output (Hessian only) */
    uint8_t *hess;             /* n x n bits, NULL: no interactions wanted */
    uint32_t *opnd, nopnd, capopnd;   /* an entry's operands */
} Sets;

static void gather(uint32_t id, void *ud)
{
    Sets *s = ud;
    if (s->nopnd == s->capopnd) {
        s->capopnd = s->capopnd ? 2 * s->capopnd : 16;
        s->opnd = err_scratch_realloc(s->opnd, sizeof(uint32_t) * s->capopnd);
    }
    s->opnd[s->nopnd++] = id;
}

/* An entry's operands as the index sets see them: a fixed point's result
 * (fixtape.h) reads its stand-in on the tape, and through the implicit
 * function theorem every one of g's results in its group (which read the
 * stand-ins and whatever g captured): without those, x* would depend on
 * nothing and the pattern miss it. */
static void gather_operands(uint32_t e, int op, Sets *s)
{
    tape_each_operand(e, gather, s);
    if (op == OP_FIXPT) {
        const FixSide *f = fixtape_side(e);
        for (uint32_t k = f->n; k < 2 * f->n; k++)
            if (f->ids[k]) gather(f->ids[k], s);
    }
}

static uint32_t set_len(const Sets *s, uint32_t id) { return id >= s->lo && id <= s->top ? s->len[id - s->lo] : 0; }
static const uint32_t *set_at(const Sets *s, uint32_t id) { return s->pool + s->off[id - s->lo]; }

static void pool_push(Sets *s, uint32_t v)
{
    if (s->npool == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 1024;
        s->pool = err_scratch_realloc(s->pool, sizeof(uint32_t) * s->cap);
    }
    s->pool[s->npool++] = v;
}

/* set(e) = the union of its operands' sets (s->opnd). When the largest
 * of them holds all the others (x * y of one observation's numbers, the
 * common case), e shares its list instead of copying it. */
static void union_of(Sets *s, uint32_t e)
{
    uint32_t k = e - s->lo, nonempty = 0, which = 0, big = 0;
    for (uint32_t i = 0; i < s->nopnd; i++) {
        uint32_t l = set_len(s, s->opnd[i]);
        if (l) nonempty++;
        if (l > big) big = l, which = s->opnd[i];
    }
    if (nonempty <= 1) {
        s->off[k] = nonempty ? s->off[which - s->lo] : 0;
        s->len[k] = nonempty ? s->len[which - s->lo] : 0;
        return;
    }
    s->now++;
    for (uint32_t t = 0; t < big; t++) s->stamp[set_at(s, which)[t]] = s->now;
    int grows = 0;
    for (uint32_t i = 0; i < s->nopnd && !grows; i++) {
        uint32_t id = s->opnd[i], l = set_len(s, id);
        for (uint32_t t = 0; t < l; t++)
            if (s->stamp[set_at(s, id)[t]] != s->now) {
                grows = 1;
                break;
            }
    }
    if (!grows) {
        s->off[k] = s->off[which - s->lo];
        s->len[k] = big;
        return;
    }
    size_t start = s->npool;                   /* the largest set (stamped), then what the others add */
    for (uint32_t t = 0; t < big; t++) pool_push(s, set_at(s, which)[t]);
    for (uint32_t i = 0; i < s->nopnd; i++) {
        uint32_t id = s->opnd[i], l = set_len(s, id);
        for (uint32_t t = 0; t < l; t++) {
            uint32_t j = set_at(s, id)[t];     /* re-read: the pool may move */
            if (s->stamp[j] != s->now) {
                s->stamp[j] = s->now;
                pool_push(s, j);
            }
        }
    }
    s->off[k] = (uint32_t)start;
    s->len[k] = (uint32_t)(s->npool - start);
}

static void bit_set(uint8_t *b, long i) { b[i >> 3] |= (uint8_t)(1u << (i & 7)); }
static int  bit_get(const uint8_t *b, long i) { return b[i >> 3] >> (i & 7) & 1; }

/* Every pair of set(a) x set(b), both ways. */
static void couple(Sets *s, uint32_t a, uint32_t b)
{
    uint32_t la = set_len(s, a), lb = set_len(s, b);
    if (!s->hess || !la || !lb) return;
    const uint32_t *A = set_at(s, a), *B = set_at(s, b);
    for (uint32_t i = 0; i < la; i++)
        for (uint32_t j = 0; j < lb; j++) {
            bit_set(s->hess, (long)A[i] * s->n + B[j]);
            bit_set(s->hess, (long)B[j] * s->n + A[i]);
        }
}

static void entry_sets(Sets *s, uint32_t e)
{
    uint32_t k = e - s->lo;
    if (s->input[k] >= 0) {
        s->off[k] = (uint32_t)s->npool;
        s->len[k] = 1;
        pool_push(s, (uint32_t)s->input[k]);
        return;
    }
    if (s->cone && !s->cone[k]) return;
    int op = tape_opcode(e);
    s->nopnd = 0;
    OPS_NAMED(OPS_STRUCTURAL, 10);
    switch (op) {
    case OP_CONST: case OP_LEAF: case OP_SIGN: case OP_FLOOR:   /* no derivative */
        return;
    case OP_LSE:         /* its Hessian couples every operand with every one */
        tape_each_operand(e, gather, s);
        union_of(s, e);
        couple(s, e, e);
        return;
    case OP_DOT: {
        uint32_t np;
        const uint32_t *p = tape_pairs(e, &np);
        for (uint32_t j = 0; j < np; j++) couple(s, p[2 * j], p[2 * j + 1]);
        tape_each_operand(e, gather, s);
        break;
    }
    case OP_SUM:
        tape_each_operand(e, gather, s);
        break;
    case OP_DERIV: case OP_CKPT: case OP_CKOUT: case OP_FIXIN: case OP_FIXPT:
        /* a derivative, a loop, a fixed point: every operand with every operand */
        gather_operands(e, op, s);
        union_of(s, e);
        couple(s, e, e);
        return;
    default:             /* UNARY and BINARY */
        tape_each_operand(e, gather, s);
        break;
    }
    union_of(s, e);
    if (op == OP_SUM || op == OP_DOT || (num_op_flags[op] & OPF_LINEAR)) return;
    switch (op) {
    case OP_ABS: case OP_MIN: case OP_MAX: case OP_MOD:          /* piecewise linear */
        return;
    case OP_MUL: case OP_MUL0:
        couple(s, tape_a(e), tape_b(e));
        return;
    case OP_DIV:
        couple(s, tape_a(e), tape_b(e));
        couple(s, tape_b(e), tape_b(e));
        return;
    default:
        couple(s, e, e);     /* a nonlinear op: its operands' inputs with each other */
    }
}

static void sets_free(Sets *s)
{
    err_scratch_free(s->pool);
    err_scratch_free(s->opnd);
    err_scratch_free(s->off);
    err_scratch_free(s->len);
    err_scratch_free(s->input);
    err_scratch_free(s->stamp);
    err_scratch_free(s->cone);
    err_scratch_free(s->hess);
}

static uint32_t id_of(Value v) { return v_innermost(&v)->id; }

/* The sets of every entry since xp's first, up to the outputs' last. */
static void sets_build(Sets *s, Value xp, Value r, int hessian)
{
    memset(s, 0, sizeof *s);
    int n = n_of(xp), m = IS_NUMBER(r) ? 1 : seq_len(r);
    s->n = n;
    s->lo = UINT32_MAX;
    for (int j = 0; j < n; j++) {
        uint32_t id = id_of(is_seq(xp) ? *seq_at(xp, j) : xp);
        if (id && id < s->lo) s->lo = id;
    }
    s->top = 0;
    for (int i = 0; i < m; i++) {
        uint32_t id = id_of(IS_NUMBER(r) ? r : *seq_at(r, i));
        if (id > s->top) s->top = id;
    }
    if (s->lo == UINT32_MAX || s->top < s->lo) {     /* nothing depends on x */
        s->lo = 1;
        s->top = 0;
    }
    size_t len = (size_t)(s->top - s->lo + 1);
    s->off = err_scratch(sizeof(uint32_t) * (len ? len : 1));
    s->len = err_scratch(sizeof(uint32_t) * (len ? len : 1));
    s->input = err_scratch(sizeof(int32_t) * (len ? len : 1));
    s->stamp = err_scratch(sizeof(uint32_t) * (size_t)(n ? n : 1));
    /* the pool's room up front, a few ids an entry: a large block is mapped, not touched, and grows in place */
    s->cap = len < ((size_t)1 << 25) ? 8 * len + 1024 : (size_t)1 << 28;
    s->pool = err_scratch_uninit(sizeof(uint32_t) * s->cap);   /* scratch: an error or Ctrl-C frees it */
    for (size_t k = 0; k < len; k++) s->input[k] = -1;
    for (int j = 0; j < n; j++) {
        uint32_t id = id_of(is_seq(xp) ? *seq_at(xp, j) : xp);
        if (id >= s->lo && id <= s->top) s->input[id - s->lo] = j;
    }
    if (hessian) {
        s->hess = err_scratch(((size_t)n * n + 7) / 8 + 1);
        s->cone = err_scratch(len ? len : 1);
        if (len) {
            uint32_t top = id_of(r);
            if (top >= s->lo) s->cone[top - s->lo] = 1;
            for (uint32_t e = s->top + 1; e-- > s->lo;) {
                if (!s->cone[e - s->lo] || s->input[e - s->lo] >= 0) continue;
                s->nopnd = 0;
                gather_operands(e, tape_opcode(e), s);
                for (uint32_t t = 0; t < s->nopnd; t++)
                    if (s->opnd[t] >= s->lo && s->opnd[t] <= s->top) s->cone[s->opnd[t] - s->lo] = 1;
            }
        }
    }
    for (uint32_t e = s->lo; e <= s->top && len; e++) {
        entry_sets(s, e);
        if ((e & 0xfff) == 0) err_check_interrupt();
    }
}

/* A comparison on a value that depends on x, seen while recording (from
 * the list's entry base on): its place, or NULL. */
static const JacBranch *branch_on_x(const Sets *s, uint32_t base)
{
    for (uint32_t b = base; b < G->jac.nbranches; b++) {
        const JacBranch *br = &G->jac.branches[b];
        if (set_len(s, br->ida) || set_len(s, br->idb)) return br;
    }
    return NULL;
}

void jac_note_branch(const Node *n, const Chunk *c, uint32_t ida, uint32_t idb)
{
    JacState *j = &G->jac;
    if (j->nbranches == j->capbranches) {
        j->capbranches = j->capbranches ? 2 * j->capbranches : 16;
        j->branches = err_realloc(j->branches, sizeof(JacBranch) * j->capbranches);
    }
    j->branches[j->nbranches++] = (JacBranch){ n, c, ida, idb };
}

/* f recorded at x for its pattern, watching its comparisons: they are
 * G->jac's list from *base on. A sparse request inside f (nested) adds to
 * the same list, which the outer one reads too; the outermost frees it
 * (jac_abandon), and so does an error (abandon_all in eval.c). */
static Value record_watching(Value f, Value x, Value *xp, const char *fname, uint32_t *base)
{
    *base = G->jac.nbranches;
    G->jac.watching++;
    G->kinks.branch_hook = jac_note_branch;
    Value r = record_at(f, x, xp, fname);
    if (!--G->jac.watching) G->kinks.branch_hook = NULL;
    return r;
}

/* The list is done with: freed unless an outer request still records. */
static void branches_done(void)
{
    if (!G->jac.watching) jac_abandon();
}

/* ------------------------------------------------------------ colouring */

/* A pattern by rows, compressed: row a's columns, ascending, are
 * idx[start[a]] .. idx[start[a + 1] - 1]. A Jacobian's comes straight from
 * its outputs' index sets, so no m x n array is ever made for it. */
typedef struct { long *start; int *idx; } Lists;

static void lists_free(Lists L)
{
    err_scratch_free(L.start);
    err_scratch_free(L.idx);
}

/* The rows of a bit pattern (rows x cols), without the diagonal if offdiag. */
static Lists lists_of_bits(const uint8_t *bits, int rows, int cols, int offdiag)
{
    Lists L;
    L.start = err_scratch(sizeof(long) * (size_t)(rows + 1));
    long nnz = 0;
    for (int a = 0; a < rows; a++) {
        L.start[a] = nnz;
        for (int b = 0; b < cols; b++) nnz += bit_get(bits, (long)a * cols + b) && !(offdiag && a == b);
    }
    L.start[rows] = nnz;
    L.idx = err_scratch(sizeof(int) * (size_t)(nnz ? nnz : 1));
    long k = 0;
    for (int a = 0; a < rows; a++)
        for (int b = 0; b < cols; b++)
            if (bit_get(bits, (long)a * cols + b) && !(offdiag && a == b)) L.idx[k++] = b;
    return L;
}

/* The same pattern by columns: each column's rows, ascending. */
static Lists lists_transpose(const Lists *L, int rows, int cols)
{
    Lists T;
    long nnz = L->start[rows];
    T.start = err_scratch(sizeof(long) * (size_t)(cols + 1));
    T.idx = err_scratch(sizeof(int) * (size_t)(nnz ? nnz : 1));
    for (long t = 0; t < nnz; t++) T.start[L->idx[t] + 1]++;
    for (int b = 0; b < cols; b++) T.start[b + 1] += T.start[b];
    long *fill = err_scratch_uninit(sizeof(long) * (size_t)(cols + 1));
    memcpy(fill, T.start, sizeof(long) * (size_t)(cols + 1));
    for (int a = 0; a < rows; a++)
        for (long t = L->start[a]; t < L->start[a + 1]; t++) T.idx[fill[L->idx[t]]++] = a;
    err_scratch_free(fill);
    return T;
}

/* Columns sharing no row get one colour (greedy, in column order):
 * returns the number of colours. */
static int colour_columns(const Lists *byrow, int rows, int cols, int *colour)
{
    Lists bycol = lists_transpose(byrow, rows, cols);
    int *forbid = err_scratch(sizeof(int) * (size_t)(cols + 1)), ncol = 0;
    for (int c = 0; c <= cols; c++) forbid[c] = -1;
    for (int j = 0; j < cols; j++) {
        for (long t = bycol.start[j]; t < bycol.start[j + 1]; t++) {
            int i = bycol.idx[t];
            for (long u = byrow->start[i]; u < byrow->start[i + 1]; u++) {
                int k = byrow->idx[u];
                if (k >= j) break;           /* ascending */
                forbid[colour[k]] = j;
            }
        }
        int c = 0;
        while (forbid[c] == j) c++;
        colour[j] = c;
        if (c + 1 > ncol) ncol = c + 1;
    }
    err_scratch_free(forbid);
    lists_free(bycol);
    return ncol;
}

/* In vertex i's neighbourhood, the only one of j's colour: entry (i, j)
 * is row i of j's pass. */
static int only_in_colour(const Lists *adj, const int *colour, int i, int j)
{
    for (long t = adj->start[i]; t < adj->start[i + 1]; t++) {
        int k = adj->idx[t];
        if (k != j && colour[k] == colour[j]) return 0;
    }
    return 1;
}

/* A star colouring of the graph of the Hessian's off-diagonal pattern
 * (greedy: no colour of a neighbour, and none that would make a path of
 * four vertices two-coloured), checked: every entry must be readable from
 * one of its two passes; returns the colours, or 0 if the check failed. */
static int colour_star(const Lists *adj, int n, int *colour)
{
    int *forbid = err_scratch(sizeof(int) * (size_t)(n + 1)), ncol = 0;
    for (int c = 0; c <= n; c++) forbid[c] = -1;
    for (int v = 0; v < n; v++) colour[v] = -1;
    for (int v = 0; v < n; v++) {
        for (long t = adj->start[v]; t < adj->start[v + 1]; t++) {
            int w = adj->idx[t];
            if (colour[w] >= 0) forbid[colour[w]] = v;
        }
        for (long t = adj->start[v]; t < adj->start[v + 1]; t++) {
            int w = adj->idx[t];
            for (long u = adj->start[w]; u < adj->start[w + 1]; u++) {
                int x = adj->idx[u];
                if (x == v || colour[x] < 0) continue;
                if (colour[w] < 0) {
                    forbid[colour[x]] = v;      /* v - w - x with w uncoloured: x's colour would repeat v's across w */
                    continue;
                }
                for (long q = adj->start[x]; q < adj->start[x + 1]; q++) {
                    int y = adj->idx[q];
                    if (y != w && colour[y] == colour[w]) {    /* v - w - x - y would be two-coloured */
                        forbid[colour[x]] = v;
                        break;
                    }
                }
            }
        }
        int c = 0;
        while (forbid[c] == v) c++;
        colour[v] = c;
        if (c + 1 > ncol) ncol = c + 1;
    }
    err_scratch_free(forbid);
    for (int i = 0; i < n; i++)
        for (long t = adj->start[i]; t < adj->start[i + 1]; t++) {
            int j = adj->idx[t];
            if (colour[i] == colour[j]) return 0;
            if (!only_in_colour(adj, colour, i, j) && !only_in_colour(adj, colour, j, i)) return 0;
        }
    return ncol;
}

/* The seeds of a colouring: n x p, column c the sum of c's unit vectors. */
static Value seeds_of(const int *colour, int n, int p)
{
    Value V = mat_new(n, p);
    for (int j = 0; j < n; j++) AS_ARR(V)->v[(long)j * p + colour[j]] = num_val(num_round(1));
    return V;
}

/* ----------------------------------------------------------- sparse */

static _Noreturn void branch_error(const JacBranch *br, const char *fname)
{
    const Node *n = br->node;
    char where[128] = "?";
    if (n && br->chunk) snprintf(where, sizeof where, "%s:%d:%d", br->chunk->filename, n->line,
                                 err_display_col(br->chunk, n->line, n->col));
    err_raise("%s(f, \"sparse\"): the function compares a value that depends on x (at %s), so its pattern may change "
              "with x and one pattern cannot serve every x; write %s(f) for the dense one, or %s(f, \"sparse\", "
              "\"dense-fallback\") to fall back to it when this happens", fname, where, fname, fname);
}

static int int_cmp(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* The pattern of f at x by rows (m x n; n x n for the Hessian), and *m.
 * *where: a comparison on x seen while recording (the pattern may change
 * with x), or NULL. A Jacobian's rows are its outputs' index sets, sorted;
 * a Hessian's come from the n x n bits of its interactions. */
static Lists pattern_at(Value f, Value x, int hessian, int *m, const JacBranch **where, const char *fname, Value *keep)
{
    uint32_t base;
    Value xp, r = record_watching(f, x, &xp, fname, &base);
    *m = m_of(r, fname);
    if (hessian && !IS_NUMBER(r)) {
        const char *what = mat_describe(r);
        v_release(r);
        v_release(xp);
        err_raise("hessian: the function must return a number, got %s (a function of m outputs has m Hessians: "
                  "take them one by one)", what);
    }
    int n = n_of(x);
    Sets s;
    sets_build(&s, xp, r, hessian);
    *where = branch_on_x(&s, base);     /* G->jac's list: valid until branches_done */
    Lists L;
    if (hessian) {
        for (int j = 0; j < n; j++)     /* the diagonal: always computed, cheap to read */
            if (set_len(&s, id_of(r))) bit_set(s.hess, (long)j * n + j);
        L = lists_of_bits(s.hess, n, n, 0);
    } else {
        L.start = err_scratch(sizeof(long) * (size_t)(*m + 1));
        long nnz = 0;
        for (int i = 0; i < *m; i++) {
            L.start[i] = nnz;
            nnz += set_len(&s, id_of(IS_NUMBER(r) ? r : *seq_at(r, i)));
        }
        L.start[*m] = nnz;
        L.idx = err_scratch(sizeof(int) * (size_t)(nnz ? nnz : 1));
        for (int i = 0; i < *m; i++) {
            uint32_t id = id_of(IS_NUMBER(r) ? r : *seq_at(r, i)), l = set_len(&s, id);
            int *row = L.idx + L.start[i];
            for (uint32_t t = 0; t < l; t++) row[t] = (int)set_at(&s, id)[t];
            qsort(row, l, sizeof(int), int_cmp);
        }
    }
    sets_free(&s);
    if (keep) {          /* the recording, for tape_columns: keep[0] the result, keep[1] the fresh x */
        keep[0] = r;
        keep[1] = xp;
        return L;
    }
    v_release(r);
    v_release(xp);
    return L;
}

/* ------------------------------------------- forward over the recording */

/* J V for the seeds of a colouring (column c of V: the sum of colour c's
 * unit vectors), from the entries f recorded on fresh copies xp of x, its
 * result r: each entry's tangents, one lane a colour, are its operands'
 * times its partials (the rule table the reverse sweep reads; a zero
 * partial passes nothing). This is forward mode over the tape, as ADOL-C's
 * forward drivers run it: one tight loop an entry instead of running f
 * again on dual numbers, which for an f of array operations costs a heap
 * dual per element and tangent. The lanes go in blocks whose tangents take
 * at most TAPE_LANES_BYTES. It serves only where the plain numbers are the
 * whole answer: nothing records the passes (nograd, or a function that
 * records nothing), no jvp is running around it, float64, and every entry
 * f recorded is of the kinds this loop knows (no derivative, checkpointed
 * loop or fixed point inside): otherwise nil, and f runs on duals. */
#define TAPE_LANES_BYTES ((size_t)128 << 20)

static uint32_t id_of(Value v);

static Value tape_columns(Value xp, Value r, int m, int n, const int *colour, int p)
{
    static int float64 = -2;
    if (float64 == -2) float64 = num_backend_lookup("float64");
    if (G->tape.recording || dual_depth() || G->num.backend != float64 || p < 1) return nil_val();
    uint32_t lo = UINT32_MAX, top = 0;
    for (int j = 0; j < n; j++) {
        Value v = is_seq(xp) ? *seq_at(xp, j) : xp;
        if (v.t != V_NUM) return nil_val();
        if (v.id && v.id < lo) lo = v.id;
    }
    for (int i = 0; i < m; i++) {
        Value v = IS_NUMBER(r) ? r : *seq_at(r, i);
        if (v.t != V_NUM) return nil_val();
        if (v.id > top) top = v.id;
    }
    if (lo == UINT32_MAX || top < lo) return nil_val();
    for (uint32_t e = lo; e <= top; e++)
        if (!num_op_cone[tape_opcode(e)]) return nil_val();
    size_t len = (size_t)(top - lo + 1);
    int32_t *input = err_scratch_uninit(sizeof(int32_t) * len);
    for (size_t k = 0; k < len; k++) input[k] = -1;
    for (int j = 0; j < n; j++) {
        uint32_t id = (is_seq(xp) ? *seq_at(xp, j) : xp).id;
        if (id >= lo) input[id - lo] = j;
    }
    int K = (int)(TAPE_LANES_BYTES / (sizeof(double) * len));
    if (K < 1) K = 1;
    if (K > p) K = p;
    double *tau = err_scratch_uninit(sizeof(double) * len * (size_t)K);
    double *none = err_scratch(sizeof(double) * (size_t)K);      /* an operand recorded before x: no tangent */
    Value B = mat_new(m, p);
    for (int c0 = 0; c0 < p; c0 += K) {
        int kc = p - c0 < K ? p - c0 : K;
#define TAU(id) ((id) >= lo ? tau + (size_t)((id) - lo) * kc : none)
        for (uint32_t e = lo; e <= top; e++) {
            if ((e & 0xfffff) == 0) err_check_interrupt();
            double *t = tau + (size_t)(e - lo) * kc;
            int j = input[e - lo], op = tape_opcode(e);
            if (j >= 0 || op == OP_CONST || op == OP_LEAF || op == OP_SUM || op == OP_DOT || op == OP_LSE)
                for (int l = 0; l < kc; l++) t[l] = 0;
            if (j >= 0) {
                if (colour[j] >= c0 && colour[j] < c0 + kc) t[colour[j] - c0] = 1;
                continue;
            }
            OPS_NAMED(OPS_CONE_STRUCTURAL, 5);
            switch (op) {
            case OP_CONST: case OP_LEAF:
                break;
            case OP_LSE: {       /* the softmax (1 / s) e_q, as the steps: (1 / s) sum(e_q tx_q) */
                TapeLse ls = tape_lse(e);
                for (uint32_t q = 0; q < ls.t.n; q++) {
                    if (ls.e[q] == 0) continue;
                    const double *tx = TAU(tape_term(ls.t, q));
                    for (int l = 0; l < kc; l++)
                        if (tx[l] != 0) t[l] += ls.e[q] * tx[l];
                }
                for (int l = 0; l < kc; l++) t[l] = t[l] != 0 && ls.inv != 0 ? ls.inv * t[l] : 0;
                break;
            }
            case OP_SUM: {
                TapeTerms terms = tape_terms(e);
                for (uint32_t q = 0; q < terms.n; q++) {
                    const double *tx = TAU(tape_term(terms, q));
                    for (int l = 0; l < kc; l++) t[l] += tx[l];
                }
                break;
            }
            case OP_DOT: {
                uint32_t np;
                const uint32_t *pr = tape_pairs(e, &np);
                for (uint32_t q = 0; q < 2 * np; q++) {
                    double pq = tape_val(pr[q ^ 1]);
                    if (pq == 0) continue;
                    const double *tx = TAU(pr[q]);
                    for (int l = 0; l < kc; l++)
                        if (tx[l] != 0) t[l] += pq * tx[l];
                }
                break;
            }
            default: {
                uint32_t x = tape_a(e), y = num_op_arity[op] == 2 ? tape_b(e) : 0;
                const double *tx = TAU(x), *ty = y ? TAU(y) : none;
                double da, db;
                rule_partials_num(op, tape_val(x), tape_val(num_op_arity[op] == 2 ? tape_b(e) : 0), tape_val(e), &da, &db);
                if (num_op_arity[op] != 2) db = 0;
                for (int l = 0; l < kc; l++)
                    t[l] = (da != 0 && tx[l] != 0 ? da * tx[l] : 0) + (db != 0 && ty[l] != 0 ? db * ty[l] : 0);
            }
            }
        }
        for (int i = 0; i < m; i++) {
            uint32_t id = id_of(IS_NUMBER(r) ? r : *seq_at(r, i));
            if (id < lo) continue;
            const double *t = TAU(id);
            for (int l = 0; l < kc; l++) AS_ARR(B)->v[(long)i * p + c0 + l] = num_val(t[l]);
        }
#undef TAU
    }
    err_scratch_free(none);
    err_scratch_free(tau);
    err_scratch_free(input);
    G->jac.fwd_passes += (uint64_t)(p + K - 1) / K;
    G->jac.fwd_directions += (uint64_t)p;
    return B;
}

static Value pattern_matrix(const Lists *L, int m, int n)
{
    Value P = mat_new(m, n);
    for (int i = 0; i < m; i++)
        for (long t = L->start[i]; t < L->start[i + 1]; t++)
            AS_ARR(P)->v[(long)i * n + L->idx[t]] = num_val(num_round(1));
    return P;
}

/* The result's size, checked before any pass runs: an m x n matrix, or 3
 * rows of nnz triplets. */
static void check_size(const char *fname, int rows, int n, long nnz, int triplets)
{
    if (!triplets && (long long)rows * n > INT_MAX)
        err_raise("%s(f, \"sparse\"): the %d x %d matrix is too big (at most %d elements); "
                  "%s(f, \"sparse\", \"triplets\") gives its %ld nonzeros as (row, column, value) triplets",
                  fname, rows, n, INT_MAX, fname, nnz);
    if (triplets && 3LL * nnz > INT_MAX)
        err_raise("%s(f, \"sparse\", \"triplets\"): %ld nonzeros are too many (at most %d)", fname, nnz, INT_MAX / 3);
}

/* The reverse way: rows that share no column get one colour, and one
 * reverse sweep over f's recording (r from the fresh x xp) from the sum of
 * a colour's outputs gives row i of J on i's columns. A q x n matrix: row
 * c the gradient of colour c's sum. */
static Value rev_rows(Value r, Value xp, int m, int n, const int *rcolour, int q)
{
    Value Gm = mat_new(q, n);
    kink_begin();
    for (int c = 0; c < q; c++) {
        int saved = rec_on();
        G->ad.nesting++;
        Value s = r;
        if (IS_NUMBER(r)) v_retain(s);
        else {
            Value u = value_arr_new(m);
            for (int i = 0; i < m; i++)
                if (rcolour[i] == c) AS_ARR(u)->v[i] = num_val(num_round(1));
            s = arith_dot(u, r);
            v_release(u);
        }
        rec_restore(saved);
        G->ad.nesting--;
        Value g = ad_gradient_at(s, xp);
        G->jac.rev_sweeps++;
        for (int j = 0; j < n; j++) put(Gm, c, j, elem(g, j));
        v_release(g);
        v_release(s);
    }
    kink_end();
    return Gm;
}

/* The sparse Jacobian (Hessian) of f at x: the pattern, its colouring, one
 * direction per colour through jac_forward_columns, and each entry read
 * from the pass of its colour. As an m x n matrix, or with triplets the
 * 3 x nnz matrix of the pattern's entries in row-major order: row 0 their
 * rows, row 1 their columns, row 2 their values. With a comparison on x
 * and fallback, every entry is in the pattern and each column its own
 * colour (the dense passes). */
static Value sparse_jacobian(Value f, Value x, int fallback, int triplets, int hessian)
{
    const char *fname = hessian ? "hessian" : "jacobian";
    int n = n_of(x), m;
    const JacBranch *br;
    Value rec[2] = { nil_val(), nil_val() };    /* f's recording, kept for tape_columns (a Jacobian's) */
    Lists pat = pattern_at(f, x, hessian, &m, &br, fname, hessian ? NULL : rec);
    if (br && !fallback) {
        v_release(rec[0]);
        v_release(rec[1]);
        lists_free(pat);
        branch_error(br, fname);     /* the error's unwinding frees the list (jac_abandon) */
    }
    JacBranch keep;
    if (br) {      /* copied out: the passes may run sparse requests of their own */
        keep = *br;
        br = &keep;
    }
    branches_done();
    int rows = hessian ? n : m;
    long nnz = br ? (long)rows * n : pat.start[rows];
    if (triplets ? 3LL * nnz > INT_MAX : (long long)rows * n > INT_MAX) {
        v_release(rec[0]);
        v_release(rec[1]);
    }
    check_size(fname, rows, n, nnz, triplets);
    G->jac.sparse_runs++;
    int *colour = err_scratch(sizeof(int) * (size_t)(n ? n : 1)), p, *rcolour = NULL, q = 0, reverse = 0;
    Lists adj = {0};
    int star = 0;
    if (br) {     /* the dense passes: every column its own colour */
        for (int j = 0; j < n; j++) colour[j] = j;
        p = n;
    } else if (hessian) {
        adj.start = err_scratch(sizeof(long) * (size_t)(n + 1));     /* the off-diagonal graph */
        adj.idx = err_scratch(sizeof(int) * (size_t)(nnz ? nnz : 1));
        long k = 0;
        for (int i = 0; i < n; i++) {
            adj.start[i] = k;
            for (long t = pat.start[i]; t < pat.start[i + 1]; t++)
                if (pat.idx[t] != i) adj.idx[k++] = pat.idx[t];
        }
        adj.start[n] = k;
        p = colour_star(&adj, n, colour);
        star = p > 0;
        if (!star) p = colour_columns(&pat, n, n, colour);
    } else {
        p = colour_columns(&pat, m, n, colour);
        Lists rows_of = lists_transpose(&pat, m, n);     /* J's columns, each with its rows */
        rcolour = err_scratch(sizeof(int) * (size_t)(m ? m : 1));
        q = colour_columns(&rows_of, n, m, rcolour);     /* colours J's rows: rows sharing no column */
        lists_free(rows_of);
        reverse = q < p;
    }
    Value target = f;
    if (hessian) target = ad_grad(1, &f);
    else v_retain(f);
    Value B = nil_val();
    if (reverse) B = rev_rows(rec[0], rec[1], m, n, rcolour, q);
    else if (p && !hessian && !br) B = tape_columns(rec[1], rec[0], m, n, colour, p);
    v_release(rec[0]);
    v_release(rec[1]);
    if (p && B.t == V_NIL) {           /* p = 0: n = 0, or nothing depends on x */
        Value V = seeds_of(colour, n, p);
        B = jac_forward_columns(target, x, V);
        v_release(V);
    }
    Value J = triplets ? mat_new(3, (int)nnz) : mat_new(rows, n);
    Value *out = AS_ARR(J)->v;
    long k = 0;
    for (int i = 0; i < rows && p; i++) {
        long t0 = br ? 0 : pat.start[i], t1 = br ? n : pat.start[i + 1];
        for (long t = t0; t < t1; t++, k++) {
            int j = br ? (int)t : pat.idx[t];
            const Value *b;
            if (reverse)
                b = &AS_ARR(B)->v[(long)rcolour[i] * n + j];
            else if (!star || i == j || only_in_colour(&adj, colour, i, j))
                b = &AS_ARR(B)->v[(long)i * p + colour[j]];
            else
                b = &AS_ARR(B)->v[(long)j * p + colour[i]];
            v_retain(*b);
            if (!triplets) {
                put(J, i, j, *b);
                continue;
            }
            out[k] = num_val(num_round(i));
            out[nnz + k] = num_val(num_round(j));
            v_release(out[2 * nnz + k]);
            out[2 * nnz + k] = *b;
        }
    }
    v_release(B);
    v_release(target);
    if (hessian) {
        G->jac.hess_passes = p;
        G->jac.hess_cols = n;
        G->jac.hess_dense = br != NULL;
    } else {
        G->jac.jac_passes = reverse ? q : p;
        G->jac.jac_cols = n;
        G->jac.jac_rows = m;
        G->jac.jac_dense = br != NULL;
        G->jac.jac_rev = reverse;
    }
    err_scratch_free(rcolour);
    if (adj.start) lists_free(adj);
    err_scratch_free(colour);
    lists_free(pat);
    return J;
}

/* ------------------------------------------------------------ hessian */

static void symmetrize(Value H)
{
    int n = AS_ARR(H)->rows;
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++) {
            Value e = AS_ARR(H)->v[(long)j * n + i];
            v_retain(e);
            put(H, i, j, e);
        }
}

static Value hessian_dense(Value f, Value x)
{
    int n = n_of(x);
    if (n == 0) return mat_new(0, 0);
    Value gfn = ad_grad(1, &f);
    Value I = identity_seeds(n);
    Value H = jac_forward_columns(gfn, x, I);
    v_release(I);
    v_release(gfn);
    symmetrize(H);
    return H;
}

/* --------------------------------------------------------- the builtins */

/* jacobian(f, how...), hessian(f, how...): "fwd" or "rev" (jacobian), or
 * "sparse" then, in either order, "triplets" and "dense-fallback". */
static int mode_of(int argc, Value *argv, const char *fname)
{
    int mode = JM_AUTO, jac = !strcmp(fname, "jacobian");
    for (int i = 1; i < argc; i++) {
        Value w = argv[i];
        const char *s = w.t == V_STR ? AS_STR(w)->s : NULL;
        int sparse = (mode & 15) == JM_SPARSE;
        if (s && i == 1 && !strcmp(s, "fwd") && jac) mode = JM_FWD;
        else if (s && i == 1 && !strcmp(s, "rev") && jac) mode = JM_REV;
        else if (s && i == 1 && !strcmp(s, "sparse")) mode = JM_SPARSE;
        else if (s && sparse && !strcmp(s, "dense-fallback") && !(mode & JM_FALLBACK)) mode |= JM_FALLBACK;
        else if (s && sparse && !strcmp(s, "triplets") && !(mode & JM_TRIPLETS)) mode |= JM_TRIPLETS;
        else if (s && i == 1 && (!strcmp(s, "triplets") || !strcmp(s, "dense-fallback")))
            err_raise("%s(f, \"%s\"): \"%s\" goes with a sparse %s: write %s(f, \"sparse\", \"%s\")",
                      fname, s, s, fname, fname, s);
        else if (i > 1 && !sparse)
            err_raise("%s(f, how): only \"sparse\" takes more words (\"triplets\", \"dense-fallback\"), got %d arguments after f",
                      fname, argc - 1);
        else if (i > 1)
            err_raise("%s(f, \"sparse\", ...): the words after \"sparse\" are \"triplets\" and \"dense-fallback\", each once, got %s%s%s",
                      fname, s ? "\"" : "", s ? s : value_type_name(w), s ? "\"" : "");
        else if (jac)
            err_raise("jacobian(f, how): how is \"fwd\", \"rev\" or \"sparse\" (then optionally \"triplets\" and \"dense-fallback\"), got %s%s%s",
                      s ? "\"" : "", s ? s : value_type_name(w), s ? "\"" : "");
        else
            err_raise("%s(f, how): how is \"sparse\" (then optionally \"triplets\" and \"dense-fallback\"), got %s%s%s",
                      fname, s ? "\"" : "", s ? s : value_type_name(w), s ? "\"" : "");
    }
    return mode;
}

static Value derived(Value f, int kind, int mode, const char *label)
{
    if (f.t != V_FN && f.t != V_BUILTIN)
        err_raise("%s: expects a function, got %s (write %s(fn(x) => ...))", label, value_type_name(f), label);
    Closure *c = value_obj_new(V_FN, sizeof(Closure));
    c->kind = kind;
    c->target = f;
    v_retain(f);
    c->label = label;
    c->argnum = mode;
    return obj_val(V_FN, c);
}

static Value bi_jacobian(int argc, Value *argv)
{
    if (argv[0].t != V_FN && argv[0].t != V_BUILTIN)
        err_raise("jacobian: expects a function, got %s (jacobian(f)(x) is the matrix of f at x)", value_type_name(argv[0]));
    return derived(argv[0], FK_JAC, mode_of(argc, argv, "jacobian"), "jacobian");
}

static Value bi_hessian(int argc, Value *argv)
{
    if (argv[0].t != V_FN && argv[0].t != V_BUILTIN)
        err_raise("hessian: expects a function, got %s (hessian(f)(x) is the matrix of f at x)", value_type_name(argv[0]));
    return derived(argv[0], FK_HESS, mode_of(argc, argv, "hessian"), "hessian");
}

static Value bi_sparsity(int argc, Value *argv)
{
    (void)argc;
    return derived(argv[0], FK_SPARSITY, 0, "sparsity");
}

Value jac_derived_call(Closure *c, int argc, Value *argv)
{
    const char *fname = c->label;
    if (argc != 1)
        err_raise("%s(f)(x) takes one argument x, got %d (for a function of more, fix the others: %s(fn(x) => f(x, p)))",
                  fname, argc, fname);
    Value f = c->target, x = argv[0];
    check_point(x, fname);
    int mode = c->argnum;
    if (c->kind == FK_SPARSITY) {
        int m;
        const JacBranch *br;
        Lists pat = pattern_at(f, x, 0, &m, &br, "sparsity", NULL);
        Value P = pattern_matrix(&pat, m, n_of(x));
        lists_free(pat);
        branches_done();
        return P;
    }
    if ((mode & 15) == JM_SPARSE)
        return sparse_jacobian(f, x, mode & JM_FALLBACK, mode & JM_TRIPLETS, c->kind == FK_HESS);
    if (c->kind == FK_HESS) return hessian_dense(f, x);
    if (mode == JM_FWD) return jacobian_forward(f, x);
    if (mode == JM_REV || n_of(x) > 1) return jacobian_reverse(f, x, mode != JM_REV);
    return jacobian_forward(f, x);      /* n = 1 <= m */
}

/* vjp(f, x, u): u . f(x) recorded, then one reverse sweep: uᵀJ, of x's shape. */
static Value bi_vjp(int argc, Value *argv)
{
    (void)argc;
    Value f = argv[0], x = argv[1], u = argv[2];
    if (f.t != V_FN && f.t != V_BUILTIN) err_raise("vjp: expects a function, got %s (vjp(f, x, u))", value_type_name(f));
    check_point(x, "vjp");
    if (!IS_NUMBER(u) && !is_seq(u)) err_raise("vjp: u must be a number or an array of numbers, got %s", value_type_name(u));
    if (is_seq(u)) value_seq_check_numbers(u, "vjp");
    int saved = rec_on();
    G->ad.nesting++;
    Value xp = ad_fresh_point(x), arg = xp;
    v_retain(arg);
    Value r = eval_call_value(f, 1, &arg);
    v_release(arg);
    int m = m_of(r, "vjp");
    if (IS_NUMBER(r) != IS_NUMBER(u) || (is_seq(u) && seq_len(u) != m)) {
        const char *what = mat_describe(r);
        char got[64];
        snprintf(got, sizeof got, "%s", mat_describe(u));
        v_release(r);
        v_release(xp);
        err_raise("vjp: u must have the shape of f(x), which is %s, but u is %s", what, got);
    }
    Value s = IS_NUMBER(r) ? arith_num_op(OP_MUL, u, r) : arith_dot(u, r);
    v_release(r);
    rec_restore(saved);
    G->ad.nesting--;
    G->jac.recordings++;
    kink_begin();
    Value g = ad_gradient_at(s, xp);
    G->jac.rev_sweeps++;
    kink_end();
    v_release(s);
    v_release(xp);
    return g;
}

void jac_abandon(void)
{
    G->jac.watching = 0;
    G->kinks.branch_hook = NULL;
    free(G->jac.branches);
    G->jac.branches = NULL;
    G->jac.nbranches = G->jac.capbranches = 0;
}

/* :reset: a fresh session's counts (:tape stats, :time) */
void jac_forget(void)
{
    jac_abandon();
    memset(&G->jac, 0, sizeof G->jac);
}

void jac_time_mark(uint64_t before[4])
{
    before[0] = G->jac.recordings;
    before[1] = G->jac.fwd_passes;
    before[2] = G->jac.rev_sweeps;
    before[3] = G->jac.fwd_directions;
}

void jac_time_note(const uint64_t before[4])
{
    uint64_t r = G->jac.recordings - before[0], f = G->jac.fwd_passes - before[1], s = G->jac.rev_sweeps - before[2];
    uint64_t dirs = G->jac.fwd_directions - before[3];
    if (!(r | f | s)) return;
    io_out(", jacobian:");
    const char *sep = " ";
    if (r) io_out("%s%llu recording%s", sep, (unsigned long long)r, r == 1 ? "" : "s"), sep = " + ";
    if (s) io_out("%s%llu reverse sweep%s", sep, (unsigned long long)s, s == 1 ? "" : "s"), sep = " + ";
    if (f) io_out("%s%llu forward pass%s (%llu direction%s)", sep, (unsigned long long)f, f == 1 ? "" : "es",
                  (unsigned long long)dirs, dirs == 1 ? "" : "s");
}

void jac_stats(void)
{
    if (G->jac.jac_cols && G->jac.jac_rev)
        io_out("  sparse jacobian: %d passes for %d columns (reverse: %d rows coloured, one sweep a colour)\n",
               G->jac.jac_passes, G->jac.jac_cols, G->jac.jac_rows);
    else if (G->jac.jac_cols)
        io_out("  sparse jacobian: %d passes for %d columns%s\n", G->jac.jac_passes, G->jac.jac_cols,
               G->jac.jac_dense ? " (dense fallback: the pattern may change with x)" : "");
    if (G->jac.hess_cols)
        io_out("  sparse hessian: %d passes for %d columns%s\n", G->jac.hess_passes, G->jac.hess_cols,
               G->jac.hess_dense ? " (dense fallback: the pattern may change with x)" : "");
}

static const Builtin jac_builtins[] = {
    {"jacobian", 1, 4, bi_jacobian, "jacobian(f): the function x => J, the m x n matrix df_i/dx_j (a matrix even when m or n is 1): forward mode when n <= m, reverse otherwise; jacobian(f, \"fwd\") / \"rev\" choose; jacobian(f, \"sparse\") colours the pattern (its columns, or its rows for reverse sweeps when fewer; :tape stats shows the passes); then \"triplets\" gives only its nonzeros, a 3 x nnz matrix of rows, columns, values in row-major order (no m x n matrix); and/or \"dense-fallback\" to accept a pattern that may change with x"},
    {"hessian", 1, 4, bi_hessian, "hessian(f): the function x => H, the n x n Hessian of a number-valued f (forward over reverse, symmetric); hessian(f, \"sparse\") by a star colouring of its pattern, hessian(f, \"sparse\", \"triplets\") its nonzeros as a 3 x nnz matrix"},
    {"vjp", 3, 3, bi_vjp, "vjp(f, x, u): u^T J, the vector-Jacobian product of f at x, in one reverse pass (x's shape)"},
    {"sparsity", 1, 1, bi_sparsity, "sparsity(f): the function x => P, the 0/1 m x n matrix of the entries of jacobian(f)(x) that can be nonzero (from the recorded tape)"},
};

void jac_register(void)
{
    for (size_t i = 0; i < sizeof jac_builtins / sizeof jac_builtins[0]; i++) builtin_define(&jac_builtins[i]);
}
