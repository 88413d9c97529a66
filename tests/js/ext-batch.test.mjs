// SPDX-License-Identifier: GPL-3.0-or-later
// browser.batch through the router over a fake chrome.* (fake-chrome.mjs, the webRequest fake of
// ext-capture-harness.mjs): the steps run in order, each through the single method's own code (the
// page agent's ops, the page's fetch), with nothing sent anywhere between them; an element named
// by role and name is the one visible such element, else the batch halts there; a held click or
// API write halts the batch at that step with a hold the person's Approve knows, and nothing of it
// was sent; a Stop halts it; a plan lends itself to no more writes than the person approved; and
// a step the batch cannot run is refused before any step runs.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { Router } from '../../extension/lib/router.js';
import { fakeWebRequest, request } from './ext-capture-harness.mjs';
import { eventLog, fakeClock, inertTimers, makeFakeChrome } from './fake-chrome.mjs';

const TOKEN = 'sk_live_51HdistinctiveKey0000';
const HELD = { kind: 'outward', reason: 'label', word: 'send', control: 'Send', site: 'https://app.example',
  fields: [], canonical: '{"c":1}' };

/** The page of tab 1: a form with a Title field, Save and Send buttons, a hidden second Save. */
const NODES = [{ ref: 'e4', role: 'textbox', name: 'Title', state: {} },
  { ref: 'e1', role: 'button', name: 'Save', state: {} }, { ref: 'e2', role: 'button', name: 'Send', state: {} },
  { ref: 'e5', role: 'button', name: 'Save', state: { hidden: true } },
  { ref: 'e6', role: 'link', name: 'Help' }, { ref: 'e7', role: 'link', name: ' help ' }];

function pageAgent(s) {
  return async (op, args) => {
    s.ops.push({ op, args: structuredClone(args) });
    if (op === 'context') {
      return { ok: true, value: { url: 'https://app.example/inbox', title: 'Inbox', text: '', headings: [],
        forms: [{ ref: 'e3', name: 'new', fields: [{ ref: 'e4', role: 'textbox', name: 'Title', filled: false }] }],
        nodes: NODES } };
    }
    if (op === 'find') {
      // As content/page-act.js's opFind: the rendered nodes with that role and name, any case and spacing.
      const same = (a, b) => a.replace(/\s+/g, ' ').trim().toLowerCase() === b.replace(/\s+/g, ' ').trim().toLowerCase();
      const hits = NODES.filter((n) => n.role === args.role && same(n.name, args.name) && !n.state?.hidden);
      return { ok: true, value: hits.length === 1 ? { ref: hits[0].ref } : { count: hits.length } };
    }
    if (op === 'action') {
      // onAction may answer for the page (a refusal) instead of acting.
      const answer = await s.onAction?.(args);
      if (answer) return answer;
      if (args.ref === 'e2' && args.action === 'click') return { ok: true, value: { held: HELD } };
      return { ok: true, value: { done: true, changes: { added: 0, removed: 0 } } };
    }
    if (op === 'waitText') return { ok: true, value: { found: args.text === 'Saved' } };
    return { ok: true, value: {} };
  };
}

async function batchSetup({ preset = 'control', extras = ['browser.network.read', 'browser.api.call'],
  url = 'https://app.example/inbox' } = {}) {
  const s = { ops: [], calls: [] };
  const fake = makeFakeChrome({ pageRun: pageAgent(s) });
  const wr = fakeWebRequest();
  fake.chrome.webRequest = wr;
  fake.addTab({ id: 1, url, title: 'App', active: true });
  const router = new Router({ chrome: fake.chrome, emit: (s.emit = eventLog()), now: fakeClock(), timers: inertTimers() });
  await router.load();
  const reply = await router.onPopupMessage({ type: 'popup.createGrant', tabs: [{ tabId: 1, frameIds: [] }],
    preset, extras, durationMin: 15, label: 'Batch task' });
  assert.equal(reply.ok, true, JSON.stringify(reply));
  // The page's fetch (api.js's pageFetch), answering each call with `reply` and remembering it.
  s.reply = { status: 200, ok: true, contentType: 'application/json', size: 40, truncated: false, ms: 2,
    json: { id: 7, title: 'Harbour', apiKey: TOKEN } };
  const pageOps = fake.chrome.scripting.executeScript;
  // A batch's consecutive reads come as one {list}: the page makes them together and keeps the
  // answers up to the first that failed, as api-fetch.js does.
  s.visits = 0;
  fake.chrome.scripting.executeScript = async (inject) => {
    if (inject.func?.name !== 'pageFetch') return pageOps(inject);
    s.visits += 1;
    const fetchOne = (req) => {
      s.calls.push(structuredClone(req));
      s.ops.push({ op: 'fetch', args: { method: req.method, url: req.url } });
      return structuredClone(s.replyFor?.(req) ?? s.reply);
    };
    const arg = inject.args[0];
    let result;
    if (Array.isArray(arg.list)) {
      const all = arg.list.map(fetchOne);
      const failed = all.findIndex((r) => r.error || !r.ok);
      result = { list: failed < 0 ? all : all.slice(0, failed + 1) };
    } else {
      result = fetchOne(arg);
    }
    return [{ frameId: 0, documentId: inject.target.documentIds?.[0], result }];
  };
  request(wr, { url: 'https://app.example/api/notes', documentId: fake.frame(1, 0).documentId });
  return Object.assign(s, { fake, router });
}

