// What the fault drills share: real server processes, their own PostgreSQL and Redis servers when
// the Debian binaries are there, a bounded load of HTTP clients, and the checks every drill ends
// with (nothing acknowledged lost, nothing oversold). Every wait here is bounded.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { DateTime } from 'luxon';
import { freePort, start, waitReady } from '../helpers/server.js';
import { createDedicatedDatabase } from '../helpers/app.js';
import { LONDON, createWorld } from '../helpers/world.js';
import type { Running } from '../helpers/server.js';

export { freePort, sleep };


/** Instances under test: no rate limits (the drills measure faults, not budgets), warnings only. */
export const DRILL_ENV = { NODE_ENV: 'test', LOG_LEVEL: 'warn', RATE_LIMITS_ENABLED: 'false', WORKER_ENABLED: 'false' };

const cleanups: Array<() => Promise<void> | void> = [];
export function onCleanup(cleanup: () => Promise<void> | void): void {
  cleanups.push(cleanup);
}
export async function cleanUp(): Promise<void> {
  for (const cleanup of cleanups.splice(0).reverse()) {
    try {
      await cleanup();
    } catch {
      // best effort: the next cleanup still runs
    }
  }
}

// --- Servers -----------------------------------------------------------------------------------

export async function instances(count: number, env: Record<string, string>): Promise<Running[]> {
  const started = await Promise.all(Array.from({ length: count }, () => start({ ...DRILL_ENV, ...env })));
  for (const instance of started) onCleanup(() => void instance.child.kill('SIGKILL'));
  await Promise.all(started.map((instance) => waitReady(instance)));
  return started;
}

/** Restarts a killed instance on the same port. */
export async function restart(instance: Running, env: Record<string, string>): Promise<Running> {
  const port = new URL(instance.base).port;
  const again = { ...(await start({ ...DRILL_ENV, ...env, PORT: port })), base: instance.base };
  onCleanup(() => void again.child.kill('SIGKILL'));
  await waitReady(again);
  return again;
}

/** A database of its own on the TEST_DATABASE_URL server, dropped at the end. */
export async function dedicatedDatabase(serverUrl: string): Promise<string> {
  const { url, drop } = await createDedicatedDatabase(serverUrl);
  onCleanup(drop);
  return url;
}

function postgresBin(): string | null {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return null;
  const version = readdirSync(root).sort().at(-1);
  return version && existsSync(join(root, version, 'bin', 'postgres')) ? join(root, version, 'bin') : null;
}

export interface OwnPostgres {
  url: string;
  /** Fast shutdown: connections are cut, the server is gone until start(). */
  stop(): Promise<void>;
  start(): Promise<void>;
}

/**
 * A PostgreSQL server of the drill's own (Debian's binaries, a temporary cluster, a free port), so
 * it can be stopped and started. PostgreSQL refuses to run as root: as root it runs as `postgres`.
 * Null when the binaries are not installed.
 */
