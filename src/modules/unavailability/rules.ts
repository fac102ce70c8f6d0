// The checks a block, a recurring block or an allocation set must pass beyond its schema. Pure: each
// returns the problems it finds, every one naming its field and, where v1 had one, its legacy code.
import { DateTime } from 'luxon';
import { fieldError, validationErrors } from '../../platform/errors.js';
import type { FieldError } from '../../platform/errors.js';
import type { Frequency, RecurrenceRule } from '../../domain/recurrence.js';
import { minutesOfDay } from '../../domain/weekly-availability.js';
import { BLOCK_CODES } from './families.js';
import type { AllocationFamily, BlockFamily } from './families.js';
import type { AllocationItem } from './schemas.js';

export const FREQUENCIES = ['DAILY', 'WEEKLY', 'BIWEEKLY', 'MONTHLY', 'YEARLY'] as const satisfies readonly Frequency[];

/** Largest interval per frequency and its code (REPEAT-102 .. REPEAT-105). */
export const INTERVAL_LIMITS: Record<Frequency, { max: number; code: string }> = {
  DAILY: { max: 365, code: 'REPEAT-102' },
  WEEKLY: { max: 52, code: 'REPEAT-103' },
  BIWEEKLY: { max: 52, code: 'REPEAT-103' },
  MONTHLY: { max: 12, code: 'REPEAT-104' },
  YEARLY: { max: 5, code: 'REPEAT-105' },
};

export const WEEKLY_FREQUENCIES: Frequency[] = ['WEEKLY', 'BIWEEKLY'];

/** Throws the 400 of every problem, when there is one. */
export function fail(problems: FieldError[]): void {
  if (problems.length) throw validationErrors(problems);
}

/** An ISO 8601 instant with an offset (Ajv's date-time), keeping the offset the caller wrote. */
export function parseInstant(value: string): DateTime {
  const normalised = value.replace(/^(\d{4}-\d{2}-\d{2})[ t]/, '$1T').replace(/z$/, 'Z');
  return DateTime.fromISO(normalised, { setZone: true });
}

/** A list's date range: the end on or after the start. */
export function dateRangeProblems(startDate: string | undefined, endDate: string | undefined): FieldError[] {
  if (startDate && endDate && endDate < startDate) return [fieldError('query', 'endDate', 'endDate must be on or after startDate')];
  return [];
}

/** A block's reason, trimmed: 2 to 50 characters. */
export function reasonProblems(reason: string, family: BlockFamily): FieldError[] {
  if (reason.length >= 2 && reason.length <= 50) return [];
  return [fieldError('body', 'reason', 'reason must be 2 to 50 characters', BLOCK_CODES.reasonLength[family])];
}

/**
 * End after start. Equal instants: TIME-101. End before start on the same date (in the start's
 * offset, as the caller wrote it): TIME-100. On an earlier date: the family's date-order code.
 */
export function blockProblems(input: { startTime: string; endTime: string }, family: BlockFamily): FieldError[] {
  const start = parseInstant(input.startTime);
  const end = parseInstant(input.endTime);
  const problems: FieldError[] = [];
  if (!start.isValid) problems.push(fieldError('body', 'startTime', 'startTime must be a valid date-time'));
  if (!end.isValid) problems.push(fieldError('body', 'endTime', 'endTime must be a valid date-time'));
  if (problems.length) return problems;
  if (+end === +start) return [fieldError('body', 'endTime', 'endTime must be after startTime, not equal to it', `${family}-TIME-101`)];
  if (end < start) {
    if (end.setZone(start.zone).toISODate() === start.toISODate()) {
      return [fieldError('body', 'endTime', 'startTime is after endTime on the same date', `${family}-TIME-100`)];
    }
    return [fieldError('body', 'endTime', 'startTime is on a later date than endTime', BLOCK_CODES.startDateAfterEndDate[family])];
  }
  return [];
}

export const sortedWeekdays = (weekdays: number[] | null | undefined) => [...(weekdays ?? [])].sort((a, b) => a - b);

