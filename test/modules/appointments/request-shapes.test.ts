// The request shapes of docs/api.md: CustomerId in the body or the query of create and hold, and
// the creation body on reschedule (a CustomerId there must be the appointment's own customer).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createTestContext, json } from '../../helpers/app.js';
import type { TestContext } from '../../helpers/app.js';
import { assertBadRequest, create, dayAhead, newCustomer, operate, setup, slot } from './fixtures.js';
import type { Appointment, Setup } from './fixtures.js';

let context: TestContext;
before(async () => {
  context = await createTestContext({}, { sharedOwner: true });
});
after(() => context.close());

function newSlot(s: Setup, kind: 'create' | 'hold', query: Record<string, string>, body: Record<string, unknown>) {
  const params = new URLSearchParams({ LocationId: s.locationId, ServiceId: s.serviceId, ...query });
  return context.app.inject({ method: 'POST', url: `/v3/appointment${kind === 'hold' ? '/hold' : ''}?${params}`, headers: s.headers, payload: { ResourceIds: [s.resourceIds[0]], ...body } });
}

test('CustomerId in the query of create and hold is the customer', async () => {
  const s = await setup(context);
  const date = dayAhead();
  for (const [kind, time] of [['create', '09:00'], ['hold', '10:00']] as const) {
    const response = await newSlot(s, kind, { CustomerId: s.customerId }, slot(date, time));
    assert.equal(response.statusCode, 201, response.body);
    assert.equal(json<Appointment>(response).customerId, s.customerId);
  }
});

test('CustomerId in both places: the same value is accepted, different values are a 400 at the query', async () => {
  const s = await setup(context);
  const other = await newCustomer(s);
  const date = dayAhead();
  const same = await newSlot(s, 'create', { CustomerId: s.customerId }, { ...slot(date, '09:00'), CustomerId: s.customerId });
  assert.equal(same.statusCode, 201, same.body);
  const body = assertBadRequest(await newSlot(s, 'create', { CustomerId: other }, { ...slot(date, '11:00'), CustomerId: s.customerId }));
  assert.deepEqual(body.errors.map((e) => [e.location, e.path]), [['query', 'CustomerId']]);
});

test('another company\'s CustomerId in the query is a 400 at the query naming it', async () => {
  const s = await setup(context);
  const foreign = await setup(context);
  const body = assertBadRequest(await newSlot(s, 'hold', { CustomerId: foreign.customerId }, slot(dayAhead(), '09:00')));
  assert.deepEqual(body.errors.map((e) => [e.location, e.path]), [['query', 'CustomerId']]);
  assert.match(body.message, new RegExp(foreign.customerId));
});

test('reschedule takes the creation body: its own CustomerId, notes, custom fields and legacyId are accepted', async () => {
  const s = await setup(context);
  const date = dayAhead();
  const booked = await create(s, slot(date, '09:00'));
  const response = await operate(s, booked.id, 'reschedule', {
    ...slot(date, '13:00'),
    CustomerId: s.customerId,
    ResourceIds: [s.resourceIds[0]],
    duration: 60,
    notes: 'moved',
    field1: 'x',
    legacyId: 'v1-42',
  });
  assert.equal(response.statusCode, 200, response.body);
  const replacement = json<Appointment>(response);
  assert.equal(replacement.customerId, s.customerId);
  assert.equal(replacement.notes, 'moved');
  assert.equal(replacement.field1, 'x');
  assert.equal(replacement.legacyId, 'v1-42');
  assert.equal(replacement.rescheduledFromId, booked.id);
});

test('reschedule with another customer\'s CustomerId is a 400 and changes nothing', async () => {
  const s = await setup(context);
  const other = await newCustomer(s);
  const date = dayAhead();
  const booked = await create(s, slot(date, '09:00'));
  const body = assertBadRequest(await operate(s, booked.id, 'reschedule', { ...slot(date, '13:00'), CustomerId: other }));
  assert.deepEqual(body.errors.map((e) => [e.location, e.path]), [['body', 'CustomerId']]);
  const after = json<Appointment>(await context.app.inject({ method: 'GET', url: `/v3/appointment/${booked.id}`, headers: s.headers }));
  assert.equal(after.status, 'BK');
  assert.equal(after.rescheduledToId, null);
});

test('an id in another spelling PostgreSQL does not take (urn:uuid:) is a 400 at its field, never a database error', async () => {
  const s = await setup(context);
  const date = dayAhead();
  const urn = `urn:uuid:${s.resourceIds[0]}`;
  assertBadRequest(await newSlot(s, 'create', {}, { ...slot(date, '09:00'), ResourceIds: [urn] }));
  assertBadRequest(await newSlot(s, 'create', { CustomerId: `urn:uuid:${s.customerId}` }, slot(date, '10:00')));
  const booked = await create(s, slot(date, '11:00'));
  const moved = assertBadRequest(await operate(s, booked.id, 'reschedule', { ...slot(date, '12:00'), ResourceIds: [urn] }));
  assert.deepEqual(moved.errors.map((e) => e.path), ['ResourceIds.0']);
});
