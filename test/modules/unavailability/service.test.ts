// The unavailability service with a fake onChanged: every successful write reports exactly the
// locations, services and resources it touched, after the write; a refused write reports nothing.
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createTestContext } from '../../helpers/app.js';
import type { TestContext } from '../../helpers/app.js';
import type { Principal } from '../../../src/platform/auth/principal.js';
import { ApiError } from '../../../src/platform/errors.js';
import { createCatalogLinks } from '../../../src/modules/catalog/links.js';
import type { TouchedEntities } from '../../../src/modules/availability/cache.js';
import { createUnavailabilityRepository } from '../../../src/modules/unavailability/repository.js';
import { createUnavailabilityService } from '../../../src/modules/unavailability/service.js';
import { newWorld } from './fixtures.js';
import type { World } from './fixtures.js';

let context: TestContext;
before(async () => {
  context = await createTestContext();
});
after(() => context.close());

interface Harness {
  world: World;
  principal: Principal & { companyId: string };
  calls: Array<{ companyId: string; entities: TouchedEntities }>;
  service: ReturnType<typeof createUnavailabilityService>;
}

async function harness(onChanged?: (companyId: string, entities: TouchedEntities) => Promise<void>): Promise<Harness> {
  const world = await newWorld(context);
  const calls: Harness['calls'] = [];
  const db = context.database.db;
  const service = createUnavailabilityService({
    db,
    repository: createUnavailabilityRepository(db),
    links: createCatalogLinks(db),
    onChanged:
      onChanged ??
      (async (companyId, entities) => {
        calls.push({ companyId, entities });
      }),
  });
  const principal = { kind: 'machine' as const, companyId: world.tenant.companyId, clientId: 'test', scopes: ['read' as const, 'write' as const] };
  return { world, principal, calls, service };
}

const block = { startTime: '2030-01-01T09:00:00Z', endTime: '2030-01-01T10:00:00Z', reason: 'Closed' };
const rule = { name: 'Lunch', frequency: 'DAILY' as const, startDate: '2030-01-01', startTime: '12:00', endTime: '13:00', iana: 'Europe/London' };

async function rejects(promise: Promise<unknown>, status: number) {
  await assert.rejects(promise, (error: unknown) => error instanceof ApiError && error.statusCode === status);
}

describe('onChanged', () => {
  test('blocks: the scope of the created and of the deleted block', async () => {
    const { world, principal, calls, service } = await harness();
    const company = world.tenant.companyId;
    const atLocation = await service.createBlock(principal, { LocationId: world.location, ...block });
    const atResource = await service.createBlock(principal, { ResourceId: world.resource, ...block });
    await service.createBlock(principal, { ServiceId: world.service, ...block });
    await service.deleteBlock(principal, atResource.id);
    assert.deepEqual(calls, [
      { companyId: company, entities: { locations: [world.location] } },
      { companyId: company, entities: { resources: [world.resource] } },
      { companyId: company, entities: { services: [world.service] } },
      { companyId: company, entities: { resources: [world.resource] } },
    ]);
    assert.equal(atLocation.locationId, world.location);
  });

  test('recurring blocks: create, a change that moves the scope (old and new), delete', async () => {
    const { world, principal, calls, service } = await harness();
    const created = await service.createRecurringBlock(principal, { ServiceId: world.service, ...rule });
    await service.updateRecurringBlock(principal, created.id, { name: 'Renamed' });
    await service.updateRecurringBlock(principal, created.id, { ResourceId: world.resource });
    await service.deleteRecurringBlock(principal, created.id);
    assert.deepEqual(
      calls.map((call) => call.entities),
      [{ services: [world.service] }, { services: [world.service] }, { resources: [world.resource], services: [world.service] }, { resources: [world.resource] }],
    );
  });

  test('holidays and allocation sets: the location, and the service and resource of the set', async () => {
    const { world, principal, calls, service } = await harness();
    const holiday = await service.createHoliday(principal, { LocationId: world.location, date: '2030-12-25', name: 'Christmas' });
    await service.deleteHoliday(principal, holiday.id);
    await service.setWeeklyAllocations(principal, { LocationId: world.location, ServiceId: world.service, ResourceId: world.resource }, [
      { day: 'mon', start: '09:00', end: '12:00', bookingsPerSlot: 2 },
    ]);
    await service.setSingleAllocations(principal, { LocationId: world.location2 }, []);
    assert.deepEqual(
      calls.map((call) => call.entities),
      [
        { locations: [world.location] },
        { locations: [world.location] },
        { locations: [world.location], resources: [world.resource], services: [world.service] },
        { locations: [world.location2] },
      ],
    );
  });

  test('refused writes report nothing', async () => {
    const { world, principal, calls, service } = await harness();
    await rejects(service.createBlock(principal, { LocationId: world.location, ...block, endTime: block.startTime }), 400);
    await rejects(service.createBlock(principal, { LocationId: randomUUID(), ...block }), 400);
    await rejects(service.deleteBlock(principal, randomUUID()), 404);
    await rejects(service.createRecurringBlock(principal, { LocationId: world.location, ...rule, frequency: 'WEEKLY' }), 400);
    await rejects(service.updateRecurringBlock(principal, randomUUID(), { name: 'x' }), 404);
    await rejects(service.setWeeklyAllocations(principal, { LocationId: world.location }, [{ day: 'mon', start: '09:00', end: '12:00', bookingsPerSlot: 2 }]), 400);
    await rejects(service.setSingleAllocations(principal, { LocationId: world.location, ServiceId: randomUUID() }, []), 400);
    assert.deepEqual(calls, []);
    await service.createHoliday(principal, { LocationId: world.location, date: '2030-12-25', name: 'Christmas' });
    calls.length = 0;
    await rejects(service.createHoliday(principal, { LocationId: world.location, date: '2030-12-25', name: 'Again' }), 409);
    // A Resource-role or out-of-scope caller is refused by the service itself, not only by the routes.
    const resourceUser = { ...principal, kind: 'dashboard' as const, userId: randomUUID(), role: 'Resource' as const, locationAccessMode: 'COMPANY' as const, allowedLocationIds: [], linkedResourceId: world.resource };
    await rejects(service.createBlock(resourceUser, { ResourceId: world.resource, ...block }), 403);
    const scoped = { ...resourceUser, role: 'User' as const, locationAccessMode: 'LOCATIONS' as const, allowedLocationIds: [world.location2], linkedResourceId: null };
    await rejects(service.setWeeklyAllocations(scoped, { LocationId: world.location }, []), 403);
    assert.deepEqual(calls, []);
  });

  test('the write is committed before onChanged runs; its failure reaches the caller', async () => {
    let seen: number | undefined;
    const { world, principal, service } = await harness(async (companyId) => {
      const rows = await context.database.db.selectFrom('blocks').select('id').where('companyId', '=', companyId).execute();
      seen = rows.length;
      throw new Error('cache unavailable');
    });
    await assert.rejects(service.createBlock(principal, { LocationId: world.location, ...block }), /cache unavailable/);
    assert.equal(seen, 1);
  });
});
