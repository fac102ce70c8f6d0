import { sql } from 'kysely';
import type { Expression, ExpressionBuilder, Insertable, Selectable, SqlBool, Updateable } from 'kysely';
import type { Db } from '../../platform/database/index.js';
import { transaction } from '../../platform/database/transaction.js';
import { lockLocation } from '../catalog/location-lock.js';
import type {
  BlocksTable,
  Database,
  HolidaysTable,
  RecurringBlocksTable,
  SingleAllocationsTable,
  WeeklyAllocationsTable,
} from '../../platform/database/schema.js';

export type BlockRow = Selectable<BlocksTable>;
export type RecurringBlockRow = Selectable<RecurringBlocksTable>;
export type HolidayRow = Selectable<HolidaysTable>;
export type WeeklyAllocationRow = Selectable<WeeklyAllocationsTable>;
export type SingleAllocationRow = Selectable<SingleAllocationsTable>;

/** Scope ids a row may match: a row matches when its location, resource or service is listed. */
export interface ScopeMatch {
  locationIds: string[];
  resourceIds: string[];
  serviceIds: string[];
}

/** The scope of an allocation set: a location, and optionally a service and a resource (null: none). */
export interface AllocationScope {
  locationId: string;
  serviceId: string | null;
  resourceId: string | null;
}

/** A page of a list: at most `limit` rows after skipping `offset`. */
export interface Window {
  limit: number;
  offset: number;
}

type ScopedTable = 'blocks' | 'recurringBlocks';

/** `location_id in (...) or resource_id in (...) or service_id in (...)`; nothing listed matches nothing. */
function matchesScope<T extends ScopedTable>(eb: ExpressionBuilder<Database, T>, match: ScopeMatch): Expression<SqlBool> {
  const parts: Array<Expression<SqlBool>> = [];
  if (match.locationIds.length) parts.push(eb(sql.ref('locationId'), 'in', match.locationIds));
  if (match.resourceIds.length) parts.push(eb(sql.ref('resourceId'), 'in', match.resourceIds));
  if (match.serviceIds.length) parts.push(eb(sql.ref('serviceId'), 'in', match.serviceIds));
  return parts.length ? eb.or(parts) : eb.val(false);
}

type AllocationTable = 'weeklyAllocations' | 'singleAllocations';

/** Rows of exactly this allocation scope: an absent service or resource matches only null. */
function inAllocationSet<T extends AllocationTable>(eb: ExpressionBuilder<Database, T>, companyId: string, scope: AllocationScope): Expression<SqlBool> {
  return eb.and([
    eb(sql.ref('companyId'), '=', companyId),
    eb(sql.ref('locationId'), '=', scope.locationId),
    scope.serviceId === null ? eb(sql.ref('serviceId'), 'is', null) : eb(sql.ref('serviceId'), '=', scope.serviceId),
    scope.resourceId === null ? eb(sql.ref('resourceId'), 'is', null) : eb(sql.ref('resourceId'), '=', scope.resourceId),
  ]);
}

/** A page's rows and the count of every row the filter matches, read at once. */
async function counted<R>(rows: Promise<R[]>, count: Promise<{ total: number | string | bigint }>): Promise<{ rows: R[]; total: number }> {
  const [page, { total }] = await Promise.all([rows, count]);
  return { rows: page, total: Number(total) };
}

/**
 * Runs `work` in one transaction under a lock on the location row: serialises writes that replace
 * or de-duplicate rows of one location (allocation sets, holidays).
 */
function underLocationLock<T>(db: Db, companyId: string, locationId: string, work: (trx: Db) => Promise<T>): Promise<T> {
  return transaction(db, async (trx) => {
    await lockLocation(trx, companyId, locationId);
    return work(trx);
  });
}

/** Reads of the catalog that the unavailability rules need. */
function createScopeReads(db: Db) {
  return {
    /** The time zone of a live location, for reading bare dates. */
    async locationZone(companyId: string, locationId: string): Promise<string | undefined> {
      const row = await db
        .selectFrom('locations')
        .select('timezoneName')
        .where('companyId', '=', companyId)
        .where('id', '=', locationId)
        .where('archivedAt', 'is', null)
        .executeTakeFirst();
      return row?.timezoneName;
    },

    /** Resources and services linked to any of the locations (what a location-scoped user sees). */
    async linkedToLocations(companyId: string, locationIds: string[]): Promise<{ resourceIds: string[]; serviceIds: string[] }> {
      if (locationIds.length === 0) return { resourceIds: [], serviceIds: [] };
      const [resources, services] = await Promise.all([
        db.selectFrom('resourceLocations').select('resourceId').distinct().where('companyId', '=', companyId).where('locationId', 'in', locationIds).execute(),
        db.selectFrom('serviceLocations').select('serviceId').distinct().where('companyId', '=', companyId).where('locationId', 'in', locationIds).execute(),
      ]);
      return { resourceIds: resources.map((r) => r.resourceId), serviceIds: services.map((s) => s.serviceId) };
    },
  };
}

