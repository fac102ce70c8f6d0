import { createHash } from 'node:crypto';
import { DateTime } from 'luxon';
import type { Principal } from '../../platform/auth/principal.js';
import { ApiError, badRequest, fieldError, validationError } from '../../platform/errors.js';
import type { Db } from '../../platform/database/index.js';
import type { WeeklySchedule } from '../../domain/weekly-availability.js';
import { WEEKDAYS } from '../../domain/weekly-availability.js';
import { computeAvailability } from '../../domain/availability.js';
import type { ActiveAppointment, AvailabilityResult, BusyInterval, CustomerUsage, EngineResource, RoundRobin } from '../../domain/availability.js';
import { expandRecurrence } from '../../domain/recurrence.js';
import { localToInstant } from '../../domain/local-time.js';
import { allowedDurations } from '../../domain/service-rules.js';
import { assertOwned } from '../catalog/ownership.js';
import { locationScope } from '../catalog/scope.js';
import type { AvailabilityCache } from './cache.js';
import type { AvailabilityRepository } from './repository.js';

export const MAX_SEARCH_DAYS = 31;

export interface AvailabilitySearch {
  LocationId: string;
  ServiceId: string;
  startDate: string;
  endDate?: string | undefined;
  duration?: number | undefined;
  ResourceIds?: string[] | undefined;
  CustomerId?: string | undefined;
  roundRobin?: RoundRobin | undefined;
}

/** A small seeded generator, so a RANDOM pick is the same with and without the cache. */
function seededRandom(seed: string): () => number {
  let state = createHash('sha256').update(seed).digest().readUInt32LE(0) || 1;
  return () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 4_294_967_296;
  };
}

const addDays = (date: string, days: number) => DateTime.fromISO(date, { zone: 'UTC' }).plus({ days }).toISODate()!;

export interface AvailabilityDeps {
  db: Db;
  repository: AvailabilityRepository;
  cache: AvailabilityCache;
  now?: () => number;
}

