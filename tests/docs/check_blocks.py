"""Checks the code blocks of Markdown files against what wengert prints
(docs/testing.md, "Listings in the documentation"):

  ```wg-repl     a REPL transcript: a line `wg> CODE` starts an input, `..> CODE`
                 continues it, every other line is what that input printed
                 (its echo, print output, notes and errors, in order).
                 A line `$ ...` (the shell command that started it) is skipped.
  ```wg          a script. It must parse; if the next block is ```output, the
                 script is run as example.wg in a scratch folder and its
                 standard output and error must be that block.

Each block runs in a fresh session (LANG=C.UTF-8, NO_COLOR=1), a transcript
in the REPL itself on a pseudo-terminal (TERM=dumb), typed line by line,
each line once the prompt is back. Trailing spaces are ignored.
Usage: check_blocks.py [--fix] WENGERT FILE.md...   (exit status 1 on a mismatch)
--fix writes what wengert prints into the blocks instead (review the diff)."""
import fcntl
import json
import os
import pty
import select
import struct
import termios
import time
import re
import subprocess
import sys
import tempfile

fix = sys.argv[1] == "--fix"
if fix:
    del sys.argv[1]
wengert = os.path.abspath(sys.argv[1])
fixes = {}       # (path, first line of the block's body) -> its new lines
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


class Repl:
    """The REPL itself on a pseudo-terminal (TERM=dumb: no line-editing
    escapes), read up to each prompt: the screen a user sees."""
    def __init__(self, cwd):
        self.pid, self.fd = pty.fork()
        if self.pid == 0:
            os.chdir(cwd)
            os.execve(wengert, [wengert], dict(ENV, TERM="dumb"))
        fcntl.ioctl(self.fd, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 250, 0, 0))
        self.read()                                   # the banner

    def read(self, timeout=120):
        buf, end = b"", time.time() + timeout
        while time.time() < end:
            r, _, _ = select.select([self.fd], [], [], 0.05)
            if r:
                try:
                    chunk = os.read(self.fd, 65536)
                except OSError:
                    break
                if not chunk:
                    break
                buf += chunk
            elif buf.endswith(b"wg> ") or buf.endswith(b"..> "):
                break
        return buf.decode("utf-8", "replace").replace("\r", "")

    def type(self, line):
        os.write(self.fd, (line + "\n").encode())
        return self.read()

    def close(self):
        os.write(self.fd, b":quit\n")
        os.waitpid(self.pid, 0)
        os.close(self.fd)


def check_repl(path, line, body, tmp):
    want, typed = [], []
    for l in body:
        if l.startswith("$ "):
            continue
        if l.startswith("wg> ") or l == "wg>" or l.startswith("..> ") or l == "..>":
            typed.append(l[4:])
        elif not typed:
            report(path, line, "a wg-repl block must start with 'wg> '", [], [l])
            return
        want.append(l)
    r = Repl(tmp)
    screen = "wg> "
    for t in typed:
        screen += r.type(t)
    r.close()
    got = screen.split("\n")
    if got and got[-1] in ("wg> ", "..> "):
        got.pop()
    got = norm(got)
    if norm(want) != got:
        if fix:
            fixes[(path, line)] = got
            return
        report(path, line, "the transcript is not what wengert prints", norm(want), got)


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
    if norm(output) != got and fix:
        fixes[(path, line + len(body) + 2)] = got
    elif norm(output) != got:
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
# The README's table of examples lists every script in examples/, and
# the count it states is theirs.
for path in sys.argv[2:]:
    if os.path.basename(path) != "README.md":
        continue
    text = open(path, encoding="utf-8").read()
    listed = re.findall(r"^\| (\d\d_\w+) \|", text, re.M)
    folder = os.path.join(os.path.dirname(os.path.abspath(path)), "examples")
    scripts = sorted(f[:-3] for f in os.listdir(folder) if re.match(r"\d\d_.*\.wg$", f))
    stated = re.findall(r"in (\d+) short scripts", text)
    if listed != scripts or stated != [str(len(scripts))]:
        report(path, 0, "the table of examples (and the count the text states) is not examples/*.wg",
               listed + ["count: " + ", ".join(stated)], scripts + ["count: %d" % len(scripts)])
    checked += 1

for path in sorted({p for p, _ in fixes}):
    lines = open(path, encoding="utf-8").read().split("\n")
    for (p, line), new in sorted(fixes.items(), reverse=True):
        if p != path:
            continue
        indent = re.match(r"^(\s*)", lines[line - 1]).group(1)
        end = line
        while not re.match(r"^\s*```\s*$", lines[end]):
            end += 1
        lines[line:end] = [indent + l if l else l for l in new]
    open(path, "w", encoding="utf-8").write("\n".join(lines))
    print(f"check_blocks.py: rewrote blocks of {path}")
print(f"check_blocks.py: {checked} blocks, {failures} failed")
sys.exit(1 if failures else 0)
