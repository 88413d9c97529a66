// SPDX-License-Identifier: GPL-3.0-or-later
// The failure screenshot (browser.screenshot, issue 16): after an agent's act fails, the app asks
// for a picture of the tab and keeps it in its trace store for the person's trace browser. No
// agent tool maps to it — agents never receive a screenshot; the caller is the app's trace
// recording (C side: src/core/agent/tools or the engine). What a picture can show, and what is
// boxed over, is in docs/security.md ("The page agent and its own elements").
//
// One call, in this order, after the router's checks (grant, browser.dom.read, the top frame, the
// URL floor):
//   1. the tab must be the one its window shows: chrome.tabs.captureVisibleTab takes only that
//      one, and the person's tab is never switched to take it (target_denied, reason not_shown);
//   2. the page says what to box (page op shotMask, content/page-shot.js) — and refuses on a page
//      that shows a password field, before anything is captured (refused_floor, sign_in);
//   3. the capture, at most two a second (Chrome's quota; CaptureGate: after a wait for its turn
//      the page is asked again);
//   4. the page asked again, on the same document, and the tab still in front: only when the two
//      answers are the same are the boxes known to lie where the picture shows the fields;
//   5. opaque boxes drawn at full size, then the picture shrunk to at most 1024 px wide and
//      encoded as JPEG, at most 300 KB (lower quality, then smaller, until it fits; too_large).
// What is boxed (page op shotMask): every credential-like field — password, one-time code, card
// (autocomplete cc-*, one-time-code, current-/new-password, or a name or label that says so) —
// filled or not, since an autofill preview is drawn but is not the value; and every input,
// textarea or editor that holds anything (whether it does, never what). Open shadow roots, closed
// ones of custom elements (chrome.dom) and frames the page can read are looked into, and a password
// shown there refuses as one in the page does; a frame it cannot read (another origin) is boxed
// whole, since a card form may be inside, and a readable one whose own URL the floor makes blind
// is boxed whole here.
//
// The drawing is injected (`drawer`): the worker uses createImageBitmap and OffscreenCanvas,
// which Node has not; Node tests pass their own and check the maths and the refusals.

import { pageLevel } from '../floor.js';
import { abortError } from '../page-bridge.js';
import { redactText } from '../redact.js';
import { ChaperoneError } from '../scopes.js';
import { obj, tabId } from './common.js';

export const SHOT = Object.freeze({
  maxBytes: 300 * 1024,
  // (width, quality) in the order tried: quality first, then size.
  tries: Object.freeze([[1024, 0.6], [1024, 0.45], [1024, 0.3], [768, 0.3], [512, 0.3]]),
  captureQuality: 90, // the capture itself: the picture is encoded again after boxing
  padCss: 2, // CSS px around each box: a focus ring or an autofill tint holds no text, but edges blur
  box: 'rgb(32, 32, 32)', // opaque; tests look for it in the decoded picture
  attempts: 2, // captures per call when the page moved between its two answers
  maxBoxes: 2000,
  maxFrames: 200,
});

/** Chrome's MAX_CAPTURE_VISIBLE_TAB_CALLS_PER_SECOND; the window has a margin for IPC jitter. */
export const CAPTURE_RATE = Object.freeze({ perWindow: 2, windowMs: 1050, maxWaitMs: 1500 });

const sleepFor = (ms, signal) => new Promise((resolve, reject) => {
  if (signal?.aborted) return reject(abortError(signal));
  const onAbort = () => { clearTimeout(timer); reject(abortError(signal)); };
  const timer = setTimeout(() => { signal?.removeEventListener('abort', onAbort); resolve(); }, ms);
  signal?.addEventListener('abort', onAbort, { once: true });
});

/**
 * Chrome fails a third captureVisibleTab within a second with a quota error. Captures are given
 * slots in the order asked; one whose slot is further off than maxWaitMs is answered `busy` at
 * once (retryAfter: when that slot would have been) rather than held for long. take() → the ms
 * it waited.
 */
export class CaptureGate {
  constructor({ now = Date.now, sleep = sleepFor, rate = CAPTURE_RATE } = {}) {
    Object.assign(this, { now, sleep, rate });
    this.slots = []; // start times of the last `perWindow` captures, oldest first
  }

