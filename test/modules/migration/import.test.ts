// POST /v3/migration/sync, end to end (core-interface.md "Migration and mapping", decisions.md
// "Migration", v1-source.md §5 mapping tables and the §6 example export with its "Expected v3
// result"; all in shared/spec/). Every import is read back through the v3 API, with the v3 ids that
// GET /v3/mapping/ids gives for the v1 ids. Each test has a company of its own.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { addMember, createTestContext, json, machineToken, TEST_SECRETS, uniqueEmail } from '../../helpers/app.js';
import type { TestContext } from '../../helpers/app.js';
import { startV1StandIn } from '../../helpers/v1-stand-in.js';
import { createMigrationService } from '../../../src/modules/migration/jobs.js';
import { createImporter } from '../../../src/modules/migration/importer.js';
import { createPlanChecks } from '../../../src/modules/migration/checks.js';
import { createMigrationJobRepository, createMigrationWrites } from '../../../src/modules/migration/repository.js';
import { createSealer } from '../../../src/platform/encryption.js';
import { createOutboundFetch } from '../../../src/platform/outbound/fetch.js';
import {
  EXAMPLE_CREATED,
  NEW_YORK,
  comingWeekday,
  counts,
  gateTo,
  daysFromToday,
  exampleIds,
  importExport,
  mapping,
  read,
  syncRequest,
  utc,
  v1Appointment,
  v1Customer,
  v1Example,
} from './import-fixtures.js';
import type { Report } from './import-fixtures.js';

let context: TestContext;
before(async () => {
  context = await createTestContext();
});
after(() => context.close());

/** The location's opening hours and service 301's weekly hours in the §6 example (Sunday closed). */
const STUDIO_HOURS = {
  mon: [{ start: '09:00', end: '19:00' }],
  tue: [{ start: '09:00', end: '21:00' }],
  wed: [{ start: '09:00', end: '19:00' }],
  thu: [{ start: '09:00', end: '21:00' }],
  fri: [{ start: '09:00', end: '17:00' }],
  sat: [{ start: '10:00', end: '14:00' }],
};
const NO_CUSTOM_FIELDS = Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`field${i + 1}`, null]));
/** Rule 4: v1 service fields that are not migrated, so no v3 answer carries them. */
const RULE_4_FIELDS = ['serviceGroupId', 'serviceGroupName', 'calendarId', 'calendarResourceGroupId', 'mediaPageUrl', 'defaultService', 'consumerPadding', 'maxGroupSize'];

/** The parts of a v3 record a test compares (ids and timestamps of the record itself aside). */
function fields(record: Record<string, unknown>, keys: string[]) {
  return Object.fromEntries(keys.map((key) => [key, record[key]]));
}

