import type { Db } from '../../platform/database/index.js';

/** Reads of the link tables that several catalog services need (scope of a Resource-role user). */
export function createCatalogLinks(db: Db) {
  return {
    resourceLocationIds(companyId: string, resourceId: string): Promise<string[]> {
      return db
        .selectFrom('resourceLocations')
        .select('locationId')
        .where('companyId', '=', companyId)
        .where('resourceId', '=', resourceId)
        .execute()
        .then((rows) => rows.map((row) => row.locationId));
    },

    resourceServiceIds(companyId: string, resourceId: string): Promise<string[]> {
      return db
        .selectFrom('resourceServices')
        .select('serviceId')
        .where('companyId', '=', companyId)
        .where('resourceId', '=', resourceId)
        .execute()
        .then((rows) => rows.map((row) => row.serviceId));
    },

    serviceLocationIds(companyId: string, serviceId: string): Promise<string[]> {
      return db
        .selectFrom('serviceLocations')
        .select('locationId')
        .where('companyId', '=', companyId)
        .where('serviceId', '=', serviceId)
        .execute()
        .then((rows) => rows.map((row) => row.locationId));
    },
  };
}

export type CatalogLinks = ReturnType<typeof createCatalogLinks>;
