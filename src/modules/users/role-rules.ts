import type { Role } from '../../platform/database/schema.js';

/** Who is assigning: a machine token (governed by scope only) or a dashboard user with a role. */
export type Assigner = { kind: 'machine' } | { kind: 'dashboard'; userId: string; role: Role };

/**
 * Dashboard roles 2: Owner may assign any role, including Owner. Admin may not assign Owner, may
 * not change another Admin's role (nor touch an Owner), and may promote User to Admin. Users and
 * Resource-role users assign nothing. Machine tokens ignore roles.
 * Returns the reason the change is refused, or null when it is allowed.
 */
export function roleChangeRefusal(
  assigner: Assigner,
  target: { userId: string; currentRole: Role | null },
  newRole: Role | undefined,
): string | null {
  if (assigner.kind === 'machine') return null;
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
