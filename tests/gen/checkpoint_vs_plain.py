#!/usr/bin/python3
"""Checkpointed loops give what plain loops give: a differential test.

Takes the random programs of routes.py (functions full of state, views,
closures, loops and derivatives taken inside; no x@k), runs each as it is
and with every `for`/`while` made `checkpoint(k) for`/`checkpoint(k) while`,
and compares every value the two print (F, F' and F'' by every route) to
1e-9 relative. Prints one line per program that differs, then
"checkpoint_vs_plain: N programs, M differ (R in exit status only, H where
the plain twin timed out), I internal errors"; exit status 1 if any differ.

With --wide (default on), each program also gets a top-level block of
checkpointed loops of its own (ck_block below): for and while loops at
every depth, while conditions that call functions writing elements of
captured arrays or drawing rand(), grad/d/jvp inside bodies and
conditions, nograd blocks, fixedpoint, and d with respect to what the
loop left behind; its plain twin is the same text without `checkpoint`.
Lines starting "internal error" are counted apart.

    python3 tests/gen/checkpoint_vs_plain.py --bin ./wengert --count 60 --seed 1 --k 2
"""
import argparse
import concurrent.futures
import os
import random
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import routes  # noqa: E402

LOOP = re.compile(r"(?m)^(\s*)(for|while) ")


def values(text):
    out = []
    for line in text.splitlines():
        for tok in line.replace("[", " ").replace("]", " ").replace(",", " ").split():
            try:
                out.append(float(tok))
            except ValueError:
                out.append(tok)
    return out


def same(a, b):
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        if isinstance(x, float) and isinstance(y, float):
            if x != y and not (abs(x - y) <= 1e-9 * max(1.0, abs(x), abs(y))):
                if not (x != x and y != y):       # nan on both sides
                    return False
        elif x != y:
            return False
    return True


