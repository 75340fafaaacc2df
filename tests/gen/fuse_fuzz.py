#!/usr/bin/env python3
"""Random arithmetic trees over arrays long enough for fuse.c to take them
whole (64 elements or more: arith_fused's one pass), printed in full, run
normally and with WENGERT_SLOW=1 (every fast path off: the operations one
at a time): the outputs must be the same text, every element to the bit
(print writes the shortest text that reads back as the same double).

    tests/gen/fuse_fuzz.py --bin ./wengert --seed S --count N
"""
import argparse
import os
import random
import subprocess
import sys
import tempfile

OPS = ["+", "-", "*", "/"]


def tree(r, depth, names, nums):
    """An expression: + - * / and negation over names and literals."""
    if depth == 0 or r.random() < 0.25:
        k = r.random()
        if k < 0.6:
            return r.choice(names)
        if k < 0.8:
            return r.choice(nums)
        return repr(r.choice([0, 1, 2, 0.5, -3, 1e-300, 1e300, 7.25]))
    if r.random() < 0.1:
        return "-" + paren(tree(r, depth - 1, names, nums))
    return "%s %s %s" % (paren(tree(r, depth - 1, names, nums)), r.choice(OPS), paren(tree(r, depth - 1, names, nums)))


def paren(e):
    return e if e.replace("_", "").replace(".", "").replace("-", "").isalnum() else "(" + e + ")"


def program(r):
    n = r.choice([64, 65, 100, 255, 256, 257, 300, 513])
    lines = ["fn case() {"]
    for name, (a, b) in zip("abc", [(0.3, 0.1), (1.7, 0.4), (0.05, 2.0)]):
        lines.append("    %s = zeros(%d)" % (name, n))
        special = r.choice(["0", "-0", "1 / 0", "-1 / 0", "0 / 0", "1e-310", "1e308"])
        lines.append("    for i in 0..%d { %s[i] = sin(i * %r + %r) * %r }" % (n, name, a, b, r.choice([1, 3, 1e5])))
        lines.append("    %s[%d] = %s" % (name, r.randrange(n), special))
    lines.append("    v = view(b, %d, %d, -1)" % (n - 1, n))
    lines.append("    w = row(reshape(a, 1, %d), 0)" % n)
    lines.append("    h = %r" % r.choice([0.2, -1.5, 3.0, 1e-3]))
    lines.append("    g = %r" % r.choice([2, 0.1, -7]))
    names = ["a", "b", "c", "v", "w"]
    nums = ["h", "g"]
    for k in range(12):
        e = tree(r, r.randint(2, 4), names, nums)
        if r.random() < 0.3:      # the left operand computed first (eval_binop_left)
            e = "(%s * %s) %s (%s)" % (r.choice(names), r.choice(names), r.choice(OPS), tree(r, 2, names, nums))
        lines.append("    r%d = %s" % (k, e))
        lines.append("    print(r%d)" % k)
    lines.append("    print(a, b, c)")
    lines.append("    return 0")
    lines.append("}")
    lines.append("case()")
    return "\n".join(lines) + "\n"


def run(binary, path, slow):
    env = dict(os.environ)
    if slow:
        env["WENGERT_SLOW"] = "1"
    else:
        env.pop("WENGERT_SLOW", None)
    p = subprocess.run([binary, path], capture_output=True, text=True, env=env, timeout=120)
    return p.returncode, p.stdout, p.stderr


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="./wengert")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--count", type=int, default=50)
    args = ap.parse_args()
    r = random.Random(args.seed)
    bad = 0
    with tempfile.TemporaryDirectory() as d:
        for i in range(args.count):
            src = program(r)
            path = os.path.join(d, "p%d.wg" % i)
            with open(path, "w") as f:
                f.write(src)
            fast, slow = run(args.bin, path, False), run(args.bin, path, True)
            if fast != slow:
                bad += 1
                keep = "/tmp/fuse_fuzz_%d_%d.wg" % (args.seed, i)
                with open(keep, "w") as f:
                    f.write(src)
                print("differ: %s (exit %d / %d)" % (keep, fast[0], slow[0]))
    print("fuse_fuzz: %d programs, %d differ, seed %d" % (args.count, bad, args.seed))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