  async take(signal) {
    const { perWindow, windowMs, maxWaitMs } = this.rate;
    const t = this.now();
    const n = this.slots.length;
    const at = n < perWindow ? t : Math.max(t, this.slots[n - perWindow] + windowMs);
    if (at - t > maxWaitMs) {
      throw new ChaperoneError('busy', 'The browser takes two screenshots a second at most: ask again later',
        { retryAfter: Math.ceil(at - t) });
    }
    this.slots.push(at);
    if (this.slots.length > perWindow) this.slots.shift();
    if (at > t) await this.sleep(at - t, signal);
    return at - t;
  }
}

// ---- the drawing --------------------------------------------------------------------------------

function base64ToBytes(b64) {
  const bin = atob(b64);
  const bytes = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
  return bytes;
}

export function bytesToBase64(bytes) {
  let bin = '';
  // In slices: String.fromCharCode(...a whole picture) would overflow the argument stack.
  for (let i = 0; i < bytes.length; i += 0x8000) bin += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(bin);
}

/** The worker's drawer: createImageBitmap and OffscreenCanvas. */
export const canvasDrawer = Object.freeze({
  async decode(dataUrl) {
    const blob = new Blob([base64ToBytes(dataUrl.slice(dataUrl.indexOf(',') + 1))], { type: 'image/jpeg' });
    const image = await createImageBitmap(blob);
    return { image, width: image.width, height: image.height };
  },
  // The boxes go on at full size, before any scaling: scaled first, a box's edge would blend what
  // it covers into the pixels around it.
  paint(image, boxes, colour) {
    const canvas = new OffscreenCanvas(image.width, image.height);
    const g = canvas.getContext('2d');
    g.drawImage(image, 0, 0);
    g.fillStyle = colour;
    for (const b of boxes) g.fillRect(b.x, b.y, b.width, b.height);
    return canvas;
  },
  async encode(canvas, width, height, quality) {
    let out = canvas;
    if (width !== canvas.width || height !== canvas.height) {
      out = new OffscreenCanvas(width, height);
      const g = out.getContext('2d');
      g.imageSmoothingQuality = 'high';
      g.drawImage(canvas, 0, 0, width, height);
    }
    const blob = await out.convertToBlob({ type: 'image/jpeg', quality });
    return new Uint8Array(await blob.arrayBuffer());
  },
  release(image) {
    image.close?.();
  },
});

// ---- the maths ----------------------------------------------------------------------------------

/**
 * The page's boxes ([left, top, right, bottom] in CSS px of its viewport) as whole pixels of the
 * captured picture, {x, y, width, height}: each grown by `pad` CSS px on every side, rounded
 * outward, clipped to the picture; empty ones dropped. The scale is the picture's size over the
 * viewport's — device pixels per CSS px, devicePixelRatio and the tab's zoom together — measured,
 * not taken from the page.
 */
export function imageBoxes(mask, width, height, pad = SHOT.padCss) {
  const sx = width / mask.width;
  const sy = height / mask.height;
  const out = [];
  for (const [left, top, right, bottom] of mask.boxes) {
    const x0 = Math.max(0, Math.floor((left - pad) * sx));
    const y0 = Math.max(0, Math.floor((top - pad) * sy));
    const x1 = Math.min(width, Math.ceil((right + pad) * sx));
    const y1 = Math.min(height, Math.ceil((bottom + pad) * sy));
    if (x1 > x0 && y1 > y0) out.push({ x: x0, y: y0, width: x1 - x0, height: y1 - y0 });
  }
  return out;
}

/** The picture's size once at most `maxWidth` wide, its proportions kept. */
export function outputSize(width, height, maxWidth) {
  if (width <= maxWidth) return { width, height };
  return { width: maxWidth, height: Math.max(1, Math.round((height * maxWidth) / width)) };
}

const isNum = (v) => typeof v === 'number' && Number.isFinite(v);
const isBox = (b) => Array.isArray(b) && b.length === 4 && b.every(isNum);

