// The person's Stop: one flag for the whole browser. stop() sets it synchronously, before anything
// is awaited, so a call that starts after stop() returned is refused even while the flag is still
// on its way to chrome.storage.session. Only the person resumes (popup, or the app's Resume).

export const STOP_KEY = 'stopped';
export const STOP_SOURCES = Object.freeze(['esc', 'pill', 'popup', 'app']);

export class StopState {
  /**
   * @param storage chrome.storage.session
   * @param emit    (event, data) → sends an event to the engine
   * @param now     () → ms since the epoch
   */
  constructor({ storage, emit = () => {}, now = Date.now }) {
    this.storage = storage;
    this.emit = emit;
    this.now = now;
    this._state = { stopped: false, source: null, at: 0 };
    this._touched = false; // changed in memory before load() finished: memory wins
    this._listeners = new Set();
    this._saving = Promise.resolve();
    this._loading = null;
  }

  get stopped() {
    return this._state.stopped;
  }

  state() {
    return { ...this._state };
  }

  load() {
    this._loading ??= (async () => {
      const stored = (await this.storage.get(STOP_KEY))?.[STOP_KEY];
      if (this._touched) return;
      if (stored && typeof stored === 'object' && stored.stopped === true) {
        this._state = {
          stopped: true,
          source: STOP_SOURCES.includes(stored.source) ? stored.source : 'app',
          at: Number(stored.at) || 0,
        };
      }
    })();
    return this._loading;
  }

  /** Listeners get the new state after each change. */
  onChange(fn) {
    this._listeners.add(fn);
    return () => this._listeners.delete(fn);
  }

  /**
   * Stops now. Synchronous: the flag is set before this returns; the returned promise is only
   * the storage write.
   */
  stop(source) {
    return this._set(true, STOP_SOURCES.includes(source) ? source : 'app');
  }

  resume(source) {
    return this._set(false, STOP_SOURCES.includes(source) ? source : 'app');
  }

  /** Resolves when the last change is in storage. */
  flush() {
    return this._saving;
  }

  _set(stopped, source) {
    this._touched = true;
    if (this._state.stopped === stopped) return this._saving;
    this._state = { stopped, source, at: this.now() };
    const snapshot = { ...this._state };
    this._saving = this._saving
      .then(() => this.storage.set({ [STOP_KEY]: snapshot }))
      .catch((e) => console.error('stop state not saved', e));
    try {
      this.emit('stop.changed', snapshot);
    } catch (e) {
      console.error('stop.changed not sent', e);
    }
    for (const fn of this._listeners) {
      try {
        fn(snapshot);
      } catch (e) {
        console.error('stop listener failed', e);
      }
    }
    return this._saving;
  }
}
