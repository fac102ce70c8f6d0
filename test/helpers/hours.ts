// The opening hours tests share, defined once. Plain data over the domain's WeeklySchedule, so the
// domain unit tests (test/domain) use them without the HTTP fixtures of world.ts.
import type { WeeklySchedule } from '../../src/domain/weekly-availability.js';

export const LONDON = 'Europe/London';
export const NINE_TO_FIVE = [{ start: '09:00', end: '17:00' }];
export const ALL_DAY = [{ start: '00:00', end: '24:00' }];

type Day = keyof WeeklySchedule;
const EVERY: Day[] = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'];

/** The same `hours` on each of `days` (every day of the week unless given). */
export function weekly(hours: Array<{ start: string; end: string }>, days: Day[] = EVERY): WeeklySchedule {
  return Object.fromEntries(days.map((day) => [day, hours]));
}

/** 09:00-17:00 every day: the hours of `.bookable()`'s location unless a test says otherwise. */
export const EVERY_DAY = weekly(NINE_TO_FIVE);
/** 09:00-17:00 Monday to Friday. */
export const WEEKDAYS_9_TO_17 = weekly(NINE_TO_FIVE, ['mon', 'tue', 'wed', 'thu', 'fri']);
/** Open around the clock every day. */
export const ALWAYS_OPEN = weekly(ALL_DAY);