const batch = (s, steps, extra = {}) => s.router.handle('browser.batch', { tabId: 1, frameId: 0, steps, ...extra });
const read = (id) => ({ api: { method: 'GET', url: `https://app.example/api/notes/${id}`, credential: { kind: 'cookie' } } });
const opsOf = (s, ...names) => s.ops.filter((o) => names.includes(o.op)).map((o) => o.op);

test('the steps run in order in one request, each as its single method runs it', async () => {
  const s = await batchSetup();
  const r = await batch(s, [
    { act: { target: { role: 'textbox', name: 'Title' }, action: 'setValue', value: 'Harbour' } },
    { act: { target: { role: 'button', name: 'save' }, action: 'click' } },
    { wait: { text: 'Saved', timeoutMs: 2000 } },
    read(7),
  ]);
  assert.equal(r.done, 4);
  assert.equal(r.of, 4);
  assert.equal(r.halted, undefined);
  assert.deepEqual(r.steps.map((x) => x.ok), [true, true, true, true]);
  // The element named by role and name is the one visible such element, found when its step ran.
  assert.deepEqual(opsOf(s, 'context', 'find', 'action', 'waitText', 'fetch'),
    ['find', 'action', 'find', 'action', 'waitText', 'fetch'], 'the page looks for it; no whole capture');
  const acts = s.ops.filter((o) => o.op === 'action').map((o) => [o.args.ref, o.args.action]);
  assert.deepEqual(acts, [['e4', 'setValue'], ['e1', 'click']], 'the visible Save, never the hidden one');
  const captures = new Set(s.ops.filter((o) => o.op === 'find').map((o) => o.args.captureId));
  assert.equal(captures.size, 1, 'one capture id per batch: the agent\'s own captures stay in the page');
  assert.equal(s.calls[0].method, 'GET');
  assert.equal(r.steps[3].status, 200);
  assert.match(r.steps[3].data, /"title":"Harbour"/);
  assert.ok(!JSON.stringify(r).includes(TOKEN), 'a reply comes back redacted');
  assert.equal(s.router.stepOf(1), 1, 'one request, one step of the pill');
});

test('a wait right after an act is answered with the act when its text shows then; else it waits itself', async () => {
  const s = await batchSetup();
  // As content/page-act.js: a settled act answers whether the text of the wait after it shows.
  s.onAction = async (args) => (args.untilText === undefined || args.ref === 'e2' ? null
    : { ok: true, value: { done: true, changes: { added: 1, removed: 0 }, untilFound: args.untilText === 'Saved' } });
  const r = await batch(s, [
    { act: { target: { role: 'button', name: 'save' }, action: 'click' } },
    { wait: { text: 'Saved', timeoutMs: 2000 } },
    { act: { target: { role: 'textbox', name: 'Title' }, action: 'setValue', value: 'Harbour' } },
    { wait: { text: 'Draft kept', timeoutMs: 0 } },
  ]);
  assert.deepEqual(opsOf(s, 'find', 'action', 'waitText'), ['find', 'action', 'find', 'action', 'waitText'],
    'the first wait took no visit of its own; the second, whose text did not show, did');
  assert.deepEqual(s.ops.filter((o) => o.op === 'action').map((o) => o.args.untilText), ['Saved', 'Draft kept']);
  assert.deepEqual(r.steps.slice(0, 3).map((x) => x.ok), [true, true, true]);
  assert.equal(r.steps[1].ms, 0);
  assert.equal(r.done, 3);
  assert.equal(r.halted.step, 4);
  assert.equal(r.halted.code, 'timeout');
  assert.ok(!JSON.stringify(r).includes('untilFound'), 'the page\'s word stays in the worker');

  // A held act: the batch halts there; the wait after it is neither done nor visited.
  const held = await batch(s, [
    { act: { target: { role: 'button', name: 'Send' }, action: 'click' } },
    { wait: { text: 'Saved', timeoutMs: 2000 } },
  ]);
  assert.equal(held.held, true);
  assert.equal(held.done, 0);
  assert.equal(held.halted.step, 1);
  assert.equal(held.steps.length, 1);
});

