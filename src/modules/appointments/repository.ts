import { randomUUID } from 'node:crypto';
import { CompiledQuery, createQueryId, sql } from 'kysely';
import type { Insertable, Selectable, Updateable } from 'kysely';
import type { Db } from '../../platform/database/index.js';
import type { AppointmentStatus, AppointmentsTable, EventTrigger } from '../../platform/database/schema.js';
import { toApi } from './mapper.js';
import { reusableQuery, reusableStatement } from '../../platform/database/reusable-query.js';
import type { ValueOf } from '../../platform/database/reusable-query.js';
import { LeadingStatement, thenCommit } from '../../platform/database/transaction-control.js';
import { machineContextColumn, machineCredentialGood } from '../../platform/auth/credential-check.js';
import type { MachineContext } from '../../platform/auth/credential-check.js';

/** An appointment with its location's zone and its resources, as every read returns it. */
export type AppointmentRow = Selectable<AppointmentsTable> & {
  timezoneName: string;
  resourceIds: string[];
  /**
   * The row version's xmin, when the row was read from the database (byIds): an operation compares
   * it with the one slotwise_lock_appointment answers under its locks (changeExisting).
   */
  rowVersion?: string;
};

export interface AppointmentFilters {
  LocationId?: string | undefined;
  ServiceId?: string | undefined;
  ResourceId?: string | undefined;
  CustomerId?: string | undefined;
  status?: AppointmentStatus[] | undefined;
  /** Appointments starting at or after this instant. */
  from?: Date | undefined;
  /** Appointments starting before this instant. */
  to?: Date | undefined;
  /** Location scope of the caller; null: every location. */
  locationIds?: string[] | null | undefined;
}

export type SortKey = 'startTime' | 'createdAt';

/**
 * What a list page or a cursor page reads: the company's appointments that match the filters, in
 * order, `limit` of them. `credentialOf`: a machine caller whose credential check rides along with
 * the page (platform/auth/credential-check.ts); the page reads no rows for a refused one.
 */
export interface ListRead {
  companyId: string;
  filters: AppointmentFilters;
  sort: SortKey;
  order: SortOrder;
  limit: number;
  credentialOf?: string | null;
}
export type SortOrder = 'asc' | 'desc';

/** Where a cursor walk stands: the sort value and id of the last appointment returned. */
export interface Position {
  value: Date;
  id: string;
}

const APPOINTMENT_COLUMNS = [
  'a.id',
  'a.companyId',
  'a.locationId',
  'a.serviceId',
  'a.customerId',
  'a.status',
  'a.startTime',
  'a.endTime',
  'a.duration',
  'a.padding',
  'a.expiresAt',
  'a.confirmed',
  'a.allowPaddingOverflow',
  'a.ignoreExternalEvents',
  'a.notes',
  'a.field1',
  'a.field2',
  'a.field3',
  'a.field4',
  'a.field5',
  'a.field6',
  'a.field7',
  'a.field8',
  'a.field9',
  'a.field10',
  'a.rescheduledFromId',
  'a.rescheduledToId',
  'a.legacyId',
  'a.customerUnconfirmed',
  'a.createdVia',
  'a.createdAt',
  'a.updatedAt',
  'l.timezoneName',
] as const;

/** An event for the outbox, its payload as the API answers the appointment. */
export interface OutboxEvent {
  companyId: string;
  id: string;
  trigger: EventTrigger;
  appointmentId: string;
  locationId: string;
  payload: unknown;
}

const outboxRows = (events: OutboxEvent[]) => events.map((e) => ({ ...e, payload: JSON.stringify(e.payload) }));

/** The row version (xmin) as text: any update of the appointment writes a new one. */
const rowVersionColumn = sql<string>`a.xmin::text`.as('rowVersion');

/**
 * An appointment's resource ids, in resource_id order, as text (both drivers parse text[] the same
 * way), from the row over `alias`: the copy on the appointment (migrations/0017), else, for a row
 * written without it, its appointment_resources rows.
 */
const resourceIdsOf = (alias: 'a' | 'p') =>
  sql.raw(
    `coalesce(${alias}.resource_ids::text[], array(select ar.resource_id::text from appointment_resources as ar where ar.company_id = ${alias}.company_id and ar.appointment_id = ${alias}.id order by ar.resource_id))`,
  );
