/**
 * npm run bench:availability
 *
 * Seeds one company with 50 resources, 20,000 appointments and 200 recurring blocks, then prints
 * p50 and p99 latency of (a) the engine alone and (b) GET /v3/availability over HTTP, for 1-day,
 * 7-day and 31-day searches, on the embedded database and on PostgreSQL (BENCH_DATABASE_URL,
 * else DATABASE_URL, default the local server; skipped when it cannot be reached). HTTP figures are given with the
 * cache off (every search computed) and on (repeated searches). The external calendar case adds
 * 500 busy intervals read from each resource's external calendar (issue 15) and searches again.
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { DateTime } from 'luxon';
import pg from 'pg';
import { sql } from 'kysely';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/platform/config.js';
import { openDatabase } from '../src/platform/database/index.js';
import type { DatabaseHandle } from '../src/platform/database/index.js';
import { migrate } from '../src/platform/database/migrate.js';
import { resolveSecrets } from '../src/platform/secrets.js';
import { computeAvailability } from '../src/domain/availability.js';
import type { ActiveAppointment, AvailabilityInput, BusyInterval } from '../src/domain/availability.js';
import { recurrenceIntervals } from '../src/domain/recurrence.js';
import type { RecurrenceRule } from '../src/domain/recurrence.js';

const RESOURCES = 50;
const APPOINTMENTS = 20_000;
const RECURRING_BLOCKS = 200;
/** The external calendar case: busy intervals read from each resource's calendar. */
const EXTERNAL_PER_RESOURCE = 500;
const ZONE = 'America/New_York';
const SPANS = [1, 7, 31];
const WEEKLY = Object.fromEntries(['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'].map((d) => [d, [{ start: '08:00', end: '18:00' }]]));

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}
const fmt = (ms: number) => `${ms.toFixed(ms < 10 ? 2 : 1)} ms`;

interface Seed {
  companyId: string;
  locationId: string;
  serviceId: string;
  resourceIds: string[];
  appointments: Array<{ id: string; resourceId: string; start: Date; end: Date }>;
  rules: Array<RecurrenceRule & { id: string; resourceId: string }>;
  /** 500 per resource over the 80 days (about six a day), 45 minutes each. */
  external: Array<{ resourceId: string; key: string; start: Date; end: Date }>;
  firstDate: string;
}

/** The data, generated once and written to each database, so every run searches the same rows. */
export function generate(): Omit<Seed, 'companyId'> {
  const locationId = randomUUID();
  const serviceId = randomUUID();
  const resourceIds = Array.from({ length: RESOURCES }, () => randomUUID());
  const firstDate = DateTime.now().setZone(ZONE).plus({ days: 1 }).toISODate()!;
  const base = DateTime.fromISO(firstDate, { zone: ZONE });
  const appointments: Seed['appointments'] = [];
  // 20,000 appointments over 80 days: 5 a day per resource, on the half hour between 08:00 and 18:00.
  for (let i = 0; i < APPOINTMENTS; i++) {
    const resourceIndex = i % RESOURCES;
    const day = Math.floor(i / RESOURCES / 5);
    const slot = (i * 7 + resourceIndex) % 20;
    const start = base.plus({ days: day, hours: 8, minutes: slot * 30 });
    appointments.push({ id: randomUUID(), resourceId: resourceIds[resourceIndex]!, start: start.toJSDate(), end: start.plus({ minutes: 30 }).toJSDate() });
  }
  const external: Seed['external'] = [];
  for (const [r, resourceId] of resourceIds.entries()) {
    for (let i = 0; i < EXTERNAL_PER_RESOURCE; i++) {
      const start = base.plus({ days: Math.floor((i * 80) / EXTERNAL_PER_RESOURCE), hours: 8, minutes: ((i * 97 + r * 13) % 40) * 15 });
      external.push({ resourceId, key: `event-${i}`, start: start.toJSDate(), end: start.plus({ minutes: 45 }).toJSDate() });
    }
  }
  const rules: Seed['rules'] = [];
  for (let i = 0; i < RECURRING_BLOCKS; i++) {
    rules.push({
      id: randomUUID(),
      resourceId: resourceIds[i % RESOURCES]!,
      frequency: 'WEEKLY',
      interval: 1,
      startDate: firstDate,
      endDate: null,
      startTime: `${String(12 + (i % 3)).padStart(2, '0')}:00`,
      endTime: `${String(13 + (i % 3)).padStart(2, '0')}:00`,
      iana: i % 2 ? ZONE : 'Europe/London',
      weekdays: [i % 7],
      dayOfMonth: null,
    });
  }
  return { locationId, serviceId, resourceIds, appointments, rules, external, firstDate };
}

