#!/usr/bin/env python3
"""Every route agrees: a random-program property test for wengert.

Generates random valid wengert programs, each a function F(x) of one number
that exercises scalar and array state, views, branches, loops, closures,
version reads and derivatives taken inside the function, then checks that
the first and second derivatives of F at a random point come out the same
by every route the language offers (d on the tape, grad, jvp, hvp and their
nestings) and agree with central differences.

    python3 tests/gen/routes.py --bin ./wengert [--count N] [--seed S]
        [--jobs J] [--keep-failures DIR] [--pad N] [--verbose] [--slow]
        [--wide | --fnwrites --checkpoint --sidefx --fixedpoint --nograd
         --kinks --strongzero --matrices] [--no-FEATURE] [--backend float32|posit32]

The wider features (FEATURES below) are off unless asked for, so a seed
gives the same programs with or without them in the code. Programs with a
kink exactly at the point or a nograd block are checked by route agreement
alone; in a narrow backend routes agree to the format's precision and
central differences are not checked.

Route agreement cannot see a wrong primal value: every route runs the same
fast path (a threaded handler, an in-place gather, a plain array loop) and
gets the same wrong number. With --slow each batch also runs with
WENGERT_SLOW=1, which turns every fast path off (eval_fast_paths, src/eval.h),
and every line a program printed must be the same text both ways: the same
bits, since a number prints as its shortest round trip. One exception
(SLOW_RTOL): an array operation or a matrix product recorded as one array
run (arrayrun.c; WENGERT_SLOW records one entry an element instead) is
swept whole, its elements' adjoints added up in another order than the
general path's one entry an element, so a derivative, and a value computed
from a derivative inside F, may differ in the last bits (and terms that
cancel exactly one way leave a residue of 1e-16 the other way); those agree
to SLOW_RTOL. A primal value of a program that takes no derivative inside F
must be the same bits.

Exits non-zero on any disagreement, --slow mismatch, difference mismatch or
wengert error, printing each failing program (reduced by deleting and simplifying lines
while the failure stays the same) with the values every route printed. The
last line is a summary. Python 3 standard library only.
"""

import argparse
import concurrent.futures
import copy
import math
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import time

CAP = 30.0       # a scalar whose magnitude bound passes this is squashed
LOOP_B = 6.0     # values a loop carries stay below max(bound at entry, this)
MAX_BLOCK = 2    # deepest nesting of if/for/while blocks in F's body
SIG_LIM = 30.0   # largest argument bound for sigmoid and softplus
ROUTE_RTOL = 1e-9
FD_AGREE = 1e-6  # two step sizes agree: the difference check applies
FD_MATCH = 1e-5  # then every route must match the smaller step to this
STEPS = (1e-4, 1e-5)
PAD = 0          # --pad N: N entries recorded between w and y
BACKEND = None   # --backend NAME: the wengert binary runs in that number format
USE_FD = True    # central differences apply (off in the narrow backends)
SLOW = False     # --slow: each batch again under WENGERT_SLOW=1, its printed lines compared
SLOW_RTOL = 1e-12   # --slow: derivatives where array runs add adjoints in another order
# (|a - b| <= SLOW_RTOL (1 + max(|a|, |b|)), as close() has it: terms that cancel
# to 0 one way leave a rounding residue (1e-16) the other way)
SLOW_TOLERATED = [0, 0.0]   # --slow: lines that differed within SLOW_RTOL, the largest difference
# A derivative taken inside F: its values (and F's) may come from an array run's sweep.
DERIV_INSIDE = re.compile(r"\b(d|grad|jvp|vjp|hvp|jacobian|hessian)\(")
# A program whose body holds this line is checked by route agreement alone:
# it has a kink exactly at the point (central differences straddle it) or a
# nograd block (a constant to every route, not to differences).
NOFD = "    # routes only: a kink at the point or a nograd"
# Lines an assertion's truth rests on end with this comment: the reducer
# leaves them (and the assertions) as they are.
KEEP = "  # kept: an assert rests on it"
# The wider features (issue 25), each off unless asked for, so that a seed
# gives the programs it always gave: --wide turns them all on, --X one,
# --no-X one off again.
FEATURES = [
    ("writers", "closures that write elements of captured arrays and views, called anywhere"),
    ("fnwrites", "a closure writes a captured array reading v; y reads both; then v (or the array) is "
                 "reassigned or written and d(y, v) = 0 (d(y, a) = what is left) is asserted"),
    ("checkpoint", "half the for/while loops are checkpointed (checkpoint, checkpoint(k))"),
    ("sidefx", "rand() in expressions; conditions call array-writing closures or draw"),
    ("fixedpoint", "fixedpoint of contractions (numbers and arrays) in expressions"),
    ("nograd", "nograd { s = e } statements (route agreement only)"),
    ("kinks", "min/max/clip ties, abs and relu at exactly 0, kinks at the point (route agreement only)"),
    ("strongzero", "sqrt, ^0.3, log behind relu(e - c) < 0 or abs(e - e): a zero partial meets inf"),
    ("matrices", "matrices made of arrays: products, broadcasting, axis reductions, element and "
                 "row/column view writes, versions m@k"),
    ("gathers", "v op= take(a, idx) into arrays, views, rows and columns: the target aliased with the "
                "source (or its view), sources and indices that are views, recorded or temporaries"),
]

# Routes. Each is (label, wengert expression); P is the program's number,
# W the point as a literal, w the recorded top-level variable, y = F(w).
FIRST = [
    ("d", "d(yP, wP)"),
    ("grad", "grad(FP)(W)"),
    ("jvp", "jvp(FP, W, 1)"),
    ("jvpk", "jvp(FP, W, [[1, 2, -1]])[0, 0]"),
    ("dfn", "DP(W)"),
    # jacobian (issue 28): a 1 x 1 matrix of F by each mode, and a 2 x 2
    # one of t => [F(t0), F(t0 + t1)] at [W, 0], whose entry [1, 1] is F'(W):
    # by reverse rows, and by sparse forward columns (F(t0) does not read
    # t1: the pattern has a zero there)
    ("jac", "jacobian(FP)(W)[0, 0]"),
    ("jac.rev", 'jacobian(FP, "rev")(W)[0, 0]'),
    ("jac.sparse", 'jacobian(FP, "sparse", "dense-fallback")(W)[0, 0]'),
    ("vjp", "vjp(FP, W, 1)"),
    ("jac.rows", 'jacobian(fn(t) => [FP(t[0]), FP(t[0] + t[1])], "rev")([W, 0])[1, 1]'),
    ("jac.cols", 'jacobian(fn(t) => [FP(t[0]), FP(t[0] + t[1])], "sparse", "dense-fallback")([W, 0])[1, 1]'),
    # the same as triplets (rows, cols, values): entry [1, 1] is the one with row * col = 1;
    # and two rows reading all three columns (rows coloured: reverse sweeps), entry [0, 0]
    ("jac.trip", '(fn(T) => sum(row(T, 2) * row(T, 0) * row(T, 1)))(jacobian(fn(t) => [FP(t[0]), FP(t[0] + t[1])], "sparse", "triplets", "dense-fallback")([W, 0]))'),
    ("jac.triprev", '(fn(T) => sum(row(T, 2) * (1 - row(T, 0)) * (1 - row(T, 1)) * (2 - row(T, 1)) / 2))(jacobian(fn(t) => [FP(t[0] + t[1] + t[2]), t[0] + t[1] + t[2]], "sparse", "triplets", "dense-fallback")([W, 0, 0]))'),
    # asked inside a top-level nograd block (NOGRAD: program_script writes
    # `nograd { r = ... }`): the sweep runs at the block's call depth, and
    # what it recomputes (checkpointed steps) must not be cut by the block
    ("ng.d", "NOGRAD d(yP, wP)"),
    ("ng.grad", "NOGRAD grad(FP)(W)"),
]
SECOND = [
    ("ng.grad.grad", "NOGRAD grad(grad(FP))(W)"),
    ("d.d", "d(d(yP, wP), wP)"),
    ("grad.grad", "grad(grad(FP))(W)"),
    ("jvp.grad", "jvp(grad(FP), W, 1)"),
    ("grad.jvp", "grad(fn(t) => jvp(FP, t, 1))(W)"),
    ("jvp.jvp", "jvp(fn(t) => jvp(FP, t, 1), W, 1)"),
    ("jvpk.jvpk", "jvp(fn(t) => jvp(FP, t, [[1, 2]])[0, 0], W, [[1, -1]])[0, 0]"),
    ("jvpk.grad", "jvp(grad(FP), W, [[1, 2]])[0, 0]"),
    ("grad.jvpk", "grad(fn(t) => jvp(FP, t, [[1, 2]])[0, 0])(W)"),
    ("hvp", "hvp(FP, W, 1)"),
    ("d.grad", "d(grad(FP)(wP), wP)"),
    ("d.jvp", "d(jvp(FP, wP, 1), wP)"),
    ("d.jvpk", "d(jvp(FP, wP, [[1, 2]])[0, 0], wP)"),
    ("grad.lam", "grad(fn(t) => grad(FP)(t))(W)"),
    ("grad.dfn", "grad(DP)(W)"),
    ("jvp.dfn", "jvp(DP, W, 1)"),
    ("d.dfn", "d(DP(wP), wP)"),
    ("hess", "hessian(FP)(W)[0, 0]"),
    ("hess.sparse", 'hessian(FP, "sparse", "dense-fallback")(W)[0, 0]'),
    ("jac.grad", "jacobian(grad(FP))(W)[0, 0]"),
    ("grad.jac", 'grad(fn(t) => jacobian(FP, "rev")(t)[0, 0])(W)'),
    ("hess.2", 'hessian(fn(t) => FP(t[0] + t[1]), "sparse", "dense-fallback")([W, 0])[0, 1]'),
    ("grad.trip", 'grad(fn(s) => (fn(T) => sum(row(T, 2) * row(T, 0) * row(T, 1)))(jacobian(fn(t) => [FP(t[0]), FP(t[0] + t[1])], "sparse", "triplets", "dense-fallback")([s, 0])))(W)'),
]
# Routes that run F more than once for one value (a recording for the
# pattern, then passes): with rand() in F (--sidefx) each run draws anew.
MANY_RUNS = {"jac.sparse", "jac.rows", "jac.cols", "hess.sparse", "hess.2", "jac.trip", "jac.triprev", "grad.trip"}
ROUTES = FIRST + SECOND

# wengert errors that mean "this program left its safe domain", not a bug;
# such programs are skipped and counted apart. (None are known to be needed.)
# A derivative taken inside a loop of a value made by the derivative before
# it differentiates a recorded derivative each time round: the tape can grow
# exponentially with the trip count. The cap makes that fail fast.
EXPECTED_ERRORS = [r"tape limit of .* reached"]
TAPE_LIMIT = "64MB"


def fmt(v):
    """A float as a wengert literal that reads back to the same value."""
    v = float(v)
    r = repr(v)
    if v == int(v) and abs(v) < 1e15:
        r = str(int(v))
    return "(%s)" % r if r.startswith("-") else r


def strip(t):
    """Drop one pair of parentheses around a whole expression."""
    if t.startswith("(") and t.endswith(")"):
        depth = 0
        for i, c in enumerate(t):
            depth += c == "("
            depth -= c == ")"
            if depth == 0 and i < len(t) - 1:
                return t
        return t[1:-1]
    return t


# ---------------------------------------------------------------- generator

class Num:
    """A scalar variable: bound on its magnitude, loop depth it was made at,
    exact count of assignments (None once a branch or loop made it uncertain)
    and the highest version k that is surely readable as name@k."""

    def __init__(self, name, bound, depth, versioned=True, mutable=True):
        self.name, self.bound, self.maxb, self.depth = name, bound, bound, depth
        self.cnt, self.known = 1, 1
        self.versioned, self.mutable = versioned, mutable


class Arr:
    """An array (view=False) or a view of storage sid."""

    def __init__(self, name, length, sid, view):
        self.name, self.length, self.sid, self.view = name, length, sid, view


class Clo:
    """A stored closure: kind 'num' (number in), 'arr' (array of length in),
    'mut' (writes into its view argument)."""

    def __init__(self, name, kind, argb, outb, length=None):
        self.name, self.kind, self.argb, self.outb, self.length = name, kind, argb, outb, length


