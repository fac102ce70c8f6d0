// Recurrence, local days and service settings at their edges, written where mutation testing
// found that no test would notice a change (issue 14, item 6).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { DateTime } from 'luxon';
import { occurrenceDates } from '../../src/domain/recurrence.js';
import { expandRecurrence } from '../helpers/recurrence.js';
import type { RecurrenceRule } from '../../src/domain/recurrence.js';
import { localDayFinder, localToMillis } from '../../src/domain/local-time.js';
import { serviceSettingProblems } from '../../src/domain/service-rules.js';
import type { ServiceSettings } from '../../src/domain/service-rules.js';

const rule = (overrides: Partial<RecurrenceRule>): RecurrenceRule => ({
  frequency: 'DAILY',
  interval: 1,
  startDate: '2026-03-02',
  startTime: '09:00',
  endTime: '10:00',
  iana: 'UTC',
  ...overrides,
});

describe('occurrence dates', () => {
  test('DAILY every 2 days counts from the start date, also when the window opens later', () => {
    assert.deepEqual(occurrenceDates(rule({ interval: 2 }), '2026-03-05', '2026-03-09'), ['2026-03-06', '2026-03-08']);
  });

  test('WEEKLY without weekdays repeats on the start date\'s weekday', () => {
    assert.deepEqual(occurrenceDates(rule({ frequency: 'WEEKLY', startDate: '2026-03-04' }), '2026-03-01', '2026-03-20'), ['2026-03-04', '2026-03-11', '2026-03-18']);
  });

  test('WEEKLY is every week and BIWEEKLY every second week', () => {
    const weekly = occurrenceDates(rule({ frequency: 'WEEKLY', weekdays: [1] }), '2026-03-01', '2026-03-31');
    const biweekly = occurrenceDates(rule({ frequency: 'BIWEEKLY', weekdays: [1] }), '2026-03-01', '2026-03-31');
    assert.deepEqual(weekly, ['2026-03-02', '2026-03-09', '2026-03-16', '2026-03-23', '2026-03-30']);
    assert.deepEqual(biweekly, ['2026-03-02', '2026-03-16', '2026-03-30']);
  });

  test('WEEKLY every 7 weeks: the week count is in weeks, not days', () => {
    assert.deepEqual(occurrenceDates(rule({ frequency: 'WEEKLY', interval: 7, weekdays: [1] }), '2026-03-01', '2026-06-30'), ['2026-03-02', '2026-04-20', '2026-06-08']);
  });

  test('weeks are counted from the Monday of the start date\'s week, also for a Sunday start', () => {
    // Start Sunday 8 March 2026; its week began Monday 2 March.
    const dates = occurrenceDates(rule({ frequency: 'BIWEEKLY', startDate: '2026-03-08', weekdays: [0, 1] }), '2026-03-01', '2026-03-31');
    assert.deepEqual(dates, ['2026-03-08', '2026-03-16', '2026-03-22', '2026-03-30']);
  });

  test('MONTHLY every 5 months across a year boundary', () => {
    assert.deepEqual(occurrenceDates(rule({ frequency: 'MONTHLY', interval: 5, startDate: '2026-11-15' }), '2026-11-01', '2027-12-31'), ['2026-11-15', '2027-04-15', '2027-09-15']);
  });

  test('YEARLY every 3 years', () => {
    assert.deepEqual(occurrenceDates(rule({ frequency: 'YEARLY', interval: 3, startDate: '2026-06-01' }), '2026-01-01', '2032-12-31'), ['2026-06-01', '2029-06-01', '2032-06-01']);
  });
});

describe('expanding into instants', () => {
  const window = (from: string, to: string) => [DateTime.fromISO(from, { zone: 'utc' }), DateTime.fromISO(to, { zone: 'utc' })] as const;

  test('an end at or before the start runs into the next day (09:30-09:15 is 23 h 45 min; 09:00-09:00 is 24 h)', () => {
    const [from, to] = window('2026-03-02T00:00:00Z', '2026-03-03T00:00:00Z');
    const short = expandRecurrence(rule({ startTime: '09:30', endTime: '09:15', endDate: '2026-03-02' }), from, to);
    assert.equal(short.length, 1);
    assert.equal(short[0]!.end.toMillis() - short[0]!.start.toMillis(), (23 * 60 + 45) * 60_000);
    const whole = expandRecurrence(rule({ startTime: '09:00', endTime: '09:00', endDate: '2026-03-02' }), from, to);
    assert.equal(whole[0]!.end.toMillis() - whole[0]!.start.toMillis(), 24 * 3_600_000);
  });

  test('an ordinary block with minutes does not cross midnight (09:30-10:15)', () => {
    const [from, to] = window('2026-03-02T00:00:00Z', '2026-03-03T00:00:00Z');
    const block = expandRecurrence(rule({ startTime: '09:30', endTime: '10:15', endDate: '2026-03-02' }), from, to);
    assert.equal(block[0]!.end.toMillis() - block[0]!.start.toMillis(), 45 * 60_000);
  });

  test('a block wholly inside a skipped hour has no occurrence that day', () => {
    const [from, to] = window('2026-03-07T00:00:00Z', '2026-03-10T00:00:00Z');
    const dates = expandRecurrence(rule({ startTime: '02:00', endTime: '03:00', iana: 'America/New_York', startDate: '2026-03-07' }), from, to).map((o) => o.date);
    assert.deepEqual(dates, ['2026-03-07', '2026-03-09'], 'none on 8 March, when 02:00-03:00 does not exist');
  });

  test('only occurrences overlapping the window: touching its start or its end is not overlapping', () => {
    const daily = rule({ startDate: '2026-03-01' });
    const [from, to] = window('2026-03-02T10:00:00Z', '2026-03-03T09:00:00Z');
    const found = expandRecurrence(daily, from, to);
    assert.deepEqual(found, [], '2 March 09:00-10:00 ends at the window start; 3 March starts at its end');
    const [wider] = window('2026-03-02T09:59:00Z', '2026-03-03T09:00:00Z');
    assert.equal(expandRecurrence(daily, wider, to).length, 1);
  });

  test('occurrences are given in UTC', () => {
    const [from, to] = window('2026-03-02T00:00:00Z', '2026-03-03T00:00:00Z');
    const [occurrence] = expandRecurrence(rule({ iana: 'Asia/Kolkata', endDate: '2026-03-02' }), from, to);
    assert.equal(occurrence!.start.zoneName, 'UTC');
    assert.equal(occurrence!.end.zoneName, 'UTC');
    assert.equal(occurrence!.start.toISO(), '2026-03-02T03:30:00.000Z');
  });
});

