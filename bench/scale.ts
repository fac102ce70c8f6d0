/**
 * npm run bench:scale            (BENCH_QUICK=1 npm run bench:scale: a short run, to check it works)
 *
 * Past one machine (issue 18): three instances of the real service (dist/server.js built as `npm start` does, NODE_ENV=production)
 * behind HAProxy, on one PostgreSQL reached through PgBouncer in transaction pooling mode, and one
 * Redis. It proves that the booking scheme (transaction-scoped advisory locks, repository.ts) holds
 * when the three instances' transactions share a few server connections, and measures what the
 * whole stack does. Everything runs on this machine:
 *   - PgBouncer (Debian's `pgbouncer`) in front of a throwaway database (throwaway-postgres.ts),
 *     pool_mode = transaction, DEFAULT_POOL_SIZE server connections; the statement and lock
 *     timeouts are set by its connect_query, because PgBouncer does not pass node-postgres' startup
 *     parameters on (it ignores them, as told by ignore_startup_parameters);
 *   - three server processes, each with a pool of INSTANCE_POOL_SIZE connections to PgBouncer
 *     (more client connections than PgBouncer has server connections), migrating at the same time
 *     through PgBouncer when they start;
 *   - HAProxy (Debian's `haproxy`), `mode http`, roundrobin over the three, health check /readyz.
 * Through HAProxy, with fetch (undici, keep-alive) from this process:
 *   - direct bookings (POST /v3/appointment) on distinct free slots, 16 and 64 clients;
 *   - contended: 64 clients aiming at four slots of one resource at a time, first with capacity 1,
 *     then on a service with bookingsPerSlot 3;
 *   - hold then book (POST /v3/appointment/hold + PUT /v3/appointment/:id/book), 16 clients;
 *   - 7-day availability searches (GET /v3/availability) with the cache off, 16 clients.
 * Which instance answered is read from each instance's own /metrics (request counters before and
 * after each phase). Afterwards it checks in SQL that no slot holds more live appointments than its
 * capacity, that every 201 is in the database exactly once and nothing else is, and prints what
 * PgBouncer's admin console says (SHOW POOLS sampled during the run, SHOW STATS at the end). Any
 * violation, 5xx or transport error makes the exit code 1.
 *
 * PostgreSQL: BENCH_DATABASE_URL, else DATABASE_URL, else postgres://postgres@127.0.0.1:5432/test.
 * Redis: BENCH_REDIS_URL, else REDIS_URL, else redis://127.0.0.1:6379, used when it answers PING.
 * Every child process runs in a process group of its own and is ended with its group, the temp
 * folder removed and the database dropped, whatever happens (Ctrl-C included).
 */
