import type { Role } from '../../platform/database/schema.js';

/**
 * Who is assigning. User administration needs a dashboard user (docs/api.md, Dashboard users): a machine token
 * is refused outright, whatever its scope, so client credentials an Admin creates cannot be used
 * to step around these rules.
 */
export type Assigner = { kind: 'machine' } | { kind: 'dashboard'; userId: string; role: Role };

export const MACHINE_USER_ADMIN_MESSAGE = 'User administration needs a dashboard user; machine tokens cannot manage users';

/**
 * Dashboard roles 2: Owner may assign any role, including Owner. Admin may not assign Owner, may
 * not change another Admin's role (nor touch an Owner), and may promote User to Admin. Users and
 * Resource-role users assign nothing. Machine tokens assign nothing either.
 * Returns the reason the change is refused, or null when it is allowed.
 */
export function roleChangeRefusal(
  assigner: Assigner,
  target: { userId: string; currentRole: Role | null },
  newRole: Role | undefined,
): string | null {
  if (assigner.kind === 'machine') return MACHINE_USER_ADMIN_MESSAGE;
  if (assigner.role === 'Owner') return null;
  if (assigner.role !== 'Admin') return 'Only Owners and Admins manage users';
  if (newRole === 'Owner') return 'An Admin cannot assign the Owner role';
  if (target.currentRole === 'Owner') return 'An Admin cannot change an Owner';
  const changesRole = newRole !== undefined && newRole !== target.currentRole;
  if (target.currentRole === 'Admin' && target.userId !== assigner.userId && changesRole) {
    return "An Admin cannot change another Admin's role";
  }
  return null;
}

/** At least one Owner must remain after a change (the last Owner cannot be demoted). */
export function ownersRemain(roles: Iterable<Role>): boolean {
  for (const role of roles) if (role === 'Owner') return true;
  return false;
}

/**
 * Removing a member: Owners remove anyone; an Admin removes Users, Resource-role users and
 * themselves, never an Owner or another Admin (the same reach as changing roles).
 */
export function removalRefusal(assigner: Assigner, target: { userId: string; role: Role }): string | null {
  if (assigner.kind === 'machine') return MACHINE_USER_ADMIN_MESSAGE;
  if (assigner.role === 'Owner') return null;
  if (assigner.role !== 'Admin') return 'Only Owners and Admins manage users';
  if (target.role === 'Owner') return 'An Admin cannot remove an Owner';
  if (target.role === 'Admin' && target.userId !== assigner.userId) return 'An Admin cannot remove another Admin';
  return null;
}
