// SPDX-License-Identifier: GPL-3.0-or-later
// Chaperone page snapshot: the pure parts (no DOM, no chrome.*), shared by page-agent.js and the
// Node tests. A classic script on purpose: chrome.scripting.executeScript({files}) injects classic
// scripts only, so there is no import/export; it publishes one global. Plain `import` of this file
// from Node also works (it is strict-mode clean and touches nothing but globalThis).
//
// Elements are described by small "element-like" objects so the rules can be tested without a
// browser:  { tag, attr(name) | attrs:{}, text, labelText, labelledByText }
// where text/labelText/labelledByText may be strings or functions (the page agent passes functions
// so that costly text is computed only for the few nodes that need a name).

(function () {
  'use strict';

  const NAME_MAX = 160;          // characters (code points) of an accessible name
  const ATTR_MAX = 500;          // characters of an attribute value reported by inspect
  const FOUND_LINE_MAX = 300;    // characters of a line found for an `until` (the app cuts text lines there)

  // Roles a person can act on. An element with one of these (explicit or implicit) is actionable.
  const INTERACTIVE_ROLES = new Set([
    'button', 'link', 'checkbox', 'radio', 'switch', 'tab', 'menuitem', 'menuitemcheckbox',
    'menuitemradio', 'option', 'textbox', 'searchbox', 'combobox', 'listbox', 'slider',
    'spinbutton', 'treeitem', 'gridcell', 'scrollbar',
  ]);

  // Roles whose accessible name comes from their content (WAI-ARIA "name from: contents").
  const NAME_FROM_CONTENT = new Set([
    'button', 'link', 'heading', 'option', 'tab', 'menuitem', 'menuitemcheckbox', 'menuitemradio',
    'checkbox', 'radio', 'switch', 'treeitem', 'cell', 'gridcell', 'columnheader', 'rowheader',
    'row', 'tooltip', 'term', 'caption', 'legend',
  ]);

  // Explicit roles we recognise; anything else in role="" falls back to the implicit role.
  const KNOWN_ROLES = new Set([
    ...INTERACTIVE_ROLES, ...NAME_FROM_CONTENT,
    'alert', 'alertdialog', 'application', 'article', 'banner', 'complementary', 'contentinfo',
    'dialog', 'document', 'feed', 'figure', 'form', 'generic', 'grid', 'group', 'img', 'list',
    'log', 'main', 'marquee', 'math', 'menu', 'menubar', 'meter', 'navigation', 'none', 'note',
    'paragraph', 'presentation', 'progressbar', 'radiogroup', 'region', 'rowgroup', 'search',
    'separator', 'status', 'table', 'tablist', 'tabpanel', 'timer', 'toolbar', 'tree', 'treegrid',
  ]);

  const INPUT_ROLES = {
    button: 'button', submit: 'button', reset: 'button', image: 'button', file: 'button',
    checkbox: 'checkbox', radio: 'radio', range: 'slider', number: 'spinbutton',
    search: 'searchbox', hidden: 'none',
  };

  const TAG_ROLES = {
    button: 'button', select: 'combobox', textarea: 'textbox', option: 'option', summary: 'button',
    details: 'group', dialog: 'dialog', h1: 'heading', h2: 'heading', h3: 'heading', h4: 'heading',
    h5: 'heading', h6: 'heading', nav: 'navigation', main: 'main', aside: 'complementary',
    header: 'banner', footer: 'contentinfo', form: 'form', ul: 'list', ol: 'list', li: 'listitem',
    table: 'table', tr: 'row', td: 'cell', th: 'columnheader', article: 'article',
    progress: 'progressbar', meter: 'meter', hr: 'separator', fieldset: 'group', p: 'paragraph',
    iframe: 'iframe', search: 'search', menu: 'list', output: 'status',
  };

  const enc = new TextEncoder();

  function attrOf(d, name) {
    if (typeof d.attr === 'function') return d.attr(name);
    const v = d.attrs ? d.attrs[name] : undefined;
    return v === undefined || v === null ? null : String(v);
  }

  function lazy(v) {
    return typeof v === 'function' ? v() : v;
  }

  function tagOf(d) {
    return String(d.tag || '').toLowerCase();
  }

  /** Collapses whitespace runs to one space and trims. */
  function collapse(s) {
    return String(s ?? '').replace(/\s+/g, ' ').trim();
  }

  /** Cuts `s` to at most `max` code points, never inside a surrogate pair; adds '…' if cut. */
  function clip(s, max) {
    s = String(s ?? '');
    if (s.length <= max) return s;
    let end = max;
    const c = s.charCodeAt(end - 1);
    if (c >= 0xd800 && c <= 0xdbff) end -= 1;   // don't leave half a pair behind
    return s.slice(0, end) + '…';
  }

  function inputType(d) {
    const t = (attrOf(d, 'type') || 'text').toLowerCase().trim();
    return t || 'text';
  }

  /** The implicit (native) ARIA role of an element. */
  function implicitRole(d) {
    const tag = tagOf(d);
    if (tag === 'a' || tag === 'area') return attrOf(d, 'href') !== null ? 'link' : 'generic';
    if (tag === 'input') {
      const t = inputType(d);
      if (INPUT_ROLES[t]) return INPUT_ROLES[t];
      return attrOf(d, 'list') !== null ? 'combobox' : 'textbox';
    }
    if (tag === 'select') {
      const size = parseInt(attrOf(d, 'size') || '0', 10);
      return attrOf(d, 'multiple') !== null || size > 1 ? 'listbox' : 'combobox';
    }
    if (tag === 'img') return attrOf(d, 'alt') === '' ? 'presentation' : 'img';
    if (tag === 'section') return attrOf(d, 'aria-label') || attrOf(d, 'aria-labelledby') ? 'region' : 'generic';
    if (TAG_ROLES[tag]) return TAG_ROLES[tag];
    if (isContentEditable(d)) return 'textbox';
    return 'generic';
  }

  function isNativelyFocusable(d) {
    const tag = tagOf(d);
    if (tag === 'a' || tag === 'area') return attrOf(d, 'href') !== null;
    return tag === 'button' || tag === 'input' || tag === 'select' || tag === 'textarea'
      || tag === 'summary' || attrOf(d, 'tabindex') !== null;
  }

  // The roles a page puts on an editor that say nothing of it being one (Etherpad's editor is
  // `<body role="application" contenteditable>`): contenteditable with one of these is a textbox,
  // what an agent must know of it being that it takes text. Any other role (a grid, a menu, a
  // heading made editable) keeps its own.
  const EDITOR_FRAME_ROLES = new Set(['application', 'document', 'region', 'group', 'generic', 'none', 'presentation']);

  /** The computed role: the first recognised token of role="", else the implicit role (above). */
  function roleOf(d) {
    const explicit = attrOf(d, 'role');
    if (explicit) {
      for (const token of explicit.toLowerCase().split(/\s+/)) {
        if (!KNOWN_ROLES.has(token)) continue;
        // ARIA: none/presentation is ignored on focusable elements (it would hide a control).
        if ((token === 'none' || token === 'presentation') && isNativelyFocusable(d)) break;
        if (EDITOR_FRAME_ROLES.has(token) && isContentEditable(d)) return 'textbox';
        return token;
      }
    }
    return implicitRole(d);
  }

  function isContentEditable(d) {
    const ce = attrOf(d, 'contenteditable');
    if (ce === null) return false;
    const v = ce.toLowerCase();
    return v === '' || v === 'true' || v === 'plaintext-only';
  }

  /**
   * The accessible name, simplified from accname 1.2: aria-labelledby, aria-label, native label
   * (label, alt, button value), content for name-from-content roles, title, placeholder.
   * A text field's own value is never its name.
   */
  function nameOf(d, role) {
    role = role || roleOf(d);
    const tag = tagOf(d);
    const pick = (v) => {
      const c = collapse(v);
      return c ? clip(c, NAME_MAX) : '';
    };
    let n = pick(lazy(d.labelledByText));
    if (n) return n;
    n = pick(attrOf(d, 'aria-label'));
    if (n) return n;
    if (tag === 'input') {
      const t = inputType(d);
      if (t === 'submit' || t === 'reset' || t === 'button') {
        // A button's value is its visible caption, not user data.
        const v = attrOf(d, 'value');
        if (v !== null && collapse(v)) return pick(v);
        if (t === 'submit') return 'Submit';
        if (t === 'reset') return 'Reset';
      } else if (t === 'image') {
        n = pick(attrOf(d, 'alt'));
        if (n) return n;
      } else {
        n = pick(lazy(d.labelText));
        if (n) return n;
      }
    } else if (tag === 'select' || tag === 'textarea' || tag === 'meter' || tag === 'progress'
      || tag === 'output') {
      n = pick(lazy(d.labelText));
      if (n) return n;
    } else if (tag === 'img' || tag === 'area') {
      n = pick(attrOf(d, 'alt'));
      if (n) return n;
    } else if (tag === 'iframe') {
      n = pick(attrOf(d, 'title'));
      if (n) return n;
    }
    if (NAME_FROM_CONTENT.has(role) && !(tag === 'input' || tag === 'select' || tag === 'textarea')) {
      n = pick(lazy(d.text));
      if (n) return n;
    }
    n = pick(attrOf(d, 'title'));
    if (n) return n;
    if (role === 'textbox' || role === 'searchbox' || role === 'combobox' || role === 'spinbutton') {
      n = pick(attrOf(d, 'placeholder')) || pick(attrOf(d, 'aria-placeholder'));
      if (n) return n;
    }
    if (tag === 'input' && inputType(d) === 'file') return 'Choose file';
    return '';
  }

  /**
   * Whether a person could act on the element (click, type, pick). Disabled controls still count
   * (they are reported with state.disabled) so the agent learns they exist; hidden inputs,
   * aria-hidden and inert subtrees do not.
   */
  function isActionable(d) {
    const tag = tagOf(d);
    if (attrOf(d, 'aria-hidden') === 'true' || attrOf(d, 'inert') !== null) return false;
    if (tag === 'input') return inputType(d) !== 'hidden';
    if (tag === 'button' || tag === 'select' || tag === 'textarea' || tag === 'summary') return true;
    if ((tag === 'a' || tag === 'area') && attrOf(d, 'href') !== null) return true;
    if (isContentEditable(d)) return true;
    const role = attrOf(d, 'role');
    if (role && INTERACTIVE_ROLES.has(roleOf(d))) return true;
    const ti = attrOf(d, 'tabindex');
    if (ti !== null && /^\s*\d+\s*$/.test(ti)) return true;     // tabindex >= 0 (not -1)
    return attrOf(d, 'onclick') !== null;
  }

  // Credential recognition (DESIGN §8): by type, autocomplete, name/id, and by the words a person
  // reads on the field (aria-label, placeholder, label): a "Recovery phrase" box is a secret
  // whatever the page named it.
  const CREDENTIAL_AUTOCOMPLETE = new Set(['current-password', 'new-password', 'one-time-code',
    'cc-number', 'cc-csc']);
  // Long words are safe as substrings ("userPassword", "csrf_token", "seedPhrase").
  const CREDENTIAL_SUBSTRING = new RegExp([
    'password', 'passwd', 'passphrase', 'passcode', 'token', 'api[-_ ]?key', 'secret', 'mnemonic',
    'seed[-_ ]?phrase', 'recovery[-_ ]?(?:phrase|code|key)', 'backup[-_ ]?code', 'private[-_ ]?key',
    'verification[-_ ]?code', 'security[-_ ]?code', 'one[-_ ]?time[-_ ]?(?:code|password|passcode)',
    // French: mot de passe, phrase de récupération / secrète / mnémonique, code de récupération /
    // de secours / de vérification / de sécurité, clé privée / secrète / d'API.
    'mot[-_ ]de[-_ ]passe', 'phrase[-_ ](?:de[-_ ]r[eé]cup[eé]ration|secr[eè]te|mn[eé]monique)',
    'code[-_ ]de[-_ ](?:r[eé]cup[eé]ration|secours|v[eé]rification|s[eé]curit[eé])',
    'cl[eé][-_ ](?:priv[eé]e|secr[eè]te|d[\'’]api|api)',
    // Chinese: 助记词 (mnemonic), 恢复码 / 恢复短语 (recovery code / phrase), 私钥 / 密钥 (private /
    // secret key), 密码 (password), 备用码 (backup code), 验证码 (verification code), 口令 (passphrase).
    '助记词', '恢复码', '恢复短语', '私钥', '密钥', '密码', '备用码', '验证码', '口令',
  ].join('|'), 'i');
  // Words that hold a secret word but are not about one.
  const NOT_CREDENTIAL = /secretar(?:y|iat)/gi;
  // Short words only as whole tokens (so "shipping", "spinner", "footprint" stay ordinary).
  const CREDENTIAL_TOKEN = /^(pin|otp|totp|cvv|cvc|csc|pwd|mfa|2fa)(code|number|num|no|\d+)?$/;

  function tokens(s) {
    // "userPin" → user pin; "otp-code" → otp code; "API_KEY2" → api key2
    return String(s).replace(/([a-z\d])([A-Z])/g, '$1 $2').toLowerCase().split(/[^a-z\d]+/)
      .filter(Boolean);
  }

  function credentialName(s) {
    if (!s) return false;
    s = String(s).replace(NOT_CREDENTIAL, ' ');
    if (CREDENTIAL_SUBSTRING.test(s)) return true;
    return tokens(s).some((t) => CREDENTIAL_TOKEN.test(t));
  }

  /** True for fields whose value is a secret: type=password, credential autocomplete, name or label. */
  function isCredentialField(d) {
    const tag = tagOf(d);
    if (tag !== 'input' && tag !== 'textarea' && !isContentEditable(d)) return false;
    if (tag === 'input') {
      const t = inputType(d);
      if (t === 'password') return true;
      if (t === 'checkbox' || t === 'radio' || t === 'submit' || t === 'button' || t === 'reset'
        || t === 'image' || t === 'file' || t === 'hidden') return false;
    }
    const ac = (attrOf(d, 'autocomplete') || '').toLowerCase().split(/\s+/);
    if (ac.some((t) => CREDENTIAL_AUTOCOMPLETE.has(t))) return true;
    for (const a of ['name', 'id', 'aria-label', 'placeholder', 'aria-placeholder', 'title']) {
      if (credentialName(attrOf(d, a))) return true;
    }
    // The label's words last: they may cost a walk of the label's text.
    return credentialName(lazy(d.labelText)) || credentialName(lazy(d.labelledByText));
  }

  /**
   * The page's text with what was typed into credential editables masked. A contenteditable element
   * is a field whose value is its content, and unlike an input's value that content is part of the
   * rendered page text (innerText). `editables`: the page's contenteditable elements as
   * element-like descriptions, each with `renderedText` (a string or a function: its innerText).
   * Each one isCredentialField() accepts has its text replaced by `[redacted credential len=N]`
   * (N in characters, the redaction's marker, which both redactions pass through) wherever it
   * occurs; when it occurs nowhere whole (the page renders it with other line breaks than the
   * element alone), each of its lines of four characters or more is replaced instead.
   */
  function maskEditables(text, editables) {
    let out = String(text ?? '');
    const marker = (secret) => `[redacted credential len=${Array.from(secret).length}]`;
    const replaceAll = (secret) => {
      const parts = out.split(secret);
      if (parts.length === 1) return false;
      out = parts.join(marker(secret));
      return true;
    };
    for (const d of editables || []) {
      if (!isContentEditable(d) || !isCredentialField(d)) continue;
      const secret = String(lazy(d.renderedText) ?? '').trim();
      if (!secret || replaceAll(secret)) continue;
      for (const line of secret.split(/\r?\n/)) {
        const l = line.trim();
        if (Array.from(l).length >= 4) replaceAll(l);
      }
    }
    return out;
  }

  /** True for one-time-code fields (an MFA step is showing). */
  function isOtpField(d) {
    const ac = (attrOf(d, 'autocomplete') || '').toLowerCase().split(/\s+/);
    if (ac.includes('one-time-code')) return true;
    const re = /^(otp|totp|mfa|2fa|verification|verify)(code|number|num)?$/;
    return [attrOf(d, 'name'), attrOf(d, 'id')].some((s) => s && tokens(s).some((t) => re.test(t)));
  }

  /**
   * Bounds `text` to `maxBytes` of UTF-8 without ever cutting a code point.
   * TextEncoder.encodeInto writes whole characters only, so `read` is a safe UTF-16 cut.
   * → { text, truncated, bytes }
   */
  function boundUtf8(text, maxBytes) {
    const s = String(text ?? '');
    const max = Math.max(0, Math.floor(maxBytes));
    if (s.length * 3 <= max) {
      // Every UTF-16 unit is at most 3 UTF-8 bytes (a pair, 2 units, is 4): it fits.
      return { text: s, truncated: false, bytes: enc.encode(s).length };
    }
    const buf = new Uint8Array(max);
    const { read, written } = enc.encodeInto(s, buf);
    if (read >= s.length) return { text: s, truncated: false, bytes: written };
    return { text: s.slice(0, read), truncated: true, bytes: written };
  }

  /**
   * Normalises rendered page text (innerText) for the excerpt: spaces collapsed, lines trimmed,
   * at most one blank line in a row. Only a prefix is normalised when the page is huge so the cost
   * stays bounded; `cut` says that happened.
   */
  function normalizeText(raw, maxBytes) {
    let s = String(raw ?? '');
    let cut = false;
    const limit = Math.max(1024, maxBytes * 4);
    if (s.length > limit) {
      s = s.slice(0, limit);
      const c = s.charCodeAt(s.length - 1);
      if (c >= 0xd800 && c <= 0xdbff) s = s.slice(0, -1);
      cut = true;
    }
    s = s.replace(/\r\n?/g, '\n').replace(/[^\S\n]+/g, ' ').replace(/ ?\n ?/g, '\n')
      .replace(/\n{3,}/g, '\n\n').trim();
    return { text: s, cut };
  }

  /**
   * The excerpt: normalised and bounded. → { text, truncated, bytes }
   * A cut excerpt ends on a whole line: the partial line a byte limit leaves behind ("line 3 of
   * ord") would otherwise be cut somewhere else as soon as text above it grows or shrinks, and a
   * line diff of two captures (the app's "new text") would report that fragment as new text.
   * `rawCut` says the caller already cut `raw` (a huge page's budgeted walk).
   */
  function textExcerpt(raw, maxBytes, rawCut = false) {
    const n = normalizeText(raw, maxBytes);
    const b = boundUtf8(n.text, maxBytes);
    const truncated = b.truncated || n.cut || rawCut;
    if (!truncated) return { text: b.text, truncated, bytes: b.bytes };
    // Only when a line end is in the second half: one huge line is cut where it is.
    const nl = b.text.lastIndexOf('\n');
    if (nl < 0 || nl < b.text.length / 2) return { text: b.text, truncated, bytes: b.bytes };
    const text = b.text.slice(0, nl).replace(/\s+$/, '');
    return { text, truncated, bytes: enc.encode(text).length };
  }

  /**
   * The lines of normalised page text (normalizeText) that hold the words an agent waited for
   * (`until`: case and spaces as textShown in page-wait.js compares them), at most `max`, each
   * clipped: what a snapshot after the wait shows first, wherever the excerpt cut the page (a
   * tooltip drawn at the end of a long page is past it). → [line]
   */
  function foundLines(text, words, max = 3) {
    const want = collapse(words).toLowerCase();
    if (!want) return [];
    const out = [];
    for (const line of String(text ?? '').split('\n')) {
      const cut = clip(line, FOUND_LINE_MAX);
      if (!collapse(line).toLowerCase().includes(want) || out.includes(cut)) continue;
      out.push(cut);
      if (out.length >= max) break;
    }
    return out;
  }

  /**
   * A node line as the agent sees it: {ref, role, name, tag, state, href?, inModal?, inList?}.
   * `state` keeps only what is set, so lines stay short. inList (one record's control, which
   * the site memory never learns) is for the app, not the agent: no text form shows it.
   */
  function nodeLine(ref, info) {
    const line = { ref, role: info.role, name: info.name || '', tag: info.tag, state: {} };
    const st = info.state || {};
    for (const k of Object.keys(st)) {
      const v = st[k];
      if (v === undefined || v === null) continue;
      line.state[k] = v;
    }
    if (info.href) line.href = clip(info.href, ATTR_MAX);
    if (info.inModal) line.inModal = true;
    if (info.inList) line.inList = true;
    return line;
  }

  /** The one-line text form of a node line, e.g. `e12 button "Sign in" [disabled]`. */
  function formatNodeLine(n) {
    const flags = Object.entries(n.state || {}).filter(([, v]) => v !== false)
      .map(([k, v]) => (v === true ? k : `${k}=${v}`));
    if (n.inModal) flags.push('inModal');
    return `${n.ref} ${n.role} ${JSON.stringify(n.name || '')}`
      + (n.href ? ` → ${n.href}` : '') + (flags.length ? ` [${flags.join(', ')}]` : '');
  }

  /**
   * The stable key of a node across captures of one document: tag, role, name and a short path of
   * ancestors — not the ref (which is what we are trying to keep) and not a sibling index (which
   * shifts whenever something is inserted above).
   */
  function stableKey(info) {
    return `${info.tag}|${info.role}|${info.name || ''}|${info.path || ''}`;
  }

  /** Makes keys unique within one capture by numbering repeats in document order ("…#2"). */
  function dedupeKeys(keys) {
    const seen = new Map();
    return keys.map((k) => {
      const n = (seen.get(k) || 0) + 1;
      seen.set(k, n);
      return n === 1 ? k : `${k}#${n}`;
    });
  }

  /**
   * Gives each item of a new capture a ref, re-using the previous capture's refs so an agent's
   * refs stay meaningful:
   *   1. identity — the same element already has a ref (`item.knownRef`);
   *   2. stable key — an element re-rendered with the same tag/role/name/path takes over the ref
   *      of the old one, but only when `canReuse(prevEntry)` (the old element is gone);
   *   3. otherwise a fresh ref from `alloc()`.
   * A ref is never given to two items of one capture.
   * prev: [{ref, key}], items: [{key, knownRef?}] → [ref] (same order as items)
   */
  function assignRefs(prev, items, { alloc, canReuse = () => true }) {
    const used = new Set();
    const out = new Array(items.length).fill(null);
    items.forEach((it, i) => {
      if (it.knownRef && !used.has(it.knownRef)) {
        out[i] = it.knownRef;
        used.add(it.knownRef);
      }
    });
    const byKey = new Map();
    for (const p of prev || []) {
      if (!byKey.has(p.key)) byKey.set(p.key, []);
      byKey.get(p.key).push(p);
    }
    items.forEach((it, i) => {
      if (out[i]) return;
      const list = byKey.get(it.key);
      if (list) {
        const idx = list.findIndex((p) => !used.has(p.ref) && canReuse(p));
        if (idx >= 0) {
          out[i] = list[idx].ref;
          used.add(out[i]);
          list.splice(idx, 1);
          return;
        }
      }
      let r = alloc();
      while (used.has(r)) r = alloc();
      out[i] = r;
      used.add(r);
    });
    return out;
  }

  function sameState(a, b) {
    const ka = Object.keys(a || {});
    const kb = Object.keys(b || {});
    if (ka.length !== kb.length) return false;
    return ka.every((k) => (b || {})[k] === a[k]);
  }

  /** True when two node lines say the same thing (the ref aside). */
  function sameLine(a, b) {
    return a.role === b.role && a.name === b.name && a.tag === b.tag
      && (a.href || '') === (b.href || '') && !!a.inModal === !!b.inModal
      && sameState(a.state, b.state);
  }

  /**
   * The diff between two captures' node lists, by ref (refs were assigned with assignRefs so an
   * unchanged node keeps its ref): → {added:[node], removed:[ref], changed:[node], textChanged}
   */
  function diffNodes(prevNodes, nextNodes, prevText, nextText) {
    const before = new Map((prevNodes || []).map((n) => [n.ref, n]));
    const after = new Set(nextNodes.map((n) => n.ref));
    const added = [];
    const changed = [];
    for (const n of nextNodes) {
      const p = before.get(n.ref);
      if (!p) added.push(n);
      else if (!sameLine(p, n)) changed.push(n);
    }
    const removed = (prevNodes || []).filter((n) => !after.has(n.ref)).map((n) => n.ref);
    return { added, removed, changed, textChanged: prevText !== nextText };
  }

  globalThis.ChaperoneSnapshotCore = Object.freeze({
    NAME_MAX, ATTR_MAX, INTERACTIVE_ROLES,
    collapse, clip, roleOf, implicitRole, nameOf, isActionable, isContentEditable,
    isCredentialField, isOtpField, credentialName, maskEditables, boundUtf8, normalizeText, textExcerpt, foundLines,
    nodeLine, formatNodeLine, stableKey, dedupeKeys, assignRefs, sameLine, diffNodes,
  });
})();
