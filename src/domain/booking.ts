import { DateTime } from 'luxon';
import type { CustomerUsage } from './availability.js';
import type { AppointmentStatus } from './appointment-status.js';

/**
 * Booking rules that are functions of their inputs: the States and transitions table, the duration
 * rules (overrideDuration, BOOKING-140 to 142), lead time and book-ahead, and the booking limits of
 * the service fields table. Whether the slot itself is free is the availability engine's answer
 * (src/domain/availability.ts), run for the one slot inside the booking transaction.
 */

export type { AppointmentStatus };

export interface BookingProblem {
  /** The field the problem is about, for errors[].path; null when it is not about one field. */
  path: string | null;
  msg: string;
  code: string;
}

export type Operation = 'reserve' | 'book' | 'confirm' | 'cancel' | 'reschedule' | 'delete';

/** States and transitions: which statuses each operation accepts, and the refusal otherwise. */
export const TRANSITIONS: Record<Operation, { from: AppointmentStatus[]; code: string; msg: string }> = {
  reserve: { from: ['IN'], code: 'BOOKING-117', msg: 'Only an appointment in status IN can be reserved' },
  book: { from: ['IN', 'RS'], code: 'BOOKING-108', msg: 'Only an appointment in status IN (held) or RS (reserved) can be booked' },
  confirm: { from: ['BK', 'RS'], code: 'BOOKING-406', msg: 'Only an appointment in status BK or RS can be confirmed' },
  cancel: { from: ['BK', 'RS'], code: 'BOOKING-125', msg: 'Only an appointment in status BK or RS can be cancelled' },
  reschedule: { from: ['BK'], code: 'BOOKING-126', msg: 'Only an appointment in status BK can be rescheduled' },
  delete: { from: ['IN'], code: 'BOOKING-132', msg: 'Only an appointment in status IN can be deleted' },
};

/** The refusal of `operation` on an appointment in `status` that expires at `expiresAt`, or null. */
export function transitionProblem(operation: Operation, status: AppointmentStatus, expiresAt: number | null, now: number): BookingProblem | null {
  const rule = TRANSITIONS[operation];
  if (!rule.from.includes(status)) return { path: null, msg: `${rule.msg}; this one is ${status}`, code: rule.code };
  // An expired hold has given its time back: it can be deleted, but not reserved or booked.
  if (status === 'IN' && (operation === 'book' || operation === 'reserve') && expiresAt !== null && expiresAt <= now) {
    return { path: null, msg: 'The hold has expired; hold the slot again', code: 'BOOKING-111' };
  }
  return null;
}

export interface DurationRules {
  duration: number;
  durationSelect: boolean;
  durationMin: number | null;
  durationMax: number | null;
  durationInterval: number | null;
}

/**
 * The appointment's length in minutes from the requested slot, or the problem with it. The slot's
 * end must be `duration` minutes after its start when both are given. A duration other than the
 * service's needs the service's durationSelect (BOOKING-140), must lie in durationMin..durationMax
 * (BOOKING-141) and be durationMin plus a multiple of durationInterval (BOOKING-142).
 */
export function resolveDuration(service: DurationRules, startMs: number, endMs: number, requested: number | undefined): number | BookingProblem {
  const slotMinutes = (endMs - startMs) / 60_000;
  if (!(endMs > startMs) || !Number.isInteger(slotMinutes)) {
    return { path: 'Unavailability.endTime', msg: 'endTime must be a whole number of minutes after startTime', code: 'BOOKING-102' };
  }
  if (requested !== undefined && requested !== slotMinutes) {
    return { path: 'duration', msg: `duration ${requested} does not match the slot (${slotMinutes} minutes from startTime to endTime)`, code: 'BOOKING-102' };
  }
  const minutes = slotMinutes;
  if (minutes === service.duration) return minutes;
  if (!service.durationSelect) {
    return { path: 'duration', msg: `The service's duration is ${service.duration} minutes; another duration is allowed only when the service's durationSelect is true`, code: 'BOOKING-140' };
  }
  const min = service.durationMin ?? service.duration;
  const max = service.durationMax ?? service.duration;
  if (minutes < min || minutes > max) {
    return { path: 'duration', msg: `duration ${minutes} must lie between the service's durationMin ${min} and durationMax ${max}`, code: 'BOOKING-141' };
  }
  const interval = service.durationInterval ?? 1;
  if ((minutes - min) % interval !== 0) {
    return { path: 'duration', msg: `duration ${minutes} must be durationMin ${min} plus a multiple of the service's durationInterval (${interval} minutes)`, code: 'BOOKING-142' };
  }
  return minutes;
}

