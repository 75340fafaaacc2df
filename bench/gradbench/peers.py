#!/usr/bin/python3
"""wengert beside GradBench's own tools, on the same inputs, in one run.

usage: peers.py [--min-runs R] [--tools T,T,...] [--json OUT] [--title TEXT]
                [--baseline DRIVER,PROGRAMS,STDLIB] TOOL SESSIONS_DIR_OR_FILE...
       peers.py --merge RUN.json...    (the tables of several --json runs as one)

TOOL is wengert's tool (bench/gradbench/tool). GB_HOME (environment; default
/work/gb) holds a GradBench checkout in $GB_HOME/gradbench whose
tools/<tool>/bin/<eval> are built (see docs/bench.md, "GradBench"). Every
`evaluate` message of the session files (recorded by GradBench's harness with
its `manual` tool, so their responses are the reference) is sent to each tool
in a process of its own, asking for R runs (min_seconds 0):

- wengert: the driver bench/gradbench/tool runs (build/gradbench/wengert-gradbench
  on bench/gradbench, built by peers.sh), over the protocol (start, define,
  evaluate), as replay.py drives it; wengert-flat: the same driver on the <eval>_flat.wg
  programs (agree.py's copy in build/gradbench/flat);
- wengert-base: with --baseline, another build of the driver with its own
  programs and standard library (a copy of an earlier commit's
  build/gradbench/wengert-gradbench, bench/gradbench and stdlib), so that a
  change is timed before and after in the same run as the peers;
- manual, adol-c, codipack, ...: $GB_HOME/gradbench/tools/<t>/bin/<eval> INPUT
  FUNCTION, the command GradBench's cpp.py runs for an `evaluate` (output on
  the first line, one timing a line after it);
- pytorch: GradBench's python/gradbench/gradbench/tools/pytorch/run.py over the
  protocol, one thread (OMP_NUM_THREADS=1, like the C++ tools).

Each answer is checked against the recorded one by GradBench's rule (replay.py's
close); the median `evaluate` time and the peak RSS of the process (wait4) are
kept. Prints one line per evaluation and tool as it goes, then the tables: all
tools' medians and peak memory, and the ratios of the issue's table
(wengert / ADOL-C, / CoDiPack, / PyTorch on the derivative, wengert primal /
manual). Python 3 standard library only."""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from replay import close, session_files  # noqa: E402
from agree import flat_dir  # noqa: E402

TIMEOUT = 600
GB_HOME = os.environ.get("GB_HOME", os.path.join(os.environ.get("TMPDIR", "/tmp"), "gb"))
GB = os.path.join(GB_HOME, "gradbench")
PRIMAL = {"lse": "primal", "llsq": "primal", "det": "primal", "ode": "primal", "kmeans": "cost",
          "gmm": "objective", "lstm": "objective", "ba": "objective", "ht": "objective"}
DERIV = {"lse": "gradient", "llsq": "gradient", "det": "gradient", "ode": "gradient", "kmeans": "dir",
         "gmm": "jacobian", "lstm": "jacobian", "ba": "jacobian", "ht": "jacobian"}
PEERS = ["manual", "adol-c", "codipack", "pytorch"]
PY = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable  # Debian's, with torch


def run_proc(cmd, stdin_text, cwd=None, env=None):
    """Runs cmd with stdin_text and a timeout; returns (rc, stdout, stderr tail, seconds)."""
    t0 = time.time()
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, cwd=cwd, env=env)
    out = {}

    def feed():
        try:
            out["o"], out["e"] = p.communicate(stdin_text)
        except Exception as ex:  # noqa: BLE001
            out["o"], out["e"] = "", str(ex)

    th = threading.Thread(target=feed, daemon=True)
    th.start()
    th.join(TIMEOUT)
    if th.is_alive():
        p.kill()
        th.join()
        return None, "", "timeout", time.time() - t0
    return p.returncode, out["o"], out["e"][-2000:], time.time() - t0


RUNSTAT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "build", "bench", "runstat")


