// What each status counts for (src/domain/appointment-status.ts): every status under every rule,
// and for each a hold expiring in the future, exactly now, in the past and never (null). A status
// other than IN counts the same whatever its expiresAt says.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  APPOINTMENT_STATUSES,
  BOOKING_LIMIT_STATUSES,
  CAPACITY_STATUSES,
  HOLD_STATUS,
  LIFETIME_LIMIT_STATUSES,
  countsForBookingLimit,
  countsForLifetimeLimits,
  countsUnder,
  holdsCapacity,
} from '../../src/domain/appointment-status.js';
import type { AppointmentStatus, StatusAt } from '../../src/domain/appointment-status.js';

const NOW = Date.UTC(2026, 10, 24, 12, 0, 0);
const EXPIRY = { future: NOW + 1, now: NOW, past: NOW - 1, none: null } as const;
type Expiry = keyof typeof EXPIRY;

/** true: counts whatever the expiry; 'unexpired': counts only while its expiry is ahead; false: never. */
type Counts = boolean | 'unexpired';

const RULES: Array<{ name: string; fn: (a: StatusAt, now: number) => boolean; statuses: readonly AppointmentStatus[]; expected: Record<AppointmentStatus, Counts> }> = [
  { name: 'holdsCapacity', fn: holdsCapacity, statuses: CAPACITY_STATUSES, expected: { IN: 'unexpired', RS: true, BK: true, CN: false, RE: false } },
  { name: 'countsForBookingLimit', fn: countsForBookingLimit, statuses: BOOKING_LIMIT_STATUSES, expected: { IN: 'unexpired', RS: false, BK: true, CN: false, RE: false } },
  { name: 'countsForLifetimeLimits', fn: countsForLifetimeLimits, statuses: LIFETIME_LIMIT_STATUSES, expected: { IN: 'unexpired', RS: true, BK: true, CN: true, RE: false } },
];

function expectedFor(counts: Counts, expiry: Expiry): boolean {
  return counts === 'unexpired' ? expiry === 'future' : counts;
}

describe('appointment statuses', () => {
  test('the statuses of States and transitions, IN being the hold', () => {
    assert.deepEqual([...APPOINTMENT_STATUSES], ['IN', 'RS', 'BK', 'CN', 'RE']);
    assert.equal(HOLD_STATUS, 'IN');
  });

  for (const rule of RULES) {
    describe(rule.name, () => {
      test('its status list is exactly the statuses that can count', () => {
        const counting = APPOINTMENT_STATUSES.filter((status) => rule.expected[status] !== false);
        assert.deepEqual([...rule.statuses].sort(), [...counting].sort());
      });

      for (const status of APPOINTMENT_STATUSES) {
        for (const expiry of Object.keys(EXPIRY) as Expiry[]) {
          const want = expectedFor(rule.expected[status], expiry);
          test(`${status} with expiresAt ${expiry}: ${want ? 'counts' : 'does not count'}`, () => {
            const appointment = { status, expiresAt: EXPIRY[expiry] };
            assert.equal(rule.fn(appointment, NOW), want);
            assert.equal(countsUnder(rule.statuses, appointment, NOW), want);
          });
        }
      }
    });
  }

  test('countsUnder: only the listed statuses count; an empty list counts nothing', () => {
    assert.equal(countsUnder(['RE'], { status: 'RE', expiresAt: null }, NOW), true);
    assert.equal(countsUnder(['RE'], { status: 'BK', expiresAt: null }, NOW), false);
    assert.equal(countsUnder([], { status: 'IN', expiresAt: NOW + 60_000 }, NOW), false);
  });

  test('a hold counts until the millisecond it expires, whatever the clock', () => {
    for (const now of [0, NOW, -1_000]) {
      assert.equal(holdsCapacity({ status: 'IN', expiresAt: now + 1 }, now), true);
      assert.equal(holdsCapacity({ status: 'IN', expiresAt: now }, now), false);
      assert.equal(holdsCapacity({ status: 'IN', expiresAt: null }, now), false);
    }
  });
});
