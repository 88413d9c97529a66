// SPDX-License-Identifier: GPL-3.0-or-later
// The target check: is the frame a call names still the one the person granted? Pure — the caller
// fetches the frame's current state with chrome.webNavigation.getFrame and passes it in — so every
// answer (target_denied, origin_changed, stale_document) is decided in one place and tested in Node.
// It never picks another frame or document: a call either reaches exactly what it named or fails.

import { ChaperoneError } from './scopes.js';

const EXTENSION_SCHEMES = ['chrome-extension:', 'moz-extension:', 'safari-web-extension:', 'extension:'];

/** The origin of an http(s) URL (`https://a.example:8443`), else null (chrome:, about:, data:, …). */
export function webOrigin(url) {
  if (typeof url !== 'string' || url.length === 0) return null;
  let parsed;
  try {
    parsed = new URL(url);
  } catch {
    return null;
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return null;
  return parsed.origin;
}

export function isExtensionUrl(url) {
  if (typeof url !== 'string') return false;
  const lower = url.toLowerCase();
  return EXTENSION_SCHEMES.some((scheme) => lower.startsWith(scheme));
}

/** Why a frame can never be a target, or null when it could be one (an http(s) page). */
export function unreachableReason(url) {
  if (isExtensionUrl(url)) return 'extension';
  if (webOrigin(url) === null) return 'not_web';
  return null;
}

/** The grant's target for exactly this tab and frame, or null. */
export function findTarget(grant, tabId, frameId) {
  if (!grant || !Array.isArray(grant.targets)) return null;
  return grant.targets.find((t) => t.tabId === tabId && t.frameId === frameId) ?? null;
}

/**
 * Checks a named target against the grant and the frame's current state.
 * @param grant     the live grant covering the tab
 * @param named     {tabId, frameId, documentId?} as the caller (or a capture) named it
 * @param frame     what chrome.webNavigation.getFrame returned now: {documentId, url, parentFrameId,
 *                  errorOccurred, documentLifecycle?}, or null when the frame is gone
 * @returns {ok:true, target, documentId} — documentId is the current one, to pin the page call to
 *          it — or {ok:false, error: ChaperoneError}
 */
export function checkTarget(grant, named, frame) {
  const { tabId, frameId, documentId } = named;
  const data = { tabId, frameId };
  const fail = (code, message) => ({ ok: false, error: new ChaperoneError(code, message, data) });

  const target = findTarget(grant, tabId, frameId);
  if (!target) return fail('target_denied', 'That frame is not part of the grant');
  // A target is always a web origin; a damaged one is refused rather than trusted.
  if (webOrigin(target.origin) !== target.origin) {
    return fail('target_denied', 'The granted target is not a web page');
  }
  if (!frame) return fail('stale_document', 'The frame is gone');

  // Extension pages (ours or another extension's) and browser pages are never targets.
  if (unreachableReason(frame.url) !== null) {
    return fail('target_denied', 'The frame does not show a web page');
  }
  if (webOrigin(frame.url) !== target.origin) {
    return fail('origin_changed', 'The frame navigated to another site');
  }
  if (frame.errorOccurred) return fail('stale_document', 'The frame shows an error page');
  if (frame.documentLifecycle && frame.documentLifecycle !== 'active') {
    return fail('stale_document', 'The document is no longer the active one');
  }
  if (documentId !== undefined && documentId !== null && frame.documentId !== documentId) {
    return fail('stale_document', 'The frame now holds another document');
  }
  return { ok: true, target, documentId: frame.documentId };
}

/**
 * A frame whose document inherits its parent's origin and has no URL of its own: about:blank
 * (script-written ones take their writer's URL, which the page reports), about:srcdoc, javascript:.
 * It is never a target of its own: the parent's page agent reads and acts in it, under the
 * parent's grant and judged by the parent's URL (content/page-common.js inheritedDoc).
 */
export function inheritsOrigin(url) {
  return typeof url === 'string' && /^(about:|javascript:)/i.test(url);
}

/**
 * For browser.frames: can this frame be read under the grant? {readable:true} or
 * {readable:false, reason:'not_granted'|'not_web'|'extension'|'origin_changed'}.
 * `inline`: the parent's snapshot read this frame as part of the page (the parent's own page
 * agent says so, for a frame that inherits its origin): {readable:true, inline:true}.
 */
export function frameReadability(grant, tabId, frame, { inline = false } = {}) {
  if (inline) return { readable: true, inline: true };
  const unreachable = unreachableReason(frame.url);
  if (unreachable) return { readable: false, reason: unreachable };
  const target = findTarget(grant, tabId, frame.frameId);
  if (!target) return { readable: false, reason: 'not_granted' };
  if (webOrigin(frame.url) !== target.origin) return { readable: false, reason: 'origin_changed' };
  return { readable: true };
}
