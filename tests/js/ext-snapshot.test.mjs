// SPDX-License-Identifier: GPL-3.0-or-later
// The pure half of the page snapshot (extension/content/snapshot-core.js): roles and names,
// actionable rules, the UTF-8 bounded excerpt, stable keys, ref re-use and the capture diff,
// credential recognition. No browser needed; ext-page-agent-read.test.mjs checks the DOM half.

import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { test } from 'node:test';
import vm from 'node:vm';

const CORE_URL = new URL('../../extension/content/snapshot-core.js', import.meta.url);
await import(CORE_URL.href);
const C = globalThis.ChaperoneSnapshotCore;

/** An element-like description: tag, attributes, text (what page-agent.js hands the core). */
const el = (tag, attrs = {}, text = '', extra = {}) => ({ tag, attrs, text, ...extra });

test('loads as a classic script in a bare context (what executeScript({files}) does)', async () => {
  const source = await readFile(CORE_URL, 'utf8');
  assert.doesNotMatch(source, /^\s*(import|export)\s/m, 'no module syntax: it is injected as a classic script');
  const ctx = vm.createContext({ TextEncoder });
  vm.runInContext(source, ctx, { filename: 'snapshot-core.js' });
  assert.equal(typeof ctx.ChaperoneSnapshotCore.roleOf, 'function');
  assert.equal(ctx.ChaperoneSnapshotCore.roleOf({ tag: 'button', attrs: {} }), 'button');
  assert.ok(Object.isFrozen(C));
});

test('role table: explicit roles first, else the native one', () => {
  const rows = [
    [el('button'), 'button'],
    [el('a', { href: '/x' }), 'link'],
    [el('a'), 'generic'],
    [el('area', { href: '/x' }), 'link'],
    [el('input'), 'textbox'],
    [el('input', { type: 'email' }), 'textbox'],
    [el('input', { type: 'password' }), 'textbox'],
    [el('input', { type: 'text', list: 'dl' }), 'combobox'],
    [el('input', { type: 'search' }), 'searchbox'],
    [el('input', { type: 'checkbox' }), 'checkbox'],
    [el('input', { type: 'radio' }), 'radio'],
    [el('input', { type: 'submit' }), 'button'],
    [el('input', { type: 'image', alt: 'Go' }), 'button'],
    [el('input', { type: 'range' }), 'slider'],
    [el('input', { type: 'number' }), 'spinbutton'],
    [el('input', { type: 'hidden' }), 'none'],
    [el('input', { type: 'CHECKBOX' }), 'checkbox'],
    [el('select'), 'combobox'],
    [el('select', { multiple: '' }), 'listbox'],
    [el('select', { size: '4' }), 'listbox'],
    [el('textarea'), 'textbox'],
    [el('h2'), 'heading'],
    [el('img', { alt: 'Logo' }), 'img'],
    [el('img', { alt: '' }), 'presentation'],
    [el('nav'), 'navigation'],
    [el('summary'), 'button'],
    [el('dialog'), 'dialog'],
    [el('section'), 'generic'],
    [el('section', { 'aria-label': 'News' }), 'region'],
    [el('div'), 'generic'],
    [el('div', { contenteditable: '' }), 'textbox'],
    [el('div', { contenteditable: 'false' }), 'generic'],
    [el('div', { role: 'button' }), 'button'],
    [el('div', { role: 'Tab' }), 'tab'],
    [el('div', { role: 'fancything switch' }), 'switch'],          // first known token wins
    [el('span', { role: 'bogus' }), 'generic'],
    [el('button', { role: 'presentation' }), 'button'],           // ignored on focusable elements
    [el('div', { role: 'none' }), 'none'],
    [el('a', { href: '#', role: 'menuitem' }), 'menuitem'],
  ];
  for (const [d, role] of rows) assert.equal(C.roleOf(d), role, JSON.stringify(d));
});

