import { localToMillis } from './local-time.js';
import { minutesOfDay } from './weekly-availability.js';

/**
 * Recurring blocks: a structured rule (not an RFC 5545 string) of wall-clock times in an IANA
 * zone. Expansion interprets each occurrence's date and times in `iana`, so a 09:00-10:00 block
 * stays 09:00-10:00 local across daylight-saving changes and fractional offsets.
 *
 * Days that do not exist: a MONTHLY rule on day 29, 30 or 31 has no occurrence in a month without
 * that day (it is not moved to the month's last day); a YEARLY rule starting on 29 February occurs
 * only in leap years. Times that do not exist or repeat follow `localToInstant`.
 */
export type Frequency = 'DAILY' | 'WEEKLY' | 'BIWEEKLY' | 'MONTHLY' | 'YEARLY';

export interface RecurrenceRule {
  frequency: Frequency;
  /** Every `interval` days, weeks, months or years (BIWEEKLY: every 2 × interval weeks). */
  interval: number;
  startDate: string;
  endDate?: string | null;
  startTime: string;
  /** "24:00" ends at midnight; an end at or before the start ends on the next day. */
  endTime: string;
  iana: string;
  /** WEEKLY and BIWEEKLY: 0 = Sunday … 6 = Saturday. Default: the start date's weekday. */
  weekdays?: number[] | null;
  /** MONTHLY: 1-31. Default: the start date's day. */
  dayOfMonth?: number | null;
}

const DAY_MS = 86_400_000;

/** Days since 1970-01-01 of a calendar date. Calendar dates carry no zone: UTC arithmetic is exact. */
function dayNumber(date: string): number {
  let dayNo = dayNumbers.get(date);
  if (dayNo === undefined) {
    const [year, month, day] = date.split('-').map(Number) as [number, number, number];
    dayNo = Date.UTC(year, month - 1, day) / DAY_MS;
    if (dayNumbers.size >= DATE_LIMIT) dayNumbers.clear();
    dayNumbers.set(date, dayNo);
  }
  return dayNo;
}

// Every search expands every recurring block of its resources over its days, so a day number's
// calendar date and back are remembered (a few thousand days in use at most; start over when full).
const DATE_LIMIT = 20_000;
const dates = new Map<number, string>();
const dayNumbers = new Map<string, number>();
function dateOf(dayNo: number): string {
  let date = dates.get(dayNo);
  if (date === undefined) {
    date = new Date(dayNo * DAY_MS).toISOString().slice(0, 10);
    if (dates.size >= DATE_LIMIT) dates.clear();
    dates.set(dayNo, date);
  }
  return date;
}

/** 0 = Sunday … 6 = Saturday of a day number (1970-01-01 was a Thursday). */
function sundayBased(dayNo: number): number {
  return (((dayNo + 4) % 7) + 7) % 7;
}

/** The day number of the Monday of a day's week: weeks are counted from Mondays. */
function mondayOf(dayNo: number): number {
  return dayNo - ((sundayBased(dayNo) + 6) % 7);
}

/** Day numbers on which the rule occurs, from `fromDay` to `toDay` inclusive. */
function occurrenceDays(rule: RecurrenceRule, fromDay: number, toDay: number): number[] {
  const first = dayNumber(rule.startDate);
  let cursor = Math.max(fromDay, first);
  let last = toDay;
  if (rule.endDate) last = Math.min(last, dayNumber(rule.endDate));
  const days: number[] = [];
  if (cursor > last) return days;
  const interval = Math.max(1, rule.interval);
  switch (rule.frequency) {
    case 'DAILY':
      for (; cursor <= last; cursor++) if ((cursor - first) % interval === 0) days.push(cursor);
      return days;
    case 'WEEKLY':
    case 'BIWEEKLY': {
      const every = rule.frequency === 'BIWEEKLY' ? interval * 2 : interval;
      const weekdays = rule.weekdays?.length ? rule.weekdays : [sundayBased(first)];
      const firstMonday = mondayOf(first);
      for (; cursor <= last; cursor++) {
        if (((mondayOf(cursor) - firstMonday) / 7) % every === 0 && weekdays.includes(sundayBased(cursor))) days.push(cursor);
      }
      return days;
    }
    case 'MONTHLY':
    case 'YEARLY': {
      const [firstYear, firstMonth, firstDay] = rule.startDate.split('-').map(Number) as [number, number, number];
      const dayOfMonth = rule.dayOfMonth ?? firstDay;
      for (; cursor <= last; cursor++) {
        const date = new Date(cursor * DAY_MS);
        const year = date.getUTCFullYear();
        const month = date.getUTCMonth() + 1;
        const day = date.getUTCDate();
        const occurs =
          rule.frequency === 'MONTHLY'
            ? ((year - firstYear) * 12 + (month - firstMonth)) % interval === 0 && day === dayOfMonth
            : (year - firstYear) % interval === 0 && month === firstMonth && day === firstDay;
        if (occurs) days.push(cursor);
      }
      return days;
    }
    default: {
      // The schema's CHECK allows only the frequencies above; a new one must be handled here.
      const unknown: never = rule.frequency;
      throw new Error(`Unknown recurrence frequency ${String(unknown)}`);
    }
  }
}

/** Local dates on which the rule occurs, from `from` to `to` inclusive (both YYYY-MM-DD). */
export function occurrenceDates(rule: RecurrenceRule, from: string, to: string): string[] {
  return occurrenceDays(rule, dayNumber(from), dayNumber(to)).map(dateOf);
}

/** An occurrence as epoch milliseconds: what the availability engine and the calendar read. */
export interface OccurrenceMillis {
  /** The local date the occurrence starts on. */
  date: string;
  start: number;
  end: number;
}

/**
 * Concrete intervals of the rule that overlap [startMs, endMs), in epoch milliseconds. The hot
 * form: every availability search and booking check expands every recurring block of its
 * resources, and Luxon objects per occurrence cost more than the expansion itself (issue 18).
 */
export function recurrenceIntervals(rule: RecurrenceRule, startMs: number, endMs: number): OccurrenceMillis[] {
  // Local dates in any zone lie within a day of the UTC date, and an occurrence may start the day
  // before and cross midnight into the window: two days either side cover every case.
  // An invalid instant (NaN) would otherwise expand to nothing, silently.
  if (!Number.isFinite(startMs) || !Number.isFinite(endMs)) throw new RangeError('Invalid time value');
  const occurrences: OccurrenceMillis[] = [];
  const days = occurrenceDays(rule, Math.floor(startMs / DAY_MS) - 2, Math.floor(endMs / DAY_MS) + 1);
  if (days.length === 0) return occurrences;
  const crossesMidnight = minutesOfDay(rule.endTime) <= minutesOfDay(rule.startTime) && rule.endTime !== '24:00';
  for (const day of days) {
    const date = dateOf(day);
    const start = localToMillis(date, rule.startTime, rule.iana);
    const end = localToMillis(crossesMidnight ? dateOf(day + 1) : date, rule.endTime, rule.iana);
    if (end <= start) continue;
    if (start < endMs && end > startMs) occurrences.push({ date, start, end });
  }
  return occurrences;
}
