/**
 * Applies a checked migration plan (domain/migration/plan.ts, then checks.ts) to one company:
 * the records in the order of MIGRATION_KINDS, each in its own transaction (catalog records, and
 * the allocation set of one scope) or in batches of BATCH_SIZE (blocks, customers, appointments).
 *
 * - Idempotent on legacyId: a v1 id the company already has is skipped, so a second run, or one
 *   resumed after a crash, creates only what is missing.
 * - A batch the database refuses is written again one record per transaction, so one bad record
 *   fails alone (reported with its kind, v1 id and the reason) and the others land. Any other error
 *   ends the run (isRecordRefusal).
 * - `checkpoint` runs inside every write transaction with the progress as it will be once that
 *   transaction commits: the job's counts of what landed are exact whatever happens next.
 * - A dry run takes the same path without writing: the report says what a run would do.
 *
 * Imported appointments are facts of v1: they are written as they were (status, times, resources)
 * without the booking checks, and emit no webhooks or messages; they only keep their time taken.
 */
import { randomUUID } from 'node:crypto';
import type { Insertable } from 'kysely';
import type { Db } from '../../platform/database/index.js';
import { transaction } from '../../platform/database/transaction.js';
import type { AppointmentResourcesTable, AppointmentsTable, CustomersTable, RecurringBlocksTable } from '../../platform/database/schema.js';
import { errorCode, errorMessage } from '../../platform/values.js';
import { MIGRATION_KINDS, zeroCounts } from '../../domain/migration/plan.js';
import type { KindCounts, MigrationKind, MigrationPlan, PlannedAllocationSet, RecordNote } from '../../domain/migration/plan.js';
import type { AppointmentImport, CustomerImport, RecurringBlockImport } from '../../domain/migration/convert.js';
import type { TouchedEntities } from '../availability/cache.js';
import type { MigrationWrites } from './repository.js';

/** Records per transaction for the kinds that come in thousands. */
export const BATCH_SIZE = 500;
/**
 * Appointments a run writes before it refreshes the planner's statistics of that table, once. The
 * foreign key check of each appointment_resources row finds its appointment with a plan that every
 * connection caches. Planned while the table is small and never analyzed, it scans
 * appointments_created_idx on company_id alone, reading every appointment of the company for each
 * row: 0.3 ms a row at 15,000, more with every batch. With statistics it takes the primary key.
 * PostgreSQL's autovacuum gets there in time; the embedded database (one process) never does.
 */
export const ANALYZE_AFTER_APPOINTMENTS = 2000;
/** The report lists at most this many warnings (their total is in warningsOmitted). */
const MAX_WARNINGS = 1000;

export interface KindProgress {
  total: number;
  processed: number;
  created: number;
  skipped: number;
  failed: number;
}
export type MigrationProgress = Record<MigrationKind, KindProgress>;

export interface MigrationReport {
  dryRun: boolean;
  created: KindCounts;
  skipped: KindCounts;
  failed: RecordNote[];
  /** Left behind on purpose: deleted in v1, ended allocations, past appointments, v1 holds. */
  ignored: KindCounts;
  /** Migrated with something dropped or bent (the first MAX_WARNINGS). */
  warnings: RecordNote[];
  warningsOmitted: number;
}

export interface ImportOptions {
  dryRun: boolean;
  /** Runs inside each write transaction; throwing rolls it back (a lost lease, say). */
  checkpoint?: (trx: Db, progress: MigrationProgress) => Promise<void>;
  /** After each step, outside any transaction (the CLI's progress bar, a dry run's job). */
  onProgress?: (progress: MigrationProgress) => void | Promise<void>;
  /** Created counts an earlier attempt of the same run committed (a resumed run). */
  createdBefore?: Partial<KindCounts>;
  /** Checked between transactions: the run stops there (the instance is shutting down). */
  signal?: AbortSignal;
  /**
   * Tests only: runs inside each write transaction after its inserts. A throw with a database
   * refusal code (isRecordRefusal) fails the transaction's records; any other throw ends the run
   * as a crash would.
   */
  fault?: (kind: MigrationKind, trx: Db) => Promise<void>;
}

/** The run stopped between two transactions; what committed stays, a resumed run does the rest. */
export class MigrationInterrupted extends Error {
  constructor() {
    super('the migration run was interrupted');
    this.name = 'MigrationInterrupted';
  }
}

