// SPDX-License-Identifier: GPL-3.0-or-later
// A person's tasks on real web apps (apps.mjs), written once as a scripted agent over a driver
// (drivers.mjs: Chaperone, Playwright MCP or Chrome DevTools MCP): look (snapshot), find the
// element by its role and name, act, look again. Each task has a read or a write to do, and is
// judged by the app's own state — the server's API, not what the agent believes it did.
//
//   const out = await runTask(TASKS.wikiWrite, driver, app);  // {ok, why, calls, bytes, approvals, ms}

import { performance } from 'node:perf_hooks';

import {
  FLOW_FUNCTION, FLOW_SEED, FLOW_WORD, MAIL_SEED, MAIL_WORD, PAD_SEED, REGISTRY_PACKAGE, WIKI_SEED, WIKI_WORD,
} from './apps.mjs';
import { until } from '../lib/until.mjs';

class TaskError extends Error {}

/** The element or a TaskError that says what the agent could not find. */
function need(d, snap, what, opts) {
  const item = d.find(snap, what, opts);
  if (!item) {
    if (process.env.REALSITES_DEBUG) console.error(`---- ${d.label} snapshot\n${d.text(snap)}\n----`);
    const role = [].concat(what.role ?? 'any').join('|');
    throw new TaskError(`${d.label}: no ${role} ${what.name ?? ''} in its snapshot`
      + (opts?.after ? ` after ${opts.after.name ?? opts.after.role}` : ''));
  }
  return item;
}

/**
 * Looks until `what` is on the page: a snapshot, and another while it is not there yet (an app
 * still loading, a list still filtering) — at most `tries` — as an agent does. → {snap, item}
 */
async function look(d, what, opts, { tries = 8 } = {}) {
  for (let i = 1; ; i++) {
    // A server that can wait for the words first (Chaperone's snapshot `until`) is asked to.
    const snap = await (d.lookSnapshot ? d.lookSnapshot(what) : d.snapshot());
    const item = d.find(snap, what, opts);
    if (item) return { snap, item };
    if (i >= tries) need(d, snap, what, opts);
  }
}

/**
 * Finds `what` and clicks it (or fills it with `value`); when the page re-rendered under the ref
 * (the server says the ref is gone), looks again and acts once more, as an agent told so does.
 */
async function act(d, what, opts, label, value) {
  const doIt = (ref) => (value === undefined ? d.click(ref, label) : d.fill(ref, label, value));
  const { item } = await look(d, what, opts);
  try {
    return await doIt(item.ref);
  } catch (err) {
    if (!/not found|stale|no longer|detached|snapshot/i.test(err.message)) throw err;
    return doIt((await look(d, what, opts)).item.ref);
  }
}

const TEXTBOX = ['textbox', 'searchbox', 'combobox'];
// The body of TiddlyWiki's editor: the textarea inside its about:blank iframe (the only textbox
// after the frame in every server's snapshot, which lists a frame's content in place).
const FRAME = ['iframe', 'frame', 'Iframe'];

let stamp = Date.now() % 1000000;
const unique = () => (stamp += 1);

// An icon-only control: its name is empty or only the icon font's glyphs.
const UNNAMED = /^[^\p{L}\p{N}]*$/u;
const SEARCH_AFTER = { after: { role: 'button', name: /^control panel$|^Server status$/ } };

/**
 * The start of a wiki write: the wiki opened, the plan to create `task.tiddler` asked for (the
 * person's one approval), New tiddler pressed; → the editor's snapshot and its Confirm button.
 */
async function newTiddler(d, app, task) {
  await d.open(app);
  await d.beginWrite(app, `Add the tiddler "${task.tiddler}" to the wiki`,
    [{ kind: 'create', summary: `Create and save the tiddler "${task.tiddler}"` }]);
  await act(d, { role: 'button', name: 'new tiddler' }, {}, 'new tiddler button');
  const confirm = { role: 'button', name: 'Confirm changes to this tiddler' };
  return { confirm, ...(await look(d, confirm)) };
}

/**
 * The wiki's body editor, a textarea in a frame: named by its placeholder ("Type the text for
 * this tiddler") where the frame's elements are listed with the page's (Chaperone: the frame is
 * part of the page), else the unnamed one after the frame; the named fields after the frame
 * (content type, field name) are not it.
 */
function frameBody(d, snap, confirm) {
  return d.find(snap, { role: TEXTBOX, name: /\btext for\b/iu }, { after: confirm })
    ?? need(d, snap, { role: TEXTBOX, name: /^[^\p{L}\p{N}]*$|\btext\b/iu }, { after: { role: FRAME } });
}

