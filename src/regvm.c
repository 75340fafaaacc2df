/* regvm.c: simple scalar closures compiled once to a register form.
 *
 * Why: a recursive scalar closure (GradBench's det, whose `minor` calls
 * itself l! times) spent some 800 instructions a call in the tree walker
 * and threaded.c's handlers, and what remained there was not dispatch but
 * the questions every statement asks again of values whose answers cannot
 * change within the call: is this a plain number (tag, tape id), is a
 * checkpointed loop running, is this a nograd frame, which backend.
 * Asking them once per call was not possible there, since anything a
 * statement calls may change them (about 40 places do); here the body is
 * restricted so that nothing it runs can.
 *
 * What: a closure whose body uses only numbers in its locals (parameters,
 * assigned locals, integer `for i in a..b` counters), elements of captured
 * or global arrays of numbers (read; written only for captured ones),
 * captured or global numbers (read only), + - * / and unary minus, if /
 * elif / while over comparisons, break / continue, return of a number,
 * and calls of captured or global names that hold closures compiled the
 * same way (det's `minor` calls itself through its captured name) or, for
 * global names, one-argument math builtins (sin, exp: W1), is compiled at
 * its first call: into a small tree of RExpr / RStmt (regvm_compile), then
 * into a list of register instructions (emit_fn) run by run_fn. Locals,
 * temporaries, constants and captured numbers are registers, a double each
 * in an array on the C stack; captured names are a table of places (RTab).
 * A body with anything else (a string, another builtin, a closure made, a
 * captured name assigned, d, x@k, nograd, a checkpointed loop, a local
 * that may be read before it is assigned, a fall off the end) is declined
 * once, for good (REG_DECLINED).
 *
 * When: a call the tree walker makes (eval.c: call_node_offered for a
 * local or captured name, eval_call_general for a global one) is offered
 * to regvm_call, which checks once, at entry, that the compiled form
 * computes what the tree walker would: fast paths on (WENGERT_SLOW unset),
 * float64, no checkpointed loop running (ckpt.mode 0), no nograd block
 * running (whose writes settle as versions), not a closure whose frame
 * keeps versions while recording (FnInfo.labels), no reclaim pass due (a
 * loop would run it), every argument a number of no tape id; then, for
 * every name the body captures (validate), that it holds what the body
 * uses it as: a number of no tape id; an array (not a view, not a matrix,
 * no views of it: not aliased) every element of which is a number of no
 * tape id (Storage.known KNOWN_CONSTS, or a scan of a short array that
 * finds it so and records it); for an array the body writes, storage that
 * name alone holds (no copy-on-write split can happen) in a frame that
 * keeps no versions (so an element write is the store of a double, as
 * threaded.c's store_number makes it, with nothing to note); a closure
 * compiled the same way taking as many arguments as the call passes, whose
 * own captures pass the same test (checked recursively, a few levels
 * deep). If anything fails, the call runs in the tree walker as before.
 * (A global assigned at the top level is a place of d, its numbers
 * labelled with tape ids: a closure reading one is declined.)
 *
 * Why one check is enough: the compiled body assigns no name but its own
 * locals, makes nothing, calls nothing but compiled closures and math
 * builtins (by names it does not assign), and writes only doubles into
 * elements of arrays of plain numbers. The tape's recording switch is on
 * in most programs, but numbers of no tape id record nothing (threaded.c's
 * paths ask the ids), and nothing the body runs can make an id. So nothing
 * it runs can record, start a checkpointed loop or a nograd block, switch
 * backend, rebind a captured name, put a recorded number or a dual where
 * there was none, or split a storage: what was true at entry stays true
 * until the outermost compiled call returns, and the calls it makes (to
 * itself, or to closures validated at entry) run without checking again.
 *
 * Same results: the doubles are computed as the tree walker computes them
 * in float64 (a op b of the two operands, left before right; -x; a math
 * builtin by num_apply_f64, as num_op does), in the same order: every
 * operand that is not a register of its own is evaluated into a temporary
 * in the tree walker's order (an element read before a call that may
 * write it). Errors the compiled code can meet (an index that is not a
 * whole number in range, in a read or a write; a range bound that is not
 * a whole number; recursion too deep) are raised as the tree walker raises
 * them, at the same node, with the same traceback: an index error by
 * eval.c's own general path (eval_index_general, eval_store_named), given
 * the frame the tree walker would have had (the captures are what those
 * paths read), the others with the same messages. The traceback
 * (call_push), the call depth and the error position (G->err.where) are
 * kept as call_node and run_in_frame keep them, and the interrupt is
 * polled where the tree walker polls it (each call, each loop step), so
 * the fuzzer's step budget interrupts at the same step; an interrupt's
 * message names the loop, where the tree walker's names the statement that
 * ran last.
 *
 * What it does not keep, being unobservable: a frame (Env) per call; the
 * known flag each element write clears (the elements stay plain numbers,
 * so KNOWN_CONSTS stays true: kept); the reclaim passes of loops (none is
 * due at entry, and nothing is recorded).
 *
 * A call that fails these checks only because arrays it reads hold
 * recorded numbers (det's minor under grad: A), or because closures it
 * calls may return them, may run in the recording form instead (run_rec,
 * "recording" below): the same code with a tape id beside each register,
 * recording what the tree walker records, for a body where no recorded
 * number can reach an index, a bound, a comparison, an argument or a store
 * (rec_analysis).
 *
 * A closure whose calls are declined over and over is not offered its
 * next RV_SKIP calls (FnInfo.reg_skip), so that the declines cost next to
 * nothing.
 *
 * jvp(f, x, v) of such a closure (one tangent) may run in the forward
 * form instead ("forward" below): the same code with a tangent beside
 * each register, each from the rule table as dual.c computes a dual's.
 * The plain runner reads an operand the instruction before computed from
 * a machine register (mark_chains: W1's dependency chain). */
#include <limits.h>
#include <math.h>
#include "regvm.h"
#include "eval.h"
#include "callsite.h"
#include "error.h"
#include "state.h"
#include "ckpt.h"
#include "num.h"
#include "builtins.h"
#include "tape.h"
#include "tapegc.h"
#include "arith.h"
#include "evalstore.h"   /* whole_index: the index test threaded.c and eval.c use */
#include "rules.h"       /* the derivative rules: the forward form's tangents */
#ifdef __SSE2__
#include <emmintrin.h>
#endif
#ifdef __clang__
#pragma STDC FP_CONTRACT OFF      /* x + y * z: two roundings, as the tree walker's (gcc: -std=c11) */
#endif

unsigned long regvm_offers, regvm_entries, regvm_calls, regvm_rec_entries, regvm_fwd_entries;

#define RV_MAXREGS 64       /* a body with more locals is declined (the definite-assignment mask) */
#define RV_MAXCAPS 16       /* names it captures */
#define RV_VALIDATE_DEPTH 4 /* closures deep a callee's captures are checked */
#define RV_SCAN_MAX 4096    /* an array of unknown elements is scanned at entry up to this length */

/* ------------------------------------------------------------ the form */

enum { RX_NUM, RX_REG, RX_CAPNUM, RX_ADD, RX_SUB, RX_MUL, RX_DIV, RX_NEG, RX_INDEX, RX_CALL };
enum { RS_SET, RS_STORE, RS_IF, RS_FOR, RS_WHILE, RS_RETURN, RS_BREAK, RS_CONTINUE, RS_EVAL, RS_BLOCK };

typedef struct RExpr RExpr;
struct RExpr {
    uint8_t op;
    int a;              /* RX_REG: the register; RX_CAPNUM, RX_INDEX, RX_CALL: the capture */
    int nargs;          /* RX_CALL */
    double k;           /* RX_NUM */
    RExpr *x, *y;       /* operands; RX_INDEX: x the index */
    RExpr **args;       /* RX_CALL */
    Node *node;         /* for errors: RX_INDEX's N_INDEX, RX_CALL's N_CALL */
};

/* A condition: a comparison of two numbers, or and / or / not of
 * conditions (eval.c's N_AND, N_OR: the right one evaluated only when
 * the left one does not decide). */
enum { RC_CMP, RC_AND, RC_OR, RC_NOT };
typedef struct RCond RCond;
struct RCond {
    uint8_t kind;
    uint8_t cmp;        /* RC_CMP: the comparison (BinOp) of x and y */
    RExpr *x, *y;
    RCond *l, *r;       /* RC_AND, RC_OR: the operands; RC_NOT: l */
};

typedef struct RStmt RStmt;
typedef struct { RStmt *s; int n; } RBlock;
struct RStmt {
    uint8_t op;
    RCond *cond;        /* RS_IF, RS_WHILE */
    int a;              /* RS_SET, RS_FOR: the register; RS_STORE: the capture */
    RExpr *x, *y;       /* RS_SET, RS_RETURN, RS_EVAL: x; RS_STORE: x the index, y the value;
                         * RS_FOR: the bounds */
    RBlock body, els;   /* RS_IF's arms, RS_FOR's and RS_WHILE's body, RS_BLOCK's statements */
    Node *node;         /* the statement (RS_FOR: its bounds are node->a, node->b) */
};

/* What a captured (or global) name is used as. */
enum { CAP_NUM = 1, CAP_ARR = 2, CAP_WARR = 4, CAP_FN = 8 };
typedef struct {
    int global;         /* a global's index in slot, else a captured name depth frames out */
    int depth, slot;
    int uses;           /* CAP_ */
    int argc;           /* CAP_FN: the arguments its calls pass */
} RCap;

typedef struct RIns RIns;
typedef struct RFn {
    int nparams, nregs, ncaps;
    int last_bad;       /* the capture that failed validate last, -1: none */
    Storage *wit_st;    /* an array that failed a scan, and the element that failed it */
    int wit_i;
    RCap caps[RV_MAXCAPS];
    RBlock body;        /* the tree, which emit_fn turns into code */
    RIns *code;
    int nreg_all;       /* registers: locals, temporaries, constants, captured numbers */
    int kbase, nconst;  /* the constants' registers, their values in consts */
    double *consts;
    int nbase, ncapnum; /* the captured numbers' registers, their captures in capnum */
    int capnum[RV_MAXCAPS];
    int code_n;         /* instructions */
    int rec_ok;         /* the recording form may run it (rec_analysis) when no capture gives ids, */
    unsigned rec_math1; /* and when these captures hold math builtins (a recorded argument passed), */
    unsigned rec_sources;/* and when those of these captures do */
    int nloops;         /* loops in its code: each has a reclaim floor when recording */
    int fwd_ok;         /* the forward form may run it (fwd_analysis) */
} RFn;

/* What a call is validated for (validate, cap_valid): the plain form, the
 * recording form, the forward form (tangents beside the registers). */
enum { RV_PLAIN, RV_REC, RV_FWD };

/* ------------------------------------------------------------ compiling */

typedef struct {
    FnInfo *f;
    RFn *fn;
    int loops;          /* loops around the statement being compiled */
} Comp;

typedef uint64_t Defined;   /* the registers certainly assigned at this point */

static void *comp_alloc(Comp *k, size_t n) { return ast_alloc(k->f->chunk, n); }

static RExpr *rx_new(Comp *k, int op, Node *node)
{
    RExpr *e = comp_alloc(k, sizeof *e);
    e->op = (uint8_t)op;
    e->node = node;
    return e;
}

/* The capture for name node n (a captured or global name) used as use;
 * -1 when there is no room or it is used as two things. */
static int capture(Comp *k, const Node *n, int use, int argc)
{
    RFn *fn = k->fn;
    int global = n->ref == REF_GLOBAL;
    int i;
    for (i = 0; i < fn->ncaps; i++)
        if (fn->caps[i].global == global && fn->caps[i].slot == n->slot && (global || fn->caps[i].depth == n->depth))
            break;
    if (i == fn->ncaps) {
        if (i == RV_MAXCAPS) return -1;
        fn->ncaps++;
        fn->caps[i] = (RCap){ global, global ? 0 : n->depth, n->slot, 0, argc };
    }
    RCap *cp = &fn->caps[i];
    int kind = use == CAP_WARR ? CAP_ARR : use;
    int had = cp->uses == CAP_WARR ? CAP_ARR : cp->uses & (CAP_NUM | CAP_ARR | CAP_FN);
    if (had & ~kind) return -1;                       /* a number here, an array there */
    if (use == CAP_FN && cp->argc != argc) return -1; /* calls passing different counts */
    if (use == CAP_WARR && global) return -1;         /* globals keep versions: not written here */
    cp->uses |= use == CAP_WARR ? CAP_WARR | CAP_ARR : use;
    return i;
}

static int is_captured_name(const Node *n)
{
    return n->kind == N_NAME && (n->ref == REF_GLOBAL || (n->ref == REF_UPVAL && n->depth >= 1));
}

