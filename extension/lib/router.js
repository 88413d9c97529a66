// SPDX-License-Identifier: GPL-3.0-or-later
// The capability router: every request from the engine passes here, and every check happens in one
// fixed order — stopped → known method → params → live grant for the tab → scope → target — before
// a handler in capabilities/ runs. It also owns what the person does outside the engine's reach:
// grants from the popup, Stop from the page or popup, and handoff answers from the page banner
// (those messages are answered in router-messages.js).

import { ChaperoneError, METHODS, isStopExempt, methodNames } from './scopes.js';
import { HANDLERS } from './capabilities/index.js';
import { parseRef } from './capabilities/common.js';
import { GrantStore } from './grants.js';
import { HandoffStore } from './handoffs.js';
import { HoldStore } from './holds.js';
import { floorLevel, pageLevel, parseFloorRules } from './floor.js';
import { redactValue } from './redact.js';
import { NetworkWatch } from './network.js';
import { Capture } from './capture.js';
import { restoreShapes } from './api-shape.js';
import { PageBridge } from './page-bridge.js';
import { pageMessage, popupMessage } from './router-messages.js';
import { StopState, stopShortcut } from './stop.js';
import { checkTarget, webOrigin } from './targets.js';

export { ChaperoneError };

export const CAPTURES_KEY = 'captures';
export const STEPS_KEY = 'steps';
export const PLANS_KEY = 'plans';
export const MAX_CAPTURES = 32;
/** A plan has at most this many steps (browser_plan in the app; the page agent checks the same). */
export const PLAN_MAX_STEPS = 20;
/** Methods still answered on a blind page: which tabs and frames there are, and handoffs/holds. */
const FLOOR_BLIND_OK = new Set(['browser.tabs', 'browser.frames', 'browser.handoff.request',
  'browser.handoff.status', 'browser.handoff.cancel', 'browser.hold.status']);

/** The site's-API methods: their answers carry shapes ({name: 'string'}) the redactor must not mask. */
const SHAPED = new Set(['browser.network.list', 'browser.api.learn', 'browser.api.call']);

/** The page ops that read or act for an agent: the page agent refuses them on a sign-in page. */
const PAGE_READ_OR_ACT = new Set(['browser.context', 'browser.node.inspect', 'browser.node.action']);

const CAPTURE_ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';

/** {planId, step, of} when the plan id is an id and 1 ≤ step ≤ of ≤ PLAN_MAX_STEPS, else null. */
function planStepOf(planId, step, of) {
  if (typeof planId !== 'string' || !planId || planId.length > 64) return null;
  if (!Number.isSafeInteger(step) || !Number.isSafeInteger(of)) return null;
  if (step < 1 || step > of || of > PLAN_MAX_STEPS) return null;
  return { planId, step, of };
}

function randomCaptureId() {
  const bytes = new Uint8Array(8);
  globalThis.crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => CAPTURE_ALPHABET[b % 36]).join('');
}

/**
 * redactValue() of a browser.* result. A hold's `signature` is our own display hash of what was
 * held, not page data: its name alone would read as a secret, so it is put back as it was.
 */
function redactResult(v) {
  const out = redactValue(v).value;
  if (!v || typeof v !== 'object' || !out || typeof out !== 'object') return out;
  if (typeof v.holdId === 'string' && typeof v.signature === 'string') out.signature = v.signature;
  if (v.hold && typeof v.hold === 'object' && typeof v.hold.signature === 'string' && out.hold) {
    out.hold.signature = v.hold.signature;
  }
  return out;
}

