// A frozen copy of the availability engine as it was before it was made faster (commit a01f6dc,
// src/domain/availability.ts), kept only as the oracle of test/domain/availability-oracle.test.ts:
// the engine must answer exactly as this does. Do not change it to follow the engine; it is the
// reference the engine is checked against. The helpers the fast engine did not rewrite, each with
// tests of its own, are called where they live: the interval helpers and the capacity rule
// (slotOccupancy, which the booking check also uses) from the engine's module, wall-clock time and
// calendar dates from src/domain/local-time.ts.
import { DateTime } from 'luxon';
import { WEEKDAYS } from '../../src/domain/weekly-availability.js';
import type { WeeklySchedule } from '../../src/domain/weekly-availability.js';
import { intersect, normalise, slotOccupancy } from '../../src/domain/availability.js';
import { addDays, localDayFinder, localToMillis, weekdayIndex } from '../../src/domain/local-time.js';
import type {
  ActiveAppointment, AvailabilityInput, AvailabilityResult, BusyInterval, DayAvailability, EngineResource, EngineService, Interval, Slot,
} from '../../src/domain/availability.js';

// The rules are those written at the head of src/domain/availability.ts.

const MINUTE = 60_000;

/** A weekly schedule as instants over local dates [from, to] (dates in `zone`). */
function weeklyWindows(schedule: WeeklySchedule, zone: string, from: string, to: string): Interval[] {
  const out: Interval[] = [];
  for (let date = from; date <= to; date = addDays(date, 1)) {
    const key = WEEKDAYS[weekdayIndex(date)]!;
    for (const interval of schedule[key] ?? []) {
      out.push({
        start: localToMillis(date, interval.start, zone),
        end: localToMillis(date, interval.end, zone),
      });
    }
  }
  return normalise(out);
}

const shiftDate = addDays;

/**
 * Schedules are read this many days either side of the requested dates: a resource in another zone,
 * or a report zone other than the location's, may put a local date up to 26 hours away.
 */
const SCHEDULE_MARGIN_DAYS = 2;

function bookAheadLimit(service: EngineService, now: number): number {
  if (service.bookAheadUnit === 'none' || !service.bookAheadValue) return Infinity;
  return DateTime.fromMillis(now, { zone: 'UTC' }).plus({ [service.bookAheadUnit]: service.bookAheadValue }).toMillis();
}

/**
 * The location and service layers, shared by every resource: null when neither constrains.
 * Schedules are read a day wider than the range, because a resource in another zone may open on
 * a different local date; results are clipped to the range.
 */
function sharedWindows(input: AvailabilityInput): Interval[] | null {
  const from = shiftDate(input.startDate, -SCHEDULE_MARGIN_DAYS);
  const to = shiftDate(input.endDate, SCHEDULE_MARGIN_DAYS);
  const layers: Interval[][] = [];
  if (input.locationWeekly) layers.push(weeklyWindows(input.locationWeekly, input.timezoneName, from, to));
  if (input.service.weeklyAvailability) layers.push(weeklyWindows(input.service.weeklyAvailability, input.timezoneName, from, to));
  if (layers.length === 0) return null;
  let windows = layers[0]!;
  for (const layer of layers.slice(1)) windows = intersect(windows, layer);
  return windows;
}

/** Open windows of one resource over the requested dates, before busy time is removed. */
function openWindows(input: AvailabilityInput, shared: Interval[] | null, resource: EngineResource, rangeStart: number, rangeEnd: number): Interval[] {
  if (input.service.availabilityType === 'allocation') {
    // Allocations are loaded with a day's margin each side (zones): clip them to the search like schedules.
    return intersect(normalise((resource.allocations ?? []).map(({ start, end }) => ({ start, end }))), [{ start: rangeStart, end: rangeEnd }]);
  }
  let windows = shared;
  if (resource.weeklyAvailability) {
    const own = weeklyWindows(resource.weeklyAvailability, resource.timezoneName ?? input.timezoneName, shiftDate(input.startDate, -SCHEDULE_MARGIN_DAYS), shiftDate(input.endDate, SCHEDULE_MARGIN_DAYS));
    windows = windows ? intersect(windows, own) : own;
  }
  if (!windows) return [];
  return intersect(windows, [{ start: rangeStart, end: rangeEnd }]);
}

interface Candidate {
  start: number;
  end: number;
  remaining: number;
}

