// SPDX-License-Identifier: GPL-3.0-or-later
// Chaperone's pill and handoff banner (extension/content/page-ui.js) against a hostile page, in real
// Chromium: the page removes, hides, moves, shrinks or covers them, and tries to get a person's
// click on them while they are transparent, shrunk or under a fake overlay (clickjacking). As in
// ext-page-agent-*.test.mjs the scripts run in the page's main world (no extension needed), where the
// page reaches the agent's objects too: the defences tested here hold all the more in the real
// isolated world. chrome.runtime is stubbed to see what the page would tell the worker.
// Every wait is for a condition, never a fixed sleep: what Chaperone draws is in a closed shadow
// root that the page cannot observe, so it is looked at again through tests/lib/until.mjs.

import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, test } from 'node:test';

import { PAGE_FILES } from '../../extension/lib/page-bridge.js';
import { startFixtureServer } from '../fixtures/serve.mjs';
import { browserWhyNot, launchPlainChromium } from '../e2e/browser-harness.mjs';
import { until } from '../lib/until.mjs';

const skip = browserWhyNot() ?? false;
if (skip) console.log(`# skipping ext-page-ui tests: ${skip}`);

// The files executeScript({files}) injects, in its order: the worker's own list.
const FILES = await Promise.all(PAGE_FILES.map((f) =>
  readFile(new URL(`../../extension/${f}`, import.meta.url), 'utf8')));

let server;
let browser;
let context;

before(async () => {
  if (skip) return;
  server = await startFixtureServer();
  browser = await launchPlainChromium();
  context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
});

after(async () => {
  await context?.close();
  await browser?.close();
  await server?.close();
});

/** A fixture page with the agent's files evaluated as executeScript would, runtime stubbed. */
async function open(path = '/handoff.html') {
  const page = await context.newPage();
  await page.goto(server.originA + path);
  await page.evaluate(() => {
    window.__sent = [];
    if (!window.chrome) window.chrome = {};
    Object.defineProperty(window.chrome, 'runtime', {
      configurable: true,
      value: { sendMessage: (m) => { window.__sent.push(m); return Promise.resolve(); } },
    });
    // What a page script can find: the host elements Chaperone adds to <html>.
    window.__host = () => [...document.documentElement.children].find((e) => e !== document.head && e !== document.body);
  });
  for (const f of FILES) await page.evaluate(f);
  return page;
}

async function ok(page, op, args) {
  const r = await page.evaluate(([o, a]) => globalThis.__chaperonePage.run(o, a), [op, args]);
  assert.equal(r.ok, true, `${op} failed: ${JSON.stringify(r.error)}`);
  return r.value;
}

const sent = (page) => page.evaluate(() => window.__sent);

/** The nodes of the page through closed shadow roots, as DevTools sees them (a page cannot). */
async function pierced(page) {
  const cdp = await page.context().newCDPSession(page);
  const { root } = await cdp.send('DOM.getDocument', { depth: -1, pierce: true });
  const all = [];
  const parent = new Map();
  const walk = (n) => {
    all.push(n);
    for (const c of [...(n.children || []), ...(n.shadowRoots || [])]) {
      parent.set(c, n);
      walk(c);
    }
  };
  walk(root);
  const attr = (n, name) => {
    const a = n.attributes || [];
    for (let i = 0; i < a.length; i += 2) if (a[i] === name) return a[i + 1];
    return null;
  };
  return { cdp, all, attr, parent };
}

/** The centre of Chaperone's element data-chaperone=<which>, in viewport coordinates. */
async function centreOf(page, which) {
  const { cdp, all, attr } = await pierced(page);
  try {
    const node = all.find((n) => attr(n, 'data-chaperone') === which);
    assert.ok(node, `Chaperone UI element ${which}`);
    const q = (await cdp.send('DOM.getBoxModel', { backendNodeId: node.backendNodeId })).model.border;
    return { x: (q[0] + q[4]) / 2, y: (q[1] + q[5]) / 2 };
  } finally {
    await cdp.detach();
  }
}