export async function seed(database: DatabaseHandle, data: Omit<Seed, 'companyId'>): Promise<Seed> {
  const db = database.db;
  const companyId = randomUUID();
  await db.insertInto('companies').values({ id: companyId, name: `Bench ${companyId}`, apiKeyHash: randomUUID(), apiKeyPrefix: 'bench', publicClientId: randomUUID() }).execute();
  await db.insertInto('locations').values({ companyId, id: data.locationId, name: 'Bench', timezoneName: ZONE, weeklyAvailability: JSON.stringify(WEEKLY) }).execute();
  await db.insertInto('services').values({ companyId, id: data.serviceId, name: 'Bench service', duration: 30, bookingInterval: 15, padding: 5 }).execute();
  await db.insertInto('serviceLocations').values({ companyId, serviceId: data.serviceId, locationId: data.locationId }).execute();
  await db.insertInto('resources').values(data.resourceIds.map((id, i) => ({ companyId, id, name: `Resource ${i}` }))).execute();
  await db.insertInto('resourceLocations').values(data.resourceIds.map((resourceId) => ({ companyId, resourceId, locationId: data.locationId }))).execute();
  await db.insertInto('resourceServices').values(data.resourceIds.map((resourceId) => ({ companyId, resourceId, serviceId: data.serviceId }))).execute();
  // One statement each, from arrays: far faster than row-by-row values on either driver.
  const ids = data.appointments.map((a) => a.id);
  const starts = data.appointments.map((a) => a.start.toISOString());
  const ends = data.appointments.map((a) => a.end.toISOString());
  const resourceIds = data.appointments.map((a) => a.resourceId);
  // resource_ids: the copy on the appointment that the application writes with it (migrations/0017).
  await sql`insert into appointments (company_id, id, location_id, service_id, status, start_time, end_time, duration, padding, resource_ids)
    select ${companyId}::uuid, u.id, ${data.locationId}::uuid, ${data.serviceId}::uuid, 'BK', u.s, u.e, 30, 5, array[u.r]
    from unnest(${ids}::uuid[], ${starts}::timestamptz[], ${ends}::timestamptz[], ${resourceIds}::uuid[]) as u(id, s, e, r)`.execute(db);
  await sql`insert into appointment_resources (company_id, appointment_id, resource_id, start_time, end_time, status, service_id, duration, padding)
    select ${companyId}::uuid, u.id, u.r, u.s, u.e, 'BK', ${data.serviceId}::uuid, 30, 5
    from unnest(${ids}::uuid[], ${resourceIds}::uuid[], ${starts}::timestamptz[], ${ends}::timestamptz[]) as u(id, r, s, e)`.execute(db);
  await db
    .insertInto('recurringBlocks')
    .values(data.rules.map((r) => ({ companyId, id: r.id, name: 'Lunch', frequency: r.frequency, interval: r.interval, startDate: r.startDate, endDate: null, startTime: r.startTime, endTime: r.endTime, iana: r.iana, weekdays: r.weekdays ?? [], dayOfMonth: null, resourceId: r.resourceId })))
    .execute();
  // Statistics of every seeded table, as autovacuum keeps them on a production server (and
  // docs/operations.md asks it to stay on). Without them (a server with autovacuum off, as this
  // benchmark's machine has) the catalog read joined the 50 resources to their links by nested
  // loops, 1,225 pairs rejected per join, in 0.32 ms instead of 0.09.
  await sql`analyze`.execute(db);
  await db.selectFrom('appointments').select('id').limit(1).execute();
  return { ...data, companyId };
}