def measure(cmd, stdin_text, cwd=None, env=None):
    """run_proc with the peak RSS (KB) of cmd (and what it waited for), from wait4 in
    build/bench/runstat (bench/runstat.c: forked from Python, a child would start with
    Python's ~13 MB as its high-water mark); without runstat, a fresh interpreter's
    RUSAGE_CHILDREN, whose floor is that ~13 MB."""
    if os.path.exists(RUNSTAT):
        with tempfile.NamedTemporaryFile("r", suffix=".stat") as st:
            rc, o, e, secs = run_proc([RUNSTAT, st.name, str(TIMEOUT)] + cmd, stdin_text, cwd, env)
            if rc is None:
                return None, "", "timeout after %d s" % TIMEOUT, 0, secs
            try:
                kb = int(open(st.name).read().split()[1])
            except (ValueError, IndexError):
                kb = 0
            return rc, o, e, kb, secs
    code = ("import json,resource,subprocess,sys\n"
            "a=json.loads(sys.stdin.readline())\n"
            "p=subprocess.run(a['cmd'],input=a['stdin'],capture_output=True,text=True,cwd=a['cwd'])\n"
            "r=resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss\n"
            "print(json.dumps({'rc':p.returncode,'out':p.stdout,'err':p.stderr[-2000:],'rss':r}))\n")
    arg = json.dumps({"cmd": cmd, "stdin": stdin_text, "cwd": cwd}) + "\n"
    rc, o, e, secs = run_proc([sys.executable, "-c", code], arg, env=env)
    if rc is None:
        return None, "", "timeout after %d s" % TIMEOUT, 0, secs
    try:
        d = json.loads(o)
    except ValueError:
        return -1, "", e, 0, secs
    return d["rc"], d["out"], d["err"], d["rss"], secs


def protocol(cmd, define, evaluate, cwd=None, env=None):
    """start, define, evaluate to a tool speaking GradBench's protocol; the evaluate response."""
    msgs = [{"id": 0, "kind": "start"}, dict(define, id=1), dict(evaluate, id=2)]
    rc, out, err, rss, secs = measure(cmd, "".join(json.dumps(m) + "\n" for m in msgs), cwd, env)
    resps = {}
    for line in out.splitlines():
        try:
            r = json.loads(line)
            resps[r.get("id")] = r
        except ValueError:
            pass
    if 1 in resps and not resps[1].get("success", False):
        return {"success": False, "error": "define: " + str(resps[1].get("error", ""))[:300]}, rss
    r = resps.get(2)
    if r is None:
        return {"success": False, "error": f"no answer (rc {rc}): {err.strip()[-300:]}"}, rss
    return r, rss


def cpp_bin(tool, module, function, inp):
    """GradBench's cpp.py evaluate, with the process's peak memory."""
    exe = os.path.join(GB, "tools", tool, "bin", module)
    if not os.path.exists(exe):
        return {"success": False, "error": "not built"}, 0
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as tmp:
        json.dump(inp, tmp)
    try:
        rc, out, err, rss, _ = measure([exe, tmp.name, function], "", GB)
    finally:
        os.unlink(tmp.name)
    if rc != 0:
        return {"success": False, "error": f"rc {rc}: {err.strip()[-300:]}"}, rss
    ls = out.splitlines()
    return {"success": True, "output": json.loads(ls[0]), "timings": [json.loads(x) for x in ls[1:]]}, rss


def evals_of(tool):
    p = os.path.join(GB, "tools", tool, "evals.txt")
    if not os.path.exists(p):
        return set()
    return {w.split()[0] for w in open(p) if w.split() and len(w.split()) == 1}


BASELINE = None    # --baseline: (driver, programs folder, stdlib folder)


