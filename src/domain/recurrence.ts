import { DateTime } from 'luxon';
import { localToMillis } from './local-time.js';

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

export interface Occurrence {
  /** The local date the occurrence starts on. */
  date: string;
  start: DateTime;
  end: DateTime;
}

function minutes(time: string): number {
  const [h, m] = time.split(':').map(Number) as [number, number];
  return h * 60 + m;
}

const DAY_MS = 86_400_000;

/** Days since 1970-01-01 of a calendar date. Calendar dates carry no zone: UTC arithmetic is exact. */
function dayNumber(date: string): number {
  const [year, month, day] = date.split('-').map(Number) as [number, number, number];
  return Date.UTC(year, month - 1, day) / DAY_MS;
}

function dateOf(dayNo: number): string {
  return new Date(dayNo * DAY_MS).toISOString().slice(0, 10);
}

/** Local dates on which the rule occurs, from `from` to `to` inclusive (both YYYY-MM-DD). */
export function occurrenceDates(rule: RecurrenceRule, from: string, to: string): string[] {
  const first = dayNumber(rule.startDate);
  let cursor = Math.max(dayNumber(from), first);
  let last = dayNumber(to);
  if (rule.endDate) last = Math.min(last, dayNumber(rule.endDate));
  const interval = Math.max(1, rule.interval);
  const [firstYear, firstMonth, firstDay] = rule.startDate.split('-').map(Number) as [number, number, number];
  // 1970-01-01 was a Thursday: (dayNo + 4) % 7 gives 0 = Sunday … 6 = Saturday.
  const sundayBased = (dayNo: number) => (((dayNo + 4) % 7) + 7) % 7;
  // Weeks are counted from the Monday of the start date's week.
  const mondayOf = (dayNo: number) => dayNo - ((sundayBased(dayNo) + 6) % 7);
  const firstMonday = mondayOf(first);
  const weekdays = rule.weekdays?.length ? rule.weekdays : [sundayBased(first)];
  const dayOfMonth = rule.dayOfMonth ?? firstDay;

  const dates: string[] = [];
  for (; cursor <= last; cursor++) {
    let occurs: boolean;
    switch (rule.frequency) {
      case 'DAILY':
        occurs = (cursor - first) % interval === 0;
        break;
      case 'WEEKLY':
      case 'BIWEEKLY': {
        const every = rule.frequency === 'BIWEEKLY' ? interval * 2 : interval;
        occurs = ((mondayOf(cursor) - firstMonday) / 7) % every === 0 && weekdays.includes(sundayBased(cursor));
        break;
      }
      case 'MONTHLY':
      case 'YEARLY': {
        const date = new Date(cursor * DAY_MS);
        const year = date.getUTCFullYear();
        const month = date.getUTCMonth() + 1;
        const day = date.getUTCDate();
        occurs =
          rule.frequency === 'MONTHLY'
            ? ((year - firstYear) * 12 + (month - firstMonth)) % interval === 0 && day === dayOfMonth
            : (year - firstYear) % interval === 0 && month === firstMonth && day === firstDay;
        break;
      }
    }
    if (occurs) dates.push(dateOf(cursor));
  }
  return dates;
}

/** Concrete intervals of the rule that overlap [windowStart, windowEnd). */
export function expandRecurrence(rule: RecurrenceRule, windowStart: DateTime, windowEnd: DateTime): Occurrence[] {
  // Local dates in any zone lie within a day of the UTC date, and an occurrence may start the day
  // before and cross midnight into the window: two days either side cover every case.
  const startMs = windowStart.toMillis();
  const endMs = windowEnd.toMillis();
  const from = dateOf(Math.floor(startMs / DAY_MS) - 2);
  const to = dateOf(Math.floor(endMs / DAY_MS) + 1);
  const crossesMidnight = minutes(rule.endTime) <= minutes(rule.startTime) && rule.endTime !== '24:00';
  const occurrences: Occurrence[] = [];
  for (const date of occurrenceDates(rule, from, to)) {
    const start = localToMillis(date, rule.startTime, rule.iana);
    const end = localToMillis(crossesMidnight ? dateOf(dayNumber(date) + 1) : date, rule.endTime, rule.iana);
    if (end <= start) continue;
    if (start < endMs && end > startMs) {
      occurrences.push({ date, start: DateTime.fromMillis(start, { zone: 'utc' }), end: DateTime.fromMillis(end, { zone: 'utc' }) });
    }
  }
  return occurrences;
}
