import { ApiError, fieldError } from '../../platform/errors.js';
import type { ErrorLocation } from '../../platform/errors.js';
import type { BookingProblem } from '../../domain/booking.js';

/** The answers of the booking routes that more than one part of the module gives. */

export const INVALID_CURSOR = 'Invalid or expired appointment cursor';
export const SLOT_UNAVAILABLE = 'That time is no longer available; choose a time from the availability endpoint';
export const LOCK_BUSY = 'Other requests are booking the same resources right now and this one could not get its turn in time; retry in a moment (with the same Idempotency-Key, it can never book twice)';
/** A time that no booking took: it was never offered. Distinct from SLOT_UNAVAILABLE (BOOKING-105). */
export const NEVER_OPEN = 'That time is not open for booking';
export const NEVER_OPEN_HINT = ': the location, service or resource is closed then (or it is blocked, or not a slot start); choose a time from the availability endpoint';

/** A 400 for a booking rule, with its legacy code, naming the field when there is one. */
export function problemError(problem: BookingProblem, location: ErrorLocation = 'body'): ApiError {
  return new ApiError(400, problem.msg, problem.path ? [fieldError(location, problem.path, problem.msg, problem.code)] : [], problem.code);
}

/** BOOKING-105: the slot was taken (or its resources are gone). */
export function slotUnavailable(): ApiError {
  return problemError({ path: null, msg: SLOT_UNAVAILABLE, code: 'BOOKING-105' });
}
