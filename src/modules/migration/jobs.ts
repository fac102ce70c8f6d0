/**
 * POST /v3/migration/sync and its jobs. Every run is a row of migration_jobs:
 *
 * - The row is the concurrency guard: one writing run per company (a unique index), so a second
 *   run while one is on is refused with 409 naming the running job.
 * - Small export imports answer at once (200 with the report). Larger ones, API sources (whose size
 *   is unknown until read) and `Prefer: respond-async` answer 202 with the job;
 *   GET /v3/migration/jobs/:id shows progress per kind and, at the end, the report.
 * - The instance running a job renews a lease; every write transaction stores the progress with
 *   it. When an instance stops (crash, deploy), the worker of any instance claims the job once the
 *   lease runs out and runs it again from its stored input: what landed is skipped by legacyId, so
 *   the rest completes and nothing is created twice. After MAX_ATTEMPTS starts the job is marked
 *   failed with what landed.
 */
import { randomUUID } from 'node:crypto';
import type { Db } from '../../platform/database/index.js';
import type { MigrationConfig } from '../../platform/config.js';
import type { Sealer } from '../../platform/encryption.js';
import type { OutboundFetch } from '../../platform/outbound/fetch.js';
import { conflict, notFound } from '../../platform/errors.js';
import { MIGRATION_KINDS, planMigrationInSteps, zeroCounts } from '../../domain/migration/plan.js';
import type { KindCounts, MigrationKind, RecordNote } from '../../domain/migration/plan.js';
import type { V1Export as V1Document } from '../../domain/migration/v1.js';
import type { PlanChecks } from './checks.js';
import { MigrationInterrupted, emptyProgress } from './importer.js';
import type { ImportOptions, Importer, MigrationProgress, MigrationReport } from './importer.js';
import type { MigrationJobRepository, MigrationJobRow } from './repository.js';
import { V1SourceError, createV1Client } from './v1-client.js';
import type { V1Malformed } from './v1-client.js';

const ORPHAN_MESSAGE = 'The run stopped before it finished and its input was not kept (the operator CLI reads its file itself). Run it again: records that landed are skipped.';

/** A job started this many times without finishing is marked failed. */
export const MAX_ATTEMPTS = 3;

export type ApiSource = { type: 'api'; baseUrl: string; tokenUrl: string; clientId: string; clientSecret: string };
export type ExportSource = { type: 'export'; data: Record<string, unknown> };
export type MigrationSource = ApiSource | ExportSource;

/** What a job keeps of its source: the export itself, or the API address with the secret sealed. */
type StoredSource = ExportSource | { type: 'api'; baseUrl: string; tokenUrl: string; clientId: string; sealedSecret: string };

/** The v1 list a malformed row came from → the report's kind. */
const KIND_OF_LIST: Record<string, MigrationKind> = {
  locations: 'locations',
  services: 'services',
  resources: 'resources',
  serviceAllocations: 'weeklyAllocations',
  resourceAllocations: 'weeklyAllocations',
  resourceBlocks: 'recurringBlocks',
  customers: 'customers',
  appointments: 'appointments',
};

/** Records in an export document (what decides between answering at once and a job). */
export function recordCount(data: Record<string, unknown>): number {
  return Object.values(data).reduce<number>((n, list) => n + (Array.isArray(list) ? list.length : 0), 0);
}

export interface MigrationServiceDeps {
  db: Db;
  jobs: MigrationJobRepository;
  importer: Importer;
  checkPlan: PlanChecks;
  sealer: Sealer;
  fetch: OutboundFetch;
  config: Pick<MigrationConfig, 'syncRecordLimit' | 'leaseSeconds'>;
  instanceId: string;
  clock?: () => number;
  log?: { warn(object: unknown, message: string): void; error(object: unknown, message: string): void };
  /** Tests only: handed to the importer (a throw inside a write transaction). */
  fault?: ImportOptions['fault'];
  /** Tests only: the v1 client's wait between attempts. */
  sleep?: (ms: number) => Promise<void>;
}

