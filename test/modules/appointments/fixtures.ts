// Shared by the appointment tests: a tenant's bookable catalog (test/helpers/world.ts) with the
// context it lives in, helpers to name slots and call the appointment routes, and the assertions
// on their error bodies. Each test makes its own tenant, so tests share one database safely.
import { randomUUID } from 'node:crypto';
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { DateTime } from 'luxon';
import { json } from '../../helpers/app.js';
import type { TestContext } from '../../helpers/app.js';
import { LONDON } from '../../helpers/world.js';
import type { Bookable, BookableOptions, TenantFixture } from '../../helpers/world.js';

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

export interface Setup extends Bookable {
  context: TestContext;
  tenant: TenantFixture;
  headers: Record<string, string>;
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

/**
 * A tenant (a new one of the context's world unless given) with one location open every day
 * 09:00-17:00 in `zone`, one 60-minute service offered there, its resources and one customer.
 */
export async function setup(context: TestContext, options: BookableOptions & { tenant?: TenantFixture } = {}): Promise<Setup> {
  const { tenant = await context.world.tenant(), ...shop } = options;
  return { context, tenant, headers: tenant.dashboard, ...(await tenant.bookable(shop)) };
}

/** A second customer of the same tenant. */
export function newCustomer(s: Setup): Promise<string> {
  return s.tenant.customer({ firstName: 'Grace', lastName: 'Hopper', email: `grace-${randomUUID()}@example.com` });
}

/** POST /v3/appointment (kind 'create') or /v3/appointment/hold; the body defaults to the first resource and the customer. */
export function request(s: Setup, kind: 'create' | 'hold', body: Record<string, unknown>, headers: Record<string, string> = s.headers) {
  const url = `/v3/appointment${kind === 'hold' ? '/hold' : ''}?LocationId=${s.locationId}&ServiceId=${s.serviceId}`;
  return s.context.app.inject({ method: 'POST', url, headers, payload: { ResourceIds: [s.resourceIds[0]], CustomerId: s.customerId, ...body } });
}

export const create = (s: Setup, body: Record<string, unknown>) => s.tenant.book<Appointment>({ at: s, body });
export const hold = (s: Setup, body: Record<string, unknown>) => s.tenant.book<Appointment>({ at: s, body, hold: true });

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
