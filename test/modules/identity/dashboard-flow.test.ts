// Dashboard flow 1-4 and Dashboard roles of the specification, with the built-in identity of
// docs/api.md (signup, login, profile, refresh tokens, docs handoff tokens) and API key rotation.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeJwt } from 'jose';
import type { LightMyRequestResponse } from 'fastify';
import { addMember, createTestContext, json, machineToken, uniqueEmail } from '../../helpers/app.js';
import type { TestContext } from '../../helpers/app.js';
import { DOCS_TOKEN_MESSAGE, USER_NOT_ASSOCIATED_MESSAGE } from '../../../src/platform/auth/authenticate.js';
import type { Tenant } from '../../helpers/world.js';

let context: TestContext;
before(async () => {
  context = await createTestContext();
});
after(() => context.close());

function assertError(response: LightMyRequestResponse, status: number, message?: string) {
  assert.equal(response.statusCode, status, response.body);
  const body = json(response);
  assert.equal(body.success, false);
  assert.equal(typeof body.message, 'string');
  assert.ok(Array.isArray(body.errors));
  if (message !== undefined) assert.equal(body.message, message);
  return body;
}

const getCompany = (headers: Record<string, string>) => context.app.inject({ method: 'GET', url: '/v3/company', headers });

async function generateRefreshToken(tenant: Tenant): Promise<string> {
  const response = await context.app.inject({ method: 'POST', url: '/v3/auth/generateRefreshToken', headers: tenant.dashboard });
  assert.equal(response.statusCode, 200, response.body);
  return json(response).refreshToken;
}

const exchange = (refreshToken: string) =>
  context.app.inject({ method: 'POST', url: '/v3/auth/token', payload: { refresh_token: refreshToken } });

async function docsToken(tenant: Tenant): Promise<string> {
  const response = await context.app.inject({ method: 'POST', url: '/v3/auth/docsAuth', headers: tenant.dashboard });
  assert.equal(response.statusCode, 200, response.body);
  return json(response).docsToken;
}

describe('Dashboard flow 1 and 2: Bearer plus x-api-key', () => {
  test('the dashboard JWT with the company\'s x-api-key works', async () => {
    const tenant = await context.world.tenant();
    const response = await getCompany(tenant.dashboard);
    assert.equal(response.statusCode, 200, response.body);
    assert.equal(json(response).id, tenant.companyId);
  });

  test('a missing x-api-key is 401', async () => {
    const tenant = await context.world.tenant();
    assertError(await getCompany({ authorization: `Bearer ${tenant.userToken}` }), 401, 'Missing x-api-key header');
  });

  test('an invalid API key is 401', async () => {
    const tenant = await context.world.tenant();
    for (const apiKey of ['swk_not-a-real-key', tenant.apiKey.slice(0, -2), `${tenant.apiKey}x`]) {
      assertError(await getCompany({ authorization: `Bearer ${tenant.userToken}`, 'x-api-key': apiKey }), 401, 'Invalid API key');
    }
  });

  test('a user who is not a member of the API key\'s company is 403 user-not-associated', async () => {
    const tenant = await context.world.tenant();
    const stranger = await context.world.tenant();
    const response = await getCompany({ authorization: `Bearer ${stranger.userToken}`, 'x-api-key': tenant.apiKey });
    assertError(response, 403, USER_NOT_ASSOCIATED_MESSAGE);
    // A user with no company at all, likewise.
    const loner = await context.world.user('loner');
    assertError(await getCompany({ authorization: `Bearer ${loner.userToken}`, 'x-api-key': tenant.apiKey }), 403, USER_NOT_ASSOCIATED_MESSAGE);
    // And no write goes through.
    const write = await context.app.inject({
      method: 'PUT',
      url: '/v3/company',
      headers: { authorization: `Bearer ${stranger.userToken}`, 'x-api-key': tenant.apiKey },
      payload: { name: 'Hijacked' },
    });
    assertError(write, 403, USER_NOT_ASSOCIATED_MESSAGE);
  });

  test('the API key picks the company among the user\'s companies', async () => {
    const tenant = await context.world.tenant();
    const second = await context.world.tenant({ name: 'Second company', owner: tenant });
    const first = await getCompany(tenant.dashboard);
    assert.equal(json(first).id, tenant.companyId);
    const other = await getCompany({ authorization: `Bearer ${tenant.userToken}`, 'x-api-key': second.apiKey });
    assert.equal(other.statusCode, 200, other.body);
    assert.equal(json(other).id, second.companyId);
  });
});

