// SPDX-License-Identifier: GPL-3.0-or-later
// Real open-source web apps, installed from npm (root package.json, pinned) and served on loopback
// for the real-site suite (tests/e2e/realsites-*.test.mjs) and bench (bench/realsite-bench.mjs):
//
//   TiddlyWiki 5.4.1   a personal wiki (a single-page app with its own widgets and an iframe editor)
//   MailDev 3.0.0      a mail catcher with a React inbox (read, search, delete); mail arrives by SMTP
//   Node-RED 4.1.15    a flow editor (jQuery, icon-only controls, a canvas)
//   Etherpad 1.8.14    a shared text editor: a contenteditable body in a frame in a frame, both
//                      about:srcdoc (installed apart, tests/realsites/etherpad/: see startEtherpad)
//   Verdaccio 5.33.0   a private npm registry with a React (MUI) web UI: search suggestions in a
//                      combobox's listbox (installed apart, tests/realsites/verdaccio/)
//
// and, for the suite only, TiddlyWiki again with the CodeMirror 5 editor it ships as a plugin, and
// Node-RED again with Dashboard 2.0 1.31.0 (@flowfuse/node-red-dashboard: a Vue 3 app it serves).
//
// Each starts on a free 127.0.0.1 port in a fresh temporary folder, seeded with the content the
// tasks look for, and is waited on until its HTTP port answers (polled with a deadline: the event,
// not a sleep). `stop()` ends its process group and removes the folder. Nothing here reaches the
// internet: the apps are configured with their update checks and telemetry off.
//
//   const wiki = await startTiddlyWiki();   // {name, url, origin, pid, …app's own state…, stop()}

import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cp, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { deadline, until } from '../lib/until.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const BIN = {
  tiddlywiki: join(root, 'node_modules', 'tiddlywiki', 'tiddlywiki.js'),
  maildev: join(root, 'node_modules', 'maildev', 'dist', 'bin', 'maildev.js'),
  nodered: join(root, 'node_modules', 'node-red', 'red.js'),
};
/** Etherpad's package, in its own folder (its pinned dependencies are old: npm 6, socket.io 2). */
const ETHERPAD_MODULES = join(root, 'tests', 'realsites', 'etherpad', 'node_modules');
/** Verdaccio's package, in its own folder as Etherpad's is. */
const VERDACCIO_MODULES = join(root, 'tests', 'realsites', 'verdaccio', 'node_modules');
/** Node-RED's Dashboard 2.0, a module the runtime loads (startNodeRedDashboard). */
const DASHBOARD_MODULE = join(root, 'node_modules', '@flowfuse', 'node-red-dashboard');

/** Why the real apps (the bench's three and the dashboard) cannot run here (not installed: `npm ci`), or null. */
export function appsWhyNot() {
  const needed = { ...BIN, 'node-red-dashboard': DASHBOARD_MODULE };
  const missing = Object.entries(needed).filter(([, path]) => !existsSync(path)).map(([name]) => name);
  return missing.length ? `${missing.join(', ')} not installed (npm ci at the top of the tree)` : null;
}

/** appsWhyNot, and why Etherpad or Verdaccio (the suite's, installed in their own folders) cannot run. */
export function suiteAppsWhyNot() {
  const why = appsWhyNot();
  if (why) return why;
  if (!existsSync(join(ETHERPAD_MODULES, 'ep_etherpad-lite', 'node', 'server.js'))) {
    return 'Etherpad not installed (npm ci in tests/realsites/etherpad)';
  }
  if (!existsSync(join(VERDACCIO_MODULES, 'verdaccio', 'bin', 'verdaccio'))) {
    return 'Verdaccio not installed (npm ci in tests/realsites/verdaccio)';
  }
  return null;
}

/** A free loopback port (the kernel's pick; the app binds it a moment later). */
function freePort() {
  return new Promise((ok, fail) => {
    const s = createServer();
    s.once('error', fail);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => ok(port));
    });
  });
}

/** GET/PUT/DELETE against an app's own HTTP API → {status, body (JSON when it is)}. */
export async function http(url, { method = 'GET', headers = {}, body } = {}) {
  const res = await fetch(url, { method, headers: { accept: 'application/json', ...headers }, body });
  const text = await res.text();
  let parsed = text;
  try { parsed = JSON.parse(text); } catch { /* not JSON */ }
  return { status: res.status, body: parsed };
}

/**
 * Starts `node script ...args` in its own process group in `home`; resolves once `ready()` is
 * true (polled, bounded), with {pid, log(), stop()}. A process that exits first fails with its log.
 */
