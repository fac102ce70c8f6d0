// The availability engine's rules, each at its edge, written where mutation testing found that no
// test would notice a change (issue 14, item 6): customer and resource limits, padding on both
// sides, exact-slot sharing, the service's own schedule layer, daily limits below and at their
// value, each round-robin mode's choice and remaining capacity, lead time and book-ahead edges,
// external busy time, allocation capacity, and the interval helpers.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Settings } from 'luxon';
import { computeAvailability, intersect, normalise, slotOccupancy, weeklyWindows } from '../../src/domain/availability.js';
import type { ActiveAppointment, CustomerUsage, EngineResource } from '../../src/domain/availability.js';
import type { WeeklySchedule } from '../../src/domain/weekly-availability.js';
import { engineInput, engineService, everyDay } from './engine-fixtures.js';

const DAY = '2026-03-02'; // a Monday
const at = (time: string, date = DAY) => Date.parse(`${date}T${time}:00Z`);
const MINUTE = 60_000;


const service = engineService;

const resource = (id: string, overrides: Partial<EngineResource> = {}): EngineResource => ({ id, timezoneName: null, weeklyAvailability: null, bookingLimit: 0, ...overrides });

const input = engineInput;

const appointment = (start: string, end: string, overrides: Partial<ActiveAppointment> = {}): ActiveAppointment => ({
  id: `a-${start}`,
  serviceId: 'svc',
  resourceIds: ['r1'],
  padding: 0,
  start: at(start),
  end: at(end),
  ...overrides,
});

const customer = (overrides: Partial<CustomerUsage> = {}): CustomerUsage => ({ activeCount: 0, lifetimeCount: 0, lifetimeByResource: {}, activeByResource: {}, ...overrides });

const starts = (result: ReturnType<typeof computeAvailability>) => result.availableTimes.map((s) => s.startTime.slice(11, 16));
const HOURS = ['09:00', '10:00', '11:00', '12:00', '13:00', '14:00', '15:00', '16:00'];

describe('customer limits', () => {
  test('a customer with no usage and limits of 0 sees every slot', () => {
    assert.deepEqual(starts(computeAvailability(input({ customer: customer() }))), HOURS);
  });

  test('bookingLimit: one below shows slots; at the limit hides every slot with its reason', () => {
    const limited = service({ bookingLimit: 2 });
    assert.deepEqual(starts(computeAvailability(input({ service: limited, customer: customer({ activeCount: 1 }) }))), HOURS);
    const full = computeAvailability(input({ service: limited, customer: customer({ activeCount: 2 }) }));
    assert.deepEqual(full.availableTimes, []);
    assert.deepEqual(full.availableDays, [{ date: DAY, available: false, reason: 'customer booking limit reached' }]);
  });

  test('maxBookingLimit (lifetime): one below shows slots; at the limit hides every slot', () => {
    const limited = service({ maxBookingLimit: 3 });
    assert.deepEqual(starts(computeAvailability(input({ service: limited, customer: customer({ lifetimeCount: 2 }) }))), HOURS);
    const full = computeAvailability(input({ service: limited, customer: customer({ lifetimeCount: 3 }) }));
    assert.deepEqual(full.availableTimes, []);
    assert.equal(full.availableDays[0]!.reason, 'customer lifetime booking limit reached');
  });

  test('maxResourceBookingLimit leaves out only the resource the customer used up', () => {
    const two = [resource('r1'), resource('r2')];
    const limited = service({ maxResourceBookingLimit: 2 });
    const below = computeAvailability(input({ service: limited, resources: two, customer: customer({ lifetimeByResource: { r1: 1 } }) }));
    assert.deepEqual(below.availableTimes[0]!.resourceIds, ['r1', 'r2']);
    const at2 = computeAvailability(input({ service: limited, resources: two, customer: customer({ lifetimeByResource: { r1: 2 } }) }));
    assert.deepEqual(at2.availableTimes[0]!.resourceIds, ['r2']);
    assert.equal(at2.availableTimes.length, 8);
  });

  test("a resource's own bookingLimit leaves it out once the customer's active appointments with it reach it", () => {
    const two = [resource('r1', { bookingLimit: 1 }), resource('r2')];
    assert.deepEqual(computeAvailability(input({ resources: two, customer: customer({ activeByResource: { r1: 0 } }) })).availableTimes[0]!.resourceIds, ['r1', 'r2']);
    assert.deepEqual(computeAvailability(input({ resources: two, customer: customer({ activeByResource: { r1: 1 } }) })).availableTimes[0]!.resourceIds, ['r2']);
    const unlimited = [resource('r1', { bookingLimit: 0 })];
    assert.equal(computeAvailability(input({ resources: unlimited, customer: customer({ activeByResource: { r1: 9 } }) })).availableTimes.length, 8);
  });
});

