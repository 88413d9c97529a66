// SPDX-License-Identifier: GPL-3.0-or-later
// The page agent's hands on the keyboard: filling a field, typing into the focused element and
// pressing keys, the way a person's typing reaches a page — focus (and its events, which the
// browser holds back in a tab nobody looks at), beforeinput/input/change, key events with the
// legacy keyCode that keyboard managers still read, and the keys' default actions (a line break,
// Tab to the next field, a checkbox's Space). Which press may send is decided in page-act.js.

(function () {
  'use strict';

  if (globalThis.__chaperonePage) return;   // installed already: the first install wins
  const P = globalThis.ChaperonePageParts;
  if (!P) return;                           // page-common.js did not run: nothing installs

  const { fail, core, isRendered, isDisabled, elementAt, deepActiveElement } = P;

  const MAX_VALUE_CHARS = 100000;
  const MAX_TYPE_CHARS = 2000;      // typed one key at a time: a long text is a fill

  // Taken once at install: the prototypes' own setters, as React-style value trackers on the
  // element instance must be bypassed for the page's framework to notice the change.
  const INPUT_VALUE = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value').set;
  const TEXTAREA_VALUE = Object.getOwnPropertyDescriptor(HTMLTextAreaElement.prototype, 'value').set;
  const SELECT_VALUE = Object.getOwnPropertyDescriptor(HTMLSelectElement.prototype, 'value').set;

  // Input types whose value the browser checks: a value it rejects becomes '' — said, not hidden.
  const FORMATS = {
    date: 'YYYY-MM-DD', time: 'HH:MM', 'datetime-local': 'YYYY-MM-DDTHH:MM', month: 'YYYY-MM',
    week: 'YYYY-Www', color: '#rrggbb', number: 'a number',
    range: 'a number within its min, max and step',
  };
  const TEXT_TYPES = new Set(['text', 'search', 'url', 'tel', 'email', 'password', 'number']);

  // ---- keys ----------------------------------------------------------------------------------

  const NAMED = {
    Enter: ['Enter', 'Enter', 13], Tab: ['Tab', 'Tab', 9], Escape: ['Escape', 'Escape', 27],
    Esc: ['Escape', 'Escape', 27], Backspace: ['Backspace', 'Backspace', 8],
    Delete: ['Delete', 'Delete', 46], Insert: ['Insert', 'Insert', 45], Space: [' ', 'Space', 32],
    ArrowLeft: ['ArrowLeft', 'ArrowLeft', 37], ArrowUp: ['ArrowUp', 'ArrowUp', 38],
    ArrowRight: ['ArrowRight', 'ArrowRight', 39], ArrowDown: ['ArrowDown', 'ArrowDown', 40],
    Home: ['Home', 'Home', 36], End: ['End', 'End', 35], PageUp: ['PageUp', 'PageUp', 33],
    PageDown: ['PageDown', 'PageDown', 34],
  };
  for (let i = 1; i <= 12; i += 1) NAMED[`F${i}`] = [`F${i}`, `F${i}`, 111 + i];
  const MODIFIERS = { Control: 'ctrl', Ctrl: 'ctrl', Shift: 'shift', Alt: 'alt', Option: 'alt',
    Meta: 'meta', Cmd: 'meta', Command: 'meta' };
  const PUNCT = { ';': ['Semicolon', 186], '=': ['Equal', 187], ',': ['Comma', 188], '-': ['Minus', 189],
    '.': ['Period', 190], '/': ['Slash', 191], '`': ['Backquote', 192], '[': ['BracketLeft', 219],
    '\\': ['Backslash', 220], ']': ['BracketRight', 221], '\'': ['Quote', 222] };

  /** One character's key: {key, code, keyCode, text}. */
  function charKey(ch, shift) {
    if (/^[a-z]$/i.test(ch)) {
      const up = ch.toUpperCase();
      return { key: shift ? up : ch, code: `Key${up}`, keyCode: up.charCodeAt(0), text: shift ? up : ch };
    }
    if (/^[0-9]$/.test(ch)) return { key: ch, code: `Digit${ch}`, keyCode: ch.charCodeAt(0), text: ch };
    const p = PUNCT[ch];
    return { key: ch, code: p ? p[0] : '', keyCode: p ? p[1] : 0, text: ch };
  }

  /**
   * "Control+Shift+s", "Enter", "ArrowDown", "a" → {key, code, keyCode, text, ctrl, shift, alt,
   * meta} (text: what the key types, '' for a named key or a shortcut). invalid_params otherwise.
   */
  function parseKey(spec) {
    if (typeof spec !== 'string' || !spec || spec.length > 64) fail('invalid_params', 'key must be a key name such as Enter, Tab, Escape, ArrowDown, a or Control+s');
    const parts = spec === '+' ? ['+'] : spec.split('+');
    const name = parts.pop();
    const mods = { ctrl: false, shift: false, alt: false, meta: false };
    for (const m of parts) {
      const k = Object.prototype.hasOwnProperty.call(MODIFIERS, m) ? MODIFIERS[m] : null;
      if (!k || mods[k]) fail('invalid_params', `${core().clip(m, 20)} is not a modifier (Control, Shift, Alt, Meta)`);
      mods[k] = true;
    }
    let k;
    if (Object.prototype.hasOwnProperty.call(NAMED, name)) {
      const [key, code, keyCode] = NAMED[name];
      k = { key, code, keyCode, text: key === ' ' ? ' ' : '' };
    } else if ([...name].length === 1 && !/\s/.test(name)) {
      k = charKey(name, mods.shift);
    } else {
      fail('invalid_params', `${core().clip(name, 20)} is not a key name (Enter, Tab, Escape, Backspace, Delete, Space, arrows, Home, End, PageUp, PageDown, F1–F12, or one character)`);
    }
    if (mods.ctrl || mods.alt || mods.meta) k.text = '';
    return { ...k, ...mods };
  }

  function keyEvent(target, type, k) {
    const printable = k.text.length > 0;
    const init = {
      key: k.key, code: k.code, bubbles: true, cancelable: true, composed: true,
      view: target.ownerDocument.defaultView, ctrlKey: k.ctrl, shiftKey: k.shift, altKey: k.alt, metaKey: k.meta,
      // Legacy members, still what many keyboard managers (TiddlyWiki's included) match on.
      keyCode: type === 'keypress' ? (printable ? k.text.charCodeAt(0) : k.keyCode) : k.keyCode,
      charCode: type === 'keypress' ? (printable ? k.text.charCodeAt(0) : k.keyCode) : 0,
      which: type === 'keypress' && printable ? k.text.charCodeAt(0) : k.keyCode,
    };
    return target.dispatchEvent(new KeyboardEvent(type, init));
  }

  // ---- focus ---------------------------------------------------------------------------------

  const activeIn = (el) => {
    const root = el.getRootNode();
    return !!root && root.activeElement === el;
  };

  /**
   * Focuses `el` as a click or Tab would. A tab the person is not looking at has no system focus
   * and Chromium then moves focus without firing focus/focusin, which widgets that open on focus
   * (search dropdowns, TiddlyWiki's focusPopup) wait for: those events are sent when the browser
   * held them back.
   */
  function focusLikePerson(el) {
    // A frame's body is its document's active element until something else is: focused only
    // once the frames around it lead to it (a pad's editor, clicked from the page around it).
    if (activeIn(el) && (el !== el.ownerDocument.body || deepActiveElement() === el)) return true;
    const before = el.getRootNode().activeElement || null;
    let fired = false;
    const seen = () => { fired = true; };
    el.addEventListener('focus', seen, { capture: true, once: true });
    try {
      el.focus({ preventScroll: true });
    } finally {
      el.removeEventListener('focus', seen, { capture: true });
    }
    if (!activeIn(el)) return false;
    if (!fired) {
      const view = el.ownerDocument.defaultView;
      if (before && before !== el && before !== el.ownerDocument.body) {
        before.dispatchEvent(new FocusEvent('blur', { composed: true, view, relatedTarget: el }));
        before.dispatchEvent(new FocusEvent('focusout', { bubbles: true, composed: true, view, relatedTarget: el }));
      }
      el.dispatchEvent(new FocusEvent('focus', { composed: true, view, relatedTarget: before }));
      el.dispatchEvent(new FocusEvent('focusin', { bubbles: true, composed: true, view, relatedTarget: before }));
    }
    return true;
  }

  /** The next (or previous) element in the document's tab order after `from`. */
  function tabNeighbour(from, back) {
    const doc = from.ownerDocument;
    const all = [...doc.querySelectorAll('a[href], button, input, select, textarea, summary, iframe, [tabindex], [contenteditable]')]
      .filter((e) => e.tabIndex >= 0 && !isDisabled(e) && !(e.localName === 'input' && e.type === 'hidden') && isRendered(e));
    const order = all.map((e, i) => ({ e, i })).sort((a, b) => {
      const ta = a.e.tabIndex;
      const tb = b.e.tabIndex;
      if (ta !== tb) {
        if (ta === 0) return 1;
        if (tb === 0) return -1;
        return ta - tb;
      }
      return a.i - b.i;
    }).map((x) => x.e);
    if (!order.length) return null;
    const at = order.indexOf(from);
    if (at < 0) return back ? order[order.length - 1] : order[0];
    return order[at + (back ? -1 : 1)] || null;
  }

  // ---- editing -------------------------------------------------------------------------------

  const isTextField = (el) => el.localName === 'textarea'
    || (el.localName === 'input' && TEXT_TYPES.has(el.type));
  const isEditable = (el) => isTextField(el) || !!el.isContentEditable;
  /**
   * A frame whose whole document is the editor (its body contenteditable, or designMode: Etherpad,
   * and TinyMCE or CKEditor in their frame modes): a document editor, where Enter is a new
   * paragraph, never the send key a chat box's Enter may be.
   */
  const documentEditor = (el) => el.ownerDocument !== document && !!el.isContentEditable
    && (el === el.ownerDocument.body || el.ownerDocument.designMode === 'on');

  function fireInput(el, inputType, data) {
    el.dispatchEvent(new InputEvent('input', { bubbles: true, composed: true, inputType, data }));
  }

  /**
   * Inserts `text` at the caret of the focused editable `el` as a keystroke does: beforeinput
   * first (editors that keep their own model, CodeMirror- and ProseMirror-like, take the edit
   * there and cancel it; the browser's editing commands never fire it), then the browser's own
   * editing command (the edit, the undo stack, input), else the edit by hand and input.
   */
  function insertText(el, text, inputType = 'insertText') {
    const doc = el.ownerDocument;
    const before = new InputEvent('beforeinput', { bubbles: true, cancelable: true, composed: true, inputType, data: text });
    if (!el.dispatchEvent(before)) return;          // the page took the edit itself
    let ok = false;
    try {
      if (inputType === 'insertParagraph' && el.isContentEditable) ok = doc.execCommand('insertParagraph', false);
      else if (inputType === 'insertLineBreak' && el.isContentEditable) ok = doc.execCommand('insertLineBreak', false);
      else ok = doc.execCommand('insertText', false, text);
    } catch (_) {
      ok = false;
    }
    if (ok) return;
    if (el.localName === 'input' || el.localName === 'textarea') {
      let start = null;
      try { start = el.selectionStart; } catch (_) { start = null; }
      if (start === null) {
        (el.localName === 'input' ? INPUT_VALUE : TEXTAREA_VALUE).call(el, el.value + text);
      } else {
        el.setRangeText(text, el.selectionStart, el.selectionEnd, 'end');
      }
    } else {
      const sel = doc.getSelection();
      if (sel && sel.rangeCount && el.contains(sel.anchorNode)) {
        const r = sel.getRangeAt(0);
        r.deleteContents();
        const node = doc.createTextNode(text);
        r.insertNode(node);
        r.setStartAfter(node);
        sel.removeAllRanges();
        sel.addRange(r);
      } else {
        el.append(text);
      }
    }
    fireInput(el, inputType, text);
  }

  /** Backspace / Delete in an editable: the browser's command, else by hand on a text field. */
  function deleteAtCaret(el, forward) {
    const inputType = forward ? 'deleteContentForward' : 'deleteContentBackward';
    if (!el.dispatchEvent(new InputEvent('beforeinput', { bubbles: true, cancelable: true, composed: true, inputType }))) return;
    let ok = false;
    try { ok = el.ownerDocument.execCommand(forward ? 'forwardDelete' : 'delete', false); } catch (_) { ok = false; }
    if (ok || !isTextField(el)) return;
    let s = null;
    try { s = el.selectionStart; } catch (_) { s = null; }
    if (s === null) return;
    let e = el.selectionEnd;
    let b = s;
    if (b === e) {
      if (forward) e = Math.min(el.value.length, e + 1);
      else b = Math.max(0, b - 1);
    }
    if (b === e) return;
    el.setRangeText('', b, e, 'end');
    fireInput(el, inputType, null);
  }

  /** Selects all of an editable's content, so what is typed next replaces it. */
  function selectAll(el) {
    if (el.localName === 'input' || el.localName === 'textarea') {
      try { el.select(); } catch (_) { /* a type without selection */ }
      return;
    }
    const doc = el.ownerDocument;
    const sel = doc.getSelection();
    if (!sel) return;
    const range = doc.createRange();
    range.selectNodeContents(el);
    sel.removeAllRanges();
    sel.addRange(range);
  }

  // ---- code editors --------------------------------------------------------------------------
  //
  // A code editor (Monaco, CodeMirror 5, Ace) draws its text itself and takes keystrokes through
  // a textarea nobody sees — 0 to 3 px, transparent, or clipped to nothing by a box around it
  // (CodeMirror 5's is 3 × 0 px, overflow hidden) — that holds at most the line at the caret.
  // Setting that textarea's value inserts at the caret (a Node-RED function kept its old code
  // after the new). A person replaces an editor's content with its own Select All and a paste,
  // and so does a fill: Control+A to the editor (its keymap selects the whole document), then a
  // paste, which the editor takes as it comes — no auto-indent, no closing bracket added.

  const EDITOR_INPUT_PX = 4;

  /** Whether the textarea `el` is the hidden input of an editor that draws its own text. */
  function editorInput(el) {
    if (el.localName !== 'textarea') return false;
    const view = el.ownerDocument.defaultView;
    const tiny = (r) => r.width < EDITOR_INPUT_PX || r.height < EDITOR_INPUT_PX;
    const box = el.getBoundingClientRect();
    if (tiny(box) || view.getComputedStyle(el).opacity === '0') return true;
    // Clipped by a tiny box around it, and so not what is drawn at its own centre (a textarea
    // that escapes such a box, positioned out of it, is a person's field).
    let n = el.parentElement;
    for (let i = 0; n && i < 3; i += 1, n = n.parentElement) {
      const cs = view.getComputedStyle(n);
      if (cs.display === 'contents' || (cs.overflowX === 'visible' && cs.overflowY === 'visible')) continue;
      if (!tiny(n.getBoundingClientRect())) continue;
      return elementAt(el.ownerDocument, box.left + box.width / 2, box.top + box.height / 2) !== el;
    }
    return false;
  }

  /** A paste of `text` on `el`; → whether the page took it (cancelled the browser's own). */
  function paste(el, text) {
    const view = el.ownerDocument.defaultView;
    let data = null;
    try {
      data = new view.DataTransfer();
      data.setData('text/plain', text);
    } catch (_) {
      return false;
    }
    return !el.dispatchEvent(new view.ClipboardEvent('paste', { clipboardData: data, bubbles: true, cancelable: true, composed: true }));
  }

  /** A key pressed on `el` for the page's own handlers only; → whether one of them took it. */
  function keyForPage(el, k) {
    const taken = !keyEvent(el, 'keydown', k);
    keyEvent(el, 'keyup', k);
    return taken;
  }

  /**
   * Fills the editor whose hidden input `el` is; false when `el` cannot take the focus (a
   * textarea left hidden under an editor: keys sent there would reach the page's own shortcuts).
   */
  function fillEditor(el, value) {
    if (!focusLikePerson(el) || !activeIn(el)) return false;
    const mac = /\bMac/.test(navigator.platform);
    const all = { ...charKey('a', false), ctrl: !mac, shift: false, alt: false, meta: mac };
    const selected = keyForPage(el, all);
    if (!selected) selectAll(el);
    if (value === '') {
      // The editor's own Backspace over its whole selection; else the field's own delete.
      const back = { key: 'Backspace', code: 'Backspace', keyCode: 8, text: '', ctrl: false, shift: false, alt: false, meta: false };
      if (!selected || !keyForPage(el, back)) deleteAtCaret(el, false);
      return true;
    }
    if (!paste(el, value)) {
      // Nobody took the paste: a plain textarea after all (one in a folded box), filled as one —
      // whole, when no editor took Control+A either.
      insertText(el, value, 'insertFromPaste');
      if (!selected && el.value !== value) {
        TEXTAREA_VALUE.call(el, value);
        fireInput(el, 'insertReplacementText', value);
      }
      if (el.value === value) el.dispatchEvent(new Event('change', { bubbles: true }));
    }
    return true;
  }

  // ---- fill ----------------------------------------------------------------------------------

  function fillChoice(el, value) {
    const want = value === true || value === 'true' || value === 'on';
    if (!(typeof value === 'boolean' || ['true', 'false', 'on', 'off'].includes(value))) {
      fail('invalid_params', 'a checkbox or radio takes true or false');
    }
    if (el.type === 'radio' && !want) fail('invalid_params', 'a radio button can only be chosen (true)');
    // click() toggles and fires click/input/change the way frameworks expect.
    if (el.checked !== want) el.click();
  }

  function fillSelect(el, value) {
    const C = core();
    const options = [...el.options];
    const wanted = Array.isArray(value) ? value : [value];
    if (!wanted.every((v) => typeof v === 'string')) fail('invalid_params', 'value must be a string (or strings for a multiple select)');
    if (!el.multiple && wanted.length !== 1) fail('invalid_params', 'this select takes one value');
    // The option a person reads first (its label), then its value.
    const pick = wanted.map((v) => options.find((o) => C.collapse(o.label || o.textContent) === C.collapse(v))
      || options.find((o) => o.value === v));
    if (pick.some((o) => !o)) {
      const some = options.slice(0, 8).map((o) => JSON.stringify(C.clip(C.collapse(o.label || o.textContent), 40))).join(', ');
      fail('invalid_params', `no such option in this select; its options include ${some}`);
    }
    if (pick.some((o) => o.disabled)) fail('target_denied', 'that option is disabled');
    focusLikePerson(el);
    if (el.multiple) {
      for (const o of options) o.selected = pick.includes(o);
    } else {
      SELECT_VALUE.call(el, pick[0].value);
    }
    fireInput(el, undefined, null);
    el.dispatchEvent(new Event('change', { bubbles: true }));
  }

  /**
   * setValue: the field ends up holding `value` and the page heard it as typed. Text fields get
   * the prototype's value setter (past a framework's own tracker), then beforeinput/input, a
   * keyup, and change; contenteditable editors get the browser's insertText over a full
   * selection, and code editors their own Select All and a paste (above); checkboxes, radios and
   * selects what a person's click or choice fires.
   */
  function fill(el, value) {
    const tag = el.localName;
    if (tag === 'input' && el.type === 'file') {
      fail('invalid_params', 'file inputs cannot be set by the agent; ask the person (handoff)');
    }
    if (tag === 'input' && (el.type === 'checkbox' || el.type === 'radio')) return fillChoice(el, value);
    if (tag === 'select') return fillSelect(el, value);
    if (typeof value !== 'string') fail('invalid_params', 'value must be a string');
    if (value.length > MAX_VALUE_CHARS) fail('invalid_params', `value is longer than ${MAX_VALUE_CHARS} characters`);
    if (editorInput(el) && fillEditor(el, value)) return undefined;
    if (tag === 'input' || tag === 'textarea') {
      focusLikePerson(el);
      selectAll(el);
      const data = value;
      const before = new InputEvent('beforeinput', { bubbles: true, cancelable: true, composed: true, inputType: 'insertReplacementText', data });
      if (!el.dispatchEvent(before)) return undefined;    // the page refused the edit, as it may
      const was = el.value;
      (tag === 'input' ? INPUT_VALUE : TEXTAREA_VALUE).call(el, value);
      if (tag === 'input' && FORMATS[el.type] && el.value !== value && value !== '') {
        // The browser cleared a date it could not read, or moved a range to its end: the field
        // keeps what it had, and no event tells the page of a value it never held.
        INPUT_VALUE.call(el, was);
        fail('invalid_params', `this ${el.type} field takes values like ${FORMATS[el.type]}`);
      }
      fireInput(el, 'insertReplacementText', data);
      keyEvent(el, 'keyup', { key: 'Unidentified', code: '', keyCode: 0, text: '', ctrl: false, shift: false, alt: false, meta: false });
      el.dispatchEvent(new Event('change', { bubbles: true }));
      return undefined;
    }
    // contenteditable: a real edit over everything that is there (beforeinput/input).
    focusLikePerson(el);
    selectAll(el);
    if (value === '') deleteAtCaret(el, false);
    else insertText(el, value, 'insertText');
    if ((el.innerText || '').replace(/\s+$/, '') !== value.replace(/\s+$/, '')
        && !el.ownerDocument.defaultView.getSelection().toString()) {
      // Neither the command nor beforeinput took: the text is put in, and input said.
      el.textContent = value;
      fireInput(el, 'insertReplacementText', value);
    }
    return undefined;
  }

  // ---- type and press ------------------------------------------------------------------------

  /** Types `text` key by key into the focused editable `el`. */
  function typeText(el, text) {
    if (typeof text !== 'string' || !text) fail('invalid_params', 'text must be a non-empty string');
    if (text.length > MAX_TYPE_CHARS) fail('invalid_params', `text is longer than ${MAX_TYPE_CHARS} characters; use fill for long values`);
    if (!isEditable(el)) fail('target_denied', 'the focused element does not take text; focus a field first (or give its ref)');
    // A carriage return is typed as the line break it is (Enter), never as a character of its own.
    for (const ch of text.replace(/\r\n?/g, '\n')) {
      if (!el.isConnected || !activeIn(el)) break;     // the page moved focus away: a person would stop too
      if (ch === '\n') {
        if (el.localName === 'input') fail('invalid_params', 'a single-line field takes no line break; press Enter instead');
        const k = { key: 'Enter', code: 'Enter', keyCode: 13, text: '', ctrl: false, shift: false, alt: false, meta: false };
        if (keyEvent(el, 'keydown', k)) {
          keyEvent(el, 'keypress', { ...k, text: '\r' });
          insertText(el, '\n', el.isContentEditable ? 'insertParagraph' : 'insertLineBreak');
        }
        keyEvent(el, 'keyup', k);
        continue;
      }
      const k = { ...charKey(ch, ch !== ch.toLowerCase()), ctrl: false, shift: ch !== ch.toLowerCase(), alt: false, meta: false };
      if (keyEvent(el, 'keydown', k) && keyEvent(el, 'keypress', k)) insertText(el, ch);
      keyEvent(el, 'keyup', k);
    }
  }

  /**
   * Presses one key (with modifiers) on `el`, the element that has focus: keydown, keypress for a
   * key that types, the key's default action when the page did not cancel it, keyup. `activate`
   * runs a native control's activation (Enter on a button or link, Space on a button or
   * checkbox) and `submit` a form's implicit submission: page-act.js passes both, with its holds.
   */
  function pressKey(el, k, { activate, submit }) {
    const go = keyEvent(el, 'keydown', k);
    let typed = false;
    if (go && (k.text || (k.key === 'Enter' && !k.ctrl && !k.alt && !k.meta))) {
      typed = keyEvent(el, 'keypress', k.text ? k : { ...k, text: '\r' });
    }
    if (go) defaultAction(el, k, typed, { activate, submit });
    keyEvent(el.isConnected ? el : el.ownerDocument.activeElement || el.ownerDocument.body, 'keyup', k);
  }

  function defaultAction(el, k, typed, { activate, submit }) {
    const tag = el.localName;
    const plain = !k.ctrl && !k.alt && !k.meta;
    if (k.key === 'Tab' && !k.ctrl && !k.alt && !k.meta) {
      const next = tabNeighbour(el, k.shift);
      if (next) focusLikePerson(next);
      return;
    }
    if (k.key === 'Enter') {
      if (tag === 'textarea' || el.isContentEditable) {
        if (typed && plain) insertText(el, '\n', el.isContentEditable ? 'insertParagraph' : 'insertLineBreak');
        return;
      }
      if (tag === 'input' && el.form && typed) return submit(el.form);
      if (tag === 'button' || tag === 'summary' || (tag === 'a' && el.hasAttribute('href'))
          || (tag === 'input' && ['submit', 'button', 'reset', 'image'].includes(el.type))) return activate(el);
      return undefined;
    }
    if (k.key === ' ' && plain) {
      if (tag === 'button' || tag === 'summary' || (tag === 'input' && ['submit', 'button', 'reset', 'image', 'checkbox', 'radio'].includes(el.type))) {
        return activate(el);
      }
      if (isEditable(el) && typed) insertText(el, ' ');
      return undefined;
    }
    if (k.text && typed && isEditable(el)) return insertText(el, k.text);
    if (!k.alt && !k.meta && CARET_KEYS[k.key] && isEditable(el)) return moveCaret(el, k);
    if (!plain || (!isEditable(el) && tag !== 'select')) return undefined;
    if (k.key === 'Backspace' || k.key === 'Delete') return deleteAtCaret(el, k.key === 'Delete');
    if (tag === 'select' && !el.multiple && (k.key === 'ArrowDown' || k.key === 'ArrowUp')) {
      const options = [...el.options];
      let i = el.selectedIndex;
      do i += k.key === 'ArrowDown' ? 1 : -1; while (options[i] && options[i].disabled);
      if (!options[i]) return undefined;
      SELECT_VALUE.call(el, options[i].value);
      fireInput(el, undefined, null);
      el.dispatchEvent(new Event('change', { bubbles: true }));
      return undefined;
    }
    return undefined;
  }

  // The keys that move the caret, as Selection.modify() names the move: {direction, granularity,
  // with Control}. A key event a script sends moves nothing itself, so the move is made here.
  const CARET_KEYS = {
    ArrowLeft: ['backward', 'character', 'word'], ArrowRight: ['forward', 'character', 'word'],
    ArrowUp: ['backward', 'line', 'paragraph'], ArrowDown: ['forward', 'line', 'paragraph'],
    Home: ['backward', 'lineboundary', 'documentboundary'], End: ['forward', 'lineboundary', 'documentboundary'],
  };

  /**
   * The caret moved as the key moves it: in a text field by its selection range, Home and End to
   * its ends; in a contenteditable editor by the document's selection (with Shift, extended), by
   * character or line and, with Control, by word or to the document's ends (Control+End: where a
   * person appends to a pad).
   */
  function moveCaret(el, k) {
    const [direction, granularity, withCtrl] = CARET_KEYS[k.key];
    if (isTextField(el)) {
      let s = null;
      try { s = el.selectionStart; } catch (_) { s = null; }
      // A field with no caret (number, email) has none to move; Up, Down and Control+arrow are
      // left to the page.
      if (s === null || k.key === 'ArrowUp' || k.key === 'ArrowDown' || (k.ctrl && granularity === 'character')) return undefined;
      const len = el.value.length;
      const to = { ArrowLeft: Math.max(0, s - 1), ArrowRight: Math.min(len, el.selectionEnd + 1), Home: 0, End: len }[k.key];
      el.setSelectionRange(to, to);
      return undefined;
    }
    // In a shadow root the document's selection names the host: the root's own (Chromium) does not.
    const root = el.getRootNode();
    const sel = (typeof root.getSelection === 'function' ? root.getSelection() : null) || el.ownerDocument.getSelection();
    if (!sel) return undefined;
    if (!sel.rangeCount || !el.contains(sel.anchorNode)) sel.collapse(el, 0);
    const by = k.ctrl ? withCtrl : granularity;
    if (by === 'documentboundary') {
      // The editor's own ends, in its first or last text (Firefox's modify() has no document
      // boundary): the end of the last line, not after the block that holds it.
      const end = direction === 'forward';
      let leaf = el;
      while (end ? leaf.lastChild : leaf.firstChild) leaf = end ? leaf.lastChild : leaf.firstChild;
      let at = [leaf, end && leaf.nodeType === 3 ? leaf.length : 0];
      if (leaf !== el && leaf.nodeType !== 3) {
        const i = Array.prototype.indexOf.call(leaf.parentNode.childNodes, leaf);
        at = [leaf.parentNode, end && leaf.localName !== 'br' ? i + 1 : i];   // before a line's closing <br>
      }
      if (k.shift) sel.extend(...at);
      else sel.collapse(...at);
      return undefined;
    }
    try {
      sel.modify(k.shift ? 'extend' : 'move', direction, by);
    } catch (_) {
      /* a move this browser does not make (Firefox: by paragraph): the caret stays */
    }
    return undefined;
  }

  /** The implicit submission's default button of a form (its first submit button), or null. */
  function defaultButton(form) {
    for (const e of form.elements) {
      if ((e.localName === 'button' && (e.type || 'submit') === 'submit')
          || (e.localName === 'input' && (e.type === 'submit' || e.type === 'image'))) return e;
    }
    return null;
  }

  /** Whether a form with no submit button submits on Enter: at most one field blocks it. */
  function implicitlySubmits(form) {
    const blocking = [...form.elements].filter((e) => e.localName === 'input'
      && ['text', 'search', 'url', 'tel', 'email', 'password', 'date', 'month', 'week', 'time',
        'datetime-local', 'number'].includes(e.type));
    return blocking.length <= 1;
  }

  Object.assign(P, { parseKey, focusLikePerson, fill, typeText, pressKey, defaultButton,
    implicitlySubmits, isEditable, documentEditor, activeIn });
})();
