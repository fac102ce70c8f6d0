// What the planner makes of the statements the app sends (captured with statementsDuring,
// test/helpers/queries.ts): a prepared statement's generic plan.
import { sql } from 'kysely';
import type { Db } from '../../src/platform/database/index.js';
import type { SentStatement } from './queries.js';

/** A value as an SQL literal, for EXECUTE of a PREPAREd statement (uuids, times, numbers, text and arrays of them). */
function literal(value: unknown): string {
  const quoted = (text: string) => `'${text.replace(/'/g, "''")}'`;
  if (value === null || value === undefined) return 'null';
  if (value instanceof Date) return quoted(value.toISOString());
  if (Array.isArray(value)) return quoted(`{${value.map((item) => `"${String(item)}"`).join(',')}}`);
  if (typeof value === 'number' || typeof value === 'bigint' || typeof value === 'boolean') return String(value);
  return quoted(String(value));
}

/** The index names in a plan (EXPLAIN's JSON format; a bitmap index scan names no relation, so only the index). */
function indexesOf(plan: unknown): string[] {
  const found: string[] = [];
  const walk = (node: unknown) => {
    if (!node || typeof node !== 'object') return;
    const record = node as Record<string, unknown>;
    if (typeof record['Index Name'] === 'string') found.push(record['Index Name']);
    for (const value of Object.values(record)) (Array.isArray(value) ? value : [value]).forEach(walk);
  };
  walk(plan);
  return found;
}

/**
 * The indexes the generic plan of `statement` reads, as PostgreSQL would run it once it stops
 * planning each call (after five runs, when that plan looks no dearer), with sequential scans off
 * so that only an index can read a table.
 */
export async function genericPlanIndexes(db: Db, statement: SentStatement): Promise<string[]> {
  return db.connection().execute(async (connection) => {
    await sql`set plan_cache_mode = force_generic_plan`.execute(connection);
    await sql`set enable_seqscan = off`.execute(connection);
    try {
      await sql.raw(`prepare generic_plan_of as ${statement.text}`).execute(connection);
      try {
        const explained = await sql.raw<{ 'QUERY PLAN': unknown }>(`explain (format json) execute generic_plan_of(${statement.values.map(literal).join(', ')})`).execute(connection);
        const plan = explained.rows[0]!['QUERY PLAN'];
        return indexesOf(typeof plan === 'string' ? JSON.parse(plan) : plan);
      } finally {
        await sql`deallocate generic_plan_of`.execute(connection);
      }
    } finally {
      await sql`reset plan_cache_mode`.execute(connection);
      await sql`reset enable_seqscan`.execute(connection);
    }
  });
}