/** The job as GET /v3/migration/jobs/:id answers it. */
export function jobView(row: MigrationJobRow) {
  const progress = { ...emptyProgress(), ...((row.progress ?? {}) as Partial<MigrationProgress>) };
  return {
    id: row.id,
    companyId: row.companyId,
    status: row.status,
    dryRun: row.dryRun,
    sourceType: row.sourceType,
    progress,
    report: (row.report ?? null) as MigrationReport | null,
    error: row.error,
    attempts: row.attempts,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
    finishedAt: row.finishedAt ? row.finishedAt.toISOString() : null,
  };
}
export type MigrationJobView = ReturnType<typeof jobView>;

const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/** The job's lease was taken over by another instance: stop without touching the row. */
class LeaseLost extends Error {}

export function createMigrationService(deps: MigrationServiceDeps) {
  const clock = deps.clock ?? Date.now;
  const leaseMs = deps.config.leaseSeconds * 1000;
  const owner = deps.instanceId;
  /** Jobs this instance is running, so shutdown can stop them between two transactions. */
  const running = new Map<string, { controller: AbortController; done: Promise<unknown> }>();

  function storedSource(source: MigrationSource): StoredSource {
    return source.type === 'api'
      ? { type: 'api', baseUrl: source.baseUrl, tokenUrl: source.tokenUrl, clientId: source.clientId, sealedSecret: deps.sealer.seal(source.clientSecret) }
      : source;
  }

  /** The export document to import: given, or read from the v1 API (with rows it could not read). */
  async function readSource(source: StoredSource): Promise<{ data: V1Document; malformed: V1Malformed[] }> {
    if (source.type === 'export') return { data: source.data as V1Document, malformed: [] };
    const client = createV1Client(
      { baseUrl: source.baseUrl, tokenUrl: source.tokenUrl, clientId: source.clientId, clientSecret: deps.sealer.open(source.sealedSecret) },
      { fetch: deps.fetch, ...(deps.sleep ? { sleep: deps.sleep } : {}) },
    );
    const read = await client.readExport();
    return { data: read.data as V1Document, malformed: read.malformed };
  }

  /** The report of a run that ended early: what landed, from the stored progress. */
  function partialReport(dryRun: boolean, progress: MigrationProgress, message: string): MigrationReport {
    const created = zeroCounts();
    const skipped = zeroCounts();
    for (const kind of MIGRATION_KINDS) {
      created[kind] = progress[kind]?.created ?? 0;
      skipped[kind] = progress[kind]?.skipped ?? 0;
    }
    return { dryRun, created, skipped, failed: [], ignored: zeroCounts(), warnings: [{ kind: 'locations', legacyId: null, message }], warningsOmitted: 0 };
  }

  /** Runs (or resumes) a job this instance holds; answers its report. */
  async function runJob(row: MigrationJobRow, source: StoredSource, watch?: (progress: MigrationProgress) => void): Promise<MigrationReport> {
    const key = { companyId: row.companyId, id: row.id };
    const controller = new AbortController();
    const heartbeat = setInterval(() => {
      deps.jobs.renew(key, owner, clock(), leaseMs).catch((error: unknown) => deps.log?.warn({ err: error, jobId: row.id }, 'migration job: lease renewal failed'));
    }, Math.max(250, leaseMs / 3));
    heartbeat.unref();
    const work = (async () => {
      try {
        // The caller gets its answer (202) before planning starts; planning gives way between steps.
        await yieldToEventLoop();
        const { data, malformed } = await readSource(source);
        const plan = deps.checkPlan(await planMigrationInSteps(data, { now: clock(), pause: yieldToEventLoop }));
        const unreadable: RecordNote[] = malformed.map((m) => ({ kind: KIND_OF_LIST[m.kind] ?? 'locations', legacyId: null, message: m.reason }));
        plan.failed.push(...unreadable);
        const earlier = (row.progress ?? {}) as Partial<MigrationProgress>;
        const createdBefore = Object.fromEntries(MIGRATION_KINDS.map((kind) => [kind, earlier[kind]?.created ?? 0])) as KindCounts;
        let lastSaved = 0;
        let latest = emptyProgress();
        const report = await deps.importer.run(row.companyId, plan, {
          dryRun: row.dryRun,
          createdBefore,
          signal: controller.signal,
          ...(deps.fault ? { fault: deps.fault } : {}),
          checkpoint: async (trx, progress) => {
            if (!(await deps.jobs.checkpoint(trx, key, owner, progress, clock(), leaseMs))) throw new LeaseLost('another instance took this migration job over');
          },
          onProgress: async (progress) => {
            latest = progress;
            watch?.(progress);
            // A run stores its progress with its writes; a dry run writes none, so it is stored
            // here at most once a second, and every run stores its totals once planned.
            if (lastSaved !== 0 && (!row.dryRun || clock() - lastSaved < 1000)) return;
            lastSaved = clock();
            await deps.jobs.checkpoint(deps.db, key, owner, progress, clock(), leaseMs);
          },
        });
        // The importer's last progress is the whole run's (a run that only skipped wrote no checkpoint).
        const merged = Object.fromEntries(MIGRATION_KINDS.map((kind) => [kind, { ...latest[kind], processed: latest[kind].total }]));
        if (!(await deps.jobs.finish(key, owner, { status: 'succeeded', report, progress: merged, error: null, now: clock() }))) {
          throw new LeaseLost('another instance took this migration job over before it finished');
        }
        return report;
      } catch (error) {
        if (error instanceof MigrationInterrupted) {
          await deps.jobs.release(key, owner, clock()).catch(() => {});
          throw error;
        }
        if (error instanceof LeaseLost) throw error;
        if (error instanceof V1SourceError) {
          // The v1 source refused or never answered: nothing more can be read, so the job ends here.
          const progress = { ...emptyProgress(), ...((await deps.jobs.byId(row.companyId, row.id))?.progress as Partial<MigrationProgress> | undefined) };
          const message = `The v1 source could not be read: ${error.message}`;
          await deps.jobs.finish(key, owner, { status: 'failed', report: partialReport(row.dryRun, progress, message), error: message, now: clock() });
          throw error;
        }
        // Anything else (the database away, say) leaves the job running: once the lease runs
        // out, an instance resumes it.
        deps.log?.error({ err: error, jobId: row.id }, 'migration job stopped; it resumes when its lease runs out');
        throw error;
      } finally {
        clearInterval(heartbeat);
        running.delete(row.id);
      }
    })();
    running.set(row.id, { controller, done: work.catch(() => {}) });
    return work;
  }

  /** A new job row held by this instance; null while another writing run of the company is on. */
  async function startRow(job: { companyId: string; dryRun: boolean; sourceType: 'api' | 'export'; requestedBy: string | null; source: StoredSource | null }) {
    const row = await deps.jobs.start({ ...job, id: randomUUID(), owner, now: clock(), leaseMs });
    if (row || job.dryRun) return row;
    // A killed CLI run leaves a job no instance can resume: end it rather than refuse forever.
    const ended = await deps.jobs.failOrphans(job.companyId, clock(), ORPHAN_MESSAGE);
    return ended ? deps.jobs.start({ ...job, id: randomUUID(), owner, now: clock(), leaseMs }) : null;
  }

  return {
    /**
     * Starts a run. Answers the report (run at once) or the job (202), or refuses with 409 while
     * another writing run of the company is on.
     */
    async start(
      companyId: string,
      requestedBy: string | null,
      body: { source: MigrationSource; dryRun?: boolean },
      options: { preferAsync: boolean },
    ): Promise<{ kind: 'report'; report: MigrationReport } | { kind: 'job'; job: MigrationJobView }> {
      const dryRun = body.dryRun ?? false;
      const source = storedSource(body.source);
      const inline = body.source.type === 'export' && !options.preferAsync && recordCount(body.source.data) <= deps.config.syncRecordLimit;
      const row = await startRow({ companyId, dryRun, sourceType: body.source.type, requestedBy, source });
      if (!row) {
        const other = await deps.jobs.runningWriter(companyId);
        throw conflict(
          other
            ? `A migration of this company is already running (job ${other.id}); wait for it to finish (GET /v3/migration/jobs/${other.id}) and run again`
            : 'A migration of this company is already running; wait for it to finish and run again',
        );
      }
      if (inline) return { kind: 'report', report: await runJob(row, source) };
      runJob(row, source).catch((error: unknown) => {
        if (!(error instanceof MigrationInterrupted || error instanceof LeaseLost || error instanceof V1SourceError)) deps.log?.error({ err: error, jobId: row.id }, 'migration job failed');
      });
      return { kind: 'job', job: jobView(row) };
    },

    /** A job of the company (another company's is not found). */
    async job(companyId: string, id: string): Promise<MigrationJobView> {
      const row = await deps.jobs.byId(companyId, id);
      if (!row) throw notFound('Migration job not found');
      return jobView(row);
    },

    /**
     * The worker's pass: claims one job whose instance stopped renewing its lease and runs it
     * again from its stored input (or marks it failed). Answers how many it took up.
     */
    async resumeStale(): Promise<number> {
      const row = await deps.jobs.claimStale(owner, clock(), leaseMs);
      if (!row) return 0;
      const key = { companyId: row.companyId, id: row.id };
      const progress = { ...emptyProgress(), ...(row.progress as Partial<MigrationProgress>) };
      const source = (await deps.jobs.source(row.companyId, row.id)) as StoredSource | null;
      const stop = async (message: string) => {
        await deps.jobs.finish(key, owner, { status: 'failed', report: partialReport(row.dryRun, progress, message), error: message, now: clock() });
        return 1;
      };
      if (!source) return stop(ORPHAN_MESSAGE);
      if (row.attempts > MAX_ATTEMPTS) return stop(`The run stopped ${MAX_ATTEMPTS} times before it finished. What landed is counted in progress; run it again to complete the rest (records that landed are skipped).`);
      await runJob(row, source).catch((error: unknown) => {
        if (!(error instanceof MigrationInterrupted || error instanceof LeaseLost || error instanceof V1SourceError)) deps.log?.error({ err: error, jobId: row.id }, 'resumed migration job failed');
      });
      return 1;
    },

    /** Waits for every job this instance runs (tests). */
    async drain(): Promise<void> {
      while (running.size) await Promise.all([...running.values()].map((r) => r.done));
    },

    /** Shutdown: each running job stops after its current transaction and is released for another instance. */
    async stop(): Promise<void> {
      for (const job of running.values()) job.controller.abort();
      await Promise.all([...running.values()].map((r) => r.done));
    },

    /**
     * The operator CLI's run: an export read from a file, under the same guard and with the same
     * job row, but the input is not stored (if the CLI stops, run it again: what landed is skipped).
     */
    async runLocal(companyId: string, data: Record<string, unknown>, options: { dryRun: boolean; onProgress?: (progress: MigrationProgress) => void }) {
      const row = await startRow({ companyId, dryRun: options.dryRun, sourceType: 'export', requestedBy: null, source: null });
      if (!row) {
        const other = await deps.jobs.runningWriter(companyId);
        throw conflict(`A migration of this company is already running${other ? ` (job ${other.id})` : ''}; wait for it to finish and run again`);
      }
      return { jobId: row.id, report: await runJob(row, { type: 'export', data }, options.onProgress) };
    },
  };
}

export type MigrationService = ReturnType<typeof createMigrationService>;
