import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import pg from 'pg';
import { openEmptyEmbedded, openTestDatabase } from '../helpers/app.js';
import { loadConfig } from '../../src/platform/config.js';
import { openDatabase } from '../../src/platform/database/index.js';
import type { DatabaseHandle } from '../../src/platform/database/index.js';
import { migrate } from '../../src/platform/database/migrate.js';
import { embeddedUpkeepPass, startEmbeddedUpkeep } from '../../src/platform/database/embedded-upkeep.js';
import type { UpkeepPass } from '../../src/platform/database/embedded-upkeep.js';
import { resolveSecrets } from '../../src/platform/secrets.js';

const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL;
const MIGRATIONS_DIR = fileURLToPath(new URL('../../migrations/', import.meta.url));
const migrationFiles = async () => (await readdir(MIGRATIONS_DIR)).filter((name) => name.endsWith('.sql')).sort();

// Scratch PostgreSQL databases, created with random names on the test server and dropped at the end.
// The shared test database itself is never migrated from scratch, dropped or truncated here.
const scratchNames: string[] = [];

async function adminQuery(text: string): Promise<void> {
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

/** A new, empty PostgreSQL database on the test server; returns its URL. */
async function scratchPostgres(): Promise<string> {
  const name = `slotwise_scratch_${randomBytes(6).toString('hex')}`;
  await adminQuery(`create database "${name}"`);
  scratchNames.push(name);
  const url = new URL(TEST_DATABASE_URL!);
  url.pathname = `/${name}`;
  return url.toString();
}

after(async () => {
  for (const name of scratchNames) await adminQuery(`drop database if exists "${name}" with (force)`);
});

/** An empty, unmigrated database of the driver under test (embedded: a copy of one initdb made). */
async function emptyDatabase(): Promise<DatabaseHandle> {
  return TEST_DATABASE_URL ? openDatabase({ databaseUrl: await scratchPostgres(), poolSize: 3 }) : openEmptyEmbedded();
}

/** A migrated database of the driver under test that no other test uses (embedded: a copy of the
 * migrated template, which is quicker than a fresh one). */
async function privateMigratedDatabase(): Promise<DatabaseHandle> {
  if (!TEST_DATABASE_URL) return openTestDatabase({ dedicated: true });
  const database = await emptyDatabase();
  await migrate(database.db);
  return database;
}

/** Both drivers return int8 as a number, date as a 'YYYY-MM-DD' string, timestamptz as a Date. */
async function checkTypes(database: DatabaseHandle) {
  const result = await sql<{ big: unknown; counted: unknown; day: unknown; at: unknown; fee: unknown }>`
    select 42::int8 as big,
           (select count(*) from (values (1), (2), (3)) as v (x)) as counted,
           date '2024-03-05' as day,
           timestamptz '2024-03-05T10:15:00Z' as at,
           12.50::numeric as fee`.execute(database.db);
  const row = result.rows[0]!;
  assert.equal(row.big, 42, `${database.kind}: int8`);
  assert.equal(row.counted, 3, `${database.kind}: count(*)`);
  assert.equal(row.day, '2024-03-05', `${database.kind}: date`);
  assert.ok(row.at instanceof Date, `${database.kind}: timestamptz is a Date`);
  assert.equal(row.at.toISOString(), '2024-03-05T10:15:00.000Z');
  assert.equal(row.fee, 12.5, `${database.kind}: numeric`);

  // The same for values sent as query parameters, as the application sends them.
  const parameterised = await sql<{ day: unknown; at: unknown }>`
    select ${'2024-12-31'}::date as day, ${new Date('2024-12-31T23:30:00Z')}::timestamptz as at`.execute(database.db);
  assert.equal(parameterised.rows[0]!.day, '2024-12-31');
  assert.ok(parameterised.rows[0]!.at instanceof Date);
  assert.equal(parameterised.rows[0]!.at.getTime(), Date.parse('2024-12-31T23:30:00Z'));
}

describe('migrations', () => {
  test('migrate() applies every file once; a second call applies nothing', async () => {
    const database = await emptyDatabase();
    try {
      const files = await migrationFiles();
      assert.ok(files.length > 0);
      assert.deepEqual(await migrate(database.db), files);
      assert.deepEqual(await migrate(database.db), []);
      const recorded = await sql<{ version: string }>`select version from schema_migrations order by version`.execute(database.db);
      assert.deepEqual(recorded.rows.map((row) => row.version), files);
    } finally {
      await database.close();
    }
  });

  test('two migrate() calls started at once on two handles both succeed (PostgreSQL)', async (t) => {
    if (!TEST_DATABASE_URL) {
      t.skip('TEST_DATABASE_URL is not set');
      return;
    }
    const url = await scratchPostgres();
    const first = await openDatabase({ databaseUrl: url, poolSize: 2 });
    const second = await openDatabase({ databaseUrl: url, poolSize: 2 });
    try {
      const files = await migrationFiles();
      const results = await Promise.allSettled([migrate(first.db), migrate(second.db)]);
      for (const result of results) assert.equal(result.status, 'fulfilled', String((result as PromiseRejectedResult).reason));
      const [a, b] = results.map((result) => (result as PromiseFulfilledResult<string[]>).value);
      // One applied everything; the other waited for the lock and found nothing left to do.
      assert.deepEqual([...a!, ...b!].sort(), files);
      assert.ok(a!.length === 0 || b!.length === 0, `both applied migrations: ${JSON.stringify([a, b])}`);
      assert.deepEqual(await migrate(first.db), []);
      const recorded = await sql<{ count: number }>`select count(*) as count from schema_migrations`.execute(second.db);
      assert.equal(recorded.rows[0]!.count, files.length);
    } finally {
      await first.close();
      await second.close();
    }
  });
});

describe('resolveSecrets', () => {
  test('generates each missing secret once, returns the same values again, and an environment secret wins', async () => {
    const database = await privateMigratedDatabase();
    try {
      const stored = () => database.db.selectFrom('serviceSecrets').select(['name', 'value']).orderBy('name').execute();
      assert.deepEqual(await stored(), []);

      // An environment secret is used as given and never written to the database.
      const fromEnv = 'environment-auth-secret-0123456789abcdefghijklmnop';
      const withEnv = await resolveSecrets(database.db, loadConfig({ NODE_ENV: 'test', AUTH_TOKEN_SECRET: fromEnv }));
      assert.equal(withEnv.AUTH_TOKEN_SECRET, fromEnv);
      assert.deepEqual((await stored()).map((row) => row.name), ['CALENDAR_TOKEN_SECRET', 'CREDENTIAL_ENCRYPTION_SECRET', 'CURSOR_SECRET', 'MANAGE_TOKEN_SECRET', 'REFRESH_TOKEN_SECRET']);

      // Without it, the missing one is generated now; the others are the ones already stored.
      const config = loadConfig({ NODE_ENV: 'test' });
      const first = await resolveSecrets(database.db, config);
      assert.equal(first.REFRESH_TOKEN_SECRET, withEnv.REFRESH_TOKEN_SECRET);
      assert.equal(first.CURSOR_SECRET, withEnv.CURSOR_SECRET);
      assert.notEqual(first.AUTH_TOKEN_SECRET, fromEnv);
      for (const value of Object.values(first)) assert.ok(value.length >= 32, 'a generated secret is long enough');
      assert.equal(new Set(Object.values(first)).size, Object.keys(first).length, 'each secret is its own value');

      // Later calls, also several at once (instances starting together), agree on the same values.
      const again = await Promise.all([resolveSecrets(database.db, config), resolveSecrets(database.db, config)]);
      assert.deepEqual(again[0], first);
      assert.deepEqual(again[1], first);
      const rows = await stored();
      assert.equal(rows.length, Object.keys(first).length);
      assert.deepEqual(Object.fromEntries(rows.map((row) => [row.name, row.value])), first);

      // The environment still wins over a stored value.
      const overridden = await resolveSecrets(database.db, loadConfig({ NODE_ENV: 'test', AUTH_TOKEN_SECRET: fromEnv }));
      assert.deepEqual(overridden, { ...first, AUTH_TOKEN_SECRET: fromEnv });
    } finally {
      await database.close();
    }
  });
});

describe('embedded database', () => {
  test('data written to a data folder is still there after close and reopen', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'slotwise-restart-'));
    try {
      const userId = randomUUID();
      // Empty as initdb leaves it (a copy of a template; test/server.test.ts's cold start runs initdb into a data folder).
      const first = await openEmptyEmbedded({ dataDir });
      try {
        assert.equal(first.kind, 'pglite');
        assert.ok((await migrate(first.db)).length > 0);
        await first.db.insertInto('users').values({ id: userId, email: `${userId}@example.com`, name: 'Kept' }).execute();
        // The embedded driver's types, also when PostgreSQL is the driver under test.
        await checkTypes(first);
      } finally {
        await first.close();
      }

      const reopened = await openDatabase({ dataDir });
      try {
        assert.deepEqual(await migrate(reopened.db), [], 'the migrations were kept too');
        const row = await reopened.db.selectFrom('users').select(['name', 'createdAt']).where('id', '=', userId).executeTakeFirst();
        assert.equal(row?.name, 'Kept');
        assert.ok(row.createdAt instanceof Date);
      } finally {
        await reopened.close();
      }
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});

describe('embedded database upkeep (autovacuum\'s rules; PGlite has no autovacuum)', () => {
  test('a pass vacuums and analyzes the tables past autovacuum\'s thresholds, and only those', async () => {
    const database = await openEmptyEmbedded();
    try {
      const { db } = database;
      await sql`create table grown (id int primary key, note text)`.execute(db);
      await sql`create table quiet (id int primary key)`.execute(db);
      await sql`insert into quiet values (1)`.execute(db);
      await sql`analyze quiet`.execute(db);
      // 2,000 rows inserted: past 1,000 + 20 % (vacuum for inserts) and 50 + 10 % (analyze).
      await sql`insert into grown select g, 'new' from generate_series(1, 2000) as g`.execute(db);
      const statistics = async () =>
        (await sql<{ reltuples: number }>`select reltuples::int8 as reltuples from pg_class where relname = 'grown'`.execute(db)).rows[0]!.reltuples;
      assert.ok((await statistics()) <= 0, 'never analyzed yet');

      assert.deepEqual(await embeddedUpkeepPass(db), { vacuumed: ['grown'], analyzed: [] });
      assert.equal(await statistics(), 2000, 'the planner now knows the rows');
      assert.deepEqual(await embeddedUpkeepPass(db), { vacuumed: [], analyzed: [] }, 'nothing is due right after');

      // 350 rows changed: past 50 + 10 % of 2,000 for analyze; their 350 dead versions are under 50 + 20 % for vacuum.
      await sql`update grown set note = 'changed' where id <= 350`.execute(db);
      assert.deepEqual(await embeddedUpkeepPass(db), { vacuumed: [], analyzed: ['grown'] });
      // Every row changed: their dead versions are far past 50 + 20 % of 2,000.
      await sql`update grown set note = 'changed again'`.execute(db);
      assert.deepEqual(await embeddedUpkeepPass(db), { vacuumed: ['grown'], analyzed: [] });
      // A shutdown under way: the pass stops before the next table.
      await sql`insert into quiet select g from generate_series(2, 2000) as g`.execute(db);
      await sql`update grown set note = 'once more'`.execute(db);
      assert.deepEqual(await embeddedUpkeepPass(db, () => true), { vacuumed: [], analyzed: [] });
      assert.deepEqual(await embeddedUpkeepPass(db), { vacuumed: ['grown', 'quiet'], analyzed: [] });
    } finally {
      await database.close();
    }
  });

  test('the loop (server.ts starts it): a pass right away on the embedded database; none on a server, none when the interval is 0', async () => {
    const noop = () => {};
    assert.equal(startEmbeddedUpkeep({ kind: 'postgres', db: undefined as never }, { seconds: 10, onError: noop }), undefined, 'a server has autovacuum');
    const database = await openEmptyEmbedded();
    try {
      assert.equal(startEmbeddedUpkeep(database, { seconds: 0, onError: noop }), undefined, '0 turns it off');
      await sql`create table looped (id int primary key)`.execute(database.db);
      await sql`insert into looped select g from generate_series(1, 1500) as g`.execute(database.db);
      const errors: unknown[] = [];
      const first = new Promise<UpkeepPass>((resolve) => {
        const loop = startEmbeddedUpkeep(database, {
          seconds: 3600,
          onPass: (done) => {
            resolve(done);
            void loop?.stop();
          },
          onError: (error) => errors.push(error),
        });
      });
      assert.deepEqual(await first, { vacuumed: ['looped'], analyzed: [] });
      assert.deepEqual(errors, []);
    } finally {
      await database.close();
    }
  });

  test('the counts start again at every start (PGlite keeps them in memory): a table filled but never analyzed is analyzed', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'slotwise-upkeep-'));
    try {
      const first = await openEmptyEmbedded({ dataDir });
      try {
        await sql`create table filled (id int primary key)`.execute(first.db);
        await sql`insert into filled select g from generate_series(1, 3000) as g`.execute(first.db);
      } finally {
        await first.close();
      }
      const reopened = await openDatabase({ dataDir });
      try {
        const counts = await sql<{ inserted: number }>`select n_ins_since_vacuum as inserted from pg_stat_user_tables where relname = 'filled'`.execute(reopened.db);
        assert.equal(Number(counts.rows[0]?.inserted ?? 0), 0, 'the inserts before the restart are not counted');
        assert.deepEqual(await embeddedUpkeepPass(reopened.db), { vacuumed: [], analyzed: ['filled'] });
        assert.deepEqual(await embeddedUpkeepPass(reopened.db), { vacuumed: [], analyzed: [] });
      } finally {
        await reopened.close();
      }
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});

describe('column types', () => {
  test('int8 is a number, date a YYYY-MM-DD string, timestamptz a Date (driver under test; the embedded one is also checked above)', async () => {
    const database = await openTestDatabase();
    try {
      await checkTypes(database);
    } finally {
      await database.close();
    }
  });
});
