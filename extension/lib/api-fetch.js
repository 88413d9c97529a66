// SPDX-License-Identifier: GPL-3.0-or-later
// The one function browser.api.call runs inside the page's frame (chrome.scripting.executeScript,
// the ISOLATED world): a fetch made from the page's own document, so the browser signs it with the
// page's cookies and sends it from the page's origin, exactly as the page's own calls go. It is
// serialized into the page, so it uses nothing from outside its own body and its argument.
//
// What it hands back is bounded and carries no header values: status, content type (without
// parameters), the size, at most 1 MiB of the body read (as JSON when it parses, else ≤ 64 KiB of
// text); the worker redacts both before they leave. A redirect is not followed, and refused
// without reading the reply: the call was made for one origin's API only, and a browser that
// follows a redirect to another origin drops only Authorization from what it sends there — a
// CSRF header or an API key would go along to a server the page never talked to.

/**
 * @param req {url, method, headers: {name: value}, body?: string, timeoutMs, maxBytes, maxText},
 *   or {list: [req, …]}: a batch's consecutive reads, made together in one visit to the page
 *   (a read changes nothing, and one at a time each would wait for the one before); the answers
 *   are kept up to the first that failed, in order, and the rest dropped unread
 * @returns {status, ok, contentType, size, truncated, ms, json?, text?} or {error, message}; for
 *   a list, {list: [those]}
 */
export async function pageFetch(req) {
  if (Array.isArray(req.list)) {
    // The function's own name: it is injected as a named function expression.
    const all = await Promise.all(req.list.map((one) => pageFetch(one)));
    const failed = all.findIndex((r) => r.error || !r.ok);
    return { list: failed < 0 ? all : all.slice(0, failed + 1) };
  }
  const started = performance.now();
  const ac = new AbortController();
  const timer = setTimeout(() => ac.abort(), req.timeoutMs);
  try {
    let res;
    try {
      res = await fetch(req.url, {
        method: req.method, headers: req.headers, body: req.body, credentials: 'include',
        redirect: 'manual', cache: 'no-store', signal: ac.signal,
      });
    } catch (e) {
      return { error: ac.signal.aborted ? 'timeout' : 'network', message: String(e?.message ?? e).slice(0, 200) };
    }
    if (res.type === 'opaqueredirect' || (res.url && new URL(res.url).origin !== new URL(req.url).origin)) {
      try { await res.body?.cancel(); } catch { /* gone */ }
      return { error: 'redirected', message: 'The reply came from another origin' };
    }
    const chunks = [];
    let read = 0;
    let truncated = false;
    const reader = res.body ? res.body.getReader() : null;
    while (reader) {
      const { done, value } = await reader.read();
      if (done) break;
      const room = req.maxBytes - read;
      if (value.byteLength > room) {
        chunks.push(value.subarray(0, room));
        read += room;
        truncated = true;
        try { await reader.cancel(); } catch { /* gone */ }
        break;
      }
      chunks.push(value);
      read += value.byteLength;
    }
    const all = new Uint8Array(read);
    let at = 0;
    for (const c of chunks) {
      all.set(c, at);
      at += c.byteLength;
    }
    const type = (res.headers.get('content-type') ?? '').split(';')[0].trim().toLowerCase() || null;
    const length = Number(res.headers.get('content-length'));
    const out = {
      status: res.status, ok: res.ok, contentType: type,
      size: Number.isSafeInteger(length) && res.headers.get('content-length') !== null ? length : read,
      truncated, ms: Math.round(performance.now() - started),
    };
    const text = new TextDecoder('utf-8').decode(all);
    const looksJson = /[/+]json$/.test(type ?? '') || /^\s*[[{]/.test(text);
    if (looksJson && !truncated) {
      try {
        out.json = JSON.parse(text);
        return out;
      } catch {
        // not JSON after all: text below
      }
    }
    if (text.length > 0) {
      out.text = text.length > req.maxText ? text.slice(0, req.maxText) : text;
      if (text.length > req.maxText) out.truncated = true;
    }
    return out;
  } finally {
    clearTimeout(timer);
  }
}