static RExpr *compile_expr(Comp *k, Node *n, Defined def)
{
    RExpr *e;
    switch (n->kind) {
    case N_NUM:
        e = rx_new(k, RX_NUM, n);
        e->k = n->num;       /* the literal in float64, as the tree walker reads it there */
        return e;
    case N_NAME:
        if (n->ref == REF_LOCAL) {
            if (n->slot >= RV_MAXREGS || !(def >> n->slot & 1)) return NULL;   /* may be unassigned */
            e = rx_new(k, RX_REG, n);
            e->a = n->slot;
            return e;
        }
        if (!is_captured_name(n)) return NULL;
        e = rx_new(k, RX_CAPNUM, n);
        if ((e->a = capture(k, n, CAP_NUM, 0)) < 0) return NULL;
        return e;
    case N_BINOP: {
        static const int ops[] = { [OP2_ADD] = RX_ADD, [OP2_SUB] = RX_SUB, [OP2_MUL] = RX_MUL, [OP2_DIV] = RX_DIV };
        if (n->op > OP2_DIV || n->op == OP2_MOD || n->op == OP2_POW) return NULL;
        e = rx_new(k, ops[n->op], n);
        if (!(e->x = compile_expr(k, n->a, def)) || !(e->y = compile_expr(k, n->b, def))) return NULL;
        return e;
    }
    case N_NEG:
        e = rx_new(k, RX_NEG, n);
        return (e->x = compile_expr(k, n->a, def)) ? e : NULL;
    case N_INDEX:
        if (n->c || !is_captured_name(n->a)) return NULL;
        e = rx_new(k, RX_INDEX, n);
        if ((e->a = capture(k, n->a, CAP_ARR, 0)) < 0) return NULL;
        return (e->x = compile_expr(k, n->b, def)) ? e : NULL;
    case N_CALL:
        if (!is_captured_name(n->a) || n->n > EVAL_CALL_ARGS) return NULL;
        e = rx_new(k, RX_CALL, n);
        if ((e->a = capture(k, n->a, CAP_FN, n->n)) < 0) return NULL;
        e->nargs = n->n;
        e->args = comp_alloc(k, sizeof(RExpr *) * (size_t)(n->n ? n->n : 1));
        for (int i = 0; i < n->n; i++)
            if (!(e->args[i] = compile_expr(k, n->list[i], def))) return NULL;
        return e;
    default:
        return NULL;
    }
}

static int is_comparison(const Node *n) { return n->kind == N_BINOP && n->op >= OP2_LT && n->op <= OP2_NE; }

static int compile_block(Comp *k, Node *blk, RBlock *out, Defined *def);
static int compile_stmt(Comp *k, Node *n, RStmt *s, Defined *def);

/* An arm or a loop's body: what it assigns counts inside it only. */
static int compile_arm(Comp *k, Node *n, RBlock *out, Defined def)
{
    if (n->kind == N_BLOCK) return compile_block(k, n, out, &def);
    out->n = 1;
    out->s = comp_alloc(k, sizeof(RStmt));
    return compile_stmt(k, n, out->s, &def);
}

static RCond *compile_cond(Comp *k, Node *c, Defined def)
{
    RCond *r = comp_alloc(k, sizeof(RCond));
    memset(r, 0, sizeof *r);
    if (is_comparison(c)) {
        r->kind = RC_CMP;
        r->cmp = c->op;
        return (r->x = compile_expr(k, c->a, def)) && (r->y = compile_expr(k, c->b, def)) ? r : NULL;
    }
    if (c->kind == N_NOT) {
        r->kind = RC_NOT;
        return (r->l = compile_cond(k, c->a, def)) ? r : NULL;
    }
    if (c->kind != N_AND && c->kind != N_OR) return NULL;
    r->kind = c->kind == N_AND ? RC_AND : RC_OR;
    return (r->l = compile_cond(k, c->a, def)) && (r->r = compile_cond(k, c->b, def)) ? r : NULL;
}

static int compile_condition(Comp *k, Node *c, RStmt *s, Defined def)
{
    return (s->cond = compile_cond(k, c, def)) != NULL;
}

static int compile_stmt(Comp *k, Node *n, RStmt *s, Defined *def)
{
    s->node = n;
    switch (n->kind) {
    case N_ASSIGN: {
        Node *t = n->a;
        if (t->kind == N_NAME && t->ref == REF_LOCAL && t->slot < RV_MAXREGS) {
            s->op = RS_SET;
            s->a = t->slot;
            if (!(s->x = compile_expr(k, n->b, *def))) return 0;
            *def |= (Defined)1 << t->slot;
            return 1;
        }
        if (t->kind == N_INDEX && !t->c && t->a->kind == N_NAME && t->a->ref == REF_UPVAL && t->a->depth >= 1) {
            s->op = RS_STORE;
            if ((s->a = capture(k, t->a, CAP_WARR, 0)) < 0) return 0;
            return (s->y = compile_expr(k, n->b, *def)) && (s->x = compile_expr(k, t->b, *def));
        }
        return 0;
    }
    case N_COMPOUND: {
        /* x op= e on a local number: exec_compound evaluates e, then
         * x op e (arith_apply, G->err.where.node the statement's), and
         * assigns x: x = x op e's work, as emitted, in that order (x
         * cannot change in e: nothing compiled assigns a caller's local) */
        static const int ops[] = { [OP2_ADD] = RX_ADD, [OP2_SUB] = RX_SUB, [OP2_MUL] = RX_MUL, [OP2_DIV] = RX_DIV };
        Node *t = n->a;
        if (t->kind != N_NAME || t->ref != REF_LOCAL || t->slot >= RV_MAXREGS || n->op > OP2_DIV) return 0;
        RExpr *e = rx_new(k, ops[n->op], n);
        if (!(e->x = compile_expr(k, t, *def)) || !(e->y = compile_expr(k, n->b, *def))) return 0;
        s->op = RS_SET;
        s->a = t->slot;
        s->x = e;
        return 1;
    }
    case N_EXPR:
        s->op = RS_EVAL;
        return (s->x = compile_expr(k, n->a, *def)) != NULL;
    case N_RETURN:
        s->op = RS_RETURN;
        return n->a && (s->x = compile_expr(k, n->a, *def));
    case N_BREAK:
    case N_CONTINUE:
        s->op = n->kind == N_BREAK ? RS_BREAK : RS_CONTINUE;
        return k->loops > 0;
    case N_BLOCK:
        s->op = RS_BLOCK;
        return compile_block(k, n, &s->body, def);
    case N_IF:
        s->op = RS_IF;
        return compile_condition(k, n->a, s, *def) && compile_arm(k, n->b, &s->body, *def) &&
               (!n->c || compile_arm(k, n->c, &s->els, *def));
    case N_WHILE: {
        s->op = RS_WHILE;
        k->loops++;
        int ok = compile_condition(k, n->a, s, *def) && compile_arm(k, n->b, &s->body, *def);
        k->loops--;
        return ok;
    }
    case N_FOR: {
        /* for i in lo..hi { ... }, i a local: the counter is assigned in the body only */
        if (!n->b || n->c->ref != REF_LOCAL || n->c->slot >= RV_MAXREGS || n->list[0]->kind != N_BLOCK) return 0;
        s->op = RS_FOR;
        s->a = n->c->slot;
        if (!(s->x = compile_expr(k, n->a, *def)) || !(s->y = compile_expr(k, n->b, *def))) return 0;
        k->loops++;
        int ok = compile_arm(k, n->list[0], &s->body, *def | (Defined)1 << s->a);
        k->loops--;
        return ok;
    }
    default:
        return 0;
    }
}

static int compile_block(Comp *k, Node *blk, RBlock *out, Defined *def)
{
    out->n = blk->n;
    out->s = comp_alloc(k, sizeof(RStmt) * (size_t)(blk->n ? blk->n : 1));
    for (int i = 0; i < blk->n; i++)
        if (!compile_stmt(k, blk->list[i], &out->s[i], def)) return 0;
    return 1;
}

static int emit_fn(Comp *k);

/* f's body in the register form, or NULL. Control cannot fall off its
 * end (the last statement is a return), so a call's value is a number. */
static RFn *regvm_compile(FnInfo *f)
{
    if (f->records || f->captures || f->nslots > RV_MAXREGS || f->nparams > EVAL_CALL_ARGS) return NULL;
    Comp k = { f, NULL, 0 };
    k.fn = comp_alloc(&k, sizeof(RFn));
    k.fn->nparams = f->nparams;
    k.fn->nregs = f->nslots;
    k.fn->last_bad = -1;
    Defined def = f->nparams ? (((Defined)1 << f->nparams) - 1) : 0;
    if (f->is_expr) {
        RStmt *s = comp_alloc(&k, sizeof(RStmt));
        s->op = RS_RETURN;
        s->node = f->body;
        if (!(s->x = compile_expr(&k, f->body, def))) return NULL;
        k.fn->body = (RBlock){ s, 1 };
        return emit_fn(&k) ? k.fn : NULL;
    }
    Node *b = f->body;
    if (b->kind != N_BLOCK || b->n == 0 || b->list[b->n - 1]->kind != N_RETURN) return NULL;
    if (!compile_block(&k, b, &k.fn->body, &def)) return NULL;
    return emit_fn(&k) ? k.fn : NULL;
}

/* ------------------------------------------------------------ entry */

/* A capture's place and what it holds, for one closure's call. */
typedef struct {
    Value *slot[RV_MAXCAPS];
    Storage *st[RV_MAXCAPS];     /* CAP_ARR */
    int op[RV_MAXCAPS];          /* CAP_FN naming a math builtin: its OpCode */
    int kidx[RV_MAXCAPS];        /* CAP_NUM: the number as an index, if a whole number in [0, INT_MAX); else -1 */
} RTab;

static Value *cap_slot(const RCap *cp, const Closure *c, Env **home)
{
    if (cp->global) {
        *home = NULL;
        return &G->eval.globals[cp->slot].v;
    }
    Env *e = c->env;
    for (int d = 1; d < cp->depth && e; d++) e = e->parent;
    *home = e;
    return e ? &e->slots[cp->slot] : NULL;
}

/* Every element of s a number of no tape id: known, or found so by a scan
 * of a short array (and then known: Storage.known's rule). When a scan
 * finds one that is not, fn keeps it as a witness (witness_holds). */
static int plain_elements(Storage *s, RFn *fn)
{
    if ((s->known & KNOWN_CONSTS) == KNOWN_CONSTS) return 1;
    if (s->n > RV_SCAN_MAX) return 0;
    for (int i = 0; i < s->n; i++)
        if (s->v[i].t != V_NUM || s->v[i].id) {
            fn->wit_st = s;
            fn->wit_i = i;
            return 0;
        }
    s->known = KNOWN_CONSTS;
    s->fresh = 0;       /* (no element has an id: no array run's ids either) */
    return 1;
}

/* The array that failed c's last validation holds the same storage, whose
 * element that failed the scan is still recorded (or not a number): the
 * call is declined at the cost of a look (det's minor under grad, whose
 * A is recorded, tries at every call). The storage is the live one the
 * slot holds; the pointer kept is only compared. */
static int witness_holds(const RFn *fn, const Closure *c)
{
    Env *home;
    const Value *v = cap_slot(&fn->caps[fn->last_bad], c, &home);
    if (!v || v->t != V_ARR || AS_ARR(*v) != fn->wit_st || fn->wit_i >= fn->wit_st->n) return 0;
    const Value *e = &fn->wit_st->v[fn->wit_i];
    return e->t != V_NUM || e->id;
}

static int validate(Closure *c, Closure **seen, int nseen, int rec);

/* Every element of s a number (of any tape id), for the recording form:
 * a short array is scanned (at the outermost entry only: nothing the
 * compiled code runs can put anything else there). */
static int number_elements(const Storage *s)
{
    if ((s->known & KNOWN_CONSTS) == KNOWN_CONSTS) return 1;
    if (s->n > RV_SCAN_MAX) return 0;
    for (int i = 0; i < s->n; i++)
        if (s->v[i].t != V_NUM) return 0;
    return 1;
}

/* What the capture holds is what the body uses it as (see the top). rec:
 * for the recording form, where an array the body only reads may hold
 * numbers with tape ids, if it is a captured one in a frame that keeps no
 * versions (a global's elements stay plain). */
static int cap_valid(RFn *fn, const RCap *cp, Closure *c, Closure **seen, int nseen, int rec)
{
    Env *home;
    Value *v = cap_slot(cp, c, &home);
    if (!v) return 0;
    /* (forward form: a recorded number while nothing records is a constant to dual_op) */
    if (cp->uses & CAP_NUM) return v->t == V_NUM && (!v->id || (rec == RV_FWD && !G->tape.recording));
    if (cp->uses & CAP_ARR) {
        if (v->t != V_ARR) return 0;
        Storage *s = AS_ARR(*v);
        if (s->ndim == 2 || s->aliased) return 0;
        if (rec == RV_REC && !(cp->uses & CAP_WARR) && home && !home->vers && (fn->rec_sources >> (cp - fn->caps) & 1) &&
            number_elements(s))
            return 1;
        if (!plain_elements(s, fn)) return 0;
        return !(cp->uses & CAP_WARR) || (s->h.rc == 1 && home && !home->vers);
    }
    if (rec == RV_REC && (fn->rec_math1 >> (cp - fn->caps) & 1) && v->t != V_BUILTIN) return 0;   /* (rec_analysis) */
    if (v->t == V_BUILTIN)    /* a global naming sin, exp, ...: ev_call_math1's case */
        return cp->global && cp->argc == 1 && builtin_math1_op(v->u.bi) >= 0 && !builtin_special(v->u.bi);
    if (v->t != V_FN || (rec == RV_REC && !(fn->rec_sources >> (cp - fn->caps) & 1))) return 0;   /* (its value may be recorded) */
    Closure *g = AS_FN(*v);
    if (!g->fn || g->fn->records || (g->fn->labels && G->tape.recording) || g->fn->nparams != cp->argc) return 0;
    for (int i = 0; i < nseen; i++)
        if (seen[i] == g) return 1;           /* being checked (itself, a cycle) */
    return nseen < RV_VALIDATE_DEPTH && validate(g, seen, nseen, rec);
}