/** The page's answer, checked: a malformed one would put boxes where no field is. */
export function checkedMask(v) {
  const ok = v && typeof v === 'object' && isNum(v.width) && isNum(v.height) && v.width > 0 && v.height > 0
    && isNum(v.dpr) && isNum(v.scrollX) && isNum(v.scrollY)
    && Array.isArray(v.boxes) && v.boxes.length <= SHOT.maxBoxes && v.boxes.every(isBox)
    && Array.isArray(v.frames) && v.frames.length <= SHOT.maxFrames
    && v.frames.every((f) => f && typeof f.url === 'string' && isBox(f.box));
  if (!ok) throw new ChaperoneError('internal', 'The page did not say what to box');
  return v;
}

/** The two answers agree: nothing moved, appeared or was typed between them. */
export const sameMask = (a, b) => JSON.stringify(a) === JSON.stringify(b);

// ---- the call -----------------------------------------------------------------------------------

const PARTS = new WeakMap(); // router → {drawer, gate}

/**
 * The drawer and the capture gate of a router's screenshots (one router per worker, as Chrome's
 * quota is per extension). Node tests pass their own before the first call.
 */
export function screenshotParts(router, { drawer, now, sleep, rate } = {}) {
  let parts = PARTS.get(router);
  if (!parts || drawer || now || sleep || rate) {
    parts = { drawer: drawer ?? canvasDrawer, gate: new CaptureGate({ now, sleep, rate }) };
    PARTS.set(router, parts);
  }
  return parts;
}

/**
 * The window showing the tab, when the tab is the one it shows (else target_denied) and its page
 * is not blind by the URL floor now: an SPA's route change keeps the document the router checked.
 */
async function shownIn(router, chrome, tab) {
  let t;
  try {
    t = await chrome.tabs.get(tab);
  } catch {
    throw new ChaperoneError('stale_document', 'The tab is gone');
  }
  let minimized = false;
  try {
    minimized = (await chrome.windows.get(t.windowId))?.state === 'minimized';
  } catch {
    minimized = false; // no window to ask about: the capture itself then fails
  }
  if (!t.active || minimized) {
    throw new ChaperoneError('target_denied',
      'The tab is not the one its window shows: a screenshot is taken only of a tab in front, and Chaperone never switches tabs to take one',
      { tabId: tab, reason: 'not_shown' });
  }
  const floor = router.floorOf(t.url);
  if (floor.level === 'blind') {
    throw new ChaperoneError('refused_floor', 'This page is off limits to agents (the URL floor)',
      { tabId: tab, level: floor.level, reason: floor.reason });
  }
  return t.windowId;
}

/**
 * Tab switches in any window and loads or URL changes of the tab, from now on: a picture taken
 * across one may be of another tab or another page. Listening starts before the tab is looked at.
 */
function watchTab(chrome, tab) {
  const switched = new Set();
  let loaded = false;
  const onActivated = (info) => switched.add(info?.windowId);
  const onUpdated = (id, change) => {
    if (id === tab && (change?.url !== undefined || change?.status === 'loading')) loaded = true;
  };
  chrome.tabs.onActivated?.addListener(onActivated);
  chrome.tabs.onUpdated?.addListener(onUpdated);
  return {
    movedIn: (windowId) => loaded || switched.has(windowId),
    stop() {
      chrome.tabs.onActivated?.removeListener(onActivated);
      chrome.tabs.onUpdated?.removeListener(onUpdated);
    },
  };
}

/** What to box, as the page says it; its sign-in refusal comes back as the router gives it. */
async function askMask(router, ctx, where) {
  try {
    return checkedMask(await router.page.run(where, 'shotMask', {}, { signal: ctx.signal }));
  } catch (e) {
    if (!(e instanceof ChaperoneError) || e.code !== 'refused_floor') throw e;
    // The page's reason does not cross the page bridge: made again as the router does for a
    // snapshot — a page with a visible password, judged by pageLevel().
    const floor = pageLevel(ctx.frame?.url, true, router.floorRules);
    throw new ChaperoneError('refused_floor', 'This page shows a password field: no screenshot is taken of a sign-in page',
      { tabId: ctx.tabId, level: floor.level, reason: floor.reason });
  }
}

