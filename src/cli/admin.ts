/**
 * Operator CLI: `npm run admin -- <command> [options]`. Prints JSON.
 *
 *   create-company --name <name> --owner-email <email> [--owner-name <name>] [--owner-password <pw>]
 *   suspend --company <id>
 *   reinstate --company <id>
 *   list
 *   migrate --company <id> --export <file.json> [--dry-run]
 *
 * `--help` (or `help <command>`) describes every command; `--json` prints errors in the API's error
 * body. Exit codes: 0 done, 1 refused (the company or input is wrong), 2 wrong usage, 3 failed
 * (the database could not be used).
 *
 * `migrate` imports a v1 export file through the migration service's runLocal
 * (modules/migration/jobs.ts): the same importer, job row and one-writer-per-company guard as
 * POST /v3/migration/sync. It reads and checks the file before opening the database, shows its
 * progress on standard error (a cli-progress bar on a terminal, one line per kind otherwise), and
 * prints the report (the API's, plus jobId) on standard output. It has no app, so it cannot bump
 * a running server's availability cache; those cached searches expire on their own
 * (modules/availability/cache.ts, two minutes).
 *
 * It uses the same configuration as the server (DATABASE_URL, or DATA_DIR for the embedded
 * database). The embedded database is one process's at a time: while a server holds DATA_DIR the CLI
 * refuses (exit code 3) and names it; with DATABASE_URL it runs beside any number of servers.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { SingleBar } from 'cli-progress';
import { loadConfig } from '../platform/config.js';
import type { AppConfig } from '../platform/config.js';
import { openDatabase } from '../platform/database/index.js';
import type { Db } from '../platform/database/index.js';
import { migrate } from '../platform/database/migrate.js';
import { hashPassword, isCommonPassword } from '../platform/auth/passwords.js';
import { createSealer } from '../platform/encryption.js';
import { ApiError, badRequest, notFound } from '../platform/errors.js';
import { createOutboundFetch } from '../platform/outbound/fetch.js';
import { resolveSecrets } from '../platform/secrets.js';
import type { Secrets } from '../platform/secrets.js';
import { MIGRATION_KINDS } from '../domain/migration/plan.js';
import { createCompanyRepository } from '../modules/companies/repository.js';
import { createCompanyService } from '../modules/companies/service.js';
import { createIdentityRepository } from '../modules/identity/repository.js';
import { createPlanChecks } from '../modules/migration/checks.js';
import { createImporter } from '../modules/migration/importer.js';
import type { MigrationProgress, MigrationReport } from '../modules/migration/importer.js';
import { createMigrationService } from '../modules/migration/jobs.js';
import { createMigrationJobRepository, createMigrationWrites } from '../modules/migration/repository.js';
import { errorCode, errorMessage } from '../platform/values.js';

/** Every command: its options and what it does, for `--help` and for checking arguments. */
const COMMANDS: Record<string, { usage: string; summary: string; options: string[] }> = {
  'create-company': {
    usage: 'create-company --name <name> --owner-email <email> [--owner-name <name>] [--owner-password <password>]',
    summary:
      'Creates a company and makes the user with --owner-email its Owner (the user is created when new; without\n' +
      '  --owner-password a password is generated and printed once). Prints the company, with its API key.',
    options: ['name', 'owner-email', 'owner-name', 'owner-password'],
  },
  suspend: {
    usage: 'suspend --company <company id>',
    summary: 'Suspends a company: every call with its credentials is refused with 403 until it is reinstated.',
    options: ['company'],
  },
  reinstate: {
    usage: 'reinstate --company <company id>',
    summary: 'Lifts a suspension.',
    options: ['company'],
  },
  list: {
    usage: 'list',
    summary: 'Lists every company with its id, name and whether it is suspended.',
    options: [],
  },
  migrate: {
    usage: 'migrate --company <company id> --export <file.json> [--dry-run]',
    summary:
      'Imports a v1 export file into the company, as POST /v3/migration/sync does. The file is a JSON object of\n' +
      '  arrays, with only the keys locations, services, resources, serviceAllocations, resourceAllocations,\n' +
      '  resourceBlocks, customers and appointments. Records the company already has (same v1 id) are skipped, so\n' +
      '  running it again completes what is missing; a record that fails is reported and the others land.\n' +
      '  --dry-run reports what a run would do and writes nothing.\n' +
      '\n' +
      '  Progress goes to standard error: a bar on a terminal, one line per kind otherwise. The report (the API\'s,\n' +
      '  plus jobId) is printed on standard output, then a summary on standard error. Exit code 0 even when some\n' +
      '  records failed (they are in the report\'s "failed"); 1 when the company is unknown, the file is not an\n' +
      '  export, or another writing run of the company is on (from here or the API).\n' +
      '\n' +
      '  The CLI cannot reach a running server\'s availability cache: that server\'s cached searches of the company\n' +
      '  expire within two minutes. A run stopped midway (Ctrl-C) keeps the company locked until a server\'s worker\n' +
      '  closes its job, once its lease (MIGRATION_LEASE_SECONDS) runs out; then run it again.',
    options: ['company', 'export', 'dry-run'],
  },
};

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const EXIT_CODES = { done: 0, refused: 1, usage: 2, failed: 3 } as const;

