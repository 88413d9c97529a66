// SPDX-License-Identifier: GPL-3.0-or-later
// The app's view of this browser's grants, and its Revoke. Only the person's app calls these (the
// agents' door refuses anything but browser.*); no agent tool mirrors them.

import { bad, id, obj } from './common.js';

export const HANDLERS = Object.freeze({
  'grant.revoke': {
    target: 'none',
    params: (p) => ({ grantId: id(obj(p).grantId, 'grantId') }),
    async run({ router, params }) {
      if (!router.grants.revoke(params.grantId)) throw bad('No live grant has that id');
      return { grantId: params.grantId, revoked: true };
    },
  },

  'extension.grants': {
    target: 'none',
    params: (p) => (obj(p), {}),
    async run({ router }) {
      return { grants: router.grants.list() };
    },
  },
});
