// Public flow 1-4 of the specification on GET /v3/public/company: x-client-id plus an Origin that
// is one of the company's Allowed Domains, and the Allowed Domains rules of PUT /v3/company.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { createTestContext, json, machineToken } from '../../helpers/app.js';
import type { TestContext } from '../../helpers/app.js';
import type { Tenant } from '../../helpers/world.js';

let context: TestContext;
before(async () => {
  context = await createTestContext();
});
after(() => context.close());

const ORIGIN = 'https://book.example.com';
const INVALID_CLIENT_ID = 'Invalid Client ID';

/** A tenant whose public booking page lives at book.example.com. */
function bookingTenant(name?: string): Promise<Tenant> {
  return context.world.tenant({ name, allowedDomains: ['book.example.com'] });
}

function publicCompany(headers: Record<string, string>) {
  return context.app.inject({ method: 'GET', url: '/v3/public/company', headers });
}

function assertError(response: LightMyRequestResponse, status: number, message?: string) {
  assert.equal(response.statusCode, status, response.body);
  const body = json(response);
  assert.equal(body.success, false);
  assert.equal(typeof body.message, 'string');
  assert.ok(Array.isArray(body.errors));
  if (message !== undefined) assert.equal(body.message, message);
  assert.equal(response.headers['access-control-allow-origin'], undefined, 'a refused origin is not granted CORS access');
  return body;
}

describe('Public flow 1 and 2: x-client-id plus an allowed Origin', () => {
  test('the exact allowed host over https is 200 with the company, and CORS echoes the origin', async () => {
    const tenant = await bookingTenant('Public Co');
    const response = await publicCompany({ 'x-client-id': tenant.publicClientId, origin: ORIGIN });
    assert.equal(response.statusCode, 200, response.body);
    assert.deepEqual(json(response), { id: tenant.companyId, name: 'Public Co', bookingPage: { brandColor: null, logoUrl: null, currency: null, fields: [] } });
    assert.equal(response.headers['access-control-allow-origin'], ORIGIN);
    assert.match(String(response.headers.vary), /Origin/i);
  });

  // Issue 12: an http page can be changed by anyone on its network, so http origins are refused
  // unless PUBLIC_ALLOW_HTTP_ORIGINS is set (test/platform/security.test.ts). This replaces "the
  // same host over http is allowed too".
  test('the same host over http is 403 by default', async () => {
    const tenant = await bookingTenant();
    assertError(await publicCompany({ 'x-client-id': tenant.publicClientId, origin: 'http://book.example.com' }), 403, 'Origin must be https');
  });

  test('the host matches without regard to letter case', async () => {
    const tenant = await bookingTenant();
    const response = await publicCompany({ 'x-client-id': tenant.publicClientId, origin: 'https://BOOK.Example.COM' });
    assert.equal(response.statusCode, 200, response.body);
  });

  test('a different host, a subdomain, a parent domain, another port or another scheme is 403', async () => {
    const tenant = await bookingTenant();
    const refused = [
      'https://evil.example.com',
      'https://sub.book.example.com',
      'https://example.com',
      'https://book.example.com.evil.test',
      'https://book.example.com:8443',
      'http://book.example.com:8080',
      'ftp://book.example.com',
      'null',
      'book.example.com',
    ];
    for (const origin of refused) {
      const response = await publicCompany({ 'x-client-id': tenant.publicClientId, origin });
      assertError(response, 403);
    }
  });

  test('a port in the Allowed Domain must match the Origin\'s port', async () => {
    const tenant = await context.world.tenant({ allowedDomains: ['localhost:5173'] });
    const allowed = await publicCompany({ 'x-client-id': tenant.publicClientId, origin: 'https://localhost:5173' });
    assert.equal(allowed.statusCode, 200, allowed.body);
    assertError(await publicCompany({ 'x-client-id': tenant.publicClientId, origin: 'https://localhost' }), 403);
    assertError(await publicCompany({ 'x-client-id': tenant.publicClientId, origin: 'https://localhost:5174' }), 403);
  });

  test('a company without Allowed Domains accepts no origin', async () => {
    const tenant = await context.world.tenant();
    assertError(await publicCompany({ 'x-client-id': tenant.publicClientId, origin: ORIGIN }), 403);
  });

  test('another company\'s Allowed Domain does not count', async () => {
    const tenant = await context.world.tenant({ allowedDomains: ['other-shop.example.com'] });
    await bookingTenant();
    assertError(await publicCompany({ 'x-client-id': tenant.publicClientId, origin: ORIGIN }), 403);
  });
});

