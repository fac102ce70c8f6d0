import type { Problem } from './weekly-availability.js';

/** The settings of a service that depend on each other, after an update is applied. */
export type BookAheadUnit = 'none' | 'days' | 'weeks' | 'months';

export interface ServiceSettings {
  duration: number;
  durationSelect: boolean;
  durationMin: number | null;
  durationMax: number | null;
  durationInterval: number | null;
  bookAheadUnit: BookAheadUnit;
  bookAheadValue: number | null;
}

const BOOK_AHEAD_MAX = { days: 365, weeks: 52, months: 1440 } as const;

/**
 * Cross-field rules of the legacy catalog: duration select (SERVICE-112 to 116, 125) and book
 * ahead (SETTINGS-105, 106). Single-field ranges are in the route schemas.
 */
export function serviceSettingProblems(s: ServiceSettings): Problem[] {
  const problems: Problem[] = [];
  if (s.durationSelect) {
    const interval = s.durationInterval ?? 0;
    const min = s.durationMin ?? 0;
    const max = s.durationMax ?? 0;
    if (interval <= 0) problems.push({ path: 'durationInterval', msg: 'durationInterval must be above zero when durationSelect is true', code: 'SERVICE-112' });
    if (min <= 0) problems.push({ path: 'durationMin', msg: 'durationMin must be above zero when durationSelect is true', code: 'SERVICE-113' });
    if (max <= min) problems.push({ path: 'durationMax', msg: 'durationMax must be above durationMin when durationSelect is true', code: 'SERVICE-114' });
    else if (min > 0 && max % min !== 0) problems.push({ path: 'durationMax', msg: 'durationMax must be divisible by durationMin', code: 'SERVICE-115' });
    if (interval > 0 && max > 0 && max % interval !== 0) {
      problems.push({ path: 'durationMax', msg: 'durationMax must be divisible by durationInterval', code: 'SERVICE-116' });
    }
    if (min > 0 && max > min && (s.duration < min || s.duration > max)) {
      problems.push({ path: 'duration', msg: `duration ${s.duration} must lie between min ${min} and max ${max} when durationSelect is true`, code: 'SERVICE-125' });
    }
  }
  if ((s.bookAheadUnit === 'none') !== (s.bookAheadValue === null)) {
    problems.push({ path: 'bookAheadValue', msg: 'bookAheadUnit and bookAheadValue must be supplied together', code: 'SETTINGS-106' });
  } else if (s.bookAheadUnit !== 'none' && s.bookAheadValue !== null) {
    const max = BOOK_AHEAD_MAX[s.bookAheadUnit];
    if (s.bookAheadValue < 1 || s.bookAheadValue > max) {
      problems.push({ path: 'bookAheadValue', msg: `bookAheadValue must be 1 to ${max} for ${s.bookAheadUnit}`, code: 'SETTINGS-105' });
    }
  }
  return problems;
}

/** Allowed durations of a service: its duration, or with duration select min..max by interval. */
export function allowedDurations(s: Pick<ServiceSettings, 'duration' | 'durationSelect' | 'durationMin' | 'durationMax' | 'durationInterval'>): number[] {
  if (!s.durationSelect || !s.durationMin || !s.durationMax || !s.durationInterval) return [s.duration];
  const options: number[] = [];
  for (let d = s.durationMin; d <= s.durationMax; d += s.durationInterval) options.push(d);
  return options;
}
