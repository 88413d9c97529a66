// SPDX-License-Identifier: GPL-3.0-or-later
// The one function the worker runs in a page's MAIN world before an agent's first click or key
// press in a document (page-bridge.js prepareMainWorld), beside the dialog guard: it lets the page
// agent see the timers an act sets off, so that a click answers once the act's own chain of
// timers has run instead of after a fixed quiet window. TiddlyWiki, for one, renders what a click
// changed in a setTimeout(0) the click's handler queues, and then is done: the page agent used to
// wait 40 ms of quiet after that render in case more came, and now answers a few ms after it.
//
// What counts as an act's: a setTimeout of at most its longest delay (the begin event's, at most
// MAX_DELAY_MS; a click's is 100 ms) queued by the page's handlers
// while the act runs (from the agent's begin event until MICROTASK_HOPS turns of the microtask
// queue after its end event: an async handler's first awaits), and one queued by such a timer's
// callback in turn (or by the microtasks it queued), at most MAX_GENERATION deep; and, in a
// visible document, an animation frame asked for by the same. A longer timer (a debounce, a
// toast's dismissal), an interval (a ticker, an animation), a string handler and a frame in a
// hidden tab (it never comes) are not waited for; when the act queues such a thing, or goes
// deeper than MAX_GENERATION (an animation's frames), the act is "open": its chain goes on where
// this does not follow it, and the page agent waits its full quiet window as it did before.
//
// Each act has its own id (the page agent runs ops side by side): a timer belongs to the act
// whose handlers or callbacks queued it, and each act hears only its own count.
//
// The two worlds share the DOM, not their objects: they talk by events on the window under a name
// the worker made for this document (`name`, random): `${name}:act` (isolated → main, detail
// 'begin <id> <longest delay>', 'end <id>' or 'done <id>') and `${name}` (main → isolated, detail
// '<id> <pending> <open>'). A worker that started again names the document anew: the tracker
// installed before takes the new name too (the function under its mark).
// The functions it uses are taken when it is installed. What a page that patched the DOM's own
// functions before can learn or forge is when an agent acts and when its act answers: see
// docs/security.md. A page that kept its own reference to setTimeout from before this ran
// (React's scheduler does) is not seen through: such timers are the page's, as before.
// It is serialized into the page, so it uses nothing from outside its body and its argument.

