import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { DateTime } from 'luxon';
import { computeAvailability, intersect, normalise, weeklyWindows } from '../../src/domain/availability.js';
import type { AvailabilityInput } from '../../src/domain/availability.js';
import type { WeeklySchedule } from '../../src/domain/weekly-availability.js';
import { localToInstant } from '../../src/domain/local-time.js';
import { engineInput, engineService } from './engine-fixtures.js';


const service = engineService;

const input = engineInput;

const localTimes = (result: ReturnType<typeof computeAvailability>, zone: string) =>
  result.availableTimes.map((s) => DateTime.fromISO(s.startTime).setZone(zone).toFormat('HH:mm'));
const HOURS = ['09:00', '10:00', '11:00', '12:00', '13:00', '14:00', '15:00', '16:00'];

describe('daylight-saving days have exactly their wall-clock slots', () => {
  for (const [zone, dates] of [
    ['America/New_York', ['2026-03-08', '2026-11-01']],
    ['Europe/London', ['2026-03-29', '2026-10-25']],
    ['Australia/Adelaide', ['2026-04-05', '2026-10-04']],
  ] as const) {
    for (const date of dates) {
      test(`${zone} on ${date}: 09:00 to 16:00 local, eight one-hour slots`, () => {
        const result = computeAvailability(input({ timezoneName: zone, startDate: date, endDate: date }));
        assert.deepEqual(localTimes(result, zone), HOURS);
        for (const slot of result.availableTimes) assert.equal(Date.parse(slot.endTime) - Date.parse(slot.startTime), 3_600_000);
      });
    }
  }

  test('a night-shift schedule across the New York fall-back hour counts real minutes', () => {
    const weekly: WeeklySchedule = { sun: [{ start: '00:00', end: '04:00' }] };
    const result = computeAvailability(input({ timezoneName: 'America/New_York', locationWeekly: weekly, startDate: '2026-11-01', endDate: '2026-11-01' }));
    // 00:00 to 04:00 local on the fall-back day is five real hours: five slots, 01:00 twice.
    assert.equal(result.availableTimes.length, 5);
    assert.deepEqual(localTimes(result, 'America/New_York'), ['00:00', '01:00', '01:00', '02:00', '03:00']);
  });
});

describe('fractional offsets', () => {
  test('Asia/Kolkata slots start on the half hour in UTC', () => {
    const result = computeAvailability(input({ timezoneName: 'Asia/Kolkata' }));
    assert.equal(result.availableTimes[0]!.startTime, '2026-03-02T03:30:00.000Z');
    assert.deepEqual(localTimes(result, 'Asia/Kolkata'), HOURS);
  });
  test('a resource in Asia/Kathmandu (+05:45) working 10:00-12:00 inside a London location\'s hours', () => {
    const result = computeAvailability(
      input({
        timezoneName: 'Europe/London',
        locationWeekly: { mon: [{ start: '00:00', end: '24:00' }] },
        resources: [{ id: 'r1', timezoneName: 'Asia/Kathmandu', weeklyAvailability: { mon: [{ start: '10:00', end: '12:00' }] }, bookingLimit: 0 }],
        duration: 30,
        service: service({ duration: 30 }),
      }),
    );
    assert.deepEqual(result.availableTimes.map((s) => s.startTime), [
      '2026-03-02T04:15:00.000Z', '2026-03-02T04:45:00.000Z', '2026-03-02T05:15:00.000Z', '2026-03-02T05:45:00.000Z',
    ]);
  });
});