const COMMON = `Options for every command:
  --help, -h   describe the command and exit
  --json       print errors as the API's error body ({"success": false, "message", "errors"}) instead of one line

Exit codes: 0 done; 1 refused (unknown company, invalid input); 2 wrong usage; 3 failed (the database could not be used).
Configuration is the server's: DATABASE_URL, or DATA_DIR for the embedded database (stop the server first).`;

const USAGE = `usage: npm run admin -- <command> [options]

Commands:
${Object.values(COMMANDS)
  .map((c) => `  ${c.usage}`)
  .join('\n')}

Run \`npm run admin -- <command> --help\` for a command's description.
${COMMON}`;

/** The help text: the whole CLI, or one command. */
export function adminHelp(command?: string): string {
  const entry = command ? COMMANDS[command] : undefined;
  if (!entry) return USAGE;
  return `usage: npm run admin -- ${entry.usage}\n\n  ${entry.summary}\n\n${COMMON}`;
}

export class UsageError extends Error {}

const ALL_OPTIONS = {
  name: { type: 'string' },
  'owner-email': { type: 'string' },
  'owner-name': { type: 'string' },
  'owner-password': { type: 'string' },
  company: { type: 'string' },
  export: { type: 'string' },
  'dry-run': { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  json: { type: 'boolean' },
} as const;

export interface AdminArgs {
  command: string | undefined;
  values: {
    name?: string;
    'owner-email'?: string;
    'owner-name'?: string;
    'owner-password'?: string;
    company?: string;
    export?: string;
    'dry-run'?: boolean;
    help?: boolean;
    json?: boolean;
  };
}

/**
 * The command line, checked before anything is opened: an unknown command or option, an option
 * without its value, or an option the command does not take is a UsageError with a one-line reason.
 */
export function parseAdminArgs(argv: string[]): AdminArgs {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, allowPositionals: true, strict: true, options: ALL_OPTIONS });
  } catch (error) {
    const code = errorCode(error);
    const option = /'(-[^' ]+)/.exec(errorMessage(error))?.[1];
    if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') throw new UsageError(`unknown option ${option ?? ''}`.trim());
    if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') throw new UsageError(`${option ?? 'an option'} needs a value`);
    throw new UsageError(errorMessage(error));
  }
  const { positionals, values } = parsed;
  // `help create-company` is `create-company --help`.
  if (positionals[0] === 'help') return { command: positionals[1], values: { ...values, help: true } };
  const command = positionals[0];
  if (values.help) return { command, values };
  if (!command) throw new UsageError('no command given');
  const entry = COMMANDS[command];
  if (!entry) throw new UsageError(`unknown command "${command}" (commands: ${Object.keys(COMMANDS).join(', ')})`);
  if (positionals.length > 1) throw new UsageError(`${command} takes no argument "${positionals[1]}"`);
  const foreign = Object.keys(values).filter((key) => key !== 'help' && key !== 'json' && !entry.options.includes(key));
  if (foreign.length) throw new UsageError(`${command} does not take --${foreign[0]}`);
  if (command === 'migrate') {
    if (!values.company || !values.export) throw new UsageError('migrate needs --company <company id> and --export <file.json>');
    if (!UUID.test(values.company)) throw new UsageError('migrate needs --company <company id> (a UUID)');
  }
  return { command, values };
}