import { spawn, execFileSync } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { accessSync, chownSync, constants, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { randomBytes, randomUUID } from 'node:crypto';
import { availableParallelism, cpus, loadavg, tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { DateTime } from 'luxon';
import { sql } from 'kysely';
import pg from 'pg';
import { httpClient, percentile, runClients, seedTenant } from './booking.js';
import type { Answer, Tenant } from './booking.js';
import { reachableRedis } from './reachable-redis.js';
import { SERVER_ENVIRONMENT, SERVER_NODE_FLAGS, buildService } from '../scripts/build.mjs';
import { withThrowawayPostgres } from './throwaway-postgres.js';
import type { ThrowawayPostgres } from './throwaway-postgres.js';
import { freePort } from '../test/helpers/ports.js';
import { SECRET_NAMES, loadConfig } from '../src/platform/config.js';
import { openDatabase } from '../src/platform/database/index.js';
import type { Db } from '../src/platform/database/index.js';
import { createTokenService } from '../src/platform/auth/tokens.js';
import type { Secrets } from '../src/platform/secrets.js';

const QUICK = ['1', 'true', 'yes'].includes((process.env.BENCH_QUICK ?? '').toLowerCase());
/** The service as `npm start` runs it: built by scripts/build.mjs into dist/, run by plain node. */
const SERVER = await buildService();
const ROOT = fileURLToPath(new URL('..', import.meta.url));

const INSTANCES = 3;
/** Each instance's pool of connections to PgBouncer: 3 × 10 client connections... */
const INSTANCE_POOL_SIZE = 10;
/** ...over at most this many PostgreSQL connections (PgBouncer's default_pool_size). */
const DEFAULT_POOL_SIZE = 20;

/** The tenants of bench/booking.ts seedTenant: 20 resources, one 60-minute service on the hour, 08:00-18:00 every day. */
const ZONE = 'America/New_York';
const RESOURCES = 20;
const OPEN_HOUR = 8;
const HOURS = 10;
/** Contended phases: each run of CONTENDED_CLIENTS attempts in flight together aims at this many slots of one resource. */
const CONTENDED_SLOTS = 4;
const CONTENDED_CLIENTS = 64;
/** The second contended phase's service takes this many bookings at the same instant. */
const SHARED_CAPACITY = 3;

const COUNTS = QUICK
  ? { warmup: 48, direct16: 160, direct64: 256, contended: 256, shared: 256, holdBook: 96, availability: 96 }
  : { warmup: 96, direct16: 2_000, direct64: 2_000, contended: 1_024, shared: 1_024, holdBook: 500, availability: 1_000 };

/** Budgets far above the load, so the limiter (and Redis) is in the path but never refuses (as bench/load.ts does). */
const GENEROUS_LIMITS: Record<string, string> = Object.fromEntries(
  ['AVAILABILITY', 'API_WRITE', 'API_READ', 'APPOINTMENT_LIST', 'APPOINTMENT_CURSOR'].map((family) => [`RATE_LIMIT_${family}`, '1000000/1m']),
);

const fmt = (ms: number) => (Number.isNaN(ms) ? '-' : `${ms.toFixed(ms < 10 ? 2 : 1)} ms`);
const num = (ms: number) => (Number.isNaN(ms) ? '-' : ms.toFixed(ms < 10 ? 1 : 0));
const p50p99 = (values: number[]) => `p50 ${fmt(percentile(values, 50))}, p99 ${fmt(percentile(values, 99))}`;
const pair = (values: number[]) => `${num(percentile(values, 50))} / ${num(percentile(values, 99))}`;

/** Violations and unexpected answers: printed at the end, and the exit code is 1. */
const problems: string[] = [];
const problem = (text: string) => {
  if (problems.length < 40) problems.push(text);
};

// --- Child processes, and tearing everything down -----------------------------------------------

interface Child {
  label: string;
  child: ChildProcess;
  /** The last 200 KB of its stdout and stderr, for a diagnosis. */
  output: () => string;
  exit: Promise<number | null>;
}

const children = new Set<Child>();
const tempFolders = new Set<string>();

/** Starts a program in a process group of its own, so ending the group ends everything it started. */
function launch(label: string, command: string, args: string[], env: NodeJS.ProcessEnv = process.env): Child {
  const child = spawn(command, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let output = '';
  const keep = (chunk: Buffer) => {
    output += String(chunk);
    if (output.length > 400_000) output = output.slice(-200_000);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const exit = new Promise<number | null>((resolve) => {
    child.once('exit', (code) => resolve(code));
    child.once('error', (error) => {
      output += `\n${error.message}`;
      resolve(-1);
    });
  });
  const running = { label, child, output: () => output, exit };
  children.add(running);
  void exit.then(() => children.delete(running));
  return running;
}

function signalGroup(running: Child, signal: NodeJS.Signals) {
  try {
    if (running.child.pid) process.kill(-running.child.pid, signal);
  } catch {
    // already gone
  }
}

/** SIGTERM to the group, then SIGKILL if it is still there after `graceMs`. Answers the exit code. */
async function stopChild(running: Child, graceMs = 15_000): Promise<number | null | 'killed'> {
  if (running.child.exitCode !== null || running.child.signalCode !== null) return running.child.exitCode;
  signalGroup(running, 'SIGTERM');
  const code = await Promise.race([running.exit, sleep(graceMs).then(() => 'timeout' as const)]);
  if (code !== 'timeout') return code;
  signalGroup(running, 'SIGKILL');
  await running.exit;
  return 'killed';
}

/** Last resort on exit (synchronous): every group still running is killed, every temp folder removed. */
function killEverything() {
  for (const running of children) signalGroup(running, 'SIGKILL');
  for (const folder of tempFolders) rmSync(folder, { recursive: true, force: true });
}
process.once('exit', killEverything);

/** Rejects on Ctrl-C (or SIGTERM), so the run stops where it is and the teardown runs; a second signal exits at once. */
let interrupt: (error: Error) => void = () => {};
const interruption = new Promise<never>((_, reject) => (interrupt = reject));
interruption.catch(() => {});
let interrupted = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (interrupted) process.exit(130);
    interrupted = true;
    console.log(`\n${signal}: stopping, tearing everything down`);
    interrupt(new Error(`interrupted by ${signal}`));
  });
}

// --- The programs: where they are, their configuration ------------------------------------------

/** The program's path: /usr/sbin (where Debian puts both), /usr/local/sbin, or on PATH. */
function findProgram(name: string): string | undefined {
  const folders = ['/usr/sbin', '/usr/local/sbin', ...(process.env.PATH ?? '').split(delimiter).filter(Boolean)];
  for (const folder of folders) {
    const path = join(folder, name);
    try {
      accessSync(path, constants.X_OK);
      return path;
    } catch {
      // not here
    }
  }
  return undefined;
}

/**
 * PgBouncer refuses to run as root: then it is started with `-u` as another user (BENCH_PGBOUNCER_USER,
 * else postgres, else nobody), who must be able to read its folder. Answers that user's ids, or null.
 */
function pgbouncerUser(): { name: string; uid: number; gid: number } | null {
  if (process.getuid?.() !== 0) return null;
  for (const name of [process.env.BENCH_PGBOUNCER_USER, 'postgres', 'nobody']) {
    if (!name) continue;
    try {
      const uid = Number(execFileSync('id', ['-u', name], { encoding: 'utf8' }).trim());
      const gid = Number(execFileSync('id', ['-g', name], { encoding: 'utf8' }).trim());
      return { name, uid, gid };
    } catch {
      // no such user
    }
  }
  throw new Error('running as root, and no user to run PgBouncer as (set BENCH_PGBOUNCER_USER)');
}

interface PgBouncer {
  running: Child;
  /** The throwaway database through PgBouncer. */
  url: string;
  /** PgBouncer's admin console (SHOW POOLS, SHOW STATS). */
  adminUrl: string;
}

/**
 * pgbouncer.ini and its userlist in `folder`, then PgBouncer in the foreground. Clients are trusted
 * (it listens on 127.0.0.1 only, for this run); its own login to PostgreSQL uses the URL's user and
 * password. The timeouts node-postgres would send as startup parameters are set by connect_query on
 * every server connection instead.
 */
async function startPgBouncer(program: string, folder: string, databaseUrl: string, timeouts: { statementMs: number; lockMs: number }): Promise<PgBouncer> {
  const target = new URL(databaseUrl);
  const user = decodeURIComponent(target.username || 'postgres');
  const password = decodeURIComponent(target.password);
  const name = target.pathname.slice(1);
  const port = await freePort();
  const connectQuery = `SET statement_timeout = ${timeouts.statementMs}; SET lock_timeout = ${timeouts.lockMs}`;
  const ini = [
    '[databases]',
    `${name} = host=${target.hostname} port=${target.port || 5432} dbname=${name} user=${user}${password ? ` password=${password}` : ''} connect_query='${connectQuery}'`,
    '',
    '[pgbouncer]',
    'listen_addr = 127.0.0.1',
    `listen_port = ${port}`,
    'unix_socket_dir =',
    'auth_type = trust',
    `auth_file = ${join(folder, 'userlist.txt')}`,
    `admin_users = ${user}`,
    'pool_mode = transaction',
    `default_pool_size = ${DEFAULT_POOL_SIZE}`,
    'max_client_conn = 500',
    // node-postgres sends these when the pool has timeouts (src/platform/database/index.ts);
    // PgBouncer refuses unknown startup parameters unless told to ignore them, and then they are
    // not applied: connect_query above sets them on the server side.
    'ignore_startup_parameters = statement_timeout,lock_timeout,extra_float_digits',
    'logfile =',
    'pidfile =',
    'log_connections = 0',
    'log_disconnections = 0',
    '',
  ].join('\n');
  writeFileSync(join(folder, 'pgbouncer.ini'), ini, { mode: 0o600 });
  writeFileSync(join(folder, 'userlist.txt'), `"${user}" "${password}"\n`, { mode: 0o600 });
  const runAs = pgbouncerUser();
  if (runAs) for (const file of ['', 'pgbouncer.ini', 'userlist.txt']) chownSync(join(folder, file), runAs.uid, runAs.gid);
  const running = launch('pgbouncer', program, [...(runAs ? ['-u', runAs.name] : []), join(folder, 'pgbouncer.ini')]);

  const local = (database: string) => `postgres://${encodeURIComponent(user)}@127.0.0.1:${port}/${database}`;
  const adminUrl = local('pgbouncer');
  for (let i = 0; i < 100; i++) {
    const client = new pg.Client({ connectionString: adminUrl });
    client.on('error', () => {});
    try {
      await client.connect();
      await client.end();
      return { running, url: local(name), adminUrl };
    } catch {
      if (running.child.exitCode !== null) break;
      await sleep(100);
    }
  }
  throw new Error(`PgBouncer did not start:\n${running.output()}`);
}

interface Instance {
  running: Child;
  base: string;
}

async function startInstance(index: number, env: Record<string, string>): Promise<Instance> {
  const port = await freePort();
  const running = launch(`instance ${index}`, process.execPath, [...SERVER_NODE_FLAGS, SERVER], { ...SERVER_ENVIRONMENT, ...process.env, ...env, HOST: '127.0.0.1', PORT: String(port) });
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 480; i++) {
    try {
      if ((await fetch(`${base}/readyz`)).status === 200) return { running, base };
    } catch {
      // not listening yet
    }
    if (running.child.exitCode !== null) break;
    await sleep(250);
  }
  throw new Error(`instance ${index} did not become ready:\n${running.output()}`);
}

