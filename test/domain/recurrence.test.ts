import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { DateTime, Settings } from 'luxon';
import { occurrenceDates, recurrenceIntervals } from '../../src/domain/recurrence.js';
import { expandRecurrence } from '../helpers/recurrence.js';
import type { RecurrenceRule } from '../../src/domain/recurrence.js';
import { localToInstant } from '../../src/domain/local-time.js';

const utc = (iso: string) => DateTime.fromISO(iso, { zone: 'UTC' });
const rule = (overrides: Partial<RecurrenceRule>): RecurrenceRule => ({
  frequency: 'DAILY',
  interval: 1,
  startDate: '2026-01-01',
  startTime: '09:00',
  endTime: '10:00',
  iana: 'UTC',
  ...overrides,
});
const isoUtc = (dt: DateTime) => dt.toUTC().toISO({ suppressMilliseconds: true });

describe('localToInstant: the written rule for skipped and repeated wall-clock times', () => {
  test('a skipped time (New York spring forward, 02:30) moves forward by the gap to 03:30 EDT', () => {
    assert.equal(localToInstant('2026-03-08', '02:30', 'America/New_York').toISO(), '2026-03-08T03:30:00.000-04:00');
  });
  test('a repeated time (New York fall back, 01:30) is its first occurrence, 01:30 EDT', () => {
    assert.equal(localToInstant('2026-11-01', '01:30', 'America/New_York').toISO(), '2026-11-01T01:30:00.000-04:00');
  });
  test('Europe/London: 01:30 on the spring-forward day is 02:30 BST; 01:30 on the fall-back day is BST', () => {
    assert.equal(localToInstant('2026-03-29', '01:30', 'Europe/London').toISO(), '2026-03-29T02:30:00.000+01:00');
    assert.equal(localToInstant('2026-10-25', '01:30', 'Europe/London').toISO(), '2026-10-25T01:30:00.000+01:00');
  });
  test('fractional offsets: Asia/Kolkata +05:30 and Australia/Adelaide +10:30 / +09:30', () => {
    assert.equal(isoUtc(localToInstant('2026-06-01', '09:00', 'Asia/Kolkata')), '2026-06-01T03:30:00Z');
    assert.equal(isoUtc(localToInstant('2026-01-15', '09:00', 'Australia/Adelaide')), '2026-01-14T22:30:00Z');
    assert.equal(isoUtc(localToInstant('2026-07-15', '09:00', 'Australia/Adelaide')), '2026-07-14T23:30:00Z');
  });
  test('24:00 is midnight at the start of the next day', () => {
    assert.equal(localToInstant('2026-03-07', '24:00', 'America/New_York').toISO(), '2026-03-08T00:00:00.000-05:00');
  });
});