/** The lists of a v1 export document (the API's ExportSourceBody, modules/migration/schemas.ts). */
export const EXPORT_KEYS = ['locations', 'services', 'resources', 'serviceAllocations', 'resourceAllocations', 'resourceBlocks', 'customers', 'appointments'] as const;
export type ExportDocument = Partial<Record<(typeof EXPORT_KEYS)[number], unknown[]>>;

/**
 * Reads and checks migrate's --export file: a file that is missing, unreadable, not JSON, or not
 * an object of the export's arrays is refused (exit code 1) with what is wrong. The records
 * themselves are checked by the importer, which reports each bad one.
 */
export function readExportFile(path: string): ExportDocument {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const code = errorCode(error);
    if (code === 'ENOENT') throw badRequest(`${path}: no such file`);
    if (code === 'EISDIR') throw badRequest(`${path} is a directory, not an export file`);
    throw badRequest(`${path} cannot be read: ${errorMessage(error)}`);
  }
  let data: unknown;
  try {
    // A byte order mark (some Windows tools write one) is not JSON.
    data = JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch (error) {
    throw badRequest(`${path} is not JSON: ${errorMessage(error)}`);
  }
  const expected = `a JSON object with only the arrays ${EXPORT_KEYS.join(', ')}`;
  if (typeof data !== 'object' || data === null || Array.isArray(data)) throw badRequest(`${path} is not a v1 export: it must be ${expected}`);
  const unknown = Object.keys(data).filter((key) => !(EXPORT_KEYS as readonly string[]).includes(key));
  if (unknown.length) throw badRequest(`${path} is not a v1 export: it has ${unknown.map((key) => `"${key}"`).join(', ')}; an export is ${expected}`);
  const notArray = Object.entries(data).find(([, list]) => !Array.isArray(list));
  if (notArray) throw badRequest(`${path} is not a v1 export: "${notArray[0]}" must be an array`);
  return data as ExportDocument;
}

/** Where migrate writes its progress and summary (standard error, or a test's stream). */
export type ProgressStream = NodeJS.WritableStream & { isTTY?: boolean };

/**
 * migrate's progress. On a terminal: one bar of the records processed across every kind, named by
 * the kind in progress (the importer takes the kinds in the order of MIGRATION_KINDS). Otherwise
 * (a log file, a pipe): one line per kind as it finishes, so logs stay readable.
 */
export function createProgressView(stream: ProgressStream) {
  let bar: SingleBar | undefined;
  let last: MigrationProgress | undefined;
  /** Kinds whose line is written (not on a terminal). */
  let written = 0;
  const writeLines = (upTo: number) => {
    for (; last && written < upTo; written++) {
      const kind = MIGRATION_KINDS[written]!;
      const p = last[kind];
      stream.write(`${kind}: ${p.processed} of ${p.total} processed, ${p.created} created, ${p.skipped} skipped, ${p.failed} failed\n`);
    }
  };
  return {
    update(progress: MigrationProgress) {
      last = progress;
      const current = MIGRATION_KINDS.findIndex((kind) => progress[kind].processed < progress[kind].total);
      if (stream.isTTY !== true) return writeLines(current === -1 ? MIGRATION_KINDS.length : current);
      const total = MIGRATION_KINDS.reduce((n, kind) => n + progress[kind].total, 0);
      const processed = MIGRATION_KINDS.reduce((n, kind) => n + Math.min(progress[kind].processed, progress[kind].total), 0);
      const payload = { kind: current === -1 ? 'done' : MIGRATION_KINDS[current] };
      if (bar) {
        bar.setTotal(total);
        bar.update(processed, payload);
        return;
      }
      // gracefulExit off: its SIGINT handler would only stop the bar, and Ctrl-C must stop the run.
      bar = new SingleBar({ stream, format: '{bar} {value}/{total} records | {kind}', barsize: 30, hideCursor: false, gracefulExit: false });
      bar.start(total, processed, payload);
    },
    /** The run ended: the bar's last state, or the lines of the kinds not written yet (all of them only when it finished). */
    stop(finished: boolean) {
      bar?.stop();
      if (!bar && last) {
        const current = MIGRATION_KINDS.findIndex((kind) => last![kind].processed < last![kind].total);
        writeLines(finished || current === -1 ? MIGRATION_KINDS.length : current);
      }
    },
  };
}

