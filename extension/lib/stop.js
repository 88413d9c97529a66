// SPDX-License-Identifier: GPL-3.0-or-later
// The person's Stop: one flag for the whole browser. stop() sets it synchronously, before anything
// is awaited, so a call that starts after stop() returned is refused even while the flag is still
// on its way to chrome.storage.session. Only the person resumes (popup, or the app's Resume).

export const STOP_KEY = 'stopped';
// 'shortcut': the browser's keyboard shortcut for the extension's Stop command (chrome.commands).
export const STOP_SOURCES = Object.freeze(['esc', 'pill', 'popup', 'app', 'shortcut']);

// The manifest's command. Chrome handles its key before any page sees it, so unlike Esc (which a
// page's own capture listener can swallow) a page cannot intercept, fake or cancel it.
export const STOP_COMMAND = 'stop-agent';
const SHORTCUT_MAX = 40;

/**
 * The key the browser has bound to Stop now, e.g. "Ctrl+Shift+E", or '' when the person removed it
 * (chrome://extensions/shortcuts) or Chrome gave it to another extension. Asked each time the pill
 * is drawn: the person may change it at any moment, and no event says so.
 * @param commands chrome.commands
 */
export async function stopShortcut(commands) {
  try {
    const all = await commands?.getAll?.();
    const found = Array.isArray(all) ? all.find((c) => c?.name === STOP_COMMAND) : null;
    const key = typeof found?.shortcut === 'string' ? found.shortcut.trim() : '';
    return key.length <= SHORTCUT_MAX ? key : '';
  } catch {
    return '';
  }
}

/**
 * The chrome.commands.onCommand listener's work: the Stop command stops as the popup's Stop does
 * (`stop` is the router's, which sets the flag before it awaits anything and tells the app).
 * → whether it was ours.
 */
export function onStopCommand(command, stop) {
  if (command !== STOP_COMMAND) return false;
  stop('shortcut');
  return true;
}

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
