import type { Insertable, Selectable, Updateable } from 'kysely';
import type { Db } from '../../platform/database/index.js';
import { linkedRecords } from '../catalog/links.js';
import { countedPage } from '../catalog/page.js';
import type { LocationsTable } from '../../platform/database/schema.js';

export type LocationRow = Selectable<LocationsTable>;

export function createLocationRepository(db: Db) {
  const live = (companyId: string) =>
    db.selectFrom('locations').where('companyId', '=', companyId).where('archivedAt', 'is', null);

  return {
    insert(row: Insertable<LocationsTable>) {
      return db.insertInto('locations').values(row).returningAll().executeTakeFirstOrThrow();
    },

    byId(companyId: string, id: string) {
      return live(companyId).selectAll().where('id', '=', id).executeTakeFirst();
    },

    /** A page of live locations, optionally only those in `onlyIds` (the caller's scope). */
    page(companyId: string, onlyIds: string[] | null, window: { limit: number; offset: number }) {
      let base = live(companyId);
      if (onlyIds) base = onlyIds.length ? base.where('id', 'in', onlyIds) : base.where((eb) => eb.val(false));
      return countedPage(base, (rows) => rows.selectAll().orderBy('name').orderBy('id'), window);
    },

    update(companyId: string, id: string, changes: Updateable<LocationsTable>) {
      return db
        .updateTable('locations')
        .set({ ...changes, updatedAt: new Date() })
        .where('companyId', '=', companyId)
        .where('id', '=', id)
        .where('archivedAt', 'is', null)
        .returningAll()
        .executeTakeFirst();
    },

    /** Live services and resources linked to each of the locations, for nested graphs. */
    async links(companyId: string, locationIds: string[]) {
      const [services, resources] = await Promise.all([
        linkedRecords(db, companyId, 'location.services', locationIds),
        linkedRecords(db, companyId, 'location.resources', locationIds),
      ]);
      return { services, resources };
    },
  };
}

export type LocationRepository = ReturnType<typeof createLocationRepository>;
