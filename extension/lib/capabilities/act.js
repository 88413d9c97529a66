// SPDX-License-Identifier: GPL-3.0-or-later
// Acting on a node of a snapshot: click, double-click, focus, scroll, fill (setValue), hover, press a
// key, type text, drag it onto another (to) — press and type also on whatever has focus in the
// captured document (no ref, its captureId). A click that would send, delete or write is held for
// the person instead (lib/holds.js), and so is a key press that would set off such a control (the
// hold is then the click on that control) and a drag onto one (a card onto "Trash"); their
// Approve runs it again in hold.js (extension.hold.resolve).
// Mirrors the agent tool browser_act (src/core/agent/tools/chp-tool-act.c).

import { ChaperoneError } from '../scopes.js';
import { publicHold } from '../holds.js';
import { bad, id, obj, oneOf, parseRef } from './common.js';
import { allowOf } from './plan.js';
import { CONTEXT_LIMITS, capturedContext } from './read.js';
import { redactText } from '../redact.js';

/** The page's own dialogs during the act, as the app hears of them: three at most, redacted. */
function dialogsOf(list) {
  const out = [];
  for (const d of Array.isArray(list) ? list.slice(0, 3) : []) {
    if (!d || !['alert', 'confirm', 'prompt'].includes(d.kind) || !['ok', 'cancel', 'closed'].includes(d.answered)) continue;
    out.push({ kind: d.kind, answered: d.answered, message: redactText(String(d.message ?? '').slice(0, 300)).text });
  }
  return out;
}

export const ACTIONS = Object.freeze(['click', 'dblclick', 'focus', 'scroll', 'setValue', 'hover', 'press', 'type', 'drag']);
/** The actions that may set off a write, and so carry a plan's `allow` (the app's chp_tool_act_may_write). */
export const WRITE_ACTIONS = Object.freeze(new Set(['click', 'dblclick', 'press', 'drag']));
const MAX_VALUE_CHARS = 65536;
const MAX_TYPE_CHARS = 2000;

// A key as browser_act names it: modifiers (Control, Shift, Alt, Meta and their aliases) and one
// key name or one character, joined by "+". The page checks the name against its key table.
const KEY = /^(?:(?:Control|Ctrl|Shift|Alt|Option|Meta|Cmd|Command)\+){0,4}(?:[A-Za-z][A-Za-z0-9]{1,15}|[^\s+]|\+)$/u;

/** What each action takes besides ref: its one argument, or none. */
const ARGUMENT = Object.freeze({ setValue: 'value', press: 'key', type: 'text', drag: 'to' });

/** A key spec, or invalid_params. */
export function keyOf(v) {
  if (typeof v !== 'string' || v.length > 64 || !KEY.test(v)) {
    throw bad('key must be a key such as Enter, Tab, Escape, ArrowDown, a, or Control+s');
  }
  return v;
}

/** browser.node.action's params, checked (browser.batch checks its act steps with it too). */
export function actionParams(p) {
  const o = obj(p);
  const action = oneOf(o.action, 'action', ACTIONS);
  if (action === 'setValue' && (typeof o.value !== 'string' || o.value.length > MAX_VALUE_CHARS)) {
    throw bad('setValue needs a string value');
  }
  for (const [act, arg] of Object.entries(ARGUMENT)) {
    if (action !== act && o[arg] !== undefined) throw bad(`only ${act} takes ${arg}`);
  }
  const key = action === 'press' ? keyOf(o.key) : undefined;
  if (action === 'type' && (typeof o.text !== 'string' || o.text.length === 0 || o.text.length > MAX_TYPE_CHARS)) {
    throw bad(`type needs text of 1 to ${MAX_TYPE_CHARS} characters`);
  }
  // A drag's target: a ref of the same capture as the node dragged.
  const to = action === 'drag' ? parseRef(o.to) : null;
  if (to && (o.ref === undefined || parseRef(o.ref).captureId !== to.captureId)) throw bad('drag takes a ref and to from the same snapshot');
  const allow = allowOf(o.allow);
  if (allow && !WRITE_ACTIONS.has(action)) throw bad('allow goes with a click, a key press or a drag');
  if (o.capture !== undefined && typeof o.capture !== 'boolean') throw bad('capture is not a boolean');
  const common = { action, value: o.value, key, text: o.text, toRef: to?.pageRef, allow, capture: o.capture === true };
  // press and type without a ref act on the focused element of the capture's document.
  if (o.ref === undefined && (action === 'press' || action === 'type')) {
    if (o.captureId === undefined) throw bad('press and type need a ref, or the captureId of the document whose focused element they go to');
    const captureId = id(o.captureId, 'captureId');
    if (!/^[a-z0-9]{1,32}$/.test(captureId)) throw bad('captureId is not a capture from browser.context');
    return { ref: null, captureId, pageRef: null, ...common };
  }
  if (o.captureId !== undefined) throw bad('captureId goes only with press or type without a ref');
  return { ref: o.ref, ...parseRef(o.ref), ...common };
}

/**
 * Runs one act on the checked frame of `ctx` (the router's checks done: grant, scope, the frame's
 * current document, the floor). browser.batch runs its act steps through here too.
 */
