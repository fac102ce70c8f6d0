import { sql } from 'kysely';
import type { InferResult, RawBuilder } from 'kysely';
import type { Db } from '../../platform/database/index.js';
import { reusableQuery } from '../../platform/database/reusable-query.js';
import type { LeadingStatement } from '../../platform/database/transaction-control.js';
import { machineContextColumn } from '../../platform/auth/credential-check.js';
import type { MachineContext } from '../../platform/auth/credential-check.js';
import type { RecurringBlocksTable } from '../../platform/database/schema.js';
import type { AppointmentStatus } from '../../domain/appointment-status.js';
import { holdingCapacity, holdingCapacitySnake } from './status-filter.js';

/** Longest an appointment can reach back into a window: the longest duration (a week) plus a day of padding. */
const MAX_APPOINTMENT_REACH_MS = 8 * 24 * 3_600_000;

/** Location, resource and service ids a block, a recurring block or an appointment may belong to. */
export interface Scope {
  locationIds: string[];
  resourceIds: string[];
  serviceIds: string[];
}

/**
 * The reads behind an availability search, booking's slot check and the unavailability calendar.
 * Every query is scoped by company and bounded by time, so a search touches only the rows of its
 * window. Built over the application's handle, or over a transaction (booking reads what is
 * committed after taking its locks).
 */
export function createAvailabilityRepository(db: Db) {
  return { ...catalogReads(db), ...closedTimeReads(db), ...appointmentReads(db) };
}

export type AvailabilityRepository = ReturnType<typeof createAvailabilityRepository>;

/** The ids a search or a booking names (what `target` reads about). */
export interface TargetIds {
  locationId: string;
  serviceId: string;
  resourceIds: string[];
  customerId: string | null;
  /**
   * A booking's slot: when given with named resources, the busy time of those resources that the
   * slot and the service's padding reach (`committedBusy`) comes back in the same statement, for
   * the committed-occupancy check before the locks (appointments/slot.ts, committedFull).
   */
  slot?: { start: Date; end: Date; now: Date } | undefined;
}

/**
 * A stored appointment's catalog read (booking, reserving or confirming it): its location and
 * service as its row has them, read by its id in the target statement itself, so the statement can
 * go in the same exchange as the read of the row (appointments/slot.ts, readStoredWithTarget).
 * No slot's busy time is read.
 */
export interface StoredTargetIds {
  appointmentId: string;
  /** Resources and a customer the request names (a reschedule's body), as in TargetIds. */
  resourceIds: string[];
  customerId: string | null;
}

/**
 * The service's columns a search or a booking reads: the duration and lead-time rules, the limits,
 * the schedule, padding, capacity and round robin. Not its name, description, fees, image, custom
 * fields or timestamps: node-postgres builds a parser per column and parses every column of a row
 * (three timestamps into Dates), and the whole row was more than half of the catalog read's 53
 * columns, read by every search and booking (issue 18).
 */
export const SERVICE_RULE_COLUMNS = [
  'id',
  'companyId',
  'duration',
  'durationSelect',
  'durationMin',
  'durationMax',
  'durationInterval',
  'availabilityType',
  'weeklyAvailability',
  'bookAheadUnit',
  'bookAheadValue',
  'bookInAdvance',
  'bookingLimit',
  'maxBookingLimit',
  'maxResourceBookingLimit',
  'dailyBookingLimitCount',
  'dailyBookingLimitMinutes',
  'bookingInterval',
  'padding',
  'bookingsPerSlot',
  'showOnline',
  'roundRobin',
  'allowPaddingOverflow',
  'ignoreExternalEvents',
] as const;

// Aliased, so that inside `target`'s one statement each table is still filtered by its own company_id.
const locationQuery = (db: Db, companyId: string, id: string | RawBuilder<string>) =>
  db
    .selectFrom('locations as l')
    .select(['l.id', 'l.timezoneName', 'l.weeklyAvailability', 'l.bookingTimerMinutes'])
    .where('l.companyId', '=', companyId)
    .where('l.id', '=', id)
    .where('l.archivedAt', 'is', null);

const bookableResourcesQuery = (db: Db, companyId: string, locationId: string | RawBuilder<string>, serviceId: string | RawBuilder<string>) =>
  db
    .selectFrom('resources as r')
    .innerJoin('resourceLocations as rl', (j) => j.onRef('rl.companyId', '=', 'r.companyId').onRef('rl.resourceId', '=', 'r.id'))
    .innerJoin('resourceServices as rs', (j) => j.onRef('rs.companyId', '=', 'r.companyId').onRef('rs.resourceId', '=', 'r.id'))
    .select(['r.id', 'r.name', 'r.timezoneName', 'r.weeklyAvailability', 'r.bookingLimit'])
    .where('r.companyId', '=', companyId)
    .where('rl.locationId', '=', locationId)
    .where('rs.serviceId', '=', serviceId)
    .where('r.archivedAt', 'is', null)
    .orderBy('r.id');

