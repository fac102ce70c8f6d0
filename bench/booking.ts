/**
 * npm run bench:booking            (BENCH_QUICK=1 npm run bench:booking: a smaller run, to check it works)
 *
 * Booking throughput and latency through the real HTTP layer: the app listens on 127.0.0.1 and
 * 16 concurrent clients in the same process send requests with undici request() (keep-alive). On the
 * embedded database and on PostgreSQL it prints:
 *   - the first 1,000 bookings after the app starts (16 clients): the cold figure;
 *   - then, after a warm-up of 3,000 more (untimed), the figures of a warm instance, which is what a
 *     server in service is: V8 compiles a function with its optimising tier only after many calls,
 *     and a booking's Node.js CPU fell from about 3.3 ms over the first 1,000 bookings to about
 *     1.6 ms after 3,000-4,000, where it stays (issue 18, fourteenth pass);
 *   - direct bookings (POST /v3/appointment) on distinct free slots, one client and 16 clients;
 *   - a contended variant: 16 clients aiming at the same four slots of one resource at a time;
 *   - hold then book (POST /v3/appointment/hold + PUT /v3/appointment/:id/book), 16 clients, after
 *     2,000 pairs (the book operation's own code warms up there; their rate is printed, untimed by
 *     the figure);
 *   - a walk over 100,000 appointments with GET /v3/appointments/cursor (limit 100), seeded in bulk:
 *     walked twice, the first walk (cold) printed beside the second;
 *   - then pgbench's TPC-B with 16 clients on the same server, and the ratio of the two rates.
 * Counts (full run / BENCH_QUICK=1) are in COUNTS below; a full run of both databases takes a few
 * minutes on a 2-core machine.
 * A full run runs each database's part in a Node.js process of its own (as a server runs one
 * database), so each part's cold figure is cold. BENCH_ONLY=embedded or BENCH_ONLY=postgres runs
 * one database in this process (for a profile: `node --cpu-prof --import tsx bench/booking.ts`).
 * PostgreSQL: BENCH_DATABASE_URL, else DATABASE_URL, else postgres://postgres@127.0.0.1:5432/test.
 * A throwaway database is created on that server and dropped afterwards (as
 * scripts/test-database.mjs does); when the server cannot be reached that part is skipped.
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { availableParallelism, cpus, loadavg, tmpdir } from 'node:os';
import { performance } from 'node:perf_hooks';
import { withThrowawayPostgres } from './throwaway-postgres.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { DateTime } from 'luxon';
import pg from 'pg';
import { Pool } from 'undici';
import type { Dispatcher } from 'undici';
import { sql } from 'kysely';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/platform/config.js';
import { openDatabase } from '../src/platform/database/index.js';
import type { DatabaseHandle, Db } from '../src/platform/database/index.js';
import { migrate } from '../src/platform/database/migrate.js';
import { startEmbeddedUpkeep } from '../src/platform/database/embedded-upkeep.js';
import { resolveSecrets } from '../src/platform/secrets.js';
import { createTokenService } from '../src/platform/auth/tokens.js';

const QUICK = ['1', 'true', 'yes'].includes((process.env.BENCH_QUICK ?? '').toLowerCase());
const ONLY = process.env.BENCH_ONLY?.toLowerCase() || undefined;
if (ONLY !== undefined && ONLY !== 'embedded' && ONLY !== 'postgres') {
  console.error(`BENCH_ONLY is '${process.env.BENCH_ONLY}': it runs one database, 'embedded' or 'postgres'; leave it unset for both`);
  process.exit(2);
}
const execFileAsync = promisify(execFile);
const CLIENTS = 16;
const RESOURCES = 20;
const ZONE = 'America/New_York';
/** Hourly slots from 08:00 to 18:00: ten a day per resource. */
const OPEN_HOUR = 8;
const HOURS = 10;
const WEEKLY = Object.fromEntries(['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'].map((d) => [d, [{ start: '08:00', end: '18:00' }]]));
/** Contended variant: each run of 16 consecutive attempts aims at these many slots of one resource. */
const CONTENDED_SLOTS = 4;

const COUNTS = QUICK
  ? { cold: 50, warmup: 16, sequential: 40, direct: 200, contended: 160, holdBookWarmup: 20, holdBook: 100, cursor: 10_000 }
  : { cold: 1_000, warmup: 3_000, sequential: 100, direct: 2_000, contended: 480, holdBookWarmup: 2_000, holdBook: 1_000, cursor: 100_000 };
const PAGE_LIMIT = 100;
const SEED_CHUNK = 10_000;

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}
const fmt = (ms: number) => (Number.isNaN(ms) ? '-' : `${ms.toFixed(ms < 10 ? 2 : 1)} ms`);
const num = (ms: number) => (Number.isNaN(ms) ? '-' : ms.toFixed(ms < 10 ? 1 : 0));
const rate = (count: number, ms: number) => (count / ms) * 1000;
const p50p99 = (values: number[]) => `p50 ${fmt(percentile(values, 50))}, p99 ${fmt(percentile(values, 99))}`;

/** Unexpected answers (anything but the expected 201/200, or a 400 where one is expected): reported at the end. */
const problems: string[] = [];
/** Whether more problems happened than `problems` keeps. */
let problemsLeftOut = false;
function problem(label: string, request: string, status: number, text: string) {
  if (problems.length < 20) problems.push(`${label}: ${request} -> ${status} ${text.slice(0, 600)}`);
  else problemsLeftOut = true;
}

