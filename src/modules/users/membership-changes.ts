import type { Principal } from '../../platform/auth/principal.js';
import type { Db } from '../../platform/database/index.js';
import type { Role } from '../../platform/database/schema.js';
import type { AccessFields } from './schemas.js';
import { badRequest, forbidden, validationError } from '../../platform/errors.js';
import { assertOwned } from '../catalog/ownership.js';
import type { IdReference } from '../catalog/ownership.js';
import { MACHINE_USER_ADMIN_MESSAGE, ownersRemain, roleChangeRefusal } from './role-rules.js';
import type { Assigner } from './role-rules.js';
import type { MembershipChange, UserRepository } from './repository.js';


type MemberRow = Awaited<ReturnType<UserRepository['members']>>[number];
export const memberView = (row: MemberRow) => ({
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

/** The caller as an assigner, with the role read again under the membership lock. */
export function assignerUnderLock(principal: Principal, members: Array<{ userId: string; role: Role }>) {
  const assigner = assignerOf(principal);
  if (assigner.kind === 'machine') throw forbidden(MACHINE_USER_ADMIN_MESSAGE);
  const current = members.find((m) => m.userId === assigner.userId);
  if (!current) throw forbidden('You are no longer a user of this company');
  return { ...assigner, role: current.role };
}

/** The membership an item asks for, starting from the current one (if any). */
export function nextMembership(userId: string, item: AccessFields, current: MembershipChange | undefined, index: number): MembershipChange {
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

type MembershipTargets = (trx: Db, assigner: Assigner, members: Array<{ userId: string; role: Role }>) => Promise<Array<{ userId: string; item: AccessFields }>>;

type MembershipRepository = Pick<UserRepository, 'withLockedMemberships' | 'currentMemberships' | 'upsertMembership' | 'revokeRefreshTokens' | 'members'>;

/** Role and access changes of several members at once, under the membership lock. */
export function createMembershipChanges({ db, repository }: { db: Db; repository: MembershipRepository }) {
  return {
    /** Ids named by the items must be the company's (400 naming the value otherwise). */
    async checkReferences(companyId: string, items: AccessFields[]) {
      const references: IdReference[] = [];
      items.forEach((item, index) => {
        references.push({ table: 'locations', ids: item.allowedLocationIds ?? [], location: 'body', path: `users.${index}.allowedLocationIds` });
        if (item.linkedResourceId) {
          references.push({ table: 'resources', ids: [item.linkedResourceId], location: 'body', path: `users.${index}.linkedResourceId`, single: true });
        }
      });
      await assertOwned(db, companyId, references);
    },

    /** Applies the changes `resolve` names under the membership lock, enforcing the role and last-Owner rules. */
    async apply(principal: Principal & { companyId: string }, resolve: MembershipTargets) {
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
        return { data: rows.map(memberView) };
      });
    },
  };
}
