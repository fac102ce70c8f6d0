import { PGlite } from '@electric-sql/pglite';
import { createPgConfig, PglitePgConnection } from '@electric-sql/pglite/node-postgres';
import { CamelCasePlugin, Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { mkdirSync } from 'node:fs';
import { lockDataDir } from './data-dir-lock.js';
import { isCommitOutcomeUnknown, markCommitOutcomeUnknown, markFromDatabase } from './errors.js';
import { createStatementNamer, isPoolerMismatch, isStalePlan } from './prepared-statements.js';
import { ALREADY_COMMITTED, DEFERRED_BEGIN, NOTHING_TO_ROLL_BACK, isThenCommit, leadingOf, leadingValues, sendableValues, sendPipelined, sendWithControl } from './transaction-control.js';
import type { StatementNamer } from './prepared-statements.js';
import type { PostgresPool, PostgresPoolClient } from 'kysely';
import type { Database } from './schema.js';

export type Db = Kysely<Database>;

export interface DatabaseHandle {
  db: Db;
  kind: 'pglite' | 'postgres';
  /** The PGlite instance itself, in embedded mode. */
  embedded?: PGlite;
  /** Connections the pool holds and how many requests wait for one (for /metrics). */
  poolStats(): { total: number; idle: number; waiting: number };
  close(): Promise<void>;
}

// Both drivers return the same JavaScript values for the same column types:
// int8 (counts) as numbers, date as 'YYYY-MM-DD' strings (never a Date at some midnight),
// numeric as numbers (fees are small), timestamptz as Date.
const INT8 = 20;
const NUMERIC = 1700;
const DATE = 1082;

const plugins = [new CamelCasePlugin()];

/**
 * The column types both drivers read the same way (above); every other type as node-postgres
 * reads it. One function for every oid; pg types it as an overload set (the cast restores that).
 */
const types = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') => {
    if (oid === INT8 || oid === NUMERIC) return (value: string) => Number(value);
    if (oid === DATE) return (value: string) => value;
    return pg.types.getTypeParser(oid, format);
  }) as typeof pg.types.getTypeParser,
};

/**
 * The pool Kysely sees: every error from connecting or querying is marked as the database's own
 * (errors.ts, markFromDatabase), so only those can become a 503. With `namer` (prepared statements
 * on), statements with parameters run as named prepared statements (prepared-statements.ts); a
 * pooler that loses them turns naming off (`onNamingStopped`). `onNewClient` runs once on each
 * client before its first use (the embedded database's session reset).
 */