/** Until a click on `which` counts (page-ui.js marks when, inside the closed root). */
async function untilArmed(page, which) {
  await until(async () => {
    const { cdp, all, attr, parent } = await pierced(page);
    await cdp.detach();
    let n = all.find((x) => attr(x, 'data-chaperone') === which);
    while (n && attr(n, 'data-armed-at') === null) n = parent.get(n);
    const at = n ? Number(attr(n, 'data-armed-at')) : NaN;
    return Number.isFinite(at) && await page.evaluate(() => performance.now()) >= at;
  }, { what: `Chaperone's ${which} button to take clicks` });
}

/** A person's click (trusted, from the browser's input pipeline) at a point. */
const personClicks = (page, { x, y }) => page.mouse.click(x, y);

/** The host as the page sees it: on screen where it was, in the top layer, topmost at its centre. */
function hostState() {
  const h = window.__host();
  if (!h) return { connected: false };
  const r = h.getBoundingClientRect();
  const cs = getComputedStyle(h);
  const cx = r.left + r.width / 2;
  const cy = r.top + r.height / 2;
  return {
    connected: h.isConnected,
    open: h.matches(':popover-open'),
    topmost: document.elementFromPoint(cx, cy) === h,
    box: [Math.round(r.left), Math.round(r.top), Math.round(r.width), Math.round(r.height)],
    style: [cs.display, cs.visibility, cs.opacity, cs.transform, cs.clipPath, cs.filter].join(' '),
  };
}

const INTACT_STYLE = 'block visible 1 none none none';

async function untilRestored(page, box, what) {
  return until(async () => {
    const s = await page.evaluate(hostState);
    return s.connected && s.open && s.topmost && s.style === INTACT_STYLE && s.box.join() === box.join() ? s : null;
  }, { what: `${what}: the host back where it was, visible and on top`, timeout: 5000 });
}

// ---- re-mounting -----------------------------------------------------------------------------

