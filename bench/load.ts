/**
 * npm run bench:load            (BENCH_QUICK=1 npm run bench:load: a short run, to check it works)
 *
 * A load test of the real service: the built `dist/server.js` runs as its own process (as `npm start` does,
 * NODE_ENV=production) on PostgreSQL and, when one answers, Redis; autocannon drives it from this
 * process with many concurrent keep-alive connections. The workload mixes four kinds of request,
 * each kind on its own connections, all at the same time, with one machine token of one company:
 *   - availability: GET /v3/availability, 7-day searches over the coming four weeks;
 *   - hold:         POST /v3/appointment/hold on a free slot (each request its own slot);
 *   - book:         POST /v3/appointment on a free slot;
 *   - list:         GET /v3/appointments, one week of the location, 50 a page.
 * Two phases, each on a fresh server process over the same database:
 *   (a) within budgets: rate limits on, with budgets far above the load and list admission wide
 *       enough (GENEROUS_LIMITS below), so every request goes through the limiter and Redis and
 *       none is refused; the run fails (exit code 1) on any 5xx, 429, timeout or connection error;
 *   (b) a burst beyond the budgets: twice the connections, small per-company budgets set by
 *       environment variables (BURST_BUDGETS below), plus OAuth token requests of one client; the
 *       run fails unless every kind gets 429s (each with Retry-After), and on any 5xx, timeout or
 *       connection error.
 * It prints, per kind, the requests per second, latency p50 / p99 and the count of each status
 * code, then what the service's own /metrics said (errors, pool, outbox). A full run takes about
 * two minutes; BENCH_QUICK=1 about one.
 *
 * PostgreSQL: BENCH_DATABASE_URL, else DATABASE_URL, else postgres://postgres@127.0.0.1:5432/test.
 * A throwaway database is created on that server and dropped afterwards (as bench:booking does).
 * Redis: BENCH_REDIS_URL, else REDIS_URL, else redis://127.0.0.1:6379, used when it answers PING
 * (rate-limit counters then live there, as in a deployment of several instances).
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { availableParallelism, cpus, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { DateTime } from 'luxon';
import pg from 'pg';
import { SECRET_NAMES } from '../src/platform/config.js';
import { reachableRedis } from './reachable-redis.js';
import { SERVER_ENVIRONMENT, SERVER_NODE_FLAGS, buildService } from '../scripts/build.mjs';

const QUICK = ['1', 'true', 'yes'].includes((process.env.BENCH_QUICK ?? '').toLowerCase());
/** The service as `npm start` runs it: built by scripts/build.mjs into dist/, run by plain node. */
const SERVER = await buildService();
/** npm start's V8 settings; BENCH_SERVER_NODE_FLAGS (space-separated, may be empty) measures others (and MALLOC_ARENA_MAX set here, another arena count). */
const NODE_FLAGS = process.env.BENCH_SERVER_NODE_FLAGS !== undefined ? process.env.BENCH_SERVER_NODE_FLAGS.split(' ').filter(Boolean) : SERVER_NODE_FLAGS;
const ROOT = fileURLToPath(new URL('..', import.meta.url));

const ZONE = 'America/New_York';
const RESOURCES = 20;
const CUSTOMERS = 100;
/** Hourly slots 08:00-18:00: ten a day per resource, 200 a day in all. */
const OPEN_HOUR = 8;
const HOURS = 10;
const WEEKLY = Object.fromEntries(['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'].map((d) => [d, [{ start: '08:00', end: '18:00' }]]));

const DURATION = QUICK ? { warmup: 3, within: 12, burst: 6 } : { warmup: 5, within: 45, burst: 20 };
/** Connections per kind. */
const WITHIN = { availability: 12, hold: 6, book: 6, list: 8 };
const BURST = { availability: 24, hold: 12, book: 12, list: 16, token: 4 };
/** Small budgets for the burst (per company; OAuth per client): well under what the clients send. */
const BURST_BUDGETS: Record<string, string> = {
  RATE_LIMIT_AVAILABILITY: '100/10s',
  RATE_LIMIT_API_WRITE: '60/10s',
  RATE_LIMIT_API_READ: '200/10s',
  RATE_LIMIT_APPOINTMENT_LIST: '40/10s',
  RATE_LIMIT_OAUTH_TOKEN: '10/10s',
};
/**
 * Phase (a): budgets far above what the clients send, and admission to the lists wide enough for
 * every list connection of the one company, so the limiter (and Redis) is in the path but never refuses.
 */
