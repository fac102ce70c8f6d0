import { DateTime } from 'luxon';
import type { WeeklySchedule } from '../../domain/weekly-availability.js';
import { WEEKDAYS } from '../../domain/weekly-availability.js';
import type { ActiveAppointment, BusyInterval, CustomerUsage, EngineResource, RoundRobin } from '../../domain/availability.js';
import { expandRecurrence } from '../../domain/recurrence.js';
import { addDays, localToInstant, weekdayIndex } from '../../domain/local-time.js';
import type { AvailabilityRepository } from './repository.js';
import type { Db } from '../../platform/database/index.js';
import { badRequest, validationError } from '../../platform/errors.js';
import type { ErrorLocation } from '../../platform/errors.js';
import { assertOwned } from '../catalog/ownership.js';
import type { IdReference } from '../catalog/ownership.js';


type LocationRow = NonNullable<Awaited<ReturnType<AvailabilityRepository['location']>>>;
type ServiceRow = NonNullable<Awaited<ReturnType<AvailabilityRepository['service']>>>;
type ResourceRow = Awaited<ReturnType<AvailabilityRepository['bookableResources']>>[number];

/** A validated search (or booking): what it is about, and the dates it covers in the location's zone. */
export interface PreparedSearch {
  location: LocationRow;
  service: ServiceRow;
  resources: ResourceRow[];
  zone: string;
  endDate: string;
  duration: number;
}

/**
 * The records a search or a booking is about, read in one round trip: the location, the service,
 * whether the service is offered there, and the resources bookable for both. Ids that are not live
 * records of the company are a 400 naming each (assertOwned's answer); ownership of the location and
 * the service is asked only when a read came back empty, so a valid request reads each row once.
 */
export async function loadTarget(
  db: Db,
  repository: AvailabilityRepository,
  companyId: string,
  target: {
    LocationId: string;
    ServiceId: string;
    ResourceIds: string[];
    CustomerId?: string | null | undefined;
    /** Where the caller sent ResourceIds and CustomerId. */
    location: ErrorLocation;
    /** Where the caller sent CustomerId, when not where ResourceIds came (create and hold accept it in the query too). */
    customerIdLocation?: ErrorLocation;
    /** The answer when the location or service is gone, for ids the caller did not send (a stored appointment's). */
    missing?: () => Error;
  },
) {
  const others: IdReference[] = [
    { table: 'resources', ids: target.ResourceIds, location: target.location, path: 'ResourceIds' },
    ...(target.CustomerId ? [{ table: 'customers' as const, ids: [target.CustomerId], location: target.customerIdLocation ?? target.location, path: 'CustomerId', single: true }] : []),
  ];
  const [location, service, offered, bookable, othersRefused] = await Promise.all([
    repository.location(companyId, target.LocationId),
    repository.service(companyId, target.ServiceId),
    repository.serviceOfferedAt(companyId, target.ServiceId, target.LocationId),
    repository.bookableResources(companyId, target.LocationId, target.ServiceId),
    assertOwned(db, companyId, others).then(
      () => null,
      (error: unknown) => error,
    ),
  ]);
  if (location && service && othersRefused) throw othersRefused;
  if (!location || !service) {
    if (target.missing) throw target.missing();
    await assertOwned(db, companyId, [
      { table: 'locations', ids: [target.LocationId], location: 'query', path: 'LocationId', single: true },
      { table: 'services', ids: [target.ServiceId], location: 'query', path: 'ServiceId', single: true },
      ...others,
    ]);
    // Archived between the two reads.
    throw badRequest('Unknown location or service');
  }
  return { location, service, offered, bookable };
}

/**
 * Loads everything the engine needs for a prepared search: busy time, active appointments, daily
 * usage, the customer's usage and allocations. Shared by availability searches and by booking,
 * which runs it inside its transaction and leaves out the appointment being changed
 * (`excludeAppointmentIds`), so a hold being booked does not compete with itself.
 */
