// Partial indexes serve a prepared statement's generic plan, which PostgreSQL switches to after
// five runs when it looks no dearer, only when the statement's own text implies the index's
// predicate. So the statuses those predicates name are written into the statements as literals,
// not sent as parameters (issue 18, thirteenth pass: with the statuses as parameters, a booking's
// busy-time checks read every appointment row of the company). Each statement is captured as the
// app sends it, then its generic plan is asked for with sequential scans off (test/helpers/plans.ts):
// without the literal, no index can serve it at all.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { createAvailabilityRepository } from '../../src/modules/availability/repository.js';
import { createExternalCalendarRepository } from '../../src/modules/external-calendars/repository.js';
import { createMigrationJobRepository } from '../../src/modules/migration/repository.js';
import { createTestContext } from '../helpers/app.js';
import type { TestContext } from '../helpers/app.js';
import { genericPlanIndexes } from '../helpers/plans.js';
import { statementsDuring } from '../helpers/queries.js';
import type { Bookable, TenantFixture } from '../helpers/world.js';

let context: TestContext;
let tenant: TenantFixture;
let at: Bookable;
before(async () => {
  // A database of this file's own: a generic plan weighs `company_id = $1` by the average company
  // of the table's statistics, so in the database shared with other files (many companies with a
  // few appointments each) the busy read through the primary key could cost the same as through
  // the partial index, and which one the planner took depended on the files that ran before.
  context = await createTestContext({}, { sharedOwner: true, dedicatedDatabase: true });
  tenant = await context.world.tenant();
  at = await tenant.bookable({ resources: 2 });
});
after(() => context.close());

describe('generic plans use the partial indexes', () => {
  test('the busy-time reads: appointment_resources_busy_idx', async () => {
    const db = context.database.db;
    const { companyId } = tenant;
    // A year of the company's appointments outside the window, and the tables' statistics: the
    // planner then weighs reading all of them (the company's primary key) against the window's
    // (the partial index), as on a server, instead of near-empty paths whose costs tie.
    await sql`with made as (
        insert into appointments (company_id, id, location_id, service_id, status, start_time, end_time, duration, padding)
        select ${companyId}::uuid, gen_random_uuid(), ${at.locationId}::uuid, ${at.serviceId}::uuid, 'BK', t, t + interval '30 minutes', 30, 0
        from generate_series(timestamptz '2032-01-01 09:00+00', timestamptz '2032-12-31 09:00+00', interval '3 hours') as t
        returning id, start_time, end_time)
      insert into appointment_resources (company_id, appointment_id, resource_id, start_time, end_time, status, service_id, duration, padding)
      select ${companyId}::uuid, made.id, ${at.resourceIds[0]!}::uuid, made.start_time, made.end_time, 'BK', ${at.serviceId}::uuid, 30, 0 from made`.execute(db);
    await sql`analyze appointments`.execute(db);
    await sql`analyze appointment_resources`.execute(db);

    const repository = createAvailabilityRepository(db);
    const window = { from: new Date('2031-05-01T00:00:00Z'), to: new Date('2031-05-08T00:00:00Z'), now: new Date('2031-04-01T00:00:00Z') };
    const [engineWindow, dailyLimits, busy, catalog] = await statementsDuring(async () => {
      for (const limits of [false, true]) {
        await repository.engineWindow(companyId, {
          scope: { locationIds: [at.locationId], resourceIds: at.resourceIds, serviceIds: [at.serviceId] },
          ...window,
          fromDate: '2031-05-01',
          toDate: '2031-05-07',
          dailyLimits: limits,
        });
      }
      await repository.busyAppointmentsOfResources(companyId, at.resourceIds, window);
      // A booking's catalog read, which carries the pre-lock busy check of named resources.
      const slot = { start: window.from, end: new Date(window.from.getTime() + 3_600_000), now: window.now };
      await repository.target(companyId, { locationId: at.locationId, serviceId: at.serviceId, resourceIds: at.resourceIds, customerId: null, slot });
    });
    const on = (table: string, indexes: string[]) => indexes.filter((name) => name.startsWith(`${table}_`));
    assert.deepEqual(on('appointment_resources', await genericPlanIndexes(db, engineWindow!)), ['appointment_resources_busy_idx'], 'the engine window');
    // (Its service bookings part may read appointments through appointments_time_idx, which is not
    // partial: with one service, the planner finds it as good as appointments_service_day_idx.)
    assert.deepEqual(on('appointment_resources', await genericPlanIndexes(db, dailyLimits!)), ['appointment_resources_busy_idx'], 'the engine window with daily limits');
    assert.deepEqual(on('appointment_resources', await genericPlanIndexes(db, busy!)), ['appointment_resources_busy_idx'], 'the pre-lock busy check of a pool');
    assert.deepEqual(on('appointment_resources', await genericPlanIndexes(db, catalog!)), ['appointment_resources_busy_idx'], 'the pre-lock busy check with the catalog read');
  });

  test('the workers\' claims: external_calendar_connections_due_idx and migration_jobs_lease_idx', async () => {
    const db = context.database.db;
    const now = new Date();
    const [claimSyncs] = await statementsDuring(() =>
      createExternalCalendarRepository(db).claimDueSyncs({ now, staleBefore: new Date(now.getTime() - 60_000), instanceId: 'plans-test', limit: 5 }),
    );
    assert.ok((await genericPlanIndexes(db, claimSyncs!)).includes('external_calendar_connections_due_idx'), 'the due syncs\' claim');
    // The stale job's claim is a transaction: its first statement after begin finds the job.
    const claim = (await statementsDuring(() => createMigrationJobRepository(db).claimStale('plans-test', now.getTime(), 60_000))).find((statement) =>
      statement.text.includes('"migration_jobs"'),
    );
    assert.ok((await genericPlanIndexes(db, claim!)).includes('migration_jobs_lease_idx'), 'the stale job\'s claim');
  });
});
