import type { Db } from '../../platform/database/index.js';
import { countedPage } from '../catalog/page.js';

export function createClientCredentialRepository(db: Db) {
  return {
    insert(row: { companyId: string; id: string; clientId: string; secretHash: string; name: string | null; createdByUserId: string | null }) {
      return db
        .insertInto('clientCredentials')
        .values(row)
        .returning(['id', 'clientId', 'name', 'createdAt', 'lastUsedAt', 'revokedAt'])
        .executeTakeFirstOrThrow();
    },

    page(companyId: string, window: { limit: number; offset: number }) {
      const base = db.selectFrom('clientCredentials').where('companyId', '=', companyId);
      return countedPage(
        base,
        (rows) => rows.select(['id', 'clientId', 'name', 'createdAt', 'lastUsedAt', 'revokedAt']).orderBy('createdAt', 'desc').orderBy('id'),
        window,
      );
    },

    /** Revokes; returns false when the credential is not the company's. Revoking twice is harmless. */
    async revoke(companyId: string, id: string): Promise<boolean> {
      const row = await db
        .updateTable('clientCredentials')
        .set((eb) => ({ revokedAt: eb.fn.coalesce('revokedAt', eb.val(new Date())) }))
        .where('companyId', '=', companyId)
        .where('id', '=', id)
        .returning('id')
        .executeTakeFirst();
      return row !== undefined;
    },

    /** The token endpoint's lookup: by client_id alone, with the company's state. */
    byClientId(clientId: string) {
      return db
        .selectFrom('clientCredentials as cc')
        .innerJoin('companies as c', 'c.id', 'cc.companyId')
        .select(['cc.companyId', 'cc.id', 'cc.clientId', 'cc.secretHash', 'cc.revokedAt', 'c.suspendedAt'])
        .where('cc.clientId', '=', clientId)
        .executeTakeFirst();
    },

    touch(companyId: string, id: string) {
      return db
        .updateTable('clientCredentials')
        .set({ lastUsedAt: new Date() })
        .where('companyId', '=', companyId)
        .where('id', '=', id)
        .execute();
    },
  };
}

export type ClientCredentialRepository = ReturnType<typeof createClientCredentialRepository>;
