// test.mjs: `make test-web`. Drives Debian's chromium, headless, with
// puppeteer-core against the page served as `make web-serve` serves it, as a
// person would use it: typing into the editor and the REPL, clicking Run and
// Stop, choosing from the menus. Then every example and lesson runs in the
// page and in ./wengert, and their outputs must be the same (a picture as
// the text the terminal shows for it). A screenshot after each step goes to
// OUTDIR. Usage: node test.mjs SITE WENGERT OUTDIR [EXAMPLE-FILTER]
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import puppeteer from "puppeteer-core";

const [site, wengert, shots, only] = process.argv.slice(2);
const root = path.resolve(path.dirname(wengert));      // the source tree
const chromium = process.env.CHROMIUM || "/usr/bin/chromium";
fs.rmSync(shots, { recursive: true, force: true });
fs.mkdirSync(shots, { recursive: true });

let passed = 0, failed = 0, shot = 0;
function check(ok, what, detail) {
  if (ok) passed++;
  else failed++;
  console.log(`${ok ? "ok  " : "FAIL"} ${what}${!ok && detail ? "\n" + detail : ""}`);
}

// The site, served with the headers of cross-origin isolation.
const server = spawn("python3", [path.join(path.dirname(new URL(import.meta.url).pathname), "serve.py"), site, "0", "-q"],
  { stdio: ["ignore", "pipe", "inherit"] });
const url = await new Promise((resolve, reject) => {
  server.stdout.on("data", (d) => {
    const m = String(d).match(/serving (http:\S+)/);
    if (m) resolve(m[1]);
  });
  server.on("exit", () => reject(new Error("the server did not start")));
});

const browser = await puppeteer.launch({
  executablePath: chromium,
  headless: true,
  args: ["--no-sandbox", "--disable-dev-shm-usage"],
});

async function snap(name) {
  const file = path.join(shots, `${String(++shot).padStart(2, "0")}-${name}.png`);
  await page.screenshot({ path: file });
}

function runs() { return page.$eval("body", (b) => Number(b.dataset.runs || 0)); }

// Waits for the next run to end (the page counts the runs it finished).
async function finished(before, timeout = 60000) {
  await page.waitForFunction((n) => Number(document.body.dataset.runs || 0) > n, { timeout, polling: 50 }, before);
}

// The last output block's text as the terminal would show it.
function lastBlock(kind) {
  return page.evaluate((kind) => {
    const blocks = document.querySelectorAll(`#output .run.${kind}`);
    const b = blocks[blocks.length - 1];
    if (!b) return null;
    let text = "";
    for (const el of b.children) {
      if (el.classList.contains("echo") || el.classList.contains("result")) continue;
      text += el.classList.contains("picture") ? el.dataset.alt : el.textContent;
    }
    const r = b.querySelector(".result");
    return { text, result: r ? r.textContent : null, errorLine: b.dataset.errorLine, errorCol: b.dataset.errorCol,
      svg: b.querySelectorAll(".picture svg").length, graph: b.querySelectorAll(".picture.graph svg g.node").length };
  }, kind);
}

async function setEditor(text) {
  await page.click(".cm-content");
  await page.keyboard.down("Control");
  await page.keyboard.press("a");
  await page.keyboard.up("Control");
  await page.keyboard.press("Backspace");
    const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    await page.keyboard.type(lines[i]);
    if (i + 1 < lines.length) await page.keyboard.press("Enter");
  }
  return page.evaluate(() => wgEditor.state.doc.toString()).catch(() => null);
}

async function runEditor() {
  const before = await runs();
  await page.keyboard.down("Control");
  await page.keyboard.press("Enter");
  await page.keyboard.up("Control");
  await finished(before);
  return lastBlock("program");
}

async function repl(code, timeout) {
  const before = await runs();
  await page.click("#repl");
  await page.type("#repl", code);
  await page.keyboard.press("Enter");
  await finished(before, timeout);
  return lastBlock("repl");
}

