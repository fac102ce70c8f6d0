import { sql } from 'kysely';
import type { Expression, ExpressionBuilder, Insertable, Selectable, SqlBool, Updateable } from 'kysely';
import type { Db } from '../../platform/database/index.js';
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

const WEEKDAY_ORDER = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'];

export function createUnavailabilityRepository(db: Db) {
  /** Serialises writes that replace or de-duplicate rows of one location (allocation sets, holidays). */
  async function lockLocation(trx: Db, companyId: string, locationId: string) {
    await trx.selectFrom('locations').select('id').where('companyId', '=', companyId).where('id', '=', locationId).forUpdate().execute();
  }

  async function weeklySet(executor: Db | Db, companyId: string, scope: AllocationScope): Promise<WeeklyAllocationRow[]> {
    const rows = await executor
      .selectFrom('weeklyAllocations')
      .where((eb) => inAllocationSet(eb, companyId, scope))
      .selectAll()
      .orderBy('startTime')
      .orderBy('id')
      .execute();
    return rows.sort((a, b) => WEEKDAY_ORDER.indexOf(a.day) - WEEKDAY_ORDER.indexOf(b.day));
  }

  function singleSet(executor: Db | Db, companyId: string, scope: AllocationScope): Promise<SingleAllocationRow[]> {
    return executor
      .selectFrom('singleAllocations')
      .where((eb) => inAllocationSet(eb, companyId, scope))
      .selectAll()
      .orderBy('date')
      .orderBy('startTime')
      .orderBy('id')
      .execute();
  }

  /** Replaces the whole set of exactly this scope, in one transaction under a lock on the location. */
  function replaceSet<T extends AllocationTable, R>(
    table: T,
    companyId: string,
    scope: AllocationScope,
    rows: Array<Insertable<Database[T]>>,
    read: (executor: Db, companyId: string, scope: AllocationScope) => Promise<R[]>,
  ): Promise<R[]> {
    return db.transaction().execute(async (trx) => {
      await lockLocation(trx, companyId, scope.locationId);
      await trx.deleteFrom(table as AllocationTable).where((eb) => inAllocationSet(eb, companyId, scope)).execute();
      if (rows.length) await trx.insertInto(table as AllocationTable).values(rows as never).execute();
      return read(trx, companyId, scope);
    });
  }

  return {
    // --- scope helpers ----------------------------------------------------------------------

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

    // --- one-off blocks ---------------------------------------------------------------------

    insertBlock(row: Insertable<BlocksTable>) {
      return db.insertInto('blocks').values(row).returningAll().executeTakeFirstOrThrow();
    },

    blockById(companyId: string, id: string) {
      return db.selectFrom('blocks').selectAll().where('companyId', '=', companyId).where('id', '=', id).executeTakeFirst();
    },

    /** Blocks matching `scope` (when given), visible to the caller, overlapping [from, to), by start time. */
    async pageBlocks(
      companyId: string,
      filter: { scope: ScopeMatch | null; visible: ScopeMatch | null; from: Date | null; to: Date | null },
      limit: number,
      offset: number,
    ) {
      let base = db.selectFrom('blocks').where('companyId', '=', companyId);
      if (filter.scope) base = base.where((eb) => matchesScope(eb, filter.scope!));
      if (filter.visible) base = base.where((eb) => matchesScope(eb, filter.visible!));
      if (filter.from) base = base.where('endTime', '>', filter.from);
      if (filter.to) base = base.where('startTime', '<', filter.to);
      const [rows, count] = await Promise.all([
        base.selectAll().orderBy('startTime').orderBy('id').limit(limit).offset(offset).execute(),
        base.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow(),
      ]);
      return { rows, total: Number(count.total) };
    },

    deleteBlock(companyId: string, id: string) {
      return db.deleteFrom('blocks').where('companyId', '=', companyId).where('id', '=', id).returningAll().executeTakeFirst();
    },

    // --- recurring blocks -------------------------------------------------------------------

    insertRecurring(row: Insertable<RecurringBlocksTable>) {
      return db.insertInto('recurringBlocks').values(row).returningAll().executeTakeFirstOrThrow();
    },

    recurringById(companyId: string, id: string) {
      return db.selectFrom('recurringBlocks').selectAll().where('companyId', '=', companyId).where('id', '=', id).executeTakeFirst();
    },

    async pageRecurring(companyId: string, filter: { scope: ScopeMatch | null; visible: ScopeMatch | null }, limit: number, offset: number) {
      let base = db.selectFrom('recurringBlocks').where('companyId', '=', companyId);
      if (filter.scope) base = base.where((eb) => matchesScope(eb, filter.scope!));
      if (filter.visible) base = base.where((eb) => matchesScope(eb, filter.visible!));
      const [rows, count] = await Promise.all([
        base.selectAll().orderBy('startDate').orderBy('startTime').orderBy('id').limit(limit).offset(offset).execute(),
        base.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow(),
      ]);
      return { rows, total: Number(count.total) };
    },

    /**
     * Reads the rule under a row lock, lets `change` compute the update from it (and throw when
     * the merged rule is invalid), and writes it: read, check and write are one transaction, so
     * two concurrent changes cannot each pass against the old rule. undefined: no such rule.
     */
    updateRecurring(companyId: string, id: string, change: (current: RecurringBlockRow) => Updateable<RecurringBlocksTable>) {
      return db.transaction().execute(async (trx) => {
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

    // --- holidays ---------------------------------------------------------------------------

    /** Inserts the holiday unless its location already has one on that date (then null). */
    insertHoliday(row: Insertable<HolidaysTable>): Promise<HolidayRow | null> {
      return db.transaction().execute(async (trx) => {
        await lockLocation(trx, row.companyId, row.locationId);
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

    async pageHolidays(
      companyId: string,
      filter: { locationId: string | null; visibleLocationIds: string[] | null; from: string | null; to: string | null },
      limit: number,
      offset: number,
    ) {
      let base = db.selectFrom('holidays').where('companyId', '=', companyId);
      if (filter.locationId) base = base.where('locationId', '=', filter.locationId);
      if (filter.visibleLocationIds) {
        const ids = filter.visibleLocationIds;
        base = ids.length ? base.where('locationId', 'in', ids) : base.where((eb) => eb.val(false));
      }
      if (filter.from) base = base.where('date', '>=', filter.from);
      if (filter.to) base = base.where('date', '<=', filter.to);
      const [rows, count] = await Promise.all([
        base.selectAll().orderBy('date').orderBy('id').limit(limit).offset(offset).execute(),
        base.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow(),
      ]);
      return { rows, total: Number(count.total) };
    },

    deleteHoliday(companyId: string, id: string) {
      return db.deleteFrom('holidays').where('companyId', '=', companyId).where('id', '=', id).returningAll().executeTakeFirst();
    },

    // --- allocations ------------------------------------------------------------------------

    weeklyAllocations(companyId: string, scope: AllocationScope) {
      return weeklySet(db, companyId, scope);
    },

    singleAllocations(companyId: string, scope: AllocationScope) {
      return singleSet(db, companyId, scope);
    },

    replaceWeeklyAllocations(companyId: string, scope: AllocationScope, rows: Array<Insertable<WeeklyAllocationsTable>>) {
      return replaceSet('weeklyAllocations', companyId, scope, rows, weeklySet);
    },

    replaceSingleAllocations(companyId: string, scope: AllocationScope, rows: Array<Insertable<SingleAllocationsTable>>) {
      return replaceSet('singleAllocations', companyId, scope, rows, singleSet);
    },
  };
}

export type UnavailabilityRepository = ReturnType<typeof createUnavailabilityRepository>;
