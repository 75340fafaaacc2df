#!/usr/bin/env python3
"""regvm_fuzz.py: random scalar closures of the shapes src/regvm.c compiles
(numbers in locals, captured arrays read and written, captured numbers, x op= e,
and / or / not in conditions,
+ - * / and negation, if / elif / else, while with break and continue,
for over integer ranges (a body may end by assigning its variable), return,
calls of another such closure, bounded
self recursion, sin / exp / sqrt / abs by their global names), each run
with and without WENGERT_SLOW=1: the outputs (values printed with 17
digits, and errors with their places) must be the same. With --grad (or
--grad-every K: every K-th program) a program is also differentiated:
the closures read a third array c, the argument of grad, whose elements
are recorded, so that they run in the recording form where they can (or
are declined by it); the gradients and a `:tape all` listing of one must
be the same with and without WENGERT_SLOW=1, and every other such
program runs both ways under WENGERT_RECLAIM_STRESS=1 (a reclaiming pass
at every loop step). With --jvp a program's closure f(t) is run by jvp
(regvm.c's forward form: a tangent beside each register): t flows into
acc alone (and into the arguments of a helper q that writes nothing),
which no condition, index or store reads, so the form takes it; the
tangents must be the same with and without WENGERT_SLOW=1. Indices are
mostly in range; some are not, or are not whole, so errors are compared
too. (Values print with wengert's shortest round-trip digits, so equal
output is equal doubles.) Route agreement (routes.py) cannot see a wrong primal value, and its
programs seldom take the compiled form; these take it often.

    python3 tests/gen/regvm_fuzz.py --bin ./wengert --count 200 --seed 1
"""
import argparse
import os
import random
import subprocess
import sys
import tempfile


