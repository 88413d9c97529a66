// SPDX-License-Identifier: GPL-3.0-or-later
// The protocol's error codes (DESIGN §5): the JavaScript half of the one error table.
// The C half is src/wire/chp-error-codes.h; tests/js/error-table.test.mjs keeps the two equal,
// in the same order, so a code added on one side only fails the build instead of a user's call.

export const ERROR_CODES = Object.freeze([
  'unauthorized',
  'not_paired',
  'revoked',
  'device_offline',
  'no_grant',
  'grant_expired',
  'scope_denied',
  'target_denied',
  'stale_document',
  'stale_node',
  'origin_changed',
  'busy',
  'duplicate_id',
  'too_large',
  'timeout',
  'cancelled',
  'stopped',
  'paused',
  'held',
  'declined',
  'changed',
  'refused_floor',
  'policy_denied',
  'invalid_params',
  'unknown_method',
  'unsupported',
  'internal',
]);

const KNOWN = new Set(ERROR_CODES);

/** True when `s` is one of the protocol's error codes (and not merely something string-like). */
export function isErrorCode(s) {
  return typeof s === 'string' && KNOWN.has(s);
}
