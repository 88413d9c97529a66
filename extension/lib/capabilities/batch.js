// SPDX-License-Identifier: GPL-3.0-or-later
// browser.batch: a list of steps run here in the worker, one after the other, with no message to
// the app in between — acts (act.js's runAction, as browser.node.action runs them), calls of the
// site's own API (api.js's runCall, as browser.api.call makes them) and waits for a text
// (read.js's waitForText, as browser.context's `until`). It halts at the first step that fails,
// is held for the person (the hold is made exactly as a single act's or call's is, so the app's
// card and browser_wait see nothing different), meets a Stop, or would start after the deadline
// the app gave; and says which. Mirrors the agent tool browser_batch
// (src/core/agent/tools/chp-tool-batch.c), which made every step concrete before sending: an API
// step comes as the method and URL of a call, never as an entry to look up here. A wait right after
// an act in the top document goes with it: the page says, once the act settled, whether the text
// shows (untilFound), which spares the wait its own visit when it does.
//
// An act step names its element by a wire ref (a capture's, as browser.node.action) or by
// `target: {role, name}`: the one visible element with that role and accessible name at that
// step, which the page looks for then (page op find, content/page-act.js) and keeps in the
// batch's capture (one capture id per batch, so a long batch does not push the agent's own
// captures out of the page's memory). None or several → stale_node: never a guess. A later step
// with the same target acts on the element found then, once the page has checked that it is
// still there, shown, and has that role and name; if not, the step looks again as the first did. (On the compose page of bench/recipe-bench.mjs, a
// look cost 1–1.5 ms of a 3 ms fill step; on a large page it costs far more.)

import { classifyCall } from '../api-outward.js';
import { ChaperoneError, SCOPES } from '../scopes.js';
import { bad, frameId, obj, tabId } from './common.js';
import { WRITE_ACTIONS, actionParams, runAction } from './act.js';
import { callParams, runCall, runReads } from './api.js';
import { allowOf } from './plan.js';
import { CONTEXT_LIMITS, UNTIL_MAX_MS, waitForText } from './read.js';

export const MAX_STEPS = 50;
const MAX_DEADLINE_MS = 55000;
const WAIT_DEFAULT_MS = 5000;
/** An API step's reply as the batch gives it back: enough for an item or a short list. */
export const MAX_STEP_DATA = 16 * 1024;
/**
 * Consecutive API reads go to the page together, in one visit: a batch's worth (capture.js
 * expects as many own calls per tab). One visit instead of one per ten saved an executeScript
 * round trip per ten reads (bench/recipe-bench.mjs).
 */
const READS_PER_VISIT = MAX_STEPS;

// The app waits BATCH_DEADLINE_SLACK (3 s) past the deadline it gives for the batch's answer
// (src/core/agent/tools/chp-tool-batch.c). A step that started in time must answer within that,
// or the app hears nothing of the steps that ran, and a plan's writes go uncounted: an act
// (settling within 3 s, after its waits for the control) starts only with this much of the
// deadline left, and an API call gets the time left plus most of the slack.
const ACT_STEP_LEFT_MS = 2500;
const API_STEP_SLACK_MS = 2000;

const collapse = (s) => String(s ?? '').replace(/\s+/g, ' ').trim().toLowerCase();

/** `allow.left`: {site: steps left} for the plan's sites, as the app counted them. */
function leftOf(v, sites) {
  if (v === undefined) return null;
  const o = obj(v);
  const out = {};
  for (const [site, n] of Object.entries(o)) {
    if (!sites.includes(site) || !Number.isSafeInteger(n) || n < 0 || n > 1000) throw bad('allow.left is {site: steps left}');
    out[site] = n;
  }
  return out;
}

