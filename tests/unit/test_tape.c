/* test_tape.c - the session tape and the reverse sweep, driven by hand.
 * Builds small tapes with tape_push (ops from src/ops.def), runs
 * sweep_adjoints and sweep_derivatives, and checks every adjoint against a
 * value worked out by hand (closed forms written out below, independent of
 * src/rules.h). Also checks entry size (<= 24 bytes an entry), that a plain
 * sweep leaves the tape alone, that constants (entry 0, OP_CONST) absorb
 * nothing, that a recorded derivative can be differentiated again, and that
 * a fixed point recorded by hand (fixtape.h) differentiates by its rule.
 * Prints "test_tape: N checks, M failed"; exit status non-zero on failure. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/sweep.h"
#include "../../src/arith.h"
#include "../../src/error.h"
#include "../../src/tape.h"
#include "../../src/fixtape.h"
#include "../../src/tapegc.h"
#include "../../src/state.h"

#include "checks.h"

static int close_to(double got, double want, double tol)
{
    if (isnan(got) || isnan(want)) return 0;
    return fabs(got - want) <= tol * (1 + fabs(want));
}

static void check_close(double got, double want, const char *what)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s: got %.17g, want %.17g", what, got, want);
    check(close_to(got, want, 1e-14), buf);
}

static void check_exact(double got, double want, const char *what)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s: got %.17g, want exactly %.17g", what, got, want);
    check(got == want, buf);
}

static uint32_t leaf(double v) { return tape_push(OP_LEAF, 0, 0, v); }
static uint32_t un(int op, uint32_t a, double v) { return tape_push(op, a, 0, v); }
static uint32_t bin(int op, uint32_t a, uint32_t b, double v) { return tape_push(op, a, b, v); }

/* r = x*y + sin(x) with x = 3, y = 2: dr/dx = y + cos x, dr/dy = x. */
static void test_mul_sin_add(void)
{
    tape_clear();
    uint32_t x = leaf(3), y = leaf(2);
    uint32_t m = bin(OP_MUL, x, y, 6);
    uint32_t s = un(OP_SIN, x, sin(3.0));
    uint32_t r = bin(OP_ADD, m, s, 6 + sin(3.0));
    uint32_t n_before = G->tape.n;
    double *adj = sweep_adjoints(r, x);
    check(adj != NULL, "sweep_adjoints returns a buffer");
    if (!adj) return;
    check_close(adj[x - x], 2 + cos(3.0), "x*y + sin x: d/dx");
    check_exact(adj[y - x], 3, "x*y + sin x: d/dy");
    check_exact(adj[m - x], 1, "x*y + sin x: adjoint of the product");
    check_exact(adj[s - x], 1, "x*y + sin x: adjoint of sin x");
    check_exact(adj[r - x], 1, "x*y + sin x: seed");
    check(G->tape.n == n_before, "a plain sweep appends nothing to the tape");
    err_scratch_free(adj);
}

/* Fan-out and a chain: u = x - y, v = u / y, w = exp(v), r = w * x.
 * x = 5, y = 2: u = 3, v = 1.5, w = e^1.5.
 * dr/dx = w + x * w * (1/y)            = w (1 + x/y)
 * dr/dy = x * w * (-1/y - u/y^2)       = -x w (y + u) / y^2 */
static void test_chain(void)
{
    tape_clear();
    double X = 5, Y = 2, U = 3, V = 1.5, W = exp(1.5);
    uint32_t x = leaf(X), y = leaf(Y);
    uint32_t u = bin(OP_SUB, x, y, U);
    uint32_t v = bin(OP_DIV, u, y, V);
    uint32_t w = un(OP_EXP, v, W);
    uint32_t r = bin(OP_MUL, w, x, W * X);
    double *adj = sweep_adjoints(r, x);
    check_close(adj[x - x], W * (1 + X / Y), "chain: d/dx");
    check_close(adj[y - x], -X * W * (Y + U) / (Y * Y), "chain: d/dy");
    check_close(adj[u - x], X * W / Y, "chain: adjoint of u");
    err_scratch_free(adj);
}

/* Unary rules, one entry each from a leaf at a, checked against textbook
 * derivatives. */
