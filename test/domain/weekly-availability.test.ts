import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { WEEKDAYS, minutesOfDay, weeklyScheduleProblems } from '../../src/domain/weekly-availability.js';
import type { Weekday, WeeklySchedule } from '../../src/domain/weekly-availability.js';

const hhmm = (minutes: number) => `${String(Math.floor(minutes / 60)).padStart(2, '0')}:${String(minutes % 60).padStart(2, '0')}`;
const brief = (schedule: WeeklySchedule, path = 'weeklyAvailability') =>
  weeklyScheduleProblems(schedule, path).map(({ path: p, code }) => ({ path: p, code }));

describe('minutesOfDay', () => {
  test('reads HH:MM as minutes after midnight', () => {
    assert.equal(minutesOfDay('00:00'), 0);
    assert.equal(minutesOfDay('00:01'), 1);
    assert.equal(minutesOfDay('09:30'), 570);
    assert.equal(minutesOfDay('12:00'), 720);
    assert.equal(minutesOfDay('23:59'), 1439);
  });

  test('"24:00" is the end of the day', () => {
    assert.equal(minutesOfDay('24:00'), 1440);
  });

  test('every minute of the day round-trips through HH:MM', () => {
    fc.assert(fc.property(fc.integer({ min: 0, max: 1440 }), (minutes) => minutesOfDay(hhmm(minutes)) === minutes));
  });

  test('any text reads as hours, a colon and minutes split apart: the character-code reading of DD:DD agrees with it', () => {
    const bySplit = (time: string) => {
      const [hours, minutes] = time.split(':').map(Number);
      return hours! * 60 + minutes!;
    };
    const digit = fc.constantFrom(...'0123456789', 'a', ' ', '/', ':', '٣');
    const fiveChars = fc.tuple(digit, digit, fc.constantFrom(':', '.', '9'), digit, digit).map((chars) => chars.join(''));
    fc.assert(fc.property(fc.oneof(fiveChars, fc.string({ maxLength: 8 })), (time) => Object.is(minutesOfDay(time), bySplit(time))));
  });
});