export class Router {
  /**
   * @param chrome the chrome.* namespace (or a fake of the parts used)
   * @param emit   (event, data) → sends an event to the engine
   * @param now    () → ms since the epoch
   * @param timers {setTimeout, clearTimeout} for grant expiry (tests pass fakes)
   */
  constructor({ chrome, emit = () => {}, now = Date.now, timers } = {}) {
    this.chrome = chrome;
    this.now = now;
    this.emit = (event, data) => {
      // Every grant change (created, revoked, expired, a tab closed) starts or stops capture.
      if (event === 'grant.changed') this.capture?.sync(data?.grants);
      try {
        emit(event, data);
      } catch (e) {
        console.error(`${event} not sent`, e);
      }
    };
    this.grants = new GrantStore({ chrome, emit: this.emit, now, timers });
    this.stopState = new StopState({ storage: chrome.storage.session, emit: this.emit, now });
    this.handoffs = new HandoffStore({ storage: chrome.storage.session, emit: this.emit, now });
    this.holds = new HoldStore({ storage: chrome.storage.session, emit: this.emit, now });
    this.page = new PageBridge({ chrome });
    this.network = new NetworkWatch({ chrome, timers }); // in-flight requests while an action settles
    this.capture = new Capture({ chrome, now }); // the granted tabs' requests, for browser.network/api
    this._captures = new Map(); // captureId → {tabId, frameId, documentId, grantId, createdAt}; oldest first
    this._steps = new Map(); // tabId → step
    this._plans = new Map(); // tabId → {planId, step, of}: the plan step its last covered write used
    this._inflight = new Set(); // AbortControllers of running calls, aborted by Stop
    this._running = new Set(); // promises of running calls, which Stop waits for
    this.floorRules = { blind: [], handsOnly: [], bridgePort: 0 }; // engine.info `floor`, the person's
    this._saving = Promise.resolve();
    this._loading = null;
    this._loaded = false;

    this.grants.onEnded((grant, reason) => this._grantEnded(grant, reason));
    this.handoffs.onChange((h) => {
      if (h.state !== 'waiting') this._hideBanner(h);
    });
    this._listen();
  }

  /** Restores grants, stop, handoffs, captures, steps and plan steps from chrome.storage.session. Idempotent. */
  load() {
    this._loading ??= (async () => {
      await Promise.all([this.stopState.load(), this.handoffs.load(), this.holds.load()]);
      await this.grants.load(); // may expire grants, which ends their handoffs: after handoffs load
      this.capture.sync(this.grants.list()); // a restarted worker captures its granted tabs again
      const stored = await this.chrome.storage.session.get([CAPTURES_KEY, STEPS_KEY, PLANS_KEY]);
      const captures = stored?.[CAPTURES_KEY];
      if (Array.isArray(captures)) {
        for (const entry of captures.slice(-MAX_CAPTURES)) {
          if (Array.isArray(entry) && typeof entry[0] === 'string' && entry[1] && typeof entry[1] === 'object' &&
              !this._captures.has(entry[0])) {
            this._captures.set(entry[0], entry[1]);
          }
        }
      }
      const steps = stored?.[STEPS_KEY];
      if (steps && typeof steps === 'object') {
        for (const [tab, n] of Object.entries(steps)) {
          if (Number.isSafeInteger(Number(tab)) && Number.isSafeInteger(n) && !this._steps.has(Number(tab))) {
            this._steps.set(Number(tab), n);
          }
        }
      }
      // As the steps: a worker killed mid-plan still shows "plan step N of M" when it comes back.
      const plans = stored?.[PLANS_KEY];
      if (plans && typeof plans === 'object') {
        for (const [tab, p] of Object.entries(plans)) {
          const plan = p && typeof p === 'object' ? planStepOf(p.planId, p.step, p.of) : null;
          if (Number.isSafeInteger(Number(tab)) && plan && !this._plans.has(Number(tab))) {
            this._plans.set(Number(tab), plan);
          }
        }
      }
      this._loaded = true;
    })();
    return this._loading;
  }

  /**
   * The person's floor rules from engine.info `floor: {blind, handsOnly}` (bad entries dropped),
   * and the bridge's own port (a page on it is blind). Until the engine answers: built-ins only.
   */
  setFloorRules(infoFloor, bridgePort) {
    const { blind, handsOnly } = parseFloorRules(infoFloor);
    const port = Number.isInteger(bridgePort) ? bridgePort : this.floorRules.bridgePort;
    this.floorRules = { blind, handsOnly, bridgePort: port };
  }

