#!/usr/bin/env node
// Runs the fault drills (test/faults/*.drill.ts) one file at a time: each starts real server
// processes (and, where Debian's binaries are installed, a PostgreSQL and a Redis of its own) and
// breaks them. They need TEST_DATABASE_URL (a PostgreSQL server); each drill is bounded in time.
// Figures are printed as table rows for docs/reliability.md. `npm run test:faults -- <file>` runs one.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

const dir = 'test/faults';
const args = process.argv.slice(2);
const files = args.length ? args : readdirSync(dir).filter((name) => name.endsWith('.drill.ts')).sort().map((name) => join(dir, name));
if (!process.env.TEST_DATABASE_URL) console.warn('TEST_DATABASE_URL is not set: the drills that need PostgreSQL are skipped');
const result = spawnSync(
  process.execPath,
  ['--import', 'tsx', '--test', '--test-concurrency=1', '--test-timeout=300000', '--test-reporter=spec', ...files],
  { stdio: 'inherit', env: { ...process.env, NODE_ENV: 'test' } },
);
process.exit(result.status ?? 1);
