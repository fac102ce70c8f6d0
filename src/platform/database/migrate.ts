import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import type { Db } from './index.js';

const MIGRATIONS_DIR = fileURLToPath(new URL('../../../migrations/', import.meta.url));

// Any fixed number: every instance takes the same lock, so when several start at once one applies
// the migrations and the others wait, then find nothing left to do.
const MIGRATION_LOCK_KEY = 748_201_913;

/**
 * Applies the pending migrations in one transaction: the lock is transaction-scoped and the
 * timeouts are `set local`, so nothing outlives the transaction on the server connection. That
 * keeps it correct behind PgBouncer in transaction pooling (docs/scaling.md), where consecutive
 * statements outside a transaction may run on different server connections. A failing file rolls
 * back every file of the run, and the next start tries them again.
 */
export async function migrate(db: Db): Promise<string[]> {
  const files = (await readdir(MIGRATIONS_DIR)).filter((name) => name.endsWith('.sql')).sort();
  return db.transaction().execute(async (trx) => {
    // Another instance may be migrating: wait for it however long it takes, and let a migration
    // statement run as long as it needs (lock_timeout and statement_timeout are for requests).
    await sql`set local lock_timeout = 0`.execute(trx);
    await sql`set local statement_timeout = 0`.execute(trx);
    await sql`select pg_advisory_xact_lock(${MIGRATION_LOCK_KEY})`.execute(trx);
    await sql`create table if not exists schema_migrations (
      version text primary key,
      applied_at timestamptz not null default now()
    )`.execute(trx);
    const done = new Set((await sql<{ version: string }>`select version from schema_migrations`.execute(trx)).rows.map((row) => row.version));
    const applied: string[] = [];
    for (const file of files) {
      if (done.has(file)) continue;
      await sql.raw(await readFile(MIGRATIONS_DIR + file, 'utf8')).execute(trx);
      await sql`insert into schema_migrations (version) values (${file})`.execute(trx);
      applied.push(file);
    }
    return applied;
  });
}
