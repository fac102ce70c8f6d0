// Two workers on one database: an appointment's events still go out in order, and a slow attempt
// keeps its claim (renewed while it runs), so no other worker closes it as interrupted.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createTestContext, json } from '../../helpers/app.js';
import type { TestContext } from '../../helpers/app.js';
import { create, dayAhead, operate, setup, slot } from '../appointments/fixtures.js';
import { createDispatcher } from '../../../src/modules/notifications/dispatcher.js';
import type { DispatcherDeps } from '../../../src/modules/notifications/dispatcher.js';
import { finishDelivery, startDelivery } from '../../../src/modules/webhooks/repository.js';
import type { EventTrigger } from '../../../src/platform/database/schema.js';

let context: TestContext;
before(async () => {
  context = await createTestContext({}, { dedicatedDatabase: true, sharedOwner: true });
});
after(() => context.close());

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A dispatcher whose webhook "delivery" is a function of the test; messages are not sent anywhere. */
function worker(
  name: string,
  options: { leaseMs: number; batchSize: number; webhookId: string; deliver: (trigger: string) => Promise<void>; template?: () => Promise<{ subject: string; body: string }>; now?: () => number },
) {
  const deps: DispatcherDeps = {
    ...(options.now ? { now: options.now } : {}),
    db: context.database.db,
    instanceId: name,
    leaseMs: options.leaseMs,
    batchSize: options.batchSize,
    webhooks: {
      activeFor: async () => [{ id: options.webhookId, url: 'https://hooks.example.com/h', headers: {} }],
      start: (db, delivery) => startDelivery(db, { ...delivery, trigger: delivery.trigger as EventTrigger }),
      finish: async (db, companyId, id, outcome) => void (await finishDelivery(db, companyId, id, outcome)),
      deliver: async ({ body }) => {
        await options.deliver((body as { trigger: string }).trigger);
        return { ok: true, status: 200, error: null, durationMs: 1, address: '203.0.113.7' };
      },
    },
    messages: {
      template: options.template ?? (async () => ({ subject: '', body: '' })),
      render: () => ({ subject: '', text: '' }),
      context: () => ({}),
      email: { send: async () => ({ status: 'not_sent', reason: 'test' }) },
      sms: { send: async () => ({ status: 'not_sent', reason: 'test' }) },
    },
  };
  return createDispatcher(deps);
}

async function webhookOf(s: Awaited<ReturnType<typeof setup>>): Promise<string> {
  const response = await context.app.inject({
    method: 'POST',
    url: `/v3/webhook?locationId=${s.locationId}`,
    headers: s.headers,
    payload: { url: 'https://hooks.example.com/h', triggers: ['NEW_APPOINTMENT', 'APPOINTMENT_CANCELLED'] },
  });
  assert.equal(response.statusCode, 201, response.body);
  return json(response).id;
}

test('a second worker does not deliver an appointment\'s later event before its earlier one', async () => {
  const s = await setup(context);
  const webhookId = await webhookOf(s);
  const booked = await create(s, slot(dayAhead(), '10:00'));
  assert.equal((await operate(s, booked.id, 'cancel')).statusCode, 200);
  const order: string[] = [];
  const slowFirst = async (trigger: string) => {
    if (trigger === 'NEW_APPOINTMENT') await sleep(300);
    order.push(trigger);
  };
  const one = worker('w1', { leaseMs: 60_000, batchSize: 1, webhookId, deliver: slowFirst });
  const two = worker('w2', { leaseMs: 60_000, batchSize: 1, webhookId, deliver: slowFirst });
  await Promise.all([one.runOnce({ scanReminders: false }), two.runOnce({ scanReminders: false })]);
  await Promise.all([one.drain(), two.drain()]);
  assert.deepEqual(order, ['NEW_APPOINTMENT', 'APPOINTMENT_CANCELLED']);
});

test('a delivery slower than the lease keeps its claim: no other worker closes it as interrupted', async () => {
  const s = await setup(context);
  const webhookId = await webhookOf(s);
  const booked = await create(s, slot(dayAhead(), '11:00'));
  let sends = 0;
  const slow = worker('slow', { leaseMs: 1000, batchSize: 5, webhookId, deliver: async () => { sends++; await sleep(2500); } });
  const other = worker('other', { leaseMs: 1000, batchSize: 5, webhookId, deliver: async () => { sends++; } });
  const first = slow.runOnce({ scanReminders: false });
  await sleep(1300);
  await other.runOnce({ scanReminders: false });
  await first;
  const rows = await context.database.db.selectFrom('webhookDeliveries').select(['outcome', 'error']).where('appointmentId', '=', booked.id).execute();
  assert.equal(sends, 1);
  assert.deepEqual(rows, [{ outcome: 'delivered', error: null }]);
});

test('an event whose processing fails part-way is offered again later and completes, repeating nothing', async () => {
  const s = await setup(context);
  const webhookId = await webhookOf(s);
  const booked = await create(s, slot(dayAhead(), '12:00'));
  let clock = Date.now();
  let sends = 0;
  let templateCalls = 0;
  const flaky = worker('flaky', {
    leaseMs: 60_000,
    batchSize: 5,
    webhookId,
    now: () => clock,
    deliver: async () => void sends++,
    template: async () => {
      templateCalls++;
      if (templateCalls === 1) throw new Error('database went away');
      return { subject: 's', body: 'b' };
    },
  });
  await flaky.runOnce({ scanReminders: false });
  const event = () =>
    context.database.db.selectFrom('outboxEvents').select(['processedAt', 'claimedBy']).where('appointmentId', '=', booked.id).executeTakeFirstOrThrow();
  assert.deepEqual(await event(), { processedAt: null, claimedBy: null });
  assert.equal(sends, 1, 'the webhook went out in the first pass');
  // Not offered again at once; after the retry delay it is, and only what was missing is done.
  assert.deepEqual(await flaky.runOnce({ scanReminders: false }), { reminders: 0, events: 0 });
  clock += 31_000;
  assert.equal((await flaky.runOnce({ scanReminders: false })).events, 1);
  assert.notEqual((await event()).processedAt, null);
  assert.equal(sends, 1);
  const messages = await context.database.db.selectFrom('notifications').select(['status']).where('appointmentId', '=', booked.id).execute();
  assert.ok(messages.length > 0);
  assert.ok(messages.every((m) => m.status !== 'pending'));
});

test('the slow housekeeping pass removes idempotency keys past their 24 hours, and only those', async () => {
  const tenant = await context.world.tenant();
  const db = context.database.db;
  const old = new Date(Date.now() - 25 * 3_600_000);
  await db.insertInto('idempotencyKeys').values([
    { companyId: tenant.companyId, key: 'old', requestHash: 'h', createdAt: old },
    { companyId: tenant.companyId, key: 'fresh', requestHash: 'h' },
  ]).execute();
  const pass = worker('housekeeper', { leaseMs: 60_000, batchSize: 1, webhookId: '00000000-0000-0000-0000-000000000000', deliver: async () => {} });
  await pass.runOnce({ scanReminders: true });
  const keys = await db.selectFrom('idempotencyKeys').select('key').where('companyId', '=', tenant.companyId).execute();
  assert.deepEqual(keys.map((k) => k.key), ['fresh']);
});