/** One step, checked as the single method would check it, before any step runs. */
function stepParams(s, i, tab) {
  const o = obj(s);
  const kinds = ['act', 'api', 'wait'].filter((k) => o[k] !== undefined);
  if (kinds.length !== 1 || Object.keys(o).length !== 1) throw bad(`step ${i + 1} has exactly one of act, api, wait`);
  const kind = kinds[0];
  const p = obj(o[kind]);
  if (kind === 'wait') {
    if (typeof p.text !== 'string' || p.text.length === 0 || p.text.length > 200) throw bad(`step ${i + 1}: wait.text is a short text`);
    const t = p.timeoutMs ?? WAIT_DEFAULT_MS;
    if (!Number.isSafeInteger(t) || t < 0 || t > UNTIL_MAX_MS) throw bad(`step ${i + 1}: wait.timeoutMs is at most ${UNTIL_MAX_MS}`);
    return { kind, text: p.text, timeoutMs: t };
  }
  if (kind === 'api') {
    if (p.allow !== undefined || p.tabId !== undefined) throw bad(`step ${i + 1}: the batch gives allow and tabId`);
    return { kind, call: callParams({ ...p, tabId: tab, frameId: 0 }) };
  }
  if (p.allow !== undefined || p.capture !== undefined || p.captureId !== undefined) {
    throw bad(`step ${i + 1}: an act step takes ref or target, action and its argument`);
  }
  // A drag names two elements, and a step one: it is browser_act's alone.
  if (p.action === 'drag') throw bad(`step ${i + 1}: drag is not a batch step; use browser_act`);
  const { target, ...rest } = p;
  if (target !== undefined) {
    const t = obj(target);
    if (rest.ref !== undefined) throw bad(`step ${i + 1}: ref or target, not both`);
    if (typeof t.role !== 'string' || !/^[a-z]{1,64}$/.test(t.role) || typeof t.name !== 'string' ||
        t.name.length === 0 || t.name.length > 200) {
      throw bad(`step ${i + 1}: target is {role, name}`);
    }
    // Checked as browser.node.action checks an act on a ref; its ref is found when the step runs.
    actionParams({ ...rest, ref: 'x:x' });
    return { kind, target: { role: t.role, name: t.name }, act: rest };
  }
  if (rest.ref === undefined) {
    // press and type without either: the element that has focus in the top document then.
    actionParams({ ...rest, captureId: 'x' });
    return { kind, focused: true, act: rest };
  }
  return { kind, act: rest, checked: actionParams(rest) };
}

function batchParams(p) {
  const o = obj(p);
  const tab = tabId(o.tabId);
  if (frameId(o.frameId) !== 0) throw bad('a batch runs in the top frame');
  if (!Array.isArray(o.steps) || o.steps.length === 0 || o.steps.length > MAX_STEPS) {
    throw bad(`steps is a list of 1 to ${MAX_STEPS} steps`);
  }
  const allow = allowOf(o.allow);
  const left = allow ? leftOf(o.allow.left, allow.sites) : null;
  const d = o.deadlineMs ?? MAX_DEADLINE_MS;
  if (!Number.isSafeInteger(d) || d < 0 || d > MAX_DEADLINE_MS) throw bad(`deadlineMs is at most ${MAX_DEADLINE_MS}`);
  return { tabId: tab, frameId: 0, steps: o.steps.map((s, i) => stepParams(s, i, tab)), allow, left, deadlineMs: d };
}

/** The scopes the steps need, beyond the router's own check (browser.dom.read). */
function checkScopes(grant, steps, tab) {
  const need = new Set();
  for (const s of steps) need.add(s.kind === 'act' ? SCOPES.DOM_WRITE : s.kind === 'api' ? SCOPES.API_CALL : SCOPES.DOM_READ);
  for (const scope of need) {
    if (!grant.scopes.includes(scope)) throw new ChaperoneError('scope_denied', `The grant does not allow ${scope}`, { tabId: tab });
  }
}

/**
 * The one rendered element of the top document with the target's role and name → {captureId,
 * pageRef}. The page looks (page op find) and keeps what it found in the batch's capture; none or
 * several → stale_node.
 */
async function findTarget(ctx, run, target) {
  const { router, signal, tabId: tab, documentId } = ctx;
  run.captureId ??= router.newCaptureId();
  const value = await router.page.run({ tabId: tab, frameId: 0, documentId }, 'find',
    { captureId: run.captureId, role: target.role, name: target.name, maxScan: CONTEXT_LIMITS.maxScan }, { signal });
  const ref = typeof value?.ref === 'string' && /^e[0-9]{1,9}$/.test(value.ref) ? value.ref : null;
  if (!ref) {
    const count = Number.isSafeInteger(value?.count) ? value.count : 0;
    throw new ChaperoneError('stale_node', count === 0
      ? `No visible ${target.role} named "${target.name}" is on the page now`
      : `${count} visible elements are ${target.role} "${target.name}": give this step a ref`, { tabId: tab });
  }
  return { captureId: run.captureId, pageRef: ref };
}

