// SPDX-License-Identifier: GPL-3.0-or-later
// The one function the worker runs in a page's MAIN world before an agent's click or key press
// there (page-bridge.js guardDialogs): it wraps the page's window.alert, confirm and prompt, so
// that a dialog the act brings up is answered by the page agent (content/page-dialogs.js) instead
// of stopping the page, and the act with it, until somebody notices it — in a tab behind the
// person's, nobody does. It is serialized into the page, so it uses nothing from outside its body.
//
// The two worlds share the DOM, not their objects: the wrapper asks by cancelable events on the
// window (`chaperone-dialog-accept`, then `chaperone-dialog-dismiss`, each with the dialog as
// JSON in `detail`); the page agent cancels the one that is its answer while an act runs. When
// neither is cancelled (no act running, or an agent that is gone) the page's own dialog opens as
// it always did. The page can hear these events too: they carry only its own words.

export function guardDialogs() {
  const w = window;
  const mark = Symbol.for('chaperone.dialogs');
  if (w[mark]) return;
  Object.defineProperty(w, mark, { value: true });
  for (const kind of ['alert', 'confirm', 'prompt']) {
    const native = w[kind];
    if (typeof native !== 'function') continue;
    // A method of its own name, as the page sees it (confirm.name is "confirm").
    const wrapped = {
      [kind](...args) {
        let message = '';
        try {
          message = String(args[0] ?? '').slice(0, 2000);
        } catch {
          message = '';
        }
        const detail = JSON.stringify({ kind, message });
        const ask = (type) => !w.dispatchEvent(new CustomEvent(type, { cancelable: true, detail }));
        if (ask('chaperone-dialog-accept')) return kind === 'confirm' ? true : kind === 'prompt' ? null : undefined;
        if (ask('chaperone-dialog-dismiss')) return kind === 'confirm' ? false : kind === 'prompt' ? null : undefined;
        return native.apply(w, args);
      },
    }[kind];
    w[kind] = wrapped;
  }
}