/**
 * The statement of `target` (below), compiled once per shape (platform/database/reusable-query.ts):
 * whether resource ids are named, whether a customer is, whether a machine caller's credential
 * check rides along (platform/auth/credential-check.ts), and whether the location and the service
 * are a stored appointment's (`stored`: read from its row by its id, in the same statement).
 */
const targetStatement = reusableQuery(
  (db: Db, shape: { resources: boolean; customer: boolean; credential: boolean; busy: boolean; stored: boolean }, value) => {
    const companyId = value<string>('companyId');
    // A stored appointment's: its row (sa) joined to its service, and its location and service ids from that row.
    const locationId = shape.stored ? sql<string>`sa.location_id` : value<string>('locationId');
    const serviceId = shape.stored ? sql<string>`sa.service_id` : value<string>('serviceId');
    const services = db.selectFrom('services as s');
    const from = shape.stored
      ? (db
          .selectFrom('appointments as sa')
          .innerJoin('services as s', (j) => j.onRef('s.companyId', '=', 'sa.companyId').onRef('s.id', '=', 'sa.serviceId'))
          .where('sa.companyId', '=', companyId)
          .where('sa.id', '=', value<string>('appointmentId')) as unknown as typeof services)
      : services;
    const location = locationQuery(db, companyId, locationId);
    const bookable = bookableResourcesQuery(db, companyId, locationId, serviceId);
    const liveResources = db
      .selectFrom('resources as o')
      .select('o.id')
      .where('o.companyId', '=', companyId)
      .where(sql<boolean>`o.id = any(${value('resourceIds')}::uuid[])`)
      .where('o.archivedAt', 'is', null);
    return from
      .select(SERVICE_RULE_COLUMNS.map((column) => `s.${column}` as const))
      .select((eb) => [
        sql<InferResult<typeof location>[number] | null>`(select to_json(t) from (${location}) t)`.as('location'),
        eb
          .exists(eb.selectFrom('serviceLocations as sl').select('sl.serviceId').where('sl.companyId', '=', companyId).where('sl.serviceId', '=', serviceId).where('sl.locationId', '=', locationId))
          .$castTo<boolean>()
          .as('offered'),
        sql<InferResult<typeof bookable>>`(select coalesce(json_agg(t order by t.id), '[]'::json) from (${bookable}) t)`.as('bookable'),
        (shape.resources ? sql<Array<{ id: string }>>`${jsonRows(liveResources)}` : sql<Array<{ id: string }>>`'[]'::json`).as('liveResources'),
        shape.customer
          ? eb
              .exists(eb.selectFrom('customers as c').select('c.id').where('c.companyId', '=', companyId).where('c.id', '=', value<string>('customerId')).where('c.archivedAt', 'is', null))
              .$castTo<boolean | null>()
              .as('liveCustomer')
          : sql<boolean | null>`null`.as('liveCustomer'),
        (shape.credential ? machineContextColumn(companyId, value<string>('clientId')) : sql<MachineContext | null>`null`).as('machineContext'),
        (shape.busy
          ? slotBusyColumn(companyId, value<string[]>('resourceIds'), value<Date>('slotEnd'), {
              now: value<Date>('now'),
              startsAfter: value<Date>('slotStartsAfter'),
              endsAfter: value<Date>('slotEndsAfter'),
            })
          : sql<BusyAppointmentRow[] | null>`null`
        ).as('committedBusy'),
      ])
      .where('s.companyId', '=', companyId)
      .where('s.id', '=', serviceId)
      .where('s.archivedAt', 'is', null)
      .compile();
  },
  (shape) => `${shape.resources}:${shape.customer}:${shape.credential}:${shape.busy}:${shape.stored}`,
);

/**
 * The named resources' busy rows that a booking's slot reaches, as one json column of the target
 * statement: the rows busyAppointmentsOfResources reads for [start, end + the service's padding),
 * with the padding taken from the service row the statement reads (`s`), so the pre-lock check
 * costs no exchange of its own (issue 18). The other bounds are busyBounds' for the slot, sent as
 * values (target, below).
 */
function slotBusyColumn(companyId: string, resourceIds: string[], end: Date, bounds: Omit<BusyBounds, 'to' | 'excludeIds'>) {
  const to = sql`(${end}::timestamptz + ${sql.ref('s.padding')} * interval '1 minute')`;
  return sql<BusyAppointmentRow[] | null>`${jsonRows(busyRowsSelect(companyId, resourceIds, { ...bounds, to, excludeIds: undefined }))}`;
}

