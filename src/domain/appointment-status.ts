/**
 * What each appointment status counts for: the one home of these rules. The availability search,
 * booking's slot and limit checks and the unavailability calendar all ask these functions, and the
 * SQL that selects appointments for them (src/modules/availability/status-filter.ts) is built from
 * the same status lists, so the two cannot drift.
 *
 * Specification, States and transitions: IN is a hold, and "expired IN holds are ignored when
 * counting active caps"; an IN without an expiry is treated as expired. A hold therefore counts,
 * under every rule here that lists IN, only while its expiry is still ahead.
 */

/** IN hold, RS reserved, BK booked, CN cancelled, RE rescheduled away (States and transitions). */
export const APPOINTMENT_STATUSES = ['IN', 'RS', 'BK', 'CN', 'RE'] as const;

export type AppointmentStatus = (typeof APPOINTMENT_STATUSES)[number];

/** The status of a hold: it counts only until it expires. */
export const HOLD_STATUS: AppointmentStatus = 'IN';

/**
 * Capacity (bookingsPerSlot, the resource's time, the service's daily limits): BK, RS and
 * unexpired IN take their slot; CN and RE give it back.
 */
export const CAPACITY_STATUSES: readonly AppointmentStatus[] = ['IN', 'RS', 'BK'];

/** bookingLimit (service fields table): "statuses BK and IN; RS not counted". */
export const BOOKING_LIMIT_STATUSES: readonly AppointmentStatus[] = ['IN', 'BK'];

/**
 * maxBookingLimit and maxResourceBookingLimit (service fields table): lifetime caps where
 * "appointments in status RE do not count"; CN does count (a cancelled booking was a booking).
 */
export const LIFETIME_LIMIT_STATUSES: readonly AppointmentStatus[] = ['IN', 'RS', 'BK', 'CN'];

/** An appointment's status and, for a hold, when it expires (epoch ms; null: no expiry). */
export interface StatusAt {
  status: AppointmentStatus;
  expiresAt: number | null;
}

/**
 * Whether an appointment counts under a rule given as its statuses: its status is listed and, for
 * a hold, it has not expired at `now` (a hold expiring exactly now has expired).
 */
export function countsUnder(statuses: readonly AppointmentStatus[], appointment: StatusAt, now: number): boolean {
  if (!statuses.includes(appointment.status)) return false;
  if (appointment.status !== HOLD_STATUS) return true;
  return (appointment.expiresAt ?? now) > now;
}

/** Capacity (bookingsPerSlot): the appointment takes its slot and resources (BK, RS, unexpired IN). */
export function holdsCapacity(appointment: StatusAt, now: number): boolean {
  return countsUnder(CAPACITY_STATUSES, appointment, now);
}

/** bookingLimit: the appointment is one of the customer's active ones (BK, unexpired IN; RS not counted). */
export function countsForBookingLimit(appointment: StatusAt, now: number): boolean {
  return countsUnder(BOOKING_LIMIT_STATUSES, appointment, now);
}

/**
 * maxBookingLimit and maxResourceBookingLimit: the appointment uses up a lifetime cap (everything
 * but RE; an expired hold never became a booking, so it does not use one up either).
 */
export function countsForLifetimeLimits(appointment: StatusAt, now: number): boolean {
  return countsUnder(LIFETIME_LIMIT_STATUSES, appointment, now);
}