describe('Public flow 3: missing Origin and client id', () => {
  test('a missing Origin is 403', async () => {
    const tenant = await bookingTenant();
    assertError(await publicCompany({ 'x-client-id': tenant.publicClientId }), 403);
    assertError(await publicCompany({ 'x-client-id': tenant.publicClientId, origin: '' }), 403);
  });

  test('a missing x-client-id is 401 Invalid Client ID', async () => {
    await bookingTenant();
    assertError(await publicCompany({ origin: ORIGIN }), 401, INVALID_CLIENT_ID);
    assertError(await publicCompany({ origin: ORIGIN, 'x-client-id': '' }), 401, INVALID_CLIENT_ID);
  });

  test('an unknown x-client-id is 401 Invalid Client ID', async () => {
    const tenant = await bookingTenant();
    for (const clientId of ['pub_unknown', `${tenant.publicClientId}x`, tenant.companyId, tenant.apiKey]) {
      assertError(await publicCompany({ 'x-client-id': clientId, origin: ORIGIN }), 401, INVALID_CLIENT_ID);
    }
  });

  test('a rotated public client id makes the old one 401', async () => {
    const tenant = await bookingTenant();
    const rotated = await context.app.inject({ method: 'POST', url: '/v3/company/publicClientId', headers: tenant.dashboard });
    assert.equal(rotated.statusCode, 200, rotated.body);
    const newClientId: string = json(rotated).publicClientId;
    assert.equal(typeof newClientId, 'string');
    assert.notEqual(newClientId, tenant.publicClientId);

    assertError(await publicCompany({ 'x-client-id': tenant.publicClientId, origin: ORIGIN }), 401, INVALID_CLIENT_ID);
    const fresh = await publicCompany({ 'x-client-id': newClientId, origin: ORIGIN });
    assert.equal(fresh.statusCode, 200, fresh.body);
    assert.equal(json(fresh).id, tenant.companyId);
  });

  test('machine tokens cannot rotate the public client id', async () => {
    const tenant = await bookingTenant();
    const token = await machineToken(context.app, tenant);
    const response = await context.app.inject({ method: 'POST', url: '/v3/company/publicClientId', headers: { authorization: `Bearer ${token}` } });
    assertError(response, 403);
    assert.equal((await publicCompany({ 'x-client-id': tenant.publicClientId, origin: ORIGIN })).statusCode, 200);
  });
});

describe('Public flow 4: no other credentials count', () => {
  test('x-api-key is ignored', async () => {
    const tenant = await bookingTenant();
    const other = await bookingTenant();
    for (const apiKey of [other.apiKey, tenant.apiKey, 'not-a-key']) {
      const response = await publicCompany({ 'x-client-id': tenant.publicClientId, origin: ORIGIN, 'x-api-key': apiKey });
      assert.equal(response.statusCode, 200, response.body);
      assert.equal(json(response).id, tenant.companyId);
    }
    // An API key does not stand in for the client id.
    assertError(await publicCompany({ origin: ORIGIN, 'x-api-key': tenant.apiKey }), 401, INVALID_CLIENT_ID);
  });

  test('a Bearer token does not stand in for the client id', async () => {
    const tenant = await bookingTenant();
    const token = await machineToken(context.app, tenant);
    assertError(await publicCompany({ origin: ORIGIN, authorization: `Bearer ${token}` }), 401, INVALID_CLIENT_ID);
    assertError(await publicCompany({ origin: ORIGIN, ...tenant.dashboard }), 401, INVALID_CLIENT_ID);
  });

  test('the public answer carries no settings or credentials', async () => {
    const tenant = await bookingTenant();
    const response = await publicCompany({ 'x-client-id': tenant.publicClientId, origin: ORIGIN });
    assert.equal(response.statusCode, 200, response.body);
    // bookingPage is the booking page's own settings, public by design (docs/api.md "Booking page settings").
    assert.deepEqual(Object.keys(json(response)).sort(), ['bookingPage', 'id', 'name']);
    assert.deepEqual(Object.keys(json(response).bookingPage).sort(), ['brandColor', 'currency', 'fields', 'logoUrl']);
  });
});

