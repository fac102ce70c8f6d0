import { DateTime } from 'luxon';
import { localToMillis } from './local-time.js';
import { WEEKDAYS } from './weekly-availability.js';
import type { WeeklySchedule } from './weekly-availability.js';

/**
 * The availability engine: which slots of a service at a location can be booked, by which
 * resources, right now. A pure function of its inputs: no database, no clock, no randomness
 * except the one passed in.
 *
 * Rules (specification "Availability behaviour rules" and docs/api.md "Availability"):
 * - Open windows: the intersection of the location's, the service's and the resource's weekly
 *   schedules, each read in its own time zone (the resource's, else the location's). A schedule
 *   that is null does not constrain; if none of the three is set the resource has no open time.
 *   For `availabilityType: allocation` the windows are the allocations instead.
 * - Slots start every `bookingInterval` minutes (default: the duration) from the start of each open
 *   window, and must fit in it; `padding` after the slot must fit too unless padding may overflow.
 * - Busy time (blocks, holidays, external calendar events unless `ignoreExternalEvents`, other
 *   appointments plus their padding) removes slots. Appointments of the same service at exactly the same start and end share the slot up to
 *   `bookingsPerSlot` (concurrent capacity at the same instant; one booking uses one unit).
 * - No slot starts before now + `bookInAdvance` minutes, or after now + the book-ahead period.
 * - `dailyBookingLimitCount` hides a day once reached; `dailyBookingLimitMinutes` hides slots when
 *   the day's remaining minutes are fewer than the duration.
 * - Once the customer is known: `bookingLimit` (active), `maxBookingLimit` (lifetime) hide every
 *   slot; `maxResourceBookingLimit` and the resource's `bookingLimit` exclude that resource.
 * - Round robin: NONE lists every free resource; RANDOM picks one free resource; BALANCED the free
 *   resource with the fewest booked minutes in that week; COMBINED needs every requested resource
 *   free at once.
 */

export interface Interval {
  start: number;
  end: number;
}

export type RoundRobin = 'NONE' | 'RANDOM' | 'BALANCED' | 'COMBINED';

export interface EngineService {
  id: string;
  duration: number;
  availabilityType: 'schedule' | 'allocation';
  weeklyAvailability: WeeklySchedule | null;
  bookInAdvance: number;
  bookAheadUnit: 'none' | 'days' | 'weeks' | 'months';
  bookAheadValue: number | null;
  bookingInterval: number | null;
  padding: number;
  bookingsPerSlot: number;
  dailyBookingLimitCount: number;
  dailyBookingLimitMinutes: number;
  bookingLimit: number;
  maxBookingLimit: number;
  maxResourceBookingLimit: number;
  allowPaddingOverflow: boolean;
  ignoreExternalEvents?: boolean;
}

export interface EngineResource {
  id: string;
  timezoneName: string | null;
  weeklyAvailability: WeeklySchedule | null;
  /** Active appointments per customer with this resource (0 = unlimited). */
  bookingLimit: number;
  /** Allocation windows (epoch ms), for services whose availabilityType is allocation. */
  allocations?: Array<Interval & { bookingsPerSlot?: number | null }>;
}

/** Time a resource (or, with resourceId null, every resource) cannot be booked. */
export interface BusyInterval extends Interval {
  resourceId: string | null;
  /** From an external calendar: ignored when the search says ignoreExternalEvents. */
  external?: boolean;
}

/** An appointment that holds capacity (appointment-status.ts, holdsCapacity: BK, RS and unexpired IN). */
export interface ActiveAppointment extends Interval {
  /** Not read by the engine (which looks at appointments resource by resource); kept where the caller has it. */
  id?: string;
  serviceId: string;
  /** Read only: callers may share one array between appointments (modules/availability/repository.ts, parsePackedBusy). */
  resourceIds: readonly string[];
  /** Padding minutes that follow it (from its service). */
  padding: number;
}

export interface CustomerUsage {
  /** Appointments of this service that count for bookingLimit (countsForBookingLimit: BK, unexpired IN). */
  activeCount: number;
  /** Appointments of this service that count for the lifetime caps (countsForLifetimeLimits: not RE), ever. */
  lifetimeCount: number;
  /** Per resource: the same as lifetimeCount. */
  lifetimeByResource: Record<string, number>;
  /** Per resource: the same as activeCount (the resource's own bookingLimit). */
  activeByResource: Record<string, number>;
}

