// SPDX-License-Identifier: GPL-3.0-or-later
// The outward-act classifier (extension/content/outward.js): a table of labelled controls in
// English, French, Chinese (and some German and Spanish) with the kind each must get, the form
// rules, the word table's own hygiene, and describe() on a real DOM in Chromium (skipped, with the
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

// Control shapes, as describe() reports them.
const button = (text) => desc({ tag: 'button', type: 'button', role: 'button', text, label: text });
const link = (text, href = '/x') => desc({ tag: 'a', role: 'link', text, label: text, href: PAGE + href });
const icon = (title) => desc({ tag: 'button', type: 'button', role: 'button', title, label: title });
const iconOnlyTitle = (title) => desc({ tag: 'div', role: 'button', title });   // no name computed
const aria = (label, text = '') => desc({ tag: 'div', role: 'button', label, text });
const menuitem = (text) => desc({ tag: 'li', role: 'menuitem', text, label: text });
const submitInput = (value, form = {}) => desc({
  tag: 'input', type: 'submit', role: 'button', value, label: value, isSubmit: true,
  formMethod: 'get', formAction: PAGE + '/search', ...form,
});
const submitButton = (text, form = {}) => desc({
  tag: 'button', type: 'submit', role: 'button', text, label: text, isSubmit: true,
  formMethod: 'post', formAction: PAGE + '/form', ...form,
});

// [language, what it is, desc, expected kind, expected reason (checked when given)]
const ROWS = [];
const row = (lang, what, d, kind, reason) => ROWS.push({ lang, what, d, kind, reason });
const many = (lang, make, kind, labels) => {
  for (const l of labels) row(lang, `${make.name} "${l}"`, make(l), kind, kind === 'none' ? 'none' : 'label');
};

// ---- English ----
many('en', button, 'outward', ['Send', 'SEND', 'send', 'Send message', 'Send now', 'Post', 'Publish',
  'Tweet', 'Reply', 'Reply all', 'Forward', 'Comment', 'Message', 'Submit', 'Confirm', 'Pay',
  'Pay now', 'Pay $42.00', 'Buy', 'Buy now', 'Buy it now', 'Purchase', 'Complete purchase',
  'Confirm purchase', 'Order', 'Place order', 'Place your order', 'Order now', 'Checkout',
  'Check out', 'Proceed to checkout', 'Submit payment', 'Make a payment', 'Transfer',
  'Transfer funds', 'Donate', 'Donate $10', 'Subscribe', 'Share', 'Invite', 'Invite people',
  'Retweet', 'Repost', 'Upgrade', 'Top up', 'Withdraw', 'Book now', 'Reserve', 'Place bid',
  'Apply now', 'Easy Apply', 'Resend code', 'Send to Kindle', 'Send money']);
many('en', button, 'delete', ['Delete', 'DELETE', 'Remove', 'Erase', 'Destroy', 'Discard draft',
  'Move to trash', 'Empty trash', 'Close account', 'Deactivate', 'Delete account',
  'Cancel subscription', 'Cancel order', 'Revoke', 'Uninstall', 'Delete forever', 'Remove from cart',
  'Clear history', 'Terminate instance']);
// "post" after a verb that acts on it is the noun: the verb decides.
many('en', button, 'write', ['Update post', 'Edit posts', 'Save post']);
many('en', button, 'delete', ['Delete post', 'Remove post']);
many('en', button, 'write', ['Save', 'Save changes', 'Create', 'Add', 'Add to cart', 'Edit',
  'Update', 'Rename', 'Archive', 'Move', 'Upload', 'Apply', 'Change', 'Import', 'Follow', 'Like',
  'Unsubscribe', 'Sign up', 'Mark as read', 'Enable', 'Vote']);