describe('rules', () => {
  test('busy time, padding and the booking interval', () => {
    const result = computeAvailability(
      input({
        service: service({ padding: 15, bookingInterval: 30 }),
        busy: [{ resourceId: 'r1', start: Date.parse('2026-03-02T11:00:00Z'), end: Date.parse('2026-03-02T12:00:00Z') }],
      }),
    );
    const starts = result.availableTimes.map((s) => s.startTime.slice(11, 16));
    // 60-minute slots every 30 minutes, each needing 15 minutes of padding before 11:00 and 17:00.
    assert.deepEqual(starts, ['09:00', '09:30', '12:00', '12:30', '13:00', '13:30', '14:00', '14:30', '15:00', '15:30']);
  });

  test('bookingsPerSlot is capacity at the same instant; other overlaps block', () => {
    const at10 = { start: Date.parse('2026-03-02T10:00:00Z'), end: Date.parse('2026-03-02T11:00:00Z') };
    const result = computeAvailability(
      input({
        service: service({ bookingsPerSlot: 2 }),
        appointments: [
          { id: 'a1', serviceId: 'svc', resourceIds: ['r1'], padding: 0, ...at10 },
          { id: 'a2', serviceId: 'other', resourceIds: ['r1'], padding: 0, start: Date.parse('2026-03-02T13:30:00Z'), end: Date.parse('2026-03-02T14:00:00Z') },
        ],
      }),
    );
    const ten = result.availableTimes.find((s) => s.startTime.startsWith('2026-03-02T10:00'));
    assert.equal(ten?.remaining, 1, 'one unit left at 10:00');
    assert.equal(result.availableTimes.some((s) => s.startTime.startsWith('2026-03-02T13:00')), false, 'the other service blocks 13:00');
    const full = computeAvailability(input({ service: service({ bookingsPerSlot: 1 }), appointments: [{ id: 'a1', serviceId: 'svc', resourceIds: ['r1'], padding: 0, ...at10 }] }));
    assert.equal(full.availableTimes.some((s) => s.startTime.startsWith('2026-03-02T10:00')), false);
  });

  test('book in advance and book ahead', () => {
    const now = Date.parse('2026-03-02T10:20:00Z');
    const result = computeAvailability(input({ now, service: service({ bookInAdvance: 60 }) }));
    assert.equal(result.availableTimes[0]!.startTime, '2026-03-02T12:00:00.000Z');
    const ahead = computeAvailability(input({ now, startDate: '2026-03-02', endDate: '2026-03-06', service: service({ bookAheadUnit: 'days', bookAheadValue: 2 }) }));
    assert.deepEqual(ahead.availableDays.map((d) => d.available), [true, true, true, false, false]);
    assert.equal(ahead.availableDays[4]!.reason, 'beyond the book-ahead period');
  });

  test('daily count and daily minutes limits hide the day\'s slots', () => {
    const byCount = computeAvailability(input({ service: service({ dailyBookingLimitCount: 3 }), dailyUsage: { '2026-03-02': { count: 3, minutes: 180 } } }));
    assert.equal(byCount.availableTimes.length, 0);
    assert.equal(byCount.availableDays[0]!.reason, 'daily booking limit reached');
    const byMinutes = computeAvailability(input({ service: service({ dailyBookingLimitMinutes: 200 }), dailyUsage: { '2026-03-02': { count: 3, minutes: 150 } } }));
    assert.equal(byMinutes.availableTimes.length, 0, '50 minutes left is fewer than the 60-minute duration');
  });

  test('customer limits: active and lifetime caps close everything, resource caps exclude the resource', () => {
    const resources = [
      { id: 'r1', timezoneName: null, weeklyAvailability: null, bookingLimit: 1 },
      { id: 'r2', timezoneName: null, weeklyAvailability: null, bookingLimit: 0 },
    ];
    const usage = { activeCount: 1, lifetimeCount: 1, lifetimeByResource: { r1: 1 }, activeByResource: { r1: 1 } };
    const closed = computeAvailability(input({ resources, service: service({ bookingLimit: 1 }), customer: usage }));
    assert.equal(closed.availableTimes.length, 0);
    assert.equal(closed.availableDays[0]!.reason, 'customer booking limit reached');
    const open = computeAvailability(input({ resources, customer: usage }));
    assert.ok(open.availableTimes.every((s) => s.resourceIds.join() === 'r2'));
  });

  test('round robin: NONE lists every free resource, RANDOM and BALANCED pick one, COMBINED needs all', () => {
    const resources = ['r1', 'r2', 'r3'].map((id) => ({ id, timezoneName: null, weeklyAvailability: null, bookingLimit: 0 }));
    const busy = [{ resourceId: 'r2', start: Date.parse('2026-03-02T09:00:00Z'), end: Date.parse('2026-03-02T10:00:00Z') }];
    const none = computeAvailability(input({ resources, busy }));
    assert.deepEqual(none.availableTimes[0]!.resourceIds, ['r1', 'r3']);
    assert.equal(none.availableTimes[0]!.remaining, 2);
    const random = computeAvailability(input({ resources, busy, roundRobin: 'RANDOM', random: () => 0.99 }));
    assert.deepEqual(random.availableTimes[0]!.resourceIds, ['r3']);
    const balanced = computeAvailability(input({ resources, busy, roundRobin: 'BALANCED', weeklyMinutes: { '2026-W10': { r1: 120, r3: 60 } } }));
    assert.deepEqual(balanced.availableTimes[0]!.resourceIds, ['r3']);
    assert.deepEqual(balanced.availableTimes[1]!.resourceIds, ['r2'], 'r2 has no minutes this week');
    const combined = computeAvailability(input({ resources, busy, roundRobin: 'COMBINED' }));
    assert.equal(combined.availableTimes[0]!.startTime, '2026-03-02T10:00:00.000Z');
    assert.deepEqual(combined.availableTimes[0]!.resourceIds, ['r1', 'r2', 'r3']);
  });

  test('allocation services use allocation windows, with their own capacity', () => {
    const result = computeAvailability(
      input({
        service: service({ availabilityType: 'allocation' }),
        resources: [{
          id: 'r1', timezoneName: null, weeklyAvailability: null, bookingLimit: 0,
          allocations: [{ start: Date.parse('2026-03-02T14:00:00Z'), end: Date.parse('2026-03-02T16:00:00Z'), bookingsPerSlot: 3 }],
        }],
      }),
    );
    assert.deepEqual(result.availableTimes.map((s) => [s.startTime.slice(11, 16), s.remaining]), [['14:00', 3], ['15:00', 3]]);
  });

  test('allocation windows of the days around the search (loaded for zones) offer no slot', () => {
    const result = computeAvailability(
      input({
        service: service({ availabilityType: 'allocation' }),
        resources: [{
          id: 'r1', timezoneName: null, weeklyAvailability: null, bookingLimit: 0,
          allocations: [
            { start: Date.parse('2026-03-01T14:00:00Z'), end: Date.parse('2026-03-01T16:00:00Z'), bookingsPerSlot: 3 },
            { start: Date.parse('2026-03-03T14:00:00Z'), end: Date.parse('2026-03-03T16:00:00Z'), bookingsPerSlot: 3 },
          ],
        }],
      }),
    );
    assert.deepEqual(result.availableTimes, []);
    assert.deepEqual(result.availableDays, [{ date: '2026-03-02', available: false, reason: 'no free time' }]);
  });

  test('external calendar busy time counts unless ignoreExternalEvents', () => {
    const busy = [{ resourceId: 'r1', start: Date.parse('2026-03-02T09:00:00Z'), end: Date.parse('2026-03-02T10:00:00Z'), external: true }];
    const counted = computeAvailability(input({ busy }));
    assert.equal(counted.availableTimes[0]!.startTime, '2026-03-02T10:00:00.000Z');
    const ignored = computeAvailability(input({ busy, ignoreExternalEvents: true }));
    assert.equal(ignored.availableTimes[0]!.startTime, '2026-03-02T09:00:00.000Z');
    const byService = computeAvailability(input({ busy, service: service({ ignoreExternalEvents: true }) }));
    assert.equal(byService.availableTimes[0]!.startTime, '2026-03-02T09:00:00.000Z');
  });

  test('an empty result is valid, with a reason per day', () => {
    const result = computeAvailability(input({ locationWeekly: {} }));
    assert.deepEqual(result.availableTimes, []);
    assert.deepEqual(result.availableDays, [{ date: '2026-03-02', available: false, reason: 'no free time' }]);
  });
});

