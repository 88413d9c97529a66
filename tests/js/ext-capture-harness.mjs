// SPDX-License-Identifier: GPL-3.0-or-later
// What the ext-capture and ext-api-call tests share: a fake of chrome.webRequest (events that keep
// each listener's RequestFilter and extraInfoSpec, and fire only to the listeners whose filter a
// request passes, as Chromium does), a router over the fake chrome.* with one granted tab, and a
// page that "makes" requests through those events.

import assert from 'node:assert/strict';
import { Router } from '../../extension/lib/router.js';
import { eventLog, fakeClock, fakeStorageArea, inertTimers, makeFakeChrome } from './fake-chrome.mjs';

function wrEvent() {
  const listeners = new Map(); // fn → {filter, extra}
  return {
    listeners,
    addListener: (fn, filter, extra) => listeners.set(fn, { filter, extra }),
    removeListener: (fn) => listeners.delete(fn),
    hasListeners: () => listeners.size > 0,
    fire(d) {
      for (const [fn, { filter }] of [...listeners]) {
        if (filter?.tabId !== undefined && filter.tabId !== d.tabId) continue;
        if (filter?.types && !filter.types.includes(d.type)) continue;
        fn(structuredClone(d));
      }
    },
  };
}

export function fakeWebRequest() {
  const wr = {};
  for (const name of ['onBeforeRequest', 'onSendHeaders', 'onBeforeRedirect', 'onResponseStarted', 'onCompleted',
    'onErrorOccurred']) wr[name] = wrEvent();
  /** Every listener of every event, as [event, filter, extra]. */
  wr.all = () => Object.entries(wr).filter(([, e]) => e?.listeners)
    .flatMap(([name, e]) => [...e.listeners.values()].map((l) => [name, l.filter, l.extra]));
  return wr;
}

let requestCounter = 0;

/**
 * A request of tab `tabId` from the page, start to end, through the fake events: {url, method,
 * type, documentId, frameId, headers: [{name, value}], body: string | {formData}, status,
 * responseHeaders}. Returns its requestId.
 */
export function request(wr, { tabId = 1, url, method = 'GET', type = 'xmlhttprequest', documentId, frameId = 0,
  headers = [], body, status = 200, responseHeaders = [{ name: 'Content-Type', value: 'application/json; charset=utf-8' }],
  error, at = 1_000_000 } = {}) {
  const requestId = String(++requestCounter);
  const base = { requestId, tabId, url, method, type, frameId, documentId, timeStamp: at };
  let requestBody;
  if (typeof body === 'string') requestBody = { raw: [{ bytes: new TextEncoder().encode(body).buffer }] };
  else if (body) requestBody = body;
  wr.onBeforeRequest.fire({ ...base, requestBody });
  wr.onSendHeaders.fire({ ...base, requestHeaders: headers });
  if (error) wr.onErrorOccurred.fire({ ...base, error, timeStamp: at + 7 });
  else wr.onCompleted.fire({ ...base, statusCode: status, fromCache: false, responseHeaders, timeStamp: at + 12 });
  return requestId;
}

export const CAPTURE_EXTRAS = ['browser.network.read', 'browser.api.call'];

/**
 * A router over a fake chrome with chrome.webRequest; tab 1 at https://app.example/inbox with a
 * widget frame (5) from https://widget.example, granted with `extras` when `grant` is true.
 */
export async function captureSetup({ extras = CAPTURE_EXTRAS, preset = 'read', grant = true, storage } = {}) {
  const fake = makeFakeChrome({ storage: storage ?? fakeStorageArea() });
  const wr = fakeWebRequest();
  fake.chrome.webRequest = wr;
  fake.addTab({ id: 1, url: 'https://app.example/inbox', title: 'App', active: true,
    children: [{ frameId: 5, url: 'https://widget.example/embed' }] });
  fake.addTab({ id: 2, url: 'https://other.example/', title: 'Other' });
  const emit = eventLog();
  const clock = fakeClock();
  const router = new Router({ chrome: fake.chrome, emit, now: clock, timers: inertTimers() });
  await router.load();
  let created = null;
  if (grant) {
    const reply = await router.onPopupMessage({ type: 'popup.createGrant', tabs: [{ tabId: 1, frameIds: [5] }],
      preset, extras, durationMin: 15, label: 'API task' });
    assert.equal(reply.ok, true, JSON.stringify(reply));
    created = reply.grant;
  }
  const top = () => fake.frame(1, 0).documentId;
  const widget = () => fake.frame(1, 5).documentId;
  return { fake, wr, emit, clock, router, grant: created, top, widget };
}
