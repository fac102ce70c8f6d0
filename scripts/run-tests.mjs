#!/usr/bin/env node
// Runs every test file under test/ with Node's own test runner. Extra arguments are passed on, so
// `npm test -- test/platform` runs one folder and `npm test -- --test-name-pattern=scope` one test.
//
// The suite runs from a build (issue 18): the test files, the server and the CLI are bundled with
// scripts/build.mjs into a folder of this run, and the runner gives Node the built files. A test that
// spawns the server runs the built server as `npm start` does (test/helpers/entry-points.ts).
// SLOTWISE_TEST_TSX=1 runs the TypeScript sources through tsx instead, one process per file.
//
// Files share processes: one process per core (scripts/test-shard.mjs) takes files from a common
// queue, longest first, and runs each inside a `describe` named by its path, so each file keeps its
// own before/after hooks and its failures name it. Loading the app, compiling its schemas and
// PGlite's WebAssembly are then paid once per process instead of once per file, which was most of
// the suite's CPU time. The few files that need a process of their own (OWN_PROCESS below, with the
// reason for each) still get one. SLOTWISE_TEST_ISOLATION=process runs every file in a process of
// its own, as before.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';
import { pathToFileURL } from 'node:url';
import { availableParallelism, tmpdir } from 'node:os';
import { buildBundles, buildSuiteBundle, ROOT } from './build.mjs';

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

/** The file Node runs for a source file: itself through tsx, or its bundle. */
const runnable = (file) => (buildDir ? join(buildDir, relative(ROOT, resolve(file))).replace(/\.ts$/, '.js') : file);
// Source maps cost each process about 0.35 s and 120 MB, so stack traces name the bundles unless
// SLOTWISE_TEST_SOURCE_MAPS=1 asks for the TypeScript lines.
const sourceMaps = ['1', 'true', 'yes'].includes((process.env.SLOTWISE_TEST_SOURCE_MAPS ?? '').toLowerCase());
const loader = buildDir ? (sourceMaps ? ['--enable-source-maps'] : []) : ['--import', 'tsx'];

/**
 * Files that run in a process of their own, path -> why. Every other file shares a process with
 * others (scripts/test-shard.mjs), one after another. None needs one today; what was checked: each
 * app has its own prom-client registry (no global one), each file its own database and app; the one
 * process.env change (delivery-client.test.ts, NODE_ENV) and every mock are undone within their
 * test; process handlers are added once per process (test/helpers/children.ts, app.ts); and the
 * whole suite passes sharing processes on PGlite and on PostgreSQL with Redis. A file that changes
 * process-wide state for good (a global dispatcher, a module's singleton, a signal handler that
 * exits) belongs here, e.g. ['test/x.test.ts', 'sets undici\'s global dispatcher'].
 */
const OWN_PROCESS = new Map([]);

const key = (file) => relative(ROOT, resolve(file)).split(sep).join('/');
const ownProcessForAll = (process.env.SLOTWISE_TEST_ISOLATION ?? '').toLowerCase() === 'process';
const alone = files.filter((file) => ownProcessForAll || OWN_PROCESS.has(key(file)));
const shared = files.filter((file) => !alone.includes(file));

/**
 * The order files are taken in: longest first, by the wall time each took in the last run here
 * (node_modules/.cache/slotwise/test-timings.json, written after each run), else by size. A long
 * file taken last would leave one core idle while the other finishes it.
 */
const TIMINGS = join(CACHE, 'test-timings.json');
/** A JSON file's object, or {} when it is missing or broken (a merge conflict): it costs only the order, never the run. */
function readJsonObject(path) {
  try {
    return existsSync(path) ? JSON.parse(readFileSync(path, 'utf8')) : {};
  } catch {
    return {};
  }
}
const timings = readJsonObject(TIMINGS);
/**
 * A fresh clone has no timings of its own yet: it starts from the wall times committed in
 * scripts/test-weights.json (from a whole-suite run on a 2-core machine; `npm run test:weights`
 * writes them again from this machine's last run). By size alone, short files that wait on
 * spawned servers or timers came last and left one core idle at the end: 138 s against 120-127 s
 * with timings (issue 18).
 */
const committed = readJsonObject(join(ROOT, 'scripts', 'test-weights.json'));
const weight = (file) => timings[key(file)]?.wallMs ?? committed[key(file)] ?? statSync(file).size / 10;
const longestFirst = (list) => [...list].sort((a, b) => weight(b) - weight(a) || a.localeCompare(b));

const queueDir = buildDir && join(buildDir, 'queue');
/** Keeps this run's per-file wall and CPU times (scripts/test-shard.mjs writes them) for the next run's order. */
function saveTimings() {
  const log = queueDir && join(queueDir, 'timings.jsonl');
  if (!log || !existsSync(log)) return;
  const updated = { ...readJsonObject(TIMINGS) };
  for (const line of readFileSync(log, 'utf8').split('\n').filter(Boolean)) {
    const { file, wallMs, cpuMs } = JSON.parse(line);
    updated[file] = { wallMs, cpuMs };
  }
  writeFileSync(TIMINGS, `${JSON.stringify(updated, null, 1)}\n`);
}

