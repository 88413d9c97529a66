// SPDX-License-Identifier: GPL-3.0-or-later
// The Firefox build of the extension (build-aux/make-firefox-extension.py): the same files, a
// manifest Firefox takes and nothing else changed in it, an XPI with manifest.json at its top;
// and lib/compat.js's one browser fact, the name the app shows. The real Firefox runs are
// tests/e2e/firefox-*.test.mjs.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { browserName, isGecko } from '../../extension/lib/compat.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const EXT = join(ROOT, 'extension');
const out = mkdtempSync(join(tmpdir(), 'chaperone-ffbuild-'));
after(() => rmSync(out, { recursive: true, force: true }));

const filesUnder = (dir) => readdirSync(dir, { recursive: true })
  .filter((f) => statSync(join(dir, f)).isFile()).sort();

function build() {
  const dir = join(out, 'extension-firefox');
  const xpi = join(out, 'chaperone-firefox.xpi');
  const dep = join(out, 'ff.d');
  execFileSync('python3', [join(ROOT, 'build-aux', 'make-firefox-extension.py'), EXT, dir, xpi, dep]);
  return { dir, xpi, dep };
}

test('the Firefox manifest: an event page, a fixed Gecko id, no Chrome-only keys, no upgrade of ws://', () => {
  const { dir } = build();
  const chrome = JSON.parse(readFileSync(join(EXT, 'manifest.json'), 'utf8'));
  const firefox = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8'));
  assert.deepEqual(firefox.background, { scripts: ['background.js'], type: 'module' });
  assert.equal(firefox.browser_specific_settings.gecko.id, 'chaperone@chaperone.github.io');
  assert.match(firefox.browser_specific_settings.gecko.strict_min_version, /^\d+\.0$/);
  assert.equal(firefox.key, undefined);
  assert.equal(firefox.minimum_chrome_version, undefined);
  // Firefox's MV3 default CSP adds upgrade-insecure-requests, which makes ws://127.0.0.1 wss://.
  assert.equal(firefox.content_security_policy.extension_pages, "script-src 'self'");
  const changed = ['background', 'browser_specific_settings', 'content_security_policy', 'key', 'minimum_chrome_version'];
  for (const key of new Set([...Object.keys(chrome), ...Object.keys(firefox)])) {
    if (!changed.includes(key)) assert.deepEqual(firefox[key], chrome[key], `${key} is the same in both`);
  }
});

test('the same files, byte for byte but the manifest; the depfile names each; the XPI holds them', () => {
  const { dir, xpi, dep } = build();
  const source = filesUnder(EXT);
  assert.deepEqual(filesUnder(dir), source);
  for (const f of source) {
    if (f === 'manifest.json') continue;
    assert.ok(readFileSync(join(dir, f)).equals(readFileSync(join(EXT, f))), `${f} copied as it is`);
  }
  const deps = readFileSync(dep, 'utf8');
  for (const f of source) assert.ok(deps.includes(join(EXT, f)), `the depfile names ${f}`);
  const listing = execFileSync('python3', ['-c',
    'import sys, zipfile; print("\\n".join(zipfile.ZipFile(sys.argv[1]).namelist()))', xpi], { encoding: 'utf8' });
  const inZip = listing.trim().split('\n').sort();
  assert.deepEqual(inZip, source.map((f) => f.split('\\').join('/')).sort());
  assert.ok(inZip.includes('manifest.json'), 'manifest.json at the top of the XPI');
  // The same sources give the same bytes.
  const first = readFileSync(xpi);
  build();
  assert.ok(readFileSync(xpi).equals(first), 'a reproducible XPI');
});

test('compat: the browser\'s name from userAgentData in Chromium\'s family, else Firefox by its URLs or user agent', () => {
  const chromeRuntime = { getURL: () => 'chrome-extension://abcdefghijklmnopabcdefghijklmnop/' };
  const mozRuntime = { getURL: () => 'moz-extension://1b4e28ba-2fa1-41d2-883f-0016d3cca427/' };
  const brands = (...names) => ({ userAgentData: { brands: names.map((brand) => ({ brand })) } });
  assert.equal(browserName(brands('Not A Brand', 'Chromium'), chromeRuntime), 'Chromium');
  assert.equal(browserName(brands('Chromium', 'Google Chrome'), chromeRuntime), 'Google Chrome');
  assert.equal(browserName(brands('Chromium', 'Brave'), chromeRuntime), 'Brave');
  assert.equal(browserName({ userAgent: 'Mozilla/5.0 (X11; Linux x86_64; rv:153.0) Gecko/20100101 Firefox/153.0' },
    mozRuntime), 'Firefox');
  assert.equal(browserName({ userAgent: 'Mozilla/5.0' }, mozRuntime), 'Firefox', 'its moz-extension: URLs say it');
  assert.equal(browserName({}, chromeRuntime), 'Chromium', 'nothing known: the family the code was written for');
  assert.equal(isGecko(mozRuntime), true);
  assert.equal(isGecko(chromeRuntime), false);
  assert.equal(isGecko({ getURL: () => { throw new Error('context invalidated'); } }), false);
  assert.equal(isGecko(undefined), false);
});
