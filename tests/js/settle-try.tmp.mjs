import { SettleRig } from './settle-harness.mjs';
const rig = await SettleRig.start();
try {
  for (const [path, field, button] of [['/settle-ticker.html', 'Note', 'Mark'], ['/mcp-compose.html', 'Subject', 'Preview'],
    ['/settle-polling.html', 'Note', 'Mark'], ['/settle-stream.html', 'Note', 'Mark'], ['/settle-animation.html', 'Note', 'Mark']]) {
    const tab = await rig.open(path);
    for (const mode of ['front', 'back']) {
      if (mode === 'back') await rig.background(tab); else await rig.front(tab);
      const ctx = await rig.capture(tab);
      const fills = [], clicks = [];
      for (let i = 0; i < 5; i++) {
        const f = await rig.act(tab, ctx, field, 'setValue', { value: `v${i}` });
        fills.push(`${f.ms.toFixed(0)}/${f.value.changes.settleMs}${f.value.changes.settled ? '' : '!' + f.value.changes.reason}`);
        const c = await rig.act(tab, ctx, button, 'click');
        clicks.push(`${c.ms.toFixed(0)}/${c.value.changes.settleMs}${c.value.changes.settled ? '' : '!' + c.value.changes.reason}`);
      }
      console.log(path, mode, 'fill', fills.join(' '), '| click', clicks.join(' '));
    }
    await tab.page.close();
  }
} finally { await rig.close(); }
