import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createTestContext, json } from '../../helpers/app.js';
import type { TestContext } from '../../helpers/app.js';
import { assertBadRequest, create, dayAhead, events, operate, request, setup, slot } from './fixtures.js';
import type { Setup } from './fixtures.js';

// Idempotency-Key on POST /v3/appointment and /v3/appointment/hold: a retry gets the first 201
// again, a different request under the same key is refused, a failed attempt leaves the key free,
// and keys belong to one company.

let context: TestContext;
before(async () => {
  context = await createTestContext({}, { sharedOwner: true });
});
after(() => context.close());

const withKey = (s: Setup, key: string) => ({ ...s.headers, 'idempotency-key': key });

async function appointmentCount(s: Setup): Promise<number> {
  const row = await context.database.db
    .selectFrom('appointments')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('companyId', '=', s.tenant.companyId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

async function keyRows(s: Setup): Promise<number> {
  const row = await context.database.db
    .selectFrom('idempotencyKeys')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('companyId', '=', s.tenant.companyId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

test('a retried create with the same key returns the first body with idempotent-replayed: true', async () => {
  const s = await setup(context);
  const key = `retry-${randomUUID()}`;
  const body = slot(dayAhead(), '10:00');
  const first = await request(s, 'create', body, withKey(s, key));
  assert.equal(first.statusCode, 201, first.body);
  assert.equal(first.headers['idempotent-replayed'], undefined, 'the first answer is not a replay');
  for (let attempt = 0; attempt < 2; attempt++) {
    const retry = await request(s, 'create', body, withKey(s, key));
    assert.equal(retry.statusCode, 201, retry.body);
    assert.equal(retry.headers['idempotent-replayed'], 'true');
    assert.deepEqual(json(retry), json(first));
  }
  assert.equal(await appointmentCount(s), 1, 'the retries booked nothing more');
  assert.deepEqual(await events(s, json(first).id), ['NEW_APPOINTMENT'], 'one event, from the first attempt');

  // Without a key the same request is a new booking attempt (and the slot is taken).
  assertBadRequest(await request(s, 'create', body), 'BOOKING-105');
});

test('the same key with a different request is a 400 naming the Idempotency-Key header', async () => {
  const s = await setup(context);
  const key = `mismatch-${randomUUID()}`;
  const date = dayAhead();
  const first = await request(s, 'create', slot(date, '10:00'), withKey(s, key));
  assert.equal(first.statusCode, 201, first.body);

  const differentBodies = [
    slot(date, '11:00'),
    { ...slot(date, '10:00'), notes: 'one more field' },
  ];
  for (const body of differentBodies) {
    const error = assertBadRequest(await request(s, 'create', body, withKey(s, key)));
    assert.equal(error.errors[0]?.location, 'headers', JSON.stringify(error));
    assert.equal(error.errors[0]?.path, 'Idempotency-Key', JSON.stringify(error));
  }
  // The same body as a hold is a different request too.
  const asHold = assertBadRequest(await request(s, 'hold', slot(date, '10:00'), withKey(s, key)));
  assert.equal(asHold.errors[0]?.path, 'Idempotency-Key');
  assert.equal(asHold.errors[0]?.location, 'headers');

  assert.equal(await appointmentCount(s), 1, 'the refused requests booked nothing');
  // The key still replays its first request.
  const retry = await request(s, 'create', slot(date, '10:00'), withKey(s, key));
  assert.equal(retry.statusCode, 201, retry.body);
  assert.equal(retry.headers['idempotent-replayed'], 'true');
  assert.equal(json(retry).id, json(first).id);
});

test('a failed first attempt stores nothing: the corrected request with the same key succeeds', async () => {
  const s = await setup(context);
  const date = dayAhead();
  await create(s, slot(date, '10:00'));
  const key = `failed-first-${randomUUID()}`;

  // The slot is taken: 400, and the key is not kept.
  assertBadRequest(await request(s, 'create', slot(date, '10:00'), withKey(s, key)), 'BOOKING-105');
  assert.equal(await keyRows(s), 0, 'the failed attempt left no idempotency key');
  // The same failing request again fails again (it is not a replay of the failure's answer either).
  const again = await request(s, 'create', slot(date, '10:00'), withKey(s, key));
  assertBadRequest(again, 'BOOKING-105');
  assert.equal(again.headers['idempotent-replayed'], undefined);

  // Corrected: another time, same key.
  const corrected = await request(s, 'create', slot(date, '11:00'), withKey(s, key));
  assert.equal(corrected.statusCode, 201, corrected.body);
  assert.equal(corrected.headers['idempotent-replayed'], undefined);
  const booked = json(corrected);
  assert.equal(booked.status, 'BK');

  const replay = await request(s, 'create', slot(date, '11:00'), withKey(s, key));
  assert.equal(replay.statusCode, 201, replay.body);
  assert.equal(replay.headers['idempotent-replayed'], 'true');
  assert.deepEqual(json(replay), booked);
  assert.equal(await appointmentCount(s), 2);
});

test('a failed attempt with a validation error also leaves the key free', async () => {
  const s = await setup(context);
  const date = dayAhead();
  const key = `invalid-first-${randomUUID()}`;
  // The end does not match the service's 60 minutes.
  assertBadRequest(await request(s, 'create', slot(date, '10:00', 30), withKey(s, key)));
  const fixed = await request(s, 'create', slot(date, '10:00'), withKey(s, key));
  assert.equal(fixed.statusCode, 201, fixed.body);
  assert.equal(fixed.headers['idempotent-replayed'], undefined);
});

test('keys are per company: two companies may use the same key independently', async () => {
  const a = await setup(context);
  const b = await setup(context);
  const key = `shared-${randomUUID()}`;
  const date = dayAhead();
  const body = slot(date, '10:00');

  const fromA = await request(a, 'create', body, withKey(a, key));
  assert.equal(fromA.statusCode, 201, fromA.body);
  // Company B's first use of the key is a new booking, even with a body that differs from A's.
  const fromB = await request(b, 'create', body, withKey(b, key));
  assert.equal(fromB.statusCode, 201, fromB.body);
  assert.equal(fromB.headers['idempotent-replayed'], undefined, 'B\'s first use is not a replay of A\'s');
  assert.notEqual(json(fromB).id, json(fromA).id);
  assert.equal(json(fromB).companyId, b.tenant.companyId);
  assert.equal(json(fromA).companyId, a.tenant.companyId);

  // Each company's retry replays its own answer.
  const retryA = await request(a, 'create', body, withKey(a, key));
  const retryB = await request(b, 'create', body, withKey(b, key));
  assert.equal(retryA.headers['idempotent-replayed'], 'true');
  assert.equal(retryB.headers['idempotent-replayed'], 'true');
  assert.equal(json(retryA).id, json(fromA).id);
  assert.equal(json(retryB).id, json(fromB).id);

  // A different request under the key in B is refused, and leaves A's key untouched.
  assertBadRequest(await request(b, 'create', slot(date, '11:00'), withKey(b, key)));
  const stillA = await request(a, 'create', body, withKey(a, key));
  assert.equal(stillA.statusCode, 201, stillA.body);
  assert.equal(json(stillA).id, json(fromA).id);
  assert.equal(await appointmentCount(a), 1);
  assert.equal(await appointmentCount(b), 1);
});

test('an Idempotency-Key on a hold replays the hold', async () => {
  const s = await setup(context);
  const key = `hold-${randomUUID()}`;
  const body = slot(dayAhead(), '10:00');
  const first = await request(s, 'hold', body, withKey(s, key));
  assert.equal(first.statusCode, 201, first.body);
  assert.equal(first.headers['idempotent-replayed'], undefined);
  const held = json(first);
  assert.equal(held.status, 'IN');
  assert.ok(held.expiresAt);

  const retry = await request(s, 'hold', body, withKey(s, key));
  assert.equal(retry.statusCode, 201, retry.body);
  assert.equal(retry.headers['idempotent-replayed'], 'true');
  assert.deepEqual(json(retry), held);
  assert.equal(await appointmentCount(s), 1);

  // The same key as a create is a different request.
  const asCreate = assertBadRequest(await request(s, 'create', body, withKey(s, key)));
  assert.equal(asCreate.errors[0]?.path, 'Idempotency-Key');

  // The hold can still be booked normally.
  const booked = await operate(s, held.id, 'book');
  assert.equal(booked.statusCode, 200, booked.body);
  assert.equal(json(booked).status, 'BK');
});

test('a hold without a customer can use a key', async () => {
  const s = await setup(context);
  const key = `hold-anonymous-${randomUUID()}`;
  const url = `/v3/appointment/hold?LocationId=${s.locationId}&ServiceId=${s.serviceId}`;
  const payload = { ...slot(dayAhead(), '12:00'), ResourceIds: [s.resourceIds[0]] };
  const first = await context.app.inject({ method: 'POST', url, headers: withKey(s, key), payload });
  assert.equal(first.statusCode, 201, first.body);
  assert.equal(json(first).customerId, null);
  const retry = await context.app.inject({ method: 'POST', url, headers: withKey(s, key), payload });
  assert.equal(retry.statusCode, 201, retry.body);
  assert.equal(retry.headers['idempotent-replayed'], 'true');
  assert.deepEqual(json(retry), json(first));
});

test('the Idempotency-Key is 1 to 255 characters', async () => {
  const s = await setup(context);
  const date = dayAhead();
  const longest = 'k'.repeat(254) + randomUUID().slice(0, 1);
  const ok = await request(s, 'create', slot(date, '10:00'), withKey(s, longest));
  assert.equal(ok.statusCode, 201, ok.body);
  const tooLong = assertBadRequest(await request(s, 'create', slot(date, '11:00'), withKey(s, 'k'.repeat(256))));
  assert.equal(tooLong.errors[0]?.location, 'headers', JSON.stringify(tooLong));
  assert.equal(await appointmentCount(s), 1);
});

test('a retry within 24 hours replays the first answer even after the appointment was cancelled', async () => {
  const s = await setup(context);
  const key = `after-cancel-${randomUUID()}`;
  const body = slot(dayAhead(), '10:00');
  const first = await request(s, 'create', body, withKey(s, key));
  assert.equal(first.statusCode, 201, first.body);
  const cancelled = await operate(s, json(first).id, 'cancel');
  assert.equal(cancelled.statusCode, 200, cancelled.body);
  // The slot is free again, but the retry is the same request: it is answered, not booked again.
  const retry = await request(s, 'create', body, withKey(s, key));
  assert.equal(retry.statusCode, 201, retry.body);
  assert.equal(retry.headers['idempotent-replayed'], 'true');
  assert.deepEqual(json(retry), json(first));
  assert.equal(await appointmentCount(s), 1);
});

test('a retry within 24 hours replays the first answer even after the service\'s rules changed', async () => {
  const s = await setup(context);
  const key = `after-rule-change-${randomUUID()}`;
  const body = slot(dayAhead(3), '10:00');
  const first = await request(s, 'create', body, withKey(s, key));
  assert.equal(first.statusCode, 201, first.body);
  // From now on the service needs a week's notice, so the same request made fresh would be refused
  // (BOOKING-104); the retry of the booking that was made must still get its answer.
  const changed = await context.app.inject({ method: 'PUT', url: `/v3/service/${s.serviceId}`, headers: s.headers, payload: { bookInAdvance: 10_080 } });
  assert.equal(changed.statusCode, 200, changed.body);
  assertBadRequest(await request(s, 'create', slot(dayAhead(3), '12:00')), 'BOOKING-104');

  const retry = await request(s, 'create', body, withKey(s, key));
  assert.equal(retry.statusCode, 201, `the retry of a booking that exists must replay it, got: ${retry.body}`);
  assert.equal(retry.headers['idempotent-replayed'], 'true');
  assert.deepEqual(json(retry), json(first));
  assert.equal(await appointmentCount(s), 1);
});
