// SPDX-License-Identifier: GPL-3.0-or-later
// The target check: every answer it can give, and that it never accepts another frame or document.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import {
  checkTarget, findTarget, frameReadability, isExtensionUrl, unreachableReason, webOrigin,
} from '../../extension/lib/targets.js';

const grant = {
  grantId: 'g1',
  scopes: ['browser.tabs.read', 'browser.dom.read'],
  targets: [
    { tabId: 7, frameId: 0, documentId: 'D0', origin: 'https://a.example', url: 'https://a.example/', title: 'A' },
    { tabId: 7, frameId: 12, documentId: 'D12', origin: 'https://pay.example', url: 'https://pay.example/f', title: 'A' },
  ],
};
const frame = (over = {}) => ({
  documentId: 'D0', url: 'https://a.example/page', parentFrameId: -1, errorOccurred: false,
  documentLifecycle: 'active', ...over,
});
const codeOf = (r) => (r.ok ? 'ok' : r.error.code);

test('the granted frame on its origin passes and gives the current document to pin the call to', () => {
  const r = checkTarget(grant, { tabId: 7, frameId: 0 }, frame());
  assert.equal(r.ok, true);
  assert.equal(r.documentId, 'D0');
  assert.equal(r.target.origin, 'https://a.example');
  assert.equal(codeOf(checkTarget(grant, { tabId: 7, frameId: 0, documentId: 'D0' }, frame())), 'ok');
  assert.equal(codeOf(checkTarget(grant, { tabId: 7, frameId: 12 },
    frame({ documentId: 'D12', url: 'https://pay.example/f?x=1', parentFrameId: 0 }))), 'ok');
});

test('a tab or frame outside the grant is target_denied, even on the same origin', () => {
  assert.equal(codeOf(checkTarget(grant, { tabId: 8, frameId: 0 }, frame())), 'target_denied');
  assert.equal(codeOf(checkTarget(grant, { tabId: 7, frameId: 13 }, frame({ parentFrameId: 0 }))), 'target_denied');
  assert.equal(codeOf(checkTarget(null, { tabId: 7, frameId: 0 }, frame())), 'target_denied');
  const r = checkTarget(grant, { tabId: 8, frameId: 0 }, frame());
  assert.deepEqual(r.error.data, { tabId: 8, frameId: 0 });
});

test('extension pages and non-web frames are target_denied always', () => {
  for (const url of [
    'chrome-extension://immigohjinbkkjncmhkefbfainfbcigp/popup/popup.html',
    'chrome-extension://abcdefghijklmnopabcdefghijklmnop/x.html',
    'moz-extension://1b2c/x', 'chrome://settings/', 'about:blank', 'data:text/html,hi',
    'file:///etc/passwd', 'javascript:alert(1)', 'view-source:https://a.example/', 'devtools://x', '',
  ]) {
    assert.equal(codeOf(checkTarget(grant, { tabId: 7, frameId: 0 }, frame({ url }))), 'target_denied', url);
  }
  // A grant whose stored target is not a web origin is not trusted either.
  const damaged = { targets: [{ tabId: 1, frameId: 0, origin: 'chrome-extension://immigohjinbkkjncmhkefbfainfbcigp' }] };
  assert.equal(codeOf(checkTarget(damaged, { tabId: 1, frameId: 0 },
    frame({ url: 'chrome-extension://immigohjinbkkjncmhkefbfainfbcigp/popup.html' }))), 'target_denied');
});

test('another origin is origin_changed: scheme, host and port all count', () => {
  for (const url of ['https://b.example/', 'http://a.example/', 'https://a.example:8443/', 'https://sub.a.example/',
    'https://a.example.evil.test/']) {
    assert.equal(codeOf(checkTarget(grant, { tabId: 7, frameId: 0 }, frame({ url }))), 'origin_changed', url);
  }
});

test('a gone frame, another document, an error page or an inactive document is stale_document', () => {
  assert.equal(codeOf(checkTarget(grant, { tabId: 7, frameId: 0 }, null)), 'stale_document');
  assert.equal(codeOf(checkTarget(grant, { tabId: 7, frameId: 0, documentId: 'OLD' }, frame())), 'stale_document');
  assert.equal(codeOf(checkTarget(grant, { tabId: 7, frameId: 0 }, frame({ errorOccurred: true }))), 'stale_document');
  assert.equal(codeOf(checkTarget(grant, { tabId: 7, frameId: 0 }, frame({ documentLifecycle: 'pending_deletion' }))),
    'stale_document');
});

test('the order: target_denied before stale_document before origin_changed before a named document', () => {
  // Not granted AND gone → target_denied (the frame is never looked at).
  assert.equal(codeOf(checkTarget(grant, { tabId: 9, frameId: 0 }, null)), 'target_denied');
  // Another origin AND another document → origin_changed (the bigger change is named).
  assert.equal(codeOf(checkTarget(grant, { tabId: 7, frameId: 0, documentId: 'OLD' },
    frame({ url: 'https://b.example/' }))), 'origin_changed');
  // Extension page AND another origin → target_denied.
  assert.equal(codeOf(checkTarget(grant, { tabId: 7, frameId: 0 }, frame({ url: 'chrome-extension://x/y' }))),
    'target_denied');
});