async function startProcess(name, script, args, { home, ready, timeout = 60000, env = {} }) {
  const child = spawn(process.execPath, [script, ...args], {
    cwd: home, detached: true, stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, HOME: home, NODE_ENV: 'production', ...env },
  });
  const lines = [];
  for (const s of [child.stdout, child.stderr]) {
    s.on('data', (d) => {
      lines.push(d.toString());
      if (lines.length > 200) lines.splice(0, lines.length - 200);
    });
  }
  let exited = null;
  const gone = new Promise((r) => child.once('exit', (code, signal) => { exited = code ?? signal; r(); }));
  const proc = {
    pid: child.pid,
    log: () => lines.join(''),
    async stop() {
      if (exited === null) {
        try { process.kill(-child.pid, 'SIGTERM'); } catch { /* gone */ }
        const timer = setTimeout(() => { try { process.kill(-child.pid, 'SIGKILL'); } catch { /* gone */ } }, 5000);
        await gone;
        clearTimeout(timer);
      }
      await rm(home, { recursive: true, force: true });
    },
  };
  try {
    await until(async () => {
      if (exited !== null) throw new Error(`${name} exited (${exited}) before it answered:\n${proc.log().slice(-2000)}`);
      return ready().catch(() => false);
    }, { timeout, what: `${name} to answer on its port` });
  } catch (err) {
    await proc.stop();
    throw err;
  }
  return proc;
}

// ---- TiddlyWiki --------------------------------------------------------------------------------

/** What the wiki holds for the read task: a tiddler found by a word only its text has. */
export const WIKI_SEED = [
  { title: 'Harbour Notes', text: 'The lighthouse keeper logs every ferry that passes the breakwater.', tags: 'notes' },
  { title: 'Garden Plan', text: 'Tomatoes along the south fence; basil between them.', tags: 'notes' },
];
export const WIKI_WORD = 'lighthouse';

export async function startTiddlyWiki({ plugins = [], name = 'tiddlywiki', label = 'TiddlyWiki 5.4.1' } = {}) {
  const home = await mkdtemp(join(tmpdir(), 'chp-realsite-tw-'));
  const port = await freePort();
  const wiki = join(home, 'wiki');
  const init = spawn(process.execPath, [BIN.tiddlywiki, wiki, '--init', 'server'], { cwd: home, stdio: 'ignore' });
  await new Promise((ok, fail) => init.once('exit', (c) => (c === 0 ? ok() : fail(new Error(`tiddlywiki --init: exit ${c}`)))));
  if (plugins.length) {
    // Plugins shipped with TiddlyWiki (tiddlywiki/codemirror: its editor becomes CodeMirror 5).
    const info = join(wiki, 'tiddlywiki.info');
    const json = JSON.parse(await readFile(info, 'utf8'));
    json.plugins = [...json.plugins, ...plugins];
    await writeFile(info, JSON.stringify(json, null, 2));
  }
  const origin = `http://127.0.0.1:${port}`;
  const proc = await startProcess('TiddlyWiki', BIN.tiddlywiki, [wiki, '--listen', `port=${port}`, 'host=127.0.0.1'],
    { home, ready: async () => (await http(`${origin}/status`)).status === 200 });
  const tiddlerUrl = (title) => `${origin}/recipes/default/tiddlers/${encodeURIComponent(title)}`;
  const app = {
    name, label, url: `${origin}/`, origin, pid: proc.pid, log: proc.log,
    /** A tiddler as the server holds it (its HTTP API), or null. */
    async tiddler(title) {
      const r = await http(tiddlerUrl(title));
      return r.status === 200 ? r.body : null;
    },
    // The server's CSRF guard wants this header on writes (TiddlyWiki's own client sends it).
    async putTiddler(t) {
      const r = await http(tiddlerUrl(t.title), { method: 'PUT', body: JSON.stringify(t),
        headers: { 'content-type': 'application/json', 'x-requested-with': 'TiddlyWiki' } });
      if (r.status >= 300) throw new Error(`PUT ${t.title}: ${r.status}`);
    },
    async deleteTiddler(title) {
      await http(tiddlerUrl(title), { method: 'DELETE', headers: { 'x-requested-with': 'TiddlyWiki' } });
    },
    stop: () => proc.stop(),
  };
  for (const t of WIKI_SEED) await app.putTiddler(t);
  return app;
}

/**
 * The same wiki with the CodeMirror plugin TiddlyWiki ships: its text editor is CodeMirror 5 (a
 * hidden textarea that CodeMirror reads, lines it draws itself) in the page, not a textarea in a
 * frame. Not one of the bench's apps: the suite writes through it (tasks.mjs wikiCodeMirrorWrite).
 */