/**
 * Whether an error is the database refusing the records of one transaction (SQLSTATE class 22 data
 * exception, 23 integrity constraint violation, 54 a value too large for an index or row): those
 * records fail and the run goes on. Anything else (the connection lost, a lost lease, a shutdown,
 * a bug) ends the run: what committed stays, and the job is resumed (jobs.ts), instead of every
 * record that follows being reported failed for a reason that is not theirs.
 */
export function isRecordRefusal(error: unknown): boolean {
  return /^(22|23|54)[0-9A-Z]{3}$/.test(errorCode(error) ?? '');
}

/** A database refusal in words an operator can act on. */
function refusal(error: unknown): string {
  const code = errorCode(error);
  const constraint = (error as { constraint?: string }).constraint;
  if (code === '23505') return constraint === 'customers_email_key' ? 'a live customer with this email already exists' : `a record with the same unique value already exists${constraint ? ` (${constraint})` : ''}`;
  if (code === '23503') return 'a record it refers to no longer exists (deleted during the run?)';
  if (code === '23514' && constraint) return `breaks the database rule ${constraint}`;
  if (code === '22001') return 'a text is longer than v3 stores';
  return errorMessage(error);
}

export const emptyProgress = (): MigrationProgress =>
  Object.fromEntries(MIGRATION_KINDS.map((kind) => [kind, { total: 0, processed: 0, created: 0, skipped: 0, failed: 0 }])) as MigrationProgress;

const json = (value: unknown) => (value === null || value === undefined ? null : JSON.stringify(value));

/**
 * Lets timers and I/O run between two transactions. The embedded database answers without
 * returning to the event loop, so without this a run would hold the process until it ends (no
 * request answered, not even the 202 of its own POST or a GET of its job).
 */
const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

