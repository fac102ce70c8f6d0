import { DateTime } from 'luxon';
import { WEEKDAYS } from '../../domain/weekly-availability.js';
import type { ActiveAppointment, AvailabilityInput, BusyInterval, CustomerUsage, EngineResource, EngineService, RoundRobin } from '../../domain/availability.js';
import { countsForBookingLimit, countsForLifetimeLimits } from '../../domain/appointment-status.js';
import type { AppointmentStatus } from '../../domain/appointment-status.js';
import { recurrenceIntervals } from '../../domain/recurrence.js';
import { addDays, localDateOfMillis, localDayFinder, localToMillis, weekdayIndex } from '../../domain/local-time.js';
import type { AvailabilityRepository, EngineWindowRows, PackedBusyRow } from './repository.js';
import type { PreparedSearch } from './target.js';
import type { LeadingStatement } from '../../platform/database/transaction-control.js';

/** The reads loadEngineInputs makes. */
export type EngineReads = Pick<
  AvailabilityRepository,
  'engineWindow' | 'busyAppointmentsOfResources' | 'allocations'
>;

export interface EngineInputRequest {
  /** First local date of the range (the prepared search's endDate is the last). */
  startDate: string;
  roundRobin?: RoundRobin | undefined;
  CustomerId?: string | null | undefined;
  now: number;
  /** The appointment being booked or changed, which must not compete with itself. */
  excludeAppointmentIds?: string[] | undefined;
  /** A statement sent in front of the window's read, in its exchange (a booking's locks: appointments/slot.ts). */
  leading?: LeadingStatement | undefined;
}

/**
 * Loads everything the engine needs for a prepared search: busy time, active appointments, daily
 * usage, the customer's usage and allocations. Shared by availability searches and by booking,
 * which runs it inside its transaction and leaves out the appointment being changed
 * (`excludeAppointmentIds`), so a hold being booked does not compete with itself.
 */
export async function loadEngineInputs(repository: EngineReads, companyId: string, prepared: PreparedSearch, request: EngineInputRequest) {
  const { location, service, resources, zone, endDate } = prepared;
  const { now: nowMs, excludeAppointmentIds = [] } = request;
  const resourceIds = resources.map((r) => r.id);
  // A day either side of the range (padding, resources in other zones); whole ISO weeks for
  // BALANCED, which compares the minutes booked in each slot's week.
  const balanced = (request.roundRobin ?? service.roundRobin) === 'BALANCED';
  const loadFromDate = balanced
    ? DateTime.fromISO(addDays(request.startDate, -1), { zone }).startOf('week').toISODate()!
    : addDays(request.startDate, -1);
  const loadToDate = balanced ? DateTime.fromISO(addDays(endDate, 1), { zone }).endOf('week').toISODate()! : addDays(endDate, 1);
  // Epoch milliseconds from the remembered midnights: no zone lookup per search or booking.
  const from = localToMillis(loadFromDate, '00:00', zone);
  const to = localToMillis(addDays(loadToDate, 1), '00:00', zone);
  const window = { from: new Date(from), to: new Date(to), now: new Date(nowMs), excludeIds: excludeAppointmentIds };
  const scope = { locationIds: [location.id], resourceIds, serviceIds: [service.id] };

  // One statement for the window (engineWindow); allocations, rare, only for allocation services,
  // and after the window's read when a statement leads it (the booking's locks come first).
  const windowRows = repository.engineWindow(companyId, {
    scope,
    from: window.from,
    to: window.to,
    fromDate: loadFromDate,
    toDate: loadToDate,
    now: window.now,
    excludeIds: excludeAppointmentIds,
    customerId: request.CustomerId,
    dailyLimits: service.dailyBookingLimitCount > 0 || service.dailyBookingLimitMinutes > 0,
    leading: request.leading,
  });
  const readAllocations = () => (service.availabilityType === 'allocation' ? repository.allocations(companyId, location.id, service.id, loadFromDate, loadToDate) : Promise.resolve(undefined));
  const [rows, allocations] = request.leading ? [await windowRows, await readAllocations()] : await Promise.all([windowRows, readAllocations()]);
  const { holidays } = rows;

  const busy = busyIntervals(rows, zone, from, to);
  // External calendar events: the engine drops them when the search or hold says ignoreExternalEvents.
  for (const interval of rows.external) busy.push({ resourceId: interval.resourceId, start: interval.start, end: interval.end, external: true });
  const { active, weeklyMinutes } = activeAppointments(rows.busy, balanced ? zone : null);
  const dailyUsage = usagePerDay(rows.serviceBookings, zone, window.from, window.to);
  const customer = rows.customer ? customerUsage(rows.customer, nowMs) : undefined;

  const engineResources: EngineResource[] = resources.map((r) => ({
    id: r.id,
    timezoneName: r.timezoneName,
    weeklyAvailability: r.weeklyAvailability,
    bookingLimit: r.bookingLimit,
    ...(allocations ? { allocations: allocationWindows(allocations, r.id, zone, loadFromDate, loadToDate) } : {}),
  }));
  const holidayDays = holidays.map((h) => ({ date: h.date, name: h.name }));
  return { busy, appointments: active, dailyUsage, weeklyMinutes, customer, engineResources, holidays: holidayDays };
}