class Gen:
    def __init__(self, r, grad=False, jvp=False):
        self.r = r
        self.grad = grad
        self.jvp = jvp

    def leaf(self, env):
        r = self.r
        if self.grad and not env.get("plain") and r.random() < 0.25:
            return "c[%d]" % r.randint(0, 7)     # a recorded element (not where an id would be declined)
        if self.jvp and not env.get("plain") and r.random() < 0.35:
            return r.choice(["t", "acc"])        # a dual (not where a tangent would be declined)
        k = r.random()
        if k < 0.45 and env["nums"]:
            return r.choice(env["nums"])
        if k < 0.6:
            return r.choice(["cap", "s"])
        if k < 0.8:
            return str(r.choice([0, 1, 2, 3, 0.5, -1.25, 7]))
        return self.index_read(env, 0)

    def index_expr(self, env):
        r = self.r
        k = r.random()
        env = dict(env, plain=True)
        if k < 0.85 and env["ints"]:
            i = r.choice(env["ints"])
            return r.choice(["%s" % i, "%s + 1" % i, "%s * 2 + 1" % i, "3 - %s" % i, "%s * 1 + 0" % i])
        if k < 0.93:
            return str(r.choice([0, 1, 2, 3]))
        return r.choice(["8", "1.5", "-1"])

    def index_read(self, env, depth):
        arr = self.r.choice(["a", "b"])
        return "%s[%s]" % (arr, self.index_expr(env))

    def expr(self, env, depth=0):
        r = self.r
        if depth > 2 or r.random() < 0.3:
            return self.leaf(env)
        k = r.random()
        if k < 0.5:
            op = r.choice(["+", "-", "*", "*", "/"])
            return "%s %s %s" % (self.expr(env, depth + 1), op, self.paren(env, depth + 1))
        if k < 0.6:
            return "-%s" % self.paren(env, depth + 1)
        if k < 0.72:
            fn = r.choice(["sin", "exp", "sqrt", "abs", "tanh"])
            arg = self.expr(env, depth + 1)
            if fn == "exp":
                arg = "sin(%s)" % arg
            if fn == "sqrt":
                arg = "abs(%s)" % arg
            return "%s(%s)" % (fn, arg)
        if k < 0.82 and self.jvp:       # its arguments may carry tangents
            return "q(%s, %s)" % (self.expr(env, depth + 1), self.expr(env, depth + 1))
        if k < 0.82 and env["helper"]:
            pe = dict(env, plain=True)
            return "h(%s, %s)" % (self.expr(pe, depth + 1), self.expr(pe, depth + 1))
        if k < 0.88 and env["self"] and not (self.grad and env.get("plain")):   # (its value may be recorded)
            return "g(d - 1, %s)" % self.expr(dict(env, plain=True), depth + 1)
        return self.index_read(env, depth)

    def paren(self, env, depth):
        e = self.expr(env, depth)
        return "(%s)" % e if " " in e else e

    def cond(self, env, depth=0):
        env = dict(env, plain=True)
        k = self.r.random()
        if depth < 2 and k < 0.12:
            return "%s %s %s" % (self.cond(env, depth + 1), self.r.choice(["and", "or"]), self.cond(env, depth + 1))
        if depth < 2 and k < 0.18:
            return "not (%s)" % self.cond(env, depth + 1)
        c = "%s %s %s" % (self.expr(env, 1), self.r.choice(["<", "<=", ">", ">=", "==", "!="]), self.expr(env, 1))
        return "(%s)" % c if depth else c

    def block(self, env, n, depth, ind):
        out = []
        for _ in range(n):
            out += self.stmt(env, depth, ind)
        return out

    def stmt(self, env, depth, ind):
        r = self.r
        pad = "    " * ind
        k = r.random()
        if (self.grad or self.jvp) and k < 0.15 + 0.15 * self.jvp:
            # what may be recorded goes to acc alone, which no condition, index or argument reads
            if r.random() < 0.3:
                return ["%sacc %s= %s" % (pad, r.choice("+-*"), self.expr(dict(env, plain=False)))]
            return ["%sacc = acc * 0.5 + %s" % (pad, self.expr(dict(env, plain=False)))]
        if self.jvp and 0.3 <= k < 0.45:
            k = 0.2      # (no array writes: the forward form declines a body that stores)
        if k < 0.3 or depth > 2:
            v = r.choice(["x", "y", "z"])
            line = "%s%s = %s" % (pad, v, self.expr(env))
            if v in env["nums"] and r.random() < 0.3:    # x op= e (compiled as x = x op e)
                line = "%s%s %s= %s" % (pad, v, r.choice("+-*/"), self.expr(env))
            if v not in env["nums"]:
                env["nums"] = env["nums"] + [v]
            return [line]
        if k < 0.45:
            return ["%s%s[%s] = %s" % (pad, r.choice(["a", "b"]), self.index_expr(env), self.expr(dict(env, plain=True)))]
        if k < 0.6:
            sub = dict(env)
            out = ["%sif %s {" % (pad, self.cond(env))] + self.block(sub, r.randint(1, 2), depth + 1, ind + 1)
            if r.random() < 0.4:
                out += ["%s} elif %s {" % (pad, self.cond(env))] + self.block(dict(env), 1, depth + 1, ind + 1)
            if r.random() < 0.5:
                out += ["%s} else {" % pad] + self.block(dict(env), r.randint(1, 2), depth + 1, ind + 1)
            return out + ["%s}" % pad]
        if k < 0.78:
            i = "i%d" % depth
            sub = dict(env)
            sub["ints"] = env["ints"] + [i]
            sub["loops"] = True
            lo, hi = r.choice([("0", "3"), ("1", "4"), ("0", "n"), ("2", "2"), ("0", "n + 1"), ("0", "3")] * 3 + [("0", "n / 2")])
            body = self.block(sub, r.randint(1, 3), depth + 1, ind + 1)
            if r.random() < 0.2:     # the end assigns the loop variable (the step sets it anew)
                body.append("%s    %s = %s" % (pad, i, self.expr(dict(sub, plain=True))))
            return ["%sfor %s in %s..%s {" % (pad, i, lo, hi)] + body + ["%s}" % pad]
        if k < 0.88:
            c = "w%d" % depth
            sub = dict(env)
            sub["nums"] = env["nums"] + [c]
            sub["loops"] = True
            body = self.block(sub, r.randint(1, 2), depth + 1, ind + 1)
            if r.random() < 0.4:
                body.insert(r.randint(0, len(body)), "%s    if %s { %s }" % (pad, self.cond(sub), r.choice(["break", "continue"])))
            return ["%s%s = 0" % (pad, c), "%swhile %s < 4 {" % (pad, c), "%s    %s = %s + 1" % (pad, c, c)] + body + ["%s}" % pad]
        if env.get("loops") and k < 0.93:
            return ["%sif %s { %s }" % (pad, self.cond(env), r.choice(["break", "continue"]))]
        return ["%sif %s { return %s }" % (pad, self.cond(env), self.expr(dict(env, plain=False)))]

    def program_jvp(self):
        r = self.r
        env = {"nums": ["x", "y", "z"], "ints": [], "helper": False, "self": False, "loops": False, "plain": True}
        body = self.block(env, r.randint(3, 6), 0, 2)
        src = ["fn P(n) {", "    a = [%s]" % ", ".join(str(r.choice([0, 1, 2, 0.5, -3])) for _ in range(8)),
               "    b = [1, 2, 3, 4, 5, 6, 7, 8]", "    b[0] = n", "    cap = n / 3 + 0.5", "    s = 0.125",
               "    q = fn(u, v) {", "        w = u * v - cap", "        if cap > 1 { w = w / 3 }",
               "        return w + b[1] * sin(u) - v", "    }",
               "    f = fn(t) {", "        x = n", "        y = cap", "        z = 0.5", "        acc = t"]
        src += body + ["        return x + y * z - s + acc", "    }"]
        for _ in range(3):
            src += ["    print(jvp(f, %s, %s))" % (r.choice(["0.3", "1.7", "-2", "n", "n * 0.5"]), r.choice(["1", "-1.5", "0", "2"]))]
        src += ["    print(a)", "    return 0", "}", "P(%s)" % r.choice(["1", "2", "3"]), "P(4)"]
        return "\n".join(src) + "\n"

    def program(self):
        r = self.r
        if self.jvp:
            return self.program_jvp()
        base = {"nums": ["n", "p"], "ints": [], "helper": False, "self": False, "loops": False}
        helper = ["    h = fn(u, v) {", "        t = u * cap - v", "        if t > 2 { t = t / 3 }",
                  "        a[0] = a[0] + 0.25", "        return t + a[1]", "    }"]
        env = dict(base)
        env["helper"] = True
        env["self"] = True
        env["nums"] = ["d", "p"]
        env["plain"] = self.grad
        body = self.block(env, r.randint(3, 6), 0, 2)
        g = ["    g = fn(d, p) {", "        if d <= 0 { return p * cap }", "        x = p", "        y = d", "        z = 0.5"]
        if self.grad:
            g += ["        acc = c[d]"]
        g += body + ["        return x + y * z - s%s" % (" + acc" if self.grad else ""), "    }"]
        calls = ", ".join("g(%d, %s)" % (r.randint(0, 3), r.choice(["0.3", "1.7", "-2", "n"])) for _ in range(3))
        src = ["fn P(n) {", "    a = [%s]" % ", ".join(str(r.choice([0, 1, 2, 0.5, -3])) for _ in range(8)),
               "    b = [1, 2, 3, 4, 5, 6, 7, 8]", "    b[0] = n", "    cap = n / 3 + 0.5", "    s = 0.125"]
        src += helper + g
        if not self.grad:
            src += ["    r = [%s]" % calls, "    print(r)", "    print(a)", "    print(b)", "    return 0", "}"]
            src += ["P(%s)" % r.choice(["1", "2", "3"]), "P(4)"]
            return "\n".join(src) + "\n"
        # the closures read c, recorded: P(c, n) returns a number made of their results
        src[0] = "fn P(c, n) {"
        terms = " + ".join("g(%d, %s) * %s" % (r.randint(0, 3), r.choice(["0.3", "1.7", "-2", "n"]), r.choice(["1", "0.5", "-2"]))
                           for _ in range(3))
        src += ["    print(a)", "    print(b)", "    return %s" % terms, "}"]
        src += ["C = [%s]" % ", ".join(str(r.choice([0.5, -1.5, 2, 0.25, 3, -0.75])) for _ in range(8)),
                "print(grad(fn(c) => P(c, %s))(C))" % r.choice(["1", "2", "3"]),
                ":tape clear", "G = grad(fn(c) => P(c, 4))(C)", "print(G)", ":tape all"]
        return "\n".join(src) + "\n"