export function createAvailabilityService(deps: AvailabilityDeps) {
  const { repository } = deps;
  const clock = deps.now ?? Date.now;

  /** Validates the search and loads what the engine needs; 400 for anything wrong in it. */
  async function prepare(companyId: string, principal: Principal | null, search: AvailabilitySearch, nowMs: number, onlineOnly: boolean) {
    await assertOwned(deps.db, companyId, [
      { table: 'locations', ids: [search.LocationId], location: 'query', path: 'LocationId', single: true },
      { table: 'services', ids: [search.ServiceId], location: 'query', path: 'ServiceId', single: true },
      { table: 'resources', ids: search.ResourceIds ?? [], location: 'query', path: 'ResourceIds' },
      ...(search.CustomerId ? [{ table: 'customers' as const, ids: [search.CustomerId], location: 'query' as const, path: 'CustomerId', single: true }] : []),
    ]);
    const scope = principal ? locationScope(principal) : null;
    if (scope && !scope.has(search.LocationId)) throw new ApiError(403, 'This location is outside your location access');

    const [location, service] = await Promise.all([
      repository.location(companyId, search.LocationId),
      repository.service(companyId, search.ServiceId),
    ]);
    if (!location || !service) throw badRequest('Unknown location or service');
    // A public booking page sees a service that is not shown online exactly as an unknown id.
    if (onlineOnly && !service.showOnline) {
      const msg = `${search.ServiceId} is not a service of this company`;
      throw new ApiError(400, msg, [fieldError('query', 'ServiceId', msg)]);
    }
    if (!(await repository.serviceOfferedAt(companyId, service.id, location.id))) {
      throw validationError('query', 'ServiceId', `Service ${service.id} is not offered at location ${location.id}`);
    }

    const zone = location.timezoneName;
    const endDate = search.endDate ?? search.startDate;
    if (endDate < search.startDate) throw validationError('query', 'endDate', 'endDate must be on or after startDate', 'AVAILABILITY-100');
    const days = DateTime.fromISO(endDate).diff(DateTime.fromISO(search.startDate), 'days').days + 1;
    if (days > MAX_SEARCH_DAYS) throw validationError('query', 'endDate', `A search covers at most ${MAX_SEARCH_DAYS} days`);
    const today = DateTime.fromMillis(nowMs, { zone }).toISODate()!;
    if (search.startDate < today) {
      throw validationError('query', 'startDate', `startDate must be on or after the location's local date (${today})`, 'AVAILABILITY-102');
    }

    const durations = allowedDurations(service);
    const duration = search.duration ?? service.duration;
    if (!durations.includes(duration)) {
      throw validationError('query', 'duration', `duration must be one of the service's options: ${durations.join(', ')}`, 'AVAILABILITY-105');
    }

    const bookable = await repository.bookableResources(companyId, location.id, service.id);
    let resources = bookable;
    if (search.ResourceIds?.length) {
      const linked = new Set(bookable.map((r) => r.id));
      search.ResourceIds.forEach((id, index) => {
        if (!linked.has(id)) {
          throw validationError('query', `ResourceIds.${index}`, `Resource ${id} is not linked to location ${location.id} and service ${service.id}`);
        }
      });
      resources = bookable.filter((r) => search.ResourceIds!.includes(r.id));
    }
    return { location, service, resources, zone, endDate, duration };
  }

  async function loadInputs(companyId: string, prepared: Awaited<ReturnType<typeof prepare>>, search: AvailabilitySearch, nowMs: number) {
    const { location, service, resources, zone, endDate } = prepared;
    const resourceIds = resources.map((r) => r.id);
    // A day either side of the range (padding, resources in other zones); whole ISO weeks for
    // BALANCED, which compares the minutes booked in each slot's week.
    const balanced = (search.roundRobin ?? service.roundRobin) === 'BALANCED';
    const loadFromDate = balanced
      ? DateTime.fromISO(addDays(search.startDate, -1), { zone }).startOf('week').toISODate()!
      : addDays(search.startDate, -1);
    const loadToDate = balanced ? DateTime.fromISO(addDays(endDate, 1), { zone }).endOf('week').toISODate()! : addDays(endDate, 1);
    const from = localToInstant(loadFromDate, '00:00', zone);
    const to = localToInstant(addDays(loadToDate, 1), '00:00', zone);
    const now = new Date(nowMs);
    const scope = { locationIds: [location.id], resourceIds, serviceIds: [service.id] };

    const [blocks, recurring, holidays, appointments, dailyUsage, customerRows, allocations] = await Promise.all([
      repository.blocks(companyId, scope, from.toJSDate(), to.toJSDate()),
      repository.recurringBlocks(companyId, scope, loadFromDate, loadToDate),
      repository.holidays(companyId, [location.id], loadFromDate, loadToDate),
      repository.activeAppointmentsOfResources(companyId, resourceIds, from.toJSDate(), to.toJSDate(), now),
      repository.dailyUsage(companyId, service.id, zone, from.toJSDate(), to.toJSDate(), now),
      search.CustomerId ? repository.customerAppointments(companyId, search.CustomerId, service.id) : Promise.resolve(undefined),
      service.availabilityType === 'allocation' ? repository.allocations(companyId, location.id, service.id, loadFromDate, loadToDate) : Promise.resolve(undefined),
    ]);

    const busy: BusyInterval[] = [];
    // Blocks on the location or the service close every resource; a resource block closes that one.
    const scopeResource = (row: { resourceId: string | null }) => row.resourceId;
    for (const block of blocks) busy.push({ resourceId: scopeResource(block), start: block.startTime.getTime(), end: block.endTime.getTime() });
    for (const rule of recurring) {
      for (const o of expandRecurrence({ ...rule, weekdays: rule.weekdays }, from, to)) {
        busy.push({ resourceId: scopeResource(rule), start: o.start.toMillis(), end: o.end.toMillis() });
      }
    }
    for (const holiday of holidays) {
      busy.push({
        resourceId: null,
        start: localToInstant(holiday.date, '00:00', zone).toMillis(),
        end: localToInstant(addDays(holiday.date, 1), '00:00', zone).toMillis(),
      });
    }

    const byAppointment = new Map<string, ActiveAppointment>();
    const weeklyMinutes: Record<string, Record<string, number>> = {};
    for (const row of appointments) {
      const existing = byAppointment.get(row.id);
      if (existing) existing.resourceIds.push(row.resourceId);
      else {
        byAppointment.set(row.id, {
          id: row.id,
          serviceId: row.serviceId,
          resourceIds: [row.resourceId],
          padding: row.padding,
          start: row.startTime.getTime(),
          end: row.endTime.getTime(),
        });
      }
      // Minutes per ISO week only matter to BALANCED; the zone lookup per row is not free.
      if (!balanced) continue;
      const start = DateTime.fromJSDate(row.startTime, { zone });
      const week = `${start.weekYear}-W${String(start.weekNumber).padStart(2, '0')}`;
      weeklyMinutes[week] ??= {};
      weeklyMinutes[week][row.resourceId] = (weeklyMinutes[week][row.resourceId] ?? 0) + row.duration;
    }

    let customer: CustomerUsage | undefined;
    if (customerRows) {
      // bookingLimit counts BK and unexpired IN (RS does not count); lifetime caps skip only RE.
      const isActive = (r: { status: string; expiresAt: Date | null }) => r.status === 'BK' || (r.status === 'IN' && (r.expiresAt?.getTime() ?? 0) > nowMs);
      const seen = new Set<string>();
      customer = { activeCount: 0, lifetimeCount: 0, lifetimeByResource: {}, activeByResource: {} };
      for (const row of customerRows) {
        if (!seen.has(row.id)) {
          seen.add(row.id);
          if (isActive(row)) customer.activeCount++;
          if (row.status !== 'RE') customer.lifetimeCount++;
        }
        if (row.resourceId) {
          if (row.status !== 'RE') customer.lifetimeByResource[row.resourceId] = (customer.lifetimeByResource[row.resourceId] ?? 0) + 1;
          if (isActive(row)) customer.activeByResource[row.resourceId] = (customer.activeByResource[row.resourceId] ?? 0) + 1;
        }
      }
    }

    const engineResources: EngineResource[] = resources.map((r) => ({
      id: r.id,
      timezoneName: r.timezoneName,
      weeklyAvailability: r.weeklyAvailability as WeeklySchedule | null,
      bookingLimit: r.bookingLimit,
      ...(allocations ? { allocations: allocationWindows(allocations, r.id, zone, loadFromDate, loadToDate) } : {}),
    }));
    return { busy, appointments: [...byAppointment.values()], dailyUsage, weeklyMinutes, customer, engineResources };
  }

  /** `onlineOnly`: public booking pages see only services with showOnline. */
  async function searchJson(companyId: string, principal: Principal | null, search: AvailabilitySearch, options: { onlineOnly?: boolean } = {}): Promise<string> {
    // Floored to the minute for every search, cached or not, so the cache cannot change an answer.
    const nowMs = Math.floor(clock() / 60_000) * 60_000;
    const prepared = await prepare(companyId, principal, search, nowMs, options.onlineOnly ?? false);
    const roundRobin = search.roundRobin ?? prepared.service.roundRobin;
    const searchKey = {
      l: search.LocationId,
      s: search.ServiceId,
      d: [search.startDate, prepared.endDate],
      n: prepared.duration,
      r: prepared.resources.map((r) => r.id),
      c: search.CustomerId ?? null,
      rr: roundRobin,
      t: nowMs,
    };
    const entities = {
      locations: [search.LocationId],
      services: [search.ServiceId],
      resources: prepared.resources.map((r) => r.id),
      customers: search.CustomerId ? [search.CustomerId] : [],
    };
    const key = await deps.cache.keyFor(companyId, entities, searchKey);
    const cached = await deps.cache.get(key);
    if (cached) return cached;

    const inputs = await loadInputs(companyId, prepared, search, nowMs);
    const result = computeAvailability({
      now: nowMs,
      timezoneName: prepared.zone,
      locationWeekly: prepared.location.weeklyAvailability as WeeklySchedule | null,
      service: { ...prepared.service, weeklyAvailability: prepared.service.weeklyAvailability as WeeklySchedule | null },
      resources: inputs.engineResources,
      startDate: search.startDate,
      endDate: prepared.endDate,
      duration: prepared.duration,
      roundRobin,
      busy: inputs.busy,
      appointments: inputs.appointments,
      dailyUsage: inputs.dailyUsage,
      weeklyMinutes: inputs.weeklyMinutes,
      ...(inputs.customer ? { customer: inputs.customer } : {}),
      random: seededRandom(JSON.stringify(searchKey)),
    });
    const json = JSON.stringify(result);
    await deps.cache.set(key, json);
    return json;
  }

  return {
    /** The answer as JSON text: a cached answer is sent as stored, never parsed and re-serialised. */
    searchJson,

    async search(...args: Parameters<typeof searchJson>): Promise<AvailabilityResult> {
      return JSON.parse(await searchJson(...args)) as AvailabilityResult;
    },
  };
}

