/* test_unwind.c - an error or Ctrl-C that unwinds through a sparse
 * Jacobian's pattern walk, a chunked jvp (jvp(f, x, V) with a matrix V)
 * or a checkpointed loop run again for its branch notes gives back every
 * buffer those took (the pattern's index sets and the list of loops run
 * again were plain heap blocks that only a local variable pointed to).
 * Each program runs once whole, counting the polls for Ctrl-C it passes
 * (err_step_budget, as the fuzzer interrupts), then once interrupted at
 * each of those polls in turn, then with an error raised inside f; after
 * each run nothing is left on the scratch list, and at the end the
 * session still computes the same answers. The leaks themselves:
 * LeakSanitizer checks at exit in the sanitizer build (make test SAN=1),
 * which found the sparse pattern's pool and operand list and the rerun's
 * list of loops lost on an interrupt. (Heap counts cannot tell here: an
 * interrupted run may leave what the session keeps, tape and notes.)
 * Prints "test_unwind: N checks, M failed". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/error.h"
#include "../../src/wengert.h"
#include "../../src/state.h"

#include "checks.h"

static wg_Session *s;          /* kept here so that the leak checker sees it */
static char out[4096];
static size_t nout;

static void to_out(void *ud, const char *t, size_t n)
{
    (void)ud;
    if (nout + n < sizeof out) {
        memcpy(out + nout, t, n);
        out[nout += n] = 0;
    }
}
static void to_nowhere(void *ud, const char *t, size_t n) { (void)ud, (void)t, (void)n; }

/* The message of src's error, "" if it ran. */
static char message[512];
static const char *run(const char *src)
{
    wg_Result r;
    message[0] = 0;
    nout = 0;
    out[0] = 0;
    if (wg_run(s, "<unwind>", src, strlen(src), &r) != WG_OK)
        snprintf(message, sizeof message, "%s", r.message ? r.message : "?");
    wg_result_free(&r);
    return message;
}

/* src interrupted at every poll it passes; returns how many polls. */
static long interrupt_everywhere(const char *name, const char *src)
{
    char what[256];
    err_step_budget = 1L << 40;
    run(src);
    long polls = (1L << 40) - err_step_budget;
    err_step_budget = 0;
    snprintf(what, sizeof what, "%s runs whole", name);
    check(!message[0], what);
    int interrupted = 0, scratch_left = 0;
    for (long b = 1; b <= polls; b++) {
        err_step_budget = b;
        run(src);
        err_step_budget = 0;
        interrupted += !strcmp(message, "interrupted");
        scratch_left += G->err.nscratch != 0;
    }
    snprintf(what, sizeof what, "%s: each of its %ld polls interrupts it", name, polls);
    check(interrupted == polls && polls > 0, what);
    snprintf(what, sizeof what, "%s: no scratch left after an interrupt", name);
    check(!scratch_left, what);
    return polls;
}

/* Each case: what it defines, then a run that keeps nothing when it is
 * interrupted (its values live in one call), then what the whole run gives. */
static const char *sparse_setup =
    "f = fn(x) => x * sum(sin(x[0] * range(10000)) * x[1])\n"
    "sparse = fn() {\n"
    "  J = jacobian(f, \"sparse\")([1, 2, 3])\n"
    "  H = hessian(fn(x) => f(x)[2], \"sparse\")([1, 2, 3])\n"
    /* f_i = x_i x_1 S(x_0), S = sum(sin(x_0 k)) */
    "  S = sum(sin(range(10000)))\n"
    "  print(abs(J[2, 2] - 2 * S) < 1e-9, abs(J[0, 1] - S) < 1e-9, J[0, 2], abs(H[1, 2] - S) < 1e-9, H[2, 2])\n"
    "}\n";

static const char *chunked_setup =
    "g = fn(t) => d(t * t * sin(t), t)\n"           /* a function that takes d, on duals */
    "f = fn(x) { s = x[0]; for i in 0..10 { s = s * g(x[1]) + x[i % 3] } return [s, s * x[2]] }\n"
    "V = reshape(range(3 * 70) / 7, 3, 70)\n"       /* three chunks of directions */
    "chunked = fn() {\n"
    "  K = jvp(f, [1, 2, 3], V)\n"
    "  print(K[0, 69] == jvp(f, [1, 2, 3], [V[0, 69], V[1, 69], V[2, 69]])[0], K[1, 33] == jvp(f, [1, 2, 3], [V[0, 33], V[1, 33], V[2, 33]])[1])\n"
    "}\n";

static const char *rerun_setup =
    "rerun = fn(x) {\n"
    "  u = x\n"
    "  checkpoint while u < 8 { u = u * 2 }\n"
    "  v = x\n"
    "  checkpoint while v < 8 { v = v * 2 }\n"
    "  return d(u + v, x)\n"
    "}\n";

/* Runs call, interrupted at every poll it passes, then whole, which must
 * print want. */
static void unwind_case(const char *name, const char *setup, const char *call, const char *want)
{
    char what[8192];
    run(setup);
    snprintf(what, sizeof what, "%s: its definitions", name);
    check(!message[0], what);
    interrupt_everywhere(name, call);
    run(call);
    snprintf(what, sizeof what, "%s: after the interrupts it gives %s (got %s%s)", name, want, out, message);
    check(!strcmp(out, want), what);
}

int main(void)
{
    s = wg_open(NULL);
    wg_set_output(s, to_out, to_nowhere, NULL);

    unwind_case("a sparse Jacobian and Hessian", sparse_setup, "sparse()", "true true 0 true 0\n");
    unwind_case("a chunked jvp", chunked_setup, "chunked()", "true true\n");
    unwind_case("a derivative through checkpointed loops run again for their notes", rerun_setup,
                "print(rerun(1))\n:tape kinks", "16\nkinks: 2 in the latest derivative\n"
                "  a branch within 1e-9 of switching: u < 8 with u = 8 (<unwind>:3:22)\n"
                "  a branch within 1e-9 of switching: v < 8 with v = 8 (<unwind>:5:22)\n");

    /* an error raised by f in the second chunk of directions */
    check(strstr(run("calls = [0]\n"
                     "h = fn(x) { calls[0] += 1; if calls[0] == 2 { error(\"second chunk\") } return x * x[0] }\n"
                     "K2 = jvp(h, [1, 2, 3], V)\n"), "second chunk") != NULL, "f's error in the second chunk");
    check(G->err.nscratch == 0, "no scratch left after f's error");

    printf("test_unwind: %d checks, %d failed\n", n_checks, n_failed);
    fflush(stdout);          /* before LeakSanitizer's report at exit */
    return n_failed != 0;
}
