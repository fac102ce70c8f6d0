// The fixture builder every API test sets up with: `world.tenant()` makes a company (and its
// Owner) through POST /v3/company, and the tenant's own factories make its catalog and bookings
// through the API: `.location({ hours })`, `.service()`, `.resource()` and `.resources(n)`,
// `.customer()`, `.bookable()` (one of each at once) and `.book()`. A world is bound to an
// application (inject) or to a running server's base URL (fetch), so the in-process tests and the
// ones against real server processes set up the same way. Each test makes its own tenant, which is
// what isolates tests that share a database. The factories' defaults are names some tests assert
// on (Main, Consult, Ada Lovelace); the opening hours tests share are defined here, once.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { WeeklyAvailability } from '../../src/platform/database/schema.js';
import type { App } from '../../src/platform/http/types.js';

export { ALL_DAY, ALWAYS_OPEN, EVERY_DAY, LONDON, NINE_TO_FIVE, WEEKDAYS_9_TO_17, weekly } from './hours.js';
import { EVERY_DAY, LONDON } from './hours.js';

/** An address no other test uses. */
export const uniqueEmail = (label = 'user') => `${label}-${randomUUID()}@example.com`;

// --- Requests ----------------------------------------------------------------------------------

/** Request body fields passed to the API as they are. */
export type Fields = Record<string, unknown>;
type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
type Send = (method: Method, url: string, headers: Record<string, string>, payload?: Fields) => Promise<{ status: number; text: string }>;

