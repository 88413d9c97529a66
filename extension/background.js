// SPDX-License-Identifier: GPL-3.0-or-later
// The service worker: wires the bridge client (the link to the Chaperone app), the capability router,
// the toolbar badge and the popup's messages. Every listener is registered synchronously at top level
// (MV3 only wakes a worker for listeners that exist when it starts); the async set-up runs behind
// `ready`, which each listener awaits.

import { Router } from './lib/router.js';
import { BridgeClient } from './lib/bridge-client.js';
import { Keystore } from './lib/keystore.js';
import { getBridgePort, getTransport, portChange, transportChange } from './lib/settings.js';
import { TransportChooser } from './lib/bridge-transport.js';
import { NativeSocket } from './lib/native-socket.js';
import { badgeFor, createBadgePainter } from './lib/badge.js';
import { tabCacheFor } from './lib/tab-cache.js';
import { onStopCommand } from './lib/stop.js';
import { browserName, isGecko } from './lib/compat.js';

const WAKE_ALARM = 'chaperone-wake';
// No trailing slash: the origin signed in pairing and auth is exactly the Origin header (§1.1).
const EXTENSION_ORIGIN = new URL(chrome.runtime.getURL('')).origin;
const EXTENSION_URL = chrome.runtime.getURL('');

const keystore = new Keystore({ local: chrome.storage.local });

// The WebSocket or the native host, as the person chose in Options ("auto" until then; the
// stored choice is read in `ready`, before the first connection). Either way the Origin is the
// browser's word: it sets the WebSocket's itself, and passes it to the native host (argv[1]),
// which sends the same. Firefox passes the host no origin, so there "auto" is the WebSocket.
const transports = new TransportChooser({
  makers: {
    websocket: (url) => new WebSocket(url),
    native: (url) => new NativeSocket(url, { runtime: chrome.runtime }),
  },
  nativeAvailable: !isGecko(),
  log: (...args) => console.debug('[chaperone]', ...args),
});

const bridge = new BridgeClient({
  createSocket: transports.createSocket,
  origin: EXTENSION_ORIGIN,
  keystore,
  getPort: () => getBridgePort(chrome.storage.local),
  session: chrome.storage.session,
  client: 'chaperone-extension',
  version: chrome.runtime.getManifest().version,
  browser: browserName(),
  capabilities: () => router.methods(),
  // A pairing socket is quiet while the person compares codes; an extension API call keeps the
  // worker from being stopped after 30 s idle (the /extension socket has the engine's pings).
  keepAlive: () => chrome.runtime.getPlatformInfo(),
  log: (...args) => console.debug('[chaperone]', ...args),
});

// What the badge shows besides the connection: filled from storage.session and the router's events.
const indicators = { stopped: false, handoffsWaiting: 0 };

function withDeviceId(event, data) {
  // The router does not know the device id; the app's grant mirror wants it (contract: "filled by A").
  if (event !== 'grant.changed' || !Array.isArray(data?.grants) || !bridge.deviceId) return data;
  return { ...data, grants: data.grants.map((g) => ({ ...g, deviceId: g.deviceId ?? bridge.deviceId })) };
}

const router = new Router({
  chrome,
  emit: (event, data) => {
    bridge.sendEvent(event, withDeviceId(event, data));
    if (event === 'stop.changed' || event === 'handoff.changed') {
      if (event === 'stop.changed') indicators.stopped = data?.stopped === true;
      try {
        loadIndicators();
      } catch {
        // during the router's own construction; storage.onChanged catches up
      }
      refreshBadge();
    }
  },
  now: Date.now,
  // Bound wrappers: the worker's setTimeout called as a method of another object throws
  // "Illegal invocation" (Node does not mind, so only the browser shows it).
  timers: { setTimeout: (fn, ms) => setTimeout(fn, ms), clearTimeout: (id) => clearTimeout(id) },
});

// The open tabs, kept from the tab events for browser.tabs: its listeners are added here, at top
// level, and its one chrome.tabs.query is asked now rather than on the first call.
const tabCache = tabCacheFor(chrome);
tabCache.list().catch((err) => console.debug('[chaperone] tab list', err?.message));

