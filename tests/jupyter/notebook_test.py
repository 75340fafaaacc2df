"""Executes notebooks headless through the Jupyter kernel `wengert`, with
Debian's python3-nbclient: examples/first_steps.ipynb, then a notebook of
checks (echo, derivatives, an error cell and the session after it, an
interrupted cell, inline SVG from plot and :tape dot, restart).
Expects JUPYTER_PATH to hold the kernel spec (tests/shell/jupyter.sh).
Prints one line per failed check; exit status 1 if any."""
import asyncio
import os
import shutil
import signal
import sys
import threading
import time

import nbformat
from jupyter_client.utils import run_sync
from nbclient import NotebookClient
from nbformat.v4 import new_code_cell, new_notebook

root = sys.argv[1]
failures = []


def check(ok, what, cell=None):
    if not ok:
        failures.append(what)
        print("FAIL", what)
        if cell is not None:
            print("   ", cell.source.split("\n")[0], "->", [dict(o) for o in cell.outputs])


def text(cell, kind="stream"):
    return "".join(o.get("text", "") for o in cell.outputs if o.output_type == kind)


def result(cell):
    for o in cell.outputs:
        if o.output_type == "execute_result":
            return o.data.get("text/plain")
    return None


def svgs(cell):
    return [o for o in cell.outputs
            if o.output_type == "display_data" and "image/svg+xml" in o.data]


def errors(cell):
    return [o for o in cell.outputs if o.output_type == "error"]


# ------------------------------------------------ the example notebook

def shown(cell):
    """What a reader sees of a cell's outputs, machine-independent: streams,
    results and errors as text; a picture as its kind (the SVG and the
    braille fallback depend on Graphviz's version and the locale)."""
    out = []
    for o in cell.get("outputs", []):
        if o.output_type == "stream":
            out.append((o.name, o.text))
        elif o.output_type == "execute_result":
            out.append(("result", o.data.get("text/plain")))
        elif o.output_type == "error":
            out.append(("error", o.evalue))
        elif o.output_type == "display_data":
            out.append(("picture", "image/svg+xml" in o.data))
    return out


path = os.path.join(root, "examples", "first_steps.ipynb")
nb = nbformat.read(path, as_version=4)
stored = [shown(c) for c in nb.cells if c.cell_type == "code"]
check(all(stored), "first_steps.ipynb ships with every code cell's outputs "
      "(/usr/bin/python3 jupyter/fill_outputs.py examples/first_steps.ipynb)")
NotebookClient(nb, kernel_name="wengert", timeout=60,
               resources={"metadata": {"path": os.path.join(root, "examples")}}).execute()
code = [c for c in nb.cells if c.cell_type == "code"]
check(all(not errors(c) or "raises-exception" in c.metadata.get("tags", []) for c in code),
      "first_steps.ipynb: only the cell tagged raises-exception fails")
check(sum(len(svgs(c)) for c in code) == (3 if shutil.which("dot") else 2),
      "first_steps.ipynb: the plots and the tape picture")
for c, was in zip(code, stored):
    now = shown(c)
    if not shutil.which("dot"):     # :tape dot shows its DOT text instead
        now = [o if o[0] != "picture" else ("picture", True) for o in now]
    check(now == was, "first_steps.ipynb: a stored output is not what the kernel gives "
          "(jupyter/fill_outputs.py writes them)", c)
# the text's entry numbers are those the :tape cell shows
import re
tape_cell = next(c for c in code if c.source.rstrip().endswith(":tape v3"))
ids = set(re.findall(r"^\s+(\d+)  ", text(tape_cell), re.M))
for cell in nb.cells:
    if cell.cell_type == "markdown" and "reverse sweep" in cell.source and "entr" in cell.source:
        named = set(re.findall(r"entr(?:y|ies) (\d+)", cell.source)) | \
            set(re.findall(r"(?:,| and) (\d+)\b", cell.source.split("$")[0]))
        check(named and named <= ids, f"first_steps.ipynb: the text names entries {sorted(named)}, "
              f":tape v3 shows {sorted(ids)}")

# ------------------------------------------------- the checks, one a cell

