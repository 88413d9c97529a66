#!/usr/bin/env node
// A JavaScript stand-in for the C `chaperone-test-engine` harness: same command line, same JSON
// lines on stdin/stdout, same wire protocol (notes/protocol-decisions.md). It exists so the bridge
// tests and the test client can be run and debugged without a C build
// (`CHAPERONE_TEST_ENGINE=tests/js/fake-engine.mjs node --test tests/js/`). The C engine is the
// product; where the two differ, the C engine and the decisions file are right and this file is not.

import { mkdir, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

import { WebSocketServer } from 'ws';

import {
  LIMITS, PRE_AUTH_LIMIT, approvedText, b64urlDecode, b64urlEncode, checkPublicJwk, clientAuthText,
  code as pairingCode, commitment, engineChallengeText, engineIdOf, fingerprintOf, generateKeyPair,
  pairingTranscript, randomId, randomNonce, revealText, signText, verifyText,
} from './protocol.mjs';

const args = process.argv.slice(2);
const option = (name, fallback) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : fallback;
};
const PORT = Number(option('--port', '0'));
const DATA_DIR = option('--data-dir');
const HEARTBEAT_MS = Number(option('--heartbeat-ms', String(LIMITS.heartbeatMs)));
if (!DATA_DIR) {
  process.stderr.write('usage: fake-engine.mjs --port N --data-dir DIR [--heartbeat-ms N]\n');
  process.exit(2);
}

const MINUTE = 60000;
const PAIR_EXPIRY_MS = 120000;
const RESUME_WINDOW_MS = 5 * MINUTE;
const CHROME_ORIGIN = /^chrome-extension:\/\/[a-p]{32}$/;
const MOZ_ORIGIN = /^moz-extension:\/\/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const report = (event) => process.stdout.write(`${JSON.stringify(event)}\n`);
const now = () => Date.now();

const identity = await generateKeyPair();
const engineId = await engineIdOf(identity.jwk);
const engineInstanceId = randomId();
await mkdir(DATA_DIR, { recursive: true });
await writeFile(join(DATA_DIR, 'engine-public-key.json'), JSON.stringify(identity.jwk));

/** deviceId → {deviceId, name, origin, installationId, jwk, createdAt, revoked, session} */
const devices = new Map();
const pendingPairings = new Map(); // requestId → pairing state
const pairingFailures = []; // times of failed/rejected/expired attempts
const pairingAttempts = []; // times of all attempts (daily limit)
let lockedUntil = 0;
const calls = new Map(); // harness tag → engine → device call

// ---- HTTP upgrade gate ----

const server = createServer((req, res) => {
  res.writeHead(404).end();
});
const pairingWss = new WebSocketServer({ noServer: true, maxPayload: PRE_AUTH_LIMIT });
const extensionWss = new WebSocketServer({ noServer: true, maxPayload: LIMITS.maxFrameBytes });

