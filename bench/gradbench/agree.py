#!/usr/bin/python3
"""The array programs and their twins agree, on the recorded sessions.

usage: agree.py [--min-seconds S] DRIVER PROGRAMS_DIR SESSIONS_DIR_OR_FILE...

PROGRAMS_DIR is bench/gradbench: for every twin <eval>_<variant>.wg there
beside <eval>.wg (<eval>_flat.wg: the program written one number or one
coordinate at a time, where <eval>.wg uses matrices and whole-array
operations; ba_triplets.wg: ba's Jacobian by jacobian(f, "sparse",
"triplets")), DRIVER (build/gradbench/wengert-gradbench) runs the sessions
of that eval on the folder itself and on a copy in build/gradbench/<variant>/
where <eval>.wg is the twin. Each evaluation's two answers must match the
recorded reference by GradBench's rule (replay.py's close) and each other
within |a - b| / max(1, |a| + |b|) <= 1e-9 (they differ only in the order
of sums). One line per evaluation and twin with both fastest `evaluate`
times and their ratio, then "N passed, N failed". Python 3 standard library
only."""
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


def variants(progs):
    """The twins' names: "flat" for <eval>_flat.wg, "triplets" for ba_triplets.wg, ..."""
    fs = set(os.listdir(progs))
    return sorted({f[len(e) + 1:-3] for f in fs if f.endswith(".wg")
                   for e in [f.split("_")[0]] if "_" in f and e + ".wg" in fs})


def flat_dir(progs, out, variant="flat"):
    """A copy of the programs in out with every <eval>.wg replaced by <eval>_<variant>.wg."""
    os.makedirs(out, exist_ok=True)
    evals = []
    for f in sorted(os.listdir(progs)):
        if f.endswith(".wg") and "_" not in f:
            twin = os.path.join(progs, f[:-3] + "_" + variant + ".wg")
            if os.path.exists(twin):
                evals.append(f[:-3])
            shutil.copyfile(twin if os.path.exists(twin) else os.path.join(progs, f), os.path.join(out, f))
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
    twins = [(v, os.path.join(os.path.dirname(driver), v)) for v in variants(progs)]
    twins = [(v, d, flat_dir(progs, d, v)) for v, d in twins]
    files = []
    for a in args[2:]:
        if os.path.isdir(a):
            files += sorted(os.path.join(a, f) for f in os.listdir(a) if f.endswith(".jsonl"))
        else:
            files.append(a)
    passed = failed = 0
    print(f"{'session':22} {'twin':9} {'function':10} {'workload':28} {'array ms':>10} {'twin ms':>10} {'twin/array':>10}")
    for path in files:
        entries = [json.loads(line) for line in open(path) if line.strip()]
        mods = {e["message"]["module"] for e in entries if "message" in e and e["message"]["kind"] == "define"}
        here = [(v, d) for v, d, evals in twins if mods & set(evals)]
        if not here:
            continue
        ref = {e["response"]["id"]: e["response"] for e in entries if "response" in e}
        arr = answers([driver, progs], entries, min_seconds)
        name = os.path.basename(path)[:-len(".jsonl")]
        for variant, d in here:
            fl = answers([driver, d], entries, min_seconds)
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
                        or (close(f.get("output"), r.get("output")) and variant + " vs reference: " + close(f.get("output"), r.get("output"))) \
                        or (near(a.get("output"), f.get("output")) and "array vs " + variant + ": " + near(a.get("output"), f.get("output")))
                ta, tf = best(a), best(f)
                ratio = f"{tf / ta:.2f}" if ta and tf else "-"
                print(f"{name:22} {variant:9} {m['function']:10} {m.get('description') or '':28} "
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