def ask(tool, wg_tool, define, msg):
    module = msg["module"]
    if tool == "wengert":
        # the driver itself, not the tool script: the script runs make first,
        # and make's own peak RSS (about 47 MB) would be taken for wengert's
        progs = os.path.dirname(wg_tool)
        root = os.path.dirname(os.path.dirname(progs))
        env = dict(os.environ, WENGERT_STDLIB=os.path.join(root, "stdlib"))
        return protocol([os.path.join(root, "build", "gradbench", "wengert-gradbench"), progs], define, msg, None, env)
    if tool == "wengert-base":
        driver, progs, stdlib = BASELINE
        return protocol([driver, progs], define, msg, None, dict(os.environ, WENGERT_STDLIB=stdlib))
    if tool == "wengert-flat":     # the programs written a number or a coordinate at a time
        progs = os.path.dirname(wg_tool)
        root = os.path.dirname(os.path.dirname(progs))
        flat = os.path.join(root, "build", "gradbench", "flat")
        flat_dir(progs, flat)
        env = dict(os.environ, WENGERT_STDLIB=os.path.join(root, "stdlib"))
        return protocol([os.path.join(root, "build", "gradbench", "wengert-gradbench"), flat], define, msg, None, env)
    if tool == "pytorch":
        if module not in evals_of("pytorch"):
            return None, 0
        env = dict(os.environ, OMP_NUM_THREADS="1",
                   PYTHONPATH=os.path.join(GB, "python", "gradbench") + os.pathsep
                   + os.path.join(GB_HOME, "pyshim"))
        return protocol([PY, "python/gradbench/gradbench/tools/pytorch/run.py"],
                        define, msg, GB, env)
    if module not in evals_of(tool):
        return None, 0
    return cpp_bin(tool, module, msg["function"], msg["input"])


def fmt(x):
    if x is None:
        return "-"
    return f"{x:.0f}" if x >= 100 else f"{x:.3g}"


def ratio(a, b):
    if a is None or not b:
        return "-"
    x = a / b
    return f"{x:.0f}" if x >= 10 else f"{x:.2g}"


def print_tables(rows, tools, head):
    print()
    print(head)
    print()
    print("| eval | function | workload | " + " | ".join(tools) + " | peak MB (" + ", ".join(tools) + ") |")
    print("|" + "---|" * (len(tools) + 4))
    for r in rows:
        cells = []
        for t in tools:
            v = r["tools"].get(t)
            cells.append("-" if v is None else (fmt(v["median_ms"]) if v["status"] == "pass"
                                                 else ("fail" if v["status"].startswith("FAIL") else "invalid")))
        mem = ", ".join("-" if t not in r["tools"] else f"{r['tools'][t]['rss_mb']:.0f}" for t in tools)
        print(f"| {r['eval']} | {r['function']} | {r['workload']} | " + " | ".join(cells) + f" | {mem} |")
    print()
    print("| eval | workload | programs | wengert / ADOL-C | wengert / CoDiPack | wengert / PyTorch |"
          " wengert primal / manual | wengert peak MB (derivative) |")
    print("|---|---|---|---|---|---|---|---|")

    def ms(r, t):
        v = r["tools"].get(t) if r else None
        return v["median_ms"] if v and v["status"] == "pass" else None

    for r in rows:
        ev = r["module"]
        if DERIV.get(ev) != r["function"]:
            continue
        p = next((q for q in rows if q["eval"] == r["eval"] and q["workload"] == r["workload"]
                  and q["function"] == PRIMAL.get(ev)), None)
        for wt in [t for t in tools if t.startswith("wengert") and t in r["tools"]]:
            w = ms(r, wt)
            wmem = r["tools"].get(wt, {}).get("rss_mb")
            label = {"wengert-flat": "flat", "wengert-base": "base"}.get(wt, "tool")
            print(f"| {r['eval']} | {r['workload']} | {label} | {ratio(w, ms(r, 'adol-c'))} | "
                  f"{ratio(w, ms(r, 'codipack'))} | {ratio(w, ms(r, 'pytorch'))} | "
                  f"{ratio(ms(p, wt), ms(p, 'manual'))} | {'-' if wmem is None else f'{wmem:.0f}'} |")


def merged(paths):
    """Prints the tables of several --json outputs as one run: same evaluations, more tools."""
    rows, tools, heads = [], [], []
    for p in paths:
        d = json.load(open(p))
        heads.append(f"{d['title']}: min_runs {d['min_runs']}, load average {d['load'][0][0]:.1f} before, {d['load'][1][0]:.1f} after")
        for r in d["rows"]:
            q = next((x for x in rows if (x["eval"], x["function"], x["workload"]) == (r["eval"], r["function"], r["workload"])), None)
            if q is None:
                rows.append(r)
            else:
                q["tools"].update(r["tools"])
            for t in r["tools"]:
                if t not in tools:
                    tools.append(t)
    order = ["wengert-base", "wengert", "wengert-flat"] + PEERS
    tools.sort(key=lambda t: order.index(t) if t in order else len(order))
    print_tables(rows, tools, "\n".join(heads) + "\nmedian `evaluate` ms")