describe('suspension and preflight', () => {
  test('a suspended company is 403', async () => {
    const tenant = await bookingTenant();
    await context.database.db.updateTable('companies').set({ suspendedAt: new Date() }).where('id', '=', tenant.companyId).execute();
    assertError(await publicCompany({ 'x-client-id': tenant.publicClientId, origin: ORIGIN }), 403, 'Company account is suspended');
  });

  test('an OPTIONS preflight is 204 with the allow headers', async () => {
    const tenant = await bookingTenant();
    const response = await context.app.inject({
      method: 'OPTIONS',
      url: '/v3/public/company',
      headers: {
        origin: ORIGIN,
        'access-control-request-method': 'GET',
        'access-control-request-headers': 'x-client-id',
      },
    });
    assert.equal(response.statusCode, 204, response.body);
    assert.equal(response.body, '');
    assert.equal(response.headers['access-control-allow-origin'], ORIGIN);
    const methods = String(response.headers['access-control-allow-methods']).split(/,\s*/);
    assert.ok(methods.includes('GET'), `methods: ${methods.join(',')}`);
    const allowHeaders = String(response.headers['access-control-allow-headers']).toLowerCase().split(/,\s*/);
    assert.ok(allowHeaders.includes('x-client-id'), `headers: ${allowHeaders.join(',')}`);
    assert.ok(allowHeaders.includes('content-type'), `headers: ${allowHeaders.join(',')}`);
    // The real request still needs the client id and an allowed origin.
    assert.equal((await publicCompany({ 'x-client-id': tenant.publicClientId, origin: ORIGIN })).statusCode, 200);
  });
});

describe('Allowed Domains on PUT /v3/company', () => {
  for (const [label, domains, index] of [
    ['a bare wildcard', ['*'], 0],
    ['a wildcard subdomain', ['*.example.com'], 0],
    ['a wildcard after a valid domain', ['book.example.com', 'https://*.example.com'], 1],
  ] as Array<[string, string[], number]>) {
    test(`${label} is 400 on allowedDomains.${index} with code COMPANY-102`, async () => {
      const tenant = await bookingTenant();
      const response = await context.app.inject({ method: 'PUT', url: '/v3/company', headers: tenant.dashboard, payload: { allowedDomains: domains } });
      assert.equal(response.statusCode, 400, response.body);
      const body = json(response);
      assert.equal(body.success, false);
      assert.equal(body.message, 'Validation Error');
      assert.equal(body.errors[0].path, `allowedDomains.${index}`);
      assert.equal(body.errors[0].code, 'COMPANY-102');
      assert.equal(body.errors[0].location, 'body');
      assert.equal(body.errors[0].type, 'field');
      // Nothing was saved.
      const company = await context.app.inject({ method: 'GET', url: '/v3/company', headers: tenant.dashboard });
      assert.deepEqual(json(company).allowedDomains, ['book.example.com']);
    });
  }

  test('a wildcard is refused on company creation too', async () => {
    const tenant = await bookingTenant();
    const response = await context.app.inject({
      method: 'POST',
      url: '/v3/company',
      headers: { authorization: `Bearer ${tenant.userToken}` },
      payload: { name: 'Wildcard Co', allowedDomains: ['*'] },
    });
    assert.equal(response.statusCode, 400, response.body);
    assert.equal(json(response).errors[0].path, 'allowedDomains.0');
    assert.equal(json(response).errors[0].code, 'COMPANY-102');
  });

  test('an origin form "https://Book.Example.com/" is normalised to "book.example.com"', async () => {
    const tenant = await context.world.tenant();
    const response = await context.app.inject({
      method: 'PUT',
      url: '/v3/company',
      headers: tenant.dashboard,
      payload: { allowedDomains: ['https://Book.Example.com/'] },
    });
    assert.equal(response.statusCode, 200, response.body);
    assert.deepEqual(json(response).allowedDomains, ['book.example.com']);
    const allowed = await publicCompany({ 'x-client-id': tenant.publicClientId, origin: ORIGIN });
    assert.equal(allowed.statusCode, 200, allowed.body);
    assertError(await publicCompany({ 'x-client-id': tenant.publicClientId, origin: 'http://book.example.com' }), 403);
  });

  test('replacing the Allowed Domains takes effect at once', async () => {
    const tenant = await bookingTenant();
    const response = await context.app.inject({
      method: 'PUT',
      url: '/v3/company',
      headers: tenant.dashboard,
      payload: { allowedDomains: ['shop.example.org'] },
    });
    assert.equal(response.statusCode, 200, response.body);
    assertError(await publicCompany({ 'x-client-id': tenant.publicClientId, origin: ORIGIN }), 403);
    const moved = await publicCompany({ 'x-client-id': tenant.publicClientId, origin: 'https://shop.example.org' });
    assert.equal(moved.statusCode, 200, moved.body);
  });
});
