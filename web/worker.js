// worker.js: the interpreter's thread. It loads wengert.js (src/webmain.c
// built by emscripten) and runs what the page (app.js) asks, one request at a
// time; a run holds this thread until it ends, so the page stops one by
// writing 1 into the interpreter's interrupt flag in the shared memory.
//
// page -> worker: {op: "run", id, name, code, echo, fresh}   fresh: reset first
//                 {op: "check", id, code}   {op: "complete", id, code, cursor}
//                 {op: "reset", id}   {op: "read", id, path}
// worker -> page: {ready, memory, flag, examples}
//                 {out: 0|1, text}   printed output (1: errors and notes)
//                 {display: {mime, data, alt}}   a picture
//                 {id, done: {status, value, message, file, line, col}}
//                 {id, result}   the answer to check, complete, read, reset
"use strict";

let pending = "";      // output gathered since it was last sent
let pendingStream = 0;
let lastSent = 0;
let matches = null;    // completion's candidates, while web_complete runs
let done = null;

function flush() {
  if (pending) postMessage({ out: pendingStream, text: pending });
  pending = "";
  lastSent = performance.now();
}

// Output is sent in pieces of at most 50 ms, so a loop that prints sends a few
// messages, not one a line, and still shows as it runs.
function output(stream, text) {
  if (stream !== pendingStream) flush();
  pendingStream = stream;
  pending += text;
  if (pending.length > 65536 || performance.now() - lastSent > 50) flush();
}

self.Module = {
  wgOutput: output,
  wgDisplay(mime, data, alt) {
    flush();
    postMessage({ display: { mime, data, alt } });
  },
  wgDone(status, value, message, file, line, col) {
    done = { status, value, message, file, line, col };
  },
  wgMatch(name) {
    if (matches) matches.push(name);
  },
  print: (t) => output(0, t + "\n"),
  printErr: (t) => output(1, t + "\n"),
  onRuntimeInitialized() {
    const FS = Module.FS;
    Module.ccall("web_open", "number", ["string"], [""]);
    flush();
    const list = (dir) => FS.readdir("/wengert/" + dir)
      .filter((f) => f.endsWith(".wg"))
      .sort()
      .map((f) => {
        const text = FS.readFile("/wengert/" + dir + "/" + f, { encoding: "utf8" });
        return { path: dir + "/" + f, title: title(text, f) };
      });
    postMessage({
      ready: true,
      memory: Module.HEAPU8.buffer,
      flag: Module.ccall("web_interrupt_flag", "number", [], []),
      examples: list("examples"),
      course: list("examples/course"),
    });
  },
};

// A lesson's or an example's title: its first line of prose.
function title(text, file) {
  for (const line of text.split("\n")) {
    const t = line.replace(/^#+\s*(%%.*)?/, "").replace(/^#\s*/, "").trim();
    if (t && !line.startsWith("# %%")) return t;
  }
  return file;
}

function handle(req) {
  const C = Module.ccall;
  switch (req.op) {
    case "run": {
      if (req.fresh) C("web_reset", null, [], []);
      done = null;
      C("web_run", "number", ["string", "string", "number"], [req.name, req.code, req.echo ? 1 : 0]);
      flush();
      postMessage({ id: req.id, done });
      break;
    }
    case "check":
      postMessage({ id: req.id, result: C("web_check", "number", ["string"], [req.code]) });
      break;
    case "complete": {
      matches = [];
      // the cursor is a character offset; the C side counts bytes
      const before = new TextEncoder().encode(req.code.slice(0, req.cursor)).length;
      const startByte = C("web_complete", "number", ["string", "number"], [req.code, before]);
      const start = new TextDecoder().decode(new TextEncoder().encode(req.code).slice(0, startByte)).length;
      postMessage({ id: req.id, result: { matches, start } });
      matches = null;
      break;
    }
    case "reset":
      C("web_reset", null, [], []);
      flush();
      postMessage({ id: req.id, result: true });
      break;
    case "read":
      postMessage({ id: req.id, result: Module.FS.readFile("/wengert/" + req.path, { encoding: "utf8" }) });
      break;
  }
}

// What the interpreter cannot turn into an error of its own (the browser's
// stack overflowing in a deep computation: its calls run on the browser's
// stack, which a page cannot enlarge) leaves the session in pieces: a fresh
// one replaces it, and the page says so.
self.onmessage = (e) => {
  const sp = Module.stackSave ? Module.stackSave() : 0;
  try {
    handle(e.data);
  } catch (err) {
    if (Module.stackRestore) Module.stackRestore(sp);
    let what = String(err && err.message || err);
    try {
      Module.ccall("web_open", "number", ["string"], [""]);
      what += " (the session was lost: a fresh one has started)";
    } catch (again) {
      what += " (the interpreter could not start again: reload the page)";
    }
    flush();
    postMessage({ id: e.data.id, failed: what });
  }
};

importScripts("wengert.js");
