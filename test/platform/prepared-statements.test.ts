// Named prepared statements (DATABASE_PREPARED_STATEMENTS; src/platform/database/prepared-statements.ts):
// which texts are named, the bounds, that the embedded database prepares them too (node-postgres
// over PGlite), and on a real PostgreSQL server (CI's second pass) that a
// repeated statement is prepared once per connection, that a plan made stale by a migration and a
// pooler that loses statements both end in the answer, not an error.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { createStatementNamer, isPoolerMismatch, isStalePlan } from '../../src/platform/database/prepared-statements.js';
import { openDatabase } from '../../src/platform/database/index.js';
import type { DatabaseHandle } from '../../src/platform/database/index.js';
import { transaction } from '../../src/platform/database/transaction.js';
import { LeadingStatement, withLeading } from '../../src/platform/database/transaction-control.js';
import { queriesDuring } from '../helpers/queries.js';
import { migrate } from '../../src/platform/database/migrate.js';
import { appointmentRepository } from '../../src/modules/appointments/repository.js';
import { createDedicatedDatabase, openEmbedded } from '../helpers/app.js';

const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL;

/** The handle, with a table t(a int) holding 1 and 2. */
async function withTable(handle: DatabaseHandle): Promise<DatabaseHandle> {
  await sql`create table t (a int)`.execute(handle.db);
  await sql`insert into t values (1), (2)`.execute(handle.db);
  return handle;
}
/** The texts this process prepared on the handle's connection. */
const prepared = async (handle: DatabaseHandle) =>
  (await sql<{ statement: string }>`select statement from pg_prepared_statements where name like 'slotwise\_%'`.execute(handle.db)).rows.map((r) => r.statement);
/** t's rows, read by a statement with a parameter (so it is named from its second run). */
const rows = async (db: DatabaseHandle['db']) => (await sql<Record<string, unknown>>`select * from t where a >= ${1} order by a`.execute(db)).rows;

/**
 * A value node-postgres cannot convert, in a named statement already prepared and in one about to
 * be: each fails alone. (pg writes the Parse before it converts the values; on a failure it closes
 * the statement on the server but keeps it marked as parsed, so its next use failed with 26000 and
 * turned naming off for the whole process. The pool wrapper now converts the values first.)
 */
async function unsendableValueKeepsNaming(open: (options: { onPreparedStatementsStopped: (error: unknown) => void }) => Promise<DatabaseHandle>) {
  const stopped: unknown[] = [];
  const handle = await open({ onPreparedStatementsStopped: (error) => stopped.push(error) });
  const unsendable = { toPostgres: () => { throw new Error('cannot be sent'); } };
  const select = (a: unknown) => sql`select * from t where a >= ${a} order by a`.execute(handle.db);
  const insert = (a: unknown) => sql`insert into t values (${a})`.execute(handle.db);
  await rows(handle.db);
  await rows(handle.db);
  await assert.rejects(select(unsendable), /cannot be sent/, 'prepared already');
  await insert(3);
  await assert.rejects(insert(unsendable), /cannot be sent/, 'named, not yet prepared');
  await assert.rejects(transaction(handle.db, async (trx) => sql`insert into t values (${unsendable})`.execute(trx)), /cannot be sent/, 'named, in a transaction');
  await insert(4);
  assert.deepEqual(await rows(handle.db), [{ a: 1 }, { a: 2 }, { a: 3 }, { a: 4 }]);
  assert.deepEqual(stopped, [], 'naming stayed on');
  assert.deepEqual((await prepared(handle)).sort(), ['insert into t values ($1)', 'select * from t where a >= $1 order by a']);
}