test('name table: labelledby, aria-label, label, content, title, placeholder — never a field value', () => {
  const rows = [
    [el('button', {}, '  Save \n changes '), 'Save changes'],
    [el('button', { 'aria-label': 'Close dialog' }, '×'), 'Close dialog'],
    [el('button', { 'aria-label': '   ' }, 'Fallback'), 'Fallback'],
    [el('button', { 'aria-label': 'Ignored' }, 'x', { labelledByText: 'Labelled by' }), 'Labelled by'],
    [el('a', { href: '/' }, 'Home'), 'Home'],
    [el('a', { href: '/', title: 'Go home' }, ''), 'Go home'],
    [el('input', { value: 'secret typed text' }, '', { labelText: 'Full name' }), 'Full name'],
    [el('input', { value: 'secret typed text', placeholder: 'Search…' }), 'Search…'],
    [el('input', { value: 'secret typed text' }), ''],
    [el('input', { type: 'password', title: 'Your password' }), 'Your password'],
    [el('input', { type: 'submit' }), 'Submit'],
    [el('input', { type: 'submit', value: 'Send it' }), 'Send it'],
    [el('input', { type: 'reset' }), 'Reset'],
    [el('input', { type: 'button', value: 'Go' }), 'Go'],
    [el('input', { type: 'image', alt: 'Search' }), 'Search'],
    [el('input', { type: 'file' }, '', { labelText: 'Avatar' }), 'Avatar'],
    [el('input', { type: 'file' }), 'Choose file'],
    [el('input', { type: 'checkbox' }, '', { labelText: ' I agree ' }), 'I agree'],
    [el('select', {}, 'France Germany', { labelText: 'Country' }), 'Country'],
    [el('select', {}, 'France Germany'), ''],                      // options are not its name
    [el('textarea', { placeholder: 'Say hi' }, 'typed'), 'Say hi'],
    [el('img', { alt: 'A cat' }), 'A cat'],
    [el('h1', {}, 'Title'), 'Title'],
    [el('div', { role: 'button' }, 'Div button'), 'Div button'],
    [el('div', { role: 'textbox', contenteditable: '' }, 'typed words', { labelText: '' }), ''],
    [el('div', {}, 'plain text'), ''],
    [el('iframe', { title: 'Payment' }), 'Payment'],
    [el('button', {}, () => 'lazy text'), 'lazy text'],
  ];
  for (const [d, name] of rows) assert.equal(C.nameOf(d), name, JSON.stringify(d));
  const long = C.nameOf(el('button', {}, 'x'.repeat(500)));
  assert.equal([...long].length, C.NAME_MAX + 1, 'bounded, plus an ellipsis');
  assert.ok(long.endsWith('…'));
  const emoji = C.nameOf(el('button', {}, 'a' + '😀'.repeat(200)));
  assert.doesNotMatch(emoji, /[\ud800-\udbff](?![\udc00-\udfff])/, 'never half a surrogate pair');
});

test('actionable rules', () => {
  const yes = [
    el('button'), el('button', { disabled: '' }), el('a', { href: '' }), el('input'),
    el('input', { type: 'checkbox' }), el('input', { type: 'file' }), el('select'), el('textarea'),
    el('summary'), el('div', { role: 'button' }), el('span', { role: 'link' }), el('li', { role: 'option' }),
    el('div', { role: 'switch' }), el('div', { tabindex: '0' }), el('div', { tabindex: '3' }),
    el('div', { onclick: 'go()' }), el('div', { contenteditable: 'true' }),
    el('div', { contenteditable: 'plaintext-only' }), el('area', { href: '/map' }),
  ];
  const no = [
    el('div'), el('span'), el('a'), el('input', { type: 'hidden' }), el('div', { tabindex: '-1' }),
    el('div', { role: 'heading' }), el('div', { role: 'dialog' }), el('p', { contenteditable: 'false' }),
    el('button', { 'aria-hidden': 'true' }), el('button', { inert: '' }), el('img', { alt: 'x' }),
    el('h1'), el('label'),
  ];
  for (const d of yes) assert.equal(C.isActionable(d), true, `actionable: ${JSON.stringify(d)}`);
  for (const d of no) assert.equal(C.isActionable(d), false, `not actionable: ${JSON.stringify(d)}`);
});

