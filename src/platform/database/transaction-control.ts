import pg from 'pg';
import type { CompiledQuery } from 'kysely';

/**
 * A transaction's `begin` and `commit` sent in the same exchange as a statement (issue 18).
 *
 * Kysely opens a transaction by sending `begin` and waiting for its answer before the first
 * statement, and ends it by sending `commit` after the last. Each is a whole round trip (a write,
 * a wake-up of the server, a read). So the pool wrapper (index.ts):
 * - answers Kysely's `begin` at once without sending it, and sends it in front of the
 *   transaction's first statement: Parse, Bind and Execute of `begin`, then the statement's own
 *   messages, then one Sync. The server runs both, in order, in one exchange. A transaction that
 *   sends no statement before its commit or rollback sends nothing at all.
 * - sends `commit` behind a statement marked as the last of its transaction (`thenCommit`), in
 *   the same way, and then answers Kysely's own commit without sending it. When the statement
 *   fails, the server skips the commit (an error skips everything up to the Sync), so the
 *   transaction is aborted, not committed, and Kysely's rollback is sent as usual.
 * Only the statement's answer is given back; the completions of `begin` and `commit` are dropped.
 *
 * A statement may also take another in front of it (`withLeading`): both go in the one exchange,
 * the leading one first, and the server runs them in that order. Each takes its own snapshot (READ
 * COMMITTED), so the second sees what committed while the first ran: a booking takes its advisory
 * locks and reads its slot's busy time in one exchange, the read seeing everything committed
 * before the locks were granted.
 */

const THEN_COMMIT = '\n-- then commit';

/**
 * The statement as the last of its transaction: the commit goes with it. Nothing may run in the
 * transaction after it (the pool wrapper refuses such a statement). Outside a transaction the
 * mark changes nothing.
 */
export function thenCommit<Row>(query: CompiledQuery<Row>): CompiledQuery<Row> {
  return { ...query, sql: query.sql + THEN_COMMIT };
}

export const isThenCommit = (text: string) => text.endsWith(THEN_COMMIT);

/** Kysely's `begin`, answered without being sent. */
export const DEFERRED_BEGIN = Object.freeze({ command: 'BEGIN', rowCount: null, rows: [] });
/** Kysely's commit of a transaction already committed with its last statement, or that sent nothing. */
export const ALREADY_COMMITTED = Object.freeze({ command: 'COMMIT', rowCount: null, rows: [] });
/** Kysely's rollback of a transaction that sent nothing. */
export const NOTHING_TO_ROLL_BACK = Object.freeze({ command: 'ROLLBACK', rowCount: null, rows: [] });

interface PgConnection {
  parse(config: { text: string; name?: string }): void;
  bind(config: Record<string, unknown>): void;
  execute(config: Record<string, unknown>): void;
  parsedStatements: Record<string, string>;
}

type QueryInternals = {
  prepare(connection: PgConnection): void;
  handleCommandComplete(message: unknown, connection: unknown): void;
};
const pgQuery = pg.Query.prototype as unknown as QueryInternals;

/** Parse, Bind and Execute of a statement without parameters, as the unnamed statement and portal. */
function writeControl(connection: PgConnection, text: 'begin' | 'commit') {
  connection.parse({ text });
  connection.bind({});
  connection.execute({});
}

/**
 * A statement to send in front of the next one, in the same exchange (`withLeading`). Its answer
 * comes in `result` once the exchange is done; when the exchange fails, `result` fails with the
 * same error (never unhandled: the caller reads it only after the statement it led).
 */
export class LeadingStatement {
  readonly result: Promise<pg.QueryResult>;
  private settle!: { resolve: (result: pg.QueryResult) => void; reject: (error: unknown) => void };
  constructor(
    readonly text: string,
    readonly values: unknown[],
  ) {
    this.result = new Promise((resolve, reject) => (this.settle = { resolve, reject }));
    this.result.catch(() => {});
  }

  /** Whether its exchange is over (its result resolved or rejected). */
  settled = false;

  resolve(result: pg.QueryResult): void {
    this.settled = true;
    this.settle.resolve(result);
  }

  reject(error: unknown): void {
    this.settled = true;
    this.settle.reject(error);
  }
}

/**
 * The query with `leading` sent in front of it, in the same exchange. The leading statement rides
 * as the first parameter, which the pool wrapper (index.ts) takes off before anything is sent.
 */
export function withLeading<Row>(query: CompiledQuery<Row>, leading: LeadingStatement): CompiledQuery<Row> {
  return { ...query, parameters: [leading, ...query.parameters] };
}

/** The statement a query's parameters carry in front of it (withLeading), if any. */
export const leadingOf = (values: readonly unknown[]): LeadingStatement | undefined => (values[0] instanceof LeadingStatement ? values[0] : undefined);

const { prepareValue } = (pg as unknown as { utils: { prepareValue(value: unknown): unknown } }).utils;

/** Values as node-postgres sends them (text, a Buffer or null); throws for a value it cannot send. */
export const sendableValues = (values: readonly unknown[]): unknown[] => values.map((value) => prepareValue(value));

/** A leading statement's values as node-postgres sends them (sendableValues). */
export const leadingValues = (leading: LeadingStatement): unknown[] => sendableValues(leading.values);

/** A leading statement ready to write: its values already converted, its name set only when the connection has it parsed. */
interface WritableLead {
  text: string;
  name: string;
  values: unknown[];
  parsed: boolean;
}