describe('expandRecurrence across daylight-saving changes', () => {
  test('a daily 09:00-10:00 New York block stays 09:00-10:00 local on both sides of each change', () => {
    const r = rule({ iana: 'America/New_York', startDate: '2026-03-07' });
    const spring = expandRecurrence(r, utc('2026-03-07T00:00:00Z'), utc('2026-03-10T00:00:00Z'));
    assert.deepEqual(spring.map((o) => isoUtc(o.start)), ['2026-03-07T14:00:00Z', '2026-03-08T13:00:00Z', '2026-03-09T13:00:00Z']);
    const autumn = expandRecurrence(r, utc('2026-10-31T00:00:00Z'), utc('2026-11-03T00:00:00Z'));
    assert.deepEqual(autumn.map((o) => isoUtc(o.start)), ['2026-10-31T13:00:00Z', '2026-11-01T14:00:00Z', '2026-11-02T14:00:00Z']);
    for (const o of [...spring, ...autumn]) assert.equal(o.end.diff(o.start, 'minutes').minutes, 60);
  });

  test('a 01:00-03:00 block on the New York fall-back day lasts three real hours; on spring forward, one', () => {
    const r = rule({ iana: 'America/New_York', startTime: '01:00', endTime: '03:00' });
    const [autumn] = expandRecurrence(r, utc('2026-11-01T04:00:00Z'), utc('2026-11-01T10:00:00Z'));
    assert.equal(autumn!.end.diff(autumn!.start, 'hours').hours, 3);
    const [spring] = expandRecurrence(r, utc('2026-03-08T05:00:00Z'), utc('2026-03-08T09:00:00Z'));
    assert.equal(spring!.end.diff(spring!.start, 'hours').hours, 1);
  });

  test('Europe/London weekly Sunday 00:30-02:30 block on both transition Sundays', () => {
    const r = rule({ frequency: 'WEEKLY', iana: 'Europe/London', startDate: '2026-03-01', weekdays: [0], startTime: '00:30', endTime: '02:30' });
    const march = expandRecurrence(r, utc('2026-03-29T00:00:00Z'), utc('2026-03-30T00:00:00Z'));
    assert.deepEqual(march.map((o) => [isoUtc(o.start), isoUtc(o.end)]), [['2026-03-29T00:30:00Z', '2026-03-29T01:30:00Z']]);
    const october = expandRecurrence(r, utc('2026-10-25T00:00:00Z'), utc('2026-10-26T00:00:00Z'));
    assert.deepEqual(october.map((o) => [isoUtc(o.start), isoUtc(o.end)]), [['2026-10-24T23:30:00Z', '2026-10-25T02:30:00Z']]);
  });

  test('Asia/Kolkata and Australia/Adelaide blocks land on the half hour in UTC', () => {
    const kolkata = expandRecurrence(rule({ iana: 'Asia/Kolkata' }), utc('2026-05-01T00:00:00Z'), utc('2026-05-02T00:00:00Z'));
    assert.deepEqual(kolkata.map((o) => isoUtc(o.start)), ['2026-05-01T03:30:00Z']);
    const adelaide = expandRecurrence(rule({ iana: 'Australia/Adelaide', startDate: '2026-04-01' }), utc('2026-04-03T00:00:00Z'), utc('2026-04-05T00:00:00Z'));
    // Adelaide leaves daylight saving at 03:00 on 5 April 2026: 09:00 local is 22:30 UTC the day
    // before at +10:30, then 23:30 UTC the day before at +09:30.
    assert.deepEqual(adelaide.map((o) => [o.date, isoUtc(o.start)]), [
      ['2026-04-04', '2026-04-03T22:30:00Z'],
      ['2026-04-05', '2026-04-04T23:30:00Z'],
    ]);
  });
});

describe('days that do not exist', () => {
  test('a monthly rule on the 31st skips months without a 31st', () => {
    const dates = occurrenceDates(rule({ frequency: 'MONTHLY', startDate: '2026-01-31', dayOfMonth: 31 }), '2026-01-01', '2026-12-31');
    assert.deepEqual(dates, ['2026-01-31', '2026-03-31', '2026-05-31', '2026-07-31', '2026-08-31', '2026-10-31', '2026-12-31']);
  });
  test('a yearly rule on 29 February occurs only in leap years', () => {
    const dates = occurrenceDates(rule({ frequency: 'YEARLY', startDate: '2024-02-29' }), '2024-01-01', '2033-12-31');
    assert.deepEqual(dates, ['2024-02-29', '2028-02-29', '2032-02-29']);
  });
  test('intervals, biweekly weekdays and the end date', () => {
    assert.deepEqual(occurrenceDates(rule({ interval: 3, startDate: '2026-01-01', endDate: '2026-01-10' }), '2026-01-01', '2026-01-31'), [
      '2026-01-01', '2026-01-04', '2026-01-07', '2026-01-10',
    ]);
    // 2026-01-05 is a Monday. Every other week, Monday and Wednesday.
    assert.deepEqual(occurrenceDates(rule({ frequency: 'BIWEEKLY', startDate: '2026-01-05', weekdays: [1, 3] }), '2026-01-01', '2026-01-31'), [
      '2026-01-05', '2026-01-07', '2026-01-19', '2026-01-21',
    ]);
    assert.deepEqual(occurrenceDates(rule({ frequency: 'MONTHLY', interval: 2, startDate: '2026-01-15' }), '2026-01-01', '2026-06-30'), [
      '2026-01-15', '2026-03-15', '2026-05-15',
    ]);
  });
  test('an overnight rule (22:00-02:00) ends on the next day', () => {
    const [o] = expandRecurrence(rule({ startTime: '22:00', endTime: '02:00' }), utc('2026-01-01T00:00:00Z'), utc('2026-01-01T23:59:00Z'));
    assert.equal(isoUtc(o!.start), '2026-01-01T22:00:00Z');
    assert.equal(isoUtc(o!.end), '2026-01-02T02:00:00Z');
  });
});