/** The plan's allowance for the next write: only sites with steps left, and the step it would be. */
function allowNow(run) {
  if (!run.allow) return undefined;
  const sites = run.left ? run.allow.sites.filter((s) => (run.left[s] ?? 0) > 0) : run.allow.sites;
  if (sites.length === 0) return undefined;
  const out = { planId: run.allow.planId, sites };
  if (run.allow.step !== undefined && run.allow.of !== undefined && run.allow.step + run.used <= run.allow.of) {
    Object.assign(out, { step: run.allow.step + run.used, of: run.allow.of });
  }
  return out;
}

/** A write used the plan: one step of its site is spent. */
function spend(run, value) {
  const site = value?.plan?.site;
  // A click that only opened an editor used no step: the app counts none (chp-tool-plan.c).
  if (!site || value.plan.opens) return;
  run.used += 1;
  if (run.left && run.left[site] > 0) run.left[site] -= 1;
}

/** An act step; `then`: the wait step after it, which the page may answer with the act. */
async function actStep(ctx, run, step, then) {
  const { router, grant, tabId: tab } = ctx;
  let p;
  let where = { tabId: tab, frameId: 0, documentId: ctx.documentId };
  // A target or the focused element is in the top document, whose frame was checked at the
  // start or after the last act that moved its URL (refreshTop()): a page that is not 'ok' for
  // acts (hands-only settings reached by a pushState) is refused as a single act there is.
  if (!step.checked && router.floorOf(ctx.frame?.url).level !== 'ok') {
    throw new ChaperoneError('refused_floor', 'Agents may read this page but not act on it', { tabId: tab });
  }
  if (step.target) {
    const key = `${step.target.role}\n${collapse(step.target.name)}`;
    const known = run.targets.get(key);
    if (known) {
      // Found for an earlier step: the page checks it still has that role and name and shows,
      // which costs one element instead of a capture of the whole page (see the top).
      p = { ...actionParams({ ...step.act, ref: `${known.captureId}:${known.pageRef}` }), sameAs: step.target };
      try {
        return await act(ctx, run, where, p, then);
      } catch (e) {
        if (e?.code !== 'stale_node') throw e;
        run.targets.delete(key);
      }
    }
    const found = await findTarget(ctx, run, step.target);
    run.targets.set(key, found);
    p = actionParams({ ...step.act, ref: `${found.captureId}:${found.pageRef}` });
  } else if (step.focused) {
    run.captureId ??= router.newCaptureId();
    await router.page.run(where, 'context', { captureId: run.captureId, ...CONTEXT_LIMITS, last: false }, { signal: ctx.signal });
    p = actionParams({ ...step.act, captureId: run.captureId });
  } else {
    // A ref names its capture's frame and document: checked as the router checks a single act.
    p = step.checked;
    const capture = router._captures.get(p.captureId);
    if (!capture || capture.tabId !== tab || capture.grantId !== grant.grantId) {
      throw new ChaperoneError('stale_node', 'That ref is from an unknown or old capture, or another tab');
    }
    const named = { tabId: tab, frameId: capture.frameId, documentId: capture.documentId };
    const { frame, checked } = await router.checkFrame(grant, named);
    if (router.floorOf(frame?.url).level !== 'ok') {
      throw new ChaperoneError('refused_floor', 'Agents may read this page but not act on it', { tabId: tab });
    }
    where = { tabId: tab, frameId: capture.frameId, documentId: checked.documentId };
  }
  return act(ctx, run, where, p, then);
}