many('en', icon, 'outward', ['Send', 'Share', 'Post reply']);
many('en', icon, 'delete', ['Delete', 'Trash']);
many('en', icon, 'write', ['Edit', 'Save']);
many('en', iconOnlyTitle, 'outward', ['Send']);
many('en', aria, 'outward', ['Send message', 'Share via email']);
row('en', 'LinkedIn-style Message button', aria('Message Alice Smith', 'Message'), 'outward', 'label');
row('en', 'Message + name only: a phrase, not the verb alone', aria('Message Alice Smith'), 'none', 'none');
many('en', aria, 'delete', ['Delete conversation']);
row('en', 'aria-label wins over a bare icon glyph', aria('Send', '➤'), 'outward', 'label');
row('en', 'menu item Delete', menuitem('Delete'), 'delete', 'label');
row('en', 'menu item Forward', menuitem('Forward'), 'outward', 'label');
// Negatives: places, past acts, nouns. A false positive costs a click; these are common enough
// on every page that holding them would make the agent useless.
many('en', link, 'none', ['Sender', 'Sent', 'Sent mail', 'Posted by alice', 'Posts', 'Messages',
  'Inbox', 'Order history', 'Your orders', 'Orders', 'Order status', 'Purchase history',
  'Payment methods', 'Payments', 'Shared with me', 'Subscriptions', 'Transfers', 'Deleted items',
  'Drafts', 'Home', 'Settings', 'Help', 'Replies', 'Comments (12)', 'Message settings', 'Cart',
  'Recently deleted', 'Likes', 'Saved', 'Reservations', 'Sign in', 'Log in']);
many('en', button, 'none', ['OK', 'Cancel', 'Close', 'Next', 'Continue', 'Back', 'Search',
  'Accept all cookies', 'Show more', 'Sending…', 'Download', 'Print', 'Copy link',
  'Expand', 'Filter', 'Sort by price']);
row('en', 'headline link with a verb (prose)', link('Senate votes to send the bill back to the House tonight'), 'none', 'none');
row('en', 'long button still a command', button('Send me a copy of this form by email please'), 'outward', 'label');
row('en', 'text field labelled Confirm password', desc({ tag: 'input', type: 'password', role: 'textbox', label: 'Confirm password' }), 'none', 'none');
row('en', 'search box labelled Send', desc({ tag: 'input', type: 'search', role: 'searchbox', label: 'Search sent mail' }), 'none', 'none');
row('en', 'select labelled Pay with', desc({ tag: 'select', role: 'combobox', label: 'Pay with' }), 'none', 'none');
row('en', 'icon-only button named deleteBtn', desc({ tag: 'button', type: 'button', role: 'button', name: 'deleteBtn' }), 'delete', 'label');
row('en', 'icon-only button named send_message', desc({ tag: 'button', type: 'button', role: 'button', name: 'send_message' }), 'outward', 'label');
row('en', 'labelled button: its name is not read', desc({ tag: 'button', type: 'button', role: 'button', text: 'Go', label: 'Go', name: 'delete' }), 'none', 'none');
row('en', 'link href is not read', link('Read more', '/post/123/delete'), 'none', 'none');
row('en', 'checkbox Subscribe to newsletter', desc({ tag: 'input', type: 'checkbox', role: 'checkbox', label: 'Subscribe to newsletter' }), 'outward', 'label');
row('en', 'switch Disable two-factor', desc({ tag: 'button', role: 'switch', label: 'Disable two-factor' }), 'write', 'label');
row('en', 'outward beats delete', button('Delete and send'), 'outward', 'label');
row('en', 'delete beats write', button('Save and delete'), 'delete', 'label');
row('en', 'input[type=button] value', desc({ tag: 'input', type: 'button', role: 'button', value: 'Send' }), 'outward', 'label');
row('en', 'fullwidth letters', button('Ｓｅｎｄ'), 'outward', 'label');
row('en', 'zero-width space inside', button('Se\u200bnd'), 'outward', 'label');

// ---- French ----
many('fr', button, 'outward', ['Envoyer', 'ENVOYER', 'envoyer', 'Envoyer le message', 'Publier',
  'Payer', 'Payer maintenant', 'Acheter', 'Acheter maintenant', 'Commander', 'Passer la commande',
  'Valider la commande', 'Répondre', 'REPONDRE', 'Répondre à tous', 'Virement', 'Effectuer un virement',
  'Faire un don', "S'abonner", 'S’abonner', 'Abonnez-vous', 'Partager', 'Inviter', 'Transférer',
  'Confirmer', 'Valider', 'Soumettre', 'Réserver', 'Procéder au paiement', 'Commenter']);
many('fr', button, 'delete', ['Supprimer', 'SUPPRIMER', 'Supprimer le compte', 'Effacer',
  'Vider la corbeille', 'Fermer le compte', 'Désactiver', 'Desactiver', 'Retirer', 'Résilier',
  "Annuler l'abonnement", 'Supprimer définitivement']);