describe('padding', () => {
  test("an appointment's padding blocks the slots that start inside it", () => {
    const half = service({ bookingInterval: 30 });
    const result = computeAvailability(input({ service: half, appointments: [appointment('10:00', '11:00', { padding: 30 })] }));
    const times = starts(result);
    assert.ok(!times.includes('10:30') && !times.includes('11:00'), times.join());
    assert.ok(times.includes('11:30'));
    assert.ok(times.includes('09:00') && !times.includes('09:30'), 'a slot ending after 10:00 overlaps it');
  });

  test("the slot's own padding must fit in the window and before busy time, unless padding may overflow", () => {
    const padded = service({ padding: 30 });
    assert.ok(!starts(computeAvailability(input({ service: padded }))).includes('16:00'), '16:00-17:00 plus 30 minutes overflows 17:00');
    assert.ok(starts(computeAvailability(input({ service: padded, allowPaddingOverflow: true }))).includes('16:00'));
    assert.ok(starts(computeAvailability(input({ service: { ...padded, allowPaddingOverflow: true } }))).includes('16:00'));
    const blocked = computeAvailability(input({ service: padded, busy: [{ resourceId: null, start: at('11:15'), end: at('11:45') }] }));
    assert.ok(!starts(blocked).includes('10:00'), 'its padding (11:00-11:30) reaches the block');
    assert.ok(starts(blocked).includes('09:00'));
    const after = computeAvailability(input({ service: padded, busy: [{ resourceId: null, start: at('11:30'), end: at('11:45') }] }));
    assert.ok(starts(after).includes('10:00'), 'padding ending exactly where the block starts fits');
  });

  test('an appointment ending exactly at a slot start does not block it', () => {
    assert.ok(starts(computeAvailability(input({ appointments: [appointment('09:00', '10:00')] }))).includes('10:00'));
  });
});

describe('capacity: sharing is for exactly the same slot of the same service', () => {
  test('the same slot of the same service shares bookingsPerSlot; remaining counts down', () => {
    const two = service({ bookingsPerSlot: 2 });
    const one = computeAvailability(input({ service: two, appointments: [appointment('10:00', '11:00')] }));
    assert.equal(one.availableTimes.find((s) => s.startTime.includes('T10:00'))!.remaining, 1);
    assert.equal(one.availableTimes.find((s) => s.startTime.includes('T09:00'))!.remaining, 2);
    const full = computeAvailability(input({ service: two, appointments: [appointment('10:00', '11:00', { id: 'a' }), appointment('10:00', '11:00', { id: 'b' })] }));
    assert.ok(!starts(full).includes('10:00'));
  });

  test('a partly overlapping appointment of the same service blocks, whatever the capacity', () => {
    const two = service({ bookingsPerSlot: 5, bookingInterval: 30 });
    const result = computeAvailability(input({ service: two, appointments: [appointment('10:00', '11:00')] }));
    const times = starts(result);
    assert.ok(times.includes('10:00'));
    assert.ok(!times.includes('10:30') && !times.includes('09:30'), times.join());
    const longer = computeAvailability(input({ service: two, duration: 90, appointments: [appointment('10:00', '11:00')] }));
    assert.ok(!starts(longer).includes('10:00'), 'same start, different end: not the same slot');
  });

  test('an appointment of another service at the same slot blocks it', () => {
    const two = service({ bookingsPerSlot: 2 });
    assert.ok(!starts(computeAvailability(input({ service: two, appointments: [appointment('10:00', '11:00', { serviceId: 'other' })] }))).includes('10:00'));
  });

  test('allocation capacity overrides bookingsPerSlot; without one the service capacity applies', () => {
    const allocated = service({ availabilityType: 'allocation', bookingsPerSlot: 1 });
    const resources = [resource('r1', { allocations: [{ start: at('09:00'), end: at('11:00'), bookingsPerSlot: 3 }, { start: at('13:00'), end: at('14:00'), bookingsPerSlot: null }] })];
    const result = computeAvailability(input({ service: allocated, resources }));
    assert.deepEqual(starts(result), ['09:00', '10:00', '13:00'], 'only allocated windows, not the location hours');
    assert.deepEqual(result.availableTimes.map((s) => s.remaining), [3, 3, 1]);
  });
});

