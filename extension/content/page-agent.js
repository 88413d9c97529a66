// SPDX-License-Identifier: GPL-3.0-or-later
// Chaperone page agent: what runs inside a granted page, in the extension's ISOLATED world.
// Injected (after snapshot-core.js, outward.js and page-ui.js) with chrome.scripting.executeScript
// ({files}); the worker then calls globalThis.__chaperonePage.run(op, args). A classic script:
// executeScript injects nothing else. Installing twice is harmless (the first install wins and
// keeps its captures).
//
// Safety rules kept here (DESIGN §8): field values are never read out (only `filled` and
// `valueLength`); refs resolve only within the capture that made them and never retarget
// (`stale_node`); clicks are refused when something covers the node or an open modal is in front;
// Chaperone's own pill and banner (page-ui.js) live in closed shadow roots in the top layer, are
// skipped by every snapshot, and only a person's click on them, as drawn, counts.
// A page that shows a password field is a sign-in page: nothing is read or done there for an
// agent (refused_floor, "sign_in"); only the pill and the handoff banner appear.

(function () {
  'use strict';

  if (globalThis.__chaperonePage) return;

  const KEEP_CAPTURES = 4;             // per document (this isolated world lives as long as it)
  const MAX_TEXT = 20480;
  const MAX_NODES = 2000;           // every actionable node of a 10,000-element page; the app pages them
  const MAX_SCAN = 10000;
  const MAX_HEADINGS = 100;
  const MAX_FORMS = 20;
  const MAX_FIELDS_PER_FORM = 50;
  const MAX_FIELDS = 200;
  const MAX_IFRAMES = 50;
  const MAX_VALUE_CHARS = 100000;
  const WHOLE_TEXT_LIMIT = 512 * 1024;   // characters of textContent
  const HEADING_TEXT_MAX = 200;
  const MESSAGE_MAX = 500;           // UTF-16 units: the worker allows 250 code points (≤ 500 units)
  const PLAN_MAX_STEPS = 20;         // a plan the app approves has at most 20 steps (browser_plan)

  // Taken once at install: the prototypes' own setters, as React-style value trackers on the
  // element instance must be bypassed for the page's framework to notice the change.
  const INPUT_VALUE = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value').set;
  const TEXTAREA_VALUE = Object.getOwnPropertyDescriptor(HTMLTextAreaElement.prototype, 'value').set;
  const SELECT_VALUE = Object.getOwnPropertyDescriptor(HTMLSelectElement.prototype, 'value').set;

  class PageError extends Error {
    constructor(code, message, data) {
      super(message);
      this.code = code;
      if (data !== undefined) this.data = data;   // plain, fixed facts — never page content
    }
  }

  const fail = (code, message, data) => { throw new PageError(code, message, data); };

  const core = () => globalThis.ChaperoneSnapshotCore;
  const ui = () => globalThis.ChaperonePageUi;

  // ---- state ---------------------------------------------------------------------------------

  // Chaperone's own pill and banner hosts (page-ui.js): never scanned, never given a ref, and
  // their changes are not the page's.
  const owns = (el) => {
    const u = ui();
    return !!u && u.owns(el);
  };
  const state = {
    captures: new Map(),               // captureId → capture, oldest first
    lastCaptureId: null,
    refOf: new WeakMap(),              // element → its ref in this document (identity re-use)
    nextRef: 0,
    localSeq: 0,
  };

  // ---- DOM helpers ---------------------------------------------------------------------------

  /** An element-like description for snapshot-core, with text computed only on demand. */
  class Desc {
    constructor(el) {
      this.el = el;
      this.tag = el.localName;
    }

    attr(name) {
      return this.el.getAttribute(name);
    }

    get text() {
      // textContent, capped before collapsing so a huge card-link stays cheap.
      const t = this.el.textContent || '';
      return t.length > 2000 ? t.slice(0, 2000) : t;
    }

    get labelText() {
      const labels = this.el.labels;
      if (!labels || !labels.length) return '';
      let out = '';
      for (const l of labels) out += ' ' + labelTextOf(l, this.el);
      return out;
    }

    get labelledByText() {
      const ids = this.el.getAttribute('aria-labelledby');
      if (!ids) return '';
      const root = this.el.getRootNode();
      let out = '';
      for (const id of ids.split(/\s+/)) {
        const ref = id && root.getElementById ? root.getElementById(id) : null;
        if (ref && ref !== this.el) out += ' ' + (ref.textContent || '').slice(0, 2000);
      }
      return out;
    }
  }

  /** A label's text without the text of the control it wraps (a select's options, say). */
  function labelTextOf(label, control) {
    if (!label.contains(control)) return (label.textContent || '').slice(0, 2000);
    let out = '';
    const w = document.createTreeWalker(label, NodeFilter.SHOW_TEXT);
    for (let n = w.nextNode(); n && out.length < 2000; n = w.nextNode()) {
      if (!control.contains(n)) out += n.data;
    }
    return out;
  }

  /** True when `a` contains `b`, crossing shadow-root boundaries. */
  function composedContains(a, b) {
    for (let n = b; n; n = n.parentNode || (n.nodeType === 11 ? n.host : null)) {
      if (n === a) return true;
    }
    return false;
  }

  function deepActiveElement() {
    let a = document.activeElement;
    while (a && a.shadowRoot && a.shadowRoot.activeElement) a = a.shadowRoot.activeElement;
    return a;
  }

  function isVisibleStyle(el) {
    if (typeof el.checkVisibility === 'function') {
      return el.checkVisibility({ visibilityProperty: true, checkVisibilityCSS: true });
    }
    return true;
  }

  /** Rendered: visible by style and with a box (a 0×0 control is not there for a person). */
  function isRendered(el, rect) {
    if (!isVisibleStyle(el)) return false;
    const r = rect || el.getBoundingClientRect();
    return r.width > 0 || r.height > 0;
  }

  // ---- the sign-in floor ---------------------------------------------------------------------
  //
  // A page that shows a password field is a sign-in page, and sign-in pages are blind (DESIGN §8,
  // floor.js pageLevel(): reason "sign_in"): no snapshot, inspect or act runs here for an agent,
  // whatever its URL, so neither the password nor anything around it (the username, the page's
  // text, refs to press "Sign in" with) ever leaves the page. The app refuses such a snapshot too,
  // but only after the page has answered; this check is the one that keeps the content home.
  // The pill and the handoff banner still work: "sign in yourself" is shown on exactly this page.

  /** A password input a person can see: rendered (style, box), as the snapshot's auth signal. */
  function shownPassword(el) {
    return el.localName === 'input' && el.type === 'password' && el.isConnected && isRendered(el);
  }

  /**
   * One selector query and a style/box check on its matches only (a page has few password
   * inputs; ~0.1 ms on a 10,000-element page). Light DOM: open shadow roots have no cheap index,
   * so they are checked by opContext on the walk it makes anyway.
   */
  function docShowsPassword(doc) {
    for (const el of doc.querySelectorAll('input[type=password]')) if (shownPassword(el)) return true;
    return false;
  }

  /** This document, or — from a same-origin child frame — the top one, shows a password field. */
  function showsPassword() {
    if (docShowsPassword(document)) return true;
    let top = null;
    try {
      top = window.top !== window ? window.top.document : null;
    } catch (_) {
      top = null;   // a cross-origin top document is not ours to read (the worker checks its URL)
    }
    return !!top && docShowsPassword(top);
  }

  function refuseSignIn() {
    fail('refused_floor', 'This page shows a password field: agents do not read or act on sign-in pages; ask the person (handoff)',
      { level: 'blind', reason: 'sign_in' });
  }

  function inViewport(rect) {
    return rect.bottom > 0 && rect.right > 0 && rect.top < innerHeight && rect.left < innerWidth;
  }

  /** Open modals: <dialog> shown with showModal(), and visible [aria-modal=true]. */
  function openModals() {
    const out = [];
    for (const el of document.querySelectorAll('dialog[open], [aria-modal="true"]')) {
      if (el.localName === 'dialog' && el.getAttribute('aria-modal') !== 'true') {
        let modal = false;
        try { modal = el.matches(':modal'); } catch (_) { modal = false; }
        if (!modal) continue;
      }
      if (!isRendered(el)) continue;
      out.push(el);
    }
    return out;
  }

  /** The ancestor chain used in stable keys: up to 4 ancestors, tag#id, '/' at shadow roots. */
  function pathOf(el) {
    const parts = [];
    let n = el.parentNode;
    while (n && parts.length < 4) {
      if (n.nodeType === 11) {
        parts.push('/');
        n = n.host;
        continue;
      }
      if (n.nodeType !== 1) break;
      const id = n.getAttribute('id');
      parts.push(id ? `${n.localName}#${id}` : n.localName);
      n = n.parentNode;
    }
    return parts.reverse().join('>');
  }

  function isDisabled(el) {
    if (el.getAttribute('aria-disabled') === 'true') return true;
    try { return el.matches(':disabled'); } catch (_) { return false; }
  }

  /** The state of a node: what is set, plus checked/expanded when the control has them. */
  function stateOf(el, role, active) {
    const s = {};
    const tag = el.localName;
    if (isDisabled(el)) s.disabled = true;
    if (tag === 'input' && (el.type === 'checkbox' || el.type === 'radio')) {
      s.checked = el.indeterminate ? 'mixed' : el.checked;
    } else if (el.hasAttribute('aria-checked')) {
      const v = el.getAttribute('aria-checked');
      s.checked = v === 'mixed' ? 'mixed' : v === 'true';
    } else if (role === 'checkbox' || role === 'radio' || role === 'switch') {
      s.checked = false;
    }
    if (el.hasAttribute('aria-expanded')) s.expanded = el.getAttribute('aria-expanded') === 'true';
    else if (tag === 'summary' && el.parentElement && el.parentElement.localName === 'details') {
      s.expanded = el.parentElement.open;
    }
    if (tag === 'option' ? el.selected : el.getAttribute('aria-selected') === 'true') s.selected = true;
    if (el === active) s.focused = true;
    if (el.required || el.getAttribute('aria-required') === 'true') s.required = true;
    if (el.readOnly === true || el.getAttribute('aria-readonly') === 'true') s.readonly = true;
    return s;
  }

  function hrefOf(el) {
    if ((el.localName === 'a' || el.localName === 'area') && el.hasAttribute('href')) return el.href;
    return undefined;
  }

  /** Role, name, state … of one element: the facts a node line is made of. */
  function infoOf(el, ctx) {
    const C = core();
    const d = new Desc(el);
    const role = C.roleOf(d);
    const name = C.nameOf(d, role);
    return {
      el, tag: el.localName, role, name,
      state: stateOf(el, role, ctx.active),
      href: hrefOf(el),
      inModal: ctx.modals.length > 0 && ctx.modals.some((m) => composedContains(m, el)),
    };
  }

  const FIELD_SKIP = new Set(['hidden', 'submit', 'button', 'reset', 'image']);

  function isField(el) {
    const tag = el.localName;
    if (tag === 'select' || tag === 'textarea') return true;
    return tag === 'input' && !FIELD_SKIP.has((el.getAttribute('type') || 'text').toLowerCase());
  }

  /** filled/valueLength, never the value itself. */
  function fillOf(el) {
    if (el.localName === 'input' && (el.type === 'checkbox' || el.type === 'radio')) {
      return { filled: el.checked, valueLength: 0 };
    }
    if (el.localName === 'input' && el.type === 'file') {
      const n = el.files ? el.files.length : 0;
      return { filled: n > 0, valueLength: 0 };
    }
    const v = typeof el.value === 'string' ? el.value : '';
    return { filled: v.length > 0, valueLength: v.length };
  }

  function clampInt(v, dflt, lo, hi) {
    const n = Number.isFinite(v) ? Math.floor(v) : dflt;
    return Math.min(hi, Math.max(lo, n));
  }

  // ---- the walk ------------------------------------------------------------------------------

  const SKIP_SUBTREE = new Set(['script', 'style', 'noscript', 'template', 'head', 'svg', 'math']);
  const HEADING_LEVEL = { h1: 1, h2: 2, h3: 3, h4: 4, h5: 5, h6: 6 };
  const HEADING = 1;
  const FORM = 2;
  const FRAME = 3;
  const CONTROL = 4;
  const TAG_KIND = Object.assign(Object.create(null), {
    h1: HEADING, h2: HEADING, h3: HEADING, h4: HEADING, h5: HEADING, h6: HEADING,
    form: FORM, iframe: FRAME, frame: FRAME,
    a: CONTROL, area: CONTROL, button: CONTROL, input: CONTROL, select: CONTROL,
    textarea: CONTROL, summary: CONTROL,
  });

  /**
   * Walks the document and its open shadow roots (depth first, shadow content where its host
   * is) with TreeWalkers, visiting at most maxScan elements. Collects only candidates; the costly
   * facts (layout, names) are computed afterwards for the few that are kept.
   */
  function scan(maxScan) {
    const C = core();
    const out = {
      scanned: 0, shadowRoots: 0, truncated: false,
      actionable: [], headings: [], forms: [], fields: [], iframes: [],
    };
    const visit = (el) => {
      const tag = el.localName;
      const kind = TAG_KIND[tag];
      if (kind === HEADING) out.headings.push(el);
      else if (kind === FORM) out.forms.push(el);
      else if (kind === FRAME) out.iframes.push(el);
      else if (kind === CONTROL) {
        if (isField(el)) out.fields.push(el);
        if (C.isActionable(new Desc(el))) out.actionable.push(el);
        return;
      }
      // Cheap pre-test: most elements are plain containers with no attribute that could make
      // them actionable, and a Desc + six getAttribute calls each would dominate the scan.
      if (!el.hasAttributes()) return;
      if (el.hasAttribute('role') || el.hasAttribute('tabindex') || el.hasAttribute('onclick')
        || el.hasAttribute('contenteditable')) {
        if (kind !== HEADING && el.getAttribute('role') === 'heading') out.headings.push(el);
        if (C.isActionable(new Desc(el))) out.actionable.push(el);
      }
    };
    const walkRoot = (root) => {
      const w = document.createTreeWalker(root, NodeFilter.SHOW_ELEMENT);
      let el = w.firstChild();
      while (el) {
        if (out.scanned >= maxScan) {
          out.truncated = true;
          return;
        }
        let descend = false;
        if (!owns(el)) {
          out.scanned += 1;
          visit(el);
          descend = !SKIP_SUBTREE.has(el.localName);
          const sr = el.shadowRoot;        // open roots only: closed ones are the page's secret
          if (sr && descend) {
            out.shadowRoots += 1;
            walkRoot(sr);
            if (out.truncated) return;
          }
        }
        if (descend && w.firstChild()) {
          el = w.currentNode;
          continue;
        }
        let next = w.nextSibling();
        while (!next) {
          if (!w.parentNode()) return;
          next = w.nextSibling();
        }
        el = next;
      }
    };
    walkRoot(document);
    return out;
  }

  const TEXT_SKIP = new Set(['script', 'style', 'noscript', 'template', 'head', 'title', 'iframe',
    'object', 'embed', 'textarea', 'select', 'input']);
  const TEXT_BLOCK = new Set(['div', 'p', 'li', 'ul', 'ol', 'dl', 'dt', 'dd', 'h1', 'h2', 'h3',
    'h4', 'h5', 'h6', 'section', 'article', 'header', 'footer', 'nav', 'main', 'aside', 'table',
    'tr', 'form', 'fieldset', 'pre', 'blockquote', 'figure', 'figcaption', 'details', 'summary',
    'address', 'br', 'hr', 'dialog']);

  /**
   * The page's rendered text. innerText is what a person sees: no hidden text, no field values,
   * nothing from shadow roots (so never Chaperone's own pill or banner). It costs in proportion to
   * the page (~5–10 ms per 60 KB here), so on a huge page only about `budget` UTF-16 units are
   * rendered: subtrees that fit in what is left are taken whole with innerText, and only the one
   * straddling the limit is descended into. (Per-call overhead makes that slower than one
   * innerText on ordinary pages, hence the threshold.)  → { text, cut }
   */
  function pageText(budget) {
    const root = document.body || document.documentElement;
    if (!root) return { text: '', cut: false };
    if (root.textContent.length <= WHOLE_TEXT_LIMIT) return { text: root.innerText || '', cut: false };
    let out = '';
    const visit = (el) => {
      for (let n = el.firstChild; n && out.length < budget; n = n.nextSibling) {
        if (n.nodeType === 3) {
          out += n.data;
          continue;
        }
        if (n.nodeType !== 1 || owns(n) || TEXT_SKIP.has(n.localName)) continue;
        if (!isVisibleStyle(n)) continue;    // innerText of a hidden element is its raw text
        const sep = TEXT_BLOCK.has(n.localName) ? '\n' : '';
        if (n.textContent.length <= budget - out.length) out += sep + n.innerText + sep;
        else {
          out += sep;
          visit(n);
          out += sep;
        }
      }
    };
    visit(root);
    return { text: out, cut: true };
  }

  const CAPTCHA_CLASSES = ['g-recaptcha', 'h-captcha', 'cf-turnstile'];
  const CAPTCHA_FRAME = /recaptcha|hcaptcha|turnstile|challenges\.cloudflare\.com|arkoselabs|funcaptcha/i;
  const QR = /(^|[^a-z])qr($|[^a-z])|qrcode|qr[-_ ]?code/i;

  function hasCaptcha(iframes) {
    if (CAPTCHA_CLASSES.some((c) => document.getElementsByClassName(c).length > 0)) return true;
    if (iframes.some((f) => CAPTCHA_FRAME.test(f.getAttribute('src') || '') || /captcha/i.test(f.title))) return true;
    return !!document.querySelector('[data-sitekey]');
  }

  function hasQr() {
    // Live collections are cheap to walk; only a bounded number of images is looked at.
    const looks = (el) => ['alt', 'src', 'class', 'id', 'title', 'aria-label', 'name']
      .some((a) => {
        const v = el.getAttribute(a);
        return v !== null && QR.test(a === 'src' ? v.slice(0, 300) : v);
      });
    let n = 0;
    for (const tag of ['img', 'canvas', 'svg']) {
      for (const el of document.getElementsByTagName(tag)) {
        if (++n > 500) return false;
        if (looks(el)) return true;
      }
    }
    return false;
  }

  const SIGN_IN = /\b(sign|log) ?in\b|\bconnexion\b|se connecter|登录|登入/i;

  function rememberCapture(cap) {
    state.captures.delete(cap.captureId);
    state.captures.set(cap.captureId, cap);
    while (state.captures.size > KEEP_CAPTURES) {
      state.captures.delete(state.captures.keys().next().value);
    }
    state.lastCaptureId = cap.captureId;
  }

  // ---- op: context ---------------------------------------------------------------------------

  function opContext(args) {
    const C = core();
    const maxText = clampInt(args.maxTextBytes, MAX_TEXT, 0, MAX_TEXT);
    const maxNodes = clampInt(args.maxNodes, MAX_NODES, 0, MAX_NODES);
    const maxScan = clampInt(args.maxScan, MAX_SCAN, 1, MAX_SCAN);
    const captureId = typeof args.captureId === 'string' && args.captureId
      ? args.captureId : `p${++state.localSeq}`;

    const found = scan(maxScan);
    // The walk went through open shadow roots too: a password field there is as good as any.
    // Checked before anything is computed from the page, so a refusal carries nothing of it.
    if (found.fields.some(shownPassword)) refuseSignIn();
    const ctx = { active: deepActiveElement(), modals: openModals() };
    let truncated = found.truncated;

    // Visible nodes first: in the viewport, then rendered elsewhere, then not rendered. Layout
    // queries cost ~10 µs each, so boxes are measured only when there is something to rank.
    const mustRank = found.actionable.length > maxNodes;
    const ranked = found.actionable.map((el, order) => {
      let rendered = isVisibleStyle(el);
      let rank = rendered ? 1 : 2;
      if (rendered && mustRank) {
        const rect = el.getBoundingClientRect();
        rendered = rect.width > 0 || rect.height > 0;
        rank = rendered ? (inViewport(rect) ? 0 : 1) : 2;
      }
      return { el, order, rendered, rank };
    });
    let kept = ranked;
    if (mustRank) {
      truncated = true;
      kept = ranked.slice().sort((a, b) => a.rank - b.rank || a.order - b.order).slice(0, maxNodes)
        .sort((a, b) => a.order - b.order);
    }
    const renderedSet = new Set(ranked.filter((r) => r.rendered).map((r) => r.el));

    // Everything that gets a ref, each element once: nodes, fields, forms.
    const items = [];
    const indexOf = new Map();
    const want = (el) => {
      let i = indexOf.get(el);
      if (i === undefined) {
        i = items.length;
        indexOf.set(el, i);
        items.push(infoOf(el, ctx));
      }
      return i;
    };
    const nodeIdx = kept.map((r) => want(r.el));
    for (const r of kept) if (!r.rendered) items[indexOf.get(r.el)].state.hidden = true;

    // Forms and their fields (orphans grouped under a form without a ref).
    const byForm = new Map();
    let fieldCount = 0;
    for (const f of found.fields) {
      const form = f.form || null;
      if (!byForm.has(form)) {
        if (byForm.size >= MAX_FORMS + 1) { truncated = true; continue; }
        byForm.set(form, []);
      }
      const list = byForm.get(form);
      if (list.length >= MAX_FIELDS_PER_FORM || fieldCount >= MAX_FIELDS) { truncated = true; continue; }
      list.push(f);
      fieldCount += 1;
    }
    const formList = [];
    for (const form of found.forms) {
      if (formList.length >= MAX_FORMS) { truncated = true; break; }
      formList.push({ form, fields: byForm.get(form) || [] });
    }
    if (byForm.has(null)) formList.push({ form: null, fields: byForm.get(null) });
    const formIdx = formList.map((f) => ({
      form: f.form ? want(f.form) : -1,
      fields: f.fields.map((el) => want(el)),
    }));

    // Refs: identity, then stable key against the previous capture, then fresh.
    const prev = state.lastCaptureId ? state.captures.get(state.lastCaptureId) : null;
    const keys = C.dedupeKeys(items.map((it) => C.stableKey({ ...it, path: pathOf(it.el) })));
    const refs = C.assignRefs(prev ? prev.entries : [], items.map((it, i) => ({
      key: keys[i], knownRef: state.refOf.get(it.el) || null,
    })), {
      alloc: () => `e${++state.nextRef}`,
      canReuse: (p) => {
        const old = p.el.deref();
        return !old || !old.isConnected;
      },
    });
    items.forEach((it, i) => state.refOf.set(it.el, refs[i]));

    const nodes = nodeIdx.map((i) => C.nodeLine(refs[i], items[i]));
    const forms = formList.map((f, k) => {
      const fi = formIdx[k];
      const out = {};
      if (f.form) {
        out.ref = refs[fi.form];
        out.name = f.form.getAttribute('name') || f.form.getAttribute('id') || items[fi.form].name || '';
        out.action = f.form.getAttribute('action') !== null ? f.form.action : '';
        out.method = f.form.method || 'get';
      } else {
        Object.assign(out, { name: '', action: '', method: '' });
      }
      out.fields = fi.fields.map((i) => {
        const el = items[i].el;
        const d = new Desc(el);
        return {
          ref: refs[i],
          name: el.getAttribute('name') || el.getAttribute('id') || '',
          type: el.localName === 'input' ? (el.type || 'text') : el.type || el.localName,
          label: items[i].name,
          required: !!el.required,
          credential: C.isCredentialField(d),
          ...fillOf(el),
        };
      });
      return out;
    });

    const headings = [];
    for (const h of found.headings) {
      if (headings.length >= MAX_HEADINGS) { truncated = true; break; }
      if (!isRendered(h)) continue;
      const level = HEADING_LEVEL[h.localName]
        || clampInt(parseInt(h.getAttribute('aria-level') || '2', 10), 2, 1, 9);
      const text = C.clip(C.collapse(new Desc(h).text), HEADING_TEXT_MAX);
      if (text) headings.push({ level, text });
    }

    const iframes = found.iframes.slice(0, MAX_IFRAMES).map((f, index) => {
      let src = f.getAttribute('src') !== null ? f.src : (f.hasAttribute('srcdoc') ? 'about:srcdoc' : 'about:blank');
      let origin = 'null';
      try { origin = new URL(src).origin; } catch (_) { src = String(src); }
      return { index, name: f.getAttribute('name') || '', title: f.getAttribute('title') || '', src: C.clip(src, C.ATTR_MAX), origin };
    });
    if (found.iframes.length > MAX_IFRAMES) truncated = true;

    // Auth signals: what would make the agent hand the page to the person.
    const renderedField = (el) => renderedSet.has(el) || isRendered(el);
    let passwordField = false;
    let otpField = false;
    const passwordForms = new Set();
    for (const f of found.fields) {
      const d = new Desc(f);
      const isPw = f.localName === 'input' && f.type === 'password';
      if (!isPw && !C.isOtpField(d)) continue;
      if (isPw ? !shownPassword(f) : !renderedField(f)) continue;   // the same test as the refusal
      if (isPw) { passwordField = true; passwordForms.add(f.form); } else otpField = true;
    }
    let signInForm = [...passwordForms].some((f) => f !== null);
    if (!signInForm) {
      for (const el of found.actionable) {
        if (!el.form || !(el.localName === 'button' || el.localName === 'input')) continue;
        const d = new Desc(el);
        if (SIGN_IN.test(C.nameOf(d))) { signInForm = true; break; }
      }
    }
    const auth = {
      passwordField, otpField, signInForm,
      captcha: hasCaptcha(found.iframes),
      qr: hasQr(),
    };

    const raw = pageText(maxText * 2);
    // What was typed into a credential editable is page text too: snapshot-core masks it.
    const editables = found.actionable.filter((el) => el.hasAttribute('contenteditable'))
      .map((el) => Object.assign(new Desc(el), { renderedText: () => el.innerText }));
    const excerpt = C.textExcerpt(C.maskEditables(raw.text, editables), maxText, raw.cut);

    const value = {
      url: location.href,
      title: C.clip(document.title || '', 1000),
      lang: (document.documentElement && document.documentElement.lang) || '',
      text: excerpt.text,
      textTruncated: excerpt.truncated,
      headings, forms, nodes,
      scanned: found.scanned,
      nodeCount: found.actionable.length,
      truncated,
      iframes,
      shadowRoots: found.shadowRoots,
      auth,
      diff: null,
    };
    if (args.diff && prev) value.diff = C.diffNodes(prev.nodes, nodes, prev.text, excerpt.text);

    const refMap = new Map();
    const entries = items.map((it, i) => {
      const w = new WeakRef(it.el);
      refMap.set(refs[i], w);
      return { ref: refs[i], key: keys[i], el: w };
    });
    rememberCapture({ captureId, refs: refMap, entries, nodes, text: excerpt.text, url: location.href });
    return value;
  }

  // ---- ref resolution ------------------------------------------------------------------------

  function resolve(args) {
    let ref = args.ref;
    if (typeof ref !== 'string' || !ref) fail('invalid_params', 'ref must be a non-empty string');
    let captureId = typeof args.captureId === 'string' && args.captureId ? args.captureId : null;
    const colon = ref.lastIndexOf(':');
    if (colon >= 0) {
      if (!captureId) captureId = ref.slice(0, colon);
      ref = ref.slice(colon + 1);
    }
    const cap = state.captures.get(captureId || state.lastCaptureId);
    if (!cap) fail('stale_node', 'that capture is gone from this page; take a new context snapshot');
    const weak = cap.refs.get(ref);
    const el = weak ? weak.deref() : undefined;
    if (!el) fail('stale_node', `no node ${ref} in that capture; take a new context snapshot`);
    if (!el.isConnected || el.ownerDocument !== document) {
      fail('stale_node', `node ${ref} is no longer in the page; take a new context snapshot`);
    }
    return { el, ref, cap };
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

  function inspectAttributes(el) {
    const C = core();
    const out = {};
    const plain = ['id', 'name', 'type', 'role', 'href', 'title', 'placeholder', 'alt', 'autocomplete'];
    for (const n of plain) {
      const v = el.getAttribute(n);
      if (v !== null) out[n] = C.clip(n === 'href' ? hrefOf(el) || v : v, C.ATTR_MAX);
    }
    for (const a of el.attributes) {
      if (a.name.startsWith('aria-')) out[a.name] = C.clip(a.value, C.ATTR_MAX);
    }
    return out;
  }

  // ---- op: inspect ---------------------------------------------------------------------------

  function opInspect(args) {
    const C = core();
    const { el, ref } = resolve(args);
    const ctx = { active: deepActiveElement(), modals: openModals() };
    const info = infoOf(el, ctx);
    const r = el.getBoundingClientRect();
    return {
      ref, tag: info.tag, role: info.role, name: info.name,
      attributes: inspectAttributes(el),
      visible: isRendered(el, r),
      inViewport: inViewport(r),
      inModal: info.inModal,
      state: info.state,
      bounds: { x: Math.round(r.x), y: Math.round(r.y), width: Math.round(r.width), height: Math.round(r.height) },
      credential: C.isCredentialField(new Desc(el)),
    };
  }

  // ---- op: action ----------------------------------------------------------------------------

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

  // ---- settling ------------------------------------------------------------------------------
  //
  // An action answers once the page has settled: the DOM has been quiet for SETTLE_QUIET_MS (every
  // mutation batch starts the window again) AND no request the tab started since the action began
  // is in flight (the worker counts them with webRequest and tells us over a port, args.net; every
  // request start or end starts the window again too). Event-driven: a quiet page answers after
  // one window, a busy one as soon as it stops. SETTLE_CAP_MS bounds it (settled:false), and a
  // navigation away ends it at once (navigating:true). Timers the page set are invisible from here;
  // the window covers the short ones (a 30 ms "saved" message), not a 500 ms debounce.

  const SETTLE_QUIET_MS = 80;
  // Filling, focusing and scrolling act on one element: what they set off (a re-render, a
  // suggestion request) starts in the page's own input handlers, which ran before we wait, and
  // the worker's request count is known before the window closes. A click's 80 ms would make a
  // fill several times slower for nothing. Anything seen at all still waits for the full window.
  // 2 ms covers a re-render the handlers queue as a task; a debounce is not waited for.
  const SETTLE_QUIET_LIGHT_MS = 2;
  const SETTLE_CAP_MS = 3000;
  const OBSERVE = { subtree: true, childList: true, characterData: true, attributes: true };

  const now = () => performance.now();

  /** Calls fn on every open shadow root in the subtree of `node` (itself included), nested too. */
  function eachOpenShadowRoot(node, fn) {
    const visit = (root) => {
      if (root.nodeType === 1 && root.shadowRoot) {
        fn(root.shadowRoot);
        visit(root.shadowRoot);
      }
      const w = document.createTreeWalker(root, NodeFilter.SHOW_ELEMENT);
      for (let el = w.nextNode(); el; el = w.nextNode()) {
        const sr = el.shadowRoot;              // open roots only (and never Chaperone's own, closed)
        if (sr) {
          fn(sr);
          visit(sr);
        }
      }
    };
    visit(node);
  }

  /**
   * Watches the document and its open shadow roots (those added later as well) from the action
   * on: what was added and removed, whether text changed, and when the page last changed.
   */
  function watchMutations() {
    const w = { added: 0, removed: 0, textMutated: false, last: now() };
    const observed = new WeakSet();
    const countEls = (node) => 1 + node.getElementsByTagName('*').length;
    const observe = (root) => {
      if (observed.has(root)) return;
      observed.add(root);
      mo.observe(root, OBSERVE);
    };
    const take = (records) => {
      let active = false;
      for (const r of records) {
        if (owns(r.target)) continue;     // the pill and banner are ours, not the page's
        if (r.type === 'attributes') {
          // Inline style churn is how script animations run; it says nothing about the result.
          if (r.attributeName !== 'style') active = true;
          continue;
        }
        if (r.type === 'characterData') {
          w.textMutated = true;
          active = true;
          continue;
        }
        for (const [list, key] of [[r.addedNodes, 'added'], [r.removedNodes, 'removed']]) {
          for (const n of list) {
            if (owns(n)) continue;
            active = true;
            if (n.nodeType === 3) w.textMutated = true;
            else if (n.nodeType === 1) {
              w[key] += countEls(n);
              if (key === 'added') eachOpenShadowRoot(n, observe);
            }
          }
        }
      }
      if (active) w.last = now();
    };
    const mo = new MutationObserver(take);
    observe(document);
    eachOpenShadowRoot(document, observe);
    w.stop = () => {
      take(mo.takeRecords());
      mo.disconnect();
    };
    return w;
  }

  /**
   * The tab's in-flight request count from the worker (lib/network.js), when it offers one:
   * {known, inflight, last, onChange, sync(), close()}. Without it (no port, port gone) the
   * network counts as quiet and only the DOM decides.
   *
   * An op that came over the page's own port (`via`) hears the count on that port, starting from
   * args.inflight; sync(), called once the action ran, asks the worker for its count as of then
   * and the count is not `known` until it answers (so a request the action started is seen
   * before the page can call itself settled). An op that came by executeScript opens a settle
   * port for the action and waits for the worker's first word on it.
   */
  function watchNetwork(enabled, via, initial) {
    const f = { known: true, inflight: 0, last: -Infinity, onChange: null, sync: () => {}, close: () => {} };
    const changed = () => { if (f.onChange) f.onChange(); };
    if (enabled && via && portHooks && via.port === pagePort) {
      f.inflight = Number.isSafeInteger(initial) && initial > 0 ? initial : 0;
      if (f.inflight > 0) f.last = now();
      let synced = false;
      portHooks.set(via.id, (m) => {
        if (m === null) {                          // the port is gone: nobody counts any more
          f.known = true;
          f.inflight = 0;
          changed();
          return;
        }
        const net = m.net && typeof m.net === 'object' ? m.net : {};
        const n = Number.isSafeInteger(net.inflight) && net.inflight > 0 ? net.inflight : 0;
        const inflight = net.watching === false ? 0 : n;
        if (m.synced !== undefined) {
          synced = true;
          f.known = true;
        } else {
          f.last = now();                          // a request started or ended: the window starts again
        }
        f.inflight = inflight;
        changed();
      });
      f.sync = () => {
        f.known = false;
        // A macrotask first: what the page's handlers start in their microtasks has started.
        setTimeout(() => {
          if (synced || f.known) return;
          try {
            via.port.postMessage({ id: via.id, sync: 1 });
          } catch (_) {
            f.known = true;                        // the port is gone; its disconnect says the rest
            changed();
          }
        }, 0);
      };
      f.close = () => { portHooks.delete(via.id); };
      return f;
    }
    let port = null;
    try {
      const rt = enabled && globalThis.chrome && globalThis.chrome.runtime;
      if (rt && typeof rt.connect === 'function') port = rt.connect({ name: 'chaperone.settle' });
    } catch (_) {
      port = null;                         // an orphaned content script (extension reloaded)
    }
    if (!port) return f;
    f.known = false;                       // until the worker's first word: requests may be running
    let first = true;
    port.onMessage.addListener((m) => {
      const n = m && Number.isSafeInteger(m.inflight) && m.inflight > 0 ? m.inflight : 0;
      if (!first || n > 0) f.last = now();  // a request started or ended: the window starts again
      first = false;
      f.known = true;
      f.inflight = m && m.watching === false ? 0 : n;
      changed();
    });
    port.onDisconnect.addListener(() => {
      f.known = true;
      f.inflight = 0;
      changed();
    });
    f.close = () => {
      try { port.disconnect(); } catch (_) { /* gone already */ }
    };
    return f;
  }

  /**
   * Notes when the document starts navigating to another document (or is hidden):
   * {gone, onAway, stop()}.
   */
  function watchNavigation() {
    const nav = globalThis.navigation;
    const w = { gone: false, onAway: null, stop: () => {} };
    const onAway = () => {
      if (w.gone) return;
      w.gone = true;
      if (w.onAway) w.onAway();
    };
    const onNavigate = (e) => {
      if (!e || (e.destination && e.destination.sameDocument)) return;   // a route change: keep waiting
      if (e.downloadRequest !== null && e.downloadRequest !== undefined) return;
      // The page may still cancel it or take it over (Navigation API intercept): look once the
      // event is through, and not a task later: a fast navigation leaves no time to answer.
      queueMicrotask(() => {
        if (!e.defaultPrevented && !(nav && nav.transition)) onAway();
      });
    };
    const onHide = () => onAway();
    if (nav && typeof nav.addEventListener === 'function') nav.addEventListener('navigate', onNavigate);
    window.addEventListener('pagehide', onHide);
    w.stop = () => {
      if (nav && typeof nav.removeEventListener === 'function') nav.removeEventListener('navigate', onNavigate);
      window.removeEventListener('pagehide', onHide);
    };
    return w;
  }

  /**
   * Resolves {settled, navigating} once DOM and network are both quiet, or at the cap, or at once
   * when `away` reports a navigation (watched from before the action: a link's click starts it
   * synchronously).
   */
  function settle(mutations, network, away, quietMs) {
    return new Promise((resolve) => {
      const started = now();
      let timer = null;
      let ended = false;
      let cap = null;
      const finish = (settled, navigating) => {
        if (ended) return;
        ended = true;
        clearTimeout(timer);
        clearTimeout(cap);
        away.onAway = null;
        network.onChange = null;
        resolve({ settled, navigating });
      };
      const check = () => {
        timer = null;
        if (ended) return;
        if (away.gone) {
          finish(false, true);
          return;
        }
        if (!network.known || network.inflight > 0) return;    // the next network word checks again
        // The light window holds only while nothing at all happened after the action itself.
        const busy = mutations.last > started || network.last > started;
        const windowMs = busy ? SETTLE_QUIET_MS : quietMs;
        const quiet = now() - Math.max(mutations.last, network.last);
        if (quiet >= windowMs) {
          finish(true, false);
          return;
        }
        // Mutations meanwhile move `last` on; this timer then waits out the rest of the window.
        timer = setTimeout(check, Math.ceil(windowMs - quiet));
      };
      network.onChange = () => { if (!timer) check(); };
      away.onAway = () => finish(false, true);
      cap = setTimeout(() => finish(false, false), SETTLE_CAP_MS);
      check();
    });
  }

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

  /** What the form would send, as the hold card shows it: ≤ 30 fields, secrets by length only. */
  function holdFields(form) {
    const C = core();
    const out = [];
    if (!form) return out;
    for (const f of Array.from(form.elements || [])) {
      if (out.length >= HOLD_FIELDS_MAX) break;
      const tag = f.localName;
      if (tag !== 'input' && tag !== 'textarea' && tag !== 'select') continue;
      const type = (f.getAttribute('type') || '').trim().toLowerCase();
      if (tag === 'input' && ['submit', 'button', 'reset', 'image'].includes(type)) continue;
      if ((type === 'checkbox' || type === 'radio') && !f.checked) continue;
      let label = '';
      for (const l of f.labels || []) label += ' ' + labelTextOf(l, f);
      const name = cut(squash(label) || squash(f.getAttribute('aria-label')) || squash(f.getAttribute('name')), HOLD_NAME_MAX);
      const value = type === 'file' ? Array.from(f.files || [], (x) => x.name).join(', ') : String(f.value ?? '');
      if (C.isCredentialField(new Desc(f))) out.push({ name, secret: true, length: value.length });
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

  /** The held answer: the card's fields and the canonical string the approval is about. */
  function holdOf(cls, desc, form) {
    const control = cut(squash(desc.label || desc.text || desc.value || desc.title || desc.name), HOLD_CONTROL_MAX);
    const fields = holdFields(form);
    const canonical = cut(JSON.stringify({
      url: pageUrl(), kind: cls.kind, control, formMethod: desc.formMethod || '',
      formAction: desc.formAction || '', fields,
    }), CANONICAL_MAX);
    return { kind: cls.kind, reason: cls.reason, word: cls.word ?? null, control, site: location.origin, fields, canonical };
  }

  /** The hold the target of a click would get (kind 'none': nothing to hold). */
  function classifyTarget(el) {
    const O = outwardLib();
    const desc = O.describe(el);
    const cls = O.classify(desc);
    return { desc, cls, form: formOf(el) };
  }

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

  /**
   * {step, of} of a plan when both are whole numbers with 1 ≤ step ≤ of ≤ 20, else {} — the
   * worker checks them too; a page op never trusts its arguments to render or report.
   */
  function planStep(v) {
    if (!v || typeof v !== 'object') return {};
    const { step, of } = v;
    if (!Number.isSafeInteger(step) || !Number.isSafeInteger(of)) return {};
    if (step < 1 || step > of || of > PLAN_MAX_STEPS) return {};
    return { step, of };
  }

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
    const answer = { action: args.action, ref, done: true, changes };
    if (planUsed) {
      // Which step of the plan this write was, for the pill ("plan step 2 of 3") and the app.
      answer.plan = { planId: String(args.allow.planId ?? ''), site: location.hostname, ...planStep(args.allow) };
    }
    return answer;
  }

  // ---- Chaperone's own UI: pill and handoff banner (content/page-ui.js) ----------------------
  //
  // The arguments are checked here; page-ui.js draws them, keeps them on screen and decides which
  // clicks on them count.

  const REASONS = ['qr', 'mfa', 'captcha', 'device', 'login', 'other'];

  function opPill(args) {
    if (!args.show) {
      ui().hidePill();
      return { shown: false };
    }
    const step = Number.isFinite(args.step) ? Math.max(0, Math.floor(args.step)) : null;
    const plan = planStep(args.plan);
    const out = ui().showPill({
      step,
      plan: plan.step ? plan : null,        // bad plan numbers are dropped, never shown
      stopped: !!args.stopped,
      shortcut: args.shortcut,              // the browser's Stop shortcut, from the worker
    });
    if (plan.step) out.plan = { ...plan };
    return out;
  }

  function opHandoff(args) {
    if (!args.show) {
      const shown = ui().hideBanner(args.handoffId || null);
      return { shown, handoffId: args.handoffId || null };
    }
    if (typeof args.handoffId !== 'string' || !args.handoffId) fail('invalid_params', 'handoffId must be a non-empty string');
    const reason = REASONS.includes(args.reason) ? args.reason : 'other';
    const message = core().clip(core().collapse(typeof args.message === 'string' ? args.message : ''), MESSAGE_MAX);
    return ui().showBanner({ handoffId: args.handoffId, reason, message });
  }

  // ---- entry point ---------------------------------------------------------------------------

  const OPS = { context: opContext, inspect: opInspect, action: opAction, pill: opPill, handoff: opHandoff };
  // The ops that read or act for an agent: refused on a sign-in page. The pill and the banner are
  // Chaperone talking to the person, and the login handoff needs its banner on exactly that page.
  const FLOORED = new Set(['context', 'inspect', 'action']);

  async function run(op, args, via) {
    try {
      if (!core()) fail('internal', 'snapshot-core.js is not loaded in this page');
      if (!ui()) fail('internal', 'page-ui.js is not loaded in this page');
      const fn = Object.prototype.hasOwnProperty.call(OPS, op) ? OPS[op] : null;
      if (!fn) fail('unknown_method', `unknown page op ${String(op).slice(0, 40)}`);
      const a = args && typeof args === 'object' ? args : {};
      if (FLOORED.has(op) && showsPassword()) refuseSignIn();   // before any ref, text or act
      return { ok: true, value: await fn(a, via) };
    } catch (e) {
      if (e instanceof PageError) {
        const error = { code: e.code, message: e.message };
        if (e.data !== undefined) error.data = e.data;
        return { ok: false, error };
      }
      // Anything else is our bug or a hostile page; say what kind without page data.
      return { ok: false, error: { code: 'internal', message: `page agent failed (${e && e.name ? e.name : 'error'})` } };
    }
  }

  // ---- the page's own port -------------------------------------------------------------------
  //
  // After the first op (which comes by executeScript) the worker asks the agent to open a
  // long-lived port; Chrome tells the worker this document's documentId with it, and the worker
  // sends this document's ops on it from then on: {id, op, args} in, {id, reply} out, and for an
  // action also the tab's request count ({id, net}, {id, synced, net}). The port dies with the
  // document (navigation, back/forward cache, frame removed) or the worker; the worker then fails
  // what was pending as stale_document and comes back by executeScript, which reopens it.

  let pagePort = null;
  let portHooks = null;                    // op id → the settle wait's hook for {net} messages

  function connect() {
    if (pagePort) return true;
    let port = null;
    try {
      const rt = globalThis.chrome && globalThis.chrome.runtime;
      if (!rt || typeof rt.connect !== 'function' || !rt.id) return false;
      port = rt.connect({ name: 'chaperone.page' });
    } catch (_) {
      return false;                        // an orphaned content script (extension reloaded)
    }
    if (!port) return false;
    pagePort = port;
    const hooks = new Map();
    portHooks = hooks;
    port.onMessage.addListener((m) => {
      if (!m || typeof m !== 'object' || !Number.isSafeInteger(m.id)) return;
      if (typeof m.op === 'string') {
        const id = m.id;
        run(m.op, m.args, { port, id }).then((reply) => {
          try { port.postMessage({ id, reply }); } catch (_) { /* the worker fails it as stale */ }
        });
        return;
      }
      const hook = hooks.get(m.id);
      if (hook) hook(m);
    });
    port.onDisconnect.addListener(() => {
      if (pagePort === port) {
        pagePort = null;
        portHooks = null;
      }
      for (const hook of [...hooks.values()]) hook(null);
      hooks.clear();
    });
    return true;
  }

  Object.defineProperty(globalThis, '__chaperonePage', {
    value: Object.freeze({ version: 1, run: (op, args) => run(op, args), connect }),
    writable: false, configurable: false, enumerable: false,
  });
})();
