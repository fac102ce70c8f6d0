// Shared set-up for the appointment tests: a tenant with a location open every day 09:00-17:00,
// a service offered there and resources that provide it, plus helpers to name slots and call the
// appointment routes. Each test makes its own tenant, so tests share one database safely.
import { randomUUID } from 'node:crypto';
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { DateTime } from 'luxon';
import { json } from '../../helpers/app.js';
import type { Tenant, TestContext } from '../../helpers/app.js';
import type { WeeklyAvailability } from '../../../src/platform/database/schema.js';

export const LONDON = 'Europe/London';
const NINE_TO_FIVE = [{ start: '09:00', end: '17:00' }];
export const EVERY_DAY: WeeklyAvailability = { mon: NINE_TO_FIVE, tue: NINE_TO_FIVE, wed: NINE_TO_FIVE, thu: NINE_TO_FIVE, fri: NINE_TO_FIVE, sat: NINE_TO_FIVE, sun: NINE_TO_FIVE };

export interface FieldError {
  type: string;
  location: string;
  path: string;
  msg: string;
  code?: string;
}

export interface Appointment {
  id: string;
  companyId: string;
  locationId: string;
  serviceId: string;
  customerId: string | null;
  resourceIds: string[];
  status: 'IN' | 'RS' | 'BK' | 'CN' | 'RE';
  startTime: string;
  endTime: string;
  duration: number;
  padding: number;
  timezoneName: string;
  expiresAt: string | null;
  confirmed: boolean;
  allowPaddingOverflow: boolean;
  ignoreExternalEvents: boolean;
  notes: string | null;
  rescheduledFromId: string | null;
  rescheduledToId: string | null;
  createdAt: string;
  updatedAt: string;
  [field: string]: unknown;
}

export interface Setup {
  context: TestContext;
  tenant: Tenant;
  headers: Record<string, string>;
  locationId: string;
  serviceId: string;
  resourceIds: string[];
  customerId: string;
  zone: string;
}

/** A local date `daysAhead` days after the location's local today (default two weeks: always bookable). */
export function dayAhead(daysAhead = 14, zone = LONDON): string {
  return DateTime.now().setZone(zone).startOf('day').plus({ days: daysAhead }).toISODate()!;
}

/** A slot body `{Unavailability: {startTime, endTime}}` at local `date` `time` for `minutes`. */
export function slot(date: string, time: string, minutes = 60, zone = LONDON) {
  const start = DateTime.fromISO(`${date}T${time}`, { zone });
  return { Unavailability: { startTime: start.toISO()!, endTime: start.plus({ minutes }).toISO()! } };
}

export function assertBadRequest(response: LightMyRequestResponse, code?: string): { message: string; errors: FieldError[]; code?: string } {
  assert.equal(response.statusCode, 400, response.body);
  const body = json(response);
  assert.equal(body.success, false);
  assert.equal(typeof body.message, 'string');
  assert.ok(Array.isArray(body.errors));
  if (code) assert.equal(body.code, code, response.body);
  return body;
}

/** A time that was never open (closed, outside the hours, off the grid): a 400 that says so, not BOOKING-105. */
export function assertNotOpen(response: LightMyRequestResponse) {
  const body = assertBadRequest(response);
  assert.equal(body.code, undefined, response.body);
  assert.match(body.message, /not open for booking/);
  return body;
}

/** A new company owned by `owner` (signed up once per file: password hashing is slow). */
export async function newTenant(context: TestContext, owner: { userToken: string } & Omit<Tenant, 'companyId' | 'apiKey' | 'publicClientId' | 'dashboard'>): Promise<Tenant> {
  const response = await context.app.inject({
    method: 'POST',
    url: '/v3/company',
    headers: { authorization: `Bearer ${owner.userToken}` },
    payload: { name: `Company ${randomUUID()}` },
  });
  assert.equal(response.statusCode, 201, response.body);
  const { id, apiKey, publicClientId } = json(response);
  return { ...owner, companyId: id, apiKey, publicClientId, dashboard: { authorization: `Bearer ${owner.userToken}`, 'x-api-key': apiKey } };
}

export async function post(context: TestContext, headers: Record<string, string>, url: string, payload: Record<string, unknown>): Promise<{ id: string }> {
  const response = await context.app.inject({ method: 'POST', url, headers, payload });
  assert.equal(response.statusCode, 201, response.body);
  return json(response);
}

