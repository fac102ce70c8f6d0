import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import { json, machineToken } from '../../helpers/app.js';
import type { App } from '../../../src/platform/http/types.js';
import { createWorld } from '../../helpers/world.js';
import type { Tenant } from '../../helpers/world.js';

export const ORIGIN = 'https://book.example.com';

/**
 * Every test app gets a key prefix of its own, so counters in a Redis shared with other test files
 * (CI's second pass) never mix, not even the OAuth token route's global bucket.
 */
export const isolatedPrefix = () => `rl:test-${randomUUID()}:`;

export interface Caller {
  tenant: Tenant;
  /** Headers of a machine client of the company. */
  machine: Record<string, string>;
  /** Headers of the company's public booking page. */
  public: Record<string, string>;
}

export async function createCaller(app: App): Promise<Caller> {
  const tenant = await createWorld(app).tenant({ allowedDomains: ['book.example.com'] });
  const token = await machineToken(app, tenant);
  return { tenant, machine: { authorization: `Bearer ${token}` }, public: { 'x-client-id': tenant.publicClientId, origin: ORIGIN } };
}

type Inject = { method: 'GET' | 'POST' | 'PUT' | 'DELETE'; url: string; payload?: unknown; public?: boolean };

/** One cheap request of each family (a 400 counts like any answer: the budget is spent first). */
export const FAMILY_REQUESTS = {
  availability: { method: 'GET', url: '/v3/availability' },
  apiRead: { method: 'GET', url: '/v3/locations' },
  apiWrite: { method: 'POST', url: '/v3/location', payload: {} },
  publicRead: { method: 'GET', url: '/v3/public/company', public: true },
  publicWrite: { method: 'POST', url: '/v3/public/appointment/hold', payload: {}, public: true },
  appointmentList: { method: 'GET', url: '/v3/appointments' },
  appointmentCursor: { method: 'GET', url: '/v3/appointments/cursor' },
} satisfies Record<string, Inject>;

export type LimitedFamily = keyof typeof FAMILY_REQUESTS;

export const FAMILY_MESSAGES: Record<LimitedFamily, string> = {
  availability: 'Availability rate limit exceeded',
  apiRead: 'API read rate limit exceeded',
  apiWrite: 'API write rate limit exceeded',
  publicRead: 'Public read rate limit exceeded',
  publicWrite: 'Public write rate limit exceeded',
  appointmentList: 'Appointment list rate limit exceeded',
  appointmentCursor: 'Appointment cursor rate limit exceeded',
};

/** Sends at once (inject() alone sends only when awaited). */
export async function send(app: App, caller: Caller, family: LimitedFamily, headers?: Record<string, string>) {
  const request: Inject = FAMILY_REQUESTS[family];
  return app.inject({
    method: request.method,
    url: request.url,
    headers: headers ?? (request.public ? caller.public : caller.machine),
    ...(request.payload !== undefined ? { payload: request.payload as Record<string, unknown> } : {}),
  });
}

/** A 429 of the family: the error body, Retry-After in whole seconds within the window, and the RateLimit headers. */
export function assertRefused(response: LightMyRequestResponse, message: string, windowSeconds: number) {
  assert.equal(response.statusCode, 429, response.body);
  assert.deepEqual(json(response), { success: false, message, errors: [] });
  const retryAfter = Number(response.headers['retry-after']);
  assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= windowSeconds, `Retry-After ${response.headers['retry-after']}`);
  assert.equal(response.headers['ratelimit-remaining'], '0');
  assert.equal(response.headers['ratelimit-reset'], response.headers['retry-after']);
  assert.ok(response.headers['ratelimit-limit']);
  return retryAfter;
}

export function assertNotRefused(response: LightMyRequestResponse, what: string) {
  assert.notEqual(response.statusCode, 429, `${what}: ${response.body}`);
  assert.ok(response.statusCode < 500, `${what}: ${response.statusCode} ${response.body}`);
}
