// SPDX-License-Identifier: GPL-3.0-or-later
// The extension in real Firefox ESR, end to end (issue 18, item 3): the Firefox build
// (build-aux/make-firefox-extension.py) installed as a temporary add-on, paired with the core
// engine (tests/chaperone-test-engine, the app's core without GTK) by comparing the six digits its
// own popup shows, a tab granted in that popup, and an agent — the official MCP TypeScript SDK
// through the real relay, chaperone-mcp — reading and acting in the tab: snapshot, fill, click,
// read again. Then what must not work in Firefox either: a web page dialling the bridge, a blind
// page (a bank's host, a sign-in form) read. Firefox is driven over WebDriver BiDi
// (firefox-harness.mjs); nothing here reaches into the extension to do what a person does.

import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { after, before } from 'node:test';

import { startFixtureServer } from '../fixtures/serve.mjs';
import { Firefox, firefoxWhyNot } from './firefox-harness.mjs';
import { firefoxSuite } from './firefox-suite.mjs';
import * as H from './mcp-harness.mjs';

const ENGINE = process.env.CHAPERONE_TEST_ENGINE;
const skip = firefoxWhyNot() ?? H.mcpWhyNot()
  ?? (!ENGINE ? 'CHAPERONE_TEST_ENGINE is not set (meson sets it)' : null)
  ?? (!existsSync(ENGINE) ? `no engine harness at ${ENGINE}` : null)
  ?? false;
if (skip) console.log(`# skipped: ${skip}`);

// Blind by the built-in floor ("bank" in the host); Firefox resolves it to loopback (the pref
// network.dns.localDomains, set by the harness), where the fixture server answers any name.
const BANK = 'mybank.test';

const { W, step, teardown } = firefoxSuite({ skip });

const refOf = (result, name) => H.refLines(H.textOf(result)).find((l) => l.name === name)?.ref;

before(async () => {
  if (skip) return;
  W.sites = await startFixtureServer();
  W.world = await H.startEngineWithAgents();
  W.engine = W.world.engine;
  W.ff = await Firefox.launch({ localDomains: [BANK] });
  await W.ff.setPort(W.engine.port);
  W.pages.compose = await W.ff.newPage(`${W.sites.originA}/mcp-compose.html`, 'compose');
  W.pages.login = await W.ff.newPage(`${W.sites.originA}/login.html`, 'login');
  const bankPort = new URL(W.sites.originA).port;
  W.pages.bank = await W.ff.newPage(`http://${BANK}:${bankPort}/forms.html?bank`, 'bank');
  W.pages.ungranted = await W.ff.newPage(`${W.sites.originA}/forms.html?grant=none`, 'ungranted');
  W.popup = await W.ff.popup(W.pages.compose);
}, { timeout: 90000 });

after(teardown, { timeout: 30000 });