export const TASKS = {
  // TiddlyWiki read: search a word, open the first result, read its text.
  wikiRead: {
    app: 'tiddlywiki', kind: 'read', title: 'TiddlyWiki: search, open the first result, read it',
    async run(d, app) {
      await d.open(app);
      await act(d, { role: TEXTBOX }, SEARCH_AFTER, 'search box', WIKI_WORD);
      let snap = await d.snapshot();
      let hit = d.find(snap, { role: 'link', name: WIKI_SEED[0].title });
      if (!hit) {
        // The results list opens when the box has focus (typing gives it); after a fill that set
        // the value without it, a click into the box opens the list, as for a person.
        await d.click(need(d, snap, { role: TEXTBOX }, SEARCH_AFTER).ref, 'search box');
        hit = (await look(d, { role: 'link', name: WIKI_SEED[0].title })).item;
      }
      await d.click(hit.ref, `${hit.name} link`);
      snap = await d.snapshot();
      return { read: d.text(snap) };
    },
    async verify(app, out) {
      const t = await app.tiddler(WIKI_SEED[0].title);
      if (!out.read.includes(t.text)) throw new TaskError('the text read is not the tiddler\'s text on the server');
    },
  },

  // The same read through the wiki's own API (issue 17; Chaperone only: the peers have none): the
  // page's calls learned once (or remembered from an earlier visit), the list of tiddlers read
  // through them, then each tiddler until the one that mentions the word, its text as the server
  // holds it. Nothing is typed into or clicked on the page.
  wikiApiRead: {
    app: 'tiddlywiki', kind: 'read', ours: true,
    title: 'TiddlyWiki through its own API: find the tiddler that mentions a word, read it',
    async run(d, app) {
      d.use(app);
      let list = await d.api({ action: 'route', hint: 'tiddlers' });
      if (list.structuredContent?.route !== 'api') {
        // Nothing remembered yet: the page's own calls, as it makes them when it loads (learn
        // waits for them to be over).
        await d.open(app);
        await d.api({ action: 'learn' });
        list = await d.api({ action: 'route', hint: 'tiddlers' });
      }
      if (list.structuredContent?.route !== 'api') throw new TaskError(`no API route to the list: ${list.structuredContent?.why}`);
      const titles = (d.apiData(list) ?? []).map((t) => t.title).filter((t) => typeof t === 'string');
      for (const title of titles) {
        const one = await d.api({ action: 'route', hint: 'tiddler', params: { tiddler: title } });
        if (one.structuredContent?.route !== 'api') throw new TaskError(`no API route to a tiddler: ${one.structuredContent?.why}`);
        const t = d.apiData(one);
        if (typeof t?.text === 'string' && t.text.includes(WIKI_WORD)) return { read: t.text };
      }
      throw new TaskError(`no tiddler of ${JSON.stringify(titles)} mentions ${WIKI_WORD}`);
    },
    async verify(app, out) {
      const t = await app.tiddler(WIKI_SEED[0].title);
      if (!out.read.includes(t.text)) throw new TaskError('the text read is not the tiddler\'s text on the server');
    },
  },

  // TiddlyWiki write: a new tiddler with a title and a body, saved; read back from the server.
  wikiWrite: {
    app: 'tiddlywiki', kind: 'write', title: 'TiddlyWiki: create a tiddler with a title and body, save it',
    async prepare() {
      this.tiddler = `Ferry timetable ${unique()}`;
      this.body = 'The 7:40 ferry now leaves from pier 3.';
    },
    async run(d, app) {
      const { snap, confirm } = await newTiddler(d, app, this);
      const title = need(d, snap, { role: TEXTBOX }, { after: confirm });
      const body = frameBody(d, snap, confirm);
      await d.fill(title.ref, 'title field', this.tiddler);
      await d.fill(body.ref, 'body field', this.body);
      await d.click(need(d, snap, confirm).ref, 'Confirm changes button');
      return {};
    },
    async verify(app) {
      // The wiki saves to its server a moment after the click (its syncer): wait for it, bounded.
      const t = await until(() => app.tiddler(this.tiddler), { timeout: 15000, what: `"${this.tiddler}" on the server` })
        .catch(() => null);
      if (!t) throw new TaskError(`no tiddler "${this.tiddler}" on the server`);
      if (t.text !== this.body) throw new TaskError(`the saved body is ${JSON.stringify(t.text)}`);
    },
    async cleanup(app) {
      await app.deleteTiddler(this.tiddler);
      await app.deleteTiddler(`Draft of '${this.tiddler}'`);
      await app.deleteTiddler('Draft of \'New Tiddler\'');
    },
  },

  // MailDev read: search the inbox for a word, open the message, read its body.
  mailRead: {
    app: 'maildev', kind: 'read', title: 'MailDev: search the inbox, open the message, read it',
    async run(d, app) {
      await d.open(app);
      await act(d, { role: TEXTBOX, name: /search/i }, {}, 'search box', MAIL_WORD);
      await act(d, { role: 'button', name: new RegExp(MAIL_SEED[0].subject) }, {}, 'the message in the list');
      const { snap } = await look(d, { role: 'button', name: 'Delete email' });
      return { read: d.text(snap) };
    },
    async verify(app, out) {
      const m = await app.bySubject(MAIL_SEED[0].subject);
      if (!out.read.includes(m.text.trim())) throw new TaskError('the body read is not the message\'s text on the server');
    },
  },

  // MailDev write: open a message and delete it (a delete: Chaperone holds it for the person).
  mailDelete: {
    app: 'maildev', kind: 'write', title: 'MailDev: open a message and delete it',
    async prepare(app) { await app.reset(); },
    async run(d, app) {
      await d.open(app);
      await act(d, { role: 'button', name: new RegExp(MAIL_SEED[1].subject) }, {}, 'the message in the list');
      await act(d, { role: 'button', name: 'Delete email' }, {}, 'Delete email button');
      return {};
    },
    async verify(app) {
      const gone = await until(async () => !(await app.bySubject(MAIL_SEED[1].subject)), { timeout: 10000, what: 'the message to be deleted' })
        .catch(() => false);
      if (!gone) throw new TaskError(`"${MAIL_SEED[1].subject}" is still in the inbox`);
      if ((await app.messages()).length !== MAIL_SEED.length - 1) throw new TaskError('another message went too');
    },
  },

  // Node-RED read: search the flows for a word, read the matching node's name.
  flowRead: {
    app: 'nodered', kind: 'read', title: 'Node-RED: search the flows, read what matches',
    async run(d, app) {
      await d.open(app);
      await d.waitFor(FLOW_SEED[0].label);
      await act(d, { role: TEXTBOX, name: 'Search flows' }, {}, 'Search flows box', FLOW_WORD);
      const snap = await d.snapshot();
      return { read: d.text(snap) };
    },
    async verify(app, out) {
      const names = (await app.flows()).map((n) => n.name).filter((n) => n && n.toLowerCase().includes(FLOW_WORD));
      if (!names.length || !names.every((n) => out.read.includes(n))) throw new TaskError(`not every node matching "${FLOW_WORD}" was read`);
    },
  },

  // Node-RED write: add a flow (its "+" is an icon without a name: the link after the flow tabs)
  // and deploy it.
  flowAdd: {
    app: 'nodered', kind: 'write', title: 'Node-RED: add a flow and deploy it',
    async prepare(app) { await app.reset(); },
    async run(d, app) {
      await d.open(app);
      await d.waitFor(FLOW_SEED[0].label);
      await d.beginWrite(app, 'Add a new flow to Node-RED and deploy it', [{ kind: 'create', summary: 'Add a flow and deploy' }]);
      const lastTab = FLOW_SEED.filter((n) => n.type === 'tab').at(-1).label;
      await act(d, { role: 'link', name: UNNAMED }, { after: { role: 'link', name: lastTab } }, 'add flow link');
      await act(d, { role: 'link', name: /^\s*Deploy\s*$/ }, {}, 'Deploy link');
      return {};
    },
    async verify(app) {
      const seeded = FLOW_SEED.filter((n) => n.type === 'tab').length;
      const tabs = await until(async () => ((await app.tabs()).length > seeded ? app.tabs() : null), { timeout: 10000, what: 'a new flow deployed' })
        .catch(() => null);
      if (!tabs) throw new TaskError('no new flow was deployed');
    },
  },
};