/** The location, the service and the resources a search or a booking is about. */
function catalogReads(db: Db) {
  return {
    location(companyId: string, id: string) {
      return locationQuery(db, companyId, id).executeTakeFirst();
    },

    service(companyId: string, id: string) {
      return db
        .selectFrom('services')
        .select(SERVICE_RULE_COLUMNS)
        .where('companyId', '=', companyId)
        .where('id', '=', id)
        .where('archivedAt', 'is', null)
        .executeTakeFirst();
    },

    /** Live resources that work at the location and provide the service. */
    bookableResources(companyId: string, locationId: string, serviceId: string) {
      return bookableResourcesQuery(db, companyId, locationId, serviceId).execute();
    },

    /**
     * What a search or a booking is about, in one statement (one pool connection, where separate
     * reads took five at once): the service, the location, whether the service is offered there,
     * the bookable resources, and which named resource ids are live records of the company, and
     * whether the named customer is (null when none is named). Undefined when the service is not
     * a live record; `location` null when the location is not. The service is read as columns
     * (SERVICE_RULE_COLUMNS); the location's and resources' columns (text, integers, jsonb) read
     * back from json as they do from columns. `credentialOf`: a machine caller whose credential
     * check rides along (platform/auth/credential-check.ts); its context comes back as `machineContext`.
     */
    async target(companyId: string, ids: TargetIds | StoredTargetIds, credentialOf: string | null = null, options: { leading?: LeadingStatement } = {}) {
      const stored = 'appointmentId' in ids;
      const { customerId } = ids;
      const slot = stored ? undefined : ids.slot;
      const resources = ids.resourceIds.length > 0;
      const slotBounds = slot ? busyBounds({ from: slot.start, to: slot.end, now: slot.now }) : undefined;
      const [row] = await targetStatement(
        db,
        { resources, customer: customerId !== null, credential: credentialOf !== null, busy: resources && slot !== undefined, stored },
        {
          companyId,
          ...(stored ? { appointmentId: ids.appointmentId } : { locationId: ids.locationId, serviceId: ids.serviceId }),
          resourceIds: ids.resourceIds,
          customerId,
          clientId: credentialOf,
          slotEnd: slot?.end,
          slotStartsAfter: slotBounds?.startsAfter,
          slotEndsAfter: slotBounds?.endsAfter,
          now: slot?.now,
        },
        options,
      );
      if (!row) return undefined;
      const { location: locationRow, offered, bookable: bookableRows, liveResources: live, liveCustomer, machineContext, committedBusy, ...service } = row;
      return {
        service,
        location: locationRow,
        offered,
        bookable: bookableRows,
        liveResourceIds: live.map((r) => r.id),
        liveCustomer,
        machineContext,
        committedBusy: committedBusy ?? undefined,
      };
    },

    resourcesByIds(companyId: string, ids: string[]) {
      if (ids.length === 0) return Promise.resolve([]);
      return db
        .selectFrom('resources')
        .select(['id', 'timezoneName', 'weeklyAvailability'])
        .where('companyId', '=', companyId)
        .where('id', 'in', ids)
        .where('archivedAt', 'is', null)
        .execute();
    },
  };
}

