// The importer's plan (src/domain/migration/plan.ts): the whole v1 document converted and its
// references resolved, pure. Every record of the document is accounted for exactly once.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { MIGRATION_KINDS, planMigration } from '../../../src/domain/migration/plan.js';
import type { V1Export } from '../../../src/domain/migration/v1.js';
import { V1_EXAMPLE_EXPORT } from '../../helpers/v1-stand-in.js';

const NOW = Date.parse('2026-11-24T12:00:00Z');
const example = (): V1Export => structuredClone(V1_EXAMPLE_EXPORT) as unknown as V1Export;

test('the §6 example plans every record, with the references resolved', () => {
  const plan = planMigration(example(), { now: NOW });
  assert.deepEqual(plan.failed, []);
  assert.deepEqual(plan.locations.map((l) => l.fields.legacyId), ['12']);
  assert.deepEqual(plan.services.map((s) => [s.fields.legacyId, s.locationLegacyIds]), [['301', ['12']], ['302', ['12']]]);
  // 1501 lists service 302; 1502 lists none, so it offers every service of its location.
  assert.deepEqual(plan.resources.map((r) => [r.fields.legacyId, r.serviceLegacyIds]), [['1501', ['302']], ['1502', ['301', '302']]]);
  assert.equal(plan.allocationSets.length, 1);
  assert.deepEqual(plan.allocationSets[0]!.scope, { locationLegacyId: '12', serviceLegacyId: '302', resourceLegacyId: '1501' });
  assert.deepEqual(plan.allocationSets[0]!.weekly.map((w) => [w.day, w.start, w.end, w.bookingsPerSlot, w.legacyId]), [
    ['tue', '18:00', '19:30', 12, '7001'],
    ['thu', '18:00', '19:30', 12, '7001'],
  ]);
  assert.deepEqual(plan.recurringBlocks.map((b) => [b.fields.legacyId, b.resourceLegacyId, b.fields.iana, b.fields.weekdays]), [['88001', '1502', 'America/New_York', [1, 2, 3, 4, 5]]]);
});

test('a record whose location is not in the document fails with the reason, and so do its dependents', () => {
  const doc = example();
  doc.locations![0]!.timezoneIana = 'Mars/Olympus';
  doc.locations![0]!.timezoneId = '';
  const plan = planMigration(doc, { now: NOW });
  const failed = new Map(plan.failed.map((f) => [`${f.kind}:${f.legacyId}`, f.message]));
  assert.match(failed.get('locations:12')!, /time zone/);
  assert.match(failed.get('services:301')!, /location/);
  assert.match(failed.get('resources:1502')!, /location 12 is not migrated/);
  assert.match(failed.get('weeklyAllocations:7001')!, /location 12 is not migrated/);
  assert.match(failed.get('recurringBlocks:88001')!, /resource 1502 is not migrated/);
});

test('a second record with the same v1 id fails and the first is used', () => {
  const doc = example();
  doc.services!.push({ ...doc.services![0]!, name: 'Copy' });
  const plan = planMigration(doc, { now: NOW });
  assert.deepEqual(plan.services.map((s) => s.fields.name), ['Personal Training', 'Evening Yoga Class']);
  assert.deepEqual(plan.failed.map((f) => [f.kind, f.legacyId]), [['services', '301']]);
});

test('an allocation that overlaps an earlier one of its scope on the same day fails alone', () => {
  const doc = example();
  const first = doc.serviceAllocations![0]!;
  doc.serviceAllocations!.push({ ...first, id: '7002', startTime: 1900, endTime: 2000, repeat: { frequency: 'W', interval: 1, weekdays: '2' } });
  doc.serviceAllocations!.push({ ...first, id: '7003', startTime: 1930, endTime: 2030, repeat: { frequency: 'W', interval: 1, weekdays: '5' } });
  const plan = planMigration(doc, { now: NOW });
  assert.deepEqual(plan.failed.map((f) => [f.kind, f.legacyId]), [['weeklyAllocations', '7002']]);
  assert.match(plan.failed[0]!.message, /overlaps allocation 7001/);
  assert.deepEqual(plan.allocationSets[0]!.weekly.map((w) => w.legacyId), ['7001', '7001', '7003']);
});