server.on('upgrade', (req, socket, head) => {
  const port = server.address().port;
  const hostOk = req.headers.host === `127.0.0.1:${port}` || req.headers.host === `localhost:${port}`;
  const origin = req.headers.origin ?? '';
  const originOk = CHROME_ORIGIN.test(origin) || MOZ_ORIGIN.test(origin);
  const wss = { '/pairing': pairingWss, '/extension': extensionWss }[req.url];
  if (!hostOk || !originOk || !wss) {
    socket.end('HTTP/1.1 403 Forbidden\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
    return;
  }
  wss.handleUpgrade(req, socket, head, (ws) => {
    ws.on('error', () => {}); // a peer's protocol error closes its socket; it must not end the engine
    (wss === pairingWss ? onPairingSocket : onExtensionSocket)(ws, origin);
  });
});

// ---- pairing ----

function recordFailure() {
  const t = now();
  pairingFailures.push(t);
  const recent = pairingFailures.filter((f) => f > t - 10 * MINUTE);
  if (recent.length >= 3) lockedUntil = t + 10 * MINUTE;
}

function endPairing(p, outcome, frame) {
  if (!pendingPairings.has(p.requestId)) return;
  pendingPairings.delete(p.requestId);
  clearTimeout(p.timer);
  if (outcome !== 'approved') recordFailure();
  if (p.shown) report({ event: 'pairing-ended', requestId: p.requestId, outcome });
  if (frame) p.ws.send(JSON.stringify(frame));
  p.ws.close(1000);
}

function onPairingSocket(ws, origin) {
  let pairing = null;
  const firstTimer = setTimeout(() => ws.close(4401), 5000);
  const fail = (code, message) => {
    ws.send(JSON.stringify({ type: 'pair_error', code, message }));
    ws.close(1000);
  };
  ws.on('close', () => {
    clearTimeout(firstTimer);
    if (pairing && pendingPairings.has(pairing.requestId)) endPairing(pairing, 'failed');
  });
  ws.on('message', async (data) => {
    clearTimeout(firstTimer);
    let msg;
    try {
      msg = JSON.parse(data.toString());
    } catch {
      fail('invalid_params', 'not JSON');
      return;
    }
    if (!pairing) {
      if (msg.type !== 'pair_request') return fail('invalid_params', 'expected pair_request');
      if (lockedUntil > now()) {
        ws.send(JSON.stringify({ type: 'pair_locked', retryAfter: lockedUntil - now() }));
        ws.close(1000);
        return undefined;
      }
      try {
        checkPublicJwk(msg.publicKey);
        if (msg.protocol !== 1 || typeof msg.installationId !== 'string' || typeof msg.commitment !== 'string') throw new Error();
      } catch {
        return fail('invalid_params', 'bad pair_request');
      }
      const pending = [...pendingPairings.values()];
      if (pending.some((p) => p.installationId === msg.installationId) || pending.length >= 3) {
        return fail('busy', 'too many pairings pending');
      }
      const dayAgo = now() - 24 * 60 * MINUTE;
      if (pairingAttempts.filter((t) => t > dayAgo).length >= 20) return fail('rate_limited', 'too many pairings today');
      pairingAttempts.push(now());
      pairing = {
        ws, origin, requestId: randomId(), installationId: msg.installationId, browser: msg.browser,
        extJwk: msg.publicKey, commitment: msg.commitment, nonceE: randomNonce(),
        expiresAt: now() + PAIR_EXPIRY_MS, state: 'challenged', shown: false,
      };
      pendingPairings.set(pairing.requestId, pairing);
      pairing.timer = setTimeout(() => endPairing(pairing, 'expired', { type: 'pair_expired', requestId: pairing.requestId }), PAIR_EXPIRY_MS);
      ws.send(JSON.stringify({
        type: 'pair_challenge', requestId: pairing.requestId, engineId, enginePublicKey: identity.jwk,
        nonceE: pairing.nonceE, expiresAt: pairing.expiresAt,
      }));
      return undefined;
    }
    if (pairing.state !== 'challenged' || msg.type !== 'pair_reveal' || msg.requestId !== pairing.requestId
        || typeof msg.nonceC !== 'string') {
      return endPairing(pairing, 'failed', { type: 'pair_error', code: 'invalid_params', message: 'expected pair_reveal' });
    }
    pairing.state = 'revealed';
    if (await commitment(msg.nonceC, pairing.extJwk) !== pairing.commitment) {
      return endPairing(pairing, 'failed', { type: 'pair_error', code: 'commitment_mismatch', message: 'the nonce does not match the commitment' });
    }
    let transcript;
    try {
      transcript = pairingTranscript({ ...pairing, engineId, engineJwk: identity.jwk, nonceC: msg.nonceC });
    } catch {
      return endPairing(pairing, 'failed', { type: 'pair_error', code: 'invalid_params', message: 'bad field' });
    }
    if (!await verifyText(pairing.extJwk, msg.signature, revealText(transcript))) {
      return endPairing(pairing, 'failed', { type: 'pair_error', code: 'bad_signature', message: 'the reveal signature does not verify' });
    }
    pairing.transcript = transcript;
    pairing.shown = true;
    ws.send(JSON.stringify({ type: 'pair_pending', requestId: pairing.requestId, expiresAt: pairing.expiresAt }));
    report({
      event: 'pairing', requestId: pairing.requestId, code: await pairingCode(transcript), origin,
      installationId: pairing.installationId, browser: pairing.browser, expiresAt: pairing.expiresAt,
    });
    return undefined;
  });
}

async function approve(requestId) {
  const p = pendingPairings.get(requestId);
  if (!p?.shown) return;
  let device = [...devices.values()].find((d) => d.installationId === p.installationId && d.origin === p.origin);
  if (device) {
    device.jwk = p.extJwk; // rotate in place: id, name and creation time stay
  } else {
    device = {
      deviceId: randomId(), name: `${p.browser ?? 'Browser'} ${devices.size + 1}`, origin: p.origin,
      installationId: p.installationId, jwk: p.extJwk, createdAt: now(), revoked: false, session: null,
    };
    devices.set(device.deviceId, device);
  }
  const signature = await signText(identity.privateKey, approvedText(p.transcript, device.deviceId));
  endPairing(p, 'approved', {
    type: 'pair_approved', requestId, deviceId: device.deviceId, engineId, enginePublicKey: identity.jwk, signature,
  });
}

// ---- extension connections ----

class Session {
  constructor(device) {
    this.device = device;
    this.sessionId = randomId();
    this.conn = null;
    this.lastSequence = 0;
    this.expiry = null;
    this.waiting = []; // calls waiting for the device to come back
  }
}

function onExtensionSocket(ws, origin) {
  const conn = {
    ws, origin, connectionId: randomId(), authed: false, session: null, inFlight: new Map(),
    queue: [], incoming: new Set(), transfers: new Map(), pingSeq: 0, missed: 0, rttMs: null,
  };
  const challenge = { engineId, engineInstanceId, connectionId: conn.connectionId, challenge: randomNonce(), timestamp: now() };
  const authTimer = setTimeout(() => ws.close(4401), 5000);
  signText(identity.privateKey, engineChallengeText(challenge)).then((signature) => {
    ws.send(JSON.stringify({ type: 'challenge', protocol: 1, ...challenge, signature }));
  });
  ws.on('close', () => {
    clearTimeout(authTimer);
    clearInterval(conn.heartbeat);
    onDisconnect(conn);
  });
  ws.on('message', async (data) => {
    if (conn.authed) {
      onFrame(conn, data.toString());
      return;
    }
    if (conn.authStarted) return;
    conn.authStarted = true;
    clearTimeout(authTimer);
    if (data.length > PRE_AUTH_LIMIT) return ws.close(4401);
    let auth;
    try {
      auth = JSON.parse(data.toString());
    } catch {
      return ws.close(4401);
    }
    const device = devices.get(auth?.deviceId);
    if (auth?.type !== 'auth' || !device || device.installationId !== auth.installationId || device.origin !== origin
        || !Array.isArray(auth.capabilities)) {
      return ws.close(4401);
    }
    if (device.revoked) return ws.close(4403);
    let text;
    try {
      text = clientAuthText({ ...challenge, origin, installationId: auth.installationId, capabilities: auth.capabilities });
    } catch {
      return ws.close(4401);
    }
    if (!await verifyText(device.jwk, auth.signature, text)) return ws.close(4401);
    if (ws.readyState !== ws.OPEN) return undefined;

    let session = device.session;
    const resumed = Boolean(session && auth.resumeSessionId === session.sessionId);
    if (!resumed) {
      if (session) failWaiting(session, 'device_offline');
      session = new Session(device);
      device.session = session;
    }
    clearTimeout(session.expiry);
    if (session.conn) session.conn.ws.close(4409);
    session.conn = conn;
    conn.session = session;
    conn.authed = true;
    ws.send(JSON.stringify({
      type: 'hello_ack', protocol: 1, engineId, engineInstanceId, connectionId: conn.connectionId,
      sessionId: session.sessionId, deviceId: device.deviceId, resumed, lastSequence: session.lastSequence,
      limits: LIMITS,
    }));
    conn.heartbeat = setInterval(() => heartbeat(conn), HEARTBEAT_MS);
    report({ event: 'device-online', deviceId: device.deviceId, sessionId: session.sessionId, resumed });
    for (const call of session.waiting.splice(0)) dispatchCall(call);
    return undefined;
  });
}

function heartbeat(conn) {
  if (conn.missed >= 3) {
    conn.ws.close(4408);
    return;
  }
  conn.missed++;
  conn.pingSeq++;
  conn.pingSent = performance.now();
  sendMessage(conn, { type: 'ping', sequence: conn.pingSeq, timestamp: now() });
}

function onDisconnect(conn) {
  const session = conn.session;
  if (!session || session.conn !== conn) return;
  session.conn = null;
  for (const call of conn.inFlight.values()) finishCall(call, { error: { code: 'device_offline', message: 'the device disconnected' } });
  for (const call of conn.queue.splice(0)) session.waiting.push(call);
  report({ event: 'device-offline', deviceId: session.device.deviceId });
  session.expiry = setTimeout(() => {
    if (session.device.session === session) session.device.session = null;
    failWaiting(session, 'device_offline');
  }, RESUME_WINDOW_MS);
}

function failWaiting(session, code) {
  for (const call of session.waiting.splice(0)) finishCall(call, { error: { code, message: code } });
}

function sendError(conn, code, message, extra = {}) {
  sendMessage(conn, { type: 'error', code, message, ...extra });
}

function sendMessage(conn, message) {
  const bytes = Buffer.from(JSON.stringify(message));
  if (bytes.length <= LIMITS.chunkThreshold) {
    conn.ws.send(bytes.toString());
    return;
  }
  const transferId = randomId();
  const total = Math.ceil(bytes.length / LIMITS.chunkSize);
  for (let index = 0; index < total; index++) {
    conn.ws.send(JSON.stringify({
      type: 'chunk', transferId, index, total, originalBytes: bytes.length,
      data: b64urlEncode(bytes.subarray(index * LIMITS.chunkSize, (index + 1) * LIMITS.chunkSize)),
    }));
  }
}

function onFrame(conn, text) {
  let msg;
  try {
    msg = JSON.parse(text);
  } catch {
    return sendError(conn, 'invalid_params', 'the frame is not JSON');
  }
  if (!msg || typeof msg !== 'object' || typeof msg.type !== 'string') return sendError(conn, 'invalid_params', 'no type');
  if (msg.type === 'chunk') return onChunk(conn, msg);
  return onMessage(conn, msg);
}

function onChunk(conn, msg) {
  const { transferId, index, total, originalBytes, data } = msg;
  const fail = (code, message) => {
    conn.transfers.delete(transferId);
    sendError(conn, code, message, { transferId });
  };
  let t = conn.transfers.get(transferId);
  if (!t) {
    if (!Number.isSafeInteger(originalBytes) || originalBytes <= 0) return fail('invalid_params', 'bad originalBytes');
    if (originalBytes > LIMITS.maxMessageBytes) return fail('too_large', 'message too large');
    if (total !== Math.ceil(originalBytes / LIMITS.chunkSize)) return fail('invalid_params', 'wrong total');
    if (index !== 0) return fail('invalid_params', 'gap');
    const open = [...conn.transfers.values()].reduce((s, x) => s + x.originalBytes, originalBytes);
    if (conn.transfers.size >= LIMITS.maxTransfers || open > LIMITS.maxMessageBytes) return fail('too_large', 'too much in flight');
    t = { total, originalBytes, parts: [] };
    conn.transfers.set(transferId, t);
  } else if (total !== t.total || originalBytes !== t.originalBytes) {
    return fail('invalid_params', 'wrong total');
  } else if (index !== t.parts.length) {
    return fail('invalid_params', index < t.parts.length ? 'duplicate' : 'gap');
  }
  let slice;
  try {
    slice = b64urlDecode(data);
  } catch {
    return fail('invalid_params', 'bad data');
  }
  t.parts.push(slice);
  if (t.parts.length < t.total) return undefined;
  conn.transfers.delete(transferId);
  const bytes = Buffer.concat(t.parts);
  if (bytes.length !== t.originalBytes) return fail('invalid_params', 'size mismatch');
  let inner;
  try {
    inner = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch {
    return fail('invalid_params', 'not UTF-8 JSON');
  }
  return onMessage(conn, inner);
}

function onMessage(conn, msg) {
  const device = conn.session.device;
  switch (msg.type) {
    case 'request': {
      if (typeof msg.id !== 'string' || !msg.id || msg.id.length > 128) return sendError(conn, 'invalid_params', 'bad id');
      if (conn.incoming.has(msg.id)) {
        return sendMessage(conn, { type: 'response', id: msg.id, error: { code: 'duplicate_id', message: 'duplicate id' } });
      }
      conn.incoming.add(msg.id);
      // Answered on a later turn, as the C engine answers through the store thread.
      setImmediate(() => {
        conn.incoming.delete(msg.id);
        if (msg.method === 'engine.info') {
          sendMessage(conn, {
            type: 'response', id: msg.id,
            result: { engineId, engineInstanceId, version: '0.0.0-fake', deviceId: device.deviceId, deviceName: device.name },
          });
        } else {
          sendMessage(conn, { type: 'response', id: msg.id, error: { code: 'unknown_method', message: msg.method } });
        }
      });
      return undefined;
    }
    case 'response': {
      const call = conn.inFlight.get(msg.id);
      if (!call) return undefined;
      conn.inFlight.delete(msg.id);
      finishCall(call, msg.error ? { error: msg.error } : { result: msg.result });
      pump(conn);
      return undefined;
    }
    case 'event':
      conn.session.lastSequence = msg.sequence;
      report({ event: 'ext-event', deviceId: device.deviceId, name: msg.event, data: msg.data, sequence: msg.sequence });
      return undefined;
    case 'ping':
      return sendMessage(conn, { type: 'pong', sequence: msg.sequence, timestamp: msg.timestamp, replyTimestamp: now() });
    case 'pong':
      if (msg.sequence === conn.pingSeq) {
        conn.missed = 0;
        conn.rttMs = performance.now() - conn.pingSent;
      }
      return undefined;
    case 'cancel':
    case 'error':
      return undefined;
    default:
      return sendError(conn, 'unsupported', `unknown type ${msg.type}`);
  }
}

// ---- engine → device calls ----

function finishCall(call, outcome) {
  if (!calls.has(call.tag)) return;
  calls.delete(call.tag);
  clearTimeout(call.timer);
  report({ event: 'reply', tag: call.tag, ...outcome });
}

function dispatchCall(call) {
  const conn = call.device.session?.conn;
  if (!conn) {
    call.device.session.waiting.push(call);
    return;
  }
  conn.queue.push(call);
  pump(conn);
}

function pump(conn) {
  while (conn.inFlight.size < LIMITS.maxInFlight && conn.queue.length) {
    const call = conn.queue.shift();
    if (!calls.has(call.tag)) continue;
    call.conn = conn;
    conn.inFlight.set(call.id, call);
    sendMessage(conn, { type: 'request', id: call.id, method: call.method, params: call.params, timeoutMs: call.timeoutMs });
  }
}

function startCall({ tag, deviceId, method, params, timeoutMs = 30000 }) {
  const device = devices.get(deviceId);
  const call = { tag, id: randomId(), device, method, params, timeoutMs, conn: null };
  if (!device || device.revoked || !device.session) {
    report({ event: 'reply', tag, error: { code: 'device_offline', message: 'the device is not connected' } });
    return;
  }
  calls.set(tag, call);
  call.timer = setTimeout(() => abandonCall(call, 'timeout'), timeoutMs);
  dispatchCall(call);
}

function abandonCall(call, code) {
  const conn = call.conn;
  if (conn?.inFlight.get(call.id) === call) {
    conn.inFlight.delete(call.id);
    sendMessage(conn, { type: 'cancel', id: call.id });
  }
  finishCall(call, { error: { code, message: code } });
  if (conn) pump(conn);
}

function revoke(deviceId) {
  const device = devices.get(deviceId);
  if (!device) return false;
  device.revoked = true;
  const session = device.session;
  if (session) {
    const conn = session.conn;
    if (conn) {
      for (const call of [...conn.inFlight.values(), ...conn.queue]) finishCall(call, { error: { code: 'revoked', message: 'revoked' } });
      conn.inFlight.clear();
      conn.queue.length = 0;
      conn.ws.close(4403);
    }
    failWaiting(session, 'revoked');
    device.session = null;
  }
  return true;
}

// ---- harness commands ----

createInterface({ input: process.stdin }).on('line', async (line) => {
  let cmd;
  try {
    cmd = JSON.parse(line);
  } catch {
    process.stderr.write(`bad command: ${line}\n`);
    return;
  }
  switch (cmd.cmd) {
    case 'approve': await approve(cmd.requestId); break;
    case 'reject': {
      const p = pendingPairings.get(cmd.requestId);
      if (p?.shown) endPairing(p, 'rejected', { type: 'pair_rejected', requestId: p.requestId });
      break;
    }
    case 'call': startCall(cmd); break;
    case 'cancel': {
      const call = calls.get(cmd.tag);
      if (call) abandonCall(call, 'cancelled');
      break;
    }
    case 'revoke': report({ event: 'reply', tag: cmd.tag, result: revoke(cmd.deviceId) }); break;
    case 'devices': {
      const result = await Promise.all([...devices.values()].map(async (d) => ({
        deviceId: d.deviceId, name: d.name, origin: d.origin, installationId: d.installationId,
        fingerprint: await fingerprintOf(d.jwk), online: Boolean(d.session?.conn),
        rttMs: d.session?.conn?.rttMs ?? null, revoked: d.revoked,
      })));
      report({ event: 'reply', tag: cmd.tag, result });
      break;
    }
    case 'audit': report({ event: 'reply', tag: cmd.tag, result: [] }); break;
    case 'quit': process.exit(0); break;
    default: process.stderr.write(`unknown command: ${cmd.cmd}\n`);
  }
});
process.stdin.on('end', () => process.exit(0));

server.listen(PORT, '127.0.0.1', () => {
  report({ event: 'listening', port: server.address().port, engineId });
});
