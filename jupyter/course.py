"""The course (examples/course/): one source per lesson, the script
NN_name.wg; the notebook NN_name.ipynb is made from it, and run through the
wengert kernel so that it ships with its outputs.

In a lesson script a line `# %%` starts a code cell and `# %% [markdown]`
a markdown cell, whose lines are comments ("# " is taken off). An exercise
is the lines between `# ---- exercise NAME ----` and `# ---- end of
exercise NAME ----`; the check after it prints one line
`exercise NAME is ...` (stdlib/20_course.wg). The solution
solutions/NN_name.wg is the lesson with the exercises filled in: outside the
exercise blocks the two are the same, line for line.

usage: /usr/bin/python3 jupyter/course.py check WENGERT_BINARY
           runs every lesson and solution, scripts and notebooks: as shipped
           every check says "not yet answered", in the solutions every check
           says "right"; the notebooks are what the scripts make (outputs
           included); exit status 1 on any failure
       /usr/bin/python3 jupyter/course.py build WENGERT_BINARY
           writes every notebook anew (run through the kernel)"""
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
COURSE = os.path.join(ROOT, "examples", "course")
BEGIN = re.compile(r"^# ---- exercise (\S+) ----$")
END = re.compile(r"^# ---- end of exercise (\S+) ----$")
CHECK = re.compile(r"^exercise (\S+) is (not yet answered|right|wrong)\b")
failures = []


def fail(what):
    failures.append(what)
    print("FAIL", what)


def lessons():
    """(lesson, solution) script pairs, in order."""
    out = []
    for path in sorted(glob.glob(os.path.join(COURSE, "[0-9][0-9]_*.wg"))):
        out.append((path, os.path.join(COURSE, "solutions", os.path.basename(path))))
    return out


def rel(path):
    return os.path.relpath(path, ROOT)


# ------------------------------------------------------------ exercises

def exercise_blocks(path):
    """The lines outside the exercise blocks (a block is one marker line
    in their place) and the names of the blocks, in order; an error string
    if the markers do not pair up."""
    outside, names, inside = [], [], None
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f.read().split("\n"), 1):
            b, e = BEGIN.match(line), END.match(line)
            if b:
                if inside:
                    return "%s:%d: exercise %s begins inside exercise %s" % (rel(path), n, b.group(1), inside)
                inside = b.group(1)
                names.append(inside)
                outside.append(line)
            elif e:
                if e.group(1) != inside:
                    return "%s:%d: end of exercise %s without its beginning" % (rel(path), n, e.group(1))
                inside = None
                outside.append(line)
            elif inside is None:
                outside.append(line)
    if inside:
        return "%s: exercise %s has no end marker" % (rel(path), inside)
    return outside, names


def same_outside(lesson, solution):
    """The solution differs from the lesson only inside exercise blocks."""
    a, b = exercise_blocks(lesson), exercise_blocks(solution)
    for x in (a, b):
        if isinstance(x, str):
            fail(x)
            return None
    if a != b:
        for n, (la, lb) in enumerate(zip(a[0], b[0])):
            if la != lb:
                fail("%s differs from its lesson outside the exercise blocks: %r vs %r" % (rel(solution), la, lb))
                return None
        fail("%s and its lesson differ in length outside the exercise blocks" % rel(solution))
        return None
    if len(a[1]) < 3:
        fail("%s has %d exercises (at least 3)" % (rel(lesson), len(a[1])))
    return a[1]


def verdicts(text):
    """{exercise name: verdict} from the check lines of a run's output."""
    out = {}
    for line in text.split("\n"):
        m = CHECK.match(line)
        if m:
            out.setdefault(m.group(1), []).append(m.group(2))
    return out


def judge(what, text, names, want):
    """Every exercise of names has exactly one check line, saying want."""
    got = verdicts(text)
    for name in names:
        v = got.pop(name, [])
        if v != [want]:
            fail("%s: exercise %s says %s, wanted %r" % (what, name, v or "nothing", want))
    for name in got:
        fail("%s: a check line for exercise %s, which has no block" % (what, name))


