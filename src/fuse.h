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
/* Whether a tree with an operand a is worth the attempt: an array or view
 * of 64 elements or more (shorter ones are left to the operations one at
 * a time: the tree's walk and set-up cost more than the arrays made
 * between them, as lstm's gates of a few elements a step). Inline: the
 * evaluator asks before calling. */
static inline int fuse_worth(Value a) { return is_seq(a) && seq_len(a) >= 64; }
/* The same with root->a's value a evaluated already (an array: the
 * evaluator's a op b found it is no number), root->b a tree: a taken
 * over when it did (a temporary may take the result), left to the caller
 * when not. */
int fuse_tree_left(Node *root, Env *env, Value a, Value *out);
#endif
