// loadTarget, the first read of every availability search and booking: a valid request is one
// statement (one pool connection), and that statement's rows are exactly what the single-purpose
// reads (location, service, bookableResources) give, Dates and numbers included.
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { KyselyPlugin } from 'kysely';
import { createAvailabilityRepository, SERVICE_RULE_COLUMNS } from '../../../src/modules/availability/repository.js';
import { loadTarget } from '../../../src/modules/availability/target.js';
import type { Db } from '../../../src/platform/database/index.js';
import { createTestContext } from '../../helpers/app.js';
import type { TestContext } from '../../helpers/app.js';
import type { Bookable, TenantFixture } from '../../helpers/world.js';

let context: TestContext;
let tenant: TenantFixture;
let at: Bookable;
/** Linked to the location but not to the service: live, not bookable. */
let unlinked: string;
before(async () => {
  context = await createTestContext({}, { sharedOwner: true });
  tenant = await context.world.tenant();
  at = await tenant.bookable({ resources: 3 });
  unlinked = await tenant.resource({ name: 'Elsewhere', locationIds: [at.locationId] });
});
after(() => context.close());

/** The database handle, counting the statements it executes. */
function counting(db: Db): { db: Db; statements: () => number } {
  let executed = 0;
  const counter: KyselyPlugin = {
    transformQuery: (args) => args.node,
    // Called once per executed statement (transformQuery also runs for each embedded subquery).
    transformResult: (args) => {
      executed++;
      return Promise.resolve(args.result);
    },
  };
  return { db: db.withPlugin(counter), statements: () => executed };
}

describe('loadTarget', () => {
  test('a valid search or booking is one statement', async () => {
    const { db, statements } = counting(context.database.db);
    const target = await loadTarget(db, createAvailabilityRepository(db), tenant.companyId, {
      LocationId: at.locationId,
      ServiceId: at.serviceId,
      ResourceIds: [at.resourceIds[1]!, unlinked],
      CustomerId: at.customerId,
      location: 'body',
    }, null);
    assert.equal(statements(), 1);
    assert.equal(target.offered, true);
    assert.deepEqual(target.bookable.map((r) => r.id), [...at.resourceIds].sort());
  });

  test('its rows are the ones the single-purpose reads give', async () => {
    const repository = createAvailabilityRepository(context.database.db);
    const { companyId } = tenant;
    const found = await repository.target(companyId, { locationId: at.locationId, serviceId: at.serviceId, resourceIds: [...at.resourceIds, unlinked], customerId: at.customerId });
    assert.ok(found);
    assert.deepEqual(found.service, await repository.service(companyId, at.serviceId));
    // Only the columns a search or a booking reads (SERVICE_RULE_COLUMNS), typed as the table's.
    assert.deepEqual(Object.keys(found.service).sort(), [...SERVICE_RULE_COLUMNS].sort());
    assert.equal(typeof found.service.durationSelect, 'boolean');
    assert.deepEqual(found.location, await repository.location(companyId, at.locationId));
    assert.deepEqual(found.bookable, await repository.bookableResources(companyId, at.locationId, at.serviceId));
    assert.deepEqual([...found.liveResourceIds].sort(), [...at.resourceIds, unlinked].sort());
    assert.equal(found.liveCustomer, true);
  });

  test('says which named ids are not live records of the company, and what is missing', async () => {
    const repository = createAvailabilityRepository(context.database.db);
    const other = await context.world.tenant();
    const theirs = await other.bookable();
    const { companyId } = tenant;
    const ids = { locationId: at.locationId, serviceId: at.serviceId };

    const foreign = await repository.target(companyId, { ...ids, resourceIds: [at.resourceIds[0]!, theirs.resourceIds[0]!, randomUUID()], customerId: theirs.customerId });
    assert.deepEqual(foreign?.liveResourceIds, [at.resourceIds[0]]);
    assert.equal(foreign?.liveCustomer, false);

    const none = await repository.target(companyId, { ...ids, resourceIds: [], customerId: null });
    assert.deepEqual(none?.liveResourceIds, []);
    assert.equal(none?.liveCustomer, null);

    assert.equal((await repository.target(companyId, { ...ids, locationId: theirs.locationId, resourceIds: [], customerId: null }))?.location, null);
    assert.equal(await repository.target(companyId, { ...ids, serviceId: theirs.serviceId, resourceIds: [], customerId: null }), undefined);
  });

  test('a service not offered at the location is read as such, with no resources bookable', async () => {
    const repository = createAvailabilityRepository(context.database.db);
    const elsewhere = await tenant.location({ name: 'Elsewhere' });
    const found = await repository.target(tenant.companyId, { locationId: elsewhere, serviceId: at.serviceId, resourceIds: [], customerId: null });
    assert.equal(found?.offered, false);
    assert.deepEqual(found?.bookable, []);
  });
});