describe('schedule layers', () => {
  test("the service's own weekly schedule narrows the location's", () => {
    const narrow = service({ weeklyAvailability: everyDay('10:00', '12:00') });
    assert.deepEqual(starts(computeAvailability(input({ service: narrow }))), ['10:00', '11:00']);
  });

  test("the resource's schedule narrows both; a resource with no schedule anywhere has no time", () => {
    const own = [resource('r1', { weeklyAvailability: everyDay('14:00', '20:00') })];
    assert.deepEqual(starts(computeAvailability(input({ resources: own }))), ['14:00', '15:00', '16:00']);
    assert.deepEqual(computeAvailability(input({ locationWeekly: null })).availableTimes, []);
    assert.deepEqual(starts(computeAvailability(input({ locationWeekly: null, resources: own }))), ['14:00', '15:00', '16:00', '17:00', '18:00', '19:00']);
  });
});

describe('daily limits', () => {
  test('dailyBookingLimitCount: one below keeps the day open, at the limit closes it', () => {
    const limited = service({ dailyBookingLimitCount: 2 });
    assert.equal(computeAvailability(input({ service: limited, dailyUsage: { [DAY]: { count: 1, minutes: 60 } } })).availableTimes.length, 8);
    const full = computeAvailability(input({ service: limited, dailyUsage: { [DAY]: { count: 2, minutes: 120 } } }));
    assert.deepEqual(full.availableTimes, []);
    assert.equal(full.availableDays[0]!.reason, 'daily booking limit reached');
  });

  test('dailyBookingLimitMinutes: exactly the duration left keeps slots, less closes them', () => {
    const limited = service({ dailyBookingLimitMinutes: 180 });
    assert.equal(computeAvailability(input({ service: limited, dailyUsage: { [DAY]: { count: 2, minutes: 120 } } })).availableTimes.length, 8);
    const full = computeAvailability(input({ service: limited, dailyUsage: { [DAY]: { count: 2, minutes: 121 } } }));
    assert.deepEqual(full.availableTimes, []);
    assert.equal(full.availableDays[0]!.reason, 'daily booked minutes limit reached');
  });

  test('usage of another day does not count', () => {
    const limited = service({ dailyBookingLimitCount: 1 });
    assert.equal(computeAvailability(input({ service: limited, dailyUsage: { '2026-03-03': { count: 5, minutes: 300 } } })).availableTimes.length, 8);
  });
});

