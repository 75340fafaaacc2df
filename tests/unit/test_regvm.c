/* test_regvm.c - the compiled form of simple scalar closures (src/regvm.c)
 * runs where it should and only there. Golden tests (tests/lang/regvm_*)
 * check values, which are the same whichever path runs; this test checks
 * the path: the form's counters (regvm_entries: calls the tree walker
 * handed it, regvm_calls: calls it ran, its own included) move for det's
 * recursive closure and a loop of sin (W1), regvm_rec_entries for det's
 * gradient (the recording form), and stay put under WENGERT_SLOW=1, for
 * what the recording form declines (a recorded number compared, stored,
 * an index, an argument), on the posit backend, for a body it cannot
 * compile, and inside nograd. Prints "test_regvm: N checks, M failed". */
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

    /* under grad A's elements have tape ids: the recording form */
    e0 = regvm_entries;
    c0 = regvm_calls;
    unsigned long r0 = regvm_rec_entries;
    check(!strcmp(value_of(s, "grad(fn(A) => det(A, 3))(A)"), "[11, -4, 1, -4, 8, -2, 1, -2, 5]"), "det's gradient");
    check(regvm_rec_entries - r0 == 1 && regvm_entries - e0 == 1, "recording: minor entered the recording form once");
    check(regvm_calls - c0 == 10, "and ran its 10 calls there");
    r0 = regvm_rec_entries;
    c0 = regvm_calls;
    check(!strcmp(value_of(s, "B = [2, 1, 0, 1, 1, 3, 1, 0, 0, 1, 4, 1, 1, 0, 1, 5]\n"
                              "grad(fn(B) => det(B, 4))(B)[0]"), "52"), "a 4-by-4 det's gradient");
    check(regvm_rec_entries - r0 == 1 && regvm_calls - c0 == 41, "its 41 calls of minor recorded compiled");

    /* what the recording form declines: a comparison of a recorded number
     * (the tree walker notes a kink), a recorded number stored into an
     * array, used as an index, or passed to a compiled closure */
    r0 = regvm_rec_entries;
    e0 = regvm_entries;
    unsigned long o0 = regvm_offers;
    check(!strcmp(value_of(s, "fn kinks(A) {\n"
                              "    f = fn(i) {\n"
                              "        if A[i] > 0 { return A[i] }\n"
                              "        return -A[i]\n"
                              "    }\n"
                              "    s = 0\n"
                              "    for i in 0..20 { s = s + f(i) }\n"
                              "    return s\n"
                              "}\n"
                              "K = range(20) - 9.5\n"
                              "grad(kinks)(K)[0]"), "-1"), "a kink's gradient");
    check(regvm_entries == e0, "a comparison of recorded numbers: declined");
    /* 20 calls declined in a row under grad: it rests (REG_RESTING) */
    check(regvm_offers - o0 >= 1 && regvm_offers - o0 <= 16, "at most 16 in a row offered, then f rested");
    check(!strcmp(value_of(s, "fn st(A) {\n"
                              "    B = [0, 0, 0]\n"
                              "    w = fn(i) {\n"
                              "        B[i] = A[i]\n"
                              "        return 0\n"
                              "    }\n"
                              "    w(1)\n"
                              "    return B[1] * 2\n"
                              "}\n"
                              "grad(st)([1, 2, 3])"), "[0, 2, 0]"), "a recorded number stored");
    check(!strcmp(value_of(s, "fn ix(A) {\n"
                              "    f = fn(i) => A[A[i]] * 3\n"
                              "    return f(0)\n"
                              "}\n"
                              "grad(ix)([2, 0, 1])"), "[0, 0, 3]"), "a recorded number as an index");
    check(!strcmp(value_of(s, "fn arg(A) {\n"
                              "    g = fn(x) => x * 2\n"
                              "    f = fn(i) => g(A[i])\n"
                              "    return f(1)\n"
                              "}\n"
                              "grad(arg)([2, 5, 1])"), "[0, 2, 0]"), "a recorded number passed");
    check(regvm_rec_entries == r0 && regvm_entries == e0, "stored, an index, an argument: declined");

    /* a plain array compared and a recorded one summed, a math builtin's
     * value passed to another: each source of ids alone (rec_sources) */
    r0 = regvm_rec_entries;
    check(!strcmp(value_of(s, "fn mixed(A) {\n"
                              "    w = [1, -1, 2]\n"
                              "    f = fn(k) {\n"
                              "        s = 0\n"
                              "        for i in 0..k {\n"
                              "            if w[i] > 0 { s = s + A[i] * sqrt(abs(w[i])) } else { s = s - A[i] }\n"
                              "        }\n"
                              "        return s\n"
                              "    }\n"
                              "    return f(3)\n"
                              "}\n"
                              "grad(mixed)([3, 4, 5])"), "[1, -1, 1.4142135623730951]"), "a plain array compared, a recorded one summed");
    check(regvm_rec_entries - r0 == 1, "a plain array compared, a recorded one summed: the recording form");

    /* math builtins of recorded numbers: recorded in the recording form;
     * a global name called with one that holds a closure: declined */
    r0 = regvm_rec_entries;
    check(!strcmp(value_of(s, "fn lse1(A) {\n"
                              "    f = fn(k) {\n"
                              "        s = 0\n"
                              "        for i in 0..k { s = s + exp(A[i]) }\n"
                              "        return log(s)\n"
                              "    }\n"
                              "    return f(2) + f(1)\n"
                              "}\n"
                              "grad(lse1)([0, 0])"), "[1.5, 0.5]"), "exp and log of recorded numbers");
    check(regvm_rec_entries - r0 == 2, "exp and log of recorded numbers: the recording form, twice");
    r0 = regvm_rec_entries;
    check(!strcmp(value_of(s, "sq1 = fn(x) => x * x\n"
                              "fn sqs(A) {\n"
                              "    f = fn(k) { s = 0; for i in 0..k { s = s + sq1(A[i]) }; return s }\n"
                              "    return f(2)\n"
                              "}\n"
                              "grad(sqs)([1, 3])"), "[2, 6]"), "a global closure given recorded numbers");
    check(regvm_rec_entries == r0, "a global closure given recorded numbers: declined");

    /* a closure made again after a rest is offered again */
    e0 = regvm_entries;
    c0 = regvm_calls;
    check(!strcmp(value_of(s, "det3()"), "18"), "det after the gradients");
    check(regvm_entries - e0 == 1 && regvm_calls - c0 == 10, "det's minor: the plain form");

    r0 = regvm_rec_entries;
    check(!strcmp(value_of(s, "det(A, 3)"), "18"), "det of a global array");
    check(regvm_rec_entries - r0 == 1, "a global array assigned at the top level (ids: a place of d): recording form");

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

    /* x op= e on a local: compiled (as x = x op e) */
    e0 = regvm_entries;
    check(!strcmp(value_of(s, "fn acc4(n) { s = 1; for i in 0..n { s += i; s *= 0.5; s -= 1; s /= 2 }; return s }\nacc4(3)"),
                  "-0.078125"), "a loop of compound assignments");
    check(regvm_entries - e0 == 1, "compound assignments to locals: compiled");

    /* and / or / not in conditions: compiled */
    e0 = regvm_entries;
    check(!strcmp(value_of(s, "fn band(n) { s = 0; for i in 0..n { if i > 1 and not (i == 4 or i > 6) { s = s + i } }; return s }\n"
                              "band(10)"), "16"), "and, or, not in a condition");
    check(regvm_entries - e0 == 1, "and, or, not in a condition: compiled");

    /* jvp of a compiled closure: the forward form (tangents beside the
     * registers), W2F's shape: a recorded global read inside nograd */
    static const char *W2F10 = "fn(w) { h = 0.1; for i in 0..10 { h = tanh(w*h + bb) }; return h }";
    char src[512];
    unsigned long f0 = regvm_fwd_entries;
    snprintf(src, sizeof src, "bb = 0.1\nnograd { q = jvp(%s, 0.9, 1) }\nq", W2F10);
    check(!strcmp(value_of(s, src), "1.1110488015139843"), "W2F's recurrence, 10 steps");
    check(regvm_fwd_entries - f0 == 1, "jvp inside nograd: the forward form");
    f0 = regvm_fwd_entries;
    snprintf(src, sizeof src, "jvp(%s, 0.9, 1)", W2F10);
    check(!strcmp(value_of(s, src), "1.1110488015139843"), "W2F's recurrence recorded");
    check(regvm_fwd_entries == f0, "a recorded global while recording: declined");
    f0 = regvm_fwd_entries;
    c0 = regvm_calls;
    check(!strcmp(value_of(s, "fn sq(u) { return u * u }\n"
                              "jvp(fn(t) { s = 0; for i in 0..3 { s = s + sq(t * i) + exp(t) }; return s }, 0.5, 2)"),
                  "19.892327624200767"), "a compiled callee given tangents");
    check(regvm_fwd_entries - f0 == 1 && regvm_calls - c0 == 4, "the forward form, its callee's 3 calls there too");
    f0 = regvm_fwd_entries;
    check(!strcmp(value_of(s, "jvp(fn(t) { if t > 0 { return t }; return -t }, 0.5, 2)"), "2"), "a dual compared");
    check(regvm_fwd_entries == f0, "a tangent in a comparison: declined");
    f0 = regvm_fwd_entries;
    check(!strcmp(value_of(s, "fn u2(t) { return sin(t) * 2 }\njvp(u2, 0.5, [[1, 2]])"), "[[1.7551651237807455, 3.510330247561491]]"),
          "jvp with k directions");
    check(regvm_fwd_entries == f0, "k tangents (fwd_jvp_chunk): declined");

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
    unsigned long f1 = regvm_fwd_entries;
    check(!strcmp(value_of(s, "jvp(fn(w) { h = 0.1; for i in 0..10 { h = tanh(w*h + 0.1) }; return h }, 0.9, 1)"),
                  "1.1110488015139843"), "jvp with the fast paths off");
    check(regvm_fwd_entries == f1, "WENGERT_SLOW=1: the forward form declined");
    wg_close(s);

    /* reclaiming at every chance: the recording form's loops run passes
     * (tests/lang/regvm_rec_reclaim.wg checks what they leave) */
    setenv("WENGERT_RECLAIM_STRESS", "1", 1);
    s = open_session(NULL);
    unsetenv("WENGERT_RECLAIM_STRESS");
    check(s != NULL, "a session under WENGERT_RECLAIM_STRESS=1 opens");
    check(!strcmp(value_of(s, DET), "(none)"), "det is defined (reclaim stress)");
    unsigned long r1 = regvm_rec_entries;
    check(!strcmp(value_of(s, "grad(fn(A) => det(A, 3))(A)"), "[11, -4, 1, -4, 8, -2, 1, -2, 5]"),
          "det's gradient (reclaim stress)");
    check(regvm_rec_entries - r1 == 1, "reclaim stress: the recording form entered (a pass due at entry)");
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
