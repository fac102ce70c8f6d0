/**
 * npm run bench:migration            (MIGRATION_BENCH_SCALE=0.05 npm run bench:migration: a small run, to check it works)
 *
 * Times the v1 importer (issue 16) on a generated v1 export of 50 locations (New York, London,
 * Kolkata, Los Angeles, Sydney), 200 services (type 1 and 2, four per location), 500 resources
 * (one location each, three of its services), 20,000 service allocations (weekly repeats on one to
 * three weekdays, one in ten a single future date), 5,000 weekly resource blocks, 50,000 customers
 * and 100,000 appointments over the next 90 days (BK, some RS and CN), every count times
 * MIGRATION_BENCH_SCALE (default 1).
 *
 * The document is built first (not timed). Then the whole import goes through the HTTP route, as a
 * dashboard Owner of a company made for the run: POST /v3/migration/sync with
 * `Prefer: respond-async` (202, a job), then GET /v3/migration/jobs/:id every 500 ms until the job
 * ends, with a progress line per poll on stderr. It prints the total time, records per second, the
 * time each kind took (from the polls: when its processed count reached its total, so ±0.5 s),
 * peak RSS and V8 heap (of this whole process: bench, app and, when used, the embedded database),
 * the report's counts and failures; then a second run of the same document (everything skipped)
 * and its time.
 *
 * Embedded database, then PostgreSQL: BENCH_DATABASE_URL, else DATABASE_URL, else
 * postgres://postgres@127.0.0.1:5432/test, on a throwaway database created and dropped as
 * bench:booking does (skipped when the server cannot be reached). MIGRATION_BENCH_DATABASE=embedded
 * or =postgres runs only that one.
 */
