// PUT /v3/public/appointment/:id/book with the custom fields the company's booking page asks
// (bookingPage.fields): stored on the appointment by the booking itself; a required one missing or
// a field the page does not ask is a 400 at `fieldN`, and nothing is written.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createTestContext, json } from '../../helpers/app.js';
import type { TestContext } from '../../helpers/app.js';
import { dayAhead, setup, slot } from '../appointments/fixtures.js';
import type { Setup } from '../appointments/fixtures.js';

let context: TestContext;
before(async () => {
  context = await createTestContext({}, { sharedOwner: true });
});
after(() => context.close());

const ORIGIN = 'https://book.example.com';
const FIELDS = [
  { name: 'field2', label: 'Reason for the visit', required: true },
  { name: 'field5', label: 'Anything we should know', required: false },
];

/** A bookable shop whose page asks FIELDS (or `fields`), with a public hold at 09:00 two weeks ahead. */
async function heldAtShop(fields: unknown[] = FIELDS): Promise<{ s: Setup; id: string }> {
  const s = await setup(context, { tenant: await context.world.tenant({ allowedDomains: ['book.example.com'] }) });
  const settings = await context.app.inject({ method: 'PUT', url: '/v3/company', headers: s.tenant.dashboard, payload: { bookingPage: { fields } } });
  assert.equal(settings.statusCode, 200, settings.body);
  const held = await context.app.inject({
    method: 'POST',
    url: `/v3/public/appointment/hold?LocationId=${s.locationId}&ServiceId=${s.serviceId}`,
    headers: { 'x-client-id': s.tenant.publicClientId, origin: ORIGIN },
    payload: { ResourceIds: [s.resourceIds[0]], ...slot(dayAhead(), '09:00') },
  });
  assert.equal(held.statusCode, 201, held.body);
  return { s, id: json(held).id };
}

function book(s: Setup, id: string, payload: Record<string, unknown>) {
  return context.app.inject({ method: 'PUT', url: `/v3/public/appointment/${id}/book`, headers: { 'x-client-id': s.tenant.publicClientId, origin: ORIGIN }, payload });
}

async function stored(s: Setup, id: string) {
  return context.database.db.selectFrom('appointments').select(['status', 'customerId', 'field1', 'field2', 'field5']).where('companyId', '=', s.tenant.companyId).where('id', '=', id).executeTakeFirstOrThrow();
}

const visitor = { name: 'Cara Jones', email: 'cara@example.com' };

describe('custom fields on the public book', { concurrency: true }, () => {
  test('the answers are stored on the booked appointment', async () => {
    const { s, id } = await heldAtShop();
    const response = await book(s, id, { ...visitor, field2: 'A loose filling', field5: 'Nervous of needles' });
    assert.equal(response.statusCode, 200, response.body);
    assert.equal(json(response).field2, 'A loose filling');
    const row = await stored(s, id);
    assert.deepEqual([row.status, row.field1, row.field2, row.field5], ['BK', null, 'A loose filling', 'Nervous of needles']);
  });

  test('an optional field may be left out', async () => {
    const { s, id } = await heldAtShop();
    const response = await book(s, id, { ...visitor, field2: 'Check-up' });
    assert.equal(response.statusCode, 200, response.body);
    assert.equal((await stored(s, id)).field5, null);
  });

  test('a required field missing or blank is 400 at its name, with its label, and nothing is written', async () => {
    const { s, id } = await heldAtShop();
    for (const extra of [{}, { field2: '   ' }]) {
      const response = await book(s, id, { ...visitor, ...extra });
      assert.equal(response.statusCode, 400, response.body);
      const body = json(response);
      assert.deepEqual(body.errors.map((e: { location: string; path: string }) => [e.location, e.path]), [['body', 'field2']], response.body);
      assert.match(body.errors[0].msg, /Reason for the visit is required/);
    }
    const row = await stored(s, id);
    assert.deepEqual([row.status, row.customerId, row.field2], ['IN', null, null], 'still a hold with no customer');
    const customers = await context.database.db.selectFrom('customers').select('id').where('companyId', '=', s.tenant.companyId).where('email', '=', visitor.email).execute();
    assert.deepEqual(customers, [], 'no customer was created');
  });

  test('a field the page does not ask is 400 at its name, and nothing is written', async () => {
    const { s, id } = await heldAtShop();
    const response = await book(s, id, { ...visitor, field2: 'Check-up', field1: 'staff only' });
    assert.equal(response.statusCode, 400, response.body);
    assert.deepEqual(json(response).errors.map((e: { location: string; path: string }) => [e.location, e.path]), [['body', 'field1']]);
    const row = await stored(s, id);
    assert.deepEqual([row.status, row.field1, row.field2], ['IN', null, null]);
  });

  test('a page that asks nothing refuses every field; a book without fields still works', async () => {
    const { s, id } = await heldAtShop([]);
    const refused = await book(s, id, { ...visitor, field3: 'x' });
    assert.equal(refused.statusCode, 400, refused.body);
    const booked = await book(s, id, visitor);
    assert.equal(booked.statusCode, 200, booked.body);
  });

  test('an answer longer than 255 characters is 400 as on the other routes', async () => {
    const { s, id } = await heldAtShop();
    const response = await book(s, id, { ...visitor, field2: 'x'.repeat(256) });
    assert.equal(response.statusCode, 400, response.body);
    assert.equal((await stored(s, id)).status, 'IN');
  });
});