bridge.onRequest = async (method, params, { signal }) => {
  await ready;
  return router.handle(method, params, { signal });
};
bridge.extraInfo = () => ({ stopped: router.state().stopped === true });
bridge.authGrants = () => withDeviceId('grant.changed', { grants: router.grants.list() }).grants;
// The grant duration the person chose in the app's Preferences, offered first in the popup;
// kept in session storage so a restarted worker still has it.
const DEFAULT_GRANT_KEY = 'chaperone.defaultGrantMinutes';
let defaultGrantMinutes = null;
chrome.storage.session.get(DEFAULT_GRANT_KEY)
  .then((got) => { defaultGrantMinutes ??= got?.[DEFAULT_GRANT_KEY] ?? null; })
  .catch(() => {});

async function learnEngineSettings() {
  try {
    const info = await bridge.request('engine.info', {}, { timeoutMs: 5000 });
    router.setFloorRules(info?.floor);
    const minutes = Number(info?.defaultGrantMinutes);
    if (Number.isInteger(minutes) && minutes >= 1 && minutes <= 1440) {
      defaultGrantMinutes = minutes;
      await chrome.storage.session.set({ [DEFAULT_GRANT_KEY]: minutes });
    }
  } catch (err) {
    console.debug('[chaperone] engine.info', err?.message);
  }
}

bridge.onStateChange = (snapshot) => {
  refreshBadge();
  if (snapshot?.state === 'connected') learnEngineSettings();
  // Open popups and options pages listen; with none open there is nobody to receive it.
  chrome.runtime.sendMessage({ type: 'chaperone.state', state: snapshot }).catch(() => {});
};

const paintBadge = createBadgePainter(chrome.action);

function refreshBadge() {
  const badge = badgeFor({ state: bridge.state, ...indicators }, (key) => chrome.i18n.getMessage(key));
  paintBadge(badge).catch((err) => console.debug('[chaperone] badge', err?.message));
  return badge;
}

function countWaiting(handoffs) {
  const list = Array.isArray(handoffs) ? handoffs : handoffs && typeof handoffs === 'object' ? Object.values(handoffs) : [];
  return list.filter((h) => h?.state === 'waiting').length;
}

function loadIndicators() {
  indicators.stopped = router.state().stopped === true;
  indicators.handoffsWaiting = router.handoffs.waitingCount();
}

const ready = (async () => {
  // Sessions must survive a killed worker but never reach content scripts.
  await chrome.storage.session.setAccessLevel?.({ accessLevel: 'TRUSTED_CONTEXTS' }).catch(() => {});
  try {
    await router.load();
  } catch (err) {
    console.error('[chaperone] router state not restored', err);
  }
  try {
    loadIndicators();
  } catch (err) {
    console.debug('[chaperone] indicators', err?.message);
  }
  refreshBadge();
  transports.setMode(await getTransport(chrome.storage.local));
  await bridge.start();
})();
ready.catch((err) => console.error('[chaperone] start failed', err));

// ---- listeners (top level, synchronous) ----

chrome.runtime.onInstalled.addListener(() => {
  chrome.alarms.create(WAKE_ALARM, { periodInMinutes: 0.5 });
});
chrome.runtime.onStartup.addListener(() => {
  chrome.alarms.create(WAKE_ALARM, { periodInMinutes: 0.5 });
});
// Also here: an alarm lost with an update or a cleared profile comes back on the next wake-up.
chrome.alarms.get(WAKE_ALARM).then((alarm) => {
  if (!alarm) chrome.alarms.create(WAKE_ALARM, { periodInMinutes: 0.5 });
});

chrome.alarms.onAlarm.addListener((alarm) => {
  if (alarm.name !== WAKE_ALARM) return;
  // A killed worker restarts for this alarm; start() above reconnects and resumes the session.
  ready.then(() => bridge.kick());
});