type AllocationRows = Awaited<ReturnType<AvailabilityRepository['allocations']>>;

/**
 * Bookable windows of one resource from allocations that apply to it (its own, or ones without a
 * resource). On a date that has single allocations, those narrow the window: the day's windows are
 * the single allocations, cut to the weekly ones when weekly allocations exist for that weekday.
 * bookingsPerSlot of a weekly allocation applies only when it names both service and resource.
 */
function allocationWindows(rows: AllocationRows, resourceId: string, zone: string, fromDate: string, toDate: string) {
  const applies = (row: { resourceId: string | null }) => row.resourceId === null || row.resourceId === resourceId;
  const windows: Array<{ start: number; end: number; bookingsPerSlot: number | null }> = [];
  for (let date = fromDate; date <= toDate; date = addDays(date, 1)) {
    const weekday = WEEKDAYS[DateTime.fromISO(date, { zone: 'UTC' }).weekday - 1]!;
    const weekly = rows.weekly
      .filter((w) => applies(w) && w.day === weekday)
      .map((w) => ({
        start: localToInstant(date, w.startTime, zone).toMillis(),
        end: localToInstant(date, w.endTime, zone).toMillis(),
        bookingsPerSlot: w.serviceId && w.resourceId ? w.bookingsPerSlot : null,
      }));
    const single = rows.single
      .filter((s) => applies(s) && s.date === date)
      .map((s) => ({ start: localToInstant(date, s.startTime, zone).toMillis(), end: localToInstant(date, s.endTime, zone).toMillis(), bookingsPerSlot: s.bookingsPerSlot }));
    if (single.length === 0) {
      windows.push(...weekly);
      continue;
    }
    if (weekly.length === 0) {
      windows.push(...single);
      continue;
    }
    for (const s of single) {
      for (const w of weekly) {
        const start = Math.max(s.start, w.start);
        const end = Math.min(s.end, w.end);
        if (start < end) windows.push({ start, end, bookingsPerSlot: s.bookingsPerSlot ?? w.bookingsPerSlot });
      }
    }
  }
  return windows.sort((a, b) => a.start - b.start);
}

export type AvailabilityService = ReturnType<typeof createAvailabilityService>;
