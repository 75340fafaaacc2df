/* fuse.h: arithmetic trees of the program computed over arrays in one
 * pass (arith_fused), found where the evaluator meets an array operand. */
#ifndef WG_FUSE_H
#define WG_FUSE_H
#include "ast.h"
#include "value.h"

/* root (+ - * / and negation over names and number literals, two
 * operations or more; its left operand a name that holds an array) over
 * arrays of plain numbers that record nothing, in one pass: each element
 * the unfused tree's value. 1 and *out (owned) if it did; 0 (nothing
 * evaluated, nothing made) for the general path. */
int fuse_tree(Node *root, Env *env, Value *out);
/* The same with root->a's value a evaluated already (an array: the
 * evaluator's a op b found it is no number), root->b a tree: a taken
 * over when it did (a temporary may take the result), left to the caller
 * when not. */
int fuse_tree_left(Node *root, Env *env, Value a, Value *out);
#endif