static RFn *compiled(FnInfo *f)
{
    if (__builtin_expect(f->reg_state == REG_UNTRIED, 0)) {
        f->reg = regvm_compile(f);
        f->reg_state = f->reg ? REG_COMPILED : REG_DECLINED;
    }
    return f->reg;
}

static int validate(Closure *c, Closure **seen, int nseen, int rec)
{
    RFn *fn = compiled(c->fn);
    if (!fn || (rec == RV_REC && !fn->rec_ok) || (rec == RV_FWD && !fn->fwd_ok)) return 0;
    seen[nseen++] = c;
    if (rec) {      /* (not the primal's last_bad: the array it failed on is the one this allows) */
                    /* (the forward form: nor does a body it takes write an array) */
        for (int i = 0; i < fn->ncaps; i++)
            if (!cap_valid(fn, &fn->caps[i], c, seen, nseen, rec)) return 0;
        return 1;
    }
    /* the capture that failed last is asked first: a closure whose calls
     * are declined (det's minor under grad: A's elements are recorded)
     * pays one test a call */
    if (fn->last_bad >= 0 && !cap_valid(fn, &fn->caps[fn->last_bad], c, seen, nseen, 0)) return 0;
    for (int i = 0; i < fn->ncaps; i++)
        if (!cap_valid(fn, &fn->caps[i], c, seen, nseen, 0)) {
            fn->last_bad = i;
            return 0;
        }
    return 1;
}

static void bind(RTab *t, const RFn *fn, const Closure *c)
{
    for (int i = 0; i < fn->ncaps; i++) {
        Env *home;
        Value *v = cap_slot(&fn->caps[i], c, &home);
        t->slot[i] = v;
        t->st[i] = fn->caps[i].uses & CAP_ARR ? AS_ARR(*v) : NULL;
        t->op[i] = v->t == V_BUILTIN ? builtin_math1_op(v->u.bi) : -1;
        int k;   /* (a captured number is the same until the outermost call returns: see the top) */
        t->kidx[i] = fn->caps[i].uses & CAP_NUM && v->t == V_NUM && whole_index(v->u.n, INT_MAX, &k) ? k : -1;
    }
}

/* ------------------------------------------------------------ code */

/* The tree is emitted as a list of instructions on registers (doubles):
 * a walk over RExpr nodes cost a C call and a switch a node, more than
 * threaded.c's leaves read in place; here an operand that is a local, a
 * constant or a captured number is a register read, a temporary holds
 * every other operand, and control flow is jumps. Each operand is
 * evaluated into its temporary in the tree walker's order, so a call's
 * effects on array elements are seen where the tree walker sees them
 * (locals, constants and captured numbers cannot change in a call). */
enum {
    I_ADD, I_SUB, I_MUL, I_DIV, I_NEG, I_MOV,
    I_LOAD,      /* d = array c's element a (node: the N_INDEX) */
    I_STORE,     /* array c's element a = b (node: the assignment) */
    I_CALL,      /* d = capture c(b arguments in a, a + 1, ...) (node: the N_CALL) */
    I_JMP,       /* to d */
    I_JNLT, I_JNLE, I_JNGT, I_JNGE, I_JNEQ, I_JNNE,   /* to d unless a op b */
    I_BOUND,     /* a is a whole number, else the range bound error (node: the bound) */
    I_POLL,      /* a loop's step: the interrupt poll */
    I_RET,       /* return a */
    /* fused: what the tree walker's statements of det and W1 make most */
    I_LOADMA,    /* d = array c's element a * b + e (det's A[R0 * l + Cj]) */
    I_MULADD,    /* d = a + b * c */
    I_MULSUB,    /* d = a - b * c */
    I_MULSUBR,   /* d = b * c - a */
    I_FORENTER,  /* a for loop's first step: to d unless a < b, else the poll and c = a */
    I_FORSTEP,   /* its next: a = a + 1, then if a < b the poll, c = a and to d */
    I_PMULADD,   /* d = b * c + a (the product first: recorded as product + a) */
    I_WBEGIN,    /* a while loop begins (recording: its reclaim floor e; plain: to d, the next) */
    /* chained (mark_chains): the same as the base op, an operand taken from
     * the instruction before, which left it in run_fn's acc as well as in
     * its register; the recording runner runs the base op */
    I_ADDA, I_SUBA, I_MULA, I_DIVA,   /* d = acc op b */
    I_ADDB, I_SUBB, I_MULB, I_DIVB,   /* d = a op acc */
    I_CALLA,     /* I_CALL of one argument, acc */
    I_JLT, I_JLE, I_JGT, I_JGE, I_JEQ, I_JNE,   /* to d if a op b (and / or / not: emit_cond) */
    /* a for loop's way in, fused (mark_for_entries): an I_MOV of the low
     * bound that begins I_MOV, I_BOUND, I_MOV (the high bound), I_BOUND,
     * I_FORENTER, which run_fn runs as one (the other runners as the
     * I_MOV, then the rest); K: the low bound a constant whole number,
     * which needs no test */
    I_FORBEGIN, I_FORBEGINK,
    /* I_LOAD, I_STORE whose index is a captured number (det's r[l]): its
     * whole-number test made once, by bind (RTab.kidx: capture e's), and
     * only the range tested (mark_known_indices; the other runners run
     * the base op) */
    I_LOADK, I_STOREK,
    I_NOPS
};
struct RIns {
    uint8_t op;
    int d, a, b, c, e;
    Node *node;         /* an arithmetic instruction's: the tree walker's G->err.where.node as it
                         * runs it (NULL: the call's), for what recording may raise (the tape's
                         * limit) or note (a kink): Emit.at */
};

/* Registers while emitting: locals are their slots, temporaries follow;
 * constants and captured numbers are numbered apart (flags) and placed
 * after the temporaries once their count is known (emit_fn). */
#define R_CONST (1 << 28)
#define R_CAPNUM (1 << 27)

#define RV_MAXLOOPS 16
#define RV_MAXJUMPS 64
typedef struct {
    int brk[RV_MAXJUMPS], nbrk;      /* break jumps to patch to the end */
    int cont[RV_MAXJUMPS], ncont;    /* continue jumps to patch to the step */
} LoopPatch;

typedef struct {
    Comp *k;
    RIns *code;
    Node *at;           /* the node the tree walker's G->err.where.node holds here: the
                         * statement's (each statement sets it), then a call's (call_node, ev_call_math1) */
    int n, cap;
    int temps, maxtemps;
    double consts[64];
    int nconst;
    LoopPatch loops[RV_MAXLOOPS];
    int nloops;
    int loop_ids;       /* loops emitted: their floors' indices (RIns.e) */
    int ok;
} Emit;

static int ins(Emit *m, int op, int d, int a, int b, int c, Node *node)
{
    if (m->n == m->cap) {
        m->cap = m->cap ? 2 * m->cap : 64;
        m->code = err_realloc(m->code, sizeof(RIns) * (size_t)m->cap);
    }
    if (op <= I_NEG || (op >= I_MULADD && op <= I_MULSUBR) || op == I_PMULADD) node = m->at;   /* (see RIns.node) */
    m->code[m->n] = (RIns){ (uint8_t)op, d, a, b, c, 0, node };
    return m->n++;
}

/* an operand that is a register as it stands (a local, a constant, a
 * captured number): reading it emits nothing and has no effect */
static int is_leaf(const RExpr *e) { return e->op == RX_NUM || e->op == RX_REG || e->op == RX_CAPNUM; }
static int is_leaf_product(const RExpr *e) { return e->op == RX_MUL && is_leaf(e->x) && is_leaf(e->y); }

static int temp(Emit *m)
{
    int t = m->k->fn->nregs + m->temps++;
    if (m->temps > m->maxtemps) m->maxtemps = m->temps;
    return t;
}

static int const_reg(Emit *m, double x)
{
    for (int i = 0; i < m->nconst; i++)
        if (!memcmp(&m->consts[i], &x, sizeof x)) return R_CONST | i;
    if (m->nconst == 64) {
        m->ok = 0;
        return R_CONST;
    }
    m->consts[m->nconst] = x;
    return R_CONST | m->nconst++;
}

/* e's value in a register: dest if dest >= 0, else a register that holds
 * it (a local's, a constant's, a captured number's, or a new temporary). */
static int emit_expr(Emit *m, const RExpr *e, int dest)
{
    int src, a, b, saved = m->temps;
    switch (e->op) {
    case RX_NUM: src = const_reg(m, e->k); break;
    case RX_REG: src = e->a; break;
    case RX_CAPNUM: src = R_CAPNUM | e->a; break;
    case RX_ADD: case RX_SUB: case RX_MUL: case RX_DIV:
        /* x + y * z, x - y * z, y * z + x, y * z - x of leaves: one
         * instruction, the same two roundings (x + y is y + x exactly) */
        if ((e->op == RX_ADD || e->op == RX_SUB) && is_leaf(e->x) && is_leaf_product(e->y)) {
            a = emit_expr(m, e->x, -1);
            int b2 = emit_expr(m, e->y->x, -1), c2 = emit_expr(m, e->y->y, -1);
            if (dest < 0) dest = temp(m);
            int q = ins(m, e->op == RX_ADD ? I_MULADD : I_MULSUB, dest, a, b2, c2, e->node);
            (void)q;
            return dest;
        }
        if ((e->op == RX_ADD || e->op == RX_SUB) && is_leaf_product(e->x) && is_leaf(e->y)) {
            int b2 = emit_expr(m, e->x->x, -1), c2 = emit_expr(m, e->x->y, -1);
            a = emit_expr(m, e->y, -1);
            if (dest < 0) dest = temp(m);
            ins(m, e->op == RX_ADD ? I_PMULADD : I_MULSUBR, dest, a, b2, c2, e->node);
            return dest;
        }
        a = emit_expr(m, e->x, -1);
        b = emit_expr(m, e->y, -1);
        m->temps = saved;
        if (dest < 0) dest = temp(m);
        ins(m, I_ADD + (e->op - RX_ADD), dest, a, b, 0, e->node);
        return dest;
    case RX_NEG:
        a = emit_expr(m, e->x, -1);
        m->temps = saved;
        if (dest < 0) dest = temp(m);
        ins(m, I_NEG, dest, a, 0, 0, e->node);
        return dest;
    case RX_INDEX:
        /* a[x * y + z], a[z + x * y] of leaves (det's A[R0 * l + Cj]) */
        if (e->x->op == RX_ADD && ((is_leaf_product(e->x->x) && is_leaf(e->x->y)) ||
                                   (is_leaf(e->x->x) && is_leaf_product(e->x->y)))) {
            const RExpr *pr = is_leaf_product(e->x->x) && is_leaf(e->x->y) ? e->x->x : e->x->y;
            const RExpr *z = pr == e->x->x ? e->x->y : e->x->x;
            if (dest < 0) dest = temp(m);
            int q = ins(m, I_LOADMA, dest, emit_expr(m, pr->x, -1), emit_expr(m, pr->y, -1), e->a, e->node);
            m->code[q].e = emit_expr(m, z, -1);
            return dest;
        }
        a = emit_expr(m, e->x, -1);
        m->temps = saved;
        if (dest < 0) dest = temp(m);
        ins(m, I_LOAD, dest, a, 0, e->a, e->node);
        return dest;
    default: {   /* RX_CALL: the arguments in consecutive temporaries */
        if (e->nargs == 1 && is_leaf(e->args[0])) {
            /* one argument that is a register as it stands: the callee
             * reads it there (run_fn copies its arguments first; a math
             * builtin reads its value), no copy on the way (W1's sin(x)) */
            a = emit_expr(m, e->args[0], -1);
            if (dest < 0) dest = temp(m);
            ins(m, I_CALL, dest, a, 1, e->a, e->node);
            m->at = e->node;
            return dest;
        }
        int first = m->temps + m->k->fn->nregs;
        for (int i = 0; i < e->nargs; i++) temp(m);
        for (int i = 0; i < e->nargs; i++) emit_expr(m, e->args[i], first + i);
        m->temps = saved;
        if (dest < 0) dest = temp(m);
        ins(m, I_CALL, dest, first, e->nargs, e->a, e->node);
        m->at = e->node;
        return dest;
    }
    }
    if (dest >= 0 && dest != src) ins(m, I_MOV, dest, src, 0, 0, e->node);
    return dest >= 0 ? dest : src;
}

static void emit_block(Emit *m, const RBlock *b);

static void patch(Emit *m, const int *at, int n, int to)
{
    for (int i = 0; i < n; i++) m->code[at[i]].d = to;
}

typedef struct { int at[RV_MAXJUMPS]; int n; } JumpList;

static void jump_list_add(Emit *m, JumpList *l, int j)
{
    if (l->n == RV_MAXJUMPS) m->ok = 0;
    else l->at[l->n++] = j;
}

/* Jumps (to l's target, patched by the caller) when c is `when`, else
 * falls through; the operands evaluated in the tree walker's order, the
 * right one of and / or only when the left one does not decide. */
