// SPDX-License-Identifier: GPL-3.0-or-later
// The popup: shows the worker's state, runs pairing (the code to compare), and lets the person
// create and revoke grants and stop the agent. Everything it asks goes to the worker, which checks
// it again; page titles and URLs are only ever set as text.

import { displayState } from '../lib/badge.js';
import { localize, t } from '../lib/i18n.js';
import { transportLine } from '../lib/transport-text.js';

const $ = (id) => document.getElementById(id);

const SCOPE = {
  tabsRead: 'browser.tabs.read',
  domRead: 'browser.dom.read',
  domWrite: 'browser.dom.write',
  tabActivate: 'browser.tab.activate',
  humanTakeover: 'browser.human.takeover',
  tabNavigate: 'browser.tab.navigate',
  cookiesRead: 'browser.cookies.read',
  networkRead: 'browser.network.read',
  apiCall: 'browser.api.call',
};
const PRESETS = {
  read: [SCOPE.tabsRead, SCOPE.domRead],
  control: [SCOPE.tabsRead, SCOPE.domRead, SCOPE.domWrite, SCOPE.tabActivate, SCOPE.humanTakeover],
};
const EXTRAS = [SCOPE.domWrite, SCOPE.tabActivate, SCOPE.humanTakeover, SCOPE.tabNavigate, SCOPE.cookiesRead,
  SCOPE.networkRead, SCOPE.apiCall];
const SCOPE_LABEL_KEYS = {
  [SCOPE.tabsRead]: 'scopeTabsRead',
  [SCOPE.domRead]: 'scopeDomRead',
  [SCOPE.domWrite]: 'scopeDomWrite',
  [SCOPE.tabActivate]: 'scopeTabActivate',
  [SCOPE.humanTakeover]: 'scopeHumanTakeover',
  [SCOPE.tabNavigate]: 'scopeTabNavigate',
  [SCOPE.cookiesRead]: 'scopeCookiesRead',
  [SCOPE.networkRead]: 'scopeNetworkRead',
  [SCOPE.apiCall]: 'scopeApiCall',
};
const STATUS_KEYS = {
  not_paired: 'statusNotPaired',
  pairing: 'statusPairing',
  connecting: 'statusConnecting',
  connected: 'statusConnected',
  stopped: 'statusStopped',
  handoff: 'statusHandoff',
  wrong_engine: 'statusWrongEngine',
  revoked: 'statusRevoked',
};
const OUTCOME_KEYS = {
  approved: 'outcomeApproved',
  rejected: 'outcomeRejected',
  expired: 'outcomeExpired',
  locked: 'outcomeLocked',
  not_running: 'outcomeNotRunning',
  busy: 'outcomeBusy',
  rate_limited: 'outcomeRateLimited',
  failed: 'outcomeFailed',
  bad_signature: 'outcomeBadSignature',
  cancelled: 'outcomeCancelled',
};

let state = null;
let tabsBuiltFor = null; // the windowId the picker lists
let grantIdsShown = '';

function send(message) {
  return chrome.runtime.sendMessage(message).then((reply) => {
    if (reply && typeof reply === 'object' && reply.error) {
      const err = new Error(reply.error.message || reply.error.code);
      err.code = reply.error.code;
      throw err;
    }
    return reply;
  });
}