test('the §6 example export lands as its "Expected v3 result", every mapping row of §5 read back through the v3 API', async () => {
  const tenant = await context.world.tenant();
  const headers = tenant.dashboard;
  const report = await importExport(context, headers, v1Example());
  assert.deepEqual(report, { dryRun: false, created: EXAMPLE_CREATED, skipped: counts(), failed: [], ignored: counts(), warnings: [], warningsOmitted: 0 });

  const ids = await exampleIds(context, headers);

  // §5.2 location: name, phone, email, the six address keys, timezoneIana → timezoneName,
  // businessHours → weeklyAvailability (Sunday isOpen false → no day), bookingTimerMins → bookingTimerMinutes.
  const location = await read(context, headers, `/v3/location/${ids.location}`);
  assert.deepEqual(fields(location, ['name', 'phone', 'email', 'address', 'timezoneName', 'weeklyAvailability', 'bookingTimerMinutes', 'legacyId']), {
    name: 'Downtown Studio',
    phone: '6175550100',
    email: 'front@studio.example',
    address: { addressLine1: '10 Main St', addressLine2: 'Suite 2', city: 'Boston', state: 'MA', postalCode: '02110', country: 'US' },
    timezoneName: NEW_YORK,
    weeklyAvailability: STUDIO_HOURS,
    bookingTimerMinutes: 10,
    legacyId: '12',
  });

  // §5.1 service 301, rule 1 field by field; type "1" → schedule (rule 2); roundRobin 2 → BALANCED
  // (rule 3); maxCapacity 1 → bookingsPerSlot; bookAheadUnit 2 → weeks; imageUrl "" → none.
  const service301 = await read(context, headers, `/v3/service/${ids.service301}`);
  assert.deepEqual(
    fields(service301, [
      'name', 'description', 'duration', 'availabilityType', 'weeklyAvailability',
      'durationSelect', 'durationMin', 'durationMax', 'durationInterval',
      'bookAheadUnit', 'bookAheadValue', 'bookInAdvance', 'bookingLimit', 'bookingInterval', 'padding', 'bookingsPerSlot',
      'dailyBookingLimitCount', 'dailyBookingLimitMinutes', 'maxBookingLimit', 'maxResourceBookingLimit',
      'feeAmount', 'feeTaxable', 'cancellationFeeAmount', 'cancellationFeeTaxable', 'nonRefundable',
      'imageUrl', 'showOnline', 'roundRobin', 'allowPaddingOverflow', 'ignoreExternalEvents', 'locationIds', 'legacyId',
    ]),
    {
      name: 'Personal Training',
      description: 'One-to-one session',
      duration: 60,
      availabilityType: 'schedule',
      weeklyAvailability: STUDIO_HOURS,
      durationSelect: true,
      durationMin: 30,
      durationMax: 90,
      durationInterval: 30,
      bookAheadUnit: 'weeks',
      bookAheadValue: 8,
      bookInAdvance: 120,
      bookingLimit: 2,
      bookingInterval: 30,
      padding: 15,
      bookingsPerSlot: 1,
      dailyBookingLimitCount: 0,
      dailyBookingLimitMinutes: 0,
      maxBookingLimit: 0,
      maxResourceBookingLimit: 0,
      feeAmount: 80,
      feeTaxable: true,
      cancellationFeeAmount: 20,
      cancellationFeeTaxable: false,
      nonRefundable: false,
      imageUrl: null,
      showOnline: true,
      roundRobin: 'BALANCED',
      // No v1 source: v3's defaults.
      allowPaddingOverflow: false,
      ignoreExternalEvents: false,
      locationIds: [ids.location],
      legacyId: '301',
    },
  );
  // v1 services have no field1…field10 (§7.5): they stay empty.
  assert.deepEqual(fields(service301, Object.keys(NO_CUSTOM_FIELDS)), NO_CUSTOM_FIELDS);

  // Service 302: type "2" → allocation, roundRobin 0 → NONE, maxCapacity 12 → bookingsPerSlot 12.
  const service302 = await read(context, headers, `/v3/service/${ids.service302}`);
  assert.deepEqual(
    fields(service302, [
      'name', 'description', 'duration', 'availabilityType', 'weeklyAvailability', 'durationSelect', 'durationMin', 'durationMax', 'durationInterval',
      'bookAheadUnit', 'bookAheadValue', 'bookInAdvance', 'bookingLimit', 'bookingInterval', 'padding', 'bookingsPerSlot',
      'feeAmount', 'feeTaxable', 'cancellationFeeAmount', 'cancellationFeeTaxable', 'nonRefundable', 'imageUrl', 'showOnline', 'roundRobin', 'locationIds', 'legacyId',
    ]),
    {
      name: 'Evening Yoga Class',
      description: 'Group class',
      duration: 90,
      availabilityType: 'allocation',
      weeklyAvailability: { tue: [{ start: '18:00', end: '21:00' }], thu: [{ start: '18:00', end: '21:00' }] },
      durationSelect: false,
      durationMin: 0,
      durationMax: 0,
      durationInterval: 0,
      bookAheadUnit: 'days',
      bookAheadValue: 30,
      bookInAdvance: 0,
      bookingLimit: 0,
      bookingInterval: 90,
      padding: 0,
      bookingsPerSlot: 12,
      feeAmount: 15,
      feeTaxable: false,
      cancellationFeeAmount: 0,
      cancellationFeeTaxable: false,
      nonRefundable: true,
      imageUrl: null,
      showOnline: true,
      roundRobin: 'NONE',
      locationIds: [ids.location],
      legacyId: '302',
    },
  );
  for (const service of [service301, service302]) {
    for (const field of RULE_4_FIELDS) assert.equal(field in service, false, `rule 4: ${field} is not migrated`);
  }

  // §5.3 resources: 1501 offers only 302 and keeps its weekly hours although it works by
  // allocations (rule 5); 1502 lists no services, so it offers every service of location 12.
  const resource1501 = await read(context, headers, `/v3/resource/${ids.resource1501}`);
  const resourceKeys = ['name', 'email', 'phone', 'timezoneName', 'weeklyAvailability', 'bookingLimit', 'locationIds', 'serviceIds', 'legacyId'];
  assert.deepEqual(fields(resource1501, resourceKeys), {
    name: 'Ana Lopez',
    email: 'ana@studio.example',
    phone: null,
    timezoneName: NEW_YORK,
    weeklyAvailability: { tue: [{ start: '17:00', end: '21:00' }], thu: [{ start: '17:00', end: '21:00' }] },
    bookingLimit: 0,
    locationIds: [ids.location],
    serviceIds: [ids.service302],
    legacyId: '1501',
  });
  const resource1502 = await read(context, headers, `/v3/resource/${ids.resource1502}`);
  const weekdays9to5 = Object.fromEntries(['mon', 'tue', 'wed', 'thu', 'fri'].map((day) => [day, [{ start: '09:00', end: '17:00' }]]));
  assert.deepEqual(fields({ ...resource1502, serviceIds: [...resource1502.serviceIds].sort() }, resourceKeys), {
    name: 'Ben Carter',
    email: 'ben@studio.example',
    phone: null,
    timezoneName: NEW_YORK,
    weeklyAvailability: weekdays9to5,
    bookingLimit: 0,
    locationIds: [ids.location],
    serviceIds: [ids.service301, ids.service302].sort(),
    legacyId: '1502',
  });

  // §5.4: allocation 7001 (W every week, weekdays "24") → one weekly row each for tue and thu in
  // the scope (12, 302, 1501), bookingLimit 12 → bookingsPerSlot 12; mapping gives both rows.
  const scope = `LocationId=${ids.location}&ServiceId=${ids.service302}&ResourceId=${ids.resource1501}`;
  const weekly = (await read(context, headers, `/v3/weeklyAllocation?${scope}`)).data as Array<Record<string, unknown>>;
  assert.deepEqual(
    weekly.map((row) => fields(row, ['day', 'start', 'end', 'bookingsPerSlot', 'legacyId', 'locationId', 'serviceId', 'resourceId'])).sort((a, b) => String(a.day).localeCompare(String(b.day))),
    [
      { day: 'thu', start: '18:00', end: '19:30', bookingsPerSlot: 12, legacyId: '7001', locationId: ids.location, serviceId: ids.service302, resourceId: ids.resource1501 },
      { day: 'tue', start: '18:00', end: '19:30', bookingsPerSlot: 12, legacyId: '7001', locationId: ids.location, serviceId: ids.service302, resourceId: ids.resource1501 },
    ],
  );
  assert.deepEqual([...ids.allocations7001].sort(), weekly.map((row) => row.id as string).sort());
  assert.deepEqual((await read(context, headers, `/v3/singleAllocation?${scope}`)).data, []);

  // §5.5 / rule 6: block 88001 → one WEEKLY recurring block of resource 1502.
  const blocks = (await read(context, headers, `/v3/unavailability/recurringBlock?ResourceId=${ids.resource1502}`)).data as Array<Record<string, unknown>>;
  assert.deepEqual(
    blocks.map((row) =>
      fields(row, ['name', 'frequency', 'interval', 'weekdays', 'dayOfMonth', 'startDate', 'endDate', 'startTime', 'endTime', 'iana', 'resourceId', 'locationId', 'serviceId', 'legacyId']),
    ),
    [
      {
        name: 'Lunch break',
        frequency: 'WEEKLY',
        interval: 1,
        weekdays: [1, 2, 3, 4, 5],
        dayOfMonth: null,
        startDate: '2025-01-06',
        // 9999-12-31: no end.
        endDate: null,
        startTime: '12:00',
        endTime: '13:00',
        iana: NEW_YORK,
        resourceId: ids.resource1502,
        locationId: null,
        serviceId: null,
        legacyId: '88001',
      },
    ],
  );
  assert.deepEqual((await read(context, headers, `/v3/unavailability/recurringBlock?ResourceId=${ids.resource1501}`)).data, []);
});

