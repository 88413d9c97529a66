// SPDX-License-Identifier: GPL-3.0-or-later
// A page's own alert, confirm and prompt during an agent's act. Such a dialog stops the page —
// and the act — until somebody answers it, and in a tab behind the person's nobody sees it:
// TiddlyWiki asks "Do you wish to delete the tiddler …?" after its Delete button's click. The
// worker wraps the page's dialogs in its main world before a click or a key press
// (lib/page-dialogs-main.js); while an act runs, the wrapper asks here, by events on the window,
// and is answered so:
//  - a confirm that an act the person approved brings up (a held click, approved) asks the
//    person's question again: OK;
//  - any other confirm is Cancel, and a prompt gets no text (Cancel): a page's questions are the
//    person's to answer, never an agent's;
//  - an alert is closed.
// Each is told to the agent with the act's answer (its words are the page's), at most three.

(function () {
  'use strict';

  if (globalThis.__chaperonePage) return;   // installed already: the first install wins
  const P = globalThis.ChaperonePageParts;
  if (!P) return;                           // page-common.js did not run: nothing installs

  const MESSAGE_MAX = 300;
  const SEEN_MAX = 3;
  // The acts running now (the page agent runs ops side by side: an agent's act may still be
  // settling when the person's approval of another runs). A dialog is told to each.
  const watching = new Set();

  /** The dialog an event asks about, or null when it is not one (the page may send anything). */
  function dialogOf(e) {
    try {
      const d = JSON.parse(typeof e.detail === 'string' ? e.detail : '');
      if (!d || !['alert', 'confirm', 'prompt'].includes(d.kind)) return null;
      const message = String(d.message ?? '').replace(/\s+/g, ' ').trim();
      return { kind: d.kind, message: message.length > MESSAGE_MAX ? `${message.slice(0, MESSAGE_MAX)}…` : message };
    } catch (_) {
      return null;
    }
  }

  function answer(e, d, answered) {
    e.preventDefault();
    for (const w of watching) if (w.seen.length < SEEN_MAX) w.seen.push({ ...d, answered });
  }

  // OK only when every act running now is one the person approved: which act a late question
  // belongs to cannot be told, and an agent's own act never gets the person's answer.
  window.addEventListener('chaperone-dialog-accept', (e) => {
    if (watching.size === 0 || [...watching].some((w) => !w.approved)) return;
    const d = dialogOf(e);
    if (d && d.kind === 'confirm') answer(e, d, 'ok');
  });
  window.addEventListener('chaperone-dialog-dismiss', (e) => {
    if (watching.size === 0) return;
    const d = dialogOf(e);
    if (d) answer(e, d, d.kind === 'alert' ? 'closed' : 'cancel');
  });

  /**
   * Answers the page's dialogs until stop(), which returns what they were:
   * [{kind, message, answered: ok | cancel | closed}]. `approved`: the act is one the person
   * approved (a confirm is then answered OK, when no other act runs).
   */
  function watchDialogs(approved) {
    const mine = { approved: approved === true, seen: [] };
    watching.add(mine);
    return {
      stop() {
        watching.delete(mine);
        return mine.seen;
      },
    };
  }

  Object.assign(P, { watchDialogs });
})();
