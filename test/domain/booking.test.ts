// The pure booking rules (src/domain/booking.ts) at their edges: every row of the States and
// transitions table, a hold expiring exactly now, the duration rules, a start exactly at the lead
// time and exactly at the book-ahead edge, and each booking limit one below and at its value.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { DateTime, Settings } from 'luxon';
import { TRANSITIONS, leadTimeProblem, limitProblem, resolveDuration, transitionProblem } from '../../src/domain/booking.js';
import type { AppointmentStatus, LimitRules, Operation } from '../../src/domain/booking.js';

const NOW = Date.UTC(2026, 10, 24, 12, 0, 0);
const MINUTE = 60_000;
const STATUSES: AppointmentStatus[] = ['IN', 'RS', 'BK', 'CN', 'RE'];

describe('States and transitions', () => {
  const allowed: Record<Operation, AppointmentStatus[]> = {
    reserve: ['IN'],
    book: ['IN', 'RS'],
    confirm: ['BK', 'RS'],
    cancel: ['BK', 'RS'],
    reschedule: ['BK'],
    delete: ['IN'],
  };
  const codes: Record<Operation, string> = { reserve: 'BOOKING-117', book: 'BOOKING-108', confirm: 'BOOKING-406', cancel: 'BOOKING-125', reschedule: 'BOOKING-126', delete: 'BOOKING-132' };
  const messages: Record<Operation, string> = {
    reserve: 'Only an appointment in status IN can be reserved',
    book: 'Only an appointment in status IN (held) or RS (reserved) can be booked',
    confirm: 'Only an appointment in status BK or RS can be confirmed',
    cancel: 'Only an appointment in status BK or RS can be cancelled',
    reschedule: 'Only an appointment in status BK can be rescheduled',
    delete: 'Only an appointment in status IN can be deleted',
  };

  for (const operation of Object.keys(allowed) as Operation[]) {
    for (const status of STATUSES) {
      const ok = allowed[operation].includes(status);
      test(`${operation} from ${status}: ${ok ? 'allowed' : `refused with ${codes[operation]}`}`, () => {
        const problem = transitionProblem(operation, status, null, NOW);
        if (ok) assert.equal(problem, null);
        else assert.deepEqual(problem, { path: null, msg: `${messages[operation]}; this one is ${status}`, code: codes[operation] });
      });
    }
  }

  test('the table is exactly the specification\'s', () => {
    for (const operation of Object.keys(allowed) as Operation[]) assert.deepEqual(TRANSITIONS[operation].from, allowed[operation]);
  });

  for (const operation of ['book', 'reserve'] as const) {
    test(`${operation} of a hold: refused (BOOKING-111) when it expires exactly now or earlier, allowed a millisecond before`, () => {
      const expired = { path: null, msg: 'The hold has expired; hold the slot again', code: 'BOOKING-111' };
      assert.deepEqual(transitionProblem(operation, 'IN', NOW, NOW), expired);
      assert.deepEqual(transitionProblem(operation, 'IN', NOW - 1, NOW), expired);
      assert.equal(transitionProblem(operation, 'IN', NOW + 1, NOW), null);
      assert.equal(transitionProblem(operation, 'IN', null, NOW), null, 'a hold without expiry never expires');
    });
  }

  test('an expired hold can still be deleted; expiry means nothing to a reservation', () => {
    assert.equal(transitionProblem('delete', 'IN', NOW - MINUTE, NOW), null);
    assert.equal(transitionProblem('book', 'RS', NOW - MINUTE, NOW), null);
    assert.equal(transitionProblem('cancel', 'RS', NOW - MINUTE, NOW), null);
  });
});

