/* suggest.c: "did you mean" for names that are not defined. The nearest
 * known name (locals of the enclosing functions, then globals: builtins,
 * the standard library, the user's variables) by edit distance, where a
 * swap of two neighbouring letters counts as one edit. */
#include <stdio.h>
#include <string.h>
#include <ctype.h>
#include "eval.h"
#include "error.h"
#include "suggest.h"
#include "state.h"

#define MAXLEN 32

/* Optimal string alignment distance; case differences cost nothing here
 * and are counted by the caller. */
static int distance(const char *a, const char *b)
{
    int la = (int)strlen(a), lb = (int)strlen(b);
    if (la > MAXLEN || lb > MAXLEN) return 99;
    int d[MAXLEN + 1][MAXLEN + 1];
    for (int i = 0; i <= la; i++) d[i][0] = i;
    for (int j = 0; j <= lb; j++) d[0][j] = j;
    for (int i = 1; i <= la; i++)
        for (int j = 1; j <= lb; j++) {
            int same = tolower((unsigned char)a[i - 1]) == tolower((unsigned char)b[j - 1]);
            int best = d[i - 1][j - 1] + !same;
            if (d[i - 1][j] + 1 < best) best = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < best) best = d[i][j - 1] + 1;
            if (i > 1 && j > 1 && tolower((unsigned char)a[i - 1]) == tolower((unsigned char)b[j - 2])
                && tolower((unsigned char)a[i - 2]) == tolower((unsigned char)b[j - 1])
                && d[i - 2][j - 2] + 1 < best)
                best = d[i - 2][j - 2] + 1;
            d[i][j] = best;
        }
    return d[la][lb];
}

typedef struct {
    const char *name;    /* what was written */
    const char *best;
    int score;           /* lower is nearer; twice the edits, +1 for case only */
} Search;

static void consider(Search *s, const char *cand)
{
    if (!cand || !*cand || strcmp(cand, s->name) == 0) return;
    if (cand[0] == '_' && s->name[0] != '_') return;     /* private helpers */
    int len = (int)strlen(s->name), edits = distance(s->name, cand);
    int limit = len <= 2 ? 0 : (len + 1) / 3;
    int score;
    if (edits == 0) score = 1;                          /* Sin for sin */
    else if (edits <= limit) score = 2 * edits;
    else if (strlen(cand) >= 3 && strncmp(s->name, cand, strlen(cand)) == 0)
        score = 2 * limit + 2;                          /* lenght: len */
    else return;
    if (!s->best || score < s->score) {
        s->best = cand;
        s->score = score;
    }
}

const char *suggest_name(const char *name, Env *env)
{
    Search s = { name, NULL, 0 };
    for (Env *e = env; e; e = e->parent)
        if (e->fn)
            for (int i = 0; i < e->fn->nslots && i < e->n; i++)
                if (e->slots[i].t != V_UNDEF) consider(&s, e->fn->slotnames[i]);
    for (int i = 0; i < G->eval.nglobals; i++)
        if (eval_global_defined(i)) consider(&s, G->eval.globals[i].name);
    return s.best;
}

_Noreturn void suggest_undefined(const Node *n, Env *env)
{
    const char *near = suggest_name(n->name, env);
    if (near)
        err_raise_at(n, "undefined variable '%s'\nnote: did you mean '%s'?", n->name, near);
    err_raise_at(n, "undefined variable '%s'", n->name);
}