  /** floorLevel() of a URL under the current rules. */
  floorOf(url) {
    return floorLevel(url, this.floorRules);
  }

  /** Method names, for auth.capabilities and extension.info. */
  methods() {
    return methodNames();
  }

  /** {stopped, source, at} for extension.info and the popup. */
  state() {
    return this.stopState.state();
  }

  /**
   * Stop: the flag is set before this returns — before anything is awaited — then calls in flight
   * are aborted and the pill in each granted tab turns to "stopped". Returns the storage write.
   */
  stop(source) {
    const saved = this.stopState.stop(source);
    const reason = new ChaperoneError('stopped', 'The person stopped the agent');
    for (const ac of this._inflight) ac.abort(reason);
    // Stop ends every plan in the app: no pill may still say "plan step N of M".
    if (this._plans.size > 0) {
      this._plans.clear();
      this._save([PLANS_KEY]);
    }
    this._pillsEverywhere();
    // Once every call that was running has settled, the app learns how long halting took.
    const pending = [...this._running];
    const at = this.now();
    this.halted = Promise.allSettled(pending).then(() => {
      this.emit('stop.halted', { source, at, haltedMs: Math.max(0, this.now() - at), calls: pending.length });
    });
    return saved;
  }

  /** Only the person resumes: from the popup, or the app through extension.resume. */
  resume(source) {
    const saved = this.stopState.resume(source);
    this._pillsEverywhere();
    return saved;
  }

  /**
   * One engine request. Resolves with the result or throws ChaperoneError.
   * The stop check is the first statement: nothing is awaited before it.
   */
  handle(method, params, { signal } = {}) {
    if (this.stopState.stopped && !isStopExempt(method)) {
      return Promise.reject(new ChaperoneError('stopped', 'The person stopped the agent'));
    }
    if (typeof method !== 'string' || !Object.hasOwn(METHODS, method)) {
      return Promise.reject(new ChaperoneError('unknown_method', 'Unknown method'));
    }
    const spec = HANDLERS[method];
    let p;
    try {
      p = spec.params(params);
    } catch (e) {
      return Promise.reject(e);
    }
    if (spec.early) {
      // extension.stop / extension.resume: decided now, not after storage answers.
      return spec.run({ router: this, chrome: this.chrome, params: p });
    }
    const running = this._run(method, spec, p, signal).then((v) => {
      // Whatever a page shows — a token in a link, a key in a text — leaves redacted.
      if (!method.startsWith('browser.')) return v;
      const out = redactResult(v);
      // A body's or a reply's shape ({password: 'string'}) names a type, never a value.
      if (SHAPED.has(method)) restoreShapes(v, out);
      return out;
    });
    this._running.add(running);
    const forget = () => this._running.delete(running);
    running.then(forget, forget);
    return running;
  }

