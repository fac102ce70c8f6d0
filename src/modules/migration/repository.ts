// v1 ids (legacy_id) to v3 records of one company.
import { sql } from 'kysely';
import type { Insertable, Selectable } from 'kysely';
import { transaction } from '../../platform/database/transaction.js';
import { canonicalV1Id } from '../../domain/migration/convert.js';
import { errorCode } from '../../platform/values.js';
import type { Db } from '../../platform/database/index.js';
import type {
  AppointmentResourcesTable,
  AppointmentsTable,
  CustomersTable,
  LocationsTable,
  MigrationJobsTable,
  RecurringBlocksTable,
  ResourcesTable,
  ServicesTable,
  SingleAllocationsTable,
  WeeklyAllocationsTable,
} from '../../platform/database/schema.js';

/** The tables whose records keep a v1 id, by the mapping key that names them. */
export const SCALAR_TABLES = {
  locationId: 'locations',
  serviceId: 'services',
  resourceId: 'resources',
  customerId: 'customers',
  appointmentId: 'appointments',
} as const;

export type ScalarKey = keyof typeof SCALAR_TABLES;

export function createMigrationRepository(db: Db) {
  return {
    /**
     * The v3 id of the record of `table` that keeps this v1 id. A live record wins over an
     * archived one, then the oldest, so a record archived and migrated again maps to the new one.
     */
    async idForLegacy(companyId: string, table: (typeof SCALAR_TABLES)[ScalarKey], legacyIds: string[]): Promise<string | null> {
      if (table === 'appointments') {
        // Appointments are never archived: the first record that took this v1 id.
        const row = await db.selectFrom('appointments').select('id').where('companyId', '=', companyId).where('legacyId', 'in', legacyIds).orderBy('createdAt').executeTakeFirst();
        return row?.id ?? null;
      }
      const row = await db
        .selectFrom(table)
        .select('id')
        .where('companyId', '=', companyId)
        .where('legacyId', 'in', legacyIds)
        .orderBy((eb) => eb.case().when('archivedAt', 'is', null).then(0).else(1).end())
        .orderBy('createdAt')
        .executeTakeFirst();
      return row?.id ?? null;
    },

    /** Every weekly and single allocation that keeps this v1 id (one v1 allocation may become several rows). */
    async allocationIdsForLegacy(companyId: string, legacyIds: string[]): Promise<string[]> {
      const [weekly, single] = await Promise.all([
        db.selectFrom('weeklyAllocations').select('id').where('companyId', '=', companyId).where('legacyId', 'in', legacyIds).orderBy('id').execute(),
        db.selectFrom('singleAllocations').select('id').where('companyId', '=', companyId).where('legacyId', 'in', legacyIds).orderBy('id').execute(),
      ]);
      return [...weekly, ...single].map((r) => r.id);
    },
  };
}

export type MigrationRepository = ReturnType<typeof createMigrationRepository>;

// --- The importer's reads and writes (modules/migration/importer.ts) ---------------------------

/** What the company already has that the importer must not create twice, by v1 id. */
export interface ExistingRecords {
  locations: Map<string, string>;
  services: Map<string, { id: string; padding: number }>;
  resources: Map<string, string>;
  customers: Map<string, string>;
  /** Live customers by lower-cased email: v1 customers are matched by email within the company. */
  customersByEmail: Map<string, { id: string; legacyId: string | null }>;
  appointments: Set<string>;
  weeklyAllocations: Set<string>;
  singleAllocations: Set<string>;
  recurringBlocks: Set<string>;
  /** v3 rows already made from each v1 allocation or block id (for the skipped counts). */
  rowsPerLegacy: { weeklyAllocations: Map<string, number>; singleAllocations: Map<string, number> };
}

