// SPDX-License-Identifier: GPL-3.0-or-later
// The outward-act classifier (extension/content/outward.js): the labelled controls of
// tests/vectors/outward.json in English, French, Chinese (and some German and Spanish) with the
// kind each must get, the form rules, the word table's own hygiene (the table is made from
// src/core/policy/outward-words.json), and describe() on a real DOM in Chromium (skipped, with the
// reason printed, when Chromium or playwright-core is missing).

import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { after, before, test } from 'node:test';
import vm from 'node:vm';

const CORE_URL = new URL('../../extension/content/snapshot-core.js', import.meta.url);
const OUTWARD_URL = new URL('../../extension/content/outward.js', import.meta.url);
await import(CORE_URL.href);
await import(OUTWARD_URL.href);
const O = globalThis.ChaperoneOutward;

const PAGE = 'https://shop.example';

/** A full desc as describe() builds it: every field present, '' when absent. */
function desc(fields) {
  return {
    tag: '', type: '', role: '', text: '', label: '', title: '', value: '', name: '', href: '',
    isSubmit: false, formMethod: '', formAction: '', pageOrigin: PAGE, ...fields,
  };
}

// Control shapes, as describe() reports them, for the tests below the rows.
const button = (text) => desc({ tag: 'button', type: 'button', role: 'button', text, label: text });
const submitInput = (value, form = {}) => desc({
  tag: 'input', type: 'submit', role: 'button', value, label: value, isSubmit: true,
  formMethod: 'get', formAction: PAGE + '/search', ...form,
});
const submitButton = (text, form = {}) => desc({
  tag: 'button', type: 'submit', role: 'button', text, label: text, isSubmit: true,
  formMethod: 'post', formAction: PAGE + '/form', ...form,
});

// The labelled controls of tests/vectors/outward.json: [language, what it is, desc, expected kind,
// expected reason].
const VECTORS = JSON.parse(await readFile(new URL('../vectors/outward.json', import.meta.url), 'utf8'));
const ROWS = VECTORS.vectors.map((v) => ({
  lang: v.lang, what: v.name, d: { ...VECTORS.control, ...v.control }, kind: v.kind, reason: v.reason,
}));
const OTHER = 'https://pay.other.example/charge';

// ---------------------------------------------------------------------------------------------

test('loads as a classic script in a bare context, frozen', async () => {
  const source = await readFile(OUTWARD_URL, 'utf8');
  assert.doesNotMatch(source, /^\s*(import|export)\s/m, 'no module syntax: it is injected as a classic script');
  const ctx = vm.createContext({ URL });
  vm.runInContext(source, ctx, { filename: 'outward.js' });
  const X = ctx.ChaperoneOutward;
  assert.equal(X.classify({ tag: 'button', text: 'Send' }).kind, 'outward', 'works without snapshot-core');
  assert.ok(Object.isFrozen(O) && Object.isFrozen(O.WORDS) && Object.isFrozen(O.WORDS.outward.en));
  assert.deepEqual(Object.keys(O).sort(), ['WORDS', 'classify', 'describe', 'normalize', 'opensEditor']);
});

test(`labelled controls: ${ROWS.length} rows`, () => {
  assert.ok(ROWS.length >= 200, `at least 200 rows (${ROWS.length})`);
  const byLang = {};
  for (const r of ROWS) {
    byLang[r.lang] ??= { outward: 0, delete: 0, write: 0, none: 0 };
    byLang[r.lang][r.kind] += 1;
  }
  console.log(`${ROWS.length} labelled controls`);
  for (const [lang, k] of Object.entries(byLang)) {
    console.log(`  ${lang.padEnd(4)} outward ${k.outward}, delete ${k.delete}, write ${k.write}, none ${k.none}`);
  }
  const wrong = [];
  for (const r of ROWS) {
    const got = O.classify(r.d);
    if (got.kind !== r.kind || (r.reason && got.reason !== r.reason)) {
      wrong.push(`${r.lang} ${r.what}: want ${r.kind}/${r.reason ?? '*'}, got ${got.kind}/${got.reason} (${got.word})`);
    }
    if (got.kind === 'none') assert.equal(got.word, null);
    if (got.reason === 'label') assert.ok(got.word, `${r.what}: a label match names its word`);
  }
  assert.deepEqual(wrong, []);
});