/** "4:05", or "1:02:03" past an hour. */
function clock(ms) {
  const total = Math.max(0, Math.ceil(ms / 1000));
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = String(total % 60).padStart(2, '0');
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${s}` : `${m}:${s}`;
}

function show(el, visible) {
  el.hidden = !visible;
}

function setAlert(el, text) {
  el.textContent = text || '';
  show(el, Boolean(text));
}

// ---- rendering ----

function outcomeText(result) {
  if (!result) return '';
  const key = OUTCOME_KEYS[result.outcome] ?? 'outcomeFailed';
  if (result.outcome === 'locked') {
    const minutes = Math.max(1, Math.ceil(((result.retryAt ?? Date.now()) - Date.now()) / 60000));
    return t(key, [String(minutes)]);
  }
  if (result.outcome === 'not_running') return t(key, [String(result.port)]);
  return t(key);
}

// The app's default duration preselects the closest offered one, until the person picks.
let durationTouched = false;
function applyDefaultDuration() {
  const minutes = state?.defaultGrantMinutes;
  if (durationTouched || !Number.isInteger(minutes)) return;
  const select = $('grant-duration');
  let best = null;
  for (const option of select.options) {
    const m = Number(option.value) / 60000;
    if (best === null || Math.abs(m - minutes) < Math.abs(Number(best.value) / 60000 - minutes)) best = option;
  }
  if (best) select.value = best.value;
}

function render() {
  if (!state) return;
  applyDefaultDuration();
  const display = displayState(state);
  const paired = state.paired;
  const pairing = state.pairing;

  $('status-dot').dataset.state = display;
  let status = t(STATUS_KEYS[display] ?? 'statusNotPaired');
  if (display === 'connecting' && state.lastError === 'not_running') {
    // Over the native host only, the port is the host's to know, not the one in Options.
    status = state.transportMode === 'native' ? t('statusNotRunningNative') : t('statusNotRunning', [String(state.port)]);
  }
  $('status-text').textContent = status;
  const through = transportLine(state);
  $('transport-line').textContent = through;
  show($('transport-line'), Boolean(through));

  let detail = '';
  if (display === 'wrong_engine') detail = t('wrongEngineHelp');
  else if (display === 'revoked') detail = t('revokedHelp');
  else if (state.stopped && paired) detail = t('stoppedNotice');
  else if (display === 'handoff') detail = t('handoffNotice');
  setAlert($('status-detail'), detail);

  // Pairing: shown when not paired, when the pairing must be redone, or while an attempt runs.
  const needsPairing = !paired || ['wrong_engine', 'revoked'].includes(state.state);
  show($('pair-section'), needsPairing || Boolean(pairing) || Boolean(state.pairingResult && state.pairingResult.outcome !== 'approved'));
  show($('pair-intro'), !pairing && !paired);
  show($('pair-contacting'), pairing?.phase === 'connecting');
  const pending = pairing?.phase === 'pending';
  show($('pair-code-box'), pending);
  if (pending) {
    $('pair-code').textContent = pairing.display;
    $('pair-countdown').textContent = t('pairExpiresIn', [clock(pairing.expiresAt - Date.now())]);
  }
  show($('pair-cancel'), Boolean(pairing));
  setAlert($('pair-outcome'), pairing ? '' : outcomeText(state.pairingResult));
  const pairButton = $('pair-button');
  show(pairButton, !pairing);
  pairButton.textContent = t(paired ? 'pairAgainButton' : 'pairButton');
  const locked = state.pairingResult?.outcome === 'locked' && (state.pairingResult.retryAt ?? 0) > Date.now();
  pairButton.disabled = locked;

  const working = paired && !pairing;
  show($('stop-section'), working);
  show($('stop-button'), working && !state.stopped);
  show($('resume-button'), working && state.stopped);
  show($('active-section'), working);
  show($('grant-section'), working);
  show($('unpair-box'), paired);
  if (working) {
    renderGrants();
    if (tabsBuiltFor === null) buildTabPicker().catch((err) => setAlert($('grant-error'), err.message));
  }
}

function grantTitle(grant) {
  const target = grant.targets?.[0];
  return grant.label || target?.title || target?.origin || grant.grantId;
}

function renderGrants() {
  const grants = (state.grants ?? []).filter((g) => g.expiresAt > Date.now());
  const ids = grants.map((g) => g.grantId).join(',');
  const list = $('active-list');
  show($('active-none'), grants.length === 0);
  if (ids !== grantIdsShown) {
    grantIdsShown = ids;
    list.replaceChildren(...grants.map(grantItem));
  }
  for (const li of list.children) {
    const grant = grants.find((g) => g.grantId === li.dataset.grantId);
    if (grant) li.querySelector('.countdown').textContent = t('grantEndsIn', [clock(grant.expiresAt - Date.now())]);
  }
}

function grantItem(grant) {
  const li = document.createElement('li');
  li.dataset.grantId = grant.grantId;
  const text = document.createElement('div');
  const title = document.createElement('strong');
  title.textContent = grantTitle(grant);
  const where = document.createElement('span');
  where.className = 'muted small';
  const origins = [...new Set((grant.targets ?? []).map((x) => x.origin).filter(Boolean))];
  where.textContent = origins.join(', ');
  const scopes = document.createElement('span');
  scopes.className = 'muted small';
  scopes.textContent = (grant.scopes ?? []).map((s) => t(SCOPE_LABEL_KEYS[s] ?? '') || s).join(' · ');
  const countdown = document.createElement('span');
  countdown.className = 'countdown small';
  text.append(title, where, scopes, countdown);
  const revoke = document.createElement('button');
  revoke.type = 'button';
  revoke.textContent = t('grantRevoke');
  revoke.setAttribute('aria-label', t('grantRevokeNamed', [grantTitle(grant)]));
  revoke.addEventListener('click', async () => {
    revoke.disabled = true;
    try {
      await send({ type: 'popup.revokeGrant', grantId: grant.grantId });
      setAlert($('active-error'), '');
    } catch (err) {
      revoke.disabled = false;
      setAlert($('active-error'), t('grantRevokeFailed', [err.message]));
    }
    await refresh();
  });
  li.append(text, revoke);
  return li;
}

// ---- the grant creator ----

async function targetWindowId() {
  // Tests open this page as a tab and may name the window whose tabs to list.
  const forced = new URLSearchParams(location.search).get('windowId');
  if (forced !== null && /^\d+$/.test(forced)) return Number(forced);
  return (await chrome.windows.getCurrent()).id;
}

const isWeb = (url) => /^https?:\/\//i.test(url ?? '');

function originOf(url) {
  try {
    return new URL(url).origin;
  } catch {
    return url;
  }
}

async function buildTabPicker() {
  const windowId = await targetWindowId();
  tabsBuiltFor = windowId;
  const tabs = (await chrome.tabs.query({ windowId })).filter((tab) => isWeb(tab.url));
  const list = $('tab-list');
  show($('tab-none'), tabs.length === 0);
  const items = [];
  for (const tab of tabs) {
    let frames = [];
    try {
      frames = (await chrome.webNavigation.getAllFrames({ tabId: tab.id })) ?? [];
    } catch {
      // a discarded tab has no frames to list; its main frame is still offered
    }
    items.push(tabItem(tab, frames.filter((f) => f.frameId !== 0 && isWeb(f.url))));
  }
  list.replaceChildren(...items);
}

function tabItem(tab, childFrames) {
  const li = document.createElement('li');
  const id = `tab-${tab.id}`;
  const box = document.createElement('input');
  box.type = 'checkbox';
  box.id = id;
  box.className = 'tab-box';
  box.dataset.tabId = String(tab.id);
  const label = document.createElement('label');
  label.htmlFor = id;
  const title = document.createElement('span');
  title.className = 'tab-title';
  title.textContent = tab.title || t('tabUntitled');
  const origin = document.createElement('span');
  origin.className = 'muted small';
  origin.textContent = originOf(tab.url);
  label.append(title, origin);
  li.append(box, label);
  if (childFrames.length) {
    const sub = document.createElement('ul');
    sub.className = 'frames';
    for (const frame of childFrames) {
      const fli = document.createElement('li');
      const fid = `frame-${tab.id}-${frame.frameId}`;
      const fbox = document.createElement('input');
      fbox.type = 'checkbox';
      fbox.id = fid;
      fbox.className = 'frame-box';
      fbox.dataset.frameId = String(frame.frameId);
      fbox.disabled = true;
      const flabel = document.createElement('label');
      flabel.htmlFor = fid;
      flabel.textContent = t('frameLabel', [originOf(frame.url)]);
      fli.append(fbox, flabel);
      sub.append(fli);
    }
    li.append(sub);
    // A frame can only be granted with its tab.
    box.addEventListener('change', () => {
      for (const f of sub.querySelectorAll('.frame-box')) {
        f.disabled = !box.checked;
        if (!box.checked) f.checked = false;
      }
    });
  }
  return li;
}

function selectedPreset() {
  return document.querySelector('input[name="preset"]:checked')?.value ?? 'read';
}

function buildExtras() {
  const list = $('extra-list');
  const checked = new Set([...list.querySelectorAll('input:checked')].map((i) => i.value));
  const preset = PRESETS[selectedPreset()];
  list.replaceChildren(...EXTRAS.filter((s) => !preset.includes(s)).map((scope) => {
    const li = document.createElement('li');
    const id = `extra-${scope.replace(/\./g, '-')}`;
    const box = document.createElement('input');
    box.type = 'checkbox';
    box.id = id;
    box.value = scope;
    box.checked = checked.has(scope);
    const label = document.createElement('label');
    label.htmlFor = id;
    label.textContent = t(SCOPE_LABEL_KEYS[scope]);
    li.append(box, label);
    return li;
  }));
}

async function createGrant(event) {
  event.preventDefault();
  const tabs = [...document.querySelectorAll('.tab-box:checked')].map((box) => {
    const li = box.closest('li');
    const frameIds = [0, ...[...li.querySelectorAll('.frame-box:checked')].map((f) => Number(f.dataset.frameId))];
    return { tabId: Number(box.dataset.tabId), frameIds };
  });
  if (tabs.length === 0) {
    setAlert($('grant-error'), t('grantErrorNoTabs'));
    return;
  }
  const button = $('grant-create');
  button.disabled = true;
  try {
    await send({
      type: 'popup.createGrant',
      tabs,
      preset: selectedPreset(),
      extraScopes: [...$('extra-list').querySelectorAll('input:checked')].map((i) => i.value),
      durationMs: Number($('grant-duration').value),
      label: $('grant-label').value.trim(),
    });
    setAlert($('grant-error'), '');
    $('grant-form').reset();
    durationTouched = false;
    applyDefaultDuration();
    buildExtras();
    tabsBuiltFor = null; // the tabs may have changed meanwhile
  } catch (err) {
    setAlert($('grant-error'), t('grantErrorGeneric', [err.message]));
  } finally {
    button.disabled = false;
  }
  await refresh();
}

// ---- wiring ----

async function refresh() {
  try {
    state = await send({ type: 'popup.state' });
  } catch (err) {
    // The worker is starting; the next tick asks again.
    console.debug('popup.state', err?.message);
    return;
  }
  render();
}

async function act(message) {
  try {
    await send(message);
  } catch (err) {
    setAlert($('status-detail'), err.message);
  }
  await refresh();
}

function wire() {
  $('pair-button').addEventListener('click', () => act({ type: 'popup.pair' }));
  $('pair-cancel').addEventListener('click', () => act({ type: 'popup.cancelPairing' }));
  $('stop-button').addEventListener('click', () => act({ type: 'popup.stop' }));
  $('resume-button').addEventListener('click', () => act({ type: 'popup.resume' }));
  $('unpair-button').addEventListener('click', () => {
    show($('unpair-confirm'), true);
    $('unpair-no').focus();
  });
  $('unpair-no').addEventListener('click', () => {
    show($('unpair-confirm'), false);
    $('unpair-button').focus();
  });
  $('unpair-yes').addEventListener('click', async () => {
    show($('unpair-confirm'), false);
    tabsBuiltFor = null;
    await act({ type: 'popup.unpair' });
  });
  for (const radio of document.querySelectorAll('input[name="preset"]')) radio.addEventListener('change', buildExtras);
  $('grant-form').addEventListener('submit', createGrant);
  $('grant-duration').addEventListener('change', () => { durationTouched = true; });
  // The worker pushes state changes (the pairing code, the outcome) as they happen.
  chrome.runtime.onMessage.addListener((message) => {
    if (message?.type === 'chaperone.state' && state) {
      state = { ...state, ...message.state };
      render();
    }
  });
}

localize(document);
wire();
buildExtras();
refresh();
setInterval(() => render(), 1000); // countdowns
setInterval(() => refresh(), 2000); // grants and stop state