test('a second run creates nothing and skips what the first created; after a service is deleted by hand, a run recreates only it', async () => {
  const tenant = await context.world.tenant();
  const headers = tenant.dashboard;
  const first = await importExport(context, headers, v1Example());
  assert.deepEqual(first.created, EXAMPLE_CREATED);
  const before = await exampleIds(context, headers);

  const second = await importExport(context, headers, v1Example());
  assert.deepEqual(second, { dryRun: false, created: counts(), skipped: first.created, failed: [], ignored: counts(), warnings: [], warningsOmitted: 0 });
  assert.deepEqual(await exampleIds(context, headers), before);

  // The documented way to refresh one migrated record: delete (archive) it, then run again.
  const removed = await context.app.inject({ method: 'DELETE', url: `/v3/service/${before.service301}`, headers });
  assert.equal(removed.statusCode, 204, removed.body);
  const third = await importExport(context, headers, v1Example());
  assert.deepEqual(third.created, counts({ services: 1 }));
  assert.deepEqual(third.skipped, counts({ locations: 1, services: 1, resources: 2, weeklyAllocations: 2, recurringBlocks: 1 }));
  assert.deepEqual(third.failed, []);
  const after = await exampleIds(context, headers);
  assert.notEqual(after.service301, before.service301);
  assert.deepEqual({ ...after, service301: before.service301 }, before);
  const recreated = await read(context, headers, `/v3/service/${after.service301}`);
  assert.deepEqual(fields(recreated, ['name', 'legacyId', 'availabilityType', 'roundRobin', 'locationIds']), {
    name: 'Personal Training',
    legacyId: '301',
    availabilityType: 'schedule',
    roundRobin: 'BALANCED',
    locationIds: [before.location],
  });
  const services = await read(context, headers, '/v3/services?limit=100');
  assert.equal(services.total, 2, 'the archived service is not listed; the recreated one is');
});

async function assertExampleOnce(headers: Record<string, string>) {
  const ids = await exampleIds(context, headers);
  assert.equal(ids.allocations7001.length, 2);
  assert.equal((await read(context, headers, '/v3/locations?limit=100')).total, 1);
  assert.equal((await read(context, headers, '/v3/services?limit=100')).total, 2);
  assert.equal((await read(context, headers, '/v3/resources?limit=100')).total, 2);
  assert.equal((await read(context, headers, `/v3/weeklyAllocation?LocationId=${ids.location}&ServiceId=${ids.service302}&ResourceId=${ids.resource1501}`)).data.length, 2);
  assert.equal((await read(context, headers, `/v3/unavailability/recurringBlock?ResourceId=${ids.resource1502}`)).data.length, 1);
}

test('two runs for one company at once: one imports, the other is refused with 409 naming the running job; nothing is created twice', async () => {
  const tenant = await context.world.tenant();
  const headers = tenant.dashboard;
  const body = { source: { type: 'export', data: v1Example() } };
  const answers = await Promise.all([syncRequest(context, headers, body), syncRequest(context, headers, body)]);
  const statuses = answers.map((a) => a.statusCode).sort();
  if (statuses[1] === 409) {
    assert.deepEqual(statuses, [200, 409]);
    const refused = json(answers.find((a) => a.statusCode === 409)!);
    assert.equal(refused.success, false);
    assert.match(refused.message, /already running \(job [0-9a-f-]{36}\)/);
    assert.deepEqual(json<Report>(answers.find((a) => a.statusCode === 200)!).created, EXAMPLE_CREATED);
  } else {
    // The first run finished before the second started: the second only skipped.
    assert.deepEqual(statuses, [200, 200]);
    const reports = answers.map((a) => json<Report>(a));
    assert.deepEqual(reports.map((r) => r.created).sort((a, b) => b.locations - a.locations), [EXAMPLE_CREATED, counts()]);
  }
  await assertExampleOnce(headers);
});

test('while a run is going, a second run is refused with 409 naming its job and a dry run is not; nothing is created twice', async () => {
  const tenant = await context.world.tenant();
  const headers = tenant.dashboard;
  // A run from the v1 API (a job, answered 202) whose token request is held at a gate until the
  // test opens it: the run is certainly still going while the other requests arrive.
  const v1 = await startV1StandIn();
  const gate = await gateTo(v1.tokenUrl);
  try {
    const started = await syncRequest(context, headers, {
      source: { type: 'api', baseUrl: v1.baseUrl, tokenUrl: gate.url, clientId: v1.clientId, clientSecret: v1.clientSecret },
    });
    assert.equal(started.statusCode, 202, started.body);
    const job = json(started);
    assert.equal(started.headers.location, `/v3/migration/jobs/${job.id}`);
    assert.equal(job.status, 'running');
    await gate.reached;

    const refused = await syncRequest(context, headers, { source: { type: 'export', data: v1Example() } });
    assert.equal(refused.statusCode, 409, refused.body);
    const body = json(refused);
    assert.equal(body.success, false);
    assert.equal(body.message, `A migration of this company is already running (job ${job.id}); wait for it to finish (GET /v3/migration/jobs/${job.id}) and run again`);
    // A run answered as a job (Prefer: respond-async) is refused the same way.
    const refusedAsync = await syncRequest(context, headers, { source: { type: 'export', data: v1Example() } }, { prefer: 'respond-async' });
    assert.equal(refusedAsync.statusCode, 409, refusedAsync.body);
    // A dry run writes nothing, so it is never refused; the company is still empty.
    const dry = await syncRequest(context, headers, { source: { type: 'export', data: v1Example() }, dryRun: true });
    assert.equal(dry.statusCode, 200, dry.body);
    assert.deepEqual(json<Report>(dry).created, EXAMPLE_CREATED);
    assert.equal((await read(context, headers, `/v3/migration/jobs/${job.id}`)).status, 'running');

    gate.open();
    await context.app.migration.drain();
    const done = await read(context, headers, `/v3/migration/jobs/${job.id}`);
    assert.equal(done.status, 'succeeded', JSON.stringify(done));
    assert.deepEqual(done.report.created, EXAMPLE_CREATED);
    assert.deepEqual(done.report.failed, []);
  } finally {
    gate.open();
    await context.app.migration.drain();
    await gate.close();
    await v1.close();
  }
  await assertExampleOnce(headers);
  // The company is free again: a new run only skips.
  assert.deepEqual((await importExport(context, headers, v1Example())).skipped, EXAMPLE_CREATED);
});