export function startTiddlyWikiWithCodeMirror() {
  return startTiddlyWiki({ plugins: ['tiddlywiki/codemirror'], name: 'tiddlywiki-cm',
    label: 'TiddlyWiki 5.4.1 with CodeMirror 5' });
}

// ---- MailDev -----------------------------------------------------------------------------------

/** The inbox for the mail tasks: one to find by a word and read, one to delete. */
export const MAIL_SEED = [
  { subject: 'Invoice 2291 overdue', body: 'Invoice 2291 for the harbour repairs is 14 days overdue; please pay by Friday.' },
  { subject: 'Team lunch on Friday', body: 'Shall we meet at the noodle bar at noon?' },
  { subject: 'Weekly status', body: 'All builds green; release candidate on Tuesday.' },
];
export const MAIL_WORD = 'invoice';

/** Sends one message to an SMTP port the plain way (EHLO … DATA … QUIT), waiting for each reply. */
export function sendMail(port, { from = 'alice@example.test', to = 'bob@example.test', subject, body }) {
  const steps = ['EHLO realsites.test', `MAIL FROM:<${from}>`, `RCPT TO:<${to}>`, 'DATA',
    `From: Alice <${from}>\r\nTo: Bob <${to}>\r\nSubject: ${subject}\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n${body}\r\n.`,
    'QUIT'];
  return new Promise((ok, fail) => {
    const s = connect(port, '127.0.0.1');
    let buf = '';
    let i = 0;
    s.setTimeout(10000, () => { s.destroy(); fail(new Error('SMTP: no answer')); });
    s.on('error', fail);
    s.on('close', () => (i === steps.length ? ok() : fail(new Error(`SMTP: closed after ${i} steps`))));
    s.on('data', (d) => {
      buf += d;
      const lines = buf.split('\r\n');
      buf = lines.pop();
      for (const line of lines) {
        if (/^[45]\d\d /.test(line)) { s.destroy(); fail(new Error(`SMTP: ${line}`)); return; }
        if (/^\d{3} /.test(line) && i < steps.length) s.write(`${steps[i++]}\r\n`);
      }
    });
  });
}

export async function startMailDev() {
  const home = await mkdtemp(join(tmpdir(), 'chp-realsite-mail-'));
  const [web, smtp] = [await freePort(), await freePort()];
  const origin = `http://127.0.0.1:${web}`;
  const proc = await startProcess('MailDev', BIN.maildev, ['--smtp', String(smtp), '--web', String(web),
    '--ip', '127.0.0.1', '--web-ip', '127.0.0.1', '--mail-directory', join(home, 'mail'), '--silent'],
  { home, ready: async () => (await http(`${origin}/api/healthz`)).status === 200 });
  const app = {
    name: 'maildev', label: 'MailDev 3.0.0', url: `${origin}/`, origin, smtpPort: smtp, pid: proc.pid, log: proc.log,
    /** The inbox as the server holds it: [{id, subject, text, …}]. */
    async messages() { return (await http(`${origin}/api/email`)).body; },
    async bySubject(subject) { return (await app.messages()).find((m) => m.subject === subject) ?? null; },
    send: (message) => sendMail(smtp, message),
    /** Puts the seed inbox back (a run may have deleted a message), and nothing else. */
    async reset() {
      await http(`${origin}/api/email/all`, { method: 'DELETE' });
      for (const m of MAIL_SEED) await app.send(m);
      await until(async () => (await app.messages()).length === MAIL_SEED.length, { timeout: 10000, what: 'the seeded inbox' });
    },
    stop: () => proc.stop(),
  };
  await app.reset();
  return app;
}

// ---- Node-RED ----------------------------------------------------------------------------------

/** The flows for the Node-RED tasks: a "Backups" flow whose nodes the read task finds by a word. */
export const FLOW_SEED = [
  { id: 'f1backups0000001', type: 'tab', label: 'Backups', disabled: false, info: '' },
  { id: 'n1inject00000001', type: 'inject', z: 'f1backups0000001', name: 'Every night at two', props: [{ p: 'payload' }],
    repeat: '', crontab: '00 02 * * *', once: false, topic: '', payload: '', payloadType: 'date', x: 160, y: 80, wires: [['n2comment0000001']] },
  { id: 'n2comment0000001', type: 'debug', z: 'f1backups0000001', name: 'Nightly backup report', active: true,
    tosidebar: true, console: false, complete: 'payload', targetType: 'msg', x: 420, y: 80, wires: [] },
];
export const FLOW_WORD = 'nightly';
/**
 * A function node the suite's code-editing task deploys beside the seed (apps.reset([…])): its
 * code, in Node-RED's Monaco editor, has lines to replace.
 */