export type EngineInputs = Awaited<ReturnType<typeof loadEngineInputs>>;

type ClosedTime = Pick<EngineWindowRows, 'blocks' | 'recurring' | 'holidays'>;

/**
 * The service's bookings per local day of the location's zone (daily limits). Days are counted
 * here with the same zone data as every other local date (not PostgreSQL's, which may lack a zone
 * name the API accepts).
 */
function usagePerDay(bookings: EngineWindowRows['serviceBookings'], zone: string, from: Date, to: Date) {
  // None read when the service has no daily limit (engineWindow's dailyLimits): no days to find.
  if (bookings.length === 0) return {};
  const dayOf = localDayFinder(localDateOfMillis(from.getTime(), zone), localDateOfMillis(to.getTime(), zone), zone);
  const usage: Record<string, { count: number; minutes: number }> = {};
  for (const booking of bookings) {
    const day = (usage[dayOf(booking.start)] ??= { count: 0, minutes: 0 });
    day.count += 1;
    day.minutes += booking.duration;
  }
  return usage;
}

/** Blocks, recurring blocks and holidays as busy time: on the location or the service they close every resource. */
function busyIntervals({ blocks, recurring, holidays }: ClosedTime, zone: string, fromMs: number, toMs: number): BusyInterval[] {
  const busy: BusyInterval[] = [];
  // Blocks on the location or the service close every resource; a resource block closes that one.
  const scopeResource = (row: { resourceId: string | null }) => row.resourceId;
  for (const block of blocks) busy.push({ resourceId: scopeResource(block), start: block.start, end: block.end });
  for (const rule of recurring) {
    for (const o of recurrenceIntervals(rule, fromMs, toMs)) busy.push({ resourceId: scopeResource(rule), start: o.start, end: o.end });
  }
  for (const holiday of holidays) {
    busy.push({
      resourceId: null,
      start: localToMillis(holiday.date, '00:00', zone),
      end: localToMillis(addDays(holiday.date, 1), '00:00', zone),
    });
  }
  return busy;
}

/**
 * engineWindow's busy rows (one per resource of each appointment) as the engine's appointments,
 * the rows themselves (PackedBusyRow is one), and, with `balancedZone` (BALANCED only), the minutes
 * booked per resource in each ISO week of that zone. An appointment of two resources is two
 * appointments of one resource each here: the engine looks at appointments resource by resource,
 * so it answers the same.
 */
function activeAppointments(rows: PackedBusyRow[], balancedZone: string | null) {
  const active: ActiveAppointment[] = rows;
  const weeklyMinutes: Record<string, Record<string, number>> = {};
  // Minutes per ISO week only matter to BALANCED; the zone lookup per row is not free.
  if (balancedZone === null) return { active, weeklyMinutes };
  for (const row of rows) {
    const start = DateTime.fromMillis(row.start, { zone: balancedZone });
    const week = `${start.weekYear}-W${String(start.weekNumber).padStart(2, '0')}`;
    weeklyMinutes[week] ??= {};
    weeklyMinutes[week][row.resourceId] = (weeklyMinutes[week][row.resourceId] ?? 0) + row.duration;
  }
  return { active, weeklyMinutes };
}

