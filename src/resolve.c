/* resolve.c: binds every name in a chunk to where it lives, once, before the
 * chunk runs, so the evaluator never looks a name up by string.
 * Scoping (SPEC "Syntax"): a name assigned anywhere in a function body (or
 * bound by a `for` or as a parameter) is local to that function; any other
 * name refers to the nearest enclosing function that has it as a local, and
 * failing that to a global. Blocks do not open scopes. */
#include <string.h>
#include "resolve.h"
#include "eval.h"
#include <stdio.h>
#include "error.h"
#include "state.h"
#include "threaded.h"

/* The first error found; resolution goes on but the chunk will not run. */

static void resolve_error(const Node *n, const char *msg, const char *name)
{
    if (G->resolve.error_at) return;
    G->resolve.error_at = n;
    snprintf(G->resolve.error_msg, sizeof G->resolve.error_msg, msg, name);
}

typedef struct Scope {
    FnInfo *fn;             /* NULL for the top level */
    struct Scope *outer;
    Chunk *chunk;
    int loops;              /* loops enclosing the current node in this body */
} Scope;

static int find_local(const FnInfo *f, const char *name)
{
    for (int i = 0; i < f->nslots; i++)
        if (strcmp(f->slotnames[i], name) == 0) return i;
    return -1;
}

static void add_local(Chunk *c, FnInfo *f, const char *name)
{
    if (find_local(f, name) >= 0) return;
    int n = f->nslots;
    if ((n & (n - 1)) == 0) {
        const char **bigger = ast_alloc(c, sizeof(char *) * (size_t)(n ? 2 * n : 1));
        if (n) memcpy(bigger, f->slotnames, sizeof(char *) * (size_t)n);
        f->slotnames = bigger;
    }
    f->slotnames[f->nslots++] = name;
}

static int is_call_to(const Node *n, const char *name)
{
    return n->kind == N_CALL && n->a->kind == N_NAME && strcmp(n->a->name, name) == 0;
}

/* First pass over one function body: which names are its locals, and does
 * it need tape versions or a heap frame. Nested function bodies are their
 * own business. */
static void collect(Chunk *c, FnInfo *f, Node *n)
{
    if (!n) return;
    switch (n->kind) {
    case N_FN:
        f->captures = 1;
        return;
    case N_ASSIGN: case N_COMPOUND:
        if (n->a->kind == N_NAME) add_local(c, f, n->a->name);
        break;
    case N_FOR:
        add_local(c, f, n->name);
        break;
    case N_VERSION:
        f->records = 1;
        break;
    case N_CALL:
        if (is_call_to(n, "d")) f->records = 1;
        break;
    default:
        break;
    }
    collect(c, f, n->a);
    collect(c, f, n->b);
    collect(c, f, n->c);
    for (int i = 0; i < n->n; i++) collect(c, f, n->list[i]);
}

static void bind_name(Scope *s, Node *n)
{
    int depth = 0;
    for (Scope *sc = s; sc && sc->fn; sc = sc->outer, depth++) {
        int slot = find_local(sc->fn, n->name);
        if (slot >= 0) {
            n->ref = depth == 0 ? REF_LOCAL : REF_UPVAL;
            n->depth = (uint8_t)(depth > 255 ? 255 : depth);
            n->slot = slot;
            return;
        }
    }
    n->ref = REF_GLOBAL;
    n->slot = eval_global_index(n->name);
}

static void resolve(Scope *s, Node *n);

static int local_or_global(const Node *n)
{
    return n && n->kind == N_NAME && (n->ref == REF_LOCAL || n->ref == REF_GLOBAL);
}

/* An expression whose evaluation calls nothing and assigns nothing, so it
 * cannot change which value a name holds (eval.c reads an element's array
 * after such an index, and evaluates the index once). */
static int pure_expr(const Node *n)
{
    switch (n->kind) {
    case N_NUM: case N_NAME: return 1;
    case N_NEG: return pure_expr(n->a);
    case N_BINOP: return pure_expr(n->a) && pure_expr(n->b);
    case N_INDEX: return n->index_pure;
    default: return 0;
    }
}