/** Time that is closed whatever is booked: blocks, recurring blocks, holidays; and allocations. */
function closedTimeReads(db: Db) {
  return {
    /** One-off blocks overlapping [from, to) on any of the given scopes. */
    blocks(companyId: string, scope: Scope, from: Date, to: Date) {
      return db
        .selectFrom('blocks')
        .select(['id', 'locationId', 'resourceId', 'serviceId', 'startTime', 'endTime', 'reason'])
        .where('companyId', '=', companyId)
        .where('startTime', '<', to)
        .where('endTime', '>', from)
        .where((eb) =>
          eb.or([
            scope.locationIds.length ? eb('locationId', 'in', scope.locationIds) : eb.val(false),
            scope.resourceIds.length ? eb('resourceId', 'in', scope.resourceIds) : eb.val(false),
            scope.serviceIds.length ? eb('serviceId', 'in', scope.serviceIds) : eb.val(false),
          ]),
        )
        .orderBy('startTime')
        .execute();
    },

    /**
     * Busy time read from the resources' external calendars (modules/external-calendars),
     * overlapping [from, to): one index range scan per resource.
     */
    externalBusy(companyId: string, resourceIds: string[], from: Date, to: Date) {
      if (!resourceIds.length) return Promise.resolve([]);
      return db
        .selectFrom('externalBusyIntervals')
        .select(['resourceId', 'startTime', 'endTime', 'transparency', 'eventType'])
        .where('companyId', '=', companyId)
        .where('resourceId', 'in', resourceIds)
        .where('startTime', '<', to)
        .where('endTime', '>', from)
        .orderBy('startTime')
        .execute();
    },

    /** Recurring blocks of the scopes that may occur in [fromDate, toDate]. */
    recurringBlocks(companyId: string, scope: Scope, fromDate: string, toDate: string) {
      return db
        .selectFrom('recurringBlocks')
        .selectAll()
        .where('companyId', '=', companyId)
        .where('startDate', '<=', toDate)
        .where((eb) => eb.or([eb('endDate', 'is', null), eb('endDate', '>=', fromDate)]))
        .where((eb) =>
          eb.or([
            scope.locationIds.length ? eb('locationId', 'in', scope.locationIds) : eb.val(false),
            scope.resourceIds.length ? eb('resourceId', 'in', scope.resourceIds) : eb.val(false),
            scope.serviceIds.length ? eb('serviceId', 'in', scope.serviceIds) : eb.val(false),
          ]),
        )
        .execute();
    },

    holidays(companyId: string, locationIds: string[], fromDate: string, toDate: string) {
      if (locationIds.length === 0) return Promise.resolve([]);
      return db
        .selectFrom('holidays')
        .select(['id', 'locationId', 'date', 'name'])
        .where('companyId', '=', companyId)
        .where('locationId', 'in', locationIds)
        .where('date', '>=', fromDate)
        .where('date', '<=', toDate)
        .execute();
    },

    /** Allocations of the location that apply to the service (or to any service). */
    async allocations(companyId: string, locationId: string, serviceId: string, fromDate: string, toDate: string) {
      const [weekly, single] = await Promise.all([
        db
          .selectFrom('weeklyAllocations')
          .selectAll()
          .where('companyId', '=', companyId)
          .where('locationId', '=', locationId)
          .where((eb) => eb.or([eb('serviceId', '=', serviceId), eb('serviceId', 'is', null)]))
          .execute(),
        db
          .selectFrom('singleAllocations')
          .selectAll()
          .where('companyId', '=', companyId)
          .where('locationId', '=', locationId)
          .where((eb) => eb.or([eb('serviceId', '=', serviceId), eb('serviceId', 'is', null)]))
          .where('date', '>=', fromDate)
          .where('date', '<=', toDate)
          .execute(),
      ]);
      return { weekly, single };
    },
  };
}

/**
 * A window of time for the appointment reads: [from, to), the instant that decides which holds
 * have expired, and the appointments to leave out (the one being booked or changed).
 */
export interface AppointmentWindow {
  from: Date;
  to: Date;
  now: Date;
  excludeIds?: string[] | undefined;
}

/** One resource's share of an appointment that holds capacity: what the engine reads of it. */
export interface BusyAppointmentRow {
  id: string;
  resourceId: string;
  serviceId: string;
  duration: number;
  padding: number;
  /** Epoch milliseconds. */
  start: number;
  end: number;
}

/**
 * The same as engineWindow reads it, packed: no appointment id (the engine needs none), and the
 * service is the searched service's id or ANOTHER_SERVICE. `resourceIds` is `[resourceId]`, so the
 * row is already one of the engine's appointments (ActiveAppointment): one array per resource,
 * shared by all its rows and frozen (the engine only reads it).
 */
export type PackedBusyRow = Omit<BusyAppointmentRow, 'id'> & { resourceIds: readonly string[] };

/** What engineWindow reads: the window, its local dates, the scopes, and who is booking. */
export interface EngineWindowRequest extends AppointmentWindow {
  /** The location, the resources and the service of the search (resource ids also key busy time). */
  scope: Scope;
  /** The window's first and last local dates (recurring blocks and holidays are by date). */
  fromDate: string;
  toDate: string;
  customerId?: string | null | undefined;
  /** The service has a daily limit (count or minutes): only then are its bookings per day read. */
  dailyLimits: boolean;
  /**
   * A statement to send in front of the window's, in the same exchange (a booking's advisory
   * locks: appointments/slot.ts, lockAndCheckSlot); the window's read runs after it.
   */
  leading?: LeadingStatement | undefined;
}

/** Busy time in epoch milliseconds; resourceId null closes every resource. */
export interface TimeRow {
  resourceId: string | null;
  start: number;
  end: number;
}

export interface EngineWindowRows {
  blocks: TimeRow[];
  external: Array<TimeRow & { resourceId: string }>;
  recurring: Array<{
    resourceId: string | null;
    frequency: RecurringBlocksTable['frequency'];
    interval: number;
    startDate: string;
    endDate: string | null;
    startTime: string;
    endTime: string;
    iana: string;
    weekdays: number[];
    dayOfMonth: number | null;
  }>;
  holidays: Array<{ date: string; name: string }>;
  /** One row per resource of each appointment holding capacity (packedBusyRows, parsed). */
  busy: PackedBusyRow[];
  /** The service's bookings holding capacity in the window, read only when the service has daily limits (`dailyLimits`). */
  serviceBookings: Array<{ start: number; duration: number }>;
  /** Every appointment the customer has of the service, one row per resource; null when no customer was named. */
  customer: Array<{ id: string; status: AppointmentStatus; expiresAt: number | null; resourceId: string | null }> | null;
}

