import { DateTime } from 'luxon';
import { localToInstant } from './local-time.js';

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

/** Local dates on which the rule occurs, from `from` to `to` inclusive (both YYYY-MM-DD). */
export function occurrenceDates(rule: RecurrenceRule, from: string, to: string): string[] {
  const first = DateTime.fromISO(rule.startDate, { zone: 'UTC' });
  const lastAllowed = rule.endDate ? DateTime.fromISO(rule.endDate, { zone: 'UTC' }) : null;
  let cursor = DateTime.fromISO(from, { zone: 'UTC' });
  if (cursor < first) cursor = first;
  let last = DateTime.fromISO(to, { zone: 'UTC' });
  if (lastAllowed && lastAllowed < last) last = lastAllowed;
  const dates: string[] = [];
  const interval = Math.max(1, rule.interval);

  for (; cursor <= last; cursor = cursor.plus({ days: 1 })) {
    if (occursOn(rule, first, cursor, interval)) dates.push(cursor.toISODate()!);
  }
  return dates;
}

function occursOn(rule: RecurrenceRule, first: DateTime, day: DateTime, interval: number): boolean {
  switch (rule.frequency) {
    case 'DAILY':
      return Math.round(day.diff(first, 'days').days) % interval === 0;
    case 'WEEKLY':
    case 'BIWEEKLY': {
      const every = rule.frequency === 'BIWEEKLY' ? interval * 2 : interval;
      // Weeks are counted from the Monday of the start date's week.
      const weekIndex = Math.floor(day.startOf('week').diff(first.startOf('week'), 'days').days / 7 + 0.5);
      const weekdays = rule.weekdays?.length ? rule.weekdays : [first.weekday % 7];
      return weekIndex % every === 0 && weekdays.includes(day.weekday % 7);
    }
    case 'MONTHLY': {
      const monthIndex = (day.year - first.year) * 12 + (day.month - first.month);
      return monthIndex % interval === 0 && day.day === (rule.dayOfMonth ?? first.day);
    }
    case 'YEARLY':
      return (day.year - first.year) % interval === 0 && day.month === first.month && day.day === first.day;
  }
}

/** Concrete intervals of the rule that overlap [windowStart, windowEnd). */
export function expandRecurrence(rule: RecurrenceRule, windowStart: DateTime, windowEnd: DateTime): Occurrence[] {
  // Occurrences may start the day before the window (and cross midnight into it), so widen by a day.
  const from = windowStart.setZone(rule.iana).minus({ days: 1 }).toISODate()!;
  const to = windowEnd.setZone(rule.iana).toISODate()!;
  const crossesMidnight = minutes(rule.endTime) <= minutes(rule.startTime) && rule.endTime !== '24:00';
  const occurrences: Occurrence[] = [];
  for (const date of occurrenceDates(rule, from, to)) {
    const start = localToInstant(date, rule.startTime, rule.iana);
    const endDate = crossesMidnight ? DateTime.fromISO(date, { zone: 'UTC' }).plus({ days: 1 }).toISODate()! : date;
    const end = localToInstant(endDate, rule.endTime, rule.iana);
    if (end <= start) continue;
    if (start < windowEnd && end > windowStart) occurrences.push({ date, start, end });
  }
  return occurrences;
}
