/**
 * Operator CLI: `npm run admin -- <command> [options]`. Prints JSON.
 *
 *   create-company --name <name> --owner-email <email> [--owner-name <name>] [--owner-password <pw>]
 *   suspend --company <id>
 *   reinstate --company <id>
 *   list
 *
 * `--help` (or `help <command>`) describes every command; `--json` prints errors in the API's error
 * body. Exit codes: 0 done, 1 refused (the company or input is wrong), 2 wrong usage, 3 failed
 * (the database could not be used).
 *
 * It uses the same configuration as the server (DATABASE_URL, or DATA_DIR for the embedded
 * database). The embedded database is one process's at a time: while a server holds DATA_DIR the CLI
 * refuses (exit code 3) and names it; with DATABASE_URL it runs beside any number of servers.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { loadConfig } from '../platform/config.js';
import { openDatabase } from '../platform/database/index.js';
import type { Db } from '../platform/database/index.js';
import { migrate } from '../platform/database/migrate.js';
import { hashPassword, isCommonPassword } from '../platform/auth/passwords.js';
import { ApiError } from '../platform/errors.js';
import { createCompanyRepository } from '../modules/companies/repository.js';
import { createCompanyService } from '../modules/companies/service.js';
import { createIdentityRepository } from '../modules/identity/repository.js';
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
};

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
  help: { type: 'boolean', short: 'h' },
  json: { type: 'boolean' },
} as const;

export interface AdminArgs {
  command: string | undefined;
  values: { name?: string; 'owner-email'?: string; 'owner-name'?: string; 'owner-password'?: string; company?: string; help?: boolean; json?: boolean };
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
  return { command, values };
}

export async function runAdminCommand(db: Db, argv: string[]): Promise<unknown> {
  const { command, values } = parseAdminArgs(argv);
  const companies = createCompanyService({ repository: createCompanyRepository(db) });
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
      if (!companyId || !/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(companyId)) throw new UsageError(`${command} needs --company <company id>`);
      return companies.setSuspended(companyId, command === 'suspend');
    }
    case 'list':
      return companies.all();
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

async function main() {
  const argv = process.argv.slice(2);
  const json = argv.includes('--json');
  let args: AdminArgs;
  try {
    args = parseAdminArgs(argv);
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
    const result = await runAdminCommand(database.db, argv);
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  } catch (error) {
    const { text, exitCode } = formatAdminError(error, json);
    process.stderr.write(`${text}\n`);
    process.exitCode = exitCode;
  } finally {
    await database?.close();
  }
}

// Run only when executed, not when imported by tests.
if (import.meta.url === `file://${process.argv[1]}`) {
  main().catch((error) => {
    process.stderr.write(`error: ${errorMessage(error)}\n`);
    process.exit(EXIT_CODES.failed);
  });
}