describe('round robin', () => {
  const three = [resource('r3'), resource('r1'), resource('r2')];
  const sameSlot = (id: string) => appointment('10:00', '11:00', { id: `a-${id}`, resourceIds: [id] });
  const capacity2 = service({ bookingsPerSlot: 2 });

  test('NONE lists every free resource in id order, remaining the sum of their units', () => {
    const result = computeAvailability(input({ service: capacity2, resources: three, appointments: [sameSlot('r2')] }));
    const ten = result.availableTimes.find((s) => s.startTime.includes('T10:00'))!;
    assert.deepEqual(ten.resourceIds, ['r1', 'r2', 'r3']);
    assert.equal(ten.remaining, 5);
  });

  test('COMBINED needs every resource free at once; remaining is the smallest', () => {
    const result = computeAvailability(input({ service: capacity2, resources: three, roundRobin: 'COMBINED', appointments: [sameSlot('r2')] }));
    const ten = result.availableTimes.find((s) => s.startTime.includes('T10:00'))!;
    assert.deepEqual(ten.resourceIds, ['r1', 'r2', 'r3']);
    assert.equal(ten.remaining, 1);
    const blocked = computeAvailability(input({ resources: three, roundRobin: 'COMBINED', appointments: [sameSlot('r3')] }));
    assert.ok(!starts(blocked).includes('10:00'), 'one resource busy: no combined slot');
    assert.deepEqual(computeAvailability(input({ resources: [], roundRobin: 'COMBINED' })).availableTimes, []);
  });

  test('RANDOM takes the resource the random number points at, with its own remaining units', () => {
    const first = computeAvailability(input({ service: capacity2, resources: three, roundRobin: 'RANDOM', random: () => 0, appointments: [sameSlot('r1')] }));
    const ten = first.availableTimes.find((s) => s.startTime.includes('T10:00'))!;
    assert.deepEqual(ten.resourceIds, ['r1']);
    assert.equal(ten.remaining, 1);
    const last = computeAvailability(input({ resources: three, roundRobin: 'RANDOM', random: () => 0.99 }));
    assert.deepEqual(last.availableTimes[0]!.resourceIds, ['r3']);
    const middle = computeAvailability(input({ resources: three, roundRobin: 'RANDOM', random: () => 0.5 }));
    assert.deepEqual(middle.availableTimes[0]!.resourceIds, ['r2']);
  });

  test('BALANCED takes the fewest booked minutes that week; ties go to the lowest id', () => {
    const week = '2026-W10';
    const fewest = computeAvailability(input({ resources: three, roundRobin: 'BALANCED', weeklyMinutes: { [week]: { r1: 120, r2: 60, r3: 90 } } }));
    assert.deepEqual(fewest.availableTimes[0]!.resourceIds, ['r2']);
    const tie = computeAvailability(input({ resources: three, roundRobin: 'BALANCED', weeklyMinutes: { [week]: { r1: 60, r2: 30, r3: 30 } } }));
    assert.deepEqual(tie.availableTimes[0]!.resourceIds, ['r2']);
    const none = computeAvailability(input({ resources: three, roundRobin: 'BALANCED', weeklyMinutes: { '2026-W11': { r1: 600 } } }));
    assert.deepEqual(none.availableTimes[0]!.resourceIds, ['r1'], 'another week\'s minutes do not count');
    const withUnits = computeAvailability(input({ service: capacity2, resources: three, roundRobin: 'BALANCED', appointments: [sameSlot('r1')] }));
    assert.equal(withUnits.availableTimes.find((s) => s.startTime.includes('T10:00'))!.remaining, 1);
  });
});

describe('time limits', () => {
  test('a slot starting exactly at now + bookInAdvance is offered; one minute earlier is not', () => {
    const advance = service({ bookInAdvance: 60 });
    const result = computeAvailability(input({ service: advance, now: at('09:00') }));
    assert.equal(starts(result)[0], '10:00');
    const almost = computeAvailability(input({ service: advance, now: at('09:01') }));
    assert.equal(starts(almost)[0], '11:00');
  });

  test('a slot starting now is offered; a slot that started is not', () => {
    assert.equal(starts(computeAvailability(input({ now: at('10:00') })))[0], '10:00');
    assert.equal(starts(computeAvailability(input({ now: at('10:00') + 1 })))[0], '11:00');
  });

  test('book-ahead: a slot starting exactly at the edge is offered, a later one is not', () => {
    const ahead = service({ bookAheadUnit: 'days', bookAheadValue: 1 });
    const result = computeAvailability(input({ service: ahead, now: at('12:00', '2026-03-01') }));
    assert.deepEqual(starts(result), ['09:00', '10:00', '11:00', '12:00']);
    const days = computeAvailability(input({ service: ahead, now: at('12:00', '2026-02-27'), startDate: DAY, endDate: DAY }));
    assert.deepEqual(days.availableDays[0], { date: DAY, available: false, reason: 'beyond the book-ahead period' });
  });

  test('a day wholly before the lead time says so', () => {
    const result = computeAvailability(input({ now: at('12:00', '2026-03-03') }));
    assert.deepEqual(result.availableDays[0], { date: DAY, available: false, reason: 'in the past or inside the minimum lead time' });
  });
});

