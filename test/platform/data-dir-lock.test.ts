// One process per embedded data directory (issue 11, finding 5): the operator CLI beside a running
// server printed success for writes the server then overwrote. A second opener is refused at once.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, hostname } from 'node:os';
import { join } from 'node:path';
import { DataDirLockedError, LOCK_FILE, lockDataDir } from '../../src/platform/database/data-dir-lock.js';
import { ADMIN_COMMAND } from '../helpers/entry-points.js';
import { spawnGroup } from '../helpers/children.js';

const folders: string[] = [];
after(() => {
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});
function folder(): string {
  const path = mkdtempSync(join(tmpdir(), 'slotwise-lock-'));
  folders.push(path);
  return path;
}

/** A live process that is not this one, to stand for a running server. */
function otherProcess() {
  // Its own process group, ended by the test or, if the runner stops this file first, on exit,
  // SIGTERM or SIGINT (test/helpers/children.ts).
  const child = spawnGroup('sleep', ['60'], { stdio: 'ignore' });
  const stop = () => {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // already gone
    }
  };
  return { pid: child.pid!, stop };
}

test('a folder held by a live process is refused, naming the process and what to do', () => {
  const dataDir = folder();
  const holder = otherProcess();
  try {
    writeFileSync(join(dataDir, LOCK_FILE), JSON.stringify({ pid: holder.pid, command: 'src/server.ts', host: hostname(), startedAt: '2026-11-24T08:00:00.000Z' }));
    assert.throws(() => lockDataDir(dataDir), (error: unknown) => {
      assert.ok(error instanceof DataDirLockedError);
      assert.match(error.message, new RegExp(`in use by process ${holder.pid} \\(src/server.ts, started 2026-11-24T08:00:00.000Z\\)`));
      assert.match(error.message, /DATABASE_URL/);
      return true;
    });
  } finally {
    holder.stop();
  }
});

test('a lock left by a process that is gone (kill -9) is taken over, and released on close', () => {
  const dataDir = folder();
  const gone = spawnSync('true');
  writeFileSync(join(dataDir, LOCK_FILE), JSON.stringify({ pid: gone.pid, command: 'old', host: hostname(), startedAt: 'then' }));
  const release = lockDataDir(dataDir);
  assert.equal(JSON.parse(readFileSync(join(dataDir, LOCK_FILE), 'utf8')).pid, process.pid);
  release();
  assert.equal(existsSync(join(dataDir, LOCK_FILE)), false);
});

test('the operator CLI refuses a data directory a server holds, with exit code 3 and no stack trace', () => {
  const dataDir = folder();
  const holder = otherProcess();
  try {
    writeFileSync(join(dataDir, LOCK_FILE), JSON.stringify({ pid: holder.pid, command: 'src/server.ts', host: hostname(), startedAt: 'now' }));
    const cli = spawnSync(process.execPath, [...ADMIN_COMMAND, 'list'], { env: { ...process.env, DATA_DIR: dataDir, DATABASE_URL: '' }, encoding: 'utf8' });
    assert.equal(cli.status, 3, cli.stderr);
    assert.match(cli.stderr, new RegExp(`in use by process ${holder.pid}`));
    assert.doesNotMatch(cli.stderr, /^\s+at /m, 'no stack trace');
    assert.equal(cli.stdout, '');
  } finally {
    holder.stop();
  }
});

test('the same process cannot open one folder twice; after release it can', () => {
  const dataDir = folder();
  const release = lockDataDir(dataDir);
  assert.throws(() => lockDataDir(dataDir), DataDirLockedError);
  release();
  lockDataDir(dataDir)();
});

test('a lock naming a live pid that started at another time (a reused pid) is stale', () => {
  const dataDir = folder();
  const other = otherProcess();
  try {
    writeFileSync(join(dataDir, LOCK_FILE), JSON.stringify({ pid: other.pid, command: 'old server', host: hostname(), startedAt: 'then', processStart: '1' }));
    const release = lockDataDir(dataDir);
    assert.equal(JSON.parse(readFileSync(join(dataDir, LOCK_FILE), 'utf8')).pid, process.pid);
    release();
  } finally {
    other.stop();
  }
});

test('a lock file is never seen half-written, and nothing is left beside it', () => {
  const dataDir = folder();
  const release = lockDataDir(dataDir);
  const holder = JSON.parse(readFileSync(join(dataDir, LOCK_FILE), 'utf8'));
  assert.equal(holder.pid, process.pid);
  assert.ok(typeof holder.processStart === 'string' || holder.processStart === null);
  release();
  assert.deepEqual(readdirSync(dataDir), []);
});
