#!/usr/bin/env node
// SPDX-License-Identifier: GPL-3.0-or-later
// app-memory-bench.mjs: the real app's memory after real work, with its window open and closed to
// the tray (issue 15's targets: ≤ 60 MB and ≤ 30 MB RSS). Figures, not assertions; not a test.
//
//   node bench/app-memory-bench.mjs [--rows=100000] [--json=PATH]
//
// The session: the app starts on a data folder whose activity log already holds --rows rows
// (written with Python's sqlite3 into the app's own database, as years of use would leave it);
// a real Chromium with the real extension pairs with it (the person's Pair pressed through the
// accessibility tree, as in tests/e2e/mcp.test.mjs); an agent (the official MCP SDK through
// chaperone-mcp) reads every page of the 10,000-element fixture, clicks, fills and snapshots
// again; the person opens the Activity page. Then the app's RSS (from /proc) with the window
// open, after it has been idle for a moment; then the window is closed ("Run in background" on:
// the app stays for the tray) and the RSS again.
//
// Needs a built app (CHAPERONE_APP or build/src/ui/chaperone), chaperone-mcp, Chromium, and the
// display and bus of `xvfb-run -a dbus-run-session --` (bench/run-bench.sh runs it so).

import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
process.env.CHAPERONE_APP ??= join(root, 'build', 'src', 'ui', 'chaperone');
process.env.CHAPERONE_MCP ??= join(root, 'build', 'src', 'relay', 'chaperone-mcp');
process.env.GSETTINGS_SCHEMA_DIR ??= join(root, 'build', 'data');
// The app says when it gave its free heap back (src/core/base/chp-memory.c): the bench waits on that.
process.env.G_MESSAGES_DEBUG = 'chaperone-memory';

const { startFixtureServer } = await import('../tests/fixtures/serve.mjs');
const { atspi, display, startApp, whyNot } = await import('../tests/e2e/app-harness.mjs');
const { Browser, browserWhyNot } = await import('../tests/e2e/browser-harness.mjs');
const H = await import('../tests/e2e/mcp-harness.mjs');
const { until } = await import('../tests/lib/until.mjs');

const run = promisify(execFile);
const opts = { rows: 100000, json: join(root, 'build', 'bench', 'app-memory-bench.json') };
for (const arg of process.argv.slice(2)) {
  let m;
  if ((m = /^--rows=(\d+)$/.exec(arg))) opts.rows = Number(m[1]);
  else if ((m = /^--json=(.+)$/.exec(arg))) opts.json = resolve(m[1]);
  else {
    console.log('usage: node bench/app-memory-bench.mjs [--rows=N] [--json=PATH]');
    process.exit(arg === '--help' || arg === '-h' ? 0 : 2);
  }
}

const why = whyNot() ?? browserWhyNot() ?? H.mcpWhyNot();
if (why) {
  console.log(`app memory bench: skipped: ${why}`);
  process.exit(0);
}
if (readFileSync(process.env.CHAPERONE_APP).includes('__asan_init')) {
  console.log('app memory bench: skipped: the app is built with a sanitizer');
  process.exit(0);
}

/**
 * The RSS of `pid` in KiB, the part of it that is anonymous (the heap's, not the libraries'),
 * and its PSS (shared pages divided among the processes that map them).
 */
function memoryOf(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
  const kib = (text, key) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? NaN);
  return { rss: kib(status, 'VmRSS'), anon: kib(status, 'RssAnon'), file: kib(status, 'RssFile'),
           pss: kib(rollup, 'Pss') };
}

/**
 * Where the RSS is: /proc/<pid>/smaps summed by what is mapped (a library's or font's file name,
 * [heap], [anon] for the rest of the anonymous memory), the `top` largest in KiB, largest first.
 */