# -------------------------------------------------------------- scripts

def run_script(binary, path):
    env = dict(os.environ, WENGERT_STDLIB=os.path.join(ROOT, "stdlib"))
    p = subprocess.run([binary, os.path.basename(path)], cwd=os.path.dirname(path), env=env,
                       stdin=subprocess.DEVNULL, capture_output=True, timeout=300)
    out = p.stdout.decode("utf-8", "replace")
    if p.returncode != 0:
        fail("%s: exit status %d\n%s" % (rel(path), p.returncode, p.stderr.decode("utf-8", "replace")[-2000:]))
    return out


# ------------------------------------------------------------ notebooks

def cells_of(path):
    """The cells of a lesson script: [(kind, source)]."""
    cells, kind, lines = [], None, []

    def flush():
        while lines and not lines[-1].strip():
            lines.pop()
        while lines and not lines[0].strip():
            lines.pop(0)
        if kind and lines:
            cells.append((kind, "\n".join(lines)))

    with open(path, encoding="utf-8") as f:
        for line in f.read().split("\n"):
            if line.startswith("# %%"):
                flush()
                kind, lines = ("markdown" if "[markdown]" in line else "code"), []
            elif kind == "markdown":
                lines.append(line[2:] if line.startswith("# ") else line.lstrip("#"))
            elif kind == "code":
                lines.append(line)
            elif line.strip():
                raise SystemExit("%s: a line before the first `# %%%%`: %r" % (rel(path), line))
    flush()
    return cells


def notebook_of(path):
    import nbformat
    from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook
    nb = new_notebook(cells=[new_markdown_cell(src) if kind == "markdown" else new_code_cell(src)
                             for kind, src in cells_of(path)])
    nb.metadata = {"kernelspec": {"display_name": "wengert", "language": "wengert", "name": "wengert"},
                   "language_info": {"file_extension": ".wg", "mimetype": "text/x-wengert",
                                     "name": "wengert"}}
    for i, c in enumerate(nb.cells):
        c.id = "c%02d" % i       # stable ids: the same script makes the same file
    nbformat.validate(nb)
    return nb


class Kernel:
    """One kernel for every notebook (starting one takes seconds): before
    each notebook `:reset` gives a fresh session, as a new kernel would."""

    def __init__(self):
        from nbclient import NotebookClient
        from nbformat.v4 import new_notebook
        self.client = NotebookClient(new_notebook(), kernel_name="wengert", timeout=300,
                                     allow_errors=True, record_timing=False,
                                     resources={"metadata": {"path": COURSE}})
        self.context = self.client.setup_kernel()
        self.context.__enter__()

    def close(self):
        self.context.__exit__(None, None, None)

    def execute(self, nb):
        """Runs the notebook's cells in a fresh session; stream outputs merged."""
        from nbformat.v4 import new_code_cell, new_notebook
        self.client.nb = new_notebook(cells=[new_code_cell(":reset")])
        self.client.execute_cell(self.client.nb.cells[0], 0)
        self.client.nb = nb
        count = 0
        for i, c in enumerate(nb.cells):
            if c.cell_type != "code":
                continue
            self.client.execute_cell(c, i)
            count += 1
            c.execution_count = count
            merged = []
            for o in c.outputs:
                if (o.output_type == "stream" and merged and merged[-1].output_type == "stream"
                        and merged[-1].name == o.name):
                    merged[-1].text += o.text
                else:
                    merged.append(o)
                if o.output_type == "execute_result":
                    o.execution_count = count
            c.outputs = merged
            c.metadata = {}
        return nb