/* A call whose value, if it is a view (view, row, col), is only read, at
 * once, by the arithmetic it is an operand of (SPEC "Arrays and views"):
 * its arguments and whatever is evaluated after it up to that read
 * (`later`, NULL: nothing) call nothing and assign nothing, so no write
 * can come between, and the view needs no storage of its own (eval.c's
 * copy-on-write split) and aliases nothing afterwards. */
static void mark_view_read(Node *call, const Node *later)
{
    if (!call || call->kind != N_CALL || (later && !pure_expr(later))) return;
    for (int i = 0; i < call->n; i++)
        if (i > 0 && !pure_expr(call->list[i])) return;     /* the array argument is evaluated first */
    call->view_read = 1;
}

static void resolve_fn(Scope *outer, Node *n)
{
    FnInfo *f = n->fn;
    for (int i = 0; i < n->n; i++) {
        for (int j = 0; j < i; j++)
            if (strcmp(n->list[i]->name, n->list[j]->name) == 0)
                resolve_error(n->list[i], "parameter '%s' appears twice", n->list[i]->name);
        add_local(outer->chunk, f, n->list[i]->name);
    }
    collect(outer->chunk, f, f->body);
    Scope inner = { f, outer, outer->chunk, 0 };
    for (int i = 0; i < n->n; i++) bind_name(&inner, n->list[i]);
    resolve(&inner, f->body);
}

static void resolve(Scope *s, Node *n)
{
    if (!n) return;
    switch (n->kind) {
    case N_NAME: case N_VERSION:
        bind_name(s, n);
        return;
    case N_FN:
        resolve_fn(s, n);
        if (s->fn && (n->fn->records || n->fn->labels)) s->fn->labels = 1;
        return;
    case N_BREAK: case N_CONTINUE:
        if (!s->loops)
            resolve_error(n, "'%s' outside a loop", n->kind == N_BREAK ? "break" : "continue");
        return;
    case N_WHILE:
        resolve(s, n->a);
        s->loops++;
        resolve(s, n->b);
        s->loops--;
        return;
    case N_FOR:
        resolve(s, n->a);
        resolve(s, n->b);
        s->loops++;
        resolve(s, n->list[0]);
        s->loops--;
        bind_name(s, n->c);
        n->ref = n->c->ref;
        n->slot = n->c->slot;
        n->depth = n->c->depth;
        return;
    default:
        break;
    }
    resolve(s, n->a);
    resolve(s, n->b);
    resolve(s, n->c);
    for (int i = 0; i < n->n; i++) resolve(s, n->list[i]);
    /* what the evaluator's element short paths need to know statically */
    if (n->kind == N_INDEX) {
        n->plain_names = local_or_global(n->a) && local_or_global(n->b) && !n->c;
        n->index_pure = n->a && n->a->kind == N_NAME && n->b && !n->c && pure_expr(n->b);
    }
    if ((n->kind == N_BINOP && n->op <= OP2_POW) || n->kind == N_MATMUL) {
        mark_view_read(n->a, n->b);     /* the left operand: the right one is evaluated after it */
        mark_view_read(n->b, NULL);
    } else if (n->kind == N_NEG || n->kind == N_COMPOUND)
        mark_view_read(n->kind == N_NEG ? n->a : n->b, NULL);   /* a compound's right side is evaluated first */
}

/* Errors found here (break outside a loop, a repeated parameter) are
 * syntax errors: reported before anything runs. Returns 0,
 * or 1 with the message and place in ps. */
int resolve_chunk(Chunk *c, ParseState *ps)
{
    Scope top = { NULL, NULL, c, 0 };
    G->resolve.error_at = NULL;
    resolve(&top, c->root);
    if (!G->resolve.error_at) {
        threaded_compile(c->root);     /* each node's evaluator, once */
        return 0;
    }
    ps->err_line = G->resolve.error_at->line;
    ps->err_col = G->resolve.error_at->col;
    snprintf(ps->err_msg, sizeof ps->err_msg, "%s", G->resolve.error_msg);
    return 1;
}