static void emit_cond(Emit *m, const RCond *c, int when, JumpList *l, Node *node)
{
    JumpList here;
    here.n = 0;
    switch (c->kind) {
    case RC_CMP: {
        int saved = m->temps;
        int a = emit_expr(m, c->x, -1), b = emit_expr(m, c->y, -1);
        m->temps = saved;
        jump_list_add(m, l, ins(m, (when ? I_JLT : I_JNLT) + (c->cmp - OP2_LT), -1, a, b, 0, node));
        return;
    }
    case RC_NOT: emit_cond(m, c->l, !when, l, node); return;
    case RC_AND:   /* false: either is; true: the left one is not false, and the right one true */
        if (!when) {
            emit_cond(m, c->l, 0, l, node);
            emit_cond(m, c->r, 0, l, node);
            return;
        }
        emit_cond(m, c->l, 0, &here, node);
        emit_cond(m, c->r, 1, l, node);
        break;
    default:       /* RC_OR */
        if (when) {
            emit_cond(m, c->l, 1, l, node);
            emit_cond(m, c->r, 1, l, node);
            return;
        }
        emit_cond(m, c->l, 1, &here, node);
        emit_cond(m, c->r, 0, l, node);
        break;
    }
    patch(m, here.at, here.n, m->n);
}

/* unless s's condition holds jump (to f's target, patched by the caller) */
static void emit_test(Emit *m, const RStmt *s, JumpList *f)
{
    f->n = 0;
    emit_cond(m, s->cond, 0, f, s->node);
}

static LoopPatch *loop_begin(Emit *m)
{
    if (m->nloops == RV_MAXLOOPS) {
        m->ok = 0;
        m->nloops--;
    }
    LoopPatch *p = &m->loops[m->nloops++];
    p->nbrk = p->ncont = 0;
    return p;
}

static void emit_jump_out(Emit *m, int *list, int *n, Node *node)
{
    int j = ins(m, I_JMP, -1, 0, 0, 0, node);
    if (*n == RV_MAXJUMPS) m->ok = 0;
    else list[(*n)++] = j;
}

static void emit_stmt(Emit *m, const RStmt *s)
{
    int saved = m->temps;
    m->at = m->k->f->is_expr ? NULL : s->node;   /* (run_body evaluates an expression body as it is) */
    switch (s->op) {
    case RS_SET: emit_expr(m, s->x, s->a); break;
    case RS_STORE: {
        int v = emit_expr(m, s->y, -1);
        int x = emit_expr(m, s->x, -1);
        ins(m, I_STORE, 0, x, v, s->a, s->node);
        break;
    }
    case RS_IF: {
        JumpList f;
        emit_test(m, s, &f);
        emit_block(m, &s->body);
        if (s->els.n) {
            int out = ins(m, I_JMP, -1, 0, 0, 0, s->node);
            patch(m, f.at, f.n, m->n);
            emit_block(m, &s->els);
            m->code[out].d = m->n;
        } else
            patch(m, f.at, f.n, m->n);
        break;
    }
    case RS_WHILE: {
        /* while_steps: the poll, the condition, the body */
        LoopPatch *p = loop_begin(m);
        int id = m->loop_ids++;
        int begin = ins(m, I_WBEGIN, 0, 0, 0, 0, s->node);
        m->code[begin].d = begin + 1;      /* (the plain form jumps on: run_fn's I_JMP) */
        m->code[begin].e = id;
        int top = ins(m, I_POLL, 0, 0, 0, 0, s->node);
        m->code[top].e = id;
        JumpList f;
        emit_test(m, s, &f);
        emit_block(m, &s->body);
        ins(m, I_JMP, top, 0, 0, 0, s->node);
        patch(m, f.at, f.n, m->n);
        patch(m, p->brk, p->nbrk, m->n);
        patch(m, p->cont, p->ncont, top);
        m->nloops--;
        break;
    }
    case RS_FOR: {
        /* ex_for_local: lo and hi checked in turn, a hidden counter i from
         * lo while i < hi, the variable set to it at each step's start */
        int i = temp(m), hi = temp(m);
        emit_expr(m, s->x, i);
        ins(m, I_BOUND, 0, i, 0, 0, s->node->a);
        emit_expr(m, s->y, hi);
        ins(m, I_BOUND, 0, hi, 0, 0, s->node->b);
        LoopPatch *p = loop_begin(m);
        int id = m->loop_ids++;
        int enter = ins(m, I_FORENTER, -1, i, hi, s->a, s->node);
        m->code[enter].e = id;
        int body = m->n;
        emit_block(m, &s->body);
        int step = ins(m, I_FORSTEP, body, i, hi, s->a, s->node);
        m->code[step].e = id;
        m->code[enter].d = m->n;
        patch(m, p->brk, p->nbrk, m->n);
        patch(m, p->cont, p->ncont, step);
        m->nloops--;
        break;
    }
    case RS_RETURN: ins(m, I_RET, 0, emit_expr(m, s->x, -1), 0, 0, s->node); break;
    case RS_BREAK: {
        LoopPatch *p = &m->loops[m->nloops - 1];
        emit_jump_out(m, p->brk, &p->nbrk, s->node);
        break;
    }
    case RS_CONTINUE: {
        LoopPatch *p = &m->loops[m->nloops - 1];
        emit_jump_out(m, p->cont, &p->ncont, s->node);
        break;
    }
    case RS_EVAL: emit_expr(m, s->x, -1); break;
    default: emit_block(m, &s->body); break;
    }
    m->temps = saved;
}

static void emit_block(Emit *m, const RBlock *b)
{
    for (int i = 0; i < b->n; i++) emit_stmt(m, &b->s[i]);
}

/* A source register as emitted, where it is in the layout. */
static int placed(int reg, const RFn *fn, const int *capreg)
{
    if (reg & R_CONST) return fn->kbase + (reg & ~R_CONST);
    if (reg & R_CAPNUM) return capreg[reg & ~R_CAPNUM];
    return reg;
}

/* Whether the recording form can run fn's code exactly (see "Recording"
 * above run_rec) when the captures in `recorded` (a mask) give recorded
 * numbers: arrays the body only reads, holding some; closures it calls,
 * returning some (a math builtin's value, of a plain number, is plain):
 * which registers may hold a number with a tape id, found from where ids
 * come in and how they flow: a local's over the whole body (it may
 * be assigned anywhere and read on the next step of a loop), a
 * temporary's from the instruction before that set it (a temporary lives
 * within one statement's straight-line code). 0 when a number that may
 * have an id would be an index, a range bound, a comparison's operand (the
 * tree walker notes a kink there: kink_note_branch), an argument (the
 * compiled callee takes plain numbers), or stored into an array (the
 * store would make places and versions). A number that may have an id
 * may be the one argument of a global name's call if that name holds a
 * math builtin (recorded as ev_call_math1's num_op records it): such
 * captures are added to *math1, which validate then requires. */
static int rec_analysis(const RFn *fn, unsigned recorded, unsigned *math1)
{
    uint8_t t[4 * RV_MAXREGS];
    if (fn->nreg_all > 4 * RV_MAXREGS) return 0;
    memset(t, 0, sizeof t);
    for (int pass = 0;; pass++) {
        int changed = 0, ok = 1;
        for (int i = 0; i < fn->code_n; i++) {
            const RIns *p = &fn->code[i];
            int v = -1;
            switch (p->op) {
            case I_ADD: case I_SUB: case I_MUL: case I_DIV: v = t[p->a] | t[p->b]; break;
            case I_NEG: case I_MOV: v = t[p->a]; break;
            case I_MULADD: case I_MULSUB: case I_MULSUBR: case I_PMULADD: v = t[p->a] | t[p->b] | t[p->c]; break;
            case I_LOAD: ok &= !t[p->a]; v = recorded >> p->c & 1; break;
            case I_LOADMA: ok &= !t[p->a] & !t[p->b] & !t[p->e]; v = recorded >> p->c & 1; break;
            case I_STORE: ok &= !t[p->a] & !t[p->b]; break;
            case I_CALL:
                v = recorded >> p->c & 1;
                if (p->b == 1 && t[p->a] && fn->caps[p->c].global && fn->caps[p->c].argc == 1) {
                    *math1 |= 1u << p->c;    /* sin(recorded): only if sin is a math builtin */
                    v = 1;
                    break;
                }
                for (int j = 0; j < p->b; j++) ok &= !t[p->a + j];
                break;
            case I_JNLT: case I_JNLE: case I_JNGT: case I_JNGE: case I_JNEQ: case I_JNNE:
            case I_JLT: case I_JLE: case I_JGT: case I_JGE: case I_JEQ: case I_JNE:
            case I_FORENTER: case I_FORSTEP: ok &= !t[p->a] & !t[p->b]; break;
            case I_BOUND: ok &= !t[p->a]; break;
            default: break;
            }
            if (v < 0) continue;
            if (p->d < fn->nregs) {          /* a local: what any assignment may give it */
                if (v && !t[p->d]) t[p->d] = 1, changed = 1;
            } else
                t[p->d] = (uint8_t)v;
        }
        if (!changed) return ok;
    }
}

/* Whether the forward form (run_fwd) can run fn's code as the tree walker
 * runs it on duals: which registers may hold a tangent, found as
 * rec_analysis finds ids, from the parameters (jvp's seed), through
 * arithmetic, math builtins and the values of calls (of a callee given
 * tangents; its captures hold none); an element read holds none. 0 when
 * one would be an index, a range bound or a comparison's operand (the
 * tree walker compares a dual's primal and notes a kink: not done here),
 * or when the body writes an array element at all (a nograd block, where
 * jvp runs in W2F, settles such writes as versions). */
static int fwd_analysis(const RFn *fn)
{
    uint8_t t[4 * RV_MAXREGS];
    if (fn->nreg_all > 4 * RV_MAXREGS) return 0;
    memset(t, 0, sizeof t);
    for (int i = 0; i < fn->nparams; i++) t[i] = 1;
    for (;;) {
        int changed = 0, ok = 1;
        for (int i = 0; i < fn->code_n; i++) {
            const RIns *p = &fn->code[i];
            int v = -1;
            switch (p->op) {
            case I_ADD: case I_SUB: case I_MUL: case I_DIV: v = t[p->a] | t[p->b]; break;
            case I_NEG: case I_MOV: v = t[p->a]; break;
            case I_MULADD: case I_MULSUB: case I_MULSUBR: case I_PMULADD: v = t[p->a] | t[p->b] | t[p->c]; break;
            case I_LOAD: ok &= !t[p->a]; v = 0; break;
            case I_LOADMA: ok &= !t[p->a] & !t[p->b] & !t[p->e]; v = 0; break;
            case I_STORE: ok = 0; break;
            case I_CALL:
                v = 0;
                for (int j = 0; j < p->b; j++) v |= t[p->a + j];
                break;
            case I_JNLT: case I_JNLE: case I_JNGT: case I_JNGE: case I_JNEQ: case I_JNNE:
            case I_JLT: case I_JLE: case I_JGT: case I_JGE: case I_JEQ: case I_JNE:
            case I_FORENTER: case I_FORSTEP: ok &= !t[p->a] & !t[p->b]; break;
            case I_BOUND: ok &= !t[p->a]; break;
            default: break;
            }
            if (v < 0) continue;
            if (p->d < fn->nregs) {
                if (v && !t[p->d]) t[p->d] = 1, changed = 1;
            } else
                t[p->d] = (uint8_t)v;
        }
        if (!changed) return ok;
    }
}

/* Whether op leaves its value in run_fn's acc as well as in register d. */
static int sets_acc(int op)
{
    return op <= I_MOV || op == I_LOAD || op == I_CALL || op == I_LOADMA || (op >= I_MULADD && op <= I_MULSUBR) ||
           op == I_PMULADD || (op >= I_ADDA && op <= I_CALLA);
}

/* Chains: an operand that the instruction just before computed is taken
 * from acc, a C local run_fn keeps in a machine register, not reloaded
 * from the register array. Why: a value stored to the array and loaded
 * back at once waits for the store to forward (some 7 cycles here), and
 * W1's x = sin(x) * 0.9 + 0.1 paid that three times a step on its one
 * dependency chain (the compiled loop ran slower than the tree walker's,
 * whose handlers return values in registers). Only where the instruction
 * before is the one way in: not at a jump's target. */
static void chain_a(RIns *p)
{
    if (p->op <= I_DIV) p->op = (uint8_t)(I_ADDA + (p->op - I_ADD));   /* (I_ADD is 0) */
    else if (p->op == I_CALL && p->b == 1) p->op = I_CALLA;
}

