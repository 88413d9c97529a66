// SPDX-License-Identifier: GPL-3.0-or-later
// Chaperone's outward-act classifier: says, from the page alone, whether a click would send,
// pay, publish (outward), destroy (delete) or change (write) something with the person's login.
// A classic script like snapshot-core.js (injected before it by executeScript({files}), which
// takes classic scripts only); it publishes one frozen global and Node imports it for the tests.
//
// Why the rules are what they are (safety contract, "Classes of a control"):
// - The page is the judge, never the agent: the agent says what it likes about a button, the
//   button's own words and its form are what the person would read before pressing it.
// - A false positive costs the person one click in the app; a false negative sends a message or
//   spends money without them. So every doubt leans towards holding, and the priority is
//   outward > delete > write (a plan can cover writes, never deletes or outward acts).
// - A form that submits to another origin is outward whatever its button says: the fields leave
//   the site. A POST (or dialog) submit with no word is outward too (we cannot tell a comment box
//   from a settings page by its method); a GET submit with no word is a search and is free.
// - Words are matched on the control's own visible names: label (accessible name), text, title
//   and an input button's caption (value). Latin scripts match whole words after NFKD, dropping
//   accents and case ("ENVOYER" = "envoyer"), so inflections that name places or past acts
//   ("Sender", "Sent", "Posted by", "Messages", "Payment methods", "Shared with me") stay free.
//   Chinese has no spaces, so it matches substrings; the `none` row lists the Chinese phrases
//   that contain a verb but name a place or a past act (已发送 "sent", 支付宝 "Alipay").
// - Some English nouns are also nav headings ("Order history", "Purchase history", "Message
//   settings"): `=word` entries count only when they are the whole of a name ("Order"), and the
//   action phrases ("place order", "order now") are listed on their own.
// - "Confirm"/"Valider"/"确认" and "Submit" are outward, not write: they end a flow whose subject
//   is elsewhere on the page (a purchase, a transfer, a deletion); as writes a plan could cover
//   them. "OK", "Yes", "Continue", "Next", "Done", "Accept", bare "Cancel" are left out: they are
//   everywhere (cookie banners, wizards) and the form rules catch those that really submit.
// - `name` is read only when nothing visible names the control (an icon-only button named
//   "deleteBtn"): names are written for code, a framework names every submit button "submit",
//   and the card must show a word the person can find on the page.
// - `href` is never read: paths name resources (/post/123, /messages), and following a link is a
//   GET. For the same reason a long name on anything that is not a button is prose (a headline
//   link "Senate to send bill…", a clickable card) and not a command: only short names count.
// - Clicking into a text field, a select or a slider acts on nothing: they are always 'none'.
//   Checkboxes, radios and switches are judged: many apply at once (settings that save on toggle).
// - The browser's default caption of a bare <input type=submit> ("Submit") is not the page's
//   word; describe() leaves it out so a bare GET search button stays free.