def run(binary, path, slow, stress=False):
    env = dict(os.environ)
    if stress:
        env["WENGERT_RECLAIM_STRESS"] = "1"
    if slow:
        env["WENGERT_SLOW"] = "1"
    else:
        env.pop("WENGERT_SLOW", None)
    try:
        p = subprocess.run([binary, path], capture_output=True, text=True, timeout=60, env=env)
        return p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired:
        return "timeout", "", ""


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default="./wengert")
    ap.add_argument("--count", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--keep", metavar="DIR", help="write differing programs here")
    ap.add_argument("--grad", action="store_true", help="every program differentiated")
    ap.add_argument("--grad-every", type=int, default=0, metavar="K", help="every K-th program differentiated")
    ap.add_argument("--jvp", action="store_true", help="every program's closure run by jvp (the forward form)")
    a = ap.parse_args()
    binary = os.path.abspath(a.bin)
    bad = errors = 0
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "p.wg")
        for k in range(a.count):
            grad = a.grad or (a.grad_every > 0 and k % a.grad_every == 0)
            src = Gen(random.Random("%d:%d" % (a.seed, k)), grad and not a.jvp, a.jvp).program()
            with open(path, "w") as f:
                f.write(src)
            stress = grad and not a.jvp and k % 2 == 1
            fast = run(binary, path, False, stress)
            slow = run(binary, path, True, stress)
            errors += fast[0] != 0
            if fast != slow:
                bad += 1
                print("===== program %d differs" % k)
                print(src)
                print("--- fast:", fast)
                print("--- slow:", slow)
                if a.keep:
                    os.makedirs(a.keep, exist_ok=True)
                    with open(os.path.join(a.keep, "regvm_%d_%d.wg" % (a.seed, k)), "w") as f:
                        f.write(src)
    print("regvm_fuzz: %d programs, %d differ (%d ended in an error), seed %d" % (a.count, bad, errors, a.seed))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