async function act(ctx, run, where, params, then) {
  const { router, tabId: tab } = ctx;
  let p = WRITE_ACTIONS.has(params.action) ? { ...params, allow: allowNow(run) } : params;
  // The wait looks at the top document the batch was checked for: only an act there can answer it.
  if (then && where.frameId === 0 && where.documentId === ctx.documentId) p = { ...p, untilText: then.text };
  router._planArrives(tab, p);
  const value = await runAction({ ...ctx, ...where, params: p });
  router._planUsed(tab, p, value);
  spend(run, value);
  // The top document's URL moved (a pushState: Turbo, a router): the floor is asked again.
  if (where.frameId === 0 && value?.changes?.urlChanged) run.moved = true;
  return value;
}

/** An API answer as a step's result: a reply that is not 2xx (or none) fails the step. */
function apiResult(value) {
  if (!value.ok) {
    // The status goes with the step (0: no reply), so the app moves the entry's confidence as
    // it does for a single call (chp-tool-api.c).
    throw new ChaperoneError('target_denied', value.status
      ? `The site answered ${value.status}` : `The call failed (${value.error ?? 'network'})`,
    { status: Number.isSafeInteger(value.status) ? value.status : 0 });
  }
  const out = { status: value.status, size: value.size ?? null };
  const data = Object.hasOwn(value, 'json') ? JSON.stringify(value.json) : value.text;
  if (typeof data === 'string' && data !== '') {
    out.data = data.length > MAX_STEP_DATA ? data.slice(0, MAX_STEP_DATA) : data;
    if (data.length > MAX_STEP_DATA || value.truncated) out.cut = true;
  }
  if (value.plan) out.plan = value.plan;
  return out;
}

async function apiStep(ctx, run, step) {
  const p = isRead(step) ? step.call : { ...step.call, allow: allowNow(run) };
  const value = await runCall(ctx, p, { timeoutMs: run.timeLeft() + API_STEP_SLACK_MS });
  if (value.held) return value;
  ctx.router._planUsed(ctx.tabId, p, value);
  spend(run, value);
  return apiResult(value);
}

// A read by what it does: a GET that deletes is a step of its own, held as any write is.
const isRead = (step) => step?.kind === 'api' && classifyCall(step.call).kind === 'read';

/** Steps i… while they are reads (at most READS_PER_VISIT): sent in one visit to the page. */
async function readSteps(ctx, run, steps, i, results) {
  let j = i;
  while (j < steps.length && j - i < READS_PER_VISIT && isRead(steps[j])) j++;
  const t0 = Date.now();
  const made = await runReads(ctx, steps.slice(i, j).map((s) => s.call), run.timeLeft() + API_STEP_SLACK_MS);
  const share = Math.round((Date.now() - t0) / Math.max(1, made.length));
  for (const m of made) {
    // The page times each fetch; a read refused before it was sent took no time there.
    const ms = m.value?.ms ?? (m.error ? 0 : share);
    try {
      if (m.error) throw m.error;
      results.push({ ok: true, ms, ...apiResult(m.value) });
    } catch (e) {
      results.push({ ok: false, ms, error: e });
      return;
    }
  }
}

async function waitStep(ctx, step) {
  const where = { tabId: ctx.tabId, frameId: 0, documentId: ctx.documentId };
  if (!(await waitForText(ctx.router, where, step.text, ctx.signal, step.timeoutMs))) {
    throw new ChaperoneError('timeout', `The text did not show within ${step.timeoutMs} ms`);
  }
  return {};
}

/** Why the batch must not start its next step, or null. */
function haltBefore(ctx, started, deadlineMs, step = null) {
  if (ctx.router.stopState.stopped) return new ChaperoneError('stopped', 'The person stopped the agent');
  if (ctx.signal?.aborted) {
    return ctx.signal.reason instanceof ChaperoneError ? ctx.signal.reason : new ChaperoneError('cancelled', 'The call was cancelled');
  }
  const left = deadlineMs - (Date.now() - started);
  if (left < 0 || (step?.kind === 'act' && left < ACT_STEP_LEFT_MS)) {
    return new ChaperoneError('timeout', 'The batch ran out of time before this step');
  }
  return null;
}

