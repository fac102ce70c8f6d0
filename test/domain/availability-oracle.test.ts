// The engine against its oracle: computeAvailability must answer exactly as the engine did before
// it was made faster (test/domain/availability-oracle.ts, a frozen copy), on random searches that
// reach every rule: daylight-saving zones (including ones whose midnight is skipped or repeated),
// weekly schedules at all three layers, resources in zones of their own, busy time (external, of
// every resource, of unknown resources), appointments with padding and same-service sharing,
// allocations, daily and customer limits, every round robin, a report zone other than the
// location's, lead time and book-ahead. Equal means deep-equal and the same JSON text (the answer
// is cached and sent as text, so even the order of keys must not change), and the answer's bytes as
// the route writes them (availabilityAnswerBytes) are that text's.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { DateTime } from 'luxon';
import { computeAvailability } from '../../src/domain/availability.js';
import type { ActiveAppointment, AvailabilityInput, BusyInterval, EngineResource, EngineService, RoundRobin } from '../../src/domain/availability.js';
import type { WeeklySchedule } from '../../src/domain/weekly-availability.js';
import { availabilityAnswerBytes } from '../../src/modules/availability/answer-bytes.js';
import { computeAvailability as oracle } from './availability-oracle.js';

const ZONES = [
  'UTC',
  'America/New_York',
  'Europe/London',
  'Asia/Kolkata',
  'Australia/Lord_Howe', // half-hour daylight saving
  'America/Santiago', // midnight skipped in September, Saturday 24:00 repeated in April
  'America/Havana', // midnight repeated in November
  'Asia/Kathmandu',
  'Pacific/Auckland',
  'Pacific/Kiritimati', // UTC+14: local dates furthest from UTC
] as const;
// Dates near each zone's clock changes in 2026 and 2027, so that change days are drawn often.
const NEAR_CHANGES = ['2026-03-08', '2026-11-01', '2026-03-29', '2026-10-25', '2026-04-05', '2026-10-04', '2026-09-06', '2026-03-15', '2027-03-14', '2027-04-04', '2026-12-31'];
const MINUTE = 60_000;

