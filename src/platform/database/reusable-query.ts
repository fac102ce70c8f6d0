import type { CompiledQuery } from 'kysely';
import type { Db } from './index.js';
import { thenCommit, withLeading } from './transaction-control.js';
import type { LeadingStatement } from './transaction-control.js';

/**
 * A query compiled once per shape and run many times with new values, for the statements every
 * search and booking sends (the catalog read, the engine window). Kysely builds a query as a tree,
 * passes it through the CamelCasePlugin and compiles it to SQL on every call: for the catalog read,
 * with its five subqueries, that took longer than PostgreSQL took to answer it (issue 18).
 *
 * `build` makes the query from a `shape` (the choices that change its SQL: whether a customer is
 * named, whether a list is empty) and from placeholders (`value(name)`) where the values go; the
 * compiled SQL is kept per shape, and each run puts the call's values where the placeholders are
 * in the parameters. Rules for `build`, so that the SQL really is the same for every value:
 * - decide structure from `shape` only, never from a value;
 * - a placeholder may stand only where Kysely makes a parameter of it: a compared value, an
 *   insert value, `sql` template substitution, limit or offset; never a list to expand (`in`),
 *   so lists are one array parameter (`= any(${value('ids')}::uuid[])`).
 * A placeholder left among the parameters that `values` does not name is an error, at once.
 */
class Placeholder {
  constructor(readonly name: string) {}
}

export type ValueOf = <T = unknown>(name: string) => T;

/**
 * Compiled shapes kept per query, least recently used dropped first. A compiled shape holds its
 * SQL and Kysely's tree of it, about 24 KB; the list filters alone can combine into thousands of
 * shapes, which callers choose (a company admin's GETs), so the memory must not grow with them.
 * Compiling a dropped shape again costs about half a millisecond.
 */
export const MAX_SHAPES = 200;

/**
 * `build` compiles with the handle of the first run of each shape, and its SQL serves every handle
 * after: the application's handles (the pool, a transaction) all have the same plugins. A query
 * that runs without them compiles and runs on `db.withoutPlugins()` both times.
 */
export function reusableQuery<Shape, Values extends Record<string, unknown>, Row>(
  build: (db: Db, shape: Shape, value: ValueOf) => CompiledQuery<Row>,
  shapeKey: (shape: Shape) => string,
): (db: Db, shape: Shape, values: Values, options?: { thenCommit?: boolean; leading?: LeadingStatement | undefined }) => Promise<Row[]> {
  const statement = reusableStatement<Shape, Values, Row>(build, shapeKey);
  return async (db, shape, values, options) => {
    let run = statement(db, shape, values);
    // The last statement of a transaction may take its commit along, and any statement another
    // statement in front of it (transaction-control.ts).
    if (options?.thenCommit) run = thenCommit(run);
    if (options?.leading) run = withLeading(run, options.leading);
    return (await db.executeQuery<Row>(run)).rows;
  };
}

/**
 * reusableQuery's compiled statement with the call's values in place, not run: for a statement
 * sent in front of another (a LeadingStatement, transaction-control.ts), whose rows come back raw.
 */
export function reusableStatement<Shape, Values extends Record<string, unknown>, Row>(
  build: (db: Db, shape: Shape, value: ValueOf) => CompiledQuery<Row>,
  shapeKey: (shape: Shape) => string,
): (db: Db, shape: Shape, values: Values) => CompiledQuery<Row> {
  const compiled = new Map<string, CompiledQuery<Row>>();
  const value: ValueOf = <T>(name: string) => new Placeholder(name) as T;
  return (db, shape, values) => {
    const key = shapeKey(shape);
    let query = compiled.get(key);
    if (query) {
      // Most recently used last, so the eviction below drops the least recently used.
      compiled.delete(key);
      compiled.set(key, query);
    } else {
      if (compiled.size >= MAX_SHAPES) compiled.delete(compiled.keys().next().value!);
      compiled.set(key, (query = build(db, shape, value)));
    }
    const parameters = query.parameters.map((parameter) => {
      if (!(parameter instanceof Placeholder)) return parameter;
      if (!(parameter.name in values)) throw new Error(`reusableQuery: no value for ${parameter.name}`);
      return values[parameter.name];
    });
    return { ...query, parameters };
  };
}