const ZONES = ['UTC', 'America/New_York', 'Europe/London', 'Asia/Kolkata', 'Australia/Adelaide', 'Asia/Kathmandu', 'America/St_Johns'];
const hhmm = fc.integer({ min: 0, max: 23 * 60 + 59 }).map((m) => `${String(Math.floor(m / 60)).padStart(2, '0')}:${String(m % 60).padStart(2, '0')}`);
const ruleArbitrary = fc.record({
  frequency: fc.constantFrom<RecurrenceRule['frequency']>('DAILY', 'WEEKLY', 'BIWEEKLY', 'MONTHLY', 'YEARLY'),
  interval: fc.integer({ min: 1, max: 4 }),
  startDate: fc.date({ min: new Date('2025-01-01'), max: new Date('2027-12-31'), noInvalidDate: true }).map((d) => d.toISOString().slice(0, 10)),
  startTime: hhmm,
  endTime: hhmm,
  iana: fc.constantFrom(...ZONES),
  weekdays: fc.uniqueArray(fc.integer({ min: 0, max: 6 }), { minLength: 1, maxLength: 7 }),
  dayOfMonth: fc.integer({ min: 1, max: 31 }),
});

describe('properties', () => {
  test('occurrences lie in the window, in order, on or after the start date, and keep their local times unless the time was skipped', () => {
    fc.assert(
      fc.property(ruleArbitrary, fc.integer({ min: 0, max: 900 }), fc.integer({ min: 1, max: 45 }), (r, offsetDays, spanDays) => {
        const windowStart = utc('2025-01-01T00:00:00Z').plus({ days: offsetDays });
        const windowEnd = windowStart.plus({ days: spanDays });
        const occurrences = expandRecurrence(r, windowStart, windowEnd);
        let previous = -Infinity;
        for (const o of occurrences) {
          assert.ok(o.start < windowEnd && o.end > windowStart, 'overlaps the window');
          assert.ok(o.end > o.start, 'positive length');
          assert.ok(o.start.toMillis() > previous, 'in order');
          previous = o.start.toMillis();
          assert.ok(o.date >= r.startDate, 'not before the start date');
          const local = o.start.setZone(r.iana);
          const skipped = local.toFormat('HH:mm') !== r.startTime;
          if (skipped) {
            // Only a time in a daylight-saving gap may move, and only forward by up to an hour.
            const minutesMoved = local.hour * 60 + local.minute - (Number(r.startTime.slice(0, 2)) * 60 + Number(r.startTime.slice(3)));
            assert.ok(minutesMoved > 0 && minutesMoved <= 60, `moved ${minutesMoved} minutes`);
          }
          if (r.frequency === 'WEEKLY' || r.frequency === 'BIWEEKLY') {
            assert.ok(r.weekdays.includes(DateTime.fromISO(o.date).weekday % 7), 'on a chosen weekday');
          }
          if (r.frequency === 'MONTHLY') assert.equal(Number(o.date.slice(8)), r.dayOfMonth);
          if (r.frequency === 'YEARLY') assert.equal(o.date.slice(5), r.startDate.slice(5));
        }
      }),
      { numRuns: 300 },
    );
  });
});

/**
 * The expansion as it was before issue 18's millisecond form (one Luxon instant per occurrence,
 * a day's date parsed per call), frozen here: the faster expansion must answer exactly as it did.
 */