export function trackTimers(name) {
  const w = window;
  const mark = Symbol.for('chaperone.timers');
  if (typeof name !== 'string' || name === '') return;
  if (typeof w[mark] === 'function') {
    w[mark](name);
    return;
  }
  const MAX_DELAY_MS = 100;
  const MAX_GENERATION = 3;
  const MAX_ACTS = 16;
  const MICROTASK_HOPS = 4;
  const apply = Reflect.apply;
  const dispatch = EventTarget.prototype.dispatchEvent;
  const listen = EventTarget.prototype.addEventListener;
  const Custom = w.CustomEvent;
  const microtask = w.queueMicrotask;
  const native = {
    setTimeout: w.setTimeout, setInterval: w.setInterval, clearTimeout: w.clearTimeout,
    clearInterval: w.clearInterval, requestAnimationFrame: w.requestAnimationFrame,
    cancelAnimationFrame: w.cancelAnimationFrame,
  };
  /** fn after `hops` turns of the microtask queue: behind what the page queued meanwhile. */
  const after = (hops, fn) => apply(microtask, w, [hops > 1 ? () => after(hops - 1, fn) : fn]);
  // act id → {name, pending: Set of 't<id>' / 'f<id>', open, longest: its timers' longest delay}
  const acts = new Map();
  const owner = new Map();         // 't<id>' / 'f<id>' → act id
  let acting = null;               // the act whose handlers (and their first microtasks) run now
  let context = null;              // {act, generation} while one of an act's callbacks runs
  let tail = null;                 // the same, for the microtasks that callback queued
  const tell = (id) => {
    const a = acts.get(id);
    if (a) apply(dispatch, w, [new Custom(a.name, { detail: `${id} ${a.pending.size} ${a.open ? 1 : 0}` })]);
  };
  const hear = (named) => (e) => {
    const [what, id, longestMs] = String(e.detail).split(' ');
    if (!id) return;
    if (what === 'begin') {
      // Acts that never said done (a page agent that went away) are dropped, oldest first.
      if (acts.size >= MAX_ACTS) acts.delete(acts.keys().next().value);
      const longest = Math.min(MAX_DELAY_MS, Math.max(0, Number(longestMs) || 0));
      acts.set(id, { name: named, pending: new Set(), open: false, longest });
      acting = id;
    } else if (what === 'end') {
      after(MICROTASK_HOPS, () => {
        if (acting === id) acting = null;
        tell(id);
      });
    } else if (what === 'done') {
      acts.delete(id);
      if (acting === id) acting = null;
    }
  };
  const names = new Set();
  const take = (n) => {
    if (typeof n !== 'string' || n === '' || names.has(n)) return;
    names.add(n);
    apply(listen, w, [`${n}:act`, hear(n)]);
  };
  Object.defineProperty(w, mark, { value: take });
  take(name);
  // Whose a callback queued now is, and at which depth: {act, generation}, generation 0 when too
  // deep to follow, or null when no act's.
  const queuedBy = () => {
    const by = context ?? tail;
    if (by && acts.has(by.act)) {
      return { act: by.act, generation: by.generation < MAX_GENERATION ? by.generation + 1 : 0 };
    }
    return acting && acts.has(acting) ? { act: acting, generation: 1 } : null;
  };
  const opened = (by) => {
    const a = by && acts.get(by.act);
    if (a && !a.open) {
      a.open = true;
      tell(by.act);
    }
  };
  const wrap = (key, fn, by) => function (...args) {
    const k = key();
    owner.delete(k);
    acts.get(by.act)?.pending.delete(k);
    const outer = context;
    context = by;
    try {
      return apply(fn, this, args);
    } finally {
      context = outer;
      // What the callback's promises queue is the chain's too, for a few turns.
      tail = by;
      after(2, () => { if (tail === by) tail = null; });
      tell(by.act);
    }
  };
  const track = (by, key) => {
    acts.get(by.act).pending.add(key);
    owner.set(key, by.act);
    tell(by.act);
  };
  const forget = (key) => {
    const act = owner.get(key);
    if (act === undefined) return;
    owner.delete(key);
    acts.get(act)?.pending.delete(key);
    tell(act);
  };
  /**
   * Queues through `fn` (a native) what the page asked for (`all`: its arguments, as they came,
   * their number too: setTimeout() throws as it did). A callback that is an act's and that
   * `follows(by)` is wrapped and counted under `prefix`; anything else the act queues opens it.
   */
  const queue = (fn, prefix, all, follows) => {
    const by = queuedBy();
    if (!by) return apply(fn, w, all);
    if (by.generation === 0 || typeof all[0] !== 'function' || !follows(by)) {
      opened(by);
      return apply(fn, w, all);
    }
    let id = 0;
    all[0] = wrap(() => `${prefix}${id}`, all[0], by);
    id = apply(fn, w, all);
    track(by, `${prefix}${id}`);
    return id;
  };
  // A delay or an id is converted once, as the browser converts it (a long), and handed on so.
  const withCancel = (fn, prefix) => ({
    [fn](...all) {
      if (all.length > 0) {
        all[0] = (+all[0]) | 0;
        forget(`${prefix}${all[0]}`);
      }
      return apply(native[fn], w, all);
    },
  }[fn]);
  w.setTimeout = {
    setTimeout(...all) {
      return queue(native.setTimeout, 't', all, (by) => {
        if (all.length > 1) all[1] = +all[1];
        const delay = all.length > 1 && all[1] === all[1] ? all[1] : 0;
        return delay <= acts.get(by.act).longest;
      });
    },
  }.setTimeout;
  w.setInterval = {
    setInterval(...all) {
      opened(queuedBy());            // an interval goes on: the act's chain is not followed there
      return apply(native.setInterval, w, all);
    },
  }.setInterval;
  // setTimeout's and setInterval's ids are one list: either clear cancels either.
  w.clearTimeout = withCancel('clearTimeout', 't');
  w.clearInterval = withCancel('clearInterval', 't');
  if (typeof native.requestAnimationFrame !== 'function') return;
  w.requestAnimationFrame = {
    requestAnimationFrame(...all) {
      // A hidden tab's frames never come: not waited for.
      return queue(native.requestAnimationFrame, 'f', all, () => document.visibilityState === 'visible');
    },
  }.requestAnimationFrame;
  w.cancelAnimationFrame = withCancel('cancelAnimationFrame', 'f');
}
