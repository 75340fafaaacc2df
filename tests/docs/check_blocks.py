"""Checks the code blocks of Markdown files against what wengert prints
(docs/testing.md, "Listings in the documentation"):

  ```wg-repl     a REPL transcript: a line `wg> CODE` starts an input, `..> CODE`
                 continues it, every other line is what that input printed
                 (its echo, print output, notes and errors, in order).
                 A line `$ ...` (the shell command that started it) is skipped.
  ```wg          a script. It must parse; if the next block is ```output, the
                 script is run as example.wg in a scratch folder and its
                 standard output and error must be that block.

Each block runs in a fresh session (LANG=C.UTF-8, NO_COLOR=1, 72-column
plots), the REPL's inputs through `wengert --kernel` named <repl 1>, <repl 2>
... as the REPL names them. Trailing spaces are ignored.
Usage: check_blocks.py WENGERT FILE.md...   (exit status 1 on a mismatch)"""
import json
import os
import re
import subprocess
import sys
import tempfile

wengert = os.path.abspath(sys.argv[1])
failures = 0
ENV = dict(os.environ, LANG="C.UTF-8", NO_COLOR="1")
for k in ("LC_ALL", "LC_CTYPE"):
    ENV.pop(k, None)


def blocks(path):
    """(language, first line number, lines) of each fenced block."""
    out, lang, start, body = [], None, 0, []
    for n, line in enumerate(open(path, encoding="utf-8").read().split("\n"), 1):
        m = re.match(r"^(\s*)```(\S*)\s*$", line)
        if lang is None and m:
            lang, start, body, indent = m.group(2), n, [], len(m.group(1))
        elif lang is not None and m and len(m.group(1)) == indent and not m.group(2):
            out.append((lang, start, body))
            lang = None
        elif lang is not None:
            body.append(line[indent:] if line[:indent].strip() == "" else line)
    return out


def norm(lines):
    lines = [l.rstrip() for l in lines]
    while lines and not lines[-1]:
        lines.pop()
    return lines


def report(path, line, what, want, got):
    global failures
    failures += 1
    print(f"FAIL {path}:{line}: {what}")
    import difflib
    for d in list(difflib.unified_diff(want, got, "shown", "printed", lineterm=""))[:40]:
        print("    " + d)


class Kernel:
    def __init__(self, cwd):
        self.p = subprocess.Popen([wengert, "--kernel"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  text=True, env=ENV, cwd=cwd)
        json.loads(self.p.stdout.readline())          # ready

    def ask(self, req):
        self.p.stdin.write(json.dumps(req) + "\n")
        self.p.stdin.flush()
        msgs = []
        while True:
            line = self.p.stdout.readline()
            if not line:
                raise RuntimeError("wengert --kernel ended")
            m = json.loads(line)
            msgs.append(m)
            if "done" in m:
                return msgs

    def run(self, code, name):
        text = ""
        for m in self.ask({"op": "run", "code": code, "name": name}):
            if "stream" in m:
                text += m["text"]
            elif "display" in m:
                text += m["display"].get("text/plain", "")
            elif m.get("done") == "ok" and m.get("value") is not None:
                text += m["value"] + "\n"
            elif m.get("done") == "error":
                text += m["error"]["report"]
        return text

    def check(self, code):
        return self.ask({"op": "check", "code": code})[-1]["done"]

    def close(self):
        self.p.stdin.close()
        self.p.wait()


def check_repl(path, line, body, tmp):
    inputs = []               # [code lines, shown output lines]
    for l in body:
        if l.startswith("$ "):
            continue
        if l.startswith("wg> ") or l == "wg>":
            inputs.append([[l[4:]], []])
        elif (l.startswith("..> ") or l == "..>") and inputs:
            inputs[-1][0].append(l[4:])
        elif inputs:
            inputs[-1][1].append(l)
        else:
            report(path, line, "a wg-repl block must start with 'wg> '", [], [l])
            return
    k = Kernel(tmp)
    want, got = [], []
    for i, (code, shown) in enumerate(inputs, 1):
        want += ["wg> " + code[0]] + ["..> " + c for c in code[1:]] + norm(shown)
        got += ["wg> " + code[0]] + ["..> " + c for c in code[1:]]
        got += norm(k.run("\n".join(code) + "\n", f"<repl {i}>").split("\n"))
    k.close()
    if want != got:
        report(path, line, "the transcript is not what wengert prints", want, got)


def check_script(path, line, body, output, tmp):
    code = "\n".join(body) + "\n"
    if output is None:
        k = Kernel(tmp)
        state = k.check(code)
        k.close()
        if state != "complete":
            report(path, line, f"the script does not parse ({state})", [], [])
        return
    with open(os.path.join(tmp, "example.wg"), "w") as f:
        f.write(code)
    r = subprocess.run([wengert, "example.wg"], cwd=tmp, env=ENV, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, timeout=120)
    got = norm(r.stdout.split("\n"))
    if norm(output) != got:
        report(path, line, "the output shown is not what the script prints", norm(output), got)


checked = 0
for path in sys.argv[2:]:
    bs = blocks(path)
    for i, (lang, line, body) in enumerate(bs):
        with tempfile.TemporaryDirectory() as tmp:
            if lang == "wg-repl":
                check_repl(path, line, body, tmp)
                checked += 1
            elif lang == "wg":
                nxt = bs[i + 1] if i + 1 < len(bs) else None
                check_script(path, line, body, nxt[2] if nxt and nxt[0] == "output" else None, tmp)
                checked += 1
print(f"check_blocks.py: {checked} blocks, {failures} failed")
sys.exit(1 if failures else 0)
