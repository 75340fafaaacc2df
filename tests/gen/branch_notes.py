#!/usr/bin/env python3
"""Branch notes appear exactly when they should: a random-program property
test for wengert.

The SPEC ("Derivatives"): a derivative that relied on a branch (`if`,
`while`, `and`/`or`, `min`/`max`) whose comparison was within a relative
1e-9 of going the other way says so. Measured from outside: the note (and
`:tape kinks`) must appear exactly when moving the differentiated place x
to x * (1 + 1e-9) or x * (1 - 1e-9) flips a comparison the program
evaluated. Each generated program prints a trace of every comparison's
outcome (through `tr(k, cond)`; a min/max prints which side it took, under
nograd so that the trace itself notes nothing); the checker runs it at x
with the derivative (`d(y, x)` at the top level, or `grad(F)(x)` of the
same body as a function) and `:tape kinks`, and at both perturbed points
without, and compares.

The programs put comparisons at their switch on purpose: a threshold, a
loop's bound or a min/max operand is chosen, while the generator runs the
program itself in Python (the same float operations: + and * on positive
numbers), to equal the value compared there (or to lie within 5e-10 of
it, or well away). Values that depend on x grow with it, so a comparison
on them at its switch flips under the perturbation. A program in which
some comparison is ambiguous for this property (within 1e-6 but not
5e-10, or at its switch with equal sensitivities on both sides: v < w
with v = x, w = x * 1) is drawn again.

    python3 tests/gen/branch_notes.py --bin ./wengert [--count N] [--seed S]
        [--jobs J] [--batch B] [--show K] [--checkpoint] [--verbose]

Prints each failing program (missing or spurious note, or an error), then a
summary "branch_notes: N programs (T with a note expected), M missing,
S spurious, E errors"; exit status 1 if any. Python 3 standard library
only.
"""

import argparse
import concurrent.futures
import os
import random
import re
import subprocess
import sys
import tempfile

EPS = 1e-9
NEAR = 5e-10     # a near threshold lies this close (relative)
FAR = 1e-6       # a far one at least this far
TIE_SENS = 1e-3  # at a switch, x * (d lhs - d rhs) / scale at least this
MAX_VAL = 1e9
CONSTS = [0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 2.0, 3.0]
CMPS = ["<", "<=", ">", ">=", "==", "!="]


class Ambiguous(Exception):
    """The program is not a fair test of the property: draw another."""


class V:
    """A value as the generator's run sees it: its value, its derivative
    in x, and whether it depends on x on the tape (structurally)."""
    __slots__ = ("v", "dv", "dep")

    def __init__(self, v, dv=0.0, dep=False):
        self.v, self.dv, self.dep = v, dv, dep


def fmt(c):
    return repr(float(c))


class Slot:
    """A threshold chosen when its comparison first runs."""

    def __init__(self, kind):
        self.kind = kind     # "exact", "near", "far"
        self.value = None


# ------------------------------------------------------------- generation

