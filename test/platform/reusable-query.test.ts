// reusableQuery (src/platform/database/reusable-query.ts): a query compiled once per shape, run
// with each call's own values.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { MAX_SHAPES, reusableQuery } from '../../src/platform/database/reusable-query.js';
import type { DatabaseHandle } from '../../src/platform/database/index.js';
import { openTestDatabase } from '../helpers/app.js';

let database: DatabaseHandle;
before(async () => {
  database = await openTestDatabase();
});
after(() => database.close());

test('builds once per shape, and each run answers with its own values', async () => {
  const built: string[] = [];
  const sum = reusableQuery(
    (db, shape: { third: boolean }, value) => {
      built.push(String(shape.third));
      return sql<{ total: number }>`select ${value('a')}::int + ${value('b')}::int ${shape.third ? sql`+ ${value('c')}::int` : sql``} + ${7}::int as total`.compile(db);
    },
    (shape) => String(shape.third),
  );
  const { db } = database;
  assert.deepEqual(await sum(db, { third: false }, { a: 1, b: 2 }), [{ total: 10 }]);
  assert.deepEqual(await sum(db, { third: false }, { a: 5, b: 6 }), [{ total: 18 }], 'new values, same SQL');
  assert.deepEqual(await sum(db, { third: true }, { a: 1, b: 2, c: 3 }), [{ total: 13 }]);
  assert.deepEqual(await sum(db, { third: true }, { a: 0, b: 0, c: 100 }), [{ total: 107 }]);
  assert.deepEqual(built, ['false', 'true'], 'one build per shape; the constant 7 stays a parameter of its own');
  await assert.rejects(sum(db, { third: true }, { a: 1, b: 2 }), /no value for c/);
});

test('arrays are one parameter each, whatever their length', async () => {
  const count = reusableQuery((db, _shape: null, value) => sql<{ n: number }>`select cardinality(${value('ids')}::int[]) as n`.compile(db), () => '');
  assert.deepEqual(await count(database.db, null, { ids: [1, 2, 3] }), [{ n: 3 }]);
  assert.deepEqual(await count(database.db, null, { ids: [] }), [{ n: 0 }]);
});

test(`keeps at most ${MAX_SHAPES} compiled shapes, dropping the least recently used first`, async () => {
  const built: number[] = [];
  const echo = reusableQuery(
    (db, shape: number, value) => {
      built.push(shape);
      return sql<{ n: number }>`select ${value('n')}::int + ${sql.lit(shape)} as n`.compile(db);
    },
    (shape) => String(shape),
  );
  const { db } = database;
  for (let shape = 0; shape < MAX_SHAPES; shape++) await echo(db, shape, { n: 0 });
  await echo(db, 0, { n: 1 }); // shape 0 is now the most recently used
  assert.deepEqual(await echo(db, MAX_SHAPES, { n: 0 }), [{ n: MAX_SHAPES }], 'a new shape past the bound');
  assert.equal(built.length, MAX_SHAPES + 1);
  await echo(db, 0, { n: 0 });
  assert.equal(built.length, MAX_SHAPES + 1, 'shape 0 was used recently and kept');
  assert.deepEqual(await echo(db, 1, { n: 2 }), [{ n: 3 }], 'shape 1, the least recently used, is built again and answers the same');
  assert.deepEqual(built.slice(-1), [1]);
});
