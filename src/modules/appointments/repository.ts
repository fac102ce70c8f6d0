import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Insertable, Selectable, Updateable } from 'kysely';
import type { Db } from '../../platform/database/index.js';
import type { AppointmentStatus, AppointmentsTable, EventTrigger } from '../../platform/database/schema.js';
import { toApi } from './mapper.js';

/** An appointment with its location's zone and its resources, as every read returns it. */
export type AppointmentRow = Selectable<AppointmentsTable> & { timezoneName: string; resourceIds: string[] };

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

/** An appointment's resource ids, ordered, as text (both drivers parse text[] the same way). */
const resourceIdsColumn = sql<string[]>`array(select ar.resource_id::text from appointment_resources as ar where ar.company_id = a.company_id and ar.appointment_id = a.id order by ar.resource_id)`.as('resourceIds');

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
  async lock(db: Db, keys: string[], options: { whenContended?: () => Promise<void> } = {}): Promise<void> {
    if (keys.length === 0) return;
    const unique = [...new Set(keys)];
    let taken = 0;
    if (options.whenContended) {
      // Without waiting first: a booking that would only be refused must not queue behind the
      // transaction that is taking its slot (see migrations/0006).
      const tried = await sql<{ taken: number }>`select slotwise_try_advisory_xact_locks(${unique}::text[]) as taken`.execute(db);
      taken = Number(tried.rows[0]!.taken);
      if (taken < 0) return;
      await options.whenContended();
    }
    // The wait is bounded by the connection's lock_timeout (DATABASE_LOCK_TIMEOUT_MS); past it the
    // statement fails with lock_not_available and the operation answers 409 BOOKING-137.
    await sql`select count(pg_advisory_xact_lock(h)) from (select distinct hashtextextended(k, 0) as h from unnest(${unique}::text[]) as k order by h offset ${taken}) as locks`.execute(db);
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
      .select(resourceIdsColumn)
      .where('a.companyId', '=', companyId)
      .where('a.id', 'in', ids);
    if (options.forUpdate) query = query.forUpdate('a');
    return query.execute();
  },

  async byId(db: Db, companyId: string, id: string, options: { forUpdate?: boolean } = {}): Promise<AppointmentRow | undefined> {
    return (await appointmentRepository.byIds(db, companyId, [id], options))[0];
  },

  /**
   * Inserts an appointment and its resource rows in one statement and answers it as stored, so a
   * booking neither sends a second insert nor reads its own row back inside the locked transaction.
   * `events` (already built from the row) go into the outbox in the same statement. (The resource
   * rows and events reference the appointment; the foreign keys are checked at the end of the
   * statement, when all are in.)
   */
  async insert(db: Db, row: Insertable<AppointmentsTable>, resourceIds: string[], timezoneName: string, events: OutboxEvent[] = []): Promise<AppointmentRow> {
    const links = resourceIds.map((resourceId) => ({
      companyId: row.companyId,
      appointmentId: row.id,
      resourceId,
      startTime: row.startTime,
      endTime: row.endTime,
      status: row.status,
      expiresAt: row.expiresAt ?? null,
      // Copies availability reads without a join (migrations/0014).
      serviceId: row.serviceId,
      duration: row.duration,
      padding: row.padding ?? 0,
    }));
    // Each `with` widens the query's table types; the casts keep one variable, as only 'created' is read.
    let query = db.with('created', (q) => q.insertInto('appointments').values(row).returningAll());
    if (links.length > 0) query = query.with('links', (q) => q.insertInto('appointmentResources').values(links).returning('resourceId')) as unknown as typeof query;
    if (events.length > 0) query = query.with('events', (q) => q.insertInto('outboxEvents').values(outboxRows(events)).returning('id')) as unknown as typeof query;
    const created = await query.selectFrom('created').selectAll().executeTakeFirstOrThrow();
    // In the order byIds answers them (resource_id order; ids are lowercase, so as strings too).
    return { ...created, timezoneName, resourceIds: [...resourceIds].sort() };
  },

  /**
   * Changes an appointment and answers it as changed (its zone and resources do not change, so they
   * are taken from `row`), in one statement: status and expiry are copied to its resource rows,
   * which availability reads, and the events of `triggers` go into the outbox, carrying the row as
   * changed (built from `row` and the plain values of `changes`, which is what the update writes).
   */
  async update(db: Db, row: AppointmentRow, changes: Updateable<AppointmentsTable>, triggers: EventTrigger[] = []): Promise<AppointmentRow> {
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
        .returningAll(),
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
    const updated = await query.selectFrom('updated').selectAll().executeTakeFirstOrThrow();
    return { ...updated, timezoneName: row.timezoneName, resourceIds: row.resourceIds };
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

  /** A page of appointments with the total that match the filters. */
  async page(db: Db, companyId: string, filters: AppointmentFilters, sort: SortKey, order: SortOrder, limit: number, offset: number) {
    const base = filtered(db, companyId, filters);
    const [rows, count] = await Promise.all([
      base.select(APPOINTMENT_COLUMNS).select(resourceIdsColumn).orderBy(`a.${sort}`, order).orderBy('a.id', order).limit(limit).offset(offset).execute(),
      base.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow(),
    ]);
    return { rows, total: Number(count.total) };
  },

  /**
   * The next `limit` appointments after `after` in (sort value, id) order: a keyset walk, so
   * appointments added meanwhile never shift it (no duplicates, nothing skipped that existed).
   */
  async after(db: Db, companyId: string, filters: AppointmentFilters, sort: SortKey, order: SortOrder, limit: number, after: Position | null) {
    let query = filtered(db, companyId, filters).select(APPOINTMENT_COLUMNS).select(resourceIdsColumn);
    if (after) {
      const column = sql.ref(`a.${sort === 'startTime' ? 'start_time' : 'created_at'}`);
      query = order === 'asc'
        ? query.where(sql<boolean>`(${column}, a.id) > (${after.value}, ${after.id})`)
        : query.where(sql<boolean>`(${column}, a.id) < (${after.value}, ${after.id})`);
    }
    return query.orderBy(`a.${sort}`, order).orderBy('a.id', order).limit(limit).execute();
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

function filtered(db: Db, companyId: string, f: AppointmentFilters) {
  let query = db
    .selectFrom('appointments as a')
    .innerJoin('locations as l', (j) => j.onRef('l.companyId', '=', 'a.companyId').onRef('l.id', '=', 'a.locationId'))
    .where('a.companyId', '=', companyId);
  if (f.LocationId) query = query.where('a.locationId', '=', f.LocationId);
  if (f.ServiceId) query = query.where('a.serviceId', '=', f.ServiceId);
  if (f.CustomerId) query = query.where('a.customerId', '=', f.CustomerId);
  if (f.status?.length) query = query.where('a.status', 'in', f.status);
  if (f.from) query = query.where('a.startTime', '>=', f.from);
  if (f.to) query = query.where('a.startTime', '<', f.to);
  if (f.locationIds) query = f.locationIds.length ? query.where('a.locationId', 'in', f.locationIds) : query.where(sql<boolean>`false`);
  if (f.ResourceId) {
    const resourceId = f.ResourceId;
    query = query.where((eb) =>
      eb.exists(
        eb
          .selectFrom('appointmentResources as ar')
          .select('ar.appointmentId')
          .whereRef('ar.companyId', '=', 'a.companyId')
          .whereRef('ar.appointmentId', '=', 'a.id')
          .where('ar.resourceId', '=', resourceId),
      ),
    );
  }
  return query;
}


export type AppointmentRepository = typeof appointmentRepository;