/** migrate's closing words on standard error: counts per kind, the warnings, the first failures. */
export function migrationSummary(jobId: string, report: MigrationReport, firstFailures = 5): string {
  const failed = Object.fromEntries(MIGRATION_KINDS.map((kind) => [kind, report.failed.filter((note) => note.kind === kind).length]));
  const width = Math.max(...MIGRATION_KINDS.map((kind) => kind.length));
  const cell = (value: string | number) => String(value).padStart(9);
  const lines = [
    report.dryRun ? `Dry run (job ${jobId}): nothing was written; the counts are what a run would do.` : `Migration done (job ${jobId}).`,
    `  ${'kind'.padEnd(width)}${cell('created')}${cell('skipped')}${cell('failed')}${cell('ignored')}`,
    ...MIGRATION_KINDS.map((kind) => `  ${kind.padEnd(width)}${cell(report.created[kind])}${cell(report.skipped[kind])}${cell(failed[kind]!)}${cell(report.ignored[kind])}`),
  ];
  const warnings = report.warnings.length + report.warningsOmitted;
  if (warnings) lines.push(`${warnings} warning${warnings === 1 ? '' : 's'}: records migrated with something dropped or changed (the report's "warnings").`);
  if (report.failed.length) {
    lines.push(`${report.failed.length} record${report.failed.length === 1 ? '' : 's'} failed (the report's "failed"):`);
    for (const note of report.failed.slice(0, firstFailures)) lines.push(`  ${note.kind} ${note.legacyId ?? '(no v1 id)'}: ${note.message}`);
    if (report.failed.length > firstFailures) lines.push(`  and ${report.failed.length - firstFailures} more`);
  }
  return `${lines.join('\n')}\n`;
}

export interface AdminOptions {
  /** The server's configuration (migrate); read from the environment when absent. */
  config?: AppConfig;
  /** The server's secrets (migrate); resolved as the server does (platform/secrets.ts) when absent. */
  secrets?: Secrets;
  /** migrate's export, already read and checked (main reads it before opening the database). */
  exportData?: ExportDocument;
  /** Where migrate writes its progress and summary (default: standard error). */
  stderr?: ProgressStream;
}

export async function runAdminCommand(db: Db, argv: string[], options: AdminOptions = {}): Promise<unknown> {
  const { command, values } = parseAdminArgs(argv);
  const companyRepository = createCompanyRepository(db);
  const companies = createCompanyService({ repository: companyRepository });
  const identity = createIdentityRepository(db);

  switch (command) {
    case 'create-company': {
      const name = values.name?.trim();
      const email = values['owner-email']?.trim();
      if (!name || !email) throw new UsageError('create-company needs --name and --owner-email');
      let owner = await identity.userByEmail(email);
      let generatedPassword: string | undefined;
      if (!owner) {
        const password = values['owner-password'] ?? (generatedPassword = randomBytes(12).toString('base64url'));
        if (password.length < 8) throw new UsageError('--owner-password must be at least 8 characters');
        if (isCommonPassword(password)) throw new UsageError('--owner-password is one of the most common passwords; choose another');
        await identity.insertUser({ id: randomUUID(), email, name: values['owner-name'] ?? email, passwordHash: await hashPassword(password) });
        owner = (await identity.userByEmail(email))!;
      }
      const company = await companies.create(owner.id, { name });
      return {
        company,
        owner: { id: owner.id, email: owner.email, ...(generatedPassword ? { generatedPassword } : {}) },
      };
    }
    case 'suspend':
    case 'reinstate': {
      const companyId = values.company;
      if (!companyId || !UUID.test(companyId)) throw new UsageError(`${command} needs --company <company id>`);
      return companies.setSuspended(companyId, command === 'suspend');
    }
    case 'list':
      return companies.all();
    case 'migrate': {
      // parseAdminArgs checked both.
      const companyId = values.company!;
      const data = options.exportData ?? readExportFile(values.export!);
      if (!(await companyRepository.byId(companyId))) throw notFound('Company not found');
      const config = options.config ?? loadConfig();
      const secrets = options.secrets ?? (await resolveSecrets(db, config));
      // Built as modules/migration/module.ts builds it, without the app: no cache to touch, no log
      // (what goes wrong is thrown here and printed).
      const service = createMigrationService({
        db,
        jobs: createMigrationJobRepository(db),
        importer: createImporter({ db, writes: createMigrationWrites(db) }),
        checkPlan: createPlanChecks(),
        sealer: createSealer(secrets.CREDENTIAL_ENCRYPTION_SECRET, config.externalCalendars.previousEncryptionSecrets),
        fetch: createOutboundFetch({ timeoutMs: config.migration.timeoutMs, allowLoopbackHttp: config.migration.allowLoopbackHttp }),
        config: config.migration,
        instanceId: `admin-cli-${process.pid}-${randomUUID()}`,
      });
      const stderr = options.stderr ?? process.stderr;
      const progress = createProgressView(stderr);
      let finished = false;
      let run;
      try {
        run = await service.runLocal(companyId, data, { dryRun: values['dry-run'] ?? false, onProgress: (p) => progress.update(p) });
        finished = true;
      } finally {
        progress.stop(finished);
      }
      stderr.write(migrationSummary(run.jobId, run.report));
      return { jobId: run.jobId, ...run.report };
    }
    default:
      throw new UsageError(command ? `unknown command "${command}"` : 'no command given');
  }
}

