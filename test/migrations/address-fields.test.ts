import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { sql } from 'kysely';
import { createTestContext, json } from '../helpers/app.js';
import type { TestContext } from '../helpers/app.js';

let context: TestContext;
before(async () => {
  context = await createTestContext();
});
after(() => context.close());

const MIGRATION = readFileSync(new URL('../../migrations/0008_address_fields.sql', import.meta.url), 'utf8');

test('0008 rewrites stored line1/line2 addresses to addressLine1/addressLine2 with ISO codes in capitals', async () => {
  const tenant = await context.world.tenant();
  const db = context.database.db;
  const old = randomUUID();
  const partial = randomUUID();
  const none = randomUUID();
  const insert = (id: string, address: unknown) =>
    sql`insert into locations (id, company_id, name, timezone_name, address)
        values (${id}, ${tenant.companyId}, 'Old', 'Europe/London', ${address === null ? null : JSON.stringify(address)}::jsonb)`.execute(db);
  await insert(old, { line1: '1 High Street', line2: 'Floor 2', city: 'London', postalCode: 'EC1A 1AA', country: 'gb', state: 'eng' });
  await insert(partial, { city: 'Pune', country: 'IN' });
  await insert(none, null);
  const already = randomUUID();
  await insert(already, { addressLine1: 'kept', country: 'GB' });
  const odd = randomUUID();
  await insert(odd, { country: { x: 1 } });

  await sql.raw(MIGRATION).execute(db);
  // Run twice: a row already in the new shape keeps its lines.
  await sql.raw(MIGRATION).execute(db);
  const stored = async (id: string) => (await sql<{ address: unknown }>`select address from locations where company_id = ${tenant.companyId} and id = ${id}`.execute(db)).rows[0]!.address;
  assert.deepEqual(await stored(already), { addressLine1: 'kept', country: 'GB' });
  assert.deepEqual(await stored(odd), { country: { x: 1 } }, 'only text values are put in capitals');

  const read = async (id: string) => json(await context.app.inject({ method: 'GET', url: `/v3/location/${id}`, headers: tenant.dashboard })).address;
  assert.deepEqual(await read(old), { addressLine1: '1 High Street', addressLine2: 'Floor 2', city: 'London', postalCode: 'EC1A 1AA', country: 'GB', state: 'ENG' });
  assert.deepEqual(await read(partial), { city: 'Pune', country: 'IN' });
  assert.equal(await read(none), null);
});