/**
 * A tenant with one location (open every day 09:00-17:00 in `zone`), one service offered there
 * (60 minutes unless `service` says otherwise), `resources` resources providing it and one customer.
 */
export async function setup(
  context: TestContext,
  tenant: Tenant,
  options: { zone?: string; location?: Record<string, unknown>; service?: Record<string, unknown>; resources?: Array<Record<string, unknown>> } = {},
): Promise<Setup> {
  const headers = tenant.dashboard;
  const zone = options.zone ?? LONDON;
  const location = await post(context, headers, '/v3/location', { name: 'Main', timezoneName: zone, weeklyAvailability: EVERY_DAY, ...options.location });
  const service = await post(context, headers, '/v3/service', { name: 'Consult', duration: 60, locationIds: [location.id], ...options.service });
  const resourceIds: string[] = [];
  for (const [index, fields] of (options.resources ?? [{}]).entries()) {
    const resource = await post(context, headers, '/v3/resource', { name: `Resource ${index}`, locationIds: [location.id], serviceIds: [service.id], ...fields });
    resourceIds.push(resource.id);
  }
  const customer = await post(context, headers, '/v3/customer', { firstName: 'Ada', lastName: 'Lovelace', email: `ada-${randomUUID()}@example.com` });
  return { context, tenant, headers, locationId: location.id, serviceId: service.id, resourceIds, customerId: customer.id, zone };
}

/** A second customer of the same tenant. */
export async function newCustomer(s: Setup): Promise<string> {
  return (await post(s.context, s.headers, '/v3/customer', { firstName: 'Grace', lastName: 'Hopper', email: `grace-${randomUUID()}@example.com` })).id;
}

/** POST /v3/appointment (kind 'create') or /v3/appointment/hold; the body defaults to the first resource and the customer. */
export function request(s: Setup, kind: 'create' | 'hold', body: Record<string, unknown>, headers: Record<string, string> = s.headers) {
  const url = `/v3/appointment${kind === 'hold' ? '/hold' : ''}?LocationId=${s.locationId}&ServiceId=${s.serviceId}`;
  return s.context.app.inject({ method: 'POST', url, headers, payload: { ResourceIds: [s.resourceIds[0]], CustomerId: s.customerId, ...body } });
}

export async function create(s: Setup, body: Record<string, unknown>): Promise<Appointment> {
  const response = await request(s, 'create', body);
  assert.equal(response.statusCode, 201, response.body);
  return json(response);
}

export async function hold(s: Setup, body: Record<string, unknown>): Promise<Appointment> {
  const response = await request(s, 'hold', body);
  assert.equal(response.statusCode, 201, response.body);
  return json(response);
}

/** PUT /v3/appointment/:id/<operation> (operation '' is the metadata update). */
export function operate(s: Setup, id: string, operation: string, payload?: Record<string, unknown>, headers: Record<string, string> = s.headers) {
  return s.context.app.inject({ method: 'PUT', url: `/v3/appointment/${id}${operation ? `/${operation}` : ''}`, headers, ...(payload ? { payload } : {}) });
}

/** Availability of the service on one date, as local HH:mm starts. */
export async function freeTimes(s: Setup, date: string, query: Record<string, string> = {}): Promise<string[]> {
  const params = new URLSearchParams({ LocationId: s.locationId, ServiceId: s.serviceId, startDate: date, ...query });
  const response = await s.context.app.inject({ method: 'GET', url: `/v3/availability?${params}`, headers: s.headers });
  assert.equal(response.statusCode, 200, response.body);
  return json<{ availableTimes: Array<{ startTime: string }> }>(response).availableTimes.map((t) => DateTime.fromISO(t.startTime, { zone: s.zone }).toFormat('HH:mm'));
}

/** Events written to the outbox for an appointment, oldest first. */
export async function events(s: Setup, appointmentId: string): Promise<string[]> {
  const rows = await s.context.database.db
    .selectFrom('outboxEvents')
    .select(['trigger'])
    .where('companyId', '=', s.tenant.companyId)
    .where('appointmentId', '=', appointmentId)
    .orderBy('createdAt')
    .orderBy('id')
    .execute();
  return rows.map((r) => r.trigger);
}
