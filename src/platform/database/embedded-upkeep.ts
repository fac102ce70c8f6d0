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
 * statistics (pg_stat_user_tables), scaled as autovacuum scales them, by the table's row count as
 * of its last VACUUM or ANALYZE (pg_class.reltuples; none yet counts as 0): VACUUM when the dead
 * rows pass 50 + 20 % of it, the rows inserted since the last vacuum pass 1,000 + 20 %, or the
 * table's oldest unfrozen transaction is more than 200 million old (the wraparound guard);
 * ANALYZE when the rows changed since the last analyze pass 50 + 10 %, or when the table holds
 * rows but was never analyzed. PGlite keeps the counts in memory only, so they start again at
 * every start, and changes made before a restart are not counted: the last rule catches a table
 * filled before one without ever crossing a threshold. (PostgreSQL 18's cap on
 * the vacuum threshold for very large tables is left out: an embedded database is small.) A server
 * runs these itself (autovacuum), so this runs only on the embedded database. It shares the
 * embedded database's one connection with the requests, like every other statement: a pass that
 * finds nothing to do costs two short statements.
 */
import { sql } from 'kysely';
import { startOutboxWorker } from '../outbox/worker.js';
import type { OutboxWorker } from '../outbox/worker.js';
import type { DatabaseHandle, Db } from './index.js';

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

/**
 * One pass. `stopping`: asked before each table, so a shutdown waits for at most the table in hand.
 */
export async function embeddedUpkeepPass(db: Db, stopping: () => boolean = () => false): Promise<UpkeepPass> {
  const raw = db.withoutPlugins();
  // PGlite's backend reports its counts to the cumulative statistics only when asked: with the
  // flag set, this statement's end reports them, so the read below sees every change so far.
  await sql`select pg_stat_force_next_flush()`.execute(raw);
  // autovacuum_vacuum_threshold 50, _scale_factor 0.2; _insert_threshold 1000, _insert_scale_factor 0.2;
  // autovacuum_freeze_max_age 200,000,000; autovacuum_analyze_threshold 50, _scale_factor 0.1 (PostgreSQL's defaults).
  const due = await sql<TableCounts>`select name, "vacuum", "analyze" from (
        select s.relname as name,
          (s.n_dead_tup > 50 + 0.2 * greatest(c.reltuples, 0)
            or s.n_ins_since_vacuum > 1000 + 0.2 * greatest(c.reltuples, 0)
            or age(c.relfrozenxid) > 200000000) as "vacuum",
          (s.n_mod_since_analyze > 50 + 0.1 * greatest(c.reltuples, 0)
            or (c.reltuples < 0 and pg_relation_size(c.oid) > 0)) as "analyze"
        from pg_stat_user_tables s
        join pg_class c on c.oid = s.relid
        where s.schemaname = 'public') as counts
      where "vacuum" or "analyze"
      order by name`.execute(raw);
  const done: UpkeepPass = { vacuumed: [], analyzed: [] };
  for (const table of due.rows) {
    if (stopping()) break;
    // VACUUM cannot run inside a transaction: each is a statement of its own.
    if (table.vacuum) {
      await sql`vacuum (analyze) ${sql.id('public', table.name)}`.execute(raw);
      done.vacuumed.push(table.name);
    } else {
      await sql`analyze ${sql.id('public', table.name)}`.execute(raw);
      done.analyzed.push(table.name);
    }
  }
  return done;
}

/**
 * The upkeep loop of an instance (server.ts; bench:booking runs the same): a pass right away and
 * then every `seconds`, on the embedded database only (a server has autovacuum), none when
 * `seconds` is 0. `stopping` is handed to each pass; `onPass` hears of the tables a pass worked on.
 */
export function startEmbeddedUpkeep(
  database: Pick<DatabaseHandle, 'kind' | 'db'>,
  options: { seconds: number; stopping?: () => boolean; onPass?: (done: UpkeepPass) => void; onError: (error: unknown) => void },
): OutboxWorker | undefined {
  if (database.kind !== 'pglite' || options.seconds <= 0) return undefined;
  return startOutboxWorker({
    pollMs: options.seconds * 1000,
    pass: async () => {
      const done = await embeddedUpkeepPass(database.db, options.stopping);
      options.onPass?.(done);
      // Never "busy": the next pass waits its interval (a table just done is under the thresholds).
      return { reminders: 0, events: 0 };
    },
    onError: options.onError,
  });
}
