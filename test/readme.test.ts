import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { migratedDataDir, start, waitReady } from './helpers/server.js';

// The README's walkthrough must work verbatim: run its shell block against a real server, on the
// embedded database, or on PostgreSQL when TEST_DATABASE_URL is set.

const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');

test('README opens with the two commands', () => {
  const opening = readme.split('\n').slice(0, 6).join('\n');
  assert.match(opening, /npm install && npm start/);
  assert.match(opening, /npm test/);
});

test('the README walkthrough works verbatim', async () => {
  const block = /<!-- walkthrough:start -->\s*```bash\n([\s\S]*?)```\s*<!-- walkthrough:end -->/.exec(readme)?.[1];
  assert.ok(block, 'the walkthrough block is marked in README.md');
  // The schema is there already (helpers/server.ts migratedDataDir): test/server.test.ts starts a server on an empty folder.
  const dataDir = await migratedDataDir('slotwise-readme-');
  const env: Record<string, string> = process.env.TEST_DATABASE_URL ? { DATABASE_URL: process.env.TEST_DATABASE_URL, WORKER_ENABLED: 'false' } : { DATA_DIR: dataDir };
  const server = await start(env);
  try {
    await waitReady(server);
    const run = spawnSync('bash', ['-e', '-o', 'pipefail', '-c', block], {
      env: { ...process.env, BASE: server.base, EMAIL: `readme-${randomUUID()}@example.com` },
      encoding: 'utf8',
    });
    assert.equal(run.status, 0, run.stderr);
    const lines = run.stdout.trim().split('\n');
    const printed = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    const company = printed.find((body) => body.name === 'Acme Dental' && 'allowedDomains' in body && !('apiKey' in body));
    assert.ok(company, 'step 6 reads the company with the machine token');
    assert.deepEqual(company.allowedDomains, ['booking.acme.example']);
    // Step 12: the first booking, of the first free time a week ahead.
    const booking = printed.at(-1)!;
    assert.equal(booking.status, 'BK', run.stdout);
    assert.equal(booking.timezoneName, 'America/New_York');
    assert.equal(typeof booking.customerId, 'string');
    assert.equal((booking.resourceIds as string[]).length, 1);
  } finally {
    server.child.kill('SIGTERM');
    await server.exit;
    rmSync(dataDir, { recursive: true, force: true });
  }
  // The server says where the docs are when it starts (read once it has exited: spawnSync above
  // held this process's event loop, so its output is only all here now).
  assert.ok(server.output().includes(`Slotwise API ready: the API reference is at ${server.base}/docs`), server.output());
});
