import { sql } from 'kysely';
import type { Db } from '../../platform/database/index.js';

/**
 * Each way through a link table: from the owner records (`ownerIds`) to the records linked to
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

/** The ids one owner's links point at, whether or not those records are archived. */
async function linkedIds(db: Db, companyId: string, direction: LinkDirection, ownerId: string): Promise<string[]> {
  const d = DIRECTIONS[direction];
  const result = await sql<{ id: string }>`
    select ${sql.raw(d.target)} as id from ${sql.raw(d.link)}
    where company_id = ${companyId} and ${sql.raw(d.owner)} = ${ownerId}`.execute(db);
  return result.rows.map((row) => row.id);
}

/** Reads of the link tables that several catalog services need (scope of a Resource-role user). */
export function createCatalogLinks(db: Db) {
  return {
    resourceLocationIds: (companyId: string, resourceId: string) => linkedIds(db, companyId, 'resource.locations', resourceId),
    resourceServiceIds: (companyId: string, resourceId: string) => linkedIds(db, companyId, 'resource.services', resourceId),
    serviceLocationIds: (companyId: string, serviceId: string) => linkedIds(db, companyId, 'service.locations', serviceId),
  };
}

export type CatalogLinks = ReturnType<typeof createCatalogLinks>;

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