test('a long run does not hold the server: while it runs, a second run is answered 409 and reads are answered', async () => {
  const tenant = await context.world.tenant();
  const headers = tenant.dashboard;
  // 200 more resources: each is a transaction of its own, so the run lasts hundreds of them.
  const data = v1Example();
  const [ben] = data.resources.slice(1) as [Record<string, unknown>];
  for (let i = 0; i < 200; i++) data.resources.push({ ...ben, id: String(60_000 + i), name: `Coach ${i}`, email: null });
  const started = await syncRequest(context, headers, { source: { type: 'export', data } }, { prefer: 'respond-async' });
  assert.equal(started.statusCode, 202, started.body);
  assert.equal(started.headers['preference-applied'], 'respond-async');
  const job = json(started);
  try {
    const refused = await syncRequest(context, headers, { source: { type: 'export', data: v1Example() } });
    assert.equal(refused.statusCode, 409, refused.body);
    assert.match(json(refused).message, new RegExp(`already running \\(job ${job.id}\\)`));
    // Reads are answered while it runs; the totals appear once the export is planned.
    let progress = await read(context, headers, `/v3/migration/jobs/${job.id}`);
    for (let i = 0; i < 200 && progress.status === 'running' && progress.progress.resources.total === 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      progress = await read(context, headers, `/v3/migration/jobs/${job.id}`);
    }
    assert.equal(progress.progress.resources.total, 202);
  } finally {
    await context.app.migration.drain();
  }
  const done = await read(context, headers, `/v3/migration/jobs/${job.id}`);
  assert.equal(done.status, 'succeeded');
  assert.deepEqual(done.report.created, { ...EXAMPLE_CREATED, resources: 202 });
  assert.deepEqual(done.progress.resources, { total: 202, processed: 202, created: 202, skipped: 0, failed: 0 });
  assert.equal((await read(context, headers, '/v3/resources?limit=1')).total, 202);
});

test('a dry run reports exactly what the run then does, and writes nothing', async () => {
  const tenant = await context.world.tenant();
  const headers = tenant.dashboard;
  const data = v1Example();
  const when = comingWeekday(NEW_YORK, 1);
  data.customers = [v1Customer('8001', uniqueEmail('dry'))];
  data.appointments = [v1Appointment('9001', when, '10:00', '11:00', { customerId: '8001' }), v1Appointment('9002', daysFromToday(NEW_YORK, -5), '10:00', '11:00')];

  const dry = await importExport(context, headers, data, { dryRun: true });
  assert.equal(dry.dryRun, true);
  assert.deepEqual(dry.created, { ...EXAMPLE_CREATED, customers: 1, appointments: 1 });
  assert.deepEqual(dry.ignored, counts({ appointments: 1 }));
  assert.deepEqual(await mapping(context, headers, { locationId: '12', serviceId: '301', resourceId: '1501', customerId: '8001', appointmentId: '9001', allocationId: '7001' }), {
    locationId: null,
    serviceId: null,
    resourceId: null,
    customerId: null,
    appointmentId: null,
    allocationId: [],
  });
  assert.equal((await read(context, headers, '/v3/locations?limit=1')).total, 0);
  assert.equal((await read(context, headers, '/v3/customers?limit=1')).total, 0);

  const real = await importExport(context, headers, data);
  assert.deepEqual({ ...real, dryRun: true }, dry);
});