for (const kind of ['pill', 'banner']) {
  const showIt = (page) => (kind === 'pill'
    ? ok(page, 'pill', { show: true, step: 2, shortcut: 'Ctrl+Shift+E' })
    : ok(page, 'handoff', { show: true, handoffId: 'h-remount', reason: 'qr', message: 'Scan it' }));

  test(`${kind}: removed by the page (the host, or <html>'s children, or <html> itself) it comes back`, { skip }, async () => {
    const page = await open();
    await showIt(page);
    const { box } = await untilRestored(page, (await page.evaluate(hostState)).box, 'shown');
    await page.evaluate(() => window.__host().remove());
    await untilRestored(page, box, 'host.remove()');
    await page.evaluate(() => document.documentElement.replaceChildren(document.head, document.body));
    await untilRestored(page, box, '<html>.replaceChildren(head, body)');
    await page.evaluate(() => {
      const html = document.createElement('html');
      html.append(document.head, document.body);
      document.documentElement.replaceWith(html);
    });
    await untilRestored(page, box, '<html> replaced');
    await page.close();
  });

  test(`${kind}: hidden, faded, moved, transformed, clipped or taken out of the top layer, it is put back`, { skip }, async () => {
    const page = await open();
    await showIt(page);
    const { box } = await untilRestored(page, (await page.evaluate(hostState)).box, 'shown');
    const tampers = {
      'display:none': 'h.style.setProperty("display", "none", "important")',
      'visibility:hidden': 'h.style.setProperty("visibility", "hidden", "important")',
      'opacity:0': 'h.style.setProperty("opacity", "0", "important")',
      'moved off-screen': 'h.style.setProperty("top", "-5000px", "important"); h.style.setProperty("bottom", "auto", "important")',
      'transform': 'h.style.setProperty("transform", "translate(-4000px, 0) scale(0.01)", "important")',
      'clip-path': 'h.style.setProperty("clip-path", "inset(50%)", "important")',
      'filter': 'h.style.setProperty("filter", "opacity(0)", "important")',
      'style attribute replaced': 'h.setAttribute("style", "display:none")',
      'hidden attribute': 'h.hidden = true',
      'inert attribute': 'h.inert = true',
      'popover attribute removed': 'h.removeAttribute("popover")',
      'hidePopover()': 'h.hidePopover()',
    };
    for (const [how, code] of Object.entries(tampers)) {
      // The page's own script, as a page would run it.
      await page.evaluate((c) => new Function('h', c)(window.__host()), code);
      await untilRestored(page, box, how);
      assert.equal(await page.evaluate(() => window.__host().attributes.length), 2, `${how}: no attribute of the page's left`);
    }
    await page.close();
  });

  test(`${kind}: covered by the page (a z-index, a popover shown later, one in a closed shadow root) it stays on top`, { skip }, async () => {
    const page = await open();
    await showIt(page);
    const { box } = await untilRestored(page, (await page.evaluate(hostState)).box, 'shown');
    const cover = (where) => page.evaluate((w) => {
      const d = document.createElement('div');
      d.className = 'cover';
      d.style.cssText = 'position:fixed;inset:0;margin:0;width:100vw;height:100vh;max-width:none;max-height:none;background:#c00;z-index:2147483647;border:0';
      if (w === 'z-index') {
        document.body.appendChild(d);
        return;
      }
      d.popover = 'manual';
      if (w === 'popover') document.body.appendChild(d);
      else {
        // Inside a closed shadow root the popover's toggle event never reaches the document.
        const holder = document.createElement('div');
        holder.className = 'cover';
        document.body.appendChild(holder);
        holder.attachShadow({ mode: 'closed' }).appendChild(d);
      }
      d.showPopover();
    }, where);
    // The closed-root cover comes twice more, each as soon as the last was beaten: the observer
    // that alone can see it reports only changes, so it must not still be at "covered" from before.
    const covers = ['z-index', 'popover', 'closed shadow root popover', 'closed shadow root popover', 'popover',
      'closed shadow root popover'];
    for (const [i, where] of covers.entries()) {
      await cover(where);
      await untilRestored(page, box, `covered by a ${where} (cover ${i + 1})`);
      await page.evaluate(() => document.querySelectorAll('.cover').forEach((c) => c.remove()));
    }
    await page.close();
  });
}

// ---- clicks that must not count ------------------------------------------------------------------

test('banner: a synthetic click never answers; a trusted click on a transparent banner over bait does not either', { skip }, async () => {
  const page = await open();
  await ok(page, 'handoff', { show: true, handoffId: 'h-jack', reason: 'qr', message: 'Scan it' });
  await untilArmed(page, 'done');
  const done = await centreOf(page, 'done');

  // A page script's click (on the host, the only thing it can reach) is not the person's.
  await page.evaluate(() => {
    const h = window.__host();
    h.click();
    h.dispatchEvent(new MouseEvent('click', { bubbles: true, composed: true, clientX: 1, clientY: 1 }));
  });
  assert.deepEqual(await sent(page), []);

  // Clickjacking: the page makes the bar transparent — and keeps it so, putting its opacity back
  // each time Chaperone repairs it — with bait drawn right under Done.
  await page.evaluate(({ x, y }) => {
    const bait = document.createElement('button');
    bait.textContent = 'Claim your prize';
    bait.style.cssText = `position:fixed;left:${x - 60}px;top:${y - 15}px;width:120px;height:30px`;
    document.body.appendChild(bait);
    const h = window.__host();
    const fade = () => { if (h.style.getPropertyValue('opacity') !== '0') h.style.setProperty('opacity', '0', 'important'); };
    window.__fight = new MutationObserver(fade);
    window.__fight.observe(h, { attributes: true });
    fade();
  }, done);
  await until(() => page.evaluate(() => getComputedStyle(window.__host()).opacity === '0'),
    { what: 'the page to win the fight over the bar\u2019s opacity' });
  // (It stops fighting now, so that what the ignored click repairs stays repaired.)
  await page.evaluate(() => window.__fight.disconnect());
  assert.equal(await page.evaluate(() => getComputedStyle(window.__host()).opacity), '0');
  await personClicks(page, done);
  assert.deepEqual(await sent(page), [], 'a click on the transparent bar did not answer the handoff');

  // The ignored click put the bar back; once it has been visible long enough, the person's click
  // on the real banner counts.
  await untilRestored(page, (await page.evaluate(hostState)).box, 'after the ignored click');
  await untilArmed(page, 'done');
  await personClicks(page, await centreOf(page, 'done'));
  assert.deepEqual(await sent(page), [{ type: 'page.handoff', handoffId: 'h-jack', outcome: 'done' }]);
  await page.close();
});

