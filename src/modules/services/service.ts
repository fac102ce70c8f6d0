import { randomUUID } from 'node:crypto';
import type { Principal } from '../../platform/auth/principal.js';
import { ApiError, fieldError, forbidden, notFound, validationErrors } from '../../platform/errors.js';
import type { Db } from '../../platform/database/index.js';
import type { WeeklyAvailability } from '../../platform/database/schema.js';
import { weeklyScheduleProblems } from '../../domain/weekly-availability.js';
import { serviceSettingProblems } from '../../domain/service-rules.js';
import { assertOwned } from '../catalog/ownership.js';
import { assertLocationsInScope, catalogScope, inScope, mergeScopedLocationIds, OUTSIDE_SCOPE_MESSAGE, resourceRoleNesting, visibleLocationLinks } from '../catalog/scope.js';
import { groupLinks, pageOf, pageWindow } from '../catalog/graph.js';
import type { CompanySummaryLookup } from '../catalog/graph.js';
import type { CatalogLinks } from '../catalog/links.js';
import type { ServiceRepository, ServiceRow } from './repository.js';
import { SERVICE_INCLUDES } from './schemas.js';
import type { ServiceCreate, ServiceUpdate } from './schemas.js';

export interface ServiceDeps {
  db: Db;
  repository: Pick<ServiceRepository, 'insert' | 'byId' | 'page' | 'update' | 'links'>;
  links: Pick<CatalogLinks, 'resourceLocationIds' | 'resourceServiceIds' | 'serviceLocationIds'>;
  companySummary: CompanySummaryLookup;
  /** Told of every change that can alter slot generation (the availability cache listens). */
  onSlotSettingsChanged?: (companyId: string, serviceId: string) => void | Promise<void>;
}

