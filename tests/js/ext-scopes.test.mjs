// SPDX-License-Identifier: GPL-3.0-or-later
// Scope names, presets, durations and the method table: the data every grant and every check uses.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { HANDLERS } from '../../extension/lib/capabilities/index.js';
import {
  ALL_SCOPES, ChaperoneError, DEFAULT_DURATION_MIN, DURATIONS_MIN, DURATION_LABEL_KEYS, EXTRAS, METHODS,
  MAX_DURATION_MIN, PRESETS, PRESET_LABEL_KEYS, SCOPE_LABEL_KEYS, durationMs, expandScopes,
  isStopExempt, methodNames, scopeForMethod,
} from '../../extension/lib/scopes.js';
import { ChaperoneError as RouterError } from '../../extension/lib/router.js';

test('the nine scope names are the contract\'s', () => {
  assert.deepEqual([...ALL_SCOPES].sort(), [
    'browser.api.call', 'browser.cookies.read', 'browser.dom.read', 'browser.dom.write',
    'browser.human.takeover', 'browser.network.read', 'browser.tab.activate', 'browser.tab.navigate',
    'browser.tabs.read',
  ]);
});

test('Read is tabs.read + dom.read; Control adds dom.write, tab.activate, human.takeover', () => {
  assert.deepEqual(expandScopes('read'), ['browser.tabs.read', 'browser.dom.read']);
  assert.deepEqual(new Set(expandScopes('control')), new Set([
    'browser.tabs.read', 'browser.dom.read', 'browser.dom.write', 'browser.tab.activate', 'browser.human.takeover',
  ]));
  // The site's own API and its requests are the person's choice, tab by tab: never in a preset.
  assert.deepEqual(EXTRAS, ['browser.tab.navigate', 'browser.cookies.read', 'browser.network.read',
    'browser.api.call']);
  assert.ok(Object.isFrozen(PRESETS.read) && Object.isFrozen(PRESETS.control));
});

test('extras add one scope each, duplicates collapse, unknown ones are refused', () => {
  assert.deepEqual(expandScopes('read', ['browser.cookies.read', 'browser.dom.read']),
    ['browser.tabs.read', 'browser.dom.read', 'browser.cookies.read']);
  assert.ok(expandScopes('read', ['browser.dom.write']).includes('browser.dom.write'), 'a Control scope as an extra');
  for (const bad of [['browser.eval'], ['*'], [null], 'browser.dom.write']) {
    assert.throws(() => expandScopes('read', bad), (e) => e instanceof ChaperoneError && e.code === 'invalid_params');
  }
  for (const preset of ['all', 'Read', undefined, '__proto__']) {
    assert.throws(() => expandScopes(preset), (e) => e.code === 'invalid_params');
  }
});

test('durations are 5, 15, 60 and 480 minutes; 15 by default; nothing else', () => {
  assert.deepEqual(DURATIONS_MIN, [5, 15, 60, 480]);
  assert.equal(DEFAULT_DURATION_MIN, 15);
  assert.equal(MAX_DURATION_MIN, 480);
  assert.equal(durationMs(), 15 * 60_000);
  assert.equal(durationMs(480), 8 * 3_600_000);
  for (const bad of [0, 1, 16, 481, 960, -5, '15', 15.5, Infinity, null]) {
    assert.throws(() => durationMs(bad), (e) => e.code === 'invalid_params', String(bad));
  }
});

test('one method table: every method has a handler and a scope (or is engine-only)', () => {
  assert.deepEqual(Object.keys(HANDLERS).sort(), methodNames().sort());
  assert.equal(scopeForMethod('browser.node.action'), 'browser.dom.write');
  assert.equal(scopeForMethod('browser.navigate'), 'browser.tab.navigate');
  assert.equal(scopeForMethod('browser.cookies'), 'browser.cookies.read');
  assert.equal(scopeForMethod('grant.revoke'), null);
  assert.equal(scopeForMethod('browser.eval'), undefined);
  assert.equal(scopeForMethod('toString'), undefined, 'no prototype member is a method');
  for (const [method, { scope }] of Object.entries(METHODS)) {
    if (method.startsWith('browser.')) assert.ok(ALL_SCOPES.includes(scope), method);
    else assert.equal(scope, null, method);
  }
});

test('only grant.revoke and extension.* are answered while stopped', () => {
  const exempt = methodNames().filter(isStopExempt).sort();
  assert.deepEqual(exempt, methodNames().filter((m) => m === 'grant.revoke' || m.startsWith('extension.')).sort());
  assert.equal(isStopExempt('browser.context'), false);
});

test('every scope, preset and duration has an i18n key', () => {
  for (const s of ALL_SCOPES) assert.match(SCOPE_LABEL_KEYS[s], /^scope[A-Z][A-Za-z]+$/);
  assert.deepEqual(Object.keys(PRESET_LABEL_KEYS), Object.keys(PRESETS));
  for (const d of DURATIONS_MIN) assert.match(DURATION_LABEL_KEYS[d], /^duration\d+[mh]$/);
});

test('router.js exports the same ChaperoneError; unknown codes become internal', () => {
  assert.equal(RouterError, ChaperoneError);
  const e = new ChaperoneError('stale_node', 'gone', { ref: 'x' });
  assert.equal(e.code, 'stale_node');
  assert.deepEqual(e.data, { ref: 'x' });
  assert.ok(e instanceof Error);
  assert.equal(new ChaperoneError('made_up').code, 'internal');
});