describe('busy time', () => {
  test('overlapping busy times are merged, so a slot behind a short one is still found blocked by a long one', () => {
    const busy = [
      { resourceId: null, start: at('10:00'), end: at('13:00') },
      { resourceId: null, start: at('10:30'), end: at('10:45') },
    ];
    assert.deepEqual(starts(computeAvailability(input({ busy }))), ['09:00', '13:00', '14:00', '15:00', '16:00']);
  });

  test('busy time of another resource does not block; busy time of every resource (null) does', () => {
    const other = computeAvailability(input({ busy: [{ resourceId: 'r9', start: at('10:00'), end: at('11:00') }] }));
    assert.ok(starts(other).includes('10:00'));
    const mine = computeAvailability(input({ busy: [{ resourceId: 'r1', start: at('10:00'), end: at('11:00') }] }));
    assert.ok(!starts(mine).includes('10:00'));
  });

  test('external busy time counts unless ignoreExternalEvents (from the search or the service)', () => {
    const busy = [{ resourceId: 'r1', start: at('10:00'), end: at('11:00'), external: true }];
    assert.ok(!starts(computeAvailability(input({ busy }))).includes('10:00'));
    assert.ok(starts(computeAvailability(input({ busy, ignoreExternalEvents: true }))).includes('10:00'));
    assert.ok(starts(computeAvailability(input({ busy, service: service({ ignoreExternalEvents: true }) }))).includes('10:00'));
    assert.ok(!starts(computeAvailability(input({ busy, service: service({ ignoreExternalEvents: true }), ignoreExternalEvents: false }))).includes('10:00'), 'the search decides when it says');
  });
});

describe('interval helpers', () => {
  test('normalise sorts, merges overlapping and touching intervals, and drops empty ones', () => {
    assert.deepEqual(normalise([{ start: 30, end: 40 }, { start: 0, end: 10 }, { start: 5, end: 20 }, { start: 20, end: 25 }, { start: 50, end: 50 }]), [
      { start: 0, end: 25 },
      { start: 30, end: 40 },
    ]);
  });

  test('intersect keeps only the common parts', () => {
    assert.deepEqual(intersect([{ start: 0, end: 10 }, { start: 20, end: 30 }], [{ start: 5, end: 25 }]), [
      { start: 5, end: 10 },
      { start: 20, end: 25 },
    ]);
    assert.deepEqual(intersect([{ start: 0, end: 10 }], [{ start: 10, end: 20 }]), [], 'touching is not overlapping');
  });

  test('weeklyWindows reads each date\'s own weekday', () => {
    const mondays: WeeklySchedule = { mon: [{ start: '09:00', end: '10:00' }] };
    assert.deepEqual(weeklyWindows(mondays, 'UTC', '2026-03-01', '2026-03-03'), [{ start: at('09:00'), end: at('10:00') }]);
    assert.equal(at('10:00') - at('09:00'), 60 * MINUTE);
  });
});