/** After an act moved the top document's URL: its frame read again, and the floor with it. */
async function refreshTop(ctx, run) {
  run.moved = false;
  const { frame } = await ctx.router.checkFrame(ctx.grant, { tabId: ctx.tabId, frameId: 0, documentId: ctx.documentId });
  ctx.frame = frame;
  if (ctx.router.floorOf(frame?.url).level === 'blind') {
    throw new ChaperoneError('refused_floor', 'This page is off limits to agents (the URL floor)', { tabId: ctx.tabId });
  }
}

export async function runBatch(ctx) {
  const { router, params, tabId: tab, grant } = ctx;
  checkScopes(grant, params.steps, tab);
  // An act is refused on a hands-only page before anything runs, as the router refuses one act.
  if (params.steps.some((s) => s.kind === 'act') && router.floorOf(ctx.frame?.url).level === 'hands-only') {
    throw new ChaperoneError('refused_floor', 'Agents may read this page but not act on it', { tabId: tab });
  }
  // targets: {role, name} → the element found for it, kept for the batch's later steps.
  const started = Date.now();
  const run = { captureId: null, targets: new Map(), allow: params.allow, left: params.left, used: 0, moved: false,
    timeLeft: () => Math.max(0, params.deadlineMs - (Date.now() - started)) };
  const steps = [];
  const out = { done: 0, of: params.steps.length, steps };
  const halt = (i, err) => {
    const status = err.error.data?.status;
    steps.push({ ok: false, ms: err.ms, error: { code: err.error.code, message: err.error.message },
      ...(Number.isSafeInteger(status) ? { status } : {}) });
    out.halted = { step: i + 1, code: err.error.code, message: err.error.message };
  };
  for (let i = 0; i < params.steps.length && !out.halted;) {
    const step = params.steps[i];
    const stop = haltBefore(ctx, started, params.deadlineMs, step);
    if (stop) {
      out.halted = { step: i + 1, code: stop.code, message: stop.message };
      break;
    }
    if (run.moved) {
      try {
        await refreshTop(ctx, run);
      } catch (e) {
        halt(i, { ms: 0, error: e instanceof ChaperoneError ? e : new ChaperoneError('internal', 'The step failed') });
        break;
      }
    }
    if (isRead(step) && isRead(params.steps[i + 1])) {
      const made = [];
      try {
        await readSteps(ctx, run, params.steps, i, made);
      } catch (e) {
        made.push({ ok: false, ms: 0, error: e instanceof ChaperoneError ? e : new ChaperoneError('internal', 'The step failed') });
      }
      for (const r of made) {
        if (r.error) {
          halt(i, r);
          break;
        }
        steps.push(r);
        out.done += 1;
        i += 1;
      }
      continue;
    }
    const t0 = Date.now();
    const then = step.kind === 'act' && params.steps[i + 1]?.kind === 'wait' ? params.steps[i + 1] : null;
    try {
      const value = step.kind === 'act' ? await actStep(ctx, run, step, then)
        : step.kind === 'api' ? await apiStep(ctx, run, step) : await waitStep(ctx, step);
      if (value?.held) {
        // Not done: the person decides (extension.hold.resolve), as for a single act or call.
        steps.push({ ok: false, held: true, ms: Date.now() - t0 });
        Object.assign(out, { held: true, hold: value.hold, halted: { step: i + 1, code: 'held', message: 'Held for the person' } });
        break;
      }
      const result = { ok: true, ms: Date.now() - t0 };
      if (step.kind === 'api') Object.assign(result, value);
      else if (value?.plan) result.plan = value.plan;
      steps.push(result);
      out.done += 1;
      i += 1;
      // The wait after it found its text as the act answered: done, with no visit of its own.
      if (then && value?.untilFound === true && !haltBefore(ctx, started, params.deadlineMs)) {
        steps.push({ ok: true, ms: 0 });
        out.done += 1;
        i += 1;
      }
    } catch (e) {
      const err = e instanceof ChaperoneError ? (step.kind === 'api' ? e : router._pageRefusal(e, ctx))
        : new ChaperoneError('internal', 'The step failed');
      halt(i, { ms: Date.now() - t0, error: err });
    }
  }
  out.ms = Date.now() - started;
  return out;
}

export const HANDLERS = Object.freeze({
  'browser.batch': {
    params: batchParams,
    target: (p) => ({ tabId: p.tabId, frameId: 0 }),
    run: runBatch,
  },
});
