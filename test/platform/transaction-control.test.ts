// A transaction's begin sent with its first statement, its commit with a statement marked as its
// last, and a statement sent in front of another (src/platform/database/transaction-control.ts):
// fewer exchanges, the same transaction, the same order.
// On the embedded database, and on a PostgreSQL server when TEST_DATABASE_URL is set (CI's second pass).
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { CompiledQuery, sql } from 'kysely';
import { openDatabase } from '../../src/platform/database/index.js';
import type { DatabaseHandle, Db } from '../../src/platform/database/index.js';
import { transaction } from '../../src/platform/database/transaction.js';
import { LeadingStatement, thenCommit, withLeading } from '../../src/platform/database/transaction-control.js';
import { isCommitOutcomeUnknown, isDatabaseUnavailable } from '../../src/platform/database/errors.js';
import { createDedicatedDatabase, openEmbedded } from '../helpers/app.js';
import { queriesDuring } from '../helpers/queries.js';

const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL;

/** Exchanges with the database while `work` runs: each waits for one answer of the server. */
const exchanges = async (work: () => Promise<unknown>): Promise<number> => (await queriesDuring(work)).length;

/** The transaction a statement runs in (a new one for each statement outside a transaction). */
const transactionId = async (db: Db) => (await sql<{ id: string }>`select txid_current()::text as id, ${1}::int as one`.execute(db)).rows[0]!.id;
const insert = (db: Db, a: number) => sql`insert into t (a) values (${a})`.execute(db);
const values = async (db: Db) => (await sql<{ a: number }>`select a from t where a >= ${0} order by a`.execute(db)).rows.map((r) => r.a);
/** A value node-postgres cannot convert: its statement fails before anything of it is sent. */
const unsendable = { toPostgres: () => { throw new Error('cannot be sent'); } };
/** An insert of `a` marked as the last statement of its transaction. */
const insertThenCommit = (db: Db, a: unknown) => db.executeQuery(thenCommit(CompiledQuery.raw('insert into t (a) values ($1)', [a])));

/** `values` (above) with an insert of `a` sent in front of it (withLeading): the rows it read, and the insert's answer. */
async function valuesAfterInsert(db: Db, a: unknown, query: CompiledQuery<{ a: number }> = sql<{ a: number }>`select a from t where a >= ${0} order by a`.compile(db)) {
  const leading = new LeadingStatement('insert into t (a) values ($1)', [a]);
  const read = await db.executeQuery(withLeading(query, leading));
  return { read: read.rows.map((r) => r.a), inserted: (await leading.result).rowCount };
}

/** A new, empty table t (a < 100) on the one connection of `db`, in place of the last test's. */
async function newTable(db: Db): Promise<void> {
  await sql`drop table if exists t`.execute(db);
  await sql`create table t (a int check (a < 100))`.execute(db);
}

/**
 * The tests of one database. They share its one connection (opening a database for each test took
 * most of this file's time): each test starts with a new table t, and each test's own statement texts
 * (the not-yet-prepared one below) are used by that test alone.
 */
