// The operator CLI's migrate command: a v1 export file imported under the migration service's
// guard (modules/migration/jobs.ts runLocal), its progress on standard error, the report on
// standard output, and the exit codes. Most tests run the command in this process against the
// file's database; the last ones run the real command in a child process.
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { adminHelp, createProgressView, EXIT_CODES, formatAdminError, parseAdminArgs, readExportFile, runAdminCommand, UsageError } from '../../src/cli/admin.js';
import type { ProgressStream } from '../../src/cli/admin.js';
import { dumpEmbedded, openDatabase } from '../../src/platform/database/index.js';
import { ApiError } from '../../src/platform/errors.js';
import { emptyProgress } from '../../src/modules/migration/importer.js';
import { createMigrationJobRepository } from '../../src/modules/migration/repository.js';
import { createTestContext, json, TEST_SECRETS } from '../helpers/app.js';
import type { TestContext } from '../helpers/app.js';
import { V1_EXAMPLE_EXPORT } from '../helpers/v1-stand-in.js';
import { ADMIN_COMMAND } from '../helpers/entry-points.js';
import { endChildren, spawnGroup } from '../helpers/children.js';

const NO_COMPANY = '00000000-0000-4000-8000-000000000000';

let context: TestContext;
let dir: string;
let exampleFile: string;

