// SPDX-License-Identifier: GPL-3.0-or-later
// The page agent's waiting for words: the `waitText` op (browser_wait's text, a snapshot's
// `until`) and textShownFor, the same test for a batch act's `untilText` (page-act.js). Nothing
// here changes the page.

(function () {
  'use strict';

  if (globalThis.__chaperonePage) return;   // installed already: the first install wins
  const P = globalThis.ChaperonePageParts;
  if (!P) return;                           // page-common.js did not run: nothing installs

  const { core, isRendered, showsPassword, refuseSignIn, fail, inheritedDoc } = P;

  // ---- op: waitText --------------------------------------------------------------------------

  // The worker bounds the wait (lib/capabilities/read.js, 10 s on its clock); this bound only
  // lets the observer go when nobody is waiting any more.
  const WAIT_TEXT_MAX_MS = 12000;
  const WAIT_TEXT_POLL_MS = 100;

  /** The words `text` asked for, squashed, or invalid_params. */
  function wantedText(text) {
    const want = typeof text === 'string' ? core().collapse(text).toLowerCase() : '';
    if (!want || want.length > 200) fail('invalid_params', 'text must be a short non-empty string');
    return want;
  }

  /**
   * Whether the page shows `want` (wantedText) now: in its rendered text, or as a rendered
   * element's label (an icon button's aria-label, a field's placeholder: the snapshot names
   * elements by them, and the agent waits for what it reads).
   */
  function textShown(want) {
    return pageDocs().some((doc) => shownIn(doc, want));
  }

  /**
   * This page's document and the documents of its shown frames that are part of it (about:blank
   * and srcdoc frames, four deep as the snapshot reads them: Etherpad's text is in a frame in a
   * frame). A hidden frame's text is not shown text (its innerText would be all of it).
   */
  function pageDocs() {
    const docs = [document];
    const depth = [0];
    for (let i = 0; i < docs.length && docs.length < 16; i++) {
      if (depth[i] >= 4) continue;
      for (const f of docs[i].querySelectorAll('iframe, frame')) {
        const doc = inheritedDoc(f);
        if (!doc || docs.includes(doc) || docs.length >= 16 || !isRendered(f)) continue;
        docs.push(doc);
        depth.push(depth[i] + 1);
      }
    }
    return docs;
  }

  function shownIn(doc, want) {
    const root = doc.body || doc.documentElement;
    if (!root) return false;
    if (core().collapse(root.innerText || '').toLowerCase().includes(want)) return true;
    let named = [];
    try {
      named = root.querySelectorAll(['aria-label', 'title', 'placeholder', 'alt', 'value']
        .map((a) => `[${a}*=${JSON.stringify(want)} i]`).join(','));
    } catch (_) {
      named = [];                              // words no selector can hold: the text decides
    }
    for (let i = 0; i < named.length && i < 50; i++) {
      if (isRendered(named[i], named[i].getBoundingClientRect())) return true;
    }
    return false;
  }

  /**
   * textShown for an op's `text`: false for words no wait could ask for, and on a page that now
   * shows a password field (the wait itself says why: it is refused there).
   */
  function textShownFor(text) {
    try {
      return !showsPassword() && textShown(wantedText(text));
    } catch (_) {
      return false;
    }
  }

  /**
   * Resolves {found:true} once the page shows `text` (case-insensitive, spaces collapsed, in its
   * rendered text: what innerText gives, so not hidden text and not a script's; or in a rendered
   * element's label: aria-label, title, placeholder, alt, value), or {found:false}
   * at the bound. Checked at once, then whenever the page changes — at most a fifth of the time
   * (a check on a big page costs milliseconds) — and on a slow timer for a change that check
   * skipped. `timeoutMs` (at most the bound) ends it sooner. The sign-in floor holds for the
   * whole wait: a password field that appears ends it, refused (refused_floor), as at its start.
   */
  function opWaitText(args) {
    const want = wantedText(args.text);
    const shows = () => {
      if (showsPassword()) refuseSignIn();
      return textShown(want);
    };
    if (shows()) return { found: true };
    return new Promise((resolve, reject) => {
      let cost = 0;
      let last = -Infinity;
      let done = false;
      const finish = (found, refusal) => {
        if (done) return;
        done = true;
        mo.disconnect();
        clearTimeout(bound);
        clearInterval(poll);
        if (refusal) reject(refusal);
        else resolve({ found });
      };
      const check = (force) => {
        const start = performance.now();
        if (done || (!force && start - last < cost * 4)) return;
        last = start;
        let found = false;
        try {
          found = shows();
        } catch (e) {
          finish(false, e);
          return;
        }
        cost = performance.now() - start;
        if (found) finish(true);
      };
      const mo = new MutationObserver(() => check(false));
      const watched = new WeakSet();
      const watch = () => {
        for (const doc of pageDocs()) {
          if (watched.has(doc)) continue;
          watched.add(doc);
          mo.observe(doc, { subtree: true, childList: true, characterData: true, attributes: true });
        }
      };
      watch();
      // A frame of the page that loads later is watched from the next check on.
      const poll = setInterval(() => { if (!done) watch(); check(true); }, WAIT_TEXT_POLL_MS);
      const limit = Number.isSafeInteger(args.timeoutMs) ? Math.min(Math.max(args.timeoutMs, 0), WAIT_TEXT_MAX_MS) : WAIT_TEXT_MAX_MS;
      const bound = setTimeout(() => finish(false), limit);
    });
  }

  Object.assign(P, { opWaitText, textShownFor });
})();