static void test_unary_rules(void)
{
    struct { int op; double a; double v; double want; const char *name; } cases[] = {
        { OP_NEG,   0.7, -0.7,          -1,                          "neg" },
        { OP_SIN,   0.7, sin(0.7),      cos(0.7),                    "sin" },
        { OP_COS,   0.7, cos(0.7),      -sin(0.7),                   "cos" },
        { OP_TAN,   0.7, tan(0.7),      1 / (cos(0.7) * cos(0.7)),   "tan" },
        { OP_ASIN,  0.6, asin(0.6),     1 / 0.8,                     "asin" },
        { OP_ACOS,  0.6, acos(0.6),     -1 / 0.8,                    "acos" },
        { OP_ATAN,  0.5, atan(0.5),     0.8,                         "atan" },
        { OP_SINH,  0.7, sinh(0.7),     cosh(0.7),                   "sinh" },
        { OP_COSH,  0.7, cosh(0.7),     sinh(0.7),                   "cosh" },
        { OP_TANH,  0.7, tanh(0.7),     1 / (cosh(0.7) * cosh(0.7)), "tanh" },
        { OP_EXP,   0.7, exp(0.7),      exp(0.7),                    "exp" },
        { OP_LOG,   0.5, log(0.5),      2,                           "log" },
        { OP_SQRT,  6.25, 2.5,          0.2,                         "sqrt" },
        { OP_ABS,   -1.5, 1.5,          -1,                          "abs at -1.5" },
        { OP_ABS,   1.5, 1.5,           1,                           "abs at 1.5" },
        { OP_ABS,   0, 0,               0,                           "abs at 0 (kink convention)" },
        { OP_SIGN,  -2, -1,             0,                           "sign" },
        { OP_FLOOR, 2.5, 2,             0,                           "floor" },
        { OP_COPY,  4, 4,               1,                           "copy" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tape_clear();
        uint32_t x = leaf(cases[i].a);
        uint32_t r = un(cases[i].op, x, cases[i].v);
        double *adj = sweep_adjoints(r, x);
        char what[64];
        snprintf(what, sizeof what, "unary rule %s", cases[i].name);
        check_close(adj[0], cases[i].want, what);
        err_scratch_free(adj);
    }
}

/* Binary rules: both partials, from two leaves. */
static void test_binary_rules(void)
{
    struct { int op; double a, b, v, da, db; const char *name; } cases[] = {
        { OP_ADD,   0.7, 1.3, 2.0,  1, 1, "add" },
        { OP_SUB,   0.7, 1.3, -0.6, 1, -1, "sub" },
        { OP_MUL,   0.7, 1.3, 0.91, 1.3, 0.7, "mul" },
        { OP_DIV,   3, 4, 0.75, 0.25, -3.0 / 16, "div" },
        { OP_POW,   2, 3, 8, 12, 8 * log(2.0), "pow" },
        { OP_POW,   -2, 3, -8, 12, NAN, "pow, negative base (d/dx)" },
        { OP_MOD,   -0.7, 1.3, 0.6, 1, 1, "mod (floor(-0.7/1.3) = -1)" },
        { OP_ATAN2, 0.7, 1.3, atan2(0.7, 1.3), 1.3 / 2.18, -0.7 / 2.18, "atan2" },
        { OP_MIN,   0.7, 1.3, 0.7, 1, 0, "min" },
        { OP_MIN,   1.3, 0.7, 0.7, 0, 1, "min, second smaller" },
        { OP_MIN,   0.7, 0.7, 0.7, 1, 0, "min tie goes to the first" },
        { OP_MAX,   0.7, 1.3, 1.3, 0, 1, "max" },
        { OP_MAX,   0.7, 0.7, 0.7, 1, 0, "max tie goes to the first" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tape_clear();
        uint32_t x = leaf(cases[i].a), y = leaf(cases[i].b);
        uint32_t r = bin(cases[i].op, x, y, cases[i].v);
        double *adj = sweep_adjoints(r, x);
        char what[96];
        snprintf(what, sizeof what, "binary rule %s, first operand", cases[i].name);
        check_close(adj[x - x], cases[i].da, what);
        if (!isnan(cases[i].db)) {
            snprintf(what, sizeof what, "binary rule %s, second operand", cases[i].name);
            check_close(adj[y - x], cases[i].db, what);
        }
        err_scratch_free(adj);
    }
}

/* x ^ 3 with x = -2 and the exponent a constant (operand 0): no log is
 * taken, so the adjoint of x is finite (12), and entry 0 receives nothing. */
static void test_pow_constant_exponent(void)
{
    tape_clear();
    uint32_t x = leaf(-2);
    uint32_t c = tape_push(OP_CONST, 0, 0, 3);
    uint32_t r = bin(OP_POW, x, c, -8);
    double *adj = sweep_adjoints(r, x);
    check_exact(adj[x - x], 12, "(-2)^3 with a constant exponent entry: d/dx = 12, no NaN");
    check_exact(adj[c - x], 0, "an OP_CONST entry collects no adjoint");
    err_scratch_free(adj);
}

/* n-ary entries: sum over a pool, and dot (pairs in the pool). */
static void test_sum_dot(void)
{
    tape_clear();
    uint32_t a = leaf(1.5), b = leaf(-2), c = leaf(4);
    uint32_t ids[3] = { a, b, a };           /* a appears twice */
    uint32_t off = tape_pool_push(ids, 3);
    uint32_t s = tape_push(OP_SUM, off, 3, 1.5 - 2 + 1.5);
    uint32_t pairs[4] = { a, c, b, b };      /* a*c + b*b */
    uint32_t off2 = tape_pool_push(pairs, 4);
    uint32_t d = tape_push(OP_DOT, off2, 2, 1.5 * 4 + 4);
    uint32_t r = bin(OP_MUL, s, d, (1.5 - 2 + 1.5) * 10);
    /* r = S * D, S = 2a + b, D = a c + b^2:
     * dr/da = 2 D + S c, dr/db = D + S 2b, dr/dc = S a */
    double S = 1, D = 10;
    double *adj = sweep_adjoints(r, a);
    check_close(adj[a - a], 2 * D + S * 4, "sum/dot: d/da (a twice in sum, once in dot)");
    check_close(adj[b - a], D + S * 2 * -2, "sum/dot: d/db (b*b in dot)");
    check_close(adj[c - a], S * 1.5, "sum/dot: d/dc");
    (void)d;
    err_scratch_free(adj);
}

/* Entries below `lo` are outside the sweep; id 0 and OP_CONST absorb. */
static void test_constants(void)
{
    tape_clear();
    uint32_t x = leaf(2);
    uint32_t k = tape_push(OP_CONST, 0, 0, 10);
    uint32_t m = bin(OP_MUL, x, k, 20);      /* 10 x */
    uint32_t r = bin(OP_ADD, m, 0, 20);      /* + a constant (id 0) */
    double *adj = sweep_adjoints(r, x);
    check_exact(adj[x - x], 10, "10 x + c: d/dx = 10");
    check_exact(adj[k - x], 0, "10 x + c: the constant entry gets no adjoint");
    err_scratch_free(adj);
}

/* sweep_derivatives: first derivatives as values; with recording on they are
 * DERIV entries that a second sweep_derivatives differentiates again.
 * y = x^3 (as x*x*x), x = 1.5: dy/dx = 3x^2 = 6.75, d2y/dx2 = 6x = 9,
 * d3y/dx3 = 6. */
static void test_derivatives_nested(void)
{
    tape_clear();
    G->tape.recording = 1;
    double X = 1.5;
    uint32_t x = leaf(X);
    uint32_t x2 = bin(OP_MUL, x, x, X * X);
    uint32_t y = bin(OP_MUL, x2, x, X * X * X);
    uint64_t sweeps = G->tape.sweeps;
    Value out;
    sweep_derivatives(num_rec(X * X * X, y), &x, 1, (Cuts){0}, &out);
    check(out.t == V_NUM, "sweep_derivatives gives a number");
    check_exact(out.u.n, 3 * X * X, "d(x^3)/dx at 1.5");
    check(G->tape.sweeps == sweeps + 1, "sweep_derivatives counts one adjoint sweep");
    check(out.id != 0 && tape_opcode(out.id) == OP_DERIV, "a recorded first derivative is a DERIV entry");
    if (out.id == 0) return;
    Value out2;
    sweep_derivatives(out, &x, 1, (Cuts){0}, &out2);
    check_exact(out2.u.n, 6 * X, "d2(x^3)/dx2 at 1.5, through the DERIV entry in doubles");
    check(G->tape.expansions == 0, "the second derivative records no expansion");
    check(tape_size() == y + 3, "the second derivative adds its own entry only");
    if (out2.id == 0) { check(0, "second derivative is recorded"); return; }
    Value out3;
    sweep_derivatives(out2, &x, 1, (Cuts){0}, &out3);
    check_exact(out3.u.n, 6, "d3(x^3)/dx3");
    check(G->tape.expansions >= 1, "the third derivative expanded the second");
    /* wrt an entry the result does not depend on, and wrt id 0 */
    uint32_t z = leaf(7);
    uint32_t wrt[3] = { z, 0, x };
    Value outs[3];
    sweep_derivatives(num_rec(X * X * X, y), wrt, 3, (Cuts){0}, outs);
    check_exact(outs[0].u.n, 0, "d wrt an entry made after y is 0");
    check_exact(outs[1].u.n, 0, "d wrt a constant (id 0) is 0");
    check_exact(outs[2].u.n, 3 * X * X, "d wrt x among several places");
}

/* A mixed partial through sweep_derivatives: y = sin(x) * z at x = 0.3, z = 2:
 * d/dz (dy/dx) = cos(x). */
static void test_mixed_partial(void)
{
    tape_clear();
    G->tape.recording = 1;
    uint32_t x = leaf(0.3), z = leaf(2);
    uint32_t s = un(OP_SIN, x, sin(0.3));
    uint32_t y = bin(OP_MUL, s, z, sin(0.3) * 2);
    Value dx;
    sweep_derivatives(num_rec(G->tape.val[y], y), &x, 1, (Cuts){0}, &dx);
    check_close(dx.u.n, 2 * cos(0.3), "d(sin(x) z)/dx");
    Value dxz, dxx;
    sweep_derivatives(dx, &z, 1, (Cuts){0}, &dxz);
    check_close(dxz.u.n, cos(0.3), "d/dz d/dx (sin(x) z)");
    sweep_derivatives(dx, &x, 1, (Cuts){0}, &dxx);
    check_close(dxx.u.n, -2 * sin(0.3), "d2/dx2 (sin(x) z)");
}

static void count_operand(uint32_t id, void *ud) { (void)id; (*(uint32_t *)ud)++; }
static void count_extra(uint32_t *id, void *ud) { (void)id; (*(uint32_t *)ud)++; }

/* A fixed point group recorded by hand (fixtape.h), swept by the sweeps alone:
 * x = 0.5 cos(x) + a at a = 0.3: dx/da = 1 / (1 + sin(x)/2), and the second
 * derivative through the recorded rule, -cos(x)/2 x' / (1 + sin(x)/2)^2.
 * Then two numbers, x = [0.5 x1 + b0, 0.25 x0 + b1]: dx0/db = [8/7, 4/7]. */
static void test_fixed_point(void)
{
    tape_clear();
    G->tape.recording = 1;
    uint32_t a = leaf(0.3);
    double X = 0;
    for (int i = 0; i < 200; i++) X = 0.5 * cos(X) + 0.3;
    uint32_t head = fixtape_standins(1, &X, 1e-12, 1000);
    uint32_t c = un(OP_COS, head, cos(X));
    uint32_t half = tape_push(OP_CONST, 0, 0, 0.5);
    uint32_t m = bin(OP_MUL, half, c, 0.5 * cos(X));
    uint32_t y = bin(OP_ADD, m, a, 0.5 * cos(X) + 0.3);
    uint32_t r = fixtape_result(head, 0, y, X);
    Value dx, dxx;
    sweep_derivatives(num_rec(X, r), &a, 1, (Cuts){0}, &dx);
    double xd = 1 / (1 + sin(X) / 2);
    check_close(dx.u.n, xd, "fixed point: dx/da by the implicit function theorem");
    sweep_derivatives(dx, &a, 1, (Cuts){0}, &dxx);
    check_close(dxx.u.n, -cos(X) / 2 * xd / ((1 + sin(X) / 2) * (1 + sin(X) / 2)),
                "fixed point: d2x/da2 through the recorded rule");
    uint32_t b[2] = { leaf(1), leaf(0) };
    double V[2] = { 8.0 / 7, 2.0 / 7 };
    uint32_t h2 = fixtape_standins(2, V, 1e-12, 1000);
    uint32_t y0 = bin(OP_ADD, bin(OP_MUL, tape_push(OP_CONST, 0, 0, 0.5), h2 + 1, 1.0 / 7), b[0], V[0]);
    uint32_t y1 = bin(OP_ADD, bin(OP_MUL, tape_push(OP_CONST, 0, 0, 0.25), h2, 2.0 / 7), b[1], V[1]);
    uint32_t r0 = fixtape_result(h2, 0, y0, V[0]);
    fixtape_result(h2, 1, y1, V[1]);
    Value db[2];
    sweep_derivatives(num_rec(V[0], r0), b, 2, (Cuts){0}, db);
    check_close(db[0].u.n, 8.0 / 7, "fixed point of two: dx0/db0");
    check_close(db[1].u.n, 4.0 / 7, "fixed point of two: dx0/db1");
    uint32_t n = 0, extra = 0;
    tape_each_operand(r0, count_operand, &n);
    check(n == 1, "a fixed point's result reads its stand-in");
    tape_each_extra_id(r0, count_extra, &extra);
    check(extra == 4, "and names its whole group (2 stand-ins, 2 results of g)");
}

/* Memory: every entry costs at most 24 bytes (op, two operand ids, value). */
static void test_bytes(void)
{
    tape_clear();
    size_t b0 = tape_bytes();
    uint32_t n0 = G->tape.n;
    uint32_t x = leaf(1);
    for (int i = 0; i < 10000; i++) x = bin(OP_MUL, x, x, 1);
    size_t per = (tape_bytes() - b0) / (G->tape.n - n0);
    char what[96];
    snprintf(what, sizeof what, "tape_bytes per plain entry is %zu, at most 24", per);
    check(per <= 24 && per > 0, what);
    check(G->tape.n - n0 == 10001, "tape_push appends one entry each");
    double *adj = sweep_adjoints(x, 1);
    check(adj != NULL, "a sweep over 10001 entries");
    /* x_{k+1} = x_k^2 at 1: the adjoint doubles each step; 2^10000 overflows */
    check(isinf(adj[0]), "d(x^(2^10000))/dx at 1 overflows to inf");
    err_scratch_free(adj);
    tape_clear();
    check(G->tape.n == 1, "tape_clear leaves only entry 0");
    check(tape_opcode(0) == OP_CONST, "entry 0 is the constant entry");
}

/* tape_compact: dead entries go, the rest move down in order with their
 * operands (and operand lists) renumbered; entries below the mark stay;
 * derivatives through the compacted tape are those of the original. */
static void test_compact(void)
{
    tape_clear();
    uint32_t x = leaf(3), y = leaf(2);                 /* below the mark */
    TapeMark m = tape_mark();
    uint32_t dead1 = un(OP_SIN, x, sin(3));
    uint32_t p = bin(OP_MUL, x, y, 6);
    uint32_t dead2 = bin(OP_ADD, dead1, p, sin(3) + 6);
    uint32_t ids[3] = { p, x, p };
    uint32_t off = tape_pool_push(ids, 3);
    uint32_t s = tape_push(OP_SUM, off, 3, 15);        /* s = 2 x y + x */
    uint32_t dead3 = un(OP_COS, s, cos(15));
    uint32_t r = un(OP_SIN, s, sin(15));               /* r = sin(2 x y + x) */
    (void)dead2; (void)dead3;
    uint32_t n = tape_size() - m.n;
    uint8_t *live = calloc(n, 1);
    live[p - m.n] = live[s - m.n] = live[r - m.n] = 1;
    uint32_t *newpos = calloc(n + 1, sizeof(uint32_t));
    size_t pool_before = tape_pool_size();
    tape_compact(m, live, newpos);
    check(tape_size() == m.n + 3, "compact: three entries kept above the mark");
    check(newpos[p - m.n] == m.n && newpos[s - m.n] == m.n + 1 && newpos[r - m.n] == m.n + 2,
          "compact: kept entries move down in order");
    check(newpos[dead1 - m.n] == m.n, "compact: a dead entry's position maps to the next kept one");
    check(newpos[n] == tape_size(), "compact: the end maps to the new end");
    uint32_t np = m.n, ns = m.n + 1, nr = m.n + 2;
    check(tape_opcode(np) == OP_MUL && tape_a(np) == x && tape_b(np) == y, "compact: mul keeps operands below the mark");
    TapeTerms t = tape_terms(ns);
    check(tape_opcode(ns) == OP_SUM && t.list && t.n == 3 && t.list[0] == np && t.list[1] == x && t.list[2] == np,
          "compact: the sum's operand list is renumbered");
    check(tape_opcode(nr) == OP_SIN && tape_a(nr) == ns, "compact: sin reads the moved sum");
    check(tape_pool_size() == pool_before, "compact: the live operand list is kept whole");
    check(G->tape.reclaimed >= 3, "compact: counted as reclaimed");
    double *adj = sweep_adjoints(nr, x);
    /* dr/dx = cos(15) (2 y + 1), dr/dy = cos(15) 2 x */
    check_close(adj[x - x], cos(15) * 5, "compact: dr/dx through the compacted tape");
    check_close(adj[y - x], cos(15) * 6, "compact: dr/dy through the compacted tape");
    err_scratch_free(adj);
    free(live);
    free(newpos);
}

/* A sum over consecutive entries keeps no operand list, only its first
 * term and count; compaction renumbers the first, and the terms stay
 * consecutive (each is live, being read by a live sum). */
static void test_compact_sum_run(void)
{
    tape_clear();
    uint32_t x = leaf(3);
    TapeMark m = tape_mark();
    uint32_t dead1 = un(OP_SIN, x, sin(3)), dead2 = un(OP_COS, x, cos(3));
    uint32_t t0 = bin(OP_MUL, x, x, 9), t1 = un(OP_SIN, x, sin(3)), t2 = bin(OP_ADD, x, x, 6);
    (void)dead1; (void)dead2; (void)t1; (void)t2;
    size_t pool_before = tape_pool_size();
    uint32_t s = tape_rec_sum_run(t0, 3, 9 + sin(3) + 6);   /* x^2 + sin x + 2x */
    TapeTerms t = tape_terms(s);
    check(!t.list && t.first == t0 && t.n == 3 && tape_term(t, 2) == t2 && tape_pool_size() == pool_before,
          "sum run: first and count, no operand list");
    uint32_t n = tape_size() - m.n;
    uint8_t *live = calloc(n, 1);
    for (uint32_t i = t0; i <= s; i++) live[i - m.n] = 1;
    uint32_t *newpos = calloc(n + 1, sizeof(uint32_t));
    tape_compact(m, live, newpos);
    uint32_t ns = m.n + 3;
    t = tape_terms(ns);
    check(tape_size() == m.n + 4 && tape_opcode(ns) == OP_SUM && !t.list && t.first == m.n && t.n == 3,
          "sum run: compaction renumbers its first term, still a run");
    check(tape_opcode(tape_term(t, 0)) == OP_MUL && tape_opcode(tape_term(t, 1)) == OP_SIN
          && tape_opcode(tape_term(t, 2)) == OP_ADD, "sum run: its terms moved down together");
    double *adj = sweep_adjoints(ns, x);
    check_close(adj[0], 2 * 3 + cos(3) + 2, "sum run: d/dx through the compacted run");
    err_scratch_free(adj);
    free(live);
    free(newpos);
}

/* A ROWS run (tape.h: a broadcast's rows under one record) over rows of
 * an operand spaced apart, times a row read by every row: the sweep
 * takes it whole, and compaction renumbers its operand's first id and row
 * step when as many entries went between each two rows, and drops the
 * record when they did not; the derivatives stay those of the entries.
 * With w = (2, -1) and rows (w0^2, w1^2), (w0 + w1, w0 - w1),
 * (w0 w1, 2 w0): y = sum of row_i * w = w0^3 + w0^2 + w0^2 w1 + 4 w0 w1
 * + w1^3 - w1^2, dy/dw0 = 3 w0^2 + 2 w0 + 2 w0 w1 + 4 w1 = 8, dy/dw1 =
 * w0^2 + 4 w0 + 3 w1^2 - 2 w1 = 17. */
static uint32_t rows_run_tape(uint32_t *w0, TapeMark *m, uint32_t *first_row, uint32_t *junk)
{
    tape_clear();
    double a = 2, b = -1;
    *w0 = leaf(a);
    uint32_t w1 = leaf(b);
    *m = tape_mark();
    double row[3][2] = { { a * a, b * b }, { a + b, a - b }, { a * b, a + a } };
    uint32_t r[3];
    /* each row's two entries, then two junk entries (dead when compacted) */
    r[0] = bin(OP_MUL, *w0, *w0, row[0][0]);
    bin(OP_MUL, w1, w1, row[0][1]);
    junk[0] = un(OP_SIN, *w0, sin(a));
    un(OP_COS, *w0, cos(a));
    r[1] = bin(OP_ADD, *w0, w1, row[1][0]);
    bin(OP_SUB, *w0, w1, row[1][1]);
    junk[1] = un(OP_SIN, w1, sin(b));
    un(OP_COS, w1, cos(b));
    r[2] = bin(OP_MUL, *w0, w1, row[2][0]);
    bin(OP_ADD, *w0, *w0, row[2][1]);
    uint32_t base = 0;
    double total = 0;
    for (uint32_t i = 0; i < 3; i++)
        for (uint32_t j = 0; j < 2; j++) {
            double v = row[i][j] * (j ? b : a);
            uint32_t e = bin(OP_MUL, r[i] + j, *w0 + j, v);
            if (!i && !j) base = e;
            total += v;
        }
    TapeRun run = { .kind = TAPE_RUN_ROWS, .op = OP_MUL, .base = base, .n = 6, .a = r[0], .b = *w0,
                    .ka = TAPE_RUN_SEQ, .kb = TAPE_RUN_SEQ, .rows = 3, .inner = 2, .sa = r[1] - r[0], .sb = 0 };
    tape_run_add(&run);
    *first_row = r[0];
    return tape_rec_sum_run(base, 6, total);
}

static void check_rows_adjoints(uint32_t y, uint32_t w0, const char *what)
{
    char buf[128];
    double *adj = sweep_adjoints(y, w0);
    snprintf(buf, sizeof buf, "%s: dy/dw0", what);
    check_exact(adj[0], 8, buf);
    snprintf(buf, sizeof buf, "%s: dy/dw1", what);
    check_exact(adj[1], 17, buf);
    err_scratch_free(adj);
}

/* The last record, if it is a ROWS run. */
static const TapeRun *last_rows_run(void)
{
    const TapeRun *r = G->tape.nruns ? &G->tape.runs[G->tape.nruns - 1] : NULL;
    return r && r->kind == TAPE_RUN_ROWS ? r : NULL;
}

static void test_compact_rows_run(void)
{
    TapeMark m;
    uint32_t w0, first, junk[2];
    uint32_t y = rows_run_tape(&w0, &m, &first, junk);
    check(last_rows_run() && last_rows_run()->sa == 4, "rows run: its operand's rows four entries apart");
    check_rows_adjoints(y, w0, "rows run");
    for (int keep_one = 0; keep_one < 2; keep_one++) {
        y = rows_run_tape(&w0, &m, &first, junk);
        uint32_t n = tape_size() - m.n;
        uint8_t *live = malloc(n);
        memset(live, 1, n);
        for (int k = 0; k < 2; k++) live[junk[k] - m.n] = live[junk[k] + 1 - m.n] = 0;
        if (keep_one) live[junk[0] - m.n] = 1;      /* rows 3 and 2 entries apart: no longer a step */
        uint32_t *newpos = calloc(n + 1, sizeof(uint32_t));
        tape_compact(m, live, newpos);
        const TapeRun *r = last_rows_run();
        if (!keep_one)
            check(r && r->a == m.n && r->sa == 2 && r->b == w0 && r->sb == 0 && r->base == m.n + 6,
                  "rows run: compaction renumbers its rows, two entries apart now");
        else
            check(!r, "rows run: compaction drops the record of rows no longer a step apart");
        check_rows_adjoints(newpos[y - m.n], w0, keep_one ? "rows run, record dropped" : "rows run, compacted");
        free(live);
        free(newpos);
    }
    tape_clear();
}

/* Reclaiming around a fixed point: dead entries before, inside and after
 * its group go; the group (whose head's record lists g's results, above
 * it) is kept whole and renumbered, and dx/da is as before. */
static void test_compact_fixed_point(void)
{
    tape_clear();
    G->tape.recording = 0;
    uint32_t a = leaf(0.3);
    TapeMark m = tape_mark();
    double X = 0;
    for (int i = 0; i < 200; i++) X = 0.5 * cos(X) + 0.3;
    un(OP_SIN, a, sin(0.3));                                   /* dead */
    uint32_t head = fixtape_standins(1, &X, 1e-12, 1000);
    uint32_t c = un(OP_COS, head, cos(X));
    un(OP_EXP, c, exp(cos(X)));                                /* dead */
    uint32_t m5 = bin(OP_MUL, tape_push(OP_CONST, 0, 0, 0.5), c, 0.5 * cos(X));
    uint32_t y = bin(OP_ADD, m5, a, X);
    uint32_t r = fixtape_result(head, 0, y, X);
    un(OP_NEG, r, -X);                                         /* dead */
    Value hold = value_arr_new(1);                                   /* the root: x* */
    AS_ARR(hold)->v[0] = num_rec(X, r);
    uint32_t gone = reclaim_now(m);
    check(gone == 3, "compact: the three dead entries around a fixed point go");
    uint32_t nr = AS_ARR(hold)->v[0].id;
    check(tape_opcode(nr) == OP_FIXPT && nr == tape_size() - 1, "compact: the result is renumbered, still last");
    const FixSide *s = fixtape_side(nr);
    check(tape_b(nr) == s->ids[0] && tape_opcode(s->ids[0]) == OP_FIXIN && tape_opcode(s->ids[1]) == OP_ADD,
          "compact: the group's record is renumbered with it");
    Value dx;
    sweep_derivatives(AS_ARR(hold)->v[0], &a, 1, (Cuts){0}, &dx);
    check_close(dx.u.n, 1 / (1 + sin(X) / 2), "compact: dx/da through the compacted fixed point");
    /* only g's cos(x*) held (g stored it): the head is live, and its
     * record keeps g's result and what that reads, above the head */
    m = tape_mark();
    head = fixtape_standins(1, &X, 1e-12, 1000);
    c = un(OP_COS, head, cos(X));
    m5 = bin(OP_MUL, tape_push(OP_CONST, 0, 0, 0.5), c, 0.5 * cos(X));
    y = bin(OP_ADD, m5, a, X);
    fixtape_result(head, 0, y, X);
    AS_ARR(hold)->v[0] = num_rec(cos(X), c);
    reclaim_now(m);
    uint32_t nc = AS_ARR(hold)->v[0].id, ny = fixtape_side(tape_a(nc))->ids[1];
    check(tape_opcode(ny) == OP_ADD && tape_opcode(tape_a(ny)) == OP_MUL && tape_b(tape_a(ny)) == nc,
          "compact: a head kept alone keeps g's result and its operands, above it");
    Value dc;
    sweep_derivatives(AS_ARR(hold)->v[0], &a, 1, (Cuts){0}, &dc);
    check_close(dc.u.n, -sin(X) / (1 + sin(X) / 2), "compact: d cos(x*)/da through the kept group");
    v_release(hold);
}


/* The code (tape.h): operands near, in a chunk's far table, or wide; every
 * entry decodes to what was pushed, through chunk boundaries, a full far
 * table, truncation in the middle of a chunk, and compaction that moves
 * entries into earlier chunks. A reference copy of every push is kept. */
typedef struct { int op; uint32_t a, b; double v; } Pushed;

static int decodes_as(uint32_t i, const Pushed *p)
{
    return tape_opcode(i) == p->op && tape_a(i) == p->a && tape_b(i) == p->b && tape_val(i) == p->v;
}

/* Deriv entries pack their call and place against their chunk's first
 * deriv entry: a gradient's run packs whole; more calls in a chunk than the
 * field holds, or a place jumping far from the base's, go wide. Every
 * entry must decode to its push, after truncation and compaction too. */
typedef struct { uint32_t call, which; } DerivPush;

static int deriv_decodes(uint32_t i, DerivPush p)
{
    uint32_t which, call = tape_deriv_call_of(i, &which);
    return tape_opcode(i) == OP_DERIV && call == p.call && which == p.which;
}

/* tape_rec_deriv_run records exactly what tape_rec_deriv would, entry for entry:
 * across chunk boundaries, after another call's entries in the chunk (its
 * base), and where a place no longer packs. */
static void test_deriv_run(void)
{
    enum { PLACES = 9000 };
    tape_clear();
    uint32_t y = leaf(1), *wrt = malloc(sizeof(uint32_t) * PLACES);
    for (int j = 0; j < PLACES; j++) wrt[j] = leaf(j);
    uint32_t other = tape_deriv_rec(y, wrt, 2, NULL, 0), call = tape_deriv_rec(y, wrt, PLACES, NULL, 0);
    for (int k = 0; k < 3; k++) tape_rec_deriv(other, 0, k);     /* the chunk's base is another call */
    TapeMark m = tape_mark();
    /* places FROM.. of the call: in this chunk too far from the base's
     * place to pack, in the next ones packed against their own base */
    enum { FROM = 4500, RUN = PLACES - FROM };
    Value *out = malloc(sizeof(Value) * RUN);
    for (int j = 0; j < RUN; j++) out[j] = num_val(0.5 * j);
    tape_rec_deriv_run(call, FROM, RUN, out);
    uint32_t n = tape_size(), *code = malloc(sizeof(uint32_t) * n);
    double *val = malloc(sizeof(double) * n);
    memcpy(code, G->tape.code, sizeof(uint32_t) * n);
    memcpy(val, G->tape.val, sizeof(double) * n);
    int bad = 0, wide = 0, packed = 0;
    for (int j = 0; j < RUN; j++) bad += out[j].t != V_NUM || out[j].id != m.n + (uint32_t)j || out[j].u.n != 0.5 * j;
    check(bad == 0, "deriv run: each result is its recorded number");
    tape_truncate(m);
    for (int j = 0; j < RUN; j++) tape_rec_deriv(call, FROM + (uint32_t)j, 0.5 * j);
    check(tape_size() == n, "deriv run: as many entries as one call each");
    for (uint32_t i = m.n; i < n; i++) {
        bad += G->tape.code[i] != code[i] || G->tape.val[i] != val[i];
        wide += tape_wide(i);
        packed += !tape_wide(i);
    }
    check(bad == 0, "deriv run: the same entries as one call each");
    check(packed > 0, "deriv run: places near their chunk's base pack");
    check(wide > 0, "deriv run: places past the packed range go wide, as one call each does");
    free(wrt), free(out), free(code), free(val);
}

static void test_deriv_packing(void)
{
    tape_clear();
    enum { PLACES = 10000, SMALL = 3000 };
    uint32_t y = leaf(1), *wrt = malloc(sizeof(uint32_t) * PLACES);
    for (int j = 0; j < PLACES; j++) wrt[j] = leaf(j);
    uint32_t lo = tape_size();
    DerivPush *ref = calloc(lo + PLACES + 2 * SMALL + 16, sizeof *ref);
    uint32_t big = tape_deriv_rec(y, wrt, PLACES, NULL, 0);
    for (uint32_t j = 0; j < PLACES; j++) ref[tape_rec_deriv(big, j, j)] = (DerivPush){ big, j };
    uint32_t packed = 0;
    for (uint32_t i = lo; i < tape_size(); i++) packed += !tape_wide(i);
    check(packed == PLACES, "deriv packing: a gradient over 10000 places packs every entry");
    for (int k = 0; k < SMALL; k++) {          /* one place each: 3000 calls, beyond a chunk's 2048 */
        uint32_t c = tape_deriv_rec(y, &wrt[k], 1, NULL, 0);
        ref[tape_rec_deriv(c, 0, k)] = (DerivPush){ c, 0 };
    }
    uint32_t jump = tape_deriv_rec(y, wrt, PLACES, NULL, 0);
    ref[tape_rec_deriv(jump, 0, 0)] = (DerivPush){ jump, 0 };
    ref[tape_rec_deriv(jump, 9000, 0)] = (DerivPush){ jump, 9000 };     /* far from its base: wide */
    uint32_t n = tape_size(), bad = 0, wide = 0;
    for (uint32_t i = lo; i < n; i++) {
        bad += !deriv_decodes(i, ref[i]);
        wide += tape_wide(i);
    }
    check(bad == 0, "deriv packing: every deriv entry decodes to its call and place");
    check(wide > 0, "deriv packing: what does not pack goes wide");
    /* truncated inside a chunk, then recorded on */
    TapeMark m = tape_mark();
    m.n = n - 700;
    tape_truncate(m);
    for (int k = 0; k < 600; k++) {
        uint32_t c = tape_deriv_rec(y, &wrt[k], 1, NULL, 0);
        ref[tape_rec_deriv(c, 0, k)] = (DerivPush){ c, 0 };
    }
    n = tape_size();
    bad = 0;
    for (uint32_t i = lo; i < n; i++) bad += !deriv_decodes(i, ref[i]);
    check(bad == 0, "deriv packing: truncated in a chunk and recorded on, every entry decodes");
    /* compaction drops every third entry; the calls keep their records
     * (renumbered if one loses all its entries), places stay */
    m = tape_mark();
    m.n = lo;
    m.nderivs = 0;
    m.npool = 0;
    m.nsides = 0;
    uint8_t *live = calloc(n - lo + 1, 1);
    uint32_t *newpos = calloc(n - lo + 2, sizeof *newpos);
    for (uint32_t i = lo; i < n; i++) live[i - lo] = i % 3 != 0;
    DerivRec *before = malloc(sizeof(DerivRec) * tape_deriv_calls());
    memcpy(before, G->tape.derivs, sizeof(DerivRec) * tape_deriv_calls());
    tape_compact(m, live, newpos);
    bad = 0;
    uint32_t still = 0;
    for (uint32_t i = lo; i < n; i++) {
        if (!live[i - lo]) continue;
        uint32_t at = newpos[i - lo], which, call = tape_deriv_call_of(at, &which);
        const DerivRec *was = &before[ref[i].call], *now = tape_deriv_call(call);
        bad += tape_opcode(at) != OP_DERIV || which != ref[i].which || now->nwrt != was->nwrt || now->y != was->y;
        still += !tape_wide(at);
    }
    check(bad == 0, "deriv packing: compacted deriv entries decode to their (renumbered) call and place");
    check(still > PLACES / 2, "deriv packing: a compacted gradient packs again");
    free(before);
    free(live);
    free(newpos);
    free(ref);
    free(wrt);
    tape_clear();
}

static void test_code(void)
{
    tape_clear();
    enum { N = 40000, FAR = 6000, MORE = 3000 };
    Pushed *ref = calloc(N + FAR + MORE + 2, sizeof *ref);
    uint32_t far0 = tape_size();
    for (int k = 0; k < FAR; k++) {        /* far operands for everything below */
        uint32_t id = leaf(k);
        ref[id] = (Pushed){ OP_LEAF, 0, 0, k };
    }
    srand(7);
    for (int k = 0; k < N; k++) {
        uint32_t i = tape_size(), a, b;
        int kind = rand() % 3 ? 2 : rand() % 4;
        if (kind == 0) a = i - 1, b = i - 1 - (uint32_t)(rand() % 2000);
        else if (kind == 1) a = far0 + (uint32_t)(rand() % 4), b = i - 1;     /* a few parameters */
        else if (kind == 2) a = far0 + (uint32_t)(rand() % FAR), b = far0 + (uint32_t)(rand() % FAR);
        else if (k % 2) a = i - 1, b = 0;
        else a = i - 5000 - (uint32_t)(rand() % 900), b = i - 5000;    /* from one distance back: the window */
        if (b >= i) b = i - 1;
        uint32_t got = bin(OP_ADD, a, b, k * 0.5);
        ref[got] = (Pushed){ OP_ADD, a, b, k * 0.5 };
    }
    uint32_t n = tape_size(), bad = 0, wide = 0, windowed = 0;
    for (uint32_t i = far0; i < n; i++) {
        bad += !decodes_as(i, &ref[i]);
        wide += tape_wide(i);
        windowed += !tape_wide(i) && ((G->tape.code[i] >> 8) & 0xfff) >= TAPE_WINDOW;
    }
    check(windowed > 0, "code: operands from one distance back go through the chunk's window");
    check(bad == 0, "code: every entry decodes to its push (near, far and wide operands)");
    check(wide > 0, "code: chunks with more distant operands than far slots go wide");
    check(tape_far_count() > 0 && tape_far_count() <= (n >> TAPE_CHUNK_BITS) * TAPE_FAR_SLOTS + TAPE_FAR_SLOTS,
          "code: far tables hold at most their slots a chunk");
    /* truncation in the middle of a chunk, then more pushes */
    TapeMark m = tape_mark();
    m.n = n - 1000 - ((n - 1000) & 7) + 5;   /* somewhere inside a chunk */
    tape_truncate(m);
    for (int k = 0; k < MORE; k++) {
        uint32_t i = tape_size(), a = far0 + (uint32_t)(rand() % FAR), b = i - 1 - (uint32_t)(rand() % 3);
        uint32_t got = bin(OP_MUL, a, b, -k);
        ref[got] = (Pushed){ OP_MUL, a, b, -k };
    }
    n = tape_size();
    bad = 0;
    for (uint32_t i = far0; i < n; i++) {
        if (!decodes_as(i, &ref[i]) && !bad++)
            fprintf(stderr, "entry %u (chunk offset %u, m.n %u): op %d a %u b %u, pushed %d %u %u\n", i, i & 4095, m.n,
                    tape_opcode(i), tape_a(i), tape_b(i), ref[i].op, ref[i].a, ref[i].b);
    }
    check(bad == 0, "code: truncated in a chunk and recorded on, every entry decodes");
    /* compaction: drop every third entry above a mark inside the first
     * chunks; operands of dropped entries are not read by kept ones here,
     * so point the kept ones at entries below the mark first */
    m = tape_mark();
    uint32_t lo = far0 + 1000;
    m.n = lo;
    uint8_t *live = calloc(n - lo + 1, 1);
    uint32_t *newpos = calloc(n - lo + 2, sizeof *newpos);
    for (uint32_t i = lo; i < n; i++) live[i - lo] = (i % 3) != 0;
    /* kept entries read only kept ones or entries below lo: make it so */
    int reads_dead = 0;
    for (uint32_t i = lo; i < n && !reads_dead; i++) {
        if (!live[i - lo]) continue;
        uint32_t a = ref[i].a, b = ref[i].b;
        if ((a >= lo && !live[a - lo]) || (b >= lo && !live[b - lo])) live[i - lo] = 0;
    }
    /* dropping readers of dead entries may leave other readers: repeat to a fixed point */
    for (int changed = 1; changed; ) {
        changed = 0;
        for (uint32_t i = lo; i < n; i++) {
            if (!live[i - lo]) continue;
            uint32_t a = ref[i].a, b = ref[i].b;
            if ((a >= lo && !live[a - lo]) || (b >= lo && !live[b - lo])) live[i - lo] = 0, changed = 1;
        }
    }
    uint32_t nkept = 0;
    for (uint32_t i = lo; i < n; i++) nkept += live[i - lo];
    tape_compact(m, live, newpos);
    check(tape_size() == lo + nkept, "code: compaction keeps the live entries");
    bad = 0;
    for (uint32_t i = lo; i < n; i++) {
        if (!live[i - lo]) continue;
        Pushed p = ref[i];
        if (p.a >= lo) p.a = newpos[p.a - lo];
        if (p.b >= lo) p.b = newpos[p.b - lo];
        bad += !decodes_as(newpos[i - lo], &p);
    }
    check(bad == 0, "code: compacted entries decode to their renumbered operands");
    bad = 0;
    for (uint32_t i = far0; i < lo; i++) bad += !decodes_as(i, &ref[i]);
    check(bad == 0, "code: entries below the mark are untouched by compaction");
    free(live);
    free(newpos);
    free(ref);
    tape_clear();
}

/* A session that records a little and clears after every run (GradBench's
 * driver) keeps the pages it has: the faulted-in stretch of the mappings
 * must not grow with the number of clears. It grew by a quarter at each
 * clear (prefault_to stretched past pages already in), until every clear
 * gave back and faulted in again 1.5 MB. Under ASan the tape is malloc'd
 * and nothing is prefaulted, so the bound holds trivially there. */
static void test_clears_keep_prefault_bounded(void)
{
    for (int run = 0; run < 60; run++) {
        tape_clear();
        uint32_t x = leaf(1);
        for (int k = 0; k < 20000; k++) x = un(OP_SIN, x, 0.5);
    }
    tape_clear();
    /* no tape of this file passes 50,000 entries; the prefaulted stretch
     * is at most a quarter (<= 131072 entries) past the largest */
    char what[128];
    snprintf(what, sizeof what, "60 clears of a 20001-entry tape leave %zu entries faulted in, at most 262144",
             G->tape.prefaulted);
    check(G->tape.prefaulted <= 262144, what);
    /* and the kept pages do not hold the capacity: room for a run longer
     * than they hold is still made (a first try stopped growing there, and
     * array runs fell to entry-by-entry recording) */
    check(tape_reserve((uint32_t)G->tape.cap + 100000), "after the clears, room for a run past the kept pages");
}

/* After a clear that reuses the kept mappings, tape_reserve must still
 * make room past the capacity: it grows the tape until the room is there,
 * and prefault_to's "pages already in are enough" left the capacity where
 * it was, so tape_reserve said "at the memory cap" and every array run
 * recorded entry by entry (lstm's jacobian 61.8M -> 88.1M instructions). */
static void test_reserve_after_clear(void)
{
    for (int run = 0; run < 3; run++) {
        tape_clear();
        uint32_t x = leaf(1);
        for (int k = 0; k < 20000; k++) x = un(OP_SIN, x, 0.5);
        uint32_t room = G->tape.cap - G->tape.n;
        char what[128];
        snprintf(what, sizeof what, "run %d: reserving %u entries past a capacity of %u", run, room + 1000, G->tape.cap);
        check(tape_reserve(room + 1000), what);
        check(G->tape.cap - G->tape.n >= room + 1000, "the reserved room is there");
    }
    tape_clear();
}

/* The adjoint buffer kept between d calls survives :tape clear when it is
 * small (GradBench's driver clears after every run, and each run mapped
 * and unmapped it again): the same memory serves the next tape, and every
 * sweep still starts from zeros over what it uses (a longer tape's
 * adjoints left in it must not add to a shorter one's). */
static void test_kept_adjoints_across_clears(void)
{
    const int lengths[] = { 3000, 1000, 1002, 40 };
    double *first = NULL;
    for (int r = 0; r < 4; r++) {
        tape_clear();
        sweep_forget();
        G->tape.recording = 0;
        uint32_t x = leaf(0.7), y = x;
        for (int k = 0; k < lengths[r]; k++) y = un(OP_SIN, y, sin(tape_val(y)));
        double want = 1;
        for (uint32_t i = y; i > x; i--) want *= cos(tape_val(i - 1));
        Value out;
        sweep_derivatives(num_rec(tape_val(y), y), &x, 1, (Cuts){0}, &out);
        char what[96];
        snprintf(what, sizeof what, "d of %d nested sins after %d clears", lengths[r], r);
        check_close(out.u.n, want, what);
        if (r == 0) first = G->sweep.kept.adj;
        else check(G->sweep.kept.adj == first, "a small kept adjoint buffer is the same memory after a clear");
    }
    tape_clear();
    sweep_forget();
    check(G->sweep.kept.adj == first && G->sweep.kept.cap, "sweep_forget keeps a small adjoint buffer");
    G->tape.recording = 1;
    tape_clear();
}

/* The kept adjoint buffer holds the adjoints of a tape of 600,000 entries
 * across a clear, as the tape keeps its first 1M entries' pages (lstm's
 * l = 4 jacobian: 577,000 entries; at a bound of 2^19 doubles its 4.6 MB
 * were mapped and zeroed afresh every run): the next sweep, a shorter
 * one, takes the same memory, and starts from zeros (the longer tape's
 * adjoints left in it add nothing). */
static void test_kept_adjoints_big_tape(void)
{
    const int lengths[] = { 600000, 5 };
    double *first = NULL;
    for (int r = 0; r < 2; r++) {
        tape_clear();
        sweep_forget();
        G->tape.recording = 0;
        uint32_t x = leaf(0.7), y = x;
        for (int k = 0; k < lengths[r]; k++) y = un(OP_NEG, y, -tape_val(y));
        Value out;
        sweep_derivatives(num_rec(tape_val(y), y), &x, 1, (Cuts){0}, &out);
        char what[96];
        snprintf(what, sizeof what, "d of %d nested negations after %d clears", lengths[r], r);
        check_close(out.u.n, lengths[r] % 2 ? -1 : 1, what);
        if (r == 0) first = G->sweep.kept.adj;
        else check(G->sweep.kept.adj == first, "the adjoint buffer of a 600,000-entry tape is kept across a clear");
    }
    G->tape.recording = 1;
    tape_clear();
    sweep_forget();
}

/* tape_push_rows records what tape_push_elems a row at a time records:
 * every entry names the operands a + i ra + j sa and b + i rb + j sb,
 * whether a row copies the codes of the row before (a whole matrix read
 * from one distance, a broadcast row from its far slots or from a near
 * distance one row further each row) or is found afresh (a matrix whose
 * rows are spaced apart, rows across chunks). */
static void check_rows_case(uint32_t pad, uint32_t ra_mul, int b_one, uint32_t rows, uint32_t cols, const char *what)
{
    tape_clear();
    uint32_t bn = b_one ? 1 : cols, b = leaf(0.5);
    for (uint32_t j = 1; j < bn; j++) leaf(0.5 + j);
    for (uint32_t k = 0; k < pad; k++) leaf(1);             /* the distance to b */
    uint32_t ra = ra_mul * cols, a = tape_size();
    for (uint32_t k = 0; k < rows * ra; k++) leaf(0.25 * k);   /* a's rows, ra apart */
    for (uint32_t k = 0; k < pad / 2; k++) leaf(2);         /* the distance to a */
    uint32_t n = rows * cols;
    check(tape_reserve(n), "room for the rows");
    double *v = tape_reserved_vals();
    for (uint32_t e = 0; e < n; e++) v[e] = e;
    uint32_t base = tape_push_rows(OP_MUL, a, 1, ra, b, b_one ? 0 : 1, 0, rows, cols);
    check(tape_size() == base + n, "tape_push_rows records rows x cols entries");
    uint32_t bad = 0;
    for (uint32_t i = 0; i < rows; i++)
        for (uint32_t j = 0; j < cols; j++) {
            uint32_t e = base + i * cols + j;
            bad += tape_a(e) != a + i * ra + j || tape_b(e) != b + (b_one ? 0 : j) || tape_opcode(e) != OP_MUL
                   || tape_val(e) != i * cols + j;
        }
    char buf[160];
    snprintf(buf, sizeof buf, "%s: every entry of %u rows of %u names its operands (%u do not)", what, rows, cols, bad);
    check(bad == 0, buf);
}

static void test_push_rows(void)
{
    check_rows_case(10, 1, 0, 40, 7, "near matrix, near broadcast row");
    check_rows_case(3000, 1, 0, 1023, 7, "far matrix, far broadcast row, across chunks");
    check_rows_case(10, 1, 1, 300, 7, "near matrix, one near number");
    check_rows_case(5000, 1, 1, 700, 5, "far matrix, one far number");
    check_rows_case(3000, 2, 0, 600, 7, "a matrix whose rows are spaced apart");
    check_rows_case(100, 1, 0, 50, 40, "rows of 40");
    tape_clear();
}

static void body(void *ud)
{
    (void)ud;
    test_mul_sin_add();
    test_chain();
    test_unary_rules();
    test_binary_rules();
    test_pow_constant_exponent();
    test_sum_dot();
    test_constants();
    test_derivatives_nested();
    test_mixed_partial();
    test_fixed_point();
    test_bytes();
    test_compact();
    test_compact_sum_run();
    test_compact_rows_run();
    test_compact_fixed_point();
    test_code();
    test_deriv_packing();
    test_deriv_run();
    test_clears_keep_prefault_bounded();
    test_reserve_after_clear();
    test_kept_adjoints_across_clears();
    test_kept_adjoints_big_tape();
    test_push_rows();
}

int main(void)
{
    int rc = run_tape_checks("test_tape", body);
    return rc;
}