  async _run(method, spec, params, signal) {
    const ac = new AbortController();
    const onAbort = () => ac.abort(signal.reason instanceof ChaperoneError ? signal.reason : undefined);
    if (signal?.aborted) throw new ChaperoneError('cancelled', 'The call was cancelled');
    signal?.addEventListener('abort', onAbort, { once: true });
    this._inflight.add(ac);
    let stepped = null;
    try {
      if (!this._loaded) await this.load();
      const exempt = isStopExempt(method);
      const ctx = { router: this, chrome: this.chrome, params, signal: ac.signal };
      if (spec.target === 'none') return await spec.run(ctx);

      const { scope } = METHODS[method];
      if (spec.target === 'any') {
        const live = this.grants.list();
        if (live.length === 0) throw this.grants.noGrantError();
        ctx.grants = live.filter((g) => g.scopes.includes(scope));
        if (ctx.grants.length === 0) throw new ChaperoneError('scope_denied', `No grant allows ${scope}`);
        return await spec.run(ctx);
      }

      // Which tab, frame and document the call names.
      let named;
      if (spec.target === 'capture') {
        const capture = this._captures.get(params.captureId);
        if (!capture) throw new ChaperoneError('stale_node', 'That ref is from an unknown or old capture');
        ctx.capture = capture;
        named = { tabId: capture.tabId, frameId: capture.frameId, documentId: capture.documentId };
      } else if (spec.target === 'handoff') {
        const handoff = this.handoffs.get(params.handoffId);
        if (!handoff) throw new ChaperoneError('invalid_params', 'No handoff has that id');
        ctx.handoff = handoff;
        named = { tabId: handoff.tabId };
      } else if (spec.target === 'hold') {
        const hold = this.holds.get(params.holdId);
        if (!hold) throw new ChaperoneError('invalid_params', 'No hold has that id');
        ctx.hold = hold;
        named = { tabId: hold.tabId };
      } else {
        named = spec.target(params);
      }

      const found = this.grants.lookupTab(named.tabId);
      if (found.error) throw found.error;
      const grant = found.grant;
      if (!grant.scopes.includes(scope)) {
        throw new ChaperoneError('scope_denied', `The grant does not allow ${scope}`, { tabId: named.tabId });
      }
      ctx.grant = grant;
      ctx.tabId = named.tabId;

      // A handoff is followed by grant and scope only: the person may be signing in elsewhere.
      // A hold's status is the same: it is about the tab, not what the tab shows now.
      const frameless = spec.target === 'handoff' || spec.target === 'hold';
      if (!frameless) {
        const { frame, checked } = await this.checkFrame(grant, named);
        if (ctx.capture && ctx.capture.grantId !== grant.grantId) {
          throw new ChaperoneError('stale_node', 'That ref was made under an earlier grant');
        }
        Object.assign(ctx, { frameId: named.frameId, documentId: checked.documentId, frame, target: checked.target });
        // The URL floor: a blind page is not read nor acted on; a hands-only page is read only.
        const floor = this.floorOf(frame?.url);
        if ((floor.level === 'blind' && !FLOOR_BLIND_OK.has(method)) ||
            (floor.level === 'hands-only' && method === 'browser.node.action')) {
          throw new ChaperoneError('refused_floor', floor.level === 'blind'
            ? 'This page is off limits to agents (the URL floor)' : 'Agents may read this page but not act on it',
          { tabId: named.tabId, level: floor.level, reason: floor.reason });
        }
        if (method === 'browser.navigate') {
          const to = this.floorOf(params.url);
          if (to.level === 'blind') {
            throw new ChaperoneError('refused_floor', 'That page is off limits to agents (the URL floor)',
              { tabId: named.tabId, level: to.level, reason: to.reason });
          }
        }
      }

      // The awaits above give a Stop time to land: check again, right before acting.
      if (this.stopState.stopped && !exempt) throw new ChaperoneError('stopped', 'The person stopped the agent');
      if (ac.signal.aborted) throw ac.signal.reason instanceof ChaperoneError
        ? ac.signal.reason : new ChaperoneError('cancelled', 'The call was cancelled');
      // A screenshot is the app's, for the person's trace of a step that failed: no step of the
      // agent's of its own, so the pill's count and the agent.step events do not move.
      if (!frameless && method !== 'browser.screenshot') {
        if (method === 'browser.node.action') this._planArrives(named.tabId, params);
        this._step(named.tabId, { pill: false });
        stepped = named.tabId;
      }
      let value;
      try {
        value = await spec.run(ctx);
      } catch (e) {
        throw PAGE_READ_OR_ACT.has(method) ? this._pageRefusal(e, ctx) : e;
      }
      if (method === 'browser.node.action' || method === 'browser.api.call') this._planUsed(named.tabId, params, value);
      return value;
    } finally {
      signal?.removeEventListener('abort', onAbort);
      this._inflight.delete(ac);
      // The pill shows the new step once the call is done: updating it in the page while the
      // call works there would hold up the page's own work (and its settle timer). A task
      // later, so the answer leaves first.
      if (stepped !== null) setTimeout(() => this._pill(stepped).catch(() => {}), 0);
    }
  }