// What ./wengert prints for a file, standard output and error as they
// interleave (both to one file).
function native(args, input) {
  const tmp = path.join(shots, ".native.txt");
  const fd = fs.openSync(tmp, "w");
  spawnSync(path.resolve(wengert), args, {
    cwd: root, stdio: [input === undefined ? "ignore" : "pipe", fd, fd], input, timeout: 300000,
    env: { ...process.env, LANG: "C.UTF-8", LC_ALL: "", LC_CTYPE: "", TERM: "dumb", NO_COLOR: "1",
      WENGERT_STDLIB: path.join(root, "stdlib") },
  });
  fs.closeSync(fd);
  const text = fs.readFileSync(tmp, "utf8");
  fs.rmSync(tmp);
  return text;
}

// The page's and the terminal's outputs, as one: the same text but for
// timings (":time"). Every digit must agree: the maths functions whose
// libm results differ between glibc (the terminal) and musl (the page) are
// wengert's own, src/wmath.c, the same in both (tests/libm/README.md).
const timing = /time: [\d.]+ (?:[µmn]?s)/g;
function same(page, term) {
  return page.replace(timing, "time: T") === term.replace(timing, "time: T");
}

function firstDifference(a, b) {
  const x = a.split("\n"), y = b.split("\n");
  for (let i = 0; i < Math.max(x.length, y.length); i++)
    if (x[i] !== y[i]) return `  line ${i + 1}\n  page:     ${JSON.stringify(x[i])}\n  terminal: ${JSON.stringify(y[i])}`;
  return "";
}

