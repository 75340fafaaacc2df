/* test_embed.c - the embedding API (src/wengert.h) as a front end uses it:
 * open a session, run source and read back the value as text or the
 * located error, ask whether input is complete, catch the output through
 * writers, show pictures on a display, interrupt, reset. Prints "test_embed: N checks, M failed". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../../src/wengert.h"

static int checks, failed;
static void check(int ok, const char *what)
{
    checks++;
    if (!ok) {
        failed++;
        printf("FAIL %s\n", what);
    }
}

static char outbuf[4096], errbuf[4096];
static size_t nout, nerr;
static void to_out(void *ud, const char *t, size_t n)
{
    (void)ud;
    if (nout + n < sizeof outbuf) { memcpy(outbuf + nout, t, n); nout += n; outbuf[nout] = 0; }
}
static void to_err(void *ud, const char *t, size_t n)
{
    (void)ud;
    if (nerr + n < sizeof errbuf) { memcpy(errbuf + nerr, t, n); nerr += n; errbuf[nerr] = 0; }
}

/* What the display got: the pictures' count, the last one's mime type,
 * whether it was SVG, and its text fallback's start. */
static int npictures, svg;
static char mime[64], alt[64];
static void to_display(void *ud, const char *m, const char *data, size_t len, const char *a)
{
    (void)ud;
    npictures++;
    snprintf(mime, sizeof mime, "%s", m);
    svg = len > 5 && strstr(data, "<svg") != NULL;
    snprintf(alt, sizeof alt, "%s", a);
}

static wg_Status run(wg_Session *s, const char *src, wg_Result *r)
{
    return wg_run(s, "<test>", src, strlen(src), r);
}

int main(void)
{
    const char *args[] = { "3", "data.csv" };
    wg_Options opt = { "float64", args, 2 };
    wg_Session *s = wg_open(&opt);
    check(s != NULL, "wg_open gives a session");
    wg_set_output(s, to_out, to_err, NULL);

    wg_Result r;
    check(run(s, "x = 3\nx^2", &r) == WG_OK && r.value && !strcmp(r.value, "9"), "the last bare expression comes back as text");
    wg_result_free(&r);
    check(run(s, "d(ans, x)", &r) == WG_OK && r.value && !strcmp(r.value, "6"), "ans is a variable d can differentiate");
    wg_result_free(&r);
    check(run(s, "y = 1", &r) == WG_OK && r.value == NULL, "an assignment gives no value");
    wg_result_free(&r);
    check(run(s, "print(len(args), args[1])", &r) == WG_OK && strstr(outbuf, "2 data.csv\n"), "print reaches the output writer; args are the options' args");
    wg_result_free(&r);

    check(run(s, "z = 1\nq = [1, 2][5]", &r) == WG_ERROR, "a runtime error is WG_ERROR");
    check(r.message && strstr(r.message, "out of range"), "the error's message");
    check(r.file && !strcmp(r.file, "<test>") && r.line == 2 && r.col > 0, "the error's place");
    check(strstr(errbuf, "<test>:2:") != NULL, "the error reached the error writer");
    wg_result_free(&r);
    check(run(s, "print(z)", NULL) == WG_OK && strstr(outbuf, "1\n"), "the session survives an error");

    int open_if;
    check(wg_check(s, "f = fn(t) {", 11, &open_if) == WG_INCOMPLETE, "an open block is incomplete");
    check(wg_check(s, "x = (1 +", 8, &open_if) == WG_INCOMPLETE, "an open bracket is incomplete");
    check(wg_check(s, "x = 1 +* 2", 10, &open_if) == WG_ERROR, "a syntax error is an error");
    check(wg_check(s, "if x > 1 { y = 2 }", 18, &open_if) == WG_OK && open_if, "an if without else may continue");
    check(wg_check(s, "y = 2", 5, &open_if) == WG_OK && !open_if, "a complete statement");

    wg_interrupt(s);
    check(run(s, "w = 5", NULL) == WG_OK, "an interrupt before a run does not carry into it");

    wg_reset(s);
    check(run(s, "print(x)", &r) == WG_ERROR && r.message && strstr(r.message, "x"), "after a reset x is gone");
    wg_result_free(&r);
    check(run(s, "print(relu(-1))", NULL) == WG_OK, "the standard library is back after a reset");

    /* pictures: plot hands its SVG and the terminal picture to the display;
     * :tape dot its graph (SVG when Graphviz is installed, else the text) */
    wg_set_display(s, to_display, NULL);
    nout = 0;
    check(run(s, "plot(fn(t) => t^2, -1, 1)", NULL) == WG_OK && npictures == 1 && svg &&
          !strcmp(mime, "image/svg+xml") && alt[0] && nout == 0, "plot without a file goes to the display");
    run(s, "u = sin(2) * 3", NULL);
    nout = 0;
    outbuf[0] = 0;
    check(run(s, ":tape dot u", NULL) == WG_OK &&
          ((npictures == 2 && svg && !strncmp(alt, "digraph", 7)) || (npictures == 1 && strstr(outbuf, "digraph"))),
          ":tape dot without a file goes to the display");
    wg_set_display(s, NULL, NULL);
    nout = 0;
    check(run(s, ":tape dot u", NULL) == WG_OK && strstr(outbuf, "digraph") && npictures <= 2,
          "without a display :tape dot prints the DOT text");

    wg_set_output(s, NULL, NULL, NULL);
    wg_close(s);
    printf("test_embed: %d checks, %d failed\n", checks, failed);
    return failed != 0;
}