export function createServiceService(deps: ServiceDeps) {
  const { repository } = deps;
  const FULL = new Set(SERVICE_INCLUDES);

  async function scopeOf(principal: Principal & { companyId: string }) {
    const scope = await catalogScope(principal, (resourceId) => deps.links.resourceLocationIds(principal.companyId, resourceId));
    const serviceIds = scope.linkedResourceId ? await deps.links.resourceServiceIds(principal.companyId, scope.linkedResourceId) : null;
    return { ...scope, serviceIds };
  }

  function view(row: ServiceRow) {
    const { companyId: _companyId, archivedAt: _archivedAt, createdAt, updatedAt, ...fields } = row;
    return { ...fields, companyId: row.companyId, createdAt: createdAt.toISOString(), updatedAt: updatedAt.toISOString() };
  }

  /** For a Resource-role reader, nested resources show only their own resource. */
  async function withGraph(companyId: string, rows: ServiceRow[], include: Set<string>, reader?: Principal) {
    const links = await repository.links(companyId, rows.map((r) => r.id));
    const nesting = reader ? await resourceRoleNesting(reader, (resourceId) => deps.links.resourceServiceIds(companyId, resourceId)) : null;
    // A location-scoped reader sees only the links to their own locations.
    const locations = groupLinks(visibleLocationLinks(reader, links.locations), 'ownerId');
    const resources = groupLinks(nesting ? links.resources.filter((r) => nesting.resourceIds.has(r.id)) : links.resources, 'ownerId');
    const company = include.has('company') ? await deps.companySummary(companyId) : undefined;
    return rows.map((row) => ({
      ...view(row),
      locationIds: (locations.get(row.id) ?? []).map((l) => l.id),
      ...(company ? { company } : {}),
      ...(include.has('locations') ? { locations: locations.get(row.id) ?? [] } : {}),
      ...(include.has('resources') ? { resources: resources.get(row.id) ?? [] } : {}),
    }));
  }

  function checkRules(merged: ServiceRow | ServiceCreate, weekly: WeeklyAvailability | null | undefined) {
    const problems = serviceSettingProblems({
      duration: merged.duration,
      durationSelect: merged.durationSelect ?? false,
      durationMin: merged.durationMin ?? null,
      durationMax: merged.durationMax ?? null,
      durationInterval: merged.durationInterval ?? null,
      bookAheadUnit: merged.bookAheadUnit ?? 'none',
      bookAheadValue: merged.bookAheadValue ?? null,
    });
    if (weekly) problems.push(...weeklyScheduleProblems(weekly, 'weeklyAvailability'));
    if (problems.length) throw validationErrors(problems.map((p) => fieldError('body', p.path, p.msg, p.code)));
  }

  async function loadVisible(principal: Principal & { companyId: string }, id: string) {
    const row = await repository.byId(principal.companyId, id);
    if (!row) throw notFound('Service not found');
    const scope = await scopeOf(principal);
    if (scope.serviceIds) {
      if (!scope.serviceIds.includes(id)) throw forbidden(OUTSIDE_SCOPE_MESSAGE);
    } else if (scope.locationIds && !inScope(scope.locationIds, await deps.links.serviceLocationIds(principal.companyId, id))) {
      throw forbidden(OUTSIDE_SCOPE_MESSAGE);
    }
    return row;
  }

  const json = (value: unknown) => (value === null || value === undefined ? null : JSON.stringify(value));

  return {
    async create(principal: Principal & { companyId: string }, input: ServiceCreate) {
      const { locationIds = [], weeklyAvailability, ...fields } = input;
      checkRules(input, weeklyAvailability);
      await assertOwned(deps.db, principal.companyId, [{ table: 'locations', ids: locationIds, location: 'body', path: 'locationIds', code: 'LOCATION-111' }]);
      if ((await scopeOf(principal)).locationIds) {
        if (locationIds.length === 0) throw new ApiError(403, 'A location-scoped user must offer the service at one of their locations', [], 'LOCATION-109');
        assertLocationsInScope(principal, locationIds);
      }
      const row = await repository.insert(
        { ...fields, companyId: principal.companyId, id: randomUUID(), weeklyAvailability: json(weeklyAvailability) },
        locationIds,
      );
      return (await withGraph(principal.companyId, [row], FULL, principal))[0]!;
    },

    async read(principal: Principal & { companyId: string }, id: string) {
      return (await withGraph(principal.companyId, [await loadVisible(principal, id)], FULL, principal))[0]!;
    },

    async list(principal: Principal & { companyId: string }, query: { limit: number; page: number; include: Set<string>; locationId?: string | undefined }) {
      // A filter id that is not one of the company's live records is a 400 naming it, not an empty list.
      if (query.locationId) {
        await assertOwned(deps.db, principal.companyId, [{ table: 'locations', ids: [query.locationId], location: 'query', path: 'LocationId', single: true }]);
      }
      const scope = await scopeOf(principal);
      let locationIds = scope.locationIds ? [...scope.locationIds] : null;
      if (query.locationId) locationIds = locationIds ? locationIds.filter((id) => id === query.locationId) : [query.locationId];
      const { rows, total } = await repository.page(principal.companyId, { locationIds, serviceIds: scope.serviceIds }, pageWindow(query));
      return pageOf(await withGraph(principal.companyId, rows, query.include, principal), query.page, query.limit, total);
    },

    async update(principal: Principal & { companyId: string }, id: string, input: ServiceUpdate) {
      const current = await loadVisible(principal, id);
      const { locationIds, weeklyAvailability, ...fields } = input;
      checkRules({ ...current, ...fields }, weeklyAvailability);
      let links = locationIds;
      if (locationIds) {
        await assertOwned(deps.db, principal.companyId, [{ table: 'locations', ids: locationIds, location: 'body', path: 'locationIds', code: 'LOCATION-111' }]);
        assertLocationsInScope(principal, locationIds);
        links = mergeScopedLocationIds(principal, await deps.links.serviceLocationIds(principal.companyId, id), locationIds);
      }
      const row = await repository.update(
        principal.companyId,
        id,
        { ...fields, ...(weeklyAvailability !== undefined ? { weeklyAvailability: json(weeklyAvailability) } : {}) },
        links,
      );
      if (!row) throw notFound('Service not found');
      await deps.onSlotSettingsChanged?.(principal.companyId, id);
      return (await withGraph(principal.companyId, [row], FULL, principal))[0]!;
    },

    async archive(principal: Principal & { companyId: string }, id: string) {
      await loadVisible(principal, id);
      if (!(await repository.update(principal.companyId, id, { archivedAt: new Date() }, undefined))) throw notFound('Service not found');
      await deps.onSlotSettingsChanged?.(principal.companyId, id);
    },
  };
}

export type ServiceService = ReturnType<typeof createServiceService>;
