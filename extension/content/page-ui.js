// SPDX-License-Identifier: GPL-3.0-or-later
// Chaperone's own UI inside a granted page: the pill ("Agent · step N") and the handoff banner.
// Injected by chrome.scripting.executeScript({files}) after snapshot-core.js and outward.js, before
// page-agent.js, into the extension's ISOLATED world; page-agent.js calls globalThis.ChaperonePageUi.
// A classic script; installing twice is harmless (the first install wins).
//
// The page shares the DOM with us, so it can find the two host elements (children of <html>) and
// try to hide, move, cover or remove them, or to dress a click on them up as something else
// (clickjacking). What holds, and why:
// - Each host is in the top layer (popover="manual" + showPopover()), above any z-index; its inline
//   style is `all: initial` plus every property it needs, all !important — inline !important beats
//   any stylesheet rule and any animation, so page CSS cannot restyle it.
// - Observers put it back, never timers (a background tab's timers are throttled to once a second
//   or less): a MutationObserver on each host's attributes and on <html>'s children (its callback
//   runs before the next paint), a capture-phase `toggle` listener for a page popover or dialog
//   entering the top layer above ours, and an IntersectionObserver v2 (trackVisibility) for
//   whatever covers or hides it some other way. A page that fights back is given a bounded number
//   of repairs, never an endless microtask loop.
// - A click counts only when a person made it (isTrusted), on the real host as drawn: untampered,
//   at the top of the hit-test stack at the click's point, and reported visible by the
//   IntersectionObserver (the banner's Done and Cancel: visible for ARM_MS already, so a bar that
//   a page reveals under the pointer just before the click does not count). Otherwise the click is
//   ignored and the host re-mounted.
// - What a page can still do: make the pill or banner unusable (an inert <html>, a cancelled
//   `beforetoggle`, content-visibility on the root, swallowing clicks or Esc in its own capture
//   listeners). Then the Stop shortcut (chrome.commands, which pages never see), the popup and the
//   app remain; a click it arranges still never answers a handoff.

