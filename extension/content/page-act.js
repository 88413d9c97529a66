// SPDX-License-Identifier: GPL-3.0-or-later
// The page agent's acting: the `action` op (click, dblclick, focus, scroll, setValue, hover, press,
// type, drag) on a node of a capture (press and type also on the focused element), in this
// document or a frame that is part of it (page-common.js inheritedDoc); refused when a person could
// not do the same (covered, disabled, behind a modal), held when it would send, delete or write
// (page-holds.js) — a key that would submit or send is held as the click on its control would be,
// a drag as a click on where it drops (page-pointer.js) — and answered once the page settled
// (page-settle.js) with what changed. The agent tool browser_act ends here.

(function () {
  'use strict';

  if (globalThis.__chaperonePage) return;   // installed already: the first install wins
  const P = globalThis.ChaperonePageParts;
  if (!P) return;                           // page-common.js did not run: nothing installs

  const { PageError, fail, core, owns, state, Desc, composedContains, frameChain, deepActiveElement, isRendered,
    openModals, isDisabled, resolve, planStep, now, SETTLE_QUIET_MS, SETTLE_QUIET_LIGHT_MS,
    watchMutations, watchNetwork, watchNavigation, settle, classifyTarget, holdOf, submitHold,
    navigateHold, mustHoldSubmit, sameOrigin, submission, controlFor, parseKey, focusLikePerson,
    fill, typeText, pressKey, defaultButton, implicitlySubmits, isEditable, documentEditor, activeIn, resolveHeld,
    watchWrite, opensEditor, messageField, untilStill, scan, shownPassword, refuseSignIn, rememberCapture, MAX_SCAN,
    roleAndName, elementAt, isFocusable, focusTargetOf } = P;

  const ACTIONS = ['click', 'dblclick', 'focus', 'scroll', 'setValue', 'hover', 'press', 'type', 'drag'];
  // A double-click is a click as far as holds, plans, approvals and settling go: it sets off what
  // the control does, and whatever opens on the second press.
  const CLICKS = new Set(['click', 'dblclick']);
  // A drag is judged by where it drops (page-pointer.js): a click on the target, as far as holds,
  // plans, approvals and settling go ("Order 4411" onto "Trash" deletes it).
  const JUDGED = new Set([...CLICKS, 'drag']);

  // ---- checks and acts -----------------------------------------------------------------------

  const collapse = (s) => String(s ?? '').replace(/\s+/g, ' ').trim().toLowerCase();

  /**
   * A batch step named its element by role and name, and the worker sends the element it found
   * for an earlier step of the same batch (capabilities/batch.js): it must still be rendered and
   * have that role and that name, or the worker looks for it again. Checked before anything is
   * done, so a stale_node here never follows a half-done act.
   */
  function stillTheTarget(el, want) {
    const { role, name } = roleAndName(el);
    if (role !== want.role || collapse(name) !== collapse(want.name) || !isRendered(el)) {
      fail('stale_node', 'that element is no longer the one the step names');
    }
  }

  /**
   * op find: a batch step's {role, name} → the one rendered element of this document (and the
   * frames that are part of it) with that role and accessible name, as a ref in the batch's
   * capture: {ref}, or {count} when none or several match. What the worker used to look for in a
   * whole browser.context capture, without building and sending the page: on a page of thousands
   * of nodes that was most of the step. The capture holds only what was found, and a ref without
   * a capture id still means the agent's own last capture.
   */
  function opFind(args) {
    if (typeof args.captureId !== 'string' || !args.captureId || typeof args.role !== 'string' ||
        typeof args.name !== 'string' || !args.name) {
      fail('invalid_params', 'find takes a captureId, a role and a name');
    }
    const limit = Number.isSafeInteger(args.maxScan) ? Math.min(Math.max(args.maxScan, 1), MAX_SCAN) : MAX_SCAN;
    const found = scan(limit);
    // As a capture's: a shown password field anywhere refuses the page, before anything is read.
    if (found.fields.some(shownPassword)) refuseSignIn();
    P.knownRoots = found.truncated ? null : found.roots;
    const want = collapse(args.name);
    const C = core();
    const hits = found.actionable.filter((el) => {
      const d = new Desc(el);
      if (C.roleOf(d) !== args.role) return false;           // the name only for the role's own
      return collapse(roleAndName(el, d).name) === want && isRendered(el);
    });
    if (hits.length !== 1) return { count: hits.length };
    let cap = state.captures.get(args.captureId);
    if (!cap) {
      cap = { captureId: args.captureId, refs: new Map(), entries: [], nodes: [], text: '', url: location.href };
      rememberCapture(cap, false);
    }
    return { ref: refFor(cap, hits[0]) };
  }

  /** A short, non-secret description of an element for refusal messages. */
  function describe(el) {
    if (!el) return 'nothing';
    if (owns(el)) return 'Chaperone\u2019s own banner';
    const C = core();
    let s = el.localName;
    const id = el.getAttribute('id');
    if (id) s += `#${C.clip(id, 40)}`;
    const cls = (el.getAttribute('class') || '').trim().split(/\s+/)[0];
    if (cls) s += `.${C.clip(cls, 40)}`;
    const name = C.clip(C.nameOf(new Desc(el)), 60);
    return name ? `${s} ("${name}")` : s;
  }

  /** Each document from `el`'s up to this one: an open modal in any of them must hold `el`. */
  function checkModal(el) {
    for (const doc of [el.ownerDocument, ...frameChain(el).map((f) => f.ownerDocument)]) {
      const modals = openModals(doc);
      if (modals.length && !modals.some((m) => composedContains(m, el))) {
        fail('target_denied', `an open modal dialog (${describe(modals[modals.length - 1])}) is in front of this node; act inside the dialog or close it first`);
      }
    }
  }

  // A control the page turned off for a moment (MailDev's Refresh while it refreshes, a Save
  // while the last save is under way) is waited for as a person waits for it: until the page
  // turns it on again, at most ENABLE_WAIT_MS, woken by the change itself (an observer of the
  // disabled attributes, not a timer: a background tab's timers come up to a second late). One
  // that stays disabled is refused as before (checkUsable).
  const ENABLE_WAIT_MS = 1500;

  function untilEnabled(el) {
    if (!isDisabled(el) || el.closest('[inert]')) return Promise.resolve();
    return new Promise((resolve) => {
      let timer = null;
      const mo = new MutationObserver(() => {
        if (!el.isConnected || !isDisabled(el)) done();
      });
      const done = () => {
        mo.disconnect();
        clearTimeout(timer);
        resolve();
      };
      // Its own tree: a disabled <fieldset> around it is there too.
      mo.observe(el.getRootNode(), { subtree: true, attributes: true, attributeFilter: ['disabled', 'aria-disabled'] });
      timer = setTimeout(done, ENABLE_WAIT_MS);
    });
  }

  // A node that something covers for a moment — an overlay fading out (Node-RED's header shade
  // while its node editor closes), a menu closing, a toast — is waited for as a person waits:
  // until nothing covers it, at most COVER_WAIT_MS, checked again at each change of the page (an
  // observer, which runs in a background tab too) and every COVER_STEP_MS (a fade changes a
  // style the observer may not see: a CSS transition). Still covered: refused as before.
  const COVER_WAIT_MS = 1000;
  const COVER_STEP_MS = 50;

  async function untilUncovered(el) {
    const covered = () => {
      try {
        checkCover(el);
        return false;
      } catch (e) {
        return e instanceof PageError && / covered by /.test(e.message);
      }
    };
    if (!el.isConnected) return;
    scrollTo(el, 'center');
    if (!covered()) return;
    const end = now() + COVER_WAIT_MS;
    const mo = new MutationObserver(() => wake());
    let wake = () => {};
    mo.observe(document, { subtree: true, childList: true, attributes: true });
    try {
      while (now() < end && el.isConnected) {
        await new Promise((resolve) => {
          const timer = setTimeout(() => resolve(), COVER_STEP_MS);
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        if (!covered()) return;
      }
    } finally {
      mo.disconnect();
    }
  }

  function checkUsable(el) {
    if (el.closest('[inert]')) fail('target_denied', 'the node is inert');
    if (isDisabled(el)) fail('target_denied', 'the node is disabled');
  }

  const OUTSIDE = 'the node is outside the viewport even after scrolling';

  /**
   * Refuses a click a person could not make: the node must be what is at its centre, and when it
   * sits in a frame that is part of the page, that frame must be what is at the same point of
   * the page around it. → the point, in the node's own document.
   */
  function checkCover(el) {
    const doc = el.ownerDocument;
    const win = doc.defaultView;
    const r = el.getBoundingClientRect();
    if (!isRendered(el, r)) fail('target_denied', 'the node is not visible');
    const x = Math.min(Math.max(r.left + r.width / 2, 0), win.innerWidth - 1);
    const y = Math.min(Math.max(r.top + r.height / 2, 0), win.innerHeight - 1);
    if (r.right <= 0 || r.bottom <= 0 || r.left >= win.innerWidth || r.top >= win.innerHeight) fail('target_denied', OUTSIDE);
    const hit = elementAt(doc, x, y);
    let reached = !!hit && (hit === el || composedContains(el, hit));
    // A styled checkbox is often hidden under its own label: clicking the label is the same act.
    const label = !reached && hit && hit.closest ? hit.closest('label') : null;
    if (label && label.control === el) reached = true;
    if (!reached) fail('target_denied', `the node is covered by ${describe(hit)} at its centre`);
    let px = x;
    let py = y;
    for (const fe of frameChain(el)) {
      const fr = fe.getBoundingClientRect();
      const cs = fe.ownerDocument.defaultView.getComputedStyle(fe);
      px += fr.left + fe.clientLeft + (parseFloat(cs.paddingLeft) || 0);
      py += fr.top + fe.clientTop + (parseFloat(cs.paddingTop) || 0);
      const pw = fe.ownerDocument.defaultView;
      if (px < 0 || py < 0 || px >= pw.innerWidth || py >= pw.innerHeight) fail('target_denied', OUTSIDE);
      const outer = elementAt(fe.ownerDocument, px, py);
      if (outer !== fe) fail('target_denied', `the node's frame is covered by ${describe(outer)} there`);
    }
    return { x, y, hit };
  }

  /** Scrolls the node into view, and the frames it sits in, outermost first. */
  function scrollTo(el, block) {
    for (const fe of frameChain(el).reverse()) fe.scrollIntoView({ block: 'nearest', inline: 'nearest', behavior: 'instant' });
    el.scrollIntoView({ block, inline: block === 'center' ? 'center' : 'nearest', behavior: 'instant' });
  }

  // What may sit inside an element clickable by its look and answer a click itself.
  const INNER_CONTROL = 'a[href],button,input,select,textarea,summary,label,[onclick],[contenteditable],[role=button],'
    + '[role=link],[role=menuitem],[role=tab],[role=option],[role=checkbox],[role=radio],[role=switch]';

  /** Whether `hit` is in a drawing (svg, canvas) in `el`, no control, nothing acting between. */
  function drawnIn(el, hit) {
    const drawing = hit.closest('svg, canvas');
    if (el.matches(INNER_CONTROL) || !drawing || !el.contains(drawing)) return false;
    for (let n = hit; n && n !== el; n = n.parentElement) {
      if (n.hasAttribute('tabindex') || n.matches(INNER_CONTROL) || state.clickable.has(n)) return false;
    }
    return true;
  }

  // What a person's mouse button sends at (x, y) of `view` (`extra`: buttons, detail, …), and
  // the same as the pointer event that goes before it: one place for the click, hover and drag.
  const mouseInit = (view, x, y, extra) => ({ bubbles: true, cancelable: true, composed: true, view, clientX: x,
    clientY: y, button: 0, ...extra });
  const pointerInit = (init) => ({ ...init, pointerId: 1, pointerType: 'mouse', isPrimary: true });

  /**
   * A click; with `again` a double-click, whose second press and dblclick go only while again()
   * says so (the act's submission not held, the node still there and still judged neutral).
   * → whether the second press went.
   */
  function doClick(el, again = null) {
    checkUsable(el);
    checkModal(el);
    scrollTo(el, 'center');
    const { x, y, hit } = checkCover(el);
    const view = el.ownerDocument.defaultView;
    const base = mouseInit(view, x, y);
    const ptr = pointerInit(base);
    // An element clickable by its look, or a frame around a drawing, is pressed where a person's
    // click lands, the shape or text at its centre, whose own handlers hear it first (Node-RED's
    // are on a node's rect, its canvas's on the drawing in the focusable frame) — unless a control
    // of its own is there, which the hold did not judge. A control's events go to the control.
    const inner = hit && hit !== el && el.contains(hit) ? hit.closest(INNER_CONTROL) : null;
    const lands = hit && hit !== el && el.contains(hit) && !(inner && el.contains(inner));
    const target = lands && (state.clickable.has(el) || drawnIn(el, hit)) ? hit : el;
    const press = (node, detail) => {
      node.dispatchEvent(new PointerEvent('pointerdown', { ...ptr, buttons: 1 }));
      // The press moves the focus as a person's does, unless the page cancelled it (a menu that
      // keeps the focus in its field): to what takes it, a canvas around a diagram's node
      // included (Node-RED's keys then act on the node: Enter opens it), else away from the
      // field that had it.
      if (node.dispatchEvent(new MouseEvent('mousedown', { ...base, buttons: 1, detail }))) {
        const to = focusTargetOf(node);
        const active = node.ownerDocument.activeElement;
        if (to) focusLikePerson(to);
        else if (active && active !== node.ownerDocument.body && typeof active.blur === 'function') active.blur();
      }
      node.dispatchEvent(new PointerEvent('pointerup', { ...ptr, buttons: 0 }));
      node.dispatchEvent(new MouseEvent('mouseup', { ...base, buttons: 0, detail }));
      // click() runs the default action too: follow a link, toggle a checkbox, submit. A
      // drawing's shape has no click(): the event alone, as the browser sends it.
      if (typeof node.click === 'function') node.click();
      else node.dispatchEvent(new MouseEvent('click', { ...base, detail }));
    };
    press(target, 1);
    // The second press goes where the first did, and only to the same node still judged as it
    // was: never to what the first click put there, or turned it into ("Review order" → "Place
    // order"), which nobody judged.
    if (!again || !target.isConnected || !el.contains(target) || !again()) return false;
    const innerNow = target !== el ? target.closest(INNER_CONTROL) : null;
    if (innerNow && el.contains(innerNow)) return false;
    press(target, 2);
    target.dispatchEvent(new MouseEvent('dblclick', { ...base, detail: 2 }));
    return true;
  }

  function doFocus(el) {
    checkUsable(el);
    checkModal(el);
    if (!focusLikePerson(el) || !activeIn(el)) fail('target_denied', 'the node cannot take focus');
  }

  function doSetValue(el, value) {
    const tag = el.localName;
    const editable = tag === 'input' || tag === 'textarea' || tag === 'select' || el.isContentEditable;
    if (!editable) fail('target_denied', 'the node is not an editable field');
    checkUsable(el);
    checkModal(el);
    if (el.readOnly === true) fail('target_denied', 'the field is read-only');
    fill(el, value);
  }

  // ---- op: action ----------------------------------------------------------------------------

  function allowCovers(allow) {
    if (!allow || typeof allow !== 'object' || !Array.isArray(allow.sites)) return false;
    const host = location.hostname.toLowerCase();
    return allow.sites.some((s) => {
      if (typeof s !== 'string' || !s) return false;
      const site = s.toLowerCase();
      return host === site || host.endsWith('.' + site);
    });
  }

  /**
   * The ref `el` has in the capture, added to it when it had none (a held key press names it, a
   * batch's find keeps it): the ref another capture gave it when no capture has another element
   * under that ref, else a new one.
   */
  function refFor(cap, el) {
    const known = state.refOf.get(el);
    if (known) {
      const held = cap.refs.get(known);
      if (held && held.deref() === el) return known;
      // Not when another capture gives that ref to another element (the page's capture reused
      // it for a new element while this one was out of the page): one ref, one element.
      const elsewhere = [...state.captures.values()].some((c) => {
        const other = c.refs.get(known)?.deref();
        return other !== undefined && other !== el;
      });
      if (!held && !elsewhere) {
        cap.refs.set(known, new WeakRef(el));
        return known;
      }
    }
    let r;
    do r = `e${++state.nextRef}`; while (cap.refs.has(r));
    cap.refs.set(r, new WeakRef(el));
    state.refOf.set(el, r);
    return r;
  }

  const formAround = (el) => (el.form && el.form.localName === 'form' ? el.form : (el.closest ? el.closest('form') : null));
  const COMMANDS = 'button, [role=button], input[type=submit], input[type=button], input[type=image]';

  // An editor's formatting bar ("Create wikitext link", "Apply bold") is not where its Save is.
  const TOOLBAR = '[role=toolbar], [class*="toolbar" i]';
  // The write words a send-or-save key (Control+Enter) can stand for: a save or a confirm — never
  // the editor's own formatting buttons ("Apply bold"), which sit nearer than the Save button.
  const COMMIT_WORDS = new Set(['save', 'save changes', 'update', 'create', 'confirm', 'done', 'ok',
    'submit', 'enregistrer', 'sauvegarder', 'mettre à jour', 'créer', 'valider', 'confirmer', '保存',
    '储存', '儲存', '更新', '确认', 'speichern', 'aktualisieren', 'guardar', 'actualizar', 'crear']);

  /** The command nearest `el` (up to eight levels up, out of a frame that is part of the page into
   * the page around it) that would send — or, unless `outwardOnly`, save: the control a send or
   * save key stands for. Nearest first, and at one distance a send before a save; a delete is
   * never what such a key means. `noToolbar`: none in a toolbar either (a message field's). */
  function nearbyCommand(el, outwardOnly, noToolbar = false) {
    const seen = new Set();
    let n = el.parentElement || frameChain(el)[0] || null;
    for (let level = 0; n && level < 8; level += 1) {
      let write = null;
      let looked = 0;
      for (const c of n.querySelectorAll(COMMANDS)) {
        if (seen.has(c)) continue;
        seen.add(c);
        if (++looked > 50) break;
        if (noToolbar && c.closest(TOOLBAR)) continue;
        const { cls } = classifyTarget(c);
        const kind = cls.kind;
        if (kind === 'outward') return c;
        if (kind === 'write' && !outwardOnly && !write && !c.closest(TOOLBAR)
            && COMMIT_WORDS.has(String(cls.word || '').toLowerCase())) write = c;
      }
      if (write) return write;
      n = n.parentElement || (n.ownerDocument !== document ? frameChain(n)[0] || null : null);
    }
    return null;
  }

  // Control/Meta+S is "save" in editors and apps alike: a write, judged as a Save button's click.
  const isSaveKey = (k) => (k.ctrl || k.meta) && !k.alt && k.code === 'KeyS';

  /** The control a key press would set off, as a click on it would: Enter or Space on a button or
   * link is its click; Enter in a form's single-line field its default button's click; Enter in a
   * multi-line editor and Control/Meta+Enter anywhere the send keys of chat and mail apps, judged by
   * the form's default button or the command beside it (a message field's: not a toolbar's Share),
   * else a message field's Enter is itself.
   * → {control, outwardOnly, save?, send?} or null (a key that sets off nothing a click could). */
  function pressControl(el, k) {
    if (isSaveKey(k)) return { control: el, outwardOnly: false, save: true };
    if (k.alt) return null;
    const tag = el.localName;
    const modified = k.ctrl || k.meta;
    const native = tag === 'button' || tag === 'summary' || (tag === 'a' && el.hasAttribute('href'))
      || (tag === 'input' && ['submit', 'button', 'reset', 'image'].includes(el.type));
    if (k.key === 'Enter' && !modified && native) return { control: el, outwardOnly: false };
    if (k.key === ' ' && !modified && (native || (tag === 'input' && (el.type === 'checkbox' || el.type === 'radio')))) {
      return { control: el, outwardOnly: false };
    }
    if (k.key !== 'Enter') return null;
    const form = formAround(el);
    const multiLine = tag === 'textarea' || el.isContentEditable;
    const send = () => (messageField(el) ? { control: el, outwardOnly: false, send: true } : null);
    if (!multiLine && !modified) {
      const button = form && tag === 'input' ? defaultButton(form) : null;
      return button ? { control: button, outwardOnly: false } : send();
    }
    if (multiLine && k.shift && !modified) return null;     // Shift+Enter: the line break everywhere
    if (!modified && documentEditor(el)) return send();      // a paragraph in a document editor
    const control = (form && defaultButton(form)) || nearbyCommand(el, !modified, messageField(el));
    return control ? { control, outwardOnly: !modified } : send();
  }

  /** Enter's implicit submission: the default button's click, else the form's own submit. */
  function implicitSubmit(form) {
    const button = defaultButton(form);
    if (button) {
      if (!isDisabled(button)) button.click();
    } else if (implicitlySubmits(form)) {
      form.requestSubmit();
    }
  }

  function doPress(el, k, named) {
    if (named) {
      checkUsable(el);
      checkModal(el);
      if (isFocusable(el)) focusLikePerson(el);
    }
    pressKey(el, k, { activate: (c) => c.click(), submit: implicitSubmit });
  }

  function doType(el, text, named) {
    if (named) {
      checkUsable(el);
      checkModal(el);
      if (!focusLikePerson(el)) fail('target_denied', 'the node cannot take focus');
    }
    if (el.readOnly === true) fail('target_denied', 'the field is read-only');
    // A line break (\r too: Enter's key) typed where Enter may send goes through press, which holds.
    const lines = typeof text === 'string' ? text.replace(/\r\n?/g, '\n') : text;
    if (typeof lines === 'string' && lines.includes('\n') && isEditable(el) && (messageField(el) || (!documentEditor(el)
        && ((formAround(el) && defaultButton(formAround(el))) || nearbyCommand(el, true))))) {
      fail('invalid_params', 'Enter may send here: type the text without its line breaks, then press Enter');
    }
    typeText(el, lines);
  }

  async function opAction(args, via) {
    let action = args.action;
    let keySpec = args.key;
    // A held key press comes back approved as "press:<key>", a held drag as "drag:<the dragged
    // node's ref>" on its target's (the hold keeps one action word and one ref).
    const pressed = typeof action === 'string' ? /^press:(.{1,64})$/.exec(action) : null;
    const dropped = typeof action === 'string' ? /^drag:([A-Za-z0-9_-]{1,32})$/.exec(action) : null;
    if (pressed) {
      action = 'press';
      keySpec = pressed[1];
    }
    if (dropped) action = 'drag';
    if (!ACTIONS.includes(action)) fail('invalid_params', `action must be one of ${ACTIONS.join(', ')}`);
    const key = action === 'press' ? parseKey(keySpec) : null;
    let el;
    let ref = null;
    let cap;
    const named = args.ref !== undefined && args.ref !== null;
    // Approved: the control that shows what the person approved, even if re-rendered (page-holds.js).
    const held = typeof args.expect === 'string' && CLICKS.has(action) ? resolveHeld(args) : null;
    if (typeof args.expect === 'string' && CLICKS.has(action) && !held) return { changed: true };
    // A drag's el is its target, the node it drops on, judged as a click's; src is what it drags.
    let src = null;
    let srcRef = null;
    if (action === 'drag') {
      if (!named || (dropped ? args.to !== undefined : typeof args.to !== 'string')) fail('invalid_params', 'drag takes a ref and to');
      ({ el: src, ref: srcRef } = resolve({ ...args, ref: dropped ? dropped[1] : args.ref }));
      ({ el, ref, cap } = resolve({ ...args, ref: dropped ? args.ref : args.to }));
    } else if (held) {
      ({ el, ref, cap } = held);
    } else if (named || (action !== 'press' && action !== 'type')) {
      ({ el, ref, cap } = resolve(args));
      if (args.sameAs) stillTheTarget(el, args.sameAs);
    } else {
      // No ref: the element that has focus now, in the document that capture was taken of.
      cap = state.captures.get(typeof args.captureId === 'string' ? args.captureId : state.lastCaptureId);
      if (!cap) fail('stale_node', 'that capture is gone from this page; take a new context snapshot');
      el = deepActiveElement() || document.body || document.documentElement;
    }
    // A click waits for a sliding page to stop (page-holds.js): an approved one always, the
    // agent's own only while something animates around it.
    if (CLICKS.has(action)) await untilStill(el, { quick: !held });
    if (JUDGED.has(action) || action === 'hover') await untilUncovered(el);
    if (src) await untilUncovered(src);
    // Last before the act: from here to it nothing waits, so the page cannot turn it off between
    // (MailDev's Refresh was enabled when a click began, and off again after untilStill's wait).
    if (action !== 'scroll' && action !== 'hover') await untilEnabled(el);
    // A drag a person could not make, or that would press or drop on a control unjudged, is
    // refused here, after the last wait (page-pointer.js).
    if (src) P.checkDrag(src, el);
    const approved = typeof args.expect === 'string';
    let planUsed = false;
    let planOpens = false;         // with a plan: the write only opened an editor (no step spent)
    let guardForm = null;          // with a plan: the control's own form may be sent (the write)
    const pc = action === 'press' ? pressControl(el, key) : null;
    const control = JUDGED.has(action) ? el : pc && pc.control;
    // A double-click on a control that sends, deletes or writes is one click: held, planned or
    // approved, what it does is done once (the person's card is for one).
    let twice = action === 'dblclick';
    let doubled = false;
    if (control) {
      const judged = classifyTarget(control, src !== null);
      const { desc, form, scope } = judged;
      let { cls } = judged;
      if (cls.kind !== 'none' || approved) twice = false;
      if (pc && (pc.save || pc.send)) {
        // The key itself is the control, approved as this very press: a save held as a write, a
        // message field's Enter as a send.
        // The card words it in the app's language from the key, the field (source) and the word.
        desc.label = keySpec;
        if (!pc.save) desc.source = roleAndName(el).name;
        cls = pc.save ? { kind: 'write', reason: 'key', word: 'save' } : { kind: 'outward', reason: 'key', word: 'message' };
      }
      if (src) {
        // The drop is the act: the card names both ends (the dragged one as its source), approved
        // as this very drag. Each end cut on its own, so that the card (and what its Approve is
        // checked against) always says both.
        const clip = core().clip;
        desc.label = clip(desc.label || desc.text || desc.title || roleAndName(control).name, 80);
        desc.source = clip(roleAndName(src).name, 60);
        if (cls.kind !== 'none') cls = { ...cls, reason: 'drop' };
      }
      if (approved) {
        // The person approved exactly this: recompute it; anything different is a new question.
        const again = holdOf(cls, desc, scope).canonical;
        const viaSubmit = form ? submitHold(form, desc.isSubmit ? controlFor(control) : null).canonical : null;
        if (again !== args.expect && viaSubmit !== args.expect) return { changed: true };
      } else if (cls.kind !== 'none' && (!pc || !pc.outwardOnly || cls.kind === 'outward')) {
        if (cls.kind === 'write' && allowCovers(args.allow)) {
          planUsed = true;
          // A drop is the write itself, never an editor opening ("Add a card …" moves the card).
          planOpens = !src && opensEditor(desc);
          guardForm = form;
        } else {
          const hold = { held: holdOf(cls, desc, scope) };
          // Approving a held key press clicks the control it would have set off (a save key:
          // presses it again).
          if (pc && (pc.save || pc.send)) Object.assign(hold, { heldRef: ref || refFor(cap, el), heldAction: `press:${keySpec}` });
          else if (src) Object.assign(hold, { heldRef: ref, heldAction: `drag:${srcRef}` });
          else if (action === 'press') Object.assign(hold, { heldRef: refFor(cap, control), heldAction: 'click' });
          return hold;
        }
      }
    } else if (approved && action === 'press') {
      // A press held by its form's submission: the same form, the same fields.
      const form = formAround(el);
      const sent = form ? [submitHold(form, null).canonical, submitHold(form, defaultButton(form)).canonical] : [];
      if (!sent.includes(args.expect)) return { changed: true };
    }
    // The text's change comes from the mutations (watchMutations): reading the whole document's
    // textContent before and after cost 16 ms each on TiddlyWiki, whose page holds its store.
    const before = { url: location.href, title: document.title };
    let heldBySubmit = null;
    const onSubmit = (e) => {
      const form = e.target;
      if (!form || form.localName !== 'form') return;   // a frame's forms are of its realm
      if (heldBySubmit) {
        // Held already: nothing more of this act's leaves (whatever else its handlers submit).
        e.preventDefault();
        e.stopImmediatePropagation();
        return;
      }
      const submitter = e.submitter || null;
      if (!mustHoldSubmit(form, submitter)) return;
      if (planUsed && form === guardForm && sameOrigin(submission(form, submitter).action)) return;
      e.preventDefault();
      e.stopImmediatePropagation();
      heldBySubmit = submitHold(form, submitter);
    };
    // An approved click or press is the very act the person saw; an approved drop is not the
    // form it may submit (the card showed the drop), so that stays guarded.
    const guard = (JUDGED.has(action) || action === 'press') && (!approved || action === 'drag');
    // A node in a frame that is part of the page submits in the frame's window.
    const windows = [...new Set([window, el.ownerDocument.defaultView].filter(Boolean))];
    const heldPress = () => ({ held: heldBySubmit, heldRef: ref || refFor(cap, el), heldAction: `press:${keySpec}` });
    // What a submission the act set off is held as. A drop that submits a form is no act a card
    // could show and an Approve run again: it is stopped, and said.
    const heldNow = () => {
      if (action === 'drag') fail('target_denied', 'the drop would submit a form: it was stopped and nothing was sent');
      return action === 'press' ? heldPress() : { held: heldBySubmit };
    };
    // form.submit() fires no submit event, and its navigation starts a task later: the Navigation
    // API's navigate event sees it (with its POST body), so it is watched until the action settles.
    const onNavigate = (e) => {
      if (!e || !e.cancelable || (e.destination && e.destination.sameDocument)) return;
      if (heldBySubmit) {
        e.preventDefault();
        return;
      }
      const dest = e.destination ? e.destination.url : '';
      const source = e.sourceElement || null;
      const sourceForm = source && source.localName === 'form' ? source : (source && source.form) || null;
      const post = e.formData !== null && e.formData !== undefined;
      if (!post && !(sourceForm && !sameOrigin(dest))) return;
      if (planUsed && sourceForm && sourceForm === guardForm && sameOrigin(dest)) return;
      e.preventDefault();
      heldBySubmit = navigateHold(sourceForm, post ? e.formData : null, dest);
    };
    const navs = guard ? windows.map((w) => w.navigation).filter((n) => n && typeof n.addEventListener === 'function') : [];
    for (const n of navs) n.addEventListener('navigate', onNavigate);    // before watchNavigation's
    // Watch before acting: the action's own mutations and requests count.
    const network = watchNetwork(args.net === true, via, args.inflight);
    const mutations = watchMutations(args.timers);
    const away = watchNavigation();
    let dialogs = null;
    // A write that goes through (a plan's or an approved one): did the page show it was saved?
    const write = control && ((planUsed && !planOpens) || approved) ? watchWrite(control) : null;
    let outcome;
    let acted;
    let seen = [];
    let took = true;
    try {
      if (JUDGED.has(action) || action === 'press') dialogs = P.watchDialogs(approved);
      if (guard) for (const w of windows) w.addEventListener('submit', onSubmit, true);
      try {
        switch (action) {
          case 'click': doClick(el); break;
          case 'dblclick': doubled = doClick(el, twice ? () => !heldBySubmit && el.isConnected && classifyTarget(el).cls.kind === 'none' : null); break;
          case 'press': doPress(el, key, named); break;
          case 'focus': doFocus(el); break;
          case 'scroll': scrollTo(el, 'center'); break;
          case 'setValue': doSetValue(el, args.value); break;
          case 'hover': P.doHover(el); break;
          case 'drag': took = P.doDrag(src, el).dropped; break;
          case 'type': doType(el, args.text, named); break;
          default: break;
        }
      } finally {
        if (guard) for (const w of windows) w.removeEventListener('submit', onSubmit, true);
      }
      if (heldBySubmit) return heldNow();
      acted = now();
      mutations.drain(acted, Date.now());
      mutations.last = Math.max(mutations.last, acted);
      network.sync();
      outcome = await settle(mutations, network, away,
                             ['click', 'dblclick', 'press', 'hover', 'drag'].includes(action) ? SETTLE_QUIET_MS : SETTLE_QUIET_LIGHT_MS);
      if (heldBySubmit) return heldNow();
    } finally {
      for (const n of navs) n.removeEventListener('navigate', onNavigate);
      if (write) write.stop();
      if (dialogs) seen = dialogs.stop();
      away.stop();
      mutations.stop();
      network.close();
    }
    const changes = {
      urlChanged: location.href !== before.url,
      titleChanged: document.title !== before.title,
      added: mutations.added,
      removed: mutations.removed,
      textChanged: mutations.textMutated,
      settled: outcome.settled,
      settleMs: Math.round(now() - acted),
    };
    if (outcome.navigating) changes.navigating = true;
    if (!took) changes.dropped = false;           // the page did not take the drop there
    if (outcome.reason) changes.reason = outcome.reason;      // settled:false: what it waited on
    if (write) Object.assign(changes, write.verdict());
    // A double-click that went as one click says so: the agent hears what ran.
    const answer = { action: action === 'dblclick' && !doubled ? 'click' : action, ref, done: true, changes };
    if (seen.length) answer.dialogs = seen;       // the page's own dialogs, and how they were answered
    // A batch's wait step right after this act: whether its text shows now spares it a visit.
    if (args.untilText !== undefined && !outcome.navigating) answer.untilFound = P.textShownFor(args.untilText);
    if (planUsed) {
      // Which step of the plan this write was, for the pill ("plan step 2 of 3") and the app.
      answer.plan = { planId: String(args.allow.planId ?? ''), site: location.hostname, ...planStep(args.allow) };
      if (planOpens) answer.plan.opens = true;
    }
    // The page changed in place and the worker asked for it: read it again now, as the context op
    // would, which spares the agent's next look a round trip. A page that now shows a password
    // field is read by nobody (the context op refuses): the answer goes without it, and so it
    // does whatever else stops the read, since the act itself is done and must be said.
    const capture = args.capture && typeof args.capture === 'object' ? args.capture : null;
    if (capture && !outcome.navigating && (changes.added || changes.removed || changes.textChanged)) {
      try {
        answer.context = P.opContext(capture);
      } catch (_) {
        // The app reads the page again itself (browser.context), and hears why there.
      }
    }
    return answer;
  }

  Object.assign(P, { opAction, opFind, checkModal, checkUsable, checkCover, scrollTo, describe, INNER_CONTROL,
    mouseInit, pointerInit });
})();
