/* test_sessions.c - two sessions in one process (wengert.h, state.h):
 * each has its own variables, tape, generator, backend and output, and
 * running them interleaved, errors included, leaves each as it would be
 * alone. Also: an error inside plot's terminal picture for a notebook
 * leaves the output where it was (it used to leave stdout on a memory
 * stream). Prints "test_sessions: N checks, M failed". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../../src/wengert.h"

extern size_t err_alloc_cap;     /* error.h: the fuzzer's allocation cap */

static int checks, failed;
static void check(int ok, const char *what)
{
    checks++;
    if (!ok) {
        failed++;
        printf("FAIL %s\n", what);
    }
}

typedef struct { char out[8192], err[8192]; size_t nout, nerr; } Buf;
static void put(char *b, size_t *n, size_t cap, const char *t, size_t k)
{
    if (*n + k < cap) { memcpy(b + *n, t, k); *n += k; b[*n] = 0; }
}
static void to_out(void *ud, const char *t, size_t n) { Buf *b = ud; put(b->out, &b->nout, sizeof b->out, t, n); }
static void to_err(void *ud, const char *t, size_t n) { Buf *b = ud; put(b->err, &b->nerr, sizeof b->err, t, n); }
static void clear(Buf *b) { b->nout = b->nerr = 0; b->out[0] = b->err[0] = 0; }

/* The session's value of src (its last bare expression), "" if none. */
static char value[256];
static const char *val(wg_Session *s, const char *src)
{
    wg_Result r;
    value[0] = 0;
    if (wg_run(s, "<test>", src, strlen(src), &r) == WG_OK && r.value) snprintf(value, sizeof value, "%s", r.value);
    else if (r.status != WG_OK) snprintf(value, sizeof value, "error: %s", r.message ? r.message : "?");
    wg_result_free(&r);
    return value;
}
static int ok(wg_Session *s, const char *src) { return wg_run(s, "<test>", src, strlen(src), NULL) == WG_OK; }

static int npictures;
static void to_display(void *ud, const char *m, const char *data, size_t len, const char *alt)
{
    (void)ud, (void)m, (void)data, (void)len, (void)alt;
    npictures++;
}

/* Kept here so that the leak checker sees them until the end. */
static wg_Session *a, *b;
static Buf ba, bb;

int main(void)
{
    a = wg_open(NULL);
    wg_Options posit = { "posit16", NULL, 0 };
    b = wg_open(&posit);
    check(a && b, "two sessions open");
    wg_set_output(a, to_out, to_err, &ba);
    wg_set_output(b, to_out, to_err, &bb);

    check(ok(a, "x = 2\ny = x*x + sin(x)"), "a runs");
    check(ok(b, "x = 10\nz = x*x*x"), "b runs");
    check(!strcmp(val(a, "x"), "2"), "a sees its own x");
    check(!strcmp(val(b, "x"), "10"), "b sees its own x");
    check(!strncmp(val(b, "y"), "error:", 6), "b does not see a's y");
    check(!strncmp(val(a, "z"), "error:", 6), "a does not see b's z");
    check(!strcmp(val(a, "d(y, x)"), "3.583853163452858"), "a's derivative from a's tape");
    check(!strcmp(val(b, "d(z, x)"), "300"), "b's derivative from b's tape (posit16)");
    check(!strcmp(val(a, "1/3"), "0.3333333333333333"), "a keeps float64 while b runs posit16");
    check(!strcmp(val(b, "1/3"), "0.3334"), "b keeps posit16");

    /* each tape holds its own entries: a's count does not move when b records */
    check(ok(a, "n0 = len(args)"), "a: a statement");
    clear(&ba);
    check(ok(a, ":tape stats"), "a: :tape stats");
    char before[256];
    snprintf(before, sizeof before, "%.*s", (int)strcspn(ba.out, "\n"), ba.out);
    check(ok(b, "for i in 0..1000 { z = z * 1.0001 }"), "b records a thousand entries");
    clear(&ba);
    check(ok(a, ":tape stats"), "a: :tape stats again");
    check(!strncmp(ba.out, before, strlen(before)) && strlen(before) > 0, "a's tape did not grow with b's loop");

    /* generators: each session starts from its own seed and moves alone */
    check(ok(a, "r1 = rand()"), "a draws");
    check(ok(b, ":backend float64\nq1 = rand()\nq2 = rand()"), "b draws twice");
    check(ok(a, "r2 = rand()"), "a draws again");
    char r1[64], r2[64];
    snprintf(r1, sizeof r1, "%s", val(a, "r1"));
    snprintf(r2, sizeof r2, "%s", val(a, "r2"));
    check(!strcmp(r1, val(b, "q1")) && !strcmp(r2, val(b, "q2")), "the same draws in the same order in each");

    /* an error in one session leaves the other where it was */
    check(!ok(b, "f = fn(t) { return t[5] }\nf([1, 2])"), "b: an error");
    check(strstr(bb.err, "error") != NULL && strstr(ba.err, "error") == NULL, "b's error went to b's writer alone");
    check(!strcmp(val(a, "d(y, x)"), "3.583853163452858"), "a goes on after b's error");
    check(!strcmp(val(b, "z >= 1000"), "true"), "b goes on after its error");

    /* output: print goes to its session's writer; a checkpointed loop's
     * recomputation prints nothing */
    clear(&ba), clear(&bb);
    check(ok(a, "print(\"from a\")"), "a prints");
    check(ok(b, "print(\"from b\")"), "b prints");
    check(!strcmp(ba.out, "from a\n") && !strcmp(bb.out, "from b\n"), "each print reached its own writer");
    clear(&ba);
    check(ok(a, "s = x\ncheckpoint for i in 0..3 { s = sin(s)\nprint(i) }\ng = d(s, x)"), "a: a checkpointed loop that prints");
    check(!strcmp(ba.out, "0\n1\n2\n"), "its steps print once, its recomputation not");

    /* closures stay in their session */
    check(ok(a, "k = 3\nh = fn(t) => k*t"), "a: a closure");
    check(ok(b, "k = 5"), "b: another k");
    check(!strcmp(val(a, "h(2)"), "6"), "a's closure reads a's k");
    check(!strncmp(val(b, "h(2)"), "error:", 6), "b has no h");

    /* plot's terminal picture for a notebook fails (out of memory) half
     * way: the output goes on to the writer, nothing captured is left */
    wg_set_display(a, to_display, NULL);
    check(ok(a, "big = range(3000)"), "a: an array to plot");
    err_alloc_cap = 30000;   /* the series (3000 x 8 bytes) fits, the picture's y range (x 16) not */
    clear(&ba);
    const char *want = "error: out of memory (asked for 48000 ";     /* (the sanitizer build: "48000 x 1 bytes") */
    check(!strncmp(val(a, "plot(big)"), want, strlen(want)), "a plot whose terminal picture cannot be had is an error");
    err_alloc_cap = 0;
    check(npictures == 0, "no picture was shown");
    clear(&ba);
    check(ok(a, "print(\"after\")"), "a prints after it");
    check(!strcmp(ba.out, "after\n"), "and the text reaches the writer");
    check(ok(a, "plot(big)") && npictures == 1, "the same plot without the cap shows");

    wg_close(a);
    wg_close(b);
    printf("test_sessions: %d checks, %d failed\n", checks, failed);
    return failed != 0;
}
