// Wall-clock time to instant and instant to local day, at the edges mutation testing found that no
// test would notice a change (issue 14, item 6). The DST cases follow the rule written on
// localToInstant in src/domain/local-time.ts.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { DateTime } from 'luxon';
import fc from 'fast-check';
import { localDate, localDateOfMillis, localDayFinder, localToInstant, localToMillis } from '../../src/domain/local-time.js';

describe('localToInstant: a repeated wall-clock time is its first occurrence', () => {
  test('also when midnight itself repeats (Havana falls back from 01:00 to 00:00 on 1 November 2026)', () => {
    assert.equal(localToInstant('2026-11-01', '00:00', 'America/Havana').toISO(), '2026-11-01T00:00:00.000-04:00');
    assert.equal(localToMillis('2026-11-01', '00:30', 'America/Havana'), Date.parse('2026-11-01T04:30:00Z'));
  });
});

describe('localToInstant: "24:00" is the start of the next day', () => {
  test('also after a day whose own midnight was skipped (Santiago springs forward at 00:00 on 6 September 2026)', () => {
    // The day began at 01:00 (-03:00); its end is the next day's midnight, not 01:00 of it.
    assert.equal(localToInstant('2026-09-06', '00:00', 'America/Santiago').toISO(), '2026-09-06T01:00:00.000-03:00');
    assert.equal(localToInstant('2026-09-06', '24:00', 'America/Santiago').toISO(), '2026-09-07T00:00:00.000-03:00');
    assert.equal(localToMillis('2026-09-06', '24:00', 'America/Santiago'), localToMillis('2026-09-07', '00:00', 'America/Santiago'));
  });
  test('on an ordinary day and across a month end', () => {
    assert.equal(localToInstant('2026-01-31', '24:00', 'Europe/London').toISO(), '2026-02-01T00:00:00.000+00:00');
  });
});

describe('localDayFinder', () => {
  test('instants outside the range answer the nearest day of it', () => {
    const dayOf = localDayFinder('2026-03-02', '2026-03-04', 'UTC');
    assert.equal(dayOf(Date.parse('2026-03-01T12:00:00Z')), '2026-03-02');
    assert.equal(dayOf(Date.parse('2026-03-02T00:00:00Z') - 1), '2026-03-02');
    assert.equal(dayOf(Date.parse('2026-03-09T00:00:00Z')), '2026-03-04');
  });
});

describe('localDate', () => {
  test('the calendar date of an instant in a zone, from a Date or a DateTime', () => {
    assert.equal(localDate(new Date('2026-03-01T23:30:00Z'), 'Asia/Tokyo'), '2026-03-02');
    assert.equal(localDate(DateTime.fromISO('2026-03-02T03:00:00Z'), 'America/New_York'), '2026-03-01');
  });
});

describe('localDateOfMillis', () => {
  // Zones with the awkward days: a skipped midnight (Santiago, Havana), a repeated midnight
  // (Havana), a 30-minute shift (Lord Howe), a whole day skipped (Apia, 30 December 2011), the
  // extreme offsets (Kiritimati +14, Pago Pago -11), and plain ones.
  const ZONES = ['UTC', 'America/New_York', 'America/Santiago', 'America/Havana', 'America/St_Johns', 'Australia/Lord_Howe', 'Pacific/Apia', 'Pacific/Kiritimati', 'Pacific/Pago_Pago', 'Asia/Kolkata', 'Europe/London'];

  test('answers Luxon\'s local date for any instant in any of the zones', () => {
    const from = Date.parse('2000-01-01T00:00:00Z');
    const to = Date.parse('2035-12-31T00:00:00Z');
    fc.assert(
      fc.property(fc.constantFrom(...ZONES), fc.integer({ min: from, max: to }), (zone, ms) => {
        assert.equal(localDateOfMillis(ms, zone), DateTime.fromMillis(ms, { zone }).toISODate());
      }),
      { numRuns: 3_000 },
    );
  });

  test('every minute of a night when clocks went back across midnight (St. John\'s, 30 October 2005)', () => {
    const from = Date.parse('2005-10-30T01:00:00Z');
    for (let ms = from; ms < from + 4 * 3_600_000; ms += 60_000) {
      assert.equal(localDateOfMillis(ms, 'America/St_Johns'), DateTime.fromMillis(ms, { zone: 'America/St_Johns' }).toISODate(), new Date(ms).toISOString());
    }
  });

  test('at the first instant of a day and the one before it, across DST changes and a skipped day', () => {
    const cases: Array<[string, string]> = [
      ['America/Santiago', '2026-09-06'], // midnight skipped: the day starts at 01:00
      ['America/Havana', '2026-11-01'], // midnight repeated: the day starts at the first 00:00
      ['America/New_York', '2026-03-08'],
      ['Australia/Lord_Howe', '2026-10-04'],
      ['Pacific/Apia', '2011-12-31'], // 30 December 2011 did not happen there
      ['Pacific/Kiritimati', '2026-06-01'],
      ['America/St_Johns', '2005-10-30'], // 00:01 went back to 23:01 of the day before
    ];
    for (const [zone, date] of cases) {
      const start = localToMillis(date, '00:00', zone);
      for (const ms of [start - 1, start, start + 1]) assert.equal(localDateOfMillis(ms, zone), DateTime.fromMillis(ms, { zone }).toISODate(), `${zone} ${new Date(ms).toISOString()}`);
    }
  });
});
