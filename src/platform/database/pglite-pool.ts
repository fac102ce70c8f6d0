import type { PGlite, ParserOptions } from '@electric-sql/pglite';
import type { PostgresPool, PostgresPoolClient, PostgresQueryResult } from 'kysely';

/**
 * Presents one embedded PGlite database as the node-postgres style pool that Kysely's
 * PostgresDialect expects, so the same dialect, queries and transactions run on both.
 *
 * PGlite has a single session. A transaction is BEGIN ... COMMIT on that session, so a
 * "connection" must be held exclusively from connect() until release(); otherwise a query from
 * another request would run inside someone else's transaction. The queue below gives that.
 */
export class PGlitePool implements PostgresPool {
  private busy = false;
  private readonly waiters: Array<() => void> = [];

  constructor(
    private readonly database: PGlite,
    /** Type parsers by OID; PGlite applies them only when given with each query. */
    private readonly parsers: ParserOptions,
  ) {}

  async connect(): Promise<PostgresPoolClient> {
    if (this.busy) await new Promise<void>((resolve) => this.waiters.push(resolve));
    this.busy = true;
    let released = false;
    const database = this.database;
    const options = { parsers: this.parsers };
    const client = {
      async query<R>(sql: string, parameters: ReadonlyArray<unknown>): Promise<PostgresQueryResult<R>> {
        // Without parameters the simple protocol is used, as node-postgres does, so a migration
        // file with many statements runs the same way on both drivers.
        const result =
          parameters.length === 0
            ? ((await database.exec(sql, options)).at(-1) ?? { rows: [], fields: [] })
            : await database.query<R>(sql, [...parameters], options);
        const command = (result.command ?? 'SELECT').toUpperCase();
        return {
          command: command === 'UPDATE' || command === 'DELETE' || command === 'INSERT' || command === 'MERGE' ? command : 'SELECT',
          rowCount: result.rowCount ?? result.affectedRows ?? result.rows.length,
          // exec() (no parameters) types its rows loosely; query<R>() already gives R[].
          rows: result.rows as R[],
        };
      },
      release: () => {
        if (released) return;
        released = true;
        const next = this.waiters.shift();
        if (next) next();
        else this.busy = false;
      },
    };
    // Kysely calls only query(sql, parameters) and release(); its PostgresPoolClient type also
    // lists pg's other query overloads, which this adaptor does not need to offer.
    return client as unknown as PostgresPoolClient;
  }

  async end(): Promise<void> {
    await this.database.close();
  }
}