static void mark_chains(RFn *fn)
{
    uint8_t target[fn->code_n + 1];     /* jumps to each instruction, up to 2 */
    memset(target, 0, sizeof target);
    for (int i = 0; i < fn->code_n; i++) {
        const RIns *p = &fn->code[i];
        if ((p->op >= I_JMP && p->op <= I_JNNE) || (p->op >= I_JLT && p->op <= I_JNE) || p->op == I_FORENTER ||
            p->op == I_FORSTEP || p->op == I_WBEGIN)
            if (p->d >= 0 && p->d <= fn->code_n && target[p->d] < 2) target[p->d]++;
    }
    for (int i = 1; i < fn->code_n; i++) {
        RIns *p = &fn->code[i];
        const RIns *q = &fn->code[i - 1];
        if (target[i] || !sets_acc(q->op)) continue;
        if (p->op <= I_DIV && p->b == q->d && p->a != q->d) p->op = (uint8_t)(I_ADDB + (p->op - I_ADD));
        else if (p->a == q->d && (p->op <= I_DIV || (p->op == I_CALL && p->b == 1))) chain_a(p);
    }
    /* a for loop's body that begins with an operand its end computed
     * (W1: x = sin(x) * ...): the step keeps acc, and the way in
     * (I_FORENTER) loads acc from the register, so the value crosses the
     * back edge in acc. Only when the step is no jump's target (no
     * continue), nothing else jumps to the body's start, and the end
     * assigns no loop variable (for i in 0..n { s = i + s; i = s * 2 }:
     * the step writes i's register afresh, acc would keep s * 2). */
    for (int i = 0; i + 1 < fn->code_n; i++) {
        const RIns *p = &fn->code[i];
        if (p->op != I_FORENTER) continue;
        int step = p->d - 1, body = i + 1;
        if (step <= body || fn->code[step].op != I_FORSTEP || fn->code[step].d != body || target[step] ||
            target[body] != 1 || !sets_acc(fn->code[step - 1].op) || fn->code[step - 1].d == fn->code[step].c)
            continue;   /* (the end's value is the loop variable's: the step sets that register anew) */
        RIns *b = &fn->code[body];
        if (b->a == fn->code[step - 1].d && (b->op <= I_DIV || (b->op == I_CALL && b->b == 1))) chain_a(b);
    }
}

/* A for loop's way in whose bounds are leaves (det's `for j in 0..m`):
 * I_MOV, I_BOUND, I_MOV, I_BOUND, I_FORENTER, none but the first a jump's
 * target (none is: a loop's code is entered at its top), becomes one
 * instruction for run_fn (I_FORBEGIN at the first, the rest kept for the
 * other runners); a low bound that is a constant whole number is not
 * tested (I_FORBEGINK). */
static void mark_for_entries(RFn *fn)
{
    for (int q = 0; q + 4 < fn->code_n; q++) {
        RIns *p = &fn->code[q];
        if (p[0].op != I_MOV || p[1].op != I_BOUND || p[1].a != p[0].d || p[2].op != I_MOV || p[3].op != I_BOUND ||
            p[3].a != p[2].d || p[4].op != I_FORENTER || p[4].a != p[0].d || p[4].b != p[2].d)
            continue;
        int k = p[0].a - fn->kbase;
        int whole = k >= 0 && k < fn->nconst && fn->consts[k] == floor(fn->consts[k]);
        p->op = whole ? I_FORBEGINK : I_FORBEGIN;
    }
}

/* An element read or write whose index is a captured number: I_LOADK,
 * I_STOREK, e the capture (RTab.kidx). */
static void mark_known_indices(RFn *fn)
{
    for (int q = 0; q < fn->code_n; q++) {
        RIns *p = &fn->code[q];
        if ((p->op != I_LOAD && p->op != I_STORE) || p->a < fn->nbase || p->a >= fn->nbase + fn->ncapnum) continue;
        p->e = fn->capnum[p->a - fn->nbase];
        p->op = p->op == I_LOAD ? I_LOADK : I_STOREK;
    }
}

/* The code of k's tree, its registers laid out: locals, temporaries,
 * constants, captured numbers. 0: declined (too many of something). */
static int emit_fn(Comp *k)
{
    Emit m;              /* (not zeroed whole: the loops' patch lists are 8 KB) */
    m.k = k;
    m.code = NULL;
    m.n = m.cap = m.temps = m.maxtemps = m.nconst = m.nloops = m.loop_ids = 0;
    m.at = NULL;
    m.ok = 1;
    RFn *fn = k->fn;
    emit_block(&m, &fn->body);
    fn->kbase = fn->nregs + m.maxtemps;
    fn->nconst = m.nconst;
    fn->nbase = fn->kbase + m.nconst;
    fn->ncapnum = 0;
    int capreg[RV_MAXCAPS];
    for (int i = 0; i < fn->ncaps; i++)
        if (fn->caps[i].uses & CAP_NUM) {
            capreg[i] = fn->nbase + fn->ncapnum;
            fn->capnum[fn->ncapnum++] = i;
        }
    fn->nreg_all = fn->nbase + fn->ncapnum;
    for (int i = 0; i < m.n; i++) {
        RIns *p = &m.code[i];
        switch (p->op) {
        case I_ADD: case I_SUB: case I_MUL: case I_DIV: case I_STORE:
        case I_JNLT: case I_JNLE: case I_JNGT: case I_JNGE: case I_JNEQ: case I_JNNE:
        case I_JLT: case I_JLE: case I_JGT: case I_JGE: case I_JEQ: case I_JNE:
            p->a = placed(p->a, fn, capreg);
            p->b = placed(p->b, fn, capreg);
            break;
        case I_NEG: case I_MOV: case I_LOAD: case I_BOUND: case I_RET: case I_CALL:
            p->a = placed(p->a, fn, capreg);   /* (I_CALL: a temporary, or a leaf argument) */
            break;
        case I_LOADMA:
            p->a = placed(p->a, fn, capreg);
            p->b = placed(p->b, fn, capreg);
            p->e = placed(p->e, fn, capreg);
            break;
        case I_MULADD: case I_MULSUB: case I_MULSUBR: case I_PMULADD:
            p->a = placed(p->a, fn, capreg);
            p->b = placed(p->b, fn, capreg);
            p->c = placed(p->c, fn, capreg);
            break;
        }
    }
    fn->consts = comp_alloc(k, sizeof(double) * (size_t)(m.nconst ? m.nconst : 1));
    memcpy(fn->consts, m.consts, sizeof(double) * (size_t)m.nconst);
    fn->code = comp_alloc(k, sizeof(RIns) * (size_t)(m.n ? m.n : 1));
    memcpy(fn->code, m.code, sizeof(RIns) * (size_t)m.n);
    free(m.code);

    fn->nloops = m.loop_ids;
    fn->code_n = m.n;
    /* ids flow from each source alike and a failure needs one source, so
     * the form can run when each source present could alone (cap_valid) */
    fn->rec_math1 = 0;
    fn->rec_ok = m.ok && rec_analysis(fn, 0, &fn->rec_math1);
    fn->rec_sources = 0;
    for (int i = 0; fn->rec_ok && i < fn->ncaps; i++) {
        unsigned math1 = 0;   /* (kept only for a source the form takes) */
        if (((fn->caps[i].uses & (CAP_ARR | CAP_WARR)) == CAP_ARR || (fn->caps[i].uses & CAP_FN)) && rec_analysis(fn, 1u << i, &math1)) {
            fn->rec_sources |= 1u << i;
            fn->rec_math1 |= math1;
        }
    }
    fn->fwd_ok = m.ok && fwd_analysis(fn);
    mark_chains(fn);   /* (after the analyses, which read the base ops) */
    mark_for_entries(fn);
    mark_known_indices(fn);
    return m.ok && fn->nreg_all <= 4 * RV_MAXREGS;
}

/* ------------------------------------------------------------ running */

typedef struct {
    const RFn *fn;
    Closure *c;
    const RTab *tab;
} RCall;

static double run_fn(Closure *c, const RTab *tab, const double *args, const double *caller);

/* The frame the tree walker would have had for this call, for eval.c's
 * general paths to raise an error in: the captures are what they read
 * (the registers, never arrays, are not). Dropped if they return. */
static Env *frame_for_error(const RCall *k)
{
    return value_frame_new(k->c->fn, k->c->env, k->c->fn->nslots);
}

static __attribute__((noinline)) double index_slow(const RCall *k, const RIns *p, double x)
{
    Env *frame = frame_for_error(k);
    Value iv = num_val(x);
    Value r = eval_index_general(p->node, frame, &iv);
    value_frame_drop(frame);
    if (r.t != V_NUM || r.id) err_raise_at(p->node, "internal error: a compiled closure read %s", value_type_name(r));
    return r.u.n;
}

static __attribute__((noinline)) void store_slow(const RCall *k, const RIns *p, double v, double x)
{
    Env *frame = frame_for_error(k);
    Node *t = p->node->a;
    Value iv = num_val(x);
    G->err.where.node = p->node;
    if (!eval_store_named(t, frame, num_val(v), &iv)) eval_store_general(t, frame, num_val(v), -1, &iv);
    value_frame_drop(frame);
}

/* x == floor(x) (eval_range_bound's test), without floor's dozen
 * instructions (no SSE4.1 here): a double of magnitude 2^52 or more is a
 * whole number (or infinite: floor(inf) is inf), and below that its
 * truncation to 64 bits is exact; NaN is neither. */
static inline __attribute__((always_inline)) int is_whole(double x)
{
#ifdef __SSE2__
    return (double)_mm_cvttsd_si64(_mm_set_sd(x)) == x || fabs(x) >= 0x1p52;
#else
    return x == floor(x);
#endif
}

/* a range bound: eval_range_bound's test and error */
static __attribute__((noinline, noreturn)) void bound_error(const RIns *p, double d)
{
    err_raise_at(p->node, "a range bound must be a whole number, got %s", value_num_str(d));
}

/* a call of another compiled closure than the running one: its captures' places */
static __attribute__((noinline)) double call_other(Closure *g, const double *args)
{
    RTab t;
    bind(&t, g->fn->reg, g);
    return run_fn(g, &t, args, NULL);
}

static __attribute__((noinline)) void poll(const RIns *p)
{
    G->err.where.node = p->node;
    err_check_interrupt_now();
}

/* The instructions (in run_fn), dispatched by computed goto (gcc's labels as values):
 * each handler jumps to the next one's, one indirect jump an instruction
 * where a switch took a bounds test and two jumps. */
/* The jumps and the range-bound test: the same in both runners (run_fn,
 * run_rec), which read no ids for them (comparisons and bounds take plain
 * numbers only: a recorded one is declined when compiled). */
#define JUMPS_AND_BOUND JUMPS_AND_BOUND_WITH((void)0)
#define JUMPS_AND_BOUND_FLUSH JUMPS_AND_BOUND_WITH(flush_frames(f))
#define JUMPS_AND_BOUND_WITH(BEFORE_ERROR)                                           \
jmp: p = code + p->d; goto *lab[p->op];                                              \
jnlt: JUMP(r[p->a] < r[p->b]);                                                       \
jnle: JUMP(r[p->a] <= r[p->b]);                                                      \
jngt: JUMP(r[p->a] > r[p->b]);                                                       \
jnge: JUMP(r[p->a] >= r[p->b]);                                                      \
jneq: JUMP(r[p->a] == r[p->b]);                                                      \
jnne: JUMP(r[p->a] != r[p->b]);                                                      \
jlt: JUMP(!(r[p->a] < r[p->b]));                                                     \
jle: JUMP(!(r[p->a] <= r[p->b]));                                                    \
jgt: JUMP(!(r[p->a] > r[p->b]));                                                     \
jge: JUMP(!(r[p->a] >= r[p->b]));                                                    \
jeq: JUMP(!(r[p->a] == r[p->b]));                                                    \
jne: JUMP(!(r[p->a] != r[p->b]));                                                    \
bound:                                                                               \
    if (__builtin_expect(!is_whole(r[p->a]), 0)) BEFORE_ERROR, bound_error(p, r[p->a]); \
    NEXT;
#define NEXT goto *lab[(++p)->op]
#define JUMP(cond) do { p = (cond) ? p + 1 : code + p->d; goto *lab[p->op]; } while (0)
/* A call, as call_node and run_in_frame (eval.c) make it: the traceback's
 * line, the depth test, the interrupt poll, the error position in the
 * callee's chunk, one level deeper (G->err.where.node is the call's); then
 * the code, and back at its return. (One function: the code's own would
 * cost a call's way in and out, and it cannot be inlined.) */
/* A compiled call's way in, the same for both runners: the depth test, the
 * traceback's entry, the interrupt poll, the callee's chunk for error
 * positions (G->err.where as it was comes back; the runner restores it). */
static inline __attribute__((always_inline)) ErrWhere enter_call(const FnInfo *f)
{
    if (__builtin_expect(G->eval.run.call_depth >= MAX_CALL_DEPTH, 0)) {
        call_push(f->name);
        eval_depth_error();
    }
    call_push(f->name);
    err_check_interrupt();
    ErrWhere saved = G->err.where;
    G->err.where.chunk = f->chunk;
    G->eval.run.call_depth++;
    regvm_calls++;
    return saved;
}

/* A call of itself (det's minor: l! calls) runs in the same run_fn, its
 * registers a frame of a fixed arena, its caller's registers and call
 * instruction kept in rv_frames: no C call's way in and out, no frame on
 * the C stack. Its traceback line is not pushed as it begins: the frames
 * from rv_pushed up are pushed (flush_frames) only before anything that
 * may raise an error or read the traceback runs (an index or a store
 * off the fast path, a range bound, an interrupt poll, a call of another
 * closure, a call that the arena has no room for, the depth error), so
 * an error's traceback is the one the tree walker leaves; a frame that
 * returns unpushed pops nothing. The call depth is counted at every call
 * as before. Only the innermost run_fn's frames can be unpushed (a call
 * of another closure flushes first). try_call, the only way in from the
 * tree walker (nothing compiled runs the tree walker's calls), empties
 * the arena: an error that unwound through run_fn leaves it as it was. */