(function () {
  'use strict';

  const FIELD_MAX = 500;        // characters judged per desc field (a desc may come from anywhere)
  const TEXT_MAX = 200;         // characters of text content describe() reports
  const TEXT_SCAN = 2000;       // characters of textContent read before collapsing
  const ANCESTOR_MAX = 8;       // levels describe() climbs from a click target to its control
  const ICON_MAX = 3;           // icons (img alt, aria-label, title) read inside a textless control
  const PROSE_WORDS = 6;        // non-button names longer (Latin words + Han chars / 2) are prose

  // The one table. `=word`: only when it is the whole of a name. Latin phrases are whole words;
  // entries with Han characters are substrings. `none`: phrases removed before matching.
  const WORDS = {
    outward: {
      en: ['send', 'send message', 'send money', 'resend', 'post', 'publish', 'tweet', 'retweet',
        'repost', 'reply', 'reply all', 'forward', 'comment', '=message', 'submit', 'confirm',
        'pay', 'pay now', 'buy', 'buy now', 'reorder', '=purchase', 'purchase now',
        'complete purchase', 'confirm purchase', '=order', 'place order', 'place your order',
        'order now', 'submit order', 'complete order', 'checkout', 'check out',
        'proceed to checkout', 'submit payment', 'make payment', 'make a payment',
        'complete payment', 'transfer', 'donate', 'subscribe', 'share', 'invite', 'upgrade',
        'top up', 'withdraw', '=book', 'book now', 'reserve', 'bid', 'place bid', 'apply now',
        'easy apply'],
      fr: ['envoyer', 'renvoyer', 'publier', 'poster', 'tweeter', 'répondre', 'répondre à tous',
        'transférer', 'transmettre', 'commenter', 'soumettre', 'confirmer', 'valider', 'payer',
        'acheter', 'acheter maintenant', 'commander', 'passer la commande', 'passer commande',
        'valider la commande', 'procéder au paiement', 'effectuer le paiement', 'virement',
        'effectuer un virement', 'faire un don', "s'abonner", 'abonnez-vous', 'partager',
        'inviter', 'réserver'],
      zh: ['发送', '发布', '发表', '发帖', '转发', '回复', '=评论', '发表评论', '私信', '提交',
        '确认', '支付', '付款', '购买', '立即购买', '下单', '结算', '去结算', '提交订单', '确认支付',
        '转账', '汇款', '捐赠', '捐款', '打赏', '充值', '订阅', '分享', '邀请', '预订', '预定',
        '發送', '發佈', '發表', '回覆', '轉發', '購買', '結帳', '轉帳', '訂閱', '確認'],
      de: ['senden', 'absenden', 'abschicken', 'veröffentlichen', 'posten', 'antworten',
        'weiterleiten', 'kommentieren', 'bezahlen', '=zahlen', 'jetzt zahlen', 'kaufen',
        'jetzt kaufen', 'bestellen', 'zahlungspflichtig bestellen', 'zur kasse', 'überweisen',
        'spenden', 'abonnieren', 'teilen', 'einladen', 'bestätigen', 'buchen', 'reservieren'],
      es: ['enviar', 'reenviar', 'publicar', 'responder', 'comentar', 'pagar', 'comprar',
        'comprar ahora', 'realizar pedido', 'hacer pedido', 'tramitar pedido', 'finalizar compra',
        'transferir', 'donar', 'suscribirse', 'suscribirme', 'compartir', 'invitar', 'confirmar',
        'reservar'],
    },
    delete: {
      en: ['delete', 'delete account', 'delete forever', 'remove', 'erase', 'destroy', 'discard',
        'trash', 'move to trash', 'move to bin', 'empty trash', 'empty bin', 'empty recycle bin',
        'close account', 'close my account', 'deactivate', 'cancel subscription', 'cancel order',
        'cancel membership', 'cancel plan', 'revoke', 'uninstall', 'wipe', 'purge', 'terminate',
        'unfriend', 'clear history', 'clear data', 'clear all data', 'factory reset'],
      fr: ['supprimer', 'supprimer le compte', 'supprimer définitivement', 'effacer', 'détruire',
        'retirer', 'enlever', 'jeter', 'mettre à la corbeille', 'vider la corbeille',
        'fermer le compte', 'fermer mon compte', 'désactiver', 'résilier', 'annuler la commande',
        "annuler l'abonnement", 'désinstaller', 'révoquer'],
      zh: ['删除', '永久删除', '移除', '清空', '清除', '注销', '注销账号', '销毁', '丢弃', '卸载',
        '解绑', '解除绑定', '取消订单', '关闭账户', '移至回收站', '移到回收站', '撤销授权',
        '刪除', '註銷', '銷毀'],
      de: ['löschen', 'konto löschen', 'entfernen', 'papierkorb leeren', 'in den papierkorb',
        'deaktivieren', 'kündigen', 'verwerfen'],
      es: ['eliminar', 'borrar', 'quitar', 'vaciar papelera', 'cerrar cuenta', 'desactivar',
        'cancelar suscripción', 'cancelar pedido', 'descartar'],
    },
    write: {
      en: ['save', 'save changes', 'create', 'add', 'add to cart', 'edit', 'update', 'rename',
        'archive', 'move', 'upload', 'apply', 'change', 'import', 'duplicate', 'restore', 'merge',
        'approve', 'assign', 'install', 'enable', 'disable', 'turn on', 'turn off', 'attach',
        'sign up', 'register', 'join', 'unsubscribe', 'follow', 'unfollow', '=like', 'upvote',
        'downvote', 'vote', 'block', 'mute', 'mark as read', 'mark as unread'],
      fr: ['enregistrer', 'sauvegarder', 'créer', 'ajouter', 'ajouter au panier', 'modifier',
        'éditer', 'mettre à jour', 'renommer', 'archiver', 'déplacer', 'téléverser', 'importer',
        'appliquer', 'changer', 'restaurer', 'activer', 'installer', 'joindre', "s'inscrire",
        'inscrivez-vous', 'se désabonner', 'se désinscrire', "=j'aime", 'voter'],
      zh: ['保存', '储存', '儲存', '创建', '建立', '新建', '新增', '添加', '加入', '加入购物车',
        '编辑', '編輯', '修改', '更改', '更新', '归档', '封存', '重命名', '移动', '上传', '上傳',
        '导入', '=应用', '启用', '禁用', '关注', '取消关注', '点赞', '收藏', '注册', '註冊', '退订'],
      de: ['speichern', 'erstellen', 'hinzufügen', 'in den warenkorb', 'bearbeiten',
        'aktualisieren', 'umbenennen', 'archivieren', 'verschieben', 'hochladen', 'anwenden',
        'ändern'],
      es: ['guardar', 'crear', 'añadir', 'agregar', 'editar', 'actualizar', 'renombrar',
        'cambiar nombre', 'cambiar', 'archivar', 'mover', 'subir', 'aplicar'],
    },
    none: {
      en: [],
      fr: [],
      zh: ['已发送', '发送者', '发送时间', '已发布', '发布者', '发布时间', '发布于', '发布会',
        '已回复', '已支付', '已付款', '支付方式', '付款方式', '支付宝', '已购买', '购买记录',
        '已订阅', '我的订阅', '订阅号', '已分享', '已转账', '转账记录', '已确认', '已提交',
        '已删除', '已保存', '已创建', '创建时间', '创建者', '已添加', '已编辑', '已修改', '修改时间',
        '已更新', '更新时间', '最近更新', '已归档', '已上传'],
      de: [],
      es: [],
    },
  };

  const KINDS = ['outward', 'delete', 'write'];             // priority order
  const HAN = /\p{Script=Han}/u;
  // Roles whose clicks start nothing: typing targets and pickers.
  const FIELD_ROLES = new Set(['textbox', 'searchbox', 'combobox', 'spinbutton', 'slider',
    'listbox']);
  // Roles whose names are commands whatever their length (the rest get the prose rule).
  const COMMAND_ROLES = new Set(['button', 'menuitem', 'menuitemcheckbox', 'menuitemradio']);

  /**
   * The form text is judged in: compatibility-decomposed (fullwidth, ligatures), without accents,
   * format characters (zero-width, soft hyphen) or case, every run of non-letters one space.
   */
  function normalize(s) {
    return String(s ?? '').slice(0, FIELD_MAX).normalize('NFKD')
      .replace(/[\p{M}\p{Cf}]/gu, '')
      .toLowerCase()
      .replace(/[^\p{L}\p{N}]+/gu, ' ')
      .trim();
  }

  const escape = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const byLength = (a, b) => b.length - a.length;   // longest first: the card shows "place order"

  /** Compiles one row of the table: a regexp, the exact-only names, and normalized → table word. */
  function compile(row) {
    const latin = [];
    const han = [];
    const exact = new Map();
    const original = new Map();
    for (const list of Object.values(row)) {
      for (const entry of list) {
        const whole = entry.startsWith('=');
        const n = normalize(whole ? entry.slice(1) : entry);
        if (whole) exact.set(n, entry.slice(1));
        else {
          (HAN.test(n) ? han : latin).push(n);
          original.set(n, entry);
        }
      }
    }
    const parts = [];
    if (latin.length) {
      const alt = latin.sort(byLength).map(escape).join('|');
      parts.push(`(?<![\\p{Script=Latin}\\p{N}])(?:${alt})(?![\\p{Script=Latin}\\p{N}])`);
    }
    if (han.length) parts.push(`(?:${han.sort(byLength).map(escape).join('|')})`);
    const re = parts.length ? new RegExp(parts.join('|'), 'gu') : null;
    return { re, exact, original };
  }

  const MATCHERS = Object.fromEntries(KINDS.map((k) => [k, compile(WORDS[k])]));
  const NOT = compile(WORDS.none);

  /** A long name on a non-command element is prose (a headline link, a card), not a command. */
  function isProse(n) {
    let words = 0;
    let han = 0;
    for (const w of n.split(' ')) {
      if (!w) continue;
      const h = (w.match(/\p{Script=Han}/gu) || []).length;
      han += h;
      if (h < w.length) words += 1;
    }
    return words + Math.ceil(han / 2) > PROSE_WORDS;
  }

  function implicitRole(desc) {
    const tag = String(desc.tag || '').toLowerCase();
    const type = String(desc.type || '').toLowerCase();
    if (tag === 'button') return 'button';
    if (tag === 'input') {
      return ['submit', 'button', 'reset', 'image'].includes(type) ? 'button'
        : ['checkbox', 'radio'].includes(type) ? type : 'textbox';
    }
    if (tag === 'textarea') return 'textbox';
    if (tag === 'select') return 'combobox';
    if (tag === 'a' && desc.href) return 'link';
    return '';
  }

  /** The first kind (by priority) that a word of the table finds in the fields, and its word. */
  // "post" right after a verb that acts on it is the noun ("Update post", "Delete post"): the verb
  // decides, so the noun is taken out before the outward words are looked for.
  const POST_NOUN = /(?<![\p{L}\p{N}])(edit|update|save|delete|remove|archive|rename|pin|unpin|hide|report|modifier|supprimer|enregistrer) (post|posts)(?![\p{L}\p{N}])/gu;

  function findWord(fields) {
    const prepared = fields.map((f) => {
      const n = normalize(f);
      const rest = n && NOT.re ? n.replace(NOT.re, ' ') : n;
      return { n, rest, outwardRest: rest.replace(POST_NOUN, '$1 ') };
    }).filter((f) => f.n);
    for (const kind of KINDS) {
      const m = MATCHERS[kind];
      for (const f of prepared) {
        if (m.exact.has(f.n)) return { kind, word: m.exact.get(f.n) };
        if (!m.re) continue;
        m.re.lastIndex = 0;
        const hit = m.re.exec(kind === 'outward' ? f.outwardRest : f.rest);
        if (hit) return { kind, word: m.original.get(hit[0]) ?? hit[0] };
      }
    }
    return null;
  }

  function originOf(url) {
    try {
      const o = new URL(url).origin;
      return o === 'null' ? null : o;         // opaque origins are never the same as anything
    } catch {
      return null;
    }
  }

  /**
   * Classifies a control from its description (see describe()). Pure: no DOM, no globals but URL.
   * Returns { kind: 'outward'|'delete'|'write'|'none', reason, word }.
   */
  function classify(desc) {
    const d = desc || {};
    const str = (v) => (v === undefined || v === null ? '' : String(v));
    const isSubmit = d.isSubmit === true;
    const role = str(d.role).toLowerCase() || implicitRole(d);

    if (FIELD_ROLES.has(role) && !isSubmit) return { kind: 'none', reason: 'none', word: null };

    const prose = !COMMAND_ROLES.has(role) && !isSubmit;
    const visible = [d.label, d.text, d.title, d.value].map(str)
      .filter((f) => normalize(f) && !(prose && isProse(normalize(f))));
    let found = findWord(visible);
    if (!found && ![d.label, d.text, d.title, d.value].some((f) => normalize(str(f)))) {
      // Icon-only control: its name attribute is the only hint ("btnSend" → "btn send").
      found = findWord([str(d.name).replace(/([a-z\d])([A-Z])/g, '$1 $2')]);
    }
    const word = found ? found.word : null;

    if (isSubmit) {
      const action = str(d.formAction);
      const page = originOf(str(d.pageOrigin));
      if (action && (!page || originOf(action) !== page)) {
        return { kind: 'outward', reason: 'form-elsewhere', word };
      }
      const method = str(d.formMethod).toLowerCase();
      if ((method === 'post' || method === 'dialog') && !found) {
        return { kind: 'outward', reason: 'form-submit', word: null };
      }
    }
    if (found) return { kind: found.kind, reason: 'label', word };
    return { kind: 'none', reason: 'none', word: null };
  }

  // ---- describe: the DOM half, run in the page on the agent's click target -------------------

  const collapse = (s) => String(s ?? '').replace(/\s+/g, ' ').trim();
  const clip = (s, max) => (s.length > max ? s.slice(0, max) : s);

  /** An element-like object for snapshot-core (roleOf, nameOf, isActionable), text on demand. */
  function elementLike(el) {
    return {
      tag: el.localName,
      attr: (n) => el.getAttribute(n),
      get text() {
        return (el.textContent || '').slice(0, TEXT_SCAN);
      },
      get labelText() {
        let out = '';
        for (const l of el.labels || []) out += ' ' + (l.textContent || '').slice(0, TEXT_SCAN);
        return out;
      },
      get labelledByText() {
        const ids = el.getAttribute('aria-labelledby');
        if (!ids) return '';
        const root = el.getRootNode();
        let out = '';
        for (const id of ids.split(/\s+/)) {
          const ref = id && root.getElementById ? root.getElementById(id) : null;
          if (ref && ref !== el) out += ' ' + (ref.textContent || '').slice(0, TEXT_SCAN);
        }
        return out;
      },
    };
  }

  const DEFAULT_CAPTION = { submit: 'Submit', reset: 'Reset', file: 'Choose file' };
  const CLICKABLE_TAGS = new Set(['button', 'input', 'select', 'textarea', 'summary']);

  function isClickable(el, C) {
    if (C && C.isActionable) return C.isActionable(elementLike(el));
    const tag = el.localName;
    return CLICKABLE_TAGS.has(tag) || ((tag === 'a' || tag === 'area') && el.hasAttribute('href'))
      || el.hasAttribute('role') || el.hasAttribute('onclick');
  }

  /** The control a click on `el` activates: itself, its closest control, or a label's control. */
  function controlOf(el, C) {
    let cur = el;
    for (let i = 0; cur && i < ANCESTOR_MAX; i++) {
      if (cur.localName === 'label' && cur.control) return cur.control;
      if (isClickable(cur, C)) return cur;
      cur = cur.parentElement || (cur.getRootNode && cur.getRootNode().host) || null;
    }
    return el;
  }

  function methodOf(v) {
    const m = String(v ?? '').trim().toLowerCase();
    return m === 'post' || m === 'dialog' ? m : 'get';       // HTML: invalid and missing → GET
  }

  function absolute(url, base) {
    try {
      return new URL(url, base).href;
    } catch {
      return String(url);       // unparseable: classify() finds no origin: elsewhere
    }
  }

  /**
   * Describes the control a click on `element` would activate, for classify() and the hold card.
   * Bounded: a few attributes, ≤ 2000 characters of textContent, ≤ 8 ancestors, ≤ 3 icons.
   */
  function describe(element) {
    const desc = { tag: '', type: '', role: '', text: '', label: '', title: '', value: '',
      name: '', href: '', isSubmit: false, formMethod: '', formAction: '', pageOrigin: '' };
    if (!element || typeof element.getAttribute !== 'function') return desc;
    const C = globalThis.ChaperoneSnapshotCore;
    const el = controlOf(element, C);
    const like = elementLike(el);
    const tag = el.localName;
    const attr = (n) => el.getAttribute(n) ?? '';
    const typeAttr = attr('type').trim().toLowerCase();

    desc.tag = tag;
    if (tag === 'input') desc.type = typeAttr || 'text';
    else if (tag === 'button') {
      desc.type = typeAttr === 'button' || typeAttr === 'reset' ? typeAttr : 'submit';
    }
    desc.role = C ? C.roleOf(like) : '';

    let text = collapse(like.text);
    if (!text && el.querySelectorAll) {
      // An icon button: the icon's alt/aria-label/title is what a sighted person reads as its name.
      const icons = [];
      for (const i of el.querySelectorAll('img[alt], [aria-label], [title]')) {
        const t = collapse(i.getAttribute('alt') || i.getAttribute('aria-label')
          || i.getAttribute('title'));
        if (t) icons.push(t);
        if (icons.length >= ICON_MAX) break;
      }
      text = icons.join(' ');
    }
    desc.text = clip(text, TEXT_MAX);

    const buttonInput = tag === 'input'
      && ['submit', 'button', 'reset', 'image'].includes(desc.type);
    const value = buttonInput && desc.type !== 'image' ? collapse(attr('value')) : '';
    let label = collapse(C ? C.nameOf(like, desc.role) : attr('aria-label'));
    // The browser's default caption ("Submit", "Reset", "Choose file") is not the page's word.
    if (tag === 'input' && label === DEFAULT_CAPTION[desc.type]
      && ![value, attr('aria-label'), like.labelledByText, attr('title'), attr('alt'),
        like.labelText].some((s) => collapse(s) === label)) label = '';
    desc.label = clip(collapse(label), TEXT_MAX);
    desc.title = clip(collapse(attr('title')), TEXT_MAX);
    desc.value = clip(value, TEXT_MAX);
    desc.name = clip(attr('name'), TEXT_MAX);
    if (tag === 'a' || tag === 'area') {
      desc.href = clip(typeof el.href === 'string' ? el.href : attr('href'), 2000);
    }

    const form = (tag === 'button' || tag === 'input') ? el.form : null;
    desc.isSubmit = !!form && ((tag === 'button' && desc.type === 'submit')
      || (tag === 'input' && (desc.type === 'submit' || desc.type === 'image')));
    const doc = el.ownerDocument;
    if (desc.isSubmit) {
      // Attributes, not form.action/form.method: a field named "action" or "method" shadows those.
      const fm = el.getAttribute('formmethod');
      desc.formMethod = methodOf(fm !== null ? fm : form.getAttribute('method'));
      const fa = collapse(el.getAttribute('formaction'));
      const action = fa || collapse(form.getAttribute('action'));
      desc.formAction = clip(action ? absolute(action, doc.baseURI) : doc.URL, 2000);
    }
    const view = doc && doc.defaultView;
    // self.origin is the document's real origin (about:blank and srcdoc frames inherit theirs).
    if (view) {
      desc.pageOrigin = typeof view.origin === 'string' ? view.origin : view.location.origin;
    }
    return desc;
  }

  const deepFreeze = (o) => {
    for (const v of Object.values(o)) if (v && typeof v === 'object') deepFreeze(v);
    return Object.freeze(o);
  };

  globalThis.ChaperoneOutward = Object.freeze({
    WORDS: deepFreeze(WORDS), classify, describe, normalize,
  });
})();
