import { randomUUID } from 'node:crypto';
import type { Principal } from '../../platform/auth/principal.js';
import type { PasswordHasher } from '../../platform/auth/passwords.js';
import { randomToken, sha256 } from '../../platform/crypto.js';
import { badRequest, forbidden, notFound, validationError } from '../../platform/errors.js';
import type { EmailSender } from '../../platform/messaging/email.js';
import type { Db } from '../../platform/database/index.js';
import { pageOf } from '../catalog/graph.js';
import { MACHINE_USER_ADMIN_MESSAGE, ownersRemain, removalRefusal, roleChangeRefusal } from './role-rules.js';
import type { UserRepository } from './repository.js';
import { assignerUnderLock, createMembershipChanges, memberView, nextMembership } from './membership-changes.js';
import type { AccessFields, AdjustUserItem, SetUserItem } from './schemas.js';
import { createInvitationAcceptance } from './accept-invitation.js';
import { INVITATION_MAIL_DEADLINE_MS, sendInvitationMail, withinDeadline } from './invitation-mail.js';

export { INVITATION_MAIL_DEADLINE_MS };


export interface UserServiceDeps {
  db: Db;
  repository: UserRepository;
  passwords: PasswordHasher;
  /** Sends invitations; not configured, invitations are made but not sent (emailSent false). */
  email: EmailSender;
  invitationTtlSeconds: number;
  /** How long setUsers waits for its invitation mails (default INVITATION_MAIL_DEADLINE_MS). */
  invitationMailDeadlineMs?: number;
}

type InvitationRow = Awaited<ReturnType<UserRepository['upsertInvitation']>>;
const invitationView = (row: InvitationRow, emailSent: boolean) => ({
  id: row.id,
  email: row.email,
  role: row.role,
  locationAccessMode: row.locationAccessMode,
  allowedLocationIds: row.allowedLocationIds,
  linkedResourceId: row.linkedResourceId,
  expiresAt: row.expiresAt.toISOString(),
  emailSent,
});

/** The index of the first value that repeats an earlier one, or -1. */
const firstRepeat = (values: string[]) => values.findIndex((value, index) => values.indexOf(value) !== index);

export function createUserService({ db, repository, passwords, email, invitationTtlSeconds, invitationMailDeadlineMs = INVITATION_MAIL_DEADLINE_MS }: UserServiceDeps) {
  const memberships = createMembershipChanges({ db, repository });

  /**
   * By email: a member of the company has their role and access changed at once; anyone else
   * (an existing account or not) is sent an invitation, and becomes a member only by accepting
   * it with the token mailed to the address. Nobody chooses a password for someone else.
   */
  async function setUsers(principal: Principal & { companyId: string }, items: SetUserItem[], baseUrl: string) {
    if (principal.kind !== 'dashboard') throw forbidden(MACHINE_USER_ADMIN_MESSAGE);
    const duplicate = firstRepeat(items.map((item) => item.email.toLowerCase()));
    if (duplicate >= 0) throw validationError('body', `users.${duplicate}.email`, 'each email may appear once');
    await memberships.checkReferences(principal.companyId, items);
    let invited: Array<{ row: InvitationRow; token: string }> = [];
    let companyName = 'a company';
    const updated = await memberships.apply(principal, async (trx, assigner, members) => {
      // transaction() runs this again after a deadlock: only the attempt that commits may mail.
      invited = [];
      companyName = 'a company';
      const existing = new Map((await repository.usersByEmail(trx, items.map((i) => i.email))).map((u) => [u.email.toLowerCase(), u.id]));
      const memberIds = new Set(members.map((m) => m.userId));
      const updates: Array<{ userId: string; item: AccessFields }> = [];
      for (const [index, item] of items.entries()) {
        const { email: address, ...access } = item;
        const userId = existing.get(address.toLowerCase());
        if (userId && memberIds.has(userId)) {
          updates.push({ userId, item: access });
          continue;
        }
        const refusal = roleChangeRefusal(assigner, { userId: userId ?? '', currentRole: null }, access.role ?? 'User');
        if (refusal) throw forbidden(refusal);
        const { userId: _none, ...membership } = nextMembership('', access, undefined, index);
        const token = randomToken('inv');
        const row = await repository.upsertInvitation(trx, {
          companyId: principal.companyId,
          id: randomUUID(),
          email: address,
          tokenHash: sha256(token),
          invitedByUserId: principal.userId,
          expiresAt: new Date(Date.now() + invitationTtlSeconds * 1000),
          ...membership,
        });
        invited.push({ row, token });
      }
      // Read with the writes, so nothing after the commit can turn its answer into an error.
      if (invited.length) companyName = (await repository.companyName(trx, principal.companyId)) ?? companyName;
      return updates;
    });
    // Mail goes out after the commit, all at once and within one deadline: a slow or hanging
    // SMTP server delays the answer by at most INVITATION_MAIL_DEADLINE_MS, and a mail still
    // unsent then is reported as emailSent: false (setUsers again sends a fresh token).
    const sent = await Promise.all(
      invited.map(({ row, token }) =>
        withinDeadline(sendInvitationMail(email, { to: row.email, companyName, token, baseUrl, ttlSeconds: invitationTtlSeconds }).catch(() => false), invitationMailDeadlineMs, false),
      ),
    );
    return { data: updated.data, invitations: invited.map(({ row }, index) => invitationView(row, sent[index]!)) };
  }

  return {
    async list(companyId: string, limit: number, page: number) {
      const { rows, total } = await repository.page(companyId, limit, (page - 1) * limit);
      return pageOf(rows.map(memberView), page, limit, total);
    },

    setUsers,

    acceptInvitation: createInvitationAcceptance({ repository, passwords }),

    /**
     * Removes a member: their membership goes, the refresh tokens they hold for the company are
     * revoked and so are the client credentials they created (tokens of those stop at once).
     */
    async removeUser(principal: Principal & { companyId: string }, userId: string) {
      return repository.withLockedMemberships(principal.companyId, async (trx, members) => {
        const assigner = assignerUnderLock(principal, members);
        const target = members.find((m) => m.userId === userId);
        if (!target) throw notFound('User not found in this company');
        const refusal = removalRefusal(assigner, target);
        if (refusal) throw forbidden(refusal);
        if (!ownersRemain(members.filter((m) => m.userId !== userId).map((m) => m.role))) {
          throw badRequest('At least one Owner must remain; the last Owner cannot be removed');
        }
        await repository.deleteMembership(trx, principal.companyId, userId);
        await repository.revokeRefreshTokens(trx, principal.companyId, userId);
        const revokedClientCredentials = await repository.revokeClientCredentialsOf(trx, principal.companyId, userId);
        return { revokedClientCredentials };
      });
    },

    /** Changes role and access of existing members, by user id. */
    async adjustUsers(principal: Principal & { companyId: string }, items: AdjustUserItem[]) {
      const ids = items.map((item) => item.id);
      const duplicate = firstRepeat(ids);
      if (duplicate >= 0) throw validationError('body', `users.${duplicate}.id`, 'each id may appear once');
      await memberships.checkReferences(principal.companyId, items);
      return memberships.apply(principal, async (trx) => {
        const found = new Set((await repository.currentMemberships(trx, principal.companyId, ids)).map((m) => m.userId));
        items.forEach((item, index) => {
          if (!found.has(item.id)) throw validationError('body', `users.${index}.id`, `${item.id} is not a user of this company`);
        });
        return items.map(({ id, ...access }) => ({ userId: id, item: access }));
      });
    },
  };
}

export type UserService = ReturnType<typeof createUserService>;
