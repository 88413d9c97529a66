// SPDX-License-Identifier: GPL-3.0-or-later
// The one function the worker runs in a page's MAIN world before an agent's first click or key
// press in a document (page-bridge.js prepareMainWorld), beside the dialog guard: it lets the page
// agent see the timers an act sets off, so that a click answers once the act's own chain of
// timers has run instead of after a fixed quiet window. TiddlyWiki, for one, renders what a click
// changed in a setTimeout(0) the click's handler queues, and then is done: the page agent used to
// wait 40 ms of quiet after that render in case more came, and now answers a few ms after it.
//
// What counts as the act's: a setTimeout of at most MAX_DELAY_MS queued by the page's handlers
// while the act runs (between the agent's begin and end events), and one of those queued by such
// a timer's callback in turn, at most MAX_GENERATION deep; and, in a visible document, an
// animation frame asked for by the same. A longer timer (a debounce, a toast's dismissal), an
// interval (a ticker), a chain that goes on (polling), a hidden tab's animation frames (they
// never come) and whatever the page queued before the act are not the act's. The page agent
// still waits for the DOM and the requests as before; this only tells it when the act's own
// timers are over.
//
// The two worlds share the DOM, not their objects: they talk by events on the window under a name
// the worker made for this document (`name`, random), which the page does not know and so can
// neither hear nor forge: `${name}:act` (isolated → main, detail 'begin' or 'end') and `${name}`
// (main → isolated, detail: how many of the act's timers are still to run, as a string).
// A page that kept its own reference to setTimeout from before this ran (React's scheduler does)
// is not seen through: the page agent then waits its full quiet window, as it did before.
// It is serialized into the page, so it uses nothing from outside its body and its argument.

export function trackTimers(name) {
  const w = window;
  const mark = Symbol.for('chaperone.timers');
  if (w[mark] || typeof name !== 'string' || name === '') return;
  Object.defineProperty(w, mark, { value: true });
  const MAX_DELAY_MS = 100;
  const MAX_GENERATION = 3;
  const nativeSet = w.setTimeout;
  const nativeClear = w.clearTimeout;
  const nativeFrame = w.requestAnimationFrame;
  const nativeCancelFrame = w.cancelAnimationFrame;
  const pending = new Set();       // 't' + timer id, 'f' + frame id
  let acting = false;
  let generation = 0;              // > 0 while one of the act's callbacks runs: its depth
  const tell = () => w.dispatchEvent(new CustomEvent(name, { detail: String(pending.size) }));
  w.addEventListener(`${name}:act`, (e) => {
    acting = e.detail === 'begin';
    if (acting) pending.clear();   // an act counts only its own
    tell();
  });
  // Whether a callback queued now is the act's, and at which depth.
  const depth = () => (acting ? 1 : generation > 0 && generation < MAX_GENERATION ? generation + 1 : 0);
  const wrap = (key, fn, gen) => function (...args) {
    pending.delete(key());
    const outer = generation;
    generation = gen;
    try {
      return fn.apply(this, args);
    } finally {
      generation = outer;
      tell();
    }
  };
  w.setTimeout = {
    setTimeout(handler, delay, ...args) {
      const gen = depth();
      if (gen === 0 || typeof handler !== 'function' || !(Number(delay || 0) <= MAX_DELAY_MS)) {
        return nativeSet.call(w, handler, delay, ...args);
      }
      let id = 0;
      id = nativeSet.call(w, wrap(() => `t${id}`, handler, gen), delay, ...args);
      pending.add(`t${id}`);
      tell();
      return id;
    },
  }.setTimeout;
  w.clearTimeout = {
    clearTimeout(id) {
      if (pending.delete(`t${id}`)) tell();
      return nativeClear.call(w, id);
    },
  }.clearTimeout;
  if (typeof nativeFrame !== 'function') return;
  w.requestAnimationFrame = {
    requestAnimationFrame(callback) {
      const gen = depth();
      if (gen === 0 || typeof callback !== 'function' || document.visibilityState !== 'visible') {
        return nativeFrame.call(w, callback);
      }
      let id = 0;
      id = nativeFrame.call(w, wrap(() => `f${id}`, callback, gen));
      pending.add(`f${id}`);
      tell();
      return id;
    },
  }.requestAnimationFrame;
  w.cancelAnimationFrame = {
    cancelAnimationFrame(id) {
      if (pending.delete(`f${id}`)) tell();
      return nativeCancelFrame.call(w, id);
    },
  }.cancelAnimationFrame;
}