test('rows that are not objects fail with kind and no id; deleted and past records are ignored', () => {
  const doc = example() as Record<string, unknown[]>;
  doc.customers = [null, 'x', { id: 5, firstname: 'Ann', email: 'ann@example.com', deletedStatus: true }, { id: 6, firstname: 'Bo', email: 'bo@example.com' }];
  doc.appointments = [
    { id: 1, locationId: 12, serviceId: 301, resourceId: 1502, customerId: 6, status: 'BK', startDateTime: '2026-11-20T10:00:00-05:00', endDateTime: '2026-11-20T11:00:00-05:00' },
    { id: 2, locationId: 12, serviceId: 301, resourceId: 1502, customerId: 6, status: 'BK', startDateTime: '2026-12-01T10:00:00', endDateTime: '2026-12-01T11:00:00' },
  ];
  const plan = planMigration(doc as V1Export, { now: NOW });
  assert.deepEqual(plan.failed.map((f) => [f.kind, f.legacyId]), [['customers', null], ['customers', null]]);
  assert.equal(plan.ignored.customers, 1);
  assert.equal(plan.ignored.appointments, 1);
  assert.deepEqual(plan.customers.map((c) => c.fields.legacyId), ['6']);
  // Wall time without an offset is read in the location's zone (New York, EST on Dec 1).
  assert.equal(plan.appointments[0]!.fields.startTime, '2026-12-01T15:00:00Z');
});

test('property: the plan is deterministic and accounts for every customer once (planned, failed or ignored)', () => {
  const customer = fc.record({
    id: fc.oneof(fc.integer({ min: 0, max: 30 }), fc.constantFrom('7', '007', '', 'x')),
    firstname: fc.oneof(fc.constant('Ann'), fc.constant(''), fc.constant(null)),
    email: fc.oneof(fc.constant('a@example.com'), fc.constant('not an email'), fc.constant(null)),
    deletedStatus: fc.boolean(),
  });
  fc.assert(
    fc.property(fc.array(customer, { maxLength: 20 }), (customers) => {
      const doc = { ...example(), customers } as V1Export;
      const plan = planMigration(doc, { now: NOW });
      assert.deepEqual(planMigration(doc, { now: NOW }), plan);
      const failed = plan.failed.filter((f) => f.kind === 'customers').length;
      assert.equal(plan.customers.length + failed + plan.ignored.customers, customers.length);
      for (const kind of MIGRATION_KINDS) assert.ok(plan.ignored[kind] >= 0);
    }),
  );
});

test('property: any JSON in any field of any record is planned or reported, never thrown', () => {
  const json = fc.jsonValue({ maxDepth: 2 });
  const kinds = ['locations', 'services', 'resources', 'serviceAllocations', 'resourceAllocations', 'resourceBlocks', 'customers', 'appointments'] as const;
  fc.assert(
    fc.property(fc.constantFrom(...kinds), fc.nat(), fc.string({ maxLength: 20 }), json, (kind, pick, field, value) => {
      const doc = example() as unknown as Record<string, Array<Record<string, unknown>>>;
      const base: Record<string, unknown> = { ...(doc[kind]![0] ?? { id: '1', locationId: '12', serviceId: '301', resourceId: '1502', status: 'BK' }) };
      const fields = [...Object.keys(base), 'resources', 'customers', 'repeat', 'contact', 'customFields', 'address', 'services', 'settings', field];
      base[fields[pick % fields.length]!] = value;
      doc[kind] = [base];
      planMigration(doc as unknown as V1Export, { now: NOW });
    }),
    { numRuns: 3000, examples: [['serviceAllocations', 793_990_093, '', { toString: null }]] },
  );
});
