import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { start, waitReady } from '../../helpers/server.js';
import type { Running } from '../../helpers/server.js';
import { createWorld } from '../../helpers/world.js';
import type { Fields } from '../../helpers/world.js';
import { dayAhead, slot } from './fixtures.js';

// No double booking across processes: two real server instances on one PostgreSQL database take
// concurrent holds and bookings of one slot, and exactly the service's capacity of them wins.
// The embedded database belongs to one process, so this needs TEST_DATABASE_URL.

const databaseUrl = process.env.TEST_DATABASE_URL;
const skip = databaseUrl ? false : 'TEST_DATABASE_URL is not set: two server processes can share only a PostgreSQL database (the embedded one belongs to a single process)';

let servers: Running[] = [];
let client: pg.Client | undefined;

before(async () => {
  if (!databaseUrl) return;
  // No signing secrets in the environment unless the caller set them: both instances, started
  // together, must agree on the ones generated and kept in the database.
  const env: Record<string, string> = { DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn', WORKER_ENABLED: 'false' };
  if (process.env.TEST_REDIS_URL) env.REDIS_URL = process.env.TEST_REDIS_URL;
  servers = await Promise.all([start(env), start(env)]);
  await Promise.all(servers.map((server) => waitReady(server)));
  client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
});

after(async () => {
  for (const server of servers) server.child.kill('SIGTERM');
  await Promise.all(servers.map((server) => server.exit));
  await client?.end();
});

interface Answer {
  status: number;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- response bodies are checked field by field
  body: any;
  headers: Headers;
  server: number;
}

async function call(server: number, method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<Answer> {
  const response = await fetch(`${servers[server]!.base}${path}`, {
    method,
    headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : null, headers: response.headers, server };
}

interface Shop {
  companyId: string;
  headers: Record<string, string>;
  locationId: string;
  serviceId: string;
  resourceId: string;
}

/** A company made through instance 0, with a location, a service (with `service`'s fields) and a resource. */
async function shop(service: Fields): Promise<Shop> {
  const tenant = await createWorld(servers[0]!.base).tenant();
  // The token signed by instance 0 is accepted by instance 1: both use the same secrets.
  const onOther = await call(1, 'GET', '/v3/company', tenant.dashboard);
  assert.equal(onOther.status, 200, `instance 1 must accept instance 0's token: ${JSON.stringify(onOther.body)}`);
  const { locationId, serviceId, resourceIds } = await tenant.bookable({ service });
  return { companyId: tenant.companyId, headers: tenant.dashboard, locationId, serviceId, resourceId: resourceIds[0]! };
}

async function activeRows(s: Shop, startTime: string): Promise<number> {
  const result = await client!.query<{ n: string }>(
    `select count(*) as n from appointment_resources
      where company_id = $1 and resource_id = $2 and start_time = $3 and status in ('IN', 'RS', 'BK')`,
    [s.companyId, s.resourceId, startTime],
  );
  return Number(result.rows[0]!.n);
}

async function countRows(table: 'appointments' | 'idempotency_keys', companyId: string): Promise<number> {
  const result = await client!.query<{ n: string }>(`select count(*) as n from ${table} where company_id = $1`, [companyId]);
  return Number(result.rows[0]!.n);
}

for (const capacity of [1, 2]) {
  test(`no double booking: 50 holds and 50 bookings of one slot on two instances, bookingsPerSlot ${capacity}`, { skip }, async () => {
    const s = await shop({ bookingsPerSlot: capacity });
    const wanted = slot(dayAhead(), '10:00');
    const query = `?LocationId=${s.locationId}&ServiceId=${s.serviceId}`;
    // 100 requests, holds and bookings interleaved, alternating between the instances; every one
    // names its own new customer, and the service has no limits, so only the slot is contested.
    const answers = await Promise.all(
      Array.from({ length: 100 }, (_, i) => {
        const kind = i % 4 < 2 ? 'hold' : 'create';
        const path = `/v3/appointment${kind === 'hold' ? '/hold' : ''}${query}`;
        const body = { ...wanted, ResourceIds: [s.resourceId], name: `Customer ${i}`, email: `customer-${i}-${randomUUID()}@example.com` };
        return call(i % 2, 'POST', path, s.headers, body).then((answer) => ({ ...answer, kind }));
      }),
    );

    const statuses = answers.map((a) => a.status);
    for (const answer of answers) {
      assert.ok(answer.status === 201 || answer.status === 400, `every answer is 201 or 400, got ${answer.status} from instance ${answer.server}: ${JSON.stringify(answer.body)}`);
    }
    const winners = answers.filter((a) => a.status === 201);
    assert.equal(winners.length, capacity, `exactly ${capacity} of 100 succeed; statuses: ${JSON.stringify(statuses)}`);
    for (const winner of winners) {
      assert.equal(winner.body.status, winner.kind === 'hold' ? 'IN' : 'BK');
      assert.equal(Date.parse(winner.body.startTime), Date.parse(wanted.Unavailability.startTime));
      assert.deepEqual(winner.body.resourceIds, [s.resourceId]);
    }
    assert.equal(new Set(winners.map((w) => w.body.id)).size, capacity);
    for (const loser of answers.filter((a) => a.status === 400)) {
      assert.equal(loser.body.code, 'BOOKING-105', JSON.stringify(loser.body));
    }

    // The database agrees: exactly `capacity` active resource rows for the slot, and the losers left nothing.
    assert.equal(await activeRows(s, wanted.Unavailability.startTime), capacity);
    assert.equal(await countRows('appointments', s.companyId), capacity);
  });
}

test('the same Idempotency-Key sent 10 times at once to two instances creates one appointment', { skip }, async () => {
  const s = await shop({ bookingsPerSlot: 1 });
  const wanted = slot(dayAhead(), '14:00');
  const key = `concurrent-${randomUUID()}`;
  const body = { ...wanted, ResourceIds: [s.resourceId], name: 'Ada Lovelace', email: `ada-${randomUUID()}@example.com` };
  const answers = await Promise.all(
    Array.from({ length: 10 }, (_, i) =>
      call(i % 2, 'POST', `/v3/appointment?LocationId=${s.locationId}&ServiceId=${s.serviceId}`, { ...s.headers, 'idempotency-key': key }, body),
    ),
  );
  for (const answer of answers) assert.equal(answer.status, 201, `instance ${answer.server}: ${JSON.stringify(answer.body)}`);
  const ids = new Set(answers.map((a) => a.body.id));
  assert.equal(ids.size, 1, `every answer names the same appointment: ${[...ids].join(', ')}`);
  const first = answers.filter((a) => a.headers.get('idempotent-replayed') !== 'true');
  assert.equal(first.length, 1, 'one answer is the original, the other nine are replays');
  for (const answer of answers) assert.deepEqual(answer.body, first[0]!.body);

  assert.equal(await countRows('appointments', s.companyId), 1);
  assert.equal(await countRows('idempotency_keys', s.companyId), 1);
  assert.equal(await activeRows(s, wanted.Unavailability.startTime), 1);
});