export async function ownPostgres(): Promise<OwnPostgres | null> {
  const bin = postgresBin();
  if (!bin) return null;
  const root = process.getuid?.() === 0;
  if (root && spawnSync('id', ['postgres']).status !== 0) return null;
  const dir = mkdtempSync(join(tmpdir(), 'slotwise-pg-'));
  onCleanup(() => rmSync(dir, { recursive: true, force: true }));
  const data = join(dir, 'data');
  if (root) {
    const ids = spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' });
    const gids = spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' });
    chownSync(dir, Number(ids.stdout.trim()), Number(gids.stdout.trim()));
  }
  const as = (command: string, args: string[]) => (root ? ['runuser', ['-u', 'postgres', '--', command, ...args]] : [command, args]) as [string, string[]];
  const run = (command: string, args: string[]) => {
    const [cmd, argv] = as(command, args);
    const result = spawnSync(cmd, argv, { encoding: 'utf8', timeout: 60_000 });
    if (result.status !== 0) throw new Error(`${command} failed: ${result.stderr}${result.stdout}`);
  };
  run(join(bin, 'initdb'), ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync']);
  const port = await freePort();
  // pg_ctl, not a signal to our child: as root the child is runuser, which does not pass signals on.
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=100`;
  const startServer = async () => {
    run(join(bin, 'pg_ctl'), ['-D', data, '-o', options, '-l', join(dir, 'log'), '-w', '-t', '60', 'start']);
  };
  // Fast shutdown: every client is disconnected at once, as in a failover.
  const stopServer = async () => {
    if (!existsSync(join(data, 'postmaster.pid'))) return;
    run(join(bin, 'pg_ctl'), ['-D', data, '-m', 'fast', '-w', '-t', '60', 'stop']);
  };
  await startServer();
  onCleanup(stopServer);
  return { url: `postgres://postgres@127.0.0.1:${port}/postgres`, stop: stopServer, start: startServer };
}

export interface OwnRedis {
  url: string;
  kill(): Promise<void>;
  start(): Promise<void>;
  /** SIGSTOP: the server keeps its connections open and answers nothing (a frozen host). */
  freeze(): void;
  thaw(): void;
}

/** A redis-server of the drill's own on a free port (Debian's redis-server), or null without it. */
export async function ownRedis(): Promise<OwnRedis | null> {
  if (spawnSync('redis-server', ['--version']).status !== 0) return null;
  const port = await freePort();
  let server: ChildProcess | undefined;
  const startServer = async () => {
    server = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
    for (let i = 0; i < 100; i++) {
      const probe = spawnSync('redis-cli', ['-p', String(port), 'ping'], { encoding: 'utf8' });
      if (probe.stdout.trim() === 'PONG') return;
      await sleep(50);
    }
    throw new Error('own Redis did not start');
  };
  const kill = async () => {
    if (!server || server.exitCode !== null) return;
    const exited = new Promise((resolve) => server!.once('exit', resolve));
    server.kill('SIGCONT');
    server.kill('SIGKILL');
    await exited;
  };
  await startServer();
  onCleanup(kill);
  return {
    url: `redis://127.0.0.1:${port}`,
    kill,
    start: startServer,
    freeze: () => void server?.kill('SIGSTOP'),
    thaw: () => void server?.kill('SIGCONT'),
  };
}

// --- HTTP --------------------------------------------------------------------------------------

export interface Answer {
  /** HTTP status; 0 when the connection failed (instance down), -1 when no answer came in time. */
  status: number;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- bodies are read field by field
  body: any;
  ms: number;
  at: number;
  headers?: Headers;
}

export async function call(base: string, method: string, path: string, headers: Record<string, string>, body?: unknown, timeoutMs = 20_000): Promise<Answer> {
  const began = performance.now();
  try {
    const response = await fetch(`${base}${path}`, {
      method,
      headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await response.text();
    let parsed: unknown = null;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      parsed = text;
    }
    return { status: response.status, body: parsed, ms: performance.now() - began, at: Date.now(), headers: response.headers };
  } catch (error) {
    const timedOut = (error as Error).name === 'TimeoutError';
    return { status: timedOut ? -1 : 0, body: String(error), ms: performance.now() - began, at: Date.now() };
  }
}

export interface Shop {
  companyId: string;
  headers: Record<string, string>;
  locationId: string;
  serviceId: string;
  resourceIds: string[];
  capacity: number;
}

/** A company with one location open every day 09:00-17:00, a 60-minute service and `resources` resources. */
export async function shop(base: string, options: { capacity?: number; resources?: number; webhookUrl?: string } = {}): Promise<Shop> {
  const tenant = await createWorld(base).tenant();
  const capacity = options.capacity ?? 1;
  const { locationId, serviceId, resourceIds } = await tenant.bookable({ service: { bookingsPerSlot: capacity }, resources: options.resources ?? 1 });
  if (options.webhookUrl) {
    const answer = await call(base, 'POST', `/v3/webhook?locationId=${locationId}`, tenant.dashboard, { url: options.webhookUrl, triggers: ['NEW_APPOINTMENT'], active: true });
    assert.equal(answer.status, 201, JSON.stringify(answer.body));
  }
  return { companyId: tenant.companyId, headers: tenant.dashboard, locationId, serviceId, resourceIds, capacity };
}

/** The slot `index` of a long calendar: 8 hourly slots a day from 09:00, days from two weeks ahead. */
export function slotAt(index: number): { Unavailability: { startTime: string; endTime: string } } {
  const day = DateTime.now().setZone(LONDON).startOf('day').plus({ days: 14 + Math.floor(index / 8) });
  const start = day.set({ hour: 9 + (index % 8) });
  return { Unavailability: { startTime: start.toISO()!, endTime: start.plus({ minutes: 60 }).toISO()! } };
}

export function bookingPath(s: Shop): string {
  return `/v3/appointment?LocationId=${s.locationId}&ServiceId=${s.serviceId}`;
}

// --- Load and figures --------------------------------------------------------------------------

/** Runs `clients` loops until `untilMs` passes, each calling `work` again as soon as it returns. */
export async function load<T>(clients: number, durationMs: number, work: (client: number, n: number) => Promise<T>): Promise<T[]> {
  const until = Date.now() + durationMs;
  const results: T[] = [];
  await Promise.all(
    Array.from({ length: clients }, async (_, client) => {
      for (let n = 0; Date.now() < until; n++) results.push(await work(client, n));
    }),
  );
  return results;
}

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

export function statusCounts(answers: Answer[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const a of answers) counts[a.status] = (counts[a.status] ?? 0) + 1;
  return counts;
}

/** 5xx answers other than 503, plus hangs (no answer in time). */
export function unexpectedFailures(answers: Answer[]): Answer[] {
  return answers.filter((a) => a.status === -1 || (a.status >= 500 && a.status !== 503));
}

const figures: Array<{ drill: string; figure: string; value: string }> = [];
/** A figure for docs/reliability.md: printed as a table row and kept for the summary. */
export function figure(drill: string, name: string, value: string | number): void {
  const text = typeof value === 'number' ? (Number.isInteger(value) ? String(value) : value.toFixed(1)) : value;
  figures.push({ drill, figure: name, value: text });
  console.log(`| ${drill} | ${name} | ${text} |`);
}

// --- Checks every drill ends with ---------------------------------------------------------------

/** Every acknowledged (201) appointment is in the database. Returns how many were lost. */
export async function lostAcknowledged(databaseUrl: string, companyId: string, ids: string[]): Promise<number> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ id: string }>('select id from appointments where company_id = $1 and id = any($2::uuid[])', [companyId, ids]);
    const found = new Set(rows.map((r) => r.id));
    return ids.filter((id) => !found.has(id)).length;
  } finally {
    await client.end();
  }
}

/** Slots of a resource holding more live appointments than the capacity allows. */
export async function oversold(databaseUrl: string, s: Shop): Promise<number> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ n: string }>(
      `select count(*) as n from (
         select resource_id, start_time from appointment_resources
          where company_id = $1 and status in ('IN', 'RS', 'BK') and (expires_at is null or expires_at > now())
          group by resource_id, start_time having count(*) > $2) as over`,
      [s.companyId, s.capacity],
    );
    return Number(rows[0]!.n);
  } finally {
    await client.end();
  }
}

/** Instances that exited on their own (a crash); a drill's own kills are excluded by the caller. */
export function crashed(running: Running[]): Running[] {
  return running.filter((r) => r.child.exitCode !== null || r.child.signalCode !== null);
}