  /**
   * The frame `named` ({tabId, frameId, documentId?}) names, as the browser has it now, checked
   * against the grant (checkTarget): → {frame, checked}, or throws stale_document, origin_changed…
   * Every request's target passes here; so does each act step of a batch that names another frame.
   */
  async checkFrame(grant, named) {
    let frame = null;
    try {
      frame = await this.chrome.webNavigation.getFrame({ tabId: named.tabId, frameId: named.frameId });
    } catch {
      frame = null; // the tab is gone
    }
    const checked = checkTarget(grant, named, frame);
    if (!checked.ok) throw checked.error;
    return { frame, checked };
  }

  // ---- captures ------------------------------------------------------------------------------

  newCaptureId() {
    let captureId;
    do captureId = randomCaptureId(); while (this._captures.has(captureId));
    return captureId;
  }

  recordCapture(captureId, { tabId, frameId, documentId, grantId }) {
    this._captures.delete(captureId);
    this._captures.set(captureId, { tabId, frameId, documentId, grantId, createdAt: this.now() });
    while (this._captures.size > MAX_CAPTURES) this._captures.delete(this._captures.keys().next().value);
    this._save([CAPTURES_KEY]);
  }

  /** The newest capture of this exact frame and document, as {captureId, ...}, or null. */
  lastCaptureOf(tabId, frameId, documentId) {
    let last = null;
    for (const [captureId, c] of this._captures) {
      if (c.tabId === tabId && c.frameId === frameId && c.documentId === documentId) last = { captureId, ...c };
    }
    return last;
  }

  /** For tests and diagnostics: the capture a wire ref names, or null. */
  captureOfRef(ref) {
    try {
      return this._captures.get(parseRef(ref).captureId) ?? null;
    } catch {
      return null;
    }
  }

  /**
   * The page agent refuses to read or act on a page that shows a password field (refused_floor).
   * Its reply's detail does not cross the page bridge, so it is made again here, as the URL floor
   * would give it for a page with a visible password: pageLevel() → blind, "sign_in".
   */
  _pageRefusal(e, ctx) {
    if (!(e instanceof ChaperoneError) || e.code !== 'refused_floor' || e.data !== undefined) return e;
    const floor = pageLevel(ctx.frame?.url, true, this.floorRules);
    return new ChaperoneError('refused_floor', 'This page shows a password field: agents do not read or act on sign-in pages',
      { tabId: ctx.tabId, level: floor.level, reason: floor.reason });
  }

  // ---- steps, plan steps and the pill --------------------------------------------------------

  /**
   * A click arrives. The app sends `allow` with every click while a plan of the agent's runs, and
   * none once it ended (steps used, an hour, Stop) or when no plan covers it: a click without
   * `allow`, or with another plan's, ends what the pill says about the old one. Fills, focus and
   * scroll never carry `allow` (the app sends it with clicks only), so they say nothing about it.
   */
  _planArrives(tabId, params) {
    if (params.action !== 'click' && params.action !== 'dblclick') return;
    const kept = this._plans.get(tabId);
    if (kept && params.allow?.planId !== kept.planId) {
      this._plans.delete(tabId);
      this._save([PLANS_KEY]);
    }
  }

  /**
   * A click's answer carries `plan` when an approved plan let its write through: remember which
   * step of which plan it used. The page echoes the step when it was given one; else the step the
   * app sent (`allow.step` is the step this write would be) — the same number either way.
   */
  _planUsed(tabId, params, value) {
    const used = value && typeof value === 'object' ? value.plan : null;
    const allow = params.allow;
    if (!used || typeof used !== 'object' || !allow || used.planId !== allow.planId) return;
    const plan = planStepOf(allow.planId, used.step, used.of) ?? planStepOf(allow.planId, allow.step, allow.of);
    if (!plan) return;
    this._plans.set(tabId, plan);
    this._save([PLANS_KEY]);
  }