many('fr', button, 'write', ['Enregistrer', 'Sauvegarder', 'Créer', 'Creer', 'Ajouter',
  'Ajouter au panier', 'Modifier', 'Mettre à jour', 'Mettre a jour', 'Renommer', 'Archiver',
  'Déplacer', 'Téléverser', 'Appliquer', "S'inscrire", "J'aime"]);
many('fr', icon, 'outward', ['Envoyer']);
many('fr', icon, 'delete', ['Supprimer']);
many('fr', link, 'none', ['Envoyé', 'Messages envoyés', 'Expéditeur', 'Historique des commandes',
  'Mes commandes', 'Moyens de paiement', 'Publié par Marie', 'Partagés avec moi', 'Éléments supprimés',
  'Boîte de réception', 'Paramètres', 'Mes abonnements', 'Brouillons']);
many('fr', button, 'none', ['Annuler', 'Fermer', 'Suivant', 'Rechercher', 'Retour']);

// ---- Chinese ----
many('zh', button, 'outward', ['发送', '发布', '发表评论', '支付', '付款', '立即付款', '购买',
  '立即购买', '下单', '结算', '去结算', '回复', '转账', '捐赠', '订阅', '分享', '提交订单', '确认支付',
  '转发', '私信', '邀请好友', '提交', '确认', '充值', '使用支付宝付款', '发送消息', '评论',
  '發送', '購買', '轉帳']);
many('zh', button, 'delete', ['删除', '永久删除', '移除', '注销账号', '清空购物车', '清除记录',
  '取消订单', '卸载', '解除绑定', '刪除']);
many('zh', button, 'write', ['保存', '创建', '新建', '添加', '编辑', '修改', '更新', '归档',
  '重命名', '上传文件', '加入购物车', '关注', '收藏', '应用', '儲存']);
many('zh', icon, 'outward', ['发送']);
many('zh', icon, 'delete', ['删除']);
many('zh', aria, 'write', ['编辑资料']);
many('zh', link, 'none', ['已发送', '发件人', '发送者', '我的订单', '订单详情', '支付方式', '付款方式',
  '支付宝', '已删除', '回收站', '设置', '首页', '消息', '发布时间', '发布会直播', '已购买', '购买记录',
  '我的订阅', '更新时间', '最近更新', '评论区', '收件箱', '草稿箱', '购物车']);
row('zh', 'headline link (prose)', link('国务院发布关于进一步优化营商环境的若干措施通知'), 'none', 'none');
row('zh', 'mixed Chinese and Latin', button('点击Send'), 'outward', 'label');

// ---- German, Spanish (cheap extras) ----
many('de', button, 'outward', ['Senden', 'Absenden', 'Jetzt kaufen', 'Zahlungspflichtig bestellen',
  'Bezahlen', 'Antworten', 'Teilen', 'Überweisen', 'Spenden', 'Abonnieren', 'Zur Kasse', 'Zahlen']);
many('de', button, 'delete', ['Löschen', 'LOSCHEN', 'Entfernen', 'Konto löschen', 'Kündigen']);
many('de', button, 'write', ['Speichern', 'Bearbeiten', 'Hinzufügen', 'Hochladen', 'Umbenennen']);
many('de', link, 'none', ['Gesendet', 'Bestellungen', 'Zahlungsmethoden', 'Zahlen und Fakten']);
many('es', button, 'outward', ['Enviar', 'Publicar', 'Pagar', 'Comprar ahora', 'Realizar pedido',
  'Finalizar compra', 'Responder', 'Compartir', 'Suscribirse', 'Donar']);
many('es', button, 'delete', ['Eliminar', 'Borrar', 'Vaciar papelera', 'Cerrar cuenta']);
many('es', button, 'write', ['Guardar', 'Crear', 'Añadir', 'Agregar', 'Editar', 'Subir']);
many('es', link, 'none', ['Enviados', 'Mis pedidos', 'Métodos de pago']);

