// Migration jobs (shared/spec/decisions.md "Migration"; src/modules/migration/jobs.ts): 202 and
// GET /v3/migration/jobs/:id with progress per kind, the API source end to end against the v1
// stand-in (test/helpers/v1-stand-in.ts), a refused secret, a crash resumed by another instance,
// a lost lease, a refused record, runs that cannot be resumed, shutdown, and who may read a job.
//
// The worker claims every company's stale jobs, so this file has a database of its own, and each
// test ends every job it starts. Instances built here have a 1 s lease; the one that takes over a
// stopped job runs with its clock ahead instead of waiting the lease out.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { buildApp } from '../../../src/app.js';
import { loadConfig } from '../../../src/platform/config.js';
import { createSealer } from '../../../src/platform/encryption.js';
import { createOutboundFetch } from '../../../src/platform/outbound/fetch.js';
import { MIGRATION_KINDS } from '../../../src/domain/migration/plan.js';
import type { MigrationKind } from '../../../src/domain/migration/plan.js';
import { createPlanChecks } from '../../../src/modules/migration/checks.js';
import { createImporter } from '../../../src/modules/migration/importer.js';
import type { ImportOptions, MigrationProgress, MigrationReport } from '../../../src/modules/migration/importer.js';
import { MAX_ATTEMPTS, createMigrationService } from '../../../src/modules/migration/jobs.js';
import type { MigrationJobView } from '../../../src/modules/migration/jobs.js';
import { createMigrationJobRepository, createMigrationWrites } from '../../../src/modules/migration/repository.js';
import type { App } from '../../../src/platform/http/types.js';
import { TEST_SECRETS, WIDE_ADDRESS_BUDGETS, addMember, createTestContext, json, machineToken } from '../../helpers/app.js';
import type { TestContext } from '../../helpers/app.js';
import { V1_EXAMPLE_EXPORT, startV1StandIn } from '../../helpers/v1-stand-in.js';
import type { V1StandIn } from '../../helpers/v1-stand-in.js';

let context: TestContext;
/** A second application over the same database whose record limit is 5. */
let smallLimitApp: App;
const standIns: V1StandIn[] = [];

before(async () => {
  context = await createTestContext({}, { dedicatedDatabase: true });
  const config = loadConfig({ NODE_ENV: 'test', LOG_LEVEL: 'silent', RATE_LIMIT_KEY_PREFIX: `rl:test-${randomUUID()}:`, ...WIDE_ADDRESS_BUDGETS, MIGRATION_SYNC_RECORD_LIMIT: '5' });
  smallLimitApp = await buildApp({ config, database: context.database, secrets: TEST_SECRETS, redis: undefined });
});
after(async () => {
  for (const v1 of standIns) await v1.close();
  await smallLimitApp.close();
  await context.close();
});

// --- Helpers ---------------------------------------------------------------------------------

type Export = Record<string, unknown[]>;

/** `count` v1 customers with addresses of their own. */
const customers = (count: number, from = 50_000) =>
  Array.from({ length: count }, (_, i) => ({ object: 'customer', id: String(from + i), firstname: 'Cus', lastname: `Tomer ${i}`, email: `customer-${from + i}-${randomUUID()}@example.com` }));

/** The example export of v1-source.md §6 with `extra` records appended (a fresh copy). */
const exportWith = (extra: Partial<Export> = {}): Export => {
  const data = structuredClone(V1_EXAMPLE_EXPORT) as unknown as Export;
  for (const [kind, rows] of Object.entries(extra)) data[kind] = [...(data[kind] ?? []), ...(rows ?? [])];
  return data;
};

/** What the §6 example creates (v1-source.md §6 "Expected v3 result"). */
const EXAMPLE_CREATED = { locations: 1, services: 2, resources: 2, weeklyAllocations: 2, singleAllocations: 0, recurringBlocks: 1, customers: 0, appointments: 0 };

const NONE = { locations: 0, services: 0, resources: 0, weeklyAllocations: 0, singleAllocations: 0, recurringBlocks: 0, customers: 0, appointments: 0 };