export interface BlockPageFilter extends Window {
  /** Blocks matching these scope ids (null: any). */
  scope: ScopeMatch | null;
  /** What the caller may see (null: everything). */
  visible: ScopeMatch | null;
  /** Blocks overlapping [from, to) (null: unbounded). */
  from: Date | null;
  to: Date | null;
}

function createBlockRepository(db: Db) {
  return {
    insertBlock(row: Insertable<BlocksTable>) {
      return db.insertInto('blocks').values(row).returningAll().executeTakeFirstOrThrow();
    },

    blockById(companyId: string, id: string) {
      return db.selectFrom('blocks').selectAll().where('companyId', '=', companyId).where('id', '=', id).executeTakeFirst();
    },

    /** Blocks matching the filter, by start time. */
    pageBlocks(companyId: string, filter: BlockPageFilter) {
      let base = db.selectFrom('blocks').where('companyId', '=', companyId);
      if (filter.scope) base = base.where((eb) => matchesScope(eb, filter.scope!));
      if (filter.visible) base = base.where((eb) => matchesScope(eb, filter.visible!));
      if (filter.from) base = base.where('endTime', '>', filter.from);
      if (filter.to) base = base.where('startTime', '<', filter.to);
      return counted(
        base.selectAll().orderBy('startTime').orderBy('id').limit(filter.limit).offset(filter.offset).execute(),
        base.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow(),
      );
    },

    deleteBlock(companyId: string, id: string) {
      return db.deleteFrom('blocks').where('companyId', '=', companyId).where('id', '=', id).returningAll().executeTakeFirst();
    },
  };
}

function createRecurringBlockRepository(db: Db) {
  return {
    insertRecurring(row: Insertable<RecurringBlocksTable>) {
      return db.insertInto('recurringBlocks').values(row).returningAll().executeTakeFirstOrThrow();
    },

    recurringById(companyId: string, id: string) {
      return db.selectFrom('recurringBlocks').selectAll().where('companyId', '=', companyId).where('id', '=', id).executeTakeFirst();
    },

    /** Rules matching `scope` (null: any) that the caller may see (`visible`, null: all), by start. */
    pageRecurring(companyId: string, filter: Window & { scope: ScopeMatch | null; visible: ScopeMatch | null }) {
      let base = db.selectFrom('recurringBlocks').where('companyId', '=', companyId);
      if (filter.scope) base = base.where((eb) => matchesScope(eb, filter.scope!));
      if (filter.visible) base = base.where((eb) => matchesScope(eb, filter.visible!));
      return counted(
        base.selectAll().orderBy('startDate').orderBy('startTime').orderBy('id').limit(filter.limit).offset(filter.offset).execute(),
        base.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow(),
      );
    },

    /**
     * Reads the rule under a row lock, lets `change` compute the update from it (and throw when
     * the merged rule is invalid), and writes it: read, check and write are one transaction, so
     * two concurrent changes cannot each pass against the old rule. undefined: no such rule.
     */
    updateRecurring(companyId: string, id: string, change: (current: RecurringBlockRow) => Updateable<RecurringBlocksTable>) {
      return transaction(db, async (trx) => {
        const current = await trx
          .selectFrom('recurringBlocks')
          .selectAll()
          .where('companyId', '=', companyId)
          .where('id', '=', id)
          .forUpdate()
          .executeTakeFirst();
        if (!current) return undefined;
        const updated = await trx
          .updateTable('recurringBlocks')
          .set({ ...change(current), updatedAt: new Date() })
          .where('companyId', '=', companyId)
          .where('id', '=', id)
          .returningAll()
          .executeTakeFirstOrThrow();
        return { before: current, after: updated };
      });
    },

    /** Deletes the rule only while its scope is still the one the caller's access was checked on. */
    deleteRecurring(companyId: string, id: string, scope: { locationId: string | null; resourceId: string | null; serviceId: string | null }) {
      const same = (column: 'locationId' | 'resourceId' | 'serviceId') => (eb: ExpressionBuilder<Database, 'recurringBlocks'>) =>
        scope[column] === null ? eb(column, 'is', null) : eb(column, '=', scope[column]);
      return db
        .deleteFrom('recurringBlocks')
        .where('companyId', '=', companyId)
        .where('id', '=', id)
        .where(same('locationId'))
        .where(same('resourceId'))
        .where(same('serviceId'))
        .returningAll()
        .executeTakeFirst();
    },
  };
}