import { availableParallelism, cpus, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { DateTime } from 'luxon';
import { sql } from 'kysely';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/platform/config.js';
import { openDatabase } from '../src/platform/database/index.js';
import type { DatabaseHandle } from '../src/platform/database/index.js';
import { migrate } from '../src/platform/database/migrate.js';
import { resolveSecrets } from '../src/platform/secrets.js';
import type { App } from '../src/platform/http/types.js';
import { MIGRATION_KINDS } from '../src/domain/migration/plan.js';
import type { MigrationKind } from '../src/domain/migration/plan.js';
import type { MigrationJobView } from '../src/modules/migration/jobs.js';
import type { V1Appointment, V1Customer, V1Location, V1Resource, V1ResourceBlock, V1Service, V1ServiceAllocation, V1WeeklyHours } from '../src/domain/migration/v1.js';
import { createWorld } from '../test/helpers/world.js';
import { withThrowawayPostgres } from './throwaway-postgres.js';

function readScale(): number {
  const raw = process.env.MIGRATION_BENCH_SCALE;
  if (raw === undefined || raw === '') return 1;
  const scale = Number(raw);
  if (!Number.isFinite(scale) || scale <= 0) throw new Error(`MIGRATION_BENCH_SCALE must be a positive number, not ${JSON.stringify(raw)}`);
  return scale;
}
const SCALE = readScale();
const ONLY = (process.env.MIGRATION_BENCH_DATABASE ?? '').toLowerCase();
if (ONLY && ONLY !== 'embedded' && ONLY !== 'postgres') throw new Error('MIGRATION_BENCH_DATABASE must be embedded or postgres (unset: both)');

const FULL = { locations: 50, services: 200, resources: 500, allocations: 20_000, resourceBlocks: 5_000, customers: 50_000, appointments: 100_000 };
const scaled = (n: number) => Math.max(1, Math.round(n * SCALE));
const LOCATIONS = scaled(FULL.locations);
const COUNTS = {
  locations: LOCATIONS,
  // At least one service and one resource per location, so every appointment has both.
  services: Math.max(LOCATIONS, scaled(FULL.services)),
  resources: Math.max(LOCATIONS, scaled(FULL.resources)),
  allocations: scaled(FULL.allocations),
  resourceBlocks: scaled(FULL.resourceBlocks),
  customers: scaled(FULL.customers),
  appointments: scaled(FULL.appointments),
};
const POLL_MS = 500;
/** Appointments fall on the next 90 days, from tomorrow (today's may already be past). */
const DAYS_AHEAD = 90;

const ZONES = [
  { iana: 'America/New_York', windows: 'Eastern Standard Time', city: 'Boston', state: 'MA', postalCode: '02110', country: 'US' },
  { iana: 'Europe/London', windows: 'GMT Standard Time', city: 'London', state: '', postalCode: 'SW1A 1AA', country: 'GB' },
  { iana: 'Asia/Kolkata', windows: 'India Standard Time', city: 'Mumbai', state: 'MH', postalCode: '400001', country: 'IN' },
  { iana: 'America/Los_Angeles', windows: 'Pacific Standard Time', city: 'Los Angeles', state: 'CA', postalCode: '90012', country: 'US' },
  { iana: 'Australia/Sydney', windows: 'AUS Eastern Standard Time', city: 'Sydney', state: 'NSW', postalCode: '2000', country: 'AU' },
];

const fmtS = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const int = (n: number) => n.toLocaleString('en-US');
const mb = (bytes: number) => `${(bytes / 1_000_000).toFixed(0)} MB`;

// --- The v1 export (shared/spec/v1-source.md §4-§6, shaped like V1_EXAMPLE_EXPORT in test/helpers/v1-stand-in.ts) ---

/** Military HHMM (v1-source.md §4) of a number of minutes after midnight. */
const hhmm = (minutes: number) => Math.floor(minutes / 60) * 100 + (minutes % 60);

function hours(open: number, close: number, days: string[]): V1WeeklyHours {
  return Object.fromEntries(['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'].map((d) => [d, days.includes(d) ? { startTime: open, endTime: close } : { startTime: 0, endTime: 0 }]));
}
const WEEKDAYS = ['mon', 'tue', 'wed', 'thu', 'fri'];
const SIX_DAYS = [...WEEKDAYS, 'sat'];

/** Each day ahead of a location: its local date, Sunday-based weekday, and noon as an instant with its offset. */
interface LocalDay {
  date: string;
  weekday: number;
  noonMs: number;
  offset: string;
}

/**
 * The days ahead in `zone`. Times are written from noon's offset: every time used here falls
 * between 06:00 and 22:00, and no zone used changes its offset in those hours.
 */
function daysAhead(zone: string): LocalDay[] {
  const today = DateTime.now().setZone(zone).startOf('day');
  return Array.from({ length: DAYS_AHEAD + 1 }, (_, d) => {
    const noon = today.plus({ days: d }).set({ hour: 12 });
    return { date: noon.toISODate()!, weekday: noon.weekday % 7, noonMs: noon.toMillis(), offset: noon.toFormat('ZZ') };
  });
}

/** A local wall time of a day: with the day's offset, or (`utc`) as the instant in UTC with "Z". */
function dateTime(day: LocalDay, minutes: number, utc: boolean): string {
  if (utc) return new Date(day.noonMs + (minutes - 720) * 60_000).toISOString().replace('.000Z', 'Z');
  return `${day.date}T${String(Math.floor(minutes / 60)).padStart(2, '0')}:${String(minutes % 60).padStart(2, '0')}:00${day.offset}`;
}

/** Weekday groups of one allocation scope's grid: an allocation takes one group at one half hour. */
const WEEKDAY_GROUPS = ['135', '24', '60'];

interface V1Document {
  locations: V1Location[];
  services: V1Service[];
  resources: V1Resource[];
  serviceAllocations: V1ServiceAllocation[];
  resourceAllocations: never[];
  resourceBlocks: V1ResourceBlock[];
  customers: V1Customer[];
  appointments: V1Appointment[];
}

/** What the document should become (the importer counts allocations as v3 rows: one per weekday or date). */
interface Expected {
  weeklyRows: number;
  singleRows: number;
}

export function buildDocument(): { document: V1Document; expected: Expected } {
  const L = COUNTS.locations;
  const locationId = (l: number) => String(100 + l);
  const serviceId = (s: number) => String(1000 + s);
  const resourceId = (r: number) => 10_000 + r;
  const customerId = (c: number) => String(1_000_000 + c);
  const zoneOf = (l: number) => ZONES[l % ZONES.length]!;
  const days = Array.from({ length: L }, (_, l) => daysAhead(zoneOf(l).iana));

  // Service s is at location s mod L; the k-th service of a location is type 1 when k is even, 2 when odd.
  const servicesAt: number[][] = Array.from({ length: L }, () => []);
  for (let s = 0; s < COUNTS.services; s++) servicesAt[s % L]!.push(s);
  const isEvent = (s: number) => Math.floor(s / L) % 2 === 1;
  const durationOf = (s: number) => (isEvent(s) ? 60 : [30, 45, 60][Math.floor(s / L / 2) % 3]!);

  const locations: V1Location[] = Array.from({ length: L }, (_, l) => {
    const zone = zoneOf(l);
    return {
      object: 'location', id: locationId(l), name: `Studio ${l + 1} ${zone.city}`, primaryBusiness: l === 0,
      email: `front-${l}@studio.example`, phone: `61755${String(l).padStart(5, '0')}`,
      address: { addressLine1: `${10 + l} Main St`, addressLine2: '', city: zone.city, state: zone.state, postalCode: zone.postalCode, country: zone.country },
      timezoneIana: zone.iana, timezoneId: zone.windows, timezoneOffset: null,
      businessHours: Object.fromEntries(['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'].map((d) => [d, { startTime: d === 'sun' ? 900 : 600, endTime: d === 'sun' ? 1700 : 2200, isOpen: true, is24Hours: false }])),
      businessHolidays: [{ id: '1', holidayName: 'Christmas Day', businessClosed: true }],
      // A non-empty list offers exactly these (an empty one would offer every service of the company).
      services: servicesAt[l]!.map((s, k) => ({ object: 'locationService', id: String(k + 1), serviceId: Number(serviceId(s)), serviceName: `Service ${s}` })),
      settings: { bookAheadUnit: 2, bookAheadValue: 12, bookInAdvance: 60, bookingTimerMins: 10 },
    } as V1Location;
  });

  const services: V1Service[] = Array.from({ length: COUNTS.services }, (_, s) => {
    const event = isEvent(s);
    return {
      object: 'service', id: serviceId(s), companyId: '5', locationId: locationId(s % L), type: event ? '2' : s % 3 === 0 ? 1 : '1',
      name: event ? `Group class ${s}` : `Session ${s}`, description: event ? 'Group class' : 'One-to-one session', duration: durationOf(s),
      durationSelect: false, durationMin: 0, durationMax: 0, durationInterval: 0,
      bookingInterval: event ? 60 : 15, padding: event ? 0 : 5, consumerPadding: false, maxCapacity: event ? 8 : 1, maxGroupSize: 1,
      bookAheadUnit: 2, bookAheadValue: 12, bookInAdvance: event ? 0 : 120,
      bookingLimit: event ? 0 : 2, maxBookingLimit: 0, maxResourceBookingLimit: 0, dailyBookingLimitCount: 0, dailyBookingLimitMinutes: 0,
      feeAmount: event ? 15 : 80, feeTaxable: !event, cancellationFeeAmount: event ? 0 : 20, cancellationFeeTaxable: false, nonRefundable: event,
      roundRobin: event ? 0 : 2, imageUrl: '', showOnline: true, defaultService: false, mediaPageUrl: '',
      calendarId: '40', calendarResourceGroupId: '', serviceGroupId: event ? 7 : null, serviceGroupName: event ? 'Classes' : '',
      availability: event ? hours(600, 2200, [...SIX_DAYS, 'sun']) : hours(800, 2000, SIX_DAYS),
    } as V1Service;
  });

  // Resource r is at location r mod L and offers every service there but one (three of four).
  const resourceServices: number[][] = [];
  const resourcesAt: number[][] = Array.from({ length: L }, () => []);
  const resources: V1Resource[] = Array.from({ length: COUNTS.resources }, (_, r) => {
    const l = r % L;
    const here = servicesAt[l]!;
    const left = here.length > 3 ? Math.floor(r / L) % here.length : -1;
    const offered = here.filter((_, k) => k !== left);
    resourceServices.push(offered);
    resourcesAt[l]!.push(r);
    const zone = zoneOf(l);
    return {
      object: 'resource', id: String(resourceId(r)), locationId: locationId(l), name: `Resource ${r}`, email: `resource-${r}@studio.example`, groupId: null,
      timezoneIana: zone.iana, timezoneId: zone.windows, timezoneOffset: null, calendarAvailability: 0, notificationType: 1, deletedStatus: false,
      services: offered.map((s) => ({ object: 'service', serviceId: Number(serviceId(s)), serviceName: `Service ${s}` })),
      customFields: r % 4 === 0 ? { field1: 'Senior' } : {},
      availability: hours(800, 1800, WEEKDAYS),
    } as V1Resource;
  });

  // Allocation scopes: each resource with each of its event services, and each event service alone.
  const scopes: Array<{ l: number; s: number; r: number | null }> = [];
  for (let r = 0; r < COUNTS.resources; r++) for (const s of resourceServices[r]!) if (isEvent(s)) scopes.push({ l: r % L, s, r });
  for (let s = 0; s < COUNTS.services; s++) if (isEvent(s)) scopes.push({ l: s % L, s, r: null });
  if (!scopes.length) for (let s = 0; s < COUNTS.services; s++) scopes.push({ l: s % L, s, r: null });
  // Allocation i is the k-th of scope i mod n. The k-th takes weekday group k mod 3 at half hour
  // floor(k / 3) from 06:00, so no two windows of one scope meet on a day.
  let weeklyRows = 0;
  let singleRows = 0;
  const serviceAllocations: V1ServiceAllocation[] = Array.from({ length: COUNTS.allocations }, (_, i) => {
    const scope = scopes[i % scopes.length]!;
    const k = Math.floor(i / scopes.length);
    const slot = Math.floor(k / WEEKDAY_GROUPS.length);
    if (slot >= 32) throw new Error(`too many allocations per scope (${k + 1}); add services or resources`);
    const group = WEEKDAY_GROUPS[k % WEEKDAY_GROUPS.length]!;
    const start = 360 + slot * 30;
    const base = {
      object: 'serviceAllocation', id: String(200_000 + i), serviceId: serviceId(scope.s), locationId: locationId(scope.l),
      resourceId: scope.r === null ? '' : String(resourceId(scope.r)), startTime: hhmm(start), endTime: hhmm(start + 30),
      reason: `Class ${i}`, bookingLimit: i % 2 ? 0 : 6, bookingCount: 0, serviceName: `Group class ${scope.s}`, serviceDuration: 60,
      resourceName: scope.r === null ? '' : `Resource ${scope.r}`, timezoneName: zoneOf(scope.l).iana, timezoneOffset: null,
    };
    if (i % 10 === 9) {
      // One future date on a weekday of its group.
      const localDays = days[scope.l]!;
      let d = 1 + (i % 60);
      while (!group.includes(String(localDays[d]!.weekday))) d++;
      singleRows++;
      return { ...base, startDate: localDays[d]!.date, endDate: localDays[d]!.date, repeats: false, repeat: { frequency: '', interval: 0, weekdays: '', monthDay: '', monthType: '' } };
    }
    const weekdays = group.slice(0, 1 + (i % group.length));
    weeklyRows += weekdays.length;
    return { ...base, startDate: '2025-01-07', endDate: '9999-12-31', repeats: true, repeat: { frequency: 'W', interval: 1, weekdays, monthDay: '', monthType: '' } };
  });

  const BLOCKS = [
    { reason: 'Lunch break', start: 1200, end: 1300, weekdays: '12345' },
    { reason: 'Team meeting', start: 900, end: 1000, weekdays: '1' },
    { reason: 'Admin time', start: 1600, end: 1700, weekdays: '35' },
    { reason: 'Training', start: 1400, end: 1530, weekdays: '24' },
    { reason: 'Weekend off', start: 0, end: 2400, weekdays: '06' },
  ];
  const resourceBlocks: V1ResourceBlock[] = Array.from({ length: COUNTS.resourceBlocks }, (_, b) => {
    const r = b % COUNTS.resources;
    const kind = BLOCKS[Math.floor(b / COUNTS.resources) % BLOCKS.length]!;
    const ends = b % 4 === 3;
    return {
      object: 'resourceBlock', id: 300_000 + b, resourceId: resourceId(r), businessId: Number(locationId(r % L)),
      startDate: '2025-01-06T00:00:00', endDate: ends ? `${days[r % L]![DAYS_AHEAD]!.date}T00:00:00` : '9999-12-31T00:00:00',
      startTime: kind.start, endTime: kind.end, reason: kind.reason, repeats: true,
      repeat: { frequency: 'W', interval: 1, weekdays: kind.weekdays, monthDay: '', monthType: '' },
    } as V1ResourceBlock;
  });

  const FIRST = ['Ada', 'Ben', 'Chloe', 'Dev', 'Elif', 'Femi', 'Grace', 'Hiro', 'Ines', 'Jonas'];
  const LAST = ['Lovelace', 'Carter', 'Nguyen', 'Patel', 'Yilmaz', 'Adeyemi', 'Hopper', 'Tanaka', 'Silva', 'Berg'];
  const customers: V1Customer[] = Array.from({ length: COUNTS.customers }, (_, c) => ({
    object: 'customer', id: customerId(c), firstname: FIRST[c % 10]!, lastname: LAST[Math.floor(c / 10) % 10]!,
    email: `customer-${c}@bench-v1.example`,
    contact: { mobilePhone: `+1617${String(c).padStart(7, '0')}`, businessPhone: '', homePhone: '' },
    customFields: c % 5 === 0 ? { field1: { name: 'Member', value: 'gold' } } : {},
    deletedStatus: false,
  }) as V1Customer);

  // Appointment a is on resource a mod R: its n-th, on day 1 + n mod 90 at an hour that differs for
  // each of that resource's appointments of the day (so none overlap), with one of its services.
  const appointments: V1Appointment[] = Array.from({ length: COUNTS.appointments }, (_, a) => {
    const r = a % COUNTS.resources;
    const n = Math.floor(a / COUNTS.resources);
    const q = Math.floor(n / DAYS_AHEAD);
    if (q >= 12) throw new Error('too many appointments per resource; add resources');
    const l = r % L;
    const day = days[l]![1 + (n % DAYS_AHEAD)]!;
    const start = (8 + ((q + n) % 12)) * 60;
    const offered = resourceServices[r]!;
    const s = offered[a % offered.length]!;
    const duration = durationOf(s);
    const utc = a % 5 === 4;
    const c = (a * 7919) % COUNTS.customers;
    const status = a % 20 === 7 ? 'RS' : a % 20 === 13 ? 'CN' : 'BK';
    return {
      object: 'appointment', id: String(5_000_000 + a), locationId: locationId(l), serviceId: serviceId(s), serviceName: `Service ${s}`,
      resourceId: String(resourceId(r)), resourceName: `Resource ${r}`, customerId: customerId(c),
      name: `${FIRST[c % 10]} ${LAST[Math.floor(c / 10) % 10]}`, email: `customer-${c}@bench-v1.example`, phone: `+1617${String(c).padStart(7, '0')}`,
      startDateTime: dateTime(day, start, utc), endDateTime: dateTime(day, start + duration, utc), duration,
      status, confirmed: a % 3 === 0, notes: a % 7 === 0 ? 'Booked by phone' : null, timezoneIana: zoneOf(l).iana,
    } as V1Appointment;
  });

  return {
    document: { locations, services, resources, serviceAllocations, resourceAllocations: [], resourceBlocks, customers, appointments },
    expected: { weeklyRows, singleRows },
  };
}

// --- One import through the HTTP route ---------------------------------------------------------

interface Run {
  postMs: number;
  totalMs: number;
  /** From the POST until the first poll that shows a plan (totals): reading, storing and planning. */
  planSeenMs: number | null;
  /** Per kind with records: when its processed count was first seen at its total, from the POST. */
  doneAt: Partial<Record<MigrationKind, number>>;
  peakRss: number;
  rssBefore: number;
  peakHeap: number;
  job: MigrationJobView;
}

async function runImport(app: App, label: string, headers: Record<string, string>, payload: string): Promise<Run> {
  const rssBefore = process.memoryUsage().rss;
  let peakRss = rssBefore;
  let peakHeap = 0;
  const sample = () => {
    const memory = process.memoryUsage();
    peakRss = Math.max(peakRss, memory.rss);
    peakHeap = Math.max(peakHeap, memory.heapUsed);
    return memory.rss;
  };
  const sampler = setInterval(sample, 100);
  try {
    const startedEpoch = Date.now();
    const started = performance.now();
    const posted = await app.inject({
      method: 'POST',
      url: '/v3/migration/sync',
      headers: { ...headers, 'content-type': 'application/json', prefer: 'respond-async' },
      payload,
    });
    const postMs = performance.now() - started;
    if (posted.statusCode !== 202) throw new Error(`POST /v3/migration/sync: ${posted.statusCode} ${posted.body.slice(0, 1000)}`);
    const jobId = (JSON.parse(posted.body) as MigrationJobView).id;
    const doneAt: Run['doneAt'] = {};
    let planSeenMs: number | null = null;
    let job: MigrationJobView;
    for (;;) {
      await sleep(POLL_MS);
      const answer = await app.inject({ method: 'GET', url: `/v3/migration/jobs/${jobId}`, headers });
      if (answer.statusCode !== 200) throw new Error(`GET /v3/migration/jobs/${jobId}: ${answer.statusCode} ${answer.body.slice(0, 1000)}`);
      job = JSON.parse(answer.body) as MigrationJobView;
      const at = performance.now() - started;
      const rss = sample();
      const kinds = MIGRATION_KINDS.filter((kind) => job.progress[kind].total > 0);
      if (planSeenMs === null && kinds.length) planSeenMs = at;
      for (const kind of kinds) if (doneAt[kind] === undefined && job.progress[kind].processed >= job.progress[kind].total) doneAt[kind] = at;
      const shown = kinds.map((kind) => `${kind} ${job.progress[kind].processed}/${job.progress[kind].total}`).join(', ');
      const none = job.status === 'running' ? ' (no counts yet: reading and planning)' : ' (no counts: no write transaction ran, see the report)';
      process.stderr.write(`  [${label} ${fmtS(at)}] ${job.status}${shown ? `: ${shown}` : none}; rss ${mb(rss)}\n`);
      if (job.status !== 'running') break;
    }
    await app.migration.drain();
    // The job's own end (the app's clock, ms), not the poll that noticed it.
    const totalMs = job.finishedAt ? Date.parse(job.finishedAt) - startedEpoch : performance.now() - started;
    for (const kind of MIGRATION_KINDS) if (doneAt[kind] !== undefined) doneAt[kind] = Math.min(doneAt[kind]!, totalMs);
    return { postMs, totalMs, planSeenMs, doneAt, peakRss, rssBefore, peakHeap, job };
  } finally {
    clearInterval(sampler);
  }
}

interface Figures {
  first: Run;
  second: Run;
  records: number;
}

function printRun(label: string, name: string, run: Run, records: number) {
  const report = run.job.report;
  console.log(`  ${label} ${name}: ${fmtS(run.totalMs)} in all, ${int(Math.round(records / (run.totalMs / 1000)))} records/s; job ${run.job.status}; POST answered 202 in ${fmtS(run.postMs)}; peak RSS ${mb(run.peakRss)} (${mb(run.rssBefore)} before), peak V8 heap used ${mb(run.peakHeap)}`);
  if (run.job.error) console.log(`    job error: ${run.job.error}`);
  if (!report) return;
  const line = (counts: Record<MigrationKind, number>) => MIGRATION_KINDS.map((kind) => `${kind} ${int(counts[kind])}`).join(', ');
  console.log(`    created: ${line(report.created)}`);
  console.log(`    skipped: ${line(report.skipped)}`);
  console.log(`    ignored: ${line(report.ignored)}`);
  console.log(`    failed: ${report.failed.length}${report.failed.slice(0, 5).map((f) => `\n      ${f.kind} ${f.legacyId ?? '(no id)'}: ${f.message}`).join('')}`);
  console.log(`    warnings: ${report.warnings.length + report.warningsOmitted}${report.warnings.slice(0, 3).map((w) => `\n      ${w.kind} ${w.legacyId ?? '(no id)'}: ${w.message}`).join('')}`);
}

/**
 * Kinds in the order they are written, grouped by the poll that first saw them complete, with the
 * time since the previous group completed (the first group: since the first write was seen).
 */
function kindTimes(run: Run): Array<{ kinds: MigrationKind[]; at: number; ms: number; records: number }> {
  const groups: Array<{ kinds: MigrationKind[]; at: number; ms: number; records: number }> = [];
  let previous = run.planSeenMs ?? 0;
  for (const kind of MIGRATION_KINDS) {
    const at = run.doneAt[kind];
    if (at === undefined) continue;
    const last = groups.at(-1);
    if (last && last.at === at) {
      last.kinds.push(kind);
      last.records += run.job.progress[kind].total;
      continue;
    }
    groups.push({ kinds: [kind], at, ms: Math.max(0, at - previous), records: run.job.progress[kind].total });
    previous = at;
  }
  return groups;
}

async function bench(label: string, database: DatabaseHandle, payload: string, records: number): Promise<Figures> {
  const t = performance.now();
  await migrate(database.db);
  const config = loadConfig({ NODE_ENV: 'test', LOG_LEVEL: 'silent', RATE_LIMITS_ENABLED: 'false', WORKER_ENABLED: 'false' });
  const secrets = await resolveSecrets(database.db, config);
  const app = await buildApp({ config, database, secrets });
  try {
    // A company of its own (with its Owner, who may run migrations), so runs never meet earlier data.
    const tenant = await createWorld(app).tenant();
    console.log(`  ${label}: migrated, app built and company ${tenant.companyId} made in ${fmtS(performance.now() - t)}`);

    const first = await runImport(app, label, tenant.dashboard, payload);
    printRun(label, 'first run', first, records);
    console.log(
      `    time per kind (from the polls, ±${POLL_MS / 1000} s): first write seen after ${first.planSeenMs === null ? '-' : fmtS(first.planSeenMs)} (reading, storing and planning); then ` +
        kindTimes(first)
          .map(({ kinds, at, ms, records }) => `${kinds.join(' + ')} ${fmtS(ms)}${ms >= 1000 ? ` (${int(Math.round(records / (ms / 1000)))}/s)` : ''}, done at ${fmtS(at)}`)
          .join('; '),
    );
    // The rows themselves, against the report.
    const rows = await sql<{ appointments: number; customers: number }>`select
        (select count(*)::int from appointments where company_id = ${tenant.companyId}::uuid) as appointments,
        (select count(*)::int from customers where company_id = ${tenant.companyId}::uuid) as customers`.execute(database.db);
    console.log(`    rows in the database: ${int(rows.rows[0]!.appointments)} appointments, ${int(rows.rows[0]!.customers)} customers`);

    const second = await runImport(app, label, tenant.dashboard, payload);
    printRun(label, 'second run (same document)', second, records);
    const created = second.job.report ? MIGRATION_KINDS.reduce((n, kind) => n + second.job.report!.created[kind], 0) : NaN;
    if (created !== 0) console.log(`    UNEXPECTED: the second run created ${created} records`);
    return { first, second, records };
  } finally {
    await app.close();
  }
}

function table(results: Array<[string, Figures | null]>) {
  const columns = results.filter((r): r is [string, Figures] => r[1] !== null);
  if (!columns.length) return;
  const doneAt = (f: Figures, kind: MigrationKind) => {
    const at = f.first.doneAt[kind];
    return at === undefined ? '-' : (at / 1000).toFixed(1);
  };
  const lines: Array<[string, (f: Figures) => string]> = [
    ['First run: total s', (f) => (f.first.totalMs / 1000).toFixed(1)],
    ['First run: records/s', (f) => int(Math.round(f.records / (f.first.totalMs / 1000)))],
    ['First run: POST answered (202) s', (f) => (f.first.postMs / 1000).toFixed(1)],
    ['First run: until the first write seen s', (f) => (f.first.planSeenMs === null ? '-' : (f.first.planSeenMs / 1000).toFixed(1))],
    ...MIGRATION_KINDS.map((kind): [string, (f: Figures) => string] => [`First run: ${kind} done at s (polls)`, (f) => doneAt(f, kind)]),
    ['First run: failed records', (f) => String(f.first.job.report?.failed.length ?? '-')],
    ['First run: peak RSS / V8 heap used MB', (f) => `${(f.first.peakRss / 1_000_000).toFixed(0)} / ${(f.first.peakHeap / 1_000_000).toFixed(0)}`],
    ['Second run (all skipped): total s', (f) => (f.second.totalMs / 1000).toFixed(1)],
    ['Second run: peak RSS / V8 heap used MB', (f) => `${(f.second.peakRss / 1_000_000).toFixed(0)} / ${(f.second.peakHeap / 1_000_000).toFixed(0)}`],
  ];
  console.log(`\n| Measure | ${columns.map(([name]) => name).join(' | ')} |`);
  console.log(`|---|${columns.map(() => '---').join('|')}|`);
  for (const [name, value] of lines) console.log(`| ${name} | ${columns.map(([, f]) => value(f)).join(' | ')} |`);
}

async function main() {
  const started = performance.now();
  const load = () => loadavg().map((l) => l.toFixed(2)).join(' ');
  console.log(
    `Migration benchmark${SCALE !== 1 ? ` (MIGRATION_BENCH_SCALE=${SCALE})` : ''}: a v1 export of ${int(COUNTS.locations)} locations, ${int(COUNTS.services)} services, ` +
      `${int(COUNTS.resources)} resources, ${int(COUNTS.allocations)} service allocations, ${int(COUNTS.resourceBlocks)} resource blocks, ${int(COUNTS.customers)} customers ` +
      `and ${int(COUNTS.appointments)} future appointments, imported through POST /v3/migration/sync (Prefer: respond-async) and followed at GET /v3/migration/jobs/:id every ${POLL_MS} ms.`,
  );
  console.log(`Machine: ${availableParallelism()} cores (${cpus()[0]?.model.trim() ?? 'unknown CPU'}), Node.js ${process.version}, load average ${load()} at the start.`);

  const built = performance.now();
  const { document, expected } = buildDocument();
  const records = Object.values(document).reduce((n, list: unknown[]) => n + list.length, 0);
  const payload = JSON.stringify({ source: { type: 'export', data: document } });
  const bytes = Buffer.byteLength(payload);
  const limit = loadConfig({ NODE_ENV: 'test' }).migration.bodyLimitBytes;
  console.log(
    `Document: ${int(records)} records, ${(bytes / 1_000_000).toFixed(1)} MB of JSON (body limit MIGRATION_BODY_LIMIT_BYTES ${(limit / 1_000_000).toFixed(0)} MB), built in ${fmtS(performance.now() - built)} (not timed); ` +
      `it should become ${int(expected.weeklyRows)} weekly and ${int(expected.singleRows)} single allocation rows.`,
  );
  if (bytes > limit) throw new Error('the document is larger than the route accepts; lower MIGRATION_BENCH_SCALE or raise MIGRATION_BODY_LIMIT_BYTES');
  const results: Array<[string, Figures | null]> = [];

  if (ONLY !== 'postgres') {
    console.log('\nEmbedded database (PGlite):');
    const embedded = await openDatabase({});
    try {
      results.push(['Embedded', await bench('embedded', embedded, payload, records)]);
    } finally {
      await embedded.close();
    }
  }

  if (ONLY !== 'embedded') {
    await withThrowawayPostgres(async ({ url, name, version, host }) => {
      console.log(`\nPostgreSQL ${version} (throwaway database ${name} on ${host}, pool of 10 connections):`);
      const server = await openDatabase({ databaseUrl: url, poolSize: 10 });
      try {
        results.push(['PostgreSQL', await bench('postgres', server, payload, records)]);
      } finally {
        await server.close();
      }
    });
  }

  table(results);
  console.log(`\nWhole run: ${fmtS(performance.now() - started)}; load average ${load()} at the end.`);
  const failedRuns = results.filter(([, f]) => f && (f.first.job.status !== 'succeeded' || f.second.job.status !== 'succeeded'));
  if (failedRuns.length) process.exitCode = 1;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().catch((error) => {
    console.error(error);
    process.exit(1);
  });
}