test('rule 5: a failure while writing an allocation scope rolls the whole set back; the rest lands and a later run completes it', async () => {
  const tenant = await context.world.tenant();
  const headers = tenant.dashboard;
  const db = context.database.db;
  const seenInside: number[] = [];
  const faulty = createMigrationService({
    db,
    jobs: createMigrationJobRepository(db),
    importer: createImporter({ db, writes: createMigrationWrites(db) }),
    checkPlan: createPlanChecks(),
    sealer: createSealer(TEST_SECRETS.CREDENTIAL_ENCRYPTION_SECRET),
    fetch: createOutboundFetch({ timeoutMs: 1000, allowLoopbackHttp: false }),
    config: { syncRecordLimit: 2000, leaseSeconds: 60 },
    instanceId: `test-${randomUUID()}`,
    // After the set's rows are inserted (inside its transaction): note them, then fail it.
    fault: async (kind, trx) => {
      if (kind !== 'weeklyAllocations') return;
      const rows = await trx.selectFrom('weeklyAllocations').select('id').where('companyId', '=', tenant.companyId).execute();
      seenInside.push(rows.length);
      // A database refusal (check_violation): the records fail, the run goes on (importer.ts isRecordRefusal).
      throw Object.assign(new Error('injected failure after the inserts'), { code: '23514' });
    },
  });
  const { report } = await faulty.runLocal(tenant.companyId, v1Example(), { dryRun: false });
  // The set (both weekdays of 7001) was written, then rolled back; so was the retry of 7001 alone.
  assert.deepEqual(seenInside, [2, 2]);
  assert.deepEqual(report.failed, [{ kind: 'weeklyAllocations', legacyId: '7001', message: 'injected failure after the inserts' }]);
  assert.deepEqual(report.created, { ...EXAMPLE_CREATED, weeklyAllocations: 0 });

  const ids = await exampleIds(context, headers);
  assert.deepEqual(ids.allocations7001, [], 'no weekly row of the scope survived');
  const scope = `LocationId=${ids.location}&ServiceId=${ids.service302}&ResourceId=${ids.resource1501}`;
  assert.deepEqual((await read(context, headers, `/v3/weeklyAllocation?${scope}`)).data, []);
  assert.equal((await read(context, headers, `/v3/unavailability/recurringBlock?ResourceId=${ids.resource1502}`)).data.length, 1);

  const again = await importExport(context, headers, v1Example());
  assert.deepEqual(again.created, counts({ weeklyAllocations: 2 }));
  assert.deepEqual(again.skipped, counts({ locations: 1, services: 2, resources: 2, recurringBlocks: 1 }));
  assert.deepEqual(again.failed, []);
  const weekly = (await read(context, headers, `/v3/weeklyAllocation?${scope}`)).data as Array<{ day: string; bookingsPerSlot: number }>;
  assert.deepEqual(weekly.map((w) => `${w.day} ${w.bookingsPerSlot}`).sort(), ['thu 12', 'tue 12']);
  assert.equal((await exampleIds(context, headers)).allocations7001.length, 2);
});

test('one bad record fails alone, with its kind, v1 id and a readable reason; the others land', async () => {
  const tenant = await context.world.tenant();
  const headers = tenant.dashboard;
  const data = v1Example();
  const [personalTraining] = data.services as [Record<string, unknown>];
  data.services.push(
    { ...personalTraining, id: '303', name: 'Odd fee', feeAmount: 12.345 },
    { ...personalTraining, id: '304', name: 'Team meeting', type: '3' },
  );
  const [ana] = data.resources as [Record<string, unknown>];
  data.resources.push({ ...ana, id: '1503', name: 'Cleo Moon', timezoneIana: 'Mars/Olympus_Mons', timezoneId: '' });
  const when = comingWeekday(NEW_YORK, 1);
  data.appointments = [v1Appointment('9101', when, '10:00', '11:00'), v1Appointment('9102', when, '14:00', '15:00', { serviceId: '999' })];

  const report = await importExport(context, headers, data);
  const byId = new Map(report.failed.map((note) => [note.legacyId, note]));
  assert.deepEqual([...byId.keys()].sort(), ['1503', '303', '304', '9102']);
  assert.equal(byId.get('303')!.kind, 'services');
  assert.match(byId.get('303')!.message, /feeAmount/);
  assert.equal(byId.get('304')!.kind, 'services');
  assert.match(byId.get('304')!.message, /type 3 \(Meeting\)/);
  assert.equal(byId.get('1503')!.kind, 'resources');
  assert.match(byId.get('1503')!.message, /Mars\/Olympus_Mons/);
  assert.equal(byId.get('9102')!.kind, 'appointments');
  assert.match(byId.get('9102')!.message, /service 999/);
  assert.deepEqual(report.created, { ...EXAMPLE_CREATED, appointments: 1 });

  const found = await mapping(context, headers, { serviceId: '303', resourceId: '1503', appointmentId: '9102' });
  assert.deepEqual(found, { serviceId: null, resourceId: null, appointmentId: null });
  assert.equal((await mapping(context, headers, { serviceId: '304' })).serviceId, null);
  await exampleIds(context, headers);
  assert.equal(typeof (await mapping(context, headers, { appointmentId: '9101' })).appointmentId, 'string');
});