describe('signup and login', () => {
  test('signup creates a user (201) without exposing the password', async () => {
    const email = uniqueEmail('signup');
    const response = await context.app.inject({
      method: 'POST',
      url: '/v3/auth/signup',
      payload: { email, password: 'long enough password', name: 'Signup' },
    });
    assert.equal(response.statusCode, 201, response.body);
    const user = json(response);
    assert.equal(typeof user.id, 'string');
    assert.equal(user.email, email);
    assert.equal(user.name, 'Signup');
    assert.equal(typeof user.createdAt, 'string');
    assert.deepEqual(Object.keys(user).sort(), ['createdAt', 'email', 'id', 'name']);
    assert.equal(response.body.includes('long enough password'), false);
  });

  test('a duplicate email, in any letter case, is 409', async () => {
    const email = uniqueEmail('dup');
    const first = await context.app.inject({ method: 'POST', url: '/v3/auth/signup', payload: { email, password: 'long enough password', name: 'A' } });
    assert.equal(first.statusCode, 201, first.body);
    for (const variant of [email, email.toUpperCase()]) {
      const again = await context.app.inject({
        method: 'POST',
        url: '/v3/auth/signup',
        payload: { email: variant, password: 'another long password', name: 'B' },
      });
      assertError(again, 409, 'A user with this email already exists');
    }
  });

  test('a short password is 400 on the password field', async () => {
    const response = await context.app.inject({
      method: 'POST',
      url: '/v3/auth/signup',
      payload: { email: uniqueEmail('short'), password: 'short', name: 'Short' },
    });
    const body = assertError(response, 400, 'Validation Error');
    assert.equal(body.errors[0].path, 'password');
    assert.equal(body.errors[0].location, 'body');
    assert.equal(body.errors[0].type, 'field');
  });

  test('login returns the dashboard JWT; email letter case does not matter', async () => {
    const tenant = await context.world.tenant();
    const response = await context.app.inject({
      method: 'POST',
      url: '/v3/auth/login',
      payload: { email: tenant.email.toUpperCase(), password: tenant.password },
    });
    assert.equal(response.statusCode, 200, response.body);
    const session = json(response);
    assert.equal(session.tokenType, 'Bearer');
    assert.equal(typeof session.expiresIn, 'number');
    assert.equal(response.headers['cache-control'], 'no-store');
    const claims = decodeJwt(session.accessToken);
    assert.equal(claims.sub, tenant.userId);
    assert.equal(claims.token_use, 'dashboard');
    assert.equal(claims.exp! - claims.iat!, session.expiresIn);
    const works = await getCompany({ authorization: `Bearer ${session.accessToken}`, 'x-api-key': tenant.apiKey });
    assert.equal(works.statusCode, 200, works.body);
  });

  test('a wrong password and an unknown email are both 401 with the same message', async () => {
    const tenant = await context.world.tenant();
    const wrongPassword = await context.app.inject({
      method: 'POST',
      url: '/v3/auth/login',
      payload: { email: tenant.email, password: 'not the password' },
    });
    const unknownEmail = await context.app.inject({
      method: 'POST',
      url: '/v3/auth/login',
      payload: { email: uniqueEmail('nobody'), password: tenant.password },
    });
    const a = assertError(wrongPassword, 401);
    const b = assertError(unknownEmail, 401);
    assert.equal(a.message, b.message);
    assert.deepEqual(a, b);
  });
});