cells = {
    "echo": "1 + 1",
    "print": 'x = 2\nprint("x is", x)\nx * 10',
    "deriv": "y = x*x + sin(x)\nd(y, x)",
    "error": "z = 1\nw = y * nope",
    "after": "d(y, x) + z",
    "loop": "n = 0\nwhile true { n = n + 1 }",
    "alive": "n > 0",
    "plot": "plot(fn(t) => t^2, -1, 1)",
    "tapetext": ":tape stats",
    "dot": "u = sin(x) * x\n:tape dot u",
    "quit": "q = 1\n:quit",
    "afterquit": "q",
    "afterrestart": "x",
}
nb = new_notebook(cells=[new_code_cell(src) for src in cells.values()])
by = dict(zip(cells, nb.cells))
client = NotebookClient(nb, kernel_name="wengert", timeout=30, allow_errors=True)


def interrupt_soon(km, delay):
    """As the notebook's interrupt button, while the cell runs."""
    def go():
        time.sleep(delay)
        asyncio.new_event_loop().run_until_complete(km.interrupt_kernel())
    t = threading.Thread(target=go)
    t.start()
    return t


def ask(kc, request, *args):
    """A shell request's reply content (complete, inspect, is_complete)."""
    msg_id = getattr(kc, request)(*args)
    while True:
        reply = run_sync(kc.get_shell_msg)(timeout=20)
        if reply["parent_header"].get("msg_id") == msg_id:
            return reply["content"]


with client.setup_kernel():
    c = ask(client.kc, "complete", "y = pri", 7)
    check(c["matches"] == ["print"] and c["cursor_start"] == 4 and c["cursor_end"] == 7,
          "complete_request: print after pri")
    c = ask(client.kc, "complete", "# é\n:tape st", 12)
    check(c["matches"][:1] == ["stats"] and c["cursor_start"] == 10, "complete_request: :tape stats, "
          "cursor in characters")
    c = ask(client.kc, "inspect", "q = grad(f)", 6)
    check(c["found"] and c["data"]["text/plain"].startswith("grad(f):"), "inspect_request: :help grad")
    check(ask(client.kc, "is_complete", "f = fn(t) {")["status"] == "incomplete", "is_complete: open block")
    check(ask(client.kc, "is_complete", "f = fn(t) { t }")["status"] == "complete", "is_complete: complete")
    for name, cell in by.items():
        if name == "afterrestart":
            run_sync(client.km.restart_kernel)(now=True)
            run_sync(client.kc.wait_for_ready)(timeout=30)
        t = interrupt_soon(client.km, 1.0) if name == "loop" else None
        client.execute_cell(cell, list(by).index(name))
        if t:
            t.join()

check(result(by["echo"]) == "2", "echo: 1 + 1 is 2", by["echo"])
check(text(by["print"]) == "x is 2\n" and result(by["print"]) == "20", "print and result", by["print"])
check(result(by["deriv"]) == "3.583853163452858", "d(y, x)", by["deriv"])
e = errors(by["error"])
check(len(e) == 1 and e[0].evalue == "undefined variable 'nope'" and
      e[0].traceback[0].startswith("In[4]:2:9: error: undefined variable 'nope'") and
      e[0].traceback[-1].strip() == "^", "error: located, with the cell's line", by["error"])
check(result(by["after"]) == "4.583853163452858", "after the error: the session intact", by["after"])
e = errors(by["loop"])
check(len(e) == 1 and e[0].evalue == "interrupted", "interrupt: the loop stops", by["loop"])
check(result(by["alive"]) == "true", "after the interrupt: the session intact", by["alive"])
p = svgs(by["plot"])
check(len(p) == 1 and "<svg" in p[0].data["image/svg+xml"] and p[0].data.get("text/plain"),
      "plot: inline SVG with a text fallback", by["plot"])
check("entries" in text(by["tapetext"]), ":tape stats as text", by["tapetext"])
g = svgs(by["dot"])
if shutil.which("dot"):
    check(len(g) == 1 and "<svg" in g[0].data["image/svg+xml"] and "digraph" in g[0].data["text/plain"],
          ":tape dot: inline SVG (Graphviz) with the DOT text", by["dot"])
else:
    check(not g and "digraph" in text(by["dot"]), ":tape dot without Graphviz: the DOT text", by["dot"])
check("session ended" in text(by["quit"]) and "undefined variable 'q'" in
      (errors(by["afterquit"]) or [{"evalue": ""}])[0]["evalue"], ":quit: a fresh session", by["afterquit"])
e = errors(by["afterrestart"])
check(len(e) == 1 and "undefined variable 'x'" in e[0].evalue, "restart: a fresh session",
      by["afterrestart"])
print("%d failed" % len(failures))
sys.exit(1 if failures else 0)