/**
 * The appointment_resources rows of appointments holding any of the resources in [from, to)
 * (holdsCapacity): the one filter behind busyAppointmentsOfResources and the busy part of
 * engineWindow. Bounded on both sides of start_time, so the index scan covers only the window: no
 * appointment is longer than a week (the duration limit), and padding reaches back a day.
 */
function busyRowsFilter(companyId: string, resourceIds: string[], bounds: BusyBounds) {
  return sql`ar.company_id = ${companyId} and ar.resource_id = any(${resourceIds}::uuid[])
      and ${holdingCapacitySnake('ar', bounds.now)}
      and ar.start_time < ${bounds.to} and ar.start_time > ${bounds.startsAfter}
      and ar.end_time > ${bounds.endsAfter}
      ${bounds.excludeIds ? sql`and ar.appointment_id <> all(${bounds.excludeIds}::uuid[])` : sql``}`;
}

/** The bounds of busyRowsFilter; `excludeIds` undefined when none are left out. */
interface BusyBounds {
  /** A value, or an SQL expression (slotBusyColumn's: the slot's end plus the service row's padding). */
  to: unknown;
  now: Date;
  startsAfter: Date;
  endsAfter: Date;
  excludeIds: string[] | undefined;
}

function busyBounds({ from, to, now, excludeIds = [] }: AppointmentWindow): BusyBounds {
  return {
    to,
    now,
    startsAfter: new Date(from.getTime() - MAX_APPOINTMENT_REACH_MS),
    endsAfter: new Date(from.getTime() - 24 * 3_600_000),
    excludeIds: excludeIds.length > 0 ? excludeIds : undefined,
  };
}

/** Those rows one per resource, times in epoch milliseconds. Column names are the database's (run without the CamelCasePlugin). */
function busyRowsQuery(companyId: string, resourceIds: string[], window: AppointmentWindow) {
  return busyRowsSelect(companyId, resourceIds, busyBounds(window));
}

function busyRowsSelect(companyId: string, resourceIds: string[], bounds: BusyBounds) {
  return sql`select ar.appointment_id as id, ar.resource_id as "resourceId", ar.service_id as "serviceId", ar.duration, ar.padding,
      ar.start_ms as "start", ar.end_ms as "end"
    from appointment_resources ar
    where ${busyRowsFilter(companyId, resourceIds, bounds)}`;
}

/**
 * The same rows packed into one text value for engineWindow, the hot read of every search and
 * booking: `resource,start,end,padding,duration,service` per row, rows joined by ';'. `resource`
 * is the row's position in `resourceIds` (from 1), `service` its service's position in
 * `serviceIds` (0: another service), times milliseconds after `baseMs` (the window's start, as
 * msAfter gives them). Measured on 2,000
 * rows (a 7-day search of 50 resources), PostgreSQL built and sent this in about a third of the
 * time json_agg of row objects took (no uuid text per row, no json keys, no numeric arithmetic),
 * and the text is a fifth the size to parse (parsePackedBusy).
 */
function packedBusyRows(companyId: string, resourceIds: string[], serviceIds: string[], bounds: BusyBounds, baseMs: unknown) {
  // start_ms and end_ms: the times as epoch milliseconds, stored (migrations/0015), so a row's
  // times are two integer subtractions, not two conversions of timestamps.
  return sql`(select string_agg(concat_ws(',', array_position(${resourceIds}::uuid[], ar.resource_id), ar.start_ms - ${baseMs}::int8, ar.end_ms - ${baseMs}::int8,
        ar.padding, ar.duration, coalesce(array_position(${serviceIds}::uuid[], ar.service_id), 0)), ';')
      from appointment_resources ar
      where ${busyRowsFilter(companyId, resourceIds, bounds)})`;
}

/**
 * The service an appointment in engineWindow's busy rows has when it is none of the searched
 * services: the engine compares serviceId only with the searched service's id (capacity sharing),
 * and no service id (a uuid) equals this.
 */
export const ANOTHER_SERVICE = 'another service';

/**
 * The numbers of rows packed by string_agg (fields joined by ',', rows by ';'; null when there are
 * none), row after row in one array, each row `width` numbers. Read character by character: a
 * 7-day search of 50 resources reads 2,000 rows here, which splitting into strings and those into
 * numbers read in 0.61 ms, this in 0.36 (issue 18). Anything but digits, '-' and the two
 * separators, or a row of another width, is a fault of the statement, not of the caller: thrown.
 */