test('the word reported is the table word, longest first', () => {
  assert.deepEqual(O.classify(button('Place your order')), { kind: 'outward', reason: 'label', word: 'place your order' });
  assert.equal(O.classify(button('S’ABONNER')).word, "s'abonner");
  assert.equal(O.classify(button('Mettre a jour')).word, 'mettre à jour');
  assert.equal(O.classify(button('提交订单')).word, '提交订单');
  assert.equal(O.classify(button('Order')).word, 'order');
  assert.equal(O.classify(submitButton('Save', { formAction: OTHER })).word, 'save', 'form-elsewhere still names its word');
  assert.equal(O.classify(submitInput('', { formMethod: 'post' })).word, null);
});

// Real apps' controls, named as they name them (aria-label / title / text), with the context
// describe() reports: [app, control, desc fields, kind, plan step spent?]. TiddlyWiki 5.4.1's
// toolbars are read from a served wiki; Gmail's and Stripe's wording as their pages show it.
const TW_EDIT = { editing: true, hints: ['Tiddler title', 'tag name', 'field name'] };
const STRIPE = { scope: 'Pay Example Store', editing: true,
  hints: ['Email', 'email', 'Card information', 'cc-number', 'Expiration', 'cc-exp', 'CVC', 'cc-csc'] };
const GMAIL = { scope: 'New Message', editing: true, hints: ['To', 'to', 'Subject', 'subjectbox', 'Message Body'] };
const iconButton = (name, title = name, extra = {}) => desc({ tag: 'button', type: 'submit', role: 'button',
  label: name, title, ...extra });
const REAL = [
  ['TiddlyWiki', 'new tiddler', iconButton('new tiddler', 'Create a new tiddler'), 'write', false],
  ['TiddlyWiki', 'edit', iconButton('Edit this tiddler'), 'write', false],
  ['TiddlyWiki', 'done (save)', iconButton('Confirm changes to this tiddler', undefined, TW_EDIT), 'write', true],
  ['TiddlyWiki', 'done, caption shown', desc({ tag: 'button', role: 'button', text: 'done', label: 'done', ...TW_EDIT }), 'write', true],
  ['TiddlyWiki', 'cancel', iconButton('Discard changes to this tiddler', undefined, TW_EDIT), 'delete', true],
  ['TiddlyWiki', 'delete', iconButton('Delete this tiddler', undefined, TW_EDIT), 'delete', true],
  ['TiddlyWiki', 'close', iconButton('close', 'Close this tiddler'), 'none', false],
  ['TiddlyWiki', 'more actions', iconButton('more', 'More actions'), 'none', false],
  ['TiddlyWiki', 'tag add', button('add'), 'write', true],
  ['note app', 'confirm changes to this note', iconButton('Confirm changes to this note'), 'write', true],
  ['note app', 'Save', button('Save'), 'write', true],
  ['note app', 'Update', button('Update'), 'write', true],
  ['note app', 'Done in an editor', desc({ ...button('Done'), ...TW_EDIT }), 'write', true],
  ['tour', 'Done with nothing to edit', button('Done'), 'none', false],
  ['Stripe', 'Pay $20.00', desc({ ...button('Pay $20.00'), ...STRIPE }), 'outward', true],
  ['Stripe', 'bare Confirm beside card fields', desc({ ...button('Confirm'), ...STRIPE }), 'outward', true],
  ['Stripe', 'Confirm payment', button('Confirm payment'), 'outward', true],
  ['Stripe dashboard', 'Confirm in a Refund payment dialog', desc({ ...button('Confirm'), scope: 'Refund payment', editing: true, hints: ['Amount'] }), 'outward', true],
  ['Stripe dashboard', 'Update customer', button('Update customer'), 'write', true],
  ['shop', 'Confirm purchase', button('Confirm purchase'), 'outward', true],
  ['shop', 'Confirm order', button('Confirm order'), 'outward', true],
  ['Gmail', 'Send', desc({ tag: 'div', role: 'button', label: 'Send \u202a(Ctrl-Enter)\u202c', text: 'Send', ...GMAIL }), 'outward', true],
  ['Gmail', 'bare Confirm in the compose dialog', desc({ ...button('Confirm'), ...GMAIL }), 'outward', true],
  ['Gmail', 'Confirm and send', button('Confirm and send'), 'outward', true],
  ['Gmail', 'Discard draft', desc({ tag: 'div', role: 'button', label: 'Discard draft \u202a(Ctrl-Shift-D)\u202c', ...GMAIL }), 'delete', true],
  ['Gmail', 'Archive', desc({ tag: 'div', role: 'button', label: 'Archive' }), 'write', true],
  ['Gmail', 'Compose', desc({ tag: 'div', role: 'button', text: 'Compose', label: 'Compose' }), 'none', false],
  ['settings', 'Confirm in an Edit profile form', desc({ ...button('Confirm'), scope: 'Edit profile', editing: true, hints: ['Display name'] }), 'write', true],
  ['settings', 'Confirm in Delete account', desc({ ...button('Confirm'), scope: 'Delete account', editing: true, hints: ['Type DELETE'] }), 'delete', true],
  ['settings', 'bare Confirm, nothing around', button('Confirm'), 'outward', true],
  ['GitHub', 'Confirm merge', button('Confirm merge'), 'write', true],
  ['GitHub', 'Comment', button('Comment'), 'outward', true],
  ['French app', 'Valider les modifications', button('Valider les modifications'), 'write', true],
  ['French app', 'Confirmer le paiement', button('Confirmer le paiement'), 'outward', true],
  ['Chinese app', '确认修改', button('确认修改'), 'write', true],
  ['Chinese app', '确认支付', button('确认支付'), 'outward', true],
  // A mail list's row is a button named by its whole preview: judged by what it says first.
  ['MailDev', 'a message row whose preview says pay', button('Invoice 2291 overdue Invoice 2291 for the harbour repairs is 14 days overdue; please pay by Friday.'), 'none', false],
  ['mail', 'a long Send label still sends', button('Send feedback about the new dashboard to the whole team'), 'outward', true],
  ['shop', 'a long Pay label still pays', button('Pay now with the card ending in 4242 and finish your order'), 'outward', true],
];