/** A deterministic random number generator (mulberry32), so both engines see the same draws. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

const hhmm = (m: number) => (m === 1440 ? '24:00' : `${String(Math.floor(m / 60)).padStart(2, '0')}:${String(m % 60).padStart(2, '0')}`);
// Times on a five-minute grid, with the hours around midnight and the usual change hours favoured.
const minuteOfDay = fc.oneof(
  fc.integer({ min: 0, max: 288 }).map((q) => q * 5),
  fc.constantFrom(0, 30, 60, 90, 120, 150, 180, 1380, 1410, 1440),
);
const dayIntervals = fc.array(fc.tuple(minuteOfDay, minuteOfDay), { maxLength: 3 }).map((pairs) => {
  const sorted = pairs.map(([a, b]) => [Math.min(a, b), Math.max(a, b)] as const).filter(([a, b]) => b > a).sort((x, y) => x[0] - y[0]);
  const out: Array<{ start: string; end: string }> = [];
  let last = -1;
  for (const [a, b] of sorted) if (a >= last) { out.push({ start: hhmm(a), end: hhmm(b) }); last = b; }
  return out;
});
const weekly: fc.Arbitrary<WeeklySchedule> = fc.record(
  { mon: dayIntervals, tue: dayIntervals, wed: dayIntervals, thu: dayIntervals, fri: dayIntervals, sat: dayIntervals, sun: dayIntervals },
  { requiredKeys: [] },
);
const zone = fc.constantFrom(...ZONES);
const IDS = ['r1', 'r2', 'r3', 'a', 'b', 'r10'];

const scenario = (maxResources: number, maxDays: number) =>
  fc.record({
    zone,
    reportZone: fc.option(zone, { nil: undefined }),
    startDate: fc.oneof(
      fc.tuple(fc.constantFrom(...NEAR_CHANGES), fc.integer({ min: -3, max: 1 })).map(([d, shift]) => DateTime.fromISO(d, { zone: 'UTC' }).plus({ days: shift }).toISODate()!),
      fc.integer({ min: 0, max: 700 }).map((d) => DateTime.fromISO('2026-01-01', { zone: 'UTC' }).plus({ days: d }).toISODate()!),
    ),
    days: fc.integer({ min: 1, max: maxDays }),
    locationWeekly: fc.option(weekly, { nil: null, freq: 5 }),
    serviceWeekly: fc.oneof({ arbitrary: fc.constant(null), weight: 3 }, { arbitrary: weekly, weight: 1 }),
    resources: fc.uniqueArray(
      fc.record({
        id: fc.constantFrom(...IDS),
        timezoneName: fc.option(zone, { nil: null }),
        weeklyAvailability: fc.option(weekly, { nil: null, freq: 2 }),
        bookingLimit: fc.integer({ min: 0, max: 2 }),
        allocations: fc.option(
          fc.array(fc.tuple(fc.integer({ min: 0, max: 40 * 24 }), fc.integer({ min: 1, max: 48 }), fc.option(fc.integer({ min: 0, max: 3 }), { nil: null })), { maxLength: 4 }),
          { nil: undefined },
        ),
      }),
      { minLength: 1, maxLength: maxResources, selector: (r) => r.id },
    ),
    duration: fc.constantFrom(15, 25, 30, 45, 60, 90),
    bookingInterval: fc.option(fc.constantFrom(5, 15, 30, 60), { nil: null }),
    padding: fc.constantFrom(0, 5, 10, 15),
    bookingsPerSlot: fc.integer({ min: 1, max: 3 }),
    allocation: fc.constantFrom(true, false, false, false),
    bookInAdvance: fc.constantFrom(0, 0, 60, 1440, 3000),
    bookAhead: fc.constantFrom<[EngineService['bookAheadUnit'], number | null]>(['none', null], ['none', null], ['none', 3], ['days', 2], ['days', 5], ['weeks', 1], ['months', 1], ['days', 0]),
    nowOffsetHours: fc.oneof({ arbitrary: fc.integer({ min: -120, max: 0 }), weight: 4 }, { arbitrary: fc.integer({ min: 0, max: 120 }), weight: 1 }),
    dailyCount: fc.constantFrom(0, 0, 0, 1, 2, 3),
    dailyMinutes: fc.constantFrom(0, 0, 0, 60, 120, 200),
    dailyUsage: fc.array(fc.tuple(fc.integer({ min: -2, max: 12 }), fc.integer({ min: 0, max: 4 }), fc.integer({ min: 0, max: 240 })), { maxLength: 4 }),
    serviceLimits: fc.tuple(fc.constantFrom(0, 0, 0, 0, 1, 2), fc.constantFrom(0, 0, 0, 0, 2, 3), fc.constantFrom(0, 0, 1, 2)),
    customer: fc.option(
      fc.record({
        activeCount: fc.constantFrom(0, 0, 0, 1, 2, 3),
        lifetimeCount: fc.constantFrom(0, 0, 0, 1, 2, 3),
        lifetimeByResource: fc.dictionary(fc.constantFrom(...IDS), fc.integer({ min: 0, max: 3 })),
        activeByResource: fc.dictionary(fc.constantFrom(...IDS), fc.integer({ min: 0, max: 3 })),
      }),
      { nil: undefined, freq: 2 },
    ),
    busy: fc.array(
      fc.record({
        q: fc.integer({ min: 0, max: 40 * 96 }),
        length: fc.integer({ min: 1, max: 40 }),
        resourceId: fc.option(fc.constantFrom(...IDS, 'zz'), { nil: null }),
        external: fc.option(fc.boolean(), { nil: undefined }),
      }),
      { maxLength: 12 },
    ),
    appointments: fc.array(
      fc.record({
        q: fc.integer({ min: 0, max: 40 * 288 }),
        sameService: fc.boolean(),
        // Mostly the service's duration, so that same-slot sharing happens.
        length: fc.option(fc.constantFrom(15, 30, 60, 120), { nil: null, freq: 2 }),
        resourceIds: fc.uniqueArray(fc.constantFrom(...IDS), { minLength: 1, maxLength: 2 }),
        padding: fc.constantFrom(0, 5, 15),
        copies: fc.integer({ min: 1, max: 3 }),
      }),
      { maxLength: 16 },
    ),
    weeklyMinutes: fc.array(fc.tuple(fc.integer({ min: -1, max: 6 }), fc.constantFrom(...IDS), fc.constantFrom(0, 30, 60, 120)), { maxLength: 10 }),
    holidays: fc.array(fc.integer({ min: -1, max: 12 }), { maxLength: 3 }),
    roundRobin: fc.constantFrom<RoundRobin>('NONE', 'RANDOM', 'BALANCED', 'COMBINED'),
    seed: fc.integer(),
    allowPaddingOverflow: fc.option(fc.boolean(), { nil: undefined }),
    serviceAllowsOverflow: fc.boolean(),
    ignoreExternalEvents: fc.option(fc.boolean(), { nil: undefined }),
    serviceIgnoresExternal: fc.option(fc.boolean(), { nil: undefined }),
  });
type Scenario = ReturnType<typeof scenario> extends fc.Arbitrary<infer T> ? T : never;

function build(s: Scenario): AvailabilityInput {
  const utcDay = (date: string, days: number) => DateTime.fromISO(date, { zone: 'UTC' }).plus({ days }).toISODate()!;
  const endDate = utcDay(s.startDate, s.days - 1);
  // Everything timed is laid from the location's midnight two days before the first date.
  const origin = DateTime.fromISO(s.startDate, { zone: s.zone }).minus({ days: 2 }).toMillis();
  const service: EngineService = {
    id: 'svc',
    duration: s.duration,
    availabilityType: s.allocation ? 'allocation' : 'schedule',
    weeklyAvailability: s.serviceWeekly,
    bookInAdvance: s.bookInAdvance,
    bookAheadUnit: s.bookAhead[0],
    bookAheadValue: s.bookAhead[1],
    bookingInterval: s.bookingInterval,
    padding: s.padding,
    bookingsPerSlot: s.bookingsPerSlot,
    dailyBookingLimitCount: s.dailyCount,
    dailyBookingLimitMinutes: s.dailyMinutes,
    bookingLimit: s.serviceLimits[0],
    maxBookingLimit: s.serviceLimits[1],
    maxResourceBookingLimit: s.serviceLimits[2],
    allowPaddingOverflow: s.serviceAllowsOverflow,
    ...(s.serviceIgnoresExternal === undefined ? {} : { ignoreExternalEvents: s.serviceIgnoresExternal }),
  };
  const resources: EngineResource[] = s.resources.map((r) => ({
    id: r.id,
    timezoneName: r.timezoneName,
    weeklyAvailability: r.weeklyAvailability,
    bookingLimit: r.bookingLimit,
    ...(r.allocations
      ? {
          allocations: r.allocations.map(([q, length, capacity], i) => ({
            start: origin + q * 15 * MINUTE,
            end: origin + (q + length) * 15 * MINUTE,
            // null, a number, or (every third) no capacity at all
            ...(i % 3 === 2 ? {} : { bookingsPerSlot: capacity }),
          })),
        }
      : {}),
  }));
  const busy: BusyInterval[] = s.busy.map((b) => ({
    resourceId: b.resourceId,
    start: origin + b.q * 15 * MINUTE,
    end: origin + (b.q + b.length) * 15 * MINUTE,
    ...(b.external === undefined ? {} : { external: b.external }),
  }));
  const appointments: ActiveAppointment[] = s.appointments.flatMap((a, i) =>
    Array.from({ length: a.copies }, (_, copy) => ({
      id: `a${i}-${copy}`,
      serviceId: a.sameService ? 'svc' : 'other',
      resourceIds: a.resourceIds,
      padding: a.padding,
      start: origin + a.q * 5 * MINUTE,
      end: origin + a.q * 5 * MINUTE + (a.length ?? s.duration) * MINUTE,
    })),
  );
  const dailyUsage: AvailabilityInput['dailyUsage'] = {};
  for (const [day, count, minutes] of s.dailyUsage) dailyUsage[utcDay(s.startDate, day)] = { count, minutes };
  const weeklyMinutes: Record<string, Record<string, number>> = {};
  for (const [week, id, minutes] of s.weeklyMinutes) {
    const key = DateTime.fromISO(s.startDate, { zone: 'UTC' }).plus({ weeks: week }).toFormat("kkkk-'W'WW");
    (weeklyMinutes[key] ??= {})[id] = minutes;
  }
  return {
    now: origin + 2 * 86_400_000 + s.nowOffsetHours * 3_600_000,
    timezoneName: s.zone,
    locationWeekly: s.locationWeekly,
    service,
    resources,
    startDate: s.startDate,
    endDate,
    ...(s.reportZone === undefined ? {} : { reportZone: s.reportZone }),
    duration: s.duration,
    roundRobin: s.roundRobin,
    busy,
    appointments,
    dailyUsage,
    weeklyMinutes,
    ...(s.customer === undefined ? {} : { customer: s.customer }),
    random: seeded(s.seed),
    ...(s.allowPaddingOverflow === undefined ? {} : { allowPaddingOverflow: s.allowPaddingOverflow }),
    ...(s.ignoreExternalEvents === undefined ? {} : { ignoreExternalEvents: s.ignoreExternalEvents }),
    holidays: s.holidays.map((day, i) => ({ date: utcDay(s.startDate, day), name: `Holiday ${i}` })),
  };
}

/** Both engines on the same search, each with a fresh copy of the same random numbers. */
function assertSameAnswer(input: AvailabilityInput, seed: number) {
  const expected = oracle({ ...input, random: seeded(seed) });
  const actual = computeAvailability({ ...input, random: seeded(seed) });
  assert.deepStrictEqual(actual, expected);
  assert.equal(JSON.stringify(actual), JSON.stringify(expected));
  assert.equal(availabilityAnswerBytes(actual).toString('utf8'), JSON.stringify(expected));
}