const GENEROUS_LIMITS: Record<string, string> = {
  ...Object.fromEntries(
    ['AVAILABILITY', 'API_WRITE', 'API_READ', 'APPOINTMENT_LIST', 'APPOINTMENT_CURSOR', 'OAUTH_TOKEN', 'OAUTH_TOKEN_GLOBAL'].map((family) => [`RATE_LIMIT_${family}`, '1000000/1m']),
  ),
  APPOINTMENT_LIST_CONCURRENCY: '64',
  APPOINTMENT_LIST_COMPANY_CONCURRENCY: '64',
};
/** A request that takes longer than this counts as a timeout (autocannon's own default). */
const TIMEOUT_SECONDS = 10;

type Kind = 'availability' | 'hold' | 'book' | 'list' | 'token';

const problems: string[] = [];
const problem = (text: string) => {
  if (problems.length < 30) problems.push(text);
};

// --- The server process -------------------------------------------------------------------------

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

interface Running {
  child: ChildProcess;
  base: string;
  output: () => string;
  exit: Promise<number | null>;
}

async function startServer(env: Record<string, string>): Promise<Running> {
  const port = await freePort();
  const child = spawn(process.execPath, [...NODE_FLAGS, SERVER], {
    cwd: ROOT,
    env: { ...SERVER_ENVIRONMENT, ...process.env, HOST: '127.0.0.1', PORT: String(port), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // The last 200 KB of the server's output, for a diagnosis when something goes wrong.
  let output = '';
  const keep = (chunk: Buffer) => {
    output += String(chunk);
    if (output.length > 400_000) output = output.slice(-200_000);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 240; i++) {
    try {
      if ((await fetch(`${base}/readyz`)).status === 200) return { child, base, output: () => output, exit };
    } catch {
      // not listening yet
    }
    if (child.exitCode !== null) throw new Error(`the server exited:\n${output}`);
    await sleep(250);
  }
  child.kill('SIGKILL');
  throw new Error(`the server did not become ready:\n${output}`);
}

/**
 * The instance's resident memory from Linux's /proc: now (VmRSS) and the most it has held since it
 * started (VmHWM, the kernel's high-water mark, so no peak between samples is missed). Undefined
 * where /proc is not there.
 */
function residentMemory(pid: number | undefined): { nowMb: number; peakMb: number } | undefined {
  if (pid === undefined) return undefined;
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
    return { nowMb: kb('VmRSS') / 1024, peakMb: kb('VmHWM') / 1024 };
  } catch {
    return undefined;
  }
}

const memoryReports: string[] = [];
/** Said for each server before it stops: the issue's aim is at most 200 MB for one instance. */
function reportMemory(label: string, running: Running): void {
  const memory = residentMemory(running.child.pid);
  const line = memory
    ? `${label}: resident ${memory.nowMb.toFixed(0)} MB at the end, peak ${memory.peakMb.toFixed(0)} MB (aim: at most 200 MB)`
    : `${label}: resident memory not available (no /proc/<pid>/status on this system)`;
  memoryReports.push(line);
  console.log(`  memory of the instance, ${line}`);
}

async function stopServer(running: Running): Promise<void> {
  if (running.child.exitCode !== null) return;
  running.child.kill('SIGTERM');
  const code = await Promise.race([running.exit, sleep(20_000).then(() => 'timeout' as const)]);
  if (code === 'timeout') {
    running.child.kill('SIGKILL');
    problem('the server did not stop within 20 s of SIGTERM');
  } else if (code !== 0) problem(`the server exited with code ${code} on SIGTERM`);
}

/** Lines the server logged at error level or above (LOG_LEVEL=warn keeps request lines out). */
function errorLines(output: string): string[] {
  return output.split('\n').filter((line) => /"level":(50|60)/.test(line));
}

// --- Seeding through the API --------------------------------------------------------------------

interface Tenant {
  locationId: string;
  serviceId: string;
  resourceIds: string[];
  customerIds: string[];
  clientId: string;
  clientSecret: string;
  token: string;
}

async function call(base: string, method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<Record<string, unknown>> {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: { ...headers, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await response.text();
  if (response.status >= 300) throw new Error(`seeding: ${method} ${path} -> ${response.status} ${text.slice(0, 400)}`);
  return text ? (JSON.parse(text) as Record<string, unknown>) : {};
}

/** A user, a company, machine credentials, a location open 08:00-18:00 every day, a 60-minute service, resources and customers. */
async function seed(base: string): Promise<Tenant> {
  const email = `load-${randomUUID()}@bench.example`;
  const password = `bench ${randomUUID()}`;
  await call(base, 'POST', '/v3/auth/signup', {}, { email, password, name: 'Load Bench' });
  const login = await call(base, 'POST', '/v3/auth/login', {}, { email, password });
  const user = { authorization: `Bearer ${login.accessToken as string}` };
  const company = await call(base, 'POST', '/v3/company', user, { name: 'Load Bench Co' });
  const dashboard = { ...user, 'x-api-key': company.apiKey as string };
  const client = await call(base, 'POST', '/v3/clientId', dashboard, { name: 'load bench' });
  const tokenResponse = await fetch(`${base}/v3/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'client_credentials', client_id: client.clientId as string, client_secret: client.clientSecret as string, scope: 'read write' }).toString(),
  });
  if (tokenResponse.status !== 200) throw new Error(`seeding: token -> ${tokenResponse.status} ${await tokenResponse.text()}`);
  const token = ((await tokenResponse.json()) as { access_token: string }).access_token;

  const location = await call(base, 'POST', '/v3/location', dashboard, { name: 'Load', timezoneName: ZONE, weeklyAvailability: WEEKLY });
  const locationId = location.id as string;
  const service = await call(base, 'POST', '/v3/service', dashboard, { name: 'Load service', duration: 60, bookingInterval: 60, locationIds: [locationId] });
  const serviceId = service.id as string;
  const resourceIds: string[] = [];
  for (let i = 0; i < RESOURCES; i++) {
    resourceIds.push((await call(base, 'POST', '/v3/resource', dashboard, { name: `Resource ${i}`, locationIds: [locationId], serviceIds: [serviceId] })).id as string);
  }
  const customerIds: string[] = [];
  for (let i = 0; i < CUSTOMERS; i += 10) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(10, CUSTOMERS - i) }, (_, j) =>
        call(base, 'POST', '/v3/customer', dashboard, { firstName: 'Load', lastName: `Customer ${i + j}`, email: `customer-${i + j}-${randomUUID()}@bench.example` }),
      ),
    );
    customerIds.push(...batch.map((c) => c.id as string));
  }
  return { locationId, serviceId, resourceIds, customerIds, clientId: client.clientId as string, clientSecret: client.clientSecret as string, token };
}

// --- The workload -------------------------------------------------------------------------------

/** Hands out distinct free slots from tomorrow on: slot k is resource k mod 20, so neighbours rarely share a lock. */
class Slots {
  private next = 0;
  private readonly base = DateTime.now().setZone(ZONE).startOf('day');
  private readonly days = new Map<number, DateTime>();
  constructor(private readonly tenant: Tenant) {}

  body(): string {
    const k = this.next++;
    const index = Math.floor(k / RESOURCES);
    const dayNumber = 1 + Math.floor(index / HOURS);
    let day = this.days.get(dayNumber);
    if (!day) this.days.set(dayNumber, (day = this.base.plus({ days: dayNumber }).set({ hour: OPEN_HOUR })));
    const start = day.plus({ hours: index % HOURS });
    return JSON.stringify({
      Unavailability: { startTime: start.toISO(), endTime: start.plus({ hours: 1 }).toISO() },
      ResourceIds: [this.tenant.resourceIds[k % RESOURCES]],
      // Customer c books only resource c mod 20 (100 customers, 20 resources): never two at once.
      CustomerId: this.tenant.customerIds[k % CUSTOMERS],
    });
  }

  get used(): number {
    return this.next;
  }
}

interface KindResult {
  kind: Kind;
  connections: number;
  requests: number;
  perSecond: number;
  p50: number;
  p99: number;
  max: number;
  statuses: Record<string, number>;
  timeouts: number;
  errors: number;
  missingRetryAfter: number;
  unexpected: string[];
}

function requestsOf(kind: Kind, tenant: Tenant, slots: Slots, dates: () => { start: string; end: string }): autocannon.Request[] {
  const q = `LocationId=${tenant.locationId}&ServiceId=${tenant.serviceId}`;
  switch (kind) {
    case 'availability':
      return [
        {
          method: 'GET',
          setupRequest: (req) => {
            const { start, end } = dates();
            return { ...req, path: `/v3/availability?${q}&startDate=${start}&endDate=${end}` };
          },
        },
      ];
    case 'list':
      return [
        {
          method: 'GET',
          setupRequest: (req) => {
            const { start, end } = dates();
            return { ...req, path: `/v3/appointments?LocationId=${tenant.locationId}&startDate=${start}&endDate=${end}&limit=50` };
          },
        },
      ];
    case 'hold':
      return [{ method: 'POST', path: `/v3/appointment/hold?${q}`, headers: { 'content-type': 'application/json' }, setupRequest: (req) => ({ ...req, body: slots.body() }) }];
    case 'book':
      return [{ method: 'POST', path: `/v3/appointment?${q}`, headers: { 'content-type': 'application/json' }, setupRequest: (req) => ({ ...req, body: slots.body() }) }];
    case 'token':
      return [
        {
          method: 'POST',
          path: '/v3/oauth/token',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ grant_type: 'client_credentials', client_id: tenant.clientId, client_secret: tenant.clientSecret }).toString(),
        },
      ];
  }
}

/** Which answers a kind may give without it being a problem (429 only in the burst). */
function expected(kind: Kind, status: number, burst: boolean): boolean {
  if (burst && status === 429) return true;
  if (kind === 'hold' || kind === 'book') return status === 201;
  return status === 200;
}

async function runKind(kind: Kind, connections: number, seconds: number, base: string, tenant: Tenant, slots: Slots, burst: boolean): Promise<KindResult> {
  // Searches and lists move over the coming four weeks: a mix of cached and computed answers.
  let turn = 0;
  const today = DateTime.now().setZone(ZONE).startOf('day');
  const dates = () => {
    const start = today.plus({ days: 1 + (turn++ % 21) });
    return { start: start.toISODate()!, end: start.plus({ days: 6 }).toISODate()! };
  };
  let missingRetryAfter = 0;
  const unexpected: string[] = [];
  const requests = requestsOf(kind, tenant, slots, dates).map((request) => ({
    ...request,
    onResponse: (status: number, body: string, _context: object, headers: Record<string, string | string[]> | undefined) => {
      if (status === 429) {
        const retryAfter = Object.entries(headers ?? {}).find(([name]) => name.toLowerCase() === 'retry-after')?.[1];
        if (!retryAfter || !/^\d+$/.test(String(retryAfter))) missingRetryAfter++;
      }
      if (!expected(kind, status, burst) && unexpected.length < 5) unexpected.push(`${status} ${body.slice(0, 300)}`);
    },
  }));
  const result = await autocannon({
    url: base,
    connections,
    duration: seconds,
    timeout: TIMEOUT_SECONDS,
    headers: kind === 'token' ? {} : { authorization: `Bearer ${tenant.token}` },
    requests: requests as autocannon.Request[],
  });
  const statuses: Record<string, number> = {};
  for (const [code, stats] of Object.entries(result.statusCodeStats ?? {})) statuses[code] = stats.count ?? 0;
  const answered = Object.values(statuses).reduce((a, b) => a + b, 0);
  return {
    kind,
    connections,
    requests: answered,
    perSecond: answered / result.duration,
    p50: result.latency.p50,
    p99: result.latency.p99,
    max: result.latency.max,
    statuses,
    timeouts: result.timeouts,
    errors: result.errors,
    missingRetryAfter,
    unexpected,
  };
}

async function runPhase(label: string, connections: Partial<Record<Kind, number>>, seconds: number, base: string, tenant: Tenant, slots: Slots, burst: boolean): Promise<KindResult[]> {
  const kinds = Object.entries(connections) as Array<[Kind, number]>;
  const results = await Promise.all(kinds.map(([kind, n]) => runKind(kind, n, seconds, base, tenant, slots, burst)));
  const total = results.reduce((a, r) => a + r.requests, 0);
  console.log(`\n${label}: ${seconds} s, ${kinds.reduce((a, [, n]) => a + n, 0)} connections, ${total.toLocaleString('en-US')} answers, ${(total / seconds).toFixed(0)} requests/s in all`);
  for (const r of results) {
    console.log(
      `  ${r.kind.padEnd(12)} ${String(r.connections).padStart(3)} conn  ${r.perSecond.toFixed(0).padStart(5)} req/s  p50 ${r.p50} ms  p99 ${r.p99} ms  max ${r.max} ms  ` +
        `${statusText(r.statuses)}${r.timeouts ? `  timeouts ${r.timeouts}` : ''}${r.errors ? `  connection errors ${r.errors}` : ''}`,
    );
    const fivexx = Object.entries(r.statuses).filter(([code]) => code.startsWith('5')).reduce((a, [, n]) => a + n, 0);
    if (fivexx > 0) problem(`${label} ${r.kind}: ${fivexx} answers 5xx`);
    if (r.timeouts > 0 || r.errors > 0) problem(`${label} ${r.kind}: ${r.timeouts} timeouts, ${r.errors} connection errors`);
    if (burst && !r.statuses['429']) problem(`${label} ${r.kind}: no 429 in a burst beyond the budget`);
    if (r.missingRetryAfter > 0) problem(`${label} ${r.kind}: ${r.missingRetryAfter} answers 429 without a Retry-After in seconds`);
    for (const text of r.unexpected) problem(`${label} ${r.kind}: unexpected ${text}`);
  }
  return results;
}

const statusText = (statuses: Record<string, number>) =>
  Object.entries(statuses)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([code, n]) => `${code}: ${n}`)
    .join(', ');

// --- What the service says about itself ---------------------------------------------------------

/** Answers the server has counted, /metrics itself left out. */
async function answered(base: string): Promise<number> {
  const text = await (await fetch(`${base}/metrics`)).text();
  return text
    .split('\n')
    .filter((line) => line.startsWith('slotwise_http_requests_total{') && !line.includes('route="/metrics"'))
    .reduce((a, line) => a + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
}

/**
 * Waits until the server has answered every request still in flight when the load stopped (the
 * load generator drops its connections at the end, the server still works through what it read):
 * the count of answers has stayed the same for a second. Returns how many came in meanwhile.
 */
async function settle(base: string): Promise<number> {
  const first = await answered(base);
  let previous = first;
  for (let i = 0; i < 60; i++) {
    await sleep(1000);
    const now = await answered(base);
    if (now === previous) return now - first;
    previous = now;
  }
  problem('the server was still answering 60 s after the load stopped');
  return previous - first;
}

async function serverMetrics(base: string): Promise<string> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const samples = text.split('\n').filter((line) => line && !line.startsWith('#'));
  const sum = (prefix: string, filter: (line: string) => boolean = () => true) =>
    samples.filter((line) => line.startsWith(prefix) && filter(line)).reduce((a, line) => a + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
  const one = (name: string) => sum(`${name} `);
  const errorsBy = new Map<string, number>();
  for (const line of samples.filter((l) => l.startsWith('slotwise_http_errors_total{'))) {
    const code = /status_code="(\d+)"/.exec(line)?.[1] ?? '?';
    errorsBy.set(code, (errorsBy.get(code) ?? 0) + Number(line.slice(line.lastIndexOf(' ') + 1)));
  }
  return (
    `requests ${sum('slotwise_http_requests_total{').toLocaleString('en-US')}, errors by status {${[...errorsBy].map(([c, n]) => `${c}: ${n}`).join(', ')}}, ` +
    `pool ${one('slotwise_db_pool_connections')} connections (${one('slotwise_db_pool_idle_connections')} idle, ${one('slotwise_db_pool_waiting_requests')} waiting), ` +
    `outbox ${one('slotwise_outbox_pending_events')} pending, lag ${one('slotwise_outbox_lag_seconds').toFixed(1)} s, ` +
    `webhook deliveries ${sum('slotwise_webhook_deliveries_total{')}`
  );
}

// --- Main ---------------------------------------------------------------------------------------

function table(phases: Array<[string, KindResult[]]>) {
  console.log('\n| Phase | Kind | Connections | Requests/s | p50 / p99 ms | Status codes |');
  console.log('|---|---|---|---|---|---|');
  for (const [phase, results] of phases) {
    for (const r of results) {
      const extra = r.timeouts || r.errors ? `; timeouts ${r.timeouts}, errors ${r.errors}` : '';
      console.log(`| ${phase} | ${r.kind} | ${r.connections} | ${r.perSecond.toFixed(0)} | ${r.p50} / ${r.p99} | ${statusText(r.statuses)}${extra} |`);
    }
  }
}

async function main() {
  const started = performance.now();
  const load = () => loadavg().map((l) => l.toFixed(1)).join(' ');
  console.log(`Load test${QUICK ? ' (BENCH_QUICK: short phases)' : ''}. Machine: ${availableParallelism()} cores (${cpus()[0]?.model.trim() ?? 'unknown CPU'}), Node.js ${process.version}, load average ${load()} at the start.`);

  const serverUrl = process.env.BENCH_DATABASE_URL || process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';
  const shown = new URL(serverUrl);
  shown.password = shown.password ? '***' : '';
  const admin = new pg.Client({ connectionString: serverUrl });
  admin.on('error', () => {});
  try {
    await admin.connect();
  } catch (error) {
    console.log(`PostgreSQL ${shown.toString()} cannot be reached (${(error as Error).message}); set BENCH_DATABASE_URL. Nothing was measured.`);
    process.exitCode = 1;
    return;
  }
  const name = `slotwise_load_${randomBytes(6).toString('hex')}`;
  await admin.query(`create database ${name}`);
  const databaseUrl = new URL(serverUrl);
  databaseUrl.pathname = `/${name}`;

  const redisUrl = process.env.BENCH_REDIS_URL || process.env.REDIS_URL || 'redis://127.0.0.1:6379';
  const redis = (await reachableRedis(redisUrl)) ? redisUrl : undefined;
  const version = (await admin.query<{ server_version: string }>('show server_version')).rows[0]?.server_version ?? '';
  console.log(
    `PostgreSQL ${version} (throwaway database ${name} on ${shown.host}, pool of 10 connections); ` +
      (redis ? `Redis at ${new URL(redisUrl).host} (rate-limit counters)` : `no Redis at ${new URL(redisUrl).host}: counters in the server's memory`) +
      `. autocannon ${TIMEOUT_SECONDS} s timeout, keep-alive connections from this process.`,
  );

  // Both phases: the same secrets (tokens stay valid across the restart), production mode, the
  // outbox worker on (bookings send their events as in a deployment), warnings and errors logged.
  const secret = () => randomBytes(32).toString('hex');
  const common: Record<string, string> = {
    NODE_ENV: 'production',
    // Every secret production requires (a new one is picked up here, not forgotten).
    ...Object.fromEntries(SECRET_NAMES.map((name) => [name, secret()])),
    DATABASE_URL: databaseUrl.toString(),
    DATABASE_POOL_SIZE: '10',
    LOG_LEVEL: 'warn',
    ...(redis ? { REDIS_URL: redis } : {}),
  };
  if (!redis) delete process.env.REDIS_URL;

  // Counters of this run and phase only, whatever an earlier run or phase left in Redis.
  const keyPrefix = `bench:${randomBytes(4).toString('hex')}:`;
  const phases: Array<[string, KindResult[]]> = [];
  let slotsUsed: number | undefined;
  try {
    // (a) Within budgets.
    const seedStarted = performance.now();
    const first = await startServer({ ...common, RATE_LIMITS_ENABLED: 'true', RATE_LIMIT_KEY_PREFIX: `${keyPrefix}a:`, ...GENEROUS_LIMITS });
    let tenant: Tenant | undefined;
    let slots: Slots | undefined;
    try {
      tenant = await seed(first.base);
      slots = new Slots(tenant);
      console.log(`Seeded through the API in ${((performance.now() - seedStarted) / 1000).toFixed(1)} s (server start included): 1 location open 08:00-18:00 ${ZONE}, a 60-minute service, ${RESOURCES} resources, ${CUSTOMERS} customers.`);
      await runPhase('warm-up', { availability: 4, hold: 2, book: 2, list: 2 }, DURATION.warmup, first.base, tenant, slots, false);
      await settle(first.base);
      phases.push(['(a) within budgets', await runPhase('(a) within budgets (every budget 1000000/1m, list admission 64 at once)', WITHIN, DURATION.within, first.base, tenant, slots, false)]);
      const late = await settle(first.base);
      console.log(`  the service's /metrics (${late} answers to requests the clients had given up on when the phase ended): ${await serverMetrics(first.base)}`);
    } finally {
      reportMemory('(a) within budgets', first);
      await stopServer(first);
      for (const line of errorLines(first.output()).slice(0, 5)) problem(`(a) server logged: ${line.slice(0, 400)}`);
    }

    if (!tenant || !slots) throw new Error('seeding did not finish');
    // (b) A burst beyond small budgets.
    const second = await startServer({ ...common, RATE_LIMITS_ENABLED: 'true', RATE_LIMIT_KEY_PREFIX: `${keyPrefix}b:`, ...BURST_BUDGETS });
    try {
      console.log(`\nBudgets of the burst: ${Object.entries(BURST_BUDGETS).map(([k, v]) => `${k}=${v}`).join(', ')}`);
      phases.push(['(b) burst', await runPhase('(b) burst beyond the budgets', BURST, DURATION.burst, second.base, tenant, slots, true)]);
      const late = await settle(second.base);
      console.log(`  the service's /metrics (${late} answers to requests the clients had given up on when the phase ended): ${await serverMetrics(second.base)}`);
    } finally {
      reportMemory('(b) burst', second);
      await stopServer(second);
      for (const line of errorLines(second.output()).slice(0, 5)) problem(`(b) server logged: ${line.slice(0, 400)}`);
    }
    slotsUsed = slots.used;
  } finally {
    await admin.query(`drop database if exists ${name} with (force)`);
    await admin.end();
  }

  table(phases);
  console.log(`\nResident memory of one instance (Node.js ${process.version}, MALLOC_ARENA_MAX=${process.env.MALLOC_ARENA_MAX ?? SERVER_ENVIRONMENT.MALLOC_ARENA_MAX} node ${NODE_FLAGS.join(" ") || "(no V8 flags)"} dist/server.js, the server alone, autocannon runs in this process):`);
  for (const line of memoryReports) console.log(`  ${line}`);
  console.log(`\n${(slotsUsed ?? 0).toLocaleString('en-US')} slots handed out to holds and bookings. Whole run: ${((performance.now() - started) / 1000).toFixed(0)} s; load average ${load()} at the end.`);
  if (problems.length > 0) {
    console.log(`\nProblems (${problems.length}${problems.length === 30 ? ' or more' : ''}):`);
    for (const p of problems) console.log(`  ${p}`);
    process.exitCode = 1;
  } else {
    console.log('\nNo 5xx, no timeout, no connection error; the burst got 429s with Retry-After on every kind.');
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