const frozenLocalToMillis = (date: string, time: string, zone: string) => localToInstant(date, time, zone).toMillis();
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
function frozenOccurrenceDates(rule: RecurrenceRule, from: string, to: string): string[] {
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
function frozenExpandRecurrence(rule: RecurrenceRule, windowStart: DateTime, windowEnd: DateTime): Array<{ date: string; start: DateTime; end: DateTime }> {
  // Local dates in any zone lie within a day of the UTC date, and an occurrence may start the day
  // before and cross midnight into the window: two days either side cover every case.
  const startMs = windowStart.toMillis();
  const endMs = windowEnd.toMillis();
  const from = dateOf(Math.floor(startMs / DAY_MS) - 2);
  const to = dateOf(Math.floor(endMs / DAY_MS) + 1);
  const crossesMidnight = minutes(rule.endTime) <= minutes(rule.startTime) && rule.endTime !== '24:00';
  const occurrences: Array<{ date: string; start: DateTime; end: DateTime }> = [];
  for (const date of frozenOccurrenceDates(rule, from, to)) {
    const start = frozenLocalToMillis(date, rule.startTime, rule.iana);
    const end = frozenLocalToMillis(crossesMidnight ? dateOf(dayNumber(date) + 1) : date, rule.endTime, rule.iana);
    if (end <= start) continue;
    if (start < endMs && end > startMs) {
      occurrences.push({ date, start: DateTime.fromMillis(start, { zone: 'utc' }), end: DateTime.fromMillis(end, { zone: 'utc' }) });
    }
  }
  return occurrences;
}

describe('the millisecond expansion answers as the expansion before it', () => {
  test('random rules and windows: the same dates, starts and ends, in the same order', () => {
    fc.assert(
      fc.property(ruleArbitrary, fc.boolean(), fc.boolean(), fc.integer({ min: 0, max: 900 }), fc.integer({ min: 1, max: 45 }), fc.integer({ min: 0, max: 95 }), (r, bounded, defaults, offsetDays, spanDays, quarterHours) => {
        // Without weekdays or a day of the month, the start date's own is used.
        const given: RecurrenceRule = defaults ? { ...r, weekdays: null, dayOfMonth: null } : r;
        const withEnd = bounded ? { ...given, endDate: DateTime.fromISO(r.startDate).plus({ days: spanDays * 3 }).toISODate()! } : given;
        const windowStart = utc('2025-01-01T00:00:00Z').plus({ days: offsetDays, minutes: quarterHours * 15 });
        const windowEnd = windowStart.plus({ days: spanDays });
        const expected = frozenExpandRecurrence(withEnd, windowStart, windowEnd).map((o) => ({ date: o.date, start: o.start.toMillis(), end: o.end.toMillis() }));
        assert.deepEqual(recurrenceIntervals(withEnd, windowStart.toMillis(), windowEnd.toMillis()), expected);
        const from = windowStart.toISODate()!;
        const to = windowEnd.toISODate()!;
        assert.deepEqual(occurrenceDates(withEnd, from, to), frozenOccurrenceDates(withEnd, from, to));
      }),
      { numRuns: 500 },
    );
  });

  const asMillis = (occurrences: Array<{ date: string; start: DateTime; end: DateTime }>) => occurrences.map((o) => ({ date: o.date, start: o.start.toMillis(), end: o.end.toMillis() }));
  const same = (r: RecurrenceRule, from: string, to: string) => {
    const expected = asMillis(frozenExpandRecurrence(r, utc(from), utc(to)));
    assert.deepEqual(recurrenceIntervals(r, utc(from).toMillis(), utc(to).toMillis()), expected);
    return expected;
  };

  test('the window reaches two local days back and one forward: long overnight blocks west of UTC, early ones east of it', () => {
    // Pago Pago (UTC-11): the block of 8 January, 23:00 to 22:00 the next day, ends 10 January 09:00 UTC.
    assert.deepEqual(same(rule({ startTime: '23:00', endTime: '22:00', iana: 'Pacific/Pago_Pago' }), '2026-01-10T00:00:00Z', '2026-01-10T01:00:00Z').map((o) => o.date), ['2026-01-08']);
    // New York: the block of 8 January, 23:00 to 22:00, ends 10 January 03:00 UTC.
    assert.ok(same(rule({ startTime: '23:00', endTime: '22:00', iana: 'America/New_York' }), '2026-01-10T00:00:00Z', '2026-01-10T06:00:00Z').some((o) => o.date === '2026-01-08'));
    // Kiritimati (UTC+14): 11 January 00:30 local is 10 January 10:30 UTC.
    assert.deepEqual(same(rule({ startTime: '00:30', endTime: '01:00', iana: 'Pacific/Kiritimati' }), '2026-01-10T00:00:00Z', '2026-01-10T12:00:00Z').map((o) => o.date), ['2026-01-11']);
  });

  test('odd rules answer as before: interval 0 or below, no weekdays, an end date before the start, an end at 24:00', () => {
    for (const r of [
      rule({ interval: 0 }),
      rule({ interval: -2 }),
      rule({ frequency: 'WEEKLY', weekdays: [] }),
      rule({ endDate: '2025-12-01' }),
      rule({ startTime: '22:00', endTime: '24:00', iana: 'Europe/London' }),
      rule({ frequency: 'MONTHLY', startDate: '1969-12-31', dayOfMonth: 31 }),
    ]) {
      same(r, '2025-12-28T00:00:00Z', '2026-02-05T00:00:00Z');
    }
  });

  test('random overnight blocks in windows of hours: the same occurrences', () => {
    const overnight = fc
      .record({ start: fc.integer({ min: 18 * 60, max: 23 * 60 + 59 }), back: fc.integer({ min: 0, max: 18 * 60 }) })
      .map(({ start, back }) => [start, start - back].map((m) => `${String(Math.floor(m / 60)).padStart(2, '0')}:${String(m % 60).padStart(2, '0')}`));
    fc.assert(
      fc.property(ruleArbitrary, overnight, fc.integer({ min: 0, max: 900 * 96 }), fc.integer({ min: 1, max: 48 }), (r, [startTime, endTime], quarterHours, hours) => {
        const windowStart = utc('2025-01-01T00:00:00Z').plus({ minutes: quarterHours * 15 });
        const withTimes = { ...r, startTime: startTime!, endTime: endTime!, startDate: '2024-12-01' };
        const expected = asMillis(frozenExpandRecurrence(withTimes, windowStart, windowStart.plus({ hours })));
        assert.deepEqual(recurrenceIntervals(withTimes, windowStart.toMillis(), windowStart.plus({ hours }).toMillis()), expected);
      }),
      { numRuns: 1000 },
    );
  });
});

describe('edges found by mutation testing', () => {
  test('DAILY every 3 days counts from the start date, whatever its day number', () => {
    // 2026-01-02 is day 20455 since 1970, not a multiple of 3: an interval counted any other way drifts.
    assert.deepEqual(occurrenceDates(rule({ interval: 3, startDate: '2026-01-02' }), '2026-01-01', '2026-01-10'), ['2026-01-02', '2026-01-05', '2026-01-08']);
  });

  test('occurrences are the same instants, start and end alike, whatever the process zone', () => {
    const before = Settings.defaultZone;
    Settings.defaultZone = 'America/New_York';
    try {
      const [occurrence] = recurrenceIntervals(rule({}), Date.parse('2026-01-01T00:00:00Z'), Date.parse('2026-01-02T00:00:00Z'));
      assert.deepEqual(occurrence, { date: '2026-01-01', start: Date.parse('2026-01-01T09:00:00Z'), end: Date.parse('2026-01-01T10:00:00Z') });
    } finally {
      Settings.defaultZone = before;
    }
  });

  test('an invalid window edge, start or end, is a RangeError, not an empty expansion', () => {
    // Without the guard NaN bounds compare false everywhere and the rule would expand to nothing.
    const day = Date.parse('2026-01-01T00:00:00Z');
    const invalid = { name: 'RangeError', message: 'Invalid time value' };
    assert.throws(() => recurrenceIntervals(rule({}), Number.NaN, day), invalid);
    assert.throws(() => recurrenceIntervals(rule({}), day, Number.NaN), invalid);
    assert.throws(() => recurrenceIntervals(rule({}), day, Number.POSITIVE_INFINITY), invalid);
  });

  test('a frequency the schema does not allow is an error naming it, not an empty expansion', () => {
    const unknown = rule({ frequency: 'HOURLY' as RecurrenceRule['frequency'] });
    assert.throws(() => recurrenceIntervals(unknown, Date.parse('2026-01-01T00:00:00Z'), Date.parse('2026-01-02T00:00:00Z')), /Unknown recurrence frequency HOURLY/);
  });
});