export interface Tenant {
  companyId: string;
  locationId: string;
  serviceId: string;
  resourceIds: string[];
  customerIds: string[];
}

/** One company, one location open 08:00-18:00 every day, one 60-minute service on the hour, 20 resources, customers. */
export async function seedTenant(db: Db, customers: number): Promise<Tenant> {
  const companyId = randomUUID();
  const locationId = randomUUID();
  const serviceId = randomUUID();
  const resourceIds = Array.from({ length: RESOURCES }, () => randomUUID());
  const customerIds = Array.from({ length: customers }, () => randomUUID());
  await db.insertInto('companies').values({ id: companyId, name: `Bench ${companyId}`, apiKeyHash: randomUUID(), apiKeyPrefix: 'bench', publicClientId: randomUUID() }).execute();
  await db.insertInto('locations').values({ companyId, id: locationId, name: 'Bench', timezoneName: ZONE, weeklyAvailability: JSON.stringify(WEEKLY) }).execute();
  await db.insertInto('services').values({ companyId, id: serviceId, name: 'Bench service', duration: 60, bookingInterval: 60, padding: 0 }).execute();
  await db.insertInto('serviceLocations').values({ companyId, serviceId, locationId }).execute();
  await db.insertInto('resources').values(resourceIds.map((id, i) => ({ companyId, id, name: `Resource ${i}` }))).execute();
  await db.insertInto('resourceLocations').values(resourceIds.map((resourceId) => ({ companyId, resourceId, locationId }))).execute();
  await db.insertInto('resourceServices').values(resourceIds.map((resourceId) => ({ companyId, resourceId, serviceId }))).execute();
  if (customers > 0) {
    const emails = customerIds.map((_, i) => `customer-${i}@bench.example`);
    await sql`insert into customers (company_id, id, first_name, last_name, email)
      select ${companyId}::uuid, u.id, 'Bench', 'Customer', u.email from unnest(${customerIds}::uuid[], ${emails}::text[]) as u(id, email)`.execute(db);
  }
  // Statistics of the seeded tables, as autovacuum keeps them on a production server: without
  // them (autovacuum off, as on this benchmark's machine) the catalog read of every booking joins
  // the resources to their links by nested loops (bench/availability.ts says how much that cost).
  await sql`analyze`.execute(db);
  return { companyId, locationId, serviceId, resourceIds, customerIds };
}

/**
 * `count` appointments written straight into the database (BK, one resource each, hourly slots
 * over the coming days): one insert ... select from unnest per 10,000 rows into each table.
 */
export async function seedAppointments(db: Db, tenant: Tenant, count: number) {
  const base = DateTime.now().setZone(ZONE).startOf('day');
  // Luxon in a zone costs tens of microseconds a call: one call per day, then plain arithmetic
  // (08:00 to 18:00 never spans a DST change).
  const opening = new Map<number, number>();
  const openingOf = (day: number) => {
    let ms = opening.get(day);
    if (ms === undefined) opening.set(day, (ms = base.plus({ days: day }).set({ hour: OPEN_HOUR }).toMillis()));
    return ms;
  };
  for (let offset = 0; offset < count; offset += SEED_CHUNK) {
    const ids: string[] = [];
    const resources: string[] = [];
    const starts: string[] = [];
    const ends: string[] = [];
    for (let i = offset; i < Math.min(count, offset + SEED_CHUNK); i++) {
      const index = Math.floor(i / RESOURCES);
      const start = openingOf(1 + Math.floor(index / HOURS)) + (index % HOURS) * 3_600_000;
      ids.push(randomUUID());
      resources.push(tenant.resourceIds[i % RESOURCES]!);
      starts.push(new Date(start).toISOString());
      ends.push(new Date(start + 3_600_000).toISOString());
    }
    // resource_ids: the copy on the appointment that the application writes with it (migrations/0017).
    await sql`insert into appointments (company_id, id, location_id, service_id, status, start_time, end_time, duration, padding, resource_ids)
      select ${tenant.companyId}::uuid, u.id, ${tenant.locationId}::uuid, ${tenant.serviceId}::uuid, 'BK', u.s, u.e, 60, 0, array[u.r]
      from unnest(${ids}::uuid[], ${starts}::timestamptz[], ${ends}::timestamptz[], ${resources}::uuid[]) as u(id, s, e, r)`.execute(db);
    // Statistics of the grown table before its rows are referenced: a server without autovacuum
    // (this machine's) kept the foreign key check of appointment_resources on a plan made for a
    // nearly empty appointments table, a scan of the company's index per row, and seeding took
    // 242 s instead of seconds after the booking phases.
    await sql`analyze appointments`.execute(db);
    await sql`insert into appointment_resources (company_id, appointment_id, resource_id, start_time, end_time, status)
      select ${tenant.companyId}::uuid, u.id, u.r, u.s, u.e, 'BK'
      from unnest(${ids}::uuid[], ${resources}::uuid[], ${starts}::timestamptz[], ${ends}::timestamptz[]) as u(id, r, s, e)`.execute(db);
  }
  await sql`analyze appointments; analyze appointment_resources`.execute(db);
}

interface Slot {
  resourceId: string;
  start: DateTime;
  end: DateTime;
}

/** Hands out days from tomorrow onwards, so every phase books slots no other phase touches. */
class Calendar {
  private nextDay = 1;
  private readonly base = DateTime.now().setZone(ZONE).startOf('day');
  constructor(private readonly resourceIds: string[]) {}