function suite(open: () => Promise<DatabaseHandle>) {
  let opened: Promise<DatabaseHandle> | undefined;
  /** The connection with an empty table t (a < 100); every statement above has run twice, so it is prepared. */
  async function ready(): Promise<Db> {
    const { db } = await (opened ??= open());
    await newTable(db);
    for (let i = 0; i < 2; i++) {
      await transactionId(db);
      await values(db);
      await insert(db, 0);
      await insertThenCommit(db, 0);
    }
    await sql`delete from t`.execute(db);
    return db;
  }

  test('begin goes with the first statement: one exchange fewer, and both statements run in one transaction', async () => {
    const db = await ready();
    let ids: string[] = [];
    const sent = await exchanges(async () => {
      ids = await transaction(db, async (trx) => [await transactionId(trx), await transactionId(trx)]);
    });
    assert.equal(ids[0], ids[1], 'the first statement ran inside the transaction');
    assert.equal(sent, 3, 'the first statement (with begin), the second, commit');
    assert.notEqual(await transactionId(db), await transactionId(db), 'outside a transaction each statement has its own');
  });

  test('a transaction that sends no statement sends nothing, whether it commits or rolls back', async () => {
    const db = await ready();
    const sent = await exchanges(async () => {
      assert.equal(await transaction(db, async () => 'nothing to do'), 'nothing to do');
      await assert.rejects(transaction(db, async () => Promise.reject(new Error('refused before any statement'))), /refused before any statement/);
    });
    assert.equal(sent, 0);
    await insert(db, 1);
    assert.deepEqual(await values(db), [1], 'the connection works after');
  });

  test('a first statement that fails rolls the transaction back, and the connection works after', async () => {
    const db = await ready();
    await assert.rejects(
      transaction(db, async (trx) => insert(trx, 100)),
      (error: { code?: string }) => error.code === '23514',
    );
    await assert.rejects(
      transaction(db, async (trx) => {
        await insert(trx, 1);
        await insert(trx, 100);
      }),
      (error: { code?: string }) => error.code === '23514',
    );
    assert.deepEqual(await values(db), [], 'nothing of either transaction stays');
    await transaction(db, async (trx) => insert(trx, 2));
    assert.deepEqual(await values(db), [2]);
  });

  test('a statement marked as the last takes the commit along: two statements, two exchanges', async () => {
    const db = await ready();
    const sent = await exchanges(() =>
      transaction(db, async (trx) => {
        await insert(trx, 1);
        await insertThenCommit(trx, 2);
      }),
    );
    assert.equal(sent, 2, 'begin with the first insert, commit with the second');
    assert.deepEqual(await values(db), [1, 2]);
    // Alone: begin, the statement and commit in one exchange.
    assert.equal(await exchanges(() => transaction(db, (trx) => insertThenCommit(trx, 3))), 1);
    assert.deepEqual(await values(db), [1, 2, 3]);
  });

  test('a statement marked as the last that fails commits nothing, whether the server or the driver refuses it', async () => {
    const db = await ready();
    await assert.rejects(
      transaction(db, async (trx) => {
        await insert(trx, 1);
        await insertThenCommit(trx, 100);
      }),
      (error: { code?: string }) => error.code === '23514',
    );
    // A value node-postgres cannot send: no Execute is written, so no commit either.
    await assert.rejects(
      transaction(db, async (trx) => {
        await insert(trx, 2);
        await insertThenCommit(trx, unsendable);
      }),
      /cannot be sent/,
    );
    assert.deepEqual(await values(db), [], 'neither transaction committed');
    await transaction(db, (trx) => insertThenCommit(trx, 3));
    assert.deepEqual(await values(db), [3], 'the connection works after');
  });

  test('a statement after the one marked as the last is refused, not run outside the transaction', async () => {
    const db = await ready();
    await assert.rejects(
      transaction(db, async (trx) => {
        await insertThenCommit(trx, 1);
        await insert(trx, 2);
      }),
      /after its transaction committed/,
    );
    assert.deepEqual(await values(db), [1], 'what committed stays; the refused statement never ran');
  });

  test('a value node-postgres cannot send fails its statement alone (PGlite\'s adapter once sent the next message corrupt)', async () => {
    const db = await ready();
    for (const run of [() => sql`insert into t (a) values (${unsendable})`.execute(db), () => insertThenCommit(db, unsendable)]) {
      await assert.rejects(run(), /cannot be sent/);
      await insert(db, 1);
    }
    assert.deepEqual(await values(db), [1, 1]);
  });

  test('a statement with another in front of it: one exchange, in order, in one transaction, with both answers', async () => {
    const db = await ready();
    let seen: Awaited<ReturnType<typeof valuesAfterInsert>> | undefined;
    const sent = await exchanges(() => transaction(db, async (trx) => void (seen = await valuesAfterInsert(trx, 7))));
    assert.equal(sent, 2, 'begin, the insert and the read in one exchange; then commit');
    assert.deepEqual(seen, { read: [7], inserted: 1 }, 'the read ran after the insert and saw it');
    assert.deepEqual(await values(db), [7]);
    const ids = await transaction(db, async (trx) => {
      const leading = new LeadingStatement('select txid_current()::text as id, $1::int as one', [1]);
      const main = await trx.executeQuery(withLeading(sql<{ id: string }>`select txid_current()::text as id, ${1}::int as one`.compile(trx), leading));
      return [((await leading.result).rows[0] as { id: string }).id, main.rows[0]!.id];
    });
    assert.equal(ids[0], ids[1], 'both in the transaction');
    // Outside a transaction: one exchange as well.
    assert.equal(await exchanges(async () => assert.deepEqual(await valuesAfterInsert(db, 8), { read: [7, 8], inserted: 1 })), 1);
  });

  test('either statement failing fails both, and the transaction commits nothing', async () => {
    const db = await ready();
    // The leading statement fails: the server skips the other.
    let leading: LeadingStatement | undefined;
    await assert.rejects(
      transaction(db, async (trx) => {
        await insert(trx, 1);
        leading = new LeadingStatement('insert into t (a) values ($1)', [100]);
        await trx.executeQuery(withLeading(sql`select a from t where a >= ${0} order by a`.compile(trx), leading));
      }),
      (error: { code?: string }) => error.code === '23514',
    );
    await assert.rejects(leading!.result, (error: { code?: string }) => error.code === '23514');
    // The led statement fails after the leading one ran.
    await assert.rejects(
      transaction(db, async (trx) => valuesAfterInsert(trx, 2, CompiledQuery.raw('insert into t (a) values ($1)', [100]) as unknown as CompiledQuery<{ a: number }>)),
      (error: { code?: string }) => error.code === '23514',
    );
    assert.deepEqual(await values(db), [], 'neither transaction left anything');
    await transaction(db, (trx) => valuesAfterInsert(trx, 3));
    assert.deepEqual(await values(db), [3], 'the connection works after');
  });

  test('with the commit along: begin, both statements and commit in one exchange', async () => {
    const db = await ready();
    const sent = await exchanges(() =>
      transaction(db, async (trx) => {
        const leading = new LeadingStatement('insert into t (a) values ($1)', [1]);
        await trx.executeQuery(withLeading(thenCommit(CompiledQuery.raw('insert into t (a) values ($1)', [2])), leading));
        assert.equal((await leading.result).rowCount, 1);
      }),
    );
    assert.equal(sent, 1);
    assert.deepEqual(await values(db), [1, 2]);
  });

  test('a led statement not yet prepared on the connection goes in an exchange of its own, after the leading one', async () => {
    const db = await ready();
    // A new text: unnamed the first time (one exchange), named the second and then prepared first,
    // which the leading statement's answers must not be taken for (two exchanges), prepared after.
    const query = () => sql<{ a: number }>`select a from t where a > ${-1} order by a`.compile(db);
    const counts: number[] = [];
    for (const a of [1, 2, 3]) {
      counts.push(await exchanges(() => transaction(db, async (trx) => assert.deepEqual((await valuesAfterInsert(trx, a, query())).inserted, 1))));
    }
    assert.deepEqual(counts, [2, 3, 2]);
    assert.deepEqual(await values(db), [1, 2, 3]);
  });

  test('outside a transaction the mark changes nothing', async () => {
    const db = await ready();
    assert.equal(await exchanges(() => insertThenCommit(db, 4)), 1);
    await insert(db, 5);
    assert.deepEqual(await values(db), [4, 5]);
  });
}