function markingErrors(
  pool: PostgresPool,
  onStatement?: (text: string) => void,
  namer?: StatementNamer,
  onNamingStopped?: (error: unknown) => void,
  onNewClient?: (client: PostgresPoolClient) => Promise<void>,
): PostgresPool {
  const ready = new WeakSet<object>();
  return {
    async connect() {
      let client: PostgresPoolClient;
      try {
        client = await pool.connect();
        if (onNewClient && !ready.has(client)) {
          try {
            await onNewClient(client);
          } catch (error) {
            // A client that cannot be reset is not handed out: the pool drops it (pg: release with an error).
            (client.release as (error?: unknown) => void)(error);
            throw error;
          }
          ready.add(client);
        }
      } catch (error) {
        throw markFromDatabase(error);
      }
      // Kysely sends begin/commit/rollback as statements of their own: a statement outside them
      // may be sent again when it failed only for a stale prepared plan.
      let inTransaction = false;
      // Kysely's plain `begin`, not yet sent: it goes to the server with the transaction's first
      // statement. `committed`: the transaction's last statement took the commit with it
      // (transaction-control.ts), so Kysely's own commit has nothing left to send.
      let beginDeferred = false;
      let committed = false;
      let commitUncertain = false;
      const send = (args: unknown[]): unknown => (client.query as (...a: unknown[]) => unknown)(...args);
      /** After a stale plan: these texts are unnamed on this connection. After a pooler mismatch: naming stops. */
      const forgetOrStopNaming = (error: unknown, texts: string[]) => {
        if (!namer) return;
        if (isStalePlan(error)) for (const t of texts) namer.forget(client, t);
        else {
          namer.disable();
          onNamingStopped?.(error);
        }
      };
      // pg's query() has a dozen overloads; the wrapper passes every call through unchanged (but
      // for the name), which TypeScript cannot express over overloads, hence the casts.
      const query = (...args: unknown[]): unknown => {
        const [first, values] = args;
        const text = typeof first === 'string' ? first : String((first as { text?: unknown }).text ?? '');
        // A statement sent in front of this one, in the same exchange (transaction-control.ts, withLeading).
        const leading = typeof first === 'string' && Array.isArray(values) ? leadingOf(values) : undefined;
        if (leading) onStatement?.(leading.text);
        onStatement?.(text);
        const parameters = Array.isArray(values) ? (leading ? (values as unknown[]).slice(1) : (values as unknown[])) : [];
        // Kysely's own transaction statements, always sent as these exact texts.
        if (text === 'begin' && parameters.length === 0) {
          inTransaction = true;
          beginDeferred = true;
          committed = false;
          return Promise.resolve(DEFERRED_BEGIN);
        }
        const kyselyEnd = text === 'commit' || text === 'rollback';
        if (kyselyEnd) {
          inTransaction = false;
          const nothingSent = beginDeferred;
          beginDeferred = false;
          if (committed) {
            committed = false;
            // Kysely rolls back when the work threw after its last statement committed: there
            // is no transaction left to end, and what committed stays committed.
            return Promise.resolve(ALREADY_COMMITTED);
          }
          if (nothingSent) return Promise.resolve(text === 'commit' ? ALREADY_COMMITTED : NOTHING_TO_ROLL_BACK);
        } else if (committed) {
          return Promise.reject(new Error('A statement was sent after its transaction committed with the statement marked thenCommit (platform/database/transaction-control.ts)'));
        } else if (/^(begin|start transaction)/i.test(text)) inTransaction = true;
        else if (/^(commit|rollback)/i.test(text)) inTransaction = false;
        const name = namer && typeof first === 'string' && parameters.length > 0 ? namer.nameFor(client, first) : undefined;
        // A named statement's values are converted before anything is sent. When pg finds a value
        // it cannot convert, it has already written the Parse, and answers it with a Close of the
        // name and a Sync: the server then no longer has the statement, yet pg marks it parsed on
        // that connection, so its next use failed with 26000 and turned naming off for the process.
        let sendable = parameters;
        if (name) {
          try {
            sendable = sendableValues(parameters);
          } catch (error) {
            return Promise.reject(error);
          }
        }
        const commitAlong = inTransaction && typeof first === 'string' && isThenCommit(text);
        let sent: unknown;
        let leadName: string | undefined;
        if (leading) {
          // Converted before anything changes: a value that cannot be sent fails here, with nothing sent and `begin` still deferred.
          let leadValues: unknown[];
          try {
            leadValues = leadingValues(leading);
          } catch (error) {
            leading.reject(error);
            return Promise.reject(error);
          }
          const begin = beginDeferred;
          beginDeferred = false;
          leadName = namer && leadValues.length > 0 ? namer.nameFor(client, leading.text) : undefined;
          const pair = (mainName: string | undefined) =>
            sendPipelined(client as unknown as pg.Client, { text: leading.text, values: leadValues, name: leadName }, { text, values: sendable, name: mainName }, { begin, commit: commitAlong });
          let answered = pair(name);
          // Outside a transaction, a stale plan or a pooler that lost the statements aborted
          // nothing: the pair goes again with their names forgotten (or naming off), as a lone
          // statement does below. Inside one, transaction.ts runs the whole transaction again.
          if (!inTransaction && namer && (name || leadName)) {
            answered = answered.catch((error: unknown) => {
              if (!isStalePlan(error) && !isPoolerMismatch(error)) return Promise.reject(error);
              forgetOrStopNaming(error, [text, leading.text]);
              // Unnamed this once (each is parsed again); their next use names them again.
              leadName = undefined;
              return pair(undefined);
            });
          }
          sent = answered.then(
            (results) => {
              leading.resolve(results.lead);
              return results.main;
            },
            (error: unknown) => {
              leading.reject(markFromDatabase(error));
              return Promise.reject(error);
            },
          );
          if (commitAlong) sent = (sent as Promise<unknown>).then((result) => ((committed = true), result));
        } else if (beginDeferred || commitAlong) {
          const begin = beginDeferred;
          beginDeferred = false;
          sent = sendWithControl(client as unknown as pg.Client, { text, values: sendable, name }, { begin, commit: commitAlong });
          if (commitAlong) sent = (sent as Promise<unknown>).then((result) => ((committed = true), result));
        } else sent = name ? send([{ name, text, values: sendable }]) : send(args);
        if (!(sent instanceof Promise)) return sent;
        // No answer to an exchange that carried a commit: it may have committed (errors.ts). Kysely
        // then rolls back, and when that fails too (the connection is gone) its error is the one
        // the caller sees: it carries the mark as well.
        if (commitAlong || text === 'commit') {
          sent = sent.catch((error: unknown) => {
            commitUncertain = isCommitOutcomeUnknown(markCommitOutcomeUnknown(error));
            return Promise.reject(error);
          });
        } else if (commitUncertain) {
          sent = sent.catch((error: unknown) => Promise.reject(markCommitOutcomeUnknown(error, { evenWithServerAnswer: true })));
        }
        return (sent as Promise<unknown>).catch((error: unknown) => {
          if ((name || leadName) && namer && (isStalePlan(error) || isPoolerMismatch(error))) {
            // Either statement of a pipelined exchange may be the stale one: both are forgotten.
            forgetOrStopNaming(error, leading ? [text, leading.text] : [text]);
            // Inside a transaction the statement aborted it: platform/database/transaction.ts runs it
            // again. Outside one, a pipelined pair has already gone again (above).
            if (!inTransaction && !leading) return (send(args) as Promise<unknown>).catch((again: unknown) => Promise.reject(markFromDatabase(again)));
          }
          return Promise.reject(markFromDatabase(error));
        });
      };
      return {
        query: query as PostgresPoolClient['query'],
        release: () => client.release(),
      };
    },
    end: () => pool.end(),
  };
}