  private slot(resource: number, day: number, hour: number): Slot {
    const start = this.base.plus({ days: day }).set({ hour });
    return { resourceId: this.resourceIds[resource]!, start, end: start.plus({ hours: 1 }) };
  }

  /**
   * `count` distinct free slots. Slot k is on resource k mod 20, so the requests in flight together
   * (consecutive k) are on different resources and rarely wait for each other's lock.
   */
  distinct(count: number): (k: number) => Slot {
    const first = this.nextDay;
    this.nextDay += Math.ceil(count / (RESOURCES * HOURS));
    return (k) => {
      const index = Math.floor(k / RESOURCES);
      return this.slot(k % RESOURCES, first + Math.floor(index / HOURS), OPEN_HOUR + (index % HOURS));
    };
  }

  /**
   * Attempt k aims at slot (k mod 4) of group floor(k / 16): sixteen attempts in flight together
   * share four slots of one resource, four attempts per slot, so exactly one of each four wins.
   */
  contended(attempts: number): { slotOf: (k: number) => Slot; slots: number } {
    const groups = Math.ceil(attempts / CLIENTS);
    const groupsPerDay = RESOURCES * Math.floor(HOURS / CONTENDED_SLOTS);
    const first = this.nextDay;
    this.nextDay += Math.ceil(groups / groupsPerDay);
    let slots = 0;
    for (let g = 0; g < groups; g++) slots += Math.min(CONTENDED_SLOTS, attempts - g * CLIENTS);
    return {
      slots,
      slotOf: (k) => {
        const group = Math.floor(k / CLIENTS);
        const resource = group % RESOURCES;
        const block = Math.floor(group / RESOURCES);
        const day = first + Math.floor(block / Math.floor(HOURS / CONTENDED_SLOTS));
        const hour = OPEN_HOUR + (block % Math.floor(HOURS / CONTENDED_SLOTS)) * CONTENDED_SLOTS + (k % CONTENDED_SLOTS);
        return this.slot(resource, day, hour);
      },
    };
  }
}

/**
 * `clients` workers taking the next job number until `total`. Returns the wall time and the CPU
 * this Node.js process used meanwhile, as a share of one core (app, drivers, the embedded database
 * and the clients all run on its one JavaScript thread).
 */
export async function runClients(total: number, clients: number, job: (k: number) => Promise<void>): Promise<{ wall: number; cpu: number }> {
  let next = 0;
  const started = performance.now();
  const cpuBefore = process.cpuUsage();
  await Promise.all(
    Array.from({ length: clients }, async () => {
      for (let k = next++; k < total; k = next++) await job(k);
    }),
  );
  const wall = performance.now() - started;
  const cpu = process.cpuUsage(cpuBefore);
  return { wall, cpu: (cpu.user + cpu.system) / 1000 / wall };
}

export interface Answer {
  status: number;
  ms: number;
  json: unknown;
  text: string;
}

/**
 * A client of the app over HTTP/1.1 keep-alive connections (undici's Pool, as many as requests in
 * flight). `body`: an object is sent as JSON; a string is sent as it is (the phases serialise their
 * bodies before the clock starts).
 *
 * undici's request() rather than fetch(): the clients share the app's one JavaScript thread, and
 * fetch's WHATWG streams and the per-request slot arithmetic with Luxon cost that thread about a
 * tenth of its time during the 16-client phases (a CPU profile, issue 18 eighth pass), time a client
 * on another machine would not take from the app.
 */
