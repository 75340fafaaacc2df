/* fuse.c: arithmetic trees of the program over arrays, in one pass.
 *
 * ode's y + h * (k1 + 2 * k2 + 2 * k3 + k4) / 6 over arrays of 1000 is
 * eight array operations, each an array made, written and read back; as
 * one tree (arith_fused) it is one pass over chunks of doubles that stay
 * in cache, each element the same formula in the same order. The trees
 * are found where the evaluator meets an array operand before evaluating
 * anything more (eval_binop: a name on the left; eval_binop_left: the
 * left operand's value): their leaves are names and number literals,
 * read here in place, so a tree declined costs no evaluation twice and
 * runs none of the program's code. */
#include "fuse.h"
#include "arith.h"
#include "state.h"

static int op_code(int binop)
{
    switch (binop) {
    case OP2_ADD: return OP_ADD;
    case OP2_SUB: return OP_SUB;
    case OP2_MUL: return OP_MUL;
    case OP2_DIV: return OP_DIV;
    default: return -1;
    }
}

/* n in postfix order into prog (*np items, *nl leaves); 0 if it is not
 * such a tree or too big. given (NULL or a node under n whose value the
 * caller has) is a leaf too. */
static int flatten(const Node *n, const Node *given, ArithFuseItem *prog, int *np, const Node **leaves, int *nl)
{
    if (*np >= ARITH_FUSE_ITEMS) return 0;
    if (n == given || n->kind == N_NAME || n->kind == N_NUM) {
        if (*nl >= ARITH_FUSE_LEAVES) return 0;
        leaves[*nl] = n;
        prog[(*np)++] = (ArithFuseItem){ 1, 0, (int8_t)(*nl)++ };
        return 1;
    }
    if (n->kind == N_NEG) {
        if (!flatten(n->a, given, prog, np, leaves, nl) || *np >= ARITH_FUSE_ITEMS) return 0;
        prog[(*np)++] = (ArithFuseItem){ 0, OP_NEG, -1 };
        return 1;
    }
    int op = n->kind == N_BINOP ? op_code(n->op) : -1;
    if (op < 0 || !flatten(n->a, given, prog, np, leaves, nl) || !flatten(n->b, given, prog, np, leaves, nl) ||
        *np >= ARITH_FUSE_ITEMS)
        return 0;
    prog[(*np)++] = (ArithFuseItem){ 0, (uint8_t)op, -1 };
    return 1;
}

/* A leaf's value read in place (borrowed: its variable holds it while the
 * tree is computed, which runs no code of the program): a number literal
 * (float64: the backend arith_fused computes in), a local, a global, a
 * number captured one frame out; 0 for what the general path must read
 * (an undefined name: its error; a captured array or recorded number:
 * read_var's work). */
static int leaf_value(const Node *l, Env *env, Value *v)
{
    if (l->kind == N_NUM) {
        *v = num_val(l->num);
        return 1;
    }
    const Value *s;
    if (l->ref == REF_LOCAL) s = &env->slots[l->slot];
    else if (l->ref == REF_GLOBAL) s = &G->eval.globals[l->slot].v;
    else if (l->ref == REF_UPVAL && l->depth == 1 && env->parent) {
        s = &env->parent->slots[l->slot];
        if (s->t != V_NUM || s->id) return 0;
    } else
        return 0;
    if (s->t == V_UNDEF) return 0;
    *v = *s;
    return 1;
}

/* root's tree and its leaves' values (leaf 0 given when given_node) */
static int tree(Node *root, Env *env, const Node *given_node, const Value *given, Value *out)
{
    ArithFuseItem prog[ARITH_FUSE_ITEMS];
    const Node *leaves[ARITH_FUSE_LEAVES];
    Value vals[ARITH_FUSE_LEAVES];
    int np = 0, nl = 0;
    if (!flatten(root, given_node, prog, &np, leaves, &nl) || np - nl < 2) return 0;
    for (int i = 0; i < nl; i++) {
        if (i == 0 && given) vals[0] = *given;
        else if (!leaf_value(leaves[i], env, &vals[i])) return 0;
    }
    return arith_fused(prog, np, vals, nl, given != NULL, out);
}

int fuse_tree(Node *root, Env *env, Value *out)
{
    /* a left operand that holds no array (forward mode's duals: binop_t
     * sends a name holding a non-number here) declines before the walk */
    Value first;
    if (!eval_fast_paths || G->num.backend != BK_F64 || root->a->kind != N_NAME || !leaf_value(root->a, env, &first) ||
        !fuse_worth(first))
        return 0;
    return tree(root, env, NULL, NULL, out);
}

int fuse_tree_left(Node *root, Env *env, Value a, Value *out)
{
    if (!eval_fast_paths || G->num.backend != BK_F64 || !fuse_worth(a) || !tree(root, env, root->a, &a, out)) return 0;
    v_release(a);
    return 1;
}
