// app.js: wengert's page. The editor (CodeMirror 6), the REPL pane, the
// menus and the link; the interpreter itself runs in worker.js (a Web Worker)
// so that the page stays live while a program runs, and Stop raises the
// interpreter's interrupt flag in the memory the two share.
import { EditorView, basicSetup } from "codemirror";
import { keymap, Decoration } from "@codemirror/view";
import { StateField, StateEffect, Prec } from "@codemirror/state";
import { StreamLanguage } from "@codemirror/language";
import { autocompletion } from "@codemirror/autocomplete";

const $ = (id) => document.getElementById(id);
const out = $("output"), replInput = $("repl"), statusEl = $("status");
const runBtn = $("run"), stopBtn = $("stop");

const START = `# Every number can be differentiated. Ctrl-Enter runs the program;
# the REPL on the right then works in its session (try :tape, :tape dot y).
x = 2
y = x*x + sin(x)
print("d(y, x) =", d(y, x))
plot(fn(t) => t*t + sin(t), -3, 3)
y
`;

// ------------------------------------------------------------ the worker

let worker, flagView = null, flagIndex = 0;
let busy = false, runsDone = 0, nextId = 1, block = null, started = 0, timer = 0;
const waiting = new Map();

function startWorker() {
  return new Promise((resolve, reject) => {
    worker = self.wgWorker || new Worker("worker.js");
    worker.onerror = (e) => reject(new Error(e.message || "the interpreter did not start"));
    const receive = (e) => {
      const m = e.data;
      if (m.ready) {
        flagView = new Int32Array(m.memory);
        flagIndex = m.flag >> 2;
        resolve(m);
      } else if (m.out !== undefined) showText(m.text, m.out === 1 ? "err" : "");
      else if (m.display) showPicture(m.display);
      else if (m.id && waiting.has(m.id)) {
        const w = waiting.get(m.id);
        waiting.delete(m.id);
        if (m.failed) w.reject(new Error(m.failed));
        else w.resolve(m.done || m.result);
      }
    };
    worker.onmessage = receive;
    for (const e of self.wgEarly || []) receive(e);
    self.wgEarly = null;
  });
}

function request(msg) {
  return new Promise((resolve, reject) => {
    msg.id = nextId++;
    waiting.set(msg.id, { resolve, reject });
    worker.postMessage(msg);
  });
}

function setBusy(on) {
  busy = on;
  runBtn.disabled = on;
  stopBtn.disabled = !on;
  document.body.classList.toggle("busy", on);
  clearInterval(timer);
  if (on) {
    started = performance.now();
    statusEl.textContent = "running…";
    timer = setInterval(() => {
      statusEl.textContent = `running… ${((performance.now() - started) / 1000).toFixed(1)} s`;
    }, 250);
  } else {
    statusEl.textContent = `ready (${((performance.now() - started) / 1000).toFixed(2)} s)`;
  }
}

// One run: its output goes into `into` (a block of the output pane).
async function execute(msg, into) {
  setBusy(true);
  block = into;
  try {
    return await request(msg);
  } catch (e) {
    showText(`the page's interpreter failed: ${e.message}\n`, "err");
    return { status: 1 };
  } finally {
    document.body.dataset.runs = ++runsDone;     // for the browser test (test.mjs)
    setBusy(false);
    out.scrollTop = out.scrollHeight;
  }
}

function stop() {
  if (busy && flagView) Atomics.store(flagView, flagIndex, 1);
}

// ------------------------------------------------------------ the output

function newBlock(kind, echo) {
  const b = document.createElement("div");
  b.className = "run " + kind;
  if (echo !== undefined) {
    const e = document.createElement("pre");
    e.className = "echo";
    const p = document.createElement("span");
    p.className = "prompt";
    p.textContent = kind === "program" ? "▶ " : "wg> ";
    e.append(p, echo);
    b.append(e);
  }
  out.append(b);
  out.scrollTop = out.scrollHeight;
  return b;
}