test(`real apps' controls: ${REAL.length} rows, confirm judged by its subject and context`, () => {
  const wrong = [];
  for (const [app, what, d, kind, spends] of REAL) {
    const got = O.classify(d);
    if (got.kind !== kind) wrong.push(`${app} ${what}: want ${kind}, got ${got.kind} (${got.word})`);
    // A write that opens an editor spends no plan step; every other act does (or is never covered).
    if (got.kind === 'write' && O.opensEditor(d) === spends) wrong.push(`${app} ${what}: opensEditor ${!spends} wanted`);
  }
  assert.deepEqual(wrong, []);
  // Context never turns an outward word into anything else, and a submit never opens an editor.
  assert.equal(O.classify(desc({ ...button('Send'), scope: 'Edit profile', editing: true })).kind, 'outward');
  assert.equal(O.opensEditor(submitButton('Edit')), false);
});

test('normalize: case, accents, compatibility forms, separators', () => {
  assert.equal(O.normalize('  RÉPONDRE  À   tous '), 'repondre a tous');
  assert.equal(O.normalize('S’abonner'), 's abonner');
  assert.equal(O.normalize('Ｐａｙ'), 'pay');
  assert.equal(O.normalize('De\u00adlete'), 'delete');
  assert.equal(O.normalize('提交订单！'), '提交订单');
  assert.equal(O.normalize(null), '');
  assert.equal(O.normalize('x'.repeat(10000)).length, 500, 'bounded');
});

test('the table: one place, every kind in en/fr/zh, no word in two kinds, each word finds itself', () => {
  const rank = { outward: 0, delete: 1, write: 2 };
  const seen = new Map();
  for (const kind of ['outward', 'delete', 'write']) {
    for (const lang of ['en', 'fr', 'zh']) assert.ok(O.WORDS[kind][lang].length >= 10, `${kind}.${lang}`);
    for (const [lang, list] of Object.entries(O.WORDS[kind])) {
      for (const entry of list) {
        const w = entry.replace(/^=/, '');
        const n = O.normalize(w);
        assert.ok(n, `${kind}.${lang} "${entry}" is not empty`);
        assert.ok(!seen.has(n), `"${entry}" is in ${seen.get(n)} and ${kind}.${lang}`);
        seen.set(n, `${kind}.${lang}`);
        const got = O.classify(button(w));
        assert.ok(got.kind !== 'none' && rank[got.kind] <= rank[kind], `"${entry}" (${kind}) → ${got.kind}`);
      }
    }
  }
  for (const list of Object.values(O.WORDS.none)) {
    for (const phrase of list) assert.equal(O.classify(button(phrase)).kind, 'none', `none: "${phrase}"`);
  }
});