describe('the signed-in user', () => {
  test('GET /v3/auth/me needs only the JWT and lists the user\'s companies', async () => {
    const tenant = await context.world.tenant({ name: 'Me Co' });
    const response = await context.app.inject({ method: 'GET', url: '/v3/auth/me', headers: { authorization: `Bearer ${tenant.userToken}` } });
    assert.equal(response.statusCode, 200, response.body);
    const me = json(response);
    assert.equal(me.id, tenant.userId);
    assert.equal(me.email, tenant.email);
    assert.deepEqual(me.companies, [{ companyId: tenant.companyId, companyName: 'Me Co', role: 'Owner' }]);
    assert.equal('passwordHash' in me, false);
  });

  test('PUT /v3/auth/me changes the name', async () => {
    const tenant = await context.world.tenant();
    const response = await context.app.inject({
      method: 'PUT',
      url: '/v3/auth/me',
      headers: { authorization: `Bearer ${tenant.userToken}` },
      payload: { name: 'New Name' },
    });
    assert.equal(response.statusCode, 200, response.body);
    assert.equal(json(response).name, 'New Name');
    const me = await context.app.inject({ method: 'GET', url: '/v3/auth/me', headers: { authorization: `Bearer ${tenant.userToken}` } });
    assert.equal(json(me).name, 'New Name');
  });

  test('a password change needs the current password', async () => {
    const tenant = await context.world.tenant();
    const headers = { authorization: `Bearer ${tenant.userToken}` };
    const newPassword = 'a brand new passphrase';

    const missing = await context.app.inject({ method: 'PUT', url: '/v3/auth/me', headers, payload: { password: newPassword } });
    const missingBody = assertError(missing, 400, 'Validation Error');
    assert.equal(missingBody.errors[0].path, 'currentPassword');

    const wrong = await context.app.inject({
      method: 'PUT',
      url: '/v3/auth/me',
      headers,
      payload: { password: newPassword, currentPassword: 'not the password' },
    });
    const wrongBody = assertError(wrong, 400, 'Validation Error');
    assert.equal(wrongBody.errors[0].path, 'currentPassword');

    const tooShort = await context.app.inject({
      method: 'PUT',
      url: '/v3/auth/me',
      headers,
      payload: { password: 'short', currentPassword: tenant.password },
    });
    assert.equal(assertError(tooShort, 400, 'Validation Error').errors[0].path, 'password');

    // Nothing changed so far.
    const oldStillWorks = await context.app.inject({ method: 'POST', url: '/v3/auth/login', payload: { email: tenant.email, password: tenant.password } });
    assert.equal(oldStillWorks.statusCode, 200, oldStillWorks.body);

    const changed = await context.app.inject({
      method: 'PUT',
      url: '/v3/auth/me',
      headers,
      payload: { password: newPassword, currentPassword: tenant.password },
    });
    assert.equal(changed.statusCode, 200, changed.body);

    const oldLogin = await context.app.inject({ method: 'POST', url: '/v3/auth/login', payload: { email: tenant.email, password: tenant.password } });
    assertError(oldLogin, 401);
    const newLogin = await context.app.inject({ method: 'POST', url: '/v3/auth/login', payload: { email: tenant.email, password: newPassword } });
    assert.equal(newLogin.statusCode, 200, newLogin.body);
  });
});

