// What a block, a recurring block or an allocation set is scoped to, and who may see and change it.
import type { Principal } from '../../platform/auth/principal.js';
import { fieldError, forbidden } from '../../platform/errors.js';
import type { ErrorLocation, FieldError } from '../../platform/errors.js';
import type { TouchedEntities } from '../availability/cache.js';
import type { IdReference } from '../catalog/ownership.js';
import { assertLocationsInScope, catalogScope, inScope, isResourceRole, locationScope, OUTSIDE_SCOPE_MESSAGE } from '../catalog/scope.js';
import type { CatalogLinks } from '../catalog/links.js';
import type { ScopeMatch, UnavailabilityRepository } from './repository.js';
import type { ScopeInput } from './schemas.js';

export type Caller = Principal & { companyId: string };

/** A row's scope: one of the three ids (allocations: a location, and optionally a service and a resource). */
export interface Scope {
  locationId: string | null;
  resourceId: string | null;
  serviceId: string | null;
}

export const SCOPE_KEYS = ['LocationId', 'ResourceId', 'ServiceId'] as const;

/** Exactly one of LocationId, ResourceId, ServiceId. */
export function scopeProblems(input: ScopeInput): FieldError[] {
  const given = SCOPE_KEYS.filter((key) => input[key] !== undefined);
  if (given.length === 1) return [];
  if (given.length === 0) return [fieldError('body', 'LocationId', 'One of LocationId, ResourceId or ServiceId is required')];
  return given.slice(1).map((key) => fieldError('body', key, `Give only one of LocationId, ResourceId or ServiceId (got ${given.join(', ')})`));
}

export function scopeOf(input: ScopeInput): Scope {
  return { locationId: input.LocationId ?? null, resourceId: input.ResourceId ?? null, serviceId: input.ServiceId ?? null };
}

/** Ownership references for scope ids given in a body or query: 400 naming a foreign or unknown id. */
export function scopeReferences(input: ScopeInput, location: ErrorLocation): IdReference[] {
  return [
    { table: 'locations', ids: input.LocationId ? [input.LocationId] : [], location, path: 'LocationId', single: true },
    { table: 'resources', ids: input.ResourceId ? [input.ResourceId] : [], location, path: 'ResourceId', single: true },
    { table: 'services', ids: input.ServiceId ? [input.ServiceId] : [], location, path: 'ServiceId', single: true },
  ];
}

/** The records whose availability the scopes of a write may have changed (the cache's versions). */
export function touched(...scopes: Array<Partial<Scope>>): TouchedEntities {
  const locations = new Set<string>();
  const resources = new Set<string>();
  const services = new Set<string>();
  for (const scope of scopes) {
    if (scope.locationId) locations.add(scope.locationId);
    if (scope.resourceId) resources.add(scope.resourceId);
    if (scope.serviceId) services.add(scope.serviceId);
  }
  return {
    ...(locations.size ? { locations: [...locations] } : {}),
    ...(resources.size ? { resources: [...resources] } : {}),
    ...(services.size ? { services: [...services] } : {}),
  };
}

/** A list filter: the scope ids given (any of them matches), or null for no filter. */
export function filterOf(input: ScopeInput): ScopeMatch | null {
  if (!input.LocationId && !input.ResourceId && !input.ServiceId) return null;
  return {
    locationIds: input.LocationId ? [input.LocationId] : [],
    resourceIds: input.ResourceId ? [input.ResourceId] : [],
    serviceIds: input.ServiceId ? [input.ServiceId] : [],
  };
}

export function isVisible(visible: ScopeMatch | null, scope: Scope): boolean {
  if (!visible) return true;
  return (
    (scope.locationId !== null && visible.locationIds.includes(scope.locationId)) ||
    (scope.resourceId !== null && visible.resourceIds.includes(scope.resourceId)) ||
    (scope.serviceId !== null && visible.serviceIds.includes(scope.serviceId))
  );
}

export interface AccessDeps {
  links: Pick<CatalogLinks, 'resourceLocationIds' | 'serviceLocationIds' | 'resourceServiceIds'>;
  repository: Pick<UnavailabilityRepository, 'linkedToLocations'>;
}

/** Who may change and who may read which unavailability: shared by every kind. */
export function createUnavailabilityAccess({ links, repository }: AccessDeps) {
  return {
    /**
     * Writes need a role other than Resource (the routes say so too) and, for a location-scoped
     * user, a scope inside their locations: a location they may access, or a resource or service
     * linked to one of them.
     */
    async assertWritable(principal: Caller, scope: Scope): Promise<void> {
      if (isResourceRole(principal)) throw forbidden('A Resource-role user cannot change unavailability');
      const allowed = locationScope(principal);
      if (!allowed) return;
      if (scope.locationId) return assertLocationsInScope(principal, [scope.locationId]);
      const locationIds = scope.resourceId
        ? await links.resourceLocationIds(principal.companyId, scope.resourceId)
        : await links.serviceLocationIds(principal.companyId, scope.serviceId!);
      if (!inScope(allowed, locationIds)) throw forbidden(OUTSIDE_SCOPE_MESSAGE);
    },

    /**
     * What the caller may read: null is everything. A location-scoped user sees their locations and
     * the resources and services linked to them; a Resource-role user its resource, that resource's
     * locations and its services.
     */
    async visibleTo(principal: Caller): Promise<ScopeMatch | null> {
      const scope = await catalogScope(principal, (resourceId) => links.resourceLocationIds(principal.companyId, resourceId));
      if (isResourceRole(principal)) {
        const resourceId = scope.linkedResourceId;
        return {
          locationIds: [...(scope.locationIds ?? [])],
          resourceIds: resourceId ? [resourceId] : [],
          serviceIds: resourceId ? await links.resourceServiceIds(principal.companyId, resourceId) : [],
        };
      }
      if (!scope.locationIds) return null;
      const locationIds = [...scope.locationIds];
      return { locationIds, ...(await repository.linkedToLocations(principal.companyId, locationIds)) };
    },
  };
}

export type UnavailabilityAccess = ReturnType<typeof createUnavailabilityAccess>;

/** Told after every successful write which records' availability may have changed (the availability cache listens). */
export type OnChanged = (companyId: string, entities: TouchedEntities) => Promise<void>;
