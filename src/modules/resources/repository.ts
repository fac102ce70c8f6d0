import type { Insertable, Selectable, Updateable } from 'kysely';
import type { Db } from '../../platform/database/index.js';
import { transaction } from '../../platform/database/transaction.js';
import { linkedRecords } from '../catalog/links.js';
import { countedPage } from '../catalog/page.js';
import type { ResourcesTable } from '../../platform/database/schema.js';

export type ResourceRow = Selectable<ResourcesTable>;

export function createResourceRepository(db: Db) {
  const live = (companyId: string) => db.selectFrom('resources').where('companyId', '=', companyId).where('archivedAt', 'is', null);

  async function replaceLinks(trx: Db, companyId: string, resourceId: string, links: { locationIds?: string[] | undefined; serviceIds?: string[] | undefined }) {
    if (links.locationIds) {
      await trx.deleteFrom('resourceLocations').where('companyId', '=', companyId).where('resourceId', '=', resourceId).execute();
      if (links.locationIds.length) {
        await trx.insertInto('resourceLocations').values(links.locationIds.map((locationId) => ({ companyId, resourceId, locationId }))).execute();
      }
    }
    if (links.serviceIds) {
      await trx.deleteFrom('resourceServices').where('companyId', '=', companyId).where('resourceId', '=', resourceId).execute();
      if (links.serviceIds.length) {
        await trx.insertInto('resourceServices').values(links.serviceIds.map((serviceId) => ({ companyId, resourceId, serviceId }))).execute();
      }
    }
  }

  return {
    insert(row: Insertable<ResourcesTable>, links: { locationIds: string[]; serviceIds: string[] }) {
      return transaction(db, async (trx) => {
        const inserted = await trx.insertInto('resources').values(row).returningAll().executeTakeFirstOrThrow();
        await replaceLinks(trx, row.companyId, row.id, links);
        return inserted;
      });
    },

    byId(companyId: string, id: string) {
      return live(companyId).selectAll().where('id', '=', id).executeTakeFirst();
    },

    page(
      companyId: string,
      filter: { locationIds: string[] | null; resourceIds: string[] | null; serviceId?: string | undefined },
      window: { limit: number; offset: number },
    ) {
      let base = live(companyId);
      if (filter.locationIds) {
        const locationIds = filter.locationIds;
        base = base.where((eb) =>
          locationIds.length === 0
            ? eb.val(false)
            : eb.exists(
                eb
                  .selectFrom('resourceLocations as rl')
                  .select('rl.resourceId')
                  .whereRef('rl.companyId', '=', 'resources.companyId')
                  .whereRef('rl.resourceId', '=', 'resources.id')
                  .where('rl.locationId', 'in', locationIds),
              ),
        );
      }
      if (filter.serviceId) {
        const serviceId = filter.serviceId;
        base = base.where((eb) =>
          eb.exists(
            eb
              .selectFrom('resourceServices as rs')
              .select('rs.resourceId')
              .whereRef('rs.companyId', '=', 'resources.companyId')
              .whereRef('rs.resourceId', '=', 'resources.id')
              .where('rs.serviceId', '=', serviceId),
          ),
        );
      }
      if (filter.resourceIds) base = filter.resourceIds.length ? base.where('id', 'in', filter.resourceIds) : base.where((eb) => eb.val(false));
      return countedPage(base, (rows) => rows.selectAll().orderBy('name').orderBy('id'), window);
    },

    update(companyId: string, id: string, changes: Updateable<ResourcesTable>, links: { locationIds?: string[] | undefined; serviceIds?: string[] | undefined }) {
      return transaction(db, async (trx) => {
        const row = await trx
          .updateTable('resources')
          .set({ ...changes, updatedAt: new Date() })
          .where('companyId', '=', companyId)
          .where('id', '=', id)
          .where('archivedAt', 'is', null)
          .returningAll()
          .executeTakeFirst();
        if (row) await replaceLinks(trx, companyId, id, links);
        return row;
      });
    },

    /** Live locations and services of each resource. */
    async links(companyId: string, resourceIds: string[]) {
      const [locations, services] = await Promise.all([
        linkedRecords(db, companyId, 'resource.locations', resourceIds),
        linkedRecords(db, companyId, 'resource.services', resourceIds),
      ]);
      return { locations, services };
    },
  };
}

export type ResourceRepository = ReturnType<typeof createResourceRepository>;
