import { linkedRecords } from '../catalog/links.js';
import type { Db } from '../../platform/database/index.js';

/** What a public booking page may read: live records, online services, no settings or secrets. */
export function createPublicRepository(db: Db) {
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
        .select(['id', 'name', 'description', 'duration', 'durationSelect', 'durationMin', 'durationMax', 'durationInterval', 'feeAmount', 'imageUrl'])
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
  };
}

export type PublicRepository = ReturnType<typeof createPublicRepository>;
