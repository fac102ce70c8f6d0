// The schema stays ready for distribution by company_id on Citus (docs/scaling.md): every table
// is either a tenant table carrying company_id or a named reference table, and every primary key,
// unique key and foreign key between tenant tables includes company_id (Citus enforces uniqueness
// and foreign keys per shard only when they include the distribution column). Statements are
// checked after a whole-suite run by tenant-statements.check.ts; its reading of SQL is tested here.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { openTestDatabase } from '../helpers/app.js';
import type { DatabaseHandle } from '../../src/platform/database/index.js';
import { allTables, REFERENCE_TABLES, tenantTables } from '../helpers/tenant-catalog.js';
import { isDataStatement, tableReferences, unscopedReferences } from '../helpers/tenant-statements.js';

let database: DatabaseHandle;
before(async () => {
  database = await openTestDatabase();
});
after(() => database.close());

interface Constraint {
  table: string;
  name: string;
  kind: 'p' | 'u' | 'f';
  columns: string[];
  referenced: string | null;
  referencedColumns: string[];
}

async function constraints(): Promise<Constraint[]> {
  const rows = await sql<{ table: string; name: string; kind: 'p' | 'u' | 'f'; columns: string; referenced: string | null; referencedColumns: string | null }>`
    select cl.relname as table, co.conname as name, co.contype as kind,
      (select string_agg(a.attname, ',' order by a.attname) from unnest(co.conkey) k join pg_attribute a on a.attrelid = co.conrelid and a.attnum = k) as columns,
      rc.relname as referenced,
      (select string_agg(a.attname, ',' order by a.attname) from unnest(co.confkey) k join pg_attribute a on a.attrelid = co.confrelid and a.attnum = k) as "referencedColumns"
    from pg_constraint co
    join pg_class cl on cl.oid = co.conrelid
    join pg_namespace n on n.oid = cl.relnamespace
    left join pg_class rc on rc.oid = co.confrelid
    where n.nspname = 'public' and co.contype in ('p', 'u', 'f')`.execute(database.db);
  return rows.rows.map((r) => ({ ...r, columns: r.columns.split(','), referencedColumns: r.referencedColumns?.split(',') ?? [] }));
}

describe('the catalog, read for Citus distribution by company_id', () => {
  test('every table is a tenant table (company_id) or a named reference table', async () => {
    const tenant = new Set(await tenantTables(database.db));
    const others = (await allTables(database.db)).filter((t) => !tenant.has(t));
    assert.deepEqual(others.sort(), Object.keys(REFERENCE_TABLES).sort());
    assert.ok(tenant.has('appointments') && tenant.size > 20, [...tenant].join(', '));
  });

  test('primary and unique keys of tenant tables include company_id', async () => {
    const tenant = new Set(await tenantTables(database.db));
    const lacking = (await constraints()).filter((c) => c.kind !== 'f' && tenant.has(c.table) && !c.columns.includes('company_id'));
    assert.deepEqual(lacking.map((c) => `${c.table}.${c.name} (${c.columns.join(', ')})`), []);
    // Unique indexes that are not constraints (partial, or on expressions) count too.
    const indexes = await sql<{ table: string; name: string; definition: string }>`
      select tablename as table, indexname as name, indexdef as definition from pg_indexes
      where schemaname = 'public' and indexdef like 'CREATE UNIQUE INDEX%'`.execute(database.db);
    const unscoped = indexes.rows.filter((i) => tenant.has(i.table) && !/\(.*\bcompany_id\b.*\)/.test(i.definition));
    assert.deepEqual(unscoped.map((i) => i.definition), []);
  });

  test('foreign keys between tenant tables include company_id on both sides', async () => {
    const tenant = new Set(await tenantTables(database.db));
    const bad = (await constraints()).filter(
      (c) => c.kind === 'f' && tenant.has(c.table) && c.referenced !== null && tenant.has(c.referenced) && !(c.columns.includes('company_id') && c.referencedColumns.includes('company_id')),
    );
    assert.deepEqual(bad.map((c) => `${c.table}.${c.name} → ${c.referenced}`), []);
    // A tenant table may point at a reference table (Citus allows it); never the other way round.
    const backwards = (await constraints()).filter((c) => c.kind === 'f' && !tenant.has(c.table) && c.referenced !== null && tenant.has(c.referenced));
    assert.deepEqual(backwards.map((c) => `${c.table}.${c.name} → ${c.referenced}`), []);
  });
});

describe('reading statements for the tenant-scope check', () => {
  const tenant = new Set(['appointments', 'appointment_resources', 'customers']);

  test('finds tables with and without aliases, and only data statements count', () => {
    assert.deepEqual(tableReferences('select * from "appointments" as "a" inner join "customers" on "customers"."id" = "a"."customer_id"', tenant), [
      { table: 'appointments', alias: 'a' },
      { table: 'customers', alias: 'customers' },
    ]);
    assert.deepEqual(tableReferences('update "appointments" set "status" = $1 where "company_id" = $2', tenant), [{ table: 'appointments', alias: 'appointments' }]);
    assert.deepEqual(tableReferences('select 1 from appointment_resources ar where ar.company_id = $1', tenant), [{ table: 'appointment_resources', alias: 'ar' }]);
    assert.equal(isDataStatement('create table x (id int)'), false);
    assert.equal(isDataStatement('  with x as (select 1) select * from x'), true);
  });

  test('a statement is scoped when each tenant reference meets its company_id', () => {
    assert.deepEqual(unscopedReferences('select * from "appointments" where "company_id" = $1 and "id" = $2', tenant), []);
    assert.deepEqual(unscopedReferences('insert into "customers" ("company_id", "id") values ($1, $2)', tenant), []);
    // An insert from a select: the target's column list names company_id, the source filters by it.
    assert.deepEqual(unscopedReferences('insert into "appointment_resources" ("company_id", "appointment_id") select "appointments"."company_id", "appointments"."id" from "appointments" where "appointments"."company_id" = $1', tenant), []);
    assert.deepEqual(
      unscopedReferences('select * from "appointments" as "a" inner join "appointment_resources" as "ar" on "ar"."company_id" = "a"."company_id" and "ar"."appointment_id" = "a"."id" where "a"."company_id" = $1', tenant),
      [],
    );
  });

  test('a reference without its company_id is reported', () => {
    assert.deepEqual(unscopedReferences('select * from "appointments" where "id" = $1', tenant), [{ table: 'appointments', alias: 'appointments' }]);
    assert.deepEqual(
      unscopedReferences('select * from "appointments" as "a" inner join "appointment_resources" as "ar" on "ar"."appointment_id" = "a"."id" where "a"."company_id" = $1', tenant),
      [{ table: 'appointment_resources', alias: 'ar' }],
    );
    assert.deepEqual(unscopedReferences('insert into "appointment_resources" ("appointment_id") select "id" from "appointments" where "appointments"."company_id" = $1', tenant), [{ table: 'appointment_resources', alias: 'appointment_resources', insertColumns: '"appointment_id"' }]);
    // A bare company_id does not scope two tables at once.
    assert.equal(unscopedReferences('select * from "appointments" inner join "customers" on "customers"."id" = "appointments"."customer_id" where "company_id" = $1', tenant).length, 2);
  });
});
