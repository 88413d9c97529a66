// SPDX-License-Identifier: GPL-3.0-or-later
// The chrome.* fake the router tests stand on must itself behave like Chromium where it matters.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { fakeStorageArea, makeFakeChrome } from './fake-chrome.mjs';

test('the fake refuses a script for a document that is no longer in the tab', async () => {
  const fake = makeFakeChrome();
  const top = fake.addTab({ id: 1, url: 'https://a.example/' });
  const old = top.documentId;
  fake.navigate(1, 0, 'https://a.example/next');
  await assert.rejects(fake.chrome.scripting.executeScript({ target: { tabId: 1, documentIds: [old] }, files: ['x.js'] }),
    /No document with id/);
});

test('the fake storage outlives the fake chrome built on it', async () => {
  const storage = fakeStorageArea();
  await makeFakeChrome({ storage }).chrome.storage.session.set({ a: 1 });
  assert.deepEqual(await makeFakeChrome({ storage }).chrome.storage.session.get('a'), { a: 1 });
});
