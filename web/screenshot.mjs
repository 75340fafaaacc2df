// screenshot.mjs: docs/web.png, the README's picture of the page (run from
// the tree after `make web`: node web/screenshot.mjs). The page, served as
// `make web-serve` serves it, after its starting program ran and the REPL
// drew the tape of y.
import { spawn } from "node:child_process";
import path from "node:path";
import puppeteer from "puppeteer-core";

const web = path.dirname(new URL(import.meta.url).pathname);
const server = spawn("python3", [path.join(web, "serve.py"), path.join(web, "../build/web"), "0", "-q"],
  { stdio: ["ignore", "pipe", "inherit"] });
const url = await new Promise((resolve) => server.stdout.on("data", (d) => {
  const m = String(d).match(/serving (http:\S+)/);
  if (m) resolve(m[1]);
}));
const browser = await puppeteer.launch({ executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  headless: true, args: ["--no-sandbox"] });
try {
  const page = await browser.newPage();
  await page.setViewport({ width: 1280, height: 760 });
  await page.goto(url, { waitUntil: "load" });
  await page.waitForSelector("body[data-ready]");
  const runs = () => page.$eval("body", (b) => Number(b.dataset.runs || 0));
  let n = await runs();
  await page.click("#run");
  await page.waitForFunction((n) => Number(document.body.dataset.runs) > n, {}, n);
  n = await runs();
  await page.type("#repl", ":tape dot y");
  await page.keyboard.press("Enter");
  await page.waitForFunction((n) => Number(document.body.dataset.runs) > n, {}, n);
  await page.waitForSelector(".picture.graph svg");
  await page.type("#repl", "d(y, x@1)");
  await page.$eval("#output", (o) => { o.scrollTop = o.scrollHeight; });
  await page.screenshot({ path: path.join(web, "../docs/web.png") });
} finally {
  await browser.close();
  server.kill();
}