/** Free slots of one resource: candidate starts on the grid, checked against busy time and capacity. */
function resourceSlots(
  input: AvailabilityInput,
  shared: Interval[] | null,
  resource: EngineResource,
  appointments: ActiveAppointment[],
  /** The busy intervals of every resource (resourceId null) and of this one, grouped once per search. */
  busy: BusyInterval[],
  rangeStart: number,
  rangeEnd: number,
): Candidate[] {
  const { service } = input;
  const durationMs = input.duration * MINUTE;
  const stepMs = (service.bookingInterval ?? input.duration) * MINUTE;
  const paddingMs = service.padding * MINUTE;
  const paddingMayOverflow = input.allowPaddingOverflow ?? service.allowPaddingOverflow;

  const ignoreExternal = input.ignoreExternalEvents ?? input.service.ignoreExternalEvents ?? false;
  const hardBusy = normalise(busy.filter((b) => !(ignoreExternal && b.external)).map(({ start, end }) => ({ start, end })));
  // Sorted by start, with the running maximum of (end + padding) so a scan can begin at the first
  // appointment that can still reach a candidate and stop at the first that starts after it.
  const mine = [...appointments].sort((a, b) => a.start - b.start);
  const reach: number[] = [];
  let furthest = -Infinity;
  for (const a of mine) {
    furthest = Math.max(furthest, a.end + a.padding * MINUTE);
    reach.push(furthest);
  }
  let busyIndex = 0;
  let appointmentIndex = 0;

  const allocationCapacity = (start: number) =>
    resource.allocations?.find((a) => a.start <= start && start < a.end)?.bookingsPerSlot ?? null;

  const out: Candidate[] = [];
  // Windows come sorted and candidates rise within each, so both scans only move forward.
  for (const window of openWindows(input, shared, resource, rangeStart, rangeEnd)) {
    for (let start = window.start; start + durationMs <= window.end; start += stepMs) {
      const end = start + durationMs;
      const occupiedUntil = end + paddingMs;
      if (!paddingMayOverflow && occupiedUntil > window.end) continue;
      while (busyIndex < hardBusy.length && hardBusy[busyIndex]!.end <= start) busyIndex++;
      if (busyIndex < hardBusy.length && hardBusy[busyIndex]!.start < occupiedUntil) continue;
      while (appointmentIndex < mine.length && reach[appointmentIndex]! <= start) appointmentIndex++;
      const { sharing, blocked } = slotOccupancy(mine, appointmentIndex, service.id, start, end, occupiedUntil);
      if (blocked) continue;
      const capacity = service.availabilityType === 'allocation' ? (allocationCapacity(start) ?? service.bookingsPerSlot) : service.bookingsPerSlot;
      if (sharing >= capacity) continue;
      out.push({ start, end, remaining: capacity - sharing });
    }
  }
  return out;
}

function isoWeek(ms: number, zone: string): string {
  const dt = DateTime.fromMillis(ms, { zone });
  return `${dt.weekYear}-W${String(dt.weekNumber).padStart(2, '0')}`;
}