export async function runAction({ router, chrome, params, signal, tabId: tab, frameId: frame, documentId, grant }) {
  const args = { captureId: params.captureId, action: params.action };
  if (params.pageRef) args.ref = params.pageRef;
  if (params.action === 'setValue') args.value = params.value;
  if (params.action === 'press') args.key = params.key;
  if (params.action === 'type') args.text = params.text;
  if (params.action === 'drag') args.to = params.toRef;
  // A batch step's {role, name}, for the page to check on an element found for an earlier step.
  if (params.sameAs) args.sameAs = { role: params.sameAs.role, name: params.sameAs.name };
  // A batch's wait step right after this act, in this document: the page says whether its text
  // shows once the act settled (value.untilFound), which spares the wait a visit when it does.
  if (typeof params.untilText === 'string') args.untilText = params.untilText;
  if (params.allow) {
    // step/of only label the pill ("plan step 2 of 3"); the page checks them again.
    const { planId, sites, step, of } = params.allow;
    args.allow = { planId, sites, ...(step !== undefined && of !== undefined ? { step, of } : {}) };
  }
  // capture: an act that changed the page in place answers with the page read again (a
  // diff against the document's last capture), taken by the page as soon as it settled:
  // what browser.context would answer next, without the round trip to the app and back.
  const captureId = params.capture ? router.newCaptureId() : null;
  if (captureId) args.capture = { captureId, ...CONTEXT_LIMITS, diff: true };
  // The page settles on DOM quiet and network quiet: count the tab's requests from now on
  // (before the page acts, so the action's own requests are seen), and let the page ask.
  const network = router.network;
  const release = network ? network.watch(tab) : () => {};
  if (network?.available) args.net = true;
  let value;
  try {
    // Before a click, a key press or a drop the document's main world is prepared once: the
    // dialog guard (the act may make the page ask something of its own: confirm, alert) and the
    // tracker of the act's own timers (page-timers-main.js), up to 100 ms long. A fill goes
    // without: its reaction is waited for as it comes (page-settle.js), and tracking its timers
    // measured no faster (AngularJS queues timers that change nothing, then waited for).
    if (WRITE_ACTIONS.has(params.action)) {
      const timers = await router.page.prepareMainWorld({ tabId: tab, frameId: frame, documentId }, signal);
      if (timers) args.timers = timers;
    }
    value = await router.page.run({ tabId: tab, frameId: frame, documentId }, 'action', args,
      { signal, network: network?.available ? network : null });
  } catch (e) {
    if (e.code === 'stale_document') {
      throw new ChaperoneError('stale_document',
        'The page navigated away during the action; it may have run. Take a new snapshot.',
        { tabId: tab, frameId: frame, maybeDone: true });
    }
    throw e;
  } finally {
    release();
  }
  if (value && typeof value === 'object' && value.held && typeof value.held === 'object') {
    // Not acted: the person decides (extension.hold.resolve). Not an error for the agent.
    // A held key press names the act its approval runs: the click on the control the key
    // would have set off (heldAction "click"), or the press itself ("press:<key>"), as the
    // page made sure, on a node the capture holds (heldRef). A held drag is approved as the
    // drag of the same node ("drag:<its ref>") onto its target (heldRef).
    const heldRef = typeof value.heldRef === 'string' && /^[A-Za-z0-9_-]{1,32}$/.test(value.heldRef) ? value.heldRef : null;
    const saysWhat = params.action === 'drag'
      ? value.heldAction === `drag:${params.pageRef}` && heldRef === params.toRef
      : value.heldAction === 'click' || value.heldAction === `press:${params.key}`;
    const heldAction = saysWhat ? value.heldAction : null;
    if ((params.action === 'press' || params.action === 'drag') && (!heldRef || !heldAction)) {
      throw new ChaperoneError('internal', 'The page held the act but did not say what approving it runs');
    }
    // A held double-click is approved as one click: what the control does is done once.
    const h = router.holds.create({
      held: value.held, tabId: tab, frameId: frame, documentId, grantId: grant.grantId, captureId: params.captureId,
      ref: heldRef ?? params.pageRef, action: heldAction ?? (params.action === 'dblclick' ? 'click' : params.action),
    });
    return { held: true, hold: publicHold(h), ref: params.ref };
  }
  // The act may have started a navigation: a result about a document that is gone would
  // mislead, so the agent hears stale_document (with done:true) and snapshots again. The
  // page watched for one from before it acted until it answered (changes.navigating); a
  // document that unloaded before answering never answers (stale_document above). So only
  // an answer that says a navigation started needs the browser's word on where it got to.
  const answer = value && typeof value === 'object' ? { ...value, ref: params.ref } : value;
  if (answer && typeof answer === 'object' && 'dialogs' in answer) {
    answer.dialogs = dialogsOf(value.dialogs);
    if (!answer.dialogs.length) delete answer.dialogs;
  }
  if (answer && typeof answer === 'object' && 'context' in answer) {
    delete answer.context;
    if (captureId && value.context && typeof value.context === 'object' && !value.changes?.navigating) {
      answer.context = await capturedContext({ router, chrome, grant, tabId: tab, frameId: frame, documentId },
        captureId, value.context);
    }
  }
  if (!value?.changes?.navigating) return answer;
  let now = null;
  try {
    now = await chrome.webNavigation.getFrame({ tabId: tab, frameId: frame });
  } catch {
    now = null;
  }
  if (!now || now.documentId !== documentId) {
    throw new ChaperoneError('stale_document',
      'The action ran, then the page navigated away. Take a new snapshot.',
      { tabId: tab, frameId: frame, done: true, action: params.action, ref: params.ref });
  }
  return answer;
}

export const HANDLERS = Object.freeze({
  'browser.node.action': { params: actionParams, target: 'capture', run: runAction },
});