export interface AvailabilityInput {
  now: number;
  timezoneName: string;
  locationWeekly: WeeklySchedule | null;
  service: EngineService;
  resources: EngineResource[];
  /** Local dates (YYYY-MM-DD, in `reportZone`), inclusive. */
  startDate: string;
  endDate: string;
  /**
   * The IANA zone startDate and endDate are read in and availableDays are reported in (the
   * `timezone` query parameter); default: the location's. Schedules, daily limits and weeks stay
   * the location's.
   */
  reportZone?: string;
  duration: number;
  roundRobin: RoundRobin;
  busy: BusyInterval[];
  appointments: ActiveAppointment[];
  /** The service's bookings and booked minutes per local date (for the daily limits). */
  dailyUsage: Record<string, { count: number; minutes: number }>;
  /** Booked minutes per resource in each ISO week (`2026-W10`), for BALANCED. */
  weeklyMinutes?: Record<string, Record<string, number>>;
  customer?: CustomerUsage;
  /** For RANDOM; defaults to Math.random. */
  random?: () => number;
  allowPaddingOverflow?: boolean;
  /** Busy time from external calendars does not count (chosen at hold or reserve). */
  ignoreExternalEvents?: boolean;
  /** The location's holidays by local date, so a closed day says which holiday closed it. */
  holidays?: Array<{ date: string; name: string }>;
}

export interface Slot {
  startTime: string;
  endTime: string;
  /** Read only: a RANDOM or BALANCED search's slots of one resource share one list (emitSlots). */
  resourceIds: readonly string[];
  remaining: number;
}

export interface DayAvailability {
  date: string;
  available: boolean;
  reason: string | null;
  /** With reason `holiday`: the holiday's name. */
  holidayName?: string;
}

export interface AvailabilityResult {
  timezoneName: string;
  availableTimes: Slot[];
  availableDays: DayAvailability[];
}

const MINUTE = 60_000;
const DAY_MS = 86_400_000;

/** Intersection of two sorted lists of disjoint intervals. */
export function intersect(a: Interval[], b: Interval[]): Interval[] {
  const out: Interval[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const start = Math.max(a[i]!.start, b[j]!.start);
    const end = Math.min(a[i]!.end, b[j]!.end);
    if (start < end) out.push({ start, end });
    if (a[i]!.end < b[j]!.end) i++;
    else j++;
  }
  return out;
}

/** Sorted, merged. */
export function normalise(intervals: Interval[]): Interval[] {
  const sorted = intervals.filter((x) => x.end > x.start).sort((x, y) => x.start - y.start);
  const out: Interval[] = [];
  for (const x of sorted) {
    const last = out[out.length - 1];
    if (last && x.start <= last.end) last.end = Math.max(last.end, x.end);
    else out.push({ ...x });
  }
  return out;
}

// --- calendar dates as day numbers ------------------------------------------------------------
// A search walks dates a day at a time; counting days as integers (days since 1970-01-01) instead
// of parsing and printing a date string per step keeps that walk cheap. Parsing and printing are
// those of local-time.ts's addDays, so odd inputs behave as they did (an invalid date throws).

/** Days since 1970-01-01 of a calendar date (Date.UTC, as addDays reads it). */
function dayNumber(date: string): number {
  const [year, month, day] = date.split('-').map(Number) as [number, number, number];
  return Date.UTC(year, month - 1, day) / DAY_MS;
}

function dateOfDay(day: number): string {
  return new Date(day * DAY_MS).toISOString().slice(0, 10);
}

/** 0 = Monday … 6 = Sunday (the order of WEEKDAYS); 1970-01-01 was a Thursday. */
function weekdayOfDay(day: number): number {
  return (((day + 3) % 7) + 7) % 7;
}

/** `2026-W10`: the ISO week (Monday to Sunday; week 1 holds the year's first Thursday) of a date. */
function isoWeekOfDay(day: number): string {
  const thursday = day - weekdayOfDay(day) + 3;
  const year = new Date(thursday * DAY_MS).getUTCFullYear();
  const week = Math.floor((thursday - Date.UTC(year, 0, 1) / DAY_MS) / 7) + 1;
  return `${year}-W${String(week).padStart(2, '0')}`;
}

// --- wall clocks ----------------------------------------------------------------------------

/**
 * The local days of one zone over a run of dates: each date and the instant its day begins
 * (localToMillis of its "00:00"), with one more day at the end so every day has an end.
 */
interface ZoneDays {
  zone: string;
  /** Day number of dates[0]. */
  first: number;
  dates: string[];
  starts: number[];
}

function zoneDays(zone: string, first: number, last: number): ZoneDays {
  const dates: string[] = [];
  const starts: number[] = [];
  for (let day = first; day <= last + 1; day++) {
    const date = dateOfDay(day);
    dates.push(date);
    starts.push(localToMillis(date, '00:00', zone));
  }
  return { zone, first, dates, starts };
}

/** "HH:MM" → minutes of the day, "24:00" → 1440; NaN for anything else (read by localToMillis instead). */
function plainMinutes(time: string): number {
  if (time === '24:00') return 1440;
  if (!/^\d\d:\d\d$/.test(time)) return NaN;
  const hours = Number(time.slice(0, 2));
  const minutes = Number(time.slice(3));
  return hours < 24 && minutes < 60 ? hours * 60 + minutes : NaN;
}

/**
 * A wall-clock time on day `index` of `days` as an instant, exactly as localToMillis answers: a day
 * that lasts 24 hours has no clock change, so its times are its midnight plus minutes ("24:00" is
 * then the next midnight, as localToMillis reads it). A day of another length (a clock change) is
 * asked of localToMillis, time by time.
 */
