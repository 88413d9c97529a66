// SPDX-License-Identifier: GPL-3.0-or-later
// The page agent's reading: the `context` op (the snapshot: one walk of the document and its open
// shadow roots, refs that keep their names from one capture to the next, forms, headings, frames,
// the text, the signs of a sign-in) and the `inspect` op (one node in detail). Nothing here
// changes the page. The agent tools browser_snapshot and browser_inspect end here.

(function () {
  'use strict';

  if (globalThis.__chaperonePage) return;   // installed already: the first install wins
  const P = globalThis.ChaperonePageParts;
  if (!P) return;                           // page-common.js did not run: nothing installs

  const { core, owns, state, Desc, inheritedDoc, frameOf, frameChain, composedContains, deepActiveElement,
    isVisibleStyle, isRendered, shownPassword, refuseSignIn, openModals, isDisabled, resolve,
    lookOf, roleAndName } = P;

  const KEEP_CAPTURES = 4;             // per document (this isolated world lives as long as it)
  const MAX_TEXT = 20480;
  const MAX_NODES = 2000;           // every actionable node of a 10,000-element page; the app pages them
  const MAX_SCAN = 10000;
  const MAX_HEADINGS = 100;
  const MAX_FORMS = 20;
  const MAX_FIELDS_PER_FORM = 50;
  const MAX_FIELDS = 200;
  const MAX_IFRAMES = 50;
  const WHOLE_TEXT_LIMIT = 512 * 1024;   // characters of textContent
  const HEADING_TEXT_MAX = 200;

  function inViewport(rect) {
    return rect.bottom > 0 && rect.right > 0 && rect.top < innerHeight && rect.left < innerWidth;
  }

  /**
   * The ancestor chain used in stable keys: up to 4 ancestors, tag#id, '/' at shadow roots, '^'
   * where an inlined frame's document sits in its <iframe>.
   */
  function pathOf(el) {
    const parts = [];
    let n = el.parentNode;
    while (n && parts.length < 4) {
      if (n.nodeType === 11) {
        parts.push('/');
        n = n.host;
        continue;
      }
      if (n.nodeType === 9) {
        const fe = frameOf(n);
        if (!fe) break;
        parts.push('^');
        n = fe;
        continue;
      }
      if (n.nodeType !== 1) break;
      const id = n.getAttribute('id');
      parts.push(id ? `${n.localName}#${id}` : n.localName);
      n = n.parentNode;
    }
    return parts.reverse().join('>');
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
    if (state.clickable.has(el)) s.clickable = true;
    // Something to drag (browser_act's drag), and nothing else its markup makes actionable
    // (page-common.js lookOf): the app lists those for a query only. A control or a list item
    // the markup makes actionable is listed as it was, draggable or not.
    if (state.draggable.has(el)) s.draggable = true;
    if (role === 'slider' || (role === 'spinbutton' && tag !== 'input')) positionOf(el, tag, s);
    return s;
  }

  /**
   * Where a slider's thumb is (a widget's spin button's value too), with its bounds: a control's
   * state, as checked is — what an agent moving it with the arrow keys must see. Numbers only:
   * aria-valuetext is the page's free text. A native number field is typed text, never shown.
   */
  function positionOf(el, tag, s) {
    const native = tag === 'input' && el.type === 'range';
    const num = (v) => (v !== null && v !== '' && Number.isFinite(Number(v)) && String(v).length <= 12 ? String(Number(v)) : null);
    const value = num(native ? el.value : el.getAttribute('aria-valuenow'));
    if (value === null) return;
    s.value = value;
    const min = num(native ? (el.min || '0') : el.getAttribute('aria-valuemin'));
    const max = num(native ? (el.max || '100') : el.getAttribute('aria-valuemax'));
    if (min !== null) s.min = min;
    if (max !== null) s.max = max;
  }

  function hrefOf(el) {
    if ((el.localName !== 'a' && el.localName !== 'area') || !el.hasAttribute('href')) return undefined;
    if (typeof el.href === 'string') return el.href;
    // An SVG link (in a drawing the walk enters): its href is an animated string, resolved here.
    try {
      return new URL(el.getAttribute('href'), el.baseURI).href;
    } catch (_) {
      return undefined;
    }
  }

  // A record list's item — a list item, a grid's or data table's row, a feed's article: what
  // page-holds.js LIST_ITEM says a page adds — is one record, and its controls and headings name
  // it ("Call Alice Smith"): the site memory never learns them (inList). A header row, or a row
  // of a table laid out for looks, holds no record; a navigation's list may (a chat's contacts).
  // `seen`: item → whether it is a record, for one capture (a row's test reads its cells).
  const isRecord = (item) => (item.localName !== 'tr' && item.getAttribute('role') !== 'row')
    || (item.querySelector('td, [role=cell], [role=gridcell]') !== null
      && !item.closest('thead, table[role=presentation], table[role=none]'));
  function inRecordList(el, seen = new Map()) {
    for (let n = el; n;) {
      const item = n.closest(P.LIST_ITEM);
      if (item && !seen.has(item)) seen.set(item, isRecord(item));
      if (item && seen.get(item)) return true;
      n = (item ? item.parentElement : null) || (item || n).getRootNode().host;
    }
    return false;
  }

  /** Role, name, state … of one element: the facts a node line is made of. */
  function infoOf(el, ctx) {
    const { role, name } = roleAndName(el);
    return {
      el, tag: el.localName, role, name,
      state: stateOf(el, role, ctx.active),
      href: hrefOf(el),
      inModal: ctx.modals.length > 0 && ctx.modals.some((m) => composedContains(m, el)),
      inList: inRecordList(el, ctx.records),
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
  // An SVG is skipped (an icon's paths are nothing to act on) unless it is a drawing a person
  // works in, DRAWING_PX or more on both sides — Node-RED's flow canvas, a chart — whose nodes and
  // bars may be clickable by their look.
  const DRAWING_PX = 160;
  const isDrawing = (el) => {
    const r = el.getBoundingClientRect();
    return r.width >= DRAWING_PX && r.height >= DRAWING_PX;
  };
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

  // A data table's row — in its body, with cells, and no control of its own — is listed as
  // `row "its cells"`: a person clicks a row to open or pick what it shows, and nothing in the
  // markup says whether it can be (a Vue or React table's handler is a listener). Its cells'
  // words are then not repeated in the text. At most ROWS_PER_WALK, and none longer than
  // ROW_TEXT_MAX characters (a layout table's row holds a page, not a record).
  const ROWS_PER_WALK = 200;
  const ROW_TEXT_MAX = 300;
  const ROW_CONTROL = 'a[href],button,input,select,textarea,summary,[tabindex],[contenteditable],[role=button],'
    + '[role=link],[role=checkbox],[role=radio],[role=switch],[role=menuitem],[role=tab],[role=option]';

  function dataRow(el, walk) {
    const body = el.parentElement;
    if (!body || (body.localName !== 'tbody' && body.localName !== 'table')) return false;
    const role = el.getAttribute('role');
    if ((role !== null && role !== 'row') || !el.querySelector(':scope > td')) return false;
    if (el.getAttribute('aria-hidden') === 'true' || el.hasAttribute('inert')) return false;
    if ((walk.rows = (walk.rows || 0) + 1) > ROWS_PER_WALK) return false;
    const text = el.textContent || '';
    if (text.length > ROW_TEXT_MAX * 8 || !/\S/.test(text)) return false;
    if (text.replace(/\s+/g, ' ').trim().length > ROW_TEXT_MAX) return false;
    return !el.querySelector(ROW_CONTROL);
  }

  /**
   * Walks the document and its open shadow roots (depth first, shadow content where its host
   * is) with TreeWalkers, visiting at most maxScan elements. Collects only candidates; the costly
   * facts (layout, names) are computed afterwards for the few that are kept.
   */
  function scan(maxScan) {
    const C = core();
    const out = {
      scanned: 0, shadowRoots: 0, truncated: false,
      actionable: [], headings: [], forms: [], fields: [], iframes: [], inlined: new Map(),
      roots: [document],
    };
    const visit = (el) => {
      const tag = el.localName;
      const kind = TAG_KIND[tag];
      if (kind === HEADING) out.headings.push(el);
      else if (kind === FORM) out.forms.push(el);
      else if (kind === FRAME) {
        out.iframes.push(el);
        // A frame that is part of this page (page-common.js inheritedDoc): its document is
        // walked where the frame is, as a shadow root is.
        const doc = inheritedDoc(el);
        if (doc) out.inlined.set(el, doc);
        return;
      }
      else if (kind === CONTROL) {
        if (isField(el)) out.fields.push(el);
        if (C.isActionable(new Desc(el))) out.actionable.push(el);
        return;
      }
      // Cheap pre-test: most elements are plain containers with no attribute that could make
      // them actionable, and a Desc + six getAttribute calls each would dominate the scan.
      if (!el.hasAttributes()) {
        if (tag === 'tr' && dataRow(el, out)) out.actionable.push(el);
        return;
      }
      let actionable = false;
      if (el.hasAttribute('role') || el.hasAttribute('tabindex') || el.hasAttribute('onclick')
        || el.hasAttribute('contenteditable')) {
        if (kind !== HEADING && el.getAttribute('role') === 'heading') out.headings.push(el);
        actionable = C.isActionable(new Desc(el));
      }
      if (actionable) {                              // the markup says what it is now
        state.clickable.delete(el);
        state.draggable.delete(el);
      }
      if (actionable || (kind !== FORM && lookOf(el, out))) out.actionable.push(el);
      else if (tag === 'tr' && dataRow(el, out)) out.actionable.push(el);
    };
    const walkRoot = (root, depth = 0) => {
      const w = (root.ownerDocument || root).createTreeWalker(root, NodeFilter.SHOW_ELEMENT);
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
          descend = !SKIP_SUBTREE.has(el.localName) || (el.localName === 'svg' && isDrawing(el));
          const sr = el.shadowRoot;        // open roots only: closed ones are the page's secret
          if (sr && descend) {
            out.shadowRoots += 1;
            out.roots.push(sr);
            walkRoot(sr, depth);
            if (out.truncated) return;
          }
          const inner = out.inlined.get(el);
          if (inner && depth < 4) {
            out.roots.push(inner);
            walkRoot(inner, depth + 1);
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
   * How much text `root` holds outside scripts, styles and the like, counted only until past
   * `limit`: a walk over its text nodes that stops there, where textContent builds the whole
   * string, scripts' included. Node-RED keeps its nodes' templates (a megabyte of text) in script
   * elements inside its editor: their textContent made every snapshot read the page as huge
   * (pageText below), 10 ms a snapshot for lengths.
   */
  function textLength(root, limit) {
    const walker = root.ownerDocument.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    let size = 0;
    for (let t = walker.nextNode(); t && size <= limit; t = walker.nextNode()) {
      if (!TEXT_SKIP.has(t.parentNode.localName)) size += t.data.length;
    }
    return size;
  }

  /**
   * How much text `root`'s children could show, counted until past `limit`: scripts, styles and
   * children hidden by style left out. TiddlyWiki keeps its whole store (megabytes of JSON) in
   * a script in the body; the body's textContent cost 16 ms there at every snapshot.
   */
  function textSize(root, limit) {
    let size = 0;
    for (let n = root.firstChild; n && size <= limit; n = n.nextSibling) {
      if (n.nodeType === 3) size += n.data.length;
      else if (n.nodeType === 1 && !TEXT_SKIP.has(n.localName) && !owns(n) && isVisibleStyle(n)) size += textLength(n, limit - size);
    }
    return size;
  }

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
    if (textSize(root, WHOLE_TEXT_LIMIT) <= WHOLE_TEXT_LIMIT) return { text: root.innerText || '', cut: false };
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
        if (textLength(n, budget - out.length) <= budget - out.length) out += sep + n.innerText + sep;
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

  /** Keeps `cap`; it is what a ref without a capture id means from now on unless `last` is false. */
  function rememberCapture(cap, last = true) {
    state.captures.delete(cap.captureId);
    state.captures.set(cap.captureId, cap);
    while (state.captures.size > KEEP_CAPTURES) state.captures.delete(state.captures.keys().next().value);
    if (last) state.lastCaptureId = cap.captureId;
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
    // Where an act's changes can happen: the settle watches these instead of walking the whole
    // document again for shadow roots at every act (page-settle.js). A cut scan knows only some.
    P.knownRoots = found.truncated ? null : found.roots;
    // The walk went through open shadow roots too: a password field there is as good as any.
    // Checked before anything is computed from the page, so a refusal carries nothing of it.
    if (found.fields.some(shownPassword)) refuseSignIn();
    const ctx = { active: deepActiveElement(), modals: openModals(), records: new Map() };
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
      if (text) headings.push(inRecordList(h, ctx.records) ? { level, text, inList: true } : { level, text });
    }

    const listed = found.iframes.slice(0, MAX_IFRAMES);
    const iframes = listed.map((f, index) => {
      let src = f.getAttribute('src') !== null ? f.src : (f.hasAttribute('srcdoc') ? 'about:srcdoc' : 'about:blank');
      let origin = 'null';
      try { origin = new URL(src).origin; } catch (_) { src = String(src); }
      // `parent`: the index of the frame of the page it is in (-1: in the page itself), so the
      // worker pairs a frame in a frame with the browser's own (two about:srcdoc look alike).
      const entry = { index, parent: listed.indexOf(frameOf(f.ownerDocument)), name: f.getAttribute('name') || '',
        title: f.getAttribute('title') || '', src: C.clip(src, C.ATTR_MAX), origin };
      const inner = found.inlined.get(f);
      if (inner) {
        // Read here, in this snapshot: the worker lists it as readable under this page's grant.
        entry.inline = true;
        entry.docUrl = C.clip(String(inner.URL || ''), C.ATTR_MAX);
      }
      return entry;
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
    // The text of frames that are part of this page, after the page's own (innerText leaves
    // frames out), each shown only when its frame is.
    for (const [frame, doc] of found.inlined) {
      if (raw.text.length >= maxText * 2) break;
      const body = doc.body;
      if (!body || !isRendered(frame)) continue;
      const t = body.innerText || '';
      if (t.trim()) raw.text += '\n' + t.slice(0, maxText * 2 - raw.text.length);
    }
    // What was typed into a credential editable is page text too: snapshot-core masks it.
    const editables = found.actionable.filter((el) => el.hasAttribute('contenteditable'))
      .map((el) => Object.assign(new Desc(el), { renderedText: () => el.innerText }));
    const masked = C.maskEditables(raw.text, editables);
    const excerpt = C.textExcerpt(masked, maxText, raw.cut);

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
    // After a wait for words (browser_snapshot's `until`): the lines that hold them, from all of
    // the text, which the app shows first; the excerpt may have cut them (a tooltip drawn last).
    if (typeof args.until === 'string') {
      value.untilLines = C.foundLines(C.normalizeText(masked, WHOLE_TEXT_LIMIT).text, args.until);
    }

    const refMap = new Map();
    const entries = items.map((it, i) => {
      const w = new WeakRef(it.el);
      refMap.set(refs[i], w);
      return { ref: refs[i], key: keys[i], el: w };
    });
    // last:false, a batch's own look (capabilities/batch.js): a ref without a capture id still
    // means the agent's last capture.
    rememberCapture({ captureId, refs: refMap, entries, nodes, text: excerpt.text, url: location.href }, args.last !== false);
    return value;
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

  /** A node's box in this page's viewport, through the frames that are part of the page. */
  function pageBounds(el, r) {
    let x = r.x;
    let y = r.y;
    for (const fe of frameChain(el)) {
      const fr = fe.getBoundingClientRect();
      x += fr.left + fe.clientLeft;
      y += fr.top + fe.clientTop;
    }
    return { x: Math.round(x), y: Math.round(y), width: Math.round(r.width), height: Math.round(r.height) };
  }

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
      bounds: pageBounds(el, r),
      credential: C.isCredentialField(new Desc(el)),
    };
  }

  Object.assign(P, { opContext, opInspect, scan, rememberCapture, MAX_SCAN });
})();
