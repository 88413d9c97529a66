// SPDX-License-Identifier: GPL-3.0-or-later
// The fake page agent, router setup and waits the ext-router-*.test.mjs files share.
// The router end to end over a fake chrome.*: the order of the checks, Stop (set before anything is
// awaited), Resume only by the person, refs and captures, steps and the pill, handoffs, and the
// handlers' results.

import assert from 'node:assert/strict';
import { ChaperoneError, Router } from '../../extension/lib/router.js';
import { eventLog, fakeClock, inertTimers, makeFakeChrome } from './fake-chrome.mjs';
import { watch } from '../lib/until.mjs';

// The router does some of its work a task later (the pill is drawn after the call that moved the
// step; a closed tab's cleanup awaits storage). Tests wait for that work's effect — a page-agent
// call, an emitted event, a storage write — each of which tells `seen`.
const seen = watch();
export const after = (predicate, what) => seen.when(predicate, { timeout: 5000, what });
const told = (log) => {
  const push = log.push.bind(log);
  log.push = (...items) => { const n = push(...items); seen.notify(); return n; };
  return log;
};
const noticed = (emit) => {
  const wrapped = (event, data) => { emit(event, data); seen.notify(); };
  return Object.assign(wrapped, { events: emit.events, named: emit.named });
};

/** What the fake page agent's shotMask answers: one filled field, [left, top, right, bottom]. */
export const SHOT_MASK = Object.freeze({ width: 32, height: 20, dpr: 2, scrollX: 0, scrollY: 0,
  boxes: Object.freeze([Object.freeze([4, 4, 16, 10])]), frames: Object.freeze([]) });

/** What the fake page agent answers, per op. */
export function pageAgent(log = []) {
  told(log);
  return async (op, args, where) => {
    log.push({ op, args, where });
    switch (op) {
      case 'context':
        return { ok: true, value: {
          url: 'https://a.example/inbox', title: 'Inbox', text: 'hello', textTruncated: false, headings: [],
          forms: [{ ref: 'e3', name: 'f', fields: [{ ref: 'e4', name: 'q', type: 'text', filled: false, valueLength: 0 }] }],
          nodes: [{ ref: 'e1', role: 'button', name: 'Send' }, { ref: 'e2', role: 'link', name: 'Next' }],
          iframes: [{ index: 0, name: 'pay', title: 'Pay', src: 'https://pay.example/widget', origin: 'https://pay.example' }],
          diff: args.diff ? { added: [{ ref: 'e9' }], removed: ['e2'], changed: [], textChanged: false } : null,
        } };
      case 'inspect':
        if (args.ref === 'e404') return { ok: false, error: { code: 'stale_node', message: 'gone' } };
        return { ok: true, value: { ref: args.ref, tag: 'button', name: 'Send' } };
      case 'action':
        return { ok: true, value: { action: args.action, ref: args.ref, done: true, changes: {} } };
      case 'shotMask':
        // A 32×20 CSS px viewport at devicePixelRatio 2: fake-chrome's TINY_JPEG (64×40) is its picture.
        return { ok: true, value: { ...SHOT_MASK, boxes: SHOT_MASK.boxes.map((b) => [...b]), frames: [] } };
      default:
        return { ok: true, value: { shown: true } };
    }
  };
}

export async function setup({ storage, preset = 'control', extras = ['browser.tab.navigate', 'browser.cookies.read'],
  durationMin = 15, pageLog = [], grantTabs = [{ tabId: 1, frameIds: [5] }] } = {}) {
  if (storage) watchWrites(storage);
  const fake = makeFakeChrome({ storage, pageRun: pageAgent(pageLog) });
  fake.addTab({ id: 1, url: 'https://a.example/inbox', title: 'Inbox', active: true,
    children: [{ frameId: 5, url: 'https://pay.example/widget' }, { frameId: 6, url: 'https://ads.example/x' }] });
  fake.addTab({ id: 2, url: 'https://b.example/', title: 'B' });
  fake.addTab({ id: 3, url: 'chrome-extension://immigohjinbkkjncmhkefbfainfbcigp/popup/popup.html', title: 'Chaperone' });
  const clock = fakeClock();
  const emit = noticed(eventLog());
  const router = new Router({ chrome: fake.chrome, emit, now: clock, timers: inertTimers() });
  await router.load();
  let grant = null;
  if (grantTabs) {
    const reply = await router.onPopupMessage({ type: 'popup.createGrant', tabs: grantTabs, preset, extras,
      durationMin, label: 'Task' });
    assert.equal(reply.ok, true, JSON.stringify(reply));
    grant = reply.grant;
  }
  return { fake, clock, emit, router, grant, pageLog };
}

export const code = async (promise) => {
  try {
    await promise;
    return 'ok';
  } catch (e) {
    assert.ok(e instanceof ChaperoneError, `a ChaperoneError, not ${e?.stack ?? e}`);
    return e.code;
  }
};
/** A storage area that tells `seen` after each write. */
function watchWrites(area) {
  if (area.watched) return area;
  const set = area.set.bind(area);
  area.set = async (items) => { await set(items); seen.notify(); };
  area.watched = true;
  return area;
}
