#!/usr/bin/env node
// Runs every test file under test/ with Node's own test runner (TypeScript through tsx).
// Files run in parallel processes; each opens its own database. Extra arguments are passed on,
// so `npm test -- test/platform` runs one folder and `npm test -- --test-name-pattern=scope` one test.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { availableParallelism } from 'node:os';

function findTests(dir) {
  const found = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    // The browser tests need Chromium and run by `npm run test:browser` (or when named: `npm test -- test/browser`).
    if (path === join('test', 'browser')) continue;
    if (statSync(path).isDirectory()) found.push(...findTests(path));
    else if (name.endsWith('.test.ts')) found.push(path);
  }
  return found;
}

const args = process.argv.slice(2);
const paths = args.filter((a) => !a.startsWith('--'));
const flags = args.filter((a) => a.startsWith('--'));
const files = (paths.length ? paths : ['test']).flatMap((p) => (statSync(p).isDirectory() ? findTests(p) : [p])).sort();
const concurrency = process.env.TEST_CONCURRENCY ?? String(Math.max(2, availableParallelism()));

const result = spawnSync(
  process.execPath,
  // A test that hangs fails after two minutes instead of holding the run until CI's limit.
  ['--import', 'tsx', '--test', `--test-concurrency=${concurrency}`, '--test-timeout=120000', '--test-reporter=spec', ...flags, ...files],
  { stdio: 'inherit', env: { ...process.env, NODE_ENV: 'test' } },
);
process.exit(result.status ?? 1);
