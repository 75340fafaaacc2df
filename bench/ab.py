"""Two wengert binaries side by side on W1-W5: bench/run.py's own runner
(run_once through build/bench/runstat, the bench scripts), one binary per
run, the two interleaved run by run (A, B, A, B, ...), medians; the values
each printed must agree. W5 puts lua5.4 -e between, as run.py's startup()
does. Needs build/bench/runstat (any `make bench` builds it).

    AB_REPS=5 /usr/bin/python3 bench/ab.py BEFORE_BINARY AFTER_BINARY

On a loaded machine the second of each pair tends to run slower: run it
again with the binaries swapped and read both."""
import os, sys, statistics, importlib.util
if len(sys.argv) != 3:
    sys.exit(__doc__)
A, B = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])    # before, after
REPS = int(os.environ.get("AB_REPS", "5"))
spec = importlib.util.spec_from_file_location("run", os.path.join(os.path.dirname(os.path.abspath(__file__)), "run.py"))
run = importlib.util.module_from_spec(spec); spec.loader.exec_module(run)
rows = []
# W5: 21 interleaved runs each of lua, A, B
lua, wa, wb = [], [], []
for _ in range(21):
    lua.append(run.run_once(["lua5.4", "-e", "print(1+1)"])["wall"])
    for w, lst in ((A, wa), (B, wb)):
        r = run.run_once([w, "-e", "print(1+1)"])
        assert r["out"].strip() == "2", r
        lst.append(r["wall"])
ml = statistics.median(lua)
print("W5 lua5.4 -e: %.2f ms" % (1000 * ml))
for name, lst in (("before", wa), ("after", wb)):
    m = statistics.median(lst)
    print("W5 %-6s %.2f ms (%.2f..%.2f)  %.3fx lua" % (name, 1000 * m, 1000 * min(lst), 1000 * max(lst), m / ml))
sys.stdout.flush()
for key, script in (("W1", "w1.wg"), ("W2", "w2.wg"), ("W2F", "w2f.wg"), ("W3", "w3.wg"), ("W4", "w4.wg")):
    path = os.path.join(run.BENCH, script)
    res = {A: [], B: []}
    outs = {A: set(), B: set()}
    rss = {A: [], B: []}
    for _ in range(REPS):
        for w in (A, B):
            r = run.run_once([w, path])
            assert r["rc"] == 0, (w, script, r["err"][-300:])
            res[w].append(r["wall"]); rss[w].append(r["rss_kb"])
            outs[w].add(r["out"].strip().splitlines()[-1])
    same = outs[A] == outs[B] and len(outs[A]) == 1
    ma, mb = statistics.median(res[A]), statistics.median(res[B])
    print("%-4s before %8.3f s (%.3f..%.3f) %6.1f MB | after %8.3f s (%.3f..%.3f) %6.1f MB | after/before %.3f | values %s" % (
        key, ma, min(res[A]), max(res[A]), max(rss[A]) / 1024, mb, min(res[B]), max(res[B]), max(rss[B]) / 1024,
        mb / ma, "agree" if same else "DIFFER %r %r" % (outs[A], outs[B])))
    sys.stdout.flush()