describe('on the embedded database', () => {
  const handles: DatabaseHandle[] = [];
  after(async () => {
    for (const handle of handles) await handle.close();
  });
  // A PGlite of this file's own, from the suite's migrated template, opened by the first test.
  let opened: Promise<DatabaseHandle> | undefined;
  const open = () => (opened ??= openEmbedded().then((handle) => (handles.push(handle), handle)));
  suite(open);

  test('an exchange that carried a commit and got no answer is told apart: the write may be saved', async () => {
    const handle = await open();
    const { db } = handle;
    const pglite = handle.embedded!;
    await newTable(db);
    // The Sync of the next exchange runs, and then its call rejects, as a connection lost before
    // the answer came back would.
    const original = pglite.execProtocolStream.bind(pglite);
    let failSync = false;
    pglite.execProtocolStream = ((message: Uint8Array, options?: object) => {
      const isSync = message.length === 5 && message[0] === 0x53;
      if (!failSync || !isSync) return original(message, options);
      failSync = false;
      return original(message, options).then(() => Promise.reject(new Error('Connection terminated unexpectedly')));
    }) as typeof pglite.execProtocolStream;
    try {
      const lost = await transaction(db, async (trx) => {
        await insert(trx, 1);
        failSync = true;
        await insertThenCommit(trx, 2);
      }).catch((error: unknown) => error);
      assert.equal(isCommitOutcomeUnknown(lost), true);
      assert.equal(isDatabaseUnavailable(lost), true, 'answered 503, with the message that says it may be saved');
      assert.deepEqual(await values(db), [1, 2], 'and it was saved');

      const refused = await transaction(db, async (trx) => insertThenCommit(trx, 100)).catch((error: unknown) => error);
      assert.equal((refused as { code?: string }).code, '23514');
      assert.equal(isCommitOutcomeUnknown(refused), false, 'a server error is an answer: nothing committed');
    } finally {
      pglite.execProtocolStream = original;
    }
  });
});

describe('on a PostgreSQL server', { skip: TEST_DATABASE_URL ? false : 'TEST_DATABASE_URL is not set (CI runs this against PostgreSQL)' }, () => {
  const handles: DatabaseHandle[] = [];
  const drops: Array<() => Promise<void>> = [];
  after(async () => {
    for (const handle of handles) await handle.close();
    for (const drop of drops) await drop();
  });
  suite(async () => {
    const { url, drop } = await createDedicatedDatabase(TEST_DATABASE_URL!);
    drops.push(drop);
    const handle = await openDatabase({ databaseUrl: url, poolSize: 1 });
    handles.push(handle);
    return handle;
  });
});
