// SPDX-License-Identifier: GPL-3.0-or-later
// The MCP bench's figures (percentiles, rounding) and its report: the table and targets it prints and the JSON it writes.

import { mkdir, writeFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { dirname } from 'node:path';
import { performance } from 'node:perf_hooks';

function pct(values, p) {
  if (!values.length) return NaN;
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))];
}
export const median = (v) => pct(v, 50);
export const p99 = (v) => pct(v, 99);
export const round = (v, d = 3) => (Number.isFinite(v) ? Number(v.toFixed(d)) : null);
export const stat = (v) => ({ median: round(median(v)), p99: round(p99(v)), n: v.length });
export const bytes = (x) => Buffer.byteLength(JSON.stringify(x));

/**
 * Prints what mcp-bench.mjs measured — one column per server, the peers beside Chaperone, then the
 * targets as ratios — and writes `results`, targets included, to `json`. `t0` is when the run began.
 */
export async function report(results, { json, t0 }) {
  const S = results.servers;
  const cols = ['ours', 'playwright', 'devtools'];
  const head = { ours: 'Chaperone', playwright: 'Playwright MCP', devtools: 'DevTools MCP' };
  const cell = (v) => (v === undefined || v === null || Number.isNaN(v) ? '—' : String(v));
  const fmtMs = (v) => (Number.isFinite(v) ? v.toFixed(v < 10 ? 2 : 1) : '—');
  function line(label, get) {
    console.log(`${label.padEnd(44)} ${cols.map((c) => cell(S[c] ? get(S[c]) : undefined).padStart(16)).join(' ')}`);
  }
  console.log(`\n${''.padEnd(44)} ${cols.map((c) => head[c].padStart(16)).join(' ')}`);
  console.log(`${'-'.repeat(44)} ${cols.map(() => '-'.repeat(16)).join(' ')}`);
  line('a) snapshot bytes (JSON, first page)', (s) => s.snapshot?.bytes);
  line('a) snapshot text chars', (s) => s.snapshot?.text_chars);
  line('a) snapshot ms, median', (s) => fmtMs(s.snapshot?.median));
  line('a) 1st result: shadow / iframe / last order', (s) => s.snapshot && [s.snapshot.sees_shadow, s.snapshot.sees_iframe, s.snapshot.sees_last_order].map((b) => (b ? 'y' : 'n')).join('/'));
  line('b) click + settle ms, median', (s) => fmtMs(s.click?.median));
  line('b) click result bytes', (s) => s.click?.bytes);
  line('b) click result shows the change', (s) => s.click?.reported_change);
  line('   click without snapshot ms, median', (s) => fmtMs(s.click_without_snapshot?.median));
  line('c) fill ms, median', (s) => fmtMs(s.fill?.median));
  line('d) tab list ms, median', (s) => fmtMs(s.tabs?.median));
  line('d) tab list ms, p99', (s) => fmtMs(s.tabs?.p99));
  line('   MCP ping ms, median (no browser)', (s) => fmtMs(s.ping?.median));
  line('e) tools/list bytes', (s) => s.tools_list_bytes);
  line('e) tools', (s) => s.tools);
  line('f) connect ms (spawn + initialize)', (s) => fmtMs(s.connect_ms));
  line('f) connect → first snapshot ms', (s) => fmtMs(s.connect_to_first_snapshot_ms));
  line('f) RSS KiB (server [+ its browser])', (s) => s.rss_kib);
  console.log(`raw CDP Runtime.evaluate (WebSocket, fresh Chromium): median ${fmtMs(results.raw_cdp_evaluate_ms?.median)} ms, p99 ${fmtMs(results.raw_cdp_evaluate_ms?.p99)} ms, n=${results.raw_cdp_evaluate_ms?.n ?? 0}`);
  if (S.ours?.cdp_session_same_browser_ms) {
    console.log(`raw CDP Runtime.evaluate (Playwright CDPSession, the extension's Chromium): median ${fmtMs(S.ours.cdp_session_same_browser_ms.median)} ms`);
  }
  if (S.ours?.reach) {
    const r = S.ours.reach;
    console.log(`Chaperone reach on mcp-large.html: ${r.distinct_refs} distinct refs (${r.distinct_names} names) over ${r.pages} page(s) of ≤ ${r.max_page_chars} chars, `
      + `expected ${r.expected_actionable} actionable; query "Open order 1477" → ${JSON.stringify(r.query_open_order_1477)}`);
  }
  if (S.ours) console.log(`Chaperone chain: ${results.chain}; RSS = engine + relay (the browser is the person's own)`);
  for (const [name, why] of Object.entries(results.skipped)) console.log(`${head[name] ?? name}: skipped: ${why}`);

  // Targets, as ratios (ours / reference); ≤ the bound meets it.
  const peerMin = (get) => {
    const v = ['playwright', 'devtools'].map((c) => (S[c] ? get(S[c]) : NaN)).filter(Number.isFinite);
    return v.length ? Math.min(...v) : NaN;
  };
  const targets = [
    ['snapshot bytes ≤ 1/4 of the smaller peer\'s', S.ours?.snapshot?.bytes, peerMin((s) => s.snapshot?.bytes), 0.25],
    ['click median ≤ 1/3 of the faster peer\'s', S.ours?.click?.median, peerMin((s) => s.click?.median), 1 / 3],
    ['fill median ≤ 1/2 of the faster peer\'s', S.ours?.fill?.median, peerMin((s) => s.fill?.median), 0.5],
    ['tab list median ≤ 3× raw CDP evaluate', S.ours?.tabs?.median, results.raw_cdp_evaluate_ms?.median, 3],
    ['tools/list bytes ≤ 1/2 of Playwright MCP\'s', S.ours?.tools_list_bytes, S.playwright?.tools_list_bytes, 0.5],
  ];
  console.log('\ntargets (ratio = Chaperone / reference)');
  for (const [what, ours, ref, bound] of targets) {
    const ratio = ours / ref;
    const ok = Number.isFinite(ratio) ? (ratio <= bound ? 'met' : 'NOT met') : 'n/a';
    results.targets[what] = { ours: round(ours), reference: round(ref), ratio: round(ratio), bound: round(bound), met: Number.isFinite(ratio) ? ratio <= bound : null };
    console.log(`  ${what.padEnd(46)} ${Number.isFinite(ratio) ? ratio.toFixed(3) : 'n/a'.padStart(5)} (bound ${bound.toFixed(3)}) ${ok}`);
  }
  results.loadavg_end = loadavg().map((l) => round(l, 2));
  console.log(`load average: start ${results.loadavg_start.join(', ')}; end ${results.loadavg_end.join(', ')}; wall ${((performance.now() - t0) / 1000).toFixed(1)} s`);

  try {
    await mkdir(dirname(json), { recursive: true });
    await writeFile(json, `${JSON.stringify(results, null, 2)}\n`);
    console.log(`results: ${json}`);
  } catch (err) {
    console.error(`mcp-bench: could not write ${json}: ${err.message}`);
  }
  console.log(JSON.stringify({ mcp_bench: { targets: results.targets, skipped: results.skipped } }));
}