function showText(text, cls) {
  const into = block || newBlock("note");
  const last = into.lastElementChild;
  if (last && last.tagName === "PRE" && last.className === "text " + cls) last.textContent += text;
  else {
    const p = document.createElement("pre");
    p.className = "text " + cls;
    p.textContent = text;
    into.append(p);
  }
  out.scrollTop = out.scrollHeight;
}

// An SVG of our own making, imported without scripts or event handlers.
function safeSvg(text) {
  const doc = new DOMParser().parseFromString(text, "image/svg+xml");
  const svg = doc.documentElement;
  if (svg.nodeName !== "svg") return null;
  for (const el of svg.querySelectorAll("*")) {
    if (/^(script|foreignObject)$/i.test(el.nodeName)) { el.remove(); continue; }
    for (const a of [...el.attributes]) if (/^on/i.test(a.name) || /javascript:/i.test(a.value)) el.removeAttribute(a.name);
  }
  return document.importNode(svg, true);
}

let vizReady = null;
function viz() {
  if (!vizReady) vizReady = import("@viz-js/viz").then((m) => m.instance());
  return vizReady;
}

function showPicture({ mime, data, alt }) {
  const into = block || newBlock("note");
  const div = document.createElement("div");
  div.className = "picture";
  div.dataset.alt = alt;        // the text the terminal shows (the test compares it)
  into.append(div);
  if (mime === "image/svg+xml") {
    const svg = safeSvg(data);
    if (svg) div.append(svg);
    else div.textContent = alt;
  } else if (mime === "text/vnd.graphviz") {
    div.classList.add("graph", "drawing");
    viz().then((v) => {
      // Graphviz sizes boxes by a font's metrics it knows: Courier's, for the
      // monospace text (style.css draws it in the page's monospace)
      div.append(v.renderSVGElement(data.replace(/fontname="monospace"/g, 'fontname="Courier"')));
    }).catch((e) => {
      const p = document.createElement("pre");
      p.textContent = data;
      div.append(p);
      showText(`(the graph could not be drawn: ${e.message})\n`, "err");
    }).finally(() => {
      div.classList.remove("drawing");
      out.scrollTop = out.scrollHeight;
    });
  }
  out.scrollTop = out.scrollHeight;
}

// ------------------------------------------------------------ the editor

const keywords = new Set(["if", "elif", "else", "while", "for", "in", "fn", "return", "break", "continue",
  "nograd", "checkpoint", "and", "or", "not", "true", "false", "nil"]);
const wengertMode = StreamLanguage.define({
  name: "wengert",
  token(stream) {
    if (stream.eatSpace()) return null;
    if (stream.match(/^#.*/)) return "comment";
    if (stream.match(/^"(?:[^"\\]|\\.)*"?/)) return "string";
    if (stream.match(/^(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?/i)) return "number";
    if (stream.match(/^:[a-z!]+/) && stream.string.slice(0, stream.start).trim() === "") return "meta";
    const w = stream.match(/^[A-Za-z_]\w*/);
    if (w) {
      if (keywords.has(w[0])) return "keyword";
      return "variableName";
    }
    if (stream.match(/^@\d+/)) return "meta";
    stream.next();
    return "operator";
  },
  languageData: { commentTokens: { line: "#" } },
});

const markError = StateEffect.define();
const errorLine = StateField.define({
  create: () => Decoration.none,
  update(deco, tr) {
    deco = deco.map(tr.changes);
    for (const e of tr.effects) if (e.is(markError)) {
      deco = e.value === null ? Decoration.none
        : Decoration.set([Decoration.line({ class: "cm-error-line" }).range(e.value)]);
    }
    if (tr.docChanged) deco = Decoration.none;
    return deco;
  },
  provide: (f) => EditorView.decorations.from(f),
});

// Completion as the REPL's Tab offers it, asked of the interpreter.
async function completions(ctx) {
  const word = ctx.matchBefore(/:?[\w]*/);
  if (busy || !ctx.explicit && (!word || word.from === word.to)) return null;
  const r = await request({ op: "complete", code: ctx.state.doc.toString(), cursor: ctx.pos });
  if (!r.matches.length) return null;
  return { from: r.start, options: r.matches.map((m) => ({ label: m, type: m.startsWith(":") ? "keyword" : "variable" })),
    validFor: /^:?\w*$/ };
}

const view = new EditorView({
  parent: $("editor"),
  doc: START,
  extensions: [
    Prec.highest(keymap.of([{ key: "Mod-Enter", run: () => { runProgram(); return true; } }])),
    basicSetup,
    wengertMode,
    errorLine,
    autocompletion({ override: [completions] }),
    EditorView.updateListener.of((u) => { if (u.docChanged) programName = programName.startsWith("examples/") ? "program.wg" : programName; }),
  ],
});
let programName = "program.wg";
self.wgEditor = view;        // for the browser test (test.mjs) and the curious

function setProgram(text, name) {
  view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: text } });
  programName = name;        // after the change: an edited example is the user's program
  document.body.dataset.program = name;
  view.dispatch({ effects: markError.of(null) });
}