test('banner: a trusted click through a fake overlay the page keeps above the banner does not count', { skip }, async () => {
  const page = await open();
  await ok(page, 'handoff', { show: true, handoffId: 'h-overlay', reason: 'qr', message: 'Scan it' });
  await untilArmed(page, 'done');
  const done = await centreOf(page, 'done');

  // The page draws its own bar over Chaperone's — in the top layer, letting clicks through
  // (pointer-events:none) — and raises it again whenever Chaperone raises its own.
  await page.evaluate(() => {
    const fake = document.createElement('div');
    fake.id = 'fake';
    fake.popover = 'manual';
    fake.textContent = 'Your order is ready. Press the green button to CANCEL it.';
    fake.style.cssText = 'pointer-events:none;position:fixed;inset:0 0 auto 0;margin:0;width:100vw;max-width:none;height:120px;background:#fff;border:0';
    document.body.appendChild(fake);
    document.addEventListener('toggle', (e) => {
      if (e.target !== fake && e.newState === 'open' && document.getElementById('fake')) {
        fake.hidePopover();
        fake.showPopover();
      }
    }, true);
    fake.showPopover();
    // The page can watch whether Chaperone's bar shows, as Chaperone does (IntersectionObserver v2).
    window.__seen = null;
    new IntersectionObserver((es) => { window.__seen = es.at(-1).isVisible; },
      { trackVisibility: true, delay: 100 }).observe(window.__host());
  });
  // (elementsFromPoint cannot tell: it skips pointer-events:none; the observer sees the paint.)
  await until(() => page.evaluate(() => window.__seen === false), { what: 'the fake overlay to be drawn over the bar' });
  await personClicks(page, done);
  assert.deepEqual(await sent(page), [], 'a click through the fake overlay did not answer the handoff');

  // The overlay goes: the real bar, seen long enough, takes the person's click.
  await page.evaluate(() => document.getElementById('fake').remove());
  await untilArmed(page, 'done');
  await personClicks(page, await centreOf(page, 'done'));
  assert.deepEqual(await sent(page), [{ type: 'page.handoff', handoffId: 'h-overlay', outcome: 'done' }]);
  await page.close();
});

test('banner: shrunk to a speck by a zoom on <html>, a click on it does not count and the bar is re-mounted full size', { skip }, async () => {
  const page = await open();
  await ok(page, 'handoff', { show: true, handoffId: 'h-zoom', reason: 'qr', message: 'Scan it' });
  await untilArmed(page, 'done');
  const full = (await page.evaluate(hostState)).box;
  // A stylesheet rule, not the host's own attributes: nothing Chaperone observes changes.
  await page.evaluate(() => {
    const s = document.createElement('style');
    s.textContent = 'html { zoom: 0.05 }';
    document.head.appendChild(s);
  });
  const speck = await until(async () => {
    const s = await page.evaluate(hostState);
    return s.box[3] < full[3] / 4 ? s : null;
  }, { what: 'the bar to shrink' });
  assert.ok(speck.box[3] < full[3] / 4, `the bar is ${speck.box[3]} px high`);
  await personClicks(page, await centreOf(page, 'done'));
  assert.deepEqual(await sent(page), [], 'a click on the shrunk bar did not answer the handoff');
  // Re-mounted with the page's zoom undone on the host: full size again.
  await until(async () => (await page.evaluate(hostState)).box[3] >= full[3] - 1, { what: 'the bar back to full size' });
  await untilArmed(page, 'done');
  await personClicks(page, await centreOf(page, 'done'));
  assert.deepEqual(await sent(page), [{ type: 'page.handoff', handoffId: 'h-zoom', outcome: 'done' }]);
  await page.close();
});