describe('edges found by mutation testing', () => {
  test('padding that ends after a slot on a finer grid still blocks it (11:15 after 10:00-11:00 + 30)', () => {
    const quarter = service({ bookingInterval: 15 });
    const times = starts(computeAvailability(input({ service: quarter, appointments: [appointment('10:00', '11:00', { padding: 30 })] })));
    assert.ok(!times.includes('11:15'), times.join());
    assert.ok(times.includes('11:30'));
  });

  test('with padding allowed to overflow, slots still end inside the window', () => {
    const padded = service({ padding: 30, allowPaddingOverflow: true });
    assert.deepEqual(starts(computeAvailability(input({ service: padded }))), HOURS);
  });

  test('a same-service appointment with the same end but another start is not the same slot', () => {
    const two = service({ bookingsPerSlot: 2, bookingInterval: 30 });
    const times = starts(computeAvailability(input({ service: two, appointments: [appointment('09:30', '11:00')] })));
    assert.ok(!times.includes('10:00'), times.join());
  });

  test('allocations give capacity only to allocation services', () => {
    const withAllocations = [resource('r1', { allocations: [{ start: at('09:00'), end: at('17:00'), bookingsPerSlot: 3 }] })];
    assert.deepEqual(computeAvailability(input({ resources: withAllocations })).availableTimes.map((s) => s.remaining), HOURS.map(() => 1));
  });

  test('slots come in time order even when resources open at different hours', () => {
    const resources = [resource('r1', { weeklyAvailability: everyDay('14:00', '17:00') }), resource('r2', { weeklyAvailability: everyDay('09:00', '12:00') })];
    assert.deepEqual(starts(computeAvailability(input({ resources }))), ['09:00', '10:00', '11:00', '14:00', '15:00', '16:00']);
  });

  test('RANDOM with a random number of exactly 1 still picks a resource (the last)', () => {
    const three = [resource('r1'), resource('r2'), resource('r3')];
    assert.deepEqual(computeAvailability(input({ resources: three, roundRobin: 'RANDOM', random: () => 1 })).availableTimes[0]!.resourceIds, ['r3']);
  });

  test('a minutes limit below the duration closes a day with no bookings yet', () => {
    const tight = service({ dailyBookingLimitMinutes: 30 });
    assert.deepEqual(computeAvailability(input({ service: tight })).availableTimes, []);
  });

  test('BALANCED weeks are the location\'s local ISO weeks, written with two digits', () => {
    // Monday 9:00 in Auckland is still Sunday in UTC: the local week (W09) decides.
    const resources = [resource('r1'), resource('r2')];
    const result = computeAvailability(
      input({ timezoneName: 'Pacific/Auckland', startDate: '2026-02-23', endDate: '2026-02-23', resources, roundRobin: 'BALANCED', weeklyMinutes: { '2026-W09': { r1: 120, r2: 0 } } }),
    );
    assert.deepEqual(result.availableTimes[0]!.resourceIds, ['r2']);
  });

  test('book-ahead: unit none ignores a stray value; the edge is counted in UTC, whatever the process zone', () => {
    assert.equal(computeAvailability(input({ service: service({ bookAheadUnit: 'none', bookAheadValue: 3 }), now: at('00:00', '2026-02-01') })).availableTimes.length, 8);
    const before = Settings.defaultZone;
    Settings.defaultZone = 'America/New_York';
    try {
      // One day ahead of 7 March 12:00 UTC is 8 March 12:00 UTC (24 hours), though New York loses an hour that night.
      const ahead = service({ bookAheadUnit: 'days', bookAheadValue: 1 });
      const result = computeAvailability(input({ service: ahead, now: Date.parse('2026-03-07T12:00:00Z'), startDate: '2026-03-08', endDate: '2026-03-08' }));
      assert.equal(result.availableTimes.at(-1)!.startTime, '2026-03-08T12:00:00.000Z');
    } finally {
      Settings.defaultZone = before;
    }
  });

  test('a day whose end is exactly the earliest bookable instant is "inside the lead time"; one starting exactly at the book-ahead edge is not beyond it', () => {
    const lead = computeAvailability(input({ service: service({ bookInAdvance: 60 }), now: at('23:00') }));
    assert.equal(lead.availableDays[0]!.reason, 'in the past or inside the minimum lead time');
    const edge = computeAvailability(input({ service: service({ bookAheadUnit: 'days', bookAheadValue: 1 }), now: at('00:00', '2026-03-01') }));
    assert.equal(edge.availableDays[0]!.reason, 'no free time', 'only midnight is within reach, and nothing is open then');
  });
});