test('helpers: web origins, extension URLs, reasons', () => {
  assert.equal(webOrigin('https://A.Example:443/x?y#z'), 'https://a.example');
  assert.equal(webOrigin('http://127.0.0.1:8080/'), 'http://127.0.0.1:8080');
  assert.equal(webOrigin('ftp://a.example/'), null);
  assert.equal(webOrigin('not a url'), null);
  assert.equal(webOrigin(undefined), null);
  assert.ok(isExtensionUrl('CHROME-EXTENSION://abc/'));
  assert.equal(unreachableReason('chrome-extension://x/'), 'extension');
  assert.equal(unreachableReason('about:srcdoc'), 'not_web');
  assert.equal(unreachableReason('https://a.example/'), null);
  assert.equal(findTarget(grant, 7, 12).origin, 'https://pay.example');
  assert.equal(findTarget(grant, 7, 99), null);
});

test('frame readability for browser.frames', () => {
  const r = (f) => frameReadability(grant, 7, f);
  assert.deepEqual(r({ frameId: 0, url: 'https://a.example/x' }), { readable: true });
  assert.deepEqual(r({ frameId: 12, url: 'https://evil.example/' }), { readable: false, reason: 'origin_changed' });
  assert.deepEqual(r({ frameId: 30, url: 'https://a.example/ad' }), { readable: false, reason: 'not_granted' });
  assert.deepEqual(r({ frameId: 31, url: 'about:blank' }), { readable: false, reason: 'not_web' });
  assert.deepEqual(r({ frameId: 32, url: 'chrome-extension://x/y.html' }), { readable: false, reason: 'extension' });
});

test('mergeFrames: a frame in a frame that is part of the page is part of it too, with its frame id', async () => {
  const { mergeFrames } = await import('../../extension/lib/capabilities/read.js');
  // Etherpad: an empty about:blank frame, a srcdoc frame ("Ether") holding a srcdoc frame ("pad"),
  // and an ad's cross-origin frame inside "Ether", which is not the page's.
  const nav = [
    { frameId: 0, parentFrameId: -1, url: 'https://a.example/p/log', documentId: 'D0' },
    { frameId: 10, parentFrameId: 0, url: 'about:blank', documentId: 'D10' },
    { frameId: 11, parentFrameId: 0, url: 'about:srcdoc', documentId: 'D11' },
    { frameId: 12, parentFrameId: 11, url: 'about:srcdoc', documentId: 'D12' },
    { frameId: 13, parentFrameId: 11, url: 'https://ads.example/x', documentId: 'D13' },
  ];
  const page = [
    { index: 0, parent: -1, name: 'importiframe', title: '', src: 'about:blank', origin: 'null', inline: true, docUrl: 'about:blank' },
    { index: 1, parent: -1, name: 'ace_outer', title: 'Ether', src: 'about:srcdoc', origin: 'null', inline: true, docUrl: 'about:srcdoc' },
    { index: 2, parent: 1, name: 'ace_inner', title: 'pad', src: 'about:srcdoc', origin: 'null', inline: true, docUrl: 'about:srcdoc' },
  ];
  const frames = mergeFrames(nav, page, grant, 7, 0);
  assert.deepEqual(frames.map((f) => [f.frameId, f.title, f.inline, f.readable]),
    [[10, '', true, true], [11, 'Ether', true, true], [12, 'pad', true, true]],
    'the pad is frame 12, part of the page; the ad in it is no frame of this page\'s');
  assert.equal(frames[2].origin, 'https://a.example');
  // Not read by the page (deeper than it reads): not listed.
  assert.deepEqual(mergeFrames(nav, page.slice(0, 2), grant, 7, 0).map((f) => f.frameId), [10, 11]);

  // Two srcdoc frames side by side, the first holding a third: the page lists them A, A's inner,
  // B (the order it reads them in); each is paired with the <iframe> in its own parent.
  const nav2 = [
    { frameId: 0, parentFrameId: -1, url: 'https://a.example/p/log', documentId: 'D0' },
    { frameId: 11, parentFrameId: 0, url: 'about:srcdoc', documentId: 'D11' },
    { frameId: 12, parentFrameId: 0, url: 'about:srcdoc', documentId: 'D12' },
    { frameId: 20, parentFrameId: 11, url: 'about:srcdoc', documentId: 'D20' },
  ];
  const srcdoc = (index, parent, title) => ({ index, parent, name: '', title, src: 'about:srcdoc', origin: 'null', inline: true, docUrl: 'about:srcdoc' });
  const page2 = [srcdoc(0, -1, 'A'), srcdoc(1, 0, 'A inner'), srcdoc(2, -1, 'B')];
  assert.deepEqual(mergeFrames(nav2, page2, grant, 7, 0).map((f) => [f.frameId, f.title]),
    [[11, 'A'], [12, 'B'], [20, 'A inner']]);
});