const resourceIdsColumn = sql<string[]>`${resourceIdsOf('a')}`.as('resourceIds');
/** The stored copy, selected beside APPOINTMENT_COLUMNS for apiRow. */
const storedResourceIdsColumn = sql<string[] | null>`a.resource_ids`.as('resource_ids');

/** A timestamp column as Date.prototype.toISOString writes it (UTC, milliseconds, 'Z'): null stays null. */
const isoTime = (column: string) => sql`to_char(${sql.raw(column)} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/**
 * The appointment as mapper.ts toApi answers it, as a row of a lateral subquery over `p` (a
 * select of APPOINTMENT_COLUMNS), whose json_agg is the list's JSON array: a page of 100 is then one
 * text value that goes out as it came, where 100 rows of 33 columns were parsed into objects
 * (timestamps into Dates), renamed to camelCase, mapped by toApi and serialised again (issue 18:
 * most of a cursor walk's time). json_agg of rows costs PostgreSQL about half what
 * json_build_object of the same 33 pairs did. The same keys and values as toApi, in its order;
 * test/modules/appointments/lists.test.ts compares the two for every kind of value.
 */
const apiRow = sql`lateral (select p.id, p.company_id as "companyId", p.location_id as "locationId", p.service_id as "serviceId", p.customer_id as "customerId",
    ${resourceIdsOf('p')} as "resourceIds",
    p.status, ${isoTime('p.start_time')} as "startTime", ${isoTime('p.end_time')} as "endTime", p.duration, p.padding, p.timezone_name as "timezoneName",
    ${isoTime('p.expires_at')} as "expiresAt", p.confirmed, p.allow_padding_overflow as "allowPaddingOverflow", p.ignore_external_events as "ignoreExternalEvents", p.notes,
    p.field1, p.field2, p.field3, p.field4, p.field5, p.field6, p.field7, p.field8, p.field9, p.field10,
    p.rescheduled_from_id as "rescheduledFromId", p.rescheduled_to_id as "rescheduledToId", p.legacy_id as "legacyId",
    ${isoTime('p.created_at')} as "createdAt", ${isoTime('p.updated_at')} as "updatedAt") as x`;

/** The locks and the row lock of an existing appointment (migrations/0016): lockAppointment's statement, and lockAppointmentAhead's. */
const LOCK_APPOINTMENT = 'select row_version as "version", zone as "zone" from slotwise_lock_appointment($1::text[], $2::uuid, $3::uuid)';
const lockedRow = (row: { version: string; zone: string } | undefined) => (row ? { rowVersion: row.version, timezoneName: row.zone } : null);

/** The try of every lock without waiting (migrations/0006): tryLocks' statement. */
const TRY_LOCKS = 'select slotwise_try_advisory_xact_locks($1::text[]) as taken';

/**
 * byId's read as a statement of its own, compiled once: for byIdAhead, which sends it in front of
 * another statement (a stored appointment's catalog read, appointments/slot.ts).
 */
const byIdStatement = reusableStatement((db: Db, _shape: Record<string, never>, value: ValueOf) =>
  db
    .selectFrom('appointments as a')
    .innerJoin('locations as l', (j) => j.onRef('l.companyId', '=', 'a.companyId').onRef('l.id', '=', 'a.locationId'))
    .select(APPOINTMENT_COLUMNS)
    .select([resourceIdsColumn, rowVersionColumn])
    .where('a.companyId', '=', value<string>('companyId'))
    .where('a.id', '=', value<string>('id'))
    .compile(),
() => '');

/** The column a list sorts by (with a.id after it). */
const sortColumn = (sort: SortKey) => sql.raw(sort === 'startTime' ? 'a.start_time' : 'a.created_at');

/**
 * Data access for appointments. Every function takes the connection to use, so the booking service
 * runs them on its transaction; every query is scoped by company.
 */
export const appointmentRepository = {
  /**
   * Serialises every booking that touches the same resources, customer or daily-limited service: one
   * transaction-scoped advisory lock per key, taken in the order of the lock ids themselves, so two
   * transactions can never wait on each other in a cycle, on any number of instances.
   */
  async lock(db: Db, keys: string[]): Promise<void> {
    if (keys.length === 0) return;
    await appointmentRepository.lockRest(db, keys, 0);
  },

  /**
   * Every lock of `keys` tried without waiting (migrations/0006), as a statement to send in front
   * of the booking's first read under the locks, in the same exchange (slot.ts, lockAndCheckSlot;
   * new-slot.ts, a public hold's count): a booking that would only be refused must not queue
   * behind the transaction that is taking its slot. locksTaken reads what it answered, and
   * lockRest waits for the locks it could not take.
   */
  tryLocks(keys: string[]): LeadingStatement {
    return new LeadingStatement(TRY_LOCKS, [[...new Set(keys)]]);
  },

  /** What a tryLocks statement answered: -1 when it took every lock, else how many it took (in lock order) before one was held. */
  async locksTaken(tried: LeadingStatement): Promise<number> {
    // Read after the statement it led has answered; unsent, it would never answer.
    if (!tried.settled) throw new Error('tryLocks was read before a statement carried it (transaction-control.ts, withLeading)');
    return Number(((await tried.result).rows[0] as { taken: number | string }).taken);
  },

  /**
   * Takes the locks of `keys` that a try left (from `taken` on, in the order of the lock ids),
   * waiting for them. The wait is bounded by the connection's lock_timeout
   * (DATABASE_LOCK_TIMEOUT_MS); past it the statement fails with lock_not_available and the
   * operation answers 409 BOOKING-137.
   */
  async lockRest(db: Db, keys: string[], taken: number): Promise<void> {
    const unique = [...new Set(keys)];
    await sql`select count(pg_advisory_xact_lock(h)) from (select distinct hashtextextended(k, 0) as h from unnest(${unique}::text[]) as k order by h offset ${taken}) as locks`.execute(db);
  },

  /**
   * The advisory locks of `keys` (as lock() takes them, waiting; the function drops repeated
   * keys), then the appointment's row lock,
   * in one exchange (migrations/0016): answers the row version's xmin and its location's zone under
   * the locks, null when the row is gone. Equal to the rowVersion and timezoneName read before the
   * locks, the row is unchanged.
   */
  async lockAppointment(db: Db, keys: string[], companyId: string, id: string): Promise<{ rowVersion: string; timezoneName: string } | null> {
    const locked = await db.executeQuery(CompiledQuery.raw(LOCK_APPOINTMENT, [keys, companyId, id]) as CompiledQuery<{ version: string; zone: string }>);
    return lockedRow(locked.rows[0]);
  },

  /**
   * lockAppointment as a statement to send in front of the operation's first read under the locks,
   * in the same exchange (operation.ts, changeExisting's readAhead). Same text, same prepared statement.
   */
  lockAppointmentAhead(keys: string[], companyId: string, id: string): LeadingStatement {
    return new LeadingStatement(LOCK_APPOINTMENT, [keys, companyId, id]);
  },

  /** What a lockAppointmentAhead statement answered, as lockAppointment answers (it fails as the statement failed). */
  async appointmentLocked(statement: LeadingStatement): Promise<{ rowVersion: string; timezoneName: string } | null> {
    if (!statement.settled) throw new Error('lockAppointmentAhead was read before a statement carried it (transaction-control.ts, withLeading)');
    return lockedRow((await statement.result).rows[0] as { version: string; zone: string } | undefined);
  },

  /**
   * Appointments by id with their location's zone and resources, in one statement (the resources
   * as an array beside each row: a booking reads its appointment inside the locked transaction,
   * where every round trip is held); `forUpdate` row-locks them.
   */
  async byIds(db: Db, companyId: string, ids: string[], options: { forUpdate?: boolean } = {}): Promise<AppointmentRow[]> {
    if (ids.length === 0) return [];
    let query = db
      .selectFrom('appointments as a')
      .innerJoin('locations as l', (j) => j.onRef('l.companyId', '=', 'a.companyId').onRef('l.id', '=', 'a.locationId'))
      .select(APPOINTMENT_COLUMNS)
      .select([resourceIdsColumn, rowVersionColumn])
      .where('a.companyId', '=', companyId)
      .where('a.id', 'in', ids);
    if (options.forUpdate) query = query.forUpdate('a');
    return query.execute();
  },

  async byId(db: Db, companyId: string, id: string, options: { forUpdate?: boolean } = {}): Promise<AppointmentRow | undefined> {
    return (await appointmentRepository.byIds(db, companyId, [id], options))[0];
  },

  /**
   * byId as a statement to send in front of another, in the same exchange (transaction-control.ts,
   * withLeading): what it answers is read with byIdLed.
   */
  byIdAhead(db: Db, companyId: string, id: string): LeadingStatement {
    const { sql: text, parameters } = byIdStatement(db, {}, { companyId, id });
    return new LeadingStatement(text, [...parameters]);
  },

  /**
   * What a byIdAhead statement answered, as byId answers it: its rows come back as the server sent
   * them, so they go through the handle's plugins (the CamelCasePlugin) as byId's do.
   */
  async byIdLed(db: Db, statement: LeadingStatement): Promise<AppointmentRow | undefined> {
    if (!statement.settled) throw new Error('byIdAhead was read before a statement carried it (transaction-control.ts, withLeading)');
    let result = await statement.result;
    for (const plugin of db.getExecutor().plugins) result = (await plugin.transformResult({ result, queryId: createQueryId() })) as typeof result;
    return result.rows[0] as AppointmentRow | undefined;
  },

  /**
   * Inserts an appointment and its resource rows in one statement and answers it as stored, so a
   * booking neither sends a second insert nor reads its own row back inside the locked transaction.
   * The row is given whole, every column set (no default left to the database), so it is what is
   * stored: the statement returns only the id, not the row's 32 columns to parse again (node-
   * postgres builds each result's field parsers and row objects per execution, about a tenth of a
   * booking's Node.js time for the wide rows; issue 18).
   * `events` (already built from the row) go into the outbox in the same statement. (The resource
   * rows and events reference the appointment; the foreign keys are checked at the end of the
   * statement, when all are in.) `lastInTransaction`: nothing follows it in its transaction, so the
   * commit is sent with it (platform/database/transaction-control.ts).
   */
  async insert(
    db: Db,
    row: Selectable<AppointmentsTable>,
    resourceIds: string[],
    timezoneName: string,
    events: OutboxEvent[] = [],
    options: { lastInTransaction?: boolean } = {},
  ): Promise<AppointmentRow> {
    const rowColumns = Object.keys(row).sort();
    const outbox = outboxRows(events);
    const eventColumns = outbox.length > 0 ? Object.keys(outbox[0]!).sort() : [];
    const values: Record<string, unknown> = { linkExpiresAt: row.expiresAt ?? null, linkPadding: row.padding ?? 0 };
    for (const column of rowColumns) values[`row.${column}`] = row[column as keyof typeof row];
    resourceIds.forEach((resourceId, i) => (values[`resource.${i}`] = resourceId));
    // In resource_id order, as the rows' subquery answered (ids are lowercase, so as strings too).
    const ordered = [...resourceIds].sort();
    values.resourceIds = ordered;
    outbox.forEach((event, i) => {
      for (const column of eventColumns) values[`event.${i}.${column}`] = event[column as keyof typeof event];
    });
    const [created] = await insertStatement(db, { rowColumns, resources: resourceIds.length, events: outbox.length, eventColumns }, values, { thenCommit: options.lastInTransaction === true });
    if (created?.id !== row.id) throw new Error('appointment insert: no row came back');
    return { ...row, timezoneName, resourceIds: ordered };
  },

  /**
   * Changes an appointment and answers it as changed (its zone and resources do not change, so they
   * are taken from `row`), in one statement: status and expiry are copied to its resource rows,
   * which availability reads, and the events of `triggers` go into the outbox, carrying the row as
   * changed (built from `row` and the plain values of `changes`, which is what the update writes).
   * `lastInTransaction`: nothing follows it in its transaction, so the commit is sent with it.
   */
  async update(
    db: Db,
    row: AppointmentRow,
    changes: Updateable<AppointmentsTable>,
    triggers: EventTrigger[] = [],
    options: { lastInTransaction?: boolean } = {},
  ): Promise<AppointmentRow> {
    const { companyId, id } = row;
    const updatedAt = new Date();
    // Each `with` widens the query's table types; the casts keep one variable, as only 'updated' is read.
    let query = db.with('updated', (q) =>
      q
        .updateTable('appointments')
        .set({ ...changes, updatedAt })
        // Qualified: several tenant tables in one statement (test/helpers/tenant-statements.ts).
        .where('appointments.companyId', '=', companyId)
        .where('appointments.id', '=', id)
        .returning('appointments.id'),
    );
    if (changes.status !== undefined || changes.expiresAt !== undefined) {
      query = query.with('links', (q) =>
        q
          .updateTable('appointmentResources')
          .set({
            ...(changes.status !== undefined ? { status: changes.status } : {}),
            ...(changes.expiresAt !== undefined ? { expiresAt: changes.expiresAt } : {}),
          })
          .where('appointmentResources.companyId', '=', companyId)
          .where('appointmentResources.appointmentId', '=', id)
          .returning('resourceId'),
      ) as unknown as typeof query;
    }
    if (triggers.length > 0) {
      const changed = { ...row, ...changes, updatedAt } as AppointmentRow;
      const payload = JSON.stringify(toApi(changed));
      const events = triggers.map((trigger, index) => ({
        companyId,
        id: randomUUID(),
        trigger,
        appointmentId: id,
        locationId: row.locationId,
        payload,
        // Consumers read events in created_at order: several in one statement are a microsecond apart.
        createdAt: sql<Date>`clock_timestamp() + ${index} * interval '1 microsecond'`,
      }));
      query = query.with('events', (q) => q.insertInto('outboxEvents').values(events).returning('id')) as unknown as typeof query;
    }
    const compiled = query.selectFrom('updated').select('id').compile();
    // `lastInTransaction`: the commit goes with it (platform/database/transaction-control.ts).
    const [updated] = (await db.executeQuery(options.lastInTransaction ? thenCommit(compiled) : compiled)).rows;
    if (!updated) throw new Error('appointmentRepository.update: the row was not there (it is read under lock first)');
    // The row as stored: `row` is the row under the locks (changeExisting: unchanged since it was
    // read, or read again), and nothing but this statement changes it (no trigger writes to
    // appointments), so the statement answers only the id, as the insert does: node-postgres
    // parsed the 32 columns of `returning *` on every book, confirm and cancel (issue 18). Its
    // version is not the stored row's any more.
    const { rowVersion: _stale, ...current } = row;
    // As Kysely's set() does, a change given as undefined leaves the column as it is.
    const set = Object.fromEntries(Object.entries(changes).filter(([, value]) => value !== undefined)) as Partial<AppointmentRow>;
    return { ...current, ...set, updatedAt };
  },

  async delete(db: Db, companyId: string, id: string): Promise<void> {
    await db.deleteFrom('appointmentResources').where('companyId', '=', companyId).where('appointmentId', '=', id).execute();
    await db.deleteFrom('appointments').where('companyId', '=', companyId).where('id', '=', id).execute();
  },

  /** Removes idempotency keys stored before `before` (they no longer replay anything). */
  async pruneIdempotencyKeys(db: Db, before: Date): Promise<void> {
    await db.deleteFrom('idempotencyKeys').where('createdAt', '<', before).execute();
  },

  async addEvents(db: Db, events: OutboxEvent[]) {
    if (events.length === 0) return;
    await db.insertInto('outboxEvents').values(outboxRows(events)).execute();
  },

  events(db: Db, companyId: string, appointmentId: string) {
    return db
      .selectFrom('outboxEvents')
      .select(['id', 'trigger', 'appointmentId', 'locationId', 'payload', 'createdAt', 'processedAt'])
      .where('companyId', '=', companyId)
      .where('appointmentId', '=', appointmentId)
      .orderBy('createdAt')
      .orderBy('id')
      .execute();
  },

  /**
   * A page of appointments that match the filters, as the JSON text of the API's array (each one
   * as toApi answers it: appointmentJson), with the total (page and count read no rows for a
   * refused credential, ListRead).
   */
  async pageJson(db: Db, read: ListRead, offset: number): Promise<{ data: string; total: number; machineContext: MachineContext | null }> {
    const { shape, values } = listStatementInputs(read);
    const [page, count] = await Promise.all([pageStatement(db, { ...shape, sort: read.sort, order: read.order }, { ...values, offset }), countStatement(db, shape, values)]);
    return { data: page[0]!.data, total: Number(count[0]!.total), machineContext: page[0]!.machineContext };
  },

  /**
   * The next appointments after `after` in (sort value, id) order: a keyset walk, so appointments
   * added meanwhile never shift it (no duplicates, nothing skipped that existed). Reads `limit + 1`
   * to know whether more follow; answers the first `limit` as the JSON text of the API's array
   * (apiRow), and the position of the last of them (sort value in epoch milliseconds, as a
   * JavaScript Date of it would give, and id) when more follow.
   */
  async afterJson(db: Db, read: ListRead, after: Position | null): Promise<{ data: string; next: [number, string] | null; machineContext: MachineContext | null }> {
    const { limit } = read;
    // The statement's row bound is the size's bucket, written into its text (afterStatement).
    const bucket = CURSOR_PAGE_BUCKETS.find((size) => limit <= size);
    if (!Number.isInteger(limit) || limit < 1 || bucket === undefined) throw new RangeError(`cursor page size ${limit} is not an integer from 1 to ${CURSOR_PAGE_BUCKETS.at(-1)}`);
    const inputs = listStatementInputs(read);
    const shape = { ...inputs.shape, sort: read.sort, order: read.order, after: after !== null, bucket };
    const values = { ...inputs.values, limitPlusOne: limit + 1, afterValue: after?.value, afterId: after?.id };
    const page = (await afterStatement(db, shape, values))[0]!;
    const more = Number(page.count) > limit && page.lastPosition !== null && page.lastId !== null;
    return { data: page.data, next: more ? [Number(page.lastPosition), page.lastId!] : null, machineContext: page.machineContext };
  },

  /** Finds the customer by email (case-insensitive) or creates one; concurrent creators agree on one row. */
  async findOrCreateCustomer(db: Db, companyId: string, customer: { id: string; firstName: string; lastName: string | null; email: string; phone: string | null }): Promise<string> {
    const byEmail = () =>
      db
        .selectFrom('customers')
        .select('id')
        .where('companyId', '=', companyId)
        .where((eb) => eb(eb.fn('lower', ['email']), '=', customer.email.toLowerCase()))
        .where('archivedAt', 'is', null)
        .executeTakeFirst();
    const existing = await byEmail();
    if (existing) return existing.id;
    const inserted = await sql<{ id: string }>`
      insert into customers (company_id, id, first_name, last_name, email, phone)
      values (${companyId}, ${customer.id}, ${customer.firstName}, ${customer.lastName}, ${customer.email}, ${customer.phone})
      on conflict (company_id, lower(email)) where archived_at is null do nothing
      returning id`.execute(db);
    // Nothing inserted: a concurrent booking created the customer first; use theirs.
    return inserted.rows[0]?.id ?? (await byEmail())!.id;
  },

  /** Live resources by id with their per-customer booking limit. */
  resources(db: Db, companyId: string, ids: string[]) {
    if (ids.length === 0) return Promise.resolve([]);
    return db.selectFrom('resources').select(['id', 'bookingLimit']).where('companyId', '=', companyId).where('id', 'in', ids).execute();
  },
};

/** The shape (without the order, which the count has not) and values of a list's statements for a read. */
function listStatementInputs({ companyId, filters, limit, credentialOf = null }: ListRead) {
  return {
    shape: { ...filterShape(filters), credential: credentialOf !== null },
    values: { ...filterValues(companyId, filters), limit, clientId: credentialOf },
  };
}

/**
 * Which filters a list query has: the shape of its SQL. The lists compile their SQL once per shape
 * (reusableQuery): Kysely's building and compiling took about half a millisecond a page, a tenth
 * of a cursor walk's time (issue 18). Lists of values are one array parameter each.
 */
interface FilterShape {
  location: boolean;
  service: boolean;
  customer: boolean;
  resource: boolean;
  status: boolean;
  from: boolean;
  to: boolean;
  /** The caller's location scope: every location, some, or none at all. */
  scope: 'all' | 'some' | 'none';
}

function filterShape(f: AppointmentFilters): FilterShape {
  return {
    location: Boolean(f.LocationId),
    service: Boolean(f.ServiceId),
    customer: Boolean(f.CustomerId),
    resource: Boolean(f.ResourceId),
    status: Boolean(f.status?.length),
    from: Boolean(f.from),
    to: Boolean(f.to),
    scope: !f.locationIds ? 'all' : f.locationIds.length ? 'some' : 'none',
  };
}

function filterValues(companyId: string, f: AppointmentFilters) {
  return { companyId, LocationId: f.LocationId, ServiceId: f.ServiceId, CustomerId: f.CustomerId, ResourceId: f.ResourceId, status: f.status, from: f.from, to: f.to, locationIds: f.locationIds };
}

/** The appointments of a company that match the filters, joined to their location (for its zone). */
function filtered(db: Db, shape: FilterShape, value: ValueOf) {
  let query = db
    .selectFrom('appointments as a')
    .innerJoin('locations as l', (j) => j.onRef('l.companyId', '=', 'a.companyId').onRef('l.id', '=', 'a.locationId'))
    .where('a.companyId', '=', value<string>('companyId'));
  if (shape.location) query = query.where('a.locationId', '=', value<string>('LocationId'));
  if (shape.service) query = query.where('a.serviceId', '=', value<string>('ServiceId'));
  if (shape.customer) query = query.where('a.customerId', '=', value<string>('CustomerId'));
  if (shape.status) query = query.where(sql<boolean>`a.status = any(${value('status')}::text[])`);
  if (shape.from) query = query.where('a.startTime', '>=', value<Date>('from'));
  if (shape.to) query = query.where('a.startTime', '<', value<Date>('to'));
  if (shape.scope === 'some') query = query.where(sql<boolean>`a.location_id = any(${value('locationIds')}::uuid[])`);
  if (shape.scope === 'none') query = query.where(sql<boolean>`false`);
  if (shape.resource) {
    query = query.where((eb) =>
      eb.exists(
        eb
          .selectFrom('appointmentResources as ar')
          .select('ar.appointmentId')
          .whereRef('ar.companyId', '=', 'a.companyId')
          .whereRef('ar.appointmentId', '=', 'a.id')
          .where('ar.resourceId', '=', value<string>('ResourceId')),
      ),
    );
  }
  return query;
}

const shapeKey = (shape: object) => JSON.stringify(shape);

/** A page by offset, as the JSON text of the API's array (see apiRow). */
const pageStatement = reusableQuery<FilterShape & { sort: SortKey; order: SortOrder; credential: boolean }, Record<string, unknown>, { data: string; machineContext: MachineContext | null }>((db, shape, value) => {
  const rows = guarded(filtered(db, shape, value), shape, value)
    .select(APPOINTMENT_COLUMNS)
    .select(storedResourceIdsColumn)
    // row_number() numbers the page in its order, which json_agg keeps only when told (`order by`).
    .select(sql<number>`row_number() over (order by ${sortColumn(shape.sort)} ${sql.raw(shape.order)}, a.id ${sql.raw(shape.order)})`.as('n'))
    .orderBy(`a.${shape.sort}`, shape.order)
    .orderBy('a.id', shape.order)
    .limit(value<number>('limit'))
    .offset(value<number>('offset'));
  const credential = shape.credential ? machineContextColumn(value<string>('companyId'), value<string>('clientId')) : sql`null`;
  return sql<{ data: string; machineContext: MachineContext | null }>`select coalesce(json_agg(x order by p.n), '[]')::text as data, ${credential} as "machineContext"
    from (${rows}) as p cross join ${apiRow}`.compile(db);
}, shapeKey);

const countStatement = reusableQuery<FilterShape & { credential: boolean }, Record<string, unknown>, { total: number }>(
  (db, shape, value) => guarded(filtered(db, shape, value), shape, value).select((eb) => eb.fn.countAll<number>().as('total')).compile(),
  shapeKey,
);

/**
 * A machine caller's credential check guarding a list's scan (platform/auth/credential-check.ts):
 * PostgreSQL evaluates it once, before the scan, so a refused caller reads no rows.
 */
function guarded<Q extends ReturnType<typeof filtered>>(query: Q, shape: { credential: boolean }, value: ValueOf): Q {
  return shape.credential ? (query.where(machineCredentialGood(value<string>('companyId'), value<string>('clientId'))) as Q) : query;
}

/**
 * The insert of a booking (appointmentRepository.insert), compiled once per shape: the columns the
 * row sets, how many resources and outbox events go in with it. Building it with Kysely was about
 * 0.4 ms of Node.js time per booking (issue 18).
 */
const insertStatement = reusableQuery<{ rowColumns: string[]; resources: number; events: number; eventColumns: string[] }, Record<string, unknown>, { id: string }>(
  (db, shape, value) => {
    const row = {
      ...Object.fromEntries(shape.rowColumns.map((column) => [column, value(`row.${column}`)])),
      // The copy of its resource ids (migrations/0017), from the list its resource rows are made of.
      resourceIds: sql`${value<string[]>('resourceIds')}::uuid[]`,
    } as unknown as Insertable<AppointmentsTable>;
    const links = Array.from({ length: shape.resources }, (_, i) => ({
      companyId: value<string>('row.companyId'),
      appointmentId: value<string>('row.id'),
      resourceId: value<string>(`resource.${i}`),
      startTime: value<Date>('row.startTime'),
      endTime: value<Date>('row.endTime'),
      status: value<AppointmentStatus>('row.status'),
      expiresAt: value<Date | null>('linkExpiresAt'),
      // Copies availability reads without a join (migrations/0014).
      serviceId: value<string>('row.serviceId'),
      duration: value<number>('row.duration'),
      padding: value<number>('linkPadding'),
    }));
    const events = Array.from({ length: shape.events }, (_, i) => Object.fromEntries(shape.eventColumns.map((column) => [column, value(`event.${i}.${column}`)])) as ReturnType<typeof outboxRows>[number]);
    // Each `with` widens the query's table types; the casts keep one variable, as only 'created' is read.
    let query = db.with('created', (q) => q.insertInto('appointments').values(row).returning('id'));
    if (links.length > 0) query = query.with('links', (q) => q.insertInto('appointmentResources').values(links).returning('resourceId')) as unknown as typeof query;
    if (events.length > 0) query = query.with('events', (q) => q.insertInto('outboxEvents').values(events).returning('id')) as unknown as typeof query;
    return query.selectFrom('created').select('id').compile();
  },
  (shape) => JSON.stringify(shape),
);

/** The row bounds a cursor page's statement is written with; the route allows sizes 1 to 100. */
const CURSOR_PAGE_BUCKETS = [10, 20, 50, 100] as const;

/**
 * The next `limit` of a keyset walk (and one more, to tell whether more follow), as JSON text with
 * the last position.
 *
 * The statement's row bound is a literal, the page size's bucket plus one (11, 21, 51 or 101), and
 * the page size itself a parameter that cuts the rows to `limit + 1` before their JSON is built.
 * With `limit $n`, PostgreSQL's generic plan of the prepared statement had to assume an unknown
 * share of the company's rows; its estimate was 30 times the custom plan's, so every page was
 * planned afresh (about 0.5 ms of a page's 2.5 ms in the database; issue 18, eighth pass). With a
 * literal bound it keeps the generic plan after its five custom ones. Buckets rather than the size
 * itself keep the statements few (four per filter shape, sort, order and first or later page),
 * each one prepared on every connection.
 */
const afterStatement = reusableQuery<FilterShape & { sort: SortKey; order: SortOrder; after: boolean; bucket: number; credential: boolean }, Record<string, unknown>, { data: string; count: number; lastPosition: number | null; lastId: string | null; machineContext: MachineContext | null }>(
  (db, shape, value) => {
    const column = sortColumn(shape.sort);
    let rows = guarded(filtered(db, shape, value), shape, value)
      .select(APPOINTMENT_COLUMNS)
      .select(storedResourceIdsColumn)
      .select([
        sql<number>`floor(extract(epoch from ${column}) * 1000)::int8`.as('position'),
        sql<number>`row_number() over (order by ${column} ${sql.raw(shape.order)}, a.id ${sql.raw(shape.order)})`.as('n'),
      ]);
    if (shape.after) {
      const position = sql`(${value<Date>('afterValue')}, ${value<string>('afterId')})`;
      rows = shape.order === 'asc' ? rows.where(sql<boolean>`(${column}, a.id) > ${position}`) : rows.where(sql<boolean>`(${column}, a.id) < ${position}`);
    }
    const bounded = rows.orderBy(`a.${shape.sort}`, shape.order).orderBy('a.id', shape.order).limit(sql.lit(shape.bucket + 1));
    const limit = value<number>('limit');
    // A machine caller's credential check rides along (platform/auth/credential-check.ts).
    const credential = shape.credential ? machineContextColumn(value<string>('companyId'), value<string>('clientId')) : sql`null`;
    return sql<{ data: string; count: number; lastPosition: number | null; lastId: string | null; machineContext: MachineContext | null }>`
      select coalesce(json_agg(x order by p.n) filter (where p.n <= ${limit}), '[]')::text as data, count(*) as count,
        max(p.position) filter (where p.n = ${limit}) as "lastPosition", max(p.id::text) filter (where p.n = ${limit}) as "lastId",
        ${credential} as "machineContext"
      from (select * from (${bounded}) as b where b.n <= ${value<number>('limitPlusOne')}) as p cross join ${apiRow}`.compile(db);
  },
  shapeKey,
);

export type AppointmentRepository = typeof appointmentRepository;