function wallTime(days: ZoneDays, index: number, time: string, minutes: number): number {
  const start = days.starts[index]!;
  if (days.starts[index + 1]! - start === DAY_MS && !Number.isNaN(minutes)) return start + minutes * MINUTE;
  return localToMillis(days.dates[index]!, time, days.zone);
}

/** A weekly schedule as instants over the days of `days` from day number `from` to `to`. */
function scheduleWindows(schedule: WeeklySchedule, days: ZoneDays, from: number, to: number): Interval[] {
  const parsed = WEEKDAYS.map((key) => (schedule[key] ?? []).map(({ start, end }) => ({ start, end, startMinutes: plainMinutes(start), endMinutes: plainMinutes(end) })));
  const out: Interval[] = [];
  for (let day = from; day <= to; day++) {
    const index = day - days.first;
    for (const interval of parsed[weekdayOfDay(day)]!) {
      out.push({ start: wallTime(days, index, interval.start, interval.startMinutes), end: wallTime(days, index, interval.end, interval.endMinutes) });
    }
  }
  return normalise(out);
}

/** A weekly schedule as instants over local dates [from, to] (dates in `zone`). */
export function weeklyWindows(schedule: WeeklySchedule, zone: string, from: string, to: string): Interval[] {
  const first = dayNumber(from);
  const last = dayNumber(to);
  if (!(first <= last)) return [];
  return scheduleWindows(schedule, zoneDays(zone, first, last), first, last);
}

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
 * What other appointments do to one slot of one resource (the capacity rule): appointments of the
 * same service at exactly this start and end share it (one unit each); any other overlap, padding
 * included, blocks it. `sorted` is by start; the scan begins at `from` (earlier ones cannot reach).
 */
export function slotOccupancy(sorted: ActiveAppointment[], from: number, serviceId: string, start: number, end: number, occupiedUntil: number): { sharing: number; blocked: boolean } {
  let sharing = 0;
  let blocked = false;
  for (let k = from; k < sorted.length && sorted[k]!.start < occupiedUntil; k++) {
    const a = sorted[k]!;
    if (a.end + a.padding * MINUTE <= start) continue;
    if (a.serviceId === serviceId && a.start === start && a.end === end) sharing++;
    else blocked = true;
  }
  return { sharing, blocked };
}

function isoWeek(ms: number, zone: string): string {
  const dt = DateTime.fromMillis(ms, { zone });
  return `${dt.weekYear}-W${String(dt.weekNumber).padStart(2, '0')}`;
}

const TWO_DIGITS = Array.from({ length: 100 }, (_, n) => String(n).padStart(2, '0'));
/** The first instant of the year 10000, after which toISOString writes six-digit years. */
const YEAR_10000 = 253_402_300_800_000;
/** "HH:MM:00.000Z" by minute of the day, written when first needed. */
const minuteSuffixes: string[] = [];

/**
 * new Date(ms).toISOString(), for slot times: most are whole minutes, written as their day's
 * "YYYY-MM-DDT" (kept from the previous call) and the minute's "HH:MM:00.000Z". Any other instant
 * goes the long way.
 */
function isoFormatter(): (ms: number) => string {
  let cachedDay = NaN;
  let prefix = '';
  return (ms) => {
    if (!(ms >= 0 && ms < YEAR_10000) || ms % MINUTE !== 0) return new Date(ms).toISOString();
    const day = Math.floor(ms / DAY_MS);
    if (day !== cachedDay) {
      cachedDay = day;
      prefix = new Date(day * DAY_MS).toISOString().slice(0, 11);
    }
    const minute = (ms - day * DAY_MS) / MINUTE;
    const suffix = (minuteSuffixes[minute] ??= `${TWO_DIGITS[Math.floor(minute / 60)]}:${TWO_DIGITS[minute % 60]}:00.000Z`);
    return prefix + suffix;
  };
}

/**
 * Reorders positions[from..to) by ascending keys[position]; the order among equal keys is left
 * free (its callers' results do not depend on it). Keys (relative to the smallest) and positions
 * are packed into one number each and sorted natively, many times faster than a sort with a
 * comparator function; keys too far apart to pack exactly, or not whole numbers, use a comparator.
 */
function sortPositions(keys: Float64Array, positions: Int32Array, from: number, to: number): void {
  let sorted = true;
  let whole = true;
  let low = Infinity;
  let high = -Infinity;
  for (let k = from; k < to; k++) {
    const key = keys[positions[k]!]!;
    if (k > from && key < keys[positions[k - 1]!]!) sorted = false;
    if (!Number.isInteger(key)) whole = false;
    if (key < low) low = key;
    if (key > high) high = key;
  }
  if (sorted) return;
  const count = to - from;
  let slots = 1;
  while (slots < count) slots *= 2;
  if (!whole || (high - low + 1) * slots > Number.MAX_SAFE_INTEGER) {
    positions.set(Array.from(positions.subarray(from, to)).sort((a, b) => keys[a]! - keys[b]!), from);
    return;
  }
  const packed = new Float64Array(count);
  for (let k = 0; k < count; k++) packed[k] = (keys[positions[from + k]!]! - low) * slots + k;
  packed.sort();
  const before = positions.slice(from, to);
  for (let k = 0; k < count; k++) positions[from + k] = before[packed[k]! % slots]!;
}