class Gen:
    def __init__(self, rng, fnmode):
        self.r = rng
        self.fnmode = fnmode
        self.vars = ["x", "v0", "v1", "v2", "v3"]
        self.ntrace = 0
        self.nloop = 0

    def tid(self):
        self.ntrace += 1
        return self.ntrace

    def atom(self):
        r = self.r
        if r.random() < 0.25:
            return ("const", r.choice(CONSTS))
        return ("var", r.choice(self.vars))

    def expr(self, depth=0):
        r = self.r
        if depth >= 2 or r.random() < 0.4:
            return self.atom()
        op = r.choice(["add", "mul", "add", "mul", "scale"])
        if op == "scale":
            return ("mul", self.expr(depth + 1), ("const", r.choice([0.5, 1.0, 1.5, 2.0])))
        return (op, self.expr(depth + 1), self.expr(depth + 1))

    def slot(self, eq):
        r = self.r.random()
        if r < 0.45:
            return Slot("exact")
        if r < 0.6 and not eq:
            return Slot("near")
        return Slot("far")

    def cmp(self):
        r = self.r
        op = r.choice(CMPS)
        lhs = self.expr(1)
        if r.random() < 0.3:
            rhs = self.expr(1)
        else:
            rhs = self.slot(op in ("==", "!="))
        return ("cmp", self.tid(), lhs, op, rhs, r.random() < 0.3)

    def cond(self):
        r = self.r.random()
        if r < 0.2:
            return ("and", self.cmp(), self.cmp())
        if r < 0.35:
            return ("or", self.cmp(), self.cmp())
        return self.cmp()

    def assign(self):
        r = self.r
        var = r.choice(self.vars[1:])
        if r.random() < 0.3:         # a running product or sum: v = v op e
            return ("assign", var, (r.choice(["add", "mul"]), ("var", var), self.expr(1)))
        return ("assign", var, self.expr())

    def stmt(self, depth):
        r = self.r.random()
        if depth >= 2 or r < 0.35:
            return self.assign()
        if r < 0.5:
            var = self.r.choice(self.vars[1:])
            a = ("var", self.r.choice(self.vars))
            b = self.slot(False) if self.r.random() < 0.7 else self.atom()
            return ("minmax", var, self.r.choice(["min", "max"]), a, b, self.tid())
        if r < 0.75:
            return ("if", self.cond(), self.block(depth + 1),
                    self.block(depth + 1) if self.r.random() < 0.4 else None)
        self.nloop += 1
        w = "w%d" % self.nloop
        init = self.expr(1)
        q, c = self.r.choice([(1.0, 0.5), (1.0, 1.0), (1.5, 0.0), (2.0, 0.0), (1.5, 0.25), (2.0, 1.0)])
        return ("while", w, init, q, c, self.r.choice(["<", "<="]), self.slot(False), self.tid(),
                self.block(depth + 1))

    def block(self, depth):
        return [self.stmt(depth) for _ in range(self.r.randint(1, 3))]

    def program(self):
        init = []
        names = self.vars
        for i, v in enumerate(names[1:]):
            self.vars = names[:i + 1]      # x and the ones set so far
            init.append(("assign", v, self.expr(1) if self.r.random() < 0.6 else ("const", self.r.choice(CONSTS))))
        self.vars = names
        body = self.block(0)
        ys = [("var", v) for v in self.vars[1:] if self.r.random() < 0.6] or [("var", "v0")]
        y = ys[0]
        for t in ys[1:]:
            y = ("add", y, t)
        return init + body + [("assign", "y", ("add", y, ("mul", ("var", "x"), ("const", 0.5))))]


# ---------------------------------------------------------- running it here

