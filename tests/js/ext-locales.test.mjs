// SPDX-License-Identifier: GPL-3.0-or-later
// Every string the extension shows comes from _locales: each key its code and pages use exists in
// English, French and Simplified Chinese, with a non-empty message and the same placeholders.

import assert from 'node:assert/strict';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { test } from 'node:test';

const EXT = new URL('../../extension/', import.meta.url).pathname;
const LOCALES = ['en', 'fr', 'zh_CN'];

function walk(dir, out = []) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) {
      if (name !== '_locales') walk(path, out);
    } else if (/\.(js|html)$/.test(name)) {
      out.push(path);
    }
  }
  return out;
}

/** key → [files that use it]. Only literal keys can be checked, so the code keeps them literal. */
function usedKeys() {
  const used = new Map();
  const add = (key, file) => {
    if (key.startsWith('@@')) return; // Chrome's predefined messages
    if (!used.has(key)) used.set(key, new Set());
    used.get(key).add(relative(EXT, file));
  };
  for (const file of walk(EXT)) {
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(/\bgetMessage\(\s*['"]([A-Za-z0-9_@]+)['"]/g)) add(m[1], file);
    for (const m of text.matchAll(/\bdata-i18n(?:-title|-aria-label|-placeholder)?="([^"]+)"/g)) add(m[1], file);
    if (/from '(?:\.\.?\/)+(?:lib\/)?i18n\.js'/.test(text)) {
      for (const m of text.matchAll(/\bt\(\s*'([A-Za-z0-9_]+)'/g)) add(m[1], file);
    }
    // Keys chosen at run time come from literal tables: `titleKey: 'x'` and `const X_KEYS = {...}`.
    for (const m of text.matchAll(/\btitleKey:\s*'([A-Za-z0-9_]+)'/g)) add(m[1], file);
    for (const block of text.matchAll(/const [A-Z_]+_KEYS = \{([\s\S]*?)\};/g)) {
      for (const m of block[1].matchAll(/:\s*'([A-Za-z0-9_]+)'/g)) add(m[1], file);
    }
  }
  const manifest = readFileSync(join(EXT, 'manifest.json'), 'utf8');
  for (const m of manifest.matchAll(/__MSG_([A-Za-z0-9_]+)__/g)) add(m[1], join(EXT, 'manifest.json'));
  return used;
}

function loadLocales() {
  return Object.fromEntries(LOCALES.map((loc) => [
    loc, JSON.parse(readFileSync(join(EXT, '_locales', loc, 'messages.json'), 'utf8')),
  ]));
}

const placeholdersOf = (entry) => Object.keys(entry.placeholders ?? {}).map((p) => p.toLowerCase()).sort();
const referencedIn = (message) => [...new Set([...message.matchAll(/\$([A-Za-z0-9_@]+)\$/g)].map((m) => m[1].toLowerCase()))].sort();

/** Problems with `key` across the locales in `tables` ({locale: {key: entry}}). */
function problemsOf(key, tables) {
  const problems = [];
  const reference = tables.en?.[key];
  for (const loc of LOCALES) {
    const entry = tables[loc]?.[key];
    if (!entry || typeof entry.message !== 'string' || entry.message.trim() === '') {
      problems.push(`${loc}: missing or empty`);
      continue;
    }
    const declared = placeholdersOf(entry);
    const referenced = referencedIn(entry.message);
    if (declared.join() !== referenced.join()) {
      problems.push(`${loc}: message uses [${referenced}] but declares [${declared}]`);
    }
    if (reference && declared.join() !== placeholdersOf(reference).join()) {
      problems.push(`${loc}: placeholders [${declared}] differ from en [${placeholdersOf(reference)}]`);
    }
    for (const [name, ph] of Object.entries(entry.placeholders ?? {})) {
      if (ph.content !== reference?.placeholders?.[name]?.content) {
        problems.push(`${loc}: placeholder ${name} is ${ph.content}, en has ${reference?.placeholders?.[name]?.content}`);
      }
    }
  }
  return problems;
}

test('locales: every key the extension uses exists in en, fr and zh_CN with the same placeholders', () => {
  const locales = loadLocales();
  const used = usedKeys();
  assert.ok(used.size > 50, `found ${used.size} keys in use; the scan is broken if this is small`);
  const failures = [];
  for (const [key, files] of used) {
    const problems = problemsOf(key, locales);
    if (problems.length) failures.push(`${key} (used in ${[...files].join(', ')}): ${problems.join('; ')}`);
  }
  assert.deepEqual(failures, []);
});

test('locales: the three catalogues have the same keys and well-formed entries', () => {
  const locales = loadLocales();
  const en = Object.keys(locales.en).sort();
  for (const loc of LOCALES) {
    assert.deepEqual(Object.keys(locales[loc]).sort(), en, `${loc} has the same keys as en`);
    for (const key of en) {
      assert.match(key, /^[A-Za-z0-9_]+$/, `${key} is a valid message name`);
      assert.deepEqual(problemsOf(key, locales), [], key);
    }
  }
  // French and Chinese are translations, not copies, except for names and numbers.
  const sameAsEnglish = en.filter((k) => locales.fr[k].message === locales.en[k].message
    && locales.zh_CN[k].message === locales.en[k].message);
  assert.deepEqual(sameAsEnglish.filter((k) => !/^(extName|actionTitle)$/.test(k)), [],
    'messages left in English in both translations');
});