/**
 * Items 0 to count - 1 grouped by their group (a counting sort), each group in item order:
 * `from[g]` to `from[g + 1]` in `items` are group g's.
 */
function groupItems(count: number, groupOfItem: Int32Array, groups: number): { from: Int32Array; items: Int32Array } {
  const from = new Int32Array(groups + 1);
  for (let p = 0; p < count; p++) from[groupOfItem[p]! + 1]!++;
  for (let g = 0; g < groups; g++) from[g + 1]! += from[g]!;
  const fill = from.slice(0, groups);
  const items = new Int32Array(count);
  for (let p = 0; p < count; p++) items[fill[groupOfItem[p]!]!++] = p;
  return { from, items };
}

/**
 * Busy time per resource group, merged with that of every resource (resourceId null) into sorted,
 * disjoint intervals (as normalise makes them; a union does not depend on order): group g's are
 * at from[g] to from[g + 1]. External busy time is left out when the search ignores it.
 */
interface BusyColumns {
  from: Int32Array;
  start: Float64Array;
  end: Float64Array;
}

function busyColumns(busy: BusyInterval[], groupOf: Map<string, number>, ignoreExternal: boolean): BusyColumns {
  const everyone: Interval[] = [];
  // Typed arrays sized for every interval: lists grown one push at a time were most of what this
  // step allocated (issue 18), and numbers read from typed arrays stay unboxed in the merge below.
  const ownStart = new Float64Array(busy.length);
  const ownEnd = new Float64Array(busy.length);
  const ownGroup = new Int32Array(busy.length);
  let own = 0;
  for (let i = 0; i < busy.length; i++) {
    const b = busy[i]!;
    if (ignoreExternal && b.external) continue;
    if (b.resourceId === null) everyone.push({ start: b.start, end: b.end });
    else {
      const g = groupOf.get(b.resourceId);
      // Empty intervals are dropped, as normalise drops them.
      if (g === undefined || !(b.end > b.start)) continue;
      ownStart[own] = b.start;
      ownEnd[own] = b.end;
      ownGroup[own++] = g;
    }
  }
  const shared = normalise(everyone);
  const sharedStart = Float64Array.from(shared, (interval) => interval.start);
  const sharedEnd = Float64Array.from(shared, (interval) => interval.end);
  const { from: ownFrom, items } = groupItems(own, ownGroup, groupOf.size);
  const groups = groupOf.size;
  const capacity = own + groups * shared.length;
  const columns: BusyColumns = { from: new Int32Array(groups + 1), start: new Float64Array(capacity), end: new Float64Array(capacity) };
  let length = 0;
  for (let g = 0; g < groups; g++) {
    sortPositions(ownStart, items, ownFrom[g]!, ownFrom[g + 1]!);
    columns.from[g] = length;
    // Merge the two lists by start, joining what overlaps or touches (the rule of normalise).
    let s = 0;
    let o = ownFrom[g]!;
    const ownTo = ownFrom[g + 1]!;
    while (s < shared.length || o < ownTo) {
      let start: number;
      let end: number;
      if (o >= ownTo || (s < shared.length && sharedStart[s]! <= ownStart[items[o]!]!)) {
        start = sharedStart[s]!;
        end = sharedEnd[s++]!;
      } else {
        start = ownStart[items[o]!]!;
        end = ownEnd[items[o++]!]!;
      }
      if (length > columns.from[g]! && start <= columns.end[length - 1]!) columns.end[length - 1] = Math.max(columns.end[length - 1]!, end);
      else {
        columns.start[length] = start;
        columns.end[length++] = end;
      }
    }
  }
  columns.from[groups] = length;
  return columns;
}

/** One search's fixed values, shared by the per-resource steps. */
interface Search {
  serviceId: string;
  durationMs: number;
  stepMs: number;
  paddingMs: number;
  paddingMayOverflow: boolean;
  /** The search's capacity per slot; allocations may set their own. */
  bookingsPerSlot: number;
  allocation: boolean;
  /** Candidates start at or after `lowest`, before `rangeEnd` and not after `latest`. */
  lowest: number;
  rangeEnd: number;
  latest: number;
}

/**
 * The large typed arrays of a search (candidate starts, the units left, the occupancy marks), kept
 * from one search to the next (issue 18). Allocated per search, a 31-day search of 50 resources
 * made about 1.5 MB of them, zeroed when allocated and collected soon after: most of what it
 * allocated, and its garbage collection took a fifth of its time. They are never part of a result.
 * Each may be longer than asked: readers go by the search's own bounds, never by its length.
 */
interface SearchArrays {
  /** At least `length` entries, contents undefined. */
  starts(length: number): Float64Array;
  /** At least `length` entries, contents undefined. */
  units(length: number): Float64Array;
  /** At least `length` entries, the first `length` zero. */
  marks(length: number): Int32Array;
}