function mappingsOf(pid, top = 12) {
  const by = new Map();
  let name = null;
  for (const line of readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
    const head = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (head) {
      const path = head[1].trim();
      name = !path ? '[anon]' : path.startsWith('[') ? path : path.split('/').pop();
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (rss && name) by.set(name, (by.get(name) ?? 0) + Number(rss[1]));
  }
  return [...by.entries()].sort((a, b) => b[1] - a[1]).slice(0, top);
}

/** Waits until the app's RSS stops moving (two readings 250 ms apart within 1%), at most 5 s. */
async function settledMemory(pid) {
  let last = memoryOf(pid);
  const started = Date.now();
  for (;;) {
    await new Promise((r) => setTimeout(r, 250));   // sampling, not waiting for an event
    const now = memoryOf(pid);
    if (Math.abs(now.rss - last.rss) <= last.rss / 100 || Date.now() - started > 5000) return now;
    last = now;
  }
}

/** Adds `rows` activity rows to the app's database (stopped), spread over the last year. */
async function seedActivity(dbPath, rows) {
  const script = `
import sqlite3, sys, random, time
db = sqlite3.connect(sys.argv[1])
now = int(time.time() * 1000)
cats = [("agent", "browser_snapshot"), ("agent", "browser_act"), ("bridge", "browser.context"),
        ("hold", "write"), ("grant", "created"), ("pairing", "paired")]
def gen(n):
    for i in range(n):
        c, m = cats[i % len(cats)]
        yield (now - (n - i) * 300, c, m, "ok" if i % 17 else "error", "d-bench", i % 900,
               None if i % 17 else "target_denied")
db.executemany("INSERT INTO audit (at, category, method, outcome, device_id, duration_ms, error_code)"
               " VALUES (?, ?, ?, ?, ?, ?, ?)", gen(int(sys.argv[2])))
db.commit()
print(db.execute("SELECT COUNT(*) FROM audit").fetchone()[0])
`;
  const { stdout } = await run('python3', ['-c', script, dbPath, String(rows)]);
  return Number(stdout.trim());
}

const figures = { rows: opts.rows };
const sites = await startFixtureServer();
let app = null;
let browser = null;
let agent = null;
try {
  // A first start makes the database; the rows go in while the app is stopped.
  app = await startApp();
  const home = app.home;
  await app.stopKeepingData();
  figures.activityRows = await seedActivity(join(home, 'data', 'chaperone', 'chaperone.db'), opts.rows);
  app = await startApp({ home });
  figures.idleOpen = await settledMemory(app.pid);

  browser = await Browser.launch();
  await browser.setPort(app.port);
  const large = await browser.ctx.newPage();
  await large.goto(`${sites.originA}/mcp-large.html`);
  const compose = await browser.ctx.newPage();
  await compose.goto(`${sites.originA}/mcp-compose.html`);
  const popup = await browser.popup(large);
  const code = await browser.startPairing(popup);
  await atspi('wait-label', display(code));
  await atspi('press', 'Pair');
  await browser.waitForState('connected');
  await browser.grant(popup, { pages: [large, compose], preset: 'control', label: 'Memory bench' });
  await popup.close();

  agent = await H.connectAgent({ name: 'memory-bench', runtimeDir: app.runtimeDir });
  const tabs = await until(async () => {
    const r = H.structuredOf(H.ok(await agent.call('browser_tabs'), 'browser_tabs')).tabs ?? [];
    const find = (path) => r.find((t) => (t.url ?? '').includes(path))?.tab;
    return find('/mcp-large.html') && find('/mcp-compose.html')
      ? { large: find('/mcp-large.html'), compose: find('/mcp-compose.html') } : null;
  }, { timeout: 20000, what: 'both tabs granted' });

  // The 10,000-element session: every page of the large snapshot, twice, and acts on both tabs.
  let pages = 0;
  let bytes = 0;
  for (let round = 0; round < 2; round++) {
    for (let page = 1; ; page++) {
      const r = H.ok(await agent.call('browser_snapshot', { tab: tabs.large, page }), 'snapshot');
      bytes += JSON.stringify(r).length;
      pages++;
      if (!H.nextPageOf(r)) break;
    }
  }
  const snap = H.ok(await agent.call('browser_snapshot', { tab: tabs.compose }), 'compose snapshot');
  const subject = H.nodesOf(snap).find((n) => n.name === 'Subject')?.ref;
  const preview = H.nodesOf(snap).find((n) => n.name === 'Preview')?.ref;
  for (let i = 0; i < 20; i++) {
    H.ok(await agent.call('browser_act', { tab: tabs.compose, ref: subject, action: 'fill', value: `Hello ${i}` }), 'fill');
    H.ok(await agent.call('browser_act', { tab: tabs.compose, ref: preview, action: 'click' }), 'click');
  }
  figures.session = { snapshotPages: pages, snapshotBytes: bytes, acts: 40 };

  // Right after the session, before the app has been idle long enough to trim its heap
  // (src/core/base/chp-memory.c waits 1.5 s after the last large payload).
  const trims = () => app.log.filter((l) => l.includes('trimmed the heap')).length;
  // Trimmed since the last large payload went (it may have been during the session's last acts).
  const trimmedSinceLastPayload = () => {
    const last = app.log.findLastIndex((l) => l.includes('trim soon'));
    return app.log.slice(last + 1).some((l) => l.includes('trimmed the heap'));
  };
  figures.rightAfterSession = memoryOf(app.pid);
  // The person looks at the Activity page with the window open.
  await atspi('page', 'Activity');
  await until(() => trimmedSinceLastPayload(), { timeout: 15000, what: 'the app to trim its heap after the session' });
  figures.afterSessionOpen = await settledMemory(app.pid);
  figures.afterSessionOpen.top = mappingsOf(app.pid);

  // Closed to the tray: the window is destroyed, the app stays, trims its heap and, after a few
  // seconds in the tray, gives back the pages of the libraries only a window uses
  // (chp_memory_page_out_now()). Measured after it served an agent's call from the tray: what
  // that call needs is back in memory.
  const beforeClose = trims();
  const pagedOut = () => app.log.filter((l) => l.includes('paged out')).length;
  const pagedBefore = pagedOut();
  await atspi('press', 'Close');
  await until(() => trims() > beforeClose, { timeout: 15000, what: 'the app to trim its heap after the window closed' });
  await until(() => pagedOut() > pagedBefore, { timeout: 20000, what: 'the app to page out in the tray' });
  H.ok(await agent.call('browser_tabs'), 'the app answers after its window closed');
  figures.afterSessionClosed = await settledMemory(app.pid);
  figures.afterSessionClosed.top = mappingsOf(app.pid);

  // The buffer kept for the next large message goes 30 s after the last one (the chunk
  // timeout): the app as it stays for the rest of the day. Only a message of 1 MiB or more
  // keeps one (the 10,000-element page's snapshot pages are smaller).
  if (app.log.some((l) => l.includes('a large message was parsed'))) {
    const released = () => app.log.findIndex((l) => l.includes('spare buffer was released'));
    await until(() => released() >= 0 && app.log.slice(released()).some((l) => l.includes('trimmed the heap')),
                { timeout: 60000, what: 'the spare buffer to be released and the heap trimmed' });
    figures.settledClosed = await settledMemory(app.pid);
  }
  if (process.env.CHAPERONE_BENCH_PMAP) {
    const { stdout } = await run('pmap', ['-x', String(app.pid)]);
    console.log(stdout.split('\n').filter((l) => /^[0-9a-f]{8}/.test(l))
      .sort((a, b) => Number(b.split(/\s+/)[2]) - Number(a.split(/\s+/)[2])).slice(0, 30).join('\n'));
  }
} catch (err) {
  console.log((app?.log ?? []).filter((l) => l.includes('chaperone-memory')).slice(-20).join('\n'));
  throw err;
} finally {
  await agent?.close().catch(() => {});
  await browser?.close().catch(() => {});
  if (app) {
    const home = app.home;
    await app.stop().catch((e) => console.log(`# ${e.message.split('\n')[0]}`));
    await rm(home, { recursive: true, force: true });
  }
  await sites.close();
}

const mb = (k) => (k / 1024).toFixed(1);
console.log(`\napp memory (RSS; anonymous part in brackets), ${figures.activityRows} activity rows:`);
for (const [label, key, goal] of [['idle, window open', 'idleOpen', null],
                                  ['right after the session (untrimmed)', 'rightAfterSession', null],
                                  ['after the session, window open', 'afterSessionOpen', 60],
                                  ['after the session, closed to the tray', 'afterSessionClosed', 30],
                                  ['… and its spare buffer released', 'settledClosed', 30]]) {
  const m = figures[key];
  if (!m) continue;
  console.log(`  ${label.padEnd(40)} ${mb(m.rss).padStart(7)} MB  (${mb(m.anon)} MB; PSS ${mb(m.pss)} MB)`
              + (goal ? `  goal ≤ ${goal} MB: ${(m.rss / 1024 / goal).toFixed(2)}×` : ''));
}
for (const [label, key] of [['window open', 'afterSessionOpen'], ['closed to the tray', 'afterSessionClosed']]) {
  const top = figures[key]?.top;
  if (top) console.log(`  where, ${label}: ${top.slice(0, 8).map(([n, k]) => `${n} ${mb(k)}`).join(', ')} (MB)`);
}
await mkdir(dirname(opts.json), { recursive: true });
await writeFile(opts.json, JSON.stringify(figures, null, 2));
console.log('json: ' + JSON.stringify(figures));