const sync = (app: App, headers: Record<string, string>, body: unknown, extra: Record<string, string> = {}) =>
  app.inject({ method: 'POST', url: '/v3/migration/sync', headers: { ...headers, ...extra }, payload: body as Record<string, unknown> });

async function getJob(headers: Record<string, string>, id: string): Promise<MigrationJobView> {
  const response = await context.app.inject({ method: 'GET', url: `/v3/migration/jobs/${id}`, headers });
  assert.equal(response.statusCode, 200, response.body);
  return json<MigrationJobView>(response);
}

const jobRow = (id: string) => context.database.db.selectFrom('migrationJobs').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

async function customerCount(companyId: string): Promise<number> {
  const row = await context.database.db.selectFrom('customers').select((eb) => eb.fn.countAll().as('n')).where('companyId', '=', companyId).executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Per kind, the progress agrees with the report: everything processed, the same counts. */
function assertProgressMatches(progress: MigrationProgress, report: MigrationReport) {
  for (const kind of MIGRATION_KINDS) {
    const p = progress[kind];
    const failed = report.failed.filter((note) => note.kind === kind).length;
    assert.deepEqual(
      { processed: p.processed, created: p.created, skipped: p.skipped, failed: p.failed },
      { processed: p.total, created: report.created[kind], skipped: report.skipped[kind], failed },
      `progress of ${kind}`,
    );
  }
}

/** A migration service of its own over the file's database, as another instance would run it. */
function instance(instanceId: string, options: { fault?: ImportOptions['fault']; clock?: () => number; leaseSeconds?: number } = {}) {
  const db = context.database.db;
  return createMigrationService({
    db,
    jobs: createMigrationJobRepository(db),
    importer: createImporter({ db, writes: createMigrationWrites(db) }),
    checkPlan: createPlanChecks(),
    sealer: createSealer(TEST_SECRETS.CREDENTIAL_ENCRYPTION_SECRET),
    fetch: createOutboundFetch({ timeoutMs: 5000, allowLoopbackHttp: true }),
    config: { syncRecordLimit: 2000, leaseSeconds: options.leaseSeconds ?? 1 },
    instanceId,
    ...(options.fault ? { fault: options.fault } : {}),
    ...(options.clock ? { clock: options.clock } : {}),
  });
}

/** A fault that throws "crash" (an error that is no database refusal) on the `nth` write of `kind` and after. */
function crashOn(kind: MigrationKind, nth: number) {
  let writes = 0;
  const fault: ImportOptions['fault'] = async (written) => {
    if (written !== kind) return;
    writes += 1;
    if (writes >= nth) throw new Error('crash');
  };
  return { fault, writes: () => writes };
}

async function startAsync(service: ReturnType<typeof instance>, companyId: string, data: Export): Promise<string> {
  const started = await service.start(companyId, null, { source: { type: 'export', data } }, { preferAsync: true });
  assert.equal(started.kind, 'job');
  return started.kind === 'job' ? started.job.id : '';
}

// --- 1. Async jobs and their progress --------------------------------------------------------

test('Prefer: respond-async answers 202 with the job; once done, GET shows the progress per kind and the report', async () => {
  const tenant = await context.world.tenant();
  const data = exportWith({ customers: customers(3) });
  const response = await sync(context.app, tenant.dashboard, { source: { type: 'export', data } }, { prefer: 'respond-async' });
  assert.equal(response.statusCode, 202, response.body);
  const started = json<MigrationJobView>(response);
  assert.equal(response.headers.location, `/v3/migration/jobs/${started.id}`);
  assert.equal(response.headers['preference-applied'], 'respond-async');
  assert.equal(started.status, 'running');
  assert.equal(started.companyId, tenant.companyId);
  assert.equal(started.sourceType, 'export');
  assert.equal(started.report, null);
  assert.equal(started.attempts, 1);

  await context.app.migration.drain();
  const job = await getJob(tenant.dashboard, started.id);
  assert.equal(job.status, 'succeeded', JSON.stringify(job));
  assert.equal(job.error, null);
  assert.ok(job.finishedAt);
  const report = job.report!;
  assert.deepEqual(report.created, { ...EXAMPLE_CREATED, customers: 3 });
  assert.deepEqual(report.failed, []);
  assert.equal(job.progress.customers.total, 3);
  assert.equal(job.progress.weeklyAllocations.total, 2);
  assertProgressMatches(job.progress, report);

  // The same export again: everything is skipped, and the progress says so.
  const again = await sync(context.app, tenant.dashboard, { source: { type: 'export', data } }, { prefer: 'respond-async' });
  assert.equal(again.statusCode, 202, again.body);
  await context.app.migration.drain();
  const second = await getJob(tenant.dashboard, json<MigrationJobView>(again).id);
  assert.equal(second.status, 'succeeded');
  assert.deepEqual(second.report!.created, NONE);
  assert.deepEqual(second.report!.skipped, { ...EXAMPLE_CREATED, customers: 3 });
  assertProgressMatches(second.progress, second.report!);
});

test('an export above MIGRATION_SYNC_RECORD_LIMIT answers 202 without Prefer; one at the limit answers 200', async () => {
  const tenant = await context.world.tenant();
  // The §6 example has 7 records (limit 5 here).
  const response = await sync(smallLimitApp, tenant.dashboard, { source: { type: 'export', data: exportWith() } });
  assert.equal(response.statusCode, 202, response.body);
  const started = json<MigrationJobView>(response);
  assert.equal(response.headers.location, `/v3/migration/jobs/${started.id}`);
  assert.equal(response.headers['preference-applied'], undefined);
  await smallLimitApp.migration.drain();
  const job = await getJob(tenant.dashboard, started.id);
  assert.equal(job.status, 'succeeded');
  assert.deepEqual(job.report!.created, EXAMPLE_CREATED);

  const other = await context.world.tenant();
  const small = await sync(smallLimitApp, other.dashboard, { source: { type: 'export', data: { customers: customers(5) } } });
  assert.equal(small.statusCode, 200, small.body);
  assert.equal(json<MigrationReport>(small).created.customers, 5);
});

// --- 2. and 3. The API source ------------------------------------------------------------------

async function standIn(seed = exportWith()) {
  const v1 = await startV1StandIn({ seed, clientSecret: `v1-secret-${randomUUID()}` });
  standIns.push(v1);
  return v1;
}

const apiSource = (v1: V1StandIn, clientSecret = v1.clientSecret) => ({ type: 'api', baseUrl: v1.baseUrl, tokenUrl: v1.tokenUrl, clientId: v1.clientId, clientSecret });

/** The UTC date `days` from now (the planner keeps appointments from today on). */
const daysAhead = (days: number) => new Date(Date.now() + days * 86_400_000).toISOString().slice(0, 10);

test('an api source: 202, paged lists, a 429 and a 500 retried, a malformed row reported, the records land', async () => {
  const tenant = await context.world.tenant();
  // 120 more services at location 12: the services list takes two pages (100 a page).
  const services = Array.from({ length: 120 }, (_, i) => ({ ...V1_EXAMPLE_EXPORT.services[0], id: String(400 + i), name: `Service ${i}`, defaultService: false }));
  const [customer] = customers(1);
  const appointment = {
    object: 'appointment', id: '90001', locationId: '12', serviceId: '301', resourceId: '1502', customerId: customer!.id,
    status: 'BK', startDateTime: `${daysAhead(30)}T10:00:00`, endDateTime: `${daysAhead(30)}T11:00:00`,
  };
  const v1 = await standIn(exportWith({ services, customers: [customer!], appointments: [appointment] }));
  v1.injectMalformed('services', 42, 110);
  // The application's v1 client really waits: 1 s for the Retry-After, 500 ms of backoff for the 500.
  v1.failNext({ status: 429, retryAfterSeconds: 1, pathIncludes: '/setup/v1/resources' });
  v1.failNext({ status: 500, pathIncludes: '/consumer/v1/customers' });

  const response = await sync(context.app, tenant.dashboard, { source: apiSource(v1) });
  assert.equal(response.statusCode, 202, response.body);
  const started = json<MigrationJobView>(response);
  assert.equal(started.sourceType, 'api');
  assert.equal(response.headers.location, `/v3/migration/jobs/${started.id}`);
  await context.app.migration.drain();

  const job = await getJob(tenant.dashboard, started.id);
  assert.equal(job.status, 'succeeded', JSON.stringify(job.error));
  const report = job.report!;
  assert.deepEqual(report.failed, [{ kind: 'services', legacyId: null, message: 'row 110 of GET /setup/v1/services is a number, not an object' }]);
  assert.deepEqual(report.created, { ...EXAMPLE_CREATED, services: 122, customers: 1, appointments: 1 });
  assertProgressMatches(job.progress, report);

  // The stand-in saw the pages, the refusals and their retries.
  const services1 = v1.requests.filter((r) => r.path === '/setup/v1/services');
  assert.deepEqual(services1.map((r) => r.query.get('offset')), ['0', '100']);
  assert.deepEqual(v1.requests.filter((r) => r.path === '/setup/v1/resources').map((r) => r.status), [429, 200]);
  assert.deepEqual(v1.requests.filter((r) => r.path === '/consumer/v1/customers').map((r) => r.status), [500, 200]);

  const mapping = await context.app.inject({
    method: 'GET',
    url: `/v3/mapping/ids?${new URLSearchParams({ locationId: '12', serviceId: '519', resourceId: '1502', customerId: customer!.id, appointmentId: '90001', allocationId: '7001' })}`,
    headers: tenant.dashboard,
  });
  assert.equal(mapping.statusCode, 200, mapping.body);
  const ids = json(mapping);
  for (const key of ['locationId', 'serviceId', 'resourceId', 'customerId', 'appointmentId']) assert.match(String(ids[key]), /^[0-9a-f-]{36}$/, key);
  assert.equal(ids.allocationId.length, 2);

  for (const body of [response.body, JSON.stringify(job)]) assert.ok(!body.includes(v1.clientSecret), 'the client secret is never answered');
  // The input (with the sealed secret) is forgotten when the job ends.
  assert.equal((await context.database.db.selectFrom('migrationJobSources').selectAll().where('jobId', '=', started.id).execute()).length, 0);
});

test('a wrong client secret ends the job failed with a readable error and a report; the secret is never answered', async () => {
  const tenant = await context.world.tenant();
  const v1 = await standIn();
  const secret = `not-the-secret-${randomUUID()}`;
  const response = await sync(context.app, tenant.dashboard, { source: apiSource(v1, secret) });
  assert.equal(response.statusCode, 202, response.body);
  const id = json<MigrationJobView>(response).id;
  const running = await context.app.inject({ method: 'GET', url: `/v3/migration/jobs/${id}`, headers: tenant.dashboard });
  await context.app.migration.drain();
  const done = await context.app.inject({ method: 'GET', url: `/v3/migration/jobs/${id}`, headers: tenant.dashboard });
  const job = json<MigrationJobView>(done);
  assert.equal(job.status, 'failed');
  assert.match(job.error!, /^The v1 source could not be read: the v1 identity server refused the client id or client secret \(401: invalid_client\); check source\.clientId and source\.clientSecret$/);
  assert.ok(job.report);
  assert.deepEqual(job.report.created, NONE);
  assert.ok(job.finishedAt);
  // Only the token endpoint was asked, once (a refusal is not retried).
  assert.deepEqual(v1.requests.map((r) => [r.path, r.status]), [['/connect/token', 401]]);
  for (const answer of [response, running, done]) assert.ok(!answer.body.includes(secret), `the secret appears in ${answer.body}`);
  assert.equal((await context.database.db.selectFrom('migrationJobSources').selectAll().where('jobId', '=', id).execute()).length, 0);
});

// --- 4. to 6. Instances stopping -----------------------------------------------------------------

test('a crash during a job: another instance resumes it once the lease runs out; nothing is created twice', async () => {
  const tenant = await context.world.tenant();
  const data = exportWith({ customers: customers(1200) });
  const crash = crashOn('customers', 3);
  const a = instance('a', { fault: crash.fault });
  const id = await startAsync(a, tenant.companyId, data);
  await a.drain();

  // Customers go in batches of 500: the first two landed, the third crashed and left the job.
  assert.equal(crash.writes(), 3);
  const left = await jobRow(id);
  assert.equal(left.status, 'running');
  assert.equal(left.leaseOwner, 'a');
  assert.ok(left.leaseUntil, 'the crashed instance still holds the lease');
  assert.equal((left.progress as MigrationProgress).customers.created, 1000);
  assert.equal(await customerCount(tenant.companyId), 1000);

  // Instance B's clock is past the 1 s lease: it claims and completes the job.
  const b = instance('b', { clock: () => Date.now() + 5000 });
  assert.equal(await b.resumeStale(), 1);
  const job = await getJob(tenant.dashboard, id);
  assert.equal(job.status, 'succeeded', JSON.stringify(job.error));
  assert.equal(job.attempts, 2);
  assert.equal(await customerCount(tenant.companyId), 1200);
  // What A created before the crash counts as created by this job, not skipped.
  assert.deepEqual(job.report!.created, { ...EXAMPLE_CREATED, customers: 1200 });
  assert.deepEqual(job.report!.skipped, NONE);
  assert.deepEqual(job.report!.failed, []);
  assertProgressMatches(job.progress, job.report!);
  const row = await jobRow(id);
  assert.equal(row.leaseOwner, null);
  assert.equal(await b.resumeStale(), 0);
});

test('a lost lease stops the run at its next transaction, leaving the job to the instance that took it', async () => {
  const tenant = await context.world.tenant();
  const db = context.database.db;
  let id = '';
  let stealing: Promise<unknown> | undefined;
  let writes = 0;
  const a = instance('a', {
    leaseSeconds: 60,
    fault: async (kind, trx) => {
      if (kind !== 'customers') return;
      writes += 1;
      // In the first batch another instance takes the job over. The batch locks the job row first,
      // so the takeover lands once the batch committed (PostgreSQL: it waits for the lock; PGlite:
      // for the one session); the second batch waits for it, so its checkpoint finds it done.
      if (writes === 1) {
        await trx.selectFrom('migrationJobs').select('id').where('companyId', '=', tenant.companyId).where('id', '=', id).forUpdate().execute();
        stealing = db.updateTable('migrationJobs').set({ leaseOwner: 'thief' }).where('companyId', '=', tenant.companyId).where('id', '=', id).execute();
      }
      if (writes === 2) await stealing;
    },
  });
  // The job runs after start() answers, so `id` is set before the first customer batch.
  id = await startAsync(a, tenant.companyId, exportWith({ customers: customers(1200) }));
  await a.drain();

  // The second batch rolled back and nothing followed: no record reported failed for a lease.
  assert.equal(writes, 2);
  assert.equal(await customerCount(tenant.companyId), 500);
  const row = await jobRow(id);
  assert.equal(row.status, 'running');
  assert.equal(row.leaseOwner, 'thief');
  assert.equal(row.report, null);
  assert.equal((row.progress as MigrationProgress).customers.created, 500);
  // The input stays for the instance that resumes the job.
  assert.equal((await db.selectFrom('migrationJobSources').selectAll().where('jobId', '=', id).execute()).length, 1);

  // The thief stops too; an instance resumes the job when the lease (60 s) runs out.
  const c = instance('c', { clock: () => Date.now() + 120_000 });
  assert.equal(await c.resumeStale(), 1);
  const job = await getJob(tenant.dashboard, id);
  assert.equal(job.status, 'succeeded', JSON.stringify(job.error));
  assert.equal(job.report!.created.customers, 1200);
  assert.deepEqual(job.report!.failed, []);
  assert.equal(await customerCount(tenant.companyId), 1200);
});

test('a record the database refuses fails alone; the rest of its batch lands and the job goes on', async () => {
  const tenant = await context.world.tenant();
  const rows = customers(3);
  let writes = 0;
  // The batch of three and then the first customer alone are refused, as a check constraint would.
  const a = instance('a', {
    fault: async (kind) => {
      if (kind !== 'customers') return;
      writes += 1;
      if (writes <= 2) throw Object.assign(new Error('new row violates check constraint'), { code: '23514', constraint: 'customers_test_rule' });
    },
  });
  const id = await startAsync(a, tenant.companyId, exportWith({ customers: rows }));
  await a.drain();
  assert.equal(writes, 4);
  const job = await getJob(tenant.dashboard, id);
  assert.equal(job.status, 'succeeded');
  assert.deepEqual(job.report!.failed, [{ kind: 'customers', legacyId: rows[0]!.id, message: 'breaks the database rule customers_test_rule' }]);
  assert.deepEqual(job.report!.created, { ...EXAMPLE_CREATED, customers: 2 });
  assertProgressMatches(job.progress, job.report!);
  assert.equal(await customerCount(tenant.companyId), 2);
});

test('a run without stored input (the operator CLI) that stopped is marked failed: run it again', async () => {
  const tenant = await context.world.tenant();
  const a = instance('cli', { fault: crashOn('customers', 1).fault });
  await assert.rejects(a.runLocal(tenant.companyId, exportWith({ customers: customers(2) }), { dryRun: false }), /crash/);
  const [row] = await context.database.db.selectFrom('migrationJobs').selectAll().where('companyId', '=', tenant.companyId).execute();
  assert.equal(row!.status, 'running');

  const b = instance('b', { clock: () => Date.now() + 5000 });
  assert.equal(await b.resumeStale(), 1);
  const job = await getJob(tenant.dashboard, row!.id);
  assert.equal(job.status, 'failed');
  assert.match(job.error!, /input was not kept/);
  assert.match(job.error!, /Run it again/);
  // The report says what landed before the stop.
  assert.deepEqual(job.report!.created, EXAMPLE_CREATED);
  assert.equal(await b.resumeStale(), 0);
});

test('a killed CLI run does not hold the company: once its lease ran out, the next run ends it and starts', async () => {
  const tenant = await context.world.tenant();
  const a = instance('cli', { fault: crashOn('customers', 1).fault });
  await assert.rejects(a.runLocal(tenant.companyId, exportWith({ customers: customers(2) }), { dryRun: false }), /crash/);
  // While its lease lasts, the stopped run still holds the guard.
  const soon = instance('cli-2');
  await assert.rejects(soon.runLocal(tenant.companyId, exportWith({ customers: customers(2) }), { dryRun: false }), /already running/);
  const later = instance('cli-3', { clock: () => Date.now() + 120_000 });
  const { jobId, report } = await later.runLocal(tenant.companyId, exportWith({ customers: customers(2) }), { dryRun: false });
  assert.equal(report.failed.length, 0);
  const rows = await context.database.db.selectFrom('migrationJobs').select(['id', 'status', 'error']).where('companyId', '=', tenant.companyId).execute();
  assert.equal(rows.length, 2);
  const orphan = rows.find((r) => r.id !== jobId)!;
  assert.equal(orphan.status, 'failed');
  assert.match(orphan.error!, /input was not kept/);
  assert.equal(rows.find((r) => r.id === jobId)!.status, 'succeeded');
  assert.equal(await customerCount(tenant.companyId), 2);
});

test(`a job started ${MAX_ATTEMPTS} times without finishing is marked failed on the next claim`, async () => {
  const tenant = await context.world.tenant();
  const a = instance('a', { fault: crashOn('customers', 1).fault });
  const id = await startAsync(a, tenant.companyId, exportWith({ customers: customers(2) }));
  await a.drain();
  let skew = 0;
  const b = instance('b', { fault: crashOn('customers', 1).fault, clock: () => Date.now() + skew });
  for (let attempt = 2; attempt <= MAX_ATTEMPTS; attempt += 1) {
    skew += 10_000;
    assert.equal(await b.resumeStale(), 1);
    const row = await jobRow(id);
    assert.equal(row.status, 'running', `attempt ${attempt} crashed too`);
    assert.equal(row.attempts, attempt);
  }
  skew += 10_000;
  assert.equal(await b.resumeStale(), 1);
  const job = await getJob(tenant.dashboard, id);
  assert.equal(job.status, 'failed');
  assert.equal(job.attempts, MAX_ATTEMPTS + 1);
  assert.match(job.error!, new RegExp(`stopped ${MAX_ATTEMPTS} times`));
  assert.deepEqual(job.report!.created, EXAMPLE_CREATED);
  assert.equal(await customerCount(tenant.companyId), 0);
  assert.equal(await b.resumeStale(), 0);
});

test('shutdown: stop() releases a running job, so another instance resumes it at once', async () => {
  const tenant = await context.world.tenant();
  // The first customer batch waits at the gate until stop() was called.
  let reached!: () => void;
  const atGate = new Promise<void>((resolve) => (reached = resolve));
  let open!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  let gated = false;
  // A 60 s lease: without the release B would wait a minute.
  const a = instance('a', {
    leaseSeconds: 60,
    fault: async (kind) => {
      if (kind !== 'customers' || gated) return;
      gated = true;
      reached();
      await gate;
    },
  });
  const id = await startAsync(a, tenant.companyId, exportWith({ customers: customers(1200) }));
  await atGate;
  const stopping = a.stop();
  open();
  await stopping;

  // The batch at the gate committed; the run stopped before the next one and gave the lease up.
  const row = await jobRow(id);
  assert.equal(row.status, 'running');
  assert.ok(row.leaseUntil && row.leaseUntil.getTime() <= Date.now(), `lease until ${row.leaseUntil?.toISOString()}`);
  assert.equal(await customerCount(tenant.companyId), 500);

  // Released means claimable at once: B takes it up with no wait.
  const b = instance('b', { leaseSeconds: 60 });
  assert.equal(await b.resumeStale(), 1);
  const job = await getJob(tenant.dashboard, id);
  assert.equal(job.status, 'succeeded', JSON.stringify(job.error));
  assert.equal(job.attempts, 2);
  assert.equal(job.report!.created.customers, 1200);
  assert.equal(await customerCount(tenant.companyId), 1200);
});

// --- 7. Access ------------------------------------------------------------------------------------

test('a job is read by Owners and Admins of its company only: other company 404, machine token 403, bad id 400', async () => {
  const tenant = await context.world.tenant();
  const response = await sync(context.app, tenant.dashboard, { source: { type: 'export', data: { customers: customers(1) } } }, { prefer: 'respond-async' });
  assert.equal(response.statusCode, 202, response.body);
  const id = json<MigrationJobView>(response).id;
  await context.app.migration.drain();
  const get = (headers: Record<string, string>, jobId = id) => context.app.inject({ method: 'GET', url: `/v3/migration/jobs/${jobId}`, headers });

  assert.equal((await get(tenant.dashboard)).statusCode, 200);
  const admin = await addMember(context, tenant, 'Admin');
  assert.equal((await get(admin.headers)).statusCode, 200);
  const user = await addMember(context, tenant, 'User');
  assert.equal((await get(user.headers)).statusCode, 403);

  const other = await context.world.tenant();
  const foreign = await get(other.dashboard);
  assert.equal(foreign.statusCode, 404, foreign.body);
  assert.equal((await get(tenant.dashboard, randomUUID())).statusCode, 404);

  const token = await machineToken(context.app, tenant);
  const machine = await get({ authorization: `Bearer ${token}` });
  assert.equal(machine.statusCode, 403, machine.body);
  assert.match(machine.body, /Machine tokens cannot use migration workflows/);

  const bad = await get(tenant.dashboard, 'not-a-uuid');
  assert.equal(bad.statusCode, 400, bad.body);
});
