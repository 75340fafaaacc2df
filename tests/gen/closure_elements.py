#!/usr/bin/env python3
"""A closure's captured array element against its top-level twin: a
random-program differential test for wengert (issue 25, bug 1's corners).

Each program makes an array e (through a view v of it, sometimes) inside a
function that keeps no versions (mk1, mk2) from a top-level number or
array element a, returns closures that read one element of it (e[i],
a slice's element, through a function it is passed to), computes z from
what they read, then reassigns a (or an element of it, or binds another
name) to what a closure reads, and prints d(z, a), d(z, a@1) and d(z, x0)
(x0 an unrelated place). The twin computes the same at the top level,
with e a global. The SPEC: each binding is a place of its own, so both
must print the same numbers (to 1e-12: sums may take another order).

    python3 tests/gen/closure_elements.py --bin ./wengert [--count N] [--seed S]

Prints the first failing pairs and "closure_elements: N programs, M
differ"; exit status 1 if any differ. Python 3 standard library only.
"""

import argparse
import os
import random
import re
import subprocess
import sys


def make(seed, k):
    r = random.Random(seed * 100003 + k)
    n = r.randint(2, 4)
    scalar = r.random() < 0.5
    elems = [r.choice(["x*%s" % r.choice(["1", "2", "0.5"]), "x + %d" % j, "sin(x)", "%d" % j, "x*x"])
             for j in range(n)]
    arr = "[" + ", ".join(elems) + "]"
    view = r.random() < 0.4
    vs = r.randint(0, n - 1)
    vl = r.randint(1, n - vs)
    base, blen = ("v", vl) if view else ("e", n)

    def read():
        i, c = r.randrange(blen), r.random()
        if c < 0.6:
            return "%s[%d]" % (base, i)
        if c < 0.8:
            return "%s[0:%d][%d]" % (base, blen, i)
        return "pick(%s, %d)" % (base, i)

    rd1, rd2 = read(), read()
    zop = r.choice(["3 * %s", "%s * %s", "sin(%s) + 2 * %s"])
    init, arg = ("a = 1.5", "a") if scalar else ("a = [1.5, 0.25]", "a[%d]" % r.randrange(2))
    reas = r.choice(["a = G", "a = G * 1", "b = G", "a += G"] + ([] if scalar else ["a[0] = G", "a[1] = G"]))
    body = "e = %s" % arr + ("; v = view(e, %d, %d)" % (vs, vl) if view else "")
    head = ["fn pick(arr, i) { return arr[i] }", "x0 = 0", init]
    clo = head + ["fn mk1(x) { %s; return fn() => %s }" % (body, rd1),
                  "fn mk2(x) { %s; return fn() => %s }" % (body, rd2),
                  "g1 = mk1(%s)" % arg, "g2 = mk2(%s)" % arg,
                  "z = " + zop.replace("%s", "g1()", 1).replace("%s", "g2()", 1),
                  reas.replace("G", "g1()")]
    twin = head + ["e = %s" % arr.replace("x", "(%s)" % arg)]
    if view:
        twin.append("v = view(e, %d, %d)" % (vs, vl))
    twin += ["h1 = %s" % rd1, "h2 = %s" % rd2,
             "z = " + zop.replace("%s", "h1", 1).replace("%s", "h2", 1),
             reas.replace("G", "h1")]
    tail = "print(d(z, a), d(z, a@1), d(z, x0))"
    return "\n".join(clo + [tail]) + "\n", "\n".join(twin + [tail]) + "\n"


def nums(t):
    return [float(x) for x in re.findall(r"-?[0-9.]+(?:e[-+]?[0-9]+)?|nan|inf", t)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default="./wengert")
    ap.add_argument("--count", type=int, default=500)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    binary = os.path.abspath(a.bin)
    if "WENGERT_STDLIB" not in os.environ:
        std = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "stdlib"))
        if os.path.isdir(std):
            os.environ["WENGERT_STDLIB"] = std
    bad = 0
    for k in range(a.count):
        texts = make(a.seed, k)
        outs = []
        for t in texts:
            p = subprocess.run([binary, "-"], input=t, capture_output=True, text=True, timeout=60)
            outs.append(p.stdout.strip() if p.returncode == 0 else "error: " + p.stderr.strip()[-300:])
        x, y = nums(outs[0]), nums(outs[1])
        same = outs[0] and not outs[0].startswith("error") and len(x) == len(y) and \
            all(abs(p - q) <= 1e-12 * (1 + abs(p) + abs(q)) for p, q in zip(x, y))
        if not same:
            bad += 1
            if bad <= 3:
                print("===== program %d (seed %d)\n%s--> %s\n----- twin\n%s--> %s"
                      % (k, a.seed, texts[0], outs[0], texts[1], outs[1]))
    print("closure_elements: %d programs, %d differ" % (a.count, bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