async function run() {
  page = await browser.newPage();
  await page.setViewport({ width: 1280, height: 800 });
  const errors = [];
  page.on("pageerror", (e) => errors.push(e.message));
  await page.goto(url, { waitUntil: "load" });
  await page.waitForSelector("body[data-ready]", { timeout: 30000 });
  const ready = await page.$eval("body", (b) => Number(b.dataset.ready));
  // loads again (as a returning student's: the first also compiles), the
  // best of three (the machine may be busy with other work)
  let again = Infinity;
  for (let i = 0; i < 3; i++) {
    await page.reload({ waitUntil: "load" });
    await page.waitForSelector("body[data-ready]", { timeout: 30000 });
    again = Math.min(again, await page.$eval("body", (b) => Number(b.dataset.ready)));
  }
  console.log(`page ready ${ready} ms after it was asked for (first load), ${again} ms (reload, best of 3)`);
  // (on a machine busy with other work, past a load of 1.5 a core, the time is
  // reported, not checked)
  const load = os.loadavg()[0] / os.cpus().length;
  if (again < 2000 || load < 1.5) check(again < 2000, "the page is ready in under 2 s from a local server", `${again} ms`);
  else console.log(`note: not checked against 2 s: the machine is busy (load ${load.toFixed(1)} a core)`);
  await snap("loaded");

  // type a program, run it, read its value
  const typed = await setEditor("x = 3\ny = x^2 + sin(x)\nd(y, x)");
  check(typed === null || typed === "x = 3\ny = x^2 + sin(x)\nd(y, x)", "the program is typed into the editor", typed);
  let b = await runEditor();
  const want = native(["-e", "x = 3", "-e", "y = x^2 + sin(x)", "-e", "print(d(y, x))"]).trim();
  check(b.result === want, "Ctrl-Enter runs the program and shows its value", `page ${b.result}, terminal ${want}`);
  await snap("program-value");

  // an error shows its place, and the editor marks its line
  await setEditor("a = [1, 2, 3]\nb = a[5]");
  b = await runEditor();
  const marked = await page.$$eval(".cm-error-line", (els) => els.map((e) => e.textContent));
  check(/program\.wg:2:7: error: index 5 out of range/.test(b.text) && b.errorLine === "2" && b.errorCol === "7",
    "an error says its line and column", b.text);
  check(marked.length === 1 && marked[0] === "b = a[5]", "the editor marks the error's line", JSON.stringify(marked));
  await snap("error-place");

  // the REPL works in the program's session; plot draws an SVG
  b = await repl("a");
  check(b.text.trim() === "[1, 2, 3]", "the REPL sees the program's variables", b.text);
  b = await repl("plot(fn(t) => t*sin(t), -3, 3)");
  check(b.svg === 1 && /f′|f'/.test(b.text), "plot draws an SVG in the page", JSON.stringify(b));
  await snap("plot");

  // :tape dot: a graph laid out by Graphviz (viz.js) in the page
  await repl(":reset");
  await repl("x = 2");
  await repl("y = x*x + sin(x)");
  b = await repl(":tape dot y");
  await page.waitForSelector("#output .run.repl:last-child .picture.graph:not(.drawing)", { timeout: 30000 });
  b = await lastBlock("repl");
  check(b.graph >= 4 && /digraph/.test(b.text), ":tape dot draws the tape as a graph", JSON.stringify(b).slice(0, 300));
  await snap("tape-dot");

  // :tape, :tape stats, :help and completion, as in the terminal
  const session = "x = 2\ny = x*x + sin(x)\n";
  b = await repl(":tape");
  check(b.text === native([], session + ":tape\n"), ":tape lists the tape as the terminal does", b.text);
  b = await repl(":tape stats");
  check(b.text === native([], session + ":tape stats\n"), ":tape stats as the terminal", b.text);
  b = await repl(":help");
  check(b.text === native([], ":help\n"), ":help as the terminal", b.text);
  b = await repl(":help grad");
  check(b.text === native([], ":help grad\n"), ":help NAME as the terminal", b.text);
  await page.click("#repl");
  await page.type("#repl", "softp");
  await page.keyboard.press("Tab");
  await page.waitForFunction(() => document.getElementById("repl").value !== "softp", { timeout: 5000 }).catch(() => {});
  let v = await page.$eval("#repl", (e) => e.value);
  check(v === "softplus ", "Tab completes a name", JSON.stringify(v));
  await page.$eval("#repl", (e) => { e.value = ":tape st"; });
  await page.keyboard.press("End");
  await page.keyboard.press("Tab");
  await page.waitForFunction(() => document.getElementById("repl").value !== ":tape st", { timeout: 5000 }).catch(() => {});
  v = await page.$eval("#repl", (e) => e.value);
  check(v === ":tape stats ", "Tab completes a command's word", JSON.stringify(v));
  await page.$eval("#repl", (e) => { e.value = ""; });
  await page.keyboard.press("ArrowUp");
  v = await page.$eval("#repl", (e) => e.value);
  check(v === ":help grad", "up brings back the last input", JSON.stringify(v));
  await page.keyboard.press("ArrowUp");
  await page.keyboard.press("ArrowDown");
  v = await page.$eval("#repl", (e) => e.value);
  check(v === ":help grad", "down goes forward in the history", JSON.stringify(v));
  await page.$eval("#repl", (e) => { e.value = ""; });
  await snap("repl");

  // a posit backend: as in the terminal
  await repl(":backend posit16");
  b = await repl("print(1/3, bits(1/3), d(x^3, x))");
  const posit = native([], ":backend posit16\nx = 2\nprint(1/3, bits(1/3), d(x^3, x))\n").replace(/^backend: .*\n/, "");
  check(b.text === posit, "a posit backend prints as in the terminal", `page ${b.text} terminal ${posit}`);
  await repl(":backend float64");

  // wengert's own tanh, exp, atan, atan2 (src/wmath.c): the nearest doubles,
  // where musl's libm (the page's) or glibc's (the terminal's) is one off
  const maths = "print(tanh(0.4375), tanh(-2.76), exp(5.66), exp(-0.6), atan(28), atan(pi), atan2(1, 10))";
  const mathsWant = "0.41157005567402244 -0.9920202697020118 287.1486425560543 0.5488116360940264 " +
    "1.5350972141155725 1.2626272556789118 0.09966865249116202\n";
  b = await repl(maths);
  check(b.text === mathsWant && native([], maths + "\n") === mathsWant,
    "tanh, exp, atan, atan2 round as in the terminal, to the nearest", `page ${b.text} terminal ${native([], maths + "\n")}`);

  // Stop: an endless loop stops, and the session keeps its variables
  await repl("k = 41");
  const before = await runs();
  await page.type("#repl", "while true { }");
  await page.keyboard.press("Enter");
  await page.waitForFunction(() => document.body.classList.contains("busy"), { timeout: 10000 });
  await new Promise((r) => setTimeout(r, 1000));
  const stillRunning = await page.$eval("body", (e) => e.classList.contains("busy"));
  await snap("running");
  await page.click("#stop");
  await finished(before, 10000);
  b = await lastBlock("repl");
  check(stillRunning && /interrupted/.test(b.text), "Stop interrupts a running loop", b.text);
  b = await repl("k + 1");
  check(b.text.trim() === "42", "the session keeps its variables after Stop", b.text);
  await snap("stopped");

  // deep recursion: past the page's depth (the browser's stack is smaller
  // than a terminal's) a clean error, and the session stays
  await repl("fn f(n) { if n == 0 { return 0 } return 1 + f(n - 1) }");
  b = await repl("f(150)");
  check(b.text.trim() === "150", "recursion 150 calls deep runs", b.text);
  b = await repl("f(5000)");
  check(/error: recursion too deep/.test(b.text), "deeper recursion is an error", b.text.split("\n")[0]);
  b = await repl("k + f(1)");
  check(b.text.trim() === "42", "the session stays after it", b.text);
  // deep nesting in every call: the depth's clean error (since the threaded
  // evaluator needs less stack a call), or, if it still fills the browser's
  // stack, a fresh session that says so; never a dead page
  await repl("fn g(n) { if n == 0 { return 0 } return 1 + (1 + (1 + (1 + (1 + (1 + (1 + (1 + g(n - 1)))))))) }");
  b = await repl("g(240)");
  const fresh = await repl("1 + 1");
  check(/^240\n$/.test(b.text) || (/error: recursion too deep/.test(b.text) && fresh.text === "2\n")
    || (/session was lost: a fresh one has started/.test(b.text) && fresh.text === "2\n"),
    "a stack overflow in the browser leaves a working session", b.text + fresh.text);
  await snap("deep-recursion");

  // the link carries the program
  const program = "# sent by a teacher\nf = fn(t) => t^3\nprint(grad(f)(2), jvp(f, 2, 1))";
  await setEditor(program);
  await page.click("#link");
  const link = page.url();
  check(/#code=/.test(link), "Link puts the program in the URL's fragment", link);
  const other = await browser.newPage();
  await other.setViewport({ width: 1280, height: 800 });
  await other.goto(link, { waitUntil: "load" });
  await other.waitForSelector("body[data-ready]", { timeout: 30000 });
  const got = await other.evaluate(() => wgEditor.state.doc.toString());
  check(got === program, "a link opens with its program in the editor", JSON.stringify(got));
  await other.close();

  // every example and lesson prints as in the terminal
  const menu = await page.$$eval("#examples option, #course option", (os) => os.map((o) => o.value).filter(Boolean));
  check(menu.length >= 30, "the menus list the examples and the lessons", String(menu.length));
  for (const file of menu) {
    if (only && !file.includes(only)) continue;
    const select = file.startsWith("examples/course/") ? "#course" : "#examples";
    await page.select(select, file);
    await page.waitForFunction((f) => wgEditor.state.doc.toString()
      .length > 0 && document.body.dataset.program === f, { timeout: 10000 }, file);
    const t0 = Date.now();
    const count = await runs();
    await page.click("#run");
    await finished(count, 600000);
    const got = await lastBlock("program");
    const want = native([file]);
    const ms = Date.now() - t0;
    check(same(got.text, want), `${file} prints as in the terminal (${ms} ms)`, firstDifference(got.text, want));
    await snap(path.basename(file, ".wg"));
  }
  check(errors.length === 0, "no errors in the page's JavaScript", errors.join("\n"));

  // offline: with the server gone, the page loads from what its service
  // worker kept, and runs programs
  await page.evaluate(() => navigator.serviceWorker.ready.then(() => true));
  server.kill();
  await new Promise((r) => setTimeout(r, 300));
  await page.reload({ waitUntil: "load" });
  const offline = await page.waitForSelector("body[data-ready]", { timeout: 30000 }).then(() => true, () => false);
  if (offline) {
    await setEditor("x = 1\nprint(d(sin(x), x) == cos(x))");
    b = await runEditor();
  }
  check(offline && b.text === "true\n", "the page works offline once loaded", offline ? b.text : "did not load");
  await snap("offline");
}

let page;
try {
  await run();
} catch (e) {
  check(false, "the browser test ran to its end", e.stack);
  if (page) await snap("failed");
} finally {
  await browser.close();
  server.kill();
}
console.log(`browser test: ${passed} passed, ${failed} failed (screenshots in ${shots})`);
process.exit(failed ? 1 : 0);
