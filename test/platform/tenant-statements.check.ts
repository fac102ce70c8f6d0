// Run by scripts/run-tests.mjs after a whole-suite `npm test`, not as part of it: it reads every
// statement the suite sent (SLOTWISE_STATEMENT_LOG) and fails when one reaches a tenant table
// without that table's company_id, so the schema and queries stay ready for Citus distribution by
// company_id (docs/scaling.md). Cross-tenant statements that are so by design are listed below,
// each with its reason; on Citus they are the multi-shard queries.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { openTestDatabase } from '../helpers/app.js';
import { tenantTables } from '../helpers/tenant-catalog.js';
import { isDataStatement, unscopedReferences } from '../helpers/tenant-statements.js';

/** Statements that read or write across companies on purpose. */
export const CROSS_TENANT: Array<{ pattern: RegExp; reason: string }> = [
  {
    pattern: /^delete from "idempotency_keys" where "created_at" < \$1$/,
    reason: 'the hourly purge of expired Idempotency-Key rows (appointments/repository.ts) runs over every company at once',
  },
  {
    pattern: /^select count\(\*\)::int as pending, extract\(epoch from clock_timestamp\(\) - min\(created_at\)\)::float8 as lag_seconds from outbox_events where processed_at is null/,
    reason: 'the /metrics gauge of the whole outbox (pending events and the oldest one\'s age) is one figure for the instance',
  },
  {
    pattern: /^update "refresh_tokens" set "revoked_at" = \$1 where "user_id" = \$2 and "revoked_at" is null$/,
    reason: 'a user\'s sign-out everywhere, password change or removal revokes their refresh tokens in every company they belong to',
  },
];

const folder = process.env.SLOTWISE_STATEMENT_LOG;

test('every statement the suite sent scopes each tenant table by company_id', { skip: folder ? false : 'SLOTWISE_STATEMENT_LOG is not set (run the whole suite with npm test)' }, async () => {
  const statements = new Set<string>();
  for (const name of readdirSync(folder!)) for (const text of JSON.parse(readFileSync(join(folder!, name), 'utf8')) as string[]) statements.add(text);
  assert.ok(statements.size > 100, `only ${statements.size} statements were recorded`);
  const database = await openTestDatabase();
  const tenant = new Set(await tenantTables(database.db));
  await database.close();

  const used = new Set<RegExp>();
  const unscoped: string[] = [];
  for (const text of statements) {
    if (!isDataStatement(text)) continue;
    const missing = unscopedReferences(text, tenant);
    if (missing.length === 0) continue;
    const flat = text.replace(/\s+/g, ' ').trim();
    const allowed = CROSS_TENANT.find((entry) => entry.pattern.test(flat));
    if (allowed) used.add(allowed.pattern);
    else unscoped.push(`${missing.map((m) => (m.alias === m.table ? m.table : `${m.table} as ${m.alias}`)).join(', ')}:\n    ${text.replace(/\s+/g, ' ').slice(0, 400)}`);
  }
  assert.deepEqual(unscoped, [], `${unscoped.length} statements reach a tenant table without its company_id`);
  const stale = CROSS_TENANT.filter((entry) => !used.has(entry.pattern)).map((entry) => entry.pattern.source);
  assert.deepEqual(stale, [], 'cross-tenant entries no statement needed any more (remove them)');
});
