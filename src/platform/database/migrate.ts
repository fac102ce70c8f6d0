import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import type { Db } from './index.js';

const MIGRATIONS_DIR = fileURLToPath(new URL('../../../migrations/', import.meta.url));

// Any fixed number: every instance takes the same session lock, so when several start at once
// one applies the migrations and the others wait, then find nothing left to do.
const MIGRATION_LOCK_KEY = 748_201_913;

export async function migrate(db: Db): Promise<string[]> {
  const files = (await readdir(MIGRATIONS_DIR)).filter((name) => name.endsWith('.sql')).sort();
  const applied: string[] = [];
  await db.connection().execute(async (connection) => {
    // Another instance may be migrating: wait for it however long it takes, and let a migration
    // statement run as long as it needs (lock_timeout and statement_timeout are for requests; the
    // server also migrates on a handle without a client-side query timeout). Both are put back
    // before the connection is reused.
    let locked = false;
    try {
      await sql`set lock_timeout = 0`.execute(connection);
      await sql`set statement_timeout = 0`.execute(connection);
      await sql`select pg_advisory_lock(${MIGRATION_LOCK_KEY})`.execute(connection);
      locked = true;
      await sql`create table if not exists schema_migrations (
        version text primary key,
        applied_at timestamptz not null default now()
      )`.execute(connection);
      const done = await sql<{ version: string }>`select version from schema_migrations`.execute(connection);
      const doneSet = new Set(done.rows.map((row) => row.version));
      for (const file of files) {
        if (doneSet.has(file)) continue;
        const text = await readFile(MIGRATIONS_DIR + file, 'utf8');
        await connection.transaction().execute(async (trx) => {
          await sql.raw(text).execute(trx);
          await sql`insert into schema_migrations (version) values (${file})`.execute(trx);
        });
        applied.push(file);
      }
    } finally {
      if (locked) await sql`select pg_advisory_unlock(${MIGRATION_LOCK_KEY})`.execute(connection);
      await sql`reset lock_timeout`.execute(connection);
      await sql`reset statement_timeout`.execute(connection);
    }
  });
  return applied;
}