describe('duration rules', () => {
  const fixed = { duration: 60, durationSelect: false, durationMin: null, durationMax: null, durationInterval: null };
  const select = { duration: 60, durationSelect: true, durationMin: 30, durationMax: 120, durationInterval: 15 };
  const slot = (minutes: number) => [NOW, NOW + minutes * MINUTE] as const;

  test('the service duration is accepted with or without an explicit matching duration', () => {
    assert.equal(resolveDuration(fixed, ...slot(60), undefined), 60);
    assert.equal(resolveDuration(fixed, ...slot(60), 60), 60);
  });

  test('an end not after the start, or not a whole number of minutes after it, is BOOKING-102 on endTime', () => {
    const problem = { path: 'Unavailability.endTime', msg: 'endTime must be a whole number of minutes after startTime', code: 'BOOKING-102' };
    assert.deepEqual(resolveDuration(fixed, NOW, NOW, undefined), problem);
    assert.deepEqual(resolveDuration(fixed, NOW, NOW - MINUTE, undefined), problem);
    assert.deepEqual(resolveDuration(fixed, NOW, NOW + 90_000, undefined), problem);
    assert.equal(resolveDuration({ ...fixed, duration: 1 }, NOW, NOW + MINUTE, undefined), 1, 'one minute is a whole minute');
  });

  test('a duration that disagrees with the slot is BOOKING-102 on duration', () => {
    assert.deepEqual(resolveDuration(fixed, ...slot(60), 45), { path: 'duration', msg: 'duration 45 does not match the slot (60 minutes from startTime to endTime)', code: 'BOOKING-102' });
  });

  test('another duration needs durationSelect (BOOKING-140)', () => {
    assert.deepEqual(resolveDuration(fixed, ...slot(45), undefined), {
      path: 'duration',
      msg: "The service's duration is 60 minutes; another duration is allowed only when the service's durationSelect is true",
      code: 'BOOKING-140',
    });
  });

  test('durationMin and durationMax are inclusive (BOOKING-141 one minute outside)', () => {
    assert.equal(resolveDuration(select, ...slot(30), undefined), 30);
    assert.equal(resolveDuration(select, ...slot(120), undefined), 120);
    assert.deepEqual(resolveDuration(select, ...slot(29), undefined), { path: 'duration', msg: "duration 29 must lie between the service's durationMin 30 and durationMax 120", code: 'BOOKING-141' });
    assert.deepEqual(resolveDuration(select, ...slot(121), undefined), { path: 'duration', msg: "duration 121 must lie between the service's durationMin 30 and durationMax 120", code: 'BOOKING-141' });
  });

  test('the steps count from durationMin, not from zero', () => {
    const offset = { duration: 20, durationSelect: true, durationMin: 20, durationMax: 80, durationInterval: 15 };
    assert.equal(resolveDuration(offset, ...slot(35), undefined), 35);
    assert.equal(resolveDuration(offset, ...slot(65), undefined), 65);
    assert.equal((resolveDuration(offset, ...slot(30), undefined) as { code: string }).code, 'BOOKING-142');
  });

  test('the duration is durationMin plus a multiple of durationInterval (BOOKING-142)', () => {
    assert.equal(resolveDuration(select, ...slot(45), undefined), 45);
    assert.equal(resolveDuration(select, ...slot(105), undefined), 105);
    assert.deepEqual(resolveDuration(select, ...slot(50), undefined), {
      path: 'duration',
      msg: "duration 50 must be durationMin 30 plus a multiple of the service's durationInterval (15 minutes)",
      code: 'BOOKING-142',
    });
  });

  test('without durationMin, durationMax or durationInterval, the service duration bounds both ends and any minute steps', () => {
    const open = { duration: 60, durationSelect: true, durationMin: null, durationMax: null, durationInterval: null };
    assert.equal(resolveDuration(open, ...slot(60), undefined), 60);
    assert.equal((resolveDuration(open, ...slot(61), undefined) as { code: string }).code, 'BOOKING-141');
    assert.equal((resolveDuration(open, ...slot(59), undefined) as { code: string }).code, 'BOOKING-141');
    const range = { ...open, durationMin: 10, durationMax: 90 };
    assert.equal(resolveDuration(range, ...slot(11), undefined), 11, 'interval 1 by default');
    assert.equal(resolveDuration({ ...open, durationMax: 90 }, ...slot(75), undefined), 75, 'min defaults to the duration');
    assert.equal((resolveDuration({ ...open, durationMin: 30 }, ...slot(61), undefined) as { code: string }).code, 'BOOKING-141', 'max defaults to the duration');
  });
});

