/* test_slow.c - WENGERT_SLOW (eval_fast_paths, eval.h) does what it says:
 * with it set, every node of a resolved chunk runs eval.c's general
 * evaluator and statement runner (threaded.c picks no special handler) and
 * no a[i] carries the static facts eval.c's element short paths need; without it (or
 * set to "0") the same chunk gets special handlers. routes.py --slow and
 * `make test-slow` compare the values both ways; this checks that the
 * second way is the general path at all (a knob that did nothing would
 * make those comparisons pass vacuously).
 * Prints "test_slow: N checks, M failed"; exit status non-zero on failure. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/wengert.h"
#include "../../src/state.h"     /* eval_fast_paths */
#include "../../src/eval.h"
#include "../../src/parse.h"
#include "../../src/ast.h"

#include "checks.h"

/* Element loops, a local's and a captured array's elements, compound
 * assignments of gathers, conditions on leaves: nodes each of threaded.c's
 * kinds of special handler is picked for. */
static const char *PROGRAM =
    "fn f(a, n) {\n"
    "    s = 0\n"
    "    for i in 0..n { s = s + a[i] * a[i] }\n"
    "    g = fn(k) => a[k] + 1\n"
    "    if s < 3 { s = s - g(0) }\n"
    "    return s\n"
    "}\n"
    "v = [1, 2, 3]\n"
    "v += take(v, [2, 1, 0])\n"
    "y = f(v, 3)\n";

typedef struct { int nodes, general_ev, general_ex, index_facts; } Census;

static void count(const Node *n, Census *c)
{
    if (!n) return;
    c->nodes++;
    c->general_ev += n->ev == eval_expr_switch;
    c->general_ex += n->ex == eval_exec_switch;
    c->index_facts += n->kind == N_INDEX && (n->plain_names || n->index_pure);
    count(n->a, c);
    count(n->b, c);
    count(n->c, c);
    for (int i = 0; i < n->n; i++) count(n->list[i], c);
    if (n->kind == N_FN) count(n->fn->body, c);
}

/* A session opened with WENGERT_SLOW as given (NULL: unset): its
 * eval_fast_paths, the census of PROGRAM resolved in it, and y's value. */
/* wg_close ends a session's use but frees nothing of it (wengert.h), so
 * the handles stay reachable here: LeakSanitizer (make test SAN=1) would
 * otherwise report every earlier session's memory. */
static wg_Session *sessions_opened[4];
static int n_sessions_opened;

static int open_with(const char *slow, Census *c, char *y, size_t ylen)
{
    if (slow) setenv("WENGERT_SLOW", slow, 1);
    else unsetenv("WENGERT_SLOW");
    wg_Session *s = wg_open(NULL);
    if (n_sessions_opened < 4) sessions_opened[n_sessions_opened++] = s;
    int fast = eval_fast_paths;
    *c = (Census){ 0 };
    Chunk *ch = parse_chunk("<test_slow>", PROGRAM, strlen(PROGRAM), 0, NULL);
    if (ch) {
        count(ch->root, c);
        ast_chunk_release(ch);
    }
    wg_Result r;
    y[0] = 0;
    if (wg_run(s, "<test_slow>", PROGRAM, strlen(PROGRAM), NULL) == WG_OK &&
        wg_run(s, "<test_slow>", "y", 1, &r) == WG_OK && r.value)
        snprintf(y, ylen, "%s", r.value);
    wg_result_free(&r);
    wg_close(s);
    return fast;
}

int main(void)
{
    Census fast, slow, zero;
    char yfast[64], yslow[64], yzero[64];
    check(open_with(NULL, &fast, yfast, sizeof yfast) == 1, "unset: fast paths on");
    check(open_with("1", &slow, yslow, sizeof yslow) == 0, "WENGERT_SLOW=1: fast paths off");
    check(open_with("0", &zero, yzero, sizeof yzero) == 1, "WENGERT_SLOW=0: fast paths on");
    unsetenv("WENGERT_SLOW");

    check(slow.nodes > 40 && slow.nodes == fast.nodes, "the program parsed both ways");
    /* fast: special handlers where threaded.c has them */
    check(fast.general_ev < fast.nodes / 2, "fast: most nodes have a special evaluator");
    check(fast.general_ex < fast.nodes, "fast: some statements have a special runner");
    check(fast.index_facts > 0, "fast: some a[i] carries the element short paths' facts");
    check(zero.general_ev == fast.general_ev && zero.index_facts == fast.index_facts, "WENGERT_SLOW=0 is unset");
    /* slow: the general path everywhere */
    check(slow.general_ev == slow.nodes, "slow: every node evaluates by eval_expr_switch");
    check(slow.general_ex == slow.nodes, "slow: every node runs by eval_exec_switch");
    check(slow.index_facts == 0, "slow: no a[i] takes an element short path");
    /* and the same value both ways ((1+3)^2 + (2+2)^2 + (3+1)^2 = 48) */
    check(!strcmp(yfast, "48") && !strcmp(yslow, "48") && !strcmp(yzero, "48"), "y = 48 both ways");

    printf("test_slow: %d checks, %d failed\n", n_checks, n_failed);
    return n_failed != 0;
}