/** The rules of a whole recurring block (on create, and on change after merging). */
export function recurrenceProblems(rule: RecurrenceRule, family: BlockFamily): FieldError[] {
  const problems: FieldError[] = [];
  const limit = INTERVAL_LIMITS[rule.frequency];
  if (!Number.isInteger(rule.interval) || rule.interval < 1 || rule.interval > limit.max) {
    problems.push(fieldError('body', 'interval', `interval must be 1 to ${limit.max} for ${rule.frequency}`, limit.code));
  }
  if (WEEKLY_FREQUENCIES.includes(rule.frequency)) {
    if (!rule.weekdays?.length) problems.push(fieldError('body', 'weekdays', `weekdays are required for ${rule.frequency}`, 'REPEAT-106'));
  } else if (rule.weekdays?.length) {
    problems.push(fieldError('body', 'weekdays', 'weekdays apply only to WEEKLY and BIWEEKLY rules'));
  }
  if (rule.dayOfMonth !== null && rule.dayOfMonth !== undefined && rule.frequency !== 'MONTHLY') {
    problems.push(fieldError('body', 'dayOfMonth', 'dayOfMonth applies only to MONTHLY rules'));
  }
  if (rule.endDate && rule.endDate < rule.startDate) {
    problems.push(fieldError('body', 'endDate', 'endDate must be on or after startDate', BLOCK_CODES.endDateBeforeStartDate[family]));
  }
  if (rule.startTime === rule.endTime) {
    problems.push(fieldError('body', 'endTime', 'endTime must differ from startTime (an earlier endTime ends on the next day)', `${family}-TIME-101`));
  }
  return problems;
}

/**
 * Each window ends after it starts on its own day, bookingsPerSlot only for a service and resource
 * pair, and windows of one day do not overlap.
 */
export function allocationProblems<T extends AllocationItem>(
  items: T[],
  { dayOf, family, pair }: { dayOf: (item: T) => string; family: AllocationFamily; /** Both a service and a resource scope the set. */ pair: boolean },
): FieldError[] {
  const problems: FieldError[] = [];
  items.forEach((item, index) => {
    const start = minutesOfDay(item.start);
    const end = minutesOfDay(item.end);
    if (end === start) {
      problems.push(fieldError('body', `allocations.${index}.end`, 'end must be after start, not equal to it', `${family}-TIME-101`));
    } else if (end < start) {
      problems.push(fieldError('body', `allocations.${index}.end`, 'start is after end (use "24:00" for midnight)', `${family}-TIME-100`));
    }
    if (item.bookingsPerSlot !== undefined && item.bookingsPerSlot !== null && !pair) {
      problems.push(
        fieldError('body', `allocations.${index}.bookingsPerSlot`, 'bookingsPerSlot applies only when both ServiceId and ResourceId scope the allocations'),
      );
    }
  });
  return [...problems, ...overlapProblems(items, dayOf)];
}

/** Windows of one day that overlap: each names the earlier window it overlaps. */
function overlapProblems<T extends AllocationItem>(items: T[], dayOf: (item: T) => string): FieldError[] {
  const problems: FieldError[] = [];
  const byDay = new Map<string, Array<{ index: number; start: number; end: number }>>();
  items.forEach((item, index) => {
    const list = byDay.get(dayOf(item)) ?? [];
    list.push({ index, start: minutesOfDay(item.start), end: minutesOfDay(item.end) });
    byDay.set(dayOf(item), list);
  });
  for (const [day, windows] of byDay) {
    const sorted = windows.filter((w) => w.end > w.start).sort((a, b) => a.start - b.start || a.index - b.index);
    for (let i = 1; i < sorted.length; i++) {
      if (sorted[i]!.start < sorted[i - 1]!.end) {
        problems.push(fieldError('body', `allocations.${sorted[i]!.index}.start`, `overlaps allocations.${sorted[i - 1]!.index} on ${day}`));
      }
    }
  }
  return problems;
}
