// Helpers of import.test.ts (POST /v3/migration/sync): the requests, the v1 example export of
// shared/spec/v1-source.md §6 (test/helpers/v1-stand-in.ts) as a fresh copy, v1 records to add to
// it, and dates relative to today, since the tests run on any date.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { LightMyRequestResponse } from 'fastify';
import { DateTime } from 'luxon';
import { json } from '../../helpers/app.js';
import type { TestContext } from '../../helpers/app.js';
import { V1_EXAMPLE_EXPORT } from '../../helpers/v1-stand-in.js';

export const NEW_YORK = 'America/New_York';

/** The report's kinds (decisions.md "Migration"). */
export const KINDS = ['locations', 'services', 'resources', 'weeklyAllocations', 'singleAllocations', 'recurringBlocks', 'customers', 'appointments'] as const;
export type Kind = (typeof KINDS)[number];
export type Counts = Record<Kind, number>;

/** Every kind at 0 except those given. */
export const counts = (some: Partial<Counts> = {}): Counts => ({ ...(Object.fromEntries(KINDS.map((kind) => [kind, 0])) as Counts), ...some });

export interface Note {
  kind: Kind;
  legacyId: string | null;
  message: string;
}

export interface Report {
  dryRun: boolean;
  created: Counts;
  skipped: Counts;
  failed: Note[];
  ignored: Counts;
  warnings: Note[];
  warningsOmitted: number;
}

/** The export document's lists, loosely: tests add and break records on purpose. */
export type V1Document = Record<'locations' | 'services' | 'resources' | 'serviceAllocations' | 'resourceAllocations' | 'resourceBlocks' | 'customers' | 'appointments', Array<Record<string, unknown>>>;

/** A copy of the §6 example export that a test may change. */
export const v1Example = (): V1Document => structuredClone(V1_EXAMPLE_EXPORT) as unknown as V1Document;

/** What the §6 example creates in an empty company. */
export const EXAMPLE_CREATED = counts({ locations: 1, services: 2, resources: 2, weeklyAllocations: 2, recurringBlocks: 1 });

export function syncRequest(context: TestContext, headers: Record<string, string>, body: Record<string, unknown>, extraHeaders: Record<string, string> = {}): Promise<LightMyRequestResponse> {
  return context.app.inject({ method: 'POST', url: '/v3/migration/sync', headers: { ...headers, ...extraHeaders }, payload: body });
}

/** Imports `data` (an export source) and answers the report, which must come with 200. */
export async function importExport(context: TestContext, headers: Record<string, string>, data: unknown, options: { dryRun?: boolean } = {}): Promise<Report> {
  const response = await syncRequest(context, headers, { source: { type: 'export', data }, ...(options.dryRun !== undefined ? { dryRun: options.dryRun } : {}) });
  assert.equal(response.statusCode, 200, response.body);
  return json<Report>(response);
}

/** GET /v3/mapping/ids with one v1 id per key. */
export async function mapping(context: TestContext, headers: Record<string, string>, query: Record<string, string>) {
  const response = await context.app.inject({ method: 'GET', url: `/v3/mapping/ids?${new URLSearchParams(query)}`, headers });
  assert.equal(response.statusCode, 200, response.body);
  return json<Partial<Record<'locationId' | 'serviceId' | 'resourceId' | 'customerId' | 'appointmentId', string | null>> & { allocationId?: string[] }>(response);
}

/** The v3 ids of the §6 example's records in a company (every one must exist). */
export async function exampleIds(context: TestContext, headers: Record<string, string>) {
  const a = await mapping(context, headers, { locationId: '12', serviceId: '301', resourceId: '1501', allocationId: '7001' });
  const b = await mapping(context, headers, { serviceId: '302', resourceId: '1502' });
  const ids = { location: a.locationId, service301: a.serviceId, service302: b.serviceId, resource1501: a.resourceId, resource1502: b.resourceId };
  for (const [name, id] of Object.entries(ids)) assert.ok(typeof id === 'string', `${name} was not migrated`);
  return { ...(ids as Record<keyof typeof ids, string>), allocations7001: a.allocationId ?? [] };
}

/** GET `url`, which must answer 200; the parsed body. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- answers are compared field by field
export async function read<T = any>(context: TestContext, headers: Record<string, string>, url: string): Promise<T> {
  const response = await context.app.inject({ method: 'GET', url, headers });
  assert.equal(response.statusCode, 200, `GET ${url}: ${response.body}`);
  return json<T>(response);
}

// --- Dates relative to today ------------------------------------------------------------------

/** Today's date in `zone`. */
export const today = (zone: string) => DateTime.now().setZone(zone).toISODate()!;

/**
 * The first date at least `minDaysAhead` days after today (in `zone`) that falls on `weekday`
 * (1 = Monday … 7 = Sunday). Two days ahead by default, so no lead time and no midnight between
 * the test's reading of the clock and the server's can matter.
 */
export function comingWeekday(zone: string, weekday: number, minDaysAhead = 2): string {
  let date = DateTime.now().setZone(zone).startOf('day').plus({ days: minDaysAhead });
  while (date.weekday !== weekday) date = date.plus({ days: 1 });
  return date.toISODate()!;
}

/** Whole days after (or before, negative) today in `zone`. */
export const daysFromToday = (zone: string, days: number) => DateTime.now().setZone(zone).startOf('day').plus({ days }).toISODate()!;

/** The UTC instant of a wall-clock time in `zone`, as the availability answer writes it (with milliseconds). */
export const utc = (date: string, time: string, zone: string) => DateTime.fromISO(`${date}T${time}`, { zone }).toUTC().toISO()!;

// --- v1 records -------------------------------------------------------------------------------

export function v1Customer(id: string, email: string, fields: Record<string, unknown> = {}): Record<string, unknown> {
  return { object: 'customer', id, firstname: 'Cara', lastname: 'Diaz', email, ...fields };
}

/** A v1 appointment of service 301 with Ben Carter (resource 1502) at location 12, wall time without an offset. */
export function v1Appointment(id: string, date: string, start: string, end: string, fields: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    object: 'appointment',
    id,
    locationId: '12',
    serviceId: '301',
    resourceId: '1502',
    startDateTime: `${date}T${start}:00`,
    endDateTime: `${date}T${end}:00`,
    status: 'BK',
    ...fields,
  };
}

// --- A gate in front of an HTTP endpoint ----------------------------------------------------------

export interface Gate {
  /** Where to send requests instead of the target. */
  url: string;
  /** Resolves when the first request has arrived (and is being held). */
  reached: Promise<void>;
  /** Lets held and later requests through to the target. */
  open(): void;
  close(): Promise<void>;
}

/** An endpoint on 127.0.0.1 that holds every request until opened, then forwards it to `target`. */
export async function gateTo(target: string): Promise<Gate> {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  let arrive!: () => void;
  const reached = new Promise<void>((resolve) => (arrive = resolve));
  const server = createServer((request, response) => {
    arrive();
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      void (async () => {
        await opened;
        const headers: Record<string, string> = {};
        for (const name of ['content-type', 'authorization', 'accept']) {
          const value = request.headers[name];
          if (typeof value === 'string') headers[name] = value;
        }
        const answer = await fetch(target, { method: request.method ?? 'GET', headers, ...(chunks.length ? { body: Buffer.concat(chunks) } : {}) });
        response.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' });
        response.end(Buffer.from(await answer.arrayBuffer()));
      })().catch(() => response.destroy());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${new URL(target).pathname}`,
    reached,
    open,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