export function packedNumbers(text: string | null, width: number): Float64Array {
  if (!text) return new Float64Array(0);
  let rows = 1;
  for (let i = text.indexOf(';'); i !== -1; i = text.indexOf(';', i + 1)) rows += 1;
  const values = new Float64Array(rows * width);
  let count = 0;
  let value = 0;
  let digits = 0;
  let negative = false;
  let fields = 0;
  for (let i = 0; i <= text.length; i++) {
    // NaN past the end: the last field ends there, as at a ';'.
    const code = text.charCodeAt(i);
    if (code >= 48 && code <= 57) {
      value = value * 10 + (code - 48);
      digits += 1;
      continue;
    }
    if (code === 45 && digits === 0 && !negative) {
      negative = true;
      continue;
    }
    const rowEnds = code === 59 || i === text.length;
    if (code !== 44 && !rowEnds) throw new Error(`Packed rows: unexpected character ${JSON.stringify(text[i])}`);
    if (digits === 0) throw new Error('Packed rows: an empty field');
    fields += 1;
    if (fields > width || (rowEnds && fields !== width)) throw new Error(`Packed rows: a row of another width than ${width}`);
    values[count++] = negative ? -value : value;
    value = 0;
    digits = 0;
    negative = false;
    if (rowEnds) fields = 0;
  }
  return values;
}

/** engineWindow's external busy time: `resource,start,end` per row, `resource` a position in `resourceIds` from 1, times after `baseMs`. */
function packedTriples(text: string | null, resourceIds: string[], baseMs: number): Array<{ resourceId: string; start: number; end: number }> {
  const values = packedNumbers(text, 3);
  const rows: Array<{ resourceId: string; start: number; end: number }> = [];
  for (let i = 0; i < values.length; i += 3) rows.push({ resourceId: resourceIds[values[i]! - 1]!, start: baseMs + values[i + 1]!, end: baseMs + values[i + 2]! });
  return rows;
}

/** engineWindow's bookings of the service: `start,duration` per row, `start` after `baseMs`. */
function packedPairs(text: string | null, baseMs: number): Array<{ start: number; duration: number }> {
  const values = packedNumbers(text, 2);
  const rows: Array<{ start: number; duration: number }> = [];
  for (let i = 0; i < values.length; i += 2) rows.push({ start: baseMs + values[i]!, duration: values[i + 1]! });
  return rows;
}

/**
 * packedBusyRows' text as rows, each already an appointment of the engine (PackedBusyRow): a 31-day
 * search of 50 resources reads 8,000 of them, and building them once instead of as rows and then
 * again as the engine's appointments (with an array each) saved about a millisecond (issue 18).
 */
export function parsePackedBusy(text: string | null, resourceIds: string[], serviceIds: string[], baseMs: number): PackedBusyRow[] {
  const values = packedNumbers(text, 6);
  const alone = resourceIds.map((id) => Object.freeze([id]));
  const rows: PackedBusyRow[] = [];
  for (let i = 0; i < values.length; i += 6) {
    const position = values[i]! - 1;
    const service = values[i + 5]!;
    rows.push({
      resourceId: resourceIds[position]!,
      resourceIds: alone[position]!,
      serviceId: service > 0 ? serviceIds[service - 1]! : ANOTHER_SERVICE,
      start: baseMs + values[i + 1]!,
      end: baseMs + values[i + 2]!,
      padding: values[i + 3]!,
      duration: values[i + 4]!,
    });
  }
  return rows;
}

/** A timestamp column as epoch milliseconds (the engine's unit; no Date parsed from text). */
const epochMs = (column: string) => sql`floor(extract(epoch from ${sql.ref(column)}) * 1000)::int8`;
/**
 * The milliseconds from `base` (a timestamptz parameter) to a timestamp column, truncated as epochMs
 * truncates, for the packed rows of external busy time and of the service's bookings (the busy
 * appointments' rows have theirs stored: migrations/0015): in floating point instead of numeric arithmetic, and with one
 * function call fewer than epoch milliseconds in floating point (date_trunc, then round), about
 * 15 % of a 31-day search's statement (issue 18, ninth pass); the numbers are also shorter to send
 * and to parse. The caller adds base's epoch milliseconds back. Exact: the difference is an
 * interval of whole microseconds (timestamptz subtraction), its seconds a float8 within about
 * 1e-9 s of the truth for any window of this API (days to weeks), so the + 0.0005 ms puts every
 * value on the right side of its millisecond before floor(), down to the microsecond: whole
 * milliseconds stay whole, 999 microseconds past one stays in it.
 */
const msAfter = (column: string, base: unknown) => sql`floor(date_part('epoch', ${sql.ref(column)} - ${base}::timestamptz) * 1000 + 0.0005)::int8`;
/** A subquery's rows as one json array ('[]' when there are none): one column of a larger select. */
const jsonRows = (query: unknown) => sql`(select coalesce(json_agg(t), '[]'::json) from (${query}) t)`;