test('customers are matched by email within the company; appointments from today on keep their status and their time, past ones are ignored', async () => {
  const tenant = await context.world.tenant();
  const headers = tenant.dashboard;
  // A v3 customer made before the migration, with the v1 customer's email in other letters' case.
  const email = uniqueEmail('cara');
  const existingId = await tenant.customer({ firstName: 'Cara', lastName: 'Existing', email: email.toUpperCase() });
  const newEmail = uniqueEmail('dan');

  const monday = comingWeekday(NEW_YORK, 1);
  const data = v1Example();
  data.customers = [v1Customer('8001', email), v1Customer('8002', newEmail, { firstname: 'Dan', lastname: 'Ng', contact: { mobilePhone: '6175550199' } })];
  data.appointments = [
    v1Appointment('9201', monday, '10:00', '11:00', { status: 'BK', customerId: '8001', notes: 'Knee rehab' }),
    v1Appointment('9202', monday, '14:00', '15:00', { status: 'RS', customerId: '8002' }),
    v1Appointment('9203', monday, '15:30', '16:30', { status: 'CN', customerId: '8002' }),
    v1Appointment('9204', daysFromToday(NEW_YORK, -3), '10:00', '11:00', { customerId: '8001' }),
    v1Appointment('9205', monday, '16:00', '17:00', { status: 'IN', customerId: '8002' }),
  ];
  const report = await importExport(context, headers, data);
  assert.deepEqual(report.created, { ...EXAMPLE_CREATED, customers: 1, appointments: 3 });
  assert.deepEqual(report.skipped, counts({ customers: 1 }));
  // The past appointment and the v1 hold (IN) are left behind on purpose.
  assert.deepEqual(report.ignored, counts({ appointments: 2 }));
  assert.deepEqual(report.failed, []);

  const ids = await mapping(context, headers, { customerId: '8001' });
  assert.equal(ids.customerId, existingId, 'the existing customer took the v1 id');
  const existing = await read(context, headers, `/v3/customer/${existingId}`);
  assert.deepEqual(fields(existing, ['firstName', 'lastName', 'legacyId']), { firstName: 'Cara', lastName: 'Existing', legacyId: '8001' });
  const danId = (await mapping(context, headers, { customerId: '8002' })).customerId!;
  const dan = await read(context, headers, `/v3/customer/${danId}`);
  assert.deepEqual(fields(dan, ['firstName', 'lastName', 'email', 'phone', 'legacyId']), { firstName: 'Dan', lastName: 'Ng', email: newEmail, phone: '6175550199', legacyId: '8002' });
  assert.equal((await read(context, headers, `/v3/customers?limit=100`)).total, 2);

  const example = await exampleIds(context, headers);
  const appointment = async (legacyId: string) => {
    const id = (await mapping(context, headers, { appointmentId: legacyId })).appointmentId;
    return id ? read(context, headers, `/v3/appointment/${id}`) : null;
  };
  const keys = ['status', 'startTime', 'endTime', 'duration', 'padding', 'customerId', 'resourceIds', 'serviceId', 'locationId', 'timezoneName', 'notes', 'legacyId'];
  const common = { duration: 60, padding: 15, resourceIds: [example.resource1502], serviceId: example.service301, locationId: example.location, timezoneName: NEW_YORK };
  assert.deepEqual(fields((await appointment('9201'))!, keys), {
    ...common,
    status: 'BK',
    startTime: utc(monday, '10:00', NEW_YORK),
    endTime: utc(monday, '11:00', NEW_YORK),
    customerId: existingId,
    notes: 'Knee rehab',
    legacyId: '9201',
  });
  // Each imported appointment carries the copy of its resource ids (migrations/0017), as its resource rows say.
  const imported = await context.database.db
    .selectFrom('appointments as a')
    .select(['a.id', sql<string[] | null>`a.resource_ids::text[]`.as('stored'), sql<string[]>`array(select ar.resource_id::text from appointment_resources as ar where ar.company_id = a.company_id and ar.appointment_id = a.id order by ar.resource_id)`.as('rows')])
    .where('a.companyId', '=', (await appointment('9201'))!.companyId)
    .where('a.legacyId', 'is not', null)
    .execute();
  assert.equal(imported.length, 3);
  for (const row of imported) assert.deepEqual(row.stored, row.rows, row.id);
  assert.equal((await appointment('9202'))!.status, 'RS');
  assert.equal((await appointment('9203'))!.status, 'CN');
  assert.equal(await appointment('9204'), null);
  assert.equal(await appointment('9205'), null);

  // Their time stays taken. Ben Carter (the only resource for 301) works 09:00-17:00 with lunch
  // 12:00-13:00; slots of 60 min every 30 min, each followed by 15 min of padding that must fit
  // before 17:00. Without appointments: 09:00 … 10:30 and 13:00 … 15:30 (see the availability test).
  // BK 10:00-11:00 (+15 padding to 11:15) takes 09:00-11:00 (10:00 is its own, full at
  // bookingsPerSlot 1); RS 14:00-15:00 (+15) takes 13:00-15:00; CN 15:30 holds nothing.
  const slots = await read(context, headers, `/v3/availability?LocationId=${example.location}&ServiceId=${example.service301}&startDate=${monday}`);
  assert.deepEqual(
    slots.availableTimes.map((slot: { startTime: string }) => slot.startTime),
    [utc(monday, '15:30', NEW_YORK)],
  );
});

test('time zones: a fractional-offset zone, zones given only by their Windows name, and wall-clock times across a US daylight-saving change', async () => {
  const tenant = await context.world.tenant();
  const headers = tenant.dashboard;
  const data = v1Example();
  const [studio] = data.locations as [Record<string, unknown>];
  data.locations.push(
    { ...studio, id: '20', name: 'Pune', timezoneIana: 'Asia/Kolkata', timezoneId: '', primaryBusiness: false },
    { ...studio, id: '21', name: 'Darwin', timezoneIana: '', timezoneId: 'AUS Central Standard Time', primaryBusiness: false },
    { ...studio, id: '22', name: 'Brooklyn', timezoneIana: null, timezoneId: 'Eastern Standard Time', primaryBusiness: false },
  );
  // A resource naming no zone works in its location's.
  data.resources.push({ object: 'resource', id: '1520', locationId: '20', name: 'Priya Rao', services: [] }, { object: 'resource', id: '1521', locationId: '21', name: 'Dan Murray', services: [] });

  // The next US daylight-saving change from tomorrow on (second Sunday of March, first of November).
  const nthSunday = (year: number, month: number, n: number) => {
    const first = new Date(Date.UTC(year, month - 1, 1)).getUTCDay();
    return new Date(Date.UTC(year, month - 1, 1 + ((7 - first) % 7) + 7 * (n - 1))).toISOString().slice(0, 10);
  };
  const tomorrow = daysFromToday(NEW_YORK, 1);
  const year = Number(tomorrow.slice(0, 4));
  const changes = [nthSunday(year, 3, 2), nthSunday(year, 11, 1), nthSunday(year + 1, 3, 2)].filter((date) => date >= tomorrow);
  const change = changes[0]!;
  const springForward = change.slice(5, 7) === '03';
  // Spring forward: 01:30 EST (-05:00) to 03:30 EDT (-04:00) is one hour. Fall back: 00:30 EDT to
  // 02:30 EST is three hours.
  const dst = springForward
    ? { start: '01:30', end: '03:30', utcStart: `${change}T06:30:00.000Z`, utcEnd: `${change}T07:30:00.000Z`, minutes: 60 }
    : { start: '00:30', end: '02:30', utcStart: `${change}T04:30:00.000Z`, utcEnd: `${change}T07:30:00.000Z`, minutes: 180 };

  const when = daysFromToday(NEW_YORK, 10);
  data.appointments = [
    v1Appointment('9301', change, dst.start, dst.end, { resourceId: null }),
    // 09:00 in Kolkata (+05:30) and Darwin (+09:30, no daylight saving), wall time without an offset.
    v1Appointment('9302', when, '09:00', '10:00', { locationId: '20', resourceId: '1520' }),
    v1Appointment('9303', when, '09:00', '10:00', { locationId: '21', resourceId: '1521' }),
    // An explicit offset is an exact instant whatever the location's zone.
    { ...v1Appointment('9304', when, '00:00', '00:00', { locationId: '20', resourceId: '1520' }), startDateTime: `${when}T18:15:00+05:30`, endDateTime: `${when}T19:00:00+05:30` },
  ];
  const report = await importExport(context, headers, data);
  assert.deepEqual(report.failed, []);
  assert.deepEqual(report.created, { ...EXAMPLE_CREATED, locations: 4, resources: 4, appointments: 4 });

  const zoneOf = async (legacyId: string) => (await read(context, headers, `/v3/location/${(await mapping(context, headers, { locationId: legacyId })).locationId}`)).timezoneName;
  assert.equal(await zoneOf('20'), 'Asia/Kolkata');
  assert.equal(await zoneOf('21'), 'Australia/Darwin');
  assert.equal(await zoneOf('22'), NEW_YORK);
  const resourceZone = async (legacyId: string) => (await read(context, headers, `/v3/resource/${(await mapping(context, headers, { resourceId: legacyId })).resourceId}`)).timezoneName;
  assert.equal(await resourceZone('1520'), 'Asia/Kolkata');
  assert.equal(await resourceZone('1521'), 'Australia/Darwin');

  const times = async (legacyId: string) => {
    const found = await read(context, headers, `/v3/appointment/${(await mapping(context, headers, { appointmentId: legacyId })).appointmentId}`);
    return { startTime: found.startTime, endTime: found.endTime, duration: found.duration, timezoneName: found.timezoneName };
  };
  assert.deepEqual(await times('9301'), { startTime: dst.utcStart, endTime: dst.utcEnd, duration: dst.minutes, timezoneName: NEW_YORK });
  assert.deepEqual(await times('9302'), { startTime: `${when}T03:30:00.000Z`, endTime: `${when}T04:30:00.000Z`, duration: 60, timezoneName: 'Asia/Kolkata' });
  const dayBefore = daysFromToday(NEW_YORK, 9);
  assert.deepEqual(await times('9303'), { startTime: `${dayBefore}T23:30:00.000Z`, endTime: `${when}T00:30:00.000Z`, duration: 60, timezoneName: 'Australia/Darwin' });
  assert.deepEqual(await times('9304'), { startTime: `${when}T12:45:00.000Z`, endTime: `${when}T13:30:00.000Z`, duration: 45, timezoneName: 'Asia/Kolkata' });
});