export function createMigrationWrites(db: Db) {
  const toMap = (rows: Array<{ id: string; legacyId: string | null }>) => {
    const map = new Map<string, string>();
    // Oldest first (the reads order by createdAt): the first record that took a v1 id keeps it.
    for (const row of rows) if (row.legacyId !== null && !map.has(canonicalV1Id(row.legacyId))) map.set(canonicalV1Id(row.legacyId), row.id);
    return map;
  };
  const counts = (rows: Array<{ legacyId: string | null }>) => {
    const map = new Map<string, number>();
    for (const row of rows) if (row.legacyId !== null) map.set(canonicalV1Id(row.legacyId), (map.get(canonicalV1Id(row.legacyId)) ?? 0) + 1);
    return map;
  };

  return {
    /**
     * Every record of the company that keeps a v1 id, plus live customers by email. Archived
     * catalog records do not count: the specification refreshes a migrated record by deleting it
     * and running again.
     */
    async existing(companyId: string): Promise<ExistingRecords> {
      const live = (table: 'locations' | 'resources') =>
        db.selectFrom(table as 'locations').select(['id', 'legacyId']).where('companyId', '=', companyId).where('legacyId', 'is not', null).where('archivedAt', 'is', null).orderBy('createdAt').execute();
      /**
       * Legacy ids of rows whose scope (location, service, resource) is all live: a row left on an
       * archived record does not count, so deleting a migrated service and running again brings
       * its allocations back on the new one.
       */
      const liveScoped = (table: 'weeklyAllocations' | 'singleAllocations' | 'recurringBlocks') =>
        db
          .selectFrom(`${table} as row` as 'weeklyAllocations as row')
          .leftJoin('locations as l', (join) => join.onRef('l.companyId', '=', 'row.companyId').onRef('l.id', '=', 'row.locationId'))
          .leftJoin('services as s', (join) => join.onRef('s.companyId', '=', 'row.companyId').onRef('s.id', '=', 'row.serviceId'))
          .leftJoin('resources as r', (join) => join.onRef('r.companyId', '=', 'row.companyId').onRef('r.id', '=', 'row.resourceId'))
          .select('row.legacyId')
          .where('row.companyId', '=', companyId)
          .where('row.legacyId', 'is not', null)
          .where('l.archivedAt', 'is', null)
          .where('s.archivedAt', 'is', null)
          .where('r.archivedAt', 'is', null)
          .execute();
      const [locations, services, resources, customers, appointments, weekly, single, blocks] = await Promise.all([
        live('locations'),
        db.selectFrom('services').select(['id', 'legacyId', 'padding']).where('companyId', '=', companyId).where('legacyId', 'is not', null).where('archivedAt', 'is', null).orderBy('createdAt').execute(),
        live('resources'),
        db.selectFrom('customers').select(['id', 'legacyId', 'email']).where('companyId', '=', companyId).where('archivedAt', 'is', null).orderBy('createdAt').execute(),
        db.selectFrom('appointments').select('legacyId').where('companyId', '=', companyId).where('legacyId', 'is not', null).execute(),
        liveScoped('weeklyAllocations'),
        liveScoped('singleAllocations'),
        liveScoped('recurringBlocks'),
      ]);
      const serviceMap = new Map<string, { id: string; padding: number }>();
      for (const row of services) if (!serviceMap.has(canonicalV1Id(row.legacyId!))) serviceMap.set(canonicalV1Id(row.legacyId!), { id: row.id, padding: row.padding });
      const byEmail = new Map<string, { id: string; legacyId: string | null }>();
      for (const row of customers) byEmail.set(row.email.toLowerCase(), { id: row.id, legacyId: row.legacyId });
      const weeklyCounts = counts(weekly);
      const singleCounts = counts(single);
      return {
        locations: toMap(locations),
        services: serviceMap,
        resources: toMap(resources),
        customers: toMap(customers),
        customersByEmail: byEmail,
        appointments: new Set(appointments.map((r) => canonicalV1Id(r.legacyId!))),
        weeklyAllocations: new Set(weeklyCounts.keys()),
        singleAllocations: new Set(singleCounts.keys()),
        recurringBlocks: new Set(blocks.map((r) => canonicalV1Id(r.legacyId!))),
        rowsPerLegacy: { weeklyAllocations: weeklyCounts, singleAllocations: singleCounts },
      };
    },

    async insertLocation(trx: Db, row: Insertable<LocationsTable>) {
      await trx.insertInto('locations').values(row).execute();
    },

    async insertService(trx: Db, row: Insertable<ServicesTable>, locationIds: string[]) {
      await trx.insertInto('services').values(row).execute();
      if (locationIds.length) await trx.insertInto('serviceLocations').values(locationIds.map((locationId) => ({ companyId: row.companyId, serviceId: row.id, locationId }))).execute();
    },

    async insertResource(trx: Db, row: Insertable<ResourcesTable>, locationIds: string[], serviceIds: string[]) {
      await trx.insertInto('resources').values(row).execute();
      if (locationIds.length) await trx.insertInto('resourceLocations').values(locationIds.map((locationId) => ({ companyId: row.companyId, resourceId: row.id, locationId }))).execute();
      if (serviceIds.length) await trx.insertInto('resourceServices').values(serviceIds.map((serviceId) => ({ companyId: row.companyId, resourceId: row.id, serviceId }))).execute();
    },

    /** Links a resource the company already had to services this run created (a refreshed service). */
    async linkResourceServices(trx: Db, companyId: string, resourceId: string, serviceIds: string[]) {
      if (!serviceIds.length) return;
      await trx
        .insertInto('resourceServices')
        .values(serviceIds.map((serviceId) => ({ companyId, resourceId, serviceId })))
        .onConflict((conflict) => conflict.columns(['companyId', 'resourceId', 'serviceId']).doNothing())
        .execute();
    },

    async insertWeeklyAllocations(trx: Db, rows: Array<Insertable<WeeklyAllocationsTable>>) {
      if (rows.length) await trx.insertInto('weeklyAllocations').values(rows).execute();
    },

    async insertSingleAllocations(trx: Db, rows: Array<Insertable<SingleAllocationsTable>>) {
      if (rows.length) await trx.insertInto('singleAllocations').values(rows).execute();
    },

    async insertRecurringBlocks(trx: Db, rows: Array<Insertable<RecurringBlocksTable>>) {
      if (rows.length) await trx.insertInto('recurringBlocks').values(rows).execute();
    },

    async insertCustomers(trx: Db, rows: Array<Insertable<CustomersTable>>) {
      if (rows.length) await trx.insertInto('customers').values(rows).execute();
    },

    /** A customer matched by email takes the v1 id, so /v3/mapping/ids finds it (only when it has none). */
    async adoptCustomers(trx: Db, companyId: string, links: Array<{ id: string; legacyId: string }>) {
      for (const link of links) {
        await trx.updateTable('customers').set({ legacyId: link.legacyId, updatedAt: new Date() }).where('companyId', '=', companyId).where('id', '=', link.id).where('legacyId', 'is', null).execute();
      }
    },

    /** Fresh planner statistics of appointments (importer.ts, ANALYZE_AFTER_APPOINTMENTS says why). */
    async analyzeAppointments() {
      await sql`analyze appointments`.execute(db);
    },

    async insertAppointments(trx: Db, rows: Array<Insertable<AppointmentsTable>>, resources: Array<Insertable<AppointmentResourcesTable>>) {
      // Each appointment carries the copy of its resource ids (migrations/0017), in resource_id
      // order, from the list its resource rows are made of (ids are lowercase: as strings too).
      const resourceIdsOf = new Map<string, string[]>();
      for (const link of resources) {
        const ids = resourceIdsOf.get(link.appointmentId);
        if (ids) ids.push(link.resourceId);
        else resourceIdsOf.set(link.appointmentId, [link.resourceId]);
      }
      const withIds = rows.map((row) => ({ ...row, resourceIds: sql`${(resourceIdsOf.get(row.id) ?? []).sort()}::uuid[]` })) as unknown as Array<Insertable<AppointmentsTable>>;
      if (rows.length) await trx.insertInto('appointments').values(withIds).execute();
      if (resources.length) await trx.insertInto('appointmentResources').values(resources).execute();
    },
  };
}