/** Larger arrays are not kept, so one huge search does not hold its memory for the process. */
const KEPT_ENTRIES_MAX = 1 << 21;

/** Arrays of at least a length, the one kept last when it is long enough. */
function reused<A extends Float64Array | Int32Array>(make: (length: number) => A): (length: number) => A {
  let kept = make(0);
  return (length) => {
    if (kept.length >= length) return kept;
    const array = make(length);
    if (length <= KEPT_ENTRIES_MAX) kept = array;
    return array;
  };
}

function keptSearchArrays(): SearchArrays {
  const starts = reused((length) => new Float64Array(length));
  const units = reused((length) => new Float64Array(length));
  const marks = reused((length) => new Int32Array(length));
  return { starts, units, marks: (length) => marks(length).fill(0, 0, length) };
}

/** Arrays of one search's own. */
const freshSearchArrays: SearchArrays = {
  starts: (length) => new Float64Array(length),
  units: (length) => new Float64Array(length),
  marks: (length) => new Int32Array(length),
};

/** The process's kept arrays, and whether a search is using them now. */
const keptArrays = keptSearchArrays();
let keptArraysLent = false;

/**
 * Candidate slot starts of every resource in one flat array (resource r's from from[r] to
 * from[r + 1], ascending): the grid of each open window from its start, stepped by the booking
 * interval, each slot (and its padding, unless it may overflow) inside the window, kept from the
 * earliest allowed start to the last. The arrays of numbers replace an object per candidate.
 */
function candidateStarts(search: Search, windowsOf: Interval[][], arrays: SearchArrays): { starts: Float64Array; from: Int32Array } {
  const { durationMs, stepMs, paddingMs, paddingMayOverflow, lowest, rangeEnd, latest } = search;
  // Counted from the windows, so the array is allocated once (grown only if the count was short).
  let capacity = 16;
  for (const windows of windowsOf) for (const w of windows) if (w.end - w.start >= durationMs) capacity += Math.floor((w.end - w.start - durationMs) / stepMs) + 2;
  let starts: Float64Array = arrays.starts(capacity);
  const from = new Int32Array(windowsOf.length + 1);
  let length = 0;
  for (let r = 0; r < windowsOf.length; r++) {
    const windows = windowsOf[r]!;
    from[r] = length;
    resource: for (let w = 0; w < windows.length; w++) {
      const window = windows[w]!;
      // The start is computed from a whole step count, not carried from one pass to the next: a
      // number carried round a loop is kept unboxed only while V8 knows it is a double, and
      // window.start may not say so. Objects with the fields start and end share V8's hidden
      // class with every other such object in the process, TypeBox's schemas among them
      // (catalog/fields.ts), so the field holds boxed numbers; a loop carrying it then boxed
      // every candidate, a HeapNumber each: 0.9 MB of garbage per 31-day search of 50 resources,
      // nearly all it allocated (issue 18).
      for (let step = 0; ; step++) {
        const start = window.start + step * stepMs;
        const end = start + durationMs;
        const occupiedUntil = end + paddingMs;
        if (end > window.end || (!paddingMayOverflow && occupiedUntil > window.end)) break;
        // Windows are sorted: past the search, every later start of this resource is too.
        if (start >= rangeEnd || start > latest) break resource;
        if (start < lowest) continue;
        if (length === starts.length) {
          const grown = new Float64Array(length * 2);
          grown.set(starts);
          starts = grown;
        }
        starts[length++] = start;
      }
    }
  }
  from[windowsOf.length] = length;
  return { starts, from };
}

/**
 * The capacity rule, laid onto the candidates: for each candidate, the appointments of its
 * resource that overlap it (padding included on both sides) — those of the same service at exactly
 * its start and end share it (the count), any other blocks it (-1). Each appointment is read once
 * and finds its first candidate by binary search, so appointments need no grouping or sorting.
 */
function occupancy(search: Search, appointments: ActiveAppointment[], resourcesOf: Record<string, number[]>, starts: Float64Array, from: Int32Array, arrays: SearchArrays): Int32Array {
  const { serviceId, durationMs, paddingMs } = search;
  const marks = arrays.marks(from[from.length - 1]!);
  for (let i = 0; i < appointments.length; i++) {
    const a = appointments[i]!;
    const until = a.end + a.padding * MINUTE;
    const ids = a.resourceIds;
    for (let j = 0; j < ids.length; j++) {
      const resources = resourcesOf[ids[j]!];
      if (resources === undefined) continue;
      for (let n = 0; n < resources.length; n++) {
        const r = resources[n]!;
        const last = from[r + 1]!;
        // The first candidate whose slot, padding included, ends after the appointment starts.
        let low = from[r]!;
        let high = last;
        while (low < high) {
          const mid = (low + high) >>> 1;
          if (a.start < starts[mid]! + durationMs + paddingMs) high = mid;
          else low = mid + 1;
        }
        for (let k = low; k < last && starts[k]! < until; k++) {
          if (marks[k]! < 0) continue;
          if (a.serviceId === serviceId && a.start === starts[k] && a.end === starts[k]! + durationMs) marks[k]!++;
          else marks[k] = -1;
        }
      }
    }
  }
  return marks;
}

