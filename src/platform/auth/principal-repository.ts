import { sql } from 'kysely';
import { randomUUID } from 'node:crypto';
import type { Db } from '../database/index.js';

/** The reads the authentication hook needs, each one query. */
export function createPrincipalRepository(db: Db) {
  return {
    machineContext(companyId: string, clientId: string) {
      return db
        .selectFrom('companies as c')
        .leftJoin('clientCredentials as cc', (join) =>
          join.onRef('cc.companyId', '=', 'c.id').on('cc.clientId', '=', clientId),
        )
        .select(['c.id', 'c.suspendedAt', 'cc.revokedAt', 'cc.id as credentialId'])
        .where('c.id', '=', companyId)
        .executeTakeFirst();
    },

    companyByApiKeyHash(apiKeyHash: string) {
      return db
        .selectFrom('companies')
        .select(['id', 'suspendedAt'])
        .where('apiKeyHash', '=', apiKeyHash)
        .executeTakeFirst();
    },

    companyByPublicClientId(publicClientId: string) {
      return db
        .selectFrom('companies')
        .select(['id', 'suspendedAt', 'allowedDomains'])
        .where('publicClientId', '=', publicClientId)
        .executeTakeFirst();
    },

    membership(companyId: string, userId: string) {
      return db
        .selectFrom('companyUsers')
        .select(['role', 'locationAccessMode', 'allowedLocationIds', 'linkedResourceId'])
        .where('companyId', '=', companyId)
        .where('userId', '=', userId)
        .executeTakeFirst();
    },

    userExists(userId: string) {
      return db.selectFrom('users').select('id').where('id', '=', userId).executeTakeFirst();
    },

    /** Users from an external OpenID Connect issuer are matched by email, and created on first sight. */
    async userIdForExternalEmail(email: string, name: string | undefined): Promise<string> {
      const existing = await db
        .selectFrom('users')
        .select('id')
        .where((eb) => eb(eb.fn('lower', ['email']), '=', email.toLowerCase()))
        .executeTakeFirst();
      if (existing) return existing.id;
      await db
        .insertInto('users')
        .values({ id: randomUUID(), email, name: name ?? email, passwordHash: null })
        .onConflict((oc) => oc.expression(sql`lower(email)`).doNothing())
        .execute();
      const row = await db
        .selectFrom('users')
        .select('id')
        .where((eb) => eb(eb.fn('lower', ['email']), '=', email.toLowerCase()))
        .executeTakeFirstOrThrow();
      return row.id;
    },
  };
}

export type PrincipalRepository = ReturnType<typeof createPrincipalRepository>;