test('classify reads a bounded prefix and takes anything', { timeout: 30000 }, () => {
  assert.deepEqual(O.classify(undefined), { kind: 'none', reason: 'none', word: null });
  assert.deepEqual(O.classify({}), { kind: 'none', reason: 'none', word: null });
  assert.equal(O.classify({ tag: 'button', text: 42 }).kind, 'none');
  // How fast is bench/'s to measure; here, that only a prefix is read.
  const huge = button('x '.repeat(200000) + 'send');
  assert.equal(O.classify(huge).kind, 'none', 'only the first 500 characters of a field are read');
});

// ---- describe() on a real DOM ---------------------------------------------------------------

const CHROMIUM = process.env.CHAPERONE_CHROMIUM || '/usr/lib/chromium/chromium';
let skip = false;
if (!existsSync(CHROMIUM)) skip = `Chromium not found at ${CHROMIUM} (install the Debian chromium package)`;
let chromium = null;
if (!skip) {
  try {
    ({ chromium } = await import('playwright-core'));
  } catch {
    skip = 'playwright-core is not installed (npm ci)';
  }
}
if (skip) console.log(`# skipping describe() tests: ${skip}`);

let browser;
before(async () => {
  if (skip) return;
  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
});
after(async () => {
  await browser?.close();
});

const FIXTURE = `<!doctype html><base href="https://shop.example/app/">
<form id="search" action="/search"><input name="q"><input type="submit" id="bare-get">
  <button id="go">Go</button></form>
<form id="pay" method="post" action="charge">
  <input name="card" value="4111">
  <input name="action" value="clobber"><input name="method" value="clobber">
  <button id="pay-btn"><span id="pay-span">Pay <b>now</b></span></button>
  <input type="submit" id="bare-post">
  <input type="submit" id="save-input" value="Save">
  <button id="elsewhere" formaction="https://pay.other.example/x">Continue</button>
  <button id="to-get" formmethod="get">Preview</button>
  <button type="button" id="plain">Send</button>
  <input type="image" id="img" alt="Envoyer" src="data:,">
</form>
<button form="pay" id="outside">Submit order</button>
<button form="nowhere" id="orphan">OK</button>
<dialog open><form method="dialog"><button id="dlg">Yes</button></form></dialog>
<button id="icon" title="Send"><svg viewBox="0 0 1 1"><path d="M0 0"/></svg></button>
<button id="svgtitle"><svg><title>删除</title><path d="M0 0"/></svg></button>
<button id="img-icon"><img alt="Share" src="data:,"></button>
<div role="button" id="aria" aria-label="Delete conversation"><i id="aria-i">🗑</i></div>
<a href="/orders" id="orders">Order history</a>
<label id="lbl" for="pwd">Confirm password</label><input id="pwd" type="password" value="hunter2">
<input id="txt" value="please send money" aria-label="Note">
<button id="labelled" aria-labelledby="l1">x</button><span id="l1">Publier</span>
<div id="host"></div>`;

async function describeIn(page, id) {
  return page.evaluate((id) => {
    const host = document.getElementById('host');
    const el = document.getElementById(id) || host.shadowRoot?.getElementById(id);
    return globalThis.ChaperoneOutward.describe(el);
  }, id);
}