interface HaProxy {
  running: Child;
  base: string;
}

/** HAProxy in the foreground (-db): roundrobin per request over the instances, each checked on /readyz every second. */
async function startHaProxy(program: string, folder: string, instances: Instance[]): Promise<HaProxy> {
  const port = await freePort();
  const statsPort = await freePort();
  const config = [
    'global',
    '  maxconn 2000',
    'defaults',
    '  mode http',
    '  option http-keep-alive',
    '  option forwardfor',
    '  timeout connect 5s',
    '  timeout client 60s',
    '  timeout server 60s',
    'frontend api',
    `  bind 127.0.0.1:${port}`,
    '  default_backend slotwise',
    'backend slotwise',
    '  balance roundrobin',
    '  option httpchk',
    '  http-check send meth GET uri /readyz',
    '  http-check expect status 200',
    '  default-server check inter 1s fall 2 rise 1',
    ...instances.map((instance, i) => `  server instance${i + 1} ${new URL(instance.base).host}`),
    'listen stats',
    `  bind 127.0.0.1:${statsPort}`,
    '  stats enable',
    '  stats uri /stats',
    '',
  ].join('\n');
  const file = join(folder, 'haproxy.cfg');
  writeFileSync(file, config, { mode: 0o600 });
  const running = launch('haproxy', program, ['-db', '-f', file]);
  // Ready when its own statistics show every instance UP.
  for (let i = 0; i < 100; i++) {
    try {
      const csv = await (await fetch(`http://127.0.0.1:${statsPort}/stats;csv`)).text();
      const up = csv.split('\n').filter((line) => line.startsWith('slotwise,instance') && line.split(',')[17] === 'UP').length;
      if (up === instances.length) return { running, base: `http://127.0.0.1:${port}` };
    } catch {
      // not listening yet
    }
    if (running.child.exitCode !== null) break;
    await sleep(200);
  }
  throw new Error(`HAProxy did not see every instance up:\n${running.output()}`);
}

// --- Watching: which instance answered, and PgBouncer's pools -----------------------------------

/** API requests (routes under /v3) each instance has answered so far, from its own /metrics. */
async function answeredByInstance(instances: Instance[]): Promise<number[]> {
  return Promise.all(
    instances.map(async (instance) => {
      const text = await (await fetch(`${instance.base}/metrics`)).text();
      let total = 0;
      for (const line of text.split('\n')) {
        if (line.startsWith('slotwise_http_requests_total{') && line.includes('route="/v3/')) total += Number(line.slice(line.lastIndexOf(' ') + 1));
      }
      return total;
    }),
  );
}