describe('the arrays a search keeps for the next (issue 18)', () => {
  const busyDay = (resources: string[]) =>
    input({
      resources: resources.map((id) => ({ id, timezoneName: null, weeklyAvailability: null, bookingLimit: 0 })),
      startDate: '2026-03-02',
      endDate: '2026-03-08',
      duration: 30,
      service: service({ duration: 30, bookingInterval: 15, bookingsPerSlot: 2 }),
      appointments: resources.map((id, i) => ({ id: `a${i}`, serviceId: 'svc', resourceIds: [id], padding: 0, start: Date.parse('2026-03-02T09:00:00Z'), end: Date.parse('2026-03-02T09:30:00Z') })),
    });

  test('a search after a larger one answers as it did before it: nothing of the larger search is left in its arrays', () => {
    const small = input();
    const before = computeAvailability(small);
    const large = computeAvailability(busyDay(Array.from({ length: 40 }, (_, i) => `r${String(i).padStart(2, '0')}`)));
    assert.ok(large.availableTimes.length > before.availableTimes.length);
    assert.deepEqual(computeAvailability(small), before);
    // The larger search again, after the small one: its slot shares (the occupancy marks) start from zero.
    assert.deepEqual(computeAvailability(busyDay(Array.from({ length: 40 }, (_, i) => `r${String(i).padStart(2, '0')}`))), large);
  });

  test('a search run from inside another (through random) gets arrays of its own, and both answer as alone', () => {
    // Another week: its candidate times differ from the outer search's in every position.
    const inner = { ...busyDay(['x1', 'x2', 'x3']), startDate: '2026-03-09', endDate: '2026-03-15' };
    const innerAlone = computeAvailability(inner);
    const outer = { ...busyDay(['r1', 'r2', 'r3']), roundRobin: 'RANDOM' as const };
    const outerAlone = computeAvailability({ ...outer, random: () => 0 });
    const innerAnswers: ReturnType<typeof computeAvailability>[] = [];
    const nested = computeAvailability({
      ...outer,
      random: () => {
        innerAnswers.push(computeAvailability(inner));
        return 0;
      },
    });
    assert.deepEqual(nested, outerAlone);
    assert.ok(innerAnswers.length > 0);
    for (const answer of innerAnswers) assert.deepEqual(answer, innerAlone);
  });

  test('RANDOM and BALANCED slots of one resource share its one-id list, which is the resource\'s id', () => {
    for (const roundRobin of ['RANDOM', 'BALANCED'] as const) {
      const result = computeAvailability({ ...busyDay(['r1', 'r2']), roundRobin, random: () => 0 });
      const lists = new Map<string, readonly string[]>();
      for (const slot of result.availableTimes) {
        assert.equal(slot.resourceIds.length, 1);
        const id = slot.resourceIds[0]!;
        assert.equal(lists.get(id) ?? slot.resourceIds, slot.resourceIds);
        lists.set(id, slot.resourceIds);
      }
      assert.ok(lists.size > 0);
    }
  });
});

