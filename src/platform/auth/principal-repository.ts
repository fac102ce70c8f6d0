import { reusableQuery } from '../database/reusable-query.js';
import { sql } from 'kysely';
import { randomUUID } from 'node:crypto';
import type { Db } from '../database/index.js';
import { transaction } from '../database/transaction.js';

export type ExternalIdentityMatch =
  | { kind: 'user'; userId: string }
  | { kind: 'refused'; reason: 'no-email' | 'email-not-verified' | 'password-account' };

/**
 * The company and credential of a machine token, read on every request a machine client sends:
 * compiled once (reusableQuery), since building it with Kysely cost a quarter of a millisecond a
 * request (issue 18).
 */
const machineContextStatement = reusableQuery<null, { companyId: string; clientId: string }, { id: string; suspendedAt: Date | null; revokedAt: Date | null; credentialId: string | null }>(
  (db, _shape, value) =>
    db
      .selectFrom('companies as c')
      .leftJoin('clientCredentials as cc', (join) => join.onRef('cc.companyId', '=', 'c.id').on('cc.clientId', '=', value<string>('clientId')))
      .select(['c.id', 'c.suspendedAt', 'cc.revokedAt', 'cc.id as credentialId'])
      .where('c.id', '=', value<string>('companyId'))
      .compile(),
  () => 'machine',
);

/** The reads the authentication hook needs, each one query. */
export function createPrincipalRepository(db: Db) {
  return {
    async machineContext(companyId: string, clientId: string) {
      return (await machineContextStatement(db, null, { companyId, clientId }))[0];
    },

    /** The company of a Calendar Selection Token, and whether its connection still exists. */
    calendarSelectionContext(companyId: string, connectionId: string) {
      return db
        .selectFrom('companies as c')
        .leftJoin('externalCalendarConnections as ecc', (join) => join.onRef('ecc.companyId', '=', 'c.id').on('ecc.id', '=', connectionId))
        .select(['c.suspendedAt', 'ecc.id as connectionId'])
        .where('c.id', '=', companyId)
        .executeTakeFirst();
    },

    /** The company of a manage-link token, and whether its appointment still exists there. */
    manageContext(companyId: string, appointmentId: string) {
      return db
        .selectFrom('companies as c')
        .leftJoin('appointments as a', (join) => join.onRef('a.companyId', '=', 'c.id').on('a.id', '=', appointmentId))
        .select(['c.suspendedAt', 'a.id as appointmentId'])
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

    /** Whether any company lists this host among its allowed domains (CORS preflights). */
    async isAllowedDomainAnywhere(host: string): Promise<boolean> {
      const row = await db
        .selectFrom('companies')
        .select('id')
        .where(sql<boolean>`${host} = any(allowed_domains)`)
        .where('suspendedAt', 'is', null)
        .limit(1)
        .executeTakeFirst();
      return row !== undefined;
    },

    membership(companyId: string, userId: string) {
      return db
        .selectFrom('companyUsers')
        .select(['role', 'locationAccessMode', 'allowedLocationIds', 'linkedResourceId'])
        .where('companyId', '=', companyId)
        .where('userId', '=', userId)
        .executeTakeFirst();
    },

    /** The user's current token version: a dashboard JWT of another version is no longer valid. */
    userTokenVersion(userId: string) {
      return db.selectFrom('users').select(['id', 'tokenVersion']).where('id', '=', userId).executeTakeFirst();
    },

    /**
     * The user of an external OpenID Connect identity. Found by (issuer, subject); the first time,
     * an email the issuer has verified may match an account that has no password (one made by the
     * issuer before identities were recorded), or make a new one. An account with a password is
     * never taken over: its owner links the identity while signed in (POST /v3/auth/me/identities).
     */
    async userForExternalIdentity(identity: { issuer: string; subject: string; email: string | undefined; emailVerified: boolean; name: string | undefined }): Promise<ExternalIdentityMatch> {
      const linked = await db
        .selectFrom('externalIdentities as ei')
        .innerJoin('users as u', 'u.id', 'ei.userId')
        .select(['u.id', 'u.tokenVersion'])
        .where('ei.issuer', '=', identity.issuer)
        .where('ei.subject', '=', identity.subject)
        .executeTakeFirst();
      if (linked) return { kind: 'user', userId: linked.id };
      if (!identity.email) return { kind: 'refused', reason: 'no-email' };
      if (!identity.emailVerified) return { kind: 'refused', reason: 'email-not-verified' };
      const email = identity.email;
      return transaction(db, async (trx) => {
        const byEmail = (conn: typeof trx) =>
          conn
            .selectFrom('users')
            .select(['id', 'passwordHash'])
            .where((eb) => eb(eb.fn('lower', ['email']), '=', email.toLowerCase()))
            .forUpdate()
            .executeTakeFirst();
        let user = await byEmail(trx);
        if (user?.passwordHash) return { kind: 'refused', reason: 'password-account' } as const;
        if (!user) {
          await trx
            .insertInto('users')
            .values({ id: randomUUID(), email, name: identity.name ?? email, passwordHash: null, emailVerifiedAt: new Date() })
            .onConflict((oc) => oc.expression(sql`lower(email)`).doNothing())
            .execute();
          user = await byEmail(trx);
          if (!user || user.passwordHash) return { kind: 'refused', reason: 'password-account' } as const;
        }
        await trx
          .updateTable('users')
          .set((eb) => ({ emailVerifiedAt: eb.fn.coalesce('emailVerifiedAt', eb.val(new Date())) }))
          .where('id', '=', user.id)
          .execute();
        await trx
          .insertInto('externalIdentities')
          .values({ issuer: identity.issuer, subject: identity.subject, userId: user.id })
          .onConflict((oc) => oc.columns(['issuer', 'subject']).doNothing())
          .execute();
        const owner = await trx
          .selectFrom('externalIdentities')
          .select('userId')
          .where('issuer', '=', identity.issuer)
          .where('subject', '=', identity.subject)
          .executeTakeFirstOrThrow();
        return { kind: 'user', userId: owner.userId } as const;
      });
    },
  };
}

export type PrincipalRepository = ReturnType<typeof createPrincipalRepository>;
