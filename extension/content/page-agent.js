// SPDX-License-Identifier: GPL-3.0-or-later
// Chaperone page agent: what runs inside a granted page, in the extension's ISOLATED world.
// Injected with chrome.scripting.executeScript({files}) after snapshot-core.js, outward.js,
// page-ui.js and its own parts — page-common.js, page-read.js, page-wait.js, page-shot.js,
// page-settle.js, page-holds.js, page-input.js, page-act.js, in that order (lib/page-bridge.js PAGE_FILES is the
// one list) — and last, because it installs what they left in globalThis.ChaperonePageParts: the
// worker then calls globalThis.__chaperonePage.run(op, args). Classic scripts: executeScript
// injects nothing else, and the files meet through the isolated world's global. Installing twice
// is harmless (the first install wins and keeps its captures).
//
// Safety rules kept by the parts (DESIGN §8): field values are never read out (only `filled` and
// `valueLength`); refs resolve only within the capture that made them and never retarget
// (`stale_node`); clicks are refused when something covers the node or an open modal is in front;
// Chaperone's own pill and banner (page-ui.js) live in closed shadow roots in the top layer, are
// skipped by every snapshot, and only a person's click on them, as drawn, counts.
// A page that shows a password field is a sign-in page: nothing is read or done there for an
// agent (refused_floor, "sign_in"); only the pill and the handoff banner appear.

(function () {
  'use strict';

  if (globalThis.__chaperonePage) return;
  const P = globalThis.ChaperonePageParts;
  // A part missing (not injected, or it failed): no agent at all, which the worker reports as
  // one that could not be installed, rather than an agent that fails op by op.
  if (!P || typeof P.opContext !== 'function' || typeof P.opAction !== 'function') return;

  const { PageError, fail, core, ui, pagePort, showsPassword, refuseSignIn, planStep, opContext,
    opInspect, opWaitText, opAction, opFind, opShotMask } = P;

  const MESSAGE_MAX = 500;           // UTF-16 units: the worker allows 250 code points (≤ 500 units)

  // ---- Chaperone's own UI: pill and handoff banner (content/page-ui.js) ----------------------
  //
  // The arguments are checked here; page-ui.js draws them, keeps them on screen and decides which
  // clicks on them count.

  const REASONS = ['qr', 'mfa', 'captcha', 'device', 'login', 'other'];

  function opPill(args) {
    if (!args.show) {
      ui().hidePill();
      return { shown: false };
    }
    const step = Number.isFinite(args.step) ? Math.max(0, Math.floor(args.step)) : null;
    const plan = planStep(args.plan);
    const out = ui().showPill({
      step,
      plan: plan.step ? plan : null,        // bad plan numbers are dropped, never shown
      stopped: !!args.stopped,
      shortcut: args.shortcut,              // the browser's Stop shortcut, from the worker
    });
    if (plan.step) out.plan = { ...plan };
    return out;
  }

  function opHandoff(args) {
    if (!args.show) {
      const shown = ui().hideBanner(args.handoffId || null);
      return { shown, handoffId: args.handoffId || null };
    }
    if (typeof args.handoffId !== 'string' || !args.handoffId) fail('invalid_params', 'handoffId must be a non-empty string');
    const reason = REASONS.includes(args.reason) ? args.reason : 'other';
    const message = core().clip(core().collapse(typeof args.message === 'string' ? args.message : ''), MESSAGE_MAX);
    return ui().showBanner({ handoffId: args.handoffId, reason, message });
  }

  // ---- entry point ---------------------------------------------------------------------------

  const OPS = { context: opContext, inspect: opInspect, waitText: opWaitText, action: opAction, find: opFind,
    pill: opPill, handoff: opHandoff, shotMask: opShotMask };
  // The ops that read or act for an agent, and the failure screenshot's boxes (no picture of a
  // sign-in page is taken): refused on a sign-in page. The pill and the banner are Chaperone
  // talking to the person, and the login handoff needs its banner on exactly that page.
  const FLOORED = new Set(['context', 'inspect', 'waitText', 'action', 'find', 'shotMask']);

  async function run(op, args, via) {
    try {
      if (!core()) fail('internal', 'snapshot-core.js is not loaded in this page');
      if (!ui()) fail('internal', 'page-ui.js is not loaded in this page');
      const fn = Object.prototype.hasOwnProperty.call(OPS, op) ? OPS[op] : null;
      if (!fn) fail('unknown_method', `unknown page op ${String(op).slice(0, 40)}`);
      const a = args && typeof args === 'object' ? args : {};
      if (FLOORED.has(op) && showsPassword()) refuseSignIn();   // before any ref, text or act
      return { ok: true, value: await fn(a, via) };
    } catch (e) {
      if (e instanceof PageError) {
        const error = { code: e.code, message: e.message };
        if (e.data !== undefined) error.data = e.data;
        return { ok: false, error };
      }
      // Anything else is our bug or a hostile page; say what kind without page data.
      return { ok: false, error: { code: 'internal', message: `page agent failed (${e && e.name ? e.name : 'error'})` } };
    }
  }

  // ---- the page's own port -------------------------------------------------------------------
  //
  // After the first op (which comes by executeScript) the worker asks the agent to open a
  // long-lived port; Chrome tells the worker this document's documentId with it, and the worker
  // sends this document's ops on it from then on: {id, op, args} in, {id, reply} out, and for an
  // action also the tab's request count ({id, net}, {id, synced, net}). The port dies with the
  // document (navigation, back/forward cache, frame removed) or the worker; the worker then fails
  // what was pending as stale_document and comes back by executeScript, which reopens it.

  function connect() {
    if (pagePort.port) return true;
    let port = null;
    try {
      const rt = globalThis.chrome && globalThis.chrome.runtime;
      if (!rt || typeof rt.connect !== 'function' || !rt.id) return false;
      port = rt.connect({ name: 'chaperone.page' });
    } catch (_) {
      return false;                        // an orphaned content script (extension reloaded)
    }
    if (!port) return false;
    pagePort.port = port;
    const hooks = new Map();
    pagePort.hooks = hooks;
    port.onMessage.addListener((m) => {
      if (!m || typeof m !== 'object' || !Number.isSafeInteger(m.id)) return;
      if (typeof m.op === 'string') {
        const id = m.id;
        run(m.op, m.args, { port, id }).then((reply) => {
          try { port.postMessage({ id, reply }); } catch (_) { /* the worker fails it as stale */ }
        });
        return;
      }
      const hook = hooks.get(m.id);
      if (hook) hook(m);
    });
    port.onDisconnect.addListener(() => {
      if (pagePort.port === port) {
        pagePort.port = null;
        pagePort.hooks = null;
      }
      for (const hook of [...hooks.values()]) hook(null);
      hooks.clear();
    });
    return true;

  }

  Object.defineProperty(globalThis, '__chaperonePage', {
    value: Object.freeze({ version: 1, run: (op, args) => run(op, args), connect }),
    writable: false, configurable: false, enumerable: false,
  });
})();