// ------------------------------------------------------------ running

async function runProgram() {
  if (busy || !flagView) return;
  view.dispatch({ effects: markError.of(null) });
  const code = view.state.doc.toString();
  const b = newBlock("program", programName);
  const d = await execute({ op: "run", name: programName, code, echo: 0, fresh: 1 }, b);
  if (d.status === 0 && d.value !== null && d.value !== undefined) {
    const r = document.createElement("pre");
    r.className = "result";
    r.textContent = d.value;
    b.append(r);
  }
  if (d.status === 1 && d.file === programName && d.line > 0 && d.line <= view.state.doc.lines) {
    const line = view.state.doc.line(d.line);
    const at = Math.min(line.from + Math.max(d.col - 1, 0), line.to);
    view.dispatch({ effects: markError.of(line.from), selection: { anchor: at }, scrollIntoView: true });
    b.dataset.errorLine = d.line;
    b.dataset.errorCol = d.col;
  }
  replInput.focus();
}

const past = [];   // the REPL's inputs, for up and down
let historyAt = 0, inputs = 0;

async function replEnter() {
  const code = replInput.value;
  if (busy || !flagView) return;
  if (!code.trim()) return;
  const st = await request({ op: "check", code: code + "\n" });
  if (st === 2) {           // incomplete: go on on the next line
    insertAtCaret("\n");
    return;
  }
  past.push(code);
  historyAt = past.length;
  replInput.value = "";
  fitRepl();
  const b = newBlock("repl", code);
  const name = `<repl ${++inputs}>`;
  await execute({ op: "run", name, code: code + "\n", echo: 1, fresh: 0 }, b);
  block = null;
}

function insertAtCaret(text) {
  const s = replInput.selectionStart, e = replInput.selectionEnd;
  replInput.value = replInput.value.slice(0, s) + text + replInput.value.slice(e);
  replInput.selectionStart = replInput.selectionEnd = s + text.length;
  fitRepl();
}

function fitRepl() {
  replInput.rows = Math.min(Math.max(replInput.value.split("\n").length, 1), 12);
}

async function replComplete() {
  if (busy) return;
  const code = replInput.value, cursor = replInput.selectionStart;
  const r = await request({ op: "complete", code, cursor });
  if (!r.matches.length) return;
  let common = r.matches[0];
  for (const m of r.matches) while (!m.startsWith(common)) common = common.slice(0, -1);
  const typed = code.slice(r.start, cursor);
  if (r.matches.length === 1) common += " ";
  if (common.length > typed.length) {
    replInput.setSelectionRange(r.start, cursor);
    insertAtCaret(common);
  } else {
    const b = newBlock("completion");
    const p = document.createElement("pre");
    p.className = "matches";
    p.textContent = r.matches.join("  ");
    b.append(p);
    block = null;
  }
}