test('credential recognition table', () => {
  const yes = [
    el('input', { type: 'password' }),
    el('input', { type: 'PASSWORD', name: 'anything' }),
    el('input', { autocomplete: 'current-password' }),
    el('input', { autocomplete: 'section-login new-password' }),
    el('input', { autocomplete: 'one-time-code' }),
    el('input', { autocomplete: 'cc-csc' }),
    el('input', { name: 'password' }), el('input', { name: 'userPassword' }), el('input', { id: 'passwd' }),
    el('input', { name: 'otp' }), el('input', { name: 'otp-code' }), el('input', { name: 'otpCode' }),
    el('input', { name: 'totp_code' }), el('input', { name: 'csrf_token' }), el('input', { name: 'accessToken' }),
    el('input', { name: 'api_key' }), el('input', { name: 'api-key' }), el('input', { name: 'apikey' }),
    el('input', { name: 'apiKey' }), el('input', { name: 'client_secret' }), el('input', { name: 'pin' }),
    el('input', { name: 'card_pin' }), el('input', { name: 'userPin' }), el('input', { name: 'pincode' }),
    el('input', { name: 'cvv' }), el('input', { name: 'cvv2' }), el('input', { name: 'card-cvc' }),
    el('textarea', { name: 'private_secret' }), el('input', { name: 'mfa' }), el('input', { name: '2fa' }),
    el('input', { name: 'passcode' }),
  ];
  const no = [
    el('input', { name: 'username' }), el('input', { name: 'email', type: 'email' }),
    el('input', { name: 'shipping' }), el('input', { name: 'spinner' }), el('input', { name: 'pinterest' }),
    el('input', { name: 'footprint' }), el('input', { name: 'topic' }), el('input', { name: 'q' }),
    el('input', { type: 'checkbox', name: 'remember_password' }), el('input', { type: 'submit', name: 'password' }),
    el('input', { type: 'hidden', name: 'token' }), el('select', { name: 'password' }),
    el('button', { name: 'token' }), el('input', { autocomplete: 'username' }),
  ];
  for (const d of yes) assert.equal(C.isCredentialField(d), true, `credential: ${JSON.stringify(d.attrs)}`);
  for (const d of no) assert.equal(C.isCredentialField(d), false, `not credential: ${JSON.stringify(d.attrs)}`);
  assert.equal(C.isOtpField(el('input', { autocomplete: 'one-time-code' })), true);
  assert.equal(C.isOtpField(el('input', { name: 'totp_code' })), true);
  assert.equal(C.isOtpField(el('input', { id: 'verificationCode' })), true);
  assert.equal(C.isOtpField(el('input', { name: 'password' })), false);
  assert.equal(C.isOtpField(el('input', { name: 'hotpot' })), false);
});

test('credential fields recognised by what a person reads on them: label, placeholder, aria-label', () => {
  const labelled = (labelText, attrs = {}) => el('input', attrs, '', { labelText });
  const yes = [
    el('input', { placeholder: 'Seed phrase' }), el('input', { 'aria-label': 'Recovery phrase' }),
    labelled('Recovery code'), labelled('Backup codes'), el('textarea', { placeholder: 'Private key' }),
    el('input', { 'aria-placeholder': 'Secret recovery phrase' }), el('input', { title: 'Mnemonic' }),
    labelled('Password'), labelled('Enter your PIN'), labelled('API key'), labelled('Verification code'),
    el('input', { name: 'seedPhrase' }), el('input', { id: 'recovery_code' }),
    // French.
    labelled('Phrase de récupération'), labelled('Code de récupération'), labelled('Clé privée'),
    el('input', { placeholder: 'Mot de passe' }), labelled('Code de secours'), labelled("Clé d'API"),
    el('input', { 'aria-label': 'phrase secrète' }), labelled('Code de vérification'),
    // Chinese.
    labelled('助记词'), labelled('恢复码'), labelled('私钥'), el('input', { placeholder: '请输入密码' }),
    el('input', { 'aria-label': '恢复短语' }), labelled('短信验证码'),
    // Labelled by another element, and a contenteditable box.
    el('input', {}, '', { labelledByText: () => 'Your seed phrase' }),
    el('div', { contenteditable: '', 'aria-label': 'Recovery phrase' }),
  ];
  const no = [
    labelled('Full name'), labelled('Email'), el('input', { placeholder: 'you@example.com' }),
    labelled('Search'), labelled('Secretary'), labelled('Phrase of the day'), labelled('Code postal'),
    labelled('Recovery email'), labelled('Nom complet'), labelled('搜索'), labelled('用户名'),
    el('input', { type: 'checkbox', 'aria-label': 'Show password' }),
    el('button', { 'aria-label': 'Copy private key' }),
    el('div', { 'aria-label': 'Recovery phrase' }), // not editable: not a field
  ];
  for (const d of yes) assert.equal(C.isCredentialField(d), true, `credential: ${JSON.stringify(d)}`);
  for (const d of no) assert.equal(C.isCredentialField(d), false, `not credential: ${JSON.stringify(d)}`);
  // The label is read only when nothing cheaper decided.
  let asked = 0;
  const counted = el('input', { name: 'password' }, '', { labelText: () => { asked++; return 'x'; } });
  assert.equal(C.isCredentialField(counted), true);
  assert.equal(asked, 0);
});