test('a later step with the same target acts on the element found before, once the page checked it', async () => {
  const s = await batchSetup();
  const fill = (v) => ({ act: { target: { role: 'textbox', name: 'title' }, action: 'setValue', value: v } });
  const r = await batch(s, [fill('a'), { wait: { text: 'Saved', timeoutMs: 2000 } }, fill('b'), fill('c')]);
  assert.equal(r.done, 4);
  assert.deepEqual(opsOf(s, 'find', 'action', 'waitText'), ['find', 'action', 'waitText', 'action', 'action'],
    'one look at the page for three steps that name the same element');
  const acts = s.ops.filter((o) => o.op === 'action').map((o) => o.args);
  assert.deepEqual(acts.map((a) => [a.ref, a.value]), [['e4', 'a'], ['e4', 'b'], ['e4', 'c']]);
  assert.equal(acts[0].sameAs, undefined, 'the first was found by the page for its step');
  assert.deepEqual(acts[1].sameAs, { role: 'textbox', name: 'title' }, 'the page checks role and name again');

  // The page says the element is no longer that one: the step looks again, then acts once.
  s.ops.length = 0;
  let refusals = 0;
  s.onAction = (args) => (args.sameAs && refusals++ === 0
    ? { ok: false, error: { code: 'stale_node', message: 'that element is no longer the one the step names' } } : null);
  const again = await batch(s, [fill('d'), fill('e')]);
  s.onAction = null;
  assert.equal(again.done, 2, JSON.stringify(again));
  assert.deepEqual(opsOf(s, 'find', 'action'), ['find', 'action', 'action', 'find', 'action'],
    'a refused check costs a new look, and the act runs once');
});

test('consecutive reads go to the page together; the page stops at the first that fails', async () => {
  const s = await batchSetup();
  const r = await batch(s, [...Array.from({ length: 12 }, (_, i) => read(i)), { wait: { text: 'Saved' } },
    read(12), read(13)]);
  assert.equal(r.done, 15);
  assert.equal(s.calls.length, 14);
  assert.equal(s.visits, 2, 'twelve reads in one visit to the page; after the wait, two more in another');
  assert.ok(r.steps.filter((x, i) => i !== 12).every((x) => x.status === 200 && /Harbour/.test(x.data)));

  s.calls.length = 0;
  s.ops.length = 0;
  s.replyFor = (req) => (req.url.endsWith('/3')
    ? { status: 500, ok: false, contentType: 'application/json', size: 2, truncated: false, ms: 1, json: {} } : null);
  const failed = await batch(s, [read(1), read(2), read(3), read(4), read(5), { wait: { text: 'Saved' } }]);
  assert.deepEqual([failed.done, failed.halted.step, failed.halted.code], [2, 3, 'target_denied']);
  assert.match(failed.halted.message, /answered 500/);
  assert.equal(failed.steps.length, 3, 'the answers of reads 4 and 5 are dropped, unread');
  assert.equal(opsOf(s, 'waitText').length, 0, 'no step after the failure runs');

  s.calls.length = 0;
  const refused = await batch(s, [read(1), { api: { method: 'GET', url: 'https://evil.example/api/x' } }, read(2)]);
  assert.deepEqual([refused.done, refused.halted.step, refused.halted.code], [1, 2, 'target_denied']);
  assert.match(refused.halted.message, /already talks to/);
  assert.equal(s.calls.length, 1, 'only the read before the refused one');
});