export const FLOW_FUNCTION = { id: 'n3function000001', type: 'function', z: 'f1backups0000001', name: 'Format the report',
  func: 'const a = 1;\nreturn msg;', outputs: 1, x: 160, y: 160, wires: [[]] };

/**
 * For the suite's dashboard task: a page of Node-RED Dashboard 2.0 (@flowfuse/node-red-dashboard,
 * a Vue 3 and Vuetify app the runtime serves at /dashboard) with a booking form — a text field,
 * a native date input, a number, a checkbox and a switch — and a dropdown; function nodes keep
 * what they send in the runtime's global context ("booking", "berth"), where app.sent() reads it.
 */
const BOATS = [
  { boat: 'Sea Otter', berth: 'A3', length: 9.5, skipper: 'Marta' },
  { boat: 'Kittiwake', berth: 'B7', length: 11.2, skipper: 'Jonas' },
  { boat: 'Grey Heron', berth: 'C2', length: 7.8, skipper: 'Ines' },
  { boat: 'Puffin', berth: 'A5', length: 8.4, skipper: 'Tomasz' },
];
export const DASHBOARD_FLOW = [
  { id: 'd0base0000000001', type: 'ui-base', name: 'Harbour desk', path: '/dashboard', includeClientData: true,
    acceptsClientConfig: ['ui-notification', 'ui-control'], showPathInSidebar: false, headerContent: 'page',
    navigationStyle: 'default' },
  { id: 'd0theme000000001', type: 'ui-theme', name: 'Default',
    colors: { surface: '#ffffff', primary: '#0094ce', bgPage: '#eeeeee', groupBg: '#ffffff', groupOutline: '#cccccc' },
    sizes: { pagePadding: '12px', groupGap: '12px', groupBorderRadius: '4px', widgetGap: '12px' } },
  { id: 'd0page0000000001', type: 'ui-page', name: 'Bookings', ui: 'd0base0000000001', path: '/bookings', icon: 'home',
    layout: 'grid', theme: 'd0theme000000001', order: 1, className: '', visible: 'true', disabled: 'false' },
  { id: 'd0group000000001', type: 'ui-group', name: 'New booking', page: 'd0page0000000001', width: '6', height: '1',
    order: 1, showTitle: true, className: '', visible: 'true', disabled: 'false', groupType: 'default' },
  { id: 'd1form0000000001', type: 'ui-form', z: 'f1backups0000001', name: 'Booking form', group: 'd0group000000001',
    label: 'Book a mooring', order: 1, width: 0, height: 0,
    options: [
      { label: 'Boat name', key: 'boat', type: 'text', required: true, rows: null },
      { label: 'Arrival', key: 'arrival', type: 'date', required: true, rows: null },
      { label: 'Nights', key: 'nights', type: 'number', required: true, rows: null },
      { label: 'Shore power', key: 'power', type: 'checkbox', required: false, rows: null },
      { label: 'Pump-out', key: 'pumpout', type: 'switch', required: false, rows: null },
    ],
    formValue: { boat: '', arrival: '', nights: '', power: false, pumpout: false }, payload: '', submit: 'Book',
    cancel: 'Clear', resetOnSubmit: true, topic: 'booking', topicType: 'str', splitLayout: '', className: '',
    passthru: false, dropdownOptions: [], x: 160, y: 240, wires: [['d1keep0000000001']] },
  { id: 'd1keep0000000001', type: 'function', z: 'f1backups0000001', name: 'Keep the booking',
    func: "global.set('booking', msg.payload);\nreturn msg;", outputs: 1, x: 400, y: 240, wires: [[]] },
  // A dropdown as the dashboard draws one by default: Vuetify's combobox, its options in a menu
  // laid over the page when it opens. What is picked goes to the global context ("berth").
  { id: 'd2berth000000001', type: 'ui-dropdown', z: 'f1backups0000001', group: 'd0group000000001', name: 'Berth',
    label: 'Berth', tooltip: '', order: 2, width: 0, height: 0, passthru: true, multiple: false, chips: false,
    clearable: false, options: [
      { value: 'a3', label: 'Pontoon A, berth 3', type: 'str' },
      { value: 'b7', label: 'Pontoon B, berth 7', type: 'str' },
      { value: 'c2', label: 'Pontoon C, berth 2', type: 'str' },
    ], payload: '', topic: 'berth', topicType: 'str', className: '', typeIsComboBox: true, msgTrigger: 'onChange',
    x: 160, y: 300, wires: [['d2keep0000000001']] },
  { id: 'd2keep0000000001', type: 'function', z: 'f1backups0000001', name: 'Keep the berth',
    func: "global.set('berth', msg.payload);\nreturn msg;", outputs: 1, x: 400, y: 300, wires: [[]] },
  // A slider (Vuetify's: a thumb with role slider, moved by the pointer or the arrow keys) and a
  // radio group, each sending what it is set to ("fenders", "alerts").
  { id: 'd3fenders0000001', type: 'ui-slider', z: 'f1backups0000001', group: 'd0group000000001', name: 'Fenders',
    label: 'Fenders', tooltip: '', order: 3, width: 0, height: 0, passthru: true, outs: 'all', topic: 'fenders',
    topicType: 'str', thumbLabel: true, showTicks: 'always', min: 0, max: 10, step: 1, className: '',
    iconPrepend: '', iconAppend: '', color: '', x: 160, y: 360, wires: [['d3keep0000000001']] },
  { id: 'd3keep0000000001', type: 'function', z: 'f1backups0000001', name: 'Keep the fenders',
    func: "global.set('fenders', msg.payload);\nreturn msg;", outputs: 1, x: 400, y: 360, wires: [[]] },
  { id: 'd4alerts00000001', type: 'ui-radio-group', z: 'f1backups0000001', group: 'd0group000000001', name: 'Tide alerts',
    label: 'Tide alerts', order: 4, width: 0, height: 0, columns: 1, passthru: true,
    options: [{ value: 'none', label: 'None', type: 'str' }, { value: 'sms', label: 'By text message', type: 'str' },
      { value: 'mail', label: 'By email', type: 'str' }],
    payload: '', topic: 'alerts', topicType: 'str', className: '', x: 160, y: 420, wires: [['d4keep0000000001']] },
  { id: 'd4keep0000000001', type: 'function', z: 'f1backups0000001', name: 'Keep the alerts',
    func: "global.set('alerts', msg.payload);\nreturn msg;", outputs: 1, x: 400, y: 420, wires: [[]] },
  // A table of the boats in the harbour (Vuetify's data table, with its own search box), filled
  // when the flow starts; a click on a row sends that row ("vessel").
  { id: 'd6table000000001', type: 'ui-table', z: 'f1backups0000001', group: 'd0group000000001', name: 'Moored boats',
    label: 'Moored boats', order: 5, width: 0, height: 0, maxrows: 0, passthru: false, autocols: true, showSearch: true,
    deselect: true, selectionType: 'click', columns: [], mobileBreakpoint: 'sm', mobileBreakpointType: 'defaults',
    action: 'replace', className: '', x: 400, y: 540, wires: [['d6keep0000000001']] },
  { id: 'd6keep0000000001', type: 'function', z: 'f1backups0000001', name: 'Keep the vessel',
    func: "global.set('vessel', msg.payload);\nreturn msg;", outputs: 1, x: 620, y: 540, wires: [[]] },
  { id: 'd6fill0000000001', type: 'inject', z: 'f1backups0000001', name: 'The boats', props: [{ p: 'payload' }],
    repeat: '', crontab: '', once: true, onceDelay: 0.1, topic: '', payloadType: 'json',
    payload: JSON.stringify(BOATS), x: 160, y: 540, wires: [['d6table000000001']] },
  // The dashboard keeps its widgets' state from one visit to the next, deploys included: the
  // desk is set back (app.resetDesk()) by messages to the widgets, which pass them on (passthru)
  // to the nodes that keep what they send — so the reset is known to have reached them.
  { id: 'd5reset000000001', type: 'inject', z: 'f1backups0000001', name: 'Reset the desk', props: [{ p: 'payload' }],
    repeat: '', crontab: '', once: false, topic: '', payload: '', payloadType: 'date', x: 160, y: 480,
    wires: [['d5resetfn0000001']] },
  { id: 'd5resetfn0000001', type: 'function', z: 'f1backups0000001', name: 'Desk defaults', outputs: 3,
    func: "return [{ payload: 'a3' }, { payload: 0 }, { payload: 'none' }];", x: 400, y: 480,
    wires: [['d2berth000000001'], ['d3fenders0000001'], ['d4alerts00000001']] },
];