describe('more edges found by mutation testing', () => {
  test('capacity rule (slotOccupancy) scanned from the first appointment: one that ended before the slot, padding included, neither shares nor blocks it', () => {
    // Hold and reserve check a single slot this way, from index 0 (src/modules/appointments/service.ts).
    const slot = (start: string, end: string) => [at(start), at(end), at(end)] as const;
    assert.deepEqual(slotOccupancy([appointment('09:00', '10:00')], 0, 'svc', ...slot('11:00', '12:00')), { sharing: 0, blocked: false });
    const padded = [appointment('09:00', '10:00', { padding: 30 })];
    assert.deepEqual(slotOccupancy(padded, 0, 'svc', ...slot('10:30', '11:30')), { sharing: 0, blocked: false }, 'padding ending exactly at the slot start');
    assert.deepEqual(slotOccupancy(padded, 0, 'svc', ...slot('10:15', '11:15')), { sharing: 0, blocked: true }, 'padding reaching into the slot');
  });

  test('each slot of an allocation service takes the capacity of the allocation it starts in, whatever order the allocations come in', () => {
    const allocated = service({ availabilityType: 'allocation', bookingsPerSlot: 1 });
    const allocations = [
      { start: at('13:00'), end: at('14:00'), bookingsPerSlot: 4 },
      { start: at('09:00'), end: at('10:00'), bookingsPerSlot: 3 },
      { start: at('10:00'), end: at('11:00'), bookingsPerSlot: 2 },
    ];
    const result = computeAvailability(input({ service: allocated, resources: [resource('r1', { allocations })] }));
    assert.deepEqual(starts(result), ['09:00', '10:00', '13:00']);
    assert.deepEqual(result.availableTimes.map((s) => s.remaining), [3, 2, 4], 'back-to-back allocations keep their own capacity');
  });

  test("days reported in another zone keep the location's slot grid: a window open across the visitor's midnight starts no grid of its own", () => {
    // Kolkata (UTC+5:30) open around the clock, read in London on the day its clocks go forward
    // (29 March 2026, 23 hours): London's midnight is 05:30 in Kolkata, off the location's hourly grid.
    const kolkata = { timezoneName: 'Asia/Kolkata', locationWeekly: everyDay('00:00', '24:00') };
    const london = computeAvailability(input({ ...kolkata, reportZone: 'Europe/London', startDate: '2026-03-29', endDate: '2026-03-29' }));
    const own = [
      ...computeAvailability(input({ ...kolkata, startDate: '2026-03-29', endDate: '2026-03-29' })).availableTimes,
      ...computeAvailability(input({ ...kolkata, startDate: '2026-03-30', endDate: '2026-03-30' })).availableTimes,
    ].map((s) => s.startTime);
    const shown = london.availableTimes.map((s) => s.startTime);
    assert.equal(shown.length, 23, 'one slot for each hour of the 23-hour London day');
    assert.equal(shown[0], '2026-03-29T00:30:00.000Z', "06:00 in Kolkata, the first of its hours after London's midnight");
    assert.equal(shown.at(-1), '2026-03-29T22:30:00.000Z');
    assert.deepEqual(shown.filter((start) => !own.includes(start)), [], "every slot is one the location's own days offer (and a hold accepts)");
  });

  test("daily limits (dailyBookingLimitCount) count the location's local day, also when days are reported in another zone", () => {
    // 3 March in Auckland (UTC+13) runs from 2 March 11:00 to 3 March 11:00 UTC; the location is in UTC.
    const limited = service({ dailyBookingLimitCount: 1 });
    const result = computeAvailability(
      input({ service: limited, reportZone: 'Pacific/Auckland', startDate: '2026-03-03', endDate: '2026-03-03', dailyUsage: { [DAY]: { count: 1, minutes: 60 } } }),
    );
    assert.deepEqual(
      result.availableTimes.map((s) => s.startTime),
      ['2026-03-03T09:00:00.000Z', '2026-03-03T10:00:00.000Z'],
      'the slots on 2 March UTC are on a full location day',
    );
    assert.deepEqual(result.availableDays, [{ date: '2026-03-03', available: true, reason: null }]);
  });

  test('a day closed by a holiday says so and names the holiday', () => {
    const closed = { resourceId: null, start: at('00:00'), end: at('00:00', '2026-03-03') };
    const result = computeAvailability(
      input({ endDate: '2026-03-03', busy: [closed], holidays: [{ date: DAY, name: 'Founders Day' }, { date: '2026-03-04', name: 'Other Day' }] }),
    );
    assert.deepEqual(result.availableDays, [
      { date: DAY, available: false, reason: 'holiday', holidayName: 'Founders Day' },
      { date: '2026-03-03', available: true, reason: null },
    ]);
  });
});
