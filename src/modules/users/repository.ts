import type { Db } from '../../platform/database/index.js';
import { transaction } from '../../platform/database/transaction.js';
import type { LocationAccessMode, Role } from '../../platform/database/schema.js';

export interface MembershipChange {
  userId: string;
  role: Role;
  locationAccessMode: LocationAccessMode;
  allowedLocationIds: string[];
  linkedResourceId: string | null;
}

const MEMBER_COLUMNS = [
  'u.id',
  'u.email',
  'u.name',
  'cu.role',
  'cu.locationAccessMode',
  'cu.allowedLocationIds',
  'cu.linkedResourceId',
  'cu.createdAt',
  'cu.updatedAt',
] as const;

/** Memberships of a company, read and changed under the membership lock. */
function createMembershipRepository(db: Db) {
  return {
    async page(companyId: string, limit: number, offset: number) {
      const base = db.selectFrom('companyUsers as cu').innerJoin('users as u', 'u.id', 'cu.userId').where('cu.companyId', '=', companyId);
      const [rows, count] = await Promise.all([
        base.select(MEMBER_COLUMNS).orderBy('u.email').limit(limit).offset(offset).execute(),
        base.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow(),
      ]);
      return { rows, total: Number(count.total) };
    },

    /** Runs `work` in a transaction holding row locks on every membership of the company, so
     * concurrent role changes are serialised and the last-Owner rule cannot be raced. */
    withLockedMemberships<T>(companyId: string, work: (trx: Db, members: Array<{ userId: string; role: Role }>) => Promise<T>) {
      return transaction(db, async (trx) => {
        const members = await trx
          .selectFrom('companyUsers')
          .select(['userId', 'role'])
          .where('companyId', '=', companyId)
          .forUpdate()
          .execute();
        return work(trx, members);
      });
    },

    usersByEmail(trx: Db, emails: string[]) {
      if (emails.length === 0) return Promise.resolve([]);
      return trx
        .selectFrom('users')
        .select(['id', 'email'])
        .where((eb) => eb(eb.fn('lower', ['email']), 'in', emails.map((e) => e.toLowerCase())))
        .execute();
    },

    /** Replaces the pending invitation of the address (if any) with a new one. */
    /** Ends the refresh tokens a user holds for this company (demotion from Owner, removal). */
    revokeRefreshTokens(trx: Db, companyId: string, userId: string) {
      return trx.updateTable('refreshTokens').set({ revokedAt: new Date() }).where('companyId', '=', companyId).where('userId', '=', userId).where('revokedAt', 'is', null).execute();
    },

    /** Revokes the client credentials a user created in this company (removal). Returns how many. */
    async revokeClientCredentialsOf(trx: Db, companyId: string, userId: string): Promise<number> {
      const result = await trx
        .updateTable('clientCredentials')
        .set({ revokedAt: new Date() })
        .where('companyId', '=', companyId)
        .where('createdByUserId', '=', userId)
        .where('revokedAt', 'is', null)
        .executeTakeFirst();
      return Number(result.numUpdatedRows);
    },

    deleteMembership(trx: Db, companyId: string, userId: string) {
      return trx.deleteFrom('companyUsers').where('companyId', '=', companyId).where('userId', '=', userId).execute();
    },

    upsertMembership(trx: Db, companyId: string, change: MembershipChange) {
      return trx
        .insertInto('companyUsers')
        .values({ companyId, ...change })
        .onConflict((oc) =>
          oc.columns(['companyId', 'userId']).doUpdateSet({
            role: change.role,
            locationAccessMode: change.locationAccessMode,
            allowedLocationIds: change.allowedLocationIds,
            linkedResourceId: change.linkedResourceId,
            updatedAt: new Date(),
          }),
        )
        .execute();
    },

    currentMemberships(trx: Db, companyId: string, userIds: string[]) {
      if (userIds.length === 0) return Promise.resolve([]);
      return trx
        .selectFrom('companyUsers')
        .selectAll()
        .where('companyId', '=', companyId)
        .where('userId', 'in', userIds)
        .execute();
    },

    members(trx: Db, companyId: string, userIds: string[]) {
      return trx
        .selectFrom('companyUsers as cu')
        .innerJoin('users as u', 'u.id', 'cu.userId')
        .select(MEMBER_COLUMNS)
        .where('cu.companyId', '=', companyId)
        .where('cu.userId', 'in', userIds)
        .orderBy('u.email')
        .execute();
    },
  };
}