(function () {
  'use strict';

  if (globalThis.ChaperonePageUi) return;

  const ARM_MS = 500;                 // the banner's buttons count after this long fully visible
  const REPAIRS_PER_SECOND = 30;      // beyond this the page is fighting: stop until the next show
  const SHORTCUT_MAX = 40;            // "Ctrl+Shift+E", "⇧⌘E", or a localised key name
  const HAS_IO2 = typeof IntersectionObserver === 'function' && typeof IntersectionObserverEntry === 'function' &&
    'isVisible' in IntersectionObserverEntry.prototype;

  // English fallback for every page string (chrome.i18n.getMessage returns '' for a key the
  // extension's _locales lack, or outside an extension in the tests). Translations: _locales.
  const EN = {
    page_pill_region: 'Chaperone agent',
    page_pill_step: 'Agent · step $1',
    page_pill_idle: 'Agent working',
    // Two numbers: positional $1/$2 in the catalogues too (getMessage substitutes them directly).
    page_pill_plan: 'Agent · plan step $1 of $2',
    page_pill_shortcut: '$1 to stop',
    page_pill_stopped: 'Agent stopped',
    page_pill_stop: 'Stop',
    page_pill_stop_hint: 'Stop the agent everywhere until you resume it in Chaperone',
    page_handoff_region: 'Chaperone needs you',
    page_handoff_title: 'Chaperone needs you',
    page_handoff_reason_qr: 'Scan the QR code on this page with your phone, then press Done.',
    page_handoff_reason_mfa: 'Enter the verification code for this site yourself, then press Done.',
    page_handoff_reason_captcha: 'Complete the CAPTCHA check on this page, then press Done.',
    page_handoff_reason_device: 'Confirm the request on your other device, then press Done.',
    page_handoff_reason_login: 'Sign in to this site yourself, then press Done. The agent never sees your password.',
    page_handoff_reason_other: 'The agent needs you to do something on this page. When you have finished, press Done.',
    page_handoff_agent_message: 'Message from the agent:',
    page_handoff_done: 'Done',
    page_handoff_cancel: 'Cancel task',
    page_handoff_move: 'Move this bar',
    page_handoff_sent_done: 'Thanks. Handing the page back to the agent.',
    page_handoff_sent_cancel: 'Task cancelled.',
    page_handoff_recheck: 'This bar had only just appeared, or was hidden or covered. Check what it says, then press again.',
  };

  function msg(key, subs) {
    let s = '';
    try {
      const i18n = globalThis.chrome && globalThis.chrome.i18n;
      if (i18n && typeof i18n.getMessage === 'function') s = i18n.getMessage(key, subs) || '';
    } catch (_) {
      s = '';   // an orphaned content script (extension reloaded) throws here
    }
    if (!s) {
      s = EN[key] || key;
      (subs || []).forEach((v, i) => { s = s.split(`$${i + 1}`).join(String(v)); });
    }
    return s;
  }

  function send(message) {
    try {
      const rt = globalThis.chrome && globalThis.chrome.runtime;
      if (!rt || typeof rt.sendMessage !== 'function') return;
      const p = rt.sendMessage(message);
      if (p && typeof p.catch === 'function') p.catch(() => {});
    } catch (_) {
      // No worker to hear it (extension reloaded): nothing in the page can do better.
    }
  }

  const now = () => performance.now();
  const hosts = new WeakSet();        // our hosts: never scanned, never given a ref, never counted
  const surfaces = [];                // the pill's and the banner's state, once made

  // ---- one host: made, placed, watched ---------------------------------------------------------

  // No ::backdrop: the top layer gives each host one, a transparent full-viewport box above all that
  // came before — the other host included, which the IntersectionObserver would then call covered.
  // An !important rule of the shadow tree beats any of the page's for the host's own pseudo-element.
  const BASE_CSS = `
    :host { all: initial; }
    :host::backdrop { display: none !important; }
    * { box-sizing: border-box; font: 13px/1.35 system-ui, -apple-system, "Segoe UI", "Noto Sans", "Noto Sans CJK SC", sans-serif; }
    button { cursor: pointer; border-radius: 6px; padding: 4px 10px; font-weight: 600; }
    button:focus-visible { outline: 2px solid #3584e4; outline-offset: 2px; }
    [hidden] { display: none !important; }`;

  /** The host's whole inline style: `all: initial`, then what it needs, each !important. */
  function hostStyle(pos) {
    const decl = [
      ['all', 'initial'], ['position', 'fixed'], ['z-index', '2147483647'], ['display', 'block'],
      ['margin', '0'], ['padding', '0'], ['border', '0'], ['background', 'transparent'],
      ['overflow', 'visible'], ['opacity', '1'], ['visibility', 'visible'], ['transform', 'none'],
      ['filter', 'none'], ['clip-path', 'none'], ['pointer-events', 'auto'], ['height', 'auto'],
    ];
    for (const k of ['top', 'right', 'bottom', 'left', 'width']) decl.push([k, pos[k] || 'auto']);
    // A zoom on <html> (a page's own, or one set to shrink us) is undone on the host itself.
    const z = document.documentElement ? document.documentElement.currentCSSZoom : 1;
    if (Number.isFinite(z) && z > 0 && Math.abs(z - 1) > 0.001) decl.push(['zoom', String(1 / z)]);
    return decl.map(([k, v]) => `${k}: ${v} !important;`).join(' ');
  }

  function makeSurface(kind, css, pos, armMs) {
    const host = document.createElement('div');
    hosts.add(host);
    const root = host.attachShadow({ mode: 'closed' });
    const style = document.createElement('style');
    style.textContent = BASE_CSS + css;
    root.appendChild(style);
    const s = {
      kind, host, root, pos, armMs, style: '', declared: null, shown: false, box: null,
      visibleSince: null,             // IntersectionObserver time since when it has been visible
      seen: !HAS_IO2,                 // without IO v2 (old browsers) placement alone must do
      repairs: [],                    // times of recent repairs, for the fight bound
    };
    // Attributes of the host: the page restyling, hiding (hidden, inert) or un-popovering it.
    new MutationObserver(() => heal(s)).observe(host, { attributes: true });
    if (HAS_IO2) {
      s.io = new IntersectionObserver((entries) => {
        for (const e of entries) seeEntry(s, e);
      }, { trackVisibility: true, delay: 100, threshold: [0, 1] });
    }
    surfaces.push(s);
    return s;
  }

  function seeEntry(s, e) {
    if (!s.shown) return;
    s.seen = true;
    if (e.isVisible) {
      if (s.visibleSince === null) s.visibleSince = e.time;
    } else {
      s.visibleSince = null;
      // Covered or hidden some way the observers did not see. Then look again: the observer
      // reports only changes, so if the next cover came before it saw us visible again, its state
      // would stay "not visible" and it would never report that cover.
      if (repair(s, true)) relook(s);
    }
    mark(s);
  }

  /**
   * A fresh report from the IntersectionObserver, without restarting the visibility clock (it was
   * stopped: it restarts at the report that sees us). Only after a report of "not visible": a
   * fresh look while the clock runs would start the observer's delay again, and a cover drawn
   * just then would be reported that much later.
   */
  function relook(s) {
    if (!s.io) return;
    s.io.unobserve(s.host);
    s.io.observe(s.host);
  }

  /** For the tests (through DevTools; a page cannot read a closed root): when clicks count. */
  function mark(s) {
    if (!s.box) return;
    if (s.visibleSince === null || !s.seen) s.box.removeAttribute('data-armed-at');
    else s.box.setAttribute('data-armed-at', String(Math.ceil(s.visibleSince + s.armMs)));
  }

  // Other extensions mark every element they restyle (Dark Reader adds data-* attributes and
  // --custom properties to inline styles): neither changes how the host is drawn — page CSS loses
  // to its inline !important declarations — so both are tolerated rather than fought over.
  const foreign = (name) => name !== 'style' && name !== 'popover' && !name.startsWith('data-');

  /** The host's inline declarations that matter: every one but custom properties. */
  function declarations(h) {
    const st = h.style;
    let out = '';
    for (let i = 0; i < st.length; i++) {
      const k = st[i];
      if (!k.startsWith('--')) out += `${k}:${st.getPropertyValue(k)}!${st.getPropertyPriority(k)};`;
    }
    return out;
  }

  /** Everything about the host that needs no layout: where it is, its attributes, the top layer. */
  function intact(s) {
    const h = s.host;
    if (h.parentNode !== document.documentElement || h.getAttribute('popover') !== 'manual' ||
        !h.matches(':popover-open')) return false;
    for (const a of h.attributes) if (foreign(a.name)) return false;
    return declarations(h) === s.declared;
  }

  /** Puts the host back as it must be; raise: also to the top of the top layer. */
  function place(s, raise) {
    const h = s.host;
    const html = document.documentElement;
    if (!html) return;
    if (h.parentNode !== html) html.appendChild(h);
    for (const a of [...h.attributes]) if (foreign(a.name)) h.removeAttribute(a.name);
    const style = hostStyle(s.pos);
    if (style !== s.style || declarations(h) !== s.declared) {
      h.setAttribute('style', style);
      s.style = style;
      s.declared = declarations(h);     // as the browser parsed it, to compare with later
    }
    if (h.getAttribute('popover') !== 'manual') h.setAttribute('popover', 'manual');
    try {
      if (raise && h.matches(':popover-open')) h.hidePopover();
      if (!h.matches(':popover-open')) h.showPopover();
    } catch (_) {
      // A detached document, or a page that cancels our beforetoggle: the fixed z-index remains,
      // and a click on what the page drew over us still never counts (see trustedClick).
    }
  }

  /** Starts the visibility clock again: clicks wait for a fresh IntersectionObserver report. */
  function rearm(s) {
    if (s.io) {
      s.seen = false;
      s.visibleSince = null;
      s.io.unobserve(s.host);
      s.io.observe(s.host);
    } else {
      s.visibleSince = now();         // no IntersectionObserver v2: placed is all we can know
    }
    mark(s);
  }

  /** A bounded repair: false once the page has fought us too often in the last second. */
  function repair(s, raise) {
    if (!s.shown) return false;
    const t = now();
    while (s.repairs.length && t - s.repairs[0] > 1000) s.repairs.shift();
    if (s.repairs.length >= REPAIRS_PER_SECOND) return false;
    s.repairs.push(t);
    place(s, raise);
    return true;
  }

  function heal(s) {
    if (!s.shown || intact(s)) return;
    if (repair(s, false)) rearm(s);
  }

  function show(s) {
    s.shown = true;
    s.repairs = [];
    listen();
    const fresh = !intact(s);
    place(s, false);
    if (fresh) rearm(s);
  }

  function hide(s) {
    s.shown = false;
    if (s.io) s.io.unobserve(s.host);
    s.visibleSince = null;
    mark(s);
    try { if (s.host.matches(':popover-open')) s.host.hidePopover(); } catch (_) { /* see place */ }
    s.host.remove();
  }

  // <html>'s children (a host removed) and the document's (<html> itself replaced).
  const treeObserver = new MutationObserver(() => {
    if (document.documentElement) treeObserver.observe(document.documentElement, { childList: true });
    for (const s of surfaces) heal(s);
  });

  // A page popover, dialog or fullscreen element entering the top layer lands above ours: raise ours
  // at once. Without re-arming: a cover that lasted until then was not there long enough to be seen
  // (and if it was drawn, the IntersectionObserver reported it, which re-arms by itself). Not with
  // a fresh look either (see relook): that would take the observer's word, at a moment the page
  // lets us be on top, over the cover it raises again right after.
  function onToggle(e) {
    for (const s of surfaces) {
      if (!s.shown) continue;
      if (e.target === s.host) heal(s);                         // the page closed ours
      else if (hosts.has(e.target)) continue;                   // our other one: no contest
      else if (e.newState === 'open') repair(s, true);
    }
  }

  function onFullscreen() {
    for (const s of surfaces) if (s.shown) repair(s, true);
  }

  // Esc stops the agent as a convenience: a trusted keydown heard in the capture phase on window.
  // It is NOT guaranteed: a page's own capture listener on window, added before this script was
  // injected, runs first and can stop the event. The Stop shortcut (chrome.commands, handled by the
  // browser before any page sees the key), the pill's Stop, the popup and the app are the ways that
  // a page cannot take away. It does not preventDefault: the page's own Esc still works.
  function onKey(e) {
    if (!e.isTrusted || e.key !== 'Escape' || e.isComposing) return;
    if (!pill || !pill.shown || ui.stopped) return;
    stopFromPage('esc');
  }

  /** Idempotent (the same functions are added once), so each show can make sure they are there. */
  function listen() {
    window.addEventListener('keydown', onKey, true);
    window.addEventListener('toggle', onToggle, true);
    document.addEventListener('fullscreenchange', onFullscreen, true);
    treeObserver.observe(document, { childList: true });
    if (document.documentElement) treeObserver.observe(document.documentElement, { childList: true });
  }

  /** What the person sees is the real host, as drawn: computed style, zoom, box, and the viewport. */
  function rendered(s) {
    const h = s.host;
    const cs = getComputedStyle(h);
    if (cs.display !== 'block' || cs.visibility !== 'visible' || cs.opacity !== '1' || cs.transform !== 'none' ||
        cs.filter !== 'none' || cs.clipPath !== 'none' || cs.position !== 'fixed' || cs.mixBlendMode !== 'normal' ||
        cs.contentVisibility !== 'visible') return false;
    const z = h.currentCSSZoom;
    if (Number.isFinite(z) && Math.abs(z - 1) > 0.05) return false;
    const r = h.getBoundingClientRect();
    return r.width >= 24 && r.height >= 16 && r.left >= -1 && r.top >= -1 &&
      r.right <= innerWidth + 1 && r.bottom <= innerHeight + 1;
  }

  /**
   * A click on one of our buttons counts only when a person made it on the real host as drawn.
   * A pointer click must land where the host is the topmost thing hit (a keyboard press of a
   * focused button has no point); the IntersectionObserver must have reported the host visible,
   * for armMs already. Anything else: ignored, and the host re-mounted.
   */
  function trustedClick(s, e) {
    if (!e.isTrusted || !s.shown) return false;
    const pointer = e.pointerType !== '' || e.detail > 0;
    let ok = intact(s) && rendered(s);
    if (ok && pointer) ok = document.elementsFromPoint(e.clientX, e.clientY)[0] === s.host;
    if (!ok) {
      place(s, true);
      rearm(s);
      return false;
    }
    return s.seen && s.visibleSince !== null && now() - s.visibleSince >= s.armMs;
  }

  // ---- the pill --------------------------------------------------------------------------------

  const ui = { stopped: false, step: null, plan: null, shortcut: '' };
  let pill = null;
  let banner = null;

  const PILL_CSS = `
    .pill { display: flex; align-items: center; gap: 8px; padding: 6px 6px 6px 12px; border-radius: 999px;
      background: #1e1e1e; color: #fff; box-shadow: 0 2px 10px rgba(0,0,0,.35); border: 1px solid #555; }
    .dot { width: 8px; height: 8px; border-radius: 50%; background: #33d17a; flex: none; }
    .pill.stopped .dot { background: #9a9996; }
    .stop { background: #c01c28; color: #fff; border: 1px solid #fff3; }
    .stop:hover { background: #a51d2d; }
    @media (forced-colors: active) { .pill { border: 1px solid CanvasText; } }`;

  function renderPill() {
    const p = pill;
    p.box.classList.toggle('stopped', ui.stopped);
    // While an approved plan runs, its step says more than the call count: "plan step 2 of 3".
    let text = ui.stopped ? msg('page_pill_stopped')
      : ui.plan ? msg('page_pill_plan', [String(ui.plan.step), String(ui.plan.of)])
        : Number.isFinite(ui.step) ? msg('page_pill_step', [String(ui.step)]) : msg('page_pill_idle');
    // The shortcut the browser has bound to Stop now (the person may change or remove it).
    if (!ui.stopped && ui.shortcut) text += ' · ' + msg('page_pill_shortcut', [ui.shortcut]);
    p.label.textContent = text;
    p.stop.hidden = ui.stopped;
  }

  function ensurePill() {
    if (pill) return pill;
    const s = makeSurface('pill', PILL_CSS, { right: '16px', bottom: '16px' }, 0);
    const box = document.createElement('div');
    box.className = 'pill';
    box.setAttribute('role', 'status');
    box.setAttribute('aria-live', 'polite');
    box.setAttribute('aria-label', msg('page_pill_region'));
    const dot = document.createElement('span');
    dot.className = 'dot';
    const label = document.createElement('span');
    label.className = 'label';
    const stop = document.createElement('button');
    stop.type = 'button';
    stop.className = 'stop';
    stop.dataset.chaperone = 'stop';
    stop.textContent = msg('page_pill_stop');
    stop.title = msg('page_pill_stop_hint');
    // Stop only takes power away, so it waits for no visibility time (armMs 0) — but a click that
    // did not land on the real pill is still not the person pressing it.
    stop.addEventListener('click', (e) => {
      if (trustedClick(s, e)) stopFromPage('pill');
    });
    box.append(dot, label, stop);
    s.root.appendChild(box);
    s.box = box;
    pill = Object.assign(s, { label, stop });
    return pill;
  }

  function stopFromPage(source) {
    if (ui.stopped) return;
    ui.stopped = true;
    if (pill) renderPill();
    send({ type: 'page.stop', source });
  }

  function cleanShortcut(v) {
    if (typeof v !== 'string') return '';
    const s = v.replace(/\s+/g, ' ').trim();
    return s.length <= SHORTCUT_MAX ? s : '';
  }

  /** state: {step: number|null, plan: {step, of}|null, stopped, shortcut} — checked by the caller. */
  function showPill(state) {
    ui.step = state.step;
    ui.plan = state.plan;
    ui.stopped = !!state.stopped;
    ui.shortcut = cleanShortcut(state.shortcut);
    const p = ensurePill();
    renderPill();
    show(p);
    return { shown: true, stopped: ui.stopped, step: ui.step };
  }

  function hidePill() {
    if (pill) hide(pill);
  }

  // ---- the handoff banner ----------------------------------------------------------------------

  const BANNER_CSS = `
    .bar { display: flex; flex-wrap: wrap; align-items: center; gap: 8px 16px; padding: 10px 16px;
      background: #fdf3c7; color: #1e1e1e; border-bottom: 2px solid #c88800; box-shadow: 0 2px 10px rgba(0,0,0,.25); }
    .bar.bottom { border-bottom: 0; border-top: 2px solid #c88800; }
    .text { flex: 1 1 320px; min-width: 0; }
    .title { font-weight: 700; font-size: 14px; display: block; }
    .reason, .agent { margin: 2px 0 0; overflow-wrap: anywhere; }
    .agent-label { font-weight: 600; margin-inline-end: 4px; }
    .agent-text { white-space: pre-wrap; }
    .buttons { display: flex; gap: 8px; align-items: center; }
    .done { background: #2ec27e; color: #000; border: 1px solid #26a269; }
    .cancel { background: #fff; color: #1e1e1e; border: 1px solid #9a9996; }
    .move { background: transparent; color: inherit; border: 1px solid transparent; font-weight: 400; }
    .status { font-weight: 600; }
    button:disabled { opacity: .5; cursor: default; }
    @media (prefers-color-scheme: dark) {
      .bar { background: #3d3416; color: #fff; border-color: #e5a50a; }
      .cancel { background: #303030; color: #fff; }
    }`;

  const TOP = { top: '0', left: '0', right: '0', width: '100%' };
  const BOTTOM = { bottom: '0', left: '0', right: '0', width: '100%' };

  function ensureBanner() {
    if (banner) return banner;
    const s = makeSurface('banner', BANNER_CSS, TOP, ARM_MS);
    const bar = document.createElement('div');
    bar.className = 'bar';
    bar.setAttribute('role', 'region');
    bar.setAttribute('aria-label', msg('page_handoff_region'));
    const text = document.createElement('div');
    text.className = 'text';
    const title = document.createElement('strong');
    title.className = 'title';
    title.textContent = msg('page_handoff_title');
    const reason = document.createElement('p');
    reason.className = 'reason';
    reason.setAttribute('aria-live', 'assertive');
    const agent = document.createElement('p');
    agent.className = 'agent';
    const agentLabel = document.createElement('span');
    agentLabel.className = 'agent-label';
    agentLabel.textContent = msg('page_handoff_agent_message');
    const agentText = document.createElement('span');
    agentText.className = 'agent-text';
    agent.append(agentLabel, agentText);
    const status = document.createElement('p');
    status.className = 'status';
    status.setAttribute('role', 'status');
    text.append(title, reason, agent, status);
    const buttons = document.createElement('div');
    buttons.className = 'buttons';
    const mk = (cls, key, onClick) => {
      const b = document.createElement('button');
      b.type = 'button';
      b.className = cls;
      b.dataset.chaperone = cls;
      b.textContent = msg(key);
      b.addEventListener('click', onClick);
      return b;
    };
    const answer = (e, outcome) => {
      if (!s.handoffId || s.answered) return;
      // A page script's synthetic click, or a person's click on a bar that was hidden, covered or
      // just revealed under the pointer, never answers for the person.
      if (!trustedClick(s, e)) {
        if (e.isTrusted) {
          s.status.textContent = msg('page_handoff_recheck');
          s.status.hidden = false;
        }
        return;
      }
      s.answered = true;
      s.done.disabled = true;
      s.cancel.disabled = true;
      s.status.textContent = msg(outcome === 'done' ? 'page_handoff_sent_done' : 'page_handoff_sent_cancel');
      s.status.hidden = false;
      send({ type: 'page.handoff', handoffId: s.handoffId, outcome });
    };
    const done = mk('done', 'page_handoff_done', (e) => answer(e, 'done'));
    const cancel = mk('cancel', 'page_handoff_cancel', (e) => answer(e, 'cancelled'));
    const move = mk('move', 'page_handoff_move', (e) => {
      // The bar must never hide what the person has to scan or type: let them move it.
      if (!e.isTrusted) return;
      const bottom = s.pos === TOP;
      s.pos = bottom ? BOTTOM : TOP;
      bar.classList.toggle('bottom', bottom);
      place(s, false);
      rearm(s);
    });
    buttons.append(done, cancel, move);
    bar.append(text, buttons);
    s.root.appendChild(bar);
    s.box = bar;
    banner = Object.assign(s, { reason, agent, agentText, status, done, cancel, handoffId: null, answered: false });
    return banner;
  }

  /** {handoffId, reason (one of the known ones), message (plain text, clipped)}. */
  function showBanner({ handoffId, reason, message }) {
    const b = ensureBanner();
    // Another handoff's words in the same bar: a click aimed at the old one must not answer it.
    const other = b.handoffId !== handoffId;
    b.handoffId = handoffId;
    b.answered = false;
    b.done.disabled = false;
    b.cancel.disabled = false;
    b.status.textContent = '';
    b.status.hidden = true;
    b.reason.textContent = msg(`page_handoff_reason_${reason}`);
    b.agentText.textContent = message;      // plain text: the agent's words are never markup
    b.agent.hidden = !message;
    show(b);
    if (other) rearm(b);
    return { shown: true, handoffId, reason };
  }

  /** Hides the banner of `handoffId` (any, when none is named); → whether a banner is still shown. */
  function hideBanner(handoffId) {
    if (banner && (!handoffId || handoffId === banner.handoffId)) {
      hide(banner);
      banner.handoffId = null;
      return false;
    }
    return !!(banner && banner.shown && banner.host.isConnected);
  }

  Object.defineProperty(globalThis, 'ChaperonePageUi', {
    value: Object.freeze({
      version: 1,
      owns: (el) => hosts.has(el),
      showPill, hidePill, showBanner, hideBanner,
    }),
    writable: false, configurable: false, enumerable: false,
  });
})();
