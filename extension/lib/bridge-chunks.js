// SPDX-License-Identifier: GPL-3.0-or-later
// Messages over the connection's chunk threshold travel as numbered base64url chunks
// (docs/protocol.md): cut here on the way out, put together here on the way in, within the
// engine's limits (bytes, open transfers, idle time). The JS half of src/core/chp-chunk-assembler.c.

import { b64urlDecode, b64urlEncode, randomId } from './protocol.js';

const utf8Decoder = new TextDecoder('utf-8', { fatal: true });

/** The chunk frames (JSON texts) that carry `bytes`, `size` bytes each, under one new transferId. */
export function chunkFrames(bytes, size) {
  const total = Math.ceil(bytes.length / size);
  const transferId = randomId();
  const frames = [];
  for (let index = 0; index < total; index++) {
    frames.push(JSON.stringify({
      type: 'chunk',
      transferId,
      index,
      total,
      originalBytes: bytes.length,
      data: b64urlEncode(bytes.subarray(index * size, (index + 1) * size)),
    }));
  }
  return frames;
}

/**
 * Reassembles incoming chunks. `limits()` gives the connection's limits as they are now;
 * `onMessage(msg)` gets each whole message; `onError(code, message, extra)` is told what to answer
 * when a transfer is refused (the transfer is then forgotten).
 */
export class ChunkAssembler {
  #transfers = new Map();
  #timers;
  #limits;
  #onMessage;
  #onError;

  constructor({ timers, limits, onMessage, onError }) {
    this.#timers = timers;
    this.#limits = limits;
    this.#onMessage = onMessage;
    this.#onError = onError;
  }

  /** One incoming `chunk` frame. */
  take(msg) {
    const { transferId, index, total, originalBytes, data } = msg;
    if (typeof transferId !== 'string' || transferId.length === 0 || transferId.length > 128) {
      this.#onError('invalid_params', 'a chunk needs a transferId', {});
      return;
    }
    const fail = (code, message) => {
      const transfer = this.#transfers.get(transferId);
      if (transfer) this.#timers.clearTimeout(transfer.timer);
      this.#transfers.delete(transferId);
      this.#onError(code, message, { transferId });
    };
    const { chunkSize: size, maxMessageBytes, maxTransfers, transferTimeoutMs } = this.#limits();
    let transfer = this.#transfers.get(transferId);
    if (!transfer) {
      if (!Number.isSafeInteger(originalBytes) || originalBytes <= 0) return fail('invalid_params', 'bad originalBytes');
      if (originalBytes > maxMessageBytes) return fail('too_large', `message of ${originalBytes} bytes`);
      if (total !== Math.ceil(originalBytes / size)) return fail('invalid_params', 'total does not match originalBytes');
      if (index !== 0) return fail('invalid_params', `gap: transfer starts at chunk ${index}`);
      if (this.#transfers.size >= maxTransfers) return fail('busy', 'too many transfers open');
      let open = originalBytes;
      for (const t of this.#transfers.values()) open += t.originalBytes;
      if (open > maxMessageBytes) return fail('too_large', 'too many bytes in flight');
      transfer = { total, originalBytes, parts: [], received: 0, timer: null };
      this.#transfers.set(transferId, transfer);
    } else if (total !== transfer.total || originalBytes !== transfer.originalBytes) {
      return fail('invalid_params', 'total or originalBytes changed mid-transfer');
    } else if (index < transfer.parts.length) {
      return fail('invalid_params', `duplicate chunk ${index}`);
    } else if (index !== transfer.parts.length) {
      return fail('invalid_params', `gap: chunk ${index} after ${transfer.parts.length - 1}`);
    }
    let slice;
    try {
      slice = b64urlDecode(data);
    } catch {
      return fail('invalid_params', 'chunk data is not base64url');
    }
    const expected = index < total - 1 ? size : originalBytes - size * (total - 1);
    if (slice.length !== expected) return fail('invalid_params', `chunk ${index} has ${slice.length} bytes, not ${expected}`);
    transfer.parts.push(slice);
    transfer.received += slice.length;
    this.#timers.clearTimeout(transfer.timer);
    transfer.timer = this.#timers.setTimeout(() => fail('timeout', 'transfer idle for too long'), transferTimeoutMs);
    if (transfer.parts.length < total) return undefined;

    this.#timers.clearTimeout(transfer.timer);
    this.#transfers.delete(transferId);
    const whole = new Uint8Array(transfer.received);
    let offset = 0;
    for (const part of transfer.parts) {
      whole.set(part, offset);
      offset += part.length;
    }
    let inner;
    try {
      inner = JSON.parse(utf8Decoder.decode(whole));
    } catch {
      return fail('invalid_params', 'reassembled message is not UTF-8 JSON');
    }
    if (!['request', 'response', 'event'].includes(inner?.type)) {
      return fail('invalid_params', 'a chunked message is a request, response or event');
    }
    this.#onMessage(inner);
    return undefined;
  }

  /** The connection is gone: its transfers with it. */
  clear() {
    for (const transfer of this.#transfers.values()) this.#timers.clearTimeout(transfer.timer);
    this.#transfers.clear();
  }
}