class Sim:
    """Runs a program as wengert would, choosing each slot when its
    comparison first runs and checking every comparison is a fair test."""

    def __init__(self, x, rng):
        self.env = {"x": V(x, 1.0, True)}
        self.x = x
        self.r = rng
        self.trace = []
        self.steps = 0

    def ev(self, e):
        k = e[0]
        if k == "const":
            return V(e[1])
        if k == "var":
            return self.env[e[1]]
        a, b = self.ev(e[1]), self.ev(e[2])
        if k == "add":
            v = V(a.v + b.v, a.dv + b.dv, a.dep or b.dep)
        else:
            v = V(a.v * b.v, a.dv * b.v + a.v * b.dv, a.dep or b.dep)
        if not v.v < MAX_VAL:
            raise Ambiguous("too large")
        return v

    def fair(self, a, b, op):
        """a op b is a fair test: a note iff a flip, as the generator sees it."""
        if not (a.dep or b.dep):
            return
        scale = max(abs(a.v), abs(b.v))
        if scale == 0:      # 0 against 0: relative nearness says little there
            raise Ambiguous("both 0")
        gap = abs(a.v - b.v) / scale
        sens = abs(self.x * (a.dv - b.dv)) / scale
        if gap == 0:
            if sens < TIE_SENS:
                raise Ambiguous("tie without sensitivity")
        elif gap <= NEAR:
            if op in ("==", "!=") or sens * EPS < 1.5 * gap + 1e-14:
                raise Ambiguous("near, too weak to flip")
        elif gap < FAR or sens * EPS > 0.5 * gap - 1e-14:
            raise Ambiguous("between near and far")

    def choose(self, slot, a):
        """Fill a threshold slot from the value it is compared with."""
        if slot.value is None:
            if slot.kind == "exact":
                slot.value = a.v
            elif slot.kind == "near":
                slot.value = a.v * (1 + self.r.choice([-1, 1]) * self.r.uniform(1e-10, 3e-10))
            else:
                slot.value = a.v * (1 + self.r.choice([-1, 1]) * self.r.uniform(1e-3, 0.5))
        return V(slot.value)

    @staticmethod
    def compare(a, op, b):
        return {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b, "==": a == b, "!=": a != b}[op]

    def cond(self, c):
        if c[0] == "and":
            return self.cond(c[1]) and self.cond(c[2])
        if c[0] == "or":
            return self.cond(c[1]) or self.cond(c[2])
        _, k, lhs, op, rhs, swap = c
        a = self.ev(lhs)
        b = self.choose(rhs, a) if isinstance(rhs, Slot) else self.ev(rhs)
        self.fair(a, b, op)
        if swap:
            a, b, op = b, a, {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "!=": "!="}[op]
        out = self.compare(a.v, op, b.v)
        self.trace.append((k, out))
        return out

    def run(self, stmts):
        for s in stmts:
            self.steps += 1
            if self.steps > 5000:
                raise Ambiguous("too long")
            k = s[0]
            if k == "assign":
                self.env[s[1]] = self.ev(s[2])
            elif k == "minmax":
                _, var, f, ea, eb, t = s
                a = self.ev(ea)
                b = self.choose(eb, a) if isinstance(eb, Slot) else self.ev(eb)
                self.fair(a, b, "<")
                first = a.v <= b.v if f == "min" else a.v >= b.v
                self.trace.append((t, first))
                self.env[var] = V(a.v if first else b.v, a.dv if first else b.dv, a.dep or b.dep)
            elif k == "if":
                if self.cond(s[1]):
                    self.run(s[2])
                elif s[3]:
                    self.run(s[3])
            else:
                _, w, init, q, c, op, slot, t, body = s
                wv = self.ev(init)
                if slot.value is None:      # the bound: at, near or between iterates
                    traj = [wv.v]
                    for _ in range(5):
                        traj.append(traj[-1] * q + c)
                    m = self.r.randint(0, 4)
                    if slot.kind == "exact":
                        slot.value = traj[m]
                    elif slot.kind == "near":
                        slot.value = traj[m] * (1 + self.r.choice([-1, 1]) * self.r.uniform(1e-10, 3e-10))
                    else:
                        slot.value = (traj[m] + traj[m + 1]) / 2
                trips = 0
                while True:
                    self.env[w] = wv
                    b = V(slot.value)
                    self.fair(wv, b, op)
                    go = self.compare(wv.v, op, b.v)
                    self.trace.append((t, go))
                    if not go:
                        break
                    trips += 1
                    if trips > 8:
                        raise Ambiguous("loop too long")
                    wv = V(wv.v * q + c, wv.dv * q, wv.dep)
                    self.env[w] = wv
                    self.run(body)


# ------------------------------------------------------------ the text

def etext(e):
    k = e[0]
    if k == "const":
        return fmt(e[1])
    if k == "var":
        return e[1]
    return "(%s %s %s)" % (etext(e[1]), "+" if k == "add" else "*", etext(e[2]))


def stext_slot(slot):
    """A threshold; one its comparison never reached is any number."""
    return fmt(slot.value if slot.value is not None else 1.0)


def otext(o):
    return stext_slot(o) if isinstance(o, Slot) else etext(o)


def ctext(c):
    if c[0] in ("and", "or"):
        return "%s %s %s" % (ctext(c[1]), c[0], ctext(c[2]))
    _, k, lhs, op, rhs, swap = c
    a, b = etext(lhs), otext(rhs)
    if swap:
        a, b, op = b, a, {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "!=": "!="}[op]
    return "tr(%d, %s %s %s)" % (k, a, op, b)