/** An error as the operator sees it: one line, or the API's error body with --json. */
export function formatAdminError(error: unknown, json: boolean): { text: string; exitCode: number } {
  if (error instanceof UsageError) {
    return json
      ? { text: JSON.stringify({ success: false, message: error.message, errors: [] }), exitCode: EXIT_CODES.usage }
      : { text: `error: ${error.message}\nRun \`npm run admin -- --help\` for the commands and their options.`, exitCode: EXIT_CODES.usage };
  }
  if (error instanceof ApiError) {
    const body = { success: false, message: error.message, errors: error.errors, ...(error.code ? { code: error.code } : {}) };
    const detail = error.errors.map((e) => e.msg).filter((msg) => msg !== error.message);
    return json
      ? { text: JSON.stringify(body), exitCode: EXIT_CODES.refused }
      : { text: `error: ${[error.message, ...detail].join('; ')}`, exitCode: EXIT_CODES.refused };
  }
  const message = errorMessage(error);
  return json
    ? { text: JSON.stringify({ success: false, message, errors: [] }), exitCode: EXIT_CODES.failed }
    : { text: `error: ${message}`, exitCode: EXIT_CODES.failed };
}

/** The command line's entry (src/cli/admin-main.ts): runs the command of process.argv, sets the exit code. */
export async function main() {
  const argv = process.argv.slice(2);
  const json = argv.includes('--json');
  let args: AdminArgs;
  let exportData: ExportDocument | undefined;
  try {
    args = parseAdminArgs(argv);
    // A wrong file is refused before the database is opened (or found held by a server).
    if (args.command === 'migrate' && !args.values.help) exportData = readExportFile(args.values.export!);
  } catch (error) {
    const { text, exitCode } = formatAdminError(error, json);
    process.stderr.write(`${text}\n`);
    process.exitCode = exitCode;
    return;
  }
  if (args.values.help) {
    process.stdout.write(`${adminHelp(args.command)}\n`);
    return;
  }
  let database: Awaited<ReturnType<typeof openDatabase>> | undefined;
  try {
    const config = loadConfig();
    database = await openDatabase({
      databaseUrl: config.databaseUrl,
      dataDir: config.databaseUrl ? undefined : config.dataDir,
      poolSize: 2,
    });
    await migrate(database.db);
    const result = await runAdminCommand(database.db, argv, { config, ...(exportData ? { exportData } : {}) });
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  } catch (error) {
    const { text, exitCode } = formatAdminError(error, json);
    process.stderr.write(`${text}\n`);
    process.exitCode = exitCode;
  } finally {
    await database?.close();
  }
}
