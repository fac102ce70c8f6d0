import { sql } from 'kysely';
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

/**
 * Each way through a link table: from the owner records (`ownerIds`) to the live records linked to
 * them. Names are fixed here, never taken from a request.
 */
const DIRECTIONS = {
  'location.services': { link: 'service_locations', owner: 'location_id', target: 'service_id', records: 'services' },
  'location.resources': { link: 'resource_locations', owner: 'location_id', target: 'resource_id', records: 'resources' },
  'service.locations': { link: 'service_locations', owner: 'service_id', target: 'location_id', records: 'locations' },
  'service.resources': { link: 'resource_services', owner: 'service_id', target: 'resource_id', records: 'resources' },
  'resource.locations': { link: 'resource_locations', owner: 'resource_id', target: 'location_id', records: 'locations' },
  'resource.services': { link: 'resource_services', owner: 'resource_id', target: 'service_id', records: 'services' },
} as const;

export type LinkDirection = keyof typeof DIRECTIONS;

/** `[{ownerId, id, name}]`: the live linked records of each owner, by name. */
export async function linkedRecords(db: Db, companyId: string, direction: LinkDirection, ownerIds: string[]) {
  if (ownerIds.length === 0) return [];
  const d = DIRECTIONS[direction];
  const result = await sql<{ ownerId: string; id: string; name: string }>`
    select l.${sql.raw(d.owner)} as "ownerId", t.id, t.name
    from ${sql.raw(d.link)} l
    join ${sql.raw(d.records)} t on t.company_id = l.company_id and t.id = l.${sql.raw(d.target)}
    where l.company_id = ${companyId} and l.${sql.raw(d.owner)} in (${sql.join(ownerIds)}) and t.archived_at is null
    order by t.name, t.id`.execute(db);
  return result.rows;
}
