import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { randomBytes } from 'node:crypto';
import { freePort } from './ports.js';

// A local stand-in of the OnSched API v1 (shared/spec/v1-source.md §1–§3) on 127.0.0.1 and a free
// port: the identity server's POST /connect/token (client credentials, form), the GET list and
// single endpoints of the setup interface, and the consumer interface's customers and appointments
// (source C of v1-source.md §0), with the v1 list envelope and offset/limit paging.
// Seeded from an export-shaped document (default: the example export of v1-source.md §6). Tests
// inject failures (status, Retry-After), rows that are not objects, and revoke tokens.

/** Export-shaped seed: one array per kind; rows are kept as given, non-objects included. */
export interface V1Seed {
  locations?: unknown[];
  services?: unknown[];
  resources?: unknown[];
  serviceAllocations?: unknown[];
  resourceAllocations?: unknown[];
  resourceBlocks?: unknown[];
  customers?: unknown[];
  appointments?: unknown[];
}

export type V1SeedKind = keyof V1Seed;

export interface V1RecordedRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  body: string;
  authorization: string | null;
  status: number;
}

export interface V1FailRule {
  status: number;
  retryAfterSeconds?: number;
  /** Sent as Retry-After as it is (an HTTP-date, say), instead of retryAfterSeconds. */
  retryAfter?: string;
  /** How many requests fail (default 1). */
  times?: number;
  /** Only requests whose path and query contain this. */
  pathIncludes?: string;
}

export interface V1StandInOptions {
  seed?: V1Seed;
  clientId?: string;
  clientSecret?: string;
  /** expires_in of issued tokens (default 3600 s). */
  accessTokenSeconds?: number;
}

export interface V1StandIn {
  /** The API base (paths carry /setup/v1/... and /consumer/v1/...), and the token endpoint. */
  baseUrl: string;
  tokenUrl: string;
  clientId: string;
  clientSecret: string;
  /** The seed as served; tests may edit it between calls. Non-object rows match every filter. */
  data: Required<V1Seed>;
  requests: V1RecordedRequest[];
  /** Tokens issued so far. */
  tokensIssued(): number;
  failNext(rule: V1FailRule): void;
  /** Inserts a row that is not an object into `kind` at `position` (default: the end). */
  injectMalformed(kind: V1SeedKind, value: unknown, position?: number): void;
  /** Every token issued so far is answered 401 from now on. */
  revokeTokens(): void;
  close(): Promise<void>;
}