describe('Dashboard flow 3 and 4: refresh tokens', () => {
  test('only an Owner may generate a refresh token', async () => {
    const tenant = await context.world.tenant();
    const response = await context.app.inject({ method: 'POST', url: '/v3/auth/generateRefreshToken', headers: tenant.dashboard });
    assert.equal(response.statusCode, 200, response.body);
    const body = json(response);
    assert.equal(typeof body.refreshToken, 'string');
    assert.equal(body.tokenType, 'refresh');
    assert.equal(typeof body.expiresIn, 'number');
    assert.equal(response.headers['cache-control'], 'no-store');

    for (const role of ['Admin', 'User', 'Resource'] as const) {
      const member = await addMember(context, tenant, role);
      const refused = await context.app.inject({ method: 'POST', url: '/v3/auth/generateRefreshToken', headers: member.headers });
      assertError(refused, 403);
      assert.equal('refreshToken' in json(refused), false);
    }
    // A second Owner may.
    const owner = await addMember(context, tenant, 'Owner');
    const second = await context.app.inject({ method: 'POST', url: '/v3/auth/generateRefreshToken', headers: owner.headers });
    assert.equal(second.statusCode, 200, second.body);
  });

  test('POST /v3/auth/token returns a working access token and a rotated refresh token', async () => {
    const tenant = await context.world.tenant();
    const refreshToken = await generateRefreshToken(tenant);
    const response = await exchange(refreshToken);
    assert.equal(response.statusCode, 200, response.body);
    const session = json(response);
    assert.equal(session.tokenType, 'Bearer');
    assert.equal(typeof session.expiresIn, 'number');
    assert.equal(typeof session.accessToken, 'string');
    assert.equal(typeof session.refreshToken, 'string');
    assert.notEqual(session.refreshToken, refreshToken);
    assert.equal(response.headers['cache-control'], 'no-store');

    const company = await getCompany({ authorization: `Bearer ${session.accessToken}`, 'x-api-key': tenant.apiKey });
    assert.equal(company.statusCode, 200, company.body);
    assert.equal(json(company).id, tenant.companyId);
    const me = await context.app.inject({ method: 'GET', url: '/v3/auth/me', headers: { authorization: `Bearer ${session.accessToken}` } });
    assert.equal(json(me).id, tenant.userId);

    // The rotated token can be exchanged in turn.
    const next = await exchange(session.refreshToken);
    assert.equal(next.statusCode, 200, next.body);
  });

  test('reusing a spent refresh token is 401 and revokes the whole family', async () => {
    const tenant = await context.world.tenant();
    const original = await generateRefreshToken(tenant);
    const first = await exchange(original);
    assert.equal(first.statusCode, 200, first.body);
    const rotated: string = json(first).refreshToken;

    assertError(await exchange(original), 401);
    // The family is revoked: the rotated token no longer works either.
    assertError(await exchange(rotated), 401);

    // Another family of the same user is unaffected.
    const fresh = await generateRefreshToken(tenant);
    const ok = await exchange(fresh);
    assert.equal(ok.statusCode, 200, ok.body);
  });

  test('malformed and forged refresh tokens are refused', async () => {
    const tenant = await context.world.tenant();
    assertError(await exchange('not-a-token'), 401);
    // A dashboard access token is not a refresh token.
    assertError(await exchange(tenant.userToken), 401);
    const missing = await context.app.inject({ method: 'POST', url: '/v3/auth/token', payload: {} });
    assert.equal(assertError(missing, 400, 'Validation Error').errors[0].path, 'refresh_token');
  });

  test('a refresh token is refused as Bearer', async () => {
    const tenant = await context.world.tenant();
    const refreshToken = await generateRefreshToken(tenant);
    assertError(await getCompany({ authorization: `Bearer ${refreshToken}`, 'x-api-key': tenant.apiKey }), 401);
    assertError(await context.app.inject({ method: 'GET', url: '/v3/auth/me', headers: { authorization: `Bearer ${refreshToken}` } }), 401);
    assertError(
      await context.app.inject({ method: 'POST', url: '/v3/auth/generateRefreshToken', headers: { authorization: `Bearer ${refreshToken}`, 'x-api-key': tenant.apiKey } }),
      401,
    );
  });

  test('the refresh token of a suspended company gets 403', async () => {
    const tenant = await context.world.tenant();
    const refreshToken = await generateRefreshToken(tenant);
    await context.database.db.updateTable('companies').set({ suspendedAt: new Date() }).where('id', '=', tenant.companyId).execute();
    assertError(await exchange(refreshToken), 403, 'Company account is suspended');
  });

  test('a member removed from the company cannot exchange their refresh token', async () => {
    const tenant = await context.world.tenant();
    const owner = await addMember(context, tenant, 'Owner');
    const minted = await context.app.inject({ method: 'POST', url: '/v3/auth/generateRefreshToken', headers: owner.headers });
    assert.equal(minted.statusCode, 200, minted.body);
    await context.database.db.deleteFrom('companyUsers').where('companyId', '=', tenant.companyId).where('userId', '=', owner.userId).execute();
    assertError(await exchange(json(minted).refreshToken), 401);
  });
});