  /** {planId, step, of} of the plan step last used on the tab, or null. */
  planOf(tabId) {
    const p = this._plans.get(tabId);
    return p ? { ...p } : null;
  }

  stepOf(tabId) {
    return this._steps.get(tabId) ?? 0;
  }

  _step(tabId, { pill = true } = {}) {
    const step = this.stepOf(tabId) + 1;
    this._steps.set(tabId, step);
    // Told and saved once the call's own message is on its way to the page (the call's first
    // await): neither is needed before the page acts, and each costs the worker a little.
    queueMicrotask(() => {
      this._save([STEPS_KEY]);
      this.emit('agent.step', { tabId, step });
    });
    if (pill) this._pill(tabId).catch(() => {});
  }

  /** Shows (or updates) the pill in the tab's top document — only while it is on the granted site. */
  async _pill(tabId) {
    const found = this.grants.lookupTab(tabId);
    if (found.error) return;
    const where = await this._grantedTop(found.grant, tabId);
    if (!where) return;
    await this.page.fire(where, 'pill', await this._pillArgsWithKey(tabId));
  }

  /** _pillArgs (read after the await, as they are now) and the Stop shortcut as bound now, if any. */
  async _pillArgsWithKey(tabId) {
    const shortcut = await stopShortcut(this.chrome.commands);
    const args = this._pillArgs(tabId);
    return shortcut && args.show ? { ...args, shortcut } : args;
  }

  /** The pill op's args for a tab: its step, stopped, and the plan step while a plan runs there. */
  _pillArgs(tabId) {
    const step = this.stepOf(tabId);
    const stopped = this.stopState.stopped;
    if (!(step > 0 || stopped)) return { show: false };
    const args = { show: true, step, stopped };
    const plan = this._plans.get(tabId);
    if (plan) args.plan = { step: plan.step, of: plan.of };
    return args;
  }

  _pillsEverywhere() {
    const tabs = new Set();
    for (const g of this.grants.list()) for (const t of g.targets) tabs.add(t.tabId);
    for (const tabId of tabs) this._pill(tabId).catch(() => {});
  }

  /** {tabId, frameId:0, documentId} of the tab's top document when it passes the grant's check. */
  async _grantedTop(grant, tabId) {
    let frame = null;
    try {
      frame = await this.chrome.webNavigation.getFrame({ tabId, frameId: 0 });
    } catch {
      return null;
    }
    const checked = checkTarget(grant, { tabId, frameId: 0 }, frame);
    return checked.ok ? { tabId, frameId: 0, documentId: checked.documentId } : null;
  }

  // ---- grants and handoffs ending ----------------------------------------------------------------

  _grantEnded(grant, reason) {
    this.handoffs.endForGrant(grant.grantId);
    this.holds.endForGrant(grant.grantId);
    for (const [id, c] of [...this._captures]) if (c.grantId === grant.grantId) this._captures.delete(id);
    const tabs = new Set(grant.targets.map((t) => t.tabId));
    for (const tabId of tabs) {
      this._steps.delete(tabId);
      this._plans.delete(tabId);
    }
    this._save();
    if (reason === 'closed') return;
    for (const tabId of tabs) {
      this._grantedTop(grant, tabId)
        .then((where) => where && this.page.fire(where, 'pill', { show: false }))
        .catch(() => {});
    }
  }

  async _hideBanner(h) {
    try {
      const frame = await this.chrome.webNavigation.getFrame({ tabId: h.tabId, frameId: 0 });
      // Only into a page of the site the handoff was made on; any other page never had the banner.
      if (!frame || webOrigin(frame.url) !== h.origin) return;
      await this.page.fire({ tabId: h.tabId, frameId: 0, documentId: frame.documentId }, 'handoff',
        { show: false, handoffId: h.handoffId });
    } catch {
      // The tab is gone; so is the banner.
    }
  }

