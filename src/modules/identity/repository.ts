import { sql } from 'kysely';
import type { Db } from '../../platform/database/index.js';
import { transaction } from '../../platform/database/transaction.js';

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

    updateUser(id: string, changes: { name?: string }) {
      return db
        .updateTable('users')
        .set({ ...changes, updatedAt: new Date() })
        .where('id', '=', id)
        .returning(['id', 'email', 'name', 'createdAt', 'tokenVersion'])
        .executeTakeFirstOrThrow();
    },

    /**
     * A new password ends every session: the token version moves on (every dashboard JWT issued
     * before is refused) and every refresh token of the user, in every company, is revoked.
     */
    changePassword(id: string, changes: { name?: string; passwordHash: string }) {
      return transaction(db, async (trx) => {
        const now = new Date();
        const user = await trx
          .updateTable('users')
          .set((eb) => ({ ...changes, tokenVersion: eb('tokenVersion', '+', 1), failedSignIns: 0, signInLockedUntil: null, updatedAt: now }))
          .where('id', '=', id)
          .returning(['id', 'email', 'name', 'createdAt', 'tokenVersion'])
          .executeTakeFirstOrThrow();
        await trx.updateTable('refreshTokens').set({ revokedAt: now }).where('userId', '=', id).where('revokedAt', 'is', null).execute();
        return user;
      });
    },

    /**
     * Counts a failed sign-in in one statement (concurrent failures all count). From the
     * `afterFailures`th on, the account is locked for baseSeconds, doubling with each further
     * failure up to maxSeconds. Returns the lock's end, if any.
     */
    async recordFailedSignIn(id: string, lock: { afterFailures: number; baseSeconds: number; maxSeconds: number }): Promise<Date | null> {
      const row = await db
        .updateTable('users')
        .set({
          failedSignIns: sql`failed_sign_ins + 1`,
          signInLockedUntil: sql`case when failed_sign_ins + 1 >= ${lock.afterFailures}
            then now() + make_interval(secs => least(${lock.maxSeconds}::float8, ${lock.baseSeconds}::float8 * power(2::float8, least(failed_sign_ins + 1 - ${lock.afterFailures}, 30))))
            else sign_in_locked_until end`,
        })
        .where('id', '=', id)
        .returning('signInLockedUntil')
        .executeTakeFirst();
      return row?.signInLockedUntil ?? null;
    },

    clearFailedSignIns(id: string) {
      return db.updateTable('users').set({ failedSignIns: 0, signInLockedUntil: null }).where('id', '=', id).where('failedSignIns', '>', 0).execute();
    },

    /** Links an external identity to the signed-in user; false when it belongs to someone else. */
    async linkIdentity(userId: string, issuer: string, subject: string): Promise<boolean> {
      await db.insertInto('externalIdentities').values({ issuer, subject, userId }).onConflict((oc) => oc.columns(['issuer', 'subject']).doNothing()).execute();
      const row = await db.selectFrom('externalIdentities').select('userId').where('issuer', '=', issuer).where('subject', '=', subject).executeTakeFirstOrThrow();
      return row.userId === userId;
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
