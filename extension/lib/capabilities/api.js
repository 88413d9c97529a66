// SPDX-License-Identifier: GPL-3.0-or-later
// The site's own API: browser.api.learn (the routes the page's XHR/fetch calls used, lib/api-learn.js)
// and browser.api.call (a call of one of them, made from inside the page's frame so the page's
// own cookies sign it). Mirrors the agent tool browser_api (src/core/agent/tools/chp-tool-api.c).
//
// A call is checked here after the router's checks (grant, scope, the named frame's current
// document, the floor on its URL): the URL passes the floor too; it goes only to the frame's own
// origin or an origin the tab's current documents already talked to ("Chaperone calls only what
// the page already talks to": the agent cannot aim the person's session at a new server); and a
// write is judged (lib/api-outward.js) and held for the person — not sent — unless it is a plain
// write an approved plan covers. The person's Approve (capabilities/hold.js) sends the held call
// once, as it was shown. A call signs itself with the page's own header (bearer, CSRF) only from
// the value the page itself last sent to that origin (lib/capture.js), and carries the marker
// headers (X-Requested-With…) the page sends with that endpoint; no value is ever returned.

import { ChaperoneError } from '../scopes.js';
import { publicHold } from '../holds.js';
import { learnRoutes } from '../api-learn.js';
import { classifyCall, canonicalOf, heldCall } from '../api-outward.js';
import { pageFetch } from '../api-fetch.js';
import { isCredentialHeader, shapeOf } from '../api-shape.js';
import { redactText, redactValue } from '../redact.js';
import { webOrigin } from '../targets.js';
import { bad, frameId, obj, oneOf, optString, tabId } from './common.js';
import { topFrameParams } from './network.js';
import { allowOf } from './plan.js';

