// SPDX-License-Identifier: GPL-3.0-or-later
// The fixture web server the extension's browser tests use (tests/fixtures/serve.mjs), and the
// page agent's strings (in the extension's _locales, with an English fallback in the agent).

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { request } from 'node:http';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { PAGE_FILES } from '../../extension/lib/page-bridge.js';
import { resolveSitePath, startFixtureServer } from '../fixtures/serve.mjs';
import { once } from '../lib/until.mjs';

/** A raw GET that sends the path exactly as given (fetch would normalise "../"). */
function rawGet(origin, path) {
  const u = new URL(origin);
  return new Promise((ok, fail) => {
    const req = request({ host: '127.0.0.1', port: u.port, path, method: 'GET', headers: { Host: u.host } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c) => { body += c; });
      res.on('end', () => ok({ status: res.statusCode, headers: res.headers, body }));
    });
    req.on('error', fail);
    req.end();
  });
}

test('two loopback origins serve the sites with origins substituted', async () => {
  const s = await startFixtureServer();
  try {
    assert.match(s.originA, /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.match(s.originB, /^http:\/\/localhost:\d+$/);
    assert.notEqual(new URL(s.originA).port, new URL(s.originB).port);
    const r = await rawGet(s.originA, '/iframe.html');
    assert.equal(r.status, 200);
    assert.match(r.headers['content-type'], /^text\/html/);
    assert.ok(r.body.includes(`src="${s.originB}/iframe-child.html?label=cross"`));
    assert.doesNotMatch(r.body, /\{\{ORIGIN_/);
    const b = await rawGet(s.originB, '/index.html');
    assert.ok(b.body.includes(`Served on ${s.originA} and ${s.originB}.`));
    for (const page of ['forms', 'modal', 'iframe', 'iframe-child', 'shadow', 'big', 'navigate-away',
      'navigate-target', 'overlay', 'login', 'auth', 'handoff', 'cookies', 'dynamic']) {
      assert.equal((await rawGet(s.originA, `/${page}.html`)).status, 200, page);
    }
    assert.equal((await rawGet(s.originA, '/')).status, 200);
    assert.match((await rawGet(s.originA, '/site.css')).headers['content-type'], /^text\/css/);
  } finally {
    await s.close();
  }
});

test('cookies, 404s, no directory traversal, GET/HEAD only', async () => {
  const s = await startFixtureServer();
  try {
    const c = await rawGet(s.originA, '/cookies.html');
    const cookies = c.headers['set-cookie'];
    assert.equal(cookies.length, 2);
    assert.equal(cookies.filter((x) => /;\s*HttpOnly/i.test(x)).length, 1);
    assert.equal((await rawGet(s.originA, '/forms.html')).headers['set-cookie'], undefined);
    assert.equal((await rawGet(s.originA, '/nope.html')).status, 404);
    for (const evil of ['/../serve.mjs', '/..%2fserve.mjs', '/%2e%2e/serve.mjs', '/sites/../../serve.mjs',
      '/..%5cserve.mjs', '/%00', '/%E0%A4%A', '//etc/passwd']) {
      const r = await rawGet(s.originA, evil);
      assert.equal(r.status, 404, evil);
      assert.doesNotMatch(r.body, /startFixtureServer|root:/, evil);
    }
    assert.equal(resolveSitePath('/../x'), null);
    assert.equal(resolveSitePath('/a/%2e%2e/%2e%2e/x'), null);
    assert.ok(resolveSitePath('/forms.html').endsWith('/tests/fixtures/sites/forms.html'));
    const post = await new Promise((ok) => {
      const u = new URL(s.originA);
      request({ host: '127.0.0.1', port: u.port, path: '/forms.html', method: 'POST' }, (res) => { res.resume(); ok(res.statusCode); }).end();
    });
    assert.equal(post, 405);
    const slow = await rawGet(s.originA, '/slow?ms=120');
    assert.equal(JSON.parse(slow.body).ms, 120, 'the slow endpoint answers with the delay it was asked for');
  } finally {
    await s.close();
  }
});

test('CLI mode prints both origins and serves until stopped', async () => {
  const script = fileURLToPath(new URL('../fixtures/serve.mjs', import.meta.url));
  const child = spawn(process.execPath, [script], { stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    let out = '';
    child.stdout.on('data', (d) => { out += d; });
    await once(child.stdout, 'data', { filter: () => /originB /.test(out), timeout: 5000,
                                       what: 'serve.mjs to print both origins' });
    const a = out.match(/originA (\S+)/)[1];
    assert.equal((await rawGet(a, '/handoff.html')).status, 200);
  } finally {
    child.kill('SIGTERM');
    await new Promise((ok) => child.once('exit', ok));
  }
});

test('page strings: every page_ key used exists in en, fr and zh_CN; English fallback matches', async () => {
  // The pill and the banner (page-ui.js) hold the page's strings; the agent's files (page-*.js)
  // are read too, in case.
  const agent = (await Promise.all(PAGE_FILES.filter((f) => f.startsWith('content/page-')).map((f) =>
    readFile(new URL(`../../extension/${f}`, import.meta.url), 'utf8')))).join('\n');
  const messages = {};
  for (const locale of ['en', 'fr', 'zh_CN']) {
    const all = JSON.parse(await readFile(new URL(`../../extension/_locales/${locale}/messages.json`, import.meta.url), 'utf8'));
    messages[locale] = Object.fromEntries(Object.entries(all).filter(([key]) => key.startsWith('page_')));
  }
  const used = new Set([...agent.matchAll(/msg\('(page_\w+)'/g)].map((m) => m[1]));
  for (const reason of ['qr', 'mfa', 'captcha', 'device', 'login', 'other']) used.add(`page_handoff_reason_${reason}`);
  const fallback = Object.fromEntries([...agent.matchAll(/^\s+(page_\w+): '((?:[^'\\]|\\.)*)',$/gm)].map((m) => [m[1], m[2]]));
  for (const key of used) assert.ok(fallback[key], `English fallback for ${key}`);
  for (const [locale, table] of Object.entries(messages)) {
    assert.deepEqual(Object.keys(table).sort(), Object.keys(fallback).sort(), `${locale}: same keys as the fallback`);
    for (const [key, entry] of Object.entries(table)) {
      assert.match(key, /^page_[a-z_]+$/);
      assert.equal(typeof entry.message, 'string');
      assert.ok(entry.message.length > 0, `${locale}.${key}`);
      assert.ok(entry.description, `${locale}.${key} has a description`);
      const uses = /\$STEP\$/.test(entry.message);
      assert.equal(uses, !!entry.placeholders, `${locale}.${key}: placeholder declared iff used`);
      if (uses) assert.deepEqual(entry.placeholders, { step: { content: '$1', example: '3' } });
    }
  }
  for (const [key, text] of Object.entries(fallback)) {
    assert.equal(messages.en[key].message.replace('$STEP$', '$1'), text, `fallback for ${key} equals en`);
  }
});
