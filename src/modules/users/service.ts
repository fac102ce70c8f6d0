import { randomUUID } from 'node:crypto';
import type { Principal } from '../../platform/auth/principal.js';
import type { PasswordHasher } from '../../platform/auth/passwords.js';
import { randomToken, sha256 } from '../../platform/crypto.js';
import { badRequest, conflict, forbidden, notFound, unauthorized, validationError } from '../../platform/errors.js';
import { isUniqueViolation } from '../../platform/database/errors.js';

/** How long setUsers waits for its invitation mails, all sent at once, before answering. */
export const INVITATION_MAIL_DEADLINE_MS = 10_000;
import type { EmailSender } from '../../platform/messaging/email.js';
import { assertUncommonPassword } from '../identity/service.js';
import type { Db } from '../../platform/database/index.js';
import type { LocationAccessMode, Role } from '../../platform/database/schema.js';
import { assertOwned } from '../catalog/ownership.js';
import type { IdReference } from '../catalog/ownership.js';
import { pageOf } from '../catalog/graph.js';
import { MACHINE_USER_ADMIN_MESSAGE, ownersRemain, removalRefusal, roleChangeRefusal } from './role-rules.js';
import type { Assigner } from './role-rules.js';
import type { MembershipChange, UserRepository } from './repository.js';

interface AccessFields {
  role?: Role;
  locationAccessMode?: LocationAccessMode;
  allowedLocationIds?: string[];
  linkedResourceId?: string | null;
}
export interface SetUserItem extends AccessFields {
  email: string;
}
export interface AdjustUserItem extends AccessFields {
  id: string;
}

type MemberRow = Awaited<ReturnType<UserRepository['members']>>[number];
const view = (row: MemberRow) => ({
  id: row.id,
  email: row.email,
  name: row.name,
  role: row.role,
  locationAccessMode: row.locationAccessMode,
  allowedLocationIds: row.allowedLocationIds,
  linkedResourceId: row.linkedResourceId,
  createdAt: row.createdAt.toISOString(),
  updatedAt: row.updatedAt.toISOString(),
});

function assignerOf(principal: Principal): Assigner {
  if (principal.kind === 'dashboard') return { kind: 'dashboard', userId: principal.userId, role: principal.role };
  return { kind: 'machine' };
}

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

const INVALID_INVITATION = 'Invalid or expired invitation';