/**
 * The statement of engineWindow (below), compiled once per shape (platform/database/reusable-query.ts):
 * whether there are resources, whether the service has daily limits, whether a customer is named,
 * whether appointments are left out. Run without the CamelCasePlugin: the aliases are already camelCase.
 */
const engineWindowStatement = reusableQuery(
  (db: Db, shape: { resources: boolean; dailyLimits: boolean; customer: boolean; exclude: boolean }, value) => {
    const companyId = value<string>('companyId');
    const locationIds = value<string[]>('locationIds');
    const resourceIds = value<string[]>('resourceIds');
    const serviceIds = value<string[]>('serviceIds');
    const from = value<Date>('from');
    const to = value<Date>('to');
    const fromDate = value<string>('fromDate');
    const toDate = value<string>('toDate');
    const now = value<Date>('now');
    const excludeIds = shape.exclude ? value<string[]>('excludeIds') : undefined;
    const notExcluded = (column: string) => (excludeIds ? sql`and ${sql.ref(column)} <> all(${excludeIds}::uuid[])` : sql``);
    const bounds: BusyBounds = { to, now, startsAfter: value<Date>('startsAfter'), endsAfter: value<Date>('endsAfter'), excludeIds };
    const inScope = (table: string) =>
      sql`(${sql.ref(`${table}.location_id`)} = any(${locationIds}::uuid[]) or ${sql.ref(`${table}.resource_id`)} = any(${resourceIds}::uuid[]) or ${sql.ref(`${table}.service_id`)} = any(${serviceIds}::uuid[]))`;
    return sql<Omit<EngineWindowRows, 'busy' | 'serviceBookings' | 'external'> & { busy: string | null; serviceBookings: string | null; external: string | null }>`
      select
        ${jsonRows(sql`select b.resource_id as "resourceId", ${epochMs('b.start_time')} as "start", ${epochMs('b.end_time')} as "end"
          from blocks b
          where b.company_id = ${companyId} and b.start_time < ${to} and b.end_time > ${from} and ${inScope('b')}`)} as blocks,
        (select string_agg(concat_ws(',', array_position(${resourceIds}::uuid[], e.resource_id), ${msAfter('e.start_time', from)}, ${msAfter('e.end_time', from)}), ';')
          from external_busy_intervals e
          where e.company_id = ${companyId} and e.resource_id = any(${resourceIds}::uuid[]) and e.start_time < ${to} and e.end_time > ${from}) as external,
        ${jsonRows(sql`select r.resource_id as "resourceId", r.frequency, r.interval, r.start_date as "startDate", r.end_date as "endDate",
            r.start_time as "startTime", r.end_time as "endTime", r.iana, r.weekdays, r.day_of_month as "dayOfMonth"
          from recurring_blocks r
          where r.company_id = ${companyId} and r.start_date <= ${toDate} and (r.end_date is null or r.end_date >= ${fromDate}) and ${inScope('r')}`)} as recurring,
        ${jsonRows(sql`select h.date, h.name
          from holidays h
          where h.company_id = ${companyId} and h.location_id = any(${locationIds}::uuid[]) and h.date >= ${fromDate} and h.date <= ${toDate}`)} as holidays,
        ${shape.resources ? packedBusyRows(companyId, resourceIds, serviceIds, bounds, value<number>('fromMs')) : sql`null::text`} as busy,
        ${
          shape.dailyLimits
            ? sql`(select string_agg(concat_ws(',', ${msAfter('a.start_time', from)}, a.duration), ';')
                from appointments a
                where a.company_id = ${companyId} and a.service_id = any(${serviceIds}::uuid[])
                  and ${holdingCapacitySnake('a', now)} and a.start_time >= ${from} and a.start_time < ${to}
                  ${notExcluded('a.id')})`
            : sql`null::text`
        } as "serviceBookings",
        ${
          shape.customer
            ? jsonRows(sql`select a.id, a.status, ${epochMs('a.expires_at')} as "expiresAt", ar.resource_id as "resourceId"
                from appointments a
                left join appointment_resources ar on ar.company_id = a.company_id and ar.appointment_id = a.id
                where a.company_id = ${companyId} and a.customer_id = ${value<string>('customerId')} and a.service_id = any(${serviceIds}::uuid[])
                  ${notExcluded('a.id')}`)
            : sql`null::json`
        } as customer`.compile(db);
  },
  (shape) => `${shape.resources}:${shape.dailyLimits}:${shape.customer}:${shape.exclude}`,
);

/**
 * The appointments already there. Which of them take capacity is the domain's rule (holdsCapacity),
 * applied in SQL by status-filter.ts.
 */