describe('docs handoff tokens', () => {
  test('docsAuth returns a docs token and the docs address', async () => {
    const tenant = await context.world.tenant();
    const response = await context.app.inject({ method: 'POST', url: '/v3/auth/docsAuth', headers: tenant.dashboard });
    assert.equal(response.statusCode, 200, response.body);
    const body = json(response);
    assert.equal(typeof body.docsToken, 'string');
    assert.equal(typeof body.expiresIn, 'number');
    assert.match(body.docsUrl, /^https?:\/\/[^/]+\/docs#token=/);
    assert.ok(body.docsUrl.endsWith(`#token=${body.docsToken}`));
    const claims = decodeJwt(body.docsToken);
    assert.equal(claims.token_use, 'docs');
    assert.equal(claims.company_id, tenant.companyId);
  });

  test('the docs token is refused on /v3/*', async () => {
    const tenant = await context.world.tenant();
    const token = await docsToken(tenant);
    assertError(await getCompany({ authorization: `Bearer ${token}` }), 401, DOCS_TOKEN_MESSAGE);
    assertError(await getCompany({ authorization: `Bearer ${token}`, 'x-api-key': tenant.apiKey }), 401, DOCS_TOKEN_MESSAGE);
    assertError(await context.app.inject({ method: 'GET', url: '/v3/auth/me', headers: { authorization: `Bearer ${token}` } }), 401, DOCS_TOKEN_MESSAGE);
  });

  test('GET /openapi.json with the docs token is personalised for its company', async () => {
    const tenant = await context.world.tenant({ name: 'Docs Co' });
    const token = await docsToken(tenant);
    const response = await context.app.inject({
      method: 'GET',
      url: '/openapi.json',
      headers: { authorization: `Bearer ${token}`, host: 'api.slotwise.test' },
    });
    assert.equal(response.statusCode, 200, response.body);
    const document = json(response);
    assert.equal(document.openapi, '3.1.0');
    assert.deepEqual(document['x-slotwise-company'], { id: tenant.companyId, name: 'Docs Co', publicClientId: tenant.publicClientId });
    // servers come from PUBLIC_BASE_URL (unset here: the origin the document was fetched from), never the Host.
    assert.equal(document.servers[0].url, '/');
    assert.ok(document.info.description.includes(tenant.publicClientId));
    // No credential of the company is in the document.
    assert.equal(response.body.includes(tenant.apiKey), false);
  });

  test('GET /openapi.json with a bad token is 401', async () => {
    const tenant = await context.world.tenant();
    for (const authorization of ['Bearer not-a-token', `Bearer ${tenant.userToken}`, 'Bearer', `Bearer ${await machineToken(context.app, tenant)}`]) {
      const response = await context.app.inject({ method: 'GET', url: '/openapi.json', headers: { authorization } });
      assertError(response, 401);
    }
  });

  test('GET /openapi.json without a token is the plain document', async () => {
    await context.world.tenant();
    const response = await context.app.inject({ method: 'GET', url: '/openapi.json' });
    assert.equal(response.statusCode, 200, response.body);
    const document = json(response);
    assert.equal(document.openapi, '3.1.0');
    assert.equal('x-slotwise-company' in document, false);
    assert.equal(typeof document.servers[0].url, 'string');
    assert.ok(document.paths['/v3/oauth/token']);
  });
});

describe('Dashboard roles', () => {
  test('a User-role member cannot change company settings', async () => {
    const tenant = await context.world.tenant({ name: 'Roles Co' });
    const member = await addMember(context, tenant, 'User');
    const read = await getCompany(member.headers);
    assert.equal(read.statusCode, 200, read.body);
    for (const method of ['PUT', 'PATCH'] as const) {
      const response = await context.app.inject({ method, url: '/v3/company', headers: member.headers, payload: { name: 'By a User' } });
      assertError(response, 403);
    }
    assert.equal(json(await getCompany(tenant.dashboard)).name, 'Roles Co');
    // An Admin may.
    const admin = await addMember(context, tenant, 'Admin');
    const byAdmin = await context.app.inject({ method: 'PUT', url: '/v3/company', headers: admin.headers, payload: { name: 'By an Admin' } });
    assert.equal(byAdmin.statusCode, 200, byAdmin.body);
  });

  test('company responses omit the API key prefix for a Resource-role member and carry it for the Owner', async () => {
    const tenant = await context.world.tenant();
    const resource = await addMember(context, tenant, 'Resource');
    const asResource = await getCompany(resource.headers);
    assert.equal(asResource.statusCode, 200, asResource.body);
    assert.equal(json(asResource).id, tenant.companyId);
    assert.equal('apiKeyPrefix' in json(asResource), false);

    const asOwner = await getCompany(tenant.dashboard);
    assert.equal(asOwner.statusCode, 200, asOwner.body);
    assert.equal(typeof json(asOwner).apiKeyPrefix, 'string');
    assert.ok(tenant.apiKey.startsWith(json(asOwner).apiKeyPrefix));
    assert.ok(json(asOwner).apiKeyPrefix.length < tenant.apiKey.length);
  });

  test('User- and Resource-role members cannot rotate credentials', async () => {
    const tenant = await context.world.tenant();
    for (const role of ['User', 'Resource'] as const) {
      const member = await addMember(context, tenant, role);
      assertError(await context.app.inject({ method: 'POST', url: '/v3/company/apiKey', headers: member.headers }), 403);
      assertError(await context.app.inject({ method: 'POST', url: '/v3/company/publicClientId', headers: member.headers }), 403);
      assertError(await context.app.inject({ method: 'POST', url: '/v3/clientId', headers: member.headers, payload: {} }), 403);
    }
    assert.equal((await getCompany(tenant.dashboard)).statusCode, 200, 'the API key is unchanged');
  });
});

describe('API key rotation', () => {
  test('POST /v3/company/apiKey returns a new key; the old one is then 401 Invalid API key', async () => {
    const tenant = await context.world.tenant();
    const member = await addMember(context, tenant, 'User');
    const response = await context.app.inject({ method: 'POST', url: '/v3/company/apiKey', headers: tenant.dashboard });
    assert.equal(response.statusCode, 200, response.body);
    const body = json(response);
    assert.equal(body.id, tenant.companyId);
    assert.equal(typeof body.apiKey, 'string');
    assert.notEqual(body.apiKey, tenant.apiKey);
    assert.ok(body.apiKey.startsWith(body.apiKeyPrefix));

    assertError(await getCompany(tenant.dashboard), 401, 'Invalid API key');
    assertError(await getCompany(member.headers), 401, 'Invalid API key');

    const withNewKey = await getCompany({ authorization: `Bearer ${tenant.userToken}`, 'x-api-key': body.apiKey });
    assert.equal(withNewKey.statusCode, 200, withNewKey.body);
    const memberWithNewKey = await getCompany({ authorization: `Bearer ${member.userToken}`, 'x-api-key': body.apiKey });
    assert.equal(memberWithNewKey.statusCode, 200, memberWithNewKey.body);
  });

  test('machine tokens are unaffected by an API key rotation', async () => {
    const tenant = await context.world.tenant();
    const token = await machineToken(context.app, tenant);
    const rotated = await context.app.inject({ method: 'POST', url: '/v3/company/apiKey', headers: tenant.dashboard });
    assert.equal(rotated.statusCode, 200, rotated.body);
    const read = await getCompany({ authorization: `Bearer ${token}` });
    assert.equal(read.statusCode, 200, read.body);
  });
});
