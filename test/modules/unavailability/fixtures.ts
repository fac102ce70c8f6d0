// Shared by the unavailability tests: a tenant with a small catalog (made with test/helpers/world.ts),
// request helpers and the assertions on the error body. Each test builds its own world (its own company).
import { randomUUID } from 'node:crypto';
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { addMember, json, machineToken } from '../../helpers/app.js';
import type { TestContext } from '../../helpers/app.js';
import type { TenantFixture } from '../../helpers/world.js';

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface FieldError {
  type: string;
  location: string;
  path: string;
  msg: string;
  code?: string;
}
export interface ErrorBody {
  success: boolean;
  message: string;
  errors: FieldError[];
  code?: string;
}
export interface Expected {
  path: string;
  code?: string;
  location?: 'body' | 'query' | 'params';
}

export interface World {
  tenant: TenantFixture;
  headers: Record<string, string>;
  /** Europe/London. */
  location: string;
  /** Asia/Kolkata (a fractional offset); nothing is linked to it. */
  location2: string;
  /** Offered at `location`. */
  service: string;
  /** At `location`, providing `service`. */
  resource: string;
}

/** Requests to the app of `context`, read when a request is sent (a file's context is made in its before hook). */
export function caller(context: () => TestContext) {
  return (method: Method, url: string, headers: Record<string, string>, payload?: unknown) =>
    context().app.inject({ method, url, headers, ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }) });
}

export function created<T = Record<string, unknown>>(response: LightMyRequestResponse, status = 201): T {
  assert.equal(response.statusCode, status, response.body);
  return json<T>(response);
}

export const ok = <T = Record<string, unknown>>(response: LightMyRequestResponse) => created<T>(response, 200);

/** A tenant with two locations (London, and Kolkata with nothing linked), a 30-minute service and a resource at the first. */
export async function newWorld(context: TestContext): Promise<World> {
  const tenant = await context.world.tenant();
  const tag = randomUUID().slice(0, 8);
  const location = await tenant.location({ name: `Main ${tag}` });
  const location2 = await tenant.location({ name: `Second ${tag}`, timezone: 'Asia/Kolkata' });
  const service = await tenant.service({ name: `Cut ${tag}`, duration: 30, locationIds: [location] });
  const resource = await tenant.resource({ name: `Ann ${tag}`, locationIds: [location], serviceIds: [service] });
  return { tenant, headers: tenant.dashboard, location, location2, service, resource };
}

/** The three scopes a block or a recurring block may have, with the family of their error codes. */
export const scopes = (world: World) =>
  [
    { family: 'CALENDARBLOCK', scope: { LocationId: world.location } },
    { family: 'RESOURCEBLOCK', scope: { ResourceId: world.resource } },
    { family: 'SERVICEBLOCK', scope: { ServiceId: world.service } },
  ] as const;

/** A dashboard member of the world's company with a role; `scopedTo` makes a LOCATIONS-scoped user. */
export async function member(context: TestContext, world: World, role: 'Owner' | 'Admin' | 'User' | 'Resource', scopedTo?: string[]) {
  const user = await addMember(context, world.tenant, role);
  if (role === 'Resource' || scopedTo) {
    const change = role === 'Resource' ? { role, linkedResourceId: world.resource } : { locationAccessMode: 'LOCATIONS', allowedLocationIds: scopedTo };
    const response = await caller(() => context)('POST', '/v3/users/adjustUsers', world.headers, { users: [{ id: user.userId, ...change }] });
    assert.equal(response.statusCode, 200, response.body);
  }
  return user.headers;
}

export async function machineHeaders(context: TestContext, world: World, scope?: string) {
  return { authorization: `Bearer ${await machineToken(context.app, world.tenant, scope)}` };
}

/** A 400 whose errors[] are exactly the expected entries; the body `code` is set only for one entry. */
export function assertInvalid(response: LightMyRequestResponse, expected: Expected[], message = 'Validation Error'): ErrorBody {
  assert.equal(response.statusCode, 400, response.body);
  const body = json<ErrorBody>(response);
  assert.equal(body.success, false);
  assert.equal(body.message, message);
  assert.deepEqual(
    body.errors.map((e) => ({ type: e.type, location: e.location, path: e.path, code: e.code })),
    expected.map((e) => ({ type: 'field', location: e.location ?? 'body', path: e.path, code: e.code })),
    response.body,
  );
  for (const entry of body.errors) assert.ok(typeof entry.msg === 'string' && entry.msg.length > 0, 'every entry has a msg');
  assert.equal(body.code, expected.length === 1 ? expected[0]!.code : undefined);
  return body;
}

/** 400 naming a foreign or unknown id at `path` (never 404). */
export function assertNotOwned(response: LightMyRequestResponse, id: string, path: string, location: 'body' | 'query') {
  assert.equal(response.statusCode, 400, response.body);
  const body = json<ErrorBody>(response);
  assert.match(body.message, new RegExp(id));
  assert.deepEqual(body.errors.map((e) => ({ path: e.path, location: e.location })), [{ path, location }]);
  assert.match(body.errors[0]!.msg, new RegExp(id));
}

export function assertStatus(response: LightMyRequestResponse, status: number, message?: RegExp) {
  assert.equal(response.statusCode, status, response.body);
  const body = json<ErrorBody>(response);
  assert.equal(body.success, false);
  if (message) assert.match(body.message, message);
}