function appointmentReads(db: Db) {
  /**
   * Busy time of appointments holding any of the resources in [from, to) (holdsCapacity), one row
   * per resource, times in epoch milliseconds. One index range scan per resource on
   * appointment_resources, which carries every column read here (migrations/0014), so there is
   * no join. Raw SQL without the CamelCasePlugin (the aliases are already camelCase) and times as
   * numbers, not Dates parsed from text. (Searches and bookings read the same rows packed, in
   * engineWindow.)
   */
  async function busyAppointmentsOfResources(companyId: string, resourceIds: string[], window: AppointmentWindow): Promise<BusyAppointmentRow[]> {
    if (resourceIds.length === 0) return [];
    const result = await sql<BusyAppointmentRow>`${busyRowsQuery(companyId, resourceIds, window)}`.execute(db.withoutPlugins());
    return result.rows;
  }

  /**
   * Everything an engine run reads for its window but the catalog and allocations, in one
   * statement: blocks, external busy time, recurring blocks, holidays, busy appointments, the
   * service's bookings (daily limits) and, when a customer is named, the customer's appointments
   * of the service. One round trip instead of seven matters most inside the booking lock, where
   * every round trip is time the slot's lock and a pool connection are held. Each part is
   * company-scoped and bounded by the window; times come back as epoch milliseconds, not text to
   * parse. The few rows (blocks, recurring blocks, holidays, the customer's) come as json_agg
   * subqueries; the many (busy appointments; the service's bookings, read only for daily limits)
   * as packed text (packedBusyRows), which PostgreSQL builds and Node.js parses several times
   * faster.
   */
  async function engineWindow(companyId: string, request: EngineWindowRequest): Promise<EngineWindowRows> {
    const { scope, excludeIds = [] } = request;
    const bounds = busyBounds(request);
    const shape = { resources: scope.resourceIds.length > 0, dailyLimits: request.dailyLimits, customer: Boolean(request.customerId), exclude: excludeIds.length > 0 };
    const [row] = await engineWindowStatement(db.withoutPlugins(), shape, {
      companyId,
      locationIds: scope.locationIds,
      resourceIds: scope.resourceIds,
      serviceIds: scope.serviceIds,
      from: request.from,
      fromMs: request.from.getTime(),
      to: request.to,
      fromDate: request.fromDate,
      toDate: request.toDate,
      now: request.now,
      startsAfter: bounds.startsAfter,
      endsAfter: bounds.endsAfter,
      excludeIds,
      customerId: request.customerId ?? null,
    }, { leading: request.leading });
    // The packed times are milliseconds after the window's start (msAfter).
    const baseMs = request.from.getTime();
    return {
      ...row!,
      busy: parsePackedBusy(row!.busy, scope.resourceIds, scope.serviceIds, baseMs),
      external: packedTriples(row!.external, scope.resourceIds, baseMs),
      serviceBookings: packedPairs(row!.serviceBookings, baseMs),
    };
  }

  return {
    busyAppointmentsOfResources,
    engineWindow,

    /** Appointments that hold capacity, one row per resource, that touch any of the scopes in [from, to). */
    activeAppointmentsInScope(companyId: string, scope: Scope, { from, to, now }: Omit<AppointmentWindow, 'excludeIds'>) {
      return db
        .selectFrom('appointmentResources as ar')
        .innerJoin('appointments as a', (j) => j.onRef('a.companyId', '=', 'ar.companyId').onRef('a.id', '=', 'ar.appointmentId'))
        .select(['a.id', 'a.startTime', 'a.endTime', 'ar.resourceId'])
        .where('ar.companyId', '=', companyId)
        .where(holdingCapacity('ar', now))
        .where('ar.startTime', '<', to)
        .where('ar.startTime', '>', new Date(from.getTime() - MAX_APPOINTMENT_REACH_MS))
        .where('ar.endTime', '>', from)
        .where((eb) =>
          eb.or([
            scope.resourceIds.length ? eb('ar.resourceId', 'in', scope.resourceIds) : eb.val(false),
            scope.locationIds.length ? eb('a.locationId', 'in', scope.locationIds) : eb.val(false),
            scope.serviceIds.length ? eb('a.serviceId', 'in', scope.serviceIds) : eb.val(false),
          ]),
        )
        .execute();
    },

    /**
     * Every appointment one customer has of a service, one row per resource (the per-customer
     * limits, which count them by countsForBookingLimit and countsForLifetimeLimits).
     */
    customerAppointments(companyId: string, customerId: string, serviceId: string, excludeIds: string[] = []) {
      return db
        .selectFrom('appointments as a')
        .leftJoin('appointmentResources as ar', (j) => j.onRef('ar.companyId', '=', 'a.companyId').onRef('ar.appointmentId', '=', 'a.id'))
        .select(['a.id', 'a.status', 'a.expiresAt', 'ar.resourceId'])
        .where('a.companyId', '=', companyId)
        .where('a.customerId', '=', customerId)
        .where('a.serviceId', '=', serviceId)
        .$if(excludeIds.length > 0, (q) => q.where('a.id', 'not in', excludeIds))
        .execute();
    },
  };
}
