// SPDX-License-Identifier: GPL-3.0-or-later
// The options page: edits the bridge port and the transport (the worker reconnects when either
// changes), shows the transport in use, the pairing with an Unpair button, and the version.

import { localize, t } from '../lib/i18n.js';
import { getBridgePort, getTransport, parsePort, setBridgePort, setTransport } from '../lib/settings.js';
import { transportLine } from '../lib/transport-text.js';

const $ = (id) => document.getElementById(id);

async function state() {
  const reply = await chrome.runtime.sendMessage({ type: 'popup.state' });
  if (reply?.error) throw new Error(reply.error.message);
  return reply;
}

async function renderPairing() {
  let s;
  try {
    s = await state();
  } catch {
    return;
  }
  $('pairing-status').textContent = s.paired ? t('optionsPaired') : t('optionsNotPaired');
  $('pairing-fingerprint').textContent = s.paired && s.engineFingerprint ? t('optionsFingerprint', [s.engineFingerprint]) : '';
  $('unpair-box').hidden = !s.paired;
  renderTransport(s);
}

function renderTransport(s) {
  // Firefox gives the native host no origin to vouch for (native-host/README.md): not offered.
  const native = document.querySelector('input[name="transport"][value="native"]');
  native.disabled = s.nativeAvailable === false && s.transportMode !== 'native';
  $('transport-firefox').hidden = s.nativeAvailable !== false;
  $('transport-in-use').textContent = transportLine(s) || (s.paired ? t('transportNotConnected') : '');
}

async function saveTransport(event) {
  const mode = await setTransport(chrome.storage.local, event.target.value);
  $('transport-message').textContent = t('optionsTransportSaved');
  return mode;
}

async function savePort(event) {
  event.preventDefault();
  const input = $('port');
  const port = parsePort(input.value);
  if (port === null) {
    input.setAttribute('aria-invalid', 'true');
    $('port-message').textContent = t('optionsPortInvalid');
    input.focus();
    return;
  }
  input.removeAttribute('aria-invalid');
  await setBridgePort(chrome.storage.local, port);
  $('port-message').textContent = t('optionsSaved', [String(port)]);
}

async function main() {
  localize(document);
  $('version').textContent = t('optionsVersion', [chrome.runtime.getManifest().version]);
  $('port').value = String(await getBridgePort(chrome.storage.local));
  $('port-form').addEventListener('submit', savePort);
  const mode = await getTransport(chrome.storage.local);
  for (const radio of document.querySelectorAll('input[name="transport"]')) {
    radio.checked = radio.value === mode;
    radio.addEventListener('change', saveTransport);
  }
  $('transport-form').addEventListener('submit', (event) => event.preventDefault());
  $('unpair-button').addEventListener('click', () => {
    $('unpair-confirm').hidden = false;
    $('unpair-no').focus();
  });
  $('unpair-no').addEventListener('click', () => {
    $('unpair-confirm').hidden = true;
  });
  $('unpair-yes').addEventListener('click', async () => {
    $('unpair-confirm').hidden = true;
    await chrome.runtime.sendMessage({ type: 'popup.unpair' });
    await renderPairing();
  });
  chrome.runtime.onMessage.addListener((message) => {
    if (message?.type === 'chaperone.state') renderPairing();
  });
  await renderPairing();
}

main();
