#!/usr/bin/python3
"""Replays recorded GradBench sessions into a tool and checks its answers.

usage: replay.py [--min-seconds S] [--log FILE] TOOL SESSIONS_DIR_OR_FILE...

Each session file holds the harness's log: lines {"message": ...} sent to the
tool and {"response": ...} the reference tool answered. Every message is sent
in order, one line, and the tool's one-line answer is compared with the
recorded one by GradBench's rule (same structure and keys, equal list
lengths, integers and strings equal, numbers within
|a - b| / max(1, |a| + |b|) <= 1e-4). One line per evaluation, then
"N passed, N failed". An eval whose module the tool does not define is
listed as not implemented and counts in neither. --min-seconds S asks the
tool to repeat each evaluation for S seconds (steadier means; the recorded
sessions ask for one run). --log FILE collects the tool's stderr there
instead of passing it through. Python 3 standard library only."""
import json
import os
import queue
import subprocess
import sys
import threading

TIMEOUT = 600  # seconds per message, as GradBench allows


def close(a, b, path="output"):
    """None when tool value a matches reference b, else where it differs."""
    if isinstance(b, bool) or isinstance(b, str) or b is None:
        return None if a == b and type(a) is type(b) else path
    if isinstance(b, int):
        return None if isinstance(a, int) and not isinstance(a, bool) and a == b else path
    if isinstance(b, float):
        if not isinstance(a, (int, float)) or isinstance(a, bool):
            return path
        return None if abs(a - b) / max(1.0, abs(a) + abs(b)) <= 1e-4 else f"{path}: {a!r} vs {b!r}"
    if isinstance(b, list):
        if not isinstance(a, list) or len(a) != len(b):
            return f"{path}: length"
        for i, (x, y) in enumerate(zip(a, b)):
            bad = close(x, y, f"{path}[{i}]")
            if bad:
                return bad
        return None
    if isinstance(b, dict):
        if not isinstance(a, dict) or set(a) != set(b):
            return f"{path}: keys"
        for k in b:
            bad = close(a[k], b[k], f"{path}.{k}")
            if bad:
                return bad
        return None
    return path


def session_files(args):
    """The .jsonl sessions named by args: files, or every one in a directory."""
    files = []
    for a in args:
        if os.path.isdir(a):
            files += sorted(os.path.join(a, f) for f in os.listdir(a) if f.endswith(".jsonl"))
        else:
            files.append(a)
    return files


def with_min_seconds(msg, min_seconds):
    """An evaluate message asking for min_seconds of runs (None: as recorded)."""
    if min_seconds is not None and msg["kind"] == "evaluate" and isinstance(msg["input"], dict):
        return dict(msg, input=dict(msg["input"], min_seconds=min_seconds))
    return msg


class Tool:
    def __init__(self, cmd, log=None):
        self.p = subprocess.Popen(cmd if isinstance(cmd, list) else [cmd], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=log, text=True, bufsize=1)
        self.lines = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.p.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def ask(self, msg):
        self.p.stdin.write(json.dumps(msg) + "\n")
        self.p.stdin.flush()
        line = self.lines.get(timeout=TIMEOUT)
        if line is None:
            raise RuntimeError("the tool exited")
        return json.loads(line)

    def close(self):
        try:
            self.p.stdin.close()
            self.p.wait(timeout=30)
        except Exception:
            self.p.kill()


def replay(tool_cmd, path, tally, min_seconds=None, log=None):
    name = os.path.basename(path)[:-len(".jsonl")]
    entries = [json.loads(line) for line in open(path) if line.strip()]
    expected = {e["response"]["id"]: e["response"] for e in entries if "response" in e}
    tool = Tool(tool_cmd, log)
    skip = False
    try:
        for e in entries:
            msg = e.get("message")
            if msg is None:
                continue
            msg = with_min_seconds(msg, min_seconds)
            if skip and msg["kind"] == "evaluate":
                print(f"{name:24} {msg['function']:10} {msg.get('description', ''):28} {'':>12}  not implemented")
                tally["skipped"] += 1
                continue
            if skip:
                continue
            try:
                got = tool.ask(msg)
            except Exception as ex:  # a crash, a hang or a line that is not JSON
                print(f"{name:24} {msg.get('function', msg['kind']):10} {'':28} {'':>12}  FAIL ({ex})")
                tally["failed"] += 1
                return
            ref = expected.get(msg["id"], {})
            if got.get("id") != msg["id"]:
                print(f"{name:24} {msg['kind']:10} wrong id {got.get('id')} for {msg['id']}  FAIL")
                tally["failed"] += 1
                return
            if msg["kind"] == "define" and not got.get("success"):
                skip = True
                print(f"{name:24} define     {got.get('error', '').strip()[:60]}")
            if msg["kind"] != "evaluate":
                continue
            times = [t["nanoseconds"] for t in got.get("timings", []) if t.get("name") == "evaluate"]
            mean = f"{sum(times) / len(times) / 1e6:.3f} ms" if times else "-"
            best = f"(min {min(times) / 1e6:.3f})" if times else ""
            bad = None
            if not got.get("success", False):
                bad = "error: " + str(got.get("error", "")).strip().splitlines()[0][:80] if got.get("error") else "no success"
            else:
                runs = msg["input"].get("min_runs", 1) if isinstance(msg["input"], dict) else 1
                if len(times) < runs:
                    bad = f"{len(times)} runs, asked for {runs}"
                else:
                    bad = close(got.get("output"), ref.get("output"))
            ok = bad is None
            tally["passed" if ok else "failed"] += 1
            print(f"{name:24} {msg['function']:10} {msg.get('description') or '':28} {mean:>12} {best:16}  "
                  + ("pass" if ok else f"FAIL ({bad})"), flush=True)
    finally:
        tool.close()


def main():
    args = sys.argv[1:]
    min_seconds = None
    log = None
    while args[:1] in (["--min-seconds"], ["--log"]) and len(args) > 1:
        if args[0] == "--min-seconds":
            min_seconds = float(args[1])
        else:
            log = open(args[1], "w")
        args = args[2:]
    if len(args) < 2:
        sys.exit(__doc__)
    tool_cmd = os.path.abspath(args[0])
    files = session_files(args[1:])
    tally = {"passed": 0, "failed": 0, "skipped": 0}
    for f in files:
        replay(tool_cmd, f, tally, min_seconds, log)
    if tally["skipped"]:
        print(f"{tally['skipped']} evaluations not implemented (skipped)")
    print(f"{tally['passed']} passed, {tally['failed']} failed")
    sys.exit(1 if tally["failed"] or not files else 0)


if __name__ == "__main__":
    main()