def comparable(nb):
    """What must agree between the shipped notebook and a fresh run: the
    cells and their outputs (a tape picture by its DOT text: Graphviz
    versions draw the same graph differently; a plot by its SVG: its text
    form follows the locale)."""
    out = []
    for c in nb.cells:
        item = [c.cell_type, c.source]
        for o in c.get("outputs", []):
            if o.output_type == "stream":
                item.append(("stream", o.name, o.text))
            elif o.output_type == "error":
                item.append(("error", o.evalue))
            else:
                data = dict(o.get("data", {}))
                if data.get("text/plain", "").startswith("digraph"):
                    data["image/svg+xml"] = "<svg>"     # drawn by Graphviz
                elif "image/svg+xml" in data:
                    data.pop("text/plain", None)        # a plot's text form follows the locale
                item.append((o.output_type, json.dumps(data, sort_keys=True)))
        out.append(item)
    return out


def notebook_text(nb):
    text = []
    for c in nb.cells:
        for o in c.get("outputs", []):
            if o.output_type == "stream":
                text.append(o.text)
            elif o.output_type == "error":
                fail("a cell stopped with an error: %s" % "\n".join(o.traceback))
    return "".join(text)


def kernel_env(binary, tmp):
    """A scratch kernel spec, as tests/shell/jupyter.sh makes one."""
    sys.path.insert(0, HERE)
    import install
    folder = os.path.join(tmp, "jupyter", "kernels", "wengert")
    os.makedirs(folder)
    with open(os.path.join(folder, "kernel.json"), "w") as f:
        json.dump(install.spec(binary), f, indent=1)
    os.environ.update(JUPYTER_PATH=os.path.join(tmp, "jupyter"), JUPYTER_RUNTIME_DIR=os.path.join(tmp, "rt"),
                      JUPYTER_DATA_DIR=os.path.join(tmp, "data"), PYDEVD_DISABLE_FILE_VALIDATION="1",
                      LANG="C.UTF-8")
    for name in ("LC_ALL", "LC_CTYPE", "NO_COLOR"):
        os.environ.pop(name, None)


def have_jupyter():
    try:
        import nbclient, nbformat, ipykernel, jupyter_client  # noqa: F401
        return True
    except ImportError:
        return False


# ----------------------------------------------------------------- main

def main(args):
    if len(args) != 2 or args[0] not in ("check", "build"):
        sys.exit(__doc__.split("\n\n")[-1])
    mode, binary = args[0], os.path.abspath(args[1])
    pairs = lessons()
    if len(pairs) == 0:
        fail("no lessons in %s" % rel(COURSE))
    notebooks = have_jupyter()
    if not notebooks:
        print("SKIP course notebooks: python3-nbclient, python3-ipykernel or python3-jupyter-client is not installed")
    with tempfile.TemporaryDirectory() as tmp:
        kernel = None
        if notebooks:
            kernel_env(binary, tmp)
            kernel = Kernel()
        for lesson, solution in pairs:
            if not os.path.exists(solution):
                fail("%s has no solution %s" % (rel(lesson), rel(solution)))
                continue
            names = same_outside(lesson, solution)
            if names is None:
                continue
            for path, want in ((lesson, "not yet answered"), (solution, "right")):
                if mode == "check":
                    judge(rel(path), run_script(binary, path), names, want)
                if not notebooks:
                    continue
                import nbformat
                ipynb = path[:-3] + ".ipynb"
                nb = kernel.execute(notebook_of(path))
                judge(rel(ipynb), notebook_text(nb), names, want)
                if mode == "build":
                    nbformat.write(nb, ipynb)
                elif not os.path.exists(ipynb):
                    fail("%s is missing: make course-notebooks writes it" % rel(ipynb))
                elif comparable(nbformat.read(ipynb, as_version=4)) != comparable(nb):
                    fail("%s is not what %s makes: make course-notebooks writes it anew"
                         % (rel(ipynb), os.path.basename(path)))
        if kernel:
            kernel.close()
    print("course: %d lessons, %d failed checks" % (len(pairs), len(failures)))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main(sys.argv[1:])