export async function startNodeRed({ dashboard = false } = {}) {
  const home = await mkdtemp(join(tmpdir(), 'chp-realsite-nr-'));
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  const userDir = join(home, 'user');
  const settings = join(home, 'settings.js');
  // No consent prompt, tour or update check: the editor opens straight on the flows, offline.
  await writeFile(settings, `module.exports = ${JSON.stringify({
    uiHost: '127.0.0.1', uiPort: port, userDir, flowFile: 'flows.json', credentialSecret: false,
    telemetry: { enabled: false, updateNotification: false }, diagnostics: { enabled: false },
    editorTheme: { tours: false, palette: { catalogues: [] }, projects: { enabled: false } },
    externalModules: { autoInstall: false, palette: { allowInstall: false } },
    logging: { console: { level: 'warn' } },
  })};\n`);
  await mkdir(userDir);
  const seed = dashboard ? [...FLOW_SEED, ...DASHBOARD_FLOW] : FLOW_SEED;
  await writeFile(join(userDir, 'flows.json'), JSON.stringify(seed));
  if (dashboard) {
    // The runtime loads node modules from its user folder: the dashboard installed at the top of
    // the tree, linked in as a person's `npm install` in ~/.node-red would put it.
    await mkdir(join(userDir, 'node_modules', '@flowfuse'), { recursive: true });
    await symlink(DASHBOARD_MODULE, join(userDir, 'node_modules', '@flowfuse', 'node-red-dashboard'), 'dir');
  }
  const proc = await startProcess('Node-RED', BIN.nodered, ['--settings', settings, '--userDir', userDir, '--port', String(port)],
    { home, ready: async () => (await http(`${origin}/flows`)).status === 200 });
  const app = {
    name: dashboard ? 'nodered-dashboard' : 'nodered', label: dashboard ? 'Node-RED Dashboard 2.0 (1.31.0)' : 'Node-RED 4.1.15',
    url: dashboard ? `${origin}/dashboard/bookings` : `${origin}/`, origin, pid: proc.pid, log: proc.log,
    /** The deployed flows as the runtime holds them (its admin API). */
    async flows() { return (await http(`${origin}/flows`)).body; },
    async tabs() { return (await app.flows()).filter((n) => n.type === 'tab'); },
    /** The names the editor gives its sidebar tabs (the debug node's messages, as the server serves them). */
    async sidebarNames() {
      const { body } = await http(`${origin}/locales/node-red?lng=en-US`);
      return { debug: body?.debug?.sidebar?.name ?? null };
    },
    /** What the dashboard last sent under `key` (booking, berth: the runtime's global context), or null. */
    async sent(key) {
      const { status, body } = await http(`${origin}/context/global/${key}`);
      if (status !== 200 || typeof body?.msg !== 'string' || body.format === 'undefined') return null;
      // The editor's encoding: a string as it is ("string[2]"), anything else as JSON.
      return /^string/.test(body.format ?? '') ? body.msg : JSON.parse(body.msg);
    },
    /** Sets the dashboard's widgets back (berth a3, no fenders, no alerts) and waits until they are. */
    async resetDesk() {
      const r = await http(`${origin}/inject/d5reset000000001`, { method: 'POST' });
      if (r.status !== 200) throw new Error(`Node-RED: the desk's reset: ${r.status}`);
      await until(async () => (await app.sent('berth')) === 'a3' && (await app.sent('fenders')) === 0
        && (await app.sent('alerts')) === 'none', { timeout: 10000, what: 'the dashboard\'s widgets set back' });
    },
    /** Forgets what was sent under `key` (the context's own delete, as the editor's Context sidebar does it). */
    async forget(key) {
      const { status } = await http(`${origin}/context/global/${key}`, { method: 'DELETE' });
      if (status >= 300 && status !== 404) throw new Error(`Node-RED: forgetting ${key}: ${status}`);
    },
    /** Deploys the seed again (a write run adds a flow), with `extra` nodes. */
    async reset(extra = []) {
      const r = await http(`${origin}/flows`, { method: 'POST', body: JSON.stringify([...seed, ...extra]),
        headers: { 'content-type': 'application/json', 'node-red-deployment-type': 'full' } });
      if (r.status >= 300) throw new Error(`Node-RED reset: ${r.status}`);
    },
    stop: () => proc.stop(),
  };
  return app;
}

