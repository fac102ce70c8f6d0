import type { Transaction } from 'kysely';
import type { Db } from '../../platform/database/index.js';
import type { Database, LocationAccessMode, Role } from '../../platform/database/schema.js';

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

export function createUserRepository(db: Db) {
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
    withLockedMemberships<T>(companyId: string, work: (trx: Transaction<Database>, members: Array<{ userId: string; role: Role }>) => Promise<T>) {
      return db.transaction().execute(async (trx) => {
        const members = await trx
          .selectFrom('companyUsers')
          .select(['userId', 'role'])
          .where('companyId', '=', companyId)
          .forUpdate()
          .execute();
        return work(trx, members);
      });
    },

    usersByEmail(trx: Transaction<Database>, emails: string[]) {
      if (emails.length === 0) return Promise.resolve([]);
      return trx
        .selectFrom('users')
        .select(['id', 'email'])
        .where((eb) => eb(eb.fn('lower', ['email']), 'in', emails.map((e) => e.toLowerCase())))
        .execute();
    },

    insertUser(trx: Transaction<Database>, user: { id: string; email: string; name: string; passwordHash: string }) {
      return trx.insertInto('users').values(user).execute();
    },

    upsertMembership(trx: Transaction<Database>, companyId: string, change: MembershipChange) {
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

    currentMemberships(trx: Transaction<Database>, companyId: string, userIds: string[]) {
      if (userIds.length === 0) return Promise.resolve([]);
      return trx
        .selectFrom('companyUsers')
        .selectAll()
        .where('companyId', '=', companyId)
        .where('userId', 'in', userIds)
        .execute();
    },

    members(trx: Transaction<Database>, companyId: string, userIds: string[]) {
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

export type UserRepository = ReturnType<typeof createUserRepository>;