/** The example export of shared/spec/v1-source.md §6, as written there. */
export const V1_EXAMPLE_EXPORT = {
  locations: [
    {
      object: 'location', id: '12', name: 'Downtown Studio',
      primaryBusiness: true, primaryCalendarId: '40', email: 'front@studio.example',
      phone: '6175550100',
      address: { addressLine1: '10 Main St', addressLine2: 'Suite 2', city: 'Boston', state: 'MA', postalCode: '02110', country: 'US' },
      timezoneIana: 'America/New_York', timezoneId: 'Eastern Standard Time', timezoneOffset: null,
      businessHours: {
        sun: { startTime: 0, endTime: 0, isOpen: false, is24Hours: false },
        mon: { startTime: 900, endTime: 1900, isOpen: true, is24Hours: false },
        tue: { startTime: 900, endTime: 2100, isOpen: true, is24Hours: false },
        wed: { startTime: 900, endTime: 1900, isOpen: true, is24Hours: false },
        thu: { startTime: 900, endTime: 2100, isOpen: true, is24Hours: false },
        fri: { startTime: 900, endTime: 1700, isOpen: true, is24Hours: false },
        sat: { startTime: 1000, endTime: 1400, isOpen: true, is24Hours: false },
      },
      businessHolidays: [{ id: '1', holidayName: 'Christmas Day', businessClosed: true }],
      services: [],
      settings: { bookAheadUnit: 2, bookAheadValue: 8, bookInAdvance: 60, bookingTimerMins: 10 },
    },
  ],
  services: [
    {
      object: 'service', id: '301', companyId: '5', locationId: '12', type: '1',
      name: 'Personal Training', description: 'One-to-one session', duration: 60,
      durationSelect: true, durationMin: 30, durationMax: 90, durationInterval: 30,
      bookingInterval: 30, padding: 15, consumerPadding: false, maxCapacity: 1, maxGroupSize: 1,
      bookAheadUnit: 2, bookAheadValue: 8, bookInAdvance: 120,
      bookingLimit: 2, maxBookingLimit: 0, maxResourceBookingLimit: 0,
      dailyBookingLimitCount: 0, dailyBookingLimitMinutes: 0,
      feeAmount: 80.0, feeTaxable: true, cancellationFeeAmount: 20.0,
      cancellationFeeTaxable: false, nonRefundable: false, roundRobin: 2,
      imageUrl: '', showOnline: true, defaultService: true, mediaPageUrl: '',
      calendarId: '40', calendarResourceGroupId: '', serviceGroupId: null, serviceGroupName: '',
      availability: {
        sun: { startTime: 0, endTime: 0 }, mon: { startTime: 900, endTime: 1900 },
        tue: { startTime: 900, endTime: 2100 }, wed: { startTime: 900, endTime: 1900 },
        thu: { startTime: 900, endTime: 2100 }, fri: { startTime: 900, endTime: 1700 },
        sat: { startTime: 1000, endTime: 1400 },
      },
    },
    {
      object: 'service', id: '302', locationId: '12', type: '2',
      name: 'Evening Yoga Class', description: 'Group class', duration: 90,
      durationSelect: false, durationMin: 0, durationMax: 0, durationInterval: 0,
      bookingInterval: 90, padding: 0, consumerPadding: false, maxCapacity: 12, maxGroupSize: 2,
      bookAheadUnit: 1, bookAheadValue: 30, bookInAdvance: 0,
      bookingLimit: 0, maxBookingLimit: 0, maxResourceBookingLimit: 0,
      dailyBookingLimitCount: 0, dailyBookingLimitMinutes: 0,
      feeAmount: 15.0, feeTaxable: false, cancellationFeeAmount: 0.0,
      cancellationFeeTaxable: false, nonRefundable: true, roundRobin: 0,
      imageUrl: '', showOnline: true, defaultService: false,
      calendarId: '40', serviceGroupId: 7, serviceGroupName: 'Classes',
      availability: {
        sun: { startTime: 0, endTime: 0 }, mon: { startTime: 0, endTime: 0 },
        tue: { startTime: 1800, endTime: 2100 }, wed: { startTime: 0, endTime: 0 },
        thu: { startTime: 1800, endTime: 2100 }, fri: { startTime: 0, endTime: 0 },
        sat: { startTime: 0, endTime: 0 },
      },
    },
  ],
  resources: [
    {
      object: 'resource', id: '1501', locationId: '12', name: 'Ana Lopez',
      email: 'ana@studio.example', groupId: null,
      timezoneIana: 'America/New_York', timezoneId: 'Eastern Standard Time', timezoneOffset: null,
      calendarAvailability: 0, notificationType: 2, deletedStatus: false,
      services: [{ object: 'service', serviceId: 302, serviceName: 'Evening Yoga Class' }],
      customFields: { field1: 'RYT-500' },
      availability: {
        sun: { startTime: 0, endTime: 0 }, mon: { startTime: 0, endTime: 0 },
        tue: { startTime: 1700, endTime: 2100 }, wed: { startTime: 0, endTime: 0 },
        thu: { startTime: 1700, endTime: 2100 }, fri: { startTime: 0, endTime: 0 },
        sat: { startTime: 0, endTime: 0 },
      },
    },
    {
      object: 'resource', id: '1502', locationId: '12', name: 'Ben Carter',
      email: 'ben@studio.example', groupId: null,
      timezoneIana: 'America/New_York', timezoneId: 'Eastern Standard Time', timezoneOffset: null,
      calendarAvailability: 0, notificationType: 1, deletedStatus: false,
      services: [],
      customFields: {},
      availability: {
        sun: { startTime: 0, endTime: 0 }, mon: { startTime: 900, endTime: 1700 },
        tue: { startTime: 900, endTime: 1700 }, wed: { startTime: 900, endTime: 1700 },
        thu: { startTime: 900, endTime: 1700 }, fri: { startTime: 900, endTime: 1700 },
        sat: { startTime: 0, endTime: 0 },
      },
    },
  ],
  serviceAllocations: [
    {
      object: 'serviceAllocation', id: '7001', serviceId: '302', locationId: '12',
      resourceId: '1501', startDate: '2025-01-07', endDate: '9999-12-31',
      startTime: 1800, endTime: 1930, repeats: true,
      repeat: { frequency: 'W', interval: 1, weekdays: '24', monthDay: '', monthType: '' },
      reason: 'Tue/Thu evening class', bookingLimit: 12, bookingCount: 0,
      serviceName: 'Evening Yoga Class', serviceDuration: 90, resourceName: 'Ana Lopez',
      timezoneName: 'America/New_York', timezoneOffset: null,
    },
  ],
  resourceAllocations: [],
  resourceBlocks: [
    {
      object: 'resourceBlock', id: 88001, resourceId: 1502, businessId: 12,
      startDate: '2025-01-06T00:00:00', endDate: '9999-12-31T00:00:00',
      startTime: 1200, endTime: 1300, reason: 'Lunch break', repeats: true,
      repeat: { frequency: 'W', interval: 1, weekdays: '12345', monthDay: '', monthType: '' },
    },
  ],
  customers: [],
  appointments: [],
} as const satisfies Required<V1Seed>;

