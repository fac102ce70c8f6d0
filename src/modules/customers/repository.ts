import type { Insertable, Selectable, Updateable } from 'kysely';
import type { Db } from '../../platform/database/index.js';
import type { CustomersTable } from '../../platform/database/schema.js';
import { countedPage } from '../catalog/page.js';

export type CustomerRow = Selectable<CustomersTable>;

export function createCustomerRepository(db: Db) {
  const live = (companyId: string) => db.selectFrom('customers').where('companyId', '=', companyId).where('archivedAt', 'is', null);
  return {
    insert(row: Insertable<CustomersTable>) {
      return db.insertInto('customers').values(row).returningAll().executeTakeFirstOrThrow();
    },

    byId(companyId: string, id: string) {
      return live(companyId).selectAll().where('id', '=', id).executeTakeFirst();
    },

    page(companyId: string, filter: { email?: string | undefined }, window: { limit: number; offset: number }) {
      let base = live(companyId);
      if (filter.email) base = base.where((eb) => eb(eb.fn('lower', ['email']), '=', filter.email!.toLowerCase()));
      return countedPage(base, (rows) => rows.selectAll().orderBy('lastName').orderBy('firstName').orderBy('id'), window);
    },

    update(companyId: string, id: string, changes: Updateable<CustomersTable>) {
      return db
        .updateTable('customers')
        .set({ ...changes, updatedAt: new Date() })
        .where('companyId', '=', companyId)
        .where('id', '=', id)
        .where('archivedAt', 'is', null)
        .returningAll()
        .executeTakeFirst();
    },
  };
}

export type CustomerRepository = ReturnType<typeof createCustomerRepository>;
