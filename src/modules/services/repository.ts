import type { Insertable, Selectable, Updateable } from 'kysely';
import type { Db } from '../../platform/database/index.js';
import { transaction } from '../../platform/database/transaction.js';
import { linkedRecords } from '../catalog/links.js';
import { countedPage } from '../catalog/page.js';
import type { ServicesTable } from '../../platform/database/schema.js';

export type ServiceRow = Selectable<ServicesTable>;

export function createServiceRepository(db: Db) {
  const live = (companyId: string) => db.selectFrom('services').where('companyId', '=', companyId).where('archivedAt', 'is', null);

  async function replaceLocations(trx: Db, companyId: string, serviceId: string, locationIds: string[]) {
    await trx.deleteFrom('serviceLocations').where('companyId', '=', companyId).where('serviceId', '=', serviceId).execute();
    if (locationIds.length) {
      await trx.insertInto('serviceLocations').values(locationIds.map((locationId) => ({ companyId, serviceId, locationId }))).execute();
    }
  }

  return {
    insert(row: Insertable<ServicesTable>, locationIds: string[]) {
      return transaction(db, async (trx) => {
        const inserted = await trx.insertInto('services').values(row).returningAll().executeTakeFirstOrThrow();
        await replaceLocations(trx, row.companyId, row.id, locationIds);
        return inserted;
      });
    },

    byId(companyId: string, id: string) {
      return live(companyId).selectAll().where('id', '=', id).executeTakeFirst();
    },

    /** A page of live services; with `locationIds`, only those offered at one of them. */
    page(companyId: string, filter: { locationIds: string[] | null; serviceIds: string[] | null }, window: { limit: number; offset: number }) {
      let base = live(companyId);
      if (filter.locationIds) {
        const locationIds = filter.locationIds;
        base = base.where((eb) =>
          locationIds.length === 0
            ? eb.val(false)
            : eb.exists(
                eb
                  .selectFrom('serviceLocations as sl')
                  .select('sl.serviceId')
                  .whereRef('sl.companyId', '=', 'services.companyId')
                  .whereRef('sl.serviceId', '=', 'services.id')
                  .where('sl.locationId', 'in', locationIds),
              ),
        );
      }
      if (filter.serviceIds) base = filter.serviceIds.length ? base.where('id', 'in', filter.serviceIds) : base.where((eb) => eb.val(false));
      return countedPage(base, (rows) => rows.selectAll().orderBy('name').orderBy('id'), window);
    },

    update(companyId: string, id: string, changes: Updateable<ServicesTable>, locationIds: string[] | undefined) {
      return transaction(db, async (trx) => {
        const row = await trx
          .updateTable('services')
          .set({ ...changes, updatedAt: new Date() })
          .where('companyId', '=', companyId)
          .where('id', '=', id)
          .where('archivedAt', 'is', null)
          .returningAll()
          .executeTakeFirst();
        if (row && locationIds) await replaceLocations(trx, companyId, id, locationIds);
        return row;
      });
    },

    /** Live locations and resources of each service. */
    async links(companyId: string, serviceIds: string[]) {
      const [locations, resources] = await Promise.all([
        linkedRecords(db, companyId, 'service.locations', serviceIds),
        linkedRecords(db, companyId, 'service.resources', serviceIds),
      ]);
      return { locations, resources };
    },
  };
}

export type ServiceRepository = ReturnType<typeof createServiceRepository>;