def stext(stmts, ind, ck=None):
    """The text; ck (a random.Random, --checkpoint) checkpoints about half
    the while loops, as `checkpoint while` or `checkpoint(k) while`: their
    notes must be the plain loop's."""
    out = []
    p = "  " * ind
    for s in stmts:
        k = s[0]
        if k == "assign":
            out.append("%s%s = %s" % (p, s[1], etext(s[2])))
        elif k == "minmax":
            _, var, f, a, b, t = s
            at, bt = etext(a), otext(b)
            out.append("%snograd { tr(%d, %s %s %s) }" % (p, t, at, "<=" if f == "min" else ">=", bt))
            out.append("%s%s = %s(%s, %s)" % (p, var, f, at, bt))
        elif k == "if":
            out.append("%sif %s {" % (p, ctext(s[1])))
            out += stext(s[2], ind + 1, ck)
            if s[3]:
                out.append("%s} else {" % p)
                out += stext(s[3], ind + 1, ck)
            out.append("%s}" % p)
        else:
            _, w, init, q, c, op, slot, t, body = s
            # n caps the trips: at x a loop makes at most 9 (the generator
            # sees to it); at a perturbed point where an earlier branch
            # went the other way it could make thousands
            n = "n" + w[1:]
            out.append("%s%s = %s" % (p, w, etext(init)))
            out.append("%s%s = 0" % (p, n))
            kw = "while"
            if ck is not None and ck.random() < 0.5:
                kw = ck.choice(["checkpoint while", "checkpoint(1) while", "checkpoint(2) while"])
            out.append("%s%s tr(%d, %s %s %s) and %s < 12 {" % (p, kw, t, w, op, stext_slot(slot), n))
            out.append("%s  %s = %s * %s + %s" % (p, w, w, fmt(q), fmt(c)))
            out.append("%s  %s += 1" % (p, n))
            out += stext(body, ind + 1, ck)
            out.append("%s}" % p)
    return out


CHECKPOINT = False      # --checkpoint


def make_program(seed, k):
    """(program text of the body, x, fnmode, expected trace, tries)."""
    for attempt in range(200):
        r = random.Random("branch_notes:%d:%d:%d" % (seed, k, attempt))
        fnmode = r.random() < 0.35
        g = Gen(r, fnmode)
        prog = g.program()
        x = r.randint(4, 20) / 8
        sim = Sim(x, r)
        try:
            sim.run(prog)
            # the perturbed points must follow the same fair rules: a
            # threshold fixed at x is then judged there too (as the
            # property is), so only x itself is simulated
        except Ambiguous:
            continue
        ck = random.Random("branch_notes:ckpt:%d:%d" % (seed, k)) if CHECKPOINT else None
        return stext(prog, 1 if fnmode else 0, ck), x, fnmode, sim.trace, attempt
    raise RuntimeError("no fair program for %d:%d" % (seed, k))


def script(progs):
    """One file runs several programs: each at x with its derivative and
    :tape kinks, then at both perturbed points (fresh leaves each time: a
    program's derivative sees only its own comparisons)."""
    out = ["tr = fn(k, c) { print(\"t\", k, c); return c }"]
    for j, (body, x, fnmode) in enumerate(progs):
        xp, xm = x * (1 + EPS), x * (1 - EPS)
        if fnmode:
            out.append("F%d = fn(x) {" % j)
            out += body
            out.append("  return y")
            out.append("}")
            out.append("print(\"S\", %d, \"b\")" % j)
            out.append("print(\"D\", grad(F%d)(%s))" % (j, fmt(x)))
            out.append(":tape kinks")
            for tag, xv in (("p", xp), ("m", xm)):
                out.append("print(\"S\", %d, \"%s\")" % (j, tag))
                out.append("F%d(%s)" % (j, fmt(xv)))
        else:
            for tag, xv in (("b", x), ("p", xp), ("m", xm)):
                out.append("print(\"S\", %d, \"%s\")" % (j, tag))
                out.append("x = %s" % fmt(xv))
                out += body
                if tag == "b":
                    out.append("print(\"D\", d(y, x))")
                    out.append(":tape kinks")
    out.append("print(\"E\")")
    return "\n".join(out) + "\n"


def parse(stdout):
    """{j: {"b"/"p"/"m": trace, "kinks": n}}"""
    res = {}
    cur = None
    for line in stdout.splitlines():
        f = line.split()
        if not f:
            continue
        if f[0] == "S" and len(f) == 3:
            cur = res.setdefault(int(f[1]), {})
            tag = f[2]
            cur[tag] = []
        elif f[0] == "t" and cur is not None:
            cur[tag].append((int(f[1]), f[2] == "true"))
        elif line.startswith("kinks: ") and cur is not None:
            m = re.match(r"kinks: (\d+) in", line)
            cur["kinks"] = int(m.group(1)) if m else 0
    return res


