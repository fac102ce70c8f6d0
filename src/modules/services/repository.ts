import type { Insertable, Selectable, Transaction, Updateable } from 'kysely';
import type { Db } from '../../platform/database/index.js';
import type { Database, ServicesTable } from '../../platform/database/schema.js';

export type ServiceRow = Selectable<ServicesTable>;

export function createServiceRepository(db: Db) {
  const live = (companyId: string) => db.selectFrom('services').where('companyId', '=', companyId).where('archivedAt', 'is', null);

  async function replaceLocations(trx: Transaction<Database>, companyId: string, serviceId: string, locationIds: string[]) {
    await trx.deleteFrom('serviceLocations').where('companyId', '=', companyId).where('serviceId', '=', serviceId).execute();
    if (locationIds.length) {
      await trx.insertInto('serviceLocations').values(locationIds.map((locationId) => ({ companyId, serviceId, locationId }))).execute();
    }
  }

  return {
    insert(row: Insertable<ServicesTable>, locationIds: string[]) {
      return db.transaction().execute(async (trx) => {
        const inserted = await trx.insertInto('services').values(row).returningAll().executeTakeFirstOrThrow();
        await replaceLocations(trx, row.companyId, row.id, locationIds);
        return inserted;
      });
    },

    byId(companyId: string, id: string) {
      return live(companyId).selectAll().where('id', '=', id).executeTakeFirst();
    },

    /** A page of live services; with `locationIds`, only those offered at one of them. */
    async page(companyId: string, filter: { locationIds: string[] | null; serviceIds: string[] | null }, limit: number, offset: number) {
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
      const [rows, count] = await Promise.all([
        base.selectAll().orderBy('name').orderBy('id').limit(limit).offset(offset).execute(),
        base.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow(),
      ]);
      return { rows, total: Number(count.total) };
    },

    update(companyId: string, id: string, changes: Updateable<ServicesTable>, locationIds: string[] | undefined) {
      return db.transaction().execute(async (trx) => {
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

    /** Location links (with names) and live resources of each service. */
    async links(companyId: string, serviceIds: string[]) {
      if (serviceIds.length === 0) return { locations: [], resources: [] };
      const [locations, resources] = await Promise.all([
        db
          .selectFrom('serviceLocations as sl')
          .innerJoin('locations as l', (join) => join.onRef('l.companyId', '=', 'sl.companyId').onRef('l.id', '=', 'sl.locationId'))
          .select(['sl.serviceId', 'l.id', 'l.name'])
          .where('sl.companyId', '=', companyId)
          .where('sl.serviceId', 'in', serviceIds)
          .where('l.archivedAt', 'is', null)
          .orderBy('l.name')
          .execute(),
        db
          .selectFrom('resourceServices as rs')
          .innerJoin('resources as r', (join) => join.onRef('r.companyId', '=', 'rs.companyId').onRef('r.id', '=', 'rs.resourceId'))
          .select(['rs.serviceId', 'r.id', 'r.name'])
          .where('rs.companyId', '=', companyId)
          .where('rs.serviceId', 'in', serviceIds)
          .where('r.archivedAt', 'is', null)
          .orderBy('r.name')
          .execute(),
      ]);
      return { locations, resources };
    },
  };
}

export type ServiceRepository = ReturnType<typeof createServiceRepository>;