/**
 * The free candidates of resource r, kept in place at the front of its part of `starts` with the
 * units each has left in `units`; returns where they end. A candidate is free when no appointment
 * blocks it, no busy time (of group g) overlaps it with its padding, and the appointments sharing
 * it leave capacity.
 */
function freeSlots(search: Search, r: number, resource: EngineResource, starts: Float64Array, from: Int32Array, marks: Int32Array, busy: BusyColumns, g: number, units: Float64Array): number {
  const { durationMs, paddingMs } = search;
  const { start: busyStart, end: busyEnd } = busy;
  const busyTo = busy.from[g + 1]!;
  let busyIndex = busy.from[g]!;
  const allocations = search.allocation ? (resource.allocations ?? []) : null;
  let kept = from[r]!;
  for (let k = from[r]!; k < from[r + 1]!; k++) {
    const sharing = marks[k]!;
    if (sharing < 0) continue;
    const start = starts[k]!;
    const occupiedUntil = start + durationMs + paddingMs;
    // Busy time is sorted and disjoint, and candidates rise: the scan only moves forward.
    while (busyIndex < busyTo && busyEnd[busyIndex]! <= start) busyIndex++;
    if (busyIndex < busyTo && busyStart[busyIndex]! < occupiedUntil) continue;
    let capacity = search.bookingsPerSlot;
    if (allocations) {
      // The first allocation (in the order given) that the slot starts in sets the capacity.
      for (const a of allocations) {
        if (a.start <= start && start < a.end) {
          capacity = a.bookingsPerSlot ?? search.bookingsPerSlot;
          break;
        }
      }
    }
    if (sharing >= capacity) continue;
    starts[kept] = start;
    units[kept++] = capacity - sharing;
  }
  return kept;
}

/**
 * Clock changes are at most a few hours: an instant further than this from the local midnight that
 * starts a week is in the week whose day boundaries it lies between. Nearer (where a clock change
 * at midnight could put it on the other side), its week is asked of Luxon, as it always was.
 */
const CLOCK_CHANGE_MARGIN = 3 * 3_600_000;

/** Free slot starts per resource: resource r's are starts[runStart[r]] to [runEnd[r]], with the units each has left. */
interface Runs {
  starts: Float64Array;
  units: Float64Array;
  runStart: Int32Array;
  runEnd: Int32Array;
}

/**
 * The slots of a search, in time order, from the runs of free starts of its resources (sorted by
 * id): the daily limits and the round robin applied. Also which report days have a slot, and the
 * reason a daily limit gave for hiding a day's slots.
 */