interface PoolPeaks {
  /** Client connections of the instances to PgBouncer (cl_active + cl_waiting). */
  clients: number;
  /** Of them, waiting for a server connection. */
  waiting: number;
  /** PgBouncer's connections to PostgreSQL (active, idle, used, tested, logging in). */
  servers: number;
  /** Sessions on the bench database as PostgreSQL itself sees them. */
  backends: number;
}

/**
 * Samples PgBouncer's SHOW POOLS (for the bench database) and PostgreSQL's pg_stat_activity every
 * 50 ms while a phase runs; `take()` answers the peaks since the last call.
 */
function poolWatcher(pgbouncer: pg.Client, admin: pg.Client, databaseName: string) {
  const zero = (): PoolPeaks => ({ clients: 0, waiting: 0, servers: 0, backends: 0 });
  let phase = zero();
  const whole = zero();
  let stopped = false;
  const raise = (peaks: PoolPeaks, sample: PoolPeaks) => {
    for (const key of Object.keys(peaks) as Array<keyof PoolPeaks>) peaks[key] = Math.max(peaks[key], sample[key]);
  };
  const loop = (async () => {
    while (!stopped) {
      try {
        const pools = await pgbouncer.query<Record<string, string>>('SHOW POOLS');
        const row = pools.rows.find((r) => r.database === databaseName);
        const backends = await admin.query<{ n: number }>('select count(*)::int as n from pg_stat_activity where datname = $1', [databaseName]);
        if (row) {
          const n = (key: string) => Number(row[key] ?? 0);
          const sample = {
            clients: n('cl_active') + n('cl_waiting'),
            waiting: n('cl_waiting'),
            servers: n('sv_active') + n('sv_idle') + n('sv_used') + n('sv_tested') + n('sv_login'),
            backends: backends.rows[0]?.n ?? 0,
          };
          raise(phase, sample);
          raise(whole, sample);
        }
      } catch {
        // PgBouncer going away at the end: the peaks so far stand
      }
      await sleep(50);
    }
  })();
  return {
    take(): PoolPeaks {
      const peaks = phase;
      phase = zero();
      return peaks;
    },
    whole,
    async stop() {
      stopped = true;
      await loop;
    },
  };
}

// --- Slots ---------------------------------------------------------------------------------------

interface Slot {
  resourceId: string;
  start: DateTime;
  end: DateTime;
}

/** Hands out whole days from tomorrow on, so no two phases touch the same slot. */
class Calendar {
  private nextDay = 1;
  private readonly base = DateTime.now().setZone(ZONE).startOf('day');

  private slot(resourceIds: string[], resource: number, day: number, hour: number): Slot {
    const start = this.base.plus({ days: day }).set({ hour });
    return { resourceId: resourceIds[resource]!, start, end: start.plus({ hours: 1 }) };
  }

  /** `count` distinct free slots; slot k is on resource k mod 20, so requests in flight together rarely share a lock. */
  distinct(resourceIds: string[], count: number): (k: number) => Slot {
    const first = this.nextDay;
    this.nextDay += Math.ceil(count / (RESOURCES * HOURS));
    return (k) => {
      const index = Math.floor(k / RESOURCES);
      return this.slot(resourceIds, k % RESOURCES, first + Math.floor(index / HOURS), OPEN_HOUR + (index % HOURS));
    };
  }

  /**
   * Attempt k aims at slot (k mod 4) of group floor(k / 64): the 64 attempts in flight together
   * share four slots of one resource, sixteen attempts per slot.
   */
  contended(resourceIds: string[], attempts: number): (k: number) => Slot {
    const groups = Math.ceil(attempts / CONTENDED_CLIENTS);
    const blocksPerDay = Math.floor(HOURS / CONTENDED_SLOTS);
    const first = this.nextDay;
    this.nextDay += Math.ceil(groups / (RESOURCES * blocksPerDay));
    return (k) => {
      const group = Math.floor(k / CONTENDED_CLIENTS);
      const block = Math.floor(group / RESOURCES);
      const hour = OPEN_HOUR + (block % blocksPerDay) * CONTENDED_SLOTS + (k % CONTENDED_SLOTS);
      return this.slot(resourceIds, group % RESOURCES, first + Math.floor(block / blocksPerDay), hour);
    };
  }
}

const slotKey = (slot: Slot) => `${slot.resourceId} ${slot.start.toUTC().toISO()}`;

function bookingBody(slot: Slot, customerId: string) {
  return { Unavailability: { startTime: slot.start.toISO()!, endTime: slot.end.toISO()! }, ResourceIds: [slot.resourceId], CustomerId: customerId };
}

// --- The run -------------------------------------------------------------------------------------

interface PhaseFigures {
  label: string;
  count: number;
  clients: number;
  perSecond: number;
  /** Latencies of the answers that count (201s, 200s). */
  times: number[];
  statuses: Map<string, number>;
  byInstance: number[];
  pools: PoolPeaks;
  note: string;
}

/** Appointment ids the clients were given (201), and the status each should have now. */
const created = new Map<string, 'BK' | 'IN'>();
let duplicate201s = 0;
function record(id: string | undefined, status: 'BK' | 'IN') {
  if (!id) return;
  if (created.has(id) && status === 'BK' && created.get(id) === 'IN') created.set(id, 'BK');
  else if (created.has(id)) duplicate201s++;
  else created.set(id, status);
}

/** The code of a refusal ("400 BOOKING-105"), or the status alone. */
function outcome(answer: Answer): string {
  const code = (answer.json as { code?: string } | null)?.code;
  return answer.status >= 300 && code ? `${answer.status} ${code}` : String(answer.status);
}