/**
 * Tasks only the suite runs (tests/e2e/realsites-engine.test.mjs), on apps the bench does not
 * start: the bench's figures stay on the three apps above.
 */
export const SUITE_TASKS = {
  // Etherpad: a line added at the end of a pad (issue 15, item 2: a contenteditable editor in an
  // about:srcdoc frame in another, on a real page). The editor is the inner frame's body, role
  // "application": listed as a textbox named as its frame; clicked, Control+End, and the line typed
  // at the caret (Enter there a new paragraph). The pad saves as it is typed in, so no control
  // commits it: nothing is asked of the person. Judged by the pad's text on the server.
  padAppend: {
    app: 'etherpad', kind: 'write', title: 'Etherpad: add a line at the end of a pad',
    async prepare(app) {
      await app.reset();
      this.line = `Tuesday: berth B7 closed for dredging, notice ${unique()}.`;
    },
    async run(d, app) {
      await d.open(app);
      // The pad's text comes over the app's socket after the page loads.
      const snap = await d.snapshot({ until: 'ferry left' });
      await d.click(need(d, snap, { role: TEXTBOX, name: 'pad' }).ref, 'the pad');
      await d.press(null, 'Control+End');
      await d.type(null, `\n${this.line}`);
      return {};
    },
    async verify(app) {
      const want = `${PAD_SEED.trimEnd()}\n${this.line}`;
      const got = await until(async () => { const t = (await app.text()).trimEnd(); return t === want ? t : null; },
        { timeout: 10000, what: 'the line in the pad on the server' }).catch(() => null);
      if (!got) throw new TaskError(`the pad holds ${JSON.stringify(await app.text())}, not ${JSON.stringify(want)}`);
    },
  },

  // Verdaccio (a React app, MUI): a package found by a word in the search box's suggestions (a
  // combobox whose listbox its server fills a moment after the typing), opened, its README read.
  // A suggestion is named by its name, description and version, blocks apart ("harbour-tides Tide
  // tables … 1.2.0"). The page's own list shows the version as "v1.2.0" after the author, so the
  // agent looks until the words only a suggestion shows ("by day. 1.2.0"), as an agent told of
  // `until` does.
  registryRead: {
    app: 'verdaccio', kind: 'read', title: 'Verdaccio: search a package, open it from the suggestions, read its README',
    async run(d, app) {
      const p = REGISTRY_PACKAGE;
      await d.open(app);
      await act(d, { role: 'combobox', name: 'Search Packages' }, {}, 'search box');
      const snap = await d.snapshot();
      await d.type(need(d, snap, { role: 'combobox', name: 'Search Packages' }).ref, 'tides');
      const seen = await d.snapshot({ until: `${p.description.split(' ').slice(-2).join(' ')} ${p.version}` });
      await d.click(need(d, seen, { role: 'option', name: `${p.name} ${p.description} ${p.version}` }).ref, 'the suggestion');
      const page = await d.snapshot({ until: 'gives the times' });
      return { read: d.text(page) };
    },
    async verify(app, out) {
      const usage = (await app.readme(REGISTRY_PACKAGE.name)).split('\n').find((l) => l.includes('highWater')).replace(/`/g, '');
      if (!out.read.includes(usage)) throw new TaskError(`the README read has no "${usage}"`);
    },
  },

  // Etherpad's chat: a message to everyone on the pad. Its box has no Send button (the page sends
  // on Enter), so the field's name says what Enter does there: held as a send, the message on
  // the card, and sent once the person approves. Judged by the pad's chat on the server.
  padChat: {
    app: 'etherpad', kind: 'write', title: 'Etherpad: send a message in the pad\'s chat',
    async prepare() { this.message = `Ferry delayed by fog, notice ${unique()}`; },
    async run(d, app) {
      await d.open(app);
      await act(d, { name: /^Chat\b/ }, {}, 'the chat');
      const { item } = await look(d, { role: TEXTBOX, name: /message/i });
      await d.type(item.ref, this.message);
      await d.press(item.ref, 'Enter');
      return {};
    },
    async verify(app) {
      const sent = await until(async () => (await app.chat()).some((m) => m.text === this.message),
        { timeout: 10000, what: 'the message in the pad\'s chat' }).catch(() => false);
      if (!sent) throw new TaskError(`the pad's chat holds ${JSON.stringify(await app.chat())}`);
    },
  },

  // The same write where the wiki's editor is CodeMirror 5 (apps.mjs startTiddlyWikiWithCodeMirror):
  // the body, lines and indentation as typed, goes into the editor CodeMirror draws, replacing a
  // first draft, and is saved as typed (issue 15, item 2: a CodeMirror-like editor on a real page).
  wikiCodeMirrorWrite: {
    app: 'tiddlywiki-cm', kind: 'write', title: 'TiddlyWiki with CodeMirror: create a tiddler with a body of several lines, save it',
    async prepare() {
      this.tiddler = `Ferry piers ${unique()}`;
      this.body = 'From pier 3:\n  * the 7:40 ferry\n  * the water taxi\n\nPier 1 is closed.';
    },
    async run(d, app) {
      const { snap, confirm } = await newTiddler(d, app, this);
      const title = need(d, snap, { role: TEXTBOX }, { after: confirm });
      // CodeMirror's own textbox, unnamed, after the editor's toolbar (its last button chooses
      // the preview); the named fields after it (content type, field name) are not it.
      const body = need(d, snap, { role: TEXTBOX, name: /^$/ }, { after: { role: 'button', name: /preview type/iu } });
      await d.fill(title.ref, 'title field', this.tiddler);
      // A first draft, then the body: a fill replaces what the editor holds (CodeMirror's own
      // textarea holds none of it, so setting its value appended the body to the draft).
      await d.fill(body.ref, 'body editor', 'A first draft,\nto be replaced.');
      await d.fill(body.ref, 'body editor', this.body);
      await d.click(need(d, snap, confirm).ref, 'Confirm changes button');
      return {};
    },
    verify(app) { return TASKS.wikiWrite.verify.call(this, app); },
    cleanup(app) { return TASKS.wikiWrite.cleanup.call(this, app); },
  },

  // Node-RED: a function node's code replaced in its Monaco editor, and deployed (issue 15, item 2:
  // a real code editor, whose Select All and paste a fill uses). The node is a shape on the flow's
  // canvas, listed by its move cursor, and a double-click opens it (a click and the canvas's
  // Enter do too: tests/js/ext-page-agent-drawing.test.mjs). One approval: the plan.
  flowFunctionEdit: {
    app: 'nodered', kind: 'write', title: 'Node-RED: change a function node\'s code in its editor and deploy it',
    async prepare(app) {
      this.code = `const report = msg.payload;\nif (!report) {\n    return null;\n}\nmsg.topic = "Nightly ${unique()}";\nreturn msg;`;
      await app.reset([FLOW_FUNCTION]);
    },
    async run(d, app) {
      await d.open(app);
      await d.waitFor(FLOW_FUNCTION.name);
      await d.beginWrite(app, `Change the code of the function "${FLOW_FUNCTION.name}" and deploy it`,
        [{ kind: 'edit', summary: 'Change the function\'s code and deploy' }]);
      await d.dblclick((await look(d, { name: FLOW_FUNCTION.name })).item.ref);
      const { snap, item } = await look(d, { role: TEXTBOX, name: /^Editor content/ });
      await d.fill(item.ref, 'code editor', this.code);
      await d.click(need(d, snap, { role: 'button', name: 'Done' }).ref, 'Done button');
      await act(d, { role: 'link', name: /^\s*Deploy\s*$/ }, {}, 'Deploy link');
      return {};
    },
    async verify(app) {
      const code = () => app.flows().then((nodes) => nodes.find((n) => n.id === FLOW_FUNCTION.id)?.func);
      const ok = await until(async () => (await code()) === this.code, { timeout: 10000, what: 'the new code deployed' })
        .catch(() => false);
      if (!ok) throw new TaskError(`the function's deployed code is ${JSON.stringify(await code())}, not the code typed`);
    },
    cleanup(app) { return app.reset(); },
  },

  // Node-RED's sidebar tabs are icons without a name; what one opens shows only in the tooltip
  // the editor draws while the pointer rests on it (its own popover, 750 ms after the pointer
  // enters). The agent hovers the icon whose link says #debug and reads the tooltip (issue 15,
  // item 2: hover, on a real page), judged against the name the server's messages give the tab.
  flowSidebarTooltip: {
    app: 'nodered', kind: 'read', title: 'Node-RED: hover an unnamed sidebar icon and read what its tooltip calls it',
    async run(d, app) {
      await d.open(app);
      await d.waitFor('Backups');
      const snap = await d.snapshot();
      const icon = d.items(snap).find((i) => i.role === 'link' && UNNAMED.test(i.name) && /→ \/#debug\s*$/.test(i.line));
      if (!icon) need(d, snap, { role: 'link', name: '(the unnamed #debug link)' });
      await d.hover(icon.ref);
      // The tooltip's words: the agent waits for them and reads the line they are on (a snapshot
      // after a wait shows those lines first, however long the page).
      const tip = await d.snapshot({ until: 'messages' });
      if (tip.structuredContent?.untilFound !== true) throw new TaskError('no tooltip showed on the hovered icon');
      const lines = d.text(tip).split('\n');
      const at = lines.indexOf('found (until):');
      const said = at < 0 ? null : lines[at + 1];
      return { said: said?.trim() ?? null };
    },
    async verify(app, out) {
      const { debug } = await app.sidebarNames();
      // The tooltip is the tab's name, then its shortcut ("Debug messages ctrl-g d").
      if (!debug || !out?.said?.startsWith(debug)) throw new TaskError(`the agent read ${JSON.stringify(out?.said)}, the editor calls the tab ${JSON.stringify(debug)}`);
    },
  },

  // The write again, as a person at the keyboard does it: the title typed into the field the
  // wiki focused (its default title selected, so typing replaces it), the body filled, and saved
  // with the wiki's own shortcut, Control+Enter (issue 15, item 2: keys and typing into the
  // focused element, on a real page).
  wikiKeys: {
    app: 'tiddlywiki', kind: 'write', title: 'TiddlyWiki by keyboard: type the title where the focus is, save with Control+Enter',
    async prepare() {
      this.tiddler = `Tide table ${unique()}`;
      this.body = 'High water at 6:12 and 18:40.';
    },
    async run(d, app) {
      const { snap, confirm } = await newTiddler(d, app, this);
      // The wiki focused the title field and selected its default title: typing replaces it.
      await d.type(null, this.tiddler);
      const body = frameBody(d, snap, confirm);
      await d.fill(body.ref, 'body field', this.body);
      await d.press(body.ref, 'Control+Enter');
      return {};
    },
    verify(app) { return TASKS.wikiWrite.verify.call(this, app); },
    cleanup(app) { return TASKS.wikiWrite.cleanup.call(this, app); },
  },

  // The wiki's settings (Control Panel → Settings): a checkbox, a radio button and a select, each
  // saved by the wiki as a config tiddler on its server (issue 15, item 2 on a real page).
  wikiSettings: {
    app: 'tiddlywiki', kind: 'write', title: 'TiddlyWiki: change three settings (a checkbox, a radio button, a select)',
    config: {
      '$:/config/WikiParserRules/Inline/wikilink': 'enable',
      '$:/config/TiddlerInfo/Mode': 'popup',
      '$:/config/DefaultMoreSidebarTab': '$:/core/ui/MoreSideBar/Recent',
    },
    async prepare(app) { await this.cleanup(app); },
    async run(d, app) {
      await d.open(app);
      await d.beginWrite(app, 'Change three settings of the wiki', [{ kind: 'edit', summary: 'Change the wiki\'s settings' }]);
      await act(d, { role: 'button', name: 'control panel' }, {}, 'control panel button');
      await act(d, { role: 'tab', name: 'Settings' }, {}, 'Settings tab');
      const camel = { role: 'checkbox', name: 'Enable automatic CamelCase linking' };
      const { snap } = await look(d, camel);
      await d.click(need(d, snap, camel).ref, 'CamelCase checkbox');
      await d.click(need(d, snap, { role: 'radio', name: 'Tiddler info panel closes automatically' }).ref, 'info panel radio');
      // The wiki's selects have no label of their own: the first after the checkbox is "Default
      // tab in the More sidebar" (its options All, Recent, Tags…); the option by what it shows.
      await d.fill(need(d, snap, { role: 'combobox' }, { after: camel }).ref, 'More sidebar select', 'Recent');
      return {};
    },
    async verify(app) {
      for (const [title, want] of Object.entries(this.config)) {
        const got = await until(async () => (await app.tiddler(title))?.text ?? null,
          { timeout: 15000, what: `${title} on the server` }).catch(() => null);
        if (got !== want) throw new TaskError(`${title} is ${JSON.stringify(got)} on the server, not ${JSON.stringify(want)}`);
      }
    },
    async cleanup(app) {
      for (const title of Object.keys(this.config)) await app.deleteTiddler(title);
    },
  },

  // Node-RED: a flow shared as JSON, imported with the editor's own shortcut and dialog. The
  // imported nodes then follow the pointer until a click on the canvas puts them down; that
  // click lands on the drawing inside the canvas's focusable frame, where the editor listens
  // (issue 15, item 2: keys, a dialog and a canvas on a real page). One approval: the plan.
  flowImport: {
    app: 'nodered', kind: 'write', title: 'Node-RED: import a flow from JSON, put it down on the canvas and deploy it',
    async prepare(app) {
      await app.reset();
      this.name = `Harbour lights ${unique()}`;
    },
    async run(d, app) {
      await d.open(app);
      await d.waitFor('Backups');
      await d.beginWrite(app, 'Import a flow and deploy it', [{ kind: 'create', summary: 'Import the flow and deploy' }]);
      await d.press(null, 'Control+i');
      const { snap } = await look(d, { role: 'button', name: 'Import' });
      // The dialog's text box, which has the focus and no name.
      const box = d.items(snap).find((i) => i.role === 'textbox' && /\bfocused\b.*\bin-dialog\b/.test(i.line));
      if (!box) need(d, snap, { role: 'textbox', name: '(the import dialog\'s box)' });
      const flow = [{ id: 'aa11bb22cc33dd44', type: 'inject', name: this.name, props: [{ p: 'payload' }], repeat: '',
        crontab: '', once: false, topic: '', payload: '', payloadType: 'date', x: 200, y: 200, wires: [] }];
      await d.fill(box.ref, 'import box', JSON.stringify(flow));
      await d.click(need(d, snap, { role: 'button', name: 'Import' }).ref, 'Import button');
      // The canvas: the focused frame the editor draws in.
      const { snap: placing } = await look(d, { name: this.name });
      const canvas = d.items(placing).find((i) => i.role === 'generic' && /\bfocused\b/.test(i.line));
      if (!canvas) need(d, placing, { role: 'generic', name: '(the focused canvas)' });
      await d.click(canvas.ref, 'canvas');
      await act(d, { role: 'link', name: /^\s*Deploy\s*$/ }, {}, 'Deploy link');
      return {};
    },
    async verify(app) {
      const deployed = await until(async () => (await app.flows()).some((n) => n.name === this.name),
        { timeout: 10000, what: 'the imported node deployed' }).catch(() => false);
      if (!deployed) throw new TaskError(`no node "${this.name}" in the deployed flows`);
    },
    cleanup(app) { return app.reset(); },
  },

  // Node-RED's palette: a node dragged onto the canvas (jQuery UI's draggable: mouse events, a copy
  // that follows the pointer, the canvas a droppable), then deployed. Palette items are only to
  // drag, listed for a query ("inject"); the canvas is the focused frame the editor draws in. The
  // drop there is neutral by its words; Deploy is the write the plan covers: one approval.
  flowDrag: {
    app: 'nodered', kind: 'write', title: 'Node-RED: drag a node from the palette onto the canvas and deploy it',
    async prepare(app) {
      await app.reset();
      this.before = (await app.flows()).filter((n) => n.type === 'inject').map((n) => n.id);
    },
    async run(d, app) {
      await d.open(app);
      await d.waitFor('Backups');
      await d.beginWrite(app, 'Add an inject node to the Backups flow and deploy it', [{ kind: 'create', summary: 'Add an inject node and deploy' }]);
      const palette = await d.snapshot({ query: 'inject' });
      const node = need(d, palette, { role: 'generic', name: 'inject' });
      if (!/\bdraggable\b/.test(node.line)) throw new TaskError(`the palette's inject is not listed as draggable: ${node.line}`);
      const snap = await d.snapshot();
      const canvas = d.items(snap).find((i) => i.role === 'generic' && /\bfocused\b/.test(i.line));
      if (!canvas) need(d, snap, { role: 'generic', name: '(the focused canvas)' });
      await d.drag(node.ref, canvas.ref);
      await act(d, { role: 'link', name: /^\s*Deploy\s*$/ }, {}, 'Deploy link');
      return {};
    },
    async verify(app) {
      const added = async () => (await app.flows()).filter((n) => n.type === 'inject' && !this.before.includes(n.id));
      const got = await until(async () => ((await added()).length ? added() : null), { timeout: 10000, what: 'a new inject node deployed' })
        .catch(() => null);
      if (!got) throw new TaskError('no new inject node was deployed');
      if (got.length !== 1 || got[0].z !== 'f1backups0000001') throw new TaskError(`deployed ${JSON.stringify(got)}: not one node on the Backups flow`);
    },
    cleanup(app) { return app.reset(); },
  },

  // TiddlyWiki: a tag's tiddlers reordered by dragging one above another in the tag pill's
  // dropdown (HTML drag and drop on the wiki's links, draggable as any link is); the wiki saves the
  // order in the tag's tiddler. The drop is judged by its target, a tiddler's link, which says
  // nothing of sending, deleting or writing: nothing is asked (the tab's Control grant is the gate).
  wikiTagOrder: {
    app: 'tiddlywiki', kind: 'write', title: 'TiddlyWiki: reorder a tag\'s tiddlers by dragging one above another',
    async prepare(app) { await app.deleteTiddler('notes'); },
    async run(d, app) {
      await d.open(app, `${app.url}#${encodeURIComponent(WIKI_SEED[0].title)}`);
      const { snap } = await look(d, { role: 'generic', name: 'notes' });
      await d.click(need(d, snap, { role: 'generic', name: 'notes' }).ref, 'the notes tag pill');
      // The dropdown lists the tag's tiddlers, in title order: Garden Plan, then Harbour Notes.
      const menu = await d.snapshot();
      const first = need(d, menu, { role: 'link', name: 'Garden Plan' });
      const last = need(d, menu, { role: 'link', name: WIKI_SEED[0].title }, { after: { role: 'link', name: 'Garden Plan' } });
      await d.drag(last.ref, first.ref);
      return {};
    },
    async verify(app) {
      const want = `[[${WIKI_SEED[0].title}]] [[Garden Plan]]`;
      const got = await until(async () => ((await app.tiddler('notes'))?.fields?.list === want ? want : null),
        { timeout: 10000, what: 'the new order in the tag\'s tiddler on the server' }).catch(() => null);
      if (!got) throw new TaskError(`the server's notes tiddler is ${JSON.stringify(await app.tiddler('notes'))}, not the list ${want}`);
    },
    cleanup(app) { return app.deleteTiddler('notes'); },
  },

  // TiddlyWiki's Delete asks its own question, window.confirm("Do you wish to delete the tiddler
  // …?"), after the click: a dialog that stops the page until somebody answers it, and in a tab
  // behind the person's nobody sees it (here the test's browser would answer Cancel). The delete
  // is held; the person approves it once, and the page's question, theirs again, is answered OK
  // (content/page-dialogs.js). Two approvals: opening the editor writes a draft (held as a
  // write, there is no plan), and the delete.
  wikiDelete: {
    app: 'tiddlywiki', kind: 'write', title: 'TiddlyWiki: delete a tiddler, which the wiki confirms with its own dialog',
    async prepare(app) {
      this.tiddler = `Old ferry notice ${unique()}`;
      await app.putTiddler({ title: this.tiddler, text: 'The 6:10 ferry no longer runs.' });
    },
    async run(d, app) {
      // A fresh load (the query), so the wiki has the tiddler its server was just given.
      await d.open(app, `${app.url}?fresh=${unique()}#${encodeURIComponent(this.tiddler)}`);
      await d.waitFor(this.tiddler);
      await act(d, { role: 'button', name: 'Edit this tiddler' }, {}, 'edit button');
      await act(d, { role: 'button', name: 'Delete this tiddler' }, {}, 'delete button');
      return {};
    },
    async verify(app) {
      const gone = await until(async () => (await app.tiddler(this.tiddler)) === null,
        { timeout: 10000, what: 'the tiddler deleted on the server' }).catch(() => false);
      if (!gone) throw new TaskError(`"${this.tiddler}" is still on the server`);
    },
    async cleanup(app) {
      await app.deleteTiddler(this.tiddler);
      await app.deleteTiddler(`Draft of '${this.tiddler}'`);
    },
  },

  // Node-RED Dashboard 2.0 is a Vue 3 app drawn with Vuetify: its form fields keep their values
  // in Vue's own state (v-model, which reads the input events), a date is a native date input,
  // a dropdown is Vuetify's combobox, its options in a menu laid over the page, and a slider a
  // thumb moved with the arrow keys. The agent books a mooring — a text field, the date, a
  // number, a checkbox, a switch — picks a berth, moves the fenders' slider to 4, chooses how
  // tide alerts come, picks the boat beside it from a table's rows, and submits; the runtime's global context must then hold what was typed
  // and picked (issue 15, item 2: a Vue app's inputs, a date input and custom widgets, on a real
  // page). Two approvals: the plan, and "Book", held as a commitment to someone else is.
  dashboardBooking: {
    app: 'nodered-dashboard', kind: 'write',
    title: 'Node-RED Dashboard (Vue): book a mooring — text, date, number, checkbox, switch, dropdown, slider, radio, table row',
    async prepare(app) {
      this.want = { boat: `Sea Otter ${unique()}`, arrival: '2027-03-14', nights: 3, power: true, pumpout: true };
      await app.forget('booking');
      await app.forget('vessel');
      await app.resetDesk();
    },
    async run(d, app) {
      await d.open(app);
      await d.waitFor('Shore power');
      await d.beginWrite(app, `Book a mooring for "${this.want.boat}"`, [{ kind: 'create', summary: 'Fill in the booking form and submit it' }]);
      const snap = await d.snapshot();
      const acts = [];
      // Vuetify marks a required field's label with an asterisk: "* Boat name".
      acts.push(await d.fill(need(d, snap, { role: TEXTBOX, name: /Boat name$/ }).ref, 'boat name field', this.want.boat));
      acts.push(await d.fill(need(d, snap, { role: TEXTBOX, name: /Arrival$/ }).ref, 'arrival date', this.want.arrival));
      acts.push(await d.fill(need(d, snap, { role: ['spinbutton', ...TEXTBOX], name: /Nights$/ }).ref, 'nights field', String(this.want.nights)));
      acts.push(await d.click(need(d, snap, { role: 'checkbox', name: 'Shore power' }).ref, 'Shore power checkbox'));
      acts.push(await d.click(need(d, snap, { role: ['switch', 'checkbox'], name: 'Pump-out' }).ref, 'Pump-out switch'));
      // Nothing on the form spins while it is filled in: an act that says the page stayed busy
      // waited for something no person sees.
      const busy = acts.map((r) => r.structuredContent?.changes).filter((c) => c?.settled === false && c.reason === 'busy');
      if (busy.length) throw new TaskError(`${busy.length} act(s) answered that the page stayed busy: ${JSON.stringify(busy[0])}`);
      // The berth: the dropdown opens its menu over the page, and the option is clicked there.
      await d.click(need(d, snap, { role: 'combobox', name: 'Berth' }).ref, 'Berth dropdown');
      await act(d, { role: 'option', name: 'Pontoon B, berth 7' }, {}, 'berth option');
      // Four fenders: the slider's thumb (no name of its own; its label is beside it) moved with
      // the arrow key, its position read from each answer, as an agent does.
      const slider = need(d, snap, { role: 'slider' });
      for (let moves = 0, at = /value=(\d+)/.exec(slider.line)?.[1]; at !== '4'; moves++) {
        if (moves >= 10) throw new TaskError(`the slider is at ${at} after ${moves} presses`);
        const r = await d.press(slider.ref, 'ArrowRight');
        at = new RegExp(`\\[${slider.ref}\\] slider[^\\n]* value=(\\d+)`).exec(d.text(r))?.[1];
      }
      await d.click(need(d, snap, { role: 'radio', name: 'By text message' }).ref, 'text message radio');
      // The boat beside the berth, picked from the table of moored boats by its row: the table
      // fills when the runtime sends its rows, so the agent looks until it shows the boat.
      await d.click((await look(d, { role: 'row', name: /Grey Heron/ })).item.ref, 'Grey Heron row');
      await d.click(need(d, snap, { role: 'button', name: 'Book' }).ref, 'Book button');
      return {};
    },
    async verify(app) {
      const same = (b) => b && Object.entries(this.want).every(([k, v]) => String(b[k]) === String(v));
      const got = await until(async () => { const b = await app.sent('booking'); return same(b) ? b : null; },
        { timeout: 10000, what: 'the booking in the runtime' }).catch(() => null);
      if (!got) throw new TaskError(`the runtime holds ${JSON.stringify(await app.sent('booking'))}, not ${JSON.stringify(this.want)}`);
      const sent = { berth: await app.sent('berth'), fenders: await app.sent('fenders'), alerts: await app.sent('alerts'),
        vessel: (await app.sent('vessel'))?.boat ?? null };
      const want = { berth: 'b7', fenders: 4, alerts: 'sms', vessel: 'Grey Heron' };
      if (JSON.stringify(sent) !== JSON.stringify(want)) throw new TaskError(`the runtime holds ${JSON.stringify(sent)}, not ${JSON.stringify(want)}`);
    },
  },
};

/**
 * Runs one task once on `driver` against `app`: prepare (untimed), run (timed, counted), verify
 * against the app's state (untimed). → {ok, why, calls, bytes, approvals, ms}
 */
export async function runTask(task, driver, app) {
  await task.prepare?.(app);
  driver.reset();
  const start = performance.now();
  let out;
  let why = null;
  try {
    out = await task.run(driver, app);
  } catch (err) {
    why = err.message;
  }
  const ms = performance.now() - start;
  if (!why) {
    try { await task.verify(app, out); } catch (err) { why = err.message; }
  }
  await task.cleanup?.(app).catch(() => {});
  return { ok: !why, why, ...driver.counts, ms };
}

export { TaskError };