#define RV_ARENA 16384      /* doubles */
#define RV_PAD 4            /* copy_fixed's blocks: room after every frame */
typedef struct { double *r; const RIns *p; } RvFrame;
static double rv_arena[RV_ARENA];
static double *rv_top = rv_arena;
static double *const rv_last = rv_arena + RV_ARENA - RV_PAD;  /* a frame of n fits while rv_top <= rv_last - n */
static RvFrame rv_frames[RV_ARENA];   /* (each frame takes a double more than its registers) */
static int rv_nf, rv_pushed;

static __attribute__((noinline)) void flush_frames_now(const FnInfo *f)
{
    ErrWhere w = G->err.where;
    G->err.where.chunk = f->chunk;   /* (the caller's: the same closure's) */
    for (; rv_pushed < rv_nf; rv_pushed++) {
        G->err.where.node = rv_frames[rv_pushed].p->node;
        call_push(f->name);
    }
    G->err.where = w;
}

/* dst[i] = src[i] for i in [from, to), in blocks of RV_PAD (a loop of a
 * few steps: the constants and captured numbers of a call of itself);
 * both may run up to RV_PAD - 1 past to. (dst is the frame after src's:
 * what a block writes past to is never a source before to.) */
static inline __attribute__((always_inline)) void copy_fixed(double *dst, const double *src, int from, int to)
{
    for (int i = from; i < to; i += RV_PAD) {
        double a = src[i], b = src[i + 1], c = src[i + 2], d = src[i + 3];
        dst[i] = a, dst[i + 1] = b, dst[i + 2] = c, dst[i + 3] = d;
    }
}

static inline __attribute__((always_inline)) void flush_frames(const FnInfo *f)
{
    if (__builtin_expect(rv_pushed < rv_nf, 0)) flush_frames_now(f);
}

#if defined(__GNUC__) && !defined(__clang__)
#define NO_MEMCPY_LOOPS __attribute__((optimize("no-tree-loop-distribute-patterns", "no-crossjumping")))
#else
#define NO_MEMCPY_LOOPS
#endif
/* caller: the registers of a running call of the same closure (a call of
 * itself: det's minor), whose captures hold the same numbers (nothing the
 * body runs assigns them): its constants' and captured numbers' registers
 * are copied in one loop; NULL: from the constants and the captures'
 * places. (The caller's base, not its constants': a pointer its call
 * handler keeps anyway.) */
static NO_MEMCPY_LOOPS double run_fn(Closure *c, const RTab *tab, const double *args, const double *caller)
{
    FnInfo *f = c->fn;
    const RFn *fn = f->reg;
    ErrWhere saved = enter_call(f);
    double rbuf[fn->nreg_all + RV_PAD], *r = rbuf;   /* (RV_PAD: copy_fixed reads past) */
    int base_nf = rv_nf;     /* frames of the arena below are callers' (see rv_frames) */
    /* (a few each: loops, not memcpy calls) */
    if (fn->nparams == 1) r[0] = args[0];
    else
        for (int i = 0; i < fn->nparams; i++) r[i] = args[i];
    double *kr = r + fn->kbase;
    if (caller)
        for (int i = fn->kbase; i < fn->nreg_all; i++) r[i] = caller[i];
    else {
        for (int i = 0; i < fn->nconst; i++) kr[i] = fn->consts[i];
        for (int i = 0; i < fn->ncapnum; i++) r[fn->nbase + i] = tab->slot[fn->capnum[i]]->u.n;
    }
    const RCall call = { fn, c, tab }, *k = &call;

    static void *const lab[] = {
        [I_ADD] = &&add, [I_SUB] = &&sub, [I_MUL] = &&mul, [I_DIV] = &&div, [I_NEG] = &&neg, [I_MOV] = &&mov,
        [I_LOAD] = &&load, [I_STORE] = &&store, [I_CALL] = &&call, [I_JMP] = &&jmp,
        [I_JNLT] = &&jnlt, [I_JNLE] = &&jnle, [I_JNGT] = &&jngt, [I_JNGE] = &&jnge, [I_JNEQ] = &&jneq, [I_JNNE] = &&jnne,
        [I_BOUND] = &&bound, [I_POLL] = &&poll_, [I_RET] = &&ret,
        [I_LOADMA] = &&loadma, [I_MULADD] = &&muladd, [I_MULSUB] = &&mulsub, [I_MULSUBR] = &&mulsubr,
        [I_FORENTER] = &&forenter, [I_FORSTEP] = &&forstep, [I_PMULADD] = &&muladd, [I_WBEGIN] = &&jmp,
        [I_ADDA] = &&adda, [I_SUBA] = &&suba, [I_MULA] = &&mula, [I_DIVA] = &&diva,
        [I_FORBEGIN] = &&forbegin, [I_FORBEGINK] = &&forbegink, [I_LOADK] = &&loadk, [I_STOREK] = &&storek,
        [I_ADDB] = &&addb, [I_SUBB] = &&subb, [I_MULB] = &&mulb, [I_DIVB] = &&divb, [I_CALLA] = &&calla,
        [I_JLT] = &&jlt, [I_JLE] = &&jle, [I_JGT] = &&jgt, [I_JGE] = &&jge, [I_JEQ] = &&jeq, [I_JNE] = &&jne };
    const RIns *code = k->fn->code, *p = code;
    int i;
    double acc = 0, x;   /* acc: the value the instruction before computed (mark_chains) */
    goto *lab[p->op];
#define SET(v) (acc = (v), r[p->d] = acc)
add: SET(r[p->a] + r[p->b]); NEXT;
sub: SET(r[p->a] - r[p->b]); NEXT;
mul: SET(r[p->a] * r[p->b]); NEXT;
div: SET(r[p->a] / r[p->b]); NEXT;
adda: SET(acc + r[p->b]); NEXT;
suba: SET(acc - r[p->b]); NEXT;
mula: SET(acc * r[p->b]); NEXT;
diva: SET(acc / r[p->b]); NEXT;
addb: SET(r[p->a] + acc); NEXT;
subb: SET(r[p->a] - acc); NEXT;
mulb: SET(r[p->a] * acc); NEXT;
divb: SET(r[p->a] / acc); NEXT;
neg: SET(-r[p->a]); NEXT;
mov: SET(r[p->a]); NEXT;
load: {
        const Storage *st = k->tab->st[p->c];
        x = r[p->a];
        SET(__builtin_expect(whole_index(x, st->n, &i), 1) ? st->v[i].u.n : (flush_frames(f), index_slow(k, p, x)));
        NEXT;
    }
store: {
        Storage *st = k->tab->st[p->c];
        double x = r[p->a];
        /* the element is a number of no tape id (KNOWN_CONSTS): its double alone changes */
        if (__builtin_expect(whole_index(x, st->n, &i), 1)) st->v[i].u.n = r[p->b];
        else {
            flush_frames(f);
            store_slow(k, p, r[p->b], x);
        }
        NEXT;
    }
loadk: {
        const Storage *st = k->tab->st[p->c];
        i = k->tab->kidx[p->e];
        SET(__builtin_expect((unsigned)i < (unsigned)st->n, 1) ? st->v[i].u.n : (flush_frames(f), index_slow(k, p, r[p->a])));
        NEXT;
    }
storek: {
        Storage *st = k->tab->st[p->c];
        i = k->tab->kidx[p->e];
        if (__builtin_expect((unsigned)i < (unsigned)st->n, 1)) st->v[i].u.n = r[p->b];
        else {
            flush_frames(f);
            store_slow(k, p, r[p->b], r[p->a]);
        }
        NEXT;
    }
calla:
    x = acc;
    goto call_x;
call:
    x = r[p->a];
call_x: {
        G->err.where.node = p->node;
        const Value *fv = k->tab->slot[p->c];
        if (fv->t == V_BUILTIN) {   /* sin(x) ...: num_op's float64 value (ev_call_math1) */
            SET(num_apply_f64(k->tab->op[p->c], x, x));
            NEXT;
        }
        Closure *g = AS_FN(*fv);
        if (g != k->c) {
            flush_frames(f);
            SET(call_other(g, &r[p->a]));
            NEXT;
        }
        /* a call of itself: a frame of the arena, run by this loop (see rv_frames) */
        if (__builtin_expect(rv_top > rv_last - fn->nreg_all || G->eval.run.call_depth >= MAX_CALL_DEPTH ||
                             err_interrupted || err_step_budget > 0, 0)) {
            flush_frames(f);     /* (then run_fn's way in: its checks, its errors, its poll) */
            SET(run_fn(g, k->tab, &r[p->a], r));
            NEXT;
        }
        double *nr = rv_top;
        rv_top += fn->nreg_all + 1;     /* (+ 1: a frame per double at most: rv_frames' room) */
        rv_frames[rv_nf++] = (RvFrame){ r, p };
        if (fn->nparams == 1) nr[0] = r[p->a];
        else
            for (i = 0; i < fn->nparams; i++) nr[i] = r[p->a + i];
        copy_fixed(nr, r, fn->kbase, fn->nreg_all);
        G->eval.run.call_depth++;
        regvm_calls++;
        r = nr;
        p = code;
        goto *lab[p->op];
    }
JUMPS_AND_BOUND_FLUSH
poll_:
    if (__builtin_expect(err_interrupted || err_step_budget > 0, 0)) flush_frames(f), poll(p);
    NEXT;
ret: {
        double v = r[p->a];
        if (rv_nf > base_nf) {   /* back from a call of itself: its caller's frame and place */
            int j = --rv_nf;
            if (j < rv_pushed) {
                call_pop();
                rv_pushed = j;
            }
            G->eval.run.call_depth--;
            rv_top = r;
            r = rv_frames[j].r;
            p = rv_frames[j].p;
            G->err.where.node = p->node;   /* (what the callee's way out restores: the call's) */
            SET(v);
            NEXT;
        }
        G->eval.run.call_depth--;
        G->err.where = saved;
        call_pop();
        return v;
    }
loadma: {
        const Storage *st = k->tab->st[p->c];
        x = r[p->a] * r[p->b] + r[p->e];
        SET(__builtin_expect(whole_index(x, st->n, &i), 1) ? st->v[i].u.n : (flush_frames(f), index_slow(k, p, x)));
        NEXT;
    }
muladd: SET(r[p->a] + r[p->b] * r[p->c]); NEXT;
mulsub: SET(r[p->a] - r[p->b] * r[p->c]); NEXT;
mulsubr: SET(r[p->b] * r[p->c] - r[p->a]); NEXT;
forbegin:   /* p[0] i = lo, p[1] its test, p[2] hi = its leaf, p[3] its test, p[4] I_FORENTER */
    r[p->d] = r[p->a];
    if (__builtin_expect(!is_whole(r[p->d]), 0)) flush_frames(f), bound_error(p + 1, r[p->d]);
    goto forbegin_hi;
forbegink:
    r[p->d] = r[p->a];
forbegin_hi:
    r[p[2].d] = r[p[2].a];   /* (a leaf: reading it first or second is the same) */
    if (__builtin_expect(!is_whole(r[p[2].d]), 0)) flush_frames(f), bound_error(p + 3, r[p[2].d]);
    p += 4;
    goto forenter;
forenter:
    if (!(r[p->a] < r[p->b])) {
        p = code + p->d;
        goto *lab[p->op];
    }
    if (__builtin_expect(err_interrupted || err_step_budget > 0, 0)) flush_frames(f), poll(p);
    r[p->c] = r[p->a];
    acc = r[p[1].a];    /* the body's first operand, if it is chained (mark_chains); the step keeps acc */
    NEXT;
forstep:
    r[p->a] = r[p->a] + 1;
    if (r[p->a] < r[p->b]) {
        if (__builtin_expect(err_interrupted || err_step_budget > 0, 0)) flush_frames(f), poll(p);
        r[p->c] = r[p->a];
        p = code + p->d;
        goto *lab[p->op];
    }
    NEXT;
}
#undef SET
#undef NEXT
#undef JUMP

/* ------------------------------------------------------------ recording
 *
 * The recording form: the same code, run with a tape id beside each
 * register (0: none), for a call whose captured arrays it only reads hold
 * recorded numbers (det's A under grad). Each + - * / and unary minus of
 * which an operand has an id records the entry the tree walker's
 * arithmetic records for it (arith_record_binary, arith_record for a
 * negation: threaded.c's recorded_*, num_op), operands in the source's
 * order, products before the sums that read them; the others stay plain.
 * An element read gives the element's id, labelled as the tree walker
 * labels it (elem_id). rec_analysis has made sure an
 * id can reach nothing else but a return (its value and id, a number as
 * num_rec boxes it) and a call's value.
 *
 * Reclaiming: the tree walker runs no pass between the statements of a
 * call, but each loop step may (reclaim_loop_step, from the loop's floor),
 * and the passes find live ids in the frames (Envs). So the loops here
 * take their floors and step as the tree walker's do, at the same points,
 * and the locals' ids of every compiled call running are roots of a pass
 * (regvm_each_root, called with the evaluator's roots) and renumbered by
 * it, as a frame's slots are. Temporaries are not roots: at a loop step
 * the running call's hold no ids, and an enclosing call's hold ids made
 * before the loop began, below its floor, which a pass leaves alone (the
 * tree walker's C locals are no roots either). */
typedef struct RecFrame {
    uint32_t *ids;
    int n;
    struct RecFrame *up;
} RecFrame;
static RecFrame *rec_top;     /* the innermost compiled call recording */