export interface OpenDatabaseOptions {
  /** postgres:// URL of a server; when absent the embedded database is used. */
  databaseUrl?: string | undefined;
  /** Folder of the embedded database; undefined keeps it in memory (tests). */
  dataDir?: string | undefined;
  poolSize?: number;
  /** Sees the text of every statement sent (tests: the tenant-scope check of test/platform/citus-readiness). */
  onStatement?: ((text: string) => void) | undefined;
  /** A dumped embedded data directory to start from (tests: an already migrated template). */
  initialData?: Blob | undefined;
  /**
   * Longest wait for a connection (a new one, or a free one of the pool) before the query fails
   * as "database unavailable" (503), instead of the request hanging while PostgreSQL is away.
   */
  connectTimeoutMs?: number;
  /**
   * Longest wait for a lock (advisory or row) in any statement; past it the statement fails with
   * lock_not_available (55P03), which a booking answers as 409 BOOKING-137. 0 waits for ever.
   */
  lockTimeoutMs?: number;
  /**
   * Longest a statement may run: PostgreSQL cancels it past this (statement_timeout), and the
   * client gives up a little later if the server itself stopped answering (a frozen server or a
   * partition: query_timeout). Either answers 503. 0 turns both off. The server runs migrations
   * on a handle opened without it.
   */
  statementTimeoutMs?: number;
  /** Told about a connection that failed while checked out (the request using it fails alone). */
  onConnectionError?: (error: Error) => void;
  /**
   * Repeated statements run as named prepared statements, parsed and planned once per connection
   * (prepared-statements.ts), on a PostgreSQL server and on the embedded database alike. Off
   * behind a pooler that cannot keep them (PgBouncer before 1.21 in transaction mode); when one is
   * found anyway, naming stops and `onPreparedStatementsStopped` is told. Default on.
   */
  preparedStatements?: boolean;
  onPreparedStatementsStopped?: (error: unknown) => void;
}

/**
 * The embedded database's files as one archive (tests keep a migrated template this way).
 * Uncompressed by default: a test file loads the template in about two thirds of the time a
 * gzipped one takes (no inflate of 40 MB), at the cost of disk it only holds in a cache folder.
 */
export async function dumpEmbedded(handle: DatabaseHandle, compression: 'none' | 'gzip' = 'none'): Promise<Blob> {
  if (!handle.embedded) throw new Error('only the embedded database can be dumped');
  return handle.embedded.dumpDataDir(compression);
}

/**
 * Kysely over a node-postgres pool, for either database: the connection-error listeners, the
 * statement namer, the error marking (markingErrors) and the pool's figures for /metrics.
 */
function overPgPool(pool: pg.Pool, options: OpenDatabaseOptions, onNewClient?: (client: PostgresPoolClient) => Promise<void>) {
  // A connection that dies must never crash the process. The pool's 'error' event covers idle
  // clients only; a checked-out client emits 'error' on itself (PostgreSQL restarted, backend
  // terminated; PGlite threw), and an unhandled 'error' event ends Node. So every client gets a
  // listener of its own when it connects: the query in flight fails (that request answers 503),
  // and the pool drops the broken client on release and opens a fresh one for the next request.
  const onConnectionError = options.onConnectionError ?? (() => {});
  pool.on('error', onConnectionError);
  pool.on('connect', (client) => client.on('error', onConnectionError));
  const namer = options.preparedStatements === false ? undefined : createStatementNamer();
  // pg.Pool is the pool Kysely's PostgresPool describes; the two packages type it separately.
  const marked = markingErrors(pool as unknown as PostgresPool, options.onStatement, namer, options.onPreparedStatementsStopped, onNewClient);
  return {
    db: new Kysely<Database>({ dialect: new PostgresDialect({ pool: marked }), plugins }),
    poolStats: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
  };
}