def main():
    global BASELINE
    args = sys.argv[1:]
    if args[:1] == ["--merge"]:
        return merged(args[1:])
    min_runs, tools, jout, title = 3, ["wengert"] + PEERS, None, ""
    while args and args[0].startswith("--") and len(args) > 1:
        k, v = args[0], args[1]
        args = args[2:]
        if k == "--min-runs":
            min_runs = int(v)
        elif k == "--tools":
            tools = v.split(",")
        elif k == "--json":
            jout = v
        elif k == "--title":
            title = v
        elif k == "--baseline":
            BASELINE = tuple(os.path.abspath(x) for x in v.split(","))
            if len(BASELINE) != 3 or not os.access(BASELINE[0], os.X_OK):
                sys.exit("--baseline wants DRIVER,PROGRAMS,STDLIB (an executable driver)")
        else:
            sys.exit(__doc__)
    if len(args) < 2:
        sys.exit(__doc__)
    if BASELINE:
        tools = ["wengert-base"] + [t for t in tools if t != "wengert-base"]
    wg_tool = os.path.abspath(args[0])
    files = session_files(args[1:])
    load0 = os.getloadavg()
    if load0[0] > 1.2:
        # under load the C++ tools' short runs slow down far more than ours
        # (docs/bench.md, "Results, 2026-11-26 22:12"): such a run is no verdict
        print(f"peers: load average {load0[0]:.1f}: other jobs are running; the ratios to the"
              " peers will not be a verdict (run again on a quiet machine)", file=sys.stderr)
    rows = []       # dicts: eval, function, workload, tool -> (median ms, rss MB, status)
    bad = 0
    for path in files:
        name = os.path.basename(path)[:-len(".jsonl")]
        entries = [json.loads(line) for line in open(path) if line.strip()]
        ref = {e["response"]["id"]: e["response"] for e in entries if "response" in e}
        define = None
        for e in entries:
            m = e.get("message")
            if not m:
                continue
            if m["kind"] == "define":
                define = {"kind": "define", "module": m["module"]}
            if m["kind"] != "evaluate":
                continue
            msg = {"kind": "evaluate", "module": m["module"], "function": m["function"],
                   "input": dict(m["input"], min_runs=min_runs, min_seconds=0)}
            row = {"eval": name, "module": m["module"], "function": m["function"],
                   "workload": m.get("description") or "", "tools": {}}
            for t in tools:
                r, rss = ask(t, wg_tool, define, msg)
                if r is None:
                    continue
                times = [x["nanoseconds"] / 1e6 for x in r.get("timings") or [] if x.get("name") == "evaluate"]
                if not r.get("success"):
                    status = "FAIL: " + str(r.get("error", "")).strip().replace("\n", " ")[:200]
                else:
                    diff = close(r.get("output"), ref.get(m["id"], {}).get("output"))
                    status = "pass" if diff is None else "INVALID: " + diff[:200]
                med = statistics.median(times) if times else None
                row["tools"][t] = {"median_ms": med, "runs": len(times), "rss_mb": rss / 1024, "status": status}
                if status != "pass":
                    bad += 1
                print(f"{name:22} {m['function']:10} {row['workload']:28} {t:9} {fmt(med):>9} ms "
                      f"{len(times):3} runs {rss / 1024:8.0f} MB  {status}", flush=True)
            rows.append(row)
    load1 = os.getloadavg()
    head = (f"{title}\nmin_runs {min_runs}, median `evaluate` ms; load average "
            f"{load0[0]:.1f} before, {load1[0]:.1f} after (1-minute, {os.cpu_count()} cores)")
    print_tables(rows, tools, head)
    if jout:
        with open(jout, "w") as f:
            json.dump({"title": title, "min_runs": min_runs, "load": [load0, load1], "rows": rows}, f, indent=1)
    print(f"\n{bad} answers failed or invalid")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
