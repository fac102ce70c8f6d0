import type { Principal } from '../../platform/auth/principal.js';
import { ApiError } from '../../platform/errors.js';

/**
 * Location scope of the caller (Dashboard roles 3): null means every location of the company;
 * otherwise the set of location ids the dashboard user may see and change. Machine tokens ignore
 * roles and scope.
 */
export function locationScope(principal: Principal): Set<string> | null {
  if (principal.kind !== 'dashboard') return null;
  if (principal.locationAccessMode === 'LOCATIONS') return new Set(principal.allowedLocationIds);
  return null;
}

export const OUTSIDE_SCOPE_MESSAGE = 'This record is outside your location access';

/** A write may only name locations inside the caller's scope. */
export function assertLocationsInScope(principal: Principal, locationIds: string[]): void {
  const scope = locationScope(principal);
  if (!scope) return;
  const outside = locationIds.filter((id) => !scope.has(id));
  if (outside.length > 0) throw new ApiError(403, `Location ${outside.join(', ')} is outside your location access`, [], 'LOCATION-112');
}

/**
 * The links a location-scoped user's `locationIds` write leaves: theirs as sent, and every link to a
 * location outside their scope as it was (they can neither add nor remove those).
 */
export function mergeScopedLocationIds(principal: Principal, current: string[], requested: string[]): string[] {
  const scope = locationScope(principal);
  if (!scope) return requested;
  return [...new Set([...current.filter((id) => !scope.has(id)), ...requested])];
}

/** Links a location-scoped reader may see: only those to their own locations. */
export function visibleLocationLinks<T extends { id: string }>(reader: Principal | undefined, links: T[]): T[] {
  const scope = reader ? locationScope(reader) : null;
  return scope ? links.filter((link) => scope.has(link.id)) : links;
}

/** A record linked to these locations is visible when scope is unrestricted or any link is in scope. */
export function inScope(scope: Set<string> | null, locationIds: string[]): boolean {
  return scope === null || locationIds.some((id) => scope.has(id));
}

export function isResourceRole(principal: Principal): principal is Extract<Principal, { kind: 'dashboard' }> {
  return principal.kind === 'dashboard' && principal.role === 'Resource';
}

export interface CatalogScope {
  /** null: every location. */
  locationIds: Set<string> | null;
  /** Set for Resource-role users: the one resource they may read and write. */
  linkedResourceId: string | null;
}

/**
 * For a Resource-role user, the only resource and services that nested summaries in location and
 * service graphs may name: their linked resource and its services (Dashboard roles 4: they read
 * only the linked resource). null for every other caller: no narrowing.
 */
export async function resourceRoleNesting(
  principal: Principal,
  linkedResourceServices: (resourceId: string) => Promise<string[]>,
): Promise<{ resourceIds: Set<string>; serviceIds: Set<string> } | null> {
  if (!isResourceRole(principal)) return null;
  const resourceId = principal.linkedResourceId;
  return { resourceIds: new Set(resourceId ? [resourceId] : []), serviceIds: new Set(resourceId ? await linkedResourceServices(resourceId) : []) };
}

/**
 * What the caller may see of the catalog. Location-scoped users see their allowed locations; a
 * Resource-role user sees the locations of their linked resource (Dashboard roles 4).
 */
export async function catalogScope(
  principal: Principal,
  linkedResourceLocations: (resourceId: string) => Promise<string[]>,
): Promise<CatalogScope> {
  if (isResourceRole(principal)) {
    const resourceId = principal.linkedResourceId;
    const locations = resourceId ? await linkedResourceLocations(resourceId) : [];
    return { locationIds: new Set(locations), linkedResourceId: resourceId };
  }
  return { locationIds: locationScope(principal), linkedResourceId: null };
}