// --- properties -------------------------------------------------------------------------------

const ZONES = ['UTC', 'America/New_York', 'Europe/London', 'Asia/Kolkata', 'Australia/Adelaide', 'Asia/Kathmandu'];
const quarter = fc.integer({ min: 0, max: 96 }).map((q) => q * 15);
const time = (m: number) => (m === 1440 ? '24:00' : `${String(Math.floor(m / 60)).padStart(2, '0')}:${String(m % 60).padStart(2, '0')}`);
const dayIntervals = fc.array(fc.tuple(quarter, quarter), { maxLength: 3 }).map((pairs) => {
  const sorted = pairs.map(([a, b]) => [Math.min(a, b), Math.max(a, b)] as const).filter(([a, b]) => b > a).sort((x, y) => x[0] - y[0]);
  const out: Array<{ start: string; end: string }> = [];
  let last = -1;
  for (const [a, b] of sorted) if (a >= last) { out.push({ start: time(a), end: time(b) }); last = b; }
  return out;
});
const weekly: fc.Arbitrary<WeeklySchedule> = fc.record({ mon: dayIntervals, tue: dayIntervals, wed: dayIntervals, thu: dayIntervals, fri: dayIntervals, sat: dayIntervals, sun: dayIntervals });

const scenario = fc.record({
  zone: fc.constantFrom(...ZONES),
  resourceZone: fc.option(fc.constantFrom(...ZONES), { nil: null }),
  locationWeekly: weekly,
  resourceWeekly: fc.option(weekly, { nil: null }),
  startOffset: fc.integer({ min: 0, max: 360 }),
  days: fc.integer({ min: 1, max: 7 }),
  duration: fc.constantFrom(15, 30, 45, 60, 90),
  interval: fc.option(fc.constantFrom(15, 30, 60), { nil: null }),
  padding: fc.constantFrom(0, 10, 15),
  capacity: fc.integer({ min: 1, max: 3 }),
  busy: fc.array(fc.tuple(fc.integer({ min: 0, max: 8 * 24 * 4 }), fc.integer({ min: 1, max: 16 })), { maxLength: 6 }),
  appointments: fc.array(fc.tuple(fc.integer({ min: 0, max: 8 * 24 * 4 }), fc.boolean()), { maxLength: 6 }),
  roundRobin: fc.constantFrom('NONE', 'RANDOM', 'BALANCED', 'COMBINED' as const),
});

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the generated scenario record
function build(s: any): AvailabilityInput {
  const startDate = DateTime.fromISO('2026-01-01', { zone: 'UTC' }).plus({ days: s.startOffset }).toISODate()!;
  const endDate = DateTime.fromISO(startDate, { zone: 'UTC' }).plus({ days: s.days - 1 }).toISODate()!;
  const origin = DateTime.fromISO(startDate, { zone: s.zone }).toMillis() - 86_400_000;
  const busy = s.busy.map(([q, len]: [number, number], i: number) => ({ resourceId: i % 2 ? 'r1' : 'r2', start: origin + q * 900_000, end: origin + (q + len) * 900_000 }));
  const appointments = s.appointments.map(([q, same]: [number, boolean], i: number) => ({
    id: `a${i}`, serviceId: same ? 'svc' : 'other', resourceIds: [i % 2 ? 'r1' : 'r2'], padding: 0,
    start: origin + q * 900_000, end: origin + q * 900_000 + s.duration * 60_000,
  }));
  return input({
    timezoneName: s.zone,
    locationWeekly: s.locationWeekly,
    service: service({ duration: s.duration, bookingInterval: s.interval, padding: s.padding, bookingsPerSlot: s.capacity }),
    resources: [
      { id: 'r1', timezoneName: s.resourceZone, weeklyAvailability: s.resourceWeekly, bookingLimit: 0 },
      { id: 'r2', timezoneName: null, weeklyAvailability: null, bookingLimit: 0 },
    ],
    startDate, endDate, duration: s.duration, roundRobin: s.roundRobin, busy, appointments, random: () => 0.5,
  });
}

