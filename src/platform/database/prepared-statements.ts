import { createHash } from 'node:crypto';

/**
 * Named prepared statements on a PostgreSQL server and on the embedded database (DATABASE_PREPARED_STATEMENTS,
 * on by default; the embedded one runs through node-postgres too, platform/database/index.ts).
 *
 * Kysely sends every statement through node-postgres as an unnamed one: PostgreSQL parses and
 * plans it again each time. The statements that run on every search and booking are large (the
 * engine window has seven subqueries, the catalog read five), and planning them was about a third
 * of the database's time per booking (docs/performance.md, issue 18). A statement named after its
 * text is parsed once per connection; PostgreSQL then reuses its plan (a generic one once it
 * costs no more than the custom ones, plan_cache_mode auto).
 *
 * Bounds, so a connection never holds an unbounded set: a text is named only from its second use
 * in the process (one-off statements, such as migrations or IN lists of a rare length, stay
 * unnamed), and a connection prepares at most MAX_PER_CONNECTION statements; after that new texts
 * run unnamed on it. Statements are prepared per server connection, so this must be off when a
 * pooler below 1.21 (PgBouncer in transaction mode) can hand a transaction another connection.
 */
const MAX_PER_CONNECTION = 300;
const MAX_TEXTS = 5_000;

/**
 * PostgreSQL refuses to run a prepared statement whose result columns changed since it was
 * prepared (a migration added a column to a table a `select *` reads, by another instance, during a
 * rolling deploy). Such a statement is run unnamed from then on, on that connection.
 */
export function isStalePlan(error: unknown): boolean {
  const e = error as { code?: unknown; message?: unknown } | null;
  return e?.code === '0A000' && typeof e.message === 'string' && e.message.includes('cached plan must not change result type');
}

/**
 * A named statement the server does not have (26000), or has already (42P05), though this
 * connection prepared (or did not prepare) it: something between the two hands statements to
 * other server connections (a transaction-mode pooler). Naming stops for the process.
 */
export function isPoolerMismatch(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === '26000' || code === '42P05';
}

export interface StatementNamer {
  /** The name to prepare `text` under on this connection, or undefined to send it unnamed. */
  nameFor(connection: object, text: string): string | undefined;
  /** After isStalePlan: never name `text` on this connection again. */
  forget(connection: object, text: string): void;
  /** After isPoolerMismatch: name nothing from now on (every statement unnamed, as with the option off). */
  disable(): void;
  readonly enabled: boolean;
}

export function createStatementNamer(): StatementNamer {
  // Texts seen once, and the names of texts seen more often (a name is a digest of the text).
  const seen = new Map<string, string | null>();
  const prepared = new WeakMap<object, { names: Set<string>; stale: Set<string> }>();
  let enabled = true;
  const stateOf = (connection: object) => {
    let state = prepared.get(connection);
    if (!state) prepared.set(connection, (state = { names: new Set(), stale: new Set() }));
    return state;
  };
  return {
    nameFor(connection, text) {
      if (!enabled) return undefined;
      let name = seen.get(text);
      if (name === undefined) {
        if (seen.size >= MAX_TEXTS) seen.clear();
        seen.set(text, null);
        return undefined;
      }
      if (name === null) seen.set(text, (name = `slotwise_${createHash('sha1').update(text).digest('base64url')}`));
      const state = stateOf(connection);
      if (state.stale.has(name)) return undefined;
      if (!state.names.has(name)) {
        if (state.names.size >= MAX_PER_CONNECTION) return undefined;
        state.names.add(name);
      }
      return name;
    },
    forget(connection, text) {
      const name = seen.get(text);
      if (name) stateOf(connection).stale.add(name);
    },
    disable() {
      enabled = false;
    },
    get enabled() {
      return enabled;
    },
  };
}
