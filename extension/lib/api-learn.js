// SPDX-License-Identifier: GPL-3.0-or-later
// browser.api.learn's reduction: the XHR/fetch requests a tab's current documents made (from the
// capture ring, lib/capture.js) → one entry per (method, origin, path template), so an agent sees
// the site's API as routes (`PUT /api/notes/{id}`) instead of two hundred requests. Pure: the
// router's handler (capabilities/api.js) gives it the entries and the documents; Node tests run it.
//
// Templates, and why:
// - A segment that names one thing — a number, a UUID, hex of 8 or more, a long token with digits,
//   anything percent-encoded or with a space — becomes {id}: it is the page's data, not the API's
//   word, and it may be a secret (a reset token) that must not be shown as a route.
// - A last segment right after a plural collection (`/tiddlers/HelloThere`) that is percent-encoded
//   or not a plain lowercase word becomes {<singular>} ({tiddler}): a title, not an endpoint.
// - Two paths that differ in exactly one segment, after a collection (`…/tiddlers/A`,
//   `…/tiddlers/B`) or where both differing segments are not plain words, share that segment as
//   {<singular of the segment before>}: two calls to the same route. `/api/contacts` and
//   `/api/messages` differ in one plain word after a non-collection: two routes, kept apart.
// Query keys are merged (their union), body shapes too; values are never here to merge.

import { isIdSegment, redactPath, headerWeight } from './api-shape.js';

export const MAX_LEARNED = 100;
const MAX_KEYS = 64;
const MAX_OPERATIONS = 16;

const PLAIN_WORD = /^[a-z]+(?:[-_][a-z]+)*$/;
const VERSION = /^v\d+(?:\.\d+)*$/i;
export const isPlaceholder = (s) => typeof s === 'string' && s.startsWith('{') && s.endsWith('}');

/** A segment naming a collection: a word ending in s (not ss), not a placeholder. */
export function isPlural(seg) {
  return typeof seg === 'string' && /^[A-Za-z][A-Za-z0-9_-]*[A-Za-z]s$/.test(seg) && !/ss$/i.test(seg) &&
    !/^(?:status|news|alias|canvas|bus|gas|plus|campus|series|species)$/i.test(seg);
}

/** The singular of a collection name, as a placeholder's name (letters, digits, _). */
export function singular(word) {
  let w = String(word ?? '');
  if (/ies$/i.test(w) && w.length > 4) w = w.slice(0, -3) + 'y';
  else if (/(?:sses|shes|ches|xes|zes)$/i.test(w)) w = w.slice(0, -2);
  else if (/s$/i.test(w) && !/ss$/i.test(w)) w = w.slice(0, -1);
  w = w.replace(/[^A-Za-z0-9_]+/g, '_').replace(/^_+|_+$/g, '');
  return w === '' ? 'id' : w;
}

/** A path's segments with ids and a collection's named item made placeholders (no merging yet). */
export function baseTemplate(path) {
  const raw = String(path ?? '/').split('/').slice(1);
  const segs = raw.map((s) => (isIdSegment(s) && !(s.includes('%') || s.includes(' ') || s.includes('+')) ? '{id}' : s));
  for (let i = 0; i < segs.length; i++) {
    if (isPlaceholder(segs[i]) || segs[i] === '') continue;
    const prev = i > 0 ? segs[i - 1] : null;
    const encoded = /[% +]/.test(raw[i]);
    const isLast = i === segs.length - 1;
    if (prev && isPlural(prev) && (encoded || (isLast && !PLAIN_WORD.test(raw[i])))) {
      segs[i] = `{${singular(prev)}}`;
    } else if (encoded) {
      segs[i] = '{id}';
    }
  }
  return segs;
}

/** Whether the one segment two paths differ in is the same route's parameter. */
function sameRoute(prev, a, b) {
  if (!prev || isPlaceholder(prev)) return false;
  if (isPlural(prev)) return true;
  return !PLAIN_WORD.test(a) && !PLAIN_WORD.test(b) && !VERSION.test(a) && !VERSION.test(b);
}

/**
 * Templates for a list of paths on one origin: path → template string ('/a/{id}/b'). Paths that
 * differ in one segment share it as a parameter (see the top of this file).
 */
export function templatePaths(paths) {
  const unique = [...new Set(paths.map(String))];
  const tpl = new Map(unique.map((p) => [p, baseTemplate(p)]));
  const byLength = new Map();
  for (const [p, segs] of tpl) {
    const group = byLength.get(segs.length) ?? [];
    group.push(p);
    byLength.set(segs.length, group);
  }
  for (const group of byLength.values()) {
    let changed = true;
    for (let round = 0; changed && round < 32; round++) {
      changed = false;
      for (let x = 0; x < group.length; x++) {
        for (let y = x + 1; y < group.length; y++) {
          const a = tpl.get(group[x]);
          const b = tpl.get(group[y]);
          let at = -1;
          let diffs = 0;
          for (let i = 0; i < a.length && diffs < 2; i++) {
            if (a[i] !== b[i]) {
              diffs += 1;
              at = i;
            }
          }
          if (diffs !== 1 || at === 0) continue;
          const prev = a[at - 1];
          const named = `{${singular(prev)}}`;
          let merged = null;
          if (!isPlaceholder(a[at]) && !isPlaceholder(b[at])) {
            if (sameRoute(prev, a[at], b[at])) merged = named;
          } else if (isPlural(prev) && (a[at] === named || b[at] === named)) {
            merged = named; // a named item and another item of the same collection
          }
          if (merged === null) continue;
          a[at] = merged;
          b[at] = merged;
          changed = true;
        }
      }
    }
  }
  return new Map([...tpl].map(([p, segs]) => [p, '/' + segs.join('/')]));
}