describe('the statement namer', () => {
  test('names a text from its second use, the same name on every connection, until a connection holds 300', () => {
    const namer = createStatementNamer();
    const one = {};
    const two = {};
    assert.equal(namer.nameFor(one, 'select $1'), undefined, 'first use: unnamed');
    const name = namer.nameFor(one, 'select $1');
    assert.match(name ?? '', /^slotwise_[\w-]+$/);
    assert.equal(namer.nameFor(two, 'select $1'), name, 'the name is the text\'s, not the connection\'s');
    assert.notEqual(namer.nameFor(one, 'select $2') ?? namer.nameFor(one, 'select $2'), name);

    const full = {};
    const texts = Array.from({ length: 301 }, (_, i) => `select ${i}`);
    for (const text of texts) namer.nameFor({}, text);
    const named = texts.map((text) => namer.nameFor(full, text));
    assert.equal(named.filter(Boolean).length, 300);
    assert.equal(named[300], undefined, 'the 301st new text runs unnamed on that connection');
    assert.ok(namer.nameFor({}, texts[300]!), 'and named on another');
  });

  test('a stale plan unnames that text on that connection only; a pooler mismatch turns naming off', () => {
    const namer = createStatementNamer();
    const one = {};
    const two = {};
    namer.nameFor(one, 'select * from t');
    assert.ok(namer.nameFor(one, 'select * from t'));
    namer.forget(one, 'select * from t');
    assert.equal(namer.nameFor(one, 'select * from t'), undefined);
    assert.ok(namer.nameFor(two, 'select * from t'));
    namer.disable();
    assert.equal(namer.enabled, false);
    assert.equal(namer.nameFor(two, 'select * from t'), undefined);
  });

  test('tells the errors apart by SQLSTATE and message', () => {
    assert.equal(isStalePlan({ code: '0A000', message: 'cached plan must not change result type' }), true);
    assert.equal(isStalePlan({ code: '0A000', message: 'another feature' }), false);
    assert.equal(isPoolerMismatch({ code: '26000' }), true);
    assert.equal(isPoolerMismatch({ code: '42P05' }), true);
    assert.equal(isPoolerMismatch({ code: '23505' }), false);
    assert.equal(isPoolerMismatch(null), false);
  });
});

describe('on the embedded database (node-postgres over PGlite)', () => {
  const handles: DatabaseHandle[] = [];
  after(async () => {
    for (const handle of handles) await handle.close();
  });
  // A copy of the suite's migrated template for each test (a new database's initdb took seconds).
  async function embedded(options: { onPreparedStatementsStopped?: (error: unknown) => void; preparedStatements?: boolean } = {}) {
    const handle = await openEmbedded(options);
    handles.push(handle);
    return withTable(handle);
  }

  test('a value node-postgres cannot send fails its statement alone: the statement stays prepared and naming stays on', () => unsendableValueKeepsNaming(embedded));

  test('a statement with parameters is prepared on its second run; a plan made stale by a migration still answers, alone and in a transaction', async () => {
    const handle = await embedded();
    for (let i = 0; i < 4; i++) assert.deepEqual(await rows(handle.db), [{ a: 1 }, { a: 2 }]);
    assert.deepEqual(await prepared(handle), ['select * from t where a >= $1 order by a']);
    await sql`alter table t add column b int default 7`.execute(handle.db);
    assert.deepEqual(await rows(handle.db), [{ a: 1, b: 7 }, { a: 2, b: 7 }], 'sent again unnamed');
    await sql`alter table t add column c int default 8`.execute(handle.db);
    let attempts = 0;
    const inside = await transaction(handle.db, async (trx) => {
      attempts++;
      return rows(trx);
    });
    assert.deepEqual(inside, [{ a: 1, b: 7, c: 8 }, { a: 2, b: 7, c: 8 }]);
    assert.equal(attempts, 1, 'the text was unnamed after its stale plan, so nothing aborted');
  });

  test('a plan made stale by a migration in a pipelined pair outside a transaction: the pair goes again and both answer', async () => {
    const handle = await embedded();
    const pair = async () => {
      const lead = new LeadingStatement('select a from t where a >= $1 order by a', [2]);
      const main = await handle.db.executeQuery(withLeading(sql<Record<string, unknown>>`select * from t where a >= ${1} order by a`.compile(handle.db), lead));
      return { lead: (await lead.result).rows, main: main.rows };
    };
    for (let i = 0; i < 3; i++) assert.deepEqual(await pair(), { lead: [{ a: 2 }], main: [{ a: 1 }, { a: 2 }] });
    await sql`alter table t add column b int default 7`.execute(handle.db);
    const sent = await queriesDuring(pair);
    assert.equal(sent.length, 2, 'the stale pair, then the pair again');
    assert.deepEqual(await pair(), { lead: [{ a: 2 }], main: [{ a: 1, b: 7 }, { a: 2, b: 7 }] });
  });

  test('PGlite failing inside a transaction: the next client ends that transaction and prepares its statements again', async () => {
    const handle = await embedded();
    const pglite = handle.embedded!;
    await rows(handle.db);
    await rows(handle.db);
    // One protocol message runs and then its call rejects (as a WebAssembly or file system fault
    // would): the pg client is broken and dropped, and its rollback is never sent.
    const original = pglite.execProtocolStream.bind(pglite);
    let failNext = false;
    pglite.execProtocolStream = ((message: Uint8Array, options?: object) => {
      if (!failNext) return original(message, options);
      failNext = false;
      return original(message, options).then(() => Promise.reject(new Error('simulated PGlite fault')));
    }) as typeof pglite.execProtocolStream;
    try {
      await assert.rejects(
        transaction(handle.db, async (trx) => {
          await sql`insert into t values (${99})`.execute(trx);
          failNext = true;
          await sql`select ${1}::int`.execute(trx);
        }),
      );
    } finally {
      pglite.execProtocolStream = original;
    }
    assert.deepEqual(await rows(handle.db), [{ a: 1 }, { a: 2 }], 'the failed transaction\'s row is not seen');
    assert.equal(pglite.isInTransaction(), false);
    await sql`insert into t values (${3})`.execute(handle.db);
    assert.deepEqual(await rows(handle.db), [{ a: 1 }, { a: 2 }, { a: 3 }], 'a later write commits on its own');
    assert.deepEqual((await prepared(handle)).sort(), ['insert into t values ($1)', 'select * from t where a >= $1 order by a'], 'named statements work on the new client');
  });

  test('off: nothing is prepared', async () => {
    const handle = await embedded({ preparedStatements: false });
    for (let i = 0; i < 3; i++) await rows(handle.db);
    assert.deepEqual(await prepared(handle), []);
  });
});

