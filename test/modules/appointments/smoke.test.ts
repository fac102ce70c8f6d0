import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createTestContext, json, signup } from '../../helpers/app.js';
import type { TestContext } from '../../helpers/app.js';
import { assertBadRequest, create, dayAhead, events, freeTimes, hold, newTenant, operate, request, setup, slot } from './fixtures.js';

let context: TestContext;
let owner: Awaited<ReturnType<typeof signup>>;
before(async () => {
  context = await createTestContext();
  owner = await signup(context.app, 'owner');
});
after(() => context.close());

test('smoke: create, hold, book, cancel, reschedule', async () => {
  const s = await setup(context, await newTenant(context, owner));
  const date = dayAhead();
  const booked = await create(s, slot(date, '10:00'));
  assert.equal(booked.status, 'BK');
  assert.deepEqual(await events(s, booked.id), ['NEW_APPOINTMENT']);
  assert.ok(!(await freeTimes(s, date)).includes('10:00'));
  assertBadRequest(await request(s, 'create', slot(date, '10:00')), 'BOOKING-105');
  const held = await hold(s, slot(date, '11:00'));
  assert.equal(held.status, 'IN');
  assert.ok(held.expiresAt);
  const bookedHold = json(await operate(s, held.id, 'book'));
  assert.equal(bookedHold.status, 'BK');
  const cancelled = json(await operate(s, booked.id, 'cancel'));
  assert.equal(cancelled.status, 'CN');
  assert.ok((await freeTimes(s, date)).includes('10:00'));
  const moved = await operate(s, bookedHold.id, 'reschedule', slot(date, '14:00'));
  assert.equal(moved.statusCode, 200, moved.body);
  const replacement = json(moved);
  assert.equal(replacement.rescheduledFromId, held.id);
  const original = json(await context.app.inject({ method: 'GET', url: `/v3/appointment/${held.id}`, headers: s.headers }));
  assert.equal(original.status, 'RE');
  assert.equal(original.rescheduledToId, replacement.id);
  const list = json(await context.app.inject({ method: 'GET', url: `/v3/appointments?LocationId=${s.locationId}`, headers: s.headers }));
  assert.equal(list.total, 3);
  const first = json(await context.app.inject({ method: 'GET', url: `/v3/appointments/cursor?limit=2`, headers: s.headers }));
  assert.equal(first.data.length, 2);
  assert.ok(first.nextCursor);
  const second = json(await context.app.inject({ method: 'GET', url: `/v3/appointments/cursor?cursor=${encodeURIComponent(first.nextCursor)}`, headers: s.headers }));
  assert.equal(second.data.length, 1);
  assert.equal(second.nextCursor, null);
});