def ck_block(rnd, k):
    """A top-level block of checkpointed loops (see the docstring)."""
    L = []
    L.append("cx = %.4f" % rnd.uniform(-1.2, 1.2))
    L.append("ca = [%.3f, %.3f, %.3f]" % tuple(rnd.uniform(-1, 1) for _ in range(3)))
    L.append("cb = [%.3f, %.3f]" % tuple(rnd.uniform(-1, 1) for _ in range(2)))
    L.append("cs = cx * 0.5")
    L.append("cn = 0")
    L.append("seed(%d)" % rnd.randrange(1000))
    # functions with side effects, called from conditions and bodies
    L.append("cw = fn(t) { ca[%d] = 0.5 * ca[%d] + 0.3 * sin(t); return ca[%d] }" % (rnd.randrange(3), rnd.randrange(3), rnd.randrange(3)))
    L.append("cr = fn(t) { cb[%d] = cb[%d] + 0.1 * rand() * t; return rand() }" % (rnd.randrange(2), rnd.randrange(2)))
    exprs = [
        "sin(cs) * cx",
        "ca[{i}] * cs",
        "grad(fn(t) => t * t * ca[{i}])(cs)",
        "jvp(fn(t) {{ ca[{i}] = t * 0.9; return t * cx }}, cs, 1)",
        "d(cs * cs, cs)",
        "cw(cs)",
        "cr(cs)",
        "tanh(sum(ca)) * cx",
        "fixedpoint(fn(v) => 0.5 * cos(v) + 0.1 * cx, 0)",
        "relu(cs - ca[{i}])",
    ]

    def e():
        return rnd.choice(exprs).format(i=rnd.randrange(3))

    def body(depth, ind):
        out = []
        for _ in range(rnd.randint(1, 3)):
            c = rnd.random()
            if c < 0.3:
                out.append(ind + "cs = 0.6 * cs + 0.3 * %s" % e())
            elif c < 0.5:
                out.append(ind + "ca[%d] = 0.5 * ca[%d] + 0.2 * %s" % (rnd.randrange(3), rnd.randrange(3), e()))
            elif c < 0.6:
                out.append(ind + "cb[%d] += 0.1 * %s" % (rnd.randrange(2), e()))
            elif c < 0.7:
                out.append(ind + "nograd { cs = cs + 0.01 * %s }" % e())
            elif c < 0.8:
                out.append(ind + "if %s > 0 { cx2 = cs * 2 } else { cs = cs - 0.1 * cx }" % e())
            elif depth < 2:
                out.extend(loop(depth + 1, ind))
            else:
                out.append(ind + "cs = cs + 0.1 * %s" % e())
        return out

    def loop(depth, ind):
        pre = "checkpoint(%s) " % k if rnd.random() < 0.85 else ""
        v = "ci%d" % depth
        if rnd.random() < 0.5:
            head = ind + pre + "for %s in 0..%d {" % (v, rnd.randint(0, 5))
            return [head] + body(depth, ind + "    ") + [ind + "}"]
        cond = rnd.choice([
            "{v} < {n}",
            "{v} < {n} and cw(cs) < 5",
            "{v} < {n} and cr(1) < 0.9",
            "cw({v}) < 5 and {v} < {n}",
            "{v} < {n} and grad(fn(t) => t * ca[0])(cs) < 9",
        ]).format(v=v, n=rnd.randint(0, 5))
        return [ind + "%s = 0" % v, ind + pre + "while %s {" % cond, ind + "    %s += 1" % v] \
            + body(depth, ind + "    ") + [ind + "}"]

    for _ in range(rnd.randint(1, 2)):
        L.extend(loop(0, ""))
    L.append('print("CK", cs, ca, cb)')
    wrts = ["cx", "cx@1", "ca@1", "cb@1", "ca", "cb", "cs", "ca[0]"]
    ys = ["cs", "sum(ca)", "sum(cb) * cs", "ca[1] * ca[2]", "cs * sum(ca)"]
    for _ in range(3):
        L.append('print("CKD", d(%s, %s))' % (rnd.choice(ys), rnd.choice(wrts)))
    return L


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="./wengert")
    ap.add_argument("--count", type=int, default=60)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--k", default="2")
    ap.add_argument("--timeout", type=float, default=60)
    ap.add_argument("--wide", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--dump", default="", help="keep every program's two texts in this directory (pN.wg plain, cN.wg checkpointed)")
    a = ap.parse_args()
    feats = {"versions": False}
    bad = ran = internal = rc_only = plain_hung = 0

    def one(i, tmp):
        body, w = routes.make_program(a.seed, i, feats)
        plain = "\n".join([":tape limit 64MB"] + routes.program_script(1, body, w)) + "\n"
        ck = LOOP.sub(lambda m: m.group(1) + "checkpoint(%s) %s " % (a.k, m.group(2)), plain)
        if a.wide:
            block = "\n".join(ck_block(random.Random(a.seed * 1000003 + i), a.k)) + "\n"
            ck += block
            plain += re.sub(r"checkpoint\(\w+\) ", "", block)
        if ck == plain:
            return None
        outs = []
        for name, text in (("p%d.wg" % i, plain), ("c%d.wg" % i, ck)):
            path = os.path.join(tmp, name)
            with open(path, "w") as f:
                f.write(text)
            try:
                r = subprocess.run([a.bin, path], capture_output=True, text=True, timeout=a.timeout)
                outs.append((r.returncode, r.stdout, r.stderr))
            except subprocess.TimeoutExpired:
                outs.append((-1, "", "timeout"))
        return outs

    with tempfile.TemporaryDirectory() as tmp:
        if a.dump:
            os.makedirs(a.dump, exist_ok=True)
            tmp = a.dump
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, a.jobs)) as ex:
            results = ex.map(lambda i: one(i, tmp), range(a.count))
            for i, outs in enumerate(results):
                if outs is None:
                    continue
                ran += 1
                (rp, op, ep), (rc, oc, ec) = outs
                if "tape limit" in ep and "tape limit" not in ec:
                    continue        # the plain form does not run: nothing to compare
                if "internal error" in ep + ec:
                    internal += 1
                if rp != rc or not same(values(op), values(oc)):
                    bad += 1
                    first = next(((x, y) for x, y in zip(op.splitlines(), oc.splitlines()) if x != y), None)
                    what = first
                    vp, vc = values(op), values(oc)
                    if same(vp, vc):
                        rc_only += 1     # every value printed agrees: the exit status alone differs
                        what = "exit status only (plain %d, checkpointed %d)" % (rp, rc)
                    elif ep == "timeout" and same(vp, vc[:len(vp)]):
                        plain_hung += 1  # what the plain twin printed before its time ran out agrees
                        what = "the plain twin timed out (it agrees up to there)"
                    print("program %d (seed %d): %s %s" % (i, a.seed, what, ec.strip().splitlines()[-1:] if ec else ""))
    print("checkpoint_vs_plain: %d programs, %d differ (%d in exit status only, %d where the plain twin "
          "timed out), %d internal errors" % (ran, bad, rc_only, plain_hung, internal))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