test('describe(): a real DOM, forms, ancestors, icons, never a field value', { skip }, async () => {
  const page = await browser.newPage();
  try {
    await page.route('https://shop.example/**', (r) => r.fulfill({ contentType: 'text/html; charset=utf-8', body: FIXTURE }));
    await page.goto('https://shop.example/app/index.html');
    await page.evaluate(await readFile(CORE_URL, 'utf8'));
    await page.evaluate(await readFile(OUTWARD_URL, 'utf8'));
    await page.evaluate(() => {
      const root = document.getElementById('host').attachShadow({ mode: 'open' });
      root.innerHTML = '<button id="shadow-btn"><span id="shadow-span">Reply</span></button>';
    });
    const d = (id) => describeIn(page, id);
    const k = async (id) => {
      const desc = await d(id);
      return page.evaluate((x) => globalThis.ChaperoneOutward.classify(x), desc);
    };

    const pay = await d('pay-span');
    assert.equal(pay.tag, 'button', 'a span inside a button describes the button');
    assert.equal(pay.text, 'Pay now');
    assert.equal(pay.label, 'Pay now');
    assert.equal(pay.role, 'button');
    assert.equal(pay.type, 'submit');
    assert.equal(pay.isSubmit, true);
    assert.equal(pay.formMethod, 'post', 'form.method is read from the attribute (a field named "method" would shadow it)');
    assert.equal(pay.formAction, 'https://shop.example/app/charge', 'resolved against document.baseURI, not shadowed by a field named "action"');
    assert.equal(pay.pageOrigin, 'https://shop.example');
    assert.equal(pay.value, '');
    assert.deepEqual(await k('pay-span'), { kind: 'outward', reason: 'label', word: 'pay now' });

    const bareGet = await d('bare-get');
    assert.equal(bareGet.label, '', 'the default "Submit" caption is not the page\u2019s word');
    assert.equal(bareGet.formMethod, 'get');
    assert.equal(bareGet.formAction, 'https://shop.example/search');
    assert.equal((await k('bare-get')).kind, 'none');
    assert.equal((await k('go')).kind, 'none', 'a GET search button');
    assert.deepEqual(await k('bare-post'), { kind: 'outward', reason: 'form-submit', word: null });
    assert.equal((await d('save-input')).value, 'Save');
    assert.equal((await k('save-input')).kind, 'write');
    assert.equal((await d('elsewhere')).formAction, 'https://pay.other.example/x');
    assert.equal((await k('elsewhere')).reason, 'form-elsewhere');
    const toGet = await d('to-get');
    assert.equal(toGet.formMethod, 'get', 'formmethod overrides the form');
    assert.equal((await k('to-get')).kind, 'none');
    const plain = await d('plain');
    assert.equal(plain.isSubmit, false);
    assert.equal(plain.type, 'button');
    assert.equal((await k('plain')).kind, 'outward');
    const img = await d('img');
    assert.equal(img.isSubmit, true);
    assert.equal(img.label, 'Envoyer');
    assert.equal(img.value, '');
    assert.equal((await k('img')).word, 'envoyer');
    const outside = await d('outside');
    assert.equal(outside.isSubmit, true, 'the form attribute is honoured');
    assert.equal(outside.formMethod, 'post');
    assert.equal((await k('outside')).kind, 'outward');
    assert.equal((await d('orphan')).isSubmit, false, 'form="nowhere" submits nothing');
    assert.equal((await d('dlg')).formMethod, 'dialog');
    assert.deepEqual(await k('dlg'), { kind: 'outward', reason: 'form-submit', word: null });

    assert.equal((await d('icon')).title, 'Send');
    assert.equal((await k('icon')).kind, 'outward', 'an icon button with title Send');
    assert.equal((await k('svgtitle')).kind, 'delete', 'an svg <title> is text');
    assert.equal((await d('img-icon')).text, 'Share', 'an icon image\u2019s alt stands for the text');
    assert.equal((await k('img-icon')).kind, 'outward');
    const ariaDesc = await d('aria-i');
    assert.equal(ariaDesc.role, 'button');
    assert.equal(ariaDesc.label, 'Delete conversation');
    assert.equal((await k('aria-i')).kind, 'delete');
    assert.equal((await k('labelled')).word, 'publier', 'aria-labelledby');
    const orders = await d('orders');
    assert.equal(orders.href, 'https://shop.example/orders');
    assert.equal((await k('orders')).kind, 'none');

    const pwd = await d('lbl');
    assert.equal(pwd.tag, 'input', 'a click on a label is a click on its control');
    assert.equal(pwd.value, '', 'never a field value');
    assert.equal((await k('lbl')).kind, 'none');
    const txt = await d('txt');
    assert.equal(txt.value, '');
    assert.ok(!JSON.stringify(txt).includes('money'));
    assert.equal((await k('txt')).kind, 'none');

    const shadow = await d('shadow-span');
    assert.equal(shadow.tag, 'button', 'inside an open shadow root');
    assert.equal((await k('shadow-span')).kind, 'outward');

    const empty = await page.evaluate(() => globalThis.ChaperoneOutward.describe(null));
    assert.equal(empty.tag, '');
    assert.equal(empty.isSubmit, false);
  } finally {
    await page.close();
  }
});

test('describe(): a huge control gives a text and a label of at most 200 characters', { skip }, async () => {
  const page = await browser.newPage();
  try {
    await page.setContent('<a id="card" href="/x">' + '<p>Lorem ipsum dolor sit amet</p>'.repeat(20000) + '</a>');
    await page.evaluate(await readFile(CORE_URL, 'utf8'));
    await page.evaluate(await readFile(OUTWARD_URL, 'utf8'));
    const d = await page.evaluate(() => globalThis.ChaperoneOutward.describe(document.getElementById('card')));
    assert.ok(d.text.length <= 200 && d.label.length <= 200);
  } finally {
    await page.close();
  }
});
