import { linkedRecords } from '../catalog/links.js';
import type { Db } from '../../platform/database/index.js';
import { createAvailabilityRepository } from '../availability/repository.js';

/** What a public booking page may read: live records, online services, no settings or secrets. */
export function createPublicRepository(db: Db) {
  const availability = createAvailabilityRepository(db);
  return {
    db,

    locations(companyId: string) {
      return db
        .selectFrom('locations')
        .select(['id', 'name', 'timezoneName', 'address', 'phone', 'email', 'weeklyAvailability'])
        .where('companyId', '=', companyId)
        .where('archivedAt', 'is', null)
        .orderBy('name')
        .orderBy('id')
        .execute();
    },

    async onlineServices(companyId: string, locationId: string | undefined) {
      let query = db
        .selectFrom('services')
        .select(['id', 'name', 'description', 'duration', 'durationSelect', 'durationMin', 'durationMax', 'durationInterval', 'feeAmount', 'imageUrl', 'roundRobin'])
        .where('companyId', '=', companyId)
        .where('archivedAt', 'is', null)
        .where('showOnline', '=', true);
      if (locationId) {
        query = query.where((eb) =>
          eb.exists(
            eb
              .selectFrom('serviceLocations as sl')
              .select('sl.serviceId')
              .whereRef('sl.companyId', '=', 'services.companyId')
              .whereRef('sl.serviceId', '=', 'services.id')
              .where('sl.locationId', '=', locationId),
          ),
        );
      }
      const services = await query.orderBy('name').orderBy('id').execute();
      // Live locations only: an archived location is not offered to a booking page.
      const links = await linkedRecords(db, companyId, 'service.locations', services.map((s) => s.id));
      return services.map((s) => ({ ...s, locationIds: links.filter((l) => l.ownerId === s.id).map((l) => l.id) }));
    },

    /** Whether the service is live and shown online: a booking page sees any other as unknown. */
    async isOnlineService(companyId: string, serviceId: string) {
      const row = await db
        .selectFrom('services')
        .select('id')
        .where('companyId', '=', companyId)
        .where('id', '=', serviceId)
        .where('archivedAt', 'is', null)
        .where('showOnline', '=', true)
        .executeTakeFirst();
      return row !== undefined;
    },

    /**
     * The live resources that work at the location and provide the service (the ones availability
     * and hold may pick), by name. Only the name: a resource's email and phone are the staff's own.
     */
    async bookableResources(companyId: string, locationId: string, serviceId: string) {
      // The same set availability and hold pick from (availability/repository.ts), by name.
      const rows = await availability.bookableResources(companyId, locationId, serviceId);
      return rows.map(({ id, name }) => ({ id, name })).sort((x, y) => x.name.localeCompare(y.name) || x.id.localeCompare(y.id));
    },
  };
}

export type PublicRepository = ReturnType<typeof createPublicRepository>;