/** Adds the external calendar case: a connection and calendar per resource, and their busy intervals. */
async function seedExternal(database: DatabaseHandle, seeded: Seed): Promise<void> {
  const db = database.db;
  const { companyId } = seeded;
  const connectionOf = new Map(seeded.resourceIds.map((resourceId) => [resourceId, randomUUID()]));
  await db
    .insertInto('externalCalendarConnections')
    .values(seeded.resourceIds.map((resourceId) => ({ companyId, id: connectionOf.get(resourceId)!, resourceId, provider: 'google' as const, status: 'connected' as const })))
    .execute();
  await db
    .insertInto('externalCalendars')
    .values(seeded.resourceIds.map((resourceId) => ({ companyId, connectionId: connectionOf.get(resourceId)!, calendarId: 'primary', name: 'Primary', syncCursor: null })))
    .execute();
  const rows = seeded.external;
  await sql`insert into external_busy_intervals (company_id, connection_id, calendar_id, event_key, resource_id, start_time, end_time, transparency, event_type)
    select ${companyId}::uuid, u.c, 'primary', u.k, u.r, u.s, u.e, 'opaque', 'default'
    from unnest(${rows.map((r) => connectionOf.get(r.resourceId)!)}::uuid[], ${rows.map((r) => r.key)}::text[], ${rows.map((r) => r.resourceId)}::uuid[],
      ${rows.map((r) => r.start.toISOString())}::timestamptz[], ${rows.map((r) => r.end.toISOString())}::timestamptz[]) as u(c, k, r, s, e)`.execute(db);
  await sql`analyze external_busy_intervals`.execute(db);
}

/** The engine alone, on inputs built in memory from the same data. */
export function engineInput(data: Omit<Seed, 'companyId'>, span: number, withExternal = false): AvailabilityInput {
  const endDate = DateTime.fromISO(data.firstDate).plus({ days: span - 1 }).toISODate()!;
  const from = DateTime.fromISO(data.firstDate, { zone: ZONE }).minus({ days: 1 });
  const to = DateTime.fromISO(endDate, { zone: ZONE }).plus({ days: 2 });
  const busy: BusyInterval[] = [];
  for (const rule of data.rules) for (const o of recurrenceIntervals(rule, from.toMillis(), to.toMillis())) busy.push({ resourceId: rule.resourceId, start: o.start, end: o.end });
  if (withExternal) {
    for (const e of data.external) {
      if (e.start.getTime() < to.toMillis() && e.end.getTime() > from.toMillis()) busy.push({ resourceId: e.resourceId, start: e.start.getTime(), end: e.end.getTime(), external: true });
    }
  }
  const appointments: ActiveAppointment[] = data.appointments
    .filter((a) => a.start.getTime() < to.toMillis() && a.end.getTime() > from.toMillis())
    .map((a) => ({ id: a.id, serviceId: 'svc', resourceIds: [a.resourceId], padding: 5, start: a.start.getTime(), end: a.end.getTime() }));
  return {
    now: Date.now(),
    timezoneName: ZONE,
    locationWeekly: WEEKLY,
    service: {
      id: 'svc', duration: 30, availabilityType: 'schedule', weeklyAvailability: null, bookInAdvance: 0, bookAheadUnit: 'none', bookAheadValue: null,
      bookingInterval: 15, padding: 5, bookingsPerSlot: 1, dailyBookingLimitCount: 0, dailyBookingLimitMinutes: 0, bookingLimit: 0, maxBookingLimit: 0,
      maxResourceBookingLimit: 0, allowPaddingOverflow: false,
    },
    resources: data.resourceIds.map((id) => ({ id, timezoneName: null, weeklyAvailability: null, bookingLimit: 0 })),
    startDate: data.firstDate,
    endDate,
    duration: 30,
    roundRobin: 'NONE',
    busy,
    appointments,
    dailyUsage: {},
  };
}

