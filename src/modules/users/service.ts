import { randomBytes, randomUUID } from 'node:crypto';
import type { Principal } from '../../platform/auth/principal.js';
import { hashPassword } from '../../platform/auth/passwords.js';
import { badRequest, forbidden, validationError } from '../../platform/errors.js';
import type { Db } from '../../platform/database/index.js';
import type { LocationAccessMode, Role } from '../../platform/database/schema.js';
import { assertOwned } from '../catalog/ownership.js';
import type { IdReference } from '../catalog/ownership.js';
import { pageOf } from '../catalog/graph.js';
import { ownersRemain, roleChangeRefusal } from './role-rules.js';
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
  name?: string;
  password?: string;
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

export function createUserService({ db, repository }: { db: Db; repository: UserRepository }) {
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
    resolve: (trx: Parameters<Parameters<UserRepository['withLockedMemberships']>[1]>[0]) => Promise<Array<{ userId: string; item: AccessFields; temporaryPassword?: string }>>,
  ) {
    return repository.withLockedMemberships(principal.companyId, async (trx, members) => {
      // The assigner's role is read again under the lock: a request authenticated just before a
      // concurrent change must not act with the role it no longer has.
      let assigner = assignerOf(principal);
      if (assigner.kind === 'dashboard') {
        const current = members.find((m) => m.userId === (assigner as { userId: string }).userId);
        if (!current) throw forbidden('You are no longer a user of this company');
        assigner = { ...assigner, role: current.role };
      }
      const targets = await resolve(trx);
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
      for (const change of changes) await repository.upsertMembership(trx, principal.companyId, change);
      const rows = await repository.members(trx, principal.companyId, targets.map((t) => t.userId));
      const passwords = new Map(targets.filter((t) => t.temporaryPassword).map((t) => [t.userId, t.temporaryPassword!]));
      return {
        data: rows.map((row) => ({ ...view(row), ...(passwords.has(row.id) ? { temporaryPassword: passwords.get(row.id) } : {}) })),
      };
    });
  }

  return {
    async list(companyId: string, limit: number, page: number) {
      const { rows, total } = await repository.page(companyId, limit, (page - 1) * limit);
      return pageOf(rows.map(view), page, limit, total);
    },

    /** Creates or updates members by email. A new account without a password gets a temporary
     * one, returned once. */
    async setUsers(principal: Principal & { companyId: string }, items: SetUserItem[]) {
      const emails = items.map((item) => item.email.toLowerCase());
      const duplicate = emails.findIndex((email, index) => emails.indexOf(email) !== index);
      if (duplicate >= 0) throw validationError('body', `users.${duplicate}.email`, 'each email may appear once');
      await checkReferences(principal.companyId, items);
      const hashes = await Promise.all(
        items.map(async (item) => {
          const temporaryPassword = item.password ? undefined : randomBytes(12).toString('base64url');
          return { temporaryPassword, hash: await hashPassword(item.password ?? temporaryPassword!) };
        }),
      );
      return apply(principal, async (trx) => {
        const existing = new Map((await repository.usersByEmail(trx, items.map((i) => i.email))).map((u) => [u.email.toLowerCase(), u.id]));
        const targets = [];
        for (const [index, item] of items.entries()) {
          let userId = existing.get(item.email.toLowerCase());
          let temporaryPassword: string | undefined;
          if (!userId) {
            userId = randomUUID();
            await repository.insertUser(trx, { id: userId, email: item.email, name: item.name ?? item.email, passwordHash: hashes[index]!.hash });
            temporaryPassword = hashes[index]!.temporaryPassword;
          }
          const { email: _email, name: _name, password: _password, ...access } = item;
          targets.push({ userId, item: access, ...(temporaryPassword ? { temporaryPassword } : {}) });
        }
        return targets;
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
