// SPDX-License-Identifier: GPL-3.0-or-later
// The end-to-end harnesses forgive a process's bad exit only for what is not the process's fault:
// GLib's own quark-table leak, or LeakSanitizer's tracer crashing at exit. Anything else fails.
import assert from 'node:assert/strict';
import test from 'node:test';

import { endedCleanUnderSanitizers, sanitizerFinding } from '../lib/sanitizer.mjs';

const TRACER = [
  'Tracer caught signal 11: addr=0xa7c8 pc=0x7fc4a3ce80f0 sp=0x7fc48b6e1d10',
  '==13540==LeakSanitizer has encountered a fatal error.',
  '==13540==HINT: For debugging, try setting environment variable LSAN_OPTIONS=verbosity=1:log_threads=1',
].join('\n');

const QUARK = [
  '==1==ERROR: LeakSanitizer: detected memory leaks',
  '',
  'Direct leak of 32768 byte(s) in 1 object(s) allocated from:',
  '    #0 0x7f in __interceptor_malloc ../../src/libsanitizer/asan/asan_malloc_linux.cpp:69',
  '    #1 0x7f in g_malloc (/lib/x86_64-linux-gnu/libglib-2.0.so.0+0x5e718)',
  '',
].join('\n');

const OURS = [
  '==1==ERROR: LeakSanitizer: detected memory leaks',
  '',
  'Direct leak of 48 byte(s) in 1 object(s) allocated from:',
  '    #0 0x7f in __interceptor_malloc ../../src/libsanitizer/asan/asan_malloc_linux.cpp:69',
  '    #1 0x7f in g_malloc (/lib/x86_64-linux-gnu/libglib-2.0.so.0+0x5e718)',
  '    #2 0x55 in chp_engine_start ../src/core/engine/chp-engine.c:120',
  '',
].join('\n');

// As two clean-clone CI runs saw it, in two tests, after AT-SPI talked to the app.
const LIBRARY = [
  '==1==ERROR: LeakSanitizer: detected memory leaks',
  '',
  'Direct leak of 104 byte(s) in 1 object(s) allocated from:',
  '    #0 0x7f in __interceptor_malloc ../../../../src/libsanitizer/asan/asan_malloc_linux.cpp:69',
  '    #1 0x7f in g_malloc (/lib/x86_64-linux-gnu/libglib-2.0.so.0+0x5a658)',
  '',
  'Indirect leak of 1206 byte(s) in 29 object(s) allocated from:',
  '    #0 0x7f in __interceptor_malloc ../../../../src/libsanitizer/asan/asan_malloc_linux.cpp:69',
  '    #1 0x7f in g_malloc (/lib/x86_64-linux-gnu/libglib-2.0.so.0+0x5a658)',
  '',
  'Indirect leak of 96 byte(s) in 3 object(s) allocated from:',
  '    #0 0x7f in __interceptor_realloc ../../../../src/libsanitizer/asan/asan_malloc_linux.cpp:85',
  '    #1 0x7f in g_realloc (/lib/x86_64-linux-gnu/libglib-2.0.so.0+0x5a6f7)',
  '',
  'Indirect leak of 32 byte(s) in 1 object(s) allocated from:',
  '    #0 0x7f in __interceptor_calloc ../../../../src/libsanitizer/asan/asan_malloc_linux.cpp:77',
  '    #1 0x7f in g_malloc0 (/lib/x86_64-linux-gnu/libglib-2.0.so.0+0x5a6b0)',
  '',
  'SUMMARY: AddressSanitizer: 1438 byte(s) leaked in 34 allocation(s).',
].join('\n');

test('a small leak that libraries made through GLib, with no frame of ours, is forgiven; ours or a big one is not', () => {
  assert.equal(endedCleanUnderSanitizers(LIBRARY), true);
  assert.equal(sanitizerFinding(LIBRARY), null);
  // One block of ours among them: all of it is reported.
  assert.equal(endedCleanUnderSanitizers(`${LIBRARY}\n${OURS.split('\n').slice(2).join('\n')}`), false);
  // The same shape, past 20 KiB: reported.
  const big = LIBRARY.replace('Indirect leak of 1206 byte(s) in 29', 'Indirect leak of 40000 byte(s) in 29');
  assert.equal(endedCleanUnderSanitizers(big), false);
  assert.match(sanitizerFinding(big), /40000/);
});

test('LeakSanitizer\'s tracer crash at exit is not the process\'s failure', () => {
  assert.equal(endedCleanUnderSanitizers(`bridge: listening\n${TRACER}`), true);
});

test('GLib\'s quark block alone is forgiven; a leak with our frames is not', () => {
  assert.equal(endedCleanUnderSanitizers(QUARK), true);
  assert.equal(sanitizerFinding(QUARK), null);
  assert.equal(endedCleanUnderSanitizers(OURS), false);
  assert.match(sanitizerFinding(OURS), /chp_engine_start/);
});

test('a memory error, a UB report or a plain crash is never forgiven, tracer crash or not', () => {
  assert.equal(endedCleanUnderSanitizers(`==1==ERROR: AddressSanitizer: heap-use-after-free\n${TRACER}`), false);
  assert.equal(endedCleanUnderSanitizers(`x.c:3:5: runtime error: signed integer overflow\n${TRACER}`), false);
  assert.equal(endedCleanUnderSanitizers('Segmentation fault'), false);
  assert.equal(endedCleanUnderSanitizers(''), false);
});