test('pill: Stop counts only when a person\u2019s click lands on the real, visible pill', { skip }, async () => {
  const page = await open();
  await ok(page, 'pill', { show: true, step: 1, shortcut: 'Ctrl+Shift+E' });
  await untilArmed(page, 'stop');
  const stop = await centreOf(page, 'stop');
  // Transparent and held so by the page: a click there is not the person pressing Stop.
  await page.evaluate(() => {
    const h = window.__host();
    const fade = () => { if (h.style.getPropertyValue('opacity') !== '0') h.style.setProperty('opacity', '0', 'important'); };
    window.__fight = new MutationObserver(fade);
    window.__fight.observe(h, { attributes: true });
    fade();
  });
  await until(() => page.evaluate(() => getComputedStyle(window.__host()).opacity === '0'), { what: 'the pill faded' });
  await page.evaluate(() => window.__fight.disconnect());
  assert.equal(await page.evaluate(() => getComputedStyle(window.__host()).opacity), '0');
  await personClicks(page, stop);
  assert.deepEqual(await sent(page), []);
  await untilRestored(page, (await page.evaluate(hostState)).box, 'after the ignored click');
  await untilArmed(page, 'stop');
  await personClicks(page, await centreOf(page, 'stop'));
  assert.deepEqual(await sent(page), [{ type: 'page.stop', source: 'pill' }]);
  await page.close();
});

test('pill and banner together: each takes the person\u2019s click (neither counts the other as a cover)', { skip }, async () => {
  const page = await open();
  // The banner first, then the pill above it in the top layer (as when a handoff is the agent's
  // first call): the pill's top-layer backdrop must not make the banner look covered.
  await ok(page, 'handoff', { show: true, handoffId: 'h-both', reason: 'other', message: '' });
  await ok(page, 'pill', { show: true, step: 1, shortcut: 'Ctrl+Shift+E' });
  await untilArmed(page, 'done');
  await untilArmed(page, 'stop');
  await personClicks(page, await centreOf(page, 'done'));
  await personClicks(page, await centreOf(page, 'stop'));
  assert.deepEqual(await sent(page), [
    { type: 'page.handoff', handoffId: 'h-both', outcome: 'done' },
    { type: 'page.stop', source: 'pill' },
  ]);
  await page.close();
});

test('banner: another extension\u2019s data-* attribute and --custom property on the host are left alone, and clicks still count', { skip }, async () => {
  const page = await open();
  await ok(page, 'handoff', { show: true, handoffId: 'h-ext', reason: 'other', message: '' });
  await untilArmed(page, 'done');
  // As Dark Reader marks every element it restyles: harmless to how the host is drawn.
  await page.evaluate(() => {
    const h = window.__host();
    h.setAttribute('data-darkreader-inline-bgcolor', '');
    h.style.setProperty('--darkreader-inline-bgcolor', '#000');
  });
  const kept = await page.evaluate(() => {
    const h = window.__host();
    return [h.hasAttribute('data-darkreader-inline-bgcolor'), h.style.getPropertyValue('--darkreader-inline-bgcolor')];
  });
  assert.deepEqual(kept, [true, '#000'], 'not fought over');
  await untilArmed(page, 'done');
  await personClicks(page, await centreOf(page, 'done'));
  assert.deepEqual(await sent(page), [{ type: 'page.handoff', handoffId: 'h-ext', outcome: 'done' }]);
  await page.close();
});