/** pg's Query with `begin` and/or a leading statement written before its messages and/or `commit` after, their answers left out of the result. */
class QueryWithControl extends pg.Query {
  private completions = 0;
  /** The leading statement's text, for whoever watches node-postgres's queries (test/helpers/queries.ts). */
  readonly leadingText: string | undefined;
  constructor(
    config: pg.QueryConfig,
    private readonly withBegin: boolean,
    private readonly withCommit: boolean,
    private readonly lead?: WritableLead,
  ) {
    super(config);
    this.leadingText = lead?.text;
  }

  // pg calls prepare() inside a cork of the socket, so everything leaves in one write. The
  // statement's own Parse and Bind replace the unnamed statement and portal `begin` used.
  prepare(connection: PgConnection & { describe(config: { type: 'P'; name: string }): void }): void {
    if (this.withBegin) writeControl(connection, 'begin');
    const lead = this.lead;
    if (lead) {
      if (!lead.parsed) connection.parse({ text: lead.text, name: lead.name });
      connection.bind({ statement: lead.name, values: lead.values });
      connection.describe({ type: 'P', name: '' });
      connection.execute({});
    }
    pgQuery.prepare.call(this, connection);
  }

  // pg's prepare() ends here once the values are bound (a value it cannot convert ends it before,
  // with a Sync alone, so then no commit is written): the statement's Execute, the commit behind
  // it, and the one Sync. These queries never read in pages (`rows`), so the Sync always follows.
  _getRows(connection: PgConnection & { sync(): void }, rows: number | undefined): void {
    connection.execute({ portal: (this as unknown as { portal: string }).portal, rows });
    if (this.withCommit) writeControl(connection, 'commit');
    connection.sync();
  }

  handleCommandComplete(message: unknown, connection: unknown): void {
    this.completions++;
    if (this.withBegin && this.completions === 1) return;
    // The leading statement's completion stays: pg keeps it as the first of two results.
    if (this.withCommit && this.completions === (this.withBegin ? 1 : 0) + (this.lead ? 1 : 0) + 2) return;
    pgQuery.handleCommandComplete.call(this, message, connection);
  }
}

/**
 * Sends a statement with `begin` in front of it and/or `commit` behind it, on `client`. Where the
 * statement has no parameters (pg sends it as a simple query, which may hold several statements),
 * the control statements go as round trips of their own. So does `begin` in front of a named
 * statement not yet prepared on this connection: the server's ParseComplete for `begin` would
 * count, for pg, as the named statement's, and pg would take it as prepared even if its own Parse
 * then failed.
 */
export function sendWithControl(
  client: pg.Client,
  statement: { text: string; values: unknown[]; name: string | undefined },
  control: { begin: boolean; commit: boolean },
): Promise<pg.QueryResult> {
  const { text, values, name } = statement;
  const config: pg.QueryConfig = name ? { name, text, values } : { text, values };
  const connection = (client as unknown as { connection: PgConnection }).connection;
  if (values.length === 0) {
    const first: Promise<unknown> = control.begin ? client.query('begin') : Promise.resolve();
    return first.then(async () => {
      const result = await client.query(config);
      if (control.commit) await client.query('commit');
      return result;
    });
  }
  if (control.begin && name !== undefined && connection.parsedStatements[name] === undefined) {
    return client.query('begin').then(() => sendWithControl(client, statement, { begin: false, commit: control.commit }));
  }
  const query = new QueryWithControl(config, control.begin, control.commit);
  return new Promise<pg.QueryResult>((resolve, reject) => {
    (query as unknown as { callback: (error: Error | null, result: pg.QueryResult) => void }).callback = (error, result) => (error ? reject(error) : resolve(result));
    client.query(query);
  });
}

/**
 * Sends `lead` and then `statement` in one exchange (withLeading), with `begin` in front and/or
 * `commit` behind as sendWithControl does, and answers both results. Where one exchange cannot
 * carry them, they go one after the other (the same order, the same transaction): a statement
 * without parameters (pg sends it as a simple query), or a named statement not yet prepared on
 * this connection (pg would take the leading statement's ParseComplete for its own). The leading
 * statement is sent unnamed unless the connection already has it prepared under `lead.name`; its
 * values come converted (leadingValues, called by the pool wrapper before anything is sent).
 */
export async function sendPipelined(
  client: pg.Client,
  lead: { text: string; values: unknown[]; name: string | undefined },
  statement: { text: string; values: unknown[]; name: string | undefined },
  control: { begin: boolean; commit: boolean },
): Promise<{ lead: pg.QueryResult; main: pg.QueryResult }> {
  const connection = (client as unknown as { connection: PgConnection }).connection;
  const { text, values, name } = statement;
  if (values.length === 0 || (name !== undefined && connection.parsedStatements[name] === undefined)) {
    const leadResult = await sendWithControl(client, lead, { begin: control.begin, commit: false });
    return { lead: leadResult, main: await sendWithControl(client, statement, { begin: false, commit: control.commit }) };
  }
  const leadParsed = lead.name !== undefined && connection.parsedStatements[lead.name] === lead.text;
  const query = new QueryWithControl(name ? { name, text, values } : { text, values }, control.begin, control.commit, {
    text: lead.text,
    name: leadParsed ? lead.name! : '',
    values: lead.values,
    parsed: leadParsed,
  });
  const results = await new Promise<pg.QueryResult[]>((resolve, reject) => {
    (query as unknown as { callback: (error: Error | null, result: pg.QueryResult[]) => void }).callback = (error, result) => (error ? reject(error) : resolve(result));
    client.query(query);
  });
  return { lead: results[0]!, main: results[1]! };
}