async function scenario(database: ThrowawayPostgres, programs: { haproxy: string; pgbouncer: string }): Promise<PhaseFigures[]> {
  const folder = mkdtempSync(join(tmpdir(), 'slotwise-scale-'));
  tempFolders.add(folder);

  // The instances' environment: production, every secret given (so tokens minted here are valid on
  // all three), the limiter on with budgets it never reaches, the availability cache off.
  const secrets = Object.fromEntries(SECRET_NAMES.map((name) => [name, randomBytes(32).toString('hex')])) as Secrets;
  const redisUrl = process.env.BENCH_REDIS_URL || process.env.REDIS_URL || 'redis://127.0.0.1:6379';
  const redis = (await reachableRedis(redisUrl)) ? redisUrl : undefined;
  const instanceEnv: Record<string, string> = {
    NODE_ENV: 'production',
    ...secrets,
    DATABASE_POOL_SIZE: String(INSTANCE_POOL_SIZE),
    // Debian's PgBouncer (1.18) in transaction mode cannot keep named prepared statements: the
    // next transaction may run on another server connection (docs/scaling.md).
    DATABASE_PREPARED_STATEMENTS: 'false',
    LOG_LEVEL: 'warn',
    TRUST_PROXY: '1',
    RATE_LIMITS_ENABLED: 'true',
    RATE_LIMIT_KEY_PREFIX: `bench-scale:${randomBytes(4).toString('hex')}:`,
    ...GENEROUS_LIMITS,
    AVAILABILITY_CACHE: 'false',
    ...(redis ? { REDIS_URL: redis } : { REDIS_URL: '' }),
  };
  const config = loadConfig({ ...instanceEnv, DATABASE_URL: database.url });

  const pgbouncer = await startPgBouncer(programs.pgbouncer, folder, database.url, { statementMs: config.databaseStatementTimeoutMs, lockMs: config.databaseLockTimeoutMs });
  console.log(
    `PgBouncer on ${new URL(pgbouncer.url).host}: pool_mode transaction, default_pool_size ${DEFAULT_POOL_SIZE}, ` +
      `connect_query sets statement_timeout ${config.databaseStatementTimeoutMs} ms and lock_timeout ${config.databaseLockTimeoutMs} ms.`,
  );

  // The three start together, so their migrations meet at PgBouncer (one transaction each, under
  // a transaction-scoped advisory lock: migrate.ts).
  const startedAt = performance.now();
  const instances = await Promise.all(Array.from({ length: INSTANCES }, (_, i) => startInstance(i + 1, { ...instanceEnv, DATABASE_URL: pgbouncer.url })));
  console.log(
    `${INSTANCES} instances (NODE_ENV=production, pool of ${INSTANCE_POOL_SIZE} each to PgBouncer, outbox worker on, availability cache off, ` +
      `${redis ? `Redis at ${new URL(redis).host}` : 'no Redis'}) migrated and ready in ${((performance.now() - startedAt) / 1000).toFixed(1)} s: ` +
      instances.map((instance) => new URL(instance.base).host).join(', '),
  );
  const haproxy = await startHaProxy(programs.haproxy, folder, instances);
  console.log(`HAProxy on ${new URL(haproxy.base).host}: mode http, roundrobin, health check GET /readyz every second; every instance UP.`);

  // Seeding straight into the database (not through PgBouncer), closed before the load so that
  // PostgreSQL's session count is PgBouncer's alone.
  const c = COUNTS;
  const seeding = await openDatabase({ databaseUrl: database.url, poolSize: 2 });
  let tenant: Tenant;
  let shared: Tenant;
  let token: string;
  let sharedToken: string;
  try {
    tenant = await seedTenant(seeding.db, c.warmup + c.direct16 + c.direct64 + c.contended + c.holdBook);
    shared = await seedTenant(seeding.db, c.shared);
    await seeding.db.updateTable('services').set({ bookingsPerSlot: SHARED_CAPACITY }).where('companyId', '=', shared.companyId).where('id', '=', shared.serviceId).execute();
    const tokens = createTokenService(secrets, config);
    /** A machine token with read and write scope, minted directly (as bench/booking.ts does): the bench measures booking, not sign-in. */
    const tokenFor = async (db: Db, companyId: string) => {
      const clientId = `bench-${randomUUID()}`;
      await db.insertInto('clientCredentials').values({ companyId, id: randomUUID(), clientId, secretHash: 'x', name: 'bench', createdByUserId: null }).execute();
      return tokens.signMachineToken({ companyId, clientId, scopes: ['read', 'write'] });
    };
    token = await tokenFor(seeding.db, tenant.companyId);
    sharedToken = await tokenFor(seeding.db, shared.companyId);
  } finally {
    await seeding.close();
  }
  console.log(`Seeded 2 companies straight into the database: 1 location, 1 service, ${RESOURCES} resources each (the second service takes ${SHARED_CAPACITY} bookings per slot), a distinct customer per booking.`);

  const http = httpClient(haproxy.base, token);
  const sharedHttp = httpClient(haproxy.base, sharedToken);
  const pathOf = (t: Tenant, route: string) => `${route}?LocationId=${t.locationId}&ServiceId=${t.serviceId}`;
  const calendar = new Calendar();
  const customers = new Map<string, number>();
  const nextCustomer = (t: Tenant) => {
    const k = customers.get(t.companyId) ?? 0;
    customers.set(t.companyId, k + 1);
    return t.customerIds[k]!;
  };

  const pgbouncerAdmin = new pg.Client({ connectionString: pgbouncer.adminUrl });
  pgbouncerAdmin.on('error', () => {});
  await pgbouncerAdmin.connect();
  const pools = poolWatcher(pgbouncerAdmin, database.admin, database.name);
  const phases: PhaseFigures[] = [];

  /**
   * `count` jobs on `clients` clients; each job answers its latency and outcome ("201",
   * "400 BOOKING-105", ...; a transport failure is "error"). Answers the phase's figures.
   */
  const phase = async (label: string, count: number, clients: number, good: string, job: (k: number) => Promise<{ ms: number; outcome: string }>, note = '') => {
    const before = await answeredByInstance(instances);
    pools.take();
    const times: number[] = [];
    const statuses = new Map<string, number>();
    const { wall } = await runClients(count, clients, async (k) => {
      let result: { ms: number; outcome: string };
      try {
        result = await job(k);
      } catch (error) {
        result = { ms: NaN, outcome: 'error' };
        problem(`${label}: ${(error as Error).message}`);
      }
      statuses.set(result.outcome, (statuses.get(result.outcome) ?? 0) + 1);
      if (result.outcome === good) times.push(result.ms);
    });
    const after = await answeredByInstance(instances);
    const figures: PhaseFigures = { label, count, clients, perSecond: (count / wall) * 1000, times, statuses, byInstance: after.map((n, i) => n - before[i]!), pools: pools.take(), note };
    phases.push(figures);
    const counted = [...statuses].map(([status, n]) => `${status}: ${n}`).join(', ');
    console.log(
      `  ${label}, ${clients} clients: ${figures.perSecond.toFixed(0)}/s, ${p50p99(times)}  (${counted}; instances answered ${figures.byInstance.join(' / ')}; ` +
        `PgBouncer peak ${figures.pools.clients} client / ${figures.pools.servers} server connections, ${figures.pools.waiting} waiting${note ? `; ${note}` : ''})`,
    );
    for (const [status, n] of statuses) if (status === 'error' || status.startsWith('5')) problem(`${label}: ${n} answers ${status}`);
    return figures;
  };

  /** A direct booking; every answer must be a 201. */
  const book = (label: string, slotOf: (k: number) => Slot) => async (k: number) => {
    const body = bookingBody(slotOf(k), nextCustomer(tenant));
    const answer = await http('POST', pathOf(tenant, '/v3/appointment'), body);
    if (answer.status === 201) record((answer.json as { id?: string }).id, 'BK');
    else problem(`${label}: POST /v3/appointment ${JSON.stringify(body)} -> ${answer.status} ${answer.text.slice(0, 300)}`);
    return { ms: answer.ms, outcome: outcome(answer) };
  };

  /**
   * Many clients on a few slots: at most `capacity` may win each slot. A refusal is 400
   * BOOKING-105 (full) or 409 BOOKING-137 (the lock wait ran past lock_timeout); a slot left
   * with room while no attempt on it was a 409 would be a wrong refusal.
   */
  const contended = async (label: string, t: Tenant, client: typeof http, count: number, capacity: number) => {
    const slotOf = calendar.contended(t.resourceIds, count);
    const winners = new Map<string, number>();
    const busy = new Set<string>();
    const figures = await phase(label, count, CONTENDED_CLIENTS, '201', async (k) => {
      const slot = slotOf(k);
      const body = bookingBody(slot, nextCustomer(t));
      const answer = await client('POST', pathOf(t, '/v3/appointment'), body);
      const result = outcome(answer);
      const key = slotKey(slot);
      winners.set(key, winners.get(key) ?? 0);
      if (answer.status === 201) {
        record((answer.json as { id?: string }).id, 'BK');
        winners.set(key, winners.get(key)! + 1);
      } else if (result === '409 BOOKING-137') busy.add(key);
      else if (result !== '400 BOOKING-105') problem(`${label}: POST /v3/appointment ${JSON.stringify(body)} -> ${answer.status} ${answer.text.slice(0, 300)}`);
      return { ms: answer.ms, outcome: result };
    });
    let over = 0;
    let under = 0;
    let wronglyRefused = 0;
    for (const [key, n] of winners) {
      if (n > capacity) over++;
      else if (n < capacity) {
        under++;
        if (!busy.has(key)) wronglyRefused++;
      }
    }
    if (over > 0) problem(`${label}: ${over} slots got more than ${capacity} 201s`);
    if (wronglyRefused > 0) problem(`${label}: ${wronglyRefused} slots were left with room although every refusal said full (400 BOOKING-105)`);
    figures.note = `${winners.size} slots of capacity ${capacity}: ${winners.size - under} filled exactly, ${under} with room left (a 409 BOOKING-137 on each: ${under - wronglyRefused}), ${over} over capacity`;
    console.log(`    ${figures.note}`);
  };

  try {
    console.log(`\nThrough HAProxy (${QUICK ? 'BENCH_QUICK: small counts' : 'full run'}):`);
    await phase('warm-up (direct bookings)', c.warmup, 16, '201', book('warm-up', calendar.distinct(tenant.resourceIds, c.warmup)));
    await phase('direct bookings', c.direct16, 16, '201', book('direct, 16 clients', calendar.distinct(tenant.resourceIds, c.direct16)));
    await phase('direct bookings', c.direct64, 64, '201', book('direct, 64 clients', calendar.distinct(tenant.resourceIds, c.direct64)));
    await contended('contended, capacity 1', tenant, http, c.contended, 1);
    await contended(`contended, capacity ${SHARED_CAPACITY}`, shared, sharedHttp, c.shared, SHARED_CAPACITY);

    // Hold then book: two requests per booking, which may well reach two different instances.
    const holdSlot = calendar.distinct(tenant.resourceIds, c.holdBook);
    await phase('hold + book', c.holdBook, 16, '200 BK', async (k) => {
      const body = bookingBody(holdSlot(k), nextCustomer(tenant));
      const held = await http('POST', pathOf(tenant, '/v3/appointment/hold'), body);
      const id = (held.json as { id?: string } | null)?.id;
      if (held.status !== 201 || !id) {
        problem(`hold: POST /v3/appointment/hold ${JSON.stringify(body)} -> ${held.status} ${held.text.slice(0, 300)}`);
        return { ms: held.ms, outcome: `hold ${outcome(held)}` };
      }
      record(id, 'IN');
      const booked = await http('PUT', `/v3/appointment/${id}/book`, {});
      const status = (booked.json as { status?: string } | null)?.status;
      if (booked.status === 200 && status === 'BK') record(id, 'BK');
      else problem(`book: PUT /v3/appointment/${id}/book -> ${booked.status} ${booked.text.slice(0, 300)}`);
      return { ms: held.ms + booked.ms, outcome: booked.status === 200 ? `200 ${status}` : `book ${outcome(booked)}` };
    }, 'latency is hold and book together');

    // 7-day searches starting 1 to 21 days ahead, in turn, computed every time (cache off).
    const today = DateTime.now().setZone(ZONE).startOf('day');
    await phase('availability, 7 days, cache off', c.availability, 16, '200', async (k) => {
      const start = today.plus({ days: 1 + (k % 21) });
      const path = `${pathOf(tenant, '/v3/availability')}&startDate=${start.toISODate()}&endDate=${start.plus({ days: 6 }).toISODate()}`;
      const answer = await http('GET', path);
      if (answer.status !== 200) problem(`availability: GET ${path} -> ${answer.status} ${answer.text.slice(0, 300)}`);
      return { ms: answer.ms, outcome: outcome(answer) };
    });

    const spread = phases.reduce((sums, p) => sums.map((n, i) => n + p.byInstance[i]!), instances.map(() => 0));
    console.log(`\nAPI requests answered by each instance over the run (their /metrics): ${spread.join(' / ')}`);
    if (spread.some((n) => n === 0)) problem(`the load did not reach every instance: ${spread.join(' / ')}`);

    await pools.stop();
    await pgbouncerReport(pgbouncerAdmin, database.name, pools.whole);
    await checks(database.url, [tenant.companyId, shared.companyId]);
  } finally {
    await pools.stop();
    await pgbouncerAdmin.end().catch(() => {});
    await stopEverything(haproxy, instances, pgbouncer);
  }
  return phases;
}

