import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/platform/config.js';
import { createMetrics } from '../../src/platform/metrics.js';
import { TEST_SECRETS, createTestContext, json, openTestDatabase } from '../helpers/app.js';
import type { TestContext } from '../helpers/app.js';
import { dayAhead, setup, slot } from '../modules/appointments/fixtures.js';
import type { Setup } from '../modules/appointments/fixtures.js';

// GET /metrics: HTTP counters labelled by route pattern, pool gauges, the outbox lag and pending
// count read at scrape time, webhook outcomes counted as the dispatcher finishes each delivery.

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** The samples of a Prometheus text exposition (comments skipped). */
function parse(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)/.exec(line);
    assert.ok(match, `a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const [, key, value] of (match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[key!] = value!;
    samples.push({ name: match[1]!, labels, value: Number(match[3]) });
  }
  return samples;
}

/** The value of the one sample with this name whose labels include `labels` (undefined when none). */
function value(samples: Sample[], name: string, labels: Record<string, string> = {}): number | undefined {
  const found = samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  assert.ok(found.length <= 1, `one ${name} sample with ${JSON.stringify(labels)}, found ${found.length}`);
  return found[0]?.value;
}

let context: TestContext;
let world: Setup;

before(async () => {
  // A database of its own on a server: the outbox figures are server-wide, and the dispatcher
  // pass below must not take other files' events.
  context = await createTestContext({}, { dedicatedDatabase: true });
  world = await setup(context);
});
after(() => context.close());

async function scrape(): Promise<{ text: string; samples: Sample[] }> {
  const response = await context.app.inject({ method: 'GET', url: '/metrics' });
  assert.equal(response.statusCode, 200);
  assert.match(response.headers['content-type'] as string, /^text\/plain; version=0\.0\.4/);
  return { text: response.body, samples: parse(response.body) };
}

describe('GET /metrics', () => {
  test('counts requests by method, route pattern and status, with latency and errors', async () => {
    const before = (await scrape()).samples;
    const route = { method: 'GET', route: '/v3/location/:id', status_code: '200' };
    const base = value(before, 'slotwise_http_requests_total', route) ?? 0;

    for (let i = 0; i < 3; i++) {
      const response = await context.app.inject({ method: 'GET', url: `/v3/location/${world.locationId}`, headers: world.headers });
      assert.equal(response.statusCode, 200, response.body);
    }
    assert.equal((await context.app.inject({ method: 'GET', url: `/v3/location/${randomUUID()}` })).statusCode, 401);
    assert.equal((await context.app.inject({ method: 'GET', url: `/no/such/route/${randomUUID()}` })).statusCode, 404);

    const { text, samples } = await scrape();
    assert.equal(value(samples, 'slotwise_http_requests_total', route), base + 3);
    assert.ok((value(samples, 'slotwise_http_request_duration_seconds_count', { method: 'GET', route: '/v3/location/:id' }) ?? 0) >= 4);
    assert.ok((value(samples, 'slotwise_http_request_duration_seconds_bucket', { method: 'GET', route: '/v3/location/:id', le: '+Inf' }) ?? 0) >= 4);
    assert.ok((value(samples, 'slotwise_http_errors_total', { method: 'GET', route: '/v3/location/:id', status_code: '401' }) ?? 0) >= 1);
    assert.ok((value(samples, 'slotwise_http_errors_total', { method: 'GET', route: '(unmatched)', status_code: '404' }) ?? 0) >= 1);
    assert.equal(value(samples, 'slotwise_http_errors_total', route), undefined, 'a 200 is not an error');
    // The label is the pattern: no id and no unmatched URL ever becomes a label value.
    assert.doesNotMatch(text, new RegExp(world.locationId));
    assert.doesNotMatch(text, /\/no\/such\/route/);
  });

  test('has the database pool gauges and the default process metrics', async () => {
    const { samples } = await scrape();
    const stats = context.database.poolStats();
    assert.ok((value(samples, 'slotwise_db_pool_connections') ?? -1) >= 1);
    assert.ok((value(samples, 'slotwise_db_pool_connections') ?? 0) <= Math.max(stats.total, 5));
    assert.ok((value(samples, 'slotwise_db_pool_idle_connections') ?? -1) >= 0);
    assert.equal(value(samples, 'slotwise_db_pool_waiting_requests'), 0);
    assert.ok(value(samples, 'process_cpu_user_seconds_total') !== undefined);
    assert.ok(value(samples, 'nodejs_eventloop_lag_seconds') !== undefined);
  });

  test('outbox lag is the age of the oldest pending event; webhook outcomes are counted as deliveries finish', async () => {
    // Everything pending so far is sent first, so the figures below are this test's alone.
    await context.app.dispatcher.drain();
    let { samples } = await scrape();
    assert.equal(value(samples, 'slotwise_outbox_lag_seconds'), 0, 'no pending event: lag 0');
    assert.equal(value(samples, 'slotwise_outbox_pending_events'), 0);
    const failedBefore = value(samples, 'slotwise_webhook_deliveries_total', { outcome: 'failed' });
    assert.equal(typeof failedBefore, 'number', 'both outcome series exist before any delivery');
    assert.equal(typeof value(samples, 'slotwise_webhook_deliveries_total', { outcome: 'delivered' }), 'number');

    // A webhook to a loopback address: the delivery client refuses it, a failed outcome.
    await context.database.db
      .insertInto('webhooks')
      .values({ companyId: world.tenant.companyId, id: randomUUID(), locationId: world.locationId, url: 'https://127.0.0.1/hook', triggers: ['NEW_APPOINTMENT'] })
      .execute();
    const booked = await context.app.inject({
      method: 'POST',
      url: `/v3/appointment?LocationId=${world.locationId}&ServiceId=${world.serviceId}`,
      headers: world.headers,
      payload: { ...slot(dayAhead(10), '10:00'), ResourceIds: [world.resourceIds[0]], CustomerId: world.customerId },
    });
    assert.equal(booked.statusCode, 201, booked.body);
    const appointment = json(booked);
    // And one event written an hour ago that no worker has taken yet.
    await context.database.db
      .insertInto('outboxEvents')
      .values({
        companyId: world.tenant.companyId,
        id: randomUUID(),
        trigger: 'NEW_APPOINTMENT',
        appointmentId: appointment.id,
        locationId: world.locationId,
        payload: JSON.stringify(appointment),
        createdAt: sql<Date>`now() - interval '1 hour'`,
      })
      .execute();

    ({ samples } = await scrape());
    const lag = value(samples, 'slotwise_outbox_lag_seconds') ?? 0;
    assert.ok(lag >= 3600 && lag < 3600 + 120, `lag ${lag} s`);
    assert.equal(value(samples, 'slotwise_outbox_pending_events'), 2);

    assert.equal(await context.app.dispatcher.drain(), 2);
    const deliveries = await context.database.db.selectFrom('webhookDeliveries').select('outcome').where('companyId', '=', world.tenant.companyId).execute();
    assert.deepEqual(deliveries.map((d) => d.outcome), ['failed', 'failed']);
    ({ samples } = await scrape());
    assert.equal(value(samples, 'slotwise_webhook_deliveries_total', { outcome: 'failed' }), failedBefore! + 2);
    assert.equal(value(samples, 'slotwise_outbox_lag_seconds'), 0);
    assert.equal(value(samples, 'slotwise_outbox_pending_events'), 0);
  });

  test('/metrics is not in the OpenAPI document', async () => {
    const document = json(await context.app.inject({ method: 'GET', url: '/openapi.json' }));
    assert.equal(document.paths['/metrics'], undefined);
  });
});

test('each app counts in its own registry', async () => {
  const handle = { db: context.database.db, poolStats: () => ({ total: 3, idle: 2, waiting: 1 }) };
  const a = createMetrics({ database: handle });
  const b = createMetrics({ database: handle });
  a.recordWebhookOutcome('delivered');
  a.recordWebhookOutcome('delivered');
  b.recordWebhookOutcome('failed');
  a.observeRequest('GET', '/healthz', 200, 0.001);
  const [textA, textB] = await Promise.all([a.registry.metrics(), b.registry.metrics()]);
  const [sa, sb] = [parse(textA), parse(textB)];
  assert.equal(value(sa, 'slotwise_webhook_deliveries_total', { outcome: 'delivered' }), 2);
  assert.equal(value(sa, 'slotwise_webhook_deliveries_total', { outcome: 'failed' }), 0);
  assert.equal(value(sb, 'slotwise_webhook_deliveries_total', { outcome: 'failed' }), 1);
  assert.equal(value(sa, 'slotwise_http_requests_total', { route: '/healthz' }), 1);
  assert.equal(value(sb, 'slotwise_http_requests_total', { route: '/healthz' }), undefined);
  assert.equal(value(sa, 'slotwise_db_pool_waiting_requests'), 1);
  assert.equal(value(sa, 'slotwise_db_pool_idle_connections'), 2);
});

test('/readyz fails with 503 while the server drains, and /healthz still answers', async () => {
  let draining = false;
  const database = await openTestDatabase();
  const app = await buildApp({ config: loadConfig({ NODE_ENV: 'test', LOG_LEVEL: 'silent' }), database, secrets: TEST_SECRETS, isDraining: () => draining });
  try {
    assert.equal((await app.inject({ method: 'GET', url: '/readyz' })).statusCode, 200);
    draining = true;
    const response = await app.inject({ method: 'GET', url: '/readyz' });
    assert.equal(response.statusCode, 503);
    assert.deepEqual(json(response), { status: 'unavailable', reason: 'shutting down' });
    assert.equal((await app.inject({ method: 'GET', url: '/healthz' })).statusCode, 200);
  } finally {
    await app.close();
    await database.close();
  }
});
