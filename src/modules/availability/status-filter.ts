import { sql } from 'kysely';
import type { RawBuilder, SqlBool } from 'kysely';
import { CAPACITY_STATUSES, HOLD_STATUS } from '../../domain/appointment-status.js';
import type { AppointmentStatus } from '../../domain/appointment-status.js';

/**
 * The SQL form of the status rules of src/domain/appointment-status.ts, built from the same status
 * lists and the same hold status, so a query selects exactly the appointments the domain function
 * counts: `status in (<the rule's statuses>) and (status <> 'IN' or expires_at > now)`.
 */

/**
 * Where the status and expiry are read: the `appointments` table or `appointment_resources` (which
 * carries a copy of both) under the alias the query gives it.
 */
export type StatusColumns = 'appointments' | 'a' | 'ar';

/** Rows whose appointment counts under the rule given by `statuses` at `now` (countsUnder). */
export function countedUnder(statuses: readonly AppointmentStatus[], table: StatusColumns, now: Date): RawBuilder<SqlBool> {
  if (statuses.length === 0) return sql<SqlBool>`false`;
  const status = sql.ref(`${table}.status`);
  const expiresAt = sql.ref(`${table}.expiresAt`);
  return sql<SqlBool>`(${status} in (${sql.join(statuses)}) and (${status} <> ${HOLD_STATUS} or ${expiresAt} > ${now}))`;
}

/** Rows whose appointment holds capacity at `now` (holdsCapacity: BK, RS, unexpired IN). */
export function holdingCapacity(table: StatusColumns, now: Date): RawBuilder<SqlBool> {
  return countedUnder(CAPACITY_STATUSES, table, now);
}

/**
 * holdingCapacity for a query run without the CamelCasePlugin (`db.withoutPlugins()`), which
 * names the columns as the database does.
 */
export function holdingCapacitySnake(table: StatusColumns, now: Date): RawBuilder<SqlBool> {
  const status = sql.ref(`${table}.status`);
  const expiresAt = sql.ref(`${table}.expires_at`);
  return sql<SqlBool>`(${status} in (${sql.join(CAPACITY_STATUSES)}) and (${status} <> ${HOLD_STATUS} or ${expiresAt} > ${now}))`;
}