export function computeAvailability(input: AvailabilityInput): AvailabilityResult {
  const { service, timezoneName: zone } = input;
  const reportZone = input.reportZone ?? zone;
  const rangeStart = localToMillis(input.startDate, '00:00', reportZone);
  const rangeEnd = localToMillis(shiftDate(input.endDate, 1), '00:00', reportZone);
  // The slot grid is the location's: laid over whole location days, as the check of a time to hold
  // or book lays it (src/modules/appointments/slot.ts), then cut to the reported days. Laid from
  // another zone's midnight instead, a window open across that midnight would start a grid of its
  // own there (05:30 and 06:30 in Kolkata for a London visitor), offering times a hold refuses.
  const gridStart = reportZone === zone ? rangeStart : DateTime.fromMillis(rangeStart, { zone }).startOf('day').toMillis();
  const gridEnd = reportZone === zone ? rangeEnd : DateTime.fromMillis(rangeEnd - 1, { zone }).startOf('day').plus({ days: 1 }).toMillis();
  const earliest = Math.max(input.now + service.bookInAdvance * MINUTE, input.now);
  const latest = bookAheadLimit(service, input.now);
  const random = input.random ?? Math.random;

  // Per customer limits that close everything.
  let customerReason: string | null = null;
  const excluded = new Set<string>();
  if (input.customer) {
    if (service.bookingLimit > 0 && input.customer.activeCount >= service.bookingLimit) customerReason = 'customer booking limit reached';
    if (service.maxBookingLimit > 0 && input.customer.lifetimeCount >= service.maxBookingLimit) customerReason = 'customer lifetime booking limit reached';
    for (const resource of input.resources) {
      const lifetime = input.customer.lifetimeByResource[resource.id] ?? 0;
      const active = input.customer.activeByResource[resource.id] ?? 0;
      if (service.maxResourceBookingLimit > 0 && lifetime >= service.maxResourceBookingLimit) excluded.add(resource.id);
      if (resource.bookingLimit > 0 && active >= resource.bookingLimit) excluded.add(resource.id);
    }
  }
  // Sorted once by id: every list of free resources below is then built in order, never sorted.
  const resources = input.resources.filter((r) => !excluded.has(r.id)).sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));

  // Free candidates per resource, keyed by slot start.
  const shared = sharedWindows(input);
  const appointmentsByResource = new Map<string, ActiveAppointment[]>();
  for (const appointment of input.appointments) {
    for (const id of appointment.resourceIds) {
      const list = appointmentsByResource.get(id) ?? [];
      list.push(appointment);
      appointmentsByResource.set(id, list);
    }
  }
  // Busy time by resource, once: filtering the whole list per resource grew as resources squared.
  const everyone = input.busy.filter((b) => b.resourceId === null);
  const busyByResource = new Map<string, BusyInterval[]>();
  for (const b of input.busy) {
    if (b.resourceId === null) continue;
    const list = busyByResource.get(b.resourceId) ?? [...everyone];
    list.push(b);
    busyByResource.set(b.resourceId, list);
  }
  // Per slot start: the free resources, in id order, with the units each has left.
  const byStart = new Map<number, { end: number; ids: string[]; remaining: number[] }>();
  for (const resource of resources) {
    for (const candidate of resourceSlots(input, shared, resource, appointmentsByResource.get(resource.id) ?? [], busyByResource.get(resource.id) ?? everyone, gridStart, gridEnd)) {
      if (candidate.start < rangeStart || candidate.start >= rangeEnd) continue;
      if (candidate.start < earliest || candidate.start > latest) continue;
      let entry = byStart.get(candidate.start);
      if (!entry) {
        entry = { end: candidate.end, ids: [], remaining: [] };
        byStart.set(candidate.start, entry);
      }
      entry.ids.push(resource.id);
      entry.remaining.push(candidate.remaining);
    }
  }

  const slots: Slot[] = [];
  // Local day of an instant by binary search over the range's day boundaries (no zone math per slot):
  // in the report zone for availableDays, in the location's zone for the daily limits.
  const dayOf = localDayFinder(shiftDate(input.startDate, -1), shiftDate(input.endDate, 1), reportZone);
  const locationDayOf =
    reportZone === zone ? dayOf : localDayFinder(shiftDate(input.startDate, -SCHEDULE_MARGIN_DAYS), shiftDate(input.endDate, SCHEDULE_MARGIN_DAYS), zone);
  const dailyReason = new Map<string, string>();
  for (const start of [...byStart.keys()].sort((a, b) => a - b)) {
    const { end, ids, remaining: units } = byStart.get(start)!;
    if (customerReason) break;
    const date = dayOf(start);
    const usage = input.dailyUsage[locationDayOf(start)] ?? { count: 0, minutes: 0 };
    if (service.dailyBookingLimitCount > 0 && usage.count >= service.dailyBookingLimitCount) {
      dailyReason.set(date, 'daily booking limit reached');
      continue;
    }
    if (service.dailyBookingLimitMinutes > 0 && service.dailyBookingLimitMinutes - usage.minutes < input.duration) {
      dailyReason.set(date, 'daily booked minutes limit reached');
      continue;
    }
    let chosen: string[];
    let remaining: number;
    switch (input.roundRobin) {
      case 'COMBINED': {
        // Every resource free at once: the lists are both in id order, so equal length suffices.
        if (resources.length === 0 || ids.length !== resources.length) continue;
        chosen = ids;
        remaining = Math.min(...units);
        break;
      }
      case 'RANDOM': {
        const index = Math.min(ids.length - 1, Math.floor(random() * ids.length));
        chosen = [ids[index]!];
        remaining = units[index]!;
        break;
      }
      case 'BALANCED': {
        const week = isoWeek(start, zone);
        const minutes = (id: string) => input.weeklyMinutes?.[week]?.[id] ?? 0;
        let best = 0;
        // ids are in id order, so the first with the fewest minutes wins ties by id
        for (let k = 1; k < ids.length; k++) if (minutes(ids[k]!) < minutes(ids[best]!)) best = k;
        chosen = [ids[best]!];
        remaining = units[best]!;
        break;
      }
      default: {
        chosen = ids;
        remaining = 0;
        for (const unit of units) remaining += unit;
      }
    }
    slots.push({ startTime: new Date(start).toISOString(), endTime: new Date(end).toISOString(), resourceIds: chosen, remaining });
  }

  const days: DayAvailability[] = [];
  const holidayNames = new Map((input.holidays ?? []).map((h) => [h.date, h.name]));
  const slotDays = new Set(slots.map((slot) => dayOf(Date.parse(slot.startTime))));
  for (let date = input.startDate; date <= input.endDate; date = shiftDate(date, 1)) {
    const dayEnd = localToMillis(shiftDate(date, 1), '00:00', reportZone);
    const dayStart = localToMillis(date, '00:00', reportZone);
    let reason: string | null = null;
    if (!slotDays.has(date)) {
      if (customerReason) reason = customerReason;
      else if (dayEnd <= earliest) reason = 'in the past or inside the minimum lead time';
      else if (dayStart > latest) reason = 'beyond the book-ahead period';
      else if (holidayNames.has(date)) reason = 'holiday';
      else reason = dailyReason.get(date) ?? 'no free time';
    }
    days.push(reason === 'holiday' ? { date, available: false, reason, holidayName: holidayNames.get(date)! } : { date, available: reason === null, reason });
  }
  return { timezoneName: zone, availableTimes: slots, availableDays: days };
}