void regvm_each_root(void (*fn)(uint32_t *id, void *ud), void *ud)
{
    for (RecFrame *f = rec_top; f; f = f->up)
        for (int i = 0; i < f->n; i++)
            if (f->ids[i]) fn(&f->ids[i], ud);
}

/* The tree walker's error position as it records (what the tape's limit
 * raises names it): RIns.node */
static inline void record_where(Node *where)
{
    if (where) G->err.where.node = where;
}

static __attribute__((noinline)) uint32_t record2(int op, uint32_t ia, uint32_t ib, double x, double y, double r,
                                                  Node *where)
{
    record_where(where);
    switch (op) {   /* (op a constant in each arm: arith_record_binary's tests fold) */
    case OP_ADD: return arith_record_binary(OP_ADD, ia, ib, x, y, r);
    case OP_SUB: return arith_record_binary(OP_SUB, ia, ib, x, y, r);
    case OP_MUL: return arith_record_binary(OP_MUL, ia, ib, x, y, r);
    default: return arith_record_binary(OP_DIV, ia, ib, x, y, r);
    }
}

static __attribute__((noinline)) uint32_t record_math1(int op, double x, uint32_t ia, double r)
{
    return arith_record(op, num_rec(x, ia), num_rec(x, ia), r);
}

static __attribute__((noinline)) uint32_t record_neg(double x, uint32_t ia, double r, Node *where)
{
    record_where(where);
    return arith_record(OP_NEG, num_rec(x, ia), num_rec(x, ia), r);
}

/* x op y's id: recorded when an operand has one */
static inline __attribute__((always_inline)) uint32_t rec_id(int op, uint32_t ia, uint32_t ib, double x, double y, double r,
                                                            Node *where)
{
    return __builtin_expect((ia | ib) != 0, 0) ? record2(op, ia, ib, x, y, r, where) : 0;
}

static double run_rec(Closure *c, const RTab *tab, const double *args, uint32_t *out_id);

/* A recorded element read from a captured array (of a frame keeping no
 * versions: cap_valid) is labelled as a version, as threaded.c's index_at
 * labels it (version_label_held): the binding it goes to next copies it. */
static inline uint32_t elem_id(const Value *e)
{
    if (__builtin_expect(e->id != 0, 0) && !tape_labeled(e->id)) rec_label(e->id);
    return e->id;
}

static __attribute__((noinline)) double call_other_rec(Closure *g, const double *args, uint32_t *id)
{
    RTab t;
    bind(&t, g->fn->reg, g);
    return run_rec(g, &t, args, id);
}

#define NEXT goto *lab[(++p)->op]
#define JUMP(cond) do { p = (cond) ? p + 1 : code + p->d; goto *lab[p->op]; } while (0)
#define WH (p->node)
/* run_fn's work with ids beside the registers (u); what differs is said. */
static NO_MEMCPY_LOOPS double run_rec(Closure *c, const RTab *tab, const double *args, uint32_t *out_id)
{
    FnInfo *f = c->fn;
    const RFn *fn = f->reg;
    ErrWhere saved = enter_call(f);
    int nr = fn->nreg_all > 0 ? fn->nreg_all : 1;
    double r[nr];
    uint32_t u[nr];
    LoopFloor floors[fn->nloops > 0 ? fn->nloops : 1];
    /* no ids: the locals (roots of a pass: run_rec's comment), the
     * constants and captured numbers; a temporary is written (r and u)
     * before it is read */
    for (int i = 0; i < fn->nregs; i++) u[i] = 0;
    for (int i = fn->kbase; i < fn->nreg_all; i++) u[i] = 0;
    for (int i = 0; i < fn->nparams; i++) r[i] = args[i];
    double *kr = r + fn->kbase;
    for (int i = 0; i < fn->nconst; i++) kr[i] = fn->consts[i];
    for (int i = 0; i < fn->ncapnum; i++) r[fn->nbase + i] = tab->slot[fn->capnum[i]]->u.n;
    RecFrame frame = { u, fn->nregs, rec_top };
    rec_top = &frame;
    const RCall call = { fn, c, tab }, *k = &call;

    static void *const lab[] = {
        [I_ADD] = &&add, [I_SUB] = &&sub, [I_MUL] = &&mul, [I_DIV] = &&div, [I_NEG] = &&neg, [I_MOV] = &&mov,
        [I_LOAD] = &&load, [I_STORE] = &&store, [I_CALL] = &&call, [I_JMP] = &&jmp,
        [I_JNLT] = &&jnlt, [I_JNLE] = &&jnle, [I_JNGT] = &&jngt, [I_JNGE] = &&jnge, [I_JNEQ] = &&jneq, [I_JNNE] = &&jnne,
        [I_BOUND] = &&bound, [I_POLL] = &&poll_, [I_RET] = &&ret,
        [I_LOADMA] = &&loadma, [I_MULADD] = &&muladd, [I_MULSUB] = &&mulsub, [I_MULSUBR] = &&mulsubr,
        [I_FORENTER] = &&forenter, [I_FORSTEP] = &&forstep, [I_PMULADD] = &&pmuladd, [I_WBEGIN] = &&wbegin,
        /* (the chained forms: their operand is in its register too) */
        [I_ADDA] = &&add, [I_SUBA] = &&sub, [I_MULA] = &&mul, [I_DIVA] = &&div,
        [I_FORBEGIN] = &&mov, [I_FORBEGINK] = &&mov, [I_LOADK] = &&load, [I_STOREK] = &&store,
        [I_ADDB] = &&add, [I_SUBB] = &&sub, [I_MULB] = &&mul, [I_DIVB] = &&div, [I_CALLA] = &&call,
        [I_JLT] = &&jlt, [I_JLE] = &&jle, [I_JGT] = &&jgt, [I_JGE] = &&jge, [I_JEQ] = &&jeq, [I_JNE] = &&jne };
    const RIns *code = k->fn->code, *p = code;
    int i;
    double x, y, z, q;
    uint32_t ip;
    goto *lab[p->op];
add: x = r[p->a], y = r[p->b], z = x + y; u[p->d] = rec_id(OP_ADD, u[p->a], u[p->b], x, y, z, WH); r[p->d] = z; NEXT;
sub: x = r[p->a], y = r[p->b], z = x - y; u[p->d] = rec_id(OP_SUB, u[p->a], u[p->b], x, y, z, WH); r[p->d] = z; NEXT;
mul: x = r[p->a], y = r[p->b], z = x * y; u[p->d] = rec_id(OP_MUL, u[p->a], u[p->b], x, y, z, WH); r[p->d] = z; NEXT;
div: x = r[p->a], y = r[p->b], z = x / y; u[p->d] = rec_id(OP_DIV, u[p->a], u[p->b], x, y, z, WH); r[p->d] = z; NEXT;
neg:
    x = r[p->a];
    u[p->d] = __builtin_expect(u[p->a] != 0, 0) ? record_neg(x, u[p->a], -x, WH) : 0;
    r[p->d] = -x;
    NEXT;
mov: r[p->d] = r[p->a]; u[p->d] = u[p->a]; NEXT;
load: {
        const Storage *st = k->tab->st[p->c];
        x = r[p->a];
        if (__builtin_expect(whole_index(x, st->n, &i), 1)) r[p->d] = st->v[i].u.n, u[p->d] = elem_id(&st->v[i]);
        else index_slow(k, p, x);   /* (raises: an element read here is a number, of an id or not) */
        NEXT;
    }
store: {
        Storage *st = k->tab->st[p->c];
        x = r[p->a];
        if (__builtin_expect(whole_index(x, st->n, &i), 1)) st->v[i].u.n = r[p->b];
        else store_slow(k, p, r[p->b], x);
        NEXT;
    }
call: {
        G->err.where.node = p->node;
        const Value *fv = k->tab->slot[p->c];
        if (fv->t == V_BUILTIN) {   /* ev_call_math1: num_op(op, a, a), which records an argument with an id */
            int op = k->tab->op[p->c];
            x = r[p->a];
            z = num_apply_f64(op, x, x);
            u[p->d] = __builtin_expect(u[p->a] != 0, 0) ? record_math1(op, x, u[p->a], z) : 0;
            r[p->d] = z;
            NEXT;
        }
        Closure *g = AS_FN(*fv);
        uint32_t id;
        z = g == k->c ? run_rec(g, k->tab, &r[p->a], &id) : call_other_rec(g, &r[p->a], &id);
        r[p->d] = z;
        u[p->d] = id;
        NEXT;
    }
JUMPS_AND_BOUND
wbegin: floors[p->e] = reclaim_loop_begin(); NEXT;
poll_:      /* a while loop's step: while_steps' poll, then its reclaim step */
    if (__builtin_expect(err_interrupted || err_step_budget > 0, 0)) poll(p);
    reclaim_loop_step(&floors[p->e]);
    NEXT;
ret: {
        double v = r[p->a];
        *out_id = u[p->a];
        rec_top = frame.up;
        G->eval.run.call_depth--;
        G->err.where = saved;
        call_pop();
        return v;
    }
loadma: {
        const Storage *st = k->tab->st[p->c];
        x = r[p->a] * r[p->b] + r[p->e];
        if (__builtin_expect(whole_index(x, st->n, &i), 1)) r[p->d] = st->v[i].u.n, u[p->d] = elem_id(&st->v[i]);
        else index_slow(k, p, x);
        NEXT;
    }
    /* the fused forms: the product recorded first, then the sum or
     * difference, each operand where the source has it */
muladd:
    x = r[p->a], y = r[p->b], z = r[p->c], q = y * z;
    ip = rec_id(OP_MUL, u[p->b], u[p->c], y, z, q, WH);
    u[p->d] = rec_id(OP_ADD, u[p->a], ip, x, q, x + q, WH);
    r[p->d] = x + q;
    NEXT;
pmuladd:
    x = r[p->a], y = r[p->b], z = r[p->c], q = y * z;
    ip = rec_id(OP_MUL, u[p->b], u[p->c], y, z, q, WH);
    u[p->d] = rec_id(OP_ADD, ip, u[p->a], q, x, q + x, WH);
    r[p->d] = q + x;
    NEXT;
mulsub:
    x = r[p->a], y = r[p->b], z = r[p->c], q = y * z;
    ip = rec_id(OP_MUL, u[p->b], u[p->c], y, z, q, WH);
    u[p->d] = rec_id(OP_SUB, u[p->a], ip, x, q, x - q, WH);
    r[p->d] = x - q;
    NEXT;
mulsubr:
    x = r[p->a], y = r[p->b], z = r[p->c], q = y * z;
    ip = rec_id(OP_MUL, u[p->b], u[p->c], y, z, q, WH);
    u[p->d] = rec_id(OP_SUB, ip, u[p->a], q, x, q - x, WH);
    r[p->d] = q - x;
    NEXT;
forenter:   /* ex_for_local: the floor as the loop begins; each step the poll, the reclaim step, the counter */
    floors[p->e] = reclaim_loop_begin();
    if (!(r[p->a] < r[p->b])) {
        p = code + p->d;
        goto *lab[p->op];
    }
    if (__builtin_expect(err_interrupted || err_step_budget > 0, 0)) poll(p);
    reclaim_loop_step(&floors[p->e]);
    r[p->c] = r[p->a];
    u[p->c] = 0;
    NEXT;
forstep:
    r[p->a] = r[p->a] + 1;
    if (r[p->a] < r[p->b]) {
        if (__builtin_expect(err_interrupted || err_step_budget > 0, 0)) poll(p);
        reclaim_loop_step(&floors[p->e]);
        r[p->c] = r[p->a];
        u[p->c] = 0;
        p = code + p->d;
        goto *lab[p->op];
    }
    NEXT;
}
#undef NEXT
#undef JUMP
#undef WH

/* ------------------------------------------------------------ forward
 *
 * The forward form: jvp(f, x, v) of a compiled closure f, x and v plain
 * numbers (fwd.c's fwd_jvp offers it, regvm_jvp), run with a tangent
 * beside each register (s) where the tree walker runs f on duals and
 * boxes one per operation (W2F: ~1045 instructions a step). Each
 * operation's tangent is what dual.c's op_plain_body gives a dual of one
 * tangent, from the same rule table (rules.h, in float64: the backend is
 * float64 here, so the same bits) in the same order: the partials of the
 * operands, a term for each operand whose tangent is nonzero (a 0 partial
 * gives a signed zero, or +0 against inf and nan: the strong zero), the
 * first term then the sum. A plain number
 * is a tangent of 0, which gives the same: the tree walker's plain
 * operation has none, its jvp reads a plain result's tangent as 0, and a
 * 0 tangent passes nothing (a +0 result). Both tangents 0: no rule is
 * computed. fwd_analysis keeps tangents out of indices, bounds,
 * comparisons and stores; calls of compiled closures pass theirs. What is
 * declined: k tangents (jvp with a matrix V: fwd_jvp_chunk), x or v not
 * numbers or recorded, anything validate(RV_FWD) refuses. */
/* a * b with an exact 0 factor winning over inf and nan (dual.c's
 * mul_strong_f64): a 0 partial is still a term, 0 * -1 = -0 */
static inline double mul_strong(double a, double b)
{
    double r = a * b;
    return r != r && (a == 0 || b == 0) ? 0 : r;
}