function transport(target: App | string): Send {
  if (typeof target !== 'string') {
    return async (method, url, headers, payload) => {
      const response = await target.inject({ method, url, headers, ...(payload ? { payload } : {}) });
      return { status: response.statusCode, text: response.body };
    };
  }
  return async (method, url, headers, payload) => {
    const response = await fetch(`${target}${url}`, {
      method,
      headers: { ...headers, ...(payload ? { 'content-type': 'application/json' } : {}) },
      ...(payload ? { body: JSON.stringify(payload) } : {}),
      // Set-up against a real server is bounded, as every wait of the fault drills is.
      signal: AbortSignal.timeout(20_000),
    });
    return { status: response.status, text: await response.text() };
  };
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- set-up answers are read field by field
type Json = any;

/** Sends a set-up request that must answer `status`; returns the parsed body. */
async function expectStatus(send: Send, status: number, method: Method, url: string, headers: Record<string, string>, payload?: Fields): Promise<Json> {
  const answer = await send(method, url, headers, payload);
  assert.equal(answer.status, status, `${method} ${url}: ${answer.text}`);
  return answer.text ? JSON.parse(answer.text) : null;
}

// --- The world ---------------------------------------------------------------------------------

export interface User {
  userId: string;
  email: string;
  password: string;
  userToken: string;
}

export interface Tenant extends User {
  companyId: string;
  apiKey: string;
  publicClientId: string;
  /** Headers of the Owner as a dashboard user. */
  dashboard: Record<string, string>;
}

/** The ids `.bookable()` made: one location, one service there, its resources and a customer. */
export interface Bookable {
  locationId: string;
  serviceId: string;
  resourceIds: string[];
  customerId: string;
  /** The location's time zone. */
  zone: string;
}

/** `hours` is the record's weeklyAvailability (left to the API's default when omitted). */
type WithHours = { hours?: WeeklyAvailability | null } & Fields;

/** What `.bookable()` varies: the location's zone and hours, fields of each record, the resources. */
export interface BookableOptions {
  zone?: string;
  hours?: WeeklyAvailability | null;
  location?: Fields;
  service?: Fields;
  /** How many resources, or one for each entry with its fields (default 1). */
  resources?: number | Fields[];
}

export interface TenantFixture extends Tenant {
  /** A location named Main in Europe/London unless said otherwise. */
  location(options?: { name?: string; timezone?: string } & WithHours): Promise<string>;
  /** A 60-minute service named Consult. */
  service(options?: { locationIds?: string[]; name?: string; duration?: number } & WithHours): Promise<string>;
  /** A resource named Resource. */
  resource(options?: { locationIds?: string[]; serviceIds?: string[] } & WithHours): Promise<string>;
  /** `count` resources named Resource 0, 1, ...; or one for each entry of a list, with its fields. */
  resources(count: number | Fields[], options?: { locationIds?: string[]; serviceIds?: string[] } & WithHours): Promise<string[]>;
  /** Ada Lovelace (unless `firstName` is given: the name goes as a whole), with an email of her own. */
  customer(options?: Fields): Promise<string>;
  /**
   * A location open every day 09:00-17:00 (in `zone`, London by default), a service offered there,
   * `resources` resources providing it (one by default) and a customer.
   */
  bookable(options?: BookableOptions): Promise<Bookable>;
  /**
   * POST /v3/appointment (or /v3/appointment/hold) at `at`'s location and service, for its first
   * resource and its customer unless `body` says otherwise; must answer 201.
   */
  book<T = { id: string } & Fields>(options: { at: Omit<Bookable, 'zone'>; body: Fields; hold?: boolean }): Promise<T>;
}

export interface World {
  /** A new dashboard user, signed up and logged in. */
  user(label?: string): Promise<User>;
  /**
   * A new company named `name` (unique by default), owned by `owner`: a new user unless given, or
   * the world's one owner when it was made with `sharedOwner`. Other fields go into the body.
   */
  tenant(options?: { name?: string; owner?: User } & Fields): Promise<TenantFixture>;
}

const hoursField = (hours: WeeklyAvailability | null | undefined) => (hours === undefined ? {} : { weeklyAvailability: hours });

/**
 * A world bound to an application or to a server's base URL. With `sharedOwner`, every tenant
 * belongs to one user, signed up on first use (password hashing is slow; tests of a file that do
 * not care who owns their company share one).
 */
export function createWorld(target: App | string, options: { sharedOwner?: boolean } = {}): World {
  const send = transport(target);
  let shared: Promise<User> | undefined;

  async function user(label = 'user'): Promise<User> {
    const email = uniqueEmail(label);
    const password = 'correct horse battery';
    const created = await expectStatus(send, 201, 'POST', '/v3/auth/signup', {}, { email, password, name: label });
    const login = await expectStatus(send, 200, 'POST', '/v3/auth/login', {}, { email, password });
    return { userId: created.id, email, password, userToken: login.accessToken };
  }

  async function tenant({ name = `Company ${randomUUID()}`, owner, ...fields }: { name?: string; owner?: User } & Fields = {}): Promise<TenantFixture> {
    const by = owner ?? (await (options.sharedOwner ? (shared ??= user('owner')) : user('owner')));
    const company = await expectStatus(send, 201, 'POST', '/v3/company', { authorization: `Bearer ${by.userToken}` }, { name, ...fields });
    const dashboard = { authorization: `Bearer ${by.userToken}`, 'x-api-key': company.apiKey as string };
    const create = async (path: string, body: Fields): Promise<string> => (await expectStatus(send, 201, 'POST', path, dashboard, body)).id;

    const fixture: TenantFixture = {
      ...by,
      companyId: company.id,
      apiKey: company.apiKey,
      publicClientId: company.publicClientId,
      dashboard,
      location: ({ name = 'Main', timezone = LONDON, hours, ...rest } = {}) =>
        create('/v3/location', { name, timezoneName: timezone, ...hoursField(hours), ...rest }),
      service: ({ name = 'Consult', duration = 60, hours, ...rest } = {}) => create('/v3/service', { name, duration, ...hoursField(hours), ...rest }),
      resource: ({ name = 'Resource', hours, ...rest } = {}) => create('/v3/resource', { name, ...hoursField(hours), ...rest }),
      async resources(count, options = {}) {
        const each = typeof count === 'number' ? Array.from({ length: count }, (): Fields => ({})) : count;
        const ids: string[] = [];
        for (const [index, fields] of each.entries()) ids.push(await fixture.resource({ name: `Resource ${index}`, ...options, ...fields }));
        return ids;
      },
      customer: (fields = {}) =>
        create('/v3/customer', { ...('firstName' in fields ? {} : { firstName: 'Ada', lastName: 'Lovelace' }), email: uniqueEmail('ada'), ...fields }),
      async bookable({ zone = LONDON, hours = EVERY_DAY, location, service, resources = 1 } = {}) {
        const locationId = await fixture.location({ timezone: zone, hours, ...location });
        const serviceId = await fixture.service({ locationIds: [locationId], ...service });
        const resourceIds = await fixture.resources(resources, { locationIds: [locationId], serviceIds: [serviceId] });
        return { locationId, serviceId, resourceIds, customerId: await fixture.customer(), zone };
      },
      book: ({ at, body, hold = false }) =>
        expectStatus(send, 201, 'POST', `/v3/appointment${hold ? '/hold' : ''}?LocationId=${at.locationId}&ServiceId=${at.serviceId}`, dashboard, {
          ResourceIds: [at.resourceIds[0]],
          CustomerId: at.customerId,
          ...body,
        }),
    };
    return fixture;
  }

  return { user, tenant };
}