export function createImporter(deps: { db: Db; writes: MigrationWrites; touch?: (companyId: string, entities: TouchedEntities) => Promise<void> }) {
  const { db, writes } = deps;

  async function run(companyId: string, plan: MigrationPlan, options: ImportOptions): Promise<MigrationReport> {
    const { dryRun } = options;
    const progress = emptyProgress();
    const failed: RecordNote[] = [...plan.failed];
    const warnings: RecordNote[] = [...plan.warnings];
    for (const note of plan.failed) progress[note.kind].failed += 1;
    const existing = await writes.existing(companyId);
    const before = { ...zeroCounts(), ...options.createdBefore };
    const touched = { locations: new Set<string>(), services: new Set<string>(), resources: new Set<string>() };

    progress.locations.total = plan.locations.length;
    progress.services.total = plan.services.length;
    progress.resources.total = plan.resources.length;
    progress.weeklyAllocations.total = plan.allocationSets.reduce((n, s) => n + s.weekly.length, 0);
    progress.singleAllocations.total = plan.allocationSets.reduce((n, s) => n + s.single.length, 0);
    progress.recurringBlocks.total = plan.recurringBlocks.length;
    progress.customers.total = plan.customers.length;
    progress.appointments.total = plan.appointments.length;
    for (const kind of MIGRATION_KINDS) progress[kind].created = before[kind];
    // The totals are known: a job shows them before its first write.
    await options.onProgress?.(progress);

    /** Skipped records of a kind: those found, less the ones this run created before a resume. */
    const skip = (kind: MigrationKind, found: number) => {
      progress[kind].processed += found;
      const fromEarlierAttempt = Math.min(found, before[kind]);
      before[kind] -= fromEarlierAttempt;
      progress[kind].skipped += found - fromEarlierAttempt;
    };
    const fail = (kind: MigrationKind, legacyId: string | null, message: string, rows = 1) => {
      failed.push({ kind, legacyId, message });
      progress[kind].failed += 1;
      progress[kind].processed += rows;
    };
    const warn = (kind: MigrationKind, legacyId: string | null, message: string) => warnings.push({ kind, legacyId, message });
    const stopIfAsked = () => {
      if (options.signal?.aborted) throw new MigrationInterrupted();
    };

    type Delta = Partial<Record<MigrationKind, number>>;
    const add = (target: MigrationProgress, created: Delta, processed: Delta) => {
      for (const [k, n] of Object.entries(created) as Array<[MigrationKind, number]>) target[k].created += n;
      for (const [k, n] of Object.entries(processed) as Array<[MigrationKind, number]>) target[k].processed += n;
    };

    /**
     * One write transaction: `work` inserts; `created` and `processed` say what it adds to the
     * progress, which the checkpoint stores in the same transaction. A dry run writes nothing and
     * counts what would be.
     */
    async function write(kind: MigrationKind, created: Delta, processed: Delta, work: (trx: Db) => Promise<void>): Promise<void> {
      await yieldToEventLoop();
      stopIfAsked();
      if (!dryRun) {
        await transaction(db, async (trx) => {
          await work(trx);
          await options.fault?.(kind, trx);
          const next = structuredClone(progress);
          add(next, created, processed);
          await options.checkpoint?.(trx, next);
        });
      }
      add(progress, created, processed);
    }

    /** A batch in one transaction; when it fails, each record in its own so only the bad one fails. */
    async function writeBatch<T>(kind: MigrationKind, items: T[], legacyIdOf: (item: T) => string, created: (items: T[]) => Delta, insert: (trx: Db, items: T[]) => Promise<void>): Promise<void> {
      if (!items.length) return;
      try {
        await write(kind, created(items), { [kind]: items.length }, (trx) => insert(trx, items));
        return;
      } catch (error) {
        if (!isRecordRefusal(error)) throw error;
        if (items.length === 1) return fail(kind, legacyIdOf(items[0]!), refusal(error));
      }
      for (const item of items) await writeBatch(kind, [item], legacyIdOf, created, insert);
    }

    const createdServices = new Set<string>();
    const ids = {
      locations: new Map(existing.locations),
      services: new Map(existing.services),
      resources: new Map(existing.resources),
      customers: new Map(existing.customers),
    };

    // Locations, services, resources: one transaction each (tens to hundreds of records).
    for (const location of plan.locations) {
      const legacyId = location.fields.legacyId;
      if (ids.locations.has(legacyId)) {
        skip('locations', 1);
        continue;
      }
      const id = randomUUID();
      const { address, weeklyAvailability, ...fields } = location.fields;
      try {
        await write('locations', { locations: 1 }, { locations: 1 }, (trx) =>
          writes.insertLocation(trx, { ...fields, companyId, id, address: json(address), weeklyAvailability: json(weeklyAvailability) }),
        );
        ids.locations.set(legacyId, id);
        touched.locations.add(id);
      } catch (error) {
        if (!isRecordRefusal(error)) throw error;
        fail('locations', legacyId, refusal(error));
      }
    }
    await options.onProgress?.(progress);

    for (const service of plan.services) {
      const legacyId = service.fields.legacyId;
      if (ids.services.has(legacyId)) {
        skip('services', 1);
        continue;
      }
      const locationIds = service.locationLegacyIds.map((l) => ids.locations.get(l)).filter((id): id is string => id !== undefined);
      if (!locationIds.length) {
        fail('services', legacyId, `its locations (${service.locationLegacyIds.join(', ')}) did not migrate`);
        continue;
      }
      const id = randomUUID();
      const { weeklyAvailability, ...fields } = service.fields;
      try {
        await write('services', { services: 1 }, { services: 1 }, (trx) => writes.insertService(trx, { ...fields, companyId, id, weeklyAvailability: json(weeklyAvailability) }, locationIds));
        ids.services.set(legacyId, { id, padding: fields.padding ?? 0 });
        createdServices.add(legacyId);
        touched.services.add(id);
      } catch (error) {
        if (!isRecordRefusal(error)) throw error;
        fail('services', legacyId, refusal(error));
      }
    }
    await options.onProgress?.(progress);

    for (const resource of plan.resources) {
      const legacyId = resource.fields.legacyId;
      const known = ids.resources.get(legacyId);
      if (known) {
        skip('resources', 1);
        // A service deleted in v3 and created again by this run is offered again by the resources
        // that offer it in v1 (the specification's way to refresh a migrated service).
        const recreated = resource.serviceLegacyIds.filter((s) => createdServices.has(s)).map((s) => ids.services.get(s)!.id);
        if (recreated.length && !dryRun) {
          try {
            await transaction(db, (trx) => writes.linkResourceServices(trx, companyId, known, recreated));
            touched.resources.add(known);
          } catch (error) {
            if (!isRecordRefusal(error)) throw error;
            warn('resources', legacyId, `could not offer the recreated services: ${refusal(error)}`);
          }
        }
        continue;
      }
      const locationIds = resource.locationLegacyIds.map((l) => ids.locations.get(l)).filter((id): id is string => id !== undefined);
      if (!locationIds.length) {
        fail('resources', legacyId, `its location (${resource.locationLegacyIds.join(', ') || 'none'}) did not migrate`);
        continue;
      }
      const missing = resource.serviceLegacyIds.filter((s) => !ids.services.has(s));
      if (missing.length) warn('resources', legacyId, `services ${missing.join(', ')} did not migrate, so the resource does not offer them`);
      const serviceIds = resource.serviceLegacyIds.map((s) => ids.services.get(s)?.id).filter((id): id is string => id !== undefined);
      const id = randomUUID();
      const { weeklyAvailability, ...fields } = resource.fields;
      try {
        await write('resources', { resources: 1 }, { resources: 1 }, (trx) =>
          writes.insertResource(trx, { ...fields, companyId, id, weeklyAvailability: json(weeklyAvailability) }, locationIds, serviceIds),
        );
        ids.resources.set(legacyId, id);
        touched.resources.add(id);
      } catch (error) {
        if (!isRecordRefusal(error)) throw error;
        fail('resources', legacyId, refusal(error));
      }
    }
    await options.onProgress?.(progress);

    for (const set of plan.allocationSets) await writeAllocationSet(set);
    await options.onProgress?.(progress);

    /**
     * The allocations of one scope in one transaction (rule 5: the set is replaced whole or not at
     * all). When it fails, each v1 allocation of the set is tried in its own transaction.
     */
    async function writeAllocationSet(set: PlannedAllocationSet) {
      const { scope } = set;
      const fresh = {
        weekly: set.weekly.filter((w) => !existing.weeklyAllocations.has(w.legacyId)),
        single: set.single.filter((s) => !existing.singleAllocations.has(s.legacyId)),
      };
      skip('weeklyAllocations', set.weekly.length - fresh.weekly.length);
      skip('singleAllocations', set.single.length - fresh.single.length);
      const byLegacy = new Map<string, { kind: MigrationKind; weekly: typeof fresh.weekly; single: typeof fresh.single }>();
      for (const w of fresh.weekly) {
        const entry = byLegacy.get(w.legacyId) ?? { kind: 'weeklyAllocations', weekly: [], single: [] };
        entry.weekly.push(w);
        byLegacy.set(w.legacyId, entry);
      }
      for (const s of fresh.single) {
        const entry = byLegacy.get(s.legacyId) ?? { kind: 'singleAllocations', weekly: [], single: [] };
        entry.single.push(s);
        byLegacy.set(s.legacyId, entry);
      }
      if (!byLegacy.size) return;
      const locationId = ids.locations.get(scope.locationLegacyId);
      const serviceId = scope.serviceLegacyId === null ? null : ids.services.get(scope.serviceLegacyId)?.id;
      const resourceId = scope.resourceLegacyId === null ? null : ids.resources.get(scope.resourceLegacyId);
      const unresolved = !locationId ? `location ${scope.locationLegacyId}` : serviceId === undefined ? `service ${scope.serviceLegacyId}` : resourceId === undefined ? `resource ${scope.resourceLegacyId}` : null;
      if (unresolved || !locationId || serviceId === undefined || resourceId === undefined) {
        for (const [legacyId, entry] of byLegacy) fail(entry.kind, legacyId, `its ${unresolved} did not migrate`, entry.weekly.length + entry.single.length);
        return;
      }
      const scoped = { companyId, locationId, serviceId, resourceId };
      const insert = async (trx: Db, weekly: typeof fresh.weekly, single: typeof fresh.single) => {
        await writes.insertWeeklyAllocations(
          trx,
          weekly.map((w) => ({ ...scoped, id: randomUUID(), day: w.day, startTime: w.start, endTime: w.end, bookingsPerSlot: w.bookingsPerSlot ?? null, legacyId: w.legacyId })),
        );
        await writes.insertSingleAllocations(
          trx,
          single.map((s) => ({ ...scoped, id: randomUUID(), date: s.date, startTime: s.start, endTime: s.end, bookingsPerSlot: s.bookingsPerSlot ?? null, legacyId: s.legacyId })),
        );
      };
      const kindOfSet: MigrationKind = fresh.weekly.length ? 'weeklyAllocations' : 'singleAllocations';
      try {
        const counts = { weeklyAllocations: fresh.weekly.length, singleAllocations: fresh.single.length };
        await write(kindOfSet, counts, counts, (trx) => insert(trx, fresh.weekly, fresh.single));
      } catch (error) {
        if (!isRecordRefusal(error)) throw error;
        for (const [legacyId, entry] of byLegacy) {
          try {
            const counts = { weeklyAllocations: entry.weekly.length, singleAllocations: entry.single.length };
            await write(entry.kind, counts, counts, (trx) => insert(trx, entry.weekly, entry.single));
          } catch (single) {
            if (!isRecordRefusal(single)) throw single;
            fail(entry.kind, legacyId, refusal(single), entry.weekly.length + entry.single.length);
          }
        }
      }
      touched.locations.add(locationId);
      if (serviceId) touched.services.add(serviceId);
      if (resourceId) touched.resources.add(resourceId);
    }

    // Recurring blocks, customers, appointments: batches.
    const blocks: Array<{ block: RecurringBlockImport; resourceId: string }> = [];
    for (const block of plan.recurringBlocks) {
      if (existing.recurringBlocks.has(block.fields.legacyId)) skip('recurringBlocks', 1);
      else {
        const resourceId = ids.resources.get(block.resourceLegacyId);
        if (!resourceId) fail('recurringBlocks', block.fields.legacyId, `its resource ${block.resourceLegacyId} did not migrate`);
        else blocks.push({ block, resourceId });
      }
    }
    for (let i = 0; i < blocks.length; i += BATCH_SIZE) {
      await writeBatch(
        'recurringBlocks',
        blocks.slice(i, i + BATCH_SIZE),
        (b) => b.block.fields.legacyId,
        (items) => ({ recurringBlocks: items.length }),
        async (trx, items) => {
          const rows: Array<Insertable<RecurringBlocksTable>> = items.map(({ block, resourceId }) => ({ ...block.fields, companyId, id: randomUUID(), resourceId }));
          await writes.insertRecurringBlocks(trx, rows);
          for (const item of items) touched.resources.add(item.resourceId);
        },
      );
      await options.onProgress?.(progress);
    }

    // Customers: matched by email within the company; a second v1 customer with one email maps to the first.
    const emails = new Map(existing.customersByEmail);
    const newCustomers: Array<{ customer: CustomerImport; id: string }> = [];
    const adopt: Array<{ id: string; legacyId: string }> = [];
    for (const customer of plan.customers) {
      const legacyId = customer.fields.legacyId;
      if (ids.customers.has(legacyId)) {
        skip('customers', 1);
        continue;
      }
      const match = emails.get(customer.fields.email.toLowerCase());
      if (match) {
        ids.customers.set(legacyId, match.id);
        skip('customers', 1);
        if (match.legacyId === null) {
          adopt.push({ id: match.id, legacyId });
          match.legacyId = legacyId;
        }
        warn('customers', legacyId, `matched the existing v3 customer ${match.id} by email`);
        continue;
      }
      const id = randomUUID();
      ids.customers.set(legacyId, id);
      emails.set(customer.fields.email.toLowerCase(), { id, legacyId });
      newCustomers.push({ customer, id });
    }
    if (adopt.length && !dryRun) {
      for (let i = 0; i < adopt.length; i += BATCH_SIZE) await transaction(db, (trx) => writes.adoptCustomers(trx, companyId, adopt.slice(i, i + BATCH_SIZE)));
    }
    for (let i = 0; i < newCustomers.length; i += BATCH_SIZE) {
      await writeBatch(
        'customers',
        newCustomers.slice(i, i + BATCH_SIZE),
        (c) => c.customer.fields.legacyId,
        (items) => ({ customers: items.length }),
        (trx, items) => writes.insertCustomers(trx, items.map(({ customer, id }) => ({ ...customer.fields, companyId, id }))),
      );
      await options.onProgress?.(progress);
    }
    // A customer whose insert failed must not be linked by the appointments below.
    for (const note of failed) if (note.kind === 'customers' && note.legacyId) ids.customers.delete(note.legacyId);

    // Appointments, with their resources; a booking contact without a v1 customer becomes one.
    const appointments: Array<{ appointment: AppointmentImport; row: Insertable<AppointmentsTable>; resources: string[]; contact: Insertable<CustomersTable> | null }> = [];
    for (const appointment of plan.appointments) {
      const legacyId = appointment.fields.legacyId;
      if (existing.appointments.has(legacyId)) {
        skip('appointments', 1);
        continue;
      }
      const locationId = ids.locations.get(appointment.locationLegacyId);
      const service = ids.services.get(appointment.serviceLegacyId);
      const resourceIds = appointment.resourceLegacyIds.map((r) => ids.resources.get(r));
      const missing = !locationId
        ? `location ${appointment.locationLegacyId}`
        : !service
          ? `service ${appointment.serviceLegacyId}`
          : resourceIds.includes(undefined)
            ? `resource ${appointment.resourceLegacyIds[resourceIds.indexOf(undefined)]}`
            : null;
      if (missing || !locationId || !service) {
        fail('appointments', legacyId, `its ${missing} did not migrate`);
        continue;
      }
      let customerId: string | null = null;
      let contact: Insertable<CustomersTable> | null = null;
      if (appointment.customerLegacyId !== null) {
        customerId = ids.customers.get(appointment.customerLegacyId) ?? null;
        if (!customerId) warn('appointments', legacyId, `its customer ${appointment.customerLegacyId} did not migrate; the appointment is kept without a customer`);
      } else if (appointment.contact) {
        const match = emails.get(appointment.contact.email.toLowerCase());
        if (match) customerId = match.id;
        else {
          const [firstName, ...rest] = (appointment.contact.name ?? appointment.contact.email.split('@')[0]!).split(/\s+/);
          contact = { companyId, id: randomUUID(), firstName: firstName || appointment.contact.email, lastName: rest.join(' ') || null, email: appointment.contact.email, phone: appointment.contact.phone };
          customerId = contact.id!;
          emails.set(appointment.contact.email.toLowerCase(), { id: customerId, legacyId: null });
        }
      }
      const { legacyId: _legacyId, timezoneName: _zone, startTime, endTime, ...fields } = appointment.fields;
      const row: Insertable<AppointmentsTable> = {
        ...fields,
        companyId,
        id: randomUUID(),
        locationId,
        serviceId: service.id,
        customerId,
        startTime: new Date(startTime),
        endTime: new Date(endTime),
        padding: service.padding,
        legacyId,
        createdVia: 'migration',
      };
      appointments.push({ appointment, row, resources: resourceIds as string[], contact });
    }
    let analyzed = false;
    for (let i = 0; i < appointments.length; i += BATCH_SIZE) {
      if (!dryRun && !analyzed && i >= ANALYZE_AFTER_APPOINTMENTS) {
        analyzed = true;
        await writes.analyzeAppointments();
      }
      await writeBatch(
        'appointments',
        appointments.slice(i, i + BATCH_SIZE),
        (a) => a.appointment.fields.legacyId,
        (items) => ({ appointments: items.length, customers: items.filter((a) => a.contact !== null).length }),
        async (trx, items) => {
          const contacts = items.map((a) => a.contact).filter((c): c is Insertable<CustomersTable> => c !== null);
          if (contacts.length) await writes.insertCustomers(trx, contacts);
          const links: Array<Insertable<AppointmentResourcesTable>> = items.flatMap(({ row, resources }) =>
            resources.map((resourceId) => ({
              companyId, appointmentId: row.id, resourceId, startTime: row.startTime, endTime: row.endTime, status: row.status, expiresAt: null,
              serviceId: row.serviceId, duration: row.duration, padding: row.padding ?? 0,
            })),
          );
          await writes.insertAppointments(trx, items.map((a) => a.row), links);
          for (const item of items) {
            touched.services.add(item.row.serviceId);
            for (const resourceId of item.resources) touched.resources.add(resourceId);
          }
        },
      );
      await options.onProgress?.(progress);
    }

    if (!dryRun && deps.touch) {
      await deps.touch(companyId, { locations: [...touched.locations], services: [...touched.services], resources: [...touched.resources] }).catch(() => {});
    }
    await options.onProgress?.(progress);
    const created = zeroCounts();
    const skipped = zeroCounts();
    for (const kind of MIGRATION_KINDS) {
      created[kind] = progress[kind].created;
      skipped[kind] = progress[kind].skipped;
    }
    return { dryRun, created, skipped, failed, ignored: plan.ignored, warnings: warnings.slice(0, MAX_WARNINGS), warningsOmitted: Math.max(0, warnings.length - MAX_WARNINGS) };
  }

  return { run };
}

export type Importer = ReturnType<typeof createImporter>;
