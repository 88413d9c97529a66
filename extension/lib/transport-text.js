// SPDX-License-Identifier: GPL-3.0-or-later
// The words the popup and the options page use for the transport (bridge-transport.js): which one
// the connection travels over, and why the native host did not connect when that is worth saying.

import { t } from './i18n.js';

const TRANSPORT_KEYS = {
  websocket: 'transportInUseWebsocket',
  native: 'transportInUseNative',
};

/**
 * One line for a worker state (popup.state): the transport in use while connected; else the
 * native host's problem when it is one the person can fix (not installed, not allowed, refused),
 * or when they chose the native host; else ''.
 */
export function transportLine(state) {
  if (!state) return '';
  if (state.state === 'connected' && TRANSPORT_KEYS[state.transport]) {
    return t(TRANSPORT_KEYS[state.transport], [String(state.transportPort ?? '?')]);
  }
  const problem = state.transportProblem;
  const tried = state.paired || state.pairingResult?.outcome === 'not_running';
  if (tried && problem && (problem.kind !== 'unreachable' || state.transportMode === 'native')) {
    return t('transportProblem', [String(problem.message ?? '')]);
  }
  return '';
}
