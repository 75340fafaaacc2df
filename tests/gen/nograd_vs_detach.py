#!/usr/bin/python3
"""An assignment inside nograd is the assignment of detach(...): a
differential test.

Takes the random programs of routes.py and makes two twins of each: in one,
some assignments `v = E`, `a[i] = E`, `v op= E` and `a[i] op= E` run
alone inside `nograd { }`; in the other the same lines assign
`detach(E)` (`detach(v op E)` for a compound one) and record as usual.
By docs/language.md, both leave the same values,
cut from what they were computed from on every route, and the same
places. Every value the two print (F, F' and F'' by every route, at the
point and beside it) must agree to 1e-9 relative. Lines that call one of
the program's own functions are left alone (inside nograd their calls run
with recording off, so what they write into arrays stays constant), and
so are lines that take derivatives (see SKIP_CALLS).

Prints one line per program that differs, then
"nograd_vs_detach: N programs, M differ"; exit status 1 if any differ.

    python3 tests/gen/nograd_vs_detach.py --bin ./wengert --count 200 --seed 1
"""
import argparse
import os
import random
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import routes  # noqa: E402
from checkpoint_vs_plain import same, values  # noqa: E402

ASSIGN = re.compile(r"^(\s*)([A-Za-z_]\w*(?:\[[^\]]+\])?) (=|\+=|-=|\*=|/=) (.+)$")
FUNC = re.compile(r"^\s*([A-Za-z_]\w*) = fn\b")
CALL = re.compile(r"([A-Za-z_]\w*)\(")
# a view made inside nograd is still a view (detach would copy it); and a
# derivative taken inside nograd differentiates what the block computes,
# unrecorded: d(x * s, s) there is 0 (docs/language.md: values computed inside are
# constants), so those lines differ from their detach twins by design
SKIP_CALLS = {"view", "d", "grad", "jvp", "hvp", "fwdgrad"}


def twins(body, r, p):
    """(nograd twin, detach twin, lines changed) of F's body."""
    funcs = {m.group(1) for m in map(FUNC.match, body) if m}
    views = {m.group(1) for m in (re.match(r"^\s*(\w+) = view\(", l) for l in body) if m}
    grew = True
    while grew:         # a name bound to a view is a view too (v2 = v1)
        alias = {m.group(1) for m in (re.match(r"^\s*(\w+) = (\w+)$", l) for l in body) if m and m.group(2) in views}
        grew = not alias <= views
        views |= alias
    viewed = set(re.findall(r"\bview\((\w+)", "\n".join(body)))
    a, b, n = [], [], 0
    for line in body:
        m = ASSIGN.match(line)
        ok = m and r.random() < p
        if ok:
            ind, place, op, rhs = m.groups()
            calls = set(CALL.findall(rhs))
            name = re.match(r"\w+", place).group(0)
            ok = not (calls & funcs) and not (calls & SKIP_CALLS) and not rhs.startswith("fn")
            # a whole view reassigned by op= writes through it, and a view
            # bound to a name stays a view (aliasing wins over cutting):
            # detach would give a fresh array in both cases
            ok = ok and not (place == name and name in views) and rhs.strip() not in views
            # the same for op= on an array a view aliases: it writes in place
            ok = ok and not (op != "=" and place == name and name in viewed)
        if not ok:
            a.append(line)
            b.append(line)
            continue
        n += 1
        a.append("%snograd { %s %s %s }" % (ind, place, op, rhs))
        if op == "=":
            b.append("%s%s = detach(%s)" % (ind, place, rhs))
        else:
            b.append("%s%s = detach(%s %s (%s))" % (ind, place, place, op[0], rhs))
    return a, b, n


def run(binary, text, tmp, name, timeout):
    path = os.path.join(tmp, name)
    with open(path, "w") as f:
        f.write(text)
    try:
        r = subprocess.run([binary, path], capture_output=True, text=True, timeout=timeout)
        return r.returncode, r.stdout, r.stderr
    except subprocess.TimeoutExpired:
        return -1, "", "timeout"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="./wengert")
    ap.add_argument("--count", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--p", type=float, default=0.35, help="chance an eligible line is changed")
    ap.add_argument("--timeout", type=float, default=60)
    ap.add_argument("--show", action="store_true", help="print the twins of each program that differs")
    a = ap.parse_args()
    binary = os.path.abspath(a.bin)
    if "WENGERT_STDLIB" not in os.environ:
        std = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "stdlib"))
        if os.path.isdir(std):
            os.environ["WENGERT_STDLIB"] = std
    feats = {}
    bad = ran = 0
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(a.count):
            body, w = routes.make_program(a.seed, i, feats)
            ng, dt, n = twins(body, random.Random("nograd:%d:%d" % (a.seed, i)), a.p)
            if not n:
                continue
            ran += 1
            texts = ["\n".join([":tape limit 64MB"] + routes.program_script(1, t, w)) + "\n" for t in (ng, dt)]
            (ra, oa, ea), (rb, ob, eb) = [run(binary, t, tmp, nm, a.timeout) for t, nm in zip(texts, ("n.wg", "d.wg"))]
            if ra != rb or not same(values(oa), values(ob)):
                bad += 1
                first = next(((x, y) for x, y in zip(oa.splitlines(), ob.splitlines()) if x != y), None)
                err = (ea or eb).strip().splitlines()[-1:]
                print("program %d (seed %d): %s %s" % (i, a.seed, first, err if err else ""))
                if a.show:
                    print(texts[0])
                    print(texts[1])
    print("nograd_vs_detach: %d programs, %d differ" % (ran, bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