export interface HolidayPageFilter extends Window {
  locationId: string | null;
  /** The locations the caller may see (null: every one). */
  visibleLocationIds: string[] | null;
  /** Dates from and to, inclusive (null: unbounded). */
  from: string | null;
  to: string | null;
}

function createHolidayRepository(db: Db) {
  return {
    /** Inserts the holiday unless its location already has one on that date (then null). */
    insertHoliday(row: Insertable<HolidaysTable>): Promise<HolidayRow | null> {
      return underLocationLock(db, row.companyId, row.locationId, async (trx) => {
        const existing = await trx
          .selectFrom('holidays')
          .select('id')
          .where('companyId', '=', row.companyId)
          .where('locationId', '=', row.locationId)
          .where('date', '=', row.date)
          .executeTakeFirst();
        if (existing) return null;
        return trx.insertInto('holidays').values(row).returningAll().executeTakeFirstOrThrow();
      });
    },

    holidayById(companyId: string, id: string) {
      return db.selectFrom('holidays').selectAll().where('companyId', '=', companyId).where('id', '=', id).executeTakeFirst();
    },

    pageHolidays(companyId: string, filter: HolidayPageFilter) {
      let base = db.selectFrom('holidays').where('companyId', '=', companyId);
      if (filter.locationId) base = base.where('locationId', '=', filter.locationId);
      if (filter.visibleLocationIds) {
        const ids = filter.visibleLocationIds;
        base = ids.length ? base.where('locationId', 'in', ids) : base.where((eb) => eb.val(false));
      }
      if (filter.from) base = base.where('date', '>=', filter.from);
      if (filter.to) base = base.where('date', '<=', filter.to);
      return counted(
        base.selectAll().orderBy('date').orderBy('id').limit(filter.limit).offset(filter.offset).execute(),
        base.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow(),
      );
    },

    deleteHoliday(companyId: string, id: string) {
      return db.deleteFrom('holidays').where('companyId', '=', companyId).where('id', '=', id).returningAll().executeTakeFirst();
    },
  };
}

const WEEKDAY_ORDER = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'];

async function weeklySet(executor: Db, companyId: string, scope: AllocationScope): Promise<WeeklyAllocationRow[]> {
  const rows = await executor
    .selectFrom('weeklyAllocations')
    .where((eb) => inAllocationSet(eb, companyId, scope))
    .selectAll()
    .orderBy('startTime')
    .orderBy('id')
    .execute();
  return rows.sort((a, b) => WEEKDAY_ORDER.indexOf(a.day) - WEEKDAY_ORDER.indexOf(b.day));
}

function singleSet(executor: Db, companyId: string, scope: AllocationScope): Promise<SingleAllocationRow[]> {
  return executor
    .selectFrom('singleAllocations')
    .where((eb) => inAllocationSet(eb, companyId, scope))
    .selectAll()
    .orderBy('date')
    .orderBy('startTime')
    .orderBy('id')
    .execute();
}

/** Each set replace is one transaction under a lock on the location: delete exactly the scope's rows, insert the new ones. */
function createAllocationRepository(db: Db) {
  return {
    weeklyAllocations(companyId: string, scope: AllocationScope) {
      return weeklySet(db, companyId, scope);
    },

    singleAllocations(companyId: string, scope: AllocationScope) {
      return singleSet(db, companyId, scope);
    },

    replaceWeeklyAllocations(companyId: string, scope: AllocationScope, rows: Array<Insertable<WeeklyAllocationsTable>>) {
      return underLocationLock(db, companyId, scope.locationId, async (trx) => {
        await trx.deleteFrom('weeklyAllocations').where((eb) => inAllocationSet(eb, companyId, scope)).execute();
        if (rows.length) await trx.insertInto('weeklyAllocations').values(rows).execute();
        return weeklySet(trx, companyId, scope);
      });
    },

    replaceSingleAllocations(companyId: string, scope: AllocationScope, rows: Array<Insertable<SingleAllocationsTable>>) {
      return underLocationLock(db, companyId, scope.locationId, async (trx) => {
        await trx.deleteFrom('singleAllocations').where((eb) => inAllocationSet(eb, companyId, scope)).execute();
        if (rows.length) await trx.insertInto('singleAllocations').values(rows).execute();
        return singleSet(trx, companyId, scope);
      });
    },
  };
}

/** Every unavailability query, by kind; each service part takes the `Pick` of it that it uses. */
export function createUnavailabilityRepository(db: Db) {
  return {
    ...createScopeReads(db),
    ...createBlockRepository(db),
    ...createRecurringBlockRepository(db),
    ...createHolidayRepository(db),
    ...createAllocationRepository(db),
  };
}

export type UnavailabilityRepository = ReturnType<typeof createUnavailabilityRepository>;