const KINDS: V1SeedKind[] = ['locations', 'services', 'resources', 'serviceAllocations', 'resourceAllocations', 'resourceBlocks', 'customers', 'appointments'];

/** A v1 failure with a legacy code (shared/spec/legacy-error-codes.md), written by the dispatcher. */
class V1Failure extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
/** A field compared as v1 ids are (strings or int32): as decimal strings. A non-object row matches. */
const fieldIs = (row: unknown, field: string, value: string) => !isObject(row) || String(row[field]) === value;

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

export async function startV1StandIn(options: V1StandInOptions = {}): Promise<V1StandIn> {
  const seed = structuredClone(options.seed ?? V1_EXAMPLE_EXPORT) as V1Seed;
  const data = Object.fromEntries(KINDS.map((kind) => [kind, [...(seed[kind] ?? [])]])) as Required<V1Seed>;
  const clientId = options.clientId ?? 'v1-client';
  const clientSecret = options.clientSecret ?? 'v1-secret';
  const tokenSeconds = options.accessTokenSeconds ?? 3600;
  const tokens = new Map<string, { expiresAt: number; revoked: boolean }>();
  const failRules: (V1FailRule & { times: number })[] = [];
  const requests: V1RecordedRequest[] = [];
  let issued = 0;

  /** The primary location's id: what setup lists use when locationId is omitted (v1-source.md §2). */
  const primaryLocationId = (): string => {
    const locations = data.locations.filter(isObject);
    const primary = locations.find((location) => location.primaryBusiness === true) ?? locations[0];
    return primary ? String(primary.id) : '';
  };

  function page(path: string, query: URLSearchParams, rows: unknown[]) {
    const offset = query.has('offset') ? Number(query.get('offset')) : 0;
    const limit = query.has('limit') ? Number(query.get('limit')) : 20;
    if (!Number.isInteger(offset) || offset < 0) throw new V1Failure(400, 'OFFSET-100', 'offset parameter negative');
    if (!Number.isInteger(limit) || limit < 1) throw new V1Failure(400, 'LIMIT-100', 'limit parameter invalid');
    if (limit > 100) throw new V1Failure(400, 'LIMIT-100', 'limit parameter above 100');
    const slice = rows.slice(offset, offset + limit);
    return { object: 'list', url: path, count: slice.length, total: rows.length, hasMore: offset + slice.length < rows.length, data: slice };
  }

  function single(rows: unknown[], id: string, what: string) {
    const row = rows.find((candidate) => isObject(candidate) && String(candidate.id) === id);
    if (!row) throw new V1Failure(404, 'NOTFOUND-100', `${what} ${id} not found`);
    return row;
  }

  const locationOf = (query: URLSearchParams) => query.get('locationId') || primaryLocationId();
  /** A customer of no location (no locationId or businessId) is a company customer: every location lists it. */
  const customerAt = (location: string) => (row: unknown) => {
    if (!isObject(row)) return true;
    const own = row.locationId ?? row.businessId;
    return own === undefined || own === null || own === '' || String(own) === location;
  };
  /** The date part of an appointment's start (YYYY-MM-DD), as the consumer list filters it. */
  const startDay = (row: Record<string, unknown>) => String(row.startDateTime ?? row.appointmentStartDateTime ?? '').slice(0, 10);
  /**
   * GET /consumer/v1/appointments: company-wide without locationId; startDate/endDate (YYYY-MM-DD)
   * bound the start's date, both ends included; status is one code.
   */
  const appointmentsFor = (query: URLSearchParams) => (row: unknown) => {
    if (!isObject(row)) return true;
    const location = query.get('locationId');
    const from = query.get('startDate')?.slice(0, 10);
    const to = query.get('endDate')?.slice(0, 10);
    const status = query.get('status');
    return (!location || String(row.locationId) === location) && (!from || startDay(row) >= from) && (!to || startDay(row) <= to) && (!status || String(row.status).toUpperCase() === status.toUpperCase());
  };
  const notDeleted = (query: URLSearchParams) => (row: unknown) => query.get('deleted') === 'true' || !isObject(row) || row.deletedStatus !== true;

  /** GET routes of v1-source.md §3; longer fixed segments first (services/allocations/{id} before services/{id}). */
  const routes: [RegExp, (match: string[], query: URLSearchParams, path: string) => unknown][] = [
    [/^\/setup\/v1\/locations$/, (_m, q, p) => page(p, q, data.locations.filter(notDeleted(q)))],
    [/^\/setup\/v1\/locations\/services\/([^/]+)$/, ([, id]) => {
      for (const location of data.locations.filter(isObject)) {
        const found = (Array.isArray(location.services) ? location.services : []).find((item: unknown) => isObject(item) && String(item.id) === id);
        if (found) return found;
      }
      throw new V1Failure(404, 'NOTFOUND-100', `location service ${id} not found`);
    }],
    [/^\/setup\/v1\/locations\/([^/]+)\/services$/, ([, id], q, p) => {
      const location = single(data.locations, id!, 'location') as Record<string, unknown>;
      return page(p, q, Array.isArray(location.services) ? location.services : []);
    }],
    [/^\/setup\/v1\/locations\/([^/]+)$/, ([, id]) => single(data.locations, id!, 'location')],
    [/^\/setup\/v1\/services$/, (_m, q, p) => page(p, q, data.services.filter((row) => fieldIs(row, 'locationId', locationOf(q))))],
    [/^\/setup\/v1\/services\/allocations\/([^/]+)$/, ([, id]) => single(data.serviceAllocations, id!, 'service allocation')],
    [/^\/setup\/v1\/services\/([^/]+)\/allocations$/, ([, id], q, p) => {
      const rows = data.serviceAllocations.filter(
        (row) =>
          fieldIs(row, 'locationId', locationOf(q)) &&
          (id === '0' || fieldIs(row, 'serviceId', id!)) &&
          (!q.get('resourceId') || fieldIs(row, 'resourceId', q.get('resourceId')!)),
      );
      return page(p, q, rows);
    }],
    [/^\/setup\/v1\/services\/([^/]+)$/, ([, id]) => single(data.services, id!, 'service')],
    [/^\/setup\/v1\/resources$/, (_m, q, p) => page(p, q, data.resources.filter((row) => fieldIs(row, 'locationId', locationOf(q)) && notDeleted(q)(row)))],
    [/^\/setup\/v1\/resources\/allocations\/([^/]+)$/, ([, id]) => single(data.resourceAllocations, id!, 'resource allocation')],
    [/^\/setup\/v1\/resources\/blocks\/([^/]+)$/, ([, id]) => single(data.resourceBlocks, id!, 'resource block')],
    [/^\/setup\/v1\/resources\/([^/]+)\/allocations$/, ([, id], q, p) => {
      single(data.resources, id!, 'resource');
      return page(p, q, data.resourceAllocations.filter((row) => fieldIs(row, 'resourceId', id!)));
    }],
    [/^\/setup\/v1\/resources\/([^/]+)\/blocks$/, ([, id], q, p) => {
      single(data.resources, id!, 'resource');
      return page(p, q, data.resourceBlocks.filter((row) => fieldIs(row, 'resourceId', id!)));
    }],
    [/^\/setup\/v1\/resources\/([^/]+)$/, ([, id]) => single(data.resources, id!, 'resource')],
    [/^\/consumer\/v1\/customers$/, (_m, q, p) => page(p, q, data.customers.filter((row) => customerAt(locationOf(q))(row) && notDeleted(q)(row)))],
    [/^\/consumer\/v1\/customers\/([^/]+)$/, ([, id]) => single(data.customers, id!, 'customer')],
    [/^\/consumer\/v1\/appointments$/, (_m, q, p) => {
      for (const name of ['startDate', 'endDate']) {
        const value = q.get(name);
        if (value && !/^\d{4}-\d{2}-\d{2}/.test(value)) throw new V1Failure(400, 'DATE-100', `${name} is not YYYY-MM-DD`);
      }
      return page(p, q, data.appointments.filter(appointmentsFor(q)));
    }],
    [/^\/consumer\/v1\/appointments\/([^/]+)$/, ([, id]) => single(data.appointments, id!, 'appointment')],
  ];

  function token(form: URLSearchParams, authorization: string | null) {
    let id = form.get('client_id');
    let secret = form.get('client_secret');
    // HTTP Basic is the other standard way to send client credentials (RFC 6749 §2.3.1).
    if (authorization?.startsWith('Basic ')) {
      const [user, pass] = Buffer.from(authorization.slice(6), 'base64').toString('utf8').split(':');
      id = decodeURIComponent(user ?? '');
      secret = decodeURIComponent(pass ?? '');
    }
    if (form.get('grant_type') !== 'client_credentials') return { status: 400, body: { error: 'unsupported_grant_type' } };
    if (id !== clientId || secret !== clientSecret) return { status: 401, body: { error: 'invalid_client' } };
    const scopes = (form.get('scope') ?? '').split(' ').filter(Boolean);
    if (scopes.some((scope) => scope !== 'OnSchedApi' && scope !== 'distance')) return { status: 400, body: { error: 'invalid_scope' } };
    const value = randomBytes(24).toString('base64url');
    tokens.set(value, { expiresAt: Date.now() + tokenSeconds * 1000, revoked: false });
    issued += 1;
    return { status: 200, body: { access_token: value, expires_in: tokenSeconds, token_type: 'Bearer', scope: scopes.join(' ') || 'OnSchedApi' } };
  }

  async function handle(request: IncomingMessage, response: ServerResponse) {
    const url = new URL(request.url ?? '/', 'http://127.0.0.1');
    const body = await readBody(request);
    const authorization = request.headers.authorization ?? null;
    const record: V1RecordedRequest = { method: request.method ?? 'GET', path: url.pathname, query: url.searchParams, body, authorization, status: 0 };
    requests.push(record);
    const send = (status: number, payload: unknown, headers: Record<string, string> = {}) => {
      record.status = status;
      response.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers });
      response.end(JSON.stringify(payload));
    };

    const where = `${url.pathname}${url.search}`;
    const failIndex = failRules.findIndex((rule) => !rule.pathIncludes || where.includes(rule.pathIncludes));
    if (failIndex >= 0) {
      const rule = failRules[failIndex]!;
      rule.times -= 1;
      if (rule.times <= 0) failRules.splice(failIndex, 1);
      const headers: Record<string, string> = {};
      if (rule.retryAfter !== undefined) headers['retry-after'] = rule.retryAfter;
      else if (rule.retryAfterSeconds !== undefined) headers['retry-after'] = String(rule.retryAfterSeconds);
      return send(rule.status, { code: `HTTP-${rule.status}`, message: `injected failure ${rule.status}` }, headers);
    }

    if (url.pathname === '/connect/token') {
      if (request.method !== 'POST') return send(405, { error: 'invalid_request' });
      if (!(request.headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded')) return send(400, { error: 'invalid_request', error_description: 'form body expected' });
      const answer = token(new URLSearchParams(body), authorization);
      return send(answer.status, answer.body);
    }

    const bearer = authorization?.startsWith('Bearer ') ? authorization.slice(7) : null;
    const grant = bearer ? tokens.get(bearer) : undefined;
    if (!grant || grant.revoked || grant.expiresAt <= Date.now()) return send(401, { message: 'Authorization has been denied for this request.' });
    if (request.method !== 'GET') return send(405, { message: 'method not allowed' });
    for (const [pattern, route] of routes) {
      const match = pattern.exec(url.pathname);
      if (!match) continue;
      try {
        return send(200, route(match.map((part) => decodeURIComponent(part)), url.searchParams, url.pathname));
      } catch (error) {
        if (error instanceof V1Failure) return send(error.status, { code: error.code, message: error.message });
        throw error;
      }
    }
    return send(404, { code: 'NOTFOUND-100', message: `no route ${url.pathname}` });
  }

  const server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      if (!response.headersSent) response.writeHead(500, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ message: error instanceof Error ? error.message : String(error) }));
    });
  });
  const port = await freePort();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  const base = `http://127.0.0.1:${port}`;

  return {
    baseUrl: base,
    tokenUrl: `${base}/connect/token`,
    clientId,
    clientSecret,
    data,
    requests,
    tokensIssued: () => issued,
    failNext(rule) {
      failRules.push({ ...rule, times: rule.times ?? 1 });
    },
    injectMalformed(kind, value, position) {
      data[kind].splice(position ?? data[kind].length, 0, value);
    },
    revokeTokens() {
      for (const grant of tokens.values()) grant.revoked = true;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