function measure(iterations: number, run: () => void): number[] {
  const times: number[] = [];
  for (let i = 0; i < iterations; i++) {
    const t = performance.now();
    run();
    times.push(performance.now() - t);
  }
  return times;
}

async function measureAsync(iterations: number, run: (i: number) => Promise<void>): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < iterations; i++) {
    const t = performance.now();
    await run(i);
    times.push(performance.now() - t);
  }
  return times;
}

/**
 * Timed searches per span: computed, and cached (ten times as many: each takes a millisecond or
 * two, and 30 samples after one warm-up let a few slow first calls move the p50). Each series
 * starts after WARM_UP untimed searches, so the figures are of a warmed process, as a server's are.
 */
const ITERATIONS: Record<number, number> = { 1: 100, 7: 60, 31: 24 };
/** The engine alone takes a few milliseconds at most: more samples for a steadier p50. */
const ENGINE_ITERATIONS: Record<number, number> = { 1: 400, 7: 200, 31: 100 };
const CACHED_ITERATIONS: Record<number, number> = { 1: 600, 7: 300, 31: 120 };
const WARM_UP = 10;

async function httpBench(label: string, database: DatabaseHandle, data: Omit<Seed, 'companyId'>) {
  await migrate(database.db);
  const t = performance.now();
  const seeded = await seed(database, data);
  console.log(`  seeded ${RESOURCES} resources, ${APPOINTMENTS} appointments, ${RECURRING_BLOCKS} recurring blocks in ${fmt(performance.now() - t)}`);
  for (const cache of [false, true]) {
    const config = loadConfig({ NODE_ENV: 'test', LOG_LEVEL: 'silent', AVAILABILITY_CACHE: String(cache), RATE_LIMITS_ENABLED: 'false' });
    const secrets = await resolveSecrets(database.db, config);
    const app = await buildApp({ config, database, secrets });
    await app.listen({ port: 0, host: '127.0.0.1' });
    const address = app.server.address();
    const port = typeof address === 'object' && address ? address.port : 0;
    // A machine token for the seeded company, minted directly: the bench measures the search.
    const clientId = `bench-${randomUUID()}`;
    await database.db.insertInto('clientCredentials').values({ companyId: seeded.companyId, id: randomUUID(), clientId, secretHash: 'x', name: 'bench', createdByUserId: null }).execute();
    const { createTokenService } = await import('../src/platform/auth/tokens.js');
    const token = await createTokenService(secrets, config).signMachineToken({ companyId: seeded.companyId, clientId, scopes: ['read'] });
    /** Times the span's searches of `span` days (after WARM_UP untimed ones). */
    // Uncompressed unless asked: a cached answer goes to a client that accepts gzip as gzip bytes.
    const timeSearches = async (span: number, extra = '', acceptEncoding = 'identity') => {
      const endDate = DateTime.fromISO(data.firstDate).plus({ days: span - 1 }).toISODate()!;
      const url = `http://127.0.0.1:${port}/v3/availability?LocationId=${data.locationId}&ServiceId=${data.serviceId}&startDate=${data.firstDate}&endDate=${endDate}${extra}`;
      const get = async () => {
        const response = await fetch(url, { headers: { authorization: `Bearer ${token}`, 'accept-encoding': acceptEncoding } });
        if (response.status !== 200) throw new Error(`${response.status} ${await response.text()}`);
        await response.arrayBuffer();
      };
      for (let i = 0; i < WARM_UP; i++) await get();
      return measureAsync((cache ? CACHED_ITERATIONS : ITERATIONS)[span]!, get);
    };
    for (const span of SPANS) {
      const times = await timeSearches(span);
      console.log(`  ${label} HTTP ${String(span).padStart(2)}-day search, cache ${cache ? 'on ' : 'off'}: p50 ${fmt(percentile(times, 50))}, p99 ${fmt(percentile(times, 99))}  (${times.length} requests)`);
    }
    if (cache) {
      // The client accepts gzip (fetch decompresses the answer): the stored bytes are sent as they are.
      for (const span of SPANS) {
        const times = await timeSearches(span, '', 'gzip');
        console.log(`  ${label} HTTP ${String(span).padStart(2)}-day search, cache on , gzip: p50 ${fmt(percentile(times, 50))}, p99 ${fmt(percentile(times, 99))}  (${times.length} requests)`);
      }
    }
    if (!cache) {
      // The compact answer (format=compact): each resource id once instead of up to 50 per slot.
      for (const span of [7, 31]) {
        const times = await timeSearches(span, '&format=compact');
        console.log(`  ${label} HTTP ${String(span).padStart(2)}-day search, cache off, format=compact: p50 ${fmt(percentile(times, 50))}, p99 ${fmt(percentile(times, 99))}`);
      }
      // The same searches once every resource also has EXTERNAL_PER_RESOURCE external busy intervals.
      await seedExternal(database, seeded);
      for (const span of [7, 31]) {
        const times = await timeSearches(span);
        console.log(`  ${label} HTTP ${String(span).padStart(2)}-day search, cache off, + ${EXTERNAL_PER_RESOURCE} external busy intervals per resource: p50 ${fmt(percentile(times, 50))}, p99 ${fmt(percentile(times, 99))}`);
      }
      await database.db.deleteFrom('externalCalendarConnections').where('companyId', '=', seeded.companyId).execute();
    }
    await app.close();
  }
}

