// SPDX-License-Identifier: GPL-3.0-or-later
// Stop and resume from the app. An agent's browser_stop (src/core/agent/tools/chp-tool-stop.c)
// becomes the app's Stop all, which reaches every browser as extension.stop; only the person
// resumes.

import { STOP_SOURCES } from '../stop.js';
import { obj, oneOf } from './common.js';

export const HANDLERS = Object.freeze({
  'extension.stop': {
    target: 'none',
    early: true, // run before anything is awaited, even before load(): the flag is set at once
    params(p) {
      const o = obj(p);
      if (o.source !== undefined) oneOf(o.source, 'source', STOP_SOURCES);
      return { source: o.source ?? 'app' };
    },
    async run({ router, params }) {
      router.stop(params.source);
      return { stopped: true };
    },
  },

  'extension.resume': {
    target: 'none', // after load(): a resume must also clear a stop that is only in storage
    params: (p) => (obj(p), {}),
    async run({ router }) {
      router.resume('app');
      return { stopped: false };
    },
  },
});