export async function loadEngineInputs(
  repository: AvailabilityRepository,
  companyId: string,
  prepared: PreparedSearch,
  search: { startDate: string; roundRobin?: RoundRobin | undefined; CustomerId?: string | null | undefined },
  nowMs: number,
  excludeAppointmentIds: string[] = [],
) {
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
    repository.activeAppointmentsOfResources(companyId, resourceIds, from.toJSDate(), to.toJSDate(), now, excludeAppointmentIds),
    repository.dailyUsage(companyId, service.id, zone, from.toJSDate(), to.toJSDate(), now, excludeAppointmentIds),
    search.CustomerId ? repository.customerAppointments(companyId, search.CustomerId, service.id, excludeAppointmentIds) : Promise.resolve(undefined),
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

  const customer = customerRows ? customerUsage(customerRows, nowMs) : undefined;

  const engineResources: EngineResource[] = resources.map((r) => ({
    id: r.id,
    timezoneName: r.timezoneName,
    weeklyAvailability: r.weeklyAvailability as WeeklySchedule | null,
    bookingLimit: r.bookingLimit,
    ...(allocations ? { allocations: allocationWindows(allocations, r.id, zone, loadFromDate, loadToDate) } : {}),
  }));
  const holidayDays = holidays.map((h) => ({ date: h.date, name: h.name }));
  return { busy, appointments: [...byAppointment.values()], dailyUsage, weeklyMinutes, customer, engineResources, holidays: holidayDays };
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
    const weekday = WEEKDAYS[weekdayIndex(date)]!;
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

/**
 * What a customer already holds of a service, for the per-customer limits: bookingLimit counts BK
 * and unexpired IN (RS does not count); the lifetime caps count everything except RE and expired
 * holds (an abandoned checkout never became a booking, so it must not use up a lifetime cap).
 */
export function customerUsage(rows: Array<{ id: string; status: string; expiresAt: Date | null; resourceId: string | null }>, nowMs: number): CustomerUsage {
  const isActive = (r: { status: string; expiresAt: Date | null }) => r.status === 'BK' || (r.status === 'IN' && (r.expiresAt?.getTime() ?? 0) > nowMs);
  const countsForLifetime = (r: { status: string; expiresAt: Date | null }) => r.status !== 'RE' && (r.status !== 'IN' || isActive(r));
  const seen = new Set<string>();
  const usage: CustomerUsage = { activeCount: 0, lifetimeCount: 0, lifetimeByResource: {}, activeByResource: {} };
  for (const row of rows) {
    if (!seen.has(row.id)) {
      seen.add(row.id);
      if (isActive(row)) usage.activeCount++;
      if (countsForLifetime(row)) usage.lifetimeCount++;
    }
    if (row.resourceId) {
      if (countsForLifetime(row)) usage.lifetimeByResource[row.resourceId] = (usage.lifetimeByResource[row.resourceId] ?? 0) + 1;
      if (isActive(row)) usage.activeByResource[row.resourceId] = (usage.activeByResource[row.resourceId] ?? 0) + 1;
    }
  }
  return usage;
}

/**
 * A named resource that cannot serve this search: AVAILABILITY-103 when it does not work at the
 * location, AVAILABILITY-104 when it works there but does not provide the service.
 */
export async function unlinkedResourceError(db: Db, companyId: string, ids: { locationId: string; serviceId: string; resourceId: string }, location: ErrorLocation, path: string) {
  const atLocation = await db
    .selectFrom('resourceLocations')
    .select('resourceId')
    .where('companyId', '=', companyId)
    .where('resourceId', '=', ids.resourceId)
    .where('locationId', '=', ids.locationId)
    .executeTakeFirst();
  return atLocation
    ? validationError(location, path, `Resource ${ids.resourceId} does not provide service ${ids.serviceId}`, 'AVAILABILITY-104')
    : validationError(location, path, `Resource ${ids.resourceId} does not work at location ${ids.locationId}`, 'AVAILABILITY-103');
}

/** SERVICE-122: the service is not offered at the location. */
export function serviceNotOfferedError(serviceId: string, locationId: string) {
  return validationError('query', 'ServiceId', `Service ${serviceId} is not offered at location ${locationId}`, 'SERVICE-122');
}