test('availability of the imported services, one worked example per service type', async () => {
  const tenant = await context.world.tenant();
  const headers = tenant.dashboard;
  await importExport(context, headers, v1Example());
  const ids = await exampleIds(context, headers);
  const search = (serviceId: string, date: string) => read(context, headers, `/v3/availability?LocationId=${ids.location}&ServiceId=${serviceId}&startDate=${date}`);

  // Service 301 (schedule) on a Monday at least two days ahead, so the lead time (bookInAdvance
  // 120 min) cannot touch it and it is well inside the 8-week horizon:
  //   location Mon 09:00-19:00 ∩ service Mon 09:00-19:00 ∩ Ben Carter (1502) Mon 09:00-17:00
  //     = 09:00-17:00 New York; Ana Lopez (1501) does not offer 301.
  //   Starts every 30 min (bookingInterval) from 09:00; a 60-min slot and its 15 min of padding
  //   must fit in the window (allowPaddingOverflow false): the last start is 15:30 (16:30 + 0:15 ≤ 17:00).
  //   The lunch block 12:00-13:00 (weekdays) removes every start whose 75 min reach past 12:00
  //   before 13:00: 11:00, 11:30, 12:00, 12:30. 13:00 may start right as it ends.
  //   → 09:00, 09:30, 10:00, 10:30, 13:00, 13:30, 14:00, 14:30, 15:00, 15:30, each for 1502
  //     (BALANCED picks one resource) with remaining 1 (bookingsPerSlot 1).
  const monday = comingWeekday(NEW_YORK, 1);
  const schedule = await search(ids.service301, monday);
  assert.equal(schedule.timezoneName, NEW_YORK);
  assert.deepEqual(
    schedule.availableTimes,
    ['09:00', '09:30', '10:00', '10:30', '13:00', '13:30', '14:00', '14:30', '15:00', '15:30'].map((start) => {
      const [h, m] = start.split(':').map(Number) as [number, number];
      const end = `${String(h + 1).padStart(2, '0')}:${String(m).padStart(2, '0')}`;
      return { startTime: utc(monday, start, NEW_YORK), endTime: utc(monday, end, NEW_YORK), resourceIds: [ids.resource1502], remaining: 1 };
    }),
  );
  assert.deepEqual(schedule.availableDays, [{ date: monday, available: true, reason: null }]);

  // Service 302 (allocation) on a Tuesday at least two days ahead: only the allocation counts,
  // tue 18:00-19:30 for Ana Lopez (1501), capacity 12 from v1 bookingLimit. A 90-min class every
  // 90 min fits once: 18:00-19:30. Ben Carter offers 302 too but has no allocation, so no time.
  const tuesday = comingWeekday(NEW_YORK, 2);
  const allocation = await search(ids.service302, tuesday);
  assert.deepEqual(allocation.availableTimes, [
    { startTime: utc(tuesday, '18:00', NEW_YORK), endTime: utc(tuesday, '19:30', NEW_YORK), resourceIds: [ids.resource1501], remaining: 12 },
  ]);
  assert.deepEqual(allocation.availableDays, [{ date: tuesday, available: true, reason: null }]);
});