/** How a request was signed, as learn reports it: {kind: bearer|header|cookie|none, header?}. */
export function credentialKind(credential) {
  if (!credential) return { kind: 'none' };
  if (credential.bearer) return { kind: 'bearer', header: 'authorization' };
  const best = [...(credential.headers ?? [])].map((h) => [headerWeight(h), h])
    .filter(([w]) => w > 0).sort((p, q) => q[0] - p[0] || (p[1] < q[1] ? -1 : 1))[0];
  if (best) return { kind: 'header', header: best[1] };
  return credential.cookie ? { kind: 'cookie' } : { kind: 'none' };
}
const RANK = { none: 0, cookie: 1, header: 2, bearer: 3 };

function mergeBody(into, body) {
  if (!body || body.kind === 'none') return into;
  const out = into ?? { kind: body.kind, keys: {} };
  out.kind = body.kind;
  for (const [k, t] of Object.entries(body.keys ?? {})) {
    if (!Object.hasOwn(out.keys, k) && Object.keys(out.keys).length < MAX_KEYS) out.keys[k] = t;
  }
  if (body.operation) {
    const ops = new Set(out.operations ?? (out.operation ? [out.operation] : []));
    ops.add(body.operation);
    out.operation = body.operation;
    if (body.operationType) out.operationType = body.operationType;
    if (ops.size > 1) out.operations = [...ops].slice(0, MAX_OPERATIONS);
  }
  return out;
}

/**
 * The frame a route was called from, as the site memory keeps it: its origin, never its path. A
 * page's path names the person as often as the page (/in/jane-doe-4a5b, /u/alice%40example.com,
 * /invite/aB3dE5g), no template tells a name from a word, and a call needs only the frame's id
 * and document. → {origin, url} (url: the origin too), or nulls.
 */
function frameOf(url) {
  try {
    const { origin } = new URL(url);
    return origin === 'null' ? { origin: null, url: null } : { origin, url: origin };
  } catch {
    return { origin: null, url: null };
  }
}

/**
 * Whether a captured request is the site's own: made by the top document, or by a frame of the
 * origin it called. An ad's or a widget's frame calling the site (`fetch(…, {mode: 'no-cors'})`)
 * would otherwise plant a route, widen what the page "already talks to", or lend its headers.
 * @param docs Map documentId → {frameId, url} of the tab's frames now
 */
export function sitesOwn(e, docs) {
  const doc = docs.get(e.documentId);
  if (!doc) return false;
  return doc.frameId === 0 || frameOf(doc.url).origin === e.origin;
}

/**
 * The learned routes of a tab's current documents.
 * @param entries capture entries (lib/capture.js; raw paths), oldest first
 * @param docs    Map documentId → {frameId, url} of the tab's frames now
 * @returns [{method, origin, pathTemplate, queryKeys, body, credential, frameId, frameOrigin,
 *            frameUrl, sampleStatus, contentType, count, lastAt}], most used first
 */
export function learnRoutes(entries, docs) {
  const calls = entries.filter((e) => e.type === 'xmlhttprequest' && !e.agent && sitesOwn(e, docs));
  const byOrigin = new Map();
  for (const e of calls) {
    const list = byOrigin.get(e.origin) ?? [];
    list.push(e.path);
    byOrigin.set(e.origin, list);
  }
  const templates = new Map([...byOrigin].map(([origin, paths]) => [origin, templatePaths(paths)]));
  const routes = new Map();
  for (const e of calls) {
    const pathTemplate = redactPath(templates.get(e.origin).get(e.path)).path;
    const key = `${e.method} ${e.origin} ${pathTemplate}`;
    let r = routes.get(key);
    if (!r) {
      r = { method: e.method, origin: e.origin, pathTemplate, queryKeys: new Set(), body: null,
        credential: { kind: 'none' }, frameId: e.frameId, frameOrigin: null, frameUrl: null,
        sampleStatus: null, contentType: null, count: 0, lastAt: 0 };
      routes.set(key, r);
    }
    for (const k of e.queryKeys) r.queryKeys.add(k);
    r.body = mergeBody(r.body, e.body);
    const cred = credentialKind(e.credential);
    if (RANK[cred.kind] >= RANK[r.credential.kind]) r.credential = cred;
    r.count += 1;
    if (e.startedAt >= r.lastAt) {
      r.lastAt = e.startedAt;
      r.frameId = e.frameId;
      const frame = frameOf(docs.get(e.documentId)?.url);
      r.frameOrigin = frame.origin;
      r.frameUrl = frame.url;
      if (e.status !== null) r.sampleStatus = e.status;
      if (e.contentType !== null) r.contentType = e.contentType;
    }
  }
  return [...routes.values()]
    .map((r) => ({ ...r, queryKeys: [...r.queryKeys].sort().slice(0, 32) }))
    .sort((a, b) => b.count - a.count || b.lastAt - a.lastAt)
    .slice(0, MAX_LEARNED);
}
