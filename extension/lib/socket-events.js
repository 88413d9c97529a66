// SPDX-License-Identifier: GPL-3.0-or-later
// The part of a WebSocket's surface that bridge-socket.js listens on — addEventListener,
// removeEventListener, {once} — for the sockets that stand in for one (native-socket.js over a
// native port, bridge-transport.js choosing between the two). Events are plain objects with
// `type` and `target`; a listener's exception does not stop the others, as with a real WebSocket.

export class SocketEvents {
  #listeners = new Map(); // type → [{fn, once}]

  addEventListener(type, fn, options = {}) {
    if (typeof fn !== 'function') return;
    if (!this.#listeners.has(type)) this.#listeners.set(type, []);
    this.#listeners.get(type).push({ fn, once: options === true ? false : Boolean(options?.once) });
  }

  removeEventListener(type, fn) {
    const list = this.#listeners.get(type);
    if (list) this.#listeners.set(type, list.filter((l) => l.fn !== fn));
  }

  /** Calls the listeners of `type` with {type, target, ...fields}; {once} ones only this time. */
  emit(type, fields = {}) {
    const event = { type, target: this, ...fields };
    const list = this.#listeners.get(type) ?? [];
    this.#listeners.set(type, list.filter((l) => !l.once));
    for (const { fn } of list) {
      try {
        fn.call(this, event);
      } catch (err) {
        queueMicrotask(() => { throw err; });
      }
    }
  }
}