/** PgBouncer's own account: the peaks sampled during the run and SHOW STATS for the bench database. */
async function pgbouncerReport(admin: pg.Client, databaseName: string, peaks: PoolPeaks) {
  const stats = (await admin.query<Record<string, string>>('SHOW STATS')).rows.find((r) => r.database === databaseName);
  const n = (key: string) => Number(stats?.[key] ?? 0);
  console.log(
    `PgBouncer: at most ${peaks.clients} client connections from the instances (up to ${peaks.waiting} waiting for a server connection) ` +
      `were served by at most ${peaks.servers} server connections (PostgreSQL saw at most ${peaks.backends} sessions on the database).`,
  );
  if (stats) {
    const transactions = n('total_xact_count');
    console.log(
      `  SHOW STATS: ${transactions.toLocaleString('en-US')} transactions, ${n('total_query_count').toLocaleString('en-US')} queries, ` +
        `average transaction ${(n('total_xact_time') / Math.max(1, transactions) / 1000).toFixed(1)} ms, ` +
        `clients waited ${(n('total_wait_time') / 1e6).toFixed(1)} s in all for a server connection.`,
    );
  }
  if (peaks.servers > DEFAULT_POOL_SIZE) problem(`PgBouncer opened ${peaks.servers} server connections, more than default_pool_size ${DEFAULT_POOL_SIZE}`);
  if (peaks.servers >= peaks.clients) problem(`transaction pooling did not multiplex: ${peaks.servers} server connections for ${peaks.clients} client connections`);
  else console.log(`  transaction pooling multiplexed: ${peaks.clients} client connections over ${peaks.servers} server connections.`);
}

