import { randomUUID } from 'node:crypto';
import type { Principal } from '../../platform/auth/principal.js';
import { assertCredentialChecked } from '../../platform/auth/credential-check.js';
import { ApiError, notFound } from '../../platform/errors.js';
import type { Db } from '../../platform/database/index.js';
import { isLockTimeout } from '../../platform/database/errors.js';
import { transaction } from '../../platform/database/transaction.js';
import type { EventTrigger } from '../../platform/database/schema.js';
import { transitionProblem } from '../../domain/booking.js';
import type { Operation } from '../../domain/booking.js';
import { isResourceRole, locationScope } from '../catalog/scope.js';
import type { TouchedEntities } from '../availability/cache.js';
import type { EngineReads } from '../availability/inputs.js';
import type { AvailabilityRepository } from '../availability/repository.js';
import type { PreparedSearch, TargetReads } from '../availability/target.js';
import { appointmentRepository as repo } from './repository.js';
import type { AppointmentRow, OutboxEvent } from './repository.js';
import type { LeadingStatement } from '../../platform/database/transaction-control.js';
import { toApi } from './mapper.js';
import { LOCK_BUSY, problemError } from './problems.js';

/**
 * What every booking operation shares: the transaction and its locks, who may see an appointment,
 * the events, the cache after commit, and the run of an operation on an existing appointment.
 */

/** The availability reads booking makes. */
export type BookingReads = TargetReads & EngineReads & Pick<AvailabilityRepository, 'location' | 'service' | 'customerAppointments'>;

export interface BookingContext {
  db: Db;
  clock: () => number;
  /** The availability reads on a connection: the application's handle, or a booking's transaction. */
  reads: (db: Db) => BookingReads;
  /** Clears the cached availability answers that depend on these records (after commit). */
  touch: (companyId: string, entities: TouchedEntities) => Promise<void>;
}

/**
 * One transaction (retried on deadlock, platform/database/transaction.ts). A lock wait that runs
 * past DATABASE_LOCK_TIMEOUT_MS is BOOKING-137: the records are busy, and a retry will find them
 * free; the client's Idempotency-Key keeps that retry from booking twice.
 */
export async function bookingTransaction<T>(db: Db, work: (trx: Db) => Promise<T>): Promise<T> {
  try {
    return await transaction(db, work);
  } catch (error) {
    if (isLockTimeout(error)) throw new ApiError(409, LOCK_BUSY, [], 'BOOKING-137', { 'Retry-After': '1' });
    throw error;
  }
}

/** The advisory lock keys of a booking: its resources, its customer and, with daily limits, its service. */
export function lockKeys(companyId: string, parts: { resources: string[]; customerId?: string | null; dailyLimits?: string | null }): string[] {
  const keys = parts.resources.map((id) => `${companyId}:resource:${id}`);
  if (parts.customerId) keys.push(`${companyId}:customer:${parts.customerId}`);
  if (parts.dailyLimits) keys.push(`${companyId}:service-daily-limits:${parts.dailyLimits}`);
  return keys;
}

/**
 * The lock of a service's daily limits. Per service, not per day: the service's days are local
 * days of each booking's location, and locations of one service may be in different zones, so
 * two bookings that count against the same day could name different dates.
 */
export function dailyLimitsKey(prepared: PreparedSearch): string | null {
  const s = prepared.service;
  return s.dailyBookingLimitCount > 0 || s.dailyBookingLimitMinutes > 0 ? s.id : null;
}

/** Who may see an appointment: scope by location, and a Resource-role user only their resource's. */
export function visible(principal: Principal, row: { id?: string; locationId: string; resourceIds: string[]; createdVia: string }): boolean {
  if (principal.kind === 'public') return row.createdVia === 'public';
  // A manage link reaches its own appointment and nothing else (modules/manage).
  if (principal.kind === 'manage') return row.id === principal.manage.appointmentId;
  const scope = locationScope(principal);
  if (scope && !scope.has(row.locationId)) return false;
  if (isResourceRole(principal)) return principal.linkedResourceId !== null && row.resourceIds.includes(principal.linkedResourceId);
  return true;
}

/** The appointment, if the caller may see it (404 otherwise); `forUpdate` row-locks it. */
export async function readVisible(db: Db, principal: Principal, ids: { companyId: string; id: string }, forUpdate = false): Promise<AppointmentRow> {
  const row = await repo.byId(db, ids.companyId, ids.id, { forUpdate });
  if (!row || !visible(principal, row)) throw notFound('Appointment not found');
  return row;
}

/** The refusal of States and transitions, when `operation` may not run on the appointment now. */
export function refuse(operation: Operation, row: AppointmentRow, now: number) {
  const problem = transitionProblem(operation, row.status, row.expiresAt?.getTime() ?? null, now);
  if (problem) throw problemError(problem);
}

/** The outbox events of triggers on an appointment, each carrying the appointment as answered. */
export function eventsOf(row: AppointmentRow, triggers: EventTrigger[]): OutboxEvent[] {
  const payload = toApi(row);
  return triggers.map((trigger) => ({ companyId: row.companyId, id: randomUUID(), trigger, appointmentId: row.id, locationId: row.locationId, payload }));
}