export function httpClient(base: string, token: string) {
  const pool = new Pool(base);
  return async (method: Dispatcher.HttpMethod, path: string, body?: unknown): Promise<Answer> => {
    const t = performance.now();
    const response = await pool.request({
      method,
      path,
      headers: { authorization: `Bearer ${token}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
    });
    const text = await response.body.text();
    const ms = performance.now() - t;
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = null;
    }
    return { status: response.statusCode, ms, json, text };
  };
}

/**
 * Counts exchanges with the database (node-postgres Client.query calls: one statement each, or a
 * statement with its transaction's begin or commit riding along, platform/database/
 * transaction-control.ts) and the wall time during which at least one was in flight (as the app sees
 * it: driver, round trip and server), for the sequential run: node-postgres Client.prototype.query,
 * restored afterwards (both databases run through node-postgres).
 */
function instrument() {
  let statements = 0;
  let inFlight = 0;
  let since = 0;
  let busy = 0;
  const leave = () => {
    if (--inFlight === 0) busy += performance.now() - since;
  };
  type Fn = (...args: unknown[]) => unknown;
  const wrap = (original: Fn): Fn =>
    function (this: unknown, ...args: unknown[]) {
      statements++;
      if (inFlight++ === 0) since = performance.now();
      const result = original.apply(this, args);
      if (result instanceof Promise) result.then(leave, leave);
      else if (result && typeof (result as { callback?: unknown }).callback === 'function') {
        // A query object (a statement with begin or commit riding along, platform/database/
        // transaction-control.ts): in flight until its callback, which pg may call twice.
        const query = result as { callback: Fn };
        const callback = query.callback;
        let left = false;
        query.callback = function (this: unknown, ...a: unknown[]) {
          if (!left) {
            left = true;
            leave();
          }
          return callback.apply(this, a);
        };
      } else leave();
      return result;
    };
  const targets: Array<{ owner: Record<string, unknown>; key: string; original: Fn }> = [];
  const patch = (owner: object, key: string) => {
    const record = owner as Record<string, unknown>;
    const original = record[key] as Fn;
    targets.push({ owner: record, key, original });
    record[key] = wrap(original);
  };
  // Both databases run through node-postgres (the embedded one over PGlite's adapter).
  patch(pg.Client.prototype, 'query');
  return () => {
    for (const t of targets) t.owner[t.key] = t.original;
    return { statements, busyMs: busy };
  };
}

/**
 * The sampler's statement, prepared once: sent unprepared every 10 ms, its parse and plan of the
 * pg_stat_activity view took about a tenth of the 16-client bookings per second from the server
 * it measures (issue 18, fifteenth pass: 969 against 1,112 bookings/s in alternating rounds).
 */
const LOCK_WAITERS = `select count(*)::int as n from pg_stat_activity where datname = $1 and wait_event_type = 'Lock'`;
const SAMPLE_EVERY_MS = 25;

/**
 * PostgreSQL only: samples, every SAMPLE_EVERY_MS, how many of the bench database's sessions wait on a lock
 * (the booking locks are advisory locks) and how many requests for a connection wait at the pool
 * (Kysely asks for one per statement outside a transaction and one per transaction).
 */
function sampler(handle: DatabaseHandle, admin: pg.Client | null, databaseName: string | null) {
  if (!admin || !databaseName) return async () => null;
  let stop = false;
  let samples = 0;
  let lockWaiters = 0;
  let poolWaiting = 0;
  const loop = (async () => {
    while (!stop) {
      const result = await admin.query<{ n: number }>({ name: 'bench-lock-waiters', text: LOCK_WAITERS, values: [databaseName] });
      lockWaiters += result.rows[0]?.n ?? 0;
      poolWaiting += handle.poolStats().waiting;
      samples++;
      await sleep(SAMPLE_EVERY_MS);
    }
  })();
  return async () => {
    stop = true;
    await loop;
    return samples ? { lockWaiters: lockWaiters / samples, poolWaiting: poolWaiting / samples } : null;
  };
}

interface Figures {
  seedMs: number;
  cold: { perSecond: number; cpu: number; times: number[] };
  sequential: { perSecond: number; cpu: number; times: number[]; statements: number; dbMs: number };
  direct: { perSecond: number; cpu: number; times: number[]; waits: { lockWaiters: number; poolWaiting: number } | null };
  contended: { perSecond: number; cpu: number; attempts: number; ok: number; refused: number; other: number; okTimes: number[]; refusedTimes: number[]; doubleBooked: number; waits: { lockWaiters: number; poolWaiting: number } | null };
  holdBook: { perSecond: number; cpu: number; hold: number[]; book: number[]; pair: number[]; waits: { lockWaiters: number; poolWaiting: number } | null };
  cursor: { seedMs: number; coldMs: number; totalMs: number; pages: number[]; rows: number };
}

/** A booking's request body as JSON text, made before a phase's clock starts. */
function bookingBody(slot: Slot, customerId: string): string {
  return JSON.stringify({ Unavailability: { startTime: slot.start.toISO()!, endTime: slot.end.toISO()! }, ResourceIds: [slot.resourceId], CustomerId: customerId });
}

async function bench(label: string, database: DatabaseHandle, admin: pg.Client | null, databaseName: string | null): Promise<Figures> {
  const seedStarted = performance.now();
  await migrate(database.db);
  const c = COUNTS;
  const customers = c.cold + c.warmup + c.sequential + c.direct + c.contended + c.holdBookWarmup + c.holdBook;
  const tenant = await seedTenant(database.db, customers);
  const seedMs = performance.now() - seedStarted;
  console.log(`  migrated and seeded 1 location, 1 service, ${RESOURCES} resources, ${customers} customers in ${fmt(seedMs)}`);

  const config = loadConfig({ NODE_ENV: 'test', LOG_LEVEL: 'silent', RATE_LIMITS_ENABLED: 'false' });
  const secrets = await resolveSecrets(database.db, config);
  const app = await buildApp({ config, database, secrets });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  const tokens = createTokenService(secrets, config);
  /** A machine token with write scope for a company, minted directly: the bench measures booking, not sign-in. */
  const tokenFor = async (companyId: string) => {
    const clientId = `bench-${randomUUID()}`;
    await database.db.insertInto('clientCredentials').values({ companyId, id: randomUUID(), clientId, secretHash: 'x', name: 'bench', createdByUserId: null }).execute();
    return tokens.signMachineToken({ companyId, clientId, scopes: ['write'] });
  };
  const http = httpClient(`http://127.0.0.1:${port}`, await tokenFor(tenant.companyId));
  const createPath = `/v3/appointment?LocationId=${tenant.locationId}&ServiceId=${tenant.serviceId}`;
  const holdPath = `/v3/appointment/hold?LocationId=${tenant.locationId}&ServiceId=${tenant.serviceId}`;
  const calendar = new Calendar(tenant.resourceIds);
  let customer = 0;
  const nextCustomer = () => tenant.customerIds[customer++]!;

  /**
   * Table upkeep as each database gets it in service, untimed where it can be. PostgreSQL: what
   * autovacuum does between the phases on a server that runs it (PostgreSQL's default): the tables
   * the bookings grow get their statistics and visibility map brought up to date. This machine's
   * server runs with autovacuum off, so without it the planner kept planning every booking for the
   * empty tables seedTenant analysed, and chose plans that read the whole company's busy week per
   * booking (issue 18, thirteenth pass); pgbench vacuums its tables before its run too. The embedded
   * database has no autovacuum: the server runs its own upkeep loop on it
   * (platform/database/embedded-upkeep.ts), and so does this benchmark, with the server's interval,
   * from the 16-client phase on (its passes are timed with the phases, as they would be in service).
   */
  const autovacuumsPart = async () => {
    if (database.kind === 'postgres') await sql`vacuum (analyze) appointments, appointment_resources, outbox_events`.execute(database.db);
  };
  // Started after the one-client phase, whose exchanges per booking it would otherwise add to.
  const startUpkeep = () => startEmbeddedUpkeep(database, { seconds: config.embeddedUpkeepSeconds, onError: (error) => problem(label, 'embedded upkeep', 0, String(error)) });
  let embeddedUpkeep: ReturnType<typeof startUpkeep>;

  try {
    /** Direct bookings on distinct free slots; every answer must be a 201. */
    const directRun = async (count: number, clients: number, phase: string) => {
      const slotOf = calendar.distinct(count);
      const bodies = Array.from({ length: count }, (_, k) => bookingBody(slotOf(k), nextCustomer()));
      const times: number[] = [];
      const { wall, cpu } = await runClients(count, clients, async (k) => {
        const body = bodies[k]!;
        const answer = await http('POST', createPath, body);
        if (answer.status !== 201) problem(`${label} ${phase}`, `POST ${createPath} ${body}`, answer.status, answer.text);
        times.push(answer.ms);
      });
      return { wall, cpu, times };
    };

    // The first bookings after the start, before V8 has optimised the booking path: the cold figure.
    const cold = await directRun(c.cold, CLIENTS, 'cold');
    const coldFigures = { perSecond: rate(c.cold, cold.wall), cpu: cold.cpu, times: cold.times };
    const which = 'after the start (cold)';
    console.log(`  ${label} first ${c.cold.toLocaleString('en-US')} bookings ${which}, ${CLIENTS} clients: ${coldFigures.perSecond.toFixed(0)} bookings/s, ${p50p99(cold.times)}${cpuText(cold.cpu)}`);
    await directRun(c.warmup, CLIENTS, 'warm-up');
    console.log(`  ${label} warm-up: ${c.warmup.toLocaleString('en-US')} more bookings, untimed`);
    await autovacuumsPart();

    // 1 client: the cost of one booking with nothing to wait for, and what it is made of.
    const stopInstrument = instrument();
    const sequential = await directRun(c.sequential, 1, 'direct, 1 client');
    const counted = stopInstrument();
    const seqFigures = { perSecond: rate(c.sequential, sequential.wall), cpu: sequential.cpu, times: sequential.times, statements: counted.statements / c.sequential, dbMs: counted.busyMs / c.sequential };
    console.log(
      `  ${label} direct bookings, 1 client: ${seqFigures.perSecond.toFixed(0)} bookings/s, ${p50p99(sequential.times)}  (${c.sequential} bookings; ` +
        `${seqFigures.statements.toFixed(1)} exchanges with the database and ${fmt(seqFigures.dbMs)} with one in flight per booking${cpuText(sequential.cpu)})`,
    );

    await autovacuumsPart();
    embeddedUpkeep = startUpkeep();
    const stopDirect = sampler(database, admin, databaseName);
    const direct = await directRun(c.direct, CLIENTS, `direct, ${CLIENTS} clients`);
    const directWaits = await stopDirect();
    const directFigures = { perSecond: rate(c.direct, direct.wall), cpu: direct.cpu, times: direct.times, waits: directWaits };
    console.log(`  ${label} direct bookings, ${CLIENTS} clients: ${directFigures.perSecond.toFixed(0)} bookings/s, ${p50p99(direct.times)}  (${c.direct} bookings${cpuText(direct.cpu)}${waitsText(directWaits)})`);

    // Contended: sixteen clients, four slots at a time; one attempt per slot wins, the rest are 400 BOOKING-105.
    const contended = calendar.contended(c.contended);
    const okTimes: number[] = [];
    const refusedTimes: number[] = [];
    let other = 0;
    const contendedBodies = Array.from({ length: c.contended }, (_, k) => bookingBody(contended.slotOf(k), nextCustomer()));
    await autovacuumsPart();
    const stopContended = sampler(database, admin, databaseName);
    const contendedRun = await runClients(c.contended, CLIENTS, async (k) => {
      const body = contendedBodies[k]!;
      const answer = await http('POST', createPath, body);
      const code = (answer.json as { code?: string } | null)?.code;
      if (answer.status === 201) okTimes.push(answer.ms);
      else if (answer.status === 400 && code === 'BOOKING-105') refusedTimes.push(answer.ms);
      else {
        other++;
        problem(`${label} contended`, `POST ${createPath} ${body}`, answer.status, answer.text);
      }
    });
    const contendedWaits = await stopContended();
    // No slot may hold two bookings (bookingsPerSlot is 1).
    const doubled = await sql<{ n: number }>`select count(*)::int as n from (
        select ar.resource_id, ar.start_time from appointment_resources ar
        where ar.company_id = ${tenant.companyId}::uuid and ar.status in ('IN', 'RS', 'BK')
        group by ar.resource_id, ar.start_time having count(*) > 1) as d`.execute(database.db);
    const doubleBooked = doubled.rows[0]?.n ?? 0;
    if (okTimes.length !== contended.slots) problem(`${label} contended`, 'successes', okTimes.length, `expected exactly ${contended.slots} (one per slot)`);
    if (doubleBooked > 0) problem(`${label} contended`, 'double bookings', doubleBooked, 'slots hold more than one active appointment');
    const contendedFigures = {
      perSecond: rate(c.contended, contendedRun.wall),
      cpu: contendedRun.cpu,
      attempts: c.contended,
      ok: okTimes.length,
      refused: refusedTimes.length,
      other,
      okTimes,
      refusedTimes,
      doubleBooked,
      waits: contendedWaits,
    };
    console.log(
      `  ${label} contended, ${CLIENTS} clients on ${CONTENDED_SLOTS} slots at a time: ${contendedFigures.perSecond.toFixed(0)} attempts/s; ` +
        `${okTimes.length} booked (${p50p99(okTimes)}), ${refusedTimes.length} refused 400 BOOKING-105 (${p50p99(refusedTimes)}), ${other} other; ` +
        `${doubleBooked} slots double-booked${cpuText(contendedRun.cpu)}${waitsText(contendedWaits)}`,
    );

    // Hold then book: two requests per booking.
    const holdThenBook = async (count: number, phase: string) => {
      const holdSlot = calendar.distinct(count);
      const hold: number[] = [];
      const book: number[] = [];
      const pair: number[] = [];
      const holdBodies = Array.from({ length: count }, (_, k) => bookingBody(holdSlot(k), nextCustomer()));
      const run = await runClients(count, CLIENTS, async (k) => {
        const body = holdBodies[k]!;
        const held = await http('POST', holdPath, body);
        hold.push(held.ms);
        const id = (held.json as { id?: string } | null)?.id;
        if (held.status !== 201 || !id) {
          problem(`${label} ${phase} hold`, `POST ${holdPath} ${body}`, held.status, held.text);
          return;
        }
        const booked = await http('PUT', `/v3/appointment/${id}/book`, {});
        book.push(booked.ms);
        if (booked.status !== 200 || (booked.json as { status?: string } | null)?.status !== 'BK') problem(`${label} ${phase} book`, `PUT /v3/appointment/${id}/book {}`, booked.status, booked.text);
        else pair.push(held.ms + booked.ms);
      });
      return { ...run, hold, book, pair };
    };
    // The book path (reading the hold, re-validating its stored slot, the update) is code the
    // direct bookings never ran: like them, it is measured warm, after as many untimed pairs as V8
    // needed to optimise it (300 were too few: the figure rose from about 270 to 560 bookings/s
    // over the first 3,000 pairs, issue 18 fifteenth pass). The warm-up's own rate is printed.
    const holdWarmup = await holdThenBook(c.holdBookWarmup, 'warm-up');
    console.log(`  ${label} hold then book warm-up: ${c.holdBookWarmup.toLocaleString('en-US')} pairs untimed by the figure below, at ${rate(c.holdBookWarmup, holdWarmup.wall).toFixed(0)} bookings/s`);
    await autovacuumsPart();
    const stopHold = sampler(database, admin, databaseName);
    const holdRun = await holdThenBook(c.holdBook, 'hold then book');
    const { hold, book, pair } = holdRun;
    const holdWaits = await stopHold();
    const holdFigures = { perSecond: rate(c.holdBook, holdRun.wall), cpu: holdRun.cpu, hold, book, pair, waits: holdWaits };
    console.log(
      `  ${label} hold then book, ${CLIENTS} clients: ${holdFigures.perSecond.toFixed(0)} bookings/s (${(holdFigures.perSecond * 2).toFixed(0)} requests/s); ` +
        `hold ${p50p99(hold)}, book ${p50p99(book)}, both ${p50p99(pair)}  (${c.holdBook} bookings${cpuText(holdRun.cpu)}${waitsText(holdWaits)})`,
    );

    // Cursor walk over a separate company's appointments, written straight into the database.
    const cursorTenant = await seedTenant(database.db, 0);
    const cursorSeedStarted = performance.now();
    await seedAppointments(database.db, cursorTenant, c.cursor);
    const cursorSeedMs = performance.now() - cursorSeedStarted;
    console.log(`  seeded ${c.cursor.toLocaleString('en-US')} appointments (and their resource rows) in ${fmt(cursorSeedMs)}`);
    const walker = httpClient(`http://127.0.0.1:${port}`, await tokenFor(cursorTenant.companyId));
    const walk = async (which: string) => {
      const pages: number[] = [];
      const seen = new Set<string>();
      let rows = 0;
      let previous = '';
      let path = `/v3/appointments/cursor?limit=${PAGE_LIMIT}`;
      const walkStarted = performance.now();
      for (;;) {
        const answer = await walker('GET', path);
        pages.push(answer.ms);
        if (answer.status !== 200) {
          problem(`${label} cursor`, `GET ${path}`, answer.status, answer.text);
          break;
        }
        const page = answer.json as { data: Array<{ id: string; startTime: string }>; nextCursor: string | null };
        for (const a of page.data) {
          const key = `${a.startTime} ${a.id}`;
          if (key <= previous) problem(`${label} cursor`, `GET ${path}`, 200, `out of order: ${key} after ${previous}`);
          previous = key;
          seen.add(a.id);
        }
        rows += page.data.length;
        if (!page.nextCursor) break;
        path = `/v3/appointments/cursor?cursor=${encodeURIComponent(page.nextCursor)}`;
      }
      const walkMs = performance.now() - walkStarted;
      if (rows !== c.cursor || seen.size !== c.cursor) problem(`${label} cursor`, 'walk', 200, `returned ${rows} rows, ${seen.size} distinct, expected ${c.cursor}`);
      console.log(`  ${label} cursor walk of ${rows.toLocaleString('en-US')} appointments, limit ${PAGE_LIMIT} (${which}): ${(walkMs / 1000).toFixed(2)} s, ${pages.length} pages, per page ${p50p99(pages)}`);
      return { walkMs, pages, rows };
    };
    // The first walk runs the list code cold; the second is the figure (a warm instance).
    const coldWalk = await walk('first, cold');
    const { walkMs, pages, rows } = await walk('second');

    return {
      seedMs,
      cold: coldFigures,
      sequential: seqFigures,
      direct: directFigures,
      contended: contendedFigures,
      holdBook: holdFigures,
      cursor: { seedMs: cursorSeedMs, coldMs: coldWalk.walkMs, totalMs: walkMs, pages, rows },
    };
  } finally {
    await embeddedUpkeep?.stop();
    await app.close();
  }
}

function cpuText(cpu: number): string {
  return `; Node.js process CPU (all threads) ${(cpu * 100).toFixed(0)}% of one core`;
}

function waitsText(waits: { lockWaiters: number; poolWaiting: number } | null): string {
  return waits ? `; on average ${waits.lockWaiters.toFixed(1)} sessions waiting on a lock, ${waits.poolWaiting.toFixed(1)} connection requests queued at the pool` : '';
}

function table(results: Array<[string, Figures | null]>) {
  const columns = results.filter((r): r is [string, Figures] => r[1] !== null);
  const pair = (values: number[]) => `${num(percentile(values, 50))} / ${num(percentile(values, 99))}`;
  const lines: Array<[string, (f: Figures) => string]> = [
    [`Cold: first ${COUNTS.cold.toLocaleString('en-US')} bookings after the start, ${CLIENTS} clients: bookings/s`, (f) => f.cold.perSecond.toFixed(0)],
    ['Direct, 1 client: bookings/s', (f) => f.sequential.perSecond.toFixed(0)],
    ['Direct, 1 client: p50 / p99 ms', (f) => pair(f.sequential.times)],
    ['Direct, 1 client: exchanges with the database, ms with one in flight per booking', (f) => `${f.sequential.statements.toFixed(1)}, ${num(f.sequential.dbMs)}`],
    [`Direct, ${CLIENTS} clients: bookings/s`, (f) => f.direct.perSecond.toFixed(0)],
    [`Direct, ${CLIENTS} clients: p50 / p99 ms`, (f) => pair(f.direct.times)],
    [`Direct, ${CLIENTS} clients: Node.js CPU, % of one core`, (f) => (f.direct.cpu * 100).toFixed(0)],
    [`Direct, ${CLIENTS} clients: sessions waiting on a lock / connection requests queued`, (f) => (f.direct.waits ? `${f.direct.waits.lockWaiters.toFixed(1)} / ${f.direct.waits.poolWaiting.toFixed(1)}` : '-')],
    [`Contended, ${CLIENTS} clients: attempts/s`, (f) => f.contended.perSecond.toFixed(0)],
    ['Contended: booked / refused (400) / other', (f) => `${f.contended.ok} / ${f.contended.refused} / ${f.contended.other}`],
    ['Contended: booked p50 / p99 ms', (f) => pair(f.contended.okTimes)],
    ['Contended: refused p50 / p99 ms', (f) => pair(f.contended.refusedTimes)],
    ['Contended: sessions waiting on a lock / connection requests queued', (f) => (f.contended.waits ? `${f.contended.waits.lockWaiters.toFixed(1)} / ${f.contended.waits.poolWaiting.toFixed(1)}` : '-')],
    [`Hold + book, ${CLIENTS} clients: bookings/s`, (f) => f.holdBook.perSecond.toFixed(0)],
    ['Hold p50 / p99 ms', (f) => pair(f.holdBook.hold)],
    ['Book p50 / p99 ms', (f) => pair(f.holdBook.book)],
    [`Cursor walk, ${(COUNTS.cursor / 1000).toFixed(0)}k appointments: total s`, (f) => (f.cursor.totalMs / 1000).toFixed(2)],
    ['Cursor walk, the first (cold): total s', (f) => (f.cursor.coldMs / 1000).toFixed(2)],
    ['Cursor walk: per page p50 / p99 ms', (f) => pair(f.cursor.pages)],
    [`Seeding ${(COUNTS.cursor / 1000).toFixed(0)}k appointments: s`, (f) => (f.cursor.seedMs / 1000).toFixed(2)],
  ];
  console.log(`\n| Measure | ${columns.map(([name]) => name).join(' | ')} |`);
  console.log(`|---|${columns.map(() => '---').join('|')}|`);
  for (const [name, value] of lines) console.log(`| ${name} | ${columns.map(([, f]) => value(f)).join(' | ')} |`);
}

/**
 * PostgreSQL's own yardstick on the same server, so a booking rate can be read against what the
 * server and the machine give: pgbench's TPC-B run with as many clients as the bench, in the
 * throwaway database (its tables go with it). Null, with the reason printed, without pgbench
 * (Debian's postgresql-client).
 */
async function pgbenchTps(url: string): Promise<number | null> {
  const seconds = QUICK ? 5 : 15;
  try {
    await execFileAsync('pgbench', ['-i', '-q', '-s', String(CLIENTS), url], { timeout: 120_000 });
    const { stdout } = await execFileAsync('pgbench', ['-c', String(CLIENTS), '-j', '2', '-T', String(seconds), url], { timeout: (seconds + 60) * 1000 });
    const tps = /tps = ([\d.]+) \(without initial connection time\)/.exec(stdout)?.[1];
    if (!tps) throw new Error(`no tps in its output: ${stdout.slice(-300)}`);
    return Number(tps);
  } catch (error) {
    console.log(`  pgbench: not run (${(error as Error).message.split('\n')[0]}); install it with apt-get install postgresql-client`);
    return null;
  }
}

/** Where a part run by partInOwnProcess writes its figures (set by the parent process only). */
const PART_RESULT = process.env.BENCH_PART_RESULT;

/** One database's part of the bench in a child process (this script with BENCH_ONLY), its output shown as it comes. */
async function partInOwnProcess(only: 'embedded' | 'postgres'): Promise<{ figures: Figures | null; pgbench: number | null }> {
  const folder = mkdtempSync(join(tmpdir(), 'slotwise-bench-'));
  const resultFile = join(folder, 'part.json');
  try {
    const child = spawn(process.execPath, [...process.execArgv, ...process.argv.slice(1)], {
      stdio: 'inherit',
      env: { ...process.env, BENCH_ONLY: only, BENCH_PART_RESULT: resultFile },
    });
    const code = await new Promise<number>((resolve) => {
      child.once('error', (error) => {
        problems.push(`${only} part: its process could not start (${error.message})`);
        resolve(1);
      });
      child.once('exit', (status) => resolve(status ?? 1));
    });
    if (code !== 0 || !existsSync(resultFile)) {
      problems.push(`${only} part: its process ended with status ${code}`);
      return { figures: null, pgbench: null };
    }
    const part = JSON.parse(readFileSync(resultFile, 'utf8')) as { figures: Figures | null; pgbench: number | null; problems: string[]; problemsLeftOut: boolean };
    problems.push(...part.problems);
    problemsLeftOut ||= part.problemsLeftOut;
    return part;
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

async function main() {
  const started = performance.now();
  const load = () => loadavg().map((l) => l.toFixed(1)).join(' ');
  if (!PART_RESULT) {
    console.log(
      `Booking benchmark${QUICK ? ' (BENCH_QUICK: smaller counts)' : ''}: ${RESOURCES} resources, 60-minute slots on the hour 08:00-18:00 ${ZONE}, ` +
        `${CLIENTS} concurrent clients. Requests go over HTTP to the app listening on 127.0.0.1, sent with undici request() (keep-alive; bodies serialised before the clock starts) ` +
        'from the same Node.js process; every booking names its resource and a distinct existing customer (CustomerId). ' +
        `The figures are of a warm instance: after the first ${COUNTS.cold.toLocaleString('en-US')} bookings (the cold figure) and ${COUNTS.warmup.toLocaleString('en-US')} more, untimed. ` +
        (ONLY === undefined ? 'Each database runs in a process of its own.' : `BENCH_ONLY=${ONLY}: that database only, in this process.`),
    );
    console.log(`Machine: ${availableParallelism()} cores (${cpus()[0]?.model.trim() ?? 'unknown CPU'}), Node.js ${process.version}, load average ${load()} at the start.`);
  }
  const results: Array<[string, Figures | null]> = [];
  let pgbench: number | null = null;

  if (ONLY === undefined) {
    // Each database's part in a Node.js process of its own, as a server runs one database: run in
    // one process, the PostgreSQL part ran code V8 had optimised for the embedded driver first,
    // and its cold figure was not cold (issue 18, fifteenth pass).
    for (const only of ['embedded', 'postgres'] as const) {
      const part = await partInOwnProcess(only);
      if (part.figures) results.push([only === 'embedded' ? 'Embedded' : 'PostgreSQL', part.figures]);
      if (only === 'postgres') pgbench = part.pgbench;
    }
  } else {
    if (ONLY !== 'postgres') {
      console.log('\nEmbedded database (PGlite):');
      const embedded = await openDatabase({});
      try {
        results.push(['Embedded', await bench('embedded', embedded, null, null)]);
      } finally {
        await embedded.close();
      }
    }

    pgbench = ONLY === 'embedded' ? null : await withThrowawayPostgres(async ({ url, name, admin, version, host }) => {
      console.log(`\nPostgreSQL ${version} (throwaway database ${name} on ${host}, pool of 10 connections):`);
      const server = await openDatabase({ databaseUrl: url, poolSize: 10 });
      try {
        results.push(['PostgreSQL', await bench('postgres', server, admin, name)]);
      } finally {
        await server.close();
      }
      return pgbenchTps(url);
    });
    // A part run for the parent process (partInOwnProcess): its figures go back in a file.
    if (PART_RESULT) {
      writeFileSync(PART_RESULT, JSON.stringify({ figures: results[0]?.[1] ?? null, pgbench, problems, problemsLeftOut }));
      return;
    }
  }
  if (ONLY !== 'embedded' && results.every(([name]) => name !== 'PostgreSQL')) results.push(['PostgreSQL', null]);

  table(results);
  const postgres = results.find(([name]) => name === 'PostgreSQL')?.[1];
  if (pgbench !== null && postgres) {
    console.log(
      `\npgbench (TPC-B, ${CLIENTS} clients, same server, right after): ${pgbench.toFixed(0)} transactions/s; ` +
        `direct bookings with ${CLIENTS} clients are ${(postgres.direct.perSecond / pgbench).toFixed(3)} × that.`,
    );
  }
  console.log(`\nWhole run: ${((performance.now() - started) / 1000).toFixed(0)} s; load average ${load()} at the end.`);
  if (problems.length > 0) {
    console.log(`\nUnexpected answers (${problems.length}${problemsLeftOut ? ' shown, more left out' : ''}):`);
    for (const p of problems) console.log(`  ${p}`);
    process.exitCode = 1;
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().catch((error) => {
    console.error(error);
    process.exit(1);
  });
}