describe('lead time and book-ahead', () => {
  const rules = { bookInAdvance: 0, bookAheadUnit: 'none' as const, bookAheadValue: null };

  test('a start in the past is BOOKING-103; exactly now is not in the past', () => {
    assert.deepEqual(leadTimeProblem(rules, NOW - 1, NOW), { path: 'Unavailability.startTime', msg: 'startTime is in the past', code: 'BOOKING-103' });
    assert.equal(leadTimeProblem(rules, NOW, NOW), null);
  });

  test('a start exactly at the lead time is allowed; a millisecond sooner is BOOKING-104', () => {
    const advance = { ...rules, bookInAdvance: 120 };
    assert.equal(leadTimeProblem(advance, NOW + 120 * MINUTE, NOW), null);
    assert.deepEqual(leadTimeProblem(advance, NOW + 120 * MINUTE - 1, NOW), {
      path: 'Unavailability.startTime',
      msg: 'The service must be booked at least 120 minutes in advance',
      code: 'BOOKING-104',
    });
  });

  for (const [unit, value] of [['days', 3], ['weeks', 2], ['months', 1]] as const) {
    test(`book-ahead of ${value} ${unit}: exactly at the edge is allowed, a millisecond past it is BOOKING-100`, () => {
      const ahead = { ...rules, bookAheadUnit: unit, bookAheadValue: value };
      const edge = DateTime.fromMillis(NOW, { zone: 'UTC' }).plus({ [unit]: value }).toMillis();
      assert.equal(leadTimeProblem(ahead, edge, NOW), null);
      assert.deepEqual(leadTimeProblem(ahead, edge + 1, NOW), { path: 'Unavailability.startTime', msg: `The service can be booked at most ${value} ${unit} ahead`, code: 'BOOKING-100' });
    });
  }

  test('book-ahead with unit none, or a value of 0 or null, sets no limit', () => {
    const far = NOW + 5 * 365 * 24 * 60 * MINUTE;
    assert.equal(leadTimeProblem({ ...rules, bookAheadUnit: 'none', bookAheadValue: 1 }, far, NOW), null);
    assert.equal(leadTimeProblem({ ...rules, bookAheadUnit: 'days', bookAheadValue: 0 }, far, NOW), null);
    assert.equal(leadTimeProblem({ ...rules, bookAheadUnit: 'days', bookAheadValue: null }, far, NOW), null);
  });

  test('book-ahead is counted in UTC days, whatever the zone the process runs in', () => {
    const before = Settings.defaultZone;
    // A day ahead across New York's spring-forward night is 24 hours in UTC, 23 in New York.
    Settings.defaultZone = 'America/New_York';
    try {
      const now = Date.UTC(2026, 2, 7, 12);
      const ahead = { ...rules, bookAheadUnit: 'days' as const, bookAheadValue: 1 };
      assert.equal(leadTimeProblem(ahead, now + 24 * 60 * MINUTE, now), null);
      assert.equal(leadTimeProblem(ahead, now + 24 * 60 * MINUTE + 1, now)?.code, 'BOOKING-100');
    } finally {
      Settings.defaultZone = before;
    }
  });

  test('a month ahead is a calendar month, not 30 days', () => {
    const jan31 = Date.UTC(2027, 0, 31, 12);
    const ahead = { ...rules, bookAheadUnit: 'months' as const, bookAheadValue: 1 };
    // 31 January plus one month is 28 February (Luxon clamps to the month's end).
    assert.equal(leadTimeProblem(ahead, Date.UTC(2027, 1, 28, 12), jan31), null);
    assert.equal(leadTimeProblem(ahead, Date.UTC(2027, 1, 28, 12) + 1, jan31)?.code, 'BOOKING-100');
  });
});