test('maskEditables: what was typed into a credential editable is masked in the page text', () => {
  const editable = (attrs, renderedText) => el('div', { contenteditable: 'true', ...attrs }, '', { renderedText });
  const phrase = 'apple banana cherry delta echo fox';
  const page = `Back up your wallet\nRecovery phrase\n${phrase}\nNotes\nBuy milk\nSave`;
  const out = C.maskEditables(page, [
    editable({ 'aria-label': 'Recovery phrase' }, () => phrase),
    editable({ 'aria-label': 'Notes' }, 'Buy milk'), // an ordinary editor keeps its text
  ]);
  assert.equal(out, 'Back up your wallet\nRecovery phrase\n[redacted credential len=34]\nNotes\nBuy milk\nSave');
  // The marker is the redaction's: both redactions pass it through unchanged.
  assert.match(out, /\[redacted credential len=34\]/);

  // Every occurrence; lines when the whole does not occur as the page rendered it.
  assert.equal(C.maskEditables('key: 私钥abc\n… 私钥abc', [editable({ placeholder: '私钥' }, '私钥abc')]),
    'key: [redacted credential len=5]\n… [redacted credential len=5]');
  const seed = { 'aria-label': 'Seed phrase' };
  assert.equal(C.maskEditables('first line\n\nsecond line', [editable(seed, 'first line\nsecond line')]),
    '[redacted credential len=10]\n\n[redacted credential len=11]');
  // Nothing to mask: empty, not editable, not a credential, not there.
  assert.equal(C.maskEditables('a b c', [editable(seed, '  ')]), 'a b c');
  assert.equal(C.maskEditables('secret words', [el('div', seed, '', { renderedText: 'secret words' })]), 'secret words');
  assert.equal(C.maskEditables('Hello', [editable(seed, 'elsewhere')]), 'Hello');
  assert.equal(C.maskEditables('Hello', []), 'Hello');
  assert.equal(C.maskEditables(undefined, undefined), '');
});

const utf8 = (s) => new TextEncoder().encode(s).length;
const hasLoneSurrogate = (s) => /[\ud800-\udbff](?![\udc00-\udfff])|(^|[^\ud800-\udbff])[\udc00-\udfff]/.test(s);

test('UTF-8 bounded excerpt never cuts a code point', () => {
  assert.deepEqual(C.boundUtf8('hello', 5), { text: 'hello', truncated: false, bytes: 5 });
  assert.deepEqual(C.boundUtf8('hello!', 5), { text: 'hello', truncated: true, bytes: 5 });
  assert.deepEqual(C.boundUtf8('', 0), { text: '', truncated: false, bytes: 0 });
  assert.deepEqual(C.boundUtf8('a', 0), { text: '', truncated: true, bytes: 0 });
  // 2-, 3- and 4-byte characters straddling the limit are dropped whole.
  assert.deepEqual(C.boundUtf8('abcé', 4), { text: 'abc', truncated: true, bytes: 3 });
  assert.deepEqual(C.boundUtf8('abcé', 5), { text: 'abcé', truncated: false, bytes: 5 });
  assert.deepEqual(C.boundUtf8('ab€', 4), { text: 'ab', truncated: true, bytes: 2 });
  assert.deepEqual(C.boundUtf8('a😀', 4), { text: 'a', truncated: true, bytes: 1 });
  assert.deepEqual(C.boundUtf8('a😀', 5), { text: 'a😀', truncated: false, bytes: 5 });
  assert.deepEqual(C.boundUtf8('项目', 5), { text: '项', truncated: true, bytes: 3 });

  // Every cut of a mixed string at every limit: a prefix, within the limit, the longest such,
  // never half a pair.
  const mixed = 'aé€😀项 b\u00a0ü👍🏽x';
  for (let max = 0; max <= utf8(mixed) + 2; max += 1) {
    const r = C.boundUtf8(mixed, max);
    assert.ok(mixed.startsWith(r.text), `prefix at ${max}`);
    assert.ok(r.bytes <= max && r.bytes === utf8(r.text), `bytes at ${max}`);
    assert.equal(hasLoneSurrogate(r.text), false, `no lone surrogate at ${max}`);
    assert.equal(r.truncated, r.text.length < mixed.length);
    if (r.truncated) {
      const next = [...mixed.slice(r.text.length)][0];
      assert.ok(r.bytes + utf8(next) > max, `longest prefix at ${max}`);
    }
  }
  // The 20 KiB excerpt on multi-byte text: the limit falls inside a character.
  const big = 'x' + '项'.repeat(10000);
  const r = C.textExcerpt(big, 20480);
  assert.equal(r.truncated, true);
  assert.ok(r.bytes <= 20480 && r.bytes > 20480 - 3);
  assert.equal(utf8(r.text), r.bytes);
});

