import { sql } from 'kysely';
import type { Db } from '../../platform/database/index.js';

export function createIdentityRepository(db: Db) {
  return {
    insertUser(user: { id: string; email: string; name: string; passwordHash: string }) {
      return db
        .insertInto('users')
        .values(user)
        .onConflict((oc) => oc.expression(sql`lower(email)`).doNothing())
        .returning(['id', 'email', 'name', 'createdAt'])
        .executeTakeFirst();
    },

    userByEmail(email: string) {
      return db
        .selectFrom('users')
        .selectAll()
        .where((eb) => eb(eb.fn('lower', ['email']), '=', email.toLowerCase()))
        .executeTakeFirst();
    },

    userById(id: string) {
      return db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
    },

    updateUser(id: string, changes: { name?: string; passwordHash?: string }) {
      return db
        .updateTable('users')
        .set({ ...changes, updatedAt: new Date() })
        .where('id', '=', id)
        .returning(['id', 'email', 'name', 'createdAt'])
        .executeTakeFirstOrThrow();
    },

    membershipsOfUser(userId: string) {
      return db
        .selectFrom('companyUsers as cu')
        .innerJoin('companies as c', 'c.id', 'cu.companyId')
        .select(['c.id as companyId', 'c.name as companyName', 'cu.role'])
        .where('cu.userId', '=', userId)
        .orderBy('c.name')
        .execute();
    },

    insertRefreshToken(row: { companyId: string; id: string; userId: string; familyId: string; expiresAt: Date }) {
      return db.insertInto('refreshTokens').values(row).execute();
    },

    /**
     * Marks a refresh token spent, only if it is still live. Returns false when it was already
     * used or revoked: the caller then treats the exchange as token theft.
     */
    async spendRefreshToken(companyId: string, id: string, now: Date): Promise<boolean> {
      const result = await db
        .updateTable('refreshTokens')
        .set({ usedAt: now })
        .where('companyId', '=', companyId)
        .where('id', '=', id)
        .where('usedAt', 'is', null)
        .where('revokedAt', 'is', null)
        .where('expiresAt', '>', now)
        .executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },

    revokeRefreshFamily(companyId: string, familyId: string, now: Date) {
      return db
        .updateTable('refreshTokens')
        .set({ revokedAt: now })
        .where('companyId', '=', companyId)
        .where('familyId', '=', familyId)
        .where('revokedAt', 'is', null)
        .execute();
    },

    membership(companyId: string, userId: string) {
      return db
        .selectFrom('companyUsers')
        .select('role')
        .where('companyId', '=', companyId)
        .where('userId', '=', userId)
        .executeTakeFirst();
    },

    companySuspended(companyId: string) {
      return db.selectFrom('companies').select('suspendedAt').where('id', '=', companyId).executeTakeFirst();
    },
  };
}

export type IdentityRepository = ReturnType<typeof createIdentityRepository>;