export interface LeadTimeRules {
  bookInAdvance: number;
  bookAheadUnit: 'none' | 'days' | 'weeks' | 'months';
  bookAheadValue: number | null;
}

/** Start in the past (BOOKING-103), inside the minimum lead time (BOOKING-104), beyond book-ahead (BOOKING-100). */
export function leadTimeProblem(service: LeadTimeRules, startMs: number, now: number): BookingProblem | null {
  if (startMs < now) return { path: 'Unavailability.startTime', msg: 'startTime is in the past', code: 'BOOKING-103' };
  if (startMs < now + service.bookInAdvance * 60_000) {
    return { path: 'Unavailability.startTime', msg: `The service must be booked at least ${service.bookInAdvance} minutes in advance`, code: 'BOOKING-104' };
  }
  if (service.bookAheadUnit !== 'none' && service.bookAheadValue) {
    const latest = DateTime.fromMillis(now, { zone: 'UTC' }).plus({ [service.bookAheadUnit]: service.bookAheadValue }).toMillis();
    if (startMs > latest) {
      return { path: 'Unavailability.startTime', msg: `The service can be booked at most ${service.bookAheadValue} ${service.bookAheadUnit} ahead`, code: 'BOOKING-100' };
    }
  }
  return null;
}

export interface LimitRules {
  bookingLimit: number;
  maxBookingLimit: number;
  maxResourceBookingLimit: number;
  dailyBookingLimitCount: number;
  dailyBookingLimitMinutes: number;
}

/** What already counts against the limits, leaving out the appointment being changed. */
export interface LimitUsage {
  /** The service's appointments that hold capacity (holdsCapacity) on the slot's local day. */
  day: { count: number; minutes: number };
  /** null when the appointment has no customer yet (a public hold): customer limits wait for the customer. */
  customer: CustomerUsage | null;
}

/**
 * The booking limits of the service fields table (0 means unlimited):
 * - dailyBookingLimitCount, dailyBookingLimitMinutes: service-wide per local day (BOOKING-106);
 * - bookingLimit: the customer's active appointments of the service (countsForBookingLimit: BK and unexpired IN);
 * - maxBookingLimit: the customer's appointments of the service ever (countsForLifetimeLimits: not RE);
 * - maxResourceBookingLimit: the same per resource; the resource's own bookingLimit: active per resource.
 * `countsAsActive` is false for an appointment that will be RS (reserve), which bookingLimit does not count.
 */
export function limitProblem(
  service: LimitRules,
  resources: Array<{ id: string; bookingLimit: number }>,
  usage: LimitUsage,
  duration: number,
  countsAsActive: boolean,
): BookingProblem | null {
  if (service.dailyBookingLimitCount > 0 && usage.day.count >= service.dailyBookingLimitCount) {
    return { path: null, msg: `The service's daily booking limit (${service.dailyBookingLimitCount}) is reached on that day`, code: 'BOOKING-106' };
  }
  if (service.dailyBookingLimitMinutes > 0 && service.dailyBookingLimitMinutes - usage.day.minutes < duration) {
    const left = Math.max(0, service.dailyBookingLimitMinutes - usage.day.minutes);
    return { path: null, msg: `The service's daily limit of ${service.dailyBookingLimitMinutes} booked minutes leaves ${left} minutes on that day`, code: 'BOOKING-106' };
  }
  const customer = usage.customer;
  if (!customer) return null;
  if (countsAsActive && service.bookingLimit > 0 && customer.activeCount >= service.bookingLimit) {
    return { path: 'CustomerId', msg: `The customer already has ${customer.activeCount} active appointments of this service (limit ${service.bookingLimit})`, code: 'BOOKING-113' };
  }
  if (service.maxBookingLimit > 0 && customer.lifetimeCount >= service.maxBookingLimit) {
    return { path: 'CustomerId', msg: `The customer has reached the service's lifetime limit of ${service.maxBookingLimit} appointments`, code: 'BOOKING-113' };
  }
  for (const resource of resources) {
    const lifetime = customer.lifetimeByResource[resource.id] ?? 0;
    if (service.maxResourceBookingLimit > 0 && lifetime >= service.maxResourceBookingLimit) {
      return { path: 'ResourceIds', msg: `The customer has reached the service's lifetime limit of ${service.maxResourceBookingLimit} appointments with resource ${resource.id}`, code: 'BOOKING-113' };
    }
    const active = customer.activeByResource[resource.id] ?? 0;
    if (countsAsActive && resource.bookingLimit > 0 && active >= resource.bookingLimit) {
      return { path: 'ResourceIds', msg: `The customer already has ${active} active appointments with resource ${resource.id} (limit ${resource.bookingLimit})`, code: 'BOOKING-113' };
    }
  }
  return null;
}
