// SPDX-License-Identifier: GPL-3.0-or-later
// What a held act is: a click that would send, delete or write (outward.js judges the control) or a
// form submission that leaves unasked is not made; the person sees a card of what it would send and
// approves exactly that (the canonical string). page-act.js decides when to hold; this says what.

(function () {
  'use strict';

  if (globalThis.__chaperonePage) return;   // installed already: the first install wins
  const P = globalThis.ChaperonePageParts;
  if (!P) return;                           // page-common.js did not run: nothing installs

  const { fail, core, Desc, resolve, isDisabled, isRendered, now, state, clickableByLook } = P;

  // ---- holds: a click that would send, delete or write waits for the person ----------------

  const HOLD_FIELDS_MAX = 30;
  const HOLD_NAME_MAX = 80;
  const HOLD_VALUE_MAX = 200;
  const HOLD_CONTROL_MAX = 160;
  const CANONICAL_MAX = 16384;

  const outwardLib = () => {
    const O = globalThis.ChaperoneOutward;
    if (!O || typeof O.classify !== 'function') fail('internal', 'outward.js is not loaded in this page');
    return O;
  };
  const squash = (s) => String(s ?? '').replace(/\s+/g, ' ').trim();
  const cut = (s, max) => (s.length > max ? s.slice(0, max) : s);

  function formOf(el) {
    if (!el) return null;
    if (el.form instanceof HTMLFormElement) return el.form;
    const btn = el.closest ? el.closest('button, input') : null;
    if (btn && btn.form instanceof HTMLFormElement) return btn.form;
    return el.closest ? el.closest('form') : null;
  }

  const SCOPE_UP = 8;

  /**
   * Where the fields a formless control acts on are: the nearest ancestor (≤ 8 levels, never the
   * whole page) that holds a field — an editor's toolbar beside its title and text, a compose
   * window's Send beside To and Subject. Its fields go on the card and into the canonical string,
   * so the person sees what is saved or sent, and two open editors are never mistaken.
   */
  function fieldScopeOf(el) {
    let cur = el && el.parentElement;
    for (let i = 0; cur && i < SCOPE_UP; i++, cur = cur.parentElement) {
      if (cur.localName === 'body' || cur.localName === 'html') break;
      if (cur.querySelector('input, textarea, select')) return cur;
    }
    return null;
  }

  /** What the form would send, as the hold card shows it: ≤ 30 fields, secrets by length only. */
  function holdFields(form) {
    const C = core();
    const out = [];
    if (!form) return out;
    const all = form instanceof HTMLFormElement ? Array.from(form.elements || [])
      : Array.from(form.querySelectorAll('input, textarea, select'));
    for (const f of all) {
      if (out.length >= HOLD_FIELDS_MAX) break;
      const tag = f.localName;
      if (tag !== 'input' && tag !== 'textarea' && tag !== 'select') continue;
      const type = (f.getAttribute('type') || '').trim().toLowerCase();
      if (tag === 'input' && ['submit', 'button', 'reset', 'image'].includes(type)) continue;
      if ((type === 'checkbox' || type === 'radio') && !f.checked) continue;
      // The name the agent's snapshot gives the field (aria-labelledby first: Vuetify gives a
      // field two labels, its floating one and the outline's, both `for` it).
      const desc = new Desc(f);
      const name = cut(squash(C.nameOf(desc)) || squash(f.getAttribute('name')), HOLD_NAME_MAX);
      const value = type === 'file' ? Array.from(f.files || [], (x) => x.name).join(', ') : String(f.value ?? '');
      if (C.isCredentialField(desc)) out.push({ name, secret: true, length: value.length });
      else out.push({ name, value: cut(value, HOLD_VALUE_MAX) });
    }
    return out;
  }

  function methodAttr(v) {
    const m = String(v ?? '').trim().toLowerCase();
    return m === 'post' || m === 'dialog' ? m : 'get';
  }

  /** A form submission's method and absolute action (the submitter's overrides first). */
  function submission(form, submitter) {
    const fm = submitter && submitter.getAttribute('formmethod');
    const method = methodAttr(fm !== null && fm !== undefined ? fm : form.getAttribute('method'));
    const fa = submitter ? squash(submitter.getAttribute('formaction')) : '';
    const raw = fa || squash(form.getAttribute('action'));
    let action = document.URL;
    if (raw) {
      try {
        action = new URL(raw, document.baseURI).href;
      } catch {
        action = raw;
      }
    }
    return { method, action };
  }

  function sameOrigin(url) {
    try {
      const o = new URL(url).origin;
      return o !== 'null' && o === location.origin;
    } catch {
      return false;
    }
  }

  function pageUrl() {
    const u = location.href;
    const hash = u.indexOf('#');
    return hash >= 0 ? u.slice(0, hash) : u;
  }

  /**
   * The held answer: the card's fields and the canonical string the approval is about. `source`,
   * when the act has one: the element it starts from (the dragged one of a drop, the field a key
   * is pressed in), named apart from the control so that the app words the card in its language.
   */
  function holdOf(cls, desc, form) {
    const control = cut(squash(desc.label || desc.text || desc.value || desc.title || desc.name), HOLD_CONTROL_MAX);
    const source = desc.source === undefined ? null : cut(squash(desc.source), HOLD_CONTROL_MAX);
    const fields = holdFields(form);
    const canonical = cut(JSON.stringify({
      url: pageUrl(), kind: cls.kind, control, ...(source === null ? {} : { source }),
      formMethod: desc.formMethod || '', formAction: desc.formAction || '', fields,
    }), CANONICAL_MAX);
    const held = { kind: cls.kind, reason: cls.reason, word: cls.word ?? null, control, site: location.origin, fields, canonical };
    if (source !== null) held.source = source;
    return held;
  }

  /**
   * The hold the target of a click would get (kind 'none': nothing to hold). `form` is its form,
   * `scope` the fields around a formless control (what the card shows). `dropZone`: the target
   * of a drag (page-pointer.js), judged as the command it is too (a "Trash" a card goes onto).
   */
  function classifyTarget(el, dropZone = false) {
    const O = outwardLib();
    // An element clickable only by its look (page-common.js) is judged as the command it is to a
    // person: itself, not a container the markup makes clickable, and by its leading words as a
    // button is, never waved through as prose ("Send the weekly report to all our clients").
    const desc = dropZone || state.clickable.has(el) ? { ...O.describe(el, { self: true }), role: 'button' } : O.describe(el);
    const cls = O.classify(desc);
    const form = formOf(el);
    return { desc, cls, form, scope: form || fieldScopeOf(el) };
  }

  // The words that name a field as a message to others: a chat's or a messenger's box (Etherpad's
  // "Write your message here", "Message #general", "Type a message", "Écrire un message",
  // "输入消息"), where Enter sends with no Send button beside it to judge.
  const MESSAGE_FIELD = /\b(?:messages?|chat|nachrichten?|mensajes?|mensage(?:m|ns))\b|消息|讯息|訊息/i;

  // A search box is named by what it searches ("Search messages"): Enter there finds.
  const SEARCH_FIELD = /\b(?:search|find|filter|rechercher|chercher|suchen|buscar)\b|搜索|查找|搜尋/i;

  /** Whether `el` is a text field or editor named as a message to others (MESSAGE_FIELD). */
  function messageField(el) {
    const editable = el.isContentEditable || el.localName === 'textarea' || (el.localName === 'input' && el.type === 'text');
    if (!editable) return false;
    const { role, name } = P.roleAndName(el);
    return role !== 'searchbox' && MESSAGE_FIELD.test(name) && !SEARCH_FIELD.test(name);
  }

  /** Whether a write only opens an editor (outward.js): under a plan it spends no step. */
  const opensEditor = (desc) => outwardLib().opensEditor(desc);

  /** The hold a form submission the classifier missed gets (reason 'form-submit'). */
  function submitHold(form, submitter) {
    const O = outwardLib();
    const desc = submitter ? O.describe(submitter) : O.describe(form);
    const { method, action } = submission(form, submitter);
    desc.formMethod = method;
    desc.formAction = action;
    return holdOf({ kind: 'outward', reason: 'form-submit', word: null }, desc, form);
  }

  /** The hold for a form navigation seen by the navigate event (form.submit(): no submit event). */
  function navigateHold(form, formData, dest) {
    const C = core();
    if (form) {
      const h = submitHold(form, null);
      return h;
    }
    const fields = [];
    if (formData) {
      for (const [k, v] of formData.entries()) {
        if (fields.length >= HOLD_FIELDS_MAX) break;
        const name = cut(String(k), HOLD_NAME_MAX);
        const value = typeof v === 'string' ? v : (v && v.name) || '';
        if (C.credentialName(String(k))) fields.push({ name, secret: true, length: value.length });
        else fields.push({ name, value: cut(value, HOLD_VALUE_MAX) });
      }
    }
    const canonical = cut(JSON.stringify({ url: pageUrl(), kind: 'outward', control: '',
      formMethod: formData ? 'post' : 'get', formAction: dest, fields }), CANONICAL_MAX);
    return { kind: 'outward', reason: 'form-submit', word: null, control: '', site: location.origin, fields, canonical };
  }

  /** True when a submission must not go without the person: POST/dialog, or to another origin. */
  function mustHoldSubmit(form, submitter) {
    const { method, action } = submission(form, submitter);
    return method === 'post' || method === 'dialog' || !sameOrigin(action);
  }

  function controlFor(el) {
    return el.closest ? el.closest('button, input') || el : el;
  }

  // ---- approved holds: find the control the person approved ----------------------------------

  // What the markup says a click can land on; the page is read up to HELD_SCAN of them (a
  // re-rendered toolbar is near the top of any page that has one). Then what only its look says
  // can be clicked (heldCandidates).
  const HELD_CANDIDATES = 'button, input[type=submit], input[type=button], input[type=image], '
    + 'a[href], summary, [role=button], [role=link], [role=menuitem], [role=tab], [onclick]';
  const HELD_SCAN = 5000;

  /**
   * The elements an approved control may now be, in page order: controls by their markup, then
   * elements clickable by their look (a React list's re-rendered row), each asked at most once.
   * `want` (squashed, or empty): only those that may be named so. In the look pass the style is
   * asked first: a text test reads a container's whole text, a style is ~1 µs.
   */
  function* heldCandidates(want) {
    const named = (el) => !want || mayBeNamed(el, want);
    const marked = document.querySelectorAll(HELD_CANDIDATES);
    for (let i = 0; i < marked.length && i < HELD_SCAN; i++) if (named(marked[i])) yield marked[i];
    const walk = {};
    const all = document.querySelectorAll('*');
    for (let i = 0; i < all.length && i < HELD_SCAN * 2; i++) {
      const el = all[i];
      if (el.hasAttributes() && !el.matches(HELD_CANDIDATES) && clickableByLook(el, walk) && named(el)) yield el;
    }
  }

  /** The canonical strings a click on `el` would be held with (as a click, or as its form's submit). */
  function canonicalsOf(el) {
    const { desc, cls, form, scope } = classifyTarget(el);
    const out = [holdOf(cls, desc, scope).canonical];
    if (form) out.push(submitHold(form, desc.isSubmit ? controlFor(el) : null).canonical);
    return out;
  }

  /** A cheap first look: could `el`'s name be `want`? (Never false for a control named so.) */
  function mayBeNamed(el, want) {
    if (el.hasAttribute('aria-labelledby') || el.querySelector('img[alt], [aria-label], [title]')) return true;
    const names = [el.getAttribute('aria-label'), el.getAttribute('title'), el.getAttribute('value'),
      el.getAttribute('name'), el.getAttribute('alt'), (el.textContent || '').slice(0, 4000)];
    for (const l of el.labels || []) names.push(l.textContent || '');
    return names.some((n) => n && squash(n).includes(want));
  }

  /**
   * The element an approved hold's click goes to: the node of its capture when it still shows
   * exactly what was approved; else the one control of the page that does — frameworks
   * (TiddlyWiki, React lists) re-render a toolbar and replace its nodes while the person reads
   * the card. None, or two alike, is null: the act as approved is not there (the hold changed).
   */
  function resolveHeld(args) {
    let hit = null;
    try {
      hit = resolve(args);
    } catch (e) {
      if (!e || e.code !== 'stale_node') throw e;
    }
    if (hit && canonicalsOf(hit.el).includes(args.expect)) return hit;
    let want = '';
    try {
      want = squash(JSON.parse(args.expect).control);
    } catch {
      want = '';                               // cut at CANONICAL_MAX: every candidate is judged
    }
    let found = null;
    for (const el of heldCandidates(want)) {
      if (hit && el === hit.el) continue;
      if (!canonicalsOf(el).includes(args.expect)) continue;
      if (found) return null;                 // two controls alike: which one was approved?
      found = el;
    }
    return found ? { el: found, ref: hit ? hit.ref : String(args.ref ?? ''), cap: null } : null;
  }

  const STILL_MAX_MS = 3000;   // how long an approved click waits for the page to stop moving
  const STILL_STEP_MS = 50;

  /**
   * Waits (≤ 3 s) until `el` stands still: the page's finite animations ended and its box has
   * not moved for two steps. TiddlyWiki slides its story river for ~0.4 s (longer on a busy
   * machine) when a tiddler opens or saves; a click checked mid-slide finds another tiddler's
   * button at the centre of this one and is refused as covered. `quick` (the agent's own
   * clicks): no wait at all unless a finite animation is running. Timers, not animation frames:
   * they still run (at 1 Hz) in a background tab.
   */
  async function untilStill(el, { quick = false } = {}) {
    const end = now() + STILL_MAX_MS;
    const sleep = () => new Promise((r) => setTimeout(r, STILL_STEP_MS));
    const box = () => {
      const r = el.getBoundingClientRect();
      return `${r.left},${r.top},${r.width},${r.height},${scrollX},${scrollY}`;
    };
    // Only what can move or cover `el`: an animation of an ancestor, or of an element over its
    // box. A ticker or a progress bar elsewhere on the page never slows a click down.
    const near = (target) => {
      if (!target || target.nodeType !== 1) return false;
      if (target.contains(el)) return true;
      const a = target.getBoundingClientRect();
      const b = el.getBoundingClientRect();
      return a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
    };
    const moving = () => (typeof document.getAnimations === 'function' ? document.getAnimations() : [])
      .some((a) => {
        if (a.playState !== 'running') return false;
        const t = a.effect && a.effect.getComputedTiming ? a.effect.getComputedTiming() : null;
        // A spinner loops for ever: never waited for.
        return t && Number.isFinite(t.endTime) && near(a.effect.target);
      });
    if (quick && !moving()) return;        // nothing sliding: no wait at all
    let last = box();
    let still = 0;
    while (now() < end) {
      await sleep();
      if (!el.isConnected) return;
      const next = box();
      still = next === last && !moving() ? still + 1 : 0;
      if (still >= 2) return;
      last = next;
    }
  }

  /** Whether some connected control other than `except` would be held with `canonical`. */
  function shownElsewhere(canonical, except) {
    let want = '';
    try {
      want = squash(JSON.parse(canonical).control);
    } catch {
      want = '';
    }
    for (const el of heldCandidates(want)) {
      if (el === except) continue;
      if (canonicalsOf(el).includes(canonical)) return true;
    }
    return false;
  }

  // ---- did a write get saved? ----------------------------------------------------------------

  // What a page adds to say something happened: a toast, a snackbar, a status line.
  const NOTICE = '[role=status], [role=alert], [aria-live=polite], [aria-live=assertive], '
    + '[class*=toast], [class*=snackbar], [class*=notification], [class*=notice], [class*=flash]';
  // What a page adds when something was created: an item of a list, a row of a table or grid.
  // Its items are records, whose controls the site memory never learns (page-read.js).
  const LIST_ITEM = 'li, [role=listitem], [role=row], [role=option], [role=article], tr, article';
  const WRITE_ADDED_MAX = 500;    // added elements looked at; a page that adds more is saying something

  /**
   * Watches what a write click does to the page for signs that it was saved: a notice appeared, the
   * control went away or got disabled, the URL changed, or a list got a new item. `verdict()` says
   * `{verified: true, by}` with the first sign seen, else `{verified: false}` (could not confirm).
   * A sign is evidence, not proof: a page may toast an error; the agent reads the page to be sure.
   */
  function watchWrite(el) {
    const url = location.href;
    const { desc, cls, scope } = classifyTarget(el);
    const canonical = holdOf(cls, desc, scope).canonical;
    const seen = { notice: false, item: false };
    let looked = 0;
    const look = (node) => {
      if (!(node instanceof Element) || looked >= WRITE_ADDED_MAX) return;
      looked += 1;
      if (!seen.notice && (node.matches(NOTICE) || node.querySelector(NOTICE)
        || node.closest('[role=status], [role=alert], [aria-live=polite], [aria-live=assertive]'))) {
        seen.notice = true;
      }
      if (!seen.item && (node.matches(LIST_ITEM) || node.querySelector(LIST_ITEM))) seen.item = true;
    };
    const handle = (records) => {
      for (const r of records) {
        if (r.type === 'childList') for (const n of r.addedNodes) look(n.nodeType === 3 ? n.parentElement : n);
        else look(r.target.parentElement);
      }
    };
    const observer = new MutationObserver(handle);
    observer.observe(document.documentElement, { childList: true, subtree: true, characterData: true });
    return {
      verdict() {
        if (seen.notice) return { verified: true, by: 'notice' };
        if (location.href !== url) return { verified: true, by: 'url' };
        if (el.isConnected && isDisabled(el)) return { verified: true, by: 'control-disabled' };
        if (!el.isConnected && !shownElsewhere(canonical, el)) return { verified: true, by: 'control-gone' };
        if (el.isConnected && !isRendered(el, el.getBoundingClientRect())) {
          return { verified: true, by: 'control-gone' };
        }
        if (seen.item) return { verified: true, by: 'list-item' };
        return { verified: false };
      },
      /** Stops watching (what was seen so far stays for verdict()). */
      stop() {
        handle(observer.takeRecords());
        observer.disconnect();
      },
    };
  }

  Object.assign(P, { classifyTarget, holdOf, submitHold, navigateHold, mustHoldSubmit, sameOrigin,
    submission, controlFor, resolveHeld, untilStill, watchWrite, opensEditor, messageField, LIST_ITEM });
})();
