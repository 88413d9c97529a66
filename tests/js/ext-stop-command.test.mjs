// SPDX-License-Identifier: GPL-3.0-or-later
// The Stop shortcut: the manifest's chrome.commands entry (Ctrl+Shift+E by default, described from
// _locales), the worker's handler (it stops as the popup's Stop does: the flag set before anything
// is awaited, the app told, with source "shortcut"), and the pill naming the key the browser has
// bound now — or none when the person removed it. The real key press, in a real browser with a
// page that swallows every key, is in tests/e2e/extension-shortcut.test.mjs.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';

import { Router } from '../../extension/lib/router.js';
import { STOP_COMMAND, STOP_SOURCES, StopState, onStopCommand, stopShortcut } from '../../extension/lib/stop.js';
import { eventLog, fakeClock, fakeStorageArea, inertTimers, makeFakeChrome } from './fake-chrome.mjs';
import { watch } from '../lib/until.mjs';

const json = (relative) => JSON.parse(readFileSync(new URL(relative, import.meta.url), 'utf8'));
const manifest = json('../../extension/manifest.json');

test('manifest: a "stop-agent" command, Ctrl+Shift+E by default, its description from _locales', () => {
  assert.equal(STOP_COMMAND, 'stop-agent');
  const command = manifest.commands?.[STOP_COMMAND];
  assert.ok(command, `commands: ${JSON.stringify(manifest.commands)}`);
  assert.deepEqual(command.suggested_key, { default: 'Ctrl+Shift+E' });
  assert.equal(command.description, '__MSG_commandStopAgent__');
  for (const locale of ['en', 'fr', 'zh_CN']) {
    const messages = json(`../../extension/_locales/${locale}/messages.json`);
    assert.ok(messages.commandStopAgent?.message, `${locale} describes the command`);
    assert.doesNotMatch(messages.commandStopAgent.message, /Esc|Échap/);
  }
  // The only command: none of Chrome's reserved _execute_* names, which would do something else.
  assert.deepEqual(Object.keys(manifest.commands), [STOP_COMMAND]);
});

test('stopShortcut: the key the browser binds now; none when unbound, missing or failing', async () => {
  const commands = (list) => ({ getAll: async () => list });
  assert.equal(await stopShortcut(commands([{ name: '_execute_action', shortcut: 'Ctrl+Shift+Y' },
    { name: 'stop-agent', shortcut: 'Ctrl+Shift+E', description: 'Stop' }])), 'Ctrl+Shift+E');
  // The person changed it at chrome://extensions/shortcuts: the new one.
  assert.equal(await stopShortcut(commands([{ name: 'stop-agent', shortcut: 'Alt+Shift+S' }])), 'Alt+Shift+S');
  // Removed, or taken by another extension first: Chrome reports an empty shortcut.
  assert.equal(await stopShortcut(commands([{ name: 'stop-agent', shortcut: '' }])), '');
  assert.equal(await stopShortcut(commands([])), '');
  assert.equal(await stopShortcut(undefined), '');
  assert.equal(await stopShortcut({ getAll: async () => { throw new Error('no'); } }), '');
  assert.equal(await stopShortcut(commands([{ name: 'stop-agent', shortcut: 'x'.repeat(200) }])), '');
});

test('onStopCommand: the Stop command stops with source "shortcut"; any other command does nothing', () => {
  const calls = [];
  assert.equal(onStopCommand('something-else', (s) => calls.push(s)), false);
  assert.deepEqual(calls, []);
  assert.equal(onStopCommand('stop-agent', (s) => calls.push(s)), true);
  assert.deepEqual(calls, ['shortcut']);
  assert.ok(STOP_SOURCES.includes('shortcut'));
});

test('StopState keeps "shortcut" as the source (not folded into "app")', async () => {
  const emit = eventLog();
  const stop = new StopState({ storage: fakeStorageArea(), emit, now: fakeClock() });
  stop.stop('shortcut');
  assert.equal(stop.stopped, true);
  assert.equal(stop.state().source, 'shortcut');
  assert.equal(emit.named('stop.changed').at(-1).source, 'shortcut');
});

/** A router over the fake chrome with one granted tab; chrome.commands binds `shortcut`. */
async function setup(shortcut) {
  const pageLog = [];
  const ran = watch();
  const fake = makeFakeChrome({
    pageRun: async (op, args, where) => {
      pageLog.push({ op, args, where });
      ran.notify();
      if (op === 'context') return { ok: true, value: { url: 'https://a.example/', title: 'A', nodes: [], forms: [], headings: [] } };
      return { ok: true, value: { shown: true } };
    },
  });
  fake.chrome.commands = { getAll: async () => [{ name: 'stop-agent', description: 'Stop', shortcut }] };
  fake.addTab({ id: 1, url: 'https://a.example/', title: 'A', active: true });
  const emit = eventLog();
  const router = new Router({ chrome: fake.chrome, emit, now: fakeClock(), timers: inertTimers() });
  await router.load();
  const made = await router.onPopupMessage({ type: 'popup.createGrant', tabs: [{ tabId: 1 }], preset: 'control', label: 'T' });
  assert.equal(made.ok, true, JSON.stringify(made));
  /** Resolves with `predicate(pageLog)` once it is truthy, looked at as the page is told things. */
  const told = (predicate, what) => ran.when(() => predicate(pageLog), { what });
  return { router, emit, pageLog, told };
}

const lastPill = (log) => log.filter((c) => c.op === 'pill').at(-1)?.args;

test('the pill is told the bound shortcut, or none when it is unbound', async () => {
  const bound = await setup('Ctrl+Shift+E');
  await bound.router.handle('browser.context', { tabId: 1 });
  const args = await bound.told(lastPill, 'the pill to be drawn');
  assert.deepEqual(args, { show: true, step: 1, stopped: false, shortcut: 'Ctrl+Shift+E' });

  const unbound = await setup('');
  await unbound.router.handle('browser.context', { tabId: 1 });
  assert.deepEqual(await unbound.told(lastPill, 'the pill to be drawn'),
    { show: true, step: 1, stopped: false });
});

test('router.stop("shortcut"): refused at once, the app told, the pill says stopped', async () => {
  const { router, emit, told } = await setup('Ctrl+Shift+E');
  await router.handle('browser.context', { tabId: 1 });
  router.stop('shortcut');
  assert.equal(router.state().stopped, true);
  await assert.rejects(router.handle('browser.context', { tabId: 1 }), { code: 'stopped' });
  assert.deepEqual([emit.named('stop.changed').at(-1).stopped, emit.named('stop.changed').at(-1).source], [true, 'shortcut']);
  await told((log) => lastPill(log)?.stopped === true, 'the pill to say stopped');
});