// Allocation windows are loaded with a day's margin each side; the engine clips them to the
// searched dates (src/domain/availability.ts, openWindows), so the days around a class stay empty.
test('an allocation service searched on days without allocations answers no slot of the days around them', async () => {
  const tenant = await context.world.tenant();
  const headers = tenant.dashboard;
  await importExport(context, headers, v1Example());
  const ids = await exampleIds(context, headers);
  for (const date of [comingWeekday(NEW_YORK, 1), comingWeekday(NEW_YORK, 3)]) {
    const answer = await read(context, headers, `/v3/availability?LocationId=${ids.location}&ServiceId=${ids.service302}&startDate=${date}`);
    assert.deepEqual(answer.availableTimes, [], `${date}: ${JSON.stringify(answer.availableTimes)}`);
    assert.deepEqual(answer.availableDays, [{ date, available: false, reason: 'no free time' }]);
  }
});

// The specification refreshes a migrated service by deleting it and running again: the resources
// that offer it in v1, already migrated and skipped, are linked to the service the run recreates.
test('a service deleted and migrated again is offered by the resources that offer it in v1', async () => {
  const tenant = await context.world.tenant();
  const headers = tenant.dashboard;
  await importExport(context, headers, v1Example());
  const before = await exampleIds(context, headers);
  assert.equal((await context.app.inject({ method: 'DELETE', url: `/v3/service/${before.service301}`, headers })).statusCode, 204);
  await importExport(context, headers, v1Example());
  const ids = await exampleIds(context, headers);
  const offered = (await read(context, headers, `/v3/resource/${ids.resource1502}`)).serviceIds as string[];
  assert.ok(offered.includes(ids.service301), `resource 1502 offers ${offered.join(', ')}, not the recreated service 301 (${ids.service301})`);
  const monday = comingWeekday(NEW_YORK, 1);
  const slots = await read(context, headers, `/v3/availability?LocationId=${ids.location}&ServiceId=${ids.service301}&startDate=${monday}`);
  assert.equal(slots.availableTimes.length, 10);
});

test('access: Owners and Admins only, never machine tokens; jobs and records of another company stay apart; bad bodies are 400s', async () => {
  const a = await context.world.tenant();
  const b = await context.world.tenant();
  const small = { source: { type: 'export', data: { locations: [] } } };

  const token = await machineToken(context.app, a);
  const machine = await syncRequest(context, { authorization: `Bearer ${token}` }, small);
  assert.equal(machine.statusCode, 403, machine.body);
  assert.match(json(machine).message, /Machine tokens cannot use migration workflows/);
  const user = await addMember(context, a, 'User');
  assert.equal((await syncRequest(context, user.headers, small)).statusCode, 403);
  const admin = await addMember(context, a, 'Admin');
  const byAdmin = await syncRequest(context, admin.headers, small);
  assert.equal(byAdmin.statusCode, 200, byAdmin.body);
  assert.deepEqual(json<Report>(byAdmin).created, counts());

  // Company A imports the §6 example as a job; B cannot see that job.
  const started = await syncRequest(context, a.dashboard, { source: { type: 'export', data: v1Example() } }, { prefer: 'respond-async' });
  assert.equal(started.statusCode, 202, started.body);
  const jobId = json(started).id as string;
  await context.app.migration.drain();
  const job = await read(context, a.dashboard, `/v3/migration/jobs/${jobId}`);
  assert.equal(job.status, 'succeeded');
  assert.equal(job.companyId, a.companyId);
  assert.deepEqual(job.report.created, EXAMPLE_CREATED);
  const foreign = await context.app.inject({ method: 'GET', url: `/v3/migration/jobs/${jobId}`, headers: b.dashboard });
  assert.equal(foreign.statusCode, 404, foreign.body);

  // The same v1 ids in company B: B gets records of its own; A's are untouched.
  const inA = await exampleIds(context, a.dashboard);
  const report = await importExport(context, b.dashboard, v1Example());
  assert.deepEqual(report.created, EXAMPLE_CREATED);
  const inB = await exampleIds(context, b.dashboard);
  for (const key of ['location', 'service301', 'service302', 'resource1501', 'resource1502'] as const) assert.notEqual(inB[key], inA[key]);
  assert.equal(inB.allocations7001.filter((id) => inA.allocations7001.includes(id)).length, 0);
  assert.deepEqual(await exampleIds(context, a.dashboard), inA);
  assert.equal((await context.app.inject({ method: 'GET', url: `/v3/location/${inA.location}`, headers: b.dashboard })).statusCode, 404);
  assert.equal((await read(context, a.dashboard, `/v3/service/${inA.service301}`)).companyId, a.companyId);

  // Body errors: the specification's error body.
  const refused = async (body: unknown) => {
    const response = await syncRequest(context, a.dashboard, body as Record<string, unknown>);
    assert.equal(response.statusCode, 400, response.body);
    const error = json(response);
    assert.equal(error.success, false);
    assert.equal(typeof error.message, 'string');
    assert.ok(Array.isArray(error.errors) && error.errors.length > 0, response.body);
    for (const e of error.errors) assert.deepEqual(Object.keys(e).filter((k) => !['type', 'location', 'path', 'msg', 'code'].includes(k)), []);
    return error as { message: string; errors: Array<{ type: string; location: string; path: string; msg: string }> };
  };
  const unknownKey = await refused({ source: { type: 'export', data: { locations: [], schedules: [] } } });
  assert.ok(unknownKey.errors.some((e) => e.location === 'body' && /schedules/.test(`${e.path} ${e.msg}`)), JSON.stringify(unknownKey));
  const wrongType = await refused({ source: { type: 'csv', data: {} } });
  assert.ok(wrongType.errors.some((e) => e.location === 'body' && /source/.test(e.path)), JSON.stringify(wrongType));
  const http = await refused({ source: { type: 'api', baseUrl: 'http://example.com', tokenUrl: 'https://example.com/connect/token', clientId: 'id', clientSecret: 'secret' } });
  assert.deepEqual(http.errors.map((e) => [e.location, e.path]), [['body', 'source.baseUrl']]);
  assert.match(http.errors[0]!.msg, /^source\.baseUrl /);
});
