/**
 * Reads SQL text for the tenant-scope rule (docs/scaling.md, "Ready for Citus"): every reference
 * to a tenant table in a statement is filtered or joined by that table's company_id, so on Citus
 * each statement is routed to one tenant's shard and joins are colocated. A heuristic over the
 * text Kysely and our raw `sql` templates produce, not a SQL parser: it finds `from`, `join`,
 * `update` and `into` references and looks for `<alias>.company_id`.
 */

export interface TableReference {
  table: string;
  alias: string;
  /** An insert's target: scoped when its column list names company_id. */
  insertColumns?: string;
}

const NOT_AN_ALIAS = new Set([
  'where', 'set', 'on', 'join', 'inner', 'left', 'right', 'full', 'cross', 'natural', 'lateral', 'group', 'order', 'limit', 'offset',
  'values', 'using', 'returning', 'for', 'union', 'except', 'intersect', 'select', 'default', 'having', 'window', 'as', 'and', 'or',
]);
const REFERENCE = /\b(from|join|update|into)\s+(?:only\s+)?"?([a-z_][a-z0-9_]*)"?(?:\s+(?:as\s+)?"?([a-z_][a-z0-9_]*)"?)?(?:\s*\(([^)]*)\))?/gi;

/** Data statements only: the migration runner's DDL is not a tenant query. */
export function isDataStatement(text: string): boolean {
  return /^\s*(select|insert|update|delete|with)\b/i.test(text);
}

export function tableReferences(text: string, tables: ReadonlySet<string>): TableReference[] {
  const references: TableReference[] = [];
  for (const match of text.matchAll(REFERENCE)) {
    const table = match[2]!.toLowerCase();
    if (!tables.has(table)) continue;
    const next = match[3]?.toLowerCase();
    const insertColumns = match[1]!.toLowerCase() === 'into' && match[4] !== undefined ? match[4].toLowerCase() : undefined;
    references.push({ table, alias: next && !NOT_AN_ALIAS.has(next) ? next : table, ...(insertColumns !== undefined ? { insertColumns } : {}) });
  }
  return references;
}

/** The tenant-table references of a statement that are not scoped by their company_id. */
export function unscopedReferences(text: string, tenantTables: ReadonlySet<string>): TableReference[] {
  const references = tableReferences(text, tenantTables);
  if (references.length === 0) return [];
  const lower = text.toLowerCase();
  const qualified = (alias: string) => lower.includes(`"${alias}"."company_id"`) || new RegExp(`\\b${alias}\\.company_id\\b`).test(lower);
  // A bare company_id names the only table in scope when there is one tenant reference.
  const bare = /(^|[^."\w])"?company_id"?\b/.test(lower.replace(/"[a-z_][a-z0-9_]*"\."company_id"|\b[a-z_][a-z0-9_]*\.company_id\b/g, ''));
  const aliases = new Set(references.map((r) => r.alias));
  return references.filter((r) => !qualified(r.alias) && !(bare && aliases.size === 1) && !/\bcompany_id\b/.test(r.insertColumns ?? ''));
}
