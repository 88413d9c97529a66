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
  // Every listener before the first await: a Save pressed while the settings are still being
  // read must save (a form without its listener submits itself, reloading the page and saving
  // nothing), and what the person typed or chose meanwhile is not overwritten by what was read.
  let portEdited = false;
  let transportChosen = false;
  $('port').addEventListener('input', () => { portEdited = true; });
  $('port-form').addEventListener('submit', savePort);
  const radios = document.querySelectorAll('input[name="transport"]');
  for (const radio of radios) {
    radio.addEventListener('change', (event) => {
      transportChosen = true;
      saveTransport(event);
    });
  }
  $('transport-form').addEventListener('submit', (event) => event.preventDefault());
  const port = await getBridgePort(chrome.storage.local);
  if (!portEdited) $('port').value = String(port);
  const mode = await getTransport(chrome.storage.local);
  if (!transportChosen) for (const radio of radios) radio.checked = radio.value === mode;
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
