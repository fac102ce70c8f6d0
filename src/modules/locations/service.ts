import { randomUUID } from 'node:crypto';
import type { Principal } from '../../platform/auth/principal.js';
import { forbidden, notFound, validationErrors, fieldError } from '../../platform/errors.js';
import type { Address, WeeklyAvailability } from '../../platform/database/schema.js';
import { weeklyScheduleProblems } from '../../domain/weekly-availability.js';
import { addressProblems, normalizeAddress } from '../../domain/address.js';
import { catalogScope, OUTSIDE_SCOPE_MESSAGE, resourceRoleNesting } from '../catalog/scope.js';
import { groupLinks, pageOf, pageWindow } from '../catalog/graph.js';
import type { CompanySummaryLookup } from '../catalog/graph.js';
import type { CatalogLinks } from '../catalog/links.js';
import type { LocationRepository, LocationRow } from './repository.js';
import { LOCATION_INCLUDES } from './schemas.js';
import type { LocationCreate, LocationUpdate } from './schemas.js';

/** ADDRESS-107 and ADDRESS-108, reported with the weekly schedule's problems in one answer. */
function checkAddressAndWeekly(address: Address | null | undefined, weekly: WeeklyAvailability | null | undefined) {
  const problems = [...(address ? addressProblems(address) : []), ...(weekly ? weeklyScheduleProblems(weekly, 'weeklyAvailability') : [])];
  if (problems.length) throw validationErrors(problems.map((p) => fieldError('body', p.path, p.msg, p.code)));
}

const json = (value: unknown) => (value === null || value === undefined ? null : JSON.stringify(value));

export interface LocationDeps {
  repository: Pick<LocationRepository, 'insert' | 'byId' | 'page' | 'update' | 'links'>;
  links: Pick<CatalogLinks, 'resourceLocationIds' | 'resourceServiceIds'>;
  companySummary: CompanySummaryLookup;
  /** Told of every change that can alter slot generation (the availability cache listens). */
  onSlotSettingsChanged?: (companyId: string, locationId: string) => void | Promise<void>;
}

export function createLocationService(deps: LocationDeps) {
  const { repository } = deps;
  const scopeOf = (principal: Principal & { companyId: string }) =>
    catalogScope(principal, (resourceId) => deps.links.resourceLocationIds(principal.companyId, resourceId));

  function baseView(row: LocationRow) {
    return {
      id: row.id,
      companyId: row.companyId,
      name: row.name,
      timezoneName: row.timezoneName,
      phone: row.phone,
      email: row.email,
      weeklyAvailability: row.weeklyAvailability,
      bookingTimerMinutes: row.bookingTimerMinutes,
      reminderOffsets: row.reminderOffsets,
      legacyId: row.legacyId,
      createdAt: row.createdAt.toISOString(),
      updatedAt: row.updatedAt.toISOString(),
    };
  }

  /** Nested objects: everything for a single read, what `include` names for a list; for a
   * Resource-role reader only their own resource and its services. */
  async function withGraph(companyId: string, rows: LocationRow[], include: Set<string>, reader?: Principal) {
    const links = include.has('services') || include.has('resources') ? await repository.links(companyId, rows.map((r) => r.id)) : undefined;
    const nesting = reader && links ? await resourceRoleNesting(reader, (resourceId) => deps.links.resourceServiceIds(companyId, resourceId)) : null;
    const services = links ? groupLinks(nesting ? links.services.filter((s) => nesting.serviceIds.has(s.id)) : links.services, 'ownerId') : undefined;
    const resources = links ? groupLinks(nesting ? links.resources.filter((r) => nesting.resourceIds.has(r.id)) : links.resources, 'ownerId') : undefined;
    const company = include.has('company') ? await deps.companySummary(companyId) : undefined;
    return rows.map((row) => ({
      ...baseView(row),
      ...(include.has('address') ? { address: row.address } : {}),
      ...(company ? { company } : {}),
      ...(services && include.has('services') ? { services: services.get(row.id) ?? [] } : {}),
      ...(resources && include.has('resources') ? { resources: resources.get(row.id) ?? [] } : {}),
    }));
  }
  const FULL = new Set(LOCATION_INCLUDES);

  async function loadVisible(principal: Principal & { companyId: string }, id: string) {
    const row = await repository.byId(principal.companyId, id);
    if (!row) throw notFound('Location not found');
    const scope = await scopeOf(principal);
    if (scope.locationIds && !scope.locationIds.has(id)) throw forbidden(OUTSIDE_SCOPE_MESSAGE);
    return row;
  }

  return {
    async create(principal: Principal & { companyId: string }, input: LocationCreate) {
      // A location-scoped user could not see a new location, so only company-wide callers create them.
      if ((await scopeOf(principal)).locationIds) throw forbidden('Creating locations needs access to every location');
      checkAddressAndWeekly(input.address, input.weeklyAvailability);
      const row = await repository.insert({
        companyId: principal.companyId,
        id: randomUUID(),
        name: input.name,
        timezoneName: input.timezoneName,
        address: json(input.address && normalizeAddress(input.address)),
        phone: input.phone ?? null,
        email: input.email ?? null,
        weeklyAvailability: json(input.weeklyAvailability),
        bookingTimerMinutes: input.bookingTimerMinutes ?? 10,
        reminderOffsets: input.reminderOffsets ?? null,
        legacyId: input.legacyId ?? null,
      });
      return (await withGraph(principal.companyId, [row], FULL))[0]!;
    },

    async read(principal: Principal & { companyId: string }, id: string) {
      const row = await loadVisible(principal, id);
      return (await withGraph(principal.companyId, [row], FULL, principal))[0]!;
    },

    async list(principal: Principal & { companyId: string }, query: { limit: number; page: number; include: Set<string> }) {
      const scope = await scopeOf(principal);
      const { rows, total } = await repository.page(principal.companyId, scope.locationIds ? [...scope.locationIds] : null, pageWindow(query));
      return pageOf(await withGraph(principal.companyId, rows, query.include, principal), query.page, query.limit, total);
    },

    async update(principal: Principal & { companyId: string }, id: string, input: LocationUpdate) {
      await loadVisible(principal, id);
      checkAddressAndWeekly(input.address, input.weeklyAvailability);
      const { address, weeklyAvailability, ...plain } = input;
      const row = await repository.update(principal.companyId, id, {
        ...plain,
        ...(address !== undefined ? { address: json(address && normalizeAddress(address)) } : {}),
        ...(weeklyAvailability !== undefined ? { weeklyAvailability: json(weeklyAvailability) } : {}),
      });
      if (!row) throw notFound('Location not found');
      await deps.onSlotSettingsChanged?.(principal.companyId, id);
      return (await withGraph(principal.companyId, [row], FULL))[0]!;
    },

    async archive(principal: Principal & { companyId: string }, id: string) {
      await loadVisible(principal, id);
      const row = await repository.update(principal.companyId, id, { archivedAt: new Date() });
      if (!row) throw notFound('Location not found');
      await deps.onSlotSettingsChanged?.(principal.companyId, id);
    },
  };
}

export type LocationService = ReturnType<typeof createLocationService>;