// The Stop shortcut (manifest "commands", Ctrl+Shift+E unless the person changed it). Chrome
// routes the key to the extension before any page sees it, so a page cannot swallow it as it can
// Esc. It stops as the popup's Stop does: once the router's state is loaded (a worker this key woke
// up loads it first), router.stop sets the flag before it awaits anything, then tells the app. Even
// when start-up failed, so the catch.
chrome.commands?.onCommand.addListener((command) => {
  ready.catch(() => {}).then(() => onStopCommand(command, (source) => router.stop(source)));
});

chrome.storage.onChanged.addListener((changes, areaName) => {
  const transport = transportChange(changes, areaName);
  if (transport !== undefined) transports.setMode(transport);
  if (portChange(changes, areaName) !== undefined || transport !== undefined) ready.then(() => bridge.restart());
  if (areaName === 'session' && (changes.stopped || changes.handoffs)) {
    if (changes.stopped) indicators.stopped = changes.stopped.newValue?.stopped === true;
    if (changes.handoffs) indicators.handoffsWaiting = countWaiting(changes.handoffs.newValue);
    refreshBadge();
  }
});

/** Sender is one of our own pages (popup, options), never a content script or a web page. */
function fromExtensionPage(sender) {
  return sender.id === chrome.runtime.id && typeof sender.url === 'string' && sender.url.startsWith(EXTENSION_URL);
}

async function popupState() {
  let grants = [];
  try {
    grants = router.grants.list();
    loadIndicators();
  } catch {
    // the router has not loaded; the stored indicators stand
  }
  return {
    ...bridge.snapshot(),
    display: badgeFor({ state: bridge.state, ...indicators }, (key) => chrome.i18n.getMessage(key)),
    stopped: indicators.stopped,
    handoffsWaiting: indicators.handoffsWaiting,
    grants,
    defaultGrantMinutes,
    transportMode: transports.mode,
    transportProblem: transports.describe().problem,
    nativeAvailable: transports.nativeAvailable,
    version: chrome.runtime.getManifest().version,
    now: Date.now(),
  };
}

async function handlePopupMessage(message) {
  await ready;
  switch (message.type) {
    case 'popup.state':
      return popupState();
    case 'popup.pair':
      // Answers at once; the code and the outcome arrive through popup.state / chaperone.state.
      bridge.pair();
      return popupState();
    case 'popup.cancelPairing':
      bridge.cancelPairing();
      return popupState();
    case 'popup.unpair':
      await bridge.unpair();
      return popupState();
    case 'popup.tabs':
    case 'popup.createGrant':
    case 'popup.revokeGrant':
    case 'popup.resume':
    case 'popup.stop':
      return router.onPopupMessage(message);
    default:
      return { error: { code: 'unknown_method', message: `unknown popup message ${message.type}` } };
  }
}

// A page agent's own port (ops and answers, lib/page-bridge.js), or its settle port for an action
// that came by executeScript (the tab's in-flight request count, lib/network.js); the router
// exists from the start, so no need to wait for `ready`.
chrome.runtime.onConnect.addListener((port) => {
  if (!router.page.connect(port)) router.network.connect(port);
});

chrome.runtime.onMessage.addListener((message, sender, sendResponse) => {
  const type = typeof message?.type === 'string' ? message.type : '';
  if (type.startsWith('page.')) {
    ready.then(() => router.onPageMessage(message, sender))
      .then((reply) => sendResponse(reply ?? { ok: true }), (err) => sendResponse({ error: wireError(err) }));
    return true;
  }
  if (type.startsWith('popup.')) {
    if (!fromExtensionPage(sender)) return false; // content scripts never reach popup actions
    handlePopupMessage(message)
      .then((reply) => sendResponse(reply ?? { ok: true }), (err) => sendResponse({ error: wireError(err) }));
    return true;
  }
  return false;
});

function wireError(err) {
  return { code: typeof err?.code === 'string' ? err.code : 'internal', message: String(err?.message ?? err) };
}

// For DevTools and the end-to-end tests, which reach the worker through the DevTools protocol.
// A worker's globals are out of reach of web pages and content scripts, so this opens nothing.
globalThis.chaperone = Object.freeze({ bridge, router, tabCache, transports });