describe('on a PostgreSQL server', { skip: TEST_DATABASE_URL ? false : 'TEST_DATABASE_URL is not set (CI runs this against PostgreSQL)' }, () => {
  const drops: Array<() => Promise<void>> = [];
  const handles: DatabaseHandle[] = [];
  after(async () => {
    for (const handle of handles) await handle.close();
    for (const drop of drops) await drop();
  });

  /** A handle of one connection on a database of its own, with a table t(a int) holding 1 and 2. */
  async function oneConnection(options: { onPreparedStatementsStopped?: (error: unknown) => void; preparedStatements?: boolean } = {}) {
    const { url, drop } = await createDedicatedDatabase(TEST_DATABASE_URL!);
    drops.push(drop);
    const handle = await openDatabase({ databaseUrl: url, poolSize: 1, ...options });
    handles.push(handle);
    return withTable(handle);
  }

  test('a value node-postgres cannot send fails its statement alone: the statement stays prepared and naming stays on', () => unsendableValueKeepsNaming(oneConnection));

  test('a statement with parameters is prepared on its second run and reused after', async () => {
    const handle = await oneConnection();
    for (let i = 0; i < 4; i++) assert.deepEqual(await rows(handle.db), [{ a: 1 }, { a: 2 }]);
    assert.deepEqual(await prepared(handle), ['select * from t where a >= $1 order by a']);
  });

  test('off: nothing is prepared', async () => {
    const handle = await oneConnection({ preparedStatements: false });
    for (let i = 0; i < 3; i++) await rows(handle.db);
    assert.deepEqual(await prepared(handle), []);
  });

  test('a column added under a prepared select *: the statement answers with it, alone and in a transaction', async () => {
    const handle = await oneConnection();
    await rows(handle.db);
    await rows(handle.db);
    await sql`alter table t add column b int default 7`.execute(handle.db);
    assert.deepEqual(await rows(handle.db), [{ a: 1, b: 7 }, { a: 2, b: 7 }], 'sent again unnamed');

    const again = await oneConnection();
    await rows(again.db);
    await rows(again.db);
    await sql`alter table t add column b int default 7`.execute(again.db);
    let attempts = 0;
    const inside = await transaction(again.db, async (trx) => {
      attempts++;
      return rows(trx);
    });
    assert.deepEqual(inside, [{ a: 1, b: 7 }, { a: 2, b: 7 }]);
    assert.equal(attempts, 2, 'the transaction the stale plan aborted ran again');
  });

  test('a server that lost the prepared statements (as a pooler would): the answer comes, and naming stops', async () => {
    const stopped: unknown[] = [];
    const handle = await oneConnection({ onPreparedStatementsStopped: (error) => stopped.push(error) });
    await rows(handle.db);
    await rows(handle.db);
    // No parameters, so sent unnamed: the client still believes its statement is prepared.
    await sql`deallocate all`.execute(handle.db);
    assert.deepEqual(await rows(handle.db), [{ a: 1 }, { a: 2 }]);
    assert.equal(stopped.length, 1);
    assert.equal((stopped[0] as { code?: string }).code, '26000');
    await rows(handle.db);
    assert.deepEqual(await prepared(handle), [], 'nothing prepared since');
  });
  test('a cursor walk keeps a generic plan of its page statement: its row bound is a literal, not a parameter', async () => {
    // With `limit $n` the generic plan had to assume an unknown share of the company's rows, cost
    // far more than each custom plan, and PostgreSQL planned every page afresh (issue 18). The
    // bound is now the page size's bucket (10 for a size of 2) written into the text.
    const handle = await oneConnection();
    await migrate(handle.db);
    const companyId = randomUUID();
    const locationId = randomUUID();
    const serviceId = randomUUID();
    await handle.db.insertInto('companies').values({ id: companyId, name: 'Walk', apiKeyHash: randomUUID(), apiKeyPrefix: 'walk', publicClientId: randomUUID() }).execute();
    await handle.db.insertInto('locations').values({ companyId, id: locationId, name: 'Walk', timezoneName: 'UTC', weeklyAvailability: '{}' }).execute();
    await handle.db.insertInto('services').values({ companyId, id: serviceId, name: 'Walk', duration: 60, bookingInterval: 60, padding: 0 }).execute();
    await sql`insert into appointments (company_id, id, location_id, service_id, status, start_time, end_time, duration, padding)
      select ${companyId}::uuid, gen_random_uuid(), ${locationId}::uuid, ${serviceId}::uuid, 'BK', t, t + interval '1 hour', 60, 0
      from generate_series(timestamptz '2030-01-01', timestamptz '2030-01-01' + interval '1999 hours', interval '1 hour') as t`.execute(handle.db);
    await sql`analyze appointments`.execute(handle.db);
    await handle.db.insertInto('clientCredentials').values({ companyId, id: randomUUID(), clientId: 'walker', secretHash: 'x', name: 'walk', createdByUserId: null }).execute();
    // As a dashboard user walks, and as a machine client does: its page carries the credential check
    // (platform/auth/credential-check.ts), a column and a condition evaluated once.
    for (const credentialOf of [null, 'walker']) {
      let after: { value: Date; id: string } | null = null;
      for (let page = 0; page < 12; page++) {
        const { data, next } = await appointmentRepository.afterJson(handle.db, { companyId, filters: {}, sort: 'startTime', order: 'asc', limit: 2, credentialOf }, after);
        assert.equal((JSON.parse(data) as unknown[]).length, 2);
        after = { value: new Date(next![0]), id: next![1] };
      }
    }
    const plans = (await sql<{ genericPlans: number; customPlans: number }>`select generic_plans, custom_plans from pg_prepared_statements where statement like '%json_agg%'`.execute(handle.db)).rows;
    // The first page's statement ran once (unnamed); the next pages' ran 11 times, named from its second.
    assert.equal(plans.length, 2, JSON.stringify(plans));
    for (const plan of plans) assert.deepEqual(plan, { genericPlans: 5, customPlans: 5 }, 'five custom plans, then the generic one kept');
  });
});
