#!/usr/bin/python3
"""The array programs and their flat twins agree, on the recorded sessions.

usage: agree.py [--min-seconds S] DRIVER PROGRAMS_DIR SESSIONS_DIR_OR_FILE...

PROGRAMS_DIR is bench/gradbench: for every <eval>_flat.wg there (the program
written one number or one coordinate at a time) beside <eval>.wg (written
with matrices and whole-array operations), DRIVER (build/gradbench/
wengert-gradbench) runs the sessions of that eval twice: once on the folder
itself, once on a copy in build/gradbench/flat/ where <eval>.wg is the flat
twin. Each evaluation's two answers must match the recorded reference by
GradBench's rule (replay.py's close) and each other within
|a - b| / max(1, |a| + |b|) <= 1e-9 (the two differ only in the order of
sums). One line per evaluation with both fastest `evaluate` times and their
ratio, then "N passed, N failed". Python 3 standard library only."""
import json
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from replay import Tool, close, with_min_seconds  # noqa: E402

TIGHT = 1e-9


def near(a, b, path="output"):
    """None when a and b agree within TIGHT everywhere, else where they differ."""
    if isinstance(b, dict):
        if not isinstance(a, dict) or set(a) != set(b):
            return f"{path}: keys"
        return next((w for k in b for w in [near(a[k], b[k], f"{path}.{k}")] if w), None)
    if isinstance(b, list):
        if not isinstance(a, list) or len(a) != len(b):
            return f"{path}: length"
        return next((w for i, (x, y) in enumerate(zip(a, b)) for w in [near(x, y, f"{path}[{i}]")] if w), None)
    if isinstance(b, float) or isinstance(a, float):
        ok = abs(a - b) / max(1.0, abs(a) + abs(b)) <= TIGHT
        return None if ok else f"{path}: {a!r} vs {b!r}"
    return None if a == b else f"{path}: {a!r} vs {b!r}"


def flat_dir(progs, out):
    """A copy of the programs in out with every <eval>.wg replaced by <eval>_flat.wg."""
    os.makedirs(out, exist_ok=True)
    evals = []
    for f in sorted(os.listdir(progs)):
        if f.endswith(".wg") and not f.endswith("_flat.wg"):
            flat = os.path.join(progs, f[:-3] + "_flat.wg")
            if os.path.exists(flat):
                evals.append(f[:-3])
            shutil.copyfile(flat if os.path.exists(flat) else os.path.join(progs, f), os.path.join(out, f))
    return evals


def answers(cmd, entries, min_seconds):
    """The tool's responses to the session's messages, by id."""
    tool = Tool(cmd, open(os.devnull, "w"))
    got = {}
    try:
        for e in entries:
            msg = e.get("message")
            if msg is None:
                continue
            msg = with_min_seconds(msg, min_seconds)
            got[msg["id"]] = tool.ask(msg)
    finally:
        tool.close()
    return got


def best(r):
    ts = [t["nanoseconds"] for t in r.get("timings", []) if t.get("name") == "evaluate"]
    return min(ts) / 1e6 if ts else None


def main():
    args = sys.argv[1:]
    min_seconds = None
    if args[:1] == ["--min-seconds"] and len(args) > 1:
        min_seconds = float(args[1])
        args = args[2:]
    if len(args) < 3:
        sys.exit(__doc__)
    driver, progs = os.path.abspath(args[0]), os.path.abspath(args[1])
    root = os.path.dirname(os.path.dirname(progs))
    os.environ.setdefault("WENGERT_STDLIB", os.path.join(root, "stdlib"))
    flat = os.path.join(os.path.dirname(driver), "flat")
    evals = flat_dir(progs, flat)
    files = []
    for a in args[2:]:
        if os.path.isdir(a):
            files += sorted(os.path.join(a, f) for f in os.listdir(a) if f.endswith(".jsonl"))
        else:
            files.append(a)
    passed = failed = 0
    print(f"{'session':22} {'function':10} {'workload':28} {'array ms':>10} {'flat ms':>10} {'flat/array':>10}")
    for path in files:
        entries = [json.loads(line) for line in open(path) if line.strip()]
        mods = {e["message"]["module"] for e in entries if "message" in e and e["message"]["kind"] == "define"}
        if not mods & set(evals):
            continue
        ref = {e["response"]["id"]: e["response"] for e in entries if "response" in e}
        arr = answers([driver, progs], entries, min_seconds)
        fl = answers([driver, flat], entries, min_seconds)
        name = os.path.basename(path)[:-len(".jsonl")]
        for e in entries:
            m = e.get("message")
            if not m or m["kind"] != "evaluate":
                continue
            a, f, r = arr.get(m["id"], {}), fl.get(m["id"], {}), ref.get(m["id"], {})
            bad = None
            if not a.get("success") or not f.get("success"):
                bad = "error: " + str(a.get("error") or f.get("error") or "no answer").strip()[:100]
            else:
                bad = (close(a.get("output"), r.get("output")) and "array vs reference: " + close(a.get("output"), r.get("output"))) \
                    or (close(f.get("output"), r.get("output")) and "flat vs reference: " + close(f.get("output"), r.get("output"))) \
                    or (near(a.get("output"), f.get("output")) and "array vs flat: " + near(a.get("output"), f.get("output")))
            ta, tf = best(a), best(f)
            ratio = f"{tf / ta:.2f}" if ta and tf else "-"
            print(f"{name:22} {m['function']:10} {m.get('description') or '':28} "
                  f"{'-' if ta is None else f'{ta:.4g}':>10} {'-' if tf is None else f'{tf:.4g}':>10} {ratio:>10}  "
                  + ("pass" if bad is None else f"FAIL ({bad})"), flush=True)
            if bad is None:
                passed += 1
            else:
                failed += 1
    print(f"{passed} passed, {failed} failed")
    sys.exit(1 if failed or not passed else 0)


if __name__ == "__main__":
    main()