async function main() {
  const data = generate();
  console.log(`Availability benchmark: ${RESOURCES} resources, ${APPOINTMENTS} appointments, ${RECURRING_BLOCKS} recurring blocks, 30-minute slots every 15 minutes, ${ZONE}`);

  console.log('\nEngine alone (inputs in memory):');
  // The first call in a fresh process: nothing compiled by the JIT yet, the zone's rules not cached.
  const coldInput = engineInput(data, 31);
  const coldStarted = performance.now();
  computeAvailability(coldInput);
  console.log(`  engine 31-day search, the process's first call (cold): ${fmt(performance.now() - coldStarted)}`);
  // Each series after WARM_UP untimed searches, as the HTTP series: with one, the 31-day p50 was
  // about a tenth higher, taken while V8 was still optimising (issue 18).
  for (const span of SPANS) {
    const input = engineInput(data, span);
    for (let i = 0; i < WARM_UP; i++) computeAvailability(input);
    const times = measure(ENGINE_ITERATIONS[span]!, () => computeAvailability(input));
    const slots = computeAvailability(input).availableTimes.length;
    console.log(`  engine ${String(span).padStart(2)}-day search: p50 ${fmt(percentile(times, 50))}, p99 ${fmt(percentile(times, 99))}  (${slots} slot times)`);
  }
  for (const span of [7, 31]) {
    const input = engineInput(data, span, true);
    for (let i = 0; i < WARM_UP; i++) computeAvailability(input);
    const times = measure(ENGINE_ITERATIONS[span]!, () => computeAvailability(input));
    console.log(`  engine ${String(span).padStart(2)}-day search, + ${EXTERNAL_PER_RESOURCE} external busy intervals per resource: p50 ${fmt(percentile(times, 50))}, p99 ${fmt(percentile(times, 99))}`);
  }

  console.log('\nEmbedded database (PGlite):');
  const embedded = await openDatabase({});
  await httpBench('embedded', embedded, data);
  await embedded.close();

  const serverUrl = process.env.BENCH_DATABASE_URL || process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
  const name = `slotwise_bench_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  try {
    await admin.connect();
  } catch (error) {
    console.log(`\nPostgreSQL: skipped (${(error as Error).message}); set BENCH_DATABASE_URL`);
    return;
  }
  await admin.query(`create database ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  try {
    console.log('\nPostgreSQL:');
    const server = await openDatabase({ databaseUrl: url.toString(), poolSize: 10 });
    await httpBench('postgres', server, data);
    await server.close();
  } finally {
    await admin.query(`drop database if exists ${name} with (force)`);
    await admin.end();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().catch((error) => {
    console.error(error);
    process.exit(1);
  });
}