async function capture(chrome, windowId) {
  let dataUrl;
  try {
    dataUrl = await chrome.tabs.captureVisibleTab(windowId, { format: 'jpeg', quality: SHOT.captureQuality });
  } catch (e) {
    // Chrome's words can name the page: none of them are passed on.
    const said = String(e?.message ?? e);
    if (/quota|MAX_CAPTURE/i.test(said)) {
      throw new ChaperoneError('busy', 'The browser refused the screenshot: too many a second', { retryAfter: 1000 });
    }
    if (/permission|cannot access|not allowed/i.test(said)) {
      throw new ChaperoneError('unsupported', 'The browser does not let the extension capture this tab');
    }
    throw new ChaperoneError('internal', 'The browser could not capture the tab');
  }
  if (typeof dataUrl !== 'string' || !dataUrl.startsWith('data:image/jpeg;base64,')) {
    throw new ChaperoneError('internal', 'The browser gave no picture');
  }
  return dataUrl;
}

/** The boxes the picture gets: the page's, and whole frames of the page whose URL is blind. */
function boxesOf(router, mask) {
  const blind = mask.frames.filter((f) => router.floorOf(f.url).level === 'blind').map((f) => f.box);
  return { ...mask, boxes: [...mask.boxes, ...blind] };
}

/** The boxed picture, encoded to fit. */
async function picture(dataUrl, mask, drawer) {
  const decoded = await drawer.decode(dataUrl);
  try {
    const { width, height } = decoded;
    // The picture is the viewport, at one scale across and down; anything else and the boxes
    // would land beside the fields.
    const sx = width / mask.width;
    const sy = height / mask.height;
    if (!(sx > 0) || Math.abs(sx - sy) > 0.05 * sx) {
      throw new ChaperoneError('internal', 'The picture does not match the page');
    }
    const boxes = imageBoxes(mask, width, height);
    const canvas = drawer.paint(decoded.image, boxes, SHOT.box);
    for (const [maxWidth, quality] of SHOT.tries) {
      const size = outputSize(width, height, maxWidth);
      const bytes = await drawer.encode(canvas, size.width, size.height, quality);
      if (bytes.length > SHOT.maxBytes) continue;
      const jpeg = bytesToBase64(bytes);
      // The router redacts every browser.* answer as text. A key shape that base64 spells by
      // chance (once in ~10^5 pictures) would be cut out of it and the picture arrive broken:
      // the next encoding has other bytes.
      if (redactText(jpeg).count !== 0) continue;
      return { jpeg, width: size.width, height: size.height, masked: boxes.length };
    }
    throw new ChaperoneError('too_large', `The screenshot does not fit in ${SHOT.maxBytes / 1024} KB`);
  } finally {
    drawer.release(decoded.image);
  }
}

async function screenshot(ctx) {
  const { router, chrome, signal, tabId: tab, documentId } = ctx;
  const { drawer, gate } = screenshotParts(router);
  const where = { tabId: tab, frameId: 0, documentId };
  for (let attempt = 1; ; attempt += 1) {
    const watch = watchTab(chrome, tab);
    let shot;
    try {
      const windowId = await shownIn(router, chrome, tab);
      // The page first: a sign-in page is refused without spending a capture's slot. After a
      // wait for the slot the page is asked again, so the answer is the page as it is captured.
      let before = await askMask(router, ctx, where);
      if (await gate.take(signal) > 0) before = await askMask(router, ctx, where);
      const dataUrl = await capture(chrome, windowId);
      if (signal?.aborted) throw abortError(signal);
      // Pinned to the checked document: a page that replaced it fails stale_document here.
      const after = await askMask(router, ctx, where);
      const stillIn = await shownIn(router, chrome, tab);
      if (stillIn === windowId && !watch.movedIn(windowId) && sameMask(before, after)) shot = { dataUrl, mask: after };
    } finally {
      watch.stop();
    }
    if (shot) {
      return picture(shot.dataUrl, boxesOf(router, shot.mask), drawer).catch((e) => {
        // A picture the browser could not decode or encode: its words say nothing of use here.
        throw e instanceof ChaperoneError ? e : new ChaperoneError('internal', 'The picture could not be drawn');
      });
    }
    if (attempt >= SHOT.attempts) {
      throw new ChaperoneError('busy', 'The page kept changing while the screenshot was taken: ask again', { retryAfter: 1000 });
    }
  }
}

export const HANDLERS = Object.freeze({
  'browser.screenshot': {
    params: (p) => ({ tabId: tabId(obj(p).tabId) }),
    // The whole tab is in the picture: its top frame must be granted.
    target: (p) => ({ tabId: p.tabId, frameId: 0 }),
    run: screenshot,
  },
});