function emitSlots(
  input: AvailabilityInput,
  resources: EngineResource[],
  runs: Runs,
  reportDays: ZoneDays,
  locationDays: ZoneDays,
  firstIndex: number,
  endIndex: number,
  random: () => number,
): { slots: Slot[]; slotDays: Uint8Array; dailyReason: Map<string, string> } {
  const slots: Slot[] = [];
  const iso = isoFormatter();
  const durationMs = input.duration * MINUTE;
  // Local days of slots, found by a cursor over the day boundaries (slots come in time order): in
  // the report zone for availableDays, in the location's zone for the daily limits and weeks.
  // Both answer what localDayFinder over those days answers.
  let reportIndex = firstIndex - 1;
  const reportLast = endIndex;
  let locationIndex = 0;
  const locationLast = locationDays.starts.length - 2;
  const slotDays = new Uint8Array(reportDays.dates.length);
  const dailyReason = new Map<string, string>();
  const { service, timezoneName: zone } = input;
  const { runStart, runEnd } = runs;
  const limitCount = service.dailyBookingLimitCount;
  const limitMinutes = service.dailyBookingLimitMinutes;
  // BALANCED: each location day's ISO week, by integer arithmetic; near the midnight that starts a
  // week (where a clock change might move the local date across it) Luxon decides, as before.
  const balanced = input.roundRobin === 'BALANCED';
  const weekOfDay = balanced ? locationDays.dates.map((_, i) => isoWeekOfDay(locationDays.first + i)) : [];

  // Merge the runs by start: each step takes the smallest head and every run that starts there, in
  // resource (id) order. The resources of a search share most slot starts, so a scan of the heads
  // per distinct start is cheaper than a heap.
  const position = Int32Array.from(runStart);
  let live = Array.from(resources.keys()).filter((r) => runStart[r]! < runEnd[r]!);
  const picked = new Int32Array(resources.length);
  // The free resources at the current start, in id order: their ids and units left.
  const ids = resources.map((r) => r.id);
  const freeIds = ids.slice();
  const freeUnits = new Float64Array(resources.length);
  const { starts: runStarts, units: runUnits } = runs;
  // RANDOM and BALANCED offer one resource per slot: one list per resource, shared by its slots
  // (Slot.resourceIds is read only). A list of several (NONE, COMBINED) is made per slot: looking
  // up an equal one made earlier (a 31-day search of 50 resources has about 1,200 slots and 120
  // distinct sets) cost more than the copy it saved.
  const singleLists: Array<readonly string[] | undefined> = new Array(resources.length);
  const singleList = (k: number): readonly string[] => (singleLists[picked[k]!] ??= [freeIds[k]!]);
  while (live.length > 0) {
    let start = Infinity;
    let count = 0;
    // Indexed loops rather than for-of here and in the other hot loops: a process's first search
    // runs them before they are optimised, where iterators cost far more.
    for (let l = 0; l < live.length; l++) {
      const r = live[l]!;
      const head = runStarts[position[r]!]!;
      if (head < start) {
        start = head;
        count = 0;
        picked[count++] = r;
      } else if (head === start) picked[count++] = r;
    }
    let exhausted = false;
    for (let k = 0; k < count; k++) {
      const r = picked[k]!;
      const at = position[r]!;
      freeIds[k] = ids[r]!;
      freeUnits[k] = runUnits[at]!;
      position[r] = at + 1;
      if (at + 1 === runEnd[r]) exhausted = true;
    }
    if (exhausted) live = live.filter((r) => position[r]! < runEnd[r]!);

    while (reportIndex < reportLast && reportDays.starts[reportIndex + 1]! <= start) reportIndex++;
    while (locationIndex < locationLast && locationDays.starts[locationIndex + 1]! <= start) locationIndex++;
    const date = reportDays.dates[reportIndex]!;
    if (limitCount > 0 || limitMinutes > 0) {
      const usage = input.dailyUsage[locationDays.dates[locationIndex]!] ?? { count: 0, minutes: 0 };
      if (limitCount > 0 && usage.count >= limitCount) {
        dailyReason.set(date, 'daily booking limit reached');
        continue;
      }
      if (limitMinutes > 0 && limitMinutes - usage.minutes < input.duration) {
        dailyReason.set(date, 'daily booked minutes limit reached');
        continue;
      }
    }
    let chosen: readonly string[];
    let remaining: number;
    switch (input.roundRobin) {
      case 'COMBINED': {
        // Every resource free at once: the lists are both in id order, so equal length suffices.
        if (resources.length === 0 || count !== resources.length) continue;
        chosen = freeIds.slice(0, count);
        remaining = Infinity;
        for (let k = 0; k < count; k++) remaining = Math.min(remaining, freeUnits[k]!);
        break;
      }
      case 'RANDOM': {
        const index = Math.min(count - 1, Math.floor(random() * count));
        chosen = singleList(index);
        remaining = freeUnits[index]!;
        break;
      }
      case 'BALANCED': {
        const day = locationDays.first + locationIndex;
        const nearWeekStart =
          (weekdayOfDay(day) === 0 && start - locationDays.starts[locationIndex]! < CLOCK_CHANGE_MARGIN) ||
          (weekdayOfDay(day + 1) === 0 && locationDays.starts[locationIndex + 1]! - start < CLOCK_CHANGE_MARGIN);
        const week = nearWeekStart ? isoWeek(start, zone) : weekOfDay[locationIndex]!;
        const minutesOfWeek = input.weeklyMinutes?.[week];
        let best = 0;
        let fewest = minutesOfWeek?.[freeIds[0]!] ?? 0;
        // freeIds are in id order, so the first with the fewest minutes wins ties by id
        for (let k = 1; k < count; k++) {
          const minutes = minutesOfWeek?.[freeIds[k]!] ?? 0;
          if (minutes < fewest) {
            best = k;
            fewest = minutes;
          }
        }
        chosen = singleList(best);
        remaining = freeUnits[best]!;
        break;
      }
      default: {
        chosen = freeIds.slice(0, count);
        remaining = 0;
        for (let k = 0; k < count; k++) remaining += freeUnits[k]!;
      }
    }
    slotDays[reportIndex] = 1;
    slots.push({ startTime: iso(start), endTime: iso(start + durationMs), resourceIds: chosen, remaining });
  }
  return { slots, slotDays, dailyReason };
}

export function computeAvailability(input: AvailabilityInput): AvailabilityResult {
  // A search inside another (through `random`) finds the kept arrays lent, and uses its own.
  if (keptArraysLent) return searchWith(input, freshSearchArrays);
  keptArraysLent = true;
  try {
    return searchWith(input, keptArrays);
  } finally {
    keptArraysLent = false;
  }
}

