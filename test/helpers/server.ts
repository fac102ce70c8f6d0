import { after } from 'node:test';
import { cpSync, existsSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
// The real server process (src/server.ts), built as `npm start` runs it when the suite runs from a build.
import { SERVER_COMMAND } from './entry-points.js';
import { endChildren, spawnGroup } from './children.js';
import { openEmptyEmbedded } from './app.js';
import { migrate } from '../../src/platform/database/migrate.js';

/**
 * Every server a test starts runs in a process group of its own, and the whole group is ended
 * when the test file ends (this `after` hook; under the suite runner also after each file), on a
 * normal exit, and when the runner stops the file (SIGTERM, SIGINT): test/helpers/children.ts. A
 * server is never left running after its test.
 */
after(endChildren);

// In a module of its own, so helpers that need only a port (radicale.ts, used by benchmarks too)
// do not register this file's test hooks.
import { freePort } from './ports.js';

export { freePort };

export interface Running {
  child: ChildProcess;
  base: string;
  output: () => string;
  exit: Promise<number | null>;
}

export async function start(env: Record<string, string>): Promise<Running> {
  const port = await freePort();
  const child = spawnGroup(process.execPath, SERVER_COMMAND, {
    // Schemas compile on each route's first use (SCHEMAS_COMPILED_AT_START=false), as in the in-process
    // test apps: a spawned server serves a few routes, and compiling all at start was half its start's
    // CPU. test/server.test.ts starts one that compiles at start.
    env: { ...process.env, NODE_ENV: 'development', LOG_LEVEL: 'info', HOST: '127.0.0.1', PORT: String(port), SCHEMAS_COMPILED_AT_START: 'false', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, base: `http://127.0.0.1:${port}`, output: () => output, exit };
}

/**
 * Waits until the server answers /readyz, or fails when it exits. No tight deadline: a server with
 * a new data folder runs initdb and every migration first, which on a busy machine took more than
 * the minute this used to allow (npm run test:oversubscribed). Under npm test the file's timeout
 * bounds it (its servers are then ended, which ends this loop); the ten minutes below only keep a
 * file run on its own from waiting for ever.
 */
export async function waitReady(running: Running): Promise<void> {
  const hangGuard = Date.now() + 10 * 60_000;
  while (Date.now() < hangGuard) {
    try {
      const response = await fetch(`${running.base}/readyz`);
      if (response.status === 200) return;
    } catch {
      // not listening yet
    }
    if (running.child.exitCode !== null || running.child.signalCode !== null) throw new Error(`server exited before it was ready: ${running.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`server did not become ready in ten minutes: ${running.output()}`);
}

/**
 * A new embedded data folder that already holds the schema: a copy of one folder where every
 * migration ran once, on the suite's empty template, for the whole run (in the run's build folder, which every test process
 * of `npm test` shares, made by whichever asks first; else once per process). A server started on
 * an empty folder spends about 4 s of CPU on initdb and the migrations; test/server.test.ts still
 * starts one that way, as a fresh install does.
 */
export async function migratedDataDir(prefix: string): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  cpSync(await templateDataDir(), dir, { recursive: true });
  return dir;
}

let template: Promise<string> | undefined;
function templateDataDir(): Promise<string> {
  template ??= (async () => {
    const shared = process.env.SLOTWISE_BUILD_DIR ? join(process.env.SLOTWISE_BUILD_DIR, 'server-data-template') : undefined;
    if (shared && existsSync(shared)) return shared;
    const made = mkdtempSync(join(process.env.SLOTWISE_BUILD_DIR ?? tmpdir(), 'server-data-template-'));
    // The suite's empty template loaded into the folder (initdb's result, made once per run), then migrated.
    const database = await openEmptyEmbedded({ dataDir: made });
    try {
      await migrate(database.db);
    } finally {
      await database.close();
    }
    if (!shared) {
      process.once('exit', () => rmSync(made, { recursive: true, force: true }));
      return made;
    }
    try {
      // Whole or not at all: another process may have put its own there meanwhile (then that one serves).
      renameSync(made, shared);
    } catch {
      rmSync(made, { recursive: true, force: true });
    }
    return shared;
  })();
  return template;
}

/**
 * The real server at debug level (its own embedded data folder, or TEST_DATABASE_URL), ready, for
 * `work`; stopped with SIGTERM and its folder removed afterwards. The log tests read its output.
 */
export async function withDebugServer(work: (server: Running) => Promise<void>): Promise<void> {
  const dataDir = await migratedDataDir('slotwise-debug-server-');
  const env: Record<string, string> = { LOG_LEVEL: 'debug', WORKER_ENABLED: 'false' };
  if (process.env.TEST_DATABASE_URL) env.DATABASE_URL = process.env.TEST_DATABASE_URL;
  else env.DATA_DIR = dataDir;
  const server = await start(env);
  try {
    await waitReady(server);
    await work(server);
  } finally {
    server.child.kill('SIGTERM');
    await server.exit;
    rmSync(dataDir, { recursive: true, force: true });
  }
}