const SHARD = pathToFileURL(join(ROOT, 'scripts', 'test-shard.mjs')).href;
// A test file that runs longer than this fails (its tests are cancelled, its after hooks run) and
// the process goes on with the next file. A guard against a hang, not a measure of speed: two
// minutes were too few for server.test.ts's two cold server starts (initdb and every migration
// each) with eight runnable jobs per core (npm run test:oversubscribed beside another suite).
const FILE_TIMEOUT_MS = 300_000;
if (buildDir) {
  Object.assign(env, { SLOTWISE_TEST_QUEUE: queueDir, SLOTWISE_TEST_SUITE: join(buildDir, 'suite', 'suite.cjs'), SLOTWISE_TEST_FILE_TIMEOUT_MS: String(FILE_TIMEOUT_MS) });
  // With --test-only, each file's describe is marked `only`, so the file's own `test.only` run.
  if (flags.includes('--test-only')) env.SLOTWISE_TEST_ONLY = '1';
}

function cleanUp() {
  if (statementLog) rmSync(statementLog, { recursive: true, force: true });
  if (buildDir) rmSync(buildDir, { recursive: true, force: true });
}

/**
 * Runs a child to its end. The runner and its test processes are a process group of their own:
 * Ctrl-C or a SIGTERM (CI's timeout) goes on to the whole group, each test process then ends the
 * servers it started (test/helpers/children.ts), and the run's folders are removed.
 */
let running;
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    try {
      if (running?.pid) process.kill(-running.pid, signal);
    } catch {
      // already gone
    }
    cleanUp();
    process.exit(1);
  });
}
function run(args) {
  return new Promise((resolveStatus) => {
    running = spawn(process.execPath, args, { stdio: 'inherit', env, detached: true });
    running.once('exit', (code) => resolveStatus(code ?? 1));
  });
}

/** The small files Node's runner is given, one per process: it shows each process under its file's name. */
function processFiles() {
  const write = (name, options) => {
    const path = join(buildDir, name);
    writeFileSync(path, `import { run } from ${JSON.stringify(SHARD)};\nawait run(${JSON.stringify(options)});\n`);
    return path;
  };
  // The files of their own process first, longest first: they are few and long.
  const own = longestFirst(alone).map((file) => write(`own-process-${key(file).replace(/[^A-Za-z0-9.-]+/g, '_')}.mjs`, { only: key(file) }));
  const sharedProcesses = Array.from({ length: Math.min(Number(concurrency), shared.length) }, (_, i) => write(`shared-process-${i + 1}.mjs`, {}));
  return [...own, ...sharedProcesses];
}

let status;
try {
  let runnables;
  let timeout;
  if (buildDir) {
    const entryPoints = [...(wholeSuite ? [CHECK] : []), 'src/server.ts', 'src/cli/admin-main.ts'].map((file) => relative(ROOT, resolve(file)));
    await buildBundles({ entryPoints, outdir: buildDir });
    // After each file, the processes it started and left are ended (test/helpers/children.ts).
    await buildSuiteBundle({ files: files.map(key), outdir: join(buildDir, 'suite'), afterEachFile: { module: 'test/helpers/children.ts', name: 'endChildren' } });
    mkdirSync(queueDir);
    writeFileSync(join(queueDir, 'files.json'), JSON.stringify(longestFirst(shared).map(key)));
    runnables = processFiles();
    // Each file has FILE_TIMEOUT_MS (scripts/test-shard.mjs); a process as a whole gets this much,
    // for what no file's timeout can stop (a loop that never yields, a handle that keeps it open).
    // An hour: half the suite takes a process about 5 minutes idle, 20 when oversubscribed.
    timeout = 60 * 60_000;
  } else {
    runnables = files;
    // A test file that hangs fails after FILE_TIMEOUT_MS instead of holding the run until CI's limit.
    timeout = FILE_TIMEOUT_MS;
  }
  // From the build, the spec reporter with places mapped back to the test files (scripts/test-reporter.mjs).
  const reporter = buildDir ? pathToFileURL(join(ROOT, 'scripts', 'test-reporter.mjs')).href : 'spec';
  status = await run([...loader, '--test', `--test-concurrency=${concurrency}`, `--test-timeout=${timeout}`, `--test-reporter=${reporter}`, ...flags, ...runnables]);
  // Only a whole run's times: a run of some tests (a name pattern) would record a file's time as
  // that of the few tests it ran, and npm run test:weights would commit it.
  if (wholeSuite) saveTimings();
  if (statementLog && status === 0) status = await run([...loader, '--test', '--test-reporter=spec', runnable(CHECK)]);
} finally {
  cleanUp();
}
process.exit(status);
