// SPDX-License-Identifier: GPL-3.0-or-later
// The page agent's acting: the `action` op (click, focus, scroll, setValue) on a node of a capture,
// refused when a person could not do the same (covered, disabled, behind a modal), held when it
// would send, delete or write (page-holds.js), and answered once the page settled
// (page-settle.js) with what changed. The agent tool browser_act ends here.

(function () {
  'use strict';

  if (globalThis.__chaperonePage) return;   // installed already: the first install wins
  const P = globalThis.ChaperonePageParts;
  if (!P) return;                           // page-common.js did not run: nothing installs

  const { fail, core, owns, Desc, composedContains, deepActiveElement, isRendered, openModals,
    isDisabled, resolve, planStep, now, SETTLE_QUIET_MS, SETTLE_QUIET_LIGHT_MS, watchMutations,
    watchNetwork, watchNavigation, settle, classifyTarget, holdOf, submitHold, navigateHold,
    mustHoldSubmit, sameOrigin, submission, controlFor } = P;

  const MAX_VALUE_CHARS = 100000;

  // Taken once at install: the prototypes' own setters, as React-style value trackers on the
  // element instance must be bypassed for the page's framework to notice the change.
  const INPUT_VALUE = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value').set;
  const TEXTAREA_VALUE = Object.getOwnPropertyDescriptor(HTMLTextAreaElement.prototype, 'value').set;
  const SELECT_VALUE = Object.getOwnPropertyDescriptor(HTMLSelectElement.prototype, 'value').set;

  // ---- checks and acts -----------------------------------------------------------------------

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

  function checkModal(el) {
    const modals = openModals();
    if (modals.length && !modals.some((m) => composedContains(m, el))) {
      fail('target_denied', `an open modal dialog (${describe(modals[modals.length - 1])}) is in front of this node; act inside the dialog or close it first`);
    }
  }

  function checkUsable(el) {
    if (el.closest('[inert]')) fail('target_denied', 'the node is inert');
    if (isDisabled(el)) fail('target_denied', 'the node is disabled');
  }

  /** The innermost element at a point, through open shadow roots, ignoring Chaperone's own UI. */
  function elementAt(x, y) {
    // The hit-test stack, topmost first, read past our own hosts (the pill may sit over the node)
    // without touching their style: page-ui.js watches that style and would re-mount them.
    let hit = null;
    for (const el of document.elementsFromPoint(x, y)) {
      if (!owns(el)) {
        hit = el;
        break;
      }
    }
    while (hit && hit.shadowRoot) {
      const inner = hit.shadowRoot.elementFromPoint(x, y);
      if (!inner || inner === hit) break;
      hit = inner;
    }
    return hit;
  }

  /** Refuses a click a person could not make: the node must be what is at its centre. */
  function checkCover(el) {
    const r = el.getBoundingClientRect();
    if (!isRendered(el, r)) fail('target_denied', 'the node is not visible');
    const x = Math.min(Math.max(r.left + r.width / 2, 0), innerWidth - 1);
    const y = Math.min(Math.max(r.top + r.height / 2, 0), innerHeight - 1);
    if (r.right <= 0 || r.bottom <= 0 || r.left >= innerWidth || r.top >= innerHeight) {
      fail('target_denied', 'the node is outside the viewport even after scrolling');
    }
    const hit = elementAt(x, y);
    if (hit && (hit === el || composedContains(el, hit))) return { x, y };
    // A styled checkbox is often hidden under its own label: clicking the label is the same act.
    const label = hit && hit.closest ? hit.closest('label') : null;
    if (label && label.control === el) return { x, y };
    fail('target_denied', `the node is covered by ${describe(hit)} at its centre`);
    return null;
  }

  function isFocusable(el) {
    return el.tabIndex >= 0 || el.isContentEditable || el.matches('a[href], button, input, select, textarea, summary, [tabindex]');
  }

  function doClick(el) {
    checkUsable(el);
    checkModal(el);
    el.scrollIntoView({ block: 'center', inline: 'center', behavior: 'instant' });
    const { x, y } = checkCover(el);
    const base = { bubbles: true, cancelable: true, composed: true, view: window, clientX: x, clientY: y, button: 0 };
    const ptr = { ...base, pointerId: 1, pointerType: 'mouse', isPrimary: true };
    el.dispatchEvent(new PointerEvent('pointerdown', { ...ptr, buttons: 1 }));
    el.dispatchEvent(new MouseEvent('mousedown', { ...base, buttons: 1 }));
    if (isFocusable(el)) el.focus({ preventScroll: true });
    el.dispatchEvent(new PointerEvent('pointerup', { ...ptr, buttons: 0 }));
    el.dispatchEvent(new MouseEvent('mouseup', { ...base, buttons: 0 }));
    el.click();   // runs the default action too: follow a link, toggle a checkbox, submit
  }

  function doFocus(el) {
    checkUsable(el);
    checkModal(el);
    el.focus();
    if (deepActiveElement() !== el) fail('target_denied', 'the node cannot take focus');
  }

  function fireInput(el, data) {
    el.dispatchEvent(new InputEvent('input', { bubbles: true, composed: true, inputType: 'insertReplacementText', data }));
    el.dispatchEvent(new Event('change', { bubbles: true }));
  }

  function doSetValue(el, value) {
    const tag = el.localName;
    if (tag === 'input' && el.type === 'file') {
      fail('invalid_params', 'file inputs cannot be set by the agent; ask the person (handoff)');
    }
    const editable = tag === 'input' || tag === 'textarea' || tag === 'select' || el.isContentEditable;
    if (!editable) fail('target_denied', 'the node is not an editable field');
    checkUsable(el);
    checkModal(el);
    if (el.readOnly === true) fail('target_denied', 'the field is read-only');

    if (tag === 'input' && (el.type === 'checkbox' || el.type === 'radio')) {
      const want = value === true || value === 'true' || value === 'on';
      if (!(typeof value === 'boolean' || ['true', 'false', 'on', 'off'].includes(value))) {
        fail('invalid_params', 'a checkbox or radio takes true or false');
      }
      if (el.type === 'radio' && !want) fail('invalid_params', 'a radio button can only be chosen (true)');
      // click() toggles and fires click/input/change the way frameworks expect.
      if (el.checked !== want) el.click();
      return;
    }
    if (tag === 'select') {
      const options = [...el.options];
      const wanted = Array.isArray(value) ? value : [value];
      if (!wanted.every((v) => typeof v === 'string')) fail('invalid_params', 'value must be a string (or strings for a multiple select)');
      if (!el.multiple && wanted.length !== 1) fail('invalid_params', 'this select takes one value');
      const pick = wanted.map((v) => options.find((o) => o.value === v)
        || options.find((o) => core().collapse(o.textContent) === core().collapse(v)));
      if (pick.some((o) => !o)) fail('invalid_params', 'no such option in this select');
      if (pick.some((o) => o.disabled)) fail('target_denied', 'that option is disabled');
      el.focus();
      if (el.multiple) {
        for (const o of options) o.selected = pick.includes(o);
      } else {
        SELECT_VALUE.call(el, pick[0].value);
      }
      fireInput(el, null);
      return;
    }
    if (typeof value !== 'string') fail('invalid_params', 'value must be a string');
    if (value.length > MAX_VALUE_CHARS) fail('invalid_params', `value is longer than ${MAX_VALUE_CHARS} characters`);
    if (tag === 'input' || tag === 'textarea') {
      el.focus();
      (tag === 'input' ? INPUT_VALUE : TEXTAREA_VALUE).call(el, value);
      fireInput(el, value);
      return;
    }
    // contenteditable: let the editor see a real edit (beforeinput/input) where it can.
    el.focus();
    const sel = el.ownerDocument.getSelection();
    if (sel) {
      const range = document.createRange();
      range.selectNodeContents(el);
      sel.removeAllRanges();
      sel.addRange(range);
    }
    let ok = false;
    try { ok = document.execCommand('insertText', false, value); } catch (_) { ok = false; }
    if (!ok) {
      el.textContent = value;
      el.dispatchEvent(new InputEvent('input', { bubbles: true, composed: true, inputType: 'insertText', data: value }));
    }
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

  async function opAction(args, via) {
    const ACTIONS = ['click', 'focus', 'scroll', 'setValue'];
    if (!ACTIONS.includes(args.action)) fail('invalid_params', `action must be one of ${ACTIONS.join(', ')}`);
    const { el, ref } = resolve(args);
    const approved = typeof args.expect === 'string';
    let planUsed = false;
    let guardForm = null;          // with a plan: the control's own form may be sent (the write)
    if (args.action === 'click') {
      const { desc, cls, form } = classifyTarget(el);
      if (approved) {
        // The person approved exactly this: recompute it; anything different is a new question.
        const again = holdOf(cls, desc, form).canonical;
        const viaSubmit = form ? submitHold(form, desc.isSubmit ? controlFor(el) : null).canonical : null;
        if (again !== args.expect && viaSubmit !== args.expect) return { changed: true };
      } else if (cls.kind !== 'none') {
        if (cls.kind === 'write' && allowCovers(args.allow)) {
          planUsed = true;
          guardForm = form;
        } else {
          return { held: holdOf(cls, desc, form) };
        }
      }
    }
    const before = { url: location.href, title: document.title, textLength: (document.body || document.documentElement).textContent.length };
    let heldBySubmit = null;
    const onSubmit = (e) => {
      const form = e.target;
      if (!(form instanceof HTMLFormElement) || heldBySubmit) return;
      const submitter = e.submitter || null;
      if (!mustHoldSubmit(form, submitter)) return;
      if (planUsed && form === guardForm && sameOrigin(submission(form, submitter).action)) return;
      e.preventDefault();
      e.stopImmediatePropagation();
      heldBySubmit = submitHold(form, submitter);
    };
    const guard = args.action === 'click' && !approved;
    // form.submit() fires no submit event, and its navigation starts a task later: the Navigation
    // API's navigate event sees it (with its POST body), so it is watched until the action settles.
    const nav = globalThis.navigation;
    const onNavigate = (e) => {
      if (heldBySubmit || !e || !e.cancelable || (e.destination && e.destination.sameDocument)) return;
      const dest = e.destination ? e.destination.url : '';
      const source = e.sourceElement || null;
      const sourceForm = source instanceof HTMLFormElement ? source : (source && source.form) || null;
      const post = e.formData !== null && e.formData !== undefined;
      if (!post && !(sourceForm && !sameOrigin(dest))) return;
      if (planUsed && sourceForm && sourceForm === guardForm && sameOrigin(dest)) return;
      e.preventDefault();
      heldBySubmit = navigateHold(sourceForm, post ? e.formData : null, dest);
    };
    const watchNav = guard && nav && typeof nav.addEventListener === 'function';
    if (watchNav) nav.addEventListener('navigate', onNavigate);    // before watchNavigation's
    // Watch before acting: the action's own mutations and requests count.
    const network = watchNetwork(args.net === true, via, args.inflight);
    const mutations = watchMutations();
    const away = watchNavigation();
    let outcome;
    let acted;
    try {
      switch (args.action) {
        case 'click':
          if (guard) window.addEventListener('submit', onSubmit, true);
          try {
            doClick(el);
          } finally {
            if (guard) window.removeEventListener('submit', onSubmit, true);
          }
          if (heldBySubmit) return { held: heldBySubmit };
          break;
        case 'focus': doFocus(el); break;
        case 'scroll': el.scrollIntoView({ block: 'center', inline: 'nearest', behavior: 'instant' }); break;
        case 'setValue': doSetValue(el, args.value); break;
        default: break;
      }
      acted = now();
      mutations.last = Math.max(mutations.last, acted);
      network.sync();
      outcome = await settle(mutations, network, away,
                             args.action === 'click' ? SETTLE_QUIET_MS : SETTLE_QUIET_LIGHT_MS);
      if (heldBySubmit) return { held: heldBySubmit };
    } finally {
      if (watchNav) nav.removeEventListener('navigate', onNavigate);
      away.stop();
      mutations.stop();
      network.close();
    }
    const root = document.body || document.documentElement;
    const changes = {
      urlChanged: location.href !== before.url,
      titleChanged: document.title !== before.title,
      added: mutations.added,
      removed: mutations.removed,
      textChanged: mutations.textMutated || root.textContent.length !== before.textLength,
      settled: outcome.settled,
      settleMs: Math.round(now() - acted),
    };
    if (outcome.navigating) changes.navigating = true;
    if (outcome.reason) changes.reason = outcome.reason;      // settled:false: what it waited on
    const answer = { action: args.action, ref, done: true, changes };
    if (planUsed) {
      // Which step of the plan this write was, for the pill ("plan step 2 of 3") and the app.
      answer.plan = { planId: String(args.allow.planId ?? ''), site: location.hostname, ...planStep(args.allow) };
    }
    return answer;
  }

  Object.assign(P, { opAction });
})();
