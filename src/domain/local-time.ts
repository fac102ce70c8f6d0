import { DateTime } from 'luxon';

/**
 * Wall-clock time in an IANA zone → instant, with one written rule for the two hard cases:
 *
 * - a wall-clock time that happens twice (the hour repeated when clocks go back) means its
 *   **first** occurrence, the earlier instant;
 * - a wall-clock time that does not exist (the hour skipped when clocks go forward) is moved
 *   **forward by the length of the gap**: 02:30 on the New York spring-forward day is 03:30 EDT.
 *
 * This is Temporal's `compatible` disambiguation. Luxon does the second by itself; for the first
 * it would pick the later instant, so the earlier one is chosen from its possible offsets.
 * `time` may be "24:00", which is midnight at the start of the next day.
 */
export function localToInstant(date: string, time: string, zone: string): DateTime {
  return DateTime.fromMillis(localToMillis(date, time, zone), { zone });
}

// Zone offset lookups are the slow part of Luxon (Intl formatting). The answer for a (date, time,
// zone) never changes, so it is remembered; the table is bounded and simply starts over when full.
// By zone, then time, then date: a key string built per call (zone|date|time) was most of what
// a search's expansion of its recurring blocks allocated, two per occurrence, each hashed anew.
const MEMO_LIMIT = 200_000;
const memo = new Map<string, Map<string, Map<string, number>>>();
let remembered = 0;

/** localToInstant as epoch milliseconds, remembered. */
export function localToMillis(date: string, time: string, zone: string): number {
  const known = memo.get(zone)?.get(time)?.get(date);
  if (known !== undefined) return known;
  const millis = resolve(date, time, zone).toMillis();
  if (remembered >= MEMO_LIMIT) {
    memo.clear();
    remembered = 0;
  }
  let byTime = memo.get(zone);
  if (byTime === undefined) memo.set(zone, (byTime = new Map()));
  let byDate = byTime.get(time);
  if (byDate === undefined) byTime.set(time, (byDate = new Map()));
  byDate.set(date, millis);
  remembered++;
  return millis;
}

function resolve(date: string, time: string, zone: string): DateTime {
  // "24:00" is the next date's 00:00 resolved on its own: adding a day to this date's midnight
  // would carry a skipped midnight's shift (Santiago's 00:00 -> 01:00) into the next day.
  if (time === '24:00') return resolve(addDays(date, 1), '00:00', zone);
  const [year, month, day] = date.split('-').map(Number) as [number, number, number];
  const [hour, minute] = time.split(':').map(Number) as [number, number];
  const local = DateTime.fromObject({ year, month, day, hour, minute }, { zone });
  const candidates = local.getPossibleOffsets();
  if (candidates.length > 1) return candidates.reduce((a, b) => (a.toMillis() <= b.toMillis() ? a : b));
  return local;
}

/**
 * The calendar date (YYYY-MM-DD) in `zone` of an instant given as epoch milliseconds, from the
 * remembered local midnights (localToMillis) instead of a zone lookup per instant: a booking asks
 * it for its slot, and Luxon's lookup is an Intl formatting each time (issue 18). A local date
 * differs from the instant's UTC date by at most one day (offsets lie within ±1 day), and local
 * date d normally runs from its first instant, localToMillis(d, '00:00'), to the next date's: so
 * the date is the latest of the three whose first instant is not after the instant.
 *
 * Not so when clocks go back across midnight: St. John's went from 00:01 back to 23:01 of the
 * day before until 2011, so after its first midnight the previous date came back for an hour. A
 * date whose midnight happens twice is answered by Luxon itself (a review found the gap; the
 * midnight's possible offsets are looked up once per zone and date, and remembered).
 */
export function localDateOfMillis(ms: number, zone: string): string {
  const utcDate = new Date(ms).toISOString().slice(0, 10);
  const next = addDays(utcDate, 1);
  const date = localToMillis(next, '00:00', zone) <= ms ? next : localToMillis(utcDate, '00:00', zone) <= ms ? utcDate : addDays(utcDate, -1);
  return midnightRepeats(date, zone) ? DateTime.fromMillis(ms, { zone }).toISODate()! : date;
}

const repeatedMidnights = new Map<string, boolean>();

/** Whether 00:00 of `date` happens twice in `zone` (clocks going back across or onto midnight), remembered. */
function midnightRepeats(date: string, zone: string): boolean {
  const key = `${zone}|${date}`;
  const known = repeatedMidnights.get(key);
  if (known !== undefined) return known;
  const [year, month, day] = date.split('-').map(Number) as [number, number, number];
  const repeats = DateTime.fromObject({ year, month, day, hour: 0, minute: 0 }, { zone }).getPossibleOffsets().length > 1;
  if (repeatedMidnights.size >= MEMO_LIMIT) repeatedMidnights.clear();
  repeatedMidnights.set(key, repeats);
  return repeats;
}

/** The calendar date (YYYY-MM-DD) of an instant in a zone. */
export function localDate(instant: DateTime | Date, zone: string): string {
  const dt = instant instanceof Date ? DateTime.fromJSDate(instant) : instant;
  return dt.setZone(zone).toISODate()!;
}

const DAY_MS = 86_400_000;

/** 'YYYY-MM-DD' plus whole days. Calendar dates have no zone, so plain UTC arithmetic is exact. */
export function addDays(date: string, days: number): string {
  const [year, month, day] = date.split('-').map(Number) as [number, number, number];
  return new Date(Date.UTC(year, month - 1, day) + days * DAY_MS).toISOString().slice(0, 10);
}

/** Weekday of a calendar date: 0 = Monday … 6 = Sunday (the order of WEEKDAYS). */
export function weekdayIndex(date: string): number {
  const [year, month, day] = date.split('-').map(Number) as [number, number, number];
  return (new Date(Date.UTC(year, month - 1, day)).getUTCDay() + 6) % 7;
}

/**
 * The local date of instants between two dates (inclusive, in `zone`), without a zone lookup per
 * instant: the day boundaries are computed once and each instant is placed by binary search.
 * Instants outside the range answer the nearest day of it.
 */
export function localDayFinder(fromDate: string, toDate: string, zone: string): (ms: number) => string {
  const days: Array<{ date: string; start: number }> = [];
  for (let date = fromDate; date <= toDate; date = addDays(date, 1)) days.push({ date, start: localToMillis(date, '00:00', zone) });
  return (ms) => {
    let low = 0;
    let high = days.length - 1;
    while (low < high) {
      const mid = (low + high + 1) >> 1;
      if (days[mid]!.start <= ms) low = mid;
      else high = mid - 1;
    }
    return days[low]!.date;
  };
}