/**
 * What the database holds afterwards, read straight from PostgreSQL. Every slot in this bench is a
 * whole hour on the hour on one resource, so two appointments of a resource overlap exactly when
 * they start together: a slot is oversold when its live appointments (BK, RS, or a hold IN not yet
 * expired) outnumber the service's bookingsPerSlot.
 */
async function checks(url: string, companyIds: string[]) {
  const handle = await openDatabase({ databaseUrl: url, poolSize: 1 });
  try {
    const oversold = await sql<{ n: number }>`select count(*)::int as n from (
        select ar.company_id, ar.resource_id, ar.start_time
        from appointment_resources ar
        join appointments a on a.company_id = ar.company_id and a.id = ar.appointment_id
        join services s on s.company_id = a.company_id and s.id = a.service_id
        where ar.company_id = any(${companyIds}::uuid[])
          and ar.status in ('BK', 'RS', 'IN') and (ar.expires_at is null or ar.expires_at > now())
        group by ar.company_id, ar.resource_id, ar.start_time
        having count(*) > max(s.bookings_per_slot)) as o`.execute(handle.db);
    const rows = await sql<{ id: string; status: string; resources: number }>`select a.id, a.status,
        (select count(*)::int from appointment_resources ar where ar.company_id = a.company_id and ar.appointment_id = a.id) as resources
        from appointments a where a.company_id = any(${companyIds}::uuid[])`.execute(handle.db);
    const stored = new Map(rows.rows.map((r) => [r.id, r]));
    const lost = [...created.keys()].filter((id) => !stored.has(id));
    const unannounced = rows.rows.filter((r) => !created.has(r.id));
    const wrongStatus = [...created].filter(([id, status]) => stored.has(id) && stored.get(id)!.status !== status);
    const wrongResources = rows.rows.filter((r) => r.resources !== 1);
    const lines: Array<[string, number]> = [
      ['oversells', oversold.rows[0]?.n ?? 0],
      ['201s answered for the same appointment twice', duplicate201s],
      ['lost bookings (a 201 with no appointment)', lost.length],
      ['appointments no client was given a 201 for', unannounced.length],
      ['appointments not in the status their answers gave', wrongStatus.length],
      ['appointments without exactly one resource row', wrongResources.length],
    ];
    console.log(`\nChecks in SQL (${created.size.toLocaleString('en-US')} appointments answered 201, ${rows.rows.length.toLocaleString('en-US')} in the database):`);
    for (const [label, n] of lines) {
      console.log(`  ${label}: ${n}`);
      if (n > 0) problem(`${label}: ${n}`);
    }
  } finally {
    await handle.close();
  }
}

