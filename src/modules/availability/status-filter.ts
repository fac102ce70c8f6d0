import { sql } from 'kysely';
import type { RawBuilder, SqlBool } from 'kysely';
import { CAPACITY_STATUSES, HOLD_STATUS } from '../../domain/appointment-status.js';
import type { AppointmentStatus } from '../../domain/appointment-status.js';

/**
 * The SQL form of the status rules of src/domain/appointment-status.ts, built from the same status
 * lists and the same hold status, so a query selects exactly the appointments the domain function
 * counts: `status in (<the rule's statuses>) and (status <> 'IN' or expires_at > now)`.
 *
 * The statuses are written into the statement as literals, not sent as parameters. The busy-time
 * indexes are partial (`where status in ('IN', 'RS', 'BK')`: appointment_resources_busy_idx,
 * appointments_service_day_idx), and PostgreSQL can use a partial index only in a plan that sees
 * the values its predicate names. A prepared statement's generic plan, which PostgreSQL switches to
 * after five runs when it looks no dearer, sees parameters as unknown: with the statuses as
 * parameters, a booking's busy-time check scanned every row of the company's appointments instead
 * of the resource's week (issue 18, thirteenth pass). The lists are the domain's constants, never
 * input.
 */

/** The statuses as SQL string literals (constants of src/domain/appointment-status.ts). */
const statusLiterals = (statuses: readonly AppointmentStatus[]) => sql.join(statuses.map((status) => sql.lit(status)));

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
  return sql<SqlBool>`(${status} in (${statusLiterals(statuses)}) and (${status} <> ${sql.lit(HOLD_STATUS)} or ${expiresAt} > ${now}))`;
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
  return sql<SqlBool>`(${status} in (${statusLiterals(CAPACITY_STATUSES)}) and (${status} <> ${sql.lit(HOLD_STATUS)} or ${expiresAt} > ${now}))`;
}