test('a step that fails halts the batch there and says which; no later step runs', async () => {
  const s = await batchSetup();
  const r = await batch(s, [read(1), { act: { target: { role: 'button', name: 'Publish' }, action: 'click' } }, read(2)]);
  assert.equal(r.done, 1);
  assert.deepEqual(r.halted.step, 2);
  assert.equal(r.halted.code, 'stale_node');
  assert.match(r.halted.message, /No visible button named "Publish"/);
  assert.equal(s.calls.length, 1, 'step 3 never ran');
  const two = await batch(s, [{ act: { target: { role: 'link', name: 'Help' }, action: 'click' } }]);
  assert.equal(two.halted.code, 'stale_node', 'two alike: no guess');
  assert.equal(opsOf(s, 'action').length, 0);
  s.reply = { status: 404, ok: false, contentType: 'application/json', size: 2, truncated: false, ms: 1, json: {} };
  const missing = await batch(s, [read(9), read(10)]);
  assert.deepEqual([missing.halted.step, missing.halted.code, missing.steps[0].ok], [1, 'target_denied', false]);
  assert.match(missing.halted.message, /answered 404/);
  // The site's status goes with the failed step, so the app counts the endpoint's miss as it
  // does for a single call; no reply at all is 0.
  assert.equal(missing.steps[0].status, 404);
  s.reply = { error: 'network', message: 'Failed to fetch' };
  const gone = await batch(s, [read(11)]);
  assert.deepEqual([gone.halted.code, gone.steps[0].status], ['target_denied', 0]);
});

test('a batch keeps a single act\'s checks as it goes: the floor after a URL move, the time it has', async () => {
  // A click whose page moved its URL (a pushState) onto a hands-only page: the next act is
  // refused there, as a single act would be, and never reaches the page.
  const s = await batchSetup({ url: 'https://github.com/acme/tools' });
  s.onAction = (args) => {
    if (args.ref !== 'e1') return null;
    s.fake.frame(1, 0).url = 'https://github.com/settings/profile';
    return { ok: true, value: { done: true, changes: { added: 3, removed: 0, urlChanged: true } } };
  };
  const r = await batch(s, [
    { act: { target: { role: 'button', name: 'Save' }, action: 'click' } },
    { act: { target: { role: 'textbox', name: 'Title' }, action: 'setValue', value: 'x' } },
  ]);
  assert.deepEqual([r.done, r.halted.step, r.halted.code], [1, 2, 'refused_floor']);
  assert.deepEqual(s.ops.filter((o) => o.op === 'action').map((o) => o.args.ref), ['e1'], 'the fill never ran');

  // An act starts only with time enough to answer before the app stops waiting; an API call gets
  // the time left, not its own 30 s.
  const t = await batchSetup();
  const late = await batch(t, [{ act: { target: { role: 'button', name: 'Save' }, action: 'click' } }], { deadlineMs: 1000 });
  assert.deepEqual([late.done, late.halted.step, late.halted.code], [0, 1, 'timeout']);
  assert.equal(opsOf(t, 'action').length, 0);
  await batch(t, [read(1)], { deadlineMs: 1000 });
  assert.ok(t.calls[0].timeoutMs <= 3000, `the read may take ${t.calls[0].timeoutMs} ms`);
});

test('a click that only opened an editor spends no step of the plan', async () => {
  const s = await batchSetup();
  s.onAction = (args) => (args.ref === 'e1'
    ? { ok: true, value: { done: true, changes: { added: 1, removed: 0 }, plan: { planId: 'plan-1', site: 'app.example', opens: true } } }
    : null);
  s.reply = { status: 204, ok: true, contentType: null, size: 0, truncated: false, ms: 1 };
  const allow = { planId: 'plan-1', sites: ['app.example'], step: 1, of: 1, left: { 'app.example': 1 } };
  const r = await batch(s, [{ act: { target: { role: 'button', name: 'Save' }, action: 'click' } },
    { api: { method: 'PUT', url: 'https://app.example/api/notes/1', body: { text: 'x' } } }], { allow });
  assert.equal(r.held, undefined, 'the plan\'s one step is left for the write');
  assert.deepEqual([r.done, s.calls.filter((c) => c.method === 'PUT').length], [2, 1]);
});

test('a held click halts the batch at its step; the hold is the person\'s, as a single act\'s', async () => {
  const s = await batchSetup();
  const r = await batch(s, [read(1), { act: { target: { role: 'button', name: 'Send' }, action: 'click' } }, read(2)]);
  assert.equal(r.done, 1);
  assert.equal(r.held, true);
  assert.deepEqual([r.halted.step, r.halted.code], [2, 'held']);
  assert.equal(r.steps[1].held, true);
  const h = s.router.holds.get(r.hold.holdId);
  assert.deepEqual([h.state, h.ref, h.action, h.tabId], ['held', 'e2', 'click', 1]);
  assert.equal(s.emit.named('hold.changed').at(-1).holdId, r.hold.holdId, 'the app hears of it as of any hold');
  assert.equal(s.calls.length, 1, 'step 3 never ran');
});

