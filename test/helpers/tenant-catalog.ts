import { sql } from 'kysely';
import type { Db } from '../../src/platform/database/index.js';

/**
 * Tables that are not distributed by company_id on Citus (docs/scaling.md): reference tables,
 * replicated to every node, and the migration runner's own. Every other table must carry company_id.
 */
export const REFERENCE_TABLES: Record<string, string> = {
  companies: 'the tenants themselves: small, read on every request (public client id, API key), a reference table',
  users: 'dashboard users belong to many companies (company_users is the tenant side)',
  external_identities: 'a sign-in identity of a user (issuer, subject), global like users',
  service_secrets: 'secrets of the service itself (token signing keys), not of a company',
  schema_migrations: 'the migration runner\'s record',
};

/** Tables of the public schema with a company_id column: the distributed ones. */
export async function tenantTables(db: Db): Promise<string[]> {
  const rows = await sql<{ name: string }>`
    select c.relname as name from pg_class c join pg_namespace n on n.oid = c.relnamespace
    where n.nspname = 'public' and c.relkind in ('r', 'p')
      and exists (select 1 from pg_attribute a where a.attrelid = c.oid and a.attname = 'company_id' and not a.attisdropped)
    order by 1`.execute(db);
  return rows.rows.map((r) => r.name);
}

export async function allTables(db: Db): Promise<string[]> {
  const rows = await sql<{ name: string }>`
    select c.relname as name from pg_class c join pg_namespace n on n.oid = c.relnamespace
    where n.nspname = 'public' and c.relkind in ('r', 'p') order by 1`.execute(db);
  return rows.rows.map((r) => r.name);
}