type BindConfig = { values?: unknown[]; valueMapper?: ((value: unknown, index: number) => unknown) | undefined };

/**
 * PGlite's adapter connection, with the values of a Bind converted before its message is begun.
 * The serializer bundled in the adapter writes into one shared buffer and, unlike node-postgres's
 * own, does not clear it when converting a value throws: the half-written Bind then went out in
 * front of the next message ('invalid message format'), the rollback after the error among them,
 * so the transaction stayed open on the single session. Converted first, a value that cannot be
 * sent fails its statement alone, as on a PostgreSQL server.
 */
class EmbeddedConnection extends PglitePgConnection {
  override bind(config: BindConfig) {
    const { values, valueMapper } = config;
    super.bind(values && valueMapper ? { ...config, values: values.map((value, index) => valueMapper(value, index)), valueMapper: undefined } : config);
  }
}

export async function openDatabase(options: OpenDatabaseOptions): Promise<DatabaseHandle> {
  if (options.databaseUrl) {
    const pool = new pg.Pool({
      connectionString: options.databaseUrl,
      max: options.poolSize ?? 10,
      connectionTimeoutMillis: options.connectTimeoutMs ?? 5000,
      ...(options.lockTimeoutMs ? { lock_timeout: options.lockTimeoutMs } : {}),
      ...(options.statementTimeoutMs ? { statement_timeout: options.statementTimeoutMs, query_timeout: options.statementTimeoutMs + 5000 } : {}),
      // A dead peer (a partition, a host gone) is noticed on idle connections too.
      keepAlive: true,
      types,
    });
    const { db, poolStats } = overPgPool(pool, options);
    return { db, kind: 'postgres', poolStats, close: () => db.destroy() };
  }

  // One process per embedded data directory: a second one (the CLI beside a running server, or a
  // second server) would write into files the first has open and lose its writes. Refuse at once.
  let unlock = () => {};
  if (options.dataDir) {
    mkdirSync(options.dataDir, { recursive: true });
    unlock = lockDataDir(options.dataDir);
  }
  const embedded = new PGlite({
    ...(options.dataDir ? { dataDir: options.dataDir } : {}),
    ...(options.initialData ? { loadDataDir: options.initialData } : {}),
  });
  try {
    await embedded.waitReady;
  } catch (error) {
    unlock();
    throw error;
  }
  // node-postgres over PGlite's own adapter (a pg connection that hands each protocol message to
  // PGlite): the same driver, type parsers and named prepared statements as a PostgreSQL server,
  // so a repeated statement is parsed and planned once instead of on every call, as PGlite's own
  // query() did. That doubled embedded bookings per second (issue 18, ninth pass). PGlite has one
  // session, so the pool has one connection, held from a transaction's begin to its commit: a
  // query from another request waits for it instead of running inside someone else's transaction.
  // Each client gets an adapter connection of its own (pg keeps which statements it prepared on the
  // connection object), and is never closed while idle: one client lives as long as the pool.
  class EmbeddedClient extends pg.Client {
    constructor(config: pg.ClientConfig = {}) {
      super({ ...config, connection: new EmbeddedConnection({ pglite: embedded }) } as pg.ClientConfig);
    }
  }
  const pool = new pg.Pool({ ...(createPgConfig(embedded) as unknown as pg.PoolConfig), Client: EmbeddedClient, max: 1, idleTimeoutMillis: 0, types });
  // A new client replaces one that failed (PGlite threw: the pool dropped that client, whose
  // rollback could not be sent). The session outlives clients: end the transaction the failed one
  // may have left open, so no request runs inside it or sees its rows, and drop its prepared
  // statements, which the new client does not know of.
  const resetSession = async (client: PostgresPoolClient) => {
    if (embedded.isInTransaction()) await client.query('rollback', []);
    await client.query('deallocate all', []);
  };
  const { db, poolStats } = overPgPool(pool, options, resetSession);
  return {
    db,
    kind: 'pglite',
    embedded,
    poolStats,
    close: async () => {
      try {
        await db.destroy();
        // The adapter leaves the PGlite instance to its owner.
        await embedded.close();
      } finally {
        unlock();
      }
    },
  };
}
