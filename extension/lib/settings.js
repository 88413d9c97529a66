// SPDX-License-Identifier: GPL-3.0-or-later
// The extension's own settings (the bridge port and the transport), kept in chrome.storage.local.
// The storage area is passed in, so the options page, the worker and Node tests share this code.

import { DEFAULT_TRANSPORT, TRANSPORT_MODES } from './bridge-transport.js';

export const DEFAULT_BRIDGE_PORT = 64333;
export const PORT_KEY = 'bridgePort';
export const TRANSPORT_KEY = 'bridgeTransport';

/** An integer port 1–65535 from a number or a decimal string, else null. */
export function parsePort(value) {
  const text = typeof value === 'number' ? String(value) : String(value ?? '').trim();
  if (!/^\d{1,5}$/.test(text)) return null;
  const port = Number(text);
  return port >= 1 && port <= 65535 ? port : null;
}

/** The configured port; a missing or damaged value falls back to the app's default. */
export async function getBridgePort(local) {
  const stored = (await local.get(PORT_KEY))[PORT_KEY];
  return parsePort(stored) ?? DEFAULT_BRIDGE_PORT;
}

/** Saves a valid port and returns it; an invalid one throws RangeError and saves nothing. */
export async function setBridgePort(local, value) {
  const port = parsePort(value);
  if (port === null) throw new RangeError('the bridge port is a whole number from 1 to 65535');
  await local.set({ [PORT_KEY]: port });
  return port;
}

/** From a chrome.storage.onChanged call: the new port when it changed, else undefined. */
export function portChange(changes, areaName) {
  if (areaName !== 'local' || !changes[PORT_KEY]) return undefined;
  return parsePort(changes[PORT_KEY].newValue) ?? DEFAULT_BRIDGE_PORT;
}

/** 'auto', 'websocket' or 'native', else null. */
export function parseTransport(value) {
  return TRANSPORT_MODES.includes(value) ? value : null;
}

/** How the worker reaches the app; a missing or damaged value is "auto". */
export async function getTransport(local) {
  return parseTransport((await local.get(TRANSPORT_KEY))[TRANSPORT_KEY]) ?? DEFAULT_TRANSPORT;
}

/** Saves a valid choice and returns it; anything else throws RangeError and saves nothing. */
export async function setTransport(local, value) {
  const mode = parseTransport(value);
  if (mode === null) throw new RangeError(`the transport is one of ${TRANSPORT_MODES.join(', ')}`);
  await local.set({ [TRANSPORT_KEY]: mode });
  return mode;
}

/** From a chrome.storage.onChanged call: the new transport when it changed, else undefined. */
export function transportChange(changes, areaName) {
  if (areaName !== 'local' || !changes[TRANSPORT_KEY]) return undefined;
  return parseTransport(changes[TRANSPORT_KEY].newValue) ?? DEFAULT_TRANSPORT;
}