describe('booking limits', () => {
  const none: LimitRules = { bookingLimit: 0, maxBookingLimit: 0, maxResourceBookingLimit: 0, dailyBookingLimitCount: 0, dailyBookingLimitMinutes: 0 };
  const usage = (day: { count: number; minutes: number }, customer: Partial<{ activeCount: number; lifetimeCount: number; lifetimeByResource: Record<string, number>; activeByResource: Record<string, number> }> | null = null) => ({
    day,
    customer: customer && { activeCount: 0, lifetimeCount: 0, lifetimeByResource: {}, activeByResource: {}, ...customer },
  });
  const empty = { count: 0, minutes: 0 };
  const r1 = { id: 'r1', bookingLimit: 0 };

  test('no limits (every value 0): nothing is refused, however much is booked', () => {
    assert.equal(limitProblem(none, [r1], usage({ count: 999, minutes: 99_999 }, { activeCount: 99, lifetimeCount: 99, lifetimeByResource: { r1: 99 }, activeByResource: { r1: 99 } }), 60, true), null);
  });

  test('daily count: one below the limit books, at the limit BOOKING-106', () => {
    const rules = { ...none, dailyBookingLimitCount: 3 };
    assert.equal(limitProblem(rules, [], usage({ count: 2, minutes: 0 }), 60, true), null);
    assert.deepEqual(limitProblem(rules, [], usage({ count: 3, minutes: 0 }), 60, true), { path: null, msg: "The service's daily booking limit (3) is reached on that day", code: 'BOOKING-106' });
  });

  test('daily minutes: exactly the minutes left books; one minute more is BOOKING-106 saying what is left', () => {
    const rules = { ...none, dailyBookingLimitMinutes: 120 };
    assert.equal(limitProblem(rules, [], usage({ count: 1, minutes: 60 }), 60, true), null);
    assert.deepEqual(limitProblem(rules, [], usage({ count: 1, minutes: 61 }), 60, true), {
      path: null,
      msg: "The service's daily limit of 120 booked minutes leaves 59 minutes on that day",
      code: 'BOOKING-106',
    });
    assert.match(limitProblem(rules, [], usage({ count: 3, minutes: 150 }), 30, true)!.msg, /leaves 0 minutes/, 'never a negative number of minutes');
  });

  test('without a customer yet (a public hold), customer limits wait; daily limits still apply', () => {
    const rules = { ...none, bookingLimit: 1, maxBookingLimit: 1, maxResourceBookingLimit: 1 };
    assert.equal(limitProblem(rules, [r1], usage(empty, null), 60, true), null);
    assert.equal(limitProblem({ ...rules, dailyBookingLimitCount: 1 }, [r1], usage({ count: 1, minutes: 60 }, null), 60, true)?.code, 'BOOKING-106');
  });

  test('bookingLimit counts active appointments: below books, at the limit BOOKING-113 on CustomerId; a reservation is not counted', () => {
    const rules = { ...none, bookingLimit: 2 };
    assert.equal(limitProblem(rules, [], usage(empty, { activeCount: 1 }), 60, true), null);
    assert.deepEqual(limitProblem(rules, [], usage(empty, { activeCount: 2 }), 60, true), {
      path: 'CustomerId',
      msg: 'The customer already has 2 active appointments of this service (limit 2)',
      code: 'BOOKING-113',
    });
    assert.equal(limitProblem(rules, [], usage(empty, { activeCount: 2 }), 60, false), null, 'RS does not count for bookingLimit');
  });

  test('maxBookingLimit counts every appointment ever, reservations included', () => {
    const rules = { ...none, maxBookingLimit: 3 };
    assert.equal(limitProblem(rules, [], usage(empty, { lifetimeCount: 2 }), 60, true), null);
    const problem = { path: 'CustomerId', msg: "The customer has reached the service's lifetime limit of 3 appointments", code: 'BOOKING-113' };
    assert.deepEqual(limitProblem(rules, [], usage(empty, { lifetimeCount: 3 }), 60, true), problem);
    assert.deepEqual(limitProblem(rules, [], usage(empty, { lifetimeCount: 3 }), 60, false), problem);
  });

  test('maxResourceBookingLimit is per resource, on ResourceIds, and only for the resources booked', () => {
    const rules = { ...none, maxResourceBookingLimit: 2 };
    const customer = { lifetimeByResource: { r1: 2, r2: 1 } };
    assert.equal(limitProblem(rules, [{ id: 'r2', bookingLimit: 0 }], usage(empty, customer), 60, true), null);
    assert.equal(limitProblem(rules, [], usage(empty, customer), 60, true), null, 'a pool booking names no resource yet');
    assert.deepEqual(limitProblem(rules, [{ id: 'r2', bookingLimit: 0 }, r1], usage(empty, customer), 60, false), {
      path: 'ResourceIds',
      msg: "The customer has reached the service's lifetime limit of 2 appointments with resource r1",
      code: 'BOOKING-113',
    });
  });

  test("a resource's own bookingLimit counts the customer's active appointments with it; reservations are not counted", () => {
    const limited = { id: 'r1', bookingLimit: 1 };
    assert.equal(limitProblem(none, [limited], usage(empty, { activeByResource: { r1: 0 } }), 60, true), null);
    assert.equal(limitProblem(none, [limited], usage(empty, {}), 60, true), null, 'no usage recorded is zero');
    assert.deepEqual(limitProblem(none, [limited], usage(empty, { activeByResource: { r1: 1 } }), 60, true), {
      path: 'ResourceIds',
      msg: 'The customer already has 1 active appointments with resource r1 (limit 1)',
      code: 'BOOKING-113',
    });
    assert.equal(limitProblem(none, [limited], usage(empty, { activeByResource: { r1: 1 } }), 60, false), null);
    assert.equal(limitProblem(none, [{ id: 'r1', bookingLimit: 0 }], usage(empty, { activeByResource: { r1: 5 } }), 60, true), null, '0 is unlimited');
  });

  test('the first limit reached is reported, in the table\'s order', () => {
    const all = { bookingLimit: 1, maxBookingLimit: 1, maxResourceBookingLimit: 1, dailyBookingLimitCount: 1, dailyBookingLimitMinutes: 60 };
    const full = usage({ count: 1, minutes: 60 }, { activeCount: 1, lifetimeCount: 1, lifetimeByResource: { r1: 1 }, activeByResource: { r1: 1 } });
    assert.match(limitProblem(all, [{ id: 'r1', bookingLimit: 1 }], full, 60, true)!.msg, /daily booking limit/);
    assert.match(limitProblem({ ...all, dailyBookingLimitCount: 0 }, [r1], full, 60, true)!.msg, /daily limit of 60 booked minutes/);
    assert.match(limitProblem({ ...all, dailyBookingLimitCount: 0, dailyBookingLimitMinutes: 0 }, [r1], full, 60, true)!.msg, /active appointments of this service/);
    assert.match(limitProblem({ ...all, dailyBookingLimitCount: 0, dailyBookingLimitMinutes: 0, bookingLimit: 0 }, [r1], full, 60, true)!.msg, /lifetime limit of 1 appointments$/);
  });
});