test('a cut excerpt ends on a whole line, so a line diff of two captures holds only new lines', () => {
  const lines = Array.from({ length: 2000 }, (_, i) => `line ${i % 3 + 1} of order ${1000 + Math.floor(i / 3)}`);
  const before = C.textExcerpt(['Details not loaded.', ...lines].join('\n'), 4096);
  const after = C.textExcerpt(['Details loaded: 2 items', 'Blue mug ×2', 'Tea sampler ×1', ...lines].join('\n'), 4096);
  for (const e of [before, after]) {
    assert.equal(e.truncated, true);
    assert.ok(lines.includes(e.text.split('\n').at(-1)), `ends on a whole line: ${e.text.slice(-30)}`);
    assert.equal(utf8(e.text), e.bytes);
    assert.ok(e.bytes <= 4096 && e.bytes > 4096 - 40);
  }
  const old = new Map();
  for (const l of before.text.split('\n')) old.set(l, (old.get(l) || 0) + 1);
  const fresh = after.text.split('\n').filter((l) => {
    const n = old.get(l) || 0;
    if (n > 0) old.set(l, n - 1);
    return n === 0;
  });
  assert.deepEqual(fresh, ['Details loaded: 2 items', 'Blue mug ×2', 'Tea sampler ×1']);
  // Cut by the caller (a huge page's budgeted walk): the last, maybe partial, line goes too.
  assert.equal(C.textExcerpt('one\ntwo\nthr', 1000, true).text, 'one\ntwo');
  assert.equal(C.textExcerpt('one\ntwo\nthr', 1000).text, 'one\ntwo\nthr', 'whole text: nothing dropped');
});

test('excerpt text is normalised and bounded even for huge input', () => {
  const r = C.textExcerpt('  Title \r\n\r\n\r\n\n  line   one \t\n line two  ', 1000);
  assert.equal(r.text, 'Title\n\nline one\nline two');
  assert.equal(r.truncated, false);
  const huge = 'word '.repeat(1_000_000);       // 5 MB: only a prefix is normalised
  const h = C.textExcerpt(huge, 20480);
  assert.equal(h.truncated, true);
  assert.ok(h.bytes <= 20480);
  const cut = C.normalizeText('a'.repeat(5000) + '😀'.repeat(5000), 1000);
  assert.equal(cut.cut, true);
  assert.equal(hasLoneSurrogate(cut.text), false);
});

test('node line shape and its one-line form', () => {
  const line = C.nodeLine('e3', {
    role: 'checkbox', name: 'I agree', tag: 'input',
    state: { checked: false, disabled: undefined, focused: true }, href: undefined, inModal: false,
  });
  assert.deepEqual(line, { ref: 'e3', role: 'checkbox', name: 'I agree', tag: 'input', state: { checked: false, focused: true } });
  const link = C.nodeLine('e4', { role: 'link', name: 'Home', tag: 'a', state: {}, href: 'https://x.test/', inModal: true });
  assert.deepEqual(link, { ref: 'e4', role: 'link', name: 'Home', tag: 'a', state: {}, href: 'https://x.test/', inModal: true });
  assert.equal(C.formatNodeLine(line), 'e3 checkbox "I agree" [focused]');
  assert.equal(C.formatNodeLine(link), 'e4 link "Home" → https://x.test/ [inModal]');
  assert.equal(C.formatNodeLine(C.nodeLine('e5', { role: 'checkbox', name: 'x', tag: 'input', state: { checked: 'mixed', disabled: true } })),
    'e5 checkbox "x" [checked=mixed, disabled]');
});

