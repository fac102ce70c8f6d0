import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { start, waitReady } from './helpers/server.js';

// The real process, as `npm start` runs it: configuration, migrations, restart, shutdown.

async function post(base: string, path: string, body: unknown) {
  return fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
}

test('the embedded database keeps data across a restart, and SIGTERM shuts down cleanly', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'slotwise-server-'));
  try {
    // Compiling every schema at start, as npm start does (the other servers of the suite compile on first use).
    const first = await start({ DATA_DIR: dataDir, SCHEMAS_COMPILED_AT_START: 'true' });
    await waitReady(first);
    const email = `restart-${randomUUID()}@example.com`;
    assert.equal((await post(first.base, '/v3/auth/signup', { email, password: 'long password', name: 'R' })).status, 201);
    first.child.kill('SIGTERM');
    assert.equal(await first.exit, 0);
    assert.match(first.output(), /shutting down/);

    const second = await start({ DATA_DIR: dataDir });
    await waitReady(second);
    const login = await post(second.base, '/v3/auth/login', { email, password: 'long password' });
    assert.equal(login.status, 200, 'the user made before the restart can still sign in');
    second.child.kill('SIGINT');
    assert.equal(await second.exit, 0);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('NODE_ENV=production without secrets refuses to start and names them', async () => {
  const running = await start({ NODE_ENV: 'production', DATA_DIR: join(tmpdir(), `never-${randomUUID()}`) });
  assert.equal(await running.exit, 1);
  for (const name of ['AUTH_TOKEN_SECRET', 'REFRESH_TOKEN_SECRET', 'CURSOR_SECRET', 'CALENDAR_TOKEN_SECRET', 'CREDENTIAL_ENCRYPTION_SECRET', 'MANAGE_TOKEN_SECRET']) assert.match(running.output(), new RegExp(name));
});

test('two instances started together on one PostgreSQL both come up and share data', async (t) => {
  const serverUrl = process.env.TEST_DATABASE_URL;
  if (!serverUrl) return t.skip('TEST_DATABASE_URL is not set');
  const name = `slotwise_two_${randomUUID().replace(/-/g, '')}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`create database ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  try {
    const [a, b] = await Promise.all([start({ DATABASE_URL: url.toString() }), start({ DATABASE_URL: url.toString() })]);
    await Promise.all([waitReady(a), waitReady(b)]);
    const email = `two-${randomUUID()}@example.com`;
    assert.equal((await post(a.base, '/v3/auth/signup', { email, password: 'long password', name: 'T' })).status, 201);
    assert.equal((await post(b.base, '/v3/auth/login', { email, password: 'long password' })).status, 200);
    a.child.kill('SIGTERM');
    b.child.kill('SIGTERM');
    assert.deepEqual(await Promise.all([a.exit, b.exit]), [0, 0]);
  } finally {
    await admin.query(`drop database if exists ${name} with (force)`);
    await admin.end();
  }
});