// ---- input[type=submit] values and form rules ----
const OTHER = 'https://pay.other.example/charge';
many('form', (v) => submitInput(v, { formMethod: 'post' }), 'outward', ['Send', 'Envoyer', '发送', 'Pay now']);
row('form', 'submit value Save, POST', submitInput('Save', { formMethod: 'post' }), 'write', 'label');
row('form', 'submit value Supprimer, POST', submitInput('Supprimer', { formMethod: 'post' }), 'delete', 'label');
row('form', 'submit value 保存, POST', submitInput('保存', { formMethod: 'post' }), 'write', 'label');
row('form', 'submit, no word, POST', submitInput('Go', { formMethod: 'post' }), 'outward', 'form-submit');
row('form', 'bare submit (no caption), POST', submitInput('', { formMethod: 'post' }), 'outward', 'form-submit');
row('form', 'submit, no word, POST upper-case', submitInput('Continue', { formMethod: 'POST' }), 'outward', 'form-submit');
row('form', 'submit, no word, dialog', submitButton('OK', { formMethod: 'dialog' }), 'outward', 'form-submit');
row('form', 'submit Delete, dialog', submitButton('Delete', { formMethod: 'dialog' }), 'delete', 'label');
row('form', 'submit Search, GET', submitInput('Search'), 'none', 'none');
row('form', 'bare submit (no caption), GET', submitInput(''), 'none', 'none');
row('form', 'submit 搜索, GET', submitInput('搜索'), 'none', 'none');
row('form', 'submit Rechercher, GET', submitInput('Rechercher'), 'none', 'none');
row('form', 'submit Go, unknown method = GET', submitInput('Go', { formMethod: 'put' }), 'none', 'none');
row('form', 'submit Send, GET (the word decides)', submitInput('Send'), 'outward', 'label');
row('form', 'submit Save, GET', submitInput('Save'), 'write', 'label');
row('form', 'Search, GET to another origin', submitInput('Search', { formAction: 'https://search.other.example/q' }), 'outward', 'form-elsewhere');
row('form', 'Save, POST to another origin', submitButton('Save', { formAction: OTHER }), 'outward', 'form-elsewhere');
row('form', 'Delete, POST to another origin', submitButton('Delete', { formAction: OTHER }), 'outward', 'form-elsewhere');
row('form', 'Continue, POST to another origin', submitButton('Continue', { formAction: OTHER }), 'outward', 'form-elsewhere');
row('form', 'same host, other port = elsewhere', submitButton('Save', { formAction: 'https://shop.example:8443/x' }), 'outward', 'form-elsewhere');
row('form', 'same host, http = elsewhere', submitButton('Save', { formAction: 'http://shop.example/x' }), 'outward', 'form-elsewhere');
row('form', 'subdomain = elsewhere', submitButton('Save', { formAction: 'https://api.shop.example/x' }), 'outward', 'form-elsewhere');
row('form', 'javascript: action', submitButton('Go', { formMethod: 'get', formAction: 'javascript:void 0' }), 'outward', 'form-elsewhere');
row('form', 'unparseable action', submitButton('Go', { formMethod: 'get', formAction: 'http://[bad' }), 'outward', 'form-elsewhere');
row('form', 'same origin, explicit default port', submitButton('Go', { formMethod: 'get', formAction: 'https://shop.example:443/s' }), 'none', 'none');
row('form', 'formaction override to elsewhere on a GET button', submitInput('Go', { formAction: OTHER }), 'outward', 'form-elsewhere');
row('form', 'formmethod override to post', submitInput('Go', { formMethod: 'post' }), 'outward', 'form-submit');
row('form', 'not a submit: button type=button in a POST form', desc({ tag: 'button', type: 'button', role: 'button', text: 'Preview', label: 'Preview', formMethod: '', formAction: '' }), 'none', 'none');
row('form', 'submit with a long name is still a command', submitButton('I have read the terms and I want to go on with this'), 'outward', 'form-submit');

// ---------------------------------------------------------------------------------------------

test('loads as a classic script in a bare context, frozen', async () => {
  const source = await readFile(OUTWARD_URL, 'utf8');
  assert.doesNotMatch(source, /^\s*(import|export)\s/m, 'no module syntax: it is injected as a classic script');
  const ctx = vm.createContext({ URL });
  vm.runInContext(source, ctx, { filename: 'outward.js' });
  const X = ctx.ChaperoneOutward;
  assert.equal(X.classify({ tag: 'button', text: 'Send' }).kind, 'outward', 'works without snapshot-core');
  assert.ok(Object.isFrozen(O) && Object.isFrozen(O.WORDS) && Object.isFrozen(O.WORDS.outward.en));
  assert.deepEqual(Object.keys(O).sort(), ['WORDS', 'classify', 'describe', 'normalize']);
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