/** Node-RED with Dashboard 2.0 and the booking page (DASHBOARD_FLOW): the suite's Vue app. */
export const startNodeRedDashboard = () => startNodeRed({ dashboard: true });

// ---- Etherpad ----------------------------------------------------------------------------------

/** The pad the Etherpad task writes in, and what it holds first. */
export const PAD_ID = 'harbour-log';
export const PAD_SEED = 'Harbour log\n\nMonday: the ferry left at 06:40.\n';

/**
 * Etherpad 1.8.14, as its own install script lays it out: the package as `<home>/src`, its
 * dependencies in `src/node_modules` (links to tests/realsites/etherpad/node_modules, and
 * `ep_etherpad-lite` → `..`), settings in `<home>/settings.json`. It finds its root by that `src`
 * (through a link it would find the real path and refuse), so the package's files are copied, 7 MB.
 * At start it asks `npm ls` for its plugins; the npm it would find is its own npm 6 and a tree it
 * does not recognise, so `<home>/bin/npm` answers for it: the core, no plugins. A dirty-file
 * database, no update check reachable (it logs that it could not), its HTTP API keyed by the
 * APIKEY.txt it writes at start.
 */
/**
 * Runs `start(home, started)` in a fresh temporary folder: `started(proc)` hands over the process
 * once it answers. When anything after fails, that process is stopped (which removes the folder),
 * or the folder is removed if none had started yet.
 */
