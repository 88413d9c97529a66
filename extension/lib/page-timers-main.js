// SPDX-License-Identifier: GPL-3.0-or-later
// The one function the worker runs in a page's MAIN world before an agent's first click or key
// press in a document (page-bridge.js prepareMainWorld), beside the dialog guard: it lets the page
// agent see the timers an act sets off, so that a click answers once the act's own chain of
// timers has run instead of after a fixed quiet window. TiddlyWiki, for one, renders what a click
// changed in a setTimeout(0) the click's handler queues, and then is done: the page agent used to
// wait 40 ms of quiet after that render in case more came, and now answers a few ms after it.
//
// What counts as an act's: a setTimeout of at most MAX_DELAY_MS queued by the page's handlers
// while the act runs (from the agent's begin event until the microtasks its end event finds
// queued have run), and one queued by such a timer's callback in turn, at most MAX_GENERATION
// deep; and, in a visible document, an animation frame asked for by the same. A longer timer (a
// debounce, a toast's dismissal), an interval (a ticker) and a frame in a hidden tab (it never
// comes) are not waited for; when one of the act's callbacks queues such a thing, or goes deeper
// than MAX_GENERATION (an animation's frames), the act is "open": its chain goes on where this
// does not follow it, and the page agent waits its full quiet window as it did before.
//
// Each act has its own id (the page agent runs ops side by side): a timer belongs to the act
// whose handlers or callbacks queued it, and each act hears only its own count.
//
// The two worlds share the DOM, not their objects: they talk by events on the window under a name
// the worker made for this document (`name`, random): `${name}:act` (isolated → main, detail
// 'begin <id>' or 'end <id>') and `${name}` (main → isolated, detail '<id> <pending> <open>').
// The functions it uses are taken when it is installed. What a page that patched the DOM's own
// functions before can learn or forge is when an agent acts and when its act answers: see
// docs/security.md. A page that kept its own reference to setTimeout from before this ran
// (React's scheduler does) is not seen through: such timers are the page's, as before.
// It is serialized into the page, so it uses nothing from outside its body and its argument.

export function trackTimers(name) {
  const w = window;
  const mark = Symbol.for('chaperone.timers');
  if (w[mark] || typeof name !== 'string' || name === '') return;
  Object.defineProperty(w, mark, { value: true });
  const MAX_DELAY_MS = 100;
  const MAX_GENERATION = 3;
  const MAX_ACTS = 16;
  const apply = Reflect.apply;
  const dispatch = EventTarget.prototype.dispatchEvent;
  const listen = EventTarget.prototype.addEventListener;
  const Custom = w.CustomEvent;
  const later = w.queueMicrotask;
  const native = {
    setTimeout: w.setTimeout, clearTimeout: w.clearTimeout, clearInterval: w.clearInterval,
    requestAnimationFrame: w.requestAnimationFrame, cancelAnimationFrame: w.cancelAnimationFrame,
  };
  // act id → {pending: Set of 't<id>' / 'f<id>', open}
  const acts = new Map();
  const owner = new Map();         // 't<id>' / 'f<id>' → act id
  let acting = null;               // the act whose handlers run now
  let context = null;              // {act, generation} while one of an act's callbacks runs
  const tell = (id) => {
    const a = acts.get(id);
    if (a) apply(dispatch, w, [new Custom(name, { detail: `${id} ${a.pending.size} ${a.open ? 1 : 0}` })]);
  };
  apply(listen, w, [`${name}:act`, (e) => {
    const [what, id] = String(e.detail).split(' ');
    if (!id) return;
    if (what === 'begin') {
      // Acts that never said done (a page agent that went away) are dropped, oldest first.
      if (acts.size >= MAX_ACTS) acts.delete(acts.keys().next().value);
      acts.set(id, { pending: new Set(), open: false });
      acting = id;
      return;
    }
    if (what === 'end') {
      // The microtasks the act's handlers queued run before this one: theirs are the act's too.
      apply(later, w, [() => {
        if (acting === id) acting = null;
        tell(id);
      }]);
    } else if (what === 'done') acts.delete(id);
  }]);
  // Whose a callback queued now is, and at which depth: {act, generation} or null.
  const queuedBy = () => {
    if (acting) return { act: acting, generation: 1 };
    if (!context) return null;
    if (context.generation < MAX_GENERATION) return { act: context.act, generation: context.generation + 1 };
    return { act: context.act, generation: 0 };       // too deep: the act's chain goes on unseen
  };
  const untracked = (by) => {
    const a = by && acts.get(by.act);
    if (a && !a.open) {
      a.open = true;
      tell(by.act);
    }
  };
  const wrap = (key, fn, by) => function (...args) {
    const k = key();
    owner.delete(k);
    const a = acts.get(by.act);
    a?.pending.delete(k);
    const outer = context;
    context = by;
    try {
      return apply(fn, this, args);
    } finally {
      context = outer;
      tell(by.act);
    }
  };
  const track = (by, key) => {
    const a = acts.get(by.act);
    if (!a) return;
    a.pending.add(key);
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
  w.setTimeout = {
    setTimeout(handler, delay, ...args) {
      const by = queuedBy();
      if (!by || !acts.has(by.act)) return apply(native.setTimeout, w, [handler, delay, ...args]);
      if (by.generation === 0 || typeof handler !== 'function' || !(Number(delay || 0) <= MAX_DELAY_MS)) {
        untracked(by);
        return apply(native.setTimeout, w, [handler, delay, ...args]);
      }
      let id = 0;
      id = apply(native.setTimeout, w, [wrap(() => `t${id}`, handler, by), delay, ...args]);
      track(by, `t${id}`);
      return id;
    },
  }.setTimeout;
  // setTimeout's and setInterval's ids are one list: either clear cancels either.
  for (const fn of ['clearTimeout', 'clearInterval']) {
    w[fn] = {
      [fn](id) {
        forget(`t${id}`);
        return apply(native[fn], w, [id]);
      },
    }[fn];
  }
  if (typeof native.requestAnimationFrame !== 'function') return;
  w.requestAnimationFrame = {
    requestAnimationFrame(callback) {
      const by = queuedBy();
      if (!by || !acts.has(by.act)) return apply(native.requestAnimationFrame, w, [callback]);
      if (by.generation === 0 || typeof callback !== 'function' || document.visibilityState !== 'visible') {
        untracked(by);
        return apply(native.requestAnimationFrame, w, [callback]);
      }
      let id = 0;
      id = apply(native.requestAnimationFrame, w, [wrap(() => `f${id}`, callback, by)]);
      track(by, `f${id}`);
      return id;
    },
  }.requestAnimationFrame;
  w.cancelAnimationFrame = {
    cancelAnimationFrame(id) {
      forget(`f${id}`);
      return apply(native.cancelAnimationFrame, w, [id]);
    },
  }.cancelAnimationFrame;
}
