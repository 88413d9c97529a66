// SPDX-License-Identifier: GPL-3.0-or-later
// When an action is over: the page agent waits until the DOM and the tab's network are both quiet,
// or a navigation takes the document away, or a cap is reached, and says which (page-act.js asks).

(function () {
  'use strict';

  if (globalThis.__chaperonePage) return;   // installed already: the first install wins
  const P = globalThis.ChaperonePageParts;
  if (!P) return;                           // page-common.js did not run: nothing installs

  const { owns, pagePort } = P;

  // ---- settling ------------------------------------------------------------------------------
  //
  // An action answers once the page has settled: the DOM has been quiet for SETTLE_QUIET_MS (every
  // mutation batch starts the window again) AND no request the tab started since the action began
  // is in flight (the worker counts them with webRequest and tells us over a port, args.net; every
  // request start or end starts the window again too). Event-driven: a quiet page answers after
  // one window, a busy one as soon as it stops. SETTLE_CAP_MS bounds it (settled:false), and a
  // navigation away ends it at once (navigating:true). Timers the page set are invisible from here;
  // the window covers the short ones (a 30 ms "saved" message), not a 500 ms debounce.

  const SETTLE_QUIET_MS = 80;
  // Filling, focusing and scrolling act on one element: what they set off (a re-render, a
  // suggestion request) starts in the page's own input handlers, which ran before we wait, and
  // the worker's request count is known before the window closes. A click's 80 ms would make a
  // fill several times slower for nothing. Anything seen at all still waits for the full window.
  // 2 ms covers a re-render the handlers queue as a task; a debounce is not waited for.
  const SETTLE_QUIET_LIGHT_MS = 2;
  const SETTLE_CAP_MS = 3000;
  const OBSERVE = { subtree: true, childList: true, characterData: true, attributes: true };

  const now = () => performance.now();

  /** Calls fn on every open shadow root in the subtree of `node` (itself included), nested too. */
  function eachOpenShadowRoot(node, fn) {
    const visit = (root) => {
      if (root.nodeType === 1 && root.shadowRoot) {
        fn(root.shadowRoot);
        visit(root.shadowRoot);
      }
      const w = document.createTreeWalker(root, NodeFilter.SHOW_ELEMENT);
      for (let el = w.nextNode(); el; el = w.nextNode()) {
        const sr = el.shadowRoot;              // open roots only (and never Chaperone's own, closed)
        if (sr) {
          fn(sr);
          visit(sr);
        }
      }
    };
    visit(node);
  }

  /**
   * Watches the document and its open shadow roots (those added later as well) from the action
   * on: what was added and removed, whether text changed, and when the page last changed.
   */
  function watchMutations() {
    const w = { added: 0, removed: 0, textMutated: false, last: now() };
    const observed = new WeakSet();
    const countEls = (node) => 1 + node.getElementsByTagName('*').length;
    const observe = (root) => {
      if (observed.has(root)) return;
      observed.add(root);
      mo.observe(root, OBSERVE);
    };
    const take = (records) => {
      let active = false;
      for (const r of records) {
        if (owns(r.target)) continue;     // the pill and banner are ours, not the page's
        if (r.type === 'attributes') {
          // Inline style churn is how script animations run; it says nothing about the result.
          if (r.attributeName !== 'style') active = true;
          continue;
        }
        if (r.type === 'characterData') {
          w.textMutated = true;
          active = true;
          continue;
        }
        for (const [list, key] of [[r.addedNodes, 'added'], [r.removedNodes, 'removed']]) {
          for (const n of list) {
            if (owns(n)) continue;
            active = true;
            if (n.nodeType === 3) w.textMutated = true;
            else if (n.nodeType === 1) {
              w[key] += countEls(n);
              if (key === 'added') eachOpenShadowRoot(n, observe);
            }
          }
        }
      }
      if (active) w.last = now();
    };
    const mo = new MutationObserver(take);
    observe(document);
    eachOpenShadowRoot(document, observe);
    w.stop = () => {
      take(mo.takeRecords());
      mo.disconnect();
    };
    return w;
  }

  /**
   * The tab's in-flight request count from the worker (lib/network.js), when it offers one:
   * {known, inflight, last, onChange, sync(), close()}. Without it (no port, port gone) the
   * network counts as quiet and only the DOM decides.
   *
   * An op that came over the page's own port (`via`) hears the count on that port, starting from
   * args.inflight; sync(), called once the action ran, asks the worker for its count as of then
   * and the count is not `known` until it answers (so a request the action started is seen
   * before the page can call itself settled). An op that came by executeScript opens a settle
   * port for the action and waits for the worker's first word on it.
   */
  function watchNetwork(enabled, via, initial) {
    const f = { known: true, inflight: 0, last: -Infinity, onChange: null, sync: () => {}, close: () => {} };
    const changed = () => { if (f.onChange) f.onChange(); };
    if (enabled && via && pagePort.hooks && via.port === pagePort.port) {
      f.inflight = Number.isSafeInteger(initial) && initial > 0 ? initial : 0;
      if (f.inflight > 0) f.last = now();
      let synced = false;
      pagePort.hooks.set(via.id, (m) => {
        if (m === null) {                          // the port is gone: nobody counts any more
          f.known = true;
          f.inflight = 0;
          changed();
          return;
        }
        const net = m.net && typeof m.net === 'object' ? m.net : {};
        const n = Number.isSafeInteger(net.inflight) && net.inflight > 0 ? net.inflight : 0;
        const inflight = net.watching === false ? 0 : n;
        if (m.synced !== undefined) {
          synced = true;
          f.known = true;
        } else {
          f.last = now();                          // a request started or ended: the window starts again
        }
        f.inflight = inflight;
        changed();
      });
      f.sync = () => {
        f.known = false;
        // A macrotask first: what the page's handlers start in their microtasks has started.
        setTimeout(() => {
          if (synced || f.known) return;
          try {
            via.port.postMessage({ id: via.id, sync: 1 });
          } catch (_) {
            f.known = true;                        // the port is gone; its disconnect says the rest
            changed();
          }
        }, 0);
      };
      f.close = () => { pagePort.hooks.delete(via.id); };
      return f;
    }
    let port = null;
    try {
      const rt = enabled && globalThis.chrome && globalThis.chrome.runtime;
      if (rt && typeof rt.connect === 'function') port = rt.connect({ name: 'chaperone.settle' });
    } catch (_) {
      port = null;                         // an orphaned content script (extension reloaded)
    }
    if (!port) return f;
    f.known = false;                       // until the worker's first word: requests may be running
    let first = true;
    port.onMessage.addListener((m) => {
      const n = m && Number.isSafeInteger(m.inflight) && m.inflight > 0 ? m.inflight : 0;
      if (!first || n > 0) f.last = now();  // a request started or ended: the window starts again
      first = false;
      f.known = true;
      f.inflight = m && m.watching === false ? 0 : n;
      changed();
    });
    port.onDisconnect.addListener(() => {
      f.known = true;
      f.inflight = 0;
      changed();
    });
    f.close = () => {
      try { port.disconnect(); } catch (_) { /* gone already */ }
    };
    return f;
  }

  /**
   * Notes when the document starts navigating to another document (or is hidden):
   * {gone, onAway, stop()}.
   */
  function watchNavigation() {
    const nav = globalThis.navigation;
    const w = { gone: false, onAway: null, stop: () => {} };
    const onAway = () => {
      if (w.gone) return;
      w.gone = true;
      if (w.onAway) w.onAway();
    };
    const onNavigate = (e) => {
      if (!e || (e.destination && e.destination.sameDocument)) return;   // a route change: keep waiting
      if (e.downloadRequest !== null && e.downloadRequest !== undefined) return;
      // The page may still cancel it or take it over (Navigation API intercept): look once the
      // event is through, and not a task later: a fast navigation leaves no time to answer.
      queueMicrotask(() => {
        if (!e.defaultPrevented && !(nav && nav.transition)) onAway();
      });
    };
    const onHide = () => onAway();
    if (nav && typeof nav.addEventListener === 'function') nav.addEventListener('navigate', onNavigate);
    window.addEventListener('pagehide', onHide);
    w.stop = () => {
      if (nav && typeof nav.removeEventListener === 'function') nav.removeEventListener('navigate', onNavigate);
      window.removeEventListener('pagehide', onHide);
    };
    return w;
  }

  /**
   * Resolves {settled, navigating} once DOM and network are both quiet, or at the cap, or at once
   * when `away` reports a navigation (watched from before the action: a link's click starts it
   * synchronously).
   */
  function settle(mutations, network, away, quietMs) {
    return new Promise((resolve) => {
      const started = now();
      let timer = null;
      let ended = false;
      let cap = null;
      const finish = (settled, navigating) => {
        if (ended) return;
        ended = true;
        clearTimeout(timer);
        clearTimeout(cap);
        away.onAway = null;
        network.onChange = null;
        resolve({ settled, navigating });
      };
      const check = () => {
        timer = null;
        if (ended) return;
        if (away.gone) {
          finish(false, true);
          return;
        }
        if (!network.known || network.inflight > 0) return;    // the next network word checks again
        // The light window holds only while nothing at all happened after the action itself.
        const busy = mutations.last > started || network.last > started;
        const windowMs = busy ? SETTLE_QUIET_MS : quietMs;
        const quiet = now() - Math.max(mutations.last, network.last);
        if (quiet >= windowMs) {
          finish(true, false);
          return;
        }
        // Mutations meanwhile move `last` on; this timer then waits out the rest of the window.
        timer = setTimeout(check, Math.ceil(windowMs - quiet));
      };
      network.onChange = () => { if (!timer) check(); };
      away.onAway = () => finish(false, true);
      cap = setTimeout(() => finish(false, false), SETTLE_CAP_MS);
      check();
    });
  }

  Object.assign(P, { now, SETTLE_QUIET_MS, SETTLE_QUIET_LIGHT_MS, watchMutations, watchNetwork,
    watchNavigation, settle });
})();