describe('the engine answers exactly as its oracle', () => {
  test('random searches of a few resources over up to ten days', () => {
    fc.assert(
      fc.property(scenario(4, 10), (s) => assertSameAnswer(build(s), s.seed)),
      { numRuns: 400 },
    );
  });

  test('random searches of many resources over up to five weeks', () => {
    fc.assert(
      fc.property(scenario(6, 36), (s) => assertSameAnswer(build(s), s.seed)),
      { numRuns: 60 },
    );
  });

  test("the benchmark's search: 50 resources, 31 days in New York, appointments with padding, every round robin", () => {
    // The shape of bench/availability.ts, generated deterministically.
    const zoneName = 'America/New_York';
    const first = '2026-10-20'; // the 31 days include the fall-back day
    const base = DateTime.fromISO(first, { zone: zoneName });
    const ids = Array.from({ length: 50 }, (_, i) => `res-${String(i).padStart(2, '0')}`);
    const appointments: ActiveAppointment[] = [];
    for (let i = 0; i < 50 * 5 * 33; i++) {
      const r = i % 50;
      const day = Math.floor(i / 250) - 1;
      const start = base.plus({ days: day, hours: 8, minutes: ((i * 7 + r) % 20) * 30 }).toMillis();
      appointments.push({ id: `a${i}`, serviceId: i % 11 ? 'svc' : 'other', resourceIds: [ids[r]!], padding: 5, start, end: start + 30 * MINUTE });
    }
    const busy: BusyInterval[] = [];
    for (let i = 0; i < 1000; i++) {
      const start = base.plus({ days: (i % 33) - 1, hours: 12 + (i % 3) }).toMillis();
      busy.push({ resourceId: i % 97 === 0 ? null : ids[i % 50]!, start, end: start + (i % 4 === 0 ? 45 : 60) * MINUTE, ...(i % 5 === 0 ? { external: true } : {}) });
    }
    const week = Object.fromEntries(['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'].map((d) => [d, [{ start: '08:00', end: '18:00' }]]));
    const weeklyMinutes: Record<string, Record<string, number>> = {};
    for (const w of ['2026-W43', '2026-W44', '2026-W45', '2026-W46', '2026-W47']) weeklyMinutes[w] = Object.fromEntries(ids.map((id, i) => [id, ((i * 37) % 7) * 30]));
    for (const roundRobin of ['NONE', 'RANDOM', 'BALANCED', 'COMBINED'] as const) {
      const input: AvailabilityInput = {
        now: base.toMillis() - 3_600_000,
        timezoneName: zoneName,
        locationWeekly: week,
        service: {
          id: 'svc', duration: 30, availabilityType: 'schedule', weeklyAvailability: null, bookInAdvance: 0, bookAheadUnit: 'none', bookAheadValue: null,
          bookingInterval: 15, padding: 5, bookingsPerSlot: 2, dailyBookingLimitCount: 0, dailyBookingLimitMinutes: 0, bookingLimit: 0, maxBookingLimit: 0,
          maxResourceBookingLimit: 0, allowPaddingOverflow: false,
        },
        resources: ids.map((id, i) => ({ id, timezoneName: i % 10 === 9 ? 'Europe/London' : null, weeklyAvailability: i % 10 === 9 ? week : null, bookingLimit: 0 })),
        startDate: first,
        endDate: DateTime.fromISO(first).plus({ days: 30 }).toISODate()!,
        duration: 30,
        roundRobin,
        busy,
        appointments,
        dailyUsage: {},
        weeklyMinutes,
      };
      assertSameAnswer(input, 7);
      assertSameAnswer({ ...input, reportZone: 'Asia/Kolkata' }, 8);
    }
  });
});