/**
 * The engine's input for a prepared search and what loadEngineInputs loaded: the one place both
 * the availability search and booking's slot check (appointments/slot.ts) build it.
 */
export function engineInput(
  prepared: PreparedSearch,
  inputs: EngineInputs,
  options: {
    now: number;
    startDate: string;
    endDate: string;
    roundRobin: RoundRobin;
    /** The customer's usage as the limits should see it (booking may hide active usage for RS). */
    customer: CustomerUsage | undefined;
    /** Changes to the service's rules for this run (booking a hold skips lead time again). */
    serviceOverrides?: Partial<EngineService>;
    reportZone?: string | undefined;
    random?: (() => number) | undefined;
    allowPaddingOverflow?: boolean | undefined;
    ignoreExternalEvents?: boolean | undefined;
  },
): AvailabilityInput {
  const { service } = prepared;
  return {
    now: options.now,
    timezoneName: prepared.zone,
    locationWeekly: prepared.location.weeklyAvailability,
    service: { ...service, ...options.serviceOverrides },
    resources: inputs.engineResources,
    startDate: options.startDate,
    endDate: options.endDate,
    duration: prepared.duration,
    roundRobin: options.roundRobin,
    busy: inputs.busy,
    appointments: inputs.appointments,
    dailyUsage: inputs.dailyUsage,
    weeklyMinutes: inputs.weeklyMinutes,
    ...(options.customer ? { customer: options.customer } : {}),
    holidays: inputs.holidays,
    ...(options.reportZone !== undefined ? { reportZone: options.reportZone } : {}),
    ...(options.random ? { random: options.random } : {}),
    ...(options.allowPaddingOverflow !== undefined ? { allowPaddingOverflow: options.allowPaddingOverflow } : {}),
    ...(options.ignoreExternalEvents !== undefined ? { ignoreExternalEvents: options.ignoreExternalEvents } : {}),
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
    const weekday = WEEKDAYS[weekdayIndex(date)]!;
    const weekly = rows.weekly
      .filter((w) => applies(w) && w.day === weekday)
      .map((w) => ({
        start: localToMillis(date, w.startTime, zone),
        end: localToMillis(date, w.endTime, zone),
        bookingsPerSlot: w.serviceId && w.resourceId ? w.bookingsPerSlot : null,
      }));
    const single = rows.single
      .filter((s) => applies(s) && s.date === date)
      .map((s) => ({ start: localToMillis(date, s.startTime, zone), end: localToMillis(date, s.endTime, zone), bookingsPerSlot: s.bookingsPerSlot }));
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
 * What a customer already holds of a service, for the per-customer limits: bookingLimit counts
 * what countsForBookingLimit counts (BK and unexpired IN; RS does not count), the lifetime caps what
 * countsForLifetimeLimits counts (everything except RE and expired holds: an abandoned checkout
 * never became a booking, so it must not use up a lifetime cap). One row per resource.
 */
export function customerUsage(rows: Array<{ id: string; status: AppointmentStatus; expiresAt: number | null; resourceId: string | null }>, nowMs: number): CustomerUsage {
  const seen = new Set<string>();
  const usage: CustomerUsage = { activeCount: 0, lifetimeCount: 0, lifetimeByResource: {}, activeByResource: {} };
  for (const row of rows) {
    const at = { status: row.status, expiresAt: row.expiresAt };
    const active = countsForBookingLimit(at, nowMs);
    const lifetime = countsForLifetimeLimits(at, nowMs);
    if (!seen.has(row.id)) {
      seen.add(row.id);
      if (active) usage.activeCount++;
      if (lifetime) usage.lifetimeCount++;
    }
    if (row.resourceId) {
      if (lifetime) usage.lifetimeByResource[row.resourceId] = (usage.lifetimeByResource[row.resourceId] ?? 0) + 1;
      if (active) usage.activeByResource[row.resourceId] = (usage.activeByResource[row.resourceId] ?? 0) + 1;
    }
  }
  return usage;
}
