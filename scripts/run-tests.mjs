#!/usr/bin/env node
// Runs every test file under test/ with Node's own test runner (TypeScript through tsx).
// Files run in parallel processes; each opens its own database. Extra arguments are passed on,
// so `npm test -- test/platform` runs one folder and `npm test -- --test-name-pattern=scope` one test.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
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

// A whole-suite run records every statement the tests send, and afterwards checks that each one
// is scoped by company_id (test/platform/tenant-statements.check.ts; docs/scaling.md).
const wholeSuite = paths.length === 0;
const statementLog = wholeSuite ? mkdtempSync(join(tmpdir(), 'slotwise-statements-')) : undefined;
const env = { ...process.env, NODE_ENV: 'test', ...(statementLog ? { SLOTWISE_STATEMENT_LOG: statementLog } : {}) };

const result = spawnSync(
  process.execPath,
  // A test that hangs fails after two minutes instead of holding the run until CI's limit.
  ['--import', 'tsx', '--test', `--test-concurrency=${concurrency}`, '--test-timeout=120000', '--test-reporter=spec', ...flags, ...files],
  { stdio: 'inherit', env },
);
let status = result.status ?? 1;
if (statementLog && status === 0) {
  const check = spawnSync(process.execPath, ['--import', 'tsx', '--test', '--test-reporter=spec', join('test', 'platform', 'tenant-statements.check.ts')], { stdio: 'inherit', env });
  status = check.status ?? 1;
}
if (statementLog) rmSync(statementLog, { recursive: true, force: true });
process.exit(status);
