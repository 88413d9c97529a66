// SPDX-License-Identifier: GPL-3.0-or-later
// The handler table: every engine method → its handler, assembled from one module per family of
// methods, each the mirror of the C agent-tool family that sends them (so a change to a tool and to
// what answers it is found in files of the same name). The scope each method needs is in
// ../scopes.js (METHODS), the one table; this one must cover exactly its methods.
//
//   wire method                 module        C side: src/core/agent/tools/chp-tool-<family>.c
//                                             that sends it, or who else does
//   browser.tabs                tabs.js       chp-tool-tabs.c (browser_tabs)
//   browser.frames              tabs.js       none yet (tabs family)
//   browser.context             read.js       chp-tool-read.c (browser_snapshot; browser_act's
//                                             look after acting)
//   browser.node.inspect        read.js       chp-tool-read.c (browser_inspect)
//   browser.cookies             read.js       none yet (read family)
//   browser.screenshot          trace.js      none: the app's trace recording after a failed act
//                                             (src/core/agent/tools or the engine); never an agent
//   browser.node.action         act.js        chp-tool-act.c (browser_act); its `allow` comes
//                                             from a plan, chp-tool-plan.c (checked in plan.js)
//   extension.hold.resolve      hold.js       the person's Approve / Decline (chp-engine-person.c);
//                                             a held API call's Approve is sent by api.js
//   browser.network.list        network.js    chp-tool-network.c (browser_network)
//   browser.api.learn           api.js        chp-tool-api.c (browser_api)
//   browser.api.call            api.js        chp-tool-api.c (browser_api); its `allow` comes from
//                                             a plan, as browser.node.action's
//   browser.batch               batch.js      chp-tool-batch.c (browser_batch): its steps run
//                                             through act.js, api.js and read.js's own code
//   browser.navigate            navigate.js   chp-tool-navigate.c (browser_navigate)
//   browser.takeover            handoff.js    none (handoff family)
//   browser.handoff.request     handoff.js    chp-tool-handoff.c (browser_handoff)
//   browser.handoff.status      handoff.js    chp-tool-handoff.c (browser_wait)
//   browser.handoff.cancel      handoff.js    none yet (handoff family)
//   browser.hold.status         handoff.js    chp-tool-handoff.c (browser_wait)
//   extension.handoff.resolve   handoff.js    the person's Done / Cancel Task (chp-engine.c)
//   extension.handoff.show      handoff.js    the person's Show Tab (chp-engine.c)
//   grant.revoke                grants.js     the person's Revoke (chp-engine.c)
//   extension.grants            grants.js     the app's grant mirror (chp-engine.c)
//   extension.stop              stop.js       chp-tool-stop.c (browser_stop), and the person's
//                                             Stop all, both through chp_engine_stop_all
//   extension.resume            stop.js       the person's Resume (chp-engine.c); never an agent
//
// An entry is {params, target, run, early?}. `params(p)` checks and normalises the params (throws
// invalid_params). `target` says what the router must check before `run`:
//   'none'     engine-only, no grant (grant.revoke, extension.*)
//   'any'      a live grant of any tab (browser.tabs)
//   (p) => {tabId, frameId, documentId?}   a named frame
//   'capture'  the frame and document of the ref's capture
//   'handoff'  the tab of the handoff (grant and scope only: a login handoff may leave the origin)
//   'hold'     the tab of the hold (grant and scope only, as a handoff)
// `run(ctx)` gets {router, chrome, params, signal, tabId, frameId, documentId, frame, grant, capture,
// handoff, hold}; documentId and frame are the current ones, already checked. `early`: run before
// anything is awaited (extension.stop).

import * as act from './act.js';
import * as api from './api.js';
import * as batch from './batch.js';
import * as grants from './grants.js';
import * as handoff from './handoff.js';
import * as hold from './hold.js';
import * as navigate from './navigate.js';
import * as network from './network.js';
import * as read from './read.js';
import * as stop from './stop.js';
import * as tabs from './tabs.js';
import * as trace from './trace.js';

function assemble(families) {
  const table = {};
  for (const [name, family] of Object.entries(families)) {
    for (const [method, handler] of Object.entries(family.HANDLERS)) {
      // Two modules answering one method would make the answer depend on import order.
      if (Object.hasOwn(table, method)) throw new Error(`${method} is handled in two modules (${name})`);
      table[method] = handler;
    }
  }
  return Object.freeze(table);
}

export const HANDLERS = assemble({ tabs, read, act, hold, navigate, handoff, grants, stop, trace, network, api, batch });