def check_batch(binary, seed, ks, tmpdir, timeout):
    progs = []
    meta = []
    for k in ks:
        body, x, fnmode, trace, tries = make_program(seed, k)
        progs.append((body, x, fnmode))
        meta.append((k, trace))
    text = script(progs)
    path = os.path.join(tmpdir, "bn_%d_%d.wg" % (seed, ks[0]))
    with open(path, "w") as f:
        f.write(text)
    try:
        r = subprocess.run([binary, path], capture_output=True, text=True, timeout=timeout)
        rc, so, se = r.returncode, r.stdout, r.stderr
    except subprocess.TimeoutExpired:
        rc, so, se = -1, "", "timeout"
    res = parse(so)
    results = []
    notes_printed = len(re.findall(r"^note: this derivative passed", se, re.M))
    noted = 0
    for j, (k, trace) in enumerate(meta):
        got = res.get(j, {})
        if rc != 0 or "E" not in so.split() or "kinks" not in got or any(t not in got for t in "bpm"):
            err = (se.strip().splitlines() or ["no output"])[-1]
            results.append((k, "error", err, progs[j]))
            continue
        expect = got["p"] != got["b"] or got["m"] != got["b"]
        note = got["kinks"] > 0
        noted += note
        if got["b"] != trace:
            results.append((k, "error", "the generator's run differs from wengert's", progs[j]))
        elif expect and not note:
            results.append((k, "missing", "a perturbation flips a comparison, no note", progs[j]))
        elif note and not expect:
            results.append((k, "spurious", "a note, but no perturbation flips a comparison", progs[j]))
        else:
            results.append((k, "ok_note" if note else "ok", "", progs[j]))
    if rc == 0 and notes_printed != noted:      # stderr: one note per noting derivative
        results.append((ks[0], "error", "stderr has %d notes for %d derivatives with kinks"
                        % (notes_printed, noted), progs[0]))
    return results


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default="./wengert")
    ap.add_argument("--count", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--batch", type=int, default=25, help="programs per wengert run")
    ap.add_argument("--timeout", type=float, default=120)
    ap.add_argument("--show", type=int, metavar="K", help="print program K of this seed (as run) and exit")
    ap.add_argument("--verbose", action="store_true")
    ap.add_argument("--checkpoint", action="store_true",
                    help="about half the while loops checkpointed (their notes must be the plain loop's)")
    a = ap.parse_args()
    global CHECKPOINT
    CHECKPOINT = a.checkpoint
    if a.show is not None:
        body, x, fnmode, trace, tries = make_program(a.seed, a.show)
        sys.stdout.write(script([(body, x, fnmode)]))
        return 0
    binary = os.path.abspath(a.bin)
    if not os.access(binary, os.X_OK):
        print("branch_notes: no executable %s" % binary, file=sys.stderr)
        return 2
    if "WENGERT_STDLIB" not in os.environ:
        std = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "stdlib"))
        if os.path.isdir(std):
            os.environ["WENGERT_STDLIB"] = std
    counts = {"ok": 0, "ok_note": 0, "missing": 0, "spurious": 0, "error": 0}
    batches = [list(range(i, min(i + a.batch, a.count))) for i in range(0, a.count, a.batch)]
    shown = 0
    with tempfile.TemporaryDirectory() as tmp, \
            concurrent.futures.ThreadPoolExecutor(max_workers=max(1, a.jobs)) as pool:
        for results in pool.map(lambda ks: check_batch(binary, a.seed, ks, tmp, a.timeout), batches):
            for k, st, why, prog in results:
                counts[st] += 1
                if st in ("missing", "spurious", "error") and shown < 5:
                    shown += 1
                    body, x, fnmode = prog
                    print("===== program %d (seed %d): %s: %s" % (k, a.seed, st, why))
                    print(script([prog]), end="")
                elif a.verbose:
                    print("program %d: %s" % (k, st))
    n = counts["ok"] + counts["ok_note"] + counts["missing"] + counts["spurious"]
    print("branch_notes: %d programs (%d with a note expected), %d missing, %d spurious, %d errors"
          % (n, counts["ok_note"] + counts["missing"], counts["missing"], counts["spurious"], counts["error"]))
    return 1 if counts["missing"] or counts["spurious"] or counts["error"] else 0


if __name__ == "__main__":
    sys.exit(main())
