/**
 * Operator CLI: `npm run admin -- <command> [options]`. Prints JSON.
 *
 *   create-company --name <name> --owner-email <email> [--owner-name <name>] [--owner-password <pw>]
 *   suspend --company <id>
 *   reinstate --company <id>
 *   list
 *
 * It uses the same configuration as the server (DATABASE_URL, or DATA_DIR for the embedded
 * database). The embedded database is one process's at a time: stop the server first.
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

const USAGE = `usage: npm run admin -- <command> [options]
  create-company --name <name> --owner-email <email> [--owner-name <name>] [--owner-password <password>]
  suspend --company <company id>
  reinstate --company <company id>
  list`;

export class UsageError extends Error {}

export async function runAdminCommand(db: Db, argv: string[]): Promise<unknown> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      name: { type: 'string' },
      'owner-email': { type: 'string' },
      'owner-name': { type: 'string' },
      'owner-password': { type: 'string' },
      company: { type: 'string' },
    },
  });
  const companies = createCompanyService({ repository: createCompanyRepository(db) });
  const identity = createIdentityRepository(db);
  const command = positionals[0];

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
      if (!companyId || !/^[0-9a-f-]{36}$/i.test(companyId)) throw new UsageError(`${command} needs --company <company id>`);
      return companies.setSuspended(companyId, command === 'suspend');
    }
    case 'list':
      return companies.all();
    default:
      throw new UsageError(command ? `unknown command "${command}"` : 'no command given');
  }
}

async function main() {
  const config = loadConfig();
  const database = await openDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: config.databaseUrl ? undefined : config.dataDir,
    poolSize: 2,
  });
  try {
    await migrate(database.db);
    const result = await runAdminCommand(database.db, process.argv.slice(2));
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  } catch (error) {
    if (error instanceof UsageError) {
      process.stderr.write(`${error.message}\n${USAGE}\n`);
      process.exitCode = 2;
    } else if (error instanceof ApiError) {
      process.stderr.write(`${JSON.stringify({ error: error.message, errors: error.errors })}\n`);
      process.exitCode = 1;
    } else {
      throw error;
    }
  } finally {
    await database.close();
  }
}

// Run only when executed, not when imported by tests.
if (import.meta.url === `file://${process.argv[1]}`) {
  main().catch((error) => {
    console.error(error);
    process.exit(1);
  });
}
