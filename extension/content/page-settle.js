// SPDX-License-Identifier: GPL-3.0-or-later
// When an action is over: the page agent waits for what the action itself set off — the DOM
// changes, the requests it started, a spinner it showed — to be over, or for a navigation to take
// the document away, or for a cap, and says which (page-act.js asks). What the page does on its
// own (a ticker, polling, an animation, a long poll) does not hold an action up.

(function () {
  'use strict';

  if (globalThis.__chaperonePage) return;   // installed already: the first install wins
  const P = globalThis.ChaperonePageParts;
  if (!P) return;                           // page-common.js did not run: nothing installs

  const { owns, pagePort } = P;
  // This world's timers as they were when it loaded. In the extension the page's wrappers
  // (lib/page-timers-main.js) are in another world anyway; where the agent shares the page's
  // world (the tests' harness), its own timers must not count as the act's.
  const setTimeout = globalThis.setTimeout.bind(globalThis);
  const clearTimeout = globalThis.clearTimeout.bind(globalThis);

  // ---- settling ------------------------------------------------------------------------------
  //
  // An action answers once its own effects are over:
  // - the DOM: no change for SETTLE_QUIET_MS after the last one it made (a click), or at once
  //   when a fill set nothing off, or changed the page only inside its own handlers while the act
  //   ran (a task later, once the worker confirmed no request started; SETTLE_REACT_MS after the
  //   page's last later reaction when it did). Changes to nodes the page was
  //   changing on its own before the action (seen twice within CHURN_MS: a ticker, a clock, an
  //   animation's inline style) are not the action's: they neither count nor hold it up.
  // - requests: those that started within the action's causal window — from the action until
  //   CAUSAL_MS after it, after the last change it made, or after one of its requests ended (a
  //   chain) — are waited for; those already running, the tab's polling and event streams are
  //   not (the worker, lib/network.js, leaves those out and dates the rest).
  // - timers: those the act's handlers queued, and their chain (lib/page-timers-main.js, where
  //   the worker put it), are waited for (TIMERS_MAX_MS at most; in a hidden tab no longer than
  //   the quiet window); once they have all run and nothing else of the act goes on (no request,
  //   no chain the tracker cannot follow), a click answers the reaction window after the last
  //   change, and no sooner than its quiet window after the act.
  // - busy indicators it showed (a spinner, aria-busy, an indeterminate progress bar) are waited
  //   for until they go away; what appears then (a toast) is a change like any other.
  // SETTLE_CAP_MS bounds it: settled:false with a reason (network, busy, dom, cap). A navigation
  // away ends it at once (navigating:true).
  //
  // Clocks: a background tab's timers fire about once a second (Chromium throttles them), so
  // nothing here waits on a page timer alone: the worker's clock (a tick over the port every few
  // ms while an action settles), a MessageChannel turn (a task, never throttled) and the
  // observers' own callbacks wake the check too. Without the worker (no port) page timers do it.

  const SETTLE_QUIET_MS = 40;
  // A fill, focus or scroll acts on one element: what it sets off starts in the page's own input
  // handlers, which ran before we wait. "Light": answer a task later when nothing happened.
  const SETTLE_QUIET_LIGHT_MS = 2;
  // After a light action the page reacted to (a re-render, a counter): quiet for this long.
  const SETTLE_REACT_MS = 6;
  const SETTLE_CAP_MS = 3000;
  // A request that started this long after the action's last own event is not its doing.
  const CAUSAL_MS = 25;
  const CHURN_MS = 2000;
  const OBSERVE = { subtree: true, childList: true, characterData: true, attributes: true };

  const now = () => performance.now();

  /** One task later (a MessageChannel turn: not a timer, so not throttled in a hidden tab). */
  function nextTask(fn) {
    const ch = new MessageChannel();
    ch.port1.onmessage = () => {
      ch.port1.close();
      fn();
    };
    ch.port2.postMessage(0);
  }

  /**
   * A task later and, in a visible tab, a timer's turn later too: whatever the page queued with
   * setTimeout(0) before this was asked has run. (A hidden tab's timers come up to a second late.)
   */
  function afterTurns(fn) {
    let turns = document.hidden ? 1 : 2;
    const turned = () => {
      turns -= 1;
      if (turns === 0) fn();
    };
    nextTask(turned);
    if (!document.hidden) setTimeout(turned, 0);
  }

  /** The node a record is about: a text node's change is its element's. */
  const keyOf = (r) => (r.type === 'characterData' ? r.target.parentNode : r.target);

  // ---- what the page changes on its own ------------------------------------------------------
  //
  // From install on (the first op is a capture, well before an act), one observer notes when each
  // node last changed, and the time before: a node changed twice within CHURN_MS before an act is
  // the page's own churn. It takes no notes while an action settles (those changes are the
  // action's), and only the open shadow roots the page agent has seen are watched.
  // An agent that stopped acting here for CHURN_KEEP_MS stops costing the page this observer; the
  // next act starts it again (its first act then knows no churn, only its own changes).
  const CHURN_KEEP_MS = 120000;
  const churn = { seen: new WeakMap(), settling: 0, until: now() + CHURN_KEEP_MS, on: true };
  const noteChurn = (records) => {
    if (churn.settling > 0) return;
    const t = now();
    if (t > churn.until && churn.on) {
      churnMo.disconnect();
      churn.on = false;
      churnRoots = new WeakSet();
      return;
    }
    for (const r of records) {
      const key = keyOf(r);
      if (!key) continue;
      const h = churn.seen.get(key);
      if (!h) churn.seen.set(key, { last: t, prev: -Infinity });
      else if (h.last !== t) {
        h.prev = h.last;
        h.last = t;
      }
    }
  };
  const churnMo = new MutationObserver(noteChurn);
  let churnRoots = new WeakSet();
  const watchChurn = (root) => {
    if (churnRoots.has(root)) return;
    churnRoots.add(root);
    try { churnMo.observe(root, OBSERVE); } catch (_) { /* not observable */ }
  };
  watchChurn(document);
  /** Whether `node` was changing on its own just before `at`. */
  const churning = (node, at) => {
    const h = node && churn.seen.get(node);
    return !!h && h.last >= at - CHURN_MS && h.prev >= at - 2 * CHURN_MS;
  };

  // ---- busy indicators -----------------------------------------------------------------------

  // Candidates by selector; a class must be one of these words (not "upload", not a step "progress").
  const BUSY_SELECTOR = '[aria-busy="true"],[role="progressbar"],progress,[class*="spin" i],'
    + '[class*="load" i],[class*="busy" i],[class*="throbber" i]';
  const BUSY_CLASS = /(^|[-_\s])(spinner|spinning|loading|loader|busy|throbber)([-_\s]|$)/i;

  function isBusy(el) {
    if (el.nodeType !== 1 || owns(el)) return false;
    if (el.getAttribute('aria-busy') === 'true') return true;
    const role = el.getAttribute('role');
    if ((role === 'progressbar' && !el.hasAttribute('aria-valuenow'))
      || (el.localName === 'progress' && !el.hasAttribute('value'))) return true;
    return BUSY_CLASS.test(el.getAttribute('class') || '');
  }

  function shown(el) {
    if (!el.isConnected) return false;
    if (typeof el.checkVisibility === 'function'
      && !el.checkVisibility({ visibilityProperty: true, opacityProperty: true })) return false;
    // A person sees a spinner or a progress bar only where it has an area: Vuetify keeps an
    // indeterminate progress bar in every text field, at height 0 until the field is loading.
    // A region marked aria-busy (an empty list while it loads) is busy whatever its size.
    if (el.getAttribute('aria-busy') === 'true') return true;
    const box = el.getBoundingClientRect();
    return box.width > 0 && box.height > 0;
  }

  /** Adds the busy indicators in and under `el` to `set`. */
  function findBusy(el, set) {
    if (el.nodeType !== 1) return;
    if (isBusy(el)) set.add(el);
    if (!el.firstElementChild) return;
    for (const c of el.querySelectorAll(BUSY_SELECTOR)) if (isBusy(c)) set.add(c);
  }

  /** Whether `el` holds any text that is not blank: the first such text node ends the walk. */
  function hasText(el) {
    const t = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
    for (let n = t.nextNode(); n; n = t.nextNode()) if (/\S/.test(n.data)) return true;
    return false;
  }

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
   * Calls `observe` on the document and on every open shadow root and inlined frame document
   * in it: the ones the last snapshot's scan met (page-read.js, P.knownRoots) that are still in
   * the page, which costs nothing on a 10,000-element page, or, without a whole scan to go by,
   * those a walk of the document finds. Roots added later are seen as they are added (take()).
   */
  function observeKnownRoots(observe) {
    observe(document);
    const known = P.knownRoots;
    if (!Array.isArray(known)) {
      eachOpenShadowRoot(document, observe);
      return;
    }
    for (const root of known) {
      if (root === document) continue;
      const inPage = root.host ? root.host.isConnected
        : !!(root.defaultView && root.defaultView.frameElement && root.defaultView.frameElement.isConnected);
      if (inPage) observe(root);
    }
  }

  // How long the act's own timers (lib/page-timers-main.js) are waited for at most: beyond it
  // the quiet window decides alone. In a hidden tab the browser runs timers up to a second late,
  // so they are waited for no longer than the quiet window would wait anyway.
  const TIMERS_MAX_MS = 1000;

  /**
   * The act's own timers, as the main world's tracker (lib/page-timers-main.js) counts them under
   * the name the worker made for this document (`spec`: {name, longestMs}, the longest delay that
   * is the act's): {pending, seen, open, idleAt, onChange, end(), stop()}. `seen`: the act queued
   * at least one; `open`: its chain went where the tracker does not follow (too deep, too long a
   * delay); `idleAt`: when the last of them ran. Without a spec (no tracker in this document) it
   * never sees any, and the quiet window decides as before.
   */
  function watchTimers(spec) {
    const t = { pending: 0, seen: false, open: false, idleAt: -Infinity, onChange: null, end: () => {}, stop: () => {} };
    const name = spec && typeof spec === 'object' ? spec.name : null;
    if (typeof name !== 'string' || !/^[\w-]{8,64}$/.test(name)) return t;
    const longest = Number.isSafeInteger(spec.longestMs) ? spec.longestMs : 0;
    const id = Math.random().toString(36).slice(2, 12);
    let live = true;
    const hear = (e) => {
      const [who, count, open] = String(e && e.detail).split(' ');
      const n = Number(count);
      if (!live || who !== id || !Number.isSafeInteger(n) || n < 0) return;
      if (n > 0) t.seen = true;
      if (open === '1') t.open = true;
      if (t.pending > 0 && n === 0) t.idleAt = now();
      t.pending = n;
      // Not inside the page's own callback, whose end this news may be: a check reads layout.
      queueMicrotask(() => { if (live && t.onChange) t.onChange(); });
    };
    const say = (...what) => window.dispatchEvent(new CustomEvent(`${name}:act`, { detail: what.join(' ') }));
    window.addEventListener(name, hear);
    say('begin', id, longest);
    t.end = () => say('end', id);
    t.stop = () => {
      if (!live) return;
      live = false;
      window.removeEventListener(name, hear);
      say('done', id);
    };
    return t;
  }

  /**
   * Watches the document and its open shadow roots (those added later as well) from the action
   * on: what the action changed (added, removed, text), when it last changed something (`last`,
   * and `lastEpoch` on the browser's clock) and the busy indicators it showed. Changes to nodes
   * the page was churning on its own are left out of all of it.
   */
  function watchMutations(timersSpec) {
    noteChurn(churnMo.takeRecords());          // what the page did up to now is the page's
    churn.until = now() + CHURN_KEEP_MS;
    if (!churn.on) {
      churn.on = true;
      watchChurn(document);                    // open shadow roots follow through observe() below
    }
    churn.settling += 1;
    const at = now();
    const w = { added: 0, removed: 0, textMutated: false, last: at, actAt: at, actEpoch: Date.now(),
      lastEpoch: -Infinity, busy: new Set() };
    const observed = new WeakSet();
    const countEls = (node) => 1 + node.getElementsByTagName('*').length;
    const observe = (root) => {
      watchChurn(root);
      if (observed.has(root)) return;
      observed.add(root);
      mo.observe(root, OBSERVE);
    };
    // `when`: the records' own time when known (drain); the observer's callback comes later.
    const take = (records, when) => {
      let own = false;
      for (const r of records) {
        if (owns(r.target)) continue;          // the pill and banner are ours, not the page's
        if (churning(keyOf(r), at)) continue;  // a ticker, a clock, an animation: the page's own
        if (r.type === 'attributes') {
          own = true;
          findBusy(r.target, w.busy);          // a class or attribute that shows a spinner
          continue;
        }
        if (r.type === 'characterData') {
          w.textMutated = true;
          own = true;
          continue;
        }
        for (const [list, key] of [[r.addedNodes, 'added'], [r.removedNodes, 'removed']]) {
          for (const n of list) {
            if (owns(n)) continue;
            own = true;
            if (n.nodeType === 3) w.textMutated = w.textMutated || /\S/.test(n.data);
            else if (n.nodeType === 1) {
              w[key] += countEls(n);
              if (!w.textMutated && hasText(n)) w.textMutated = true;
              if (key === 'added') {
                eachOpenShadowRoot(n, observe);
                findBusy(n, w.busy);
              }
            }
          }
        }
      }
      if (own) {
        w.last = when ? Math.max(w.last, when.at) : now();
        w.lastEpoch = when ? Math.max(w.lastEpoch, when.epoch) : Date.now();
      }
    };
    const mo = new MutationObserver((records) => take(records));
    // The changes the page's handlers made while the action ran (synchronously, inside it) are
    // over when it returns: they count, dated at the action's end, and do not open the reaction
    // window that changes made later (a re-render a microtask or a timer queued) do.
    // The act's own timers: those queued from here until the act has run (drain) and their chain.
    w.timers = watchTimers(timersSpec);
    w.drain = (at, epoch) => {
      w.timers.end();
      take(mo.takeRecords(), { at, epoch });
    };
    observeKnownRoots(observe);
    let stopped = false;
    w.stop = () => {
      if (stopped) return;
      stopped = true;
      w.timers.stop();
      take(mo.takeRecords());
      mo.disconnect();
      churnMo.takeRecords();                   // the action's changes are not the page's churn
      churn.settling -= 1;
    };
    return w;
  }

  /**
   * The requests in flight that may be the action's, from the worker (lib/network.js), when it
   * offers them: {known, requests: Map(n → startedAt), ended: [{at, endEpoch, end}], ticking,
   * onChange, onTick, sync(), close()}. startedAt and endEpoch are on the browser's clock (ms
   * since the epoch); settle() decides which were the action's. Without the worker (no port,
   * port gone) there are none and only the DOM decides.
   *
   * An op that came over the page's own port (`via`) hears them on that port; sync(), called
   * once the action ran, asks the worker for its word as of a task later, and the list is not
   * `known` until it answers (so a request the action started is seen before the page can call
   * itself settled). An op that came by executeScript opens a settle port for the action and
   * waits for the worker's first word on it. Either way the worker's ticks come with them.
   */
  function watchNetwork(enabled, via) {
    const f = { known: true, requests: new Map(), ended: [], ticking: false, heardAt: -Infinity, onChange: null,
      onTick: null, sync: () => {}, close: () => {} };
    const changed = () => { if (f.onChange) f.onChange(); };
    const hear = (net) => {
      f.heardAt = now();
      const list = net && net.watching !== false && Array.isArray(net.requests) ? net.requests : null;
      const count = net && net.watching !== false && Number.isSafeInteger(net.inflight) ? net.inflight : 0;
      let next = null;
      if (list) {
        next = new Map();
        for (const r of list) {
          if (Array.isArray(r) && Number.isSafeInteger(r[0]) && Number.isFinite(r[1])) next.set(r[0], r[1]);
        }
      } else if (count === 0) next = new Map();     // a word without the list: only "none" is news
      if (next) {
        for (const [n, at] of f.requests) {
          if (next.has(n)) continue;
          f.ended.push({ at, endEpoch: Date.now(), end: now() });
          if (f.ended.length > 64) f.ended.shift();
        }
        f.requests = next;
      }
      if (net && net.tick !== undefined) {
        f.ticking = true;
        if (f.onTick) f.onTick();
        return;
      }
      changed();
    };
    if (enabled && via && pagePort.hooks && via.port === pagePort.port) {
      let synced = false;
      pagePort.hooks.set(via.id, (m) => {
        if (m === null) {                          // the port is gone: nobody counts any more
          f.known = true;
          f.ticking = false;
          hear({ inflight: 0, watching: false });
          return;
        }
        if (m.synced !== undefined) {
          synced = true;
          f.known = true;
        }
        hear(m.net && typeof m.net === 'object' ? m.net : {});
      });
      f.sync = () => {
        f.known = false;
        // A task first: what the page's handlers start in their microtasks has started.
        nextTask(() => {
          if (synced || f.known) return;
          try {
            via.port.postMessage({ id: via.id, sync: 1 });
          } catch (_) {
            f.known = true;                        // the port is gone; its disconnect says the rest
            changed();
          }
        });
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
    port.onMessage.addListener((m) => {
      f.known = true;
      hear(m && typeof m === 'object' ? m : {});
    });
    port.onDisconnect.addListener(() => {
      f.known = true;
      f.ticking = false;
      hear({ inflight: 0, watching: false });
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
   * Resolves {settled, navigating, reason?} once the action's own effects are over (see the top
   * of this file), or at the cap (settled:false, reason network | busy | dom), or at once when
   * `away` reports a navigation (watched from before the action: a link's click starts it
   * synchronously). quietMs: SETTLE_QUIET_MS for a click, SETTLE_QUIET_LIGHT_MS for the rest.
   */
  function settle(mutations, network, away, quietMs) {
    return new Promise((resolve) => {
      const started = now();
      const startedEpoch = Date.now();
      const light = quietMs <= SETTLE_QUIET_LIGHT_MS;
      let taskDone = false;
      let timer = null;
      let cap = null;
      let confirming = false;
      let confirmed = null;       // the `last` a task-later check found quiet too
      let ended = false;
      const finish = (settled, navigating, reason) => {
        if (ended) return;
        ended = true;
        clearTimeout(timer);
        clearTimeout(cap);
        away.onAway = null;
        network.onChange = null;
        network.onTick = null;
        mutations.timers.onChange = null;
        const out = { settled, navigating };
        if (reason) out.reason = reason;
        resolve(out);
      };
      // The action's requests: started from just before it acted until CAUSAL_MS after its last
      // own event (the act itself, a change it made, the end of one of its requests).
      const causal = () => {
        let until = Math.max(startedEpoch, mutations.lastEpoch);
        let lastEnd = -Infinity;
        const from = mutations.actEpoch - 1;
        let grew = true;
        const used = new Set();
        while (grew) {
          grew = false;
          for (const e of network.ended) {
            if (used.has(e) || e.at < from || e.at > until + CAUSAL_MS) continue;
            used.add(e);
            lastEnd = Math.max(lastEnd, e.end);
            if (e.endEpoch > until) {
              until = e.endEpoch;
              grew = true;
            }
          }
        }
        let inflight = 0;
        for (const at of network.requests.values()) if (at >= from && at <= until + CAUSAL_MS) inflight += 1;
        return { inflight, lastEnd };
      };
      const busyNow = () => {
        for (const el of mutations.busy) {
          if (isBusy(el) && shown(el)) return true;
          mutations.busy.delete(el);
        }
        return false;
      };
      const check = () => {
        if (ended) return;
        if (away.gone) {
          finish(false, true);
          return;
        }
        const t = now();
        const { inflight, lastEnd } = causal();
        const busy = mutations.busy.size > 0 && busyNow();
        if (t - started >= SETTLE_CAP_MS) {
          finish(false, false, inflight > 0 || !network.known ? 'network' : busy ? 'busy' : 'dom');
          return;
        }
        // The act's own timers still to run (page-timers-main.js), for a while at most.
        const timers = mutations.timers;
        const timing = timers.pending > 0 && t - started < (document.hidden ? quietMs : TIMERS_MAX_MS);
        if (!network.known || inflight > 0 || busy || timing) {
          // The worker's next word or tick checks again; a page timer too (in front, or no worker).
          clearTimeout(timer);
          timer = setTimeout(check, SETTLE_REACT_MS);
          return;
        }
        const last = Math.max(mutations.last, lastEnd, timers.idleAt);
        // The act queued timers, every one of them has run, and nothing else of it is known to go
        // on — no chain the tracker does not follow, no request, no change well after the chain's
        // end (that is something else's: a timer queued through the page's own reference, a
        // message), and the worker's word is from after the last change (a request the last
        // callback started may be on its way): what is left to catch is a change those callbacks
        // queued in a microtask or a task, not a frame or two later. The reaction window after
        // the last change, then, though never sooner than the quiet window after the act (what
        // the tracker cannot see, such as a transition's end, has that long as before).
        const chained = !light && timers.seen && timers.pending === 0 && !timers.open && lastEnd === -Infinity &&
          mutations.last <= timers.idleAt + SETTLE_REACT_MS &&
          (!network.ticking || network.heardAt >= last + SETTLE_REACT_MS);
        let windowMs = chained ? SETTLE_REACT_MS : quietMs;
        const early = chained ? started + quietMs - t : 0;
        if (light) {
          if (last <= started) {
            if (taskDone) finish(true, false);     // nothing happened: a task later is enough
            return;
          }
          // A reaction's next stage is a timer it queued (held back 4 ms once timers nest five
          // deep): the window outlasts that. A turn of our own is not enough: ours may be queued
          // before the page's next one (a worker tick runs the check outside the page's timers).
          windowMs = SETTLE_REACT_MS;
        }
        const quiet = t - last;
        if (quiet >= windowMs && early <= 0) {
          // Quiet by the clock; confirm a task later, behind whatever the page has queued: after a
          // stall of this process (a loaded machine) our timer may run before the page's task.
          if (confirmed === last) {
            finish(true, false);
            return;
          }
          if (confirming) return;
          confirming = true;
          afterTurns(() => {
            confirming = false;
            confirmed = last;
            check();
          });
          return;
        }
        // In front, a page timer wakes us at the end of the window; in a hidden tab the worker's
        // ticks do (the page timer would fire up to a second late).
        clearTimeout(timer);
        timer = setTimeout(check, Math.ceil(Math.max(windowMs - quiet, early)));
      };
      network.onChange = check;
      network.onTick = check;
      mutations.timers.onChange = check;
      away.onAway = () => finish(false, true);
      cap = setTimeout(check, SETTLE_CAP_MS);
      // "A task later": a re-render the handlers queued runs first. In a hidden tab the worker's
      // round trip (sync) is the other turn.
      afterTurns(() => {
        taskDone = true;
        check();
      });
      check();
    });
  }

  Object.assign(P, { now, SETTLE_QUIET_MS, SETTLE_QUIET_LIGHT_MS, watchMutations, watchNetwork,
    watchNavigation, settle });
})();
