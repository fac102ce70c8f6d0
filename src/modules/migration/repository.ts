// v1 ids (legacy_id) to v3 records of one company.
import type { Db } from '../../platform/database/index.js';

/** The tables whose records keep a v1 id, by the mapping key that names them. */
export const SCALAR_TABLES = {
  locationId: 'locations',
  serviceId: 'services',
  resourceId: 'resources',
  customerId: 'customers',
  appointmentId: 'appointments',
} as const;

export type ScalarKey = keyof typeof SCALAR_TABLES;

export function createMigrationRepository(db: Db) {
  return {
    /**
     * The v3 id of the record of `table` that keeps this v1 id. A live record wins over an
     * archived one, then the oldest, so a record archived and migrated again maps to the new one.
     */
    async idForLegacy(companyId: string, table: (typeof SCALAR_TABLES)[ScalarKey], legacyIds: string[]): Promise<string | null> {
      if (table === 'appointments') {
        // Appointments are never archived: the first record that took this v1 id.
        const row = await db.selectFrom('appointments').select('id').where('companyId', '=', companyId).where('legacyId', 'in', legacyIds).orderBy('createdAt').executeTakeFirst();
        return row?.id ?? null;
      }
      const row = await db
        .selectFrom(table)
        .select('id')
        .where('companyId', '=', companyId)
        .where('legacyId', 'in', legacyIds)
        .orderBy((eb) => eb.case().when('archivedAt', 'is', null).then(0).else(1).end())
        .orderBy('createdAt')
        .executeTakeFirst();
      return row?.id ?? null;
    },

    /** Every weekly and single allocation that keeps this v1 id (one v1 allocation may become several rows). */
    async allocationIdsForLegacy(companyId: string, legacyIds: string[]): Promise<string[]> {
      const [weekly, single] = await Promise.all([
        db.selectFrom('weeklyAllocations').select('id').where('companyId', '=', companyId).where('legacyId', 'in', legacyIds).orderBy('id').execute(),
        db.selectFrom('singleAllocations').select('id').where('companyId', '=', companyId).where('legacyId', 'in', legacyIds).orderBy('id').execute(),
      ]);
      return [...weekly, ...single].map((r) => r.id);
    },
  };
}

export type MigrationRepository = ReturnType<typeof createMigrationRepository>;
