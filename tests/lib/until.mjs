// SPDX-License-Identifier: GPL-3.0-or-later
// How every JS test and harness waits. A test waits on the event it stands for: a promise, a
// message, a log line, a process exit (`deadline`, `once`), or a change it is told about
// (`watch`). Only where nothing tells us — the accessibility tree, a page's DOM seen from outside,
// a file another process writes — does it look again and again, and then through `until` alone.
// A time limit is only ever a failure deadline, and its failure says what was awaited.

import { setTimeout as delay } from 'node:timers/promises';

const STEP_MS = 25;

function needWhat(fn, what) {
  if (typeof what !== 'string' || !what) throw new TypeError(`${fn}: say what is awaited ({what: '…'})`);
}

/**
 * Looks at `predicate()` (may be async) until it gives a truthy value, and resolves with that value.
 * Throws after `timeout` ms, naming `what`. An exception from the predicate is not swallowed.
 */
export async function until(predicate, { timeout = 10000, what } = {}) {
  needWhat('until', what);
  const end = performance.now() + timeout;
  let tries = 0;
  for (;;) {
    const value = await predicate();
    tries += 1;
    if (value) return value;
    if (performance.now() >= end) {
      throw new Error(`timed out after ${timeout} ms (${tries} looks) waiting for ${what}`);
    }
    await delay(STEP_MS);
  }
}

/**
 * `promise`'s outcome, or a failure naming `what` once `timeout` ms have passed. The deadline is
 * a failure only: nothing waits for it when the promise settles first.
 */
export async function deadline(promise, { timeout = 10000, what } = {}) {
  needWhat('deadline', what);
  let timer;
  const late = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${timeout} ms waiting for ${what}`)), timeout);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The next `event` of an EventEmitter (or EventTarget) whose arguments pass `filter`; resolves with
 * the first argument (or all of them with `all: true`).
 */
export function once(emitter, event, { filter = () => true, timeout = 10000, what, all = false } = {}) {
  needWhat('once', what);
  let off;
  const seen = new Promise((resolve) => {
    const handler = (...args) => {
      if (!filter(...args)) return;
      off();
      resolve(all ? args : args[0]);
    };
    if (typeof emitter.on === 'function') {
      emitter.on(event, handler);
      off = () => emitter.off(event, handler);
    } else {
      emitter.addEventListener(event, handler);
      off = () => emitter.removeEventListener(event, handler);
    }
  });
  return deadline(seen, { timeout, what }).finally(() => off());
}

/**
 * A change notifier for state the test itself holds (a counter a handler bumps, a list a callback
 * fills): call `notify()` where it changes, and `when(predicate, {timeout, what})` resolves as soon
 * as the predicate holds, looked at only when told of a change.
 */
export function watch() {
  const waiters = new Set();
  return {
    notify() {
      for (const check of [...waiters]) check();
    },
    when(predicate, { timeout = 10000, what } = {}) {
      needWhat('when', what);
      let check;
      const met = new Promise((resolve, reject) => {
        check = () => {
          let value;
          try {
            value = predicate();
          } catch (err) {
            waiters.delete(check);
            reject(err);
            return;
          }
          if (value) {
            waiters.delete(check);
            resolve(value);
          }
        };
        waiters.add(check);
        check();
      });
      return deadline(met, { timeout, what }).finally(() => waiters.delete(check));
    },
  };
}
