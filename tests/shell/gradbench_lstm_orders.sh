#!/bin/bash
# bench/gradbench/lstm.wg runs its layers in one of two orders: a layer
# at a time (one or two layers: the recorded sessions' l = 2, which
# `make gradbench` checks) or every layer at once, a wave at a time
# (three or more). This checks the wave order, and the edges of both,
# where no recorded session reaches: on generated inputs with l = 1 .. 4
# layers and c = 2 .. 9 characters at b = 4 (c - 1 < l: no wave runs every
# layer; c - 1 >= l: the first and last l - 1 waves run some), and l = 5,
# 6 with b = 1, 2, 3, 14, lstm.wg's objective and jacobian must agree with
# lstm_flat.wg's (the same operations a number at a time) within 1e-9 of
# each number (they differ only in the order of sums, by 5e-14 at most
# here; relative, not agree.py's 1e-9 of max(1, |x| + |y|): a third of
# the derivatives at l >= 4 are below 1e-6, down to 1e-9 (1e-12 at l = 6,
# b = 14), which a bound of 1e-9 absolute passed whatever they were), and
# WENGERT_SLOW=1 must give lstm.wg's answers to the bit.
BUILD=${WG_BUILD:-build}
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
case "$BUILD" in /*) DRV="$BUILD/gradbench/wengert-gradbench" ;; *) DRV="$ROOT/$BUILD/gradbench/wengert-gradbench" ;; esac
if [ ! -x "$DRV" ]; then echo "SKIP: $DRV not built (make gradbench-tool)"; exit 0; fi
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
mkdir "$T/flat"
cp "$ROOT"/bench/gradbench/*.wg "$T/flat/"
cp "$ROOT/bench/gradbench/lstm_flat.wg" "$T/flat/lstm.wg"
export WENGERT_STDLIB="$ROOT/stdlib" DRV ROOT
python3 - "$T" <<'PY' || exit 1
import json, random, subprocess, sys, os
T = sys.argv[1]
drv, root = os.environ["DRV"], os.environ["ROOT"]
rng = random.Random(27)
def answer(progs, msgs, slow=False):
    env = dict(os.environ)
    if slow:
        env["WENGERT_SLOW"] = "1"
    p = subprocess.run([drv, progs], input=msgs, capture_output=True, text=True, env=env)
    out = [json.loads(l) for l in p.stdout.splitlines()]
    got = [m for m in out if m.get("id") == 2]
    if not got or "output" not in got[0]:
        sys.exit(f"FAIL: {progs}: no answer: {p.stdout[-300:]} {p.stderr[-300:]}")
    return got[0]["output"]
def flat(x):
    return [z for y in x for z in flat(y)] if isinstance(x, list) else [x]
bad = checked = 0
cases = [(l, c, 4) for l in (1, 2, 3, 4) for c in (2, 3, 4, 5, 9)]
cases += [(5, 3, 1), (5, 7, 2), (6, 2, 3), (6, 8, 1), (6, 12, 14), (3, 6, 1), (4, 40, 14)]
for (l, c, b) in cases:
    inp = {"main_params": [[rng.random() for _ in range(4 * b)] for _ in range(2 * l)],
           "extra_params": [[rng.random() for _ in range(b)] for _ in range(3)],
           "state": [[rng.random() for _ in range(b)] for _ in range(2 * l)],
           "sequence": [[float(rng.random() < 0.3) for _ in range(b)] for _ in range(c)]}
    for fn in ("objective", "jacobian"):
        msgs = "\n".join(json.dumps(m) for m in [
            {"id": 0, "kind": "start", "eval": "lstm"},
            {"id": 1, "kind": "define", "module": "lstm"},
            {"id": 2, "kind": "evaluate", "module": "lstm", "function": fn, "input": inp}]) + "\n"
        new = answer(os.path.join(root, "bench/gradbench"), msgs)
        old = answer(os.path.join(T, "flat"), msgs)
        slow = answer(os.path.join(root, "bench/gradbench"), msgs, slow=True)
        a, f = flat(new), flat(old)
        far = len(a) != len(f) or any(abs(x - y) > 1e-9 * (abs(x) + abs(y)) + 1e-300 for x, y in zip(a, f))
        checked += 1
        if far:
            bad += 1
            print(f"FAIL: l={l} c={c} b={b} {fn}: lstm.wg and lstm_flat.wg differ")
        if slow != new:
            bad += 1
            print(f"FAIL: l={l} c={c} b={b} {fn}: WENGERT_SLOW=1 gives other numbers")
print(f"lstm orders: {checked} answers agree with lstm_flat.wg" if not bad else f"{bad} failures")
sys.exit(1 if bad else 0)
PY