let stoppedAll = false;
/** HAProxy first (no new requests), then the instances (graceful SIGTERM), then PgBouncer. */
async function stopEverything(haproxy: HaProxy | undefined, instances: Instance[], pgbouncer: PgBouncer | undefined) {
  if (stoppedAll) return;
  stoppedAll = true;
  if (haproxy) await stopChild(haproxy.running, 5000);
  const codes = await Promise.all(instances.map((instance) => stopChild(instance.running)));
  codes.forEach((code, i) => {
    if (code !== 0) problem(`instance ${i + 1} exited with ${code} on SIGTERM`);
    for (const line of instances[i]!.running.output().split('\n').filter((l) => /"level":(50|60)/.test(l)).slice(0, 5)) problem(`instance ${i + 1} logged: ${line.slice(0, 400)}`);
  });
  if (pgbouncer) await stopChild(pgbouncer.running, 5000);
}

function table(phases: PhaseFigures[]) {
  console.log('\n| Phase | Clients | Count | Per second | p50 / p99 ms | Answers | Instances | PgBouncer clients / servers (peak) |');
  console.log('|---|---|---|---|---|---|---|---|');
  for (const p of phases) {
    const answers = [...p.statuses].map(([status, n]) => `${status}: ${n}`).join(', ');
    console.log(`| ${p.label} | ${p.clients} | ${p.count} | ${p.perSecond.toFixed(0)} | ${pair(p.times)} | ${answers} | ${p.byInstance.join(' / ')} | ${p.pools.clients} / ${p.pools.servers} |`);
  }
}

async function main() {
  const started = performance.now();
  const haproxy = findProgram('haproxy');
  const pgbouncer = findProgram('pgbouncer');
  if (!haproxy || !pgbouncer) {
    console.error(`bench:scale needs ${[!haproxy && 'HAProxy', !pgbouncer && 'PgBouncer'].filter(Boolean).join(' and ')}, not found in /usr/sbin or on PATH. Install them with:\n  apt-get install haproxy pgbouncer`);
    process.exitCode = 1;
    return;
  }
  const load = () => loadavg().map((l) => l.toFixed(1)).join(' ');
  console.log(
    `Scale-out benchmark${QUICK ? ' (BENCH_QUICK: small counts)' : ''}: ${INSTANCES} instances behind HAProxy, PostgreSQL behind PgBouncer (transaction pooling). ` +
      `Machine: ${availableParallelism()} cores (${cpus()[0]?.model.trim() ?? 'unknown CPU'}), Node.js ${process.version}, load average ${load()} at the start; ` +
      'every process of the run (the clients, HAProxy, three instances, PgBouncer, PostgreSQL, Redis) shares these cores.',
  );

  let phases: PhaseFigures[] | undefined;
  const outcome = await withThrowawayPostgres(async (database) => {
    console.log(`PostgreSQL ${database.version}, throwaway database ${database.name} on ${database.host}.`);
    const run = scenario(database, { haproxy, pgbouncer });
    run.catch(() => {});
    try {
      phases = await Promise.race([run, interruption]);
    } finally {
      // On Ctrl-C (or a failure while starting) the scenario may not have ended its processes:
      // whatever still runs is ended here, before the database is dropped.
      for (const running of [...children]) await stopChild(running, 5000);
      for (const folder of tempFolders) rmSync(folder, { recursive: true, force: true });
      tempFolders.clear();
    }
    return true;
  });
  if (outcome === null) {
    console.log('Nothing was measured: the bench needs a PostgreSQL server it may create a database on.');
    process.exitCode = 1;
    return;
  }
  if (phases) table(phases);
  console.log(`\nWhole run: ${((performance.now() - started) / 1000).toFixed(0)} s; load average ${load()} at the end.`);
  if (problems.length > 0) {
    console.log(`\nProblems (${problems.length}${problems.length === 40 ? ' or more' : ''}):`);
    for (const p of problems) console.log(`  ${p}`);
    process.exitCode = 1;
  } else {
    console.log('\noversells: 0; every 201 is in the database exactly once and nothing else is; no 5xx, no transport error.');
  }
}

main().then(
  () => process.exit(),
  (error: unknown) => {
    if (interrupted) {
      console.log('Interrupted: every process ended, the temp folder removed and the database dropped.');
      process.exit(130);
    }
    console.error(error);
    process.exit(1);
  },
);
