// The status rules in SQL (src/modules/availability/status-filter.ts) select exactly what the
// domain functions (src/domain/appointment-status.ts) count: every status, with a hold expiring in
// the future, exactly now, in the past and never, under every rule, run on the database itself.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import {
  APPOINTMENT_STATUSES,
  BOOKING_LIMIT_STATUSES,
  CAPACITY_STATUSES,
  LIFETIME_LIMIT_STATUSES,
  countsUnder,
  holdsCapacity,
} from '../../../src/domain/appointment-status.js';
import type { AppointmentStatus } from '../../../src/domain/appointment-status.js';
import { countedUnder, holdingCapacity } from '../../../src/modules/availability/status-filter.js';
import type { DatabaseHandle } from '../../../src/platform/database/index.js';
import { openTestDatabase } from '../../helpers/app.js';

const NOW = Date.UTC(2026, 10, 24, 12, 0, 0);
const CASES = APPOINTMENT_STATUSES.flatMap((status) => [NOW + 1, NOW, NOW - 1, null].map((expiresAt) => ({ status, expiresAt })));

describe('status rules in SQL agree with the domain', () => {
  let database: DatabaseHandle;
  before(async () => {
    database = await openTestDatabase();
  });
  after(async () => {
    await database.close();
  });

  /** The indexes of CASES that the SQL filter selects, read from a VALUES table aliased `ar`. */
  async function selected(filter: ReturnType<typeof countedUnder>): Promise<number[]> {
    const rows = CASES.map((c, i) => sql`(${i}::int, ${c.status}::text, ${c.expiresAt === null ? null : new Date(c.expiresAt)}::timestamptz)`);
    const result = await sql<{ i: number }>`select ar.i from (values ${sql.join(rows)}) as ar(i, status, expires_at) where ${filter} order by ar.i`.execute(database.db);
    return result.rows.map((r) => Number(r.i));
  }

  const rules: Array<[string, readonly AppointmentStatus[]]> = [
    ['capacity', CAPACITY_STATUSES],
    ['bookingLimit', BOOKING_LIMIT_STATUSES],
    ['lifetime limits', LIFETIME_LIMIT_STATUSES],
    ['no status', []],
  ];
  for (const [name, statuses] of rules) {
    test(`${name}: countedUnder selects what countsUnder counts`, async () => {
      const expected = CASES.flatMap((c, i) => (countsUnder(statuses, c, NOW) ? [i] : []));
      assert.deepEqual(await selected(countedUnder(statuses, 'ar', new Date(NOW))), expected);
    });
  }

  test('holdingCapacity selects what holdsCapacity counts', async () => {
    const expected = CASES.flatMap((c, i) => (holdsCapacity(c, NOW) ? [i] : []));
    assert.ok(expected.length > 0);
    assert.deepEqual(await selected(holdingCapacity('ar', new Date(NOW))), expected);
  });
});