/** Invitations and the accounts they create or take over. */
function createInvitationRepository(db: Db) {
  return {
    /** The company's name, read with an invitation's writes (it goes into the mail). */
    async companyName(trx: Db, companyId: string) {
      return (await trx.selectFrom('companies').select('name').where('id', '=', companyId).executeTakeFirst())?.name;
    },

    async upsertInvitation(
      trx: Db,
      invitation: { companyId: string; id: string; email: string; tokenHash: string; invitedByUserId: string; expiresAt: Date } & Omit<MembershipChange, 'userId'>,
    ) {
      await trx
        .deleteFrom('invitations')
        .where('companyId', '=', invitation.companyId)
        .where((eb) => eb(eb.fn('lower', ['email']), '=', invitation.email.toLowerCase()))
        .where('acceptedAt', 'is', null)
        .execute();
      return trx
        .insertInto('invitations')
        .values(invitation)
        .returning(['id', 'email', 'role', 'locationAccessMode', 'allowedLocationIds', 'linkedResourceId', 'expiresAt', 'createdAt'])
        .executeTakeFirstOrThrow();
    },

    invitationByTokenHash(tokenHash: string) {
      return db
        .selectFrom('invitations as i')
        .innerJoin('companies as c', 'c.id', 'i.companyId')
        .select(['i.companyId', 'i.id', 'i.email', 'i.role', 'i.locationAccessMode', 'i.allowedLocationIds', 'i.linkedResourceId', 'i.invitedByUserId', 'i.expiresAt', 'i.acceptedAt', 'c.suspendedAt', 'c.name as companyName'])
        .where('i.tokenHash', '=', tokenHash)
        .executeTakeFirst();
    },

    /** Marks the invitation accepted; false when it was accepted (or replaced) meanwhile. */
    async acceptInvitation(trx: Db, companyId: string, id: string): Promise<boolean> {
      const result = await trx.updateTable('invitations').set({ acceptedAt: new Date() }).where('companyId', '=', companyId).where('id', '=', id).where('acceptedAt', 'is', null).executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },

    userForInvitation(trx: Db, email: string) {
      return trx
        .selectFrom('users')
        .select(['id', 'passwordHash', 'emailVerifiedAt'])
        .where((eb) => eb(eb.fn('lower', ['email']), '=', email.toLowerCase()))
        .forUpdate()
        .executeTakeFirst();
    },

    insertVerifiedUser(trx: Db, user: { id: string; email: string; name: string; passwordHash: string }) {
      return trx.insertInto('users').values({ ...user, emailVerifiedAt: new Date() }).execute();
    },

    /**
     * The address of an account that never proved it has now been proven by whoever accepted an
     * invitation sent there: that person takes the account over, as with a password reset. Every
     * session and refresh token of the account ends.
     */
    async resetUnverifiedAccount(trx: Db, userId: string, passwordHash: string, name: string | undefined) {
      const now = new Date();
      await trx
        .updateTable('users')
        .set((eb) => ({ passwordHash, ...(name ? { name } : {}), emailVerifiedAt: now, tokenVersion: eb('tokenVersion', '+', 1), failedSignIns: 0, signInLockedUntil: null, updatedAt: now }))
        .where('id', '=', userId)
        .execute();
      await trx.updateTable('refreshTokens').set({ revokedAt: now }).where('userId', '=', userId).where('revokedAt', 'is', null).execute();
    },

  };
}

export function createUserRepository(db: Db) {
  return { ...createMembershipRepository(db), ...createInvitationRepository(db) };
}

export type UserRepository = ReturnType<typeof createUserRepository>;
