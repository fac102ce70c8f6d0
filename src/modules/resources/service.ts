import { randomUUID } from 'node:crypto';
import type { Principal } from '../../platform/auth/principal.js';
import { ApiError, fieldError, forbidden, notFound, validationErrors } from '../../platform/errors.js';
import type { Db } from '../../platform/database/index.js';
import { weeklyScheduleProblems } from '../../domain/weekly-availability.js';
import { assertOwned } from '../catalog/ownership.js';
import { assertLocationsInScope, catalogScope, inScope, isResourceRole, mergeScopedLocationIds, OUTSIDE_SCOPE_MESSAGE, visibleLocationLinks } from '../catalog/scope.js';
import { groupLinks, pageOf, pageWindow } from '../catalog/graph.js';
import type { CompanySummaryLookup } from '../catalog/graph.js';
import type { CatalogLinks } from '../catalog/links.js';
import type { ResourceRepository, ResourceRow } from './repository.js';
import { RESOURCE_INCLUDES } from './schemas.js';
import type { ResourceCreate, ResourceUpdate } from './schemas.js';

export interface ResourceDeps {
  /** After a resource is deleted: its external calendar connections go (and are revoked). */
  onArchived?: (companyId: string, id: string) => Promise<void>;
  db: Db;
  repository: Pick<ResourceRepository, 'insert' | 'byId' | 'page' | 'update' | 'links'>;
  links: Pick<CatalogLinks, 'resourceLocationIds'>;
  companySummary: CompanySummaryLookup;
  onSlotSettingsChanged?: (companyId: string, resourceId: string) => void | Promise<void>;
}

const json = (value: unknown) => (value === null || value === undefined ? null : JSON.stringify(value));

