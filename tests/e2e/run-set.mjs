// SPDX-License-Identifier: GPL-3.0-or-later
// Runs one set of the end-to-end tests: `gtk`, the files that drive the real GTK app (they import
// app-harness.mjs or desktop-harness.mjs, or start CHAPERONE_APP), or `engine`, the rest (the
// extension in Chromium against the core's engine harness). The full test run gives each set
// once: the GTK set under ASan, where memory errors in the app matter, the engine set in the plain
// pass (build-aux/test.sh). The sets are found when the tests run, so a new file is never left out.
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const set = process.argv[2];
if (set !== 'gtk' && set !== 'engine') {
  console.error('usage: run-set.mjs gtk|engine');
  process.exit(2);
}
const dir = fileURLToPath(new URL('.', import.meta.url));
const drivesApp = (text) => /from '\.\/(app|desktop)-harness\.mjs'/.test(text) || /CHAPERONE_APP/.test(text);
const files = readdirSync(dir).filter((f) => f.endsWith('.test.mjs')).sort()
  .filter((f) => drivesApp(readFileSync(dir + f, 'utf8')) === (set === 'gtk'));
if (files.length === 0) {
  console.error(`no ${set} end-to-end test file in ${dir}`);
  process.exit(1);
}
console.log(`# end-to-end, ${set} set: ${files.join(' ')}`);
const child = spawn(process.execPath, ['--test', '--test-reporter=spec', ...files.map((f) => dir + f)],
  { stdio: 'inherit' });
child.on('exit', (code, signal) => process.exit(signal ? 1 : code));
