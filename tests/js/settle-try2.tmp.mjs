import { SettleRig } from './settle-harness.mjs';
const rig = await SettleRig.start();
try {
  const tab = await rig.open('/settle-ticker.html');
  await rig.background(tab).catch((e) => console.log('bg', e.message));
  console.log(JSON.stringify(await rig.sw.evaluate(async () => (await chrome.tabs.query({})).map((t) => [t.id, t.windowId, t.active, t.url.slice(0, 40)]))));
  console.log(JSON.stringify(await rig.sw.evaluate(async (tabId) => (await chrome.scripting.executeScript({ target: { tabId }, func: () => [document.visibilityState, document.hasFocus()] }))[0].result, tab.tabId)));
} finally { await rig.close(); }