test('a record list\'s control is marked for the app, and its line reads as any other', () => {
  const row = C.nodeLine('e6', { role: 'button', name: 'Call Alice Smith', tag: 'button', state: {}, inList: true });
  assert.equal(row.inList, true, 'the site memory is told not to learn it');
  assert.equal(C.nodeLine('e7', { role: 'button', name: 'Compose', tag: 'button', state: {}, inList: false }).inList, undefined);
  assert.equal(C.formatNodeLine(row), 'e6 button "Call Alice Smith"', 'the agent\'s text is unchanged');
});

test('stable keys: tag+role+name+path, repeats numbered in document order', () => {
  const k = C.stableKey({ tag: 'button', role: 'button', name: 'Delete', path: 'body>ul#list>li' });
  assert.equal(k, 'button|button|Delete|body>ul#list>li');
  assert.deepEqual(C.dedupeKeys(['a', 'b', 'a', 'a', 'b']), ['a', 'b', 'a#2', 'a#3', 'b#2']);
});

test('refs are re-used for unchanged nodes: identity first, then stable key, else fresh', () => {
  let n = 10;
  const alloc = () => `e${++n}`;
  const prev = [
    { ref: 'e1', key: 'K1', gone: false },
    { ref: 'e2', key: 'K2', gone: true },     // re-rendered: old element detached
    { ref: 'e3', key: 'K3', gone: false },    // still in the page, just not this capture's
    { ref: 'e4', key: 'K4', gone: true },
  ];
  const items = [
    { key: 'K1', knownRef: 'e1' },            // same element → same ref
    { key: 'K2' },                            // new element, same key, old one gone → e2
    { key: 'K3' },                            // same key but the old element still lives → fresh
    { key: 'K9', knownRef: 'e4' },            // same element, renamed → keeps its ref
    { key: 'K5' },                            // brand new
  ];
  const refs = C.assignRefs(prev, items, { alloc, canReuse: (p) => p.gone });
  assert.deepEqual(refs, ['e1', 'e2', 'e11', 'e4', 'e12']);

  // Never the same ref twice in one capture, even if identity and key disagree.
  const dup = C.assignRefs([{ ref: 'e1', key: 'K' }], [{ key: 'K', knownRef: 'e1' }, { key: 'K' }, { key: 'X', knownRef: 'e1' }], { alloc });
  assert.equal(new Set(dup).size, 3);
  assert.equal(dup[0], 'e1');

  // A first capture: every ref is fresh.
  n = 0;
  assert.deepEqual(C.assignRefs([], [{ key: 'a' }, { key: 'b' }], { alloc }), ['e1', 'e2']);
  // alloc colliding with a re-used ref is skipped.
  let m = 0;
  const r = C.assignRefs([{ ref: 'e1', key: 'a' }], [{ key: 'a' }, { key: 'b' }], { alloc: () => `e${++m}` });
  assert.deepEqual(r, ['e1', 'e2']);
});

test('diff between captures: added, removed, changed by ref, text change', () => {
  const line = (ref, name, state = {}) => C.nodeLine(ref, { role: 'button', name, tag: 'button', state });
  const before = [line('e1', 'Load details'), line('e2', 'Placeholder'), line('e3', 'Steady'),
    C.nodeLine('e4', { role: 'checkbox', name: 'I agree', tag: 'input', state: { checked: false } })];
  const after = [line('e1', 'Reload details'), line('e3', 'Steady'),
    C.nodeLine('e4', { role: 'checkbox', name: 'I agree', tag: 'input', state: { checked: true } }),
    line('e5', 'First new'), line('e6', 'Second new')];
  const d = C.diffNodes(before, after, 'old text', 'new text');
  assert.deepEqual(d.added.map((x) => x.ref), ['e5', 'e6']);
  assert.deepEqual(d.removed, ['e2']);
  assert.deepEqual(d.changed.map((x) => [x.ref, x.name]), [['e1', 'Reload details'], ['e4', 'I agree']]);
  assert.equal(d.textChanged, true);
  const same = C.diffNodes(before, before, 't', 't');
  assert.deepEqual(same, { added: [], removed: [], changed: [], textChanged: false });
  assert.equal(C.sameLine(line('e1', 'x', { a: true }), line('e9', 'x', { a: true })), true);
  assert.equal(C.sameLine(line('e1', 'x', { a: true }), line('e1', 'x', {})), false);
  assert.equal(C.sameLine({ ...line('e1', 'x'), href: '/a' }, { ...line('e1', 'x'), href: '/b' }), false);
});