test('a held API write halts the batch and sends nothing; a plan covers only the writes left', async () => {
  const s = await batchSetup();
  const send = { api: { method: 'POST', url: 'https://app.example/api/messages', body: { to: 'ann@example.com', text: 'hi' } } };
  const r = await batch(s, [read(1), send, read(2)]);
  assert.equal(r.held, true);
  assert.equal(r.hold.control, 'POST /api/messages');
  assert.deepEqual(s.calls.map((c) => c.method), ['GET'], 'nothing of the message was sent');

  // A GET that deletes is no read: it does not go with the reads around it, and it is held.
  s.calls.length = 0;
  const visits = s.visits;
  const trash = { api: { method: 'GET', url: 'https://app.example/api/notes/4?action=trash' } };
  const t = await batch(s, [read(1), trash, read(2)]);
  assert.deepEqual([t.held, t.done, t.halted.step, t.hold.kind], [true, 1, 2, 'delete']);
  assert.deepEqual(s.calls.map((c) => c.url), ['https://app.example/api/notes/1'], 'only the read before it');
  assert.equal(s.visits, visits + 1);

  const note = (id) => ({ api: { method: 'PUT', url: `https://app.example/api/notes/${id}`, body: { text: 'x' } } });
  s.reply = { status: 204, ok: true, contentType: null, size: 0, truncated: false, ms: 1 };
  const allow = { planId: 'plan-1', sites: ['app.example'], step: 1, of: 3, left: { 'app.example': 1 } };
  const planned = await batch(s, [note(1), note(2)], { allow });
  assert.equal(planned.steps[0].ok, true);
  assert.deepEqual(planned.steps[0].plan, { planId: 'plan-1', site: 'app.example', step: 1, of: 3 });
  assert.equal(planned.held, true, 'the person approved one step on this site: the second write is held');
  assert.deepEqual([planned.halted.step, s.calls.filter((c) => c.method === 'PUT').length], [2, 1]);
});

test('a Stop halts the batch: the step running is aborted, none after it starts', async () => {
  const s = await batchSetup();
  s.onAction = async (args) => {
    if (args.ref === 'e4') await s.router.stop('page');
  };
  const r = await batch(s, [
    { act: { target: { role: 'textbox', name: 'Title' }, action: 'setValue', value: 'x' } },
    { act: { target: { role: 'button', name: 'Save' }, action: 'click' } },
  ]);
  assert.equal(r.halted.code, 'stopped');
  assert.ok(r.halted.step <= 2);
  assert.equal(opsOf(s, 'action').length, 1, 'the click never ran');
  await assert.rejects(batch(s, [read(1)]), { code: 'stopped' });
});

test('what a batch cannot run is refused before any step runs', async () => {
  const s = await batchSetup();
  const refused = async (code, steps, extra) => {
    await assert.rejects(batch(s, steps, extra), { code }, JSON.stringify(steps).slice(0, 120));
  };
  await refused('invalid_params', [{ act: { target: { role: 'button', name: 'Save' }, action: 'click' }, wait: { text: 'x' } }]);
  await refused('invalid_params', [read(1), { act: { action: 'setValue' } }]);
  await refused('invalid_params', [read(1), { act: { target: { role: 'button', name: 'Save' }, action: 'press', key: 'Enter Enter' } }]);
  await refused('invalid_params', [read(1), { wait: { text: 'x', timeoutMs: 60000 } }]);
  await refused('invalid_params', [read(1), { api: { method: 'GET', url: 'https://app.example/x', body: {} } }]);
  await refused('invalid_params', Array.from({ length: 51 }, () => read(1)));
  await refused('invalid_params', [read(1)], { allow: { planId: 'p', sites: ['app.example'], left: { 'evil.example': 3 } } });
  assert.equal(s.calls.length, 0);

  const reader = await batchSetup({ preset: 'read' });
  await assert.rejects(batch(reader, [read(1), { act: { target: { role: 'button', name: 'Save' }, action: 'click' } }]),
    { code: 'scope_denied' });
  assert.equal(reader.calls.length, 0, 'not even the read ran');
});