describe('properties', () => {
  test('no slot overlaps busy time, capacity is never exceeded, every slot lies inside an open window', () => {
    fc.assert(
      fc.property(scenario, (s) => {
        const engineInput = build(s);
        const result = computeAvailability(engineInput);
        const paddingMs = engineInput.service.padding * 60_000;
        const from = DateTime.fromISO(engineInput.startDate, { zone: 'UTC' }).minus({ days: 1 }).toISODate()!;
        const to = DateTime.fromISO(engineInput.endDate, { zone: 'UTC' }).plus({ days: 1 }).toISODate()!;
        const windowsOf = new Map(
          engineInput.resources.map((resource) => {
            let windows = weeklyWindows(engineInput.locationWeekly!, engineInput.timezoneName, from, to);
            if (resource.weeklyAvailability) {
              windows = intersect(windows, weeklyWindows(resource.weeklyAvailability, resource.timezoneName ?? engineInput.timezoneName, from, to));
            }
            return [resource.id, normalise(windows)];
          }),
        );
        for (const slot of result.availableTimes) {
          const start = Date.parse(slot.startTime);
          const end = Date.parse(slot.endTime);
          assert.equal(end - start, engineInput.duration * 60_000);
          for (const id of slot.resourceIds) {
            for (const b of engineInput.busy) {
              if (b.resourceId === id) assert.ok(!(b.start < end + paddingMs && b.end > start), 'slot overlaps busy time');
            }
            const sharing = engineInput.appointments.filter((a) => a.resourceIds.includes(id) && a.start < end + paddingMs && a.end > start);
            assert.ok(sharing.every((a) => a.serviceId === 'svc' && a.start === start && a.end === end), 'only same-slot appointments of the service share');
            assert.ok(sharing.length < engineInput.service.bookingsPerSlot, 'capacity left');
            assert.ok(windowsOf.get(id)!.some((w) => w.start <= start && end + paddingMs <= w.end), 'inside an open window');
          }
          assert.ok(slot.remaining >= 1);
        }
      }),
      { numRuns: 250 },
    );
  });
});