class Gen:
    def __init__(self, rng, feats):
        self.r = rng
        self.feats = feats
        self.vars = {}          # name -> Num | Arr | Clo
        self.st = {}            # storage id -> [bound, loop depth made at]
        self.nsid = 0
        self.names = {}
        self.loop_depth = 0
        self.block_depth = 0
        self.loopvars = []      # (name, lo, hi) of enclosing for loops
        self.lams = []          # stack of lambda parameter lists: [(name, bound, kind, length)]
        self.conservative = False   # inside a stored closure: captures may grow
        self.ad_level = 0
        self.in_while = False
        # the wider features (all off unless asked for: see FEATURES)
        self.ckpt_depth = 0     # checkpointed loops around this point
        self.vcap = None        # inside one: name -> highest version kept from before it
        self.writers = []       # closures that write a captured array
        self.uses_rand = False  # F draws: it starts with seed(...)
        self.nofd = False       # a kink at the point or a nograd: routes only
        self.pure = 0           # inside a fixedpoint's g: no draws, no writes
        self.no_reach = 0       # a checkpointed body without d(...) or x@k outside
                                # lambdas (with them it runs recorded: src/ckpt.c)

    def fe(self, name):
        """Is the wider feature name on? (off by default: old seeds give
        the programs they always gave)"""
        return self.feats.get(name, False)

    def readable(self, v):
        """The highest version of v that can be read here (0: none)."""
        if self.no_reach and not self.lams:
            return 0
        if self.vcap is None:
            return v.known
        return min(v.known, self.vcap.get(v.name, 0))

    # -- helpers
    def w(self, table):
        """Pick from [(weight, value)], skipping zero weights."""
        table = [(a, b) for a, b in table if a > 0]
        tot = sum(a for a, _ in table)
        x = self.r.random() * tot
        for a, b in table:
            x -= a
            if x < 0:
                return b
        return table[-1][1]

    def fresh(self, prefix):
        self.names[prefix] = self.names.get(prefix, 0) + 1
        return "%s%d" % (prefix, self.names[prefix])

    def new_sid(self, bound):
        self.nsid += 1
        self.st[self.nsid] = [bound, self.loop_depth]
        return self.nsid

    def ind(self):
        return "    " * (self.block_depth + 1)

    def vb(self, v):
        b = v.bound
        return max(b, CAP) if self.conservative else b

    def sb(self, arr):
        b = self.st[arr.sid][0]
        return max(b, CAP) if self.conservative else b

    def nums(self, mutable=None):
        return [v for v in self.vars.values() if isinstance(v, Num)
                and (mutable is None or v.mutable == mutable)]

    def arrays(self, length=None, view=None):
        return [v for v in self.vars.values() if isinstance(v, Arr)
                and (length is None or v.length == length)
                and (view is None or v.view == view)]

    def clos(self, kind):
        return [v for v in self.vars.values() if isinstance(v, Clo) and v.kind == kind]

    def const(self):
        c = self.r.choice([0.5, 1.5, 2, 0.25, 3, 0.75, 1.25, 0.3, 2.5])
        if self.r.random() < 0.25:
            return "(-%s)" % fmt(c), c
        return fmt(c), c

    # -- bounded squashes
    def sig(self, a):
        """a, squashed to at most SIG_LIM: sigmoid and softplus (written in
        the standard library with exp(-x)) overflow past about 700, and
        there forward mode gives nan where reverse mode gives 0."""
        return self.squash(a, SIG_LIM) if a[1] > SIG_LIM else a

    def K(self, a):
        """A smooth function of a bounded by 1.6 in magnitude."""
        f = self.r.choice(["sin", "cos", "tanh", "atan", "sigmoid", "alg"])
        if f == "sigmoid":
            a = self.sig(a)
        t = strip(a[0])
        if f == "alg":
            return "(%s / sqrt(1 + %s * %s))" % (self.paren(t), self.paren(t), self.paren(t)), 1.0
        return "%s(%s)" % (f, t), (1.6 if f == "atan" else 1.0)

    def paren(self, t):
        """t, parenthesised unless it is already atomic (a name, a number, a
        call, an index, or wrapped in parentheses)."""
        if re.fullmatch(r"[A-Za-z_][A-Za-z_0-9]*(@[0-9]+)?|[0-9.]+(e-?[0-9]+)?", t):
            return t
        m = re.match(r"[A-Za-z_][A-Za-z_0-9]*", t)
        i = m.end() if m else 0
        if i < len(t) and t[i] in "([":
            depth = 0
            for j in range(i, len(t)):
                depth += t[j] in "(["
                depth -= t[j] in ")]"
                if depth == 0:
                    if j == len(t) - 1:
                        return t
                    break
        return "(%s)" % t

    def squash(self, a, c):
        """c * tanh(a / c): about a when a is small, at most c."""
        t, b = a
        if b <= c:
            return a
        how = self.r.random()
        if how < 0.6:
            return "(%s * tanh(%s / %s))" % (fmt(c), self.paren(t), fmt(c)), c
        if how < 0.8:
            return "(%s * atan(%s / %s))" % (fmt(c / 2), self.paren(t), fmt(c / 2)), c
        return "(%s / sqrt(1 + (%s / %s) ^ 2))" % (self.paren(t), self.paren(t), fmt(c)), c

    def guard(self, a, lim):
        if a[1] <= lim:
            return a
        if lim >= 1.6 and self.r.random() < 0.5:
            return self.K(a)
        return self.squash(a, lim)

    # -- expressions
    def index(self, length):
        opts = [(3, lambda: str(self.r.randrange(length)))]
        for name, lo, hi in self.loopvars:
            if hi <= length:
                opts.append((4, lambda name=name: name))
                opts.append((1, lambda name=name, lo=lo: "%d - %s" % (length - 1 + lo, name)))
            opts.append((2, lambda name=name: "%s %% %d" % (name, length)))
            c = self.r.randrange(1, 4)
            opts.append((1, lambda name=name, c=c: "(%s + %d) %% %d" % (name, c, length)))
        return self.w(opts)()

    def leaf(self):
        opts = []
        for v in self.nums():
            opts.append((2 if v.mutable else 1, lambda v=v: (v.name, self.vb(v))))
            if v.versioned and self.readable(v) >= 1 and self.feats.get("versions", True) and (
                    not self.lams or self.feats.get("captured_versions")):
                opts.append((0.6, lambda v=v: ("%s@%d" % (v.name, self.r.randint(1, self.readable(v))),
                                               max(v.maxb, CAP) if self.conservative else v.maxb)))
        for a in self.arrays():
            opts.append((1.2, lambda a=a: ("%s[%s]" % (a.name, self.index(a.length)), self.sb(a))))
        for name, lo, hi in self.loopvars:
            opts.append((0.5, lambda name=name, hi=hi: (name, float(hi))))
        for params in self.lams[-1:]:
            for (p, b, kind, length) in params:
                if kind in ("num", "cap"):
                    opts.append((6, lambda p=p, b=b: (p, b)))
                    if self.feats.get("versions", True) and kind == "num":
                        opts.append((0.8, lambda p=p, b=b: (p + "@1", b)))
                else:
                    opts.append((3, lambda p=p, b=b, length=length:
                                 ("%s[%d]" % (p, self.r.randrange(length)), b)))
        opts.append((1, self.const))
        return self.w(opts)()

    def num(self, depth):
        if depth <= 0 or self.r.random() < 0.15:
            return self.leaf()
        d1 = depth - 1
        ops = [
            (3, lambda: self.leaf()),
            (3, lambda: self.binop(d1)),
            (2, lambda: self.bounded(d1)),
            (1, lambda: self.expfam(d1)),
            (1, lambda: self.logsqrt(d1)),
            (0.8, lambda: self.trig(d1)),
            (1, lambda: self.power(d1)),
            (0.7, lambda: self.stdfn(d1)),
            (0.4, lambda: self.kinky(d1)),
            (1.2 if self.arrays() or self.lam_arrays() else 0.3, lambda: self.reduce(d1)),
            (1 if [c for c in self.clos("num") + self.clos("arr")
                   if not self.pure or c.name not in self.writers] else 0, lambda: self.call(d1)),
            (0.5 if self.ad_level < 2 and self.feats.get("ad", True) else 0, lambda: self.ad(d1)),
            (0.5 if self.fe("kinks") else 0, lambda: self.kink(d1)),
            (0.4 if self.fe("strongzero") else 0, lambda: self.strong_zero(d1)),
            (0.4 if self.fe("fixedpoint") and self.ad_level < 2 else 0, lambda: self.fixedpt(d1)),
        ]
        return self.w(ops)()

    def lam_arrays(self):
        return [p for params in self.lams[-1:] for p in params if p[2] == "arr"]

    def binop(self, d):
        a = self.num(d)
        b = self.num(d)
        op = self.w([(3, "+"), (2, "-"), (3, "*"), (2, "/")])
        if op in "+-":
            return "(%s %s %s)" % (a[0], op, b[0]), a[1] + b[1]
        if op == "*":
            return "(%s * %s)" % (a[0], b[0]), a[1] * b[1]
        den = self.w([
            (2, lambda: ("(1 + %s * %s)" % (b[0], b[0]), 1.0)),
            (2, lambda: ("(2 + cos(%s))" % strip(b[0]), 1.0)),
            (1, lambda: ("(1.5 + tanh(%s))" % strip(b[0]), 0.5)),
            (1, lambda: ("exp(%s)" % strip(self.guard(b, 3)[0]), math.exp(-self.guard(b, 3)[1]))),
            (1, lambda: ("(1 + sigmoid(%s))" % strip(self.sig(b)[0]), 1.0)),
        ])()
        return "(%s / %s)" % (a[0], den[0]), a[1] / den[1]

    def bounded(self, d):
        a = self.num(d)
        f = self.r.choice(["sin", "cos", "tanh", "atan", "sigmoid", "neg"])
        if f == "sigmoid":
            a = self.sig(a)
        if f == "neg":
            return "(-%s)" % self.paren(a[0]), a[1]
        return "%s(%s)" % (f, strip(a[0])), (1.6 if f == "atan" else 1.0)

    def expfam(self, d):
        a = self.num(d)
        f = self.r.choice(["exp", "sinh", "cosh"])
        if f == "exp":
            g = self.guard(a, 3)
            return "exp(%s)" % strip(g[0]), math.exp(g[1])
        g = self.guard(a, 2.5)
        return "%s(%s)" % (f, strip(g[0])), math.cosh(g[1])

    def logsqrt(self, d):
        a = self.num(d)
        t, b = a
        p = self.paren(t)
        # With writers or draws the two copies of p may differ (a call
        # writes what the second reads): p * p + 0.25 can then be negative.
        side = self.fe("writers") or self.fe("sidefx")
        return self.w([
            (2, lambda: ("log(1 + %s * %s)" % (p, p), math.log(1 + b * b))),
            (1, lambda: ("log(2 + sin(%s))" % strip(t), 1.1)),
            (1, lambda: ("log(sigmoid(%s))" % strip(self.sig(a)[0]), min(b, SIG_LIM) + 0.7)),
            (2, lambda: ("sqrt(1 + %s * %s)" % (p, p), math.sqrt(1 + b * b))),
            (1, lambda: ("sqrt(2 + cos(%s))" % strip(t), 1.8)),
            (1, lambda: (("sqrt(square(%s) + 0.25)" % strip(t)) if side else ("sqrt(%s * %s + 0.25)" % (p, p)), b + 0.5)),
        ])()

    def trig(self, d):
        a = self.num(d)
        t = strip(a[0])
        return self.w([
            (1, lambda: ("tan(0.5 * %s)" % self.paren(self.K(a)[0]), 1.1)),
            (1, lambda: ("tan(%s)" % strip(self.guard(a, 1.0)[0]), 1.6)),
            (1, lambda: ("asin(0.5 * tanh(%s))" % t, 0.6)),
            (1, lambda: ("acos(0.5 * tanh(%s))" % t, 2.1)),
            (1, lambda: ("asin(0.8 * sin(%s))" % t, 1.0)),
            (1, lambda: ("acos(0.7 * cos(%s))" % t, 2.4)),
            (1, lambda: ("atan2(%s, 1 + %s)" % (t, self.sq(d)), 1.6)),
            (1, lambda: ("atan2(%s, 2 + cos(%s))" % (t, strip(self.num(d)[0])), 1.6)),
            (1, lambda: ("atan2(1 + %s * %s, %s)" % (self.paren(t), self.paren(t), strip(self.num(d)[0])), 3.2)),
        ])()

    def sq(self, d):
        b = self.num(d)
        return "%s * %s" % (self.paren(b[0]), self.paren(b[0]))

    def power(self, d):
        a = self.num(d)
        n = self.w([(1, 0), (1, 1), (4, 2), (2, 3), (1, -1), (1, -2), (1, 0.5), (1, "real")])
        if n == "real":
            base = self.w([
                (1, lambda: ("(1 + %s * %s)" % ((self.paren(self.guard(a, 2)[0]),) * 2), 5.0)),
                (1, lambda: ("(2 + cos(%s))" % strip(a[0]), 3.0)),
                (1, lambda: ("exp(%s)" % strip(self.guard(a, 1.5)[0]), math.exp(1.5))),
            ])()
            e = self.guard(self.num(d), 1.5)
            return "(%s ^ %s)" % (base[0], self.paren(e[0])), base[1] ** 1.5
        if n in (-1, -2, 0.5):
            base = self.w([(1, lambda: "(1.5 + sin(%s))" % strip(a[0])),
                           (1, lambda: "(1 + %s * %s)" % (self.paren(a[0]), self.paren(a[0]))),
                           (1, lambda: "(2 + tanh(%s))" % strip(a[0]))])()
            bound = 2.0 ** abs(n) if n < 0 else math.sqrt(1 + a[1] * a[1])
            return "(%s ^ %s)" % (base, n), bound
        if n >= 2:
            a = self.guard(a, 100 ** (1.0 / n))
        return "(%s ^ %d)" % (self.paren(a[0]), n), max(a[1] ** n, 1.0)

    def stdfn(self, d):
        a = self.sig(self.num(d))
        t, b = strip(a[0]), a[1]
        return self.w([
            (2, lambda: ("sigmoid(%s)" % t, 1.0)),
            (2, lambda: ("softplus(%s)" % t, b + 0.7)),
            (1, lambda: ("square(%s)" % strip(self.guard(a, 10)[0]), min(b, 10) ** 2)),
        ])()

    def kinky(self, d):
        a = self.num(d)
        t = strip(a[0])
        return self.w([
            (2, lambda: ("abs(%s)" % t, a[1])),
            (2, lambda: self.minmax(a, d)),
            (1, lambda: ("relu(%s)" % t, a[1])),
            (1, lambda: ("clip(%s, -1, 1)" % t, 1.0)),
            (0.5, lambda: ("(%s %% 1.5)" % self.paren(a[0]), 1.5)),
            (0.3, lambda: ("floor(%s)" % t, a[1] + 1)),
            (0.3, lambda: ("sign(%s)" % t, 1.0)),
        ])()

    # -- kinks and ties on purpose (--kinks, --strongzero)
    def at_point(self):
        """The parameter's value as F was called (exactly the point w when
        the routes call F there), or None when no such text is safe here."""
        x = self.vars.get("x")
        if x is None or self.conservative:
            return None
        if x.cnt == 1:
            return "x"
        if not self.lams and self.feats.get("versions", True) and self.readable(x) >= 1 and not self.no_reach:
            return "x@1"
        return None

    def kink(self, d):
        """A kink or tie that is hit exactly. Ties of an expression with
        itself and abs/relu of a difference that is exactly 0 hold at every
        point (central differences still apply); kinks at the point w itself
        mark the program as checked by route agreement only."""
        a = self.num(d)
        t, p, b = strip(a[0]), self.paren(a[0]), a[1]
        opts = [
            (2, lambda: ("%s(%s, %s)" % (self.r.choice(["min", "max"]), t, t), b)),
            (1, lambda: ("abs(%s - %s)" % (p, p), 0.0)),
            (1, lambda: ("relu(%s - %s)" % (p, p), 0.0)),
            (1, lambda: ("(%s * abs(%s - %s))" % (p, p, p), 0.0)),
            (1, lambda: ("clip(%s, %s, %s)" % (t, t, t), b)),
        ]
        xp = self.at_point()
        if xp is not None:
            def at():
                self.nofd = True
                return self.w([
                    (1, lambda: ("relu(%s - WPT)" % xp, 3.4)),
                    (1, lambda: ("abs(%s - WPT)" % xp, 3.4)),
                    (1, lambda: ("(%s * abs(WPT - %s))" % (p, xp), b * 3.4)),
                    (1, lambda: ("%s(%s, WPT)" % (self.r.choice(["min", "max"]), xp), 1.7)),
                    (1, lambda: ("%s(WPT, %s)" % (self.r.choice(["min", "max"]), xp), 1.7)),
                    (1, lambda: ("clip(%s, WPT, 2)" % xp, 2.0)),
                ])()
            opts.append((2.5, at))
        return self.w(opts)()

    def strong_zero(self, d):
        """A partial that is exactly 0 meeting an infinite one (SPEC,
        "strong zero"): sqrt, a power below 1 or log behind relu of an
        argument that is surely negative, or behind abs(e - e)."""
        a = self.num(d)
        t, p, b = strip(a[0]), self.paren(a[0]), a[1]
        c = fmt(math.ceil(min(b, 1e6)) + 1)
        opts = [
            (2, lambda: ("sqrt(relu(%s - %s))" % (t, c), 0.0)),
            (1, lambda: ("(relu(%s - %s) ^ 0.3)" % (t, c), 0.0)),
            (1, lambda: ("(log(1 + relu(%s - %s)) ^ 0.5)" % (t, c), 0.0)),
            (1, lambda: ("sqrt(abs(%s - %s))" % (p, p), 0.0)),
            (1, lambda: ("(%s * sqrt(relu((-%s) - %s)))" % (p, p, c), 0.0)),
        ]
        xp = self.at_point()
        if xp is not None:
            def at():
                self.nofd = True
                return self.r.choice([("sqrt(relu(%s - WPT))" % xp, 1.9),
                                      ("sqrt(relu(WPT - %s))" % xp, 1.9),
                                      ("(abs(%s - WPT) ^ 0.5)" % xp, 1.9)])
            opts.append((1, at))
        return self.w(opts)()

    # -- fixed points (--fixedpoint)
    def fixedpt(self, d):
        """fixedpoint of a contraction (Lipschitz at most 0.5 in its
        argument) that reads what it captures."""
        self.ad_level += 1
        try:
            return self.fixedpt_(d)
        finally:
            self.ad_level -= 1

    def fixedpt_(self, d):
        u = self.fresh("u")
        # what g reads, as captures: no versions of them (x@k of a capture)
        frame = [(p[0], p[1], "cap" if p[2] == "num" else p[2], p[3]) for p in (self.lams[-1] if self.lams else [])]
        self.lams.append(frame)
        self.pure += 1
        try:
            e = self.num(max(d, 0))
            k = self.K(e)
            tol = self.r.choice(["", ", 1e-14, 500"])
            arr = self.r.random() < 0.3 and (self.arrays() or self.lam_arrays())
            if arr:
                t, b, n = self.arr(max(d, 0))
        finally:
            self.lams.pop()
            self.pure -= 1
        if arr:
            if b > 3:
                t = "tanh(%s)" % strip(t)
            return "sum(fixedpoint(fn(%s) => 0.5 * tanh(%s) + 0.3 * %s + 1, zeros(%d)%s))" % (
                u, u, self.paren(t), n, tol), 1.5 * n
        how = self.r.random()
        if how < 0.4:
            g = "0.3 * sin(%s) + 0.2 * %s + 1" % (u, k[0])
        elif how < 0.7:
            g = "0.4 * cos(%s + %s) + 0.3 * %s + 1" % (u, self.paren(k[0]), k[0])
        else:
            g = "1 + 0.3 * %s * tanh(%s)" % (self.paren(k[0]), u)
        return "fixedpoint(fn(%s) => %s, %s%s)" % (u, g, self.r.choice(["0", "0.3", "(-1)"]), tol), 1.8

    def s_draw(self):
        """A draw into a new variable (F then starts with seed(...), so
        every call draws alike). Never in an expression: the generator
        writes some expressions twice (e / sqrt(1 + e * e)), and two draws
        differ."""
        self.uses_rand = True
        name = self.fresh("s")
        e = self.num(self.r.randint(0, 2))
        e = self.K(e) if e[1] > CAP else e
        t, b = self.r.choice([("rand()", 1.0), ("rand() - 0.5", 0.5), ("0.5 * randn()", 3.0)])
        self.vars[name] = Num(name, b + e[1], self.loop_depth)
        return [self.ind() + "%s = %s + %s" % (name, t, strip(e[0]))]

    def minmax(self, a, d):
        b = self.num(d)
        return "%s(%s, %s)" % (self.r.choice(["min", "max"]), strip(a[0]), strip(b[0])), max(a[1], b[1])

    # -- arrays
    def arr(self, depth, length=None):
        """An array-valued expression: (text, bound, length)."""
        if length is None:
            lens = [a.length for a in self.arrays()] + [p[3] for p in self.lam_arrays()]
            length = self.r.choice(lens) if lens and self.r.random() < 0.7 else self.r.randint(2, 5)
        vars_ = [(a.name, self.sb(a)) for a in self.arrays(length)]
        vars_ += [(p[0], p[1]) for p in self.lam_arrays() if p[3] == length]
        d = depth - 1
        ops = [
            (6 if vars_ else 0, lambda: self.r.choice(vars_)),
            (2, lambda: self.arr_literal(d, length)),
            (2 if depth > 0 else 0, lambda: self.arr_scale(d, length)),
            (2 if depth > 0 else 0, lambda: self.arr_bin(d, length)),
            (2 if depth > 0 else 0, lambda: self.arr_unary(d, length)),
            (1, lambda: self.arr_slice(length)),
            (1, lambda: self.arr_fill(d, length)),
            (0.5 if length >= 2 else 0, lambda: ("linspace(%s, %s, %d)" % (
                strip(self.num(d)[0]), strip(self.num(d)[0]), length), 2 * CAP)),
        ]
        got = self.w(ops)()
        if got is None:
            got = self.arr_literal(d, length)
        return got[0], got[1], length

    def arr_literal(self, d, length):
        items = [self.num(max(d, 0)) for _ in range(length)]
        return "[%s]" % ", ".join(strip(t) for t, _ in items), max(b for _, b in items)

    def arr_scale(self, d, length):
        a = self.arr(d, length)
        s = self.num(d)
        op = self.r.choice(["*", "+", "-", "r-"])
        if op == "*":
            return "(%s * %s)" % (a[0], s[0]), a[1] * s[1]
        if op == "r-":
            return "(%s - %s)" % (s[0], a[0]), a[1] + s[1]
        return "(%s %s %s)" % (a[0], op, s[0]), a[1] + s[1]

    def arr_bin(self, d, length):
        a = self.arr(d, length)
        b = self.arr(d, length)
        op = self.r.choice(["*", "+", "-", "max", "min"])
        if op in ("max", "min"):
            return "%s(%s, %s)" % (op, a[0], b[0]), max(a[1], b[1])
        if op == "*":
            return "(%s * %s)" % (a[0], b[0]), a[1] * b[1]
        return "(%s %s %s)" % (a[0], op, b[0]), a[1] + b[1]

    def arr_unary(self, d, length):
        a = self.arr(d, length)
        t = strip(a[0])
        return self.w([
            (2, lambda: ("%s(%s)" % (self.r.choice(["sin", "cos", "tanh"]), t), 1.0)),
            (0.5, lambda: ("sigmoid(%s)" % strip(self.sig(a[:2])[0]), 1.0)),
            (1, lambda: ("exp(%s)" % (t if a[1] <= 3 else "tanh(%s)" % t), math.exp(min(a[1], 3)) if a[1] <= 3 else math.e)),
            (1, lambda: ("sqrt(1 + %s * %s)" % (self.paren(a[0]), self.paren(a[0])), math.sqrt(1 + a[1] ** 2))),
            (1, lambda: ("(%s ^ 2)" % self.paren(a[0]), a[1] ** 2) if a[1] <= 10 else ("(-%s)" % self.paren(a[0]), a[1])),
            (0.5, lambda: ("abs(%s)" % t, a[1])),
        ])()

    def arr_slice(self, length):
        srcs = [a for a in self.arrays() if a.length >= length]
        if not srcs:
            return None
        a = self.r.choice(srcs)
        i = self.r.randint(0, a.length - length)
        return "%s[%d:%d]" % (a.name, i, i + length), self.sb(a)

    def arr_fill(self, d, length):
        s = self.num(d)
        if self.r.random() < 0.5:
            return "(zeros(%d) + %s)" % (length, s[0]), s[1]
        return "(ones(%d) * %s)" % (length, s[0]), s[1]

    def reduce(self, d):
        a = self.arr(d)
        t, b, n = a
        return self.w([
            (3, lambda: ("sum(%s)" % t, n * b)),
            (1, lambda: ("mean(%s)" % t, b)),
            (2, lambda: ("logsumexp(%s)" % t, b + n)),
            (1, lambda: ("prod(%s)" % strip(self.guard((t, b), 100 ** (1.0 / n))[0]) if b > 1.5 else "prod(%s)" % t,
                         max(1.0, min(b, 100 ** (1.0 / n))) ** n)),
            (2, lambda: ("dot(%s, %s)" % (t, self.arr(d, n)[0]), n * b * CAP)),
            (1, lambda: ("norm(%s)" % ("1 + %s * %s" % (self.paren(t), self.paren(t))), n * (1 + b * b))),
            (1, lambda: ("%s(%s)" % (self.r.choice(["min", "max"]), t), b)),
            (1, lambda: ("%s[%s(%s)]" % (self.paren(t), self.r.choice(["argmin", "argmax"]), t), b)),
            (3 if self.fe("matrices") else 0, lambda: self.mat_reduce(d, a)),
        ])()

    # -- matrices (--matrices): 2 x n matrices made of arrays of n
    def mat(self, d, n):
        """A 2 x n matrix expression: (text, bound)."""
        a, b = self.arr(d, n), self.arr(d, n)
        return self.w([
            (3, lambda: ("[%s, %s]" % (strip(a[0]), strip(b[0])), max(a[1], b[1]))),
            (1, lambda: ("reshape(%s, 2, %d)" % (strip(self.arr(d, 2 * n)[0]), n), 2 * CAP)),
            (1, lambda: ("([%s, %s] * %s)" % (strip(a[0]), strip(b[0]), self.paren(self.K(self.num(d))[0])),
                         max(a[1], b[1]) * 1.6)),
            (1, lambda: ("([%s, %s] + reshape(%s, 1, %d))" % (strip(a[0]), strip(a[0]), strip(b[0]), n),
                         a[1] + b[1])),
            (1, lambda: ("([%s, %s] * [[%s], [%s]])" % (strip(a[0]), strip(b[0]), strip(self.K(self.num(d))[0]),
                                                      strip(self.K(self.num(d))[0])), max(a[1], b[1]) * 1.6)),
        ])()

    def mat_reduce(self, d, a):
        """A number from matrices built on array a (text, bound, length)."""
        t, b, n = a
        m = self.mat(d, n)
        m2 = self.mat(d, n)
        i, j = self.r.randint(0, 1), self.r.randint(0, n - 1)
        mb = m[1]
        return self.w([
            (2, lambda: ("sum(%s @ transpose(%s))" % (m[0], m2[0]), 4 * n * mb * m2[1])),
            (1, lambda: ("(%s @ %s)[%d]" % (m[0], t, i), n * mb * b)),
            (1, lambda: ("(%s @ transpose(%s))[%d]" % (t, m[0], i), n * mb * b)),
            (1, lambda: ("sum(%s(%s, %d))" % (self.r.choice(["sum", "mean", "max", "min"]), m[0],
                                              self.r.randint(1, 2)), 2 * n * mb)),
            (1, lambda: ("sum(logsumexp(%s, %d))" % (m[0], self.r.randint(1, 2)), 2 * n * (mb + 2))),
            (1, lambda: ("%s[%d, %d]" % (self.paren(m[0]), i, j), mb)),
            (1, lambda: ("sum(%s - max(%s, 2))" % (self.paren(m[0]), self.paren(m[0])), 4 * n * mb)),
            (1, lambda: ("sum(take(reshape(%s, %d), reshape(%s(%s, 1), %d) * %d + range(%d)))"
                         % (m[0], 2 * n, self.r.choice(["argmin", "argmax"]), m[0], n, n, n), 2 * n * mb)),
        ])()

    def s_matrix(self):
        """A matrix variable, written by element and through a row or
        column view, read back with a version m@k."""
        n = self.r.choice([a.length for a in self.arrays()] or [3])
        name = self.fresh("m")
        m = self.mat(self.r.randint(0, 1), n)
        mb = min(m[1], CAP)
        if m[1] > CAP:
            m = ("(%s * tanh(%s / %s))" % (fmt(8.0), m[0], fmt(8.0)), 8.0)
            mb = 8.0
        lines = ["%s = %s" % (name, strip(m[0]))]
        i, j = self.r.randint(0, 1), self.r.randint(0, n - 1)
        k = self.K(self.num(self.r.randint(1, 2)))
        lines.append(self.w([
            (1, lambda: "%s[%d, %d] = %s * %s[%d, %d] + %s" % (name, i, j, fmt(0.5), name, i, j, k[0])),
            (1, lambda: "%s[%d, %d] *= %s" % (name, i, j, k[0])),
        ])())
        mb = mb * 0.5 + 1.6
        view = self.r.choice(["row(%s, %d)" % (name, i), "col(%s, %d)" % (name, j)])
        vn = self.fresh("v")
        lines.append("%s = %s" % (vn, view))
        k2 = self.K(self.num(self.r.randint(1, 2)))
        lines.append(self.w([
            (1, lambda: "%s *= %s" % (vn, k2[0])),
            (1, lambda: "%s[0] += %s" % (vn, k2[0])),
        ])())
        mb = mb * 1.6 + 1.6
        old = "%s@%d" % (name, self.r.randint(1, 3)) if self.feats.get("versions", True) and not self.no_reach \
            and self.vcap is None else name
        s = self.fresh("s")
        e = self.w([
            (1, lambda: ("sum(%s * %s)" % (name, old), 2 * n * mb * mb)),
            (1, lambda: ("sum(%s @ transpose(%s))" % (old, name), 4 * n * mb * mb)),
            (1, lambda: ("sum(logsumexp(%s, 2) - %s[%d, %d])" % (name, old, i, j), 2 * (n * mb + 2))),
        ])()
        e = self.squash(e, 8.0) if e[1] > CAP else e
        self.vars[s] = Num(s, e[1], self.loop_depth)
        lines.append("%s = %s" % (s, strip(e[0])))
        return [self.ind() + line for line in lines]

    # -- gathers (--gathers): v op= take(a, idx), exec_compound's gather
    def gather_idx(self, n, src_len, lines):
        """n whole indices below src_len, as an index array's text: a
        literal, a range, one with recorded numbers in it (0 * s + k), an
        index variable (lines gets its assignment) or a view of one."""
        ks = [self.r.randrange(src_len) for _ in range(n)]
        lit = "[%s]" % ", ".join(map(str, ks))
        nums = self.nums()
        how = self.w([(4, "lit"), (1.5 if src_len >= n else 0, "range"), (1 if src_len >= n else 0, "rev"),
                      (1.5 if nums else 0, "rec"), (1.5, "var"), (0.7, "view"), (0.5 if n >= 2 else 0, "floor"),
                      (1.5 if self.loopvars else 0, "loop")])
        if how == "range":
            return "range(%d)" % n
        if how == "rev":
            return "(%d - range(%d))" % (n - 1, n)
        if how == "rec":
            v = self.r.choice(nums)
            i = self.r.randrange(n)
            ks2 = [str(k) for k in ks]
            ks2[i] = "0 * %s + %d" % (v.name, ks[i])
            return "[%s]" % ", ".join(ks2)
        if how == "floor":
            return "floor(linspace(0, %s, %d))" % (fmt(src_len - 0.5), n)
        if how == "loop":
            name, lo, hi = self.r.choice(self.loopvars)
            return "[%s]" % ", ".join("(%s + %d) %% %d" % (name, k, src_len) for k in ks)
        if how in ("var", "view"):
            name = self.fresh("ix")
            lines.append("%s = %s" % (name, lit))
            return name if how == "var" else "view(%s)" % name
        return lit

    def const_arr(self, n):
        """An array of n numbers that depend on no input, (text, bound):
        what the gather's fast path writes in place even while F is
        recorded (recorded numbers on either side take the general way)."""
        c1, c2 = self.const(), self.const()
        loops = [name for name, lo, hi in self.loopvars]
        return self.w([
            (3, lambda: ("[%s]" % ", ".join(self.const()[0] for _ in range(n)), 3.0)),
            (1, lambda: ("linspace(%s, %s, %d)" % (c1[0], c2[0], n), 3.0)),
            (1, lambda: ("(zeros(%d) + %s)" % (n, c1[0]), 3.0)),
            (1, lambda: ("(range(%d) * %s)" % (n, c1[0]), 3.0 * n)),
            (1 if loops else 0, lambda: ("(range(%d) + %s)" % (n, self.r.choice(loops)), 2.0 * n + 4)),
        ])()

    def owners(self, a):
        """The arrays (not views) whose storage view a shows."""
        return [o for o in self.arrays(view=False) if o.sid == a.sid]

    def gather_src(self, t, n, lines, own=None):
        """The array gathered from for target t of n elements (None: a new
        row or column, own its (text, bound, length)): (text, bound,
        length). The target itself or its owner (aliased), another array or
        view, or an expression."""
        opts = [(2, "other"), (1.5, "expr"), (2, "const")]
        if t is not None:
            opts.append((3 if not t.view or self.owners(t) else 1, "alias"))
        elif own is not None:
            opts.append((1, "alias"))
        how = self.w(opts)
        if how == "alias" and t is None:
            return own
        if how == "const":
            ln = self.r.randint(1, 5)
            text, b = self.const_arr(ln)
            if self.r.random() < 0.3:
                return text, b, ln
            name = self.fresh("k")
            lines.append("%s = %s" % (name, strip(text)))
            self.vars[name] = Arr(name, ln, self.new_sid(b), False)
            return name, b, ln
        if how == "alias":
            if t.view and self.owners(t) and self.r.random() < 0.8:
                o = self.r.choice(self.owners(t))
                return o.name, self.sb(o), o.length
            return t.name, self.sb(t), t.length
        arrs = self.arrays()
        if how == "other" and arrs:
            plain = [a for a in arrs if not a.view]
            a = self.r.choice(plain if plain and self.r.random() < 0.75 else arrs)
            return a.name, self.sb(a), a.length
        return self.arr(self.r.randint(1, 2))

    def gather_fn(self):
        """A closure of an array u whose frame keeps no versions (no
        derivative operator, no x@k in it), gathering between arrays of
        constants of its own: there a write needs no place, and the gather
        takes the fast path (in place) even while F is recorded; u's
        derivative flows through sum(w * u)."""
        n = self.r.choice([a.length for a in self.arrays()] or [3])
        name = self.fresh("g")
        if self.r.random() < 0.2:
            return self.gather_fn_into_indices(name, n)
        text, wb = self.const_arr(n)
        body = ["gw = %s" % strip(text)]
        tgt, tn = "gw", n
        if self.r.random() < 0.35:
            ln = self.r.randint(1, n)
            body.append("gv = view(gw, %d, %d)" % (self.r.randint(0, n - ln), ln))
            tgt, tn = "gv", ln
        how = self.w([(2, "alias"), (2, "other"), (1, "temp")])
        if how == "alias":
            src, sb_, slen = "gw", wb, n
        else:
            slen = self.r.randint(1, 5)
            st, sb_ = self.const_arr(slen)
            if how == "other":
                body.append("gk = %s" % strip(st))
                st = "gk"
            src = strip(st)
        op = self.w([(3, "+="), (1, "-="), (2, "*="), (1, "/=")])
        if op == "/=":
            src, sb_ = "(2 + cos(%s))" % src, 1.0
        nb = wb + sb_ if op in ("+=", "-=") else wb * max(1.0, sb_)
        ix = self.gather_idx(tn, slen, body)
        body.append("%s %s take(%s, %s)" % (tgt, op, src, ix))
        e = ("sum(gw * gu)", n * nb * 3.0)
        return self.gather_closure(name, n, body, e)

    def gather_closure(self, name, n, body, e):
        """The lines that define closure name = fn(gu) { body; return e }
        of an array of n and call it on an array of F's into a fresh s."""
        e = self.squash(e, 8.0) if e[1] > CAP else e
        body.append("return %s" % strip(e[0]))
        self.vars[name] = Clo(name, "arr", 3.0, e[1], n)
        lines = ["%s = fn(gu) { %s }" % (name, "; ".join(body))]
        a = self.arr(self.r.randint(0, 2), n)
        arg = a[0] if a[1] <= 3.0 else "(3 * tanh(%s / 3))" % a[0]
        s = self.fresh("s")
        lines.append("%s = %s(%s)" % (s, name, strip(arg)))
        self.vars[s] = Num(s, e[1], self.loop_depth)
        return [self.ind() + line for line in lines]

    def gather_fn_into_indices(self, name, n):
        """gather_fn's closure whose target is the index array itself, whole
        or as a reversed view: every index must be read before the loop
        writes over it (a reversed view writes the last index first)."""
        perm = list(range(n))
        self.r.shuffle(perm)
        st, sb_ = self.const_arr(n)
        body = ["gi = [%s]" % ", ".join(str(i) for i in perm), "gk = %s" % strip(st)]
        tgt = "gi"
        if self.r.random() < 0.6:
            body.append("gv = view(gi, %d, %d, -1)" % (n - 1, n))
            tgt = "gv"
        op = self.w([(3, "+="), (2, "*="), (1, "/=")])
        src = "gk" if op != "/=" else "(2 + cos(gk))"
        nb = (n - 1) + sb_ if op == "+=" else (n - 1) * max(1.0, sb_) if op == "*=" else float(n)
        body.append("%s %s take(%s, gi)" % (tgt, op, src))
        e = ("sum(gi * gu)", n * nb * 3.0)
        return self.gather_closure(name, n, body, e)

    def s_gather(self):
        """v op= take(a, idx): into an array or view of F's (F's result sums
        it), or into a new array (read back with a version) or a row or
        column of a new matrix (read into a number); the source sometimes
        the target or its owner. A loop's outer storage is only scaled by
        factors in [0.1, 0.9] or divided by [1, 3]."""
        lines = []
        kind = self.w([(4 if self.arrays() else 0, "var"), (2.5, "new"), (2, "rowcol"), (2, "fn")])
        if kind == "fn":
            return self.gather_fn()
        versions = self.feats.get("versions", True) and not self.no_reach and self.vcap is None
        if kind == "var":
            t = self.pick_arr()
            tname, n, sb, free = t.name, t.length, self.st[t.sid][0], self.sfree(t)
        elif kind == "new":
            t = None
            n = self.r.randint(2, 5)
            if self.r.random() < 0.6:
                text, b = self.const_arr(n)
            else:
                text, b, _ = self.arr(self.r.randint(0, 1), n)
            text = self.own_copy(text, n)
            if b > CAP:
                text, b = "%s * tanh(%s / %s)" % (fmt(8.0), self.paren(text), fmt(8.0)), 8.0
            tname, sb, free = self.fresh("a"), b, True
            lines.append("%s = %s" % (tname, strip(text)))
            t = Arr(tname, n, self.new_sid(b), False)
        else:
            t = None
            n = mn = self.r.choice([a.length for a in self.arrays()] or [3])
            if self.r.random() < 0.5:
                c1, c2 = self.const_arr(n), self.const_arr(n)
                m = ("[%s, %s]" % (strip(c1[0]), strip(c2[0])), max(c1[1], c2[1]))
            else:
                m = self.mat(self.r.randint(0, 1), n)
            mb = m[1]
            if mb > CAP:
                m, mb = ("(%s * tanh(%s / %s))" % (fmt(8.0), m[0], fmt(8.0)), 8.0), 8.0
            mname = self.fresh("m")
            lines.append("%s = %s" % (mname, strip(m[0])))
            tname = self.fresh("v")
            if self.r.random() < 0.5:
                lines.append("%s = row(%s, %d)" % (tname, mname, self.r.randint(0, 1)))
            else:
                lines.append("%s = col(%s, %d)" % (tname, mname, self.r.randrange(n)))
                n = 2
            sb, free = mb, True
        src, srcb, slen = self.gather_src(t if kind != "rowcol" else None, n, lines,
                                          (tname, sb, n) if kind == "rowcol" else None)
        if free:
            op = self.w([(3, "+="), (1.5, "-="), (3, "*="), (1, "/=")])
            if op == "/=":
                src, srcb, nb = "(2 + cos(%s))" % strip(src), 1.0, sb
            elif op == "*=":
                if sb * srcb > CAP:
                    src, srcb = "tanh(%s)" % strip(src), 1.0
                nb = sb * max(1.0, srcb)
            else:
                if sb + srcb > CAP:
                    src, srcb = "tanh(%s)" % strip(src), 1.0
                nb = sb + srcb
        else:
            op = self.w([(3, "*="), (1, "/=")])
            nb = sb
            if op == "/=":
                src = "(2 + cos(%s))" % strip(src)
            elif self.r.random() < 0.5:
                src = "(0.5 + 0.4 * tanh(%s))" % strip(src)
            else:
                # the factors as a variable of this loop (a plain array: the
                # gather reads it where it lies)
                c = self.fresh("c")
                lines.append("%s = 0.5 + 0.4 * tanh(%s)" % (c, strip(src)))
                self.vars[c] = Arr(c, slen, self.new_sid(0.9), False)
                src = c
        ix = self.gather_idx(n, slen, lines)
        lines.append("%s %s take(%s, %s)" % (tname, op, strip(src), ix))
        if kind == "var":
            self.st[t.sid][0] = max(sb, nb)
        elif kind == "new":
            t.sid = self.new_sid(nb)
            self.st[t.sid][0] = nb
            self.vars[tname] = t
            if versions and self.r.random() < 0.6:
                s = self.fresh("s")
                e = self.squash(("sum(%s * %s@1)" % (tname, tname), n * nb * sb), 8.0)
                lines.append("%s = %s" % (s, strip(e[0])))
                self.vars[s] = Num(s, e[1], self.loop_depth)
        else:
            mname = lines[0].split(" = ")[0]
            old = "%s@%d" % (mname, self.r.randint(1, 2)) if versions else mname
            s = self.fresh("s")
            mb = max(sb, nb)
            e = self.w([
                (1, lambda: ("sum(%s * %s)" % (mname, old), 2 * mn * mb * mb)),
                (1, lambda: ("sum(%s) + sum(%s)" % (tname, old), 3 * mn * mb)),
                (1, lambda: ("sum(logsumexp(%s, 2))" % mname, 2 * (mb + 2))),
            ])()
            e = self.squash(e, 8.0) if e[1] > CAP else e
            lines.append("%s = %s" % (s, strip(e[0])))
            self.vars[s] = Num(s, e[1], self.loop_depth)
        return [self.ind() + line for line in lines]

    # -- closures
    def call(self, d):
        cs = self.clos("num") + self.clos("arr")
        if self.pure:
            cs = [c for c in cs if c.name not in self.writers]
        c = self.r.choice(cs)
        if c.kind == "num":
            a = self.guard(self.num(d), c.argb)
            return "%s(%s)" % (c.name, strip(a[0])), c.outb
        a = self.arr(d, c.length)
        g = a[0] if a[1] <= c.argb else "(%s * tanh(%s / %s))" % (fmt(c.argb), a[0], fmt(c.argb))
        return "%s(%s)" % (c.name, g), c.outb

    def lam_name(self, kind):
        level = len(self.lams)
        return ("t", "r", "z", "t3")[level] if kind == "num" else ("b", "e", "f", "b3")[level]

    def lam_body(self, params, depth, force_all=True):
        """An expression over the lambda parameters and what it captures."""
        self.lams.append(params)
        try:
            e = self.num(depth)
            for p in params:
                if force_all and not re.search(r"\b%s\b" % p[0], e[0]):
                    e = self.mention(e, p)
        finally:
            self.lams.pop()
        return e

    def mention(self, e, p):
        """Make sure expression e depends on parameter p."""
        name, b, kind, length = p
        if kind == "arr":
            r = self.w([(1, "sum(sin(%s))" % name), (1, "dot(%s, %s)" % (name, name)),
                        (1, "%s[%d]" % (name, self.r.randrange(length)))])
            rb = length * b * b if r.startswith("dot") else max(b, length)
            return "(%s + %s)" % (e[0], r), e[1] + rb
        how = self.r.randrange(3)
        if how == 0:
            return "(%s * %s)" % (e[0], name), e[1] * b
        if how == 1:
            return "(%s + sin(%s))" % (e[0], name), e[1] + 1
        return "(%s - %s)" % (e[0], name), e[1] + b

    def closure_stmt(self):
        name = self.fresh("g")
        kind = self.w([(4, "num"), (2, "block"), (1.5, "arr"), (2.5 if self.feats.get("views", True) else 0, "mut"),
                       (3 if self.fe("writers") and self.arrays() else 0, "writer")])
        old = self.conservative
        self.conservative = True
        try:
            if kind == "writer":
                text, clo = self.writer(name)
            elif kind in ("num", "block"):
                p = (self.lam_name("num"), 3.0, "num", None)
                if kind == "num":
                    e = self.lam_body([p], self.r.randint(1, 3))
                    text = "fn(%s) => %s" % (p[0], strip(e[0]))
                else:
                    e1 = self.lam_body([p], self.r.randint(1, 2))
                    e1 = self.squash(e1, 5)
                    q = ("lu", e1[1], "num", None)
                    e2 = self.lam_body([p, q], self.r.randint(1, 2))
                    text = "fn(%s) { lu = %s; return %s }" % (p[0], strip(e1[0]), strip(e2[0]))
                    e = e2
                clo = Clo(name, "num", 3.0, min(e[1], 1e6))
            elif kind == "arr":
                length = self.r.choice([a.length for a in self.arrays()] or [3])
                p = (self.lam_name("arr"), 3.0, "arr", length)
                e = self.lam_body([p], self.r.randint(1, 3))
                text = "fn(%s) => %s" % (p[0], strip(e[0]))
                clo = Clo(name, "arr", 3.0, min(e[1], 1e6), length)
            else:
                text = "fn(u, c) { for k in 0..len(u) { u[k] = c * u[k] + 0.2 * sin(u[k] + c) } }"
                clo = Clo(name, "mut", 0.9, 0)
        finally:
            self.conservative = old
        self.vars[name] = clo
        return [self.ind() + "%s = %s" % (name, text)]

    def writer(self, name, a=None, v=None):
        """A closure of one number that writes elements of a captured array
        (or view), reading a captured number: (text, Clo). Each write is a
        contraction, so the storage stays within max(its bound, 1.3)."""
        a = a or self.pick_arr()
        nums = [n for n in self.nums() if n.name != "x" or n.cnt == 1]
        v = v or (self.r.choice(nums) if nums else None)
        p = self.lam_name("num")
        self.lams.append([(p, 3.0, "num", None)])
        try:
            arg = "%s + %s" % (p, v.name) if v else p
            k = self.K(("(%s)" % arg, 3.0 + CAP))
            how = self.r.random()
            if how < 0.4:
                i = self.r.randrange(a.length)
                body = "%s[%d] = 0.5 * %s[%d] + 0.4 * %s" % (a.name, i, a.name, i, k[0])
            elif how < 0.7:
                body = "for k in 0..len(%s) { %s[k] = 0.5 * %s[k] + 0.4 * %s }" % (
                    a.name, a.name, a.name, self.K(("(%s * k)" % arg, 3 * (3.0 + CAP)))[0])
            else:
                i = self.r.randrange(a.length)
                body = "%s[%d] *= 0.6 + 0.3 * %s" % (a.name, i, k[0])
            ret = self.r.choice(["%s * %s" % (p, self.K(("%s[%d]" % (a.name, self.r.randrange(a.length)), CAP))[0]),
                                 "%s(%s[%d]) + %s" % (self.r.choice(["sin", "tanh"]), a.name,
                                                      self.r.randrange(a.length), p),
                                 p])
        finally:
            self.lams.pop()
        self.st[a.sid][0] = max(self.st[a.sid][0], 1.3)
        self.writers.append(name)
        return "fn(%s) { %s; return %s }" % (p, body, ret), Clo(name, "num", 3.0, 5.0)

    def s_fnwrite_seq(self):
        """Bug 1's shape (issue 25): a function writes elements of a captured
        array reading a captured number v; y reads both; then v (or the
        array) is reassigned. d(y, v) (or d(y, a)) must be 0 and is asserted
        so; d(y, v@k) reaches the value y read."""
        a = self.r.choice(self.arrays())
        vs = [n for n in self.nums(True) if n.cnt is not None and self.free(n)]
        if not vs:
            return self.s_new_num()
        v = self.r.choice(vs)
        g = self.fresh("g")
        old = self.conservative
        self.conservative = True
        try:
            text, clo = self.writer(g, a, v)
        finally:
            self.conservative = old
        self.vars[g] = clo
        ind = self.ind()
        lines = [ind + "%s = %s" % (g, text)]
        lines.append(ind + "%s(%s)" % (g, strip(self.guard(self.num(self.r.randint(0, 2)), 3.0)[0])))
        y = self.fresh("s")
        e = self.rhs(self.r.randint(0, 2))
        lines.append(ind + "%s = %s + %s * %s + %s" % (y, self.paren(e[0]), fmt(self.r.choice([0.5, 2, -1])),
                                                      v.name, self.K(("sum(%s)" % a.name, CAP))[0]))
        self.vars[y] = Num(y, e[1] + 2 * self.vb(v) + 1.6, self.loop_depth)
        k_before = v.known
        how = self.r.random()
        if how < 0.5 or a.view:
            r = self.K(("%s[%s]" % (a.name, self.index(a.length)), CAP))
            if self.r.random() < 0.4:       # the element's own number (bug 1's x = a2[1])
                r = ("%s[%s]" % (a.name, self.index(a.length)), self.sb(a))
            lines.append(ind + "%s = %s" % (v.name, r[0]) + KEEP)
            v.bound = r[1]
            self.bump(v)
            lines.append(ind + 'assert(d(%s, %s) == 0, "d(y, v) after v was reassigned")' % (y, v.name))
            if self.feats.get("versions", True) and self.vcap is None and k_before >= 1:
                q = self.fresh("q")
                lines.append(ind + "%s = d(%s, %s@%d)" % (q, y, v.name, k_before))
                self.vars[q] = Num(q, 4.0, self.loop_depth)
        elif how < 0.7 and self.block_depth == 0:
            text, b, _ = self.arr(1, a.length)
            if b > CAP:
                text, b = "tanh(%s)" % strip(text), 1.0
            # a view is no fresh value: its elements stay the places of the
            # storage it shows (SPEC "Arrays and views"; a write through it
            # is a version of its owner), so d(y, a) after a = view is
            # d(y, owner) there, not 0; a copy of it is a fresh array
            text = self.own_copy(text, a.length)
            a.sid = self.new_sid(max(b, 1.3))
            lines.append(ind + "%s = %s" % (a.name, strip(text)) + KEEP)
            lines.append(ind + 'assert(sum(abs(d(%s, %s))) == 0, "d(y, a) after a was reassigned")' % (y, a.name))
        else:
            # an element write makes a new version of a, and the element it
            # wrote a new place; the others stay the places y read
            # (docs/language.md): d(y, a) loses exactly those elements.
            # The writer's elements are in its text.
            qb = self.fresh("q")
            lines.append(ind + "%s = d(%s, %s)" % (qb, y, a.name) + KEEP)
            lines[0] += KEEP
            if how < 0.85:
                lines.append(ind + "%s(%s)" % (g, self.const()[0]) + KEEP)
                wr = text[text.index("{"):]
                written = set(range(a.length)) if "[k]" in wr else \
                    set(int(i) for i in re.findall(r"%s\[(\d+)\] \*?=" % a.name, wr))
            else:
                i = self.r.randrange(a.length)
                lines.append(ind + "%s[%d] = 0.5 * %s[%d]" % (a.name, i, a.name, i) + KEEP)
                written = {i}
            mask = "[%s]" % ", ".join("0" if i in written else "1" for i in range(a.length))
            lines.append(ind + 'assert(sum(abs(d(%s, %s) - %s * %s)) <= 1e-5 * (1 + sum(abs(%s))), '
                               '"d(y, a) after elements of a were written")' % (y, a.name, mask, qb, qb))
        if how >= 0.5 and not a.view:
            q = self.fresh("q")
            lines.append(ind + "%s = sum(d(%s, %s))" % (q, y, a.name))
            self.vars[q] = Num(q, 1.0, self.loop_depth)
        return lines

    def s_nograd(self):
        """nograd { s = e }: s is a constant to every route, not to central
        differences (the program is checked by route agreement only)."""
        self.nofd = True
        name = self.fresh("s")
        e = self.rhs()
        self.vars[name] = Num(name, e[1], self.loop_depth)
        return [self.ind() + "nograd { %s = %s }" % (name, strip(e[0]))]

    def side_cmp(self):
        """A comparison whose evaluation writes captured arrays or draws."""
        if self.writers and self.r.random() < 0.7:
            g = self.r.choice([w for w in self.writers if w in self.vars] or [None])
            if g:
                a = self.guard(self.num(1), 3.0)
                return "%s(%s) %s %s" % (g, strip(a[0]), self.r.choice(["<", ">"]),
                                         fmt(self.r.choice([-1, 0, 0.5, 1, 3])))
        self.uses_rand = True
        return "rand() < %s" % self.r.choice(["0.8", "0.9", "0.6"])

    # -- derivatives inside the function
    def ad(self, d):
        """A derivative-valued number: d, jvp, grad or hvp inside F."""
        self.ad_level += 1
        try:
            if self.lams:
                opts = [(3, self.ad_d_lam), (2, self.ad_jvp), (2, self.ad_grad), (0.5, self.ad_hvp)]
            elif self.no_reach:
                opts = [(3, self.ad_jvp), (3, self.ad_grad), (1, self.ad_hvp),
                        (1 if self.clos("num") else 0, self.ad_clo),
                        (1.5 if self.arrays() else 0, self.ad_arr_fwd_rev)]
            else:
                opts = [(3, self.ad_d), (1, self.ad_d_version), (1, self.ad_d_old),
                        (1.5 if self.arrays() else 0, self.ad_d_array),
                        (3, self.ad_jvp), (3, self.ad_grad), (1, self.ad_hvp),
                        (1 if self.clos("num") else 0, self.ad_clo),
                        (1.5 if self.arrays() else 0, self.ad_arr_fwd_rev)]
            t, b = self.w(opts)(d)
        finally:
            self.ad_level -= 1
        return t, min(max(1.0, b) * 3, 1e6)

    def ad_d_lam(self, d):
        if not self.lams[-1] or self.lams[-1][0][2] != "num":
            return self.ad_jvp(d)
        p = self.lams[-1][0]
        e = self.focus_local(d, p[0], p[1])
        return "d(%s, %s)" % (strip(e[0]), p[0]), e[1]

    def ad_d(self, d):
        vs = [v for v in self.nums(True)]
        v = self.r.choice(vs)
        # the lambda stack trick would hide other leaves; generate with v weighted
        e = self.focus_local(d, v.name, self.vb(v))
        return "d(%s, %s)" % (strip(e[0]), v.name), e[1]

    def focus_local(self, d, name, b):
        e = self.num(max(d, 1))
        if not re.search(r"\b%s\b(?!@)" % name, e[0]):
            e = self.mention(e, (name, b, "num", None))
        return e

    def ad_d_version(self, d):
        vs = [v for v in self.nums(True) if v.versioned and self.readable(v) >= 1]
        if not vs or not self.feats.get("versions", True):
            return self.ad_d(d)
        v = self.r.choice(vs)
        k = self.r.randint(1, self.readable(v))
        e = self.focus_local(d, v.name, self.vb(v))
        if self.r.random() < 0.4:
            e = self.mention(e, ("%s@%d" % (v.name, k), v.maxb, "num", None))
        return "d(%s, %s@%d)" % (strip(e[0]), v.name, k), e[1]

    def ad_d_old(self, d):
        vs = self.nums(True)
        others = [v for v in self.nums() if v.name != "x"]
        if not others:
            return self.ad_d(d)
        y = self.r.choice(others)
        v = self.r.choice(vs)
        return "d(%s, %s)" % (y.name, v.name), self.vb(y)

    def ad_d_array(self, d):
        a = self.r.choice(self.arrays())
        e = self.num(max(d, 1))
        if not re.search(r"\b%s\b" % a.name, e[0]):
            r = self.w([(1, "sum(sin(%s))" % a.name), (1, "dot(%s, %s)" % (a.name, a.name)),
                        (1, "%s[%d]" % (a.name, self.r.randrange(a.length)))])
            e = ("(%s * %s)" % (e[0], r), e[1] * a.length * self.sb(a) ** 2)
        how = self.r.randrange(3)
        if how == 0:
            return "d(%s, %s[%d])" % (strip(e[0]), a.name, self.r.randrange(a.length)), e[1]
        if how == 1:
            return "sum(d(%s, %s))" % (strip(e[0]), a.name), e[1] * a.length
        return "dot(d(%s, %s), %s)" % (strip(e[0]), a.name, a.name), e[1] * a.length * self.sb(a)

    def seed_point(self, d):
        return self.guard(self.num(d), 2.0)

    def ad_jvp(self, d):
        if self.r.random() < 0.25 and (self.arrays() or self.lam_arrays()):
            return self.ad_arr_fwd_rev(d, mode="jvp")
        x0 = self.seed_point(d)
        p = (self.lam_name("num"), x0[1], "num", None)
        e = self.lam_body([p], max(d, 1))
        v = self.r.choice(["1", "1", "0.5", "(-2)"])
        return "jvp(fn(%s) => %s, %s, %s)" % (p[0], strip(e[0]), strip(x0[0]), v), e[1]

    def ad_grad(self, d):
        if self.r.random() < 0.25 and (self.arrays() or self.lam_arrays()):
            return self.ad_arr_fwd_rev(d, mode="grad")
        x0 = self.seed_point(d)
        p = (self.lam_name("num"), x0[1], "num", None)
        e = self.lam_body([p], max(d, 1))
        return "grad(fn(%s) => %s)(%s)" % (p[0], strip(e[0]), strip(x0[0])), e[1]

    def ad_hvp(self, d):
        x0 = self.seed_point(d)
        p = (self.lam_name("num"), x0[1], "num", None)
        e = self.lam_body([p], max(d, 1))
        return "hvp(fn(%s) => %s, %s, %s)" % (p[0], strip(e[0]), strip(x0[0]), self.r.choice(["1", "0.5"])), e[1]

    def ad_clo(self, d):
        c = self.r.choice(self.clos("num"))
        x0 = self.guard(self.num(d), c.argb)
        f = self.r.choice(["jvp", "grad"])
        if f == "jvp":
            return "jvp(%s, %s, 1)" % (c.name, strip(x0[0])), c.outb
        return "grad(%s)(%s)" % (c.name, strip(x0[0])), c.outb

    def ad_arr_fwd_rev(self, d, mode=None):
        a = self.arr(max(d, 0))
        t, b, n = a
        if b > 3:
            t, b = "(3 * tanh(%s / 3))" % t, 3.0
        p = (self.lam_name("arr"), b, "arr", n)
        e = self.lam_body([p], max(d, 1))
        mode = mode or self.r.choice(["jvp", "grad"])
        if mode == "jvp":
            v = self.r.choice(["ones(%d)" % n, "[%s]" % ", ".join(
                str(self.r.choice([1, 0, -1, 0.5, 2])) for _ in range(n))])
            return "jvp(fn(%s) => %s, %s, %s)" % (p[0], strip(e[0]), strip(t), v), e[1] * n
        dirn = self.arr(0, n)
        g = "grad(fn(%s) => %s)(%s)" % (p[0], strip(e[0]), strip(t))
        if self.r.random() < 0.5:
            return "sum(%s)" % g, e[1] * n
        return "dot(%s, %s)" % (g, dirn[0]), e[1] * n * max(1, dirn[1])

    # -- conditions
    def cond(self, depth=2):
        def cmp():
            a = self.num(self.r.randint(0, depth))
            b = self.num(self.r.randint(0, depth))
            return "%s %s %s" % (strip(a[0]), self.r.choice(["<", ">", "<=", ">="]), strip(b[0]))
        c = cmp()
        if self.fe("sidefx") and self.r.random() < 0.35:
            c = self.side_cmp() if self.r.random() < 0.5 else "%s and %s" % (self.side_cmp(), c)
        k = self.r.random()
        if k < 0.15:
            return "%s and %s" % (c, cmp())
        if k < 0.25:
            return "%s or %s" % (c, cmp())
        if k < 0.3:
            return "not (%s)" % c
        return c

    # -- statements
    def free(self, v):
        return v.depth == self.loop_depth

    def sfree(self, a):
        return self.st[a.sid][1] == self.loop_depth

    def bump(self, v):
        v.maxb = max(v.maxb, v.bound)
        if v.cnt is not None:
            v.cnt += 1
            v.known = v.cnt

    def rhs(self, depth=None):
        e = self.num(self.r.randint(1, 3) if depth is None else depth)
        return self.squash(e, self.r.choice([4.0, 8.0, CAP])) if e[1] > CAP else e

    def stmt(self):
        bd, ld = self.block_depth, self.loop_depth
        views = self.feats.get("views", True)
        kinds = [
            (4, self.s_new_num),
            (3, self.s_assign_num),
            (3, self.s_compound_num),
            (2.5 if bd < 2 else 0.5, self.s_new_arr),
            (1 if bd == 0 and self.arrays(view=False) else 0, self.s_reassign_arr),
            (3 if self.arrays() else 0, self.s_elem_write),
            (1.5 if self.arrays() else 0, self.s_whole_compound),
            (3 if self.arrays(view=False) and views else 0, self.s_new_view),
            (2 if bd < MAX_BLOCK else 0, self.s_if),
            (2 if bd < MAX_BLOCK else 0, self.s_for),
            (1 if bd < MAX_BLOCK else 0, self.s_while),
            (1.5 if ld == 0 else 0.5, self.closure_stmt),
            (3 if self.clos("mut") and self.arrays() else 0, self.s_mut_call),
            (3 if self.feats.get("ad", True) else 0, self.s_ad),
            (0.4 if bd == 0 else 0, self.s_early_return),
            (2 if self.fe("fnwrites") and self.arrays() and not self.no_reach else 0, self.s_fnwrite_seq),
            (2 if self.feats.get("ad", True) and self.ckpt_depth else 0, self.s_ad),
            (0.7 if self.fe("nograd") else 0, self.s_nograd),
            (0.8 if self.fe("sidefx") else 0, self.s_draw),
            (1.5 if self.fe("matrices") and not self.pure else 0, self.s_matrix),
            (2.5 if self.fe("gathers") else 0, self.s_gather),
        ]
        return self.w(kinds)()

    def s_new_num(self):
        e = self.rhs()
        name = self.fresh("s")
        self.vars[name] = Num(name, e[1], self.loop_depth)
        return [self.ind() + "%s = %s" % (name, strip(e[0]))]

    def s_ad(self):
        name = self.fresh("q")
        e = self.ad(self.r.randint(1, 2))
        e = self.squash(e, 8.0) if e[1] > CAP else e
        self.vars[name] = Num(name, e[1], self.loop_depth)
        return [self.ind() + "%s = %s" % (name, strip(e[0]))]

    def s_assign_num(self):
        v = self.r.choice(self.nums(True))
        if self.free(v):
            e = self.rhs()
            line = "%s = %s" % (v.name, strip(e[0]))
            v.bound = e[1]
        else:
            c = self.r.choice([0.5, -0.6, 0.7, 0.3])
            k = self.K(self.num(self.r.randint(1, 2)))
            line = "%s = %s * %s + %s" % (v.name, fmt(c), v.name, k[0])
            v.bound = max(v.bound, abs(c) * v.bound + k[1])
        self.bump(v)
        return [self.ind() + line]

    def s_compound_num(self):
        v = self.r.choice(self.nums(True))
        if self.free(v):
            e = self.num(self.r.randint(1, 3))
            op = self.r.choice(["+=", "-=", "*=", "/="])
            if op == "/=":
                line, b = "%s /= 2 + cos(%s)" % (v.name, strip(e[0])), v.bound
            elif op == "*=":
                if v.bound * e[1] > CAP:
                    e = self.K(e)
                line, b = "%s *= %s" % (v.name, strip(e[0])), v.bound * e[1]
            else:
                if v.bound + e[1] > CAP:
                    e = self.K(e)
                line, b = "%s %s %s" % (v.name, op, strip(e[0])), v.bound + e[1]
            if b > CAP:
                line, b = "%s *= 0.5" % v.name, v.bound * 0.5
        else:
            k = self.K(self.num(self.r.randint(1, 2)))
            line, b = self.w([
                (1, lambda: ("%s *= 0.5 + 0.4 * %s" % (v.name, k[0]), v.bound)),
                (1, lambda: ("%s += 0.3 * (%s - %s)" % (v.name, k[0], v.name), v.bound)),
                (1, lambda: ("%s -= 0.3 * (%s - %s)" % (v.name, v.name, k[0]), v.bound)),
                (1, lambda: ("%s /= 1.5 + 0.5 * %s" % (v.name, k[0]), v.bound)),
            ])()
        v.bound = max(v.bound, b) if not self.free(v) else b
        self.bump(v)
        return [self.ind() + line]

    def own_copy(self, text, length):
        """text for an array of its own: `a = v` of a view v makes a a view
        too (SPEC: copying a view variable copies the view), which this
        generator would still take for an array of its own (its assert that
        a reassigned array is a fresh place then failed), so a bare view's
        name becomes a copy of its elements."""
        if isinstance(self.vars.get(text), Arr) and self.vars[text].view:
            return "%s[0:%d]" % (text, length)
        return text

    def s_new_arr(self):
        name = self.fresh("a")
        if self.arrays() and self.r.random() < 0.15:
            src = self.r.choice(self.arrays())
            if src.view:
                text, b, n = "%s[0:%d]" % (src.name, src.length), self.sb(src), src.length
            else:
                text, b, n = src.name, self.sb(src), src.length
        else:
            n = self.r.randint(2, 5)
            text, b, n = self.arr(self.r.randint(1, 2), n)
            text = self.own_copy(text, n)
        if b > CAP:
            text, b = "%s * tanh(%s / %s)" % (fmt(8.0), self.paren(text), fmt(8.0)), 8.0
        self.vars[name] = Arr(name, n, self.new_sid(b), False)
        return [self.ind() + "%s = %s" % (name, strip(text))]

    def s_reassign_arr(self):
        a = self.r.choice(self.arrays(view=False))
        text, b, _ = self.arr(self.r.randint(1, 2), a.length)
        text = self.own_copy(text, a.length)
        if b > CAP:
            text, b = "%s * tanh(%s / %s)" % (fmt(8.0), self.paren(text), fmt(8.0)), 8.0
        a.sid = self.new_sid(b)
        return [self.ind() + "%s = %s" % (a.name, strip(text))]

    def pick_arr(self):
        """An array or view to write, views first when there are some."""
        vs = self.arrays(view=True)
        if vs and self.r.random() < 0.6:
            return self.r.choice(vs)
        return self.r.choice(self.arrays())

    def s_elem_write(self):
        a = self.pick_arr()
        i = self.index(a.length)
        place = "%s[%s]" % (a.name, i)
        sb = self.st[a.sid][0]
        if self.sfree(a):
            e = self.num(self.r.randint(1, 3))
            op = self.w([(3, "="), (1, "+="), (1, "*="), (1, "-=")])
            if op == "=":
                e = self.squash(e, 8.0) if e[1] > CAP else e
                nb = max(sb, e[1])
            elif op == "*=":
                if sb * e[1] > CAP:
                    e = self.K(e)
                nb = sb * max(1, e[1])
            else:
                if sb + e[1] > CAP:
                    e = self.K(e)
                nb = sb + e[1]
            line = "%s %s %s" % (place, op, strip(e[0]))
        else:
            k = self.K(self.num(self.r.randint(1, 2)))
            c = self.r.choice([0.5, -0.6, 0.7])
            line = self.w([
                (2, lambda: "%s = %s * %s + %s" % (place, fmt(c), place, k[0])),
                (1, lambda: "%s *= 0.5 + 0.4 * %s" % (place, k[0])),
                (1, lambda: "%s += 0.3 * (%s - %s)" % (place, k[0], place)),
            ])()
            nb = max(sb, abs(c) * sb + k[1])
        self.st[a.sid][0] = max(sb, nb)
        return [self.ind() + line]

    def s_whole_compound(self):
        a = self.pick_arr()
        sb = self.st[a.sid][0]
        if self.sfree(a):
            kind = self.w([(2, "+="), (2, "*="), (1, "+=arr"), (1 if a.view else 0.3, "*=2")])
            if kind == "*=2":
                line, nb = "%s *= 2" % a.name, sb * 2
            elif kind == "+=arr":
                e = self.arr(1, a.length)
                if e[1] > CAP:
                    e = ("tanh(%s)" % e[0], 1.0, a.length)
                line, nb = "%s += %s" % (a.name, strip(e[0])), sb + e[1]
            else:
                e = self.num(self.r.randint(1, 2))
                if kind == "*=":
                    e = self.K(e) if e[1] * sb > CAP else e
                    line, nb = "%s *= %s" % (a.name, strip(e[0])), sb * max(1, e[1])
                else:
                    e = self.K(e) if e[1] + sb > CAP else e
                    line, nb = "%s += %s" % (a.name, strip(e[0])), sb + e[1]
            if nb > CAP:
                line, nb = "%s *= 0.5" % a.name, sb
        else:
            k = self.K(self.num(self.r.randint(1, 2)))
            line = self.w([
                (1, lambda: "%s *= 0.5 + 0.4 * %s" % (a.name, k[0])),
                (1, lambda: "%s += 0.3 * (%s - %s)" % (a.name, k[0], a.name)),
                (1, lambda: "%s -= 0.3 * (%s - sin(%s))" % (a.name, a.name, a.name)),
            ])()
            nb = sb
        self.st[a.sid][0] = max(sb, nb)
        return [self.ind() + line]

    def s_new_view(self):
        srcs = self.arrays()
        a = self.r.choice(srcs)
        n = a.length
        name = self.fresh("v")
        how = self.r.random()
        if how < 0.2 and a.view:
            text, ln = a.name, n                     # a copy of a view is the same view
        elif how < 0.35:
            text, ln = "view(%s)" % a.name, n
        elif how < 0.6:
            ln = self.r.randint(1, n)
            st = self.r.randint(0, n - ln)
            text = "view(%s, %d, %d)" % (a.name, st, ln)
        else:
            stride = self.r.choice([1, 2, -1, -2, 3])
            stride = stride if abs(stride) < n else self.r.choice([1, -1])
            ln = self.r.randint(1, (n - 1) // abs(stride) + 1)
            span = (ln - 1) * abs(stride)
            if stride > 0:
                st = self.r.randint(0, n - 1 - span)
            else:
                st = self.r.randint(span, n - 1)
            text = "view(%s, %d, %d, %d)" % (a.name, st, ln, stride)
        self.vars[name] = Arr(name, ln, a.sid, True)
        return [self.ind() + "%s = %s" % (name, text)]

    def s_mut_call(self):
        m = self.r.choice(self.clos("mut"))
        a = self.pick_arr()
        c = self.num(self.r.randint(0, 2))
        target = a.name
        if not a.view and self.r.random() < 0.6:
            n = a.length
            ln = self.r.randint(1, n)
            target = "view(%s, %d, %d)" % (a.name, self.r.randint(0, n - ln), ln)
        self.st[a.sid][0] = max(self.st[a.sid][0], 2.0)
        return [self.ind() + "%s(%s, 0.5 + 0.4 * tanh(%s))" % (m.name, target, strip(c[0]))]

    def s_early_return(self):
        c = self.cond()
        e = self.rhs(2)
        return [self.ind() + "if %s {" % c, self.ind() + "    return %s" % strip(e[0]), self.ind() + "}"]

    # -- blocks: environments, scoping and version counts
    def snap(self):
        return copy.deepcopy((self.vars, self.st))

    def restore(self, s):
        self.vars, self.st = copy.deepcopy(s)

    def body(self, n, brk_at=None):
        lines = []
        self.block_depth += 1
        try:
            for k in range(n + 1):
                if k == brk_at:
                    lines += [self.ind() + "if %s {" % self.cond(1), self.ind() + "    break",
                              self.ind() + "}"]
                if k < n:
                    lines += self.stmt()
        finally:
            self.block_depth -= 1
        return lines

    def scoped(self, entry_vars):
        """This environment with names made inside the block dropped."""
        return {k: v for k, v in self.vars.items() if k in entry_vars}

    def s_if(self):
        entry = self.snap()
        results = []
        lines = []
        nb = self.w([(3, 1), (2, 2), (1, 3)])
        has_else = nb > 1 and self.r.random() < 0.7
        for i in range(nb):
            self.restore(entry)
            head = "if" if i == 0 else "elif"
            if i == nb - 1 and has_else and i > 0:
                opener = "} else {"
            else:
                opener = "%s %s {" % (head, self.cond())
                if i > 0:
                    opener = "} " + opener
            lines.append(self.ind() + opener)
            lines += self.body(self.r.randint(1, 3))
            results.append((self.scoped(entry[0]), self.st))
        lines.append(self.ind() + "}")
        if not has_else:
            results.append(copy.deepcopy(entry))
        self.merge(entry, results)
        return lines

    def merge(self, entry, results):
        ev, est = entry
        vars_ = copy.deepcopy(ev)
        for name, v in vars_.items():
            if not isinstance(v, Num):
                continue
            outs = [r[0][name] for r in results]
            v.bound = max(o.bound for o in outs)
            v.maxb = max(o.maxb for o in outs)
            cnts = [o.cnt for o in outs]
            if None not in cnts and len(set(cnts)) == 1:
                v.cnt = cnts[0]
                v.known = v.cnt
            else:
                v.cnt = None
                v.known = min(o.known for o in outs)
        st = copy.deepcopy(est)
        for sid in st:
            st[sid][0] = max(r[1][sid][0] for r in results if sid in r[1])
        self.vars, self.st = vars_, st

    def loop_enter(self):
        for v in self.nums(True):
            v.bound = max(v.bound, LOOP_B)
            v.maxb = max(v.maxb, v.bound)
        for sid in self.st:
            self.st[sid][0] = max(self.st[sid][0], LOOP_B)

    def loop_exit(self, entry, trips):
        """trips: the exact trip count, or None when it depends on the data."""
        ev, _ = entry
        after = self.scoped(ev)
        for name, v in after.items():
            if not isinstance(v, Num):
                continue
            e = ev[name]
            if v.cnt is not None and e.cnt is not None:
                delta = v.cnt - e.cnt
                if trips is not None:
                    v.cnt = e.cnt + trips * delta
                    v.known = v.cnt
                elif delta:
                    v.cnt, v.known = None, e.known
            elif trips is None:
                v.cnt, v.known = None, e.known
        self.vars = after

    def ckpt_open(self):
        """With --checkpoint, half the loops are checkpointed: the prefix,
        and the version cap inside (versions made inside such a loop are not
        kept, SPEC "Long loops")."""
        if not self.fe("checkpoint") or self.r.random() < 0.5:
            return "", None
        saved = self.vcap
        if self.vcap is None:
            self.vcap = {v.name: v.known for v in self.nums()}
        self.ckpt_depth += 1
        reach = self.r.random() < 0.25
        self.no_reach += not reach
        return self.r.choice(["checkpoint ", "checkpoint(1) ", "checkpoint(2) ", "checkpoint(4) "]), (saved, reach)

    def ckpt_close(self, prefix, saved):
        if prefix:
            self.ckpt_depth -= 1
            self.vcap, reach = saved
            self.no_reach -= not reach

    def s_for(self):
        lv = ("i", "j", "m")[self.loop_depth]
        lo = 0 if self.r.random() < 0.85 else 1
        arrs = self.arrays()
        if arrs and self.r.random() < 0.3:
            a = self.r.choice(arrs)
            hi, rng_text = a.length, "%d..len(%s)" % (lo, a.name)
        else:
            hi = self.r.randint(lo + 1, 4)
            rng_text = "%d..%d" % (lo, hi)
        trips = hi - lo
        self.loop_enter()
        entry = self.snap()
        ck, saved = self.ckpt_open()
        self.loop_depth += 1
        self.loopvars.append((lv, lo, hi))
        lines = [self.ind() + "%sfor %s in %s {" % (ck, lv, rng_text)]
        try:
            n = self.r.randint(1, 3)
            brk = self.r.random() < 0.12
            body = self.body(n, self.r.randint(0, n) if brk else None)
            lines += body
        finally:
            self.loop_depth -= 1
            self.loopvars.pop()
            self.ckpt_close(ck, saved)
        lines.append(self.ind() + "}")
        self.loop_exit(entry, None if brk or ck else trips)
        return lines

    def s_while(self):
        cname = self.fresh("n")
        m = self.r.randint(1, 4)
        lines = [self.ind() + "%s = 0" % cname]
        self.vars[cname] = Num(cname, float(m), self.loop_depth, versioned=False, mutable=False)
        self.loop_enter()
        entry = self.snap()
        cond = self.cond(1)
        if " and " in cond or " or " in cond:
            cond = "(%s)" % cond
        ck, saved = self.ckpt_open()
        lines.append(self.ind() + "%swhile %s < %d and %s {" % (ck, cname, m, cond))
        self.loop_depth += 1
        try:
            lines += self.body(self.r.randint(1, 3))
        finally:
            self.loop_depth -= 1
            self.ckpt_close(ck, saved)
        lines.append(self.ind() + "    %s += 1" % cname)
        lines.append(self.ind() + "}")
        self.loop_exit(entry, None)
        return lines

    # -- the whole function
    def function(self):
        self.vars["x"] = Num("x", 1.7, 0)
        lines = []
        n = self.r.randint(4, 11) if self.r.random() < 0.9 else self.r.randint(12, 24)
        for _ in range(n):
            lines += self.stmt()
        terms = []
        for v in self.vars.values():
            if isinstance(v, Num):
                terms.append(v.name)
            elif isinstance(v, Arr):
                terms.append("sum(%s)" % v.name if self.r.random() < 0.7 else "%s[%d]" % (v.name, self.r.randrange(v.length)))
            elif isinstance(v, Clo) and v.kind == "num":
                terms.append("%s(0.5)" % v.name)
        lines.append("    return %s" % " + ".join(terms))
        if self.uses_rand:
            lines.insert(0, "    seed(%d)" % self.r.randrange(1000))
        if self.nofd:
            lines.insert(0, NOFD)
        return lines


def make_program(seed, index, feats):
    """Program number index for this seed: (body lines, point). A body
    may name the point as WPT (kinks placed at it); it is written in here."""
    r = random.Random("%d:%d" % (seed, index))
    g = Gen(r, feats)
    body = g.function()
    w = round(r.uniform(0.3, 1.7), 4)
    body = [l.replace("WPT", fmt(w)) for l in body]
    return body, w


# ---------------------------------------------------------------- scripts

def points(w):
    pts = []
    for h in STEPS:
        pts.append((w + h, w - h))
    return pts


def program_script(k, body, w):
    """The wengert text for program k: F, then one print per route."""
    W = fmt(w)
    out = ["fn F%d(x) {" % k] + body + ["}"]
    out.append("D%d = fn(t) { yy = F%d(t); return d(yy, t) }" % (k, k))
    out.append("w%d = %s" % (k, W))
    if PAD:    # entries between w and y: d(y, w) spans a long tape (the sparse sweep)
        out.append("pad%d = 0" % k)
        out.append("for padi%d in 0..%d { pad%d += 1 }" % (k, PAD, k))
    out.append("y%d = F%d(w%d)" % (k, k, k))
    out.append('print("@%d F", y%d)' % (k, k))
    for label, expr in ROUTES:
        e = expr.replace("P", str(k)).replace("W", W)
        if e.startswith("NOGRAD "):
            out.append("nograd { ngr%d = %s }" % (k, e[len("NOGRAD "):]))
            e = "ngr%d" % k
        out.append('print("@%d %s", %s)' % (k, label, e))
    for j, (p, m) in enumerate(points(w)):
        out.append('print("@%d fp%d", F%d(%s), F%d(%s))' % (k, j, k, fmt(p), k, fmt(m)))
        out.append('print("@%d gp%d", grad(F%d)(%s), grad(F%d)(%s))' % (k, j, k, fmt(p), k, fmt(m)))
    out.append('print("@%d end")' % k)
    return out


def parse_float(s):
    try:
        return float(s)
    except ValueError:
        return None


class Result:
    """What one program produced: route values, differences, or an error."""

    def __init__(self):
        self.vals = {}
        self.fd = {}
        self.done = False
        self.error = None       # message text when wengert failed in this program
        self.last = None        # the label after which it failed


def run_wengert(binary, text, timeout, tmpdir, slow=False):
    fd, path = tempfile.mkstemp(suffix=".wg", dir=tmpdir)
    with os.fdopen(fd, "w") as f:
        f.write(text)
    env = dict(os.environ, WENGERT_SLOW="1") if slow else None
    try:
        p = subprocess.run([binary] + (["--backend", BACKEND] if BACKEND else []) + [os.path.basename(path)], cwd=tmpdir, capture_output=True,
                           timeout=timeout, text=True, errors="replace", env=env)
        return p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
        return "timeout", out, "timeout after %gs" % timeout
    finally:
        os.unlink(path)


def parse_output(stdout, ks):
    res = {k: Result() for k in ks}
    for line in stdout.splitlines():
        m = re.match(r"@(\d+) (\S+)(.*)$", line)
        if not m or int(m.group(1)) not in res:
            continue
        r = res[int(m.group(1))]
        label, rest = m.group(2), m.group(3).split()
        r.last = label
        if label == "end":
            r.done = True
        elif label.startswith("fp") or label.startswith("gp"):
            if len(rest) == 2:
                r.fd[label] = (parse_float(rest[0]), parse_float(rest[1]))
        elif rest:
            r.vals[label] = parse_float(rest[0]) if len(rest) == 1 else None
    return res


def printed_lines(stdout, ks):
    """{k: the lines program k printed, as text}: --slow compares them."""
    out = {k: [] for k in ks}
    for line in stdout.splitlines():
        m = re.match(r"@(\d+) ", line)
        if m and int(m.group(1)) in out:
            out[int(m.group(1))].append(line)
    return out


def attach_slow(res, binary, text, timeout, tmpdir, fast_out):
    """--slow: run text again under WENGERT_SLOW=1 and give each result the
    lines it printed both ways (and the slow run's error, when it failed)."""
    rc, out, err = run_wengert(binary, text, timeout, tmpdir, slow=True)
    fast, slow = printed_lines(fast_out, res), printed_lines(out, res)
    for k, r in res.items():
        r.fast_lines, r.slow_lines = fast[k], slow[k]
        # the error is the batch's: a program that printed its end before it has none
        r.slow_error = None if rc == 0 or "@%d end" % k in slow[k] else error_text(rc, err)


def within_sweep_order(f, s, exact):
    """Lines f and s of one label agree but for the order a sweep adds
    adjoints in (SLOW_RTOL), where that may differ (exact False)."""
    fw, sw = f.split(), s.split()
    if exact or len(fw) != len(sw):
        return False
    worst = 0.0
    for a, b in zip(fw[2:], sw[2:]):
        x, y = parse_float(a), parse_float(b)
        if a == b:
            continue
        if x is None or y is None or not (math.isfinite(x) and math.isfinite(y)):
            return False
        worst = max(worst, abs(x - y) / (1 + max(abs(x), abs(y))))
    if worst > SLOW_RTOL:
        return False
    SLOW_TOLERATED[0] += 1
    SLOW_TOLERATED[1] = max(SLOW_TOLERATED[1], worst)
    return True


def slow_mismatch(r, body):
    """The first line program r printed differently under WENGERT_SLOW=1:
    (label, fast line, slow line), or None. A run that stopped early (an
    error) compares the lines both printed, then their errors."""
    if not hasattr(r, "slow_lines"):
        return None
    derivs_inside = any(DERIV_INSIDE.search(l) for l in body)
    for i in range(max(len(r.fast_lines), len(r.slow_lines))):
        f = r.fast_lines[i] if i < len(r.fast_lines) else None
        s = r.slow_lines[i] if i < len(r.slow_lines) else None
        if f != s:
            if r.error is not None and (f is None or s is None):
                break           # one ran further before its error: the errors say more
            label = (f or s).split()[1]
            primal = label in ("F", "fp0", "fp1") and not derivs_inside
            if f and s and f.split()[1] == s.split()[1] and within_sweep_order(f, s, primal):
                continue
            return label, f, s
    def message(e):         # the script's (temporary) name and place left out
        return re.sub(r"\S+\.wg:\d+:\d+: ", "", e)
    if (r.error is None) != (r.slow_error is None) or (
            r.error and r.slow_error and not r.error.startswith("fails only after")
            and message(r.error) != message(r.slow_error)):
        return "error", r.error, r.slow_error
    return None


def crashed(rc, stderr):
    return rc == "timeout" or (isinstance(rc, int) and rc < 0) or \
        "AddressSanitizer" in stderr or "runtime error:" in stderr


def error_text(rc, stderr):
    if rc == "timeout":
        return "timeout"
    lines = [l for l in stderr.splitlines() if l.strip()]
    for l in lines:
        if "AddressSanitizer" in l or "runtime error:" in l or "LeakSanitizer" in l:
            return l.strip()
    for l in lines:
        if "error:" in l:
            return l.strip()
    if isinstance(rc, int) and rc < 0:
        return "killed by signal %d" % -rc
    return (lines[0].strip() if lines else "exit status %s" % rc)


def run_programs(binary, progs, tmpdir, timeout):
    """Run [(k, body, w)] in one process, falling back to one by one when
    the process fails. Returns {k: Result}."""
    text = ":tape limit %s\n" % TAPE_LIMIT
    text += "\n".join(l for k, body, w in progs for l in program_script(k, body, w)) + "\n"
    rc, out, err = run_wengert(binary, text, timeout * (3 if len(progs) > 1 else 1) + len(progs), tmpdir)
    res = parse_output(out, [k for k, _, _ in progs])
    if SLOW:
        attach_slow(res, binary, text, timeout * (3 if len(progs) > 1 else 1) + len(progs), tmpdir, out)
    if rc == 0 and all(res[k].done for k, _, _ in progs):
        return res
    if len(progs) == 1:
        k = progs[0][0]
        r = res[k]
        r.error = error_text(rc, err)
        r.stderr = err
        if crashed(rc, err):
            # a crash loses what was buffered for standard output: find the
            # statement by running shorter and shorter scripts
            lines = text.split("\n")
            first = next(i for i, l in enumerate(lines) if l.startswith('print("@'))
            lo, hi = first, len(lines)
            while lo < hi:
                mid = (lo + hi) // 2
                c, _, e = run_wengert(binary, "\n".join(lines[:mid + 1]) + "\n", timeout, tmpdir)
                if crashed(c, e):
                    hi = mid
                else:
                    lo = mid + 1
            r.last = None
            if lo > first:
                m = re.match(r'print\("@\d+ ([^"\s]+)', lines[lo - 1])
                r.last = m.group(1) if m else None
        return res
    final = {}
    rest = [p for p in progs if not res[p[0]].done] or progs[-1:]
    for k, _, _ in progs:
        if res[k].done and all(k != p[0] for p in rest):
            final[k] = res[k]
    for p in rest:
        final.update(run_programs(binary, [p], tmpdir, timeout))
    k = rest[0][0]
    if all(final[p[0]].error is None for p in rest):
        # the process failed in program k, which runs alone: what the
        # programs before it left in the session matters
        r = final[k]
        r.error = "fails only after the programs before it in one session: %s" % error_text(rc, err)
        r.last = res[k].last
        r.batch = text
    return final


# ---------------------------------------------------------------- checking

def close(a, b, rtol):
    if a is None or b is None:
        return False
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    if math.isinf(a) or math.isinf(b):
        return a == b
    return abs(a - b) <= rtol * (1 + max(abs(a), abs(b)))


def fd_value(r, w, prefix, at_w=None):
    """Central differences at the two step sizes, or None. With at_w (the
    function's value at w), None also when the mean of the two nearest
    neighbours is not about at_w: a jump at w itself, as when a branch on an
    exact tie (mean([x, x, x]) <= x) goes the other way at w than around it."""
    out = []
    for j, (p, m) in enumerate(points(w)):
        v = r.fd.get("%s%d" % (prefix, j))
        if not v or v[0] is None or v[1] is None or not all(map(math.isfinite, v)):
            return None
        out.append((v[0] - v[1]) / (p - m))
    if at_w is not None and not close((v[0] + v[1]) / 2, at_w, FD_AGREE):
        return None
    return out


def check(r, w, fd_on=True, body=()):
    """Classify a result: (status, info). status is one of ok, skip,
    disagree, fd, error; info has failing route labels and the reference.
    fd_on False: route agreement only (see NOFD)."""
    info = {"bad": [], "ref1": None, "ref2": None, "fd1": None, "fd2": None}
    if any(re.search(p, e or "") for p in EXPECTED_ERRORS for e in (r.error, getattr(r, "slow_error", None))):
        return "skip", info     # (the general path's tape may be longer: a limit either way skips)
    mis = slow_mismatch(r, body)
    if mis:
        info["bad"] = ["slow:" + mis[0]]
        info["slow"] = mis
        return "slow", info
    if r.error is not None:
        order = ["F"] + [l for l, _ in ROUTES] + ["fp0", "gp0", "fp1", "gp1", "end", "exit"]
        info["bad"] = [order[order.index(r.last) + 1] if r.last in order else "F"]
        return "error", info
    y = r.vals.get("F")
    if y is None or not math.isfinite(y):
        return "skip", info
    status = "ok"
    for order, routes, prefix in ((1, FIRST, "fp"), (2, SECOND, "gp")):
        labels = [l for l, _ in routes]
        vals = [r.vals.get(l) for l in labels]
        fd = fd_value(r, w, prefix, y if order == 1 else info["ref1"]) if fd_on and USE_FD else None
        info["fd%d" % order] = fd
        fd_ok = fd is not None and close(fd[0], fd[1], FD_AGREE)
        info["fdok%d" % order] = fd_ok
        # clusters of agreeing routes
        clusters = []
        for l, v in zip(labels, vals):
            for c in clusters:
                if close(c[0], v, ROUTE_RTOL):
                    c[1].append(l)
                    break
            else:
                clusters.append((v, [l]))
        ref = None
        if fd is not None:
            # the cluster nearest the smaller step, when it is about as near
            # as the two steps are to each other (a loose check when they
            # do not agree closely)
            slack = 10 * abs(fd[0] - fd[1]) + FD_MATCH * (1 + abs(fd[1]))
            near = [c for c in clusters if c[0] is not None and math.isfinite(c[0])
                    and abs(c[0] - fd[1]) <= slack]
            if near:
                ref = min(near, key=lambda c: abs(c[0] - fd[1]))
        if ref is None:
            ref = max(clusters, key=lambda c: (len(c[1]), -labels.index(c[1][0])))
        bad = [l for l in labels if l not in ref[1]]
        info["ref%d" % order] = ref[0]
        if bad:
            info["bad"] += bad
            status = "disagree"
        elif fd_ok and not close(ref[0], fd[1], FD_MATCH):
            info["bad"] += ["fd%d" % order]
            if status == "ok":
                status = "fd"
    return status, info


def signature(status, info, r):
    if status == "error":
        msg = re.sub(r"\S+\.wg:\d+:\d+: ", "", r.error or "")
        msg = re.sub(r"0x[0-9a-f]+", "ADDR", msg)
        msg = re.sub(r"\d+(\.\d+)?(e[-+]?\d+)?", "N", msg)
        return (status, msg, tuple(info["bad"]))
    return (status, tuple(info["bad"]))


# ---------------------------------------------------------------- reducing

def blocks(lines):
    """Index ranges [i, j] of each block statement (opener to closer)."""
    out, stack = [], []
    for i, l in enumerate(lines):
        s = l.strip()
        if s.startswith("}") and stack and not s.endswith("{"):
            out.append((stack.pop(), i))
        elif s.endswith("{") and not s.startswith("}"):
            stack.append(i)
    return out


def top_splits(expr, seps):
    """Split expr at top-level occurrences of any separator."""
    parts, depth, cur, i = [], 0, "", 0
    while i < len(expr):
        c = expr[i]
        if c in "([":
            depth += 1
        elif c in ")]":
            depth -= 1
        hit = None
        if depth == 0:
            for s in seps:
                if expr.startswith(s, i):
                    hit = s
                    break
        if hit:
            parts.append(cur)
            cur = ""
            i += len(hit)
            continue
        cur += c
        i += 1
    parts.append(cur)
    return parts


def expr_candidates(line):
    """Simpler versions of one line: an argument or operand in place of a
    call or parenthesised operation, a term dropped from a sum."""
    out = []
    m = re.match(r"(\s*)(return |[A-Za-z_][\w\[\]%+ \-0-9]*?\s*[-+*/]?= )(.*)$", line)
    if m:
        ind, head, rhs = m.groups()
        terms = top_splits(rhs, [" + "])
        if len(terms) > 1:
            for i in range(len(terms)):
                out.append(ind + head + " + ".join(terms[:i] + terms[i + 1:]))
    # every bracketed group
    for mm in re.finditer(r"[(]", line):
        i = mm.start()
        depth, j = 0, i
        while j < len(line):
            depth += line[j] == "("
            depth -= line[j] == ")"
            if depth == 0:
                break
            j += 1
        if j >= len(line):
            continue
        inner = line[i + 1:j]
        fm = re.search(r"([A-Za-z_][A-Za-z_0-9]*)$", line[:i])
        start = fm.start() if fm else i
        if fm and fm.group(1) == "fn":
            continue
        if fm:
            parts = top_splits(inner, [", "])
            if fm.group(1) in ("view",):
                continue
        else:
            parts = top_splits(inner, [" + ", " - ", " * ", " / ", " ^ "])
        if len(parts) < 1:
            continue
        for p in parts:
            p = p.strip()
            if p and not p.startswith("fn("):
                out.append(line[:start] + (p if atomic(p) else "(" + p + ")") + line[j + 1:])
        out.append(line[:start] + "x" + line[j + 1:])
        out.append(line[:start] + "1" + line[j + 1:])
    for mm in re.finditer(r"@[0-9]+", line):
        out.append(line[:mm.start()] + line[mm.end():])
    return [o for o in out if o != line]


def atomic(t):
    return Gen.paren(None, t) == t


def unwraps(lines, i, j):
    """The block lines[i..j] replaced by the body of one of its branches."""
    ind = lines[i][:len(lines[i]) - len(lines[i].lstrip())]
    cuts = [i] + [k for k in range(i + 1, j) if lines[k].startswith(ind + "}")] + [j]
    out = []
    for a, b in zip(cuts, cuts[1:]):
        inner = [l[4:] if l.startswith(ind + "    ") else l for l in lines[a + 1:b]]
        out.append(lines[:i] + inner + lines[j + 1:])
    return out


def reduce_program(binary, body, w, sig, tmpdir, timeout, pool, jobs, budget=400, seconds=90):
    """Delete and simplify lines of body while the failure keeps signature
    sig: greedy passes from the last line up (a use goes before the line
    that made its value), testing a few candidates at a time in parallel."""
    cache = {}
    stop = time.time() + seconds

    def spent():
        return len(cache) >= budget or time.time() > stop

    def test(cand):
        key = "\n".join(cand)
        if key not in cache:
            res = run_programs(binary, [(1, cand, w)], tmpdir, timeout)[1]
            st, info = check(res, w, NOFD not in cand, cand)
            cache[key] = st not in ("ok", "skip") and signature(st, info, res) == sig
        return cache[key]

    def greedy(cur, make):
        """make(cur, i) gives candidates for position i. Walk i downwards;
        on a success keep it and go on from the same position."""
        i = len(cur) - 1
        while i >= 0 and not spent():
            batch = []          # (position, candidate)
            k = i
            while k >= 0 and len(batch) < max(2, jobs):
                batch += [(k, c) for c in make(cur, k) if c != cur]
                k -= 1
            oks = list(pool.map(test, [c for _, c in batch]))
            hit = next((b for b, ok in zip(batch, oks) if ok), None)
            if hit:
                cur = hit[1]
                i = min(hit[0], len(cur) - 1)
            else:
                i = k
        return cur

    def deletions(cur, i):
        if i == len(cur) - 1:
            return []                      # the return statement
        for a, b in blocks(cur):
            if a == i:
                return [cur[:a] + cur[b + 1:]] + unwraps(cur, a, b)
        s = cur[i].strip()
        if s.endswith("{") or s.startswith("}") or s.startswith("#") or s.endswith(KEEP.strip()):
            return []
        m = re.fullmatch(r"(n[0-9]+) \+= 1", s)
        if m and any(re.match(r"(checkpoint(\(\d+\))? )?while %s <" % m.group(1), l.strip()) for l in cur):
            return []                      # the loop would not end
        out = [cur[:i] + cur[i + 1:]]
        m = re.fullmatch(r"(\s*)([a-z][a-z0-9]*) = (.*)", cur[i])
        if m and m.group(1) == "    ":
            # inline a variable assigned once, at the top level of F
            name, rhs = m.group(2), m.group(3)
            pat = re.compile(r"\b%s\b(?![@(])" % name)
            if sum(1 for l in cur if re.match(r"\s*%s\b(\[.*\])? *[-+*/]?= " % name, l)) == 1 \
                    and not any(re.search(r"\b%s@" % name, l) for l in cur) \
                    and not any(pat.search(l) for l in cur if "assert(" in l) \
                    and "fn(" not in rhs:
                new = cur[:i] + [pat.sub(lambda _: rhs if atomic(rhs) else "(%s)" % rhs, l)
                                 for l in cur[i + 1:]]
                out.append(new)
        return out

    def simpler(cur, i):
        if cur[i].endswith(KEEP) or cur[i].strip().startswith("assert("):
            return []
        return [cur[:i] + [e] + cur[i + 1:] for e in expr_candidates(cur[i])]

    t0 = time.time()
    run_programs(binary, [(1, body, w)], tmpdir, timeout)
    timeout = min(timeout, max(2.0, 10 * (time.time() - t0)))   # candidates that loop
    cur = list(body)
    while not spent():
        before = cur
        cur = greedy(cur, deletions)
        cur = greedy(cur, simpler)
        if cur == before:
            break
    return cur


# ---------------------------------------------------------------- reporting

def show_values(r, info, w):
    out = []
    out.append("    F(%s) = %r" % (fmt(w), r.vals.get("F")))
    for order, routes in ((1, FIRST), (2, SECOND)):
        fd = info.get("fd%d" % order)
        ref = info.get("ref%d" % order)
        out.append("    order %d: reference %r; central differences %s" % (
            order, ref, "n/a" if fd is None else "h=%g: %r, h=%g: %r" % (STEPS[0], fd[0], STEPS[1], fd[1])))
        for l, _ in routes:
            v = r.vals.get(l, "(not printed)")
            mark = "  <-- FAILS" if l in info["bad"] else ""
            out.append("      %-10s %s%s" % (l, v if isinstance(v, str) else repr(v), mark))
    if r.error:
        out.append("    error (after %s): %s" % (r.last, r.error))
    if info.get("slow"):
        label, f, s = info["slow"]
        out.append("    printed differently under WENGERT_SLOW=1 (%s):" % label)
        out.append("      fast paths:   %s" % f)
        out.append("      general path: %s" % s)
    return out


def standalone(body, w):
    """A script that shows the failure without the test harness."""
    head = ":tape limit %s\n" % TAPE_LIMIT
    if BACKEND:
        head = ":backend %s\n" % BACKEND + head
    return head + "\n".join(program_script(1, body, w)) + "\n"


def main():
    global FIRST, SECOND, ROUTES
    if hasattr(signal, "SIGPIPE"):
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)      # quiet under | head
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", default="./wengert")
    ap.add_argument("--count", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--first", type=int, default=0, metavar="K",
                    help="start at program K of the seed (with --count 1: just that one)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--batch", type=int, default=25, help="programs per wengert process")
    ap.add_argument("--keep-failures", metavar="DIR")
    ap.add_argument("--reduce", type=int, default=8,
                    help="reduce at most this many failures (one per distinct signature)")
    ap.add_argument("--timeout", type=float, default=20.0, help="seconds for one program alone")
    ap.add_argument("--skip", metavar="ROUTE,...", default="",
                    help="leave these routes out (labels as printed: d.jvp, hvp, ...)")
    ap.add_argument("--no-views", action="store_true", help="generate no views")
    ap.add_argument("--pad", type=int, default=0, metavar="N",
                    help="record N entries between w and y = F(w) (over 65536: d's sparse sweep)")
    ap.add_argument("--no-versions", action="store_true", help="generate no x@k")
    ap.add_argument("--no-ad", action="store_true", help="no derivatives inside F")
    ap.add_argument("--wide", action="store_true", help="every wider feature below on (--no-X leaves one out)")
    for name, what in FEATURES:
        ap.add_argument("--" + name, action="store_true", help=what)
        ap.add_argument("--no-" + name, action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--backend", metavar="NAME",
                    help="run wengert in this number backend (float32, posit32, ...): routes agree "
                         "to the format's precision, central differences are not checked")
    ap.add_argument("--slow", action="store_true",
                    help="also run each batch with WENGERT_SLOW=1 (every fast path off) and require "
                         "every printed line the same")
    ap.add_argument("--show", type=int, metavar="K", help="print program K of this seed and exit")
    ap.add_argument("--verbose", "-v", action="store_true")
    a = ap.parse_args()
    feats = {"views": not a.no_views, "versions": not a.no_versions, "ad": not a.no_ad}
    for name, _ in FEATURES:
        feats[name] = (a.wide or getattr(a, name)) and not getattr(a, "no_" + name)
    global PAD, BACKEND, USE_FD, ROUTE_RTOL, SLOW
    PAD = a.pad
    SLOW = a.slow
    if a.backend and a.backend != "float64":
        # about 250 units in the last place of the format near 1: the routes
        # round differently (seen over 600 programs: float32 spreads up to
        # 1.2e-6, posit32 to 4e-8); central differences in 24 or 27 bits
        # say nothing at steps the routes could be checked with
        BACKEND, USE_FD = a.backend, False
        ROUTE_RTOL = {"float32": 3e-5, "posit32": 3e-6}.get(a.backend, 3e-2)
    skip = set(s for s in a.skip.split(",") if s)
    unknown = skip - set(l for l, _ in ROUTES)
    if feats["sidefx"]:
        skip |= MANY_RUNS
    if unknown:
        print("routes: unknown route %s; routes are %s" % (
            ", ".join(sorted(unknown)), " ".join(l for l, _ in ROUTES)), file=sys.stderr)
        return 2
    FIRST = [r for r in FIRST if r[0] not in skip]
    SECOND = [r for r in SECOND if r[0] not in skip]
    ROUTES = FIRST + SECOND
    if a.show is not None:
        body, w = make_program(a.seed, a.show, feats)
        sys.stdout.write(standalone(body, w))
        return 0
    binary = os.path.abspath(a.bin)
    if not os.access(binary, os.X_OK):
        print("routes: no executable %s" % binary, file=sys.stderr)
        return 2
    if "WENGERT_STDLIB" not in os.environ:
        here = os.path.dirname(os.path.abspath(__file__))
        std = os.path.normpath(os.path.join(here, "..", "..", "stdlib"))
        if os.path.isdir(std):
            os.environ["WENGERT_STDLIB"] = std
    t0 = time.time()
    counts = {"ok": 0, "skip": 0, "disagree": 0, "fd": 0, "error": 0, "slow": 0}
    fdstat = {1: 0, 2: 0}
    sigs = {}           # failure signature -> the first program that had it
    firsts = []         # (k, body, w, result, status, info) of those programs
    if a.keep_failures:
        os.makedirs(a.keep_failures, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="wg-routes-") as tmp, \
            concurrent.futures.ThreadPoolExecutor(max_workers=max(1, a.jobs)) as pool:

        def work(lo):
            """Generate, run and check one batch (generating in the worker
            overlaps it with the other worker's wengert process)."""
            progs = [(k,) + make_program(a.seed, k, feats)
                     for k in range(lo, min(lo + a.batch, a.first + a.count))]
            res = run_programs(binary, progs, tmp, a.timeout)
            return [(k, body, w, res[k]) + check(res[k], w, NOFD not in body, body) for k, body, w in progs]

        done = 0
        for outs in pool.map(work, range(a.first, a.first + a.count, a.batch)):
            for k, body, w, r, st, info in outs:
                counts[st] += 1
                for o in (1, 2):
                    fdstat[o] += bool(info.get("fdok%d" % o))
                if st == "skip":
                    if a.verbose:
                        print("routes: program %d skipped (F(w) = %r, error %s)" % (k, r.vals.get("F"), r.error))
                    continue
                if st == "ok":
                    continue
                sig = signature(st, info, r)
                line = "program %d (seed %d): %s; failing: %s" % (k, a.seed, st, ", ".join(info["bad"]))
                if sig in sigs:
                    line += "; same as program %d" % sigs[sig]
                else:
                    sigs[sig] = k
                    firsts.append((k, body, w, r, st, info))
                print(line + ("; error: %s" % r.error if r.error else ""))
                if a.keep_failures:
                    with open(os.path.join(a.keep_failures, "fail_%d.wg" % k), "w") as f:
                        f.write(standalone(body, w))
                    if getattr(r, "batch", None):
                        with open(os.path.join(a.keep_failures, "fail_%d_session.wg" % k), "w") as f:
                            f.write(r.batch)
            done += len(outs)
            if a.verbose:
                print("routes: %d/%d run (%.1fs)" % (done, a.count, time.time() - t0), file=sys.stderr)
        # one report per kind of failure, the first few reduced
        for n, (k, body, w, r, st, info) in enumerate(firsts):
            sig = signature(st, info, r)
            print("=" * 72)
            print("program %d (seed %d): %s; failing: %s" % (k, a.seed, st, ", ".join(info["bad"])))
            if r.error:
                print("  error: %s" % r.error)
            shown, rr, ii = body, r, info
            if n < a.reduce:
                small = reduce_program(binary, body, w, sig, tmp, a.timeout, pool, a.jobs)
                res = run_programs(binary, [(1, small, w)], tmp, a.timeout)[1]
                st2, info2 = check(res, w, NOFD not in small, small)
                if st2 not in ("ok", "skip") and signature(st2, info2, res) == sig:
                    shown, rr, ii = small, res, info2
                    print("  reduced from %d to %d lines:" % (len(body) + 2, len(small) + 2))
                if a.keep_failures:
                    with open(os.path.join(a.keep_failures, "fail_%d_reduced.wg" % k), "w") as f:
                        f.write(standalone(shown, w))
            print("  fn F(x) {")
            for l in shown:
                print("  " + l)
            print("  }    # at x = %s" % fmt(w))
            for l in show_values(rr, ii, w):
                print(l)
    dt = time.time() - t0
    if SLOW:
        print("routes: --slow: %d lines differed in the last bits only where an array run's sweep adds "
              "in another order (largest difference %.3g of 1 + the value, allowed %g)" % (
                  SLOW_TOLERATED[0], SLOW_TOLERATED[1], SLOW_RTOL))
    if a.verbose:
        print("routes: central differences applied to %d first and %d second derivatives" % (
            fdstat[1], fdstat[2]))
    print("routes: %d programs, %d disagreements, %d fd mismatches, %d errors, %d skipped, %s"
          "%d distinct failures (seed %d, %.1fs)" % (
              a.count, counts["disagree"], counts["fd"], counts["error"], counts["skip"],
              "%d slow mismatches, " % counts["slow"] if SLOW else "", len(sigs), a.seed, dt))
    return 1 if sigs else 0


if __name__ == "__main__":
    sys.exit(main())
