#!/usr/bin/env node
// Runs every test file under test/ with Node's own test runner. Files run in parallel processes;
// each opens its own database. Extra arguments are passed on, so `npm test -- test/platform` runs
// one folder and `npm test -- --test-name-pattern=scope` one test.
//
// The suite runs from a build (issue 18): the test files, the server and the CLI are bundled with
// scripts/build.mjs into a folder of this run, and the runner gives Node the built files. A process
// then starts in about half the time it took through tsx (no per-module TypeScript transform, one
// bundle instead of hundreds of node_modules files), and a test that spawns the server runs the
// built server as `npm start` does (test/helpers/entry-points.ts). SLOTWISE_TEST_TSX=1 runs the
// TypeScript sources through tsx instead, as before.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { availableParallelism, tmpdir } from 'node:os';
import { buildBundles, ROOT } from './build.mjs';

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
const CHECK = join('test', 'platform', 'tenant-statements.check.ts');

// A whole-suite run records every statement the tests send, and afterwards checks that each one
// is scoped by company_id (test/platform/tenant-statements.check.ts; docs/scaling.md). A run of
// some tests only (named files, or a name pattern) sends only some statements: no check.
const wholeSuite = paths.length === 0 && !flags.some((flag) => flag.startsWith('--test-name-pattern') || flag.startsWith('--test-only'));
const statementLog = wholeSuite ? mkdtempSync(join(tmpdir(), 'slotwise-statements-')) : undefined;

const fromSources = ['1', 'true', 'yes'].includes((process.env.SLOTWISE_TEST_TSX ?? '').toLowerCase());
// Inside the project, so the bundles' external packages resolve from its node_modules; a folder of
// this run's own. Folders of runs that were killed before they could remove theirs go after a day.
const CACHE = join(ROOT, 'node_modules', '.cache', 'slotwise');
mkdirSync(CACHE, { recursive: true });
for (const name of readdirSync(CACHE)) {
  const path = join(CACHE, name);
  if (name.startsWith('test-build-') && Date.now() - statSync(path).mtimeMs > 86_400_000) rmSync(path, { recursive: true, force: true });
}
const buildDir = fromSources ? undefined : mkdtempSync(join(CACHE, 'test-build-'));
const env = {
  ...process.env,
  NODE_ENV: 'test',
  ...(statementLog ? { SLOTWISE_STATEMENT_LOG: statementLog } : {}),
  ...(buildDir ? { SLOTWISE_BUILD_DIR: buildDir } : {}),
};

/** The file Node runs for a test source: itself through tsx, or its bundle. */
const runnable = (file) => (buildDir ? join(buildDir, relative(ROOT, resolve(file))).replace(/\.ts$/, '.js') : file);
// Source maps cost each process about 0.35 s and 120 MB, so stack traces name the bundles unless
// SLOTWISE_TEST_SOURCE_MAPS=1 asks for the TypeScript lines.
const sourceMaps = ['1', 'true', 'yes'].includes((process.env.SLOTWISE_TEST_SOURCE_MAPS ?? '').toLowerCase());
const loader = buildDir ? (sourceMaps ? ['--enable-source-maps'] : []) : ['--import', 'tsx'];

function cleanUp() {
  if (statementLog) rmSync(statementLog, { recursive: true, force: true });
  if (buildDir) rmSync(buildDir, { recursive: true, force: true });
}

/** Runs a child to its end; Ctrl-C or a SIGTERM (CI's timeout) goes on to it, and the run's folders are removed. */
let running;
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    running?.kill(signal);
    cleanUp();
    process.exit(1);
  });
}
function run(args) {
  return new Promise((resolveStatus) => {
    running = spawn(process.execPath, args, { stdio: 'inherit', env });
    running.once('exit', (code) => resolveStatus(code ?? 1));
  });
}

let status;
try {
  if (buildDir) {
    const entryPoints = [...files, ...(wholeSuite ? [CHECK] : []), 'src/server.ts', 'src/cli/admin-main.ts'].map((file) => relative(ROOT, resolve(file)));
    await buildBundles({ entryPoints, outdir: buildDir });
  }
  // A test that hangs fails after two minutes instead of holding the run until CI's limit.
  status = await run([...loader, '--test', `--test-concurrency=${concurrency}`, '--test-timeout=120000', '--test-reporter=spec', ...flags, ...files.map(runnable)]);
  if (statementLog && status === 0) status = await run([...loader, '--test', '--test-reporter=spec', runnable(CHECK)]);
} finally {
  cleanUp();
}
process.exit(status);