function searchWith(input: AvailabilityInput, arrays: SearchArrays): AvailabilityResult {
  const { service, timezoneName: zone } = input;
  const reportZone = input.reportZone ?? zone;
  const firstDay = dayNumber(input.startDate);
  const lastDay = dayNumber(input.endDate);
  // An invalid date throws, as it did when dates were stepped with addDays.
  if (Number.isNaN(firstDay) || Number.isNaN(lastDay)) throw new RangeError('Invalid time value');
  // Local days, once per zone of the search: from two days before the first date to two after the
  // last (schedules are read that much wider; see SCHEDULE_MARGIN_DAYS), plus the end of the last.
  const zoneDaysCache = new Map<string, ZoneDays>();
  const daysOf = (z: string) => {
    let days = zoneDaysCache.get(z);
    if (!days) {
      days = zoneDays(z, firstDay - SCHEDULE_MARGIN_DAYS, lastDay + SCHEDULE_MARGIN_DAYS);
      zoneDaysCache.set(z, days);
    }
    return days;
  };
  const locationDays = daysOf(zone);
  const reportDays = daysOf(reportZone);
  // Index in reportDays of the first requested date, and of the day after the last.
  const firstIndex = SCHEDULE_MARGIN_DAYS;
  const endIndex = firstIndex + (lastDay - firstDay) + 1;
  if (!(endIndex > firstIndex)) return { timezoneName: zone, availableTimes: [], availableDays: [] };
  const rangeStart = reportDays.starts[firstIndex]!;
  const rangeEnd = reportDays.starts[endIndex]!;
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

  // Free slot starts per resource (none at all when the customer may book nothing).
  // Free slot starts per resource (see Runs).
  let runs: Pick<Runs, 'starts' | 'units'> = { starts: new Float64Array(0), units: new Float64Array(0) };
  const runStart = new Int32Array(resources.length);
  const runEnd = new Int32Array(resources.length);
  if (!customerReason) {
    const allocation = service.availabilityType === 'allocation';
    const search: Search = {
      serviceId: service.id,
      durationMs: input.duration * MINUTE,
      stepMs: (service.bookingInterval ?? input.duration) * MINUTE,
      paddingMs: service.padding * MINUTE,
      paddingMayOverflow: input.allowPaddingOverflow ?? service.allowPaddingOverflow,
      bookingsPerSlot: service.bookingsPerSlot,
      allocation,
      lowest: Math.max(rangeStart, earliest),
      rangeEnd,
      latest,
    };
    const grid = [{ start: gridStart, end: gridEnd }];
    // The location and service layers, shared by every resource: null when neither constrains.
    // Schedules are read wider than the range, because a resource in another zone may open on a
    // different local date; windows are clipped to the grid.
    let shared: Interval[] | null = null;
    if (!allocation) {
      const from = firstDay - SCHEDULE_MARGIN_DAYS;
      const to = lastDay + SCHEDULE_MARGIN_DAYS;
      if (input.locationWeekly) shared = scheduleWindows(input.locationWeekly, locationDays, from, to);
      if (service.weeklyAvailability) {
        const layer = scheduleWindows(service.weeklyAvailability, locationDays, from, to);
        shared = shared ? intersect(shared, layer) : layer;
      }
    }
    // Resources without a schedule of their own all open in the shared windows: one list for them all.
    let sharedOpen: Interval[] | undefined;
    const windowsOf = resources.map((resource) => {
      if (allocation) {
        // Allocations are loaded with a day's margin each side (zones): clip them to the search like schedules.
        return intersect(normalise((resource.allocations ?? []).map(({ start, end }) => ({ start, end }))), grid);
      }
      if (!resource.weeklyAvailability) return (sharedOpen ??= shared ? intersect(shared, grid) : []);
      const own = scheduleWindows(resource.weeklyAvailability, daysOf(resource.timezoneName ?? zone), firstDay - SCHEDULE_MARGIN_DAYS, lastDay + SCHEDULE_MARGIN_DAYS);
      return intersect(shared ? intersect(shared, own) : own, grid);
    });
    const candidates = candidateStarts(search, windowsOf, arrays);
    // Resources by id (resources with the same id share appointments and busy time), and the
    // groups of distinct ids that busy time is sorted into. A plain object is the faster lookup.
    const resourcesOf = Object.create(null) as Record<string, number[]>;
    const groupOf = new Map<string, number>();
    for (const [r, resource] of resources.entries()) {
      (resourcesOf[resource.id] ??= []).push(r);
      if (!groupOf.has(resource.id)) groupOf.set(resource.id, groupOf.size);
    }
    const marks = occupancy(search, input.appointments, resourcesOf, candidates.starts, candidates.from, arrays);
    const busy = busyColumns(input.busy, groupOf, input.ignoreExternalEvents ?? service.ignoreExternalEvents ?? false);
    runs = { starts: candidates.starts, units: arrays.units(candidates.from[resources.length]!) };
    for (const [r, resource] of resources.entries()) {
      runStart[r] = candidates.from[r]!;
      runEnd[r] = freeSlots(search, r, resource, candidates.starts, candidates.from, marks, busy, groupOf.get(resource.id)!, runs.units);
    }
  }

  const { slots, slotDays, dailyReason } = emitSlots(input, resources, { ...runs, runStart, runEnd }, reportDays, locationDays, firstIndex, endIndex, random);

  const days: DayAvailability[] = [];
  const holidayNames = new Map((input.holidays ?? []).map((h) => [h.date, h.name]));
  for (let index = firstIndex; index < endIndex; index++) {
    const date = reportDays.dates[index]!;
    const dayStart = reportDays.starts[index]!;
    const dayEnd = reportDays.starts[index + 1]!;
    let reason: string | null = null;
    if (!slotDays[index]) {
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
