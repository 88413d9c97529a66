// SPDX-License-Identifier: GPL-3.0-or-later
// The extension's identity (DESIGN §2): installationId in chrome.storage.local, the device key pair
// in IndexedDB with a non-extractable private key, and the pinned engine in the `pairing` record.
// Storage is injected, so the same code runs in the worker and, with in-memory stores, in Node.

import { checkPublicJwk, generateKeyPair, randomId } from './protocol.js';

const DB_NAME = 'chaperone';
const STORE = 'keys';
const DEVICE_KEY = 'device';
const INSTALLATION_ID = /^[A-Za-z0-9_-]{22}$/;

/**
 * A tiny key/value view of IndexedDB `chaperone`/`keys`. CryptoKey objects are structured-cloneable,
 * so a non-extractable private key can be stored and used later without ever being exported.
 */
export function idbKeyStore(indexedDB = globalThis.indexedDB) {
  const open = () => new Promise((resolve, reject) => {
    const request = indexedDB.open(DB_NAME, 1);
    request.onupgradeneeded = () => {
      if (!request.result.objectStoreNames.contains(STORE)) request.result.createObjectStore(STORE);
    };
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error);
  });
  const run = async (mode, action) => {
    const db = await open();
    try {
      return await new Promise((resolve, reject) => {
        const tx = db.transaction(STORE, mode);
        const request = action(tx.objectStore(STORE));
        // Resolve on commit, not on the request, so a caller that goes on knows the write is durable.
        tx.oncomplete = () => resolve(request.result);
        tx.onerror = () => reject(tx.error);
        tx.onabort = () => reject(tx.error);
      });
    } finally {
      db.close();
    }
  };
  return {
    get: (key) => run('readonly', (store) => store.get(key)),
    put: (key, value) => run('readwrite', (store) => store.put(value, key)),
    delete: (key) => run('readwrite', (store) => store.delete(key)),
  };
}

/** The same interface in memory, for tests. */
export function memoryKeyStore() {
  const map = new Map();
  return {
    get: async (key) => map.get(key),
    put: async (key, value) => { map.set(key, value); },
    delete: async (key) => { map.delete(key); },
  };
}

/** A chrome.storage-like area in memory (get/set/remove with promises), for tests. */
export function memoryStorageArea(initial = {}) {
  const data = { ...initial };
  return {
    data,
    async get(keys) {
      if (keys === null || keys === undefined) return { ...data };
      const list = typeof keys === 'string' ? [keys] : Array.isArray(keys) ? keys : Object.keys(keys);
      const out = {};
      for (const k of list) {
        if (k in data) out[k] = structuredClone(data[k]);
        else if (keys && typeof keys === 'object' && !Array.isArray(keys)) out[k] = keys[k];
      }
      return out;
    },
    async set(items) {
      for (const [k, v] of Object.entries(items)) data[k] = structuredClone(v);
    },
    async remove(keys) {
      for (const k of typeof keys === 'string' ? [keys] : keys) delete data[k];
    },
  };
}

export class Keystore {
  /**
   * local: chrome.storage.local (or a memory area); keys: idbKeyStore() (or memoryKeyStore()).
   */
  constructor({ local, keys = idbKeyStore() }) {
    this.local = local;
    this.keys = keys;
  }

  /** Made once per profile and kept across Unpair, so the app can tell a re-pair from a new browser. */
  async installationId() {
    const { installationId } = await this.local.get('installationId');
    if (typeof installationId === 'string' && INSTALLATION_ID.test(installationId)) return installationId;
    const fresh = randomId();
    await this.local.set({ installationId: fresh });
    return fresh;
  }

  /** A new key pair for one pairing attempt; stored only if the engine approves it. */
  newKeyPair() {
    return generateKeyPair();
  }

  /** {pairing, privateKey, publicJwk} or null when not paired (or half of it is missing). */
  async load() {
    const { pairing } = await this.local.get('pairing');
    if (!pairing || typeof pairing.deviceId !== 'string') return null;
    const key = await this.keys.get(DEVICE_KEY);
    if (!key?.privateKey || !key.publicJwk) return null;
    try {
      checkPublicJwk(pairing.enginePublicKey);
    } catch {
      return null;
    }
    return { pairing, privateKey: key.privateKey, publicJwk: key.publicJwk };
  }

  async pairing() {
    return (await this.local.get('pairing')).pairing ?? null;
  }

  /** Pins an approved pairing: the key first, so a record never names a key that is not there. */
  async save({ privateKey, jwk }, pairing) {
    await this.keys.put(DEVICE_KEY, { privateKey, publicJwk: jwk });
    await this.local.set({ pairing });
  }

  /** Forgets the key and the pinned engine; installationId stays. */
  async unpair() {
    await this.local.remove('pairing');
    await this.keys.delete(DEVICE_KEY);
  }
}