async function inFreshHome(prefix, start) {
  const home = await mkdtemp(join(tmpdir(), prefix));
  let proc = null;
  try {
    return await start(home, (p) => { proc = p; return p; });
  } catch (err) {
    if (proc) await proc.stop();
    else await rm(home, { recursive: true, force: true });
    throw err;
  }
}

export function startEtherpad() {
  return inFreshHome('chp-realsite-ep-', async (home, started) => {
    const port = await freePort();
    const origin = `http://127.0.0.1:${port}`;
    const src = join(home, 'src');
    await cp(join(ETHERPAD_MODULES, 'ep_etherpad-lite'), src, { recursive: true });
    await mkdir(join(src, 'node_modules'));
    for (const dep of await readdir(ETHERPAD_MODULES)) {
      if (dep === 'npm' || dep.startsWith('.')) continue; // its npm 6 must not answer `npm ls`
      const target = dep === 'ep_etherpad-lite' ? '..' : join(ETHERPAD_MODULES, dep);
      await symlink(target, join(src, 'node_modules', dep), 'dir');
    }
    await mkdir(join(home, 'bin'));
    await writeFile(join(home, 'bin', 'npm'), `#!/bin/sh\nprintf '%s\\n' '${JSON.stringify(
      { dependencies: { 'ep_etherpad-lite': { path: join(src, 'node_modules', 'ep_etherpad-lite') } } })}'\n`, { mode: 0o755 });
    await writeFile(join(home, 'settings.json'), JSON.stringify({
      title: 'Etherpad', ip: '127.0.0.1', port, dbType: 'dirty', dbSettings: { filename: join(home, 'pads.db') },
      defaultPadText: '', minify: false, loglevel: 'WARN', skinName: 'colibris', authenticationMethod: 'apikey',
      showSettingsInAdminPage: false, suppressErrorsInPadText: true, requireSession: false, editOnly: false,
    }));
    // Its update check asks static.etherpad.org at start, an address in its code: sent to a
    // closed loopback port through the proxy its HTTP client honours, it never leaves the machine.
    const closed = 'http://127.0.0.1:9';
    const proc = started(await startProcess('Etherpad', join(src, 'node', 'server.js'), [], {
      home, env: { PATH: `${join(home, 'bin')}:${process.env.PATH}`, NODE_ENV: 'production',
        HTTPS_PROXY: closed, https_proxy: closed, HTTP_PROXY: closed, http_proxy: closed,
        NO_PROXY: '127.0.0.1,localhost', no_proxy: '127.0.0.1,localhost' },
      ready: async () => (await http(`${origin}/api/`)).status === 200 && existsSync(join(home, 'APIKEY.txt')),
    }));
    const apikey = (await readFile(join(home, 'APIKEY.txt'), 'utf8')).trim();
    const api = async (method, params) => {
      const q = new URLSearchParams({ apikey, ...params });
      const r = await http(`${origin}/api/1.2.13/${method}?${q}`, { method: 'POST' });
      if (r.status !== 200 || r.body?.code !== 0) throw new Error(`Etherpad ${method}: ${r.status} ${JSON.stringify(r.body).slice(0, 200)}`);
      return r.body.data;
    };
    const app = {
      name: 'etherpad', label: 'Etherpad 1.8.14', url: `${origin}/p/${PAD_ID}`, origin, pid: proc.pid, log: proc.log,
      /** The pad's text as the server holds it (its HTTP API). */
      async text(padID = PAD_ID) { return (await api('getText', { padID })).text; },
      /** The pad's chat as the server holds it: [{text, userName, time}]. */
      async chat(padID = PAD_ID) { return (await api('getChatHistory', { padID })).messages; },
      /** Puts the pad's text back to `text` (a run wrote in it); the page, if open, shows it at once. */
      async reset(text = PAD_SEED, padID = PAD_ID) { await api('setText', { padID, text }); },
      stop: () => proc.stop(),
    };
    await api('createPad', { padID: PAD_ID, text: PAD_SEED });
    return app;
  });
}

