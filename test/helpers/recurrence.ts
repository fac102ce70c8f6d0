// Recurring-block occurrences as Luxon instants in UTC, for tests that state them as dates and
// wall-clock times. The application reads them as epoch milliseconds (recurrenceIntervals).
import { DateTime } from 'luxon';
import { recurrenceIntervals } from '../../src/domain/recurrence.js';
import type { RecurrenceRule } from '../../src/domain/recurrence.js';

export interface Occurrence {
  /** The local date the occurrence starts on. */
  date: string;
  start: DateTime;
  end: DateTime;
}

/** The occurrences of `rule` that overlap [windowStart, windowEnd). */
export function expandRecurrence(rule: RecurrenceRule, windowStart: DateTime, windowEnd: DateTime): Occurrence[] {
  return recurrenceIntervals(rule, windowStart.toMillis(), windowEnd.toMillis()).map(({ date, start, end }) => ({
    date,
    start: DateTime.fromMillis(start, { zone: 'utc' }),
    end: DateTime.fromMillis(end, { zone: 'utc' }),
  }));
}
