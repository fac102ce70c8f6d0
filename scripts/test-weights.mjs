#!/usr/bin/env node
// npm run test:weights: writes scripts/test-weights.json, the order a fresh clone's `npm test`
// starts with (scripts/run-tests.mjs), from the wall time each test file took in this machine's
// last whole-suite run (node_modules/.cache/slotwise/test-timings.json). Run it after a full
// `npm test` on an idle machine when files were added or became much slower or faster.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './build.mjs';

const TIMINGS = join(ROOT, 'node_modules', '.cache', 'slotwise', 'test-timings.json');
if (!existsSync(TIMINGS)) {
  console.error('No timings yet: run `npm test` first.');
  process.exit(1);
}
const timings = JSON.parse(readFileSync(TIMINGS, 'utf8'));
// Files that no longer exist are left out; wall times to the tenth of a second are order enough.
const weights = Object.fromEntries(
  Object.entries(timings)
    .filter(([file]) => existsSync(join(ROOT, file)))
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([file, { wallMs }]) => [file, Math.round(wallMs / 100) * 100]),
);
writeFileSync(join(ROOT, 'scripts', 'test-weights.json'), `${JSON.stringify(weights, null, 1)}\n`);
console.log(`scripts/test-weights.json: ${Object.keys(weights).length} files`);
