/* test_regvm.c - the compiled form of simple scalar closures (src/regvm.c)
 * runs where it should and only there. Golden tests (tests/lang/regvm_*)
 * check values, which are the same whichever path runs; this test checks
 * the path: the form's counters (regvm_entries: calls the tree walker
 * handed it, regvm_calls: calls it ran, its own included) move for det's
 * recursive closure and a loop of sin (W1), and stay put under
 * WENGERT_SLOW=1, while recording (an argument or a captured array
 * with tape ids), on the posit backend, for a body it cannot compile, and
 * inside nograd. Prints "test_regvm: N checks, M failed". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../../src/wengert.h"
#include "../../src/regvm.h"
#include "checks.h"

/* wg_close ends a session's use but frees nothing of it (wengert.h), so
 * the handles stay reachable here: LeakSanitizer (make test SAN=1) would
 * otherwise report every earlier session's memory. */
static wg_Session *sessions_opened[8];
static int n_sessions_opened;

static wg_Session *open_session(const char *backend)
{
    wg_Options opt = { backend, NULL, 0 };
    wg_Session *s = wg_open(&opt);
    if (n_sessions_opened < 8) sessions_opened[n_sessions_opened++] = s;
    return s;
}

/* src run in s: its last bare expression's value (static buffer), or "ERROR: message" */
static const char *value_of(wg_Session *s, const char *src)
{
    static char buf[256];
    wg_Result r;
    wg_Status st = wg_run(s, "<test>", src, strlen(src), &r);
    if (st == WG_OK) snprintf(buf, sizeof buf, "%s", r.value ? r.value : "(none)");
    else snprintf(buf, sizeof buf, "ERROR: %s", r.message ? r.message : "?");
    wg_result_free(&r);
    return buf;
}

static const char *DET =
    "fn det(A, l) {\n"
    "    r = range(l + 1) + 1\n"
    "    c = range(l + 1) + 1\n"
    "    r[l] = 0\n"
    "    c[l] = 0\n"
    "    minor = fn(m) {\n"
    "        R0 = r[l]\n"
    "        Cj = c[l]\n"
    "        if m == 1 { return A[R0 * l + Cj] }\n"
    "        total = 0\n"
    "        sgn = 1\n"
    "        r[l] = r[R0]\n"
    "        prev = l\n"
    "        for j in 0..m {\n"
    "            c[prev] = c[Cj]\n"
    "            sub = minor(m - 1)\n"
    "            c[prev] = Cj\n"
    "            if sgn > 0 { total = total + A[R0 * l + Cj] * sub } else { total = total - A[R0 * l + Cj] * sub }\n"
    "            prev = Cj\n"
    "            Cj = c[Cj]\n"
    "            sgn = -sgn\n"
    "        }\n"
    "        r[l] = R0\n"
    "        return total\n"
    "    }\n"
    "    return minor(l)\n"
    "}\n"
    /* made in a function: a global array assigned at the top level is a
     * place d can differentiate against, its elements recorded (ids) */
    "fn matrix() { return [2, 1, 0, 1, 3, 1, 0, 1, 4] }\n"
    "fn det3() { return det(matrix(), 3) }\n"
    "A = matrix()\n";

int main(void)
{
    wg_Session *s = open_session(NULL);
    check(s != NULL, "a float64 session opens");
    check(!strcmp(value_of(s, DET), "(none)"), "det is defined");

    unsigned long e0 = regvm_entries, c0 = regvm_calls;
    check(!strcmp(value_of(s, "det3()"), "18"), "det of a 3-by-3 matrix");
    /* minor(3) calls minor(2) 3 times, each of which calls minor(1) twice: 1 + 3 + 6 */
    check(regvm_entries - e0 == 1, "det's minor entered the compiled form once");
    check(regvm_calls - c0 == 10, "and ran its 10 calls there");

    e0 = regvm_entries;
    check(!strcmp(value_of(s, "grad(fn(A) => det(A, 3))(A)"), "[11, -4, 1, -4, 8, -2, 1, -2, 5]"), "det's gradient");
    check(regvm_entries == e0, "recording (A's elements have tape ids): declined");

    /* 41 calls of minor declined in a row under grad: it rests (REG_RESTING);
     * the next det makes minor again, which wakes it */
    e0 = regvm_entries;
    unsigned long o0 = regvm_offers;
    check(!strcmp(value_of(s, "B = [2, 1, 0, 1, 1, 3, 1, 0, 0, 1, 4, 1, 1, 0, 1, 5]\n"
                              "grad(fn(B) => det(B, 4))(B)[0]"), "52"), "a 4-by-4 det's gradient");
    check(regvm_entries == e0, "41 calls declined under grad");
    /* (the streak counts the 3-by-3 gradient's 10 declines too) */
    check(regvm_offers - o0 >= 1 && regvm_offers - o0 <= 16, "at most 16 in a row offered, then minor rested");
    c0 = regvm_calls;
    check(!strcmp(value_of(s, "det3()"), "18"), "det after a rest");
    check(regvm_entries - e0 == 1 && regvm_calls - c0 == 10, "minor made again: compiled again");

    e0 = regvm_entries;
    check(!strcmp(value_of(s, "det(A, 3)"), "18"), "det of a global array");
    check(regvm_entries == e0, "a global array assigned at the top level (ids: a place of d): declined");

    e0 = regvm_entries;
    check(!strcmp(value_of(s, "nograd { q = det3() }\nq"), "18"), "det inside nograd");
    check(regvm_entries == e0, "inside nograd: declined");

    e0 = regvm_entries;
    check(!strcmp(value_of(s, "fn w1(n) { x = 0.5; for i in 0..n { x = sin(x) * 0.9 + 0.1 }; return x }\n"
                              "w1(3) == sin(sin(sin(0.5) * 0.9 + 0.1) * 0.9 + 0.1) * 0.9 + 0.1"), "true"),
          "a loop of sin");
    check(regvm_entries - e0 == 1, "a loop of sin: compiled (a math builtin by its global name)");

    e0 = regvm_entries;
    check(!strcmp(value_of(s, "h = fn(x) { print(x); return x }\nh(2)"), "2"), "a closure that prints");
    check(regvm_entries == e0, "a body with a builtin call other than math: declined");

    wg_close(s);

    /* WENGERT_SLOW=1 as a session opens turns the fast paths off (state_open) */
    setenv("WENGERT_SLOW", "1", 1);
    s = open_session(NULL);
    unsetenv("WENGERT_SLOW");
    check(s != NULL, "a session under WENGERT_SLOW=1 opens");
    check(!strcmp(value_of(s, DET), "(none)"), "det is defined (WENGERT_SLOW=1)");
    e0 = regvm_entries;
    check(!strcmp(value_of(s, "det3()"), "18"), "det with the fast paths off");
    check(regvm_entries == e0, "WENGERT_SLOW=1: declined");
    wg_close(s);

    s = open_session("posit16");
    check(s != NULL, "a posit16 session opens");
    check(!strcmp(value_of(s, DET), "(none)"), "det is defined (posit16)");
    e0 = regvm_entries;
    check(!strcmp(value_of(s, "det3()"), "18"), "det in posit16");
    check(regvm_entries == e0, "the posit backend: declined");
    wg_close(s);

    printf("test_regvm: %d checks, %d failed\n", n_checks, n_failed);
    return n_failed != 0;
}
