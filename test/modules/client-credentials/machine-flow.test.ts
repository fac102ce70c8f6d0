// Machine flow 1-9 of the specification (the specification, Authentication): OAuth 2.0 client
// credentials at POST /v3/oauth/token and what the resulting machine token may and may not do.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeJwt } from 'jose';
import type { LightMyRequestResponse } from 'fastify';
import { addMember, createClientCredentials, createTestContext, json, machineToken } from '../../helpers/app.js';
import type { TestContext } from '../../helpers/app.js';
import type { Tenant } from '../../helpers/world.js';

let context: TestContext;
before(async () => {
  context = await createTestContext();
});
after(() => context.close());

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

/** POST /v3/oauth/token with a form body. */
function tokenRequest(fields: Record<string, string>, headers: Record<string, string> = {}) {
  return context.app.inject({
    method: 'POST',
    url: '/v3/oauth/token',
    headers: { ...FORM, ...headers },
    payload: new URLSearchParams(fields).toString(),
  });
}

/** RFC 6749 2.3.1: client_id and client_secret are each form-urlencoded, then joined by ":" and base64-encoded. */
function basic(clientId: string, clientSecret: string, encode: (part: string) => string = encodeURIComponent) {
  return `Basic ${Buffer.from(`${encode(clientId)}:${encode(clientSecret)}`, 'utf8').toString('base64')}`;
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

function assertError(response: LightMyRequestResponse, status: number, message?: string | RegExp) {
  assert.equal(response.statusCode, status, response.body);
  const body = json(response);
  assert.equal(body.success, false);
  assert.equal(typeof body.message, 'string');
  assert.ok(Array.isArray(body.errors));
  assert.equal('access_token' in body, false, 'an error never carries a token');
  if (typeof message === 'string') assert.equal(body.message, message);
  else if (message) assert.match(body.message, message);
  return body;
}

async function suspend(tenant: Tenant) {
  await context.database.db.updateTable('companies').set({ suspendedAt: new Date() }).where('id', '=', tenant.companyId).execute();
}

const INVALID_CLIENT = 'Invalid client credentials';
const WRITE_REQUIRED = 'Insufficient scope: write required';

describe('Machine flow 1: client ids', () => {
  test('POST /v3/clientId shows the secret once; GET /v3/clientIds never shows it', async () => {
    const tenant = await context.world.tenant();
    const created = await context.app.inject({ method: 'POST', url: '/v3/clientId', headers: tenant.dashboard, payload: { name: 'CI' } });
    assert.equal(created.statusCode, 201, created.body);
    const credential = json(created);
    assert.equal(typeof credential.id, 'string');
    assert.equal(typeof credential.clientId, 'string');
    assert.equal(typeof credential.clientSecret, 'string');
    assert.ok(credential.clientSecret.length >= 32, 'a long random secret');
    assert.equal(credential.name, 'CI');
    assert.equal(credential.revokedAt, null);

    const list = await context.app.inject({ method: 'GET', url: '/v3/clientIds', headers: tenant.dashboard });
    assert.equal(list.statusCode, 200, list.body);
    const page = json(list);
    assert.equal(page.total, 1);
    assert.equal(page.data.length, 1);
    assert.equal(page.data[0].id, credential.id);
    assert.equal(page.data[0].clientId, credential.clientId);
    assert.equal('clientSecret' in page.data[0], false);
    assert.equal(list.body.includes(credential.clientSecret), false, 'the secret appears nowhere in the list');
  });

  test('a User-role member cannot create client ids', async () => {
    const tenant = await context.world.tenant();
    const member = await addMember(context, tenant, 'User');
    const response = await context.app.inject({ method: 'POST', url: '/v3/clientId', headers: member.headers, payload: {} });
    assertError(response, 403);
  });
});

describe('Machine flow 2: requesting a token', () => {
  test('credentials in the form body', async () => {
    const tenant = await context.world.tenant();
    const { clientId, clientSecret } = await createClientCredentials(context.app, tenant);
    const response = await tokenRequest({ grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret });
    assert.equal(response.statusCode, 200, response.body);
    const body = json(response);
    assert.equal(typeof body.access_token, 'string');
    assert.equal(body.token_type, 'Bearer');
    assert.equal(body.scope, 'read write');
    assert.equal(body.expires_in, 3600);
    assert.equal('refresh_token' in body, false, 'no refresh token for machine clients');
    assert.equal(decodeJwt(body.access_token).company_id, tenant.companyId);
  });

  test('credentials as HTTP Basic, each part form-urlencoded (RFC 6749 2.3.1)', async () => {
    const tenant = await context.world.tenant();
    const { clientId, clientSecret } = await createClientCredentials(context.app, tenant);

    const plain = await tokenRequest({ grant_type: 'client_credentials' }, { authorization: basic(clientId, clientSecret) });
    assert.equal(plain.statusCode, 200, plain.body);
    assert.equal(decodeJwt(json(plain).access_token).company_id, tenant.companyId);

    // Percent-encoding characters that need none is still valid form-urlencoding; the server must decode the parts.
    const encodeAll = (part: string) => [...part].map((c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`).join('');
    const encoded = await tokenRequest({ grant_type: 'client_credentials' }, { authorization: basic(clientId, clientSecret, encodeAll) });
    assert.equal(encoded.statusCode, 200, encoded.body);
    assert.equal(decodeJwt(json(encoded).access_token).company_id, tenant.companyId);

    // The same values in the body beside the Basic header are fine.
    const both = await tokenRequest(
      { grant_type: 'client_credentials', client_id: clientId },
      { authorization: basic(clientId, clientSecret) },
    );
    assert.equal(both.statusCode, 200, both.body);
  });

  test('a JSON body is accepted too', async () => {
    const tenant = await context.world.tenant();
    const { clientId, clientSecret } = await createClientCredentials(context.app, tenant);
    const response = await context.app.inject({
      method: 'POST',
      url: '/v3/oauth/token',
      payload: { grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret, scope: 'read' },
    });
    assert.equal(response.statusCode, 200, response.body);
    assert.equal(json(response).scope, 'read');
  });

  test('the token endpoint answers without caching', async () => {
    const tenant = await context.world.tenant();
    const { clientId, clientSecret } = await createClientCredentials(context.app, tenant);
    const response = await tokenRequest({ grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret });
    assert.equal(response.statusCode, 200);
    assert.equal(response.headers['cache-control'], 'no-store');
  });
});

describe('Machine flow 3: the access token', () => {
  test('is an HS256 JWT with the specified claims', async () => {
    const tenant = await context.world.tenant();
    const { clientId, clientSecret } = await createClientCredentials(context.app, tenant);
    const response = await tokenRequest({ grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret });
    assert.equal(response.statusCode, 200, response.body);
    const token: string = json(response).access_token;
    const header = JSON.parse(Buffer.from(token.split('.')[0]!, 'base64url').toString('utf8'));
    assert.equal(header.alg, 'HS256');
    const claims = decodeJwt(token);
    assert.equal(claims.iss, 'service:v3-api');
    assert.equal(claims.aud, 'api');
    assert.equal(claims.company_id, tenant.companyId);
    assert.equal(claims.grant_type, 'client_credentials');
    assert.equal(claims.scope, 'read write');
    assert.equal(claims.token_use, undefined, 'a machine token carries only the specification claims');
  });

  test('lasts about one hour', async () => {
    const tenant = await context.world.tenant();
    const { clientId, clientSecret } = await createClientCredentials(context.app, tenant);
    const response = await tokenRequest({ grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret });
    assert.equal(response.statusCode, 200, response.body);
    const body = json(response);
    assert.equal(body.expires_in, 3600);
    const { iat, exp } = decodeJwt(body.access_token);
    assert.equal(typeof iat, 'number');
    assert.equal(typeof exp, 'number');
    assert.equal(exp! - iat!, 3600);
    const nowSeconds = Date.now() / 1000;
    assert.ok(Math.abs(iat! - nowSeconds) < 300, 'issued now');
  });

  test('a new token can be requested with the same credentials', async () => {
    const tenant = await context.world.tenant();
    const { clientId, clientSecret } = await createClientCredentials(context.app, tenant);
    const fields = { grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret };
    const first = await tokenRequest(fields);
    const second = await tokenRequest(fields);
    assert.equal(first.statusCode, 200);
    assert.equal(second.statusCode, 200);
    assert.notEqual(json(first).access_token, json(second).access_token);
    for (const response of [first, second]) {
      const read = await context.app.inject({ method: 'GET', url: '/v3/company', headers: bearer(json(response).access_token) });
      assert.equal(read.statusCode, 200, read.body);
    }
  });
});

describe('Machine flow 4: scopes', () => {
  const cases: Array<[string, string | undefined, string]> = [
    ['omitted', undefined, 'read write'],
    ['blank', '', 'read write'],
    ['whitespace only', '   ', 'read write'],
    ['read', 'read', 'read'],
    ['write', 'write', 'write'],
    ['read write', 'read write', 'read write'],
    ['write read', 'write read', 'read write'],
  ];
  for (const [label, scope, granted] of cases) {
    test(`scope ${label} gives "${granted}"`, async () => {
      const tenant = await context.world.tenant();
      const { clientId, clientSecret } = await createClientCredentials(context.app, tenant);
      const fields: Record<string, string> = { grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret };
      if (scope !== undefined) fields.scope = scope;
      const response = await tokenRequest(fields);
      assert.equal(response.statusCode, 200, response.body);
      const body = json(response);
      assert.equal(body.scope, granted);
      assert.equal(decodeJwt(body.access_token).scope, granted);
    });
  }

  for (const scope of ['read admin', 'admin', 'write openid', 'READ']) {
    test(`scope "${scope}" is refused with 400 Invalid OAuth scope and no token`, async () => {
      const tenant = await context.world.tenant();
      const { clientId, clientSecret } = await createClientCredentials(context.app, tenant);
      const response = await tokenRequest({ grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret, scope });
      assertError(response, 400, 'Invalid OAuth scope');
    });
  }
});

describe('Machine flow 5: scope enforcement', () => {
  test('a write token may GET', async () => {
    const tenant = await context.world.tenant();
    const token = await machineToken(context.app, tenant, 'write');
    const response = await context.app.inject({ method: 'GET', url: '/v3/company', headers: bearer(token) });
    assert.equal(response.statusCode, 200, response.body);
    assert.equal(json(response).id, tenant.companyId);
  });

  test('a write token may write', async () => {
    const tenant = await context.world.tenant();
    const token = await machineToken(context.app, tenant, 'write');
    const response = await context.app.inject({ method: 'PUT', url: '/v3/company', headers: bearer(token), payload: { name: 'Renamed by machine' } });
    assert.equal(response.statusCode, 200, response.body);
    assert.equal(json(response).name, 'Renamed by machine');
  });

  test('a read token may GET', async () => {
    const tenant = await context.world.tenant();
    const token = await machineToken(context.app, tenant, 'read');
    const response = await context.app.inject({ method: 'GET', url: '/v3/company', headers: bearer(token) });
    assert.equal(response.statusCode, 200, response.body);
  });

  test('a read token gets 403 Insufficient scope: write required on POST, PUT, PATCH and DELETE', async () => {
    const tenant = await context.world.tenant();
    const credential = await createClientCredentials(context.app, tenant);
    const token = await machineToken(context.app, tenant, 'read');
    const calls = [
      { method: 'POST' as const, url: '/v3/auth/docsAuth' },
      { method: 'PUT' as const, url: '/v3/company', payload: { name: 'Not allowed' } },
      { method: 'PATCH' as const, url: '/v3/company', payload: { name: 'Not allowed' } },
      { method: 'DELETE' as const, url: `/v3/clientId/${credential.id}` },
    ];
    for (const call of calls) {
      const response = await context.app.inject({ ...call, headers: bearer(token) });
      assertError(response, 403, WRITE_REQUIRED);
    }
    // Nothing changed.
    const company = await context.app.inject({ method: 'GET', url: '/v3/company', headers: tenant.dashboard });
    assert.notEqual(json(company).name, 'Not allowed');
    const list = await context.app.inject({ method: 'GET', url: '/v3/clientIds', headers: tenant.dashboard });
    const stillLive = json(list).data.find((c: { id: string }) => c.id === credential.id);
    assert.equal(stillLive.revokedAt, null);
  });
});

describe('Machine flow 6 and 7: the token decides the company', () => {
  test('another company\'s x-api-key or x-client-id does not change the token\'s company', async () => {
    const tenant = await context.world.tenant();
    const other = await context.world.tenant();
    const token = await machineToken(context.app, tenant);
    const response = await context.app.inject({
      method: 'GET',
      url: '/v3/company',
      headers: { ...bearer(token), 'x-api-key': other.apiKey, 'x-client-id': other.publicClientId },
    });
    assert.equal(response.statusCode, 200, response.body);
    assert.equal(json(response).id, tenant.companyId);

    const write = await context.app.inject({
      method: 'PUT',
      url: '/v3/company',
      headers: { ...bearer(token), 'x-api-key': other.apiKey },
      payload: { name: 'Renamed through my own token' },
    });
    assert.equal(write.statusCode, 200, write.body);
    assert.equal(json(write).id, tenant.companyId);
    const otherCompany = await context.app.inject({ method: 'GET', url: '/v3/company', headers: other.dashboard });
    assert.notEqual(json(otherCompany).name, 'Renamed through my own token');
  });

  test('no x-api-key is needed', async () => {
    const tenant = await context.world.tenant();
    const token = await machineToken(context.app, tenant);
    const response = await context.app.inject({ method: 'GET', url: '/v3/company', headers: bearer(token) });
    assert.equal(response.statusCode, 200, response.body);
  });

  test('another company\'s resource addressed in the path is 404', async () => {
    const tenant = await context.world.tenant();
    const other = await context.world.tenant();
    const foreign = await createClientCredentials(context.app, other);

    // Client ids are managed from the dashboard (machine tokens are refused there), so the caller
    // is a dashboard user of the first company.
    const response = await context.app.inject({ method: 'DELETE', url: `/v3/clientId/${foreign.id}`, headers: tenant.dashboard });
    assertError(response, 404);

    // The foreign credential was not touched.
    const token = await tokenRequest({ grant_type: 'client_credentials', client_id: foreign.clientId, client_secret: foreign.clientSecret });
    assert.equal(token.statusCode, 200, token.body);

    // The machine token of the first company is refused before any lookup: never a hint about the id.
    const machine = await machineToken(context.app, tenant);
    const byMachine = await context.app.inject({ method: 'DELETE', url: `/v3/clientId/${foreign.id}`, headers: bearer(machine) });
    assertError(byMachine, 403);
  });

  test('a missing id in the path is 404, a malformed one 400', async () => {
    const tenant = await context.world.tenant();
    const missing = await context.app.inject({
      method: 'DELETE',
      url: '/v3/clientId/00000000-0000-4000-8000-000000000000',
      headers: tenant.dashboard,
    });
    assertError(missing, 404);
    const malformed = await context.app.inject({ method: 'DELETE', url: '/v3/clientId/not-a-uuid', headers: tenant.dashboard });
    const body = assertError(malformed, 400, 'Validation Error');
    assert.equal(body.errors[0].path, 'id');
  });
});

describe('Machine flow 8: dashboard-only operations', () => {
  test('machine tokens get 403 on company creation, profile changes, refresh-token generation and client ids', async () => {
    const tenant = await context.world.tenant();
    const token = await machineToken(context.app, tenant);
    const calls = [
      { method: 'POST' as const, url: '/v3/company', payload: { name: 'Machine Co' }, message: 'Machine tokens cannot create companies' },
      { method: 'PUT' as const, url: '/v3/auth/me', payload: { name: 'Machine' }, message: 'Machine tokens cannot change dashboard profiles' },
      {
        method: 'POST' as const,
        url: '/v3/auth/generateRefreshToken',
        message: 'Machine tokens cannot generate dashboard refresh tokens',
      },
      { method: 'POST' as const, url: '/v3/clientId', payload: {}, message: 'Machine tokens cannot manage client credentials' },
      { method: 'GET' as const, url: '/v3/clientIds', message: 'Machine tokens cannot manage client credentials' },
    ];
    for (const { message, ...call } of calls) {
      const response = await context.app.inject({ ...call, headers: bearer(token) });
      assertError(response, 403, message);
    }
    const list = await context.app.inject({ method: 'GET', url: '/v3/clientIds', headers: tenant.dashboard });
    assert.equal(json(list).total, 1, 'only the credential behind the token exists');
  });

  test('GET /v3/companies returns only the bound company', async () => {
    const tenant = await context.world.tenant();
    await context.world.tenant();
    const token = await machineToken(context.app, tenant);
    const response = await context.app.inject({ method: 'GET', url: '/v3/companies', headers: bearer(token) });
    assert.equal(response.statusCode, 200, response.body);
    const page = json(response);
    assert.equal(page.total, 1);
    assert.deepEqual(
      page.data.map((c: { id: string }) => c.id),
      [tenant.companyId],
    );
  });
});

describe('Machine flow 9: the token request itself', () => {
  test('malformed Basic authorization is 401', async () => {
    const tenant = await context.world.tenant();
    const { clientId, clientSecret } = await createClientCredentials(context.app, tenant);
    const malformed = [
      'Basic',
      'Basic !!!not-base64!!!',
      `Basic ${Buffer.from('no-colon-here').toString('base64')}`,
      `Basic ${Buffer.from(`:${clientSecret}`).toString('base64')}`,
      `Basic ${Buffer.from(`${clientId}:%E0%A4%A`).toString('base64')}`,
      'Digest username="x"',
    ];
    for (const authorization of malformed) {
      const response = await tokenRequest({ grant_type: 'client_credentials' }, { authorization });
      assertError(response, 401);
    }
  });

  test('Basic credentials that differ from those in the body are 401', async () => {
    const tenant = await context.world.tenant();
    const mine = await createClientCredentials(context.app, tenant);
    const other = await createClientCredentials(context.app, tenant);
    const response = await tokenRequest(
      { grant_type: 'client_credentials', client_id: other.clientId, client_secret: other.clientSecret },
      { authorization: basic(mine.clientId, mine.clientSecret) },
    );
    assertError(response, 401);
  });

  test('a wrong secret is 401, in the body and as Basic', async () => {
    const tenant = await context.world.tenant();
    const { clientId, clientSecret } = await createClientCredentials(context.app, tenant);
    const wrong = `${clientSecret.slice(0, -1)}${clientSecret.endsWith('A') ? 'B' : 'A'}`;
    assertError(await tokenRequest({ grant_type: 'client_credentials', client_id: clientId, client_secret: wrong }), 401, INVALID_CLIENT);
    assertError(await tokenRequest({ grant_type: 'client_credentials' }, { authorization: basic(clientId, wrong) }), 401, INVALID_CLIENT);
    assertError(await tokenRequest({ grant_type: 'client_credentials', client_id: clientId }), 401, INVALID_CLIENT);
  });

  test('another client\'s secret is 401', async () => {
    const tenant = await context.world.tenant();
    const other = await context.world.tenant();
    const mine = await createClientCredentials(context.app, tenant);
    const theirs = await createClientCredentials(context.app, other);
    const response = await tokenRequest({ grant_type: 'client_credentials', client_id: mine.clientId, client_secret: theirs.clientSecret });
    assertError(response, 401, INVALID_CLIENT);
  });

  test('an unknown client is 401 with the same message as a wrong secret', async () => {
    await context.world.tenant();
    const response = await tokenRequest({ grant_type: 'client_credentials', client_id: 'cid_unknown', client_secret: 'cs_whatever' });
    assertError(response, 401, INVALID_CLIENT);
    const none = await tokenRequest({ grant_type: 'client_credentials' });
    assertError(none, 401, INVALID_CLIENT);
  });

  test('a Bearer header on the token endpoint is 401', async () => {
    const tenant = await context.world.tenant();
    const { clientId, clientSecret } = await createClientCredentials(context.app, tenant);
    const token = await machineToken(context.app, tenant);
    const response = await tokenRequest(
      { grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret },
      bearer(token),
    );
    assertError(response, 401);
    const dashboard = await tokenRequest(
      { grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret },
      bearer(tenant.userToken),
    );
    assertError(dashboard, 401);
  });

  test('an unsupported grant_type is 400', async () => {
    const tenant = await context.world.tenant();
    const { clientId, clientSecret } = await createClientCredentials(context.app, tenant);
    for (const grantType of ['password', 'refresh_token', 'authorization_code', '']) {
      const response = await tokenRequest({ grant_type: grantType, client_id: clientId, client_secret: clientSecret });
      assertError(response, 400);
    }
  });

  test('a missing grant_type is 400 Validation Error on grant_type', async () => {
    const tenant = await context.world.tenant();
    const { clientId, clientSecret } = await createClientCredentials(context.app, tenant);
    const response = await tokenRequest({ client_id: clientId, client_secret: clientSecret });
    const body = assertError(response, 400, 'Validation Error');
    assert.equal(body.errors[0].path, 'grant_type');
    assert.equal(body.errors[0].location, 'body');
    assert.equal(body.errors[0].type, 'field');
    assert.equal(typeof body.errors[0].msg, 'string');
  });
});

describe('Revocation and suspension', () => {
  test('a revoked client gets no token, and its live tokens stop working', async () => {
    const tenant = await context.world.tenant();
    const credential = await createClientCredentials(context.app, tenant);
    const fields = { grant_type: 'client_credentials', client_id: credential.clientId, client_secret: credential.clientSecret };
    const issued = await tokenRequest(fields);
    assert.equal(issued.statusCode, 200, issued.body);
    const token: string = json(issued).access_token;
    const before = await context.app.inject({ method: 'GET', url: '/v3/company', headers: bearer(token) });
    assert.equal(before.statusCode, 200, before.body);

    const revoked = await context.app.inject({ method: 'DELETE', url: `/v3/clientId/${credential.id}`, headers: tenant.dashboard });
    assert.equal(revoked.statusCode, 204, revoked.body);
    assert.equal(revoked.body, '');

    assertError(await tokenRequest(fields), 401, INVALID_CLIENT);
    assertError(await tokenRequest({ grant_type: 'client_credentials' }, { authorization: basic(credential.clientId, credential.clientSecret) }), 401);
    assertError(await context.app.inject({ method: 'GET', url: '/v3/company', headers: bearer(token) }), 401);
    assertError(await context.app.inject({ method: 'GET', url: '/v3/companies', headers: bearer(token) }), 401);
    // Invalid credentials come before what the route would refuse machine tokens.
    assertError(await context.app.inject({ method: 'POST', url: '/v3/company', headers: bearer(token), payload: { name: 'X' } }), 401);

    const list = await context.app.inject({ method: 'GET', url: '/v3/clientIds', headers: tenant.dashboard });
    assert.equal(typeof json(list).data[0].revokedAt, 'string');

    // Revoking one client leaves the company's other clients working.
    const other = await machineToken(context.app, tenant);
    const stillWorks = await context.app.inject({ method: 'GET', url: '/v3/company', headers: bearer(other) });
    assert.equal(stillWorks.statusCode, 200, stillWorks.body);
  });

  test('a suspended company gets 403 on token requests and on every call', async () => {
    const tenant = await context.world.tenant();
    const credential = await createClientCredentials(context.app, tenant);
    const fields = { grant_type: 'client_credentials', client_id: credential.clientId, client_secret: credential.clientSecret };
    const issued = await tokenRequest(fields);
    assert.equal(issued.statusCode, 200, issued.body);
    const token: string = json(issued).access_token;

    await suspend(tenant);

    const suspended = 'Company account is suspended';
    assertError(await tokenRequest(fields), 403, suspended);
    assertError(await tokenRequest({ grant_type: 'client_credentials' }, { authorization: basic(credential.clientId, credential.clientSecret) }), 403, suspended);
    const calls = [
      { method: 'GET' as const, url: '/v3/company' },
      { method: 'GET' as const, url: '/v3/companies' },
      { method: 'PUT' as const, url: '/v3/company', payload: { name: 'Suspended rename' } },
      { method: 'PATCH' as const, url: '/v3/company', payload: { name: 'Suspended rename' } },
      { method: 'POST' as const, url: '/v3/auth/docsAuth' },
    ];
    for (const call of calls) {
      assertError(await context.app.inject({ ...call, headers: bearer(token) }), 403, suspended);
      // The dashboard users of the company are shut out of its company routes the same way.
      if (call.url !== '/v3/companies') {
        assertError(await context.app.inject({ ...call, headers: tenant.dashboard }), 403, suspended);
      }
    }
  });
});
