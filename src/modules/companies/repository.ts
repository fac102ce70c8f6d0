import type { Db } from '../../platform/database/index.js';
import { transaction } from '../../platform/database/transaction.js';
import type { CompaniesTable } from '../../platform/database/schema.js';
import type { Selectable } from 'kysely';

export type CompanyRow = Selectable<CompaniesTable>;

/** `100%_off` searched as a prefix must match those characters literally. */
function likePrefix(search: string): string {
  return `${search.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

export function createCompanyRepository(db: Db) {
  return {
    /** Creates the company and makes the caller its Owner, in one transaction. */
    async insertWithOwner(company: {
      id: string;
      name: string;
      apiKeyHash: string;
      apiKeyPrefix: string;
      publicClientId: string;
      allowedDomains: string[];
      disableEmailNotifications: boolean;
      disableSmsNotifications: boolean;
      reminderOffsets: number[];
      bookingPage: string;
    }, ownerUserId: string): Promise<CompanyRow> {
      return transaction(db, async (trx) => {
        const row = await trx.insertInto('companies').values(company).returningAll().executeTakeFirstOrThrow();
        await trx.insertInto('companyUsers').values({ companyId: company.id, userId: ownerUserId, role: 'Owner' }).execute();
        return row;
      });
    },

    byId(companyId: string) {
      return db.selectFrom('companies').selectAll().where('id', '=', companyId).executeTakeFirst();
    },

    /** Companies the user belongs to (or just `onlyCompanyId`), by case-insensitive name prefix. */
    async page(filter: { userId?: string; onlyCompanyId?: string; search?: string | undefined }, window: { limit: number; offset: number }) {
      let query = db.selectFrom('companies as c');
      if (filter.userId) {
        query = query.innerJoin('companyUsers as cu', (join) =>
          join.onRef('cu.companyId', '=', 'c.id').on('cu.userId', '=', filter.userId!),
        );
      }
      if (filter.onlyCompanyId) query = query.where('c.id', '=', filter.onlyCompanyId);
      if (filter.search) {
        query = query.where((eb) => eb(eb.fn('lower', ['c.name']), 'like', likePrefix(filter.search!)));
      }
      const [rows, count] = await Promise.all([
        query.selectAll('c').orderBy('c.name').orderBy('c.id').limit(window.limit).offset(window.offset).execute(),
        query.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow(),
      ]);
      return { rows, total: Number(count.total) };
    },

    update(companyId: string, changes: Partial<Pick<CompanyRow, 'name' | 'allowedDomains' | 'disableEmailNotifications' | 'disableSmsNotifications' | 'reminderOffsets' | 'apiKeyHash' | 'apiKeyPrefix' | 'publicClientId' | 'suspendedAt'>> & { bookingPage?: string }) {
      return db
        .updateTable('companies')
        .set({ ...changes, updatedAt: new Date() })
        .where('id', '=', companyId)
        .returningAll()
        .executeTakeFirst();
    },

    /** Live locations of each company, for `include=locations`. */
    locationsOf(companyIds: string[]) {
      if (companyIds.length === 0) return Promise.resolve([]);
      return db
        .selectFrom('locations')
        .select(['companyId', 'id', 'name', 'timezoneName'])
        .where('companyId', 'in', companyIds)
        .where('archivedAt', 'is', null)
        .orderBy('name')
        .execute();
    },

    all() {
      return db.selectFrom('companies').selectAll().orderBy('createdAt').execute();
    },
  };
}

export type CompanyRepository = ReturnType<typeof createCompanyRepository>;