replInput.addEventListener("keydown", (e) => {
  const v = replInput.value, at = replInput.selectionStart;
  if (e.key === "Enter" && !e.shiftKey) {
    e.preventDefault();
    replEnter();
  } else if (e.key === "Tab") {
    e.preventDefault();
    replComplete();
  } else if (e.key === "ArrowUp" && !v.slice(0, at).includes("\n")) {
    if (historyAt > 0) {
      e.preventDefault();
      replInput.value = past[--historyAt];
      fitRepl();
    }
  } else if (e.key === "ArrowDown" && !v.slice(at).includes("\n")) {
    if (historyAt < past.length) {
      e.preventDefault();
      replInput.value = ++historyAt < past.length ? past[historyAt] : "";
      fitRepl();
    }
  } else if (e.key === "c" && e.ctrlKey && busy) {
    e.preventDefault();
    stop();
  }
});
replInput.addEventListener("input", fitRepl);

// ------------------------------------------------------------ the link

function encode(text) {
  const bytes = new TextEncoder().encode(text);
  let s = "";
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

function decode(text) {
  const s = atob(text.replace(/-/g, "+").replace(/_/g, "/"));
  return new TextDecoder().decode(Uint8Array.from(s, (c) => c.charCodeAt(0)));
}

function fromFragment() {
  const m = location.hash.match(/^#code=([\w-]*)/);
  if (!m) return false;
  try {
    setProgram(decode(m[1]), "program.wg");
    return true;
  } catch {
    return false;
  }
}

$("link").addEventListener("click", async () => {
  const url = location.href.replace(/#.*$/, "") + "#code=" + encode(view.state.doc.toString());
  window.history.replaceState(null, "", url);
  try {
    await navigator.clipboard.writeText(url);
    statusEl.textContent = "link copied";
  } catch {
    statusEl.textContent = "link in the address bar";
  }
});
window.addEventListener("hashchange", fromFragment);

// ------------------------------------------------------------ menus, start

function fillMenu(select, items) {
  for (const it of items) {
    const o = document.createElement("option");
    o.value = it.path;
    o.textContent = it.path.split("/").pop().replace(/\.wg$/, "") + ": " + it.title;
    select.append(o);
  }
  select.addEventListener("change", async () => {
    if (!select.value) return;
    const path = select.value;
    select.value = "";
    if (busy) return;
    const text = await request({ op: "read", path });
    setProgram(text, path);
    window.history.replaceState(null, "", location.href.replace(/#.*$/, ""));
  });
}

runBtn.addEventListener("click", runProgram);
stopBtn.addEventListener("click", stop);

async function main() {
  fromFragment();
  const offline = () => navigator.serviceWorker.register("sw.js").catch(() => {});
  if (!self.crossOriginIsolated) {
    // the shared memory needs cross-origin isolation: the service worker
    // gives it on a host that does not (one reload, once it is in charge)
    if (navigator.serviceWorker && !sessionStorage.getItem("wg-reloaded")) {
      sessionStorage.setItem("wg-reloaded", "1");
      offline();
      await navigator.serviceWorker.ready;
      location.reload();
      return;
    }
    statusEl.textContent = "this page needs cross-origin isolation (serve it with `make web-serve`)";
    return;
  }
  sessionStorage.removeItem("wg-reloaded");
  try {
    const ready = await startWorker();
    fillMenu($("examples"), ready.examples);
    fillMenu($("course"), ready.course);
    runBtn.disabled = false;
    statusEl.textContent = "ready";
    document.body.dataset.ready = performance.now().toFixed(0);
    // kept for offline use once the page is up (not competing with its start)
    if (navigator.serviceWorker) offline();
  } catch (e) {
    statusEl.textContent = "the interpreter could not start: " + e.message;
  }
}

main();