describe('weeklyScheduleProblems', () => {
  test('an empty schedule, missing days and empty days have no problems', () => {
    assert.deepEqual(weeklyScheduleProblems({}, 'weeklyAvailability'), []);
    assert.deepEqual(weeklyScheduleProblems({ mon: [], sun: [] }, 'weeklyAvailability'), []);
  });

  test('a normal week has no problems', () => {
    const day = [
      { start: '09:00', end: '12:00' },
      { start: '13:00', end: '17:30' },
    ];
    assert.deepEqual(weeklyScheduleProblems({ mon: day, tue: day, wed: day, thu: day, fri: day, sat: [{ start: '10:00', end: '14:00' }] }, 'w'), []);
  });

  test('an interval that ends before it starts is BUSINESSHOURS-100 on its end', () => {
    const problems = weeklyScheduleProblems({ mon: [{ start: '17:00', end: '09:00' }] }, 'weeklyAvailability');
    assert.equal(problems.length, 1);
    assert.deepEqual(problems[0], {
      path: 'weeklyAvailability.mon.0.end',
      msg: 'mon interval 0 must end after it starts',
      code: 'BUSINESSHOURS-100',
    });
  });

  test('an empty interval (end equal to start) is also BUSINESSHOURS-100', () => {
    assert.deepEqual(brief({ wed: [{ start: '10:00', end: '10:00' }] }), [{ path: 'weeklyAvailability.wed.0.end', code: 'BUSINESSHOURS-100' }]);
  });

  test('the path names the day, the index and the caller\'s prefix', () => {
    assert.deepEqual(
      brief(
        {
          tue: [
            { start: '08:00', end: '09:00' },
            { start: '12:00', end: '11:00' },
          ],
          sun: [{ start: '23:00', end: '01:00' }],
        },
        'body.hours',
      ),
      [
        { path: 'body.hours.tue.1.end', code: 'BUSINESSHOURS-100' },
        { path: 'body.hours.sun.0.end', code: 'BUSINESSHOURS-100' },
      ],
    );
  });

  test('"24:00" is a valid end, and a whole day 00:00-24:00 is fine', () => {
    assert.deepEqual(weeklyScheduleProblems({ fri: [{ start: '18:00', end: '24:00' }], sat: [{ start: '00:00', end: '24:00' }] }, 'w'), []);
  });

  test('overlapping intervals are reported on the later one\'s start, without a legacy code', () => {
    const problems = weeklyScheduleProblems(
      {
        mon: [
          { start: '09:00', end: '12:00' },
          { start: '11:00', end: '14:00' },
        ],
      },
      'weeklyAvailability',
    );
    assert.deepEqual(problems, [{ path: 'weeklyAvailability.mon.1.start', msg: 'mon intervals must not overlap' }]);
  });

  test('overlap is found whatever order the intervals are given in', () => {
    assert.deepEqual(
      brief({
        thu: [
          { start: '15:00', end: '18:00' },
          { start: '08:00', end: '10:00' },
          { start: '09:30', end: '11:00' },
        ],
      }),
      [{ path: 'weeklyAvailability.thu.2.start', code: undefined }],
    );
  });

  test('an interval inside another overlaps it', () => {
    assert.equal(
      weeklyScheduleProblems(
        {
          sat: [
            { start: '08:00', end: '20:00' },
            { start: '10:00', end: '11:00' },
          ],
        },
        'w',
      ).length,
      1,
    );
  });

  test('touching intervals (one ends when the next starts) do not overlap', () => {
    assert.deepEqual(
      weeklyScheduleProblems(
        {
          mon: [
            { start: '09:00', end: '12:00' },
            { start: '12:00', end: '17:00' },
          ],
        },
        'w',
      ),
      [],
    );
  });

  test('the same hours on different days never overlap each other', () => {
    const day = [{ start: '09:00', end: '17:00' }];
    assert.deepEqual(weeklyScheduleProblems(Object.fromEntries(WEEKDAYS.map((d) => [d, day])), 'w'), []);
  });

  // --- properties ---------------------------------------------------------------------------

  /** 0..12 sorted intervals of one day that neither overlap nor end before they start (touching allowed). */
  const validDay = fc
    .uniqueArray(fc.integer({ min: 0, max: 1440 }), { minLength: 0, maxLength: 24 })
    .map((points) => {
      const sorted = [...points].sort((a, b) => a - b);
      const intervals: Array<{ start: string; end: string }> = [];
      for (let i = 0; i + 1 < sorted.length; i += 2) intervals.push({ start: hhmm(sorted[i]!), end: hhmm(sorted[i + 1]!) });
      return intervals;
    });
  const validWeek = fc.record(
    Object.fromEntries(WEEKDAYS.map((d) => [d, validDay])) as Record<Weekday, typeof validDay>,
    { requiredKeys: [] },
  );

  test('property: sorted, non-overlapping intervals that end after they start have no problems', () => {
    fc.assert(fc.property(validWeek, (week) => weeklyScheduleProblems(week, 'weeklyAvailability').length === 0));
  });

  test('property: the order of a valid day\'s intervals does not matter', () => {
    fc.assert(
      fc.property(validDay.chain((day) => fc.shuffledSubarray(day, { minLength: day.length, maxLength: day.length })), (day) => {
        return weeklyScheduleProblems({ mon: day }, 'w').length === 0;
      }),
    );
  });

  test('property: touching intervals are still fine', () => {
    const touching = fc.uniqueArray(fc.integer({ min: 0, max: 1440 }), { minLength: 2, maxLength: 25 }).map((points) => {
      const sorted = [...points].sort((a, b) => a - b);
      return sorted.slice(1).map((end, i) => ({ start: hhmm(sorted[i]!), end: hhmm(end) }));
    });
    fc.assert(fc.property(touching, (day) => weeklyScheduleProblems({ tue: day }, 'w').length === 0));
  });

  test('property: an interval whose end is not after its start is always BUSINESSHOURS-100 at its index', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 1439 }),
        fc.integer({ min: 0, max: 1439 }),
        fc.constantFrom(...WEEKDAYS),
        (a, b, day) => {
          const start = Math.max(a, b);
          const end = Math.min(a, b);
          const problems = weeklyScheduleProblems({ [day]: [{ start: hhmm(start), end: hhmm(end) }] }, 'weeklyAvailability');
          assert.deepEqual(
            problems.map((p) => [p.path, p.code]),
            [[`weeklyAvailability.${day}.0.end`, 'BUSINESSHOURS-100']],
          );
        },
      ),
    );
  });

  test('property: a second interval starting inside the first is reported as an overlap', () => {
    const overlapping = fc
      .tuple(fc.integer({ min: 0, max: 1438 }), fc.integer({ min: 2, max: 1440 }))
      .filter(([start, end]) => end - start >= 2)
      .chain(([start, end]) =>
        fc.tuple(fc.constant(start), fc.constant(end), fc.integer({ min: start + 1, max: end - 1 })).chain(([s, e, innerStart]) =>
          fc.tuple(fc.constant(s), fc.constant(e), fc.constant(innerStart), fc.integer({ min: innerStart + 1, max: 1440 })),
        ),
      );
    fc.assert(
      fc.property(overlapping, ([start, end, innerStart, innerEnd]) => {
        const problems = weeklyScheduleProblems(
          {
            mon: [
              { start: hhmm(start), end: hhmm(end) },
              { start: hhmm(innerStart), end: hhmm(innerEnd) },
            ],
          },
          'w',
        );
        assert.deepEqual(problems, [{ path: 'w.mon.1.start', msg: 'mon intervals must not overlap' }]);
      }),
    );
  });
});