export function createUserService({ db, repository, passwords, email, invitationTtlSeconds, invitationMailDeadlineMs = INVITATION_MAIL_DEADLINE_MS }: UserServiceDeps) {
  /** The caller as an assigner, with the role read again under the membership lock. */
  function assignerUnderLock(principal: Principal, members: Array<{ userId: string; role: Role }>) {
    const assigner = assignerOf(principal);
    if (assigner.kind === 'machine') throw forbidden(MACHINE_USER_ADMIN_MESSAGE);
    const current = members.find((m) => m.userId === assigner.userId);
    if (!current) throw forbidden('You are no longer a user of this company');
    return { ...assigner, role: current.role };
  }

  /** `work`'s answer, or `fallback` once `ms` pass (the work goes on, its answer ignored). */
  async function withinDeadline<T>(work: Promise<T>, ms: number, fallback: T): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<T>((resolve) => (timer = setTimeout(() => resolve(fallback), ms)));
    try {
      return await Promise.race([work, late]);
    } finally {
      clearTimeout(timer);
    }
  }

  async function sendInvitation(to: string, companyName: string, token: string, baseUrl: string): Promise<boolean> {
    const days = Math.max(1, Math.round(invitationTtlSeconds / 86_400));
    const outcome = await email.send({
      to,
      subject: `You are invited to ${companyName} on Slotwise`,
      text:
        `You have been invited to join ${companyName} on Slotwise.\n\n` +
        `Your invitation token:\n\n${token}\n\n` +
        `Paste it where your Slotwise dashboard asks for it, or send it yourself: ` +
        `POST ${baseUrl}/v3/auth/acceptInvitation with {"token": "<the token>", "password": "<a password for a new account>"}.\n\n` +
        `It can be used once, within ${days} day${days === 1 ? '' : 's'}. If you did not expect this invitation, ignore this message.`,
    });
    return outcome.status === 'sent';
  }

  /** Ids named by the items must be the company's (400 naming the value otherwise). */
  async function checkReferences(companyId: string, items: AccessFields[]) {
    const references: IdReference[] = [];
    items.forEach((item, index) => {
      references.push({ table: 'locations', ids: item.allowedLocationIds ?? [], location: 'body', path: `users.${index}.allowedLocationIds` });
      if (item.linkedResourceId) {
        references.push({ table: 'resources', ids: [item.linkedResourceId], location: 'body', path: `users.${index}.linkedResourceId`, single: true });
      }
    });
    await assertOwned(db, companyId, references);
  }

  function nextMembership(userId: string, item: AccessFields, current: MembershipChange | undefined, index: number): MembershipChange {
    const role = item.role ?? current?.role ?? 'User';
    const linkedResourceId = role === 'Resource' ? (item.linkedResourceId ?? current?.linkedResourceId ?? null) : null;
    if (role === 'Resource' && !linkedResourceId) {
      throw validationError('body', `users.${index}.linkedResourceId`, 'linkedResourceId is required when the role is Resource');
    }
    return {
      userId,
      role,
      locationAccessMode: item.locationAccessMode ?? current?.locationAccessMode ?? 'COMPANY',
      allowedLocationIds: item.allowedLocationIds ?? current?.allowedLocationIds ?? [],
      linkedResourceId,
    };
  }

  /** Applies the changes under the membership lock, enforcing the role and last-Owner rules. */
  async function apply(
    principal: Principal & { companyId: string },
    resolve: (
      trx: Parameters<Parameters<UserRepository['withLockedMemberships']>[1]>[0],
      assigner: Assigner,
      members: Array<{ userId: string; role: Role }>,
    ) => Promise<Array<{ userId: string; item: AccessFields }>>,
  ) {
    return repository.withLockedMemberships(principal.companyId, async (trx, members) => {
      // The assigner's role is read again under the lock: a request authenticated just before a
      // concurrent change must not act with the role it no longer has.
      const assigner = assignerUnderLock(principal, members);
      const targets = await resolve(trx, assigner, members);
      const currentRows = await repository.currentMemberships(trx, principal.companyId, targets.map((t) => t.userId));
      const current = new Map(currentRows.map((row) => [row.userId, row]));
      const roles = new Map(members.map((m) => [m.userId, m.role]));
      const changes = targets.map((target, index) => {
        const before = current.get(target.userId);
        const refusal = roleChangeRefusal(assigner, { userId: target.userId, currentRole: before?.role ?? null }, target.item.role ?? (before ? undefined : 'User'));
        if (refusal) throw forbidden(refusal);
        const change = nextMembership(target.userId, target.item, before, index);
        roles.set(target.userId, change.role);
        return change;
      });
      if (!ownersRemain(roles.values())) throw badRequest('At least one Owner must remain; the last Owner cannot be demoted');
      for (const change of changes) {
        await repository.upsertMembership(trx, principal.companyId, change);
        // Refresh tokens are an Owner's: a demoted Owner's stop at once.
        if (current.get(change.userId)?.role === 'Owner' && change.role !== 'Owner') await repository.revokeRefreshTokens(trx, principal.companyId, change.userId);
      }
      if (targets.length === 0) return { data: [] };
      const rows = await repository.members(trx, principal.companyId, targets.map((t) => t.userId));
      return { data: rows.map(view) };
    });
  }

  return {
    async list(companyId: string, limit: number, page: number) {
      const { rows, total } = await repository.page(companyId, limit, (page - 1) * limit);
      return pageOf(rows.map(view), page, limit, total);
    },

    /**
     * By email: a member of the company has their role and access changed at once; anyone else
     * (an existing account or not) is sent an invitation, and becomes a member only by accepting
     * it with the token mailed to the address. Nobody chooses a password for someone else.
     */
    async setUsers(principal: Principal & { companyId: string }, items: SetUserItem[], baseUrl: string) {
      if (principal.kind !== 'dashboard') throw forbidden(MACHINE_USER_ADMIN_MESSAGE);
      const emails = items.map((item) => item.email.toLowerCase());
      const duplicate = emails.findIndex((email, index) => emails.indexOf(email) !== index);
      if (duplicate >= 0) throw validationError('body', `users.${duplicate}.email`, 'each email may appear once');
      await checkReferences(principal.companyId, items);
      const invited: Array<{ row: InvitationRow; token: string }> = [];
      let companyName = 'a company';
      const updated = await apply(principal, async (trx, assigner, members) => {
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
          const role = access.role ?? 'User';
          const refusal = roleChangeRefusal(assigner, { userId: userId ?? '', currentRole: null }, role);
          if (refusal) throw forbidden(refusal);
          const membership = nextMembership('', access, undefined, index);
          const token = randomToken('inv');
          const row = await repository.upsertInvitation(trx, {
            companyId: principal.companyId,
            id: randomUUID(),
            email: address,
            tokenHash: sha256(token),
            invitedByUserId: principal.userId,
            expiresAt: new Date(Date.now() + invitationTtlSeconds * 1000),
            role: membership.role,
            locationAccessMode: membership.locationAccessMode,
            allowedLocationIds: membership.allowedLocationIds,
            linkedResourceId: membership.linkedResourceId,
          });
          invited.push({ row, token });
        }
        // Read with the writes, so nothing after the commit can turn its answer into an error.
        if (invited.length) companyName = (await trx.selectFrom('companies').select('name').where('id', '=', principal.companyId).executeTakeFirst())?.name ?? companyName;
        return updates;
      });
      // Mail goes out after the commit, all at once and within one deadline: a slow or hanging
      // SMTP server delays the answer by at most INVITATION_MAIL_DEADLINE_MS, and a mail still
      // unsent then is reported as emailSent: false (setUsers again sends a fresh token).
      const sent = await Promise.all(invited.map(({ row, token }) => withinDeadline(sendInvitation(row.email, companyName, token, baseUrl).catch(() => false), invitationMailDeadlineMs, false)));
      const invitations = invited.map(({ row }, index) => invitationView(row, sent[index]!));
      return { data: updated.data, invitations };
    },

    /**
     * Accepts an invitation with the token mailed to the address, which proves the person reads
     * mail there. A new account is made with the password given; an account that never proved
     * its address is taken over (password reset, every session ended); a proven account keeps
     * its password. The invitation's role still needs someone who may grant it.
     */
    async acceptInvitation(input: { token: string; password?: string | undefined; name?: string | undefined }) {
      const invitation = await repository.invitationByTokenHash(sha256(input.token));
      if (!invitation || invitation.acceptedAt || invitation.expiresAt.getTime() <= Date.now()) throw unauthorized(INVALID_INVITATION);
      if (invitation.suspendedAt) throw forbidden('Company account is suspended');
      if (input.password !== undefined) assertUncommonPassword(input.password);
      const newHash = input.password !== undefined ? await passwords.hash(input.password) : undefined;
      return repository.withLockedMemberships(invitation.companyId, async (trx, members) => {
        const inviter = members.find((m) => m.userId === invitation.invitedByUserId);
        const refusal = inviter
          ? roleChangeRefusal({ kind: 'dashboard', userId: inviter.userId, role: inviter.role }, { userId: '', currentRole: null }, invitation.role)
          : 'the person who sent it is no longer a user of the company';
        if (refusal) throw forbidden(`This invitation can no longer be accepted: ${refusal}`);
        if (!(await repository.acceptInvitation(trx, invitation.companyId, invitation.id))) throw unauthorized(INVALID_INVITATION);
        const user = await repository.userForInvitation(trx, invitation.email);
        let userId: string;
        if (!user) {
          if (!newHash) throw validationError('body', 'password', 'password is required to create the account');
          userId = randomUUID();
          // A signup of the same address at the same moment wins the unique email: 409, not a 500.
          await repository.insertVerifiedUser(trx, { id: userId, email: invitation.email, name: input.name ?? invitation.email, passwordHash: newHash }).catch((error: unknown) => {
            if (isUniqueViolation(error)) throw conflict('An account with this email was created meanwhile; accept the invitation again to join with it');
            throw error;
          });
        } else if (!user.emailVerifiedAt && user.passwordHash) {
          if (!newHash) throw validationError('body', 'password', 'password is required: this account never confirmed its email address, so accepting sets a new password');
          userId = user.id;
          await repository.resetUnverifiedAccount(trx, user.id, newHash, input.name);
        } else {
          if (newHash) throw validationError('body', 'password', 'An account with this email exists; sign in with its password (it is not changed here)');
          userId = user.id;
        }
        if (members.some((m) => m.userId === userId)) throw badRequest('This account is already a user of the company');
        await repository.upsertMembership(trx, invitation.companyId, {
          userId,
          role: invitation.role,
          locationAccessMode: invitation.locationAccessMode,
          allowedLocationIds: invitation.allowedLocationIds,
          linkedResourceId: invitation.linkedResourceId,
        });
        const [row] = await repository.members(trx, invitation.companyId, [userId]);
        return { companyId: invitation.companyId, companyName: invitation.companyName, ...view(row!) };
      });
    },

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
      const duplicate = ids.findIndex((id, index) => ids.indexOf(id) !== index);
      if (duplicate >= 0) throw validationError('body', `users.${duplicate}.id`, 'each id may appear once');
      await checkReferences(principal.companyId, items);
      return apply(principal, async (trx) => {
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