export type MigrationWrites = ReturnType<typeof createMigrationWrites>;

// --- Migration jobs (migrations/0011_migration_jobs.sql) ----------------------------------------

export type MigrationJobRow = Selectable<MigrationJobsTable>;

export function createMigrationJobRepository(db: Db) {
  const leaseEnd = (now: number, leaseMs: number) => new Date(now + leaseMs);
  return {
    /**
     * A new running job, claimed by `owner`, with what it reads. A writing run while another
     * writing run of the company is on answers null (the unique index decides, so two instances
     * racing cannot both start).
     */
    async start(job: { companyId: string; id: string; dryRun: boolean; sourceType: 'api' | 'export'; requestedBy: string | null; source: unknown | null; owner: string; now: number; leaseMs: number }) {
      try {
        return await transaction(db, async (trx) => {
          const row = await trx
            .insertInto('migrationJobs')
            .values({
              companyId: job.companyId,
              id: job.id,
              status: 'running',
              dryRun: job.dryRun,
              sourceType: job.sourceType,
              requestedBy: job.requestedBy,
              progress: '{}',
              leaseOwner: job.owner,
              leaseUntil: leaseEnd(job.now, job.leaseMs),
            })
            .returningAll()
            .executeTakeFirstOrThrow();
          if (job.source !== null) await trx.insertInto('migrationJobSources').values({ companyId: job.companyId, jobId: job.id, source: JSON.stringify(job.source) }).execute();
          return row;
        });
      } catch (error) {
        if (errorCode(error) === '23505') return null;
        throw error;
      }
    },

    /**
     * Ends the company's running jobs whose lease ran out and whose input was not kept (an
     * operator CLI run that was killed): nobody can resume them, and they would hold the
     * one-writer guard until a server's worker looked. Answers how many it ended.
     */
    async failOrphans(companyId: string, now: number, message: string): Promise<number> {
      const result = await db
        .updateTable('migrationJobs')
        .set({ status: 'failed', error: message, leaseOwner: null, leaseUntil: null, finishedAt: new Date(now), updatedAt: new Date(now) })
        .where('companyId', '=', companyId)
        .where('status', '=', 'running')
        .where('leaseUntil', '<=', new Date(now))
        .where(({ not, exists, selectFrom }) =>
          not(exists(selectFrom('migrationJobSources as s').select('s.jobId').whereRef('s.companyId', '=', 'migrationJobs.companyId').whereRef('s.jobId', '=', 'migrationJobs.id'))),
        )
        .executeTakeFirst();
      return Number(result.numUpdatedRows);
    },

    /** The writing run of the company that is on, if any. */
    async runningWriter(companyId: string) {
      return db.selectFrom('migrationJobs').selectAll().where('companyId', '=', companyId).where('status', '=', 'running').where('dryRun', '=', false).executeTakeFirst();
    },

    async byId(companyId: string, id: string) {
      return db.selectFrom('migrationJobs').selectAll().where('companyId', '=', companyId).where('id', '=', id).executeTakeFirst();
    },

    async source(companyId: string, id: string): Promise<unknown | null> {
      const row = await db.selectFrom('migrationJobSources').select('source').where('companyId', '=', companyId).where('jobId', '=', id).executeTakeFirst();
      return row ? row.source : null;
    },

    /**
     * Stores progress inside the caller's transaction and renews the lease. False when `owner`
     * no longer holds the job (another instance took it over): the caller must roll back.
     */
    async checkpoint(trx: Db, key: { companyId: string; id: string }, owner: string, progress: unknown, now: number, leaseMs: number): Promise<boolean> {
      const result = await trx
        .updateTable('migrationJobs')
        .set({ progress: JSON.stringify(progress), leaseUntil: leaseEnd(now, leaseMs), updatedAt: new Date(now) })
        .where('companyId', '=', key.companyId)
        .where('id', '=', key.id)
        .where('leaseOwner', '=', owner)
        .where('status', '=', 'running')
        .executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },

    async renew(key: { companyId: string; id: string }, owner: string, now: number, leaseMs: number): Promise<boolean> {
      const result = await db
        .updateTable('migrationJobs')
        .set({ leaseUntil: leaseEnd(now, leaseMs) })
        .where('companyId', '=', key.companyId)
        .where('id', '=', key.id)
        .where('leaseOwner', '=', owner)
        .where('status', '=', 'running')
        .executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },

    /** Ends the job (succeeded or failed) and forgets what it read. */
    async finish(key: { companyId: string; id: string }, owner: string, end: { status: 'succeeded' | 'failed'; report: unknown; progress?: unknown; error: string | null; now: number }) {
      return transaction(db, async (trx) => {
        const result = await trx
          .updateTable('migrationJobs')
          .set({
            status: end.status,
            report: JSON.stringify(end.report),
            ...(end.progress !== undefined ? { progress: JSON.stringify(end.progress) } : {}),
            error: end.error,
            leaseOwner: null,
            leaseUntil: null,
            finishedAt: new Date(end.now),
            updatedAt: new Date(end.now),
          })
          .where('companyId', '=', key.companyId)
          .where('id', '=', key.id)
          .where('leaseOwner', '=', owner)
          .where('status', '=', 'running')
          .executeTakeFirst();
        // Only the holder forgets the input: an instance that lost the job leaves it to the new owner.
        if (Number(result.numUpdatedRows) !== 1) return false;
        await trx.deleteFrom('migrationJobSources').where('companyId', '=', key.companyId).where('jobId', '=', key.id).execute();
        return true;
      });
    },

    /** Gives the job up at once (shutdown), so another instance resumes it without waiting out the lease. */
    async release(key: { companyId: string; id: string }, owner: string, now: number) {
      await db.updateTable('migrationJobs').set({ leaseUntil: new Date(now) }).where('companyId', '=', key.companyId).where('id', '=', key.id).where('leaseOwner', '=', owner).where('status', '=', 'running').execute();
    },

    /** One running job whose lease ran out (its instance stopped), claimed for `owner`. */
    async claimStale(owner: string, now: number, leaseMs: number) {
      return transaction(db, async (trx) => {
        const stale = await trx
          .selectFrom('migrationJobs')
          .select(['companyId', 'id'])
          // A literal, not a parameter: migration_jobs_lease_idx is partial (where status = 'running'),
          // and a generic plan can use it only when the text says so.
          .where('status', '=', sql.lit('running'))
          // <=: a job released at `now` (shutdown) is taken up in the same millisecond.
          .where('leaseUntil', '<=', new Date(now))
          .orderBy('leaseUntil')
          .limit(1)
          .forUpdate()
          .skipLocked()
          .executeTakeFirst();
        if (!stale) return undefined;
        return trx
          .updateTable('migrationJobs')
          .set((eb) => ({ leaseOwner: owner, leaseUntil: leaseEnd(now, leaseMs), attempts: eb('attempts', '+', 1), updatedAt: new Date(now) }))
          .where('companyId', '=', stale.companyId)
          .where('id', '=', stale.id)
          .returningAll()
          .executeTakeFirstOrThrow();
      });
    },
  };
}

export type MigrationJobRepository = ReturnType<typeof createMigrationJobRepository>;