export const METHODS_ALLOWED = Object.freeze(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE']);
export const MAX_BODY_CHARS = 64 * 1024;
export const MAX_REPLY_BYTES = 1024 * 1024;
export const MAX_REPLY_TEXT = 64 * 1024;
const MAX_URL = 8192;
const CALL_TIMEOUT_MS = 30000;
const CREDENTIAL_KINDS = ['bearer', 'header', 'cookie', 'none'];
const TEXTUAL = /^(?:text\/|application\/(?:[\w.+-]*\+)?(?:json|xml|javascript|x-www-form-urlencoded)$)/;

/** The call's params, checked: sizes bounded, a body only with a write, a form of strings. */
export function callParams(p) {
  const o = obj(p);
  const out = { tabId: tabId(o.tabId), frameId: frameId(o.frameId) };
  out.method = oneOf(typeof o.method === 'string' ? o.method.toUpperCase() : o.method, 'method', METHODS_ALLOWED);
  if (typeof o.url !== 'string' || o.url.length > MAX_URL) throw bad('url is an absolute http(s) URL');
  let u;
  try {
    u = new URL(o.url);
  } catch {
    throw bad('url is an absolute http(s) URL');
  }
  if ((u.protocol !== 'http:' && u.protocol !== 'https:') || u.username || u.password) {
    throw bad('url is an absolute http(s) URL, without a user name or password in it');
  }
  // A "." or ".." step (or %2e for a dot) is resolved away by the URL: the call would go to a
  // path other than the one named, which no learned route may (the app fills a route's slots).
  // The URL parser drops tabs and line breaks and reads "\\" as "/": "/.\t./" is "/../".
  if (/[\t\n\r\\]/.test(o.url)) throw bad('url has a tab, a line break or a backslash in it');
  const path = o.url.replace(/^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i, '').split(/[?#]/)[0];
  if (path.split(/[/\\]/).some((seg) => /^(?:\.|%2e){1,2}$/i.test(seg))) throw bad('url has a "." or ".." step in its path');
  out.url = u.href;
  if (o.body !== undefined) {
    if (out.method === 'GET' || out.method === 'HEAD') throw bad(`${out.method} takes no body`);
    const isForm = o.body && typeof o.body === 'object' && !Array.isArray(o.body) &&
      Object.keys(o.body).length === 1 && o.body.form && typeof o.body.form === 'object' && !Array.isArray(o.body.form);
    if (isForm && !Object.values(o.body.form).every((v) => typeof v === 'string')) {
      throw bad('body.form is {name: string}');
    }
    let text;
    try {
      text = JSON.stringify(o.body);
    } catch {
      throw bad('body is not a JSON value');
    }
    if (text === undefined || text.length > MAX_BODY_CHARS) throw bad('body is a JSON value of at most 64 KiB');
    out.body = JSON.parse(text);
    out.form = isForm;
  }
  if (o.credential !== undefined && o.credential !== null) {
    const c = obj(o.credential);
    const kind = oneOf(c.kind, 'credential.kind', CREDENTIAL_KINDS);
    const header = kind === 'bearer' ? 'authorization' : optString(c.header, 'credential.header', 64)?.toLowerCase();
    if (kind === 'header' && (!header || !isCredentialHeader(header))) {
      throw bad('credential.header names a header the page signs its calls with (authorization, x-*, *-token, *csrf*)');
    }
    out.credential = kind === 'header' ? { kind, header } : { kind };
  }
  // `expect` is how the person's Approve sends a held call (approveCall below). Sent over the
  // wire it is accepted but changes nothing: a canonical is easy to write, an approval is not.
  if (o.expect !== undefined && (typeof o.expect !== 'string' || o.expect.length > 90000)) throw bad('expect is a string');
  out.allow = allowOf(o.allow);
  // A route's call (the app's browser_api route): a read or nothing, never a hold.
  if (o.readOnly !== undefined && typeof o.readOnly !== 'boolean') throw bad('readOnly is a boolean');
  if (o.readOnly === true) out.readOnly = true;
  return out;
}

/** What a held call keeps for its Approve (no plan: an approval is the person's own). */
const keptCall = (p) => {
  const call = { tabId: p.tabId, frameId: p.frameId, method: p.method, url: p.url };
  if (p.body !== undefined) Object.assign(call, { body: p.body, form: p.form });
  if (p.credential) call.credential = { ...p.credential };
  return call;
};

function floorRefusal(level, tabId, reason, message) {
  return new ChaperoneError('refused_floor', message, { tabId, level, reason });
}

/**
 * Checks one call from the frame of `ctx` (the router has checked grant, scope and the frame's
 * document) and makes the request the page will send. `approved`: the person approved this very
 * call (hold.js); otherwise a write is held unless a plan covers it. `docs`: the tab's documents,
 * when the caller read them already. → {held: true, hold}, or {req, plan} for pageFetch.
 */
async function prepareCall(ctx, p, { approved = false, docs, timeoutMs = CALL_TIMEOUT_MS } = {}) {
  const { router, tabId: tab, frameId: frame, documentId, grant } = ctx;
  // Judged by what it does, not its method alone: a GET may delete (lib/api-outward.js).
  const verdict = classifyCall(p);
  const write = verdict.kind !== 'read';
  const target = webOrigin(p.url);
  const floor = router.floorOf(p.url);
  const frameFloor = router.floorOf(ctx.frame?.url);
  if (floor.level === 'blind' || frameFloor.level === 'blind') {
    const f = floor.level === 'blind' ? floor : frameFloor;
    throw floorRefusal(f.level, tab, f.reason, 'That page is off limits to agents (the URL floor)');
  }
  if (write && (floor.level === 'hands-only' || frameFloor.level === 'hands-only')) {
    const f = floor.level === 'hands-only' ? floor : frameFloor;
    throw floorRefusal(f.level, tab, f.reason, 'Agents may read this site but not change anything on it');
  }
  docs ??= await router.capture.documents(tab);
  // What the calling document itself talks to: another frame's traffic (an ad's, a widget's) is
  // not this page's, nor are the headers it sent.
  const own = new Map(docs.has(documentId) ? [[documentId, docs.get(documentId)]] : []);
  if (target !== webOrigin(ctx.frame?.url) && !router.capture.originsOf(tab, own).has(target)) {
    throw new ChaperoneError('target_denied', 'Chaperone calls only what the page already talks to',
      { tabId: tab, origin: target });
  }

  if (write && p.readOnly) {
    const does = { delete: 'deletes', outward: 'sends' }[verdict.kind] ?? 'changes';
    throw new ChaperoneError('target_denied',
      `That endpoint ${does} something (${verdict.word ?? p.method}): only a read may be routed`,
      { tabId: tab, kind: verdict.kind });
  }
  let plan = null;
  if (write && !approved) {
    const host = new URL(p.url).hostname;
    if (verdict.kind === 'write' && p.allow && p.allow.sites.includes(host)) {
      plan = { planId: p.allow.planId, site: host };
      if (p.allow.step !== undefined && p.allow.of !== undefined) Object.assign(plan, { step: p.allow.step, of: p.allow.of });
    } else {
      const h = router.holds.create({
        held: heldCall(p, verdict), tabId: tab, frameId: frame, documentId, grantId: grant.grantId,
        captureId: null, ref: null, action: 'api', call: keptCall(p),
      });
      return { held: true, hold: publicHold(h) };
    }
  }

  const headers = {};
  if (p.body !== undefined) {
    headers['Content-Type'] = p.form ? 'application/x-www-form-urlencoded' : 'application/json';
  }
  const cred = p.credential;
  if (cred && (cred.kind === 'bearer' || cred.kind === 'header')) {
    const value = router.capture.secret(tab, target, cred.header);
    if (!value || (cred.kind === 'bearer' && !/^\s*bearer\s/i.test(value))) {
      throw new ChaperoneError('target_denied',
        'The page has not sent that credential to this origin yet: sign in again in the page, or use it there first',
        { tabId: tab, origin: target, header: cred.header });
    }
    headers[cred.header] = value;
  }
  // The endpoint's marker headers, as the page sends them with it (TiddlyWiki's server refuses a
  // write without X-Requested-With): plain words, not credentials (lib/capture.js).
  for (const [name, value] of Object.entries(router.capture.markersFor(tab, own, p.method, p.url))) {
    if (!Object.keys(headers).some((h) => h.toLowerCase() === name)) headers[name] = value;
  }
  const body = p.body === undefined ? undefined
    : p.form ? new URLSearchParams(p.body.form).toString() : JSON.stringify(p.body);
  return { plan, req: { url: p.url, method: p.method, headers, body, timeoutMs: Math.min(CALL_TIMEOUT_MS, timeoutMs),
    maxBytes: MAX_REPLY_BYTES, maxText: MAX_REPLY_TEXT } };
}

/** pageFetch in the checked document of `ctx`, on `arg` (one request, or {list}). */
async function inPage({ router, chrome, tabId: tab, frameId: frame, documentId }, arg, calls) {
  for (const c of calls) router.capture.expectOwn(tab, c.method, c.url);
  let results;
  try {
    results = await chrome.scripting.executeScript({
      target: { tabId: tab, documentIds: [documentId] }, world: 'ISOLATED', func: pageFetch, args: [arg],
    });
  } catch {
    throw new ChaperoneError('stale_document', 'The frame no longer shows that document', { tabId: tab, frameId: frame });
  }
  return results?.[0]?.result;
}

/** The page's answer `r` to a prepared call → the answer as the agent gets it. */
function answerOf(r, prepared, { router, tabId: tab }) {
  if (!r || typeof r !== 'object') throw new ChaperoneError('internal', 'The page did not answer the call');
  const origin = webOrigin(prepared.req.url);
  if (r.error === 'redirected') {
    throw new ChaperoneError('target_denied', 'The site answered with a redirect, which Chaperone does not follow',
      { tabId: tab, origin });
  }
  const answer = replyOf(r, router.capture.secretValues?.(tab) ?? []);
  if (prepared.plan) answer.plan = prepared.plan;
  return answer;
}

/**
 * Checks and makes one call from the frame of `ctx` (the router has checked grant, scope and the
 * frame's document). `approved`: the person approved this very call (hold.js); otherwise a write
 * is held unless a plan covers it. → the answer, or {held: true, hold}.
 */
export async function runCall(ctx, p, { approved = false, timeoutMs } = {}) {
  const prepared = await prepareCall(ctx, p, { approved, timeoutMs });
  if (prepared.held) return prepared;
  return answerOf(await inPage(ctx, prepared.req, [p]), prepared, ctx);
}

/**
 * Reads (GETs and HEADs that do not act, GraphQL queries) in one visit to the page:
 * browser.batch's consecutive API reads, each checked as runCall checks it, then made together
 * (pageFetch's list); their answers count up to the first that is not 2xx. One executeScript for
 * all, and no read waiting for the one before, is what a batch of reads saves over one call each.
 * → [{value} | {error}] in order, up to the first failure (a read refused before it was sent
 * comes last as its error, once those before it succeeded; none after it is sent).
 */
export async function runReads(ctx, calls, timeoutMs) {
  const docs = await ctx.router.capture.documents(ctx.tabId);
  const prepared = [];
  let refused = null;
  for (const p of calls) {
    try {
      prepared.push(await prepareCall(ctx, p, { docs, timeoutMs }));
    } catch (e) {
      refused = e;
      break;
    }
  }
  const out = [];
  if (prepared.length > 0) {
    const r = await inPage(ctx, { list: prepared.map((x) => x.req) }, calls.slice(0, prepared.length));
    const list = Array.isArray(r?.list) ? r.list.slice(0, prepared.length) : [];
    if (list.length === 0) throw new ChaperoneError('internal', 'The page did not answer the calls');
    for (let i = 0; i < list.length; i++) {
      try {
        out.push({ value: answerOf(list[i], prepared[i], ctx) });
      } catch (e) {
        out.push({ error: e });
        break;
      }
      if (!out[i].value.ok) break;
    }
  }
  if (refused && out.length === prepared.length && out.every((o) => o.value?.ok)) out.push({ error: refused });
  return out;
}

// An HTML page's own tokens: a <meta> or <input> whose name says CSRF, XSRF, token, authenticity
// or nonce (Rails' csrf-token, a form's hidden authenticity_token) keeps its tag, not its value.
const TOKEN_TAG = /<(?:meta|input)\b[^<>]*>/gi;   // [^<>]: linear on "<meta<meta<meta…"
// Each attribute read once (a pattern that tried each "id=" anew took seconds on a long tag).
const TAG_NAME = /\b(?:name|id|property)\s*=\s*("[^"]*|'[^']*|[^\s"'>]*)/gi;
const TOKEN_WORD = /csrf|xsrf|token|authenticity|nonce/i;
const isTokenTag = (tag) => [...tag.matchAll(TAG_NAME)].some((m) => TOKEN_WORD.test(m[1]));
const TAG_VALUE = /(\b(?:content|value)\s*=\s*)(?:"[^"]*"|'[^']*'|[^\s"'>]+)/gi;
// A tag a cut reply ends inside: its name may lie past the cut, so any value in it goes, the
// one the cut left open included.
const OPEN_TAG = /<(?:meta|input)\b[^<>]*$/i;
const OPEN_TAG_VALUE = /(\b(?:content|value)\s*=\s*)(?:"[^"]*"?|'[^']*'?|[^\s"'>]+)/gi;
const MIN_SECRET = 8;
// An Authorization value's scheme (RFC 7235: a token, then whitespace): Bearer, Token, Basic,
// DPoP, MAC… A server that echoes the credential back writes its token68 alone as often as not.
const AUTH_SCHEME = /^\s*[!#$%&'*+.^_`|~0-9A-Za-z-]+\s+/;

const hex4 = (c, upper) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')[upper ? 'toUpperCase' : 'toLowerCase']()}`;
// What JSON writers escape as \uXXXX besides quotes: ASP.NET's (+ < > & ' ") and the cautious
// ones (every character that is not a letter or a digit).
const HTML_SAFE = /[+<>&'"]/g;
const NOT_ALNUM = /[^0-9A-Za-z]/g;

/** A Basic credential's decoded `user:password`, and its password, or []. */
function basicParts(value) {
  const m = /^\s*basic\s+([A-Za-z0-9+/]+={0,2})\s*$/i.exec(value);
  if (!m) return [];
  let plain = '';
  try {
    plain = atob(m[1]);
  } catch {
    return [];
  }
  const colon = plain.indexOf(':');
  return colon < 0 ? [plain] : [plain, plain.slice(colon + 1)];
}

/**
 * The forms a secret may take in a reply: as sent, its token without a scheme (and a Basic
 * credential's decoded user:password and password), with slashes escaped, URL-encoded (either
 * case of hex) and JSON-escaped as \uXXXX.
 */
function formsOf(secrets) {
  const out = new Set();
  for (const s of secrets) {
    for (const v of [s, s.replace(AUTH_SCHEME, '').trim(), ...basicParts(s)]) {
      if (v.length < MIN_SECRET) continue;
      const url = encodeURIComponent(v);
      out.add(v);
      out.add(v.replace(/\//g, '\\/'));
      out.add(url);
      out.add(url.replace(/%[0-9A-F]{2}/g, (x) => x.toLowerCase()));
      for (const upper of [true, false]) {
        out.add(v.replace(HTML_SAFE, (c) => hex4(c, upper)));
        out.add(v.replace(NOT_ALNUM, (c) => hex4(c, upper)));
      }
    }
  }
  return [...out].sort((a, b) => b.length - a.length);
}

/**
 * `text` without the credential values the page sent (`forms`: formsOf() them, each replaced
 * wherever it appears) and without the values of an HTML page's token tags. `cut`: the text was
 * cut short, so a secret's first part at its end goes too (it may be one straddling the cut).
 */
function scrub(text, forms, cut = false) {
  let out = text.includes('<') ? text.replace(TOKEN_TAG, (tag) => (isTokenTag(tag) ? tag.replace(TAG_VALUE, '$1"[redacted]"') : tag)) : text;
  for (const v of forms) if (out.length >= v.length && out.includes(v)) out = out.split(v).join('[redacted]');
  if (cut) {
    out = out.replace(OPEN_TAG, (tag) => tag.replace(OPEN_TAG_VALUE, '$1"[redacted]"'));
    for (const v of forms) {
      for (let n = v.length - 1; n >= MIN_SECRET / 2; n--) {
        if (out.endsWith(v.slice(0, n))) {
          out = `${out.slice(0, out.length - n)}[redacted]`;
          break;
        }
      }
    }
  }
  return out;
}

/** `value` with scrub() on every string in it, names included, as deep as the redactor goes. */
function scrubValue(value, forms, depth = 0) {
  if (typeof value === 'string') return value.includes('<') || forms.some((v) => value.includes(v)) ? scrub(value, forms) : value;
  if (!value || typeof value !== 'object') return value;
  if (depth > 256) return '[redacted: too deep]';
  if (Array.isArray(value)) return value.map((v) => scrubValue(v, forms, depth + 1));
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [scrub(k, forms), scrubValue(v, forms, depth + 1)]));
}

/**
 * The page's reply as the agent gets it: bounded, redacted, with its shape. `secrets`: the
 * credential values the page sent to the reply's origin, which never come back (scrub()).
 */
export function replyOf(r, secrets = []) {
  const forms = formsOf(secrets);
  if (r.error) return { status: 0, ok: false, error: r.error === 'timeout' ? 'timeout' : 'network', ms: r.ms ?? null };
  const out = {
    status: r.status, ok: r.ok === true, contentType: r.contentType ?? null,
    size: Number.isSafeInteger(r.size) ? r.size : null, truncated: r.truncated === true, ms: r.ms ?? null,
  };
  if (Object.hasOwn(r, 'json')) {
    out.json = scrubValue(redactValue(r.json).value, forms);
    out.shape = shapeOf(r.json);
  } else if (typeof r.text === 'string' && r.text !== '') {
    const textual = TEXTUAL.test(out.contentType ?? 'text/plain') ||
      // eslint-disable-next-line no-control-regex
      (out.contentType === null && !/[\u0000-\u0008\u000e-\u001f]/.test(r.text));
    if (textual) out.text = scrub(redactText(r.text).text, forms, r.truncated === true);
    out.shape = { type: textual ? 'text' : 'binary' };
  } else {
    out.shape = { type: 'empty' };
  }
  return out;
}

/**
 * The person's Approve of a held call (hold.js): the same grant, the same document of the same
 * frame, then the call exactly as held, once. → the hold as it ended.
 */
export async function approveCall({ router, chrome, signal }, h) {
  const found = router.grants.lookupTab(h.tabId);
  if (found.error || found.grant.grantId !== h.grantId) return publicHold(router.holds.end(h.holdId, 'expired'));
  let frame = null;
  try {
    frame = await chrome.webNavigation.getFrame({ tabId: h.tabId, frameId: h.frameId });
  } catch {
    frame = null;
  }
  const call = h.call;
  if (!frame || frame.documentId !== h.documentId || !call || canonicalOf(call) !== h.canonical) {
    return publicHold(router.holds.end(h.holdId, 'changed'));
  }
  const ctx = { router, chrome, signal, tabId: h.tabId, frameId: h.frameId, documentId: h.documentId, frame,
    grant: found.grant };
  let value;
  try {
    value = await runCall(ctx, call, { approved: true });
  } catch (e) {
    if (e?.code === 'stale_document' || e?.code === 'origin_changed') {
      return publicHold(router.holds.end(h.holdId, 'changed'));
    }
    return publicHold(router.holds.end(h.holdId, 'failed', { error: e?.code ?? 'internal' }));
  }
  if (value.error) return publicHold(router.holds.end(h.holdId, 'failed', { error: value.error }));
  return publicHold(router.holds.end(h.holdId, 'done', { changes: { status: value.status } }));
}

export const HANDLERS = Object.freeze({
  'browser.api.learn': {
    params: (p) => topFrameParams(obj(p)),
    target: (p) => ({ tabId: p.tabId, frameId: 0 }),
    async run({ router, tabId: tab, documentId, frame }) {
      // A page that just loaded is still making its first calls: learn from them all.
      await router.capture.quiet(tab);
      const docs = await router.capture.documents(tab);
      const entries = learnRoutes(router.capture.entriesOf(tab, docs), docs);
      return { origin: webOrigin(frame?.url), documentId, entries, capturing: router.capture.capturing(tab) };
    },
  },
  'browser.api.call': {
    params: callParams,
    target: (p) => ({ tabId: p.tabId, frameId: p.frameId }),
    run: (ctx) => runCall(ctx, ctx.params),
  },
});