static inline __attribute__((always_inline)) double tangent_of2(int op, double x, double y, double z, double tx, double ty)
{
    double da, db;
    rule_partials_f64(op, x, y, z, &da, &db);
    double t = 0;
    if (tx != 0) t = mul_strong(da, tx);
    if (ty != 0) t = t + mul_strong(db, ty);
    return t;
}
#define TAN2(op, x, y, z, tx, ty) (((tx) != 0) | ((ty) != 0) ? tangent_of2(op, x, y, z, tx, ty) : 0.0)

/* a math builtin's tangent, out of line (its rule calls libm) */
static __attribute__((noinline)) double tangent_math1(int op, double x, double z, double tx)
{
    switch (op) {   /* (the common ones with op constant: their rule folds) */
    case OP_TANH: return tangent_of2(OP_TANH, x, 0, z, tx, 0);
    case OP_EXP: return tangent_of2(OP_EXP, x, 0, z, tx, 0);
    case OP_SIN: return tangent_of2(OP_SIN, x, 0, z, tx, 0);
    default: return tangent_of2(op, x, 0, z, tx, 0);
    }
}

static double run_fwd(Closure *c, const RTab *tab, const double *args, const double *targs, double *tout);

static __attribute__((noinline)) double call_other_fwd(Closure *g, const double *args, const double *targs, double *tout)
{
    RTab t;
    bind(&t, g->fn->reg, g);
    return run_fwd(g, &t, args, targs, tout);
}

#define NEXT goto *lab[(++p)->op]
#define JUMP(cond) do { p = (cond) ? p + 1 : code + p->d; goto *lab[p->op]; } while (0)
#define FWD2(OPC, EXPR) x = r[p->a], y = r[p->b], z = (EXPR); s[p->d] = TAN2(OPC, x, y, z, s[p->a], s[p->b]); r[p->d] = z; NEXT
/* run_fn's work with tangents beside the registers (s); what differs is said. */
static NO_MEMCPY_LOOPS double run_fwd(Closure *c, const RTab *tab, const double *args, const double *targs, double *tout)
{
    FnInfo *f = c->fn;
    const RFn *fn = f->reg;
    ErrWhere saved = enter_call(f);
    int nr = fn->nreg_all > 0 ? fn->nreg_all : 1;
    double r[nr], s[nr];
    /* tangents 0 but the parameters': locals, constants, captured numbers;
     * a temporary is written (r and s) before it is read */
    for (int i = 0; i < nr; i++) s[i] = 0;
    for (int i = 0; i < fn->nparams; i++) r[i] = args[i], s[i] = targs[i];
    double *kr = r + fn->kbase;
    for (int i = 0; i < fn->nconst; i++) kr[i] = fn->consts[i];
    for (int i = 0; i < fn->ncapnum; i++) r[fn->nbase + i] = tab->slot[fn->capnum[i]]->u.n;
    const RCall call = { fn, c, tab }, *k = &call;

    static void *const lab[] = {
        [I_ADD] = &&add, [I_SUB] = &&sub, [I_MUL] = &&mul, [I_DIV] = &&div, [I_NEG] = &&neg, [I_MOV] = &&mov,
        [I_LOAD] = &&load, [I_STORE] = &&store, [I_CALL] = &&call, [I_JMP] = &&jmp,
        [I_JNLT] = &&jnlt, [I_JNLE] = &&jnle, [I_JNGT] = &&jngt, [I_JNGE] = &&jnge, [I_JNEQ] = &&jneq, [I_JNNE] = &&jnne,
        [I_BOUND] = &&bound, [I_POLL] = &&poll_, [I_RET] = &&ret,
        [I_LOADMA] = &&loadma, [I_MULADD] = &&muladd, [I_MULSUB] = &&mulsub, [I_MULSUBR] = &&mulsubr,
        [I_FORENTER] = &&forenter, [I_FORSTEP] = &&forstep, [I_PMULADD] = &&pmuladd, [I_WBEGIN] = &&jmp,
        /* (the chained forms: their operand is in its register too) */
        [I_ADDA] = &&add, [I_SUBA] = &&sub, [I_MULA] = &&mul, [I_DIVA] = &&div,
        [I_FORBEGIN] = &&mov, [I_FORBEGINK] = &&mov, [I_LOADK] = &&load, [I_STOREK] = &&store,
        [I_ADDB] = &&add, [I_SUBB] = &&sub, [I_MULB] = &&mul, [I_DIVB] = &&div, [I_CALLA] = &&call,
        [I_JLT] = &&jlt, [I_JLE] = &&jle, [I_JGT] = &&jgt, [I_JGE] = &&jge, [I_JEQ] = &&jeq, [I_JNE] = &&jne };
    const RIns *code = k->fn->code, *p = code;
    int i;
    double x, y, z, q, tq;
    goto *lab[p->op];
add: FWD2(OP_ADD, x + y);
sub: FWD2(OP_SUB, x - y);
mul: FWD2(OP_MUL, x * y);
div: FWD2(OP_DIV, x / y);
neg:
    x = r[p->a];
    s[p->d] = TAN2(OP_NEG, x, 0.0, -x, s[p->a], 0.0);
    r[p->d] = -x;
    NEXT;
mov: r[p->d] = r[p->a]; s[p->d] = s[p->a]; NEXT;
load: {   /* (the elements are plain numbers: validate) */
        const Storage *st = k->tab->st[p->c];
        x = r[p->a];
        r[p->d] = __builtin_expect(whole_index(x, st->n, &i), 1) ? st->v[i].u.n : index_slow(k, p, x);
        s[p->d] = 0;
        NEXT;
    }
store: NEXT;   /* (not in a body the forward form runs: fwd_analysis) */
call: {
        G->err.where.node = p->node;
        const Value *fv = k->tab->slot[p->c];
        x = r[p->a];
        if (fv->t == V_BUILTIN) {   /* a plain argument: num_op; a dual: dual_op(op, a, a), whose b is 0 */
            int op = k->tab->op[p->c];
            z = num_apply_f64(op, x, x);
            s[p->d] = s[p->a] != 0 ? tangent_math1(op, x, z, s[p->a]) : 0.0;
            r[p->d] = z;
            NEXT;
        }
        Closure *g = AS_FN(*fv);
        double t;
        z = g == k->c ? run_fwd(g, k->tab, &r[p->a], &s[p->a], &t) : call_other_fwd(g, &r[p->a], &s[p->a], &t);
        r[p->d] = z;
        s[p->d] = t;
        NEXT;
    }
JUMPS_AND_BOUND
poll_:
    if (__builtin_expect(err_interrupted || err_step_budget > 0, 0)) poll(p);
    NEXT;
ret: {
        double v = r[p->a];
        *tout = s[p->a];
        G->eval.run.call_depth--;
        G->err.where = saved;
        call_pop();
        return v;
    }
loadma: {
        const Storage *st = k->tab->st[p->c];
        x = r[p->a] * r[p->b] + r[p->e];
        r[p->d] = __builtin_expect(whole_index(x, st->n, &i), 1) ? st->v[i].u.n : index_slow(k, p, x);
        s[p->d] = 0;
        NEXT;
    }
    /* the fused forms: the product's dual first, then the sum's, each
     * operand where the source has it */
#define PRODUCT() x = r[p->a], y = r[p->b], z = r[p->c], q = y * z, tq = TAN2(OP_MUL, y, z, q, s[p->b], s[p->c])
muladd:
    PRODUCT();
    s[p->d] = TAN2(OP_ADD, x, q, x + q, s[p->a], tq);
    r[p->d] = x + q;
    NEXT;
pmuladd:
    PRODUCT();
    s[p->d] = TAN2(OP_ADD, q, x, q + x, tq, s[p->a]);
    r[p->d] = q + x;
    NEXT;
mulsub:
    PRODUCT();
    s[p->d] = TAN2(OP_SUB, x, q, x - q, s[p->a], tq);
    r[p->d] = x - q;
    NEXT;
mulsubr:
    PRODUCT();
    s[p->d] = TAN2(OP_SUB, q, x, q - x, tq, s[p->a]);
    r[p->d] = q - x;
    NEXT;
#undef PRODUCT
forenter:
    if (!(r[p->a] < r[p->b])) {
        p = code + p->d;
        goto *lab[p->op];
    }
    if (__builtin_expect(err_interrupted || err_step_budget > 0, 0)) poll(p);
    r[p->c] = r[p->a];
    s[p->c] = 0;
    NEXT;
forstep:
    r[p->a] = r[p->a] + 1;
    if (r[p->a] < r[p->b]) {
        if (__builtin_expect(err_interrupted || err_step_budget > 0, 0)) poll(p);
        r[p->c] = r[p->a];
        s[p->c] = 0;
        p = code + p->d;
        goto *lab[p->op];
    }
    NEXT;
}
#undef FWD2
#undef NEXT
#undef JUMP
#undef JUMPS_AND_BOUND
#undef JUMPS_AND_BOUND_FLUSH
#undef JUMPS_AND_BOUND_WITH

/* The recording form's outermost call. An error unwinds past the frames
 * of rec_top: a handler of its own takes them off the roots on the way
 * (none needed when nothing handles the error: the process ends). */
static double run_rec_outer(Closure *c, const RTab *tab, const double *args, uint32_t *id)
{
    RecFrame *top = rec_top;
    if (!G->err.handler) return run_rec(c, tab, args, id);
    ErrJmp j;
    j.prev = G->err.handler;
    G->err.handler = &j;
    if (setjmp(j.buf)) {
        rec_top = top;
        G->err.handler = j.prev;
        longjmp(j.prev->buf, 1);
    }
    double v = run_rec(c, tab, args, id);
    G->err.handler = j.prev;
    return v;
}

/* A closure whose calls are declined many times in a row (det's minor
 * under grad: A is recorded) rests (REG_RESTING, regvm.h) when called by a
 * local or captured name, or, called by a global name, is not offered its
 * next RV_SKIP calls: a decline costs some 35 instructions, which a
 * recursive closure would pay at every call. Declining is always safe, so
 * this only delays the form. */
#define RV_DECLINES 16
#define RV_SKIP 255

static int try_call(Closure *c, int argc, const Value *args, Value *out);

int regvm_jvp(Value f, Value x, Value v, Value *tangent)
{
    if (!eval_fast_paths || f.t != V_FN) return 0;
    Closure *c = AS_FN(f);
    FnInfo *fi = c->fn;
    if (!fi) return 0;   /* (a function made by grad, hvp's gradient: no body of its own) */
    if (fi->reg_state == REG_DECLINED || fi->nparams != 1 || x.t != V_NUM || v.t != V_NUM || x.id || v.id ||
        G->num.backend != BK_F64 || (fi->labels && G->tape.recording) || G->ckpt.mode || reclaim_due())
        return 0;
    Closure *seen[RV_VALIDATE_DEPTH];
    if (!validate(c, seen, 0, RV_FWD)) return 0;
    RTab t;
    bind(&t, fi->reg, c);
    regvm_entries++;
    regvm_fwd_entries++;
    double tx = v.u.n, tr;
    run_fwd(c, &t, &x.u.n, &tx, &tr);
    *tangent = num_val(tr);
    return 1;
}

int regvm_call(Closure *c, int argc, const Value *args, Value *out, int by_global)
{
    FnInfo *f = c->fn;
    regvm_offers++;
    if (try_call(c, argc, args, out)) {
        f->reg_declines = 0;
        return 1;
    }
    if (++f->reg_declines >= RV_DECLINES && f->reg_state == REG_COMPILED) {
        f->reg_declines = RV_DECLINES - 1;   /* one more decline after the skip skips again */
        if (by_global) f->reg_skip = RV_SKIP;
        else f->reg_state = REG_RESTING;
    }
    return 0;
}

static int try_call(Closure *c, int argc, const Value *args, Value *out)
{
    FnInfo *f = c->fn;
    if (!eval_fast_paths || f->reg_state == REG_DECLINED) return 0;
    if (f->reg_state == REG_RESTING) f->reg_state = REG_COMPILED;   /* offered by a global name: awake */
    int witness = f->reg && f->reg->last_bad >= 0 && f->reg->wit_st && witness_holds(f->reg, c);
    if (argc > EVAL_CALL_ARGS || G->num.backend != BK_F64 || (f->labels && G->tape.recording) || G->ckpt.mode || G->eval.run.nograd_block ||
        G->eval.run.nograd_frame >= 0 || argc != f->nparams)
        return 0;
    double a[EVAL_CALL_ARGS];
    for (int i = 0; i < argc; i++) {
        if (args[i].t != V_NUM || args[i].id) return 0;
        a[i] = args[i].u.n;
    }
    Closure *seen[RV_VALIDATE_DEPTH];
    RTab t;
    /* (the plain form's loops run no reclaiming pass: none may be due) */
    if (!witness && !reclaim_due() && validate(c, seen, 0, 0)) {
        bind(&t, f->reg, c);
        regvm_entries++;
        rv_top = rv_arena;   /* (no compiled call is running: see rv_frames) */
        rv_nf = rv_pushed = 0;
        *out = num_val(run_fn(c, &t, a, NULL));
        return 1;
    }
    /* the recording form: recorded numbers in arrays it reads (det's A
     * under grad); its loops step the reclaimer as the tree walker's do */
    if (!compiled(f) || !f->reg->rec_ok || !G->tape.recording || G->tape.busy || !validate(c, seen, 0, 1)) return 0;
    bind(&t, f->reg, c);
    regvm_entries++;
    regvm_rec_entries++;
    uint32_t id;
    double v = run_rec_outer(c, &t, a, &id);
    *out = num_rec(v, id);
    return 1;
}
