/**
 * The embedded database's share of autovacuum (issue 18, thirteenth pass).
 *
 * PGlite runs PostgreSQL as one backend inside this process, with no autovacuum launcher. Without
 * upkeep, its tables keep the statistics of their last ANALYZE: a fresh installation's are those of
 * empty tables, and the planner goes on planning for them. Measured with bench:booking's data:
 * the busy-time checks of a booking read the whole company's busy week instead of the resource's,
 * and 16 clients booked 112/s after 4,500 bookings where a table analyzed once after 300 booked
 * 177/s. Nothing would reclaim the rows that updates and deletes leave dead either.
 *
 * Each pass applies autovacuum's own rules with PostgreSQL's default settings to the cumulative
 * statistics (pg_stat_user_tables): VACUUM when a table's dead rows pass 50 + 20 % of its live ones,
 * or its rows inserted since the last vacuum pass 1,000 + 20 %; ANALYZE when its rows changed
 * since the last analyze pass 50 + 10 %. A server runs these itself (autovacuum), so this runs only
 * on the embedded database. It shares the embedded database's one connection with the requests,
 * like every other statement: a pass that finds nothing to do costs two short statements.
 */
import { sql } from 'kysely';
import type { Db } from './index.js';

/** The tables a pass worked on. */
export interface UpkeepPass {
  vacuumed: string[];
  analyzed: string[];
}

interface TableCounts {
  name: string;
  vacuum: boolean;
  analyze: boolean;
}

export async function embeddedUpkeepPass(db: Db): Promise<UpkeepPass> {
  // PGlite's backend reports its counts to the cumulative statistics only when asked: the flag
  // makes the next statement's end report them, so the read below sees every change so far.
  await sql`select pg_stat_force_next_flush()`.execute(db);
  // autovacuum_vacuum_threshold 50, _scale_factor 0.2; _insert_threshold 1000, _insert_scale_factor 0.2;
  // autovacuum_analyze_threshold 50, _scale_factor 0.1 (PostgreSQL's defaults).
  const due = await sql<TableCounts>`select relname as name,
        (n_dead_tup > 50 + 0.2 * n_live_tup or n_ins_since_vacuum > 1000 + 0.2 * n_live_tup) as vacuum,
        n_mod_since_analyze > 50 + 0.1 * n_live_tup as analyze
      from pg_stat_user_tables
      where schemaname = 'public'
        and (n_dead_tup > 50 + 0.2 * n_live_tup or n_ins_since_vacuum > 1000 + 0.2 * n_live_tup or n_mod_since_analyze > 50 + 0.1 * n_live_tup)
      order by relname`.execute(db.withoutPlugins());
  const done: UpkeepPass = { vacuumed: [], analyzed: [] };
  for (const table of due.rows) {
    // VACUUM cannot run inside a transaction: each is a statement of its own.
    if (table.vacuum) {
      await sql`vacuum (analyze) ${sql.table(table.name)}`.execute(db);
      done.vacuumed.push(table.name);
    } else {
      await sql`analyze ${sql.table(table.name)}`.execute(db);
      done.analyzed.push(table.name);
    }
  }
  return done;
}
