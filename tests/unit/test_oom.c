/* test_oom.c - running out of memory is an error that leaves the
 * interpreter's tables consistent (found by fuzzing: the table of global
 * names recorded its new capacity before growing, so an out-of-memory error
 * there was followed by writes past its end). err_alloc_cap makes any
 * allocation above it fail as out of memory would.
 * Prints "test_oom: N checks, M failed"; exit status non-zero on failure. */
#include <stdio.h>
#include <string.h>

#include "../../src/error.h"
#include "../../src/eval.h"
#include "../../src/parse.h"
#include "../../src/wengert.h"
#include "../../src/state.h"

#include "checks.h"

static int next_name;
wg_State *test_oom_bare;         /* kept here so that the leak checker sees it */

static void intern_many(void *ud)
{
    int count = *(int *)ud;
    char name[32];
    for (int i = 0; i < count; i++) {
        snprintf(name, sizeof name, "v%d", next_name++);
        eval_global_index(name);
    }
}

int main(void)
{
    state_enter(test_oom_bare = state_open());         /* the evaluator's tables, without a session */
    int before = G->eval.nglobals, many = 100000;
    err_alloc_cap = 64 << 10;             /* about 1000 names' worth of table */
    fprintf(stderr, "(an out-of-memory message is expected here)\n");
    check(err_pcall(intern_many, &many) == 1, "growing past the cap is an error");
    int reached = G->eval.nglobals;
    check(reached > before, "names were added before the cap");
    err_alloc_cap = 0;
    int more = 5000;
    check(err_pcall(intern_many, &more) == 0, "after the error the table grows again");
    check(G->eval.nglobals == reached + more, "every new name gets one slot");
    char name[32];
    int ok = 1;
    for (int i = 0; i < next_name; i++) {
        snprintf(name, sizeof name, "v%d", i);
        Global *g = eval_global_lookup(name);
        if (i < reached - before || i >= next_name - more) ok &= g && !strcmp(g->name, name);
    }
    check(ok, "every interned name reads back");

    /* An error while :tape marks a cone and labels its entries gives back
     * what it took (fuzzing: the element ids of each version leaked);
     * LeakSanitizer in the sanitizer build checks it at exit. The cap is
     * under the cone's mark bytes (one a tape entry: 90003). */
    wg_Session *s = wg_open(NULL);
    const char *setup = "a = range(30000) + 1\na = a * 2\ns = sum(a * a)\n";
    check(wg_run(s, "<oom>", setup, strlen(setup), NULL) == WG_OK, "a session with array versions");
    err_alloc_cap = 64 << 10;          /* the parse fits; marking the cone does not */
    check(wg_run(s, "<oom>", ":tape s\n", 8, NULL) == WG_ERROR, ":tape past the cap is an error");
    err_alloc_cap = 0;
    check(wg_run(s, "<oom>", "print(len(a))\n", 14, NULL) == WG_OK, "the session goes on");

    /* A reclaiming pass that cannot get its buffers changes nothing and
     * gives back what it took (fuzzing: the pass leaked its mark bytes when
     * the renumbering table could not be had). Writing this test found a
     * version log that grew its recorded capacity before the memory: the
     * next version was written past the end (every such table now keeps
     * the new size only once the memory is had). The loop's temporaries make
     * a pass due; with the cap it fails, without it the same loop goes on. */
    const char *loop = "c = 2\nz = c\nfor i in 0..40000 { z = (z + c / z) / 1.5 }\n";
    err_alloc_cap = 64 << 10;
    check(wg_run(s, "<oom>", loop, strlen(loop), NULL) == WG_ERROR, "a reclaiming pass past the cap is an error");
    err_alloc_cap = 0;
    const char *after = "print(d(z, c) == d(z, c))\n:tape reclaim\n";
    check(wg_run(s, "<oom>", after, strlen(after), NULL) == WG_OK, "the tape is whole after it");
    check(wg_run(s, "<oom>", loop, strlen(loop), NULL) == WG_OK, "and reclaims without the cap");
    printf("test_oom: %d checks, %d failed\n", n_checks, n_failed);
    return n_failed != 0;
}