step('pairing: the popup and the app show the same six digits; the app sees the moz-extension origin and Firefox', async () => {
  const { engine, ff } = W;
  assert.match(ff.origin, /^moz-extension:\/\/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
  const mark = engine.mark();
  const code = await ff.startPairing(W.popup);
  const pairing = await engine.waitFor({ event: 'pairing' }, { after: mark, timeoutMs: 15000 });
  assert.equal(pairing.code.replace(/\D/g, ''), code, 'the app shows the code the popup shows');
  assert.equal(pairing.origin, ff.origin, 'the origin the app shows is the extension\'s own');
  engine.approve(pairing.requestId);
  assert.equal((await engine.waitFor({ event: 'pairing-ended', requestId: pairing.requestId },
    { after: mark, timeoutMs: 10000 })).outcome, 'approved');
  W.deviceId = (await engine.waitFor({ event: 'device-online' }, { after: mark, timeoutMs: 20000 })).deviceId;
  await ff.waitForState('connected');
  const device = await engine.device(W.deviceId);
  assert.equal(device?.origin, ff.origin, JSON.stringify(device));
  assert.match(device?.name ?? '', /Firefox/, `the device is named after its browser: ${JSON.stringify(device)}`);
});

step('reconnect: the extension comes back on its own and authenticates from the origin it paired from', async () => {
  const { engine, ff } = W;
  const mark = engine.mark();
  await ff.bg(async () => { (await bgPage()).chaperone.bridge.restart(); });
  const online = await engine.waitFor({ event: 'device-online', deviceId: W.deviceId }, { after: mark, timeoutMs: 20000 });
  assert.equal(online.deviceId, W.deviceId, 'the same device, not a new pairing');
  await ff.waitForState('connected');
  assert.equal(engine.events.slice(mark).filter((e) => e.event === 'pairing').length, 0, 'no pairing asked');
});

step('a grant made in the popup; the agent lists the granted tabs and only those', async () => {
  const { ff } = W;
  await ff.grant(W.popup, { pages: [W.pages.compose, W.pages.login, W.pages.bank], preset: 'control',
                            label: 'Firefox task' });
  const listed = await W.engine.command({ cmd: 'grants' });
  assert.deepEqual(listed.result.map((g) => g.label), ['Firefox task'], 'the app mirrors the grant');
  W.agent = await H.connectAgent({ name: 'firefox-e2e', socket: W.world.socket });
  const r = H.ok(await W.agent.call('browser_tabs'), 'browser_tabs');
  const tabs = H.structuredOf(r).tabs ?? [];
  const find = (part) => tabs.find((t) => (t.url ?? '').includes(part))?.tab;
  W.tabs.compose = find('/mcp-compose.html');
  W.tabs.login = find('/login.html');
  W.tabs.bank = find(BANK);
  assert.ok(W.tabs.compose && W.tabs.login && W.tabs.bank, JSON.stringify(tabs));
  assert.equal(tabs.some((t) => (t.url ?? '').includes('grant=none')), false, 'an ungranted tab is not listed');
  assert.equal(tabs.find((t) => t.tab === W.tabs.compose).title, 'Compose fixture');
});

step('the agent snapshots, fills and clicks in Firefox, and reads what the page did', async () => {
  const { agent } = W;
  const page = W.pages.compose;
  // In front, as the person's tab being worked in is: Firefox runs a background tab's timers at
  // most once a second, and the page's own 30 ms timer is what the click sets off.
  await page.bringToFront();
  const snap = H.ok(await agent.call('browser_snapshot', { tab: W.tabs.compose }), 'snapshot');
  const text = H.textOf(snap);
  for (const name of ['Search mail', 'Subject', 'Message', 'Save draft', 'Preview']) {
    assert.ok(refOf(snap, name), `a ref for "${name}" in:\n${text}`);
  }
  assert.ok(H.onlyInsideUntrusted(text, 'No draft yet'), 'page text only inside the untrusted wrapper');

  const events = await page.evaluate(() => window.__inputEvents);
  H.ok(await agent.call('browser_act', { tab: W.tabs.compose, ref: refOf(snap, 'Subject'), action: 'fill',
                                         value: 'Quarterly report' }), 'fill');
  assert.equal(await page.$eval('#subject', (el) => el.value), 'Quarterly report');
  assert.ok(await page.evaluate(() => window.__inputEvents) > events, 'the page saw input events');

  const clicked = H.ok(await agent.call('browser_act', { tab: W.tabs.compose, ref: refOf(snap, 'Preview'),
                                                         action: 'click' }), 'click');
  assert.equal(clicked.structuredContent?.ok, true, JSON.stringify(clicked.structuredContent));
  assert.equal(clicked.structuredContent?.changes?.textChanged, true, 'the click waited for the page to settle');
  assert.equal(await page.evaluate(() => window.__previews), 1, 'the page ran its click handler once');

  const after = H.textOf(H.ok(await agent.call('browser_snapshot', { tab: W.tabs.compose }), 'snapshot after'));
  assert.match(after, /Preview \(1\)/, after);
  assert.ok(H.onlyInsideUntrusted(after, 'Preview (1)'), 'still as page text');

  // Save draft writes with the person's login and no plan covers it: held for the person.
  const saves = await page.evaluate(() => window.__draftSaves ?? 0);
  const held = await agent.call('browser_act', { tab: W.tabs.compose, ref: refOf(snap, 'Save draft'), action: 'click' });
  assert.match(JSON.stringify(held.structuredContent), /held/i, JSON.stringify(held.structuredContent));
  assert.equal(await page.evaluate(() => window.__draftSaves ?? 0), saves, 'nothing was saved');
});

step('the floor holds in Firefox: a bank\'s host and a page showing a password field are refused', async () => {
  const { agent } = W;
  const bank = await agent.call('browser_snapshot', { tab: W.tabs.bank });
  assert.equal(H.errorCode(bank), 'refused_floor', JSON.stringify(bank.structuredContent));
  assert.ok(!H.textOf(bank).includes('Save profile'), 'nothing of the page came back');
  const login = await agent.call('browser_snapshot', { tab: W.tabs.login });
  assert.equal(H.errorCode(login), 'refused_floor', JSON.stringify(login.structuredContent));
});

step('a web page in Firefox cannot open the bridge: no socket opens, no pairing starts', async () => {
  const { engine } = W;
  const page = await W.ff.newPage(`${W.sites.originA}/index.html`, 'attacker');
  const mark = engine.mark();
  const results = await page.evaluate(async ({ port, paths }) => {
    const dial = (path) => new Promise((resolve) => {
      const ws = new WebSocket(`ws://127.0.0.1:${port}${path}`);
      const got = [];
      ws.onopen = () => {
        got.push('open');
        ws.send(JSON.stringify({ type: 'pair_request', protocol: 1, client: 'evil', browser: 'Evil' }));
      };
      ws.onmessage = (e) => got.push(String(e.data).slice(0, 200));
      ws.onerror = () => got.push('error');
      ws.onclose = (e) => resolve({ path, got, code: e.code });
    });
    const out = [];
    for (const path of paths) out.push(await dial(path));
    return out;
  }, { port: engine.port, paths: ['/pairing', '/pairing/', '/pairing/x', '/extension', '/extension/', '/'] });
  await page.close();
  for (const r of results) {
    assert.ok(!r.got.includes('open'), `${r.path} opened from a web page: ${JSON.stringify(r)}`);
    assert.ok(!r.got.some((m) => m.includes('engineId')), `${r.path} said the engineId`);
  }
  assert.equal(engine.events.slice(mark).filter((e) => e.event === 'pairing').length, 0, 'no pairing window');
  // And the paired Firefox is still served.
  H.ok(await W.agent.call('browser_tabs'), 'browser_tabs after the attack');
});