export function createResourceService(deps: ResourceDeps) {
  const { repository } = deps;
  const FULL = new Set(RESOURCE_INCLUDES);
  const scopeOf = (principal: Principal & { companyId: string }) =>
    catalogScope(principal, (resourceId) => deps.links.resourceLocationIds(principal.companyId, resourceId));

  function view(row: ResourceRow) {
    return {
      id: row.id,
      companyId: row.companyId,
      name: row.name,
      email: row.email,
      phone: row.phone,
      timezoneName: row.timezoneName,
      weeklyAvailability: row.weeklyAvailability,
      bookingLimit: row.bookingLimit,
      legacyId: row.legacyId,
      createdAt: row.createdAt.toISOString(),
      updatedAt: row.updatedAt.toISOString(),
    };
  }

  /** A location-scoped reader sees only the links to their own locations. */
  async function withGraph(companyId: string, rows: ResourceRow[], include: Set<string>, reader?: Principal) {
    const links = await repository.links(companyId, rows.map((r) => r.id));
    const locations = groupLinks(visibleLocationLinks(reader, links.locations), 'ownerId');
    const services = groupLinks(links.services, 'ownerId');
    const company = include.has('company') ? await deps.companySummary(companyId) : undefined;
    return rows.map((row) => ({
      ...view(row),
      locationIds: (locations.get(row.id) ?? []).map((l) => l.id),
      serviceIds: (services.get(row.id) ?? []).map((s) => s.id),
      ...(company ? { company } : {}),
      ...(include.has('locations') ? { locations: locations.get(row.id) ?? [] } : {}),
      ...(include.has('services') ? { services: services.get(row.id) ?? [] } : {}),
    }));
  }

  async function checkWrite(principal: Principal & { companyId: string }, input: ResourceUpdate) {
    if (input.weeklyAvailability) {
      const problems = weeklyScheduleProblems(input.weeklyAvailability, 'weeklyAvailability');
      if (problems.length) throw validationErrors(problems.map((p) => fieldError('body', p.path, p.msg, p.code)));
    }
    await assertOwned(deps.db, principal.companyId, [
      { table: 'locations', ids: input.locationIds ?? [], location: 'body', path: 'locationIds' },
      { table: 'services', ids: input.serviceIds ?? [], location: 'body', path: 'serviceIds', code: 'RESOURCE-110' },
    ]);
    if (input.locationIds) assertLocationsInScope(principal, input.locationIds);
  }

  async function loadVisible(principal: Principal & { companyId: string }, id: string) {
    const row = await repository.byId(principal.companyId, id);
    if (!row) throw notFound('Resource not found');
    const scope = await scopeOf(principal);
    if (scope.linkedResourceId !== null || isResourceRole(principal)) {
      if (scope.linkedResourceId !== id) throw forbidden('A Resource-role user may only read and write their linked resource');
    } else if (scope.locationIds && !inScope(scope.locationIds, await deps.links.resourceLocationIds(principal.companyId, id))) {
      throw forbidden(OUTSIDE_SCOPE_MESSAGE);
    }
    return row;
  }

  return {
    /** The resource, when this caller may read and write it (404 unknown, 403 outside their scope). */
    visible: loadVisible,

    async create(principal: Principal & { companyId: string }, input: ResourceCreate) {
      await checkWrite(principal, input);
      if ((await scopeOf(principal)).locationIds && !(input.locationIds ?? []).length) {
        throw new ApiError(403, 'A location-scoped user must link the resource to one of their locations', [], 'LOCATION-109');
      }
      const { locationIds = [], serviceIds = [], weeklyAvailability, ...fields } = input;
      const row = await repository.insert(
        { ...fields, companyId: principal.companyId, id: randomUUID(), weeklyAvailability: json(weeklyAvailability) },
        { locationIds, serviceIds },
      );
      return (await withGraph(principal.companyId, [row], FULL, principal))[0]!;
    },

    async read(principal: Principal & { companyId: string }, id: string) {
      return (await withGraph(principal.companyId, [await loadVisible(principal, id)], FULL, principal))[0]!;
    },

    async list(principal: Principal & { companyId: string }, query: { limit: number; page: number; include: Set<string>; locationId?: string | undefined; serviceId?: string | undefined }) {
      // A filter id that is not one of the company's live records is a 400 naming it, not an empty list.
      await assertOwned(deps.db, principal.companyId, [
        { table: 'locations', ids: query.locationId ? [query.locationId] : [], location: 'query', path: 'LocationId', single: true },
        { table: 'services', ids: query.serviceId ? [query.serviceId] : [], location: 'query', path: 'ServiceId', single: true },
      ]);
      const scope = await scopeOf(principal);
      let locationIds = scope.locationIds ? [...scope.locationIds] : null;
      if (query.locationId) locationIds = locationIds ? locationIds.filter((id) => id === query.locationId) : [query.locationId];
      const resourceIds = isResourceRole(principal) ? (scope.linkedResourceId ? [scope.linkedResourceId] : []) : null;
      // A Resource-role user's scope is their resource, not its locations; a LocationId filter
      // still narrows it.
      if (resourceIds) locationIds = query.locationId ? [query.locationId] : null;
      const { rows, total } = await repository.page(principal.companyId, { locationIds, resourceIds, serviceId: query.serviceId }, pageWindow(query));
      return pageOf(await withGraph(principal.companyId, rows, query.include, principal), query.page, query.limit, total);
    },

    async update(principal: Principal & { companyId: string }, id: string, input: ResourceUpdate) {
      await loadVisible(principal, id);
      if (isResourceRole(principal) && (input.locationIds || input.serviceIds)) {
        throw new ApiError(403, 'A Resource-role user cannot change which locations and services their resource serves', [], 'RESOURCE-111');
      }
      await checkWrite(principal, input);
      const { locationIds: requested, serviceIds, weeklyAvailability, ...fields } = input;
      const locationIds = requested && mergeScopedLocationIds(principal, await deps.links.resourceLocationIds(principal.companyId, id), requested);
      const row = await repository.update(
        principal.companyId,
        id,
        { ...fields, ...(weeklyAvailability !== undefined ? { weeklyAvailability: json(weeklyAvailability) } : {}) },
        { locationIds, serviceIds },
      );
      if (!row) throw notFound('Resource not found');
      await deps.onSlotSettingsChanged?.(principal.companyId, id);
      return (await withGraph(principal.companyId, [row], FULL, principal))[0]!;
    },

    async archive(principal: Principal & { companyId: string }, id: string) {
      await loadVisible(principal, id);
      if (!(await repository.update(principal.companyId, id, { archivedAt: new Date() }, {}))) throw notFound('Resource not found');
      await deps.onSlotSettingsChanged?.(principal.companyId, id);
      await deps.onArchived?.(principal.companyId, id);
    },
  };
}

export type ResourceService = ReturnType<typeof createResourceService>;