  // ---- browser events ---------------------------------------------------------------------------

  /** Registered in the constructor, which the worker runs at top level, so events wake it. */
  _listen() {
    const c = this.chrome;
    const after = (fn) => (...args) => {
      this.load().then(() => fn(...args)).catch((e) => console.error('event handling failed', e));
    };
    c.webNavigation?.onCommitted?.addListener(after((d) => this.grants.handleCommitted(d)));
    c.webNavigation?.onDOMContentLoaded?.addListener(after((d) => this._topLoaded(d)));
    c.tabs?.onRemoved?.addListener(after((tabId) => this._tabRemoved(tabId)));
    c.tabs?.onUpdated?.addListener(after((tabId, info, tab) => this.grants.handleTabUpdated(tabId, info, tab)));
    c.alarms?.onAlarm?.addListener(after((alarm) => this.grants.handleAlarm(alarm)));
  }

  /** A granted tab loaded a new page on its site: bring back the banner and the pill. */
  async _topLoaded(d) {
    if (!d || d.frameId !== 0 || d.documentLifecycle === 'prerender') return;
    const found = this.grants.lookupTab(d.tabId);
    if (found.error) return;
    const where = await this._grantedTop(found.grant, d.tabId);
    if (!where) return;
    const waiting = this.handoffs.waitingForTab(d.tabId);
    if (waiting && waiting.origin === found.grant.targets.find((t) => t.tabId === d.tabId && t.frameId === 0)?.origin) {
      await this.page.fire(where, 'handoff',
        { show: true, handoffId: waiting.handoffId, reason: waiting.reason, message: waiting.message });
    }
    const pill = await this._pillArgsWithKey(d.tabId);
    if (pill.show) await this.page.fire(where, 'pill', pill);
  }

  _tabRemoved(tabId) {
    this.handoffs.endForTab(tabId, 'page');
    this._steps.delete(tabId);
    this._plans.delete(tabId);
    for (const [id, c] of [...this._captures]) if (c.tabId === tabId) this._captures.delete(id);
    this._save();
    this.grants.handleTabRemoved(tabId);
  }

  // ---- messages from our own pages and content scripts (router-messages.js) ---------------------

  /** A content script's message (type 'page.*'): Stop from the pill or Esc, the banner's answer. */
  onPageMessage(message, sender = {}) {
    return pageMessage(this, message, sender);
  }

  /** The popup's message (type 'popup.*'): grants, Stop and Resume, what it shows. */
  onPopupMessage(message) {
    return popupMessage(this, message);
  }

  /** Resolves when every change so far (grants, stop, handoffs, captures, steps, plans) is in storage. */
  async flush() {
    await Promise.all([this.grants.flush(), this.stopState.flush(), this.handoffs.flush(), this.holds.flush(),
      this._saving]);
  }

  /**
   * Saves what a restarted worker needs; only `keys` when one part changed. An act bumps a step
   * and nothing else: writing the captures again each time would cost every act the copy.
   */
  _save(keys = [CAPTURES_KEY, STEPS_KEY, PLANS_KEY]) {
    const parts = {
      [CAPTURES_KEY]: () => [...this._captures.entries()].map(([k, v]) => [k, { ...v }]),
      [STEPS_KEY]: () => Object.fromEntries([...this._steps.entries()].map(([k, v]) => [String(k), v])),
      [PLANS_KEY]: () => Object.fromEntries([...this._plans.entries()].map(([k, v]) => [String(k), { ...v }])),
    };
    const snapshot = Object.fromEntries(keys.map((k) => [k, parts[k]()]));
    this._saving = this._saving
      .then(() => this.chrome.storage.session.set(snapshot))
      .catch((e) => console.error('router state not saved', e));
    return this._saving;
  }
}
