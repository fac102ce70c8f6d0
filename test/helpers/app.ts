import { createHash, randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, realpathSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { setTimeout as delay } from 'node:timers/promises';
import { SourceMap } from 'node:module';
import type { SourceMapPayload } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { LightMyRequestResponse } from 'fastify';
import { Redis } from 'ioredis';
import pg from 'pg';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/platform/config.js';
import type { AppConfig } from '../../src/platform/config.js';
import { dumpEmbedded, openDatabase } from '../../src/platform/database/index.js';
import type { DatabaseHandle, OpenDatabaseOptions } from '../../src/platform/database/index.js';
import { migrate } from '../../src/platform/database/migrate.js';
import type { Secrets } from '../../src/platform/secrets.js';
import type { App } from '../../src/platform/http/types.js';
import { createWorld } from './world.js';
import type { Tenant, World } from './world.js';

/** Fixed secrets, so tests can forge tokens (expired, wrong audience, other kinds) on purpose. */
export const TEST_SECRETS: Secrets = {
  AUTH_TOKEN_SECRET: 'test-auth-token-secret-0123456789abcdef0123456789',
  REFRESH_TOKEN_SECRET: 'test-refresh-token-secret-0123456789abcdef012345',
  CURSOR_SECRET: 'test-cursor-secret-0123456789abcdef0123456789abcd',
  CALENDAR_TOKEN_SECRET: 'test-calendar-token-secret-0123456789abcdef0123',
  CREDENTIAL_ENCRYPTION_SECRET: 'test-credential-encryption-secret-0123456789ab',
  MANAGE_TOKEN_SECRET: 'test-manage-token-secret-0123456789abcdef012345678',
};

export interface TestContext {
  app: App;
  database: DatabaseHandle;
  config: AppConfig;
  redis: Redis | undefined;
  /** The fixture builder bound to `app` (test/helpers/world.ts). */
  world: World;
  close(): Promise<void>;
}

const MIGRATIONS_DIR = fileURLToPath(new URL('../../migrations/', import.meta.url));
const TEMPLATE_DIR = fileURLToPath(new URL('../../node_modules/.cache/slotwise/', import.meta.url));

const PGLITE_PACKAGE = fileURLToPath(new URL('../../node_modules/@electric-sql/pglite/package.json', import.meta.url));

/**
 * A fresh embedded database runs initdb, which takes more than a second; loading an uncompressed
 * dump of one about a third of a second. So the first test file to need one builds a template, a
 * dump kept in node_modules/.cache/slotwise under a key of what made it (PGlite's version, and for
 * the migrated one the migrations' content), and every file after that loads it. `build` makes the
 * database to dump.
 */
async function embeddedDump(kind: 'pglite-migrated' | 'pglite-empty', key: string, build: () => Promise<DatabaseHandle>): Promise<Blob> {
  const path = join(TEMPLATE_DIR, `${kind}-${createHash('sha256').update(key).digest('hex').slice(0, 16)}.tar`);
  if (!existsSync(path)) {
    let pending = building.get(path);
    if (!pending) building.set(path, (pending = buildDumpOnce(kind, path, build).finally(() => building.delete(path))));
    await pending;
  }
  // Kept for the process: the suite runner opens one database per test file, many files per process.
  let kept = dumps.get(kind);
  if (kept?.path !== path) dumps.set(kind, (kept = { path, blob: new Blob([readFileSync(path)]) }));
  return kept.blob;
}
const building = new Map<string, Promise<void>>();

/**
 * Whether a template lock was left by a process that is gone (a run killed while it built the
 * template): the next run takes it over at once instead of waiting. A lock older than any build
 * takes is taken over too, in case its pid was reused.
 */
function lockHolderGone(lock: string): boolean {
  try {
    if (Date.now() - statSync(lock).mtimeMs > 600_000) return true;
    const pid = Number(readFileSync(lock, 'utf8'));
    // Written with its content in one call; empty only for the instant between create and write.
    if (!Number.isInteger(pid) || pid <= 0) return false;
    process.kill(pid, 0);
    return false;
  } catch (error) {
    // ESRCH: no such process (EPERM: it exists, another user's). ENOENT: the lock went meanwhile.
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

/**
 * Builds the dump at `path`, unless another process of the run is building it: the test processes
 * of a fresh clone all start by asking for a template, and each built its own. The builder holds
 * `<path>.lock` (its pid); the others wait for the dump, or take over the lock of a process that
 * is gone (lockHolderGone).
 */
async function buildDumpOnce(kind: string, path: string, build: () => Promise<DatabaseHandle>): Promise<void> {
  mkdirSync(TEMPLATE_DIR, { recursive: true });
  const lock = `${path}.lock`;
  while (!existsSync(path)) {
    try {
      writeFileSync(lock, String(process.pid), { flag: 'wx' });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      if (lockHolderGone(lock)) rmSync(lock, { force: true });
      await delay(50);
      continue;
    }
    try {
      if (existsSync(path)) return;
      const fresh = await build();
      const dump = await dumpEmbedded(fresh);
      await fresh.close();
      const partial = `${path}.${process.pid}.partial`;
      writeFileSync(partial, Buffer.from(await dump.arrayBuffer()));
      renameSync(partial, path);
      // Templates of earlier migrations or PGlite versions are 40 MB each and never read again
      // (nor those named `pglite-<key>.tar`, as migrated ones were before the empty one came).
      const earlier = new RegExp(`^(${kind}|pglite)-[0-9a-f]{16}\\.tar$`);
      for (const name of readdirSync(TEMPLATE_DIR)) {
        if (earlier.test(name) && join(TEMPLATE_DIR, name) !== path) rmSync(join(TEMPLATE_DIR, name), { force: true });
      }
    } finally {
      rmSync(lock, { force: true });
    }
  }
}
const dumps = new Map<string, { path: string; blob: Blob }>();

const pgliteVersion = () => (JSON.parse(readFileSync(PGLITE_PACKAGE, 'utf8')) as { version: string }).version;

/** The template every migrated test database is a copy of. */
function embeddedTemplate(): Promise<Blob> {
  const key = createHash('sha256').update(pgliteVersion());
  for (const name of readdirSync(MIGRATIONS_DIR).sort()) key.update(name).update(readFileSync(join(MIGRATIONS_DIR, name)));
  return embeddedDump('pglite-migrated', key.digest('hex'), async () => {
    // From the empty template, which most runs need as well: one initdb in a run instead of two.
    const fresh = await openEmptyEmbedded();
    await migrate(fresh.db);
    return fresh;
  });
}

/**
 * A new embedded database as initdb leaves it, with no migration applied, in memory or in
 * `dataDir` (a copy of a template: what is tested is then what runs on it, not initdb itself,
 * which test/server.test.ts's cold start still runs, into a data folder, as `npm start` does).
 */
export async function openEmptyEmbedded(options: Pick<OpenDatabaseOptions, 'dataDir'> = {}): Promise<DatabaseHandle> {
  const empty = await embeddedDump('pglite-empty', pgliteVersion(), () => openDatabase({}));
  return openDatabase({ ...options, initialData: empty });
}

/** An in-memory PGlite loaded from the migrated template (whether or not TEST_DATABASE_URL is set). */
export async function openEmbedded(options: Pick<OpenDatabaseOptions, 'preparedStatements' | 'onPreparedStatementsStopped'> = {}): Promise<DatabaseHandle> {
  const database = await openDatabase({ ...options, initialData: await embeddedTemplate(), onStatement: recordStatement });
  await migrate(database.db);
  return database;
}
/**
 * The process's shared PGlite, lent to each caller until it closes its handle. When the last
 * borrower has closed, it is really closed after a grace period unless another borrows it first:
 * the next file of a shard process borrows it at once, and a process running one file alone
 * (`node --import tsx --test <file>`) is not kept alive by an open database after its tests.
 */
let sharedEmbedded: Promise<DatabaseHandle> | undefined;
let borrowers = 0;
let closing: NodeJS.Timeout | undefined;
const SHARED_GRACE_MS = 1000;

async function borrowSharedEmbedded(): Promise<DatabaseHandle> {
  clearTimeout(closing);
  borrowers++;
  sharedEmbedded ??= openEmbedded();
  const shared = await sharedEmbedded;
  let returned = false;
  return {
    ...shared,
    close: async () => {
      if (returned) return;
      returned = true;
      if (--borrowers > 0) return;
      closing = setTimeout(() => {
        const closed = sharedEmbedded;
        sharedEmbedded = undefined;
        void closed?.then((database) => database.close());
      }, SHARED_GRACE_MS);
    },
  };
}

/**
 * With SLOTWISE_STATEMENT_LOG set (scripts/run-tests.mjs sets it for a whole-suite run), every
 * distinct statement this test process sends is written to that folder when it exits, for the
 * tenant-scope check (test/platform/tenant-statements.check.ts).
 */
const statementLog = process.env.SLOTWISE_STATEMENT_LOG;
const statements = new Set<string>();
if (statementLog) {
  process.once('exit', () => {
    if (statements.size === 0) return;
    mkdirSync(statementLog, { recursive: true });
    writeFileSync(join(statementLog, `${process.pid}.json`), JSON.stringify([...statements]));
  });
}
/**
 * Only the application's statements count: one whose call stack passes through a test file (a
 * fixture inserting rows, an assertion reading them) is the test's own. V8's async stack traces
 * carry the awaiting test function across Kysely's awaits; a request through `app.inject` starts
 * from the router, so the application's statements show no test frame.
 */
const TEST_FRAME = /\/test\/(?!helpers\/app\.ts)[^\s)]*\.ts/;
function recordApplicationStatement(text: string): void {
  if (statements.has(text)) return;
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 80;
  const stack = new Error('statement').stack ?? '';
  Error.stackTraceLimit = limit;
  if (!TEST_FRAME.test(sourceFrames(stack))) statements.add(text);
}

/**
 * When the suite runs from a build (scripts/run-tests.mjs), the stack names bundles and chunks, in
 * which test helpers and application code are mixed: each frame in the build is mapped back to its
 * TypeScript source through the bundle's source map (read once per bundle, only here).
 */
const BUILD_DIR = process.env.SLOTWISE_BUILD_DIR;
// Node names modules by their real paths: when node_modules (which holds the build) is a link, as
// in a clone sharing one, frames name the folder it points to.
const BUILD_DIR_REAL = BUILD_DIR && existsSync(BUILD_DIR) ? realpathSync(BUILD_DIR) : BUILD_DIR;
const sourceMaps = new Map<string, SourceMap | undefined>();
function sourceMapOf(file: string): SourceMap | undefined {
  if (!sourceMaps.has(file)) {
    const mapFile = `${file}.map`;
    sourceMaps.set(file, existsSync(mapFile) ? new SourceMap(JSON.parse(readFileSync(mapFile, 'utf8')) as SourceMapPayload) : undefined);
  }
  return sourceMaps.get(file);
}
function sourceFrames(stack: string): string {
  if (!BUILD_DIR) return stack;
  // ES module frames name percent-encoded file URLs (a checkout path may hold spaces or parentheses);
  // the suite's CommonJS bundle (scripts/test-shard.mjs) names plain paths.
  return stack.replace(/(file:\/\/\S+?\.js|\/\S+?\.cjs):(\d+):(\d+)/g, (frame, location: string, line: string, column: string) => {
    const file = location.startsWith('file:') ? fileURLToPath(location) : location;
    if (!file.startsWith(BUILD_DIR) && !file.startsWith(BUILD_DIR_REAL!)) return frame;
    const entry = sourceMapOf(file)?.findEntry(Number(line) - 1, Number(column) - 1);
    return entry && 'originalSource' in entry ? `${entry.originalSource}:${entry.originalLine + 1}` : frame;
  });
}
const recordStatement = statementLog ? recordApplicationStatement : undefined;

/**
 * The database for a test file: TEST_DATABASE_URL when set (CI's second pass: every file of the
 * suite shares that one database, at the same time), else an in-memory PGlite, one per test
 * process, shared by the files the process runs one after another (scripts/run-tests.mjs), as the
 * files share PostgreSQL. Tests isolate themselves by creating their own company. Opening a PGlite
 * from the template cost about a second of CPU per file (issue 18). `dedicated`: a database no
 * other file uses (a fresh PGlite; a database of its own on the server), for files whose work is
 * server-wide. Closing the shared PGlite is left to the process's end.
 */
export async function openTestDatabase(options: { dedicated?: boolean; lockTimeoutMs?: number } = {}): Promise<DatabaseHandle> {
  let databaseUrl = process.env.TEST_DATABASE_URL;
  if (!databaseUrl && !options.dedicated) return borrowSharedEmbedded();
  let drop: (() => Promise<void>) | undefined;
  if (databaseUrl && options.dedicated) ({ url: databaseUrl, drop } = await createDedicatedDatabase(databaseUrl));
  const database = databaseUrl ? await openDatabase({ databaseUrl, poolSize: 5, lockTimeoutMs: options.lockTimeoutMs ?? 0, onStatement: recordStatement }) : await openEmbedded();
  await migrate(database.db);
  if (!drop) return database;
  const dropDatabase = drop;
  return { ...database, close: async () => { await database.close(); await dropDatabase(); } };
}

/**
 * A database of its own on the test server, for files whose work is server-wide (the outbox
 * worker claims every company's events, so it must not see other files' bookings).
 */
export async function createDedicatedDatabase(serverUrl: string): Promise<{ url: string; drop: () => Promise<void> }> {
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  const name = `slotwise_test_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const client = new pg.Client({ connectionString: serverUrl });
      await client.connect();
      await client.query(`drop database if exists ${name} with (force)`);
      await client.end();
    },
  };
}

/** CI's second pass sets TEST_REDIS_URL: shared state then goes through a real Redis. */
export async function openTestRedis(): Promise<Redis | undefined> {
  const url = process.env.TEST_REDIS_URL;
  if (!url) return undefined;
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 2 });
  await redis.connect();
  return redis;
}

/**
 * Every test's requests come from 127.0.0.1, so the per-address budgets would be shared by all the
 * tenants of a file. They are wide by default here; the tests of those budgets set their own.
 */
export const WIDE_ADDRESS_BUDGETS: Record<string, string> = {
  RATE_LIMIT_SIGN_IN: '100000/1m',
  RATE_LIMIT_OAUTH_TOKEN_IP: '100000/1m',
  RATE_LIMIT_PUBLIC_READ_IP: '100000/1m',
  RATE_LIMIT_PUBLIC_WRITE_IP: '100000/1m',
  RATE_LIMIT_PUBLIC_HOLD_IP: '100000/1m',
  RATE_LIMIT_PUBLIC_BOOK_EMAIL: '100000/1m',
};

/** `sharedOwner`: every tenant of the file's world belongs to one user (see createWorld). */
export async function createTestContext(env: Record<string, string> = {}, options: { dedicatedDatabase?: boolean; sharedOwner?: boolean } = {}): Promise<TestContext> {
  // A Redis shared by every test file (CI's second pass) must not mix their counters: each
  // context counts under a prefix of its own unless the test chooses one.
  const config = loadConfig({
    NODE_ENV: 'test',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    RATE_LIMIT_KEY_PREFIX: `rl:test-${randomUUID()}:`,
    ...WIDE_ADDRESS_BUDGETS,
    ...env,
  });
  const database = await openTestDatabase({ dedicated: options.dedicatedDatabase ?? false });
  const redis = await openTestRedis();
  // Schemas compile on first use: a test file calls a few of the app's routes (platform/http/lazy-schemas.ts).
  const app = await buildApp({ config, database, secrets: TEST_SECRETS, redis, compileSchemasOnFirstUse: true });
  return {
    app,
    database,
    config,
    redis,
    world: createWorld(app, { sharedOwner: options.sharedOwner ?? false }),
    async close() {
      await app.close();
      await database.close();
      await redis?.quit();
    },
  };
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- response bodies are checked field by field
export function json<T = any>(response: LightMyRequestResponse): T {
  return JSON.parse(response.body) as T;
}

export { uniqueEmail } from './world.js';

export async function createClientCredentials(app: App, tenant: Tenant) {
  const response = await app.inject({ method: 'POST', url: '/v3/clientId', headers: tenant.dashboard, payload: {} });
  if (response.statusCode !== 201) throw new Error(`client id creation failed: ${response.body}`);
  const body = json(response);
  return { id: body.id as string, clientId: body.clientId as string, clientSecret: body.clientSecret as string };
}

export async function machineToken(app: App, tenant: Tenant, scope?: string): Promise<string> {
  const { clientId, clientSecret } = await createClientCredentials(app, tenant);
  const form = new URLSearchParams({ grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret });
  if (scope !== undefined) form.set('scope', scope);
  const response = await app.inject({
    method: 'POST',
    url: '/v3/oauth/token',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: form.toString(),
  });
  if (response.statusCode !== 200) throw new Error(`token request failed: ${response.body}`);
  return json(response).access_token as string;
}

/** Adds a user to a company with a role, through the database (the users routes come later). */
export async function addMember(context: TestContext, tenant: Tenant, role: 'Owner' | 'Admin' | 'User' | 'Resource') {
  const user = await context.world.user(role.toLowerCase());
  await context.database.db.insertInto('companyUsers').values({ companyId: tenant.companyId, userId: user.userId, role }).execute();
  return { ...user, headers: { authorization: `Bearer ${user.userToken}`, 'x-api-key': tenant.apiKey } };
}