export async function emit(trx: Db, row: AppointmentRow, triggers: EventTrigger[]) {
  // One statement per event, so each gets its own created_at and consumers see them in order.
  for (const event of eventsOf(row, triggers)) await repo.addEvents(trx, [event]);
}

/** After commit: clears the cached availability of everything the changed appointments touch. */
export async function touchChanged(touch: BookingContext['touch'], rows: AppointmentRow[]) {
  const first = rows[0];
  if (!first) return;
  const entities: TouchedEntities = {
    locations: [...new Set(rows.map((r) => r.locationId))],
    services: [...new Set(rows.map((r) => r.serviceId))],
    resources: [...new Set(rows.flatMap((r) => r.resourceIds))],
    customers: [...new Set(rows.flatMap((r) => (r.customerId ? [r.customerId] : [])))],
  };
  await touch(first.companyId, entities);
}

export interface ExistingChange<T, Ahead = never> {
  companyId: string;
  principal: Principal;
  id: string;
  /** The advisory lock keys the appointment needs, from its row. */
  keys: (row: AppointmentRow) => string[];
  /**
   * The change, on the row as locked; `changed`: the appointments whose cached availability to
   * clear. `ahead`: what readAhead answered, when it read under the locks and the row was unchanged.
   */
  work: (trx: Db, row: AppointmentRow, ahead: Ahead | undefined) => Promise<{ result: T; changed: AppointmentRow[] }>;
  /**
   * The work's first read under the locks, made from the row as read before them (`known`) and
   * sent with `locks` in front of its statement, in one exchange (transaction-control.ts,
   * withLeading): the read runs after the locks and sees everything committed before they were
   * granted. Answering without sending a statement is allowed (the locks then go alone). What it
   * answered or threw counts only when the row under the locks is still `known`; otherwise the
   * work runs on the row read again, without it.
   */
  readAhead?: (trx: Db, row: AppointmentRow, locks: LeadingStatement) => Promise<Ahead>;
  /** Runs first in the transaction (before any lock); returns further keys to lock. */
  prelude?: (trx: Db) => Promise<string[]>;
  /**
   * The row as already read by the caller with readVisible, unmodified (saves reading it again):
   * its rowVersion vouches for every field, so a row changed in memory must not carry one.
   */
  known?: AppointmentRow;
}

/**
 * An operation on an existing appointment. Locks are taken before the row lock, in every
 * operation, so lock order is the same everywhere.
 */
export async function changeExisting<T, Ahead = never>(ctx: Pick<BookingContext, 'db' | 'touch'>, change: ExistingChange<T, Ahead>): Promise<T> {
  const { companyId, principal, id, keys, work, prelude, readAhead } = change;
  const before = change.known ?? (await readVisible(ctx.db, principal, { companyId, id }));
  assertCredentialChecked(principal);
  let changed: AppointmentRow[] = [];
  const result = await bookingTransaction(ctx.db, async (trx) => {
    const extra = prelude ? await prelude(trx) : [];
    const locked = new Set([...keys(before), ...extra]);
    // The locks and the row lock in one exchange, with the work's first read behind them when
    // there is one (readAhead); the row is read again only when it changed since `before` was
    // read (its version or its location's zone differs, or it is gone), which is then the only
    // version to trust.
    let ahead: { value: Ahead } | { error: unknown } | undefined;
    let underLocks: Awaited<ReturnType<typeof repo.lockAppointment>>;
    if (readAhead && before.rowVersion !== undefined) {
      const locks = repo.lockAppointmentAhead([...locked], companyId, id);
      try {
        ahead = { value: await readAhead(trx, before, locks) };
      } catch (error) {
        // Thrown before its statement went: the locks were never sent either.
        if (!locks.settled) throw error;
        ahead = { error };
      }
      underLocks = locks.settled ? await repo.appointmentLocked(locks) : await repo.lockAppointment(trx, [...locked], companyId, id);
    } else underLocks = await repo.lockAppointment(trx, [...locked], companyId, id);
    // Not a refusal but a failure (the database's: the transaction is aborted, and a deadlock or a
    // stale plan is for transaction.ts to retry): it stands whatever the row.
    if (ahead && 'error' in ahead && !(ahead.error instanceof ApiError)) throw ahead.error;
    const unchanged = underLocks !== null && before.rowVersion !== undefined && underLocks.rowVersion === before.rowVersion && underLocks.timezoneName === before.timezoneName;
    const row = unchanged ? before : await readVisible(trx, principal, { companyId, id }, true);
    // Changed meanwhile (a new customer, say): lock what the row needs now. Taken out of order, so
    // a deadlock is possible; PostgreSQL then aborts one transaction and it is retried.
    const missing = keys(row).filter((key) => !locked.has(key));
    if (missing.length > 0) await repo.lock(trx, missing);
    // The read ahead was of this very row, under every lock it needs: its answer (or refusal) stands.
    if (unchanged && ahead && 'error' in ahead) throw ahead.error;
    const outcome = await work(trx, row, unchanged && ahead && 'value' in ahead ? ahead.value : undefined);
    changed = outcome.changed;
    return outcome.result;
  });
  await touchChanged(ctx.touch, changed);
  return result;
}
