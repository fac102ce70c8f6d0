// Drill: the database goes away under booking load. Two instances on one PostgreSQL; every backend
// is terminated three times (what `pg_terminate_backend` or a failover does), then, where Debian's
// PostgreSQL binaries are installed, a server of the drill's own is stopped for three seconds and
// started again. Instances must stay up, answer 503 (never another 5xx, never hang) while the
// database is away, lose no acknowledged booking, oversell nothing, and recover unaided.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import {
  bookingPath, call, cleanUp, crashed, dedicatedDatabase, figure, instances, load, lostAcknowledged, ownPostgres, oversold, shop, sleep, slotAt, statusCounts, unexpectedFailures,
} from './harness.js';
import type { Answer } from './harness.js';

after(cleanUp);

const serverUrl = process.env.TEST_DATABASE_URL;

async function bookingLoad(bases: string[], s: Awaited<ReturnType<typeof shop>>, durationMs: number, acknowledged: string[]) {
  return load(16, durationMs, async (client, n) => {
    const body = { ...slotAt((client * 997 + n * 13) % 4000), ResourceIds: [s.resourceIds[client % s.resourceIds.length]], name: `C ${client}`, email: `c${client}-${n}-${randomUUID()}@example.com` };
    const answer: Answer = await call(bases[client % bases.length]!, 'POST', bookingPath(s), { ...s.headers, 'idempotency-key': randomUUID() }, body);
    if (answer.status === 201) acknowledged.push(answer.body.id);
    if (answer.status === 503 || answer.status === 0) await sleep(100);
    return answer;
  });
}

test('every backend terminated three times under booking load', { skip: serverUrl ? false : 'TEST_DATABASE_URL is not set', timeout: 180_000 }, async () => {
  const databaseUrl = await dedicatedDatabase(serverUrl!);
  const running = await instances(2, { DATABASE_URL: databaseUrl });
  const s = await shop(running[0]!.base, { resources: 4 });
  const admin = new pg.Client({ connectionString: databaseUrl });
  await admin.connect();
  const acknowledged: string[] = [];
  const recoveries: number[] = [];
  const loadDone = bookingLoad(running.map((r) => r.base), s, 12_000, acknowledged);
  for (let round = 0; round < 3; round++) {
    await sleep(3000);
    const before = acknowledged.length;
    const at = Date.now();
    await admin.query('select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()');
    while (acknowledged.length === before && Date.now() - at < 10_000) await sleep(5);
    recoveries.push(Date.now() - at);
  }
  const answers = await loadDone;
  await admin.end();

  figure('terminate backends ×3', 'requests; statuses', `${answers.length}; ${JSON.stringify(statusCounts(answers))}`);
  figure('terminate backends ×3', 'crashes', crashed(running).length);
  figure('terminate backends ×3', '5xx other than 503, or hangs', unexpectedFailures(answers).length);
  figure('terminate backends ×3', 'acknowledged bookings lost', await lostAcknowledged(databaseUrl, s.companyId, acknowledged));
  figure('terminate backends ×3', 'oversold slots', await oversold(databaseUrl, s));
  figure('terminate backends ×3', 'slowest time from termination to the next success, ms', Math.max(...recoveries));
  assert.equal(crashed(running).length, 0, running.map((r) => r.output()).join('\n'));
  assert.deepEqual(unexpectedFailures(answers).map((a) => `${a.status} ${JSON.stringify(a.body)}`), []);
  assert.equal(await lostAcknowledged(databaseUrl, s.companyId, acknowledged), 0);
  assert.equal(await oversold(databaseUrl, s), 0);
  assert.ok(acknowledged.length > 0);
});

test('the database server stopped for three seconds and started again', { timeout: 180_000 }, async (t) => {
  const server = await ownPostgres();
  if (!server) return t.skip('Debian PostgreSQL binaries are not installed (apt-get install postgresql)');
  const running = await instances(2, { DATABASE_URL: server.url, DATABASE_CONNECT_TIMEOUT_MS: '1000' });
  const s = await shop(running[0]!.base, { resources: 4 });
  const acknowledged: string[] = [];
  const loadDone = bookingLoad(running.map((r) => r.base), s, 12_000, acknowledged);
  await sleep(3000);
  await server.stop();
  const stoppedAt = Date.now();
  await sleep(3000);
  await server.start();
  // From the moment PostgreSQL accepts connections again to the first booking acknowledged.
  const acceptingAt = Date.now();
  const before = acknowledged.length;
  while (acknowledged.length === before && Date.now() - acceptingAt < 15_000) await sleep(5);
  const firstSuccessMs = Date.now() - acceptingAt;
  const answers = await loadDone;
  const during = answers.filter((a) => a.at >= stoppedAt && a.at <= acceptingAt);

  figure('PostgreSQL stopped 3 s', 'requests; statuses', `${answers.length}; ${JSON.stringify(statusCounts(answers))}`);
  figure('PostgreSQL stopped 3 s', 'answers during the outage; of them 503', `${during.length}; ${during.filter((a) => a.status === 503).length}`);
  figure('PostgreSQL stopped 3 s', 'crashes', crashed(running).length);
  figure('PostgreSQL stopped 3 s', '5xx other than 503, or hangs', unexpectedFailures(answers).length);
  figure('PostgreSQL stopped 3 s', 'acknowledged bookings lost', await lostAcknowledged(server.url, s.companyId, acknowledged));
  figure('PostgreSQL stopped 3 s', 'oversold slots', await oversold(server.url, s));
  figure('PostgreSQL stopped 3 s', 'from PostgreSQL accepting connections to the first success, ms', firstSuccessMs);
  assert.equal(crashed(running).length, 0, running.map((r) => r.output()).join('\n'));
  assert.deepEqual(unexpectedFailures(answers).map((a) => `${a.status} ${JSON.stringify(a.body)}`), []);
  assert.ok(during.some((a) => a.status === 503), 'the outage was answered with 503');
  assert.equal(await lostAcknowledged(server.url, s.companyId, acknowledged), 0);
  assert.equal(await oversold(server.url, s), 0);
  assert.ok(firstSuccessMs < 15_000, 'recovered without a restart');
  // Readiness follows the database.
  const ready = await call(running[0]!.base, 'GET', '/readyz', {});
  assert.equal(ready.status, 200);
});