describe('property: every day, including daylight-saving days, has exactly its wall-clock slots', () => {
  test('slots of a random schedule on a random date in a random zone are the schedule read on the wall clock', () => {
    // Transition days of each zone in the period are among the dates drawn, so they are hit often.
    const transitionDays = ['2026-03-08', '2026-11-01', '2026-03-29', '2026-10-25', '2026-04-05', '2026-10-04', '2027-03-14', '2027-11-07'];
    const date = fc.oneof(
      fc.constantFrom(...transitionDays),
      fc.integer({ min: 0, max: 700 }).map((d) => DateTime.fromISO('2026-01-01', { zone: 'UTC' }).plus({ days: d }).toISODate()!),
    );
    fc.assert(
      fc.property(
        fc.constantFrom('America/New_York', 'Europe/London', 'Australia/Adelaide', 'Asia/Kolkata', 'America/St_Johns'),
        date,
        fc.integer({ min: 0, max: 20 }),
        fc.integer({ min: 1, max: 12 }),
        fc.constantFrom(15, 30, 60),
        (zone, day, openQuarter, hours, duration) => {
          const openMinutes = openQuarter * 60;
          const closeMinutes = Math.min(1440, openMinutes + hours * 60);
          const hhmm = (m: number) => (m === 1440 ? '24:00' : `${String(Math.floor(m / 60)).padStart(2, '0')}:${String(m % 60).padStart(2, '0')}`);
          const weekday = WEEKDAY_KEYS[DateTime.fromISO(day, { zone: 'UTC' }).weekday - 1]!;
          const result = computeAvailability(
            input({
              // earlier than every date drawn, so no slot is in the past
              now: Date.parse('2025-06-01T00:00:00Z'),
              timezoneName: zone,
              locationWeekly: { [weekday]: [{ start: hhmm(openMinutes), end: hhmm(closeMinutes) }] },
              startDate: day,
              endDate: day,
              duration,
              service: service({ duration }),
            }),
          );
          // Expected: real-time slots from the opening instant to the closing instant.
          const openInstant = localInstant(day, hhmm(openMinutes), zone);
          const closeInstant = localInstant(day, hhmm(closeMinutes), zone);
          const expected: string[] = [];
          for (let t = openInstant; t + duration * 60_000 <= closeInstant; t += duration * 60_000) expected.push(new Date(t).toISOString());
          assert.deepEqual(result.availableTimes.map((s) => s.startTime), expected, `${zone} ${day}`);
          // On days without a clock change the count is exactly the wall-clock count. (On a change
          // day the real-time expectation above holds; a window inside a skipped hour has no slots.)
          const dayStart = DateTime.fromISO(day, { zone });
          const offsetsDiffer = dayStart.offset !== dayStart.plus({ days: 1 }).offset;
          if (!offsetsDiffer) assert.equal(result.availableTimes.length, Math.floor((closeMinutes - openMinutes) / duration));
          // Every slot begins on the grid of the wall clock, counted from the opening time.
          for (const slot of result.availableTimes) {
            const local = DateTime.fromISO(slot.startTime).setZone(zone);
            if (!offsetsDiffer) assert.equal((local.hour * 60 + local.minute - openMinutes) % duration, 0);
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});

const WEEKDAY_KEYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const;
function localInstant(date: string, time: string, zone: string): number {
  return localToInstant(date, time, zone).toMillis();
}