before(async () => {
  context = await createTestContext();
  dir = mkdtempSync(join(tmpdir(), 'slotwise-admin-migrate-'));
  exampleFile = join(dir, 'example.json');
  writeFileSync(exampleFile, JSON.stringify(V1_EXAMPLE_EXPORT));
});
after(async () => {
  // Each child leads its own process group: end the group, whatever it started (also on SIGTERM).
  endChildren();
  await context.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A stream standing in for standard error: what was written, and whether it says it is a terminal. */
function captured(isTTY = false): { stream: ProgressStream; text: () => string } {
  const stream = Object.assign(new PassThrough(), { isTTY });
  let text = '';
  stream.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
  return { stream, text: () => text };
}

function writeExport(name: string, content: string): string {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
}

interface CliReport {
  jobId: string;
  dryRun: boolean;
  created: Record<string, number>;
  skipped: Record<string, number>;
  failed: Array<{ kind: string; legacyId: string | null; message: string }>;
  ignored: Record<string, number>;
  warnings: unknown[];
  warningsOmitted: number;
}

const migrateIn = (companyId: string, file: string, stderr: ProgressStream, ...extra: string[]) =>
  runAdminCommand(context.database.db, ['migrate', '--company', companyId, '--export', file, ...extra], { config: context.config, secrets: TEST_SECRETS, stderr }) as Promise<CliReport>;

const EXAMPLE_CREATED = { locations: 1, services: 2, resources: 2, weeklyAllocations: 2, singleAllocations: 0, recurringBlocks: 1, customers: 0, appointments: 0 };
const NONE = { locations: 0, services: 0, resources: 0, weeklyAllocations: 0, singleAllocations: 0, recurringBlocks: 0, customers: 0, appointments: 0 };

test('a dry run writes nothing; the run creates the example export; a second run skips all of it', async () => {
  const tenant = await context.world.tenant();
  const legacyLocations = () =>
    context.database.db.selectFrom('locations').select('legacyId').where('companyId', '=', tenant.companyId).where('legacyId', 'is not', null).execute();

  const dryErr = captured();
  const dry = await migrateIn(tenant.companyId, exampleFile, dryErr.stream, '--dry-run');
  assert.equal(dry.dryRun, true);
  assert.deepEqual(dry.created, EXAMPLE_CREATED);
  assert.deepEqual(dry.failed, []);
  assert.deepEqual(await legacyLocations(), []);
  assert.match(dryErr.text(), /^Dry run \(job [0-9a-f-]{36}\): nothing was written/m);

  const runErr = captured();
  const run = await migrateIn(tenant.companyId, exampleFile, runErr.stream);
  assert.equal(run.dryRun, false);
  assert.deepEqual(run.created, EXAMPLE_CREATED);
  assert.deepEqual(run.skipped, NONE);
  assert.notEqual(run.jobId, dry.jobId);
  assert.deepEqual(await legacyLocations(), [{ legacyId: '12' }]);
  // The run is a job like the API's: the company's Owner sees it succeeded with the same report.
  const job = await context.app.inject({ method: 'GET', url: `/v3/migration/jobs/${run.jobId}`, headers: tenant.dashboard });
  assert.equal(job.statusCode, 200, job.body);
  assert.equal(json(job).status, 'succeeded');
  const { jobId: _jobId, ...report } = run;
  assert.deepEqual(json(job).report, report);
  // Not a terminal: one line per kind, in the importer's order, then the summary.
  const lines = runErr.text().split('\n');
  assert.deepEqual(lines.slice(0, 3), [
    'locations: 1 of 1 processed, 1 created, 0 skipped, 0 failed',
    'services: 2 of 2 processed, 2 created, 0 skipped, 0 failed',
    'resources: 2 of 2 processed, 2 created, 0 skipped, 0 failed',
  ]);
  assert.equal(lines.filter((line) => /^\w+: \d+ of \d+ processed/.test(line)).length, 8);
  assert.equal(lines[8], `Migration done (job ${run.jobId}).`);
  assert.match(runErr.text(), /\n {2}recurringBlocks +1 +0 +0 +0\n/);

  const again = await migrateIn(tenant.companyId, exampleFile, captured().stream);
  assert.deepEqual(again.created, NONE);
  assert.deepEqual(again.skipped, EXAMPLE_CREATED);
  assert.deepEqual(again.failed, []);
  assert.deepEqual(await legacyLocations(), [{ legacyId: '12' }]);
});

test('records that fail are in the report and the summary; the others land and the command is done', async () => {
  const tenant = await context.world.tenant();
  // A block of a resource the export does not have.
  const orphan = { ...V1_EXAMPLE_EXPORT.resourceBlocks[0], id: 88002, resourceId: 9999 };
  const file = writeExport('orphan.json', JSON.stringify({ ...V1_EXAMPLE_EXPORT, resourceBlocks: [...V1_EXAMPLE_EXPORT.resourceBlocks, orphan] }));
  const stderr = captured();
  const run = await migrateIn(tenant.companyId, file, stderr.stream);
  assert.deepEqual(run.created, EXAMPLE_CREATED);
  assert.deepEqual(run.failed, [{ kind: 'recurringBlocks', legacyId: '88002', message: 'its resource 9999 is not migrated' }]);
  assert.match(stderr.text(), /\n1 record failed \(the report's "failed"\):\n {2}recurringBlocks 88002: its resource 9999 is not migrated\n/);
});

test('on a terminal, one bar counts the records of every kind and names the kind in progress', () => {
  const { stream, text } = captured(true);
  const view = createProgressView(stream);
  const progress = emptyProgress();
  progress.locations.total = 1;
  progress.services.total = 2;
  progress.appointments.total = 7;
  progress.locations.processed = 1;
  view.update(progress);
  progress.services.processed = 2;
  progress.appointments.processed = 7;
  view.update(progress);
  view.stop(true);
  assert.match(text(), /1\/10 records \| services/);
  assert.match(text(), /10\/10 records \| done/);
  assert.doesNotMatch(text(), /processed, /, 'no per-kind lines on a terminal');
});

test('a run that stops midway writes the lines of the kinds it finished only', () => {
  const { stream, text } = captured();
  const view = createProgressView(stream);
  const progress = emptyProgress();
  progress.locations.total = 1;
  progress.services.total = 2;
  progress.locations.processed = 1;
  view.update(progress);
  view.stop(false);
  assert.equal(text(), 'locations: 1 of 1 processed, 0 created, 0 skipped, 0 failed\n');
});

test('a file that is not an export is refused (exit code 1) and says what is wrong', async () => {
  const cases: Array<[string, RegExp]> = [
    [join(dir, 'missing.json'), /missing\.json: no such file$/],
    [dir, /is a directory, not an export file$/],
    [writeExport('not-json.json', '{"locations": ['), /not-json\.json is not JSON: /],
    [writeExport('array.json', '[]'), /array\.json is not a v1 export: it must be a JSON object with only the arrays locations, services, resources, serviceAllocations, resourceAllocations, resourceBlocks, customers, appointments$/],
    [writeExport('extra.json', '{"locations": [], "bookings": [], "staff": []}'), /extra\.json is not a v1 export: it has "bookings", "staff"; an export is a JSON object/],
    [writeExport('scalar.json', '{"locations": [], "customers": {}}'), /scalar\.json is not a v1 export: "customers" must be an array$/],
  ];
  for (const [path, message] of cases) {
    assert.throws(() => readExportFile(path), (error: Error) => error instanceof ApiError && message.test(error.message), path);
    const { text, exitCode } = formatAdminError(captureError(() => readExportFile(path)), false);
    assert.equal(exitCode, EXIT_CODES.refused);
    assert.match(text, /^error: /);
  }
  // A byte order mark (some Windows tools write one) is not a mistake.
  assert.deepEqual(readExportFile(writeExport('bom.json', '\uFEFF{"customers": []}')), { customers: [] });
  const tenant = await context.world.tenant();
  await assert.rejects(migrateIn(tenant.companyId, join(dir, 'array.json'), captured().stream), ApiError);
});

function captureError(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error('expected a throw');
}

test('an unknown company, or a run while another writing run of the company is on, is refused (exit code 1)', async () => {
  const unknown = await migrateIn(NO_COMPANY, exampleFile, captured().stream).catch((error: unknown) => error);
  assert.ok(unknown instanceof ApiError);
  assert.deepEqual(formatAdminError(unknown, false), { text: 'error: Company not found', exitCode: EXIT_CODES.refused });

  const tenant = await context.world.tenant();
  const other = await createMigrationJobRepository(context.database.db).start({
    companyId: tenant.companyId, id: randomUUID(), dryRun: false, sourceType: 'export', requestedBy: null, source: null, owner: 'another-instance', now: Date.now(), leaseMs: 60_000,
  });
  assert.ok(other);
  const busy = await migrateIn(tenant.companyId, exampleFile, captured().stream).catch((error: unknown) => error);
  assert.ok(busy instanceof ApiError);
  assert.equal(busy.statusCode, 409);
  assert.match(busy.message, new RegExp(`already running \\(job ${other.id}\\)`));
  assert.equal(formatAdminError(busy, false).exitCode, EXIT_CODES.refused);
  // A dry run writes nothing, so it is not held back by the running one.
  const dry = await migrateIn(tenant.companyId, exampleFile, captured().stream, '--dry-run');
  assert.deepEqual(dry.created, EXAMPLE_CREATED);
});

test('migrate needs --company (a company id) and --export; --help describes it', () => {
  const reasons: Array<[string[], RegExp]> = [
    [['migrate'], /^migrate needs --company <company id> and --export <file\.json>$/],
    [['migrate', '--company', NO_COMPANY], /^migrate needs --company <company id> and --export <file\.json>$/],
    [['migrate', '--export', 'x.json'], /^migrate needs --company <company id> and --export <file\.json>$/],
    [['migrate', '--company', 'acme', '--export', 'x.json'], /^migrate needs --company <company id> \(a UUID\)$/],
    [['migrate', '--company', NO_COMPANY, '--export', 'x.json', '--name', 'x'], /^migrate does not take --name$/],
    [['list', '--dry-run'], /^list does not take --dry-run$/],
  ];
  for (const [argv, reason] of reasons) {
    assert.throws(() => parseAdminArgs(argv), (error: Error) => error instanceof UsageError && reason.test(error.message), argv.join(' '));
  }
  assert.deepEqual({ ...parseAdminArgs(['migrate', '--company', NO_COMPANY, '--export', 'x.json', '--dry-run']).values }, { company: NO_COMPANY, export: 'x.json', 'dry-run': true });
  const help = adminHelp('migrate');
  assert.match(help, /^usage: npm run admin -- migrate --company <company id> --export <file\.json> \[--dry-run\]/);
  assert.match(help, /locations, services, resources, serviceAllocations, resourceAllocations,\s+resourceBlocks, customers and appointments/);
  assert.match(help, /availability cache: that server's cached searches of the company\s+expire within two minutes/);
  assert.match(adminHelp(), /\n {2}migrate --company <company id> --export <file\.json> \[--dry-run\]\n/);
});

// --- The real command, in a child process ------------------------------------------------------

/** Runs the CLI with the environment given on top of this one; its own process group, ended in after(). */
function cli(args: string[], env: Record<string, string>): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const child = spawnGroup(process.execPath, [...ADMIN_COMMAND, ...args], { env: { ...process.env, NODE_ENV: 'test', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}

/**
 * The database the child uses: the test server on PostgreSQL, or on the embedded database a data
 * directory made from this file's (a dump, so it holds the company made here).
 */
async function childDatabase(companyId: string): Promise<Record<string, string>> {
  if (process.env.TEST_DATABASE_URL) return { DATABASE_URL: process.env.TEST_DATABASE_URL };
  const dataDir = join(dir, `data-${randomUUID()}`);
  const copy = await openDatabase({ dataDir, initialData: await dumpEmbedded(context.database) });
  // The copy has the company (a handle closed before its first query would leave PGlite open).
  await copy.db.selectFrom('companies').select('id').where('id', '=', companyId).executeTakeFirstOrThrow();
  await copy.close();
  return { DATA_DIR: dataDir, DATABASE_URL: '' };
}

test('the real command: a dry run then a run print the report as JSON on stdout and exit 0; an unknown company exits 1', async () => {
  const tenant = await context.world.tenant();
  const env = await childDatabase(tenant.companyId);

  const dry = await cli(['migrate', '--company', tenant.companyId, '--export', exampleFile, '--dry-run'], env);
  assert.equal(dry.status, EXIT_CODES.done, dry.stderr);
  const dryReport = JSON.parse(dry.stdout) as CliReport;
  assert.equal(dryReport.dryRun, true);
  assert.deepEqual(dryReport.created, EXAMPLE_CREATED);
  // Standard error is a pipe here: one line per kind, then the summary.
  assert.match(dry.stderr, /^locations: 1 of 1 processed, 1 created, 0 skipped, 0 failed\n/);
  assert.match(dry.stderr, /\nDry run \(job [0-9a-f-]{36}\): nothing was written/);

  const run = await cli(['migrate', '--company', tenant.companyId, '--export', exampleFile], env);
  assert.equal(run.status, EXIT_CODES.done, run.stderr);
  const report = JSON.parse(run.stdout) as CliReport;
  assert.equal(report.dryRun, false);
  assert.deepEqual(report.created, EXAMPLE_CREATED);
  assert.deepEqual(report.skipped, NONE);
  assert.deepEqual(report.failed, []);
  assert.match(report.jobId, /^[0-9a-f-]{36}$/);
  assert.match(run.stderr, new RegExp(`\\nMigration done \\(job ${report.jobId}\\)\\.\\n`));

  const unknown = await cli(['migrate', '--company', NO_COMPANY, '--export', exampleFile, '--json'], env);
  assert.equal(unknown.status, EXIT_CODES.refused);
  assert.equal(unknown.stdout, '');
  assert.deepEqual(JSON.parse(unknown.stderr.trim()), { success: false, message: 'Company not found', errors: [] });
});

test('the real command: a bad file exits 1 with its reason before any database is opened; --help exits 0', async () => {
  // A DATA_DIR that does not exist stays so: the file is refused first.
  const dataDir = join(dir, 'never-opened');
  const file = writeExport('wrong-keys.json', '{"locations": [], "bookings": []}');
  // None of them opens a database, so they run side by side.
  const [bad, help, usage] = await Promise.all([
    cli(['migrate', '--company', NO_COMPANY, '--export', file], { DATA_DIR: dataDir, DATABASE_URL: '' }),
    cli(['migrate', '--help'], {}),
    cli(['migrate', '--export', exampleFile], {}),
  ]);
  assert.equal(bad.status, EXIT_CODES.refused);
  assert.match(bad.stderr, /^error: .*wrong-keys\.json is not a v1 export: it has "bookings"; an export is a JSON object/);
  assert.doesNotMatch(bad.stderr, /\n\s+at /, 'no stack trace');
  assert.equal(existsSync(dataDir), false);
  assert.equal(help.status, EXIT_CODES.done, help.stderr);
  assert.match(help.stdout, /^usage: npm run admin -- migrate --company <company id> --export <file\.json> \[--dry-run\]/);
  assert.equal(usage.status, EXIT_CODES.usage);
  assert.match(usage.stderr, /^error: migrate needs --company <company id> and --export <file\.json>\n/);
});