// ---- Verdaccio ---------------------------------------------------------------------------------

/** The package the registry holds for the read task: found by a word, its README read. */
export const REGISTRY_PACKAGE = {
  name: 'harbour-tides', version: '1.2.0', description: 'Tide tables for the harbour: high and low water by day.',
  readme: '# harbour-tides\n\nTide tables for the harbour.\n\n## Usage\n\n`tides.highWater(date)` gives the times of high water.\n',
};

/**
 * Verdaccio 5.33.0 on a free port: no uplink (nothing leaves the machine), its storage and users in
 * a fresh folder, anyone may read, a signed-in user may publish. One user is made through the
 * registry's own API and REGISTRY_PACKAGE published with npm as that user, as a person publishes.
 */
export function startVerdaccio() {
  return inFreshHome('chp-realsite-vd-', async (home, started) => {
    const port = await freePort();
    const origin = `http://127.0.0.1:${port}`;
    const config = join(home, 'config.yaml');
    await writeFile(config, [
      `storage: ${join(home, 'storage')}`,
      'auth:', '  htpasswd:', `    file: ${join(home, 'htpasswd')}`, '    max_users: 10',
      'uplinks: {}',
      'packages:', "  '**':", '    access: $all', '    publish: $authenticated', '    unpublish: $authenticated',
      'web:', '  title: Verdaccio',
      'log: { type: stdout, format: pretty, level: warn }', '',
    ].join('\n'));
    const proc = started(await startProcess('Verdaccio', join(VERDACCIO_MODULES, 'verdaccio', 'bin', 'verdaccio'),
      ['--config', config, '--listen', `127.0.0.1:${port}`],
      { home, ready: async () => (await http(`${origin}/-/ping`)).status === 200 }));
    const user = await http(`${origin}/-/user/org.couchdb.user:harbour`, { method: 'PUT',
      headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'harbour', password: 'harbour-tides-2291' }) });
    if (typeof user.body?.token !== 'string') throw new Error(`Verdaccio: no user: ${user.status}`);
    const pkg = join(home, 'package');
    const { readme, ...manifest } = REGISTRY_PACKAGE;
    await mkdir(pkg);
    await writeFile(join(pkg, 'package.json'), JSON.stringify({ ...manifest, main: 'index.js', license: 'MIT', keywords: ['tides'] }));
    await writeFile(join(pkg, 'index.js'), 'module.exports = {};\n');
    await writeFile(join(pkg, 'README.md'), readme);
    const npm = spawn('npm', ['publish', '--registry', `${origin}/`, `--//127.0.0.1:${port}/:_authToken=${user.body.token}`],
      { cwd: pkg, stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, npm_config_cache: join(home, 'npm-cache') } });
    let err = '';
    npm.stderr.on('data', (d) => { err += d; });
    const published = new Promise((ok, fail) => {
      npm.once('error', fail);                            // no npm to run
      npm.once('exit', (c) => (c === 0 ? ok() : fail(new Error(`npm publish: exit ${c}: ${err.slice(-500)}`))));
    });
    await deadline(published, { timeout: 60000, what: 'npm publish to Verdaccio' }).catch((e) => { npm.kill(); throw e; });
    return {
      name: 'verdaccio', label: 'Verdaccio 5.33.0', url: `${origin}/`, origin, pid: proc.pid, log: proc.log,
      /** A package's README as the registry holds it. */
      async readme(name) { return (await http(`${origin}/${name}`)).body?.readme ?? null; },
      stop: () => proc.stop(),
    };
  });
}

/** Each app by the name it runs under; the bench's three first (startApps' default). */
export const START = {
  tiddlywiki: startTiddlyWiki, maildev: startMailDev, nodered: startNodeRed,
  'tiddlywiki-cm': startTiddlyWikiWithCodeMirror, 'nodered-dashboard': startNodeRedDashboard,
  etherpad: startEtherpad, verdaccio: startVerdaccio,
};
export const BENCH_APPS = Object.freeze(['tiddlywiki', 'maildev', 'nodered']);

/** Starts the named apps (the bench's three by default) side by side; `stop()` ends them all. */
export async function startApps(names = BENCH_APPS) {
  const apps = {};
  const started = await Promise.allSettled(names.map(async (n) => { apps[n] = await START[n](); }));
  const failed = started.find((s) => s.status === 'rejected');
  if (failed) {
    for (const a of Object.values(apps)) await a.stop().catch(() => {});
    throw failed.reason;
  }
  return { apps, async stop() { for (const a of Object.values(apps)) await a.stop().catch(() => {}); } };
}