describe('local days', () => {
  test('an instant on the last day of the range belongs to that day; midnight begins the new day', () => {
    const dayOf = localDayFinder('2026-03-01', '2026-03-03', 'UTC');
    assert.equal(dayOf(Date.parse('2026-03-03T12:00:00Z')), '2026-03-03');
    assert.equal(dayOf(Date.parse('2026-03-02T00:00:00Z')), '2026-03-02');
    assert.equal(dayOf(Date.parse('2026-03-01T23:59:59Z')), '2026-03-01');
  });

  test('days are local: 23:30 UTC is the next day in Tokyo', () => {
    const dayOf = localDayFinder('2026-03-01', '2026-03-03', 'Asia/Tokyo');
    assert.equal(dayOf(Date.parse('2026-03-01T23:30:00Z')), '2026-03-02');
  });

  test('24:00 is the next midnight', () => {
    assert.equal(localToMillis('2026-03-02', '24:00', 'UTC'), Date.parse('2026-03-03T00:00:00Z'));
  });
});

describe('service settings messages and edges', () => {
  const plain: ServiceSettings = { duration: 60, durationSelect: false, durationMin: null, durationMax: null, durationInterval: null, bookAheadUnit: 'none', bookAheadValue: null };
  const select = (overrides: Partial<ServiceSettings>) => serviceSettingProblems({ ...plain, durationSelect: true, ...overrides });

  test('each problem says what to fix', () => {
    assert.deepEqual(select({ durationMin: 0, durationMax: 0, durationInterval: 0 }), [
      { path: 'durationInterval', msg: 'durationInterval must be above zero when durationSelect is true', code: 'SERVICE-112' },
      { path: 'durationMin', msg: 'durationMin must be above zero when durationSelect is true', code: 'SERVICE-113' },
      { path: 'durationMax', msg: 'durationMax must be above durationMin when durationSelect is true', code: 'SERVICE-114' },
    ]);
    assert.deepEqual(select({ durationMin: 40, durationMax: 100, durationInterval: 20, duration: 60 }), [{ path: 'durationMax', msg: 'durationMax must be divisible by durationMin', code: 'SERVICE-115' }]);
    assert.deepEqual(select({ durationMin: 30, durationMax: 90, durationInterval: 15, duration: 120 }), [
      { path: 'duration', msg: 'duration 120 must lie between min 30 and max 90 when durationSelect is true', code: 'SERVICE-125' },
    ]);
    assert.deepEqual(select({ durationMin: 30, durationMax: 90, durationInterval: 20 }).find((p) => p.code === 'SERVICE-116'), {
      path: 'durationMax',
      msg: 'durationMax must be divisible by durationInterval',
      code: 'SERVICE-116',
    });
    assert.deepEqual(serviceSettingProblems({ ...plain, bookAheadUnit: 'days' }), [{ path: 'bookAheadValue', msg: 'bookAheadUnit and bookAheadValue must be supplied together', code: 'SETTINGS-106' }]);
  });

  test('the duration range rule (SERVICE-125) waits until min and max are themselves valid', () => {
    const codes = (o: Partial<ServiceSettings>) => select(o).map((p) => p.code);
    assert.ok(!codes({ durationMin: null, durationMax: 60, durationInterval: 15, duration: 90 }).includes('SERVICE-125'), 'no min yet');
    assert.ok(!codes({ durationMin: 30, durationMax: 30, durationInterval: 15, duration: 60 }).includes('SERVICE-125'), 'max not above min yet');
    assert.ok(codes({ durationMin: 30, durationMax: 60, durationInterval: 15, duration: 90 }).includes('SERVICE-125'));
  });
});
