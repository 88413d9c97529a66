// SPDX-License-Identifier: GPL-3.0-or-later
// What the toolbar button says about the extension: one state from the connection, the stop flag
// and waiting handoffs, shown as badge text, colour and a translated title (and the popup's status).

// The person must act on these first, so they win over the connection's own state.
const PRIORITY = ['wrong_engine', 'revoked', 'stopped', 'handoff', 'pairing', 'connected', 'connecting', 'not_paired'];

// Symbols, not words: the badge holds about four characters in every language.
const LOOK = {
  not_paired: { text: '–', color: '#77767b', titleKey: 'badgeNotPaired' },
  pairing: { text: '…', color: '#1c71d8', titleKey: 'badgePairing' },
  connecting: { text: '…', color: '#77767b', titleKey: 'badgeConnecting' },
  connected: { text: '', color: '#26a269', titleKey: 'badgeConnected' },
  stopped: { text: '■', color: '#c01c28', titleKey: 'badgeStopped' },
  handoff: { text: '!', color: '#e66100', titleKey: 'badgeHandoff' },
  wrong_engine: { text: '✕', color: '#c01c28', titleKey: 'badgeWrongEngine' },
  revoked: { text: '✕', color: '#c01c28', titleKey: 'badgeRevoked' },
};

/**
 * The one state shown for {state (the bridge's), stopped, handoffsWaiting}. Stop and handoffs
 * matter only once paired: an unpaired extension has no agent to stop.
 */
export function displayState({ state, stopped = false, handoffsWaiting = 0 }) {
  const candidates = new Set([state]);
  if (!['not_paired', 'pairing'].includes(state)) {
    if (stopped) candidates.add('stopped');
    if (handoffsWaiting > 0) candidates.add('handoff');
  }
  return PRIORITY.find((s) => candidates.has(s)) ?? 'not_paired';
}

/** {state, text, color, title} for a display state; getMessage is chrome.i18n.getMessage. */
export function badgeFor(input, getMessage) {
  const state = displayState(input);
  const look = LOOK[state];
  const text = state === 'handoff' && input.handoffsWaiting > 1 ? String(Math.min(input.handoffsWaiting, 99)) : look.text;
  return { state, text, color: look.color, title: getMessage(look.titleKey) || 'Chaperone', titleKey: look.titleKey };
}

/** Applies a badge to chrome.action, skipping calls when nothing changed. */
export function createBadgePainter(action) {
  let last = null;
  return async (badge) => {
    const key = `${badge.text}|${badge.color}|${badge.title}`;
    if (key === last) return;
    last = key;
    await Promise.all([
      action.setBadgeText({ text: badge.text }),
      action.setBadgeBackgroundColor({ color: badge.color }),
      action.setTitle({ title: badge.title }),
      action.setBadgeTextColor?.({ color: '#ffffff' }),
    ]);
  };
}
