// Forged and hostile Bearer tokens. Every one is refused with 401 and the specification's error
// body, on a company route (GET /v3/company) and on dashboard routes (GET /v3/company with
// x-api-key, GET /v3/auth/me).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { SignJWT, decodeJwt } from 'jose';
import type { JWTPayload } from 'jose';
import type { LightMyRequestResponse } from 'fastify';
import { createClientCredentials, createTestContext, json, machineToken, TEST_SECRETS } from '../../helpers/app.js';
import type { TestContext } from '../../helpers/app.js';
import { DOCS_TOKEN_MESSAGE } from '../../../src/platform/auth/authenticate.js';
import { createTokenService } from '../../../src/platform/auth/tokens.js';
import type { Secrets } from '../../../src/platform/secrets.js';
import type { Tenant } from '../../helpers/world.js';

let context: TestContext;
before(async () => {
  context = await createTestContext();
});
after(() => context.close());

const AUTH_KEY = new TextEncoder().encode(TEST_SECRETS.AUTH_TOKEN_SECRET);
const REFRESH_KEY = new TextEncoder().encode(TEST_SECRETS.REFRESH_TOKEN_SECRET);
const WRONG_KEY = new TextEncoder().encode('an-attacker-guess-of-the-secret-0123456789abcdef');

interface Forge {
  key?: Uint8Array;
  alg?: string;
  iss?: string;
  aud?: string | string[];
  /** Seconds relative to now. */
  iat?: number;
  exp?: number;
  nbf?: number;
  sub?: string;
}

const now = () => Math.floor(Date.now() / 1000);

function forge(payload: JWTPayload, options: Forge = {}): Promise<string> {
  const jwt = new SignJWT(payload)
    .setProtectedHeader({ alg: options.alg ?? 'HS256', typ: 'JWT' })
    .setIssuer(options.iss ?? 'service:v3-api')
    .setAudience(options.aud ?? 'api')
    .setIssuedAt(now() + (options.iat ?? 0))
    .setExpirationTime(now() + (options.exp ?? 3600))
    .setJti(randomUUID());
  if (options.nbf !== undefined) jwt.setNotBefore(now() + options.nbf);
  if (options.sub !== undefined) jwt.setSubject(options.sub);
  return jwt.sign(options.key ?? AUTH_KEY);
}

/** Machine claims as the service signs them. */
function machineClaims(companyId: string, clientId: string, scope = 'read write'): JWTPayload {
  return { company_id: companyId, grant_type: 'client_credentials', scope, client_id: clientId };
}

const forgeMachine = (companyId: string, clientId: string, options: Forge = {}) => forge(machineClaims(companyId, clientId), options);
const forgeDashboard = (userId: string, options: Forge = {}) =>
  forge({ token_use: 'dashboard' }, { aud: 'dashboard', sub: userId, ...options });

const base64url = (value: unknown) => Buffer.from(JSON.stringify(value), 'utf8').toString('base64url');

/** An unsigned token: `{"alg":"none"}` . payload . (empty signature). */
function unsigned(payload: JWTPayload, header: Record<string, unknown> = { alg: 'none', typ: 'JWT' }) {
  return `${base64url(header)}.${base64url(payload)}.`;
}

async function tenantWithClient(): Promise<{ tenant: Tenant; clientId: string }> {
  const tenant = await context.world.tenant();
  const { clientId } = await createClientCredentials(context.app, tenant);
  return { tenant, clientId };
}

function assertUnauthorized(response: LightMyRequestResponse, label: string, message?: string) {
  assert.equal(response.statusCode, 401, `${label}: ${response.body}`);
  const body = json(response);
  assert.equal(body.success, false, label);
  assert.equal(typeof body.message, 'string', label);
  assert.ok(body.message.length > 0, label);
  assert.deepEqual(body.errors, [], label);
  assert.equal('statusCode' in body, false, `${label}: the status is not repeated in the body`);
  if (message !== undefined) assert.equal(body.message, message, label);
}

/** A machine-shaped token on GET /v3/company, without x-api-key. */
async function refusedOnCompanyRoute(authorization: string, label: string, message?: string) {
  const response = await context.app.inject({ method: 'GET', url: '/v3/company', headers: { authorization } });
  assertUnauthorized(response, `GET /v3/company ${label}`, message);
}

/** A dashboard-shaped token on the dashboard routes: with the company's x-api-key, and on the user-only route. */
async function refusedOnDashboardRoutes(tenant: Tenant, authorization: string, label: string, message?: string) {
  const company = await context.app.inject({
    method: 'GET',
    url: '/v3/company',
    headers: { authorization, 'x-api-key': tenant.apiKey },
  });
  assertUnauthorized(company, `GET /v3/company with x-api-key ${label}`, message);
  const me = await context.app.inject({ method: 'GET', url: '/v3/auth/me', headers: { authorization } });
  assertUnauthorized(me, `GET /v3/auth/me ${label}`, message);
}

describe('controls: correctly forged tokens are accepted', () => {
  // Proves the forging helpers produce what the service signs, so every 401 below is due to the
  // one thing each test changes.
  test('a machine token forged with the right secret and claims works', async () => {
    const { tenant, clientId } = await tenantWithClient();
    const token = await forgeMachine(tenant.companyId, clientId);
    const response = await context.app.inject({ method: 'GET', url: '/v3/company', headers: { authorization: `Bearer ${token}` } });
    assert.equal(response.statusCode, 200, response.body);
    assert.equal(json(response).id, tenant.companyId);
  });

  test('a dashboard token forged with the right secret and claims works', async () => {
    const tenant = await context.world.tenant();
    const token = await forgeDashboard(tenant.userId);
    const company = await context.app.inject({
      method: 'GET',
      url: '/v3/company',
      headers: { authorization: `Bearer ${token}`, 'x-api-key': tenant.apiKey },
    });
    assert.equal(company.statusCode, 200, company.body);
    const me = await context.app.inject({ method: 'GET', url: '/v3/auth/me', headers: { authorization: `Bearer ${token}` } });
    assert.equal(me.statusCode, 200, me.body);
    assert.equal(json(me).id, tenant.userId);
  });
});

describe('hostile Bearer tokens are 401', () => {
  test('no Authorization header', async () => {
    const tenant = await context.world.tenant();
    const company = await context.app.inject({ method: 'GET', url: '/v3/company' });
    assertUnauthorized(company, 'GET /v3/company without a header');
    const withKey = await context.app.inject({ method: 'GET', url: '/v3/company', headers: { 'x-api-key': tenant.apiKey } });
    assertUnauthorized(withKey, 'GET /v3/company with x-api-key alone');
    const me = await context.app.inject({ method: 'GET', url: '/v3/auth/me' });
    assertUnauthorized(me, 'GET /v3/auth/me without a header');
  });

  test('signed with a wrong secret', async () => {
    const { tenant, clientId } = await tenantWithClient();
    await refusedOnCompanyRoute(`Bearer ${await forgeMachine(tenant.companyId, clientId, { key: WRONG_KEY })}`, 'wrong secret');
    await refusedOnDashboardRoutes(tenant, `Bearer ${await forgeDashboard(tenant.userId, { key: WRONG_KEY })}`, 'wrong secret');
  });

  test('signed with the refresh-token secret', async () => {
    const { tenant, clientId } = await tenantWithClient();
    await refusedOnCompanyRoute(`Bearer ${await forgeMachine(tenant.companyId, clientId, { key: REFRESH_KEY })}`, 'refresh secret');
    await refusedOnDashboardRoutes(tenant, `Bearer ${await forgeDashboard(tenant.userId, { key: REFRESH_KEY })}`, 'refresh secret');
  });

  test('expired', async () => {
    const { tenant, clientId } = await tenantWithClient();
    const expired = { iat: -7200, exp: -3600 };
    await refusedOnCompanyRoute(`Bearer ${await forgeMachine(tenant.companyId, clientId, expired)}`, 'expired');
    await refusedOnDashboardRoutes(tenant, `Bearer ${await forgeDashboard(tenant.userId, expired)}`, 'expired');
    // Just expired: no leeway beyond the exp claim.
    const justExpired = { iat: -3700, exp: -5 };
    await refusedOnCompanyRoute(`Bearer ${await forgeMachine(tenant.companyId, clientId, justExpired)}`, 'just expired');
  });

  test('not valid yet (nbf in the future)', async () => {
    const { tenant, clientId } = await tenantWithClient();
    await refusedOnCompanyRoute(`Bearer ${await forgeMachine(tenant.companyId, clientId, { nbf: 3000 })}`, 'nbf future');
    await refusedOnDashboardRoutes(tenant, `Bearer ${await forgeDashboard(tenant.userId, { nbf: 3000 })}`, 'nbf future');
  });

  test('wrong audience', async () => {
    const { tenant, clientId } = await tenantWithClient();
    for (const aud of ['other-service', 'refresh', 'docs', 'dashboard']) {
      await refusedOnCompanyRoute(`Bearer ${await forgeMachine(tenant.companyId, clientId, { aud })}`, `machine claims, aud ${aud}`);
    }
    await refusedOnCompanyRoute(
      `Bearer ${await forgeMachine(tenant.companyId, clientId, { aud: ['api', 'dashboard'] })}`,
      'machine claims, two audiences',
    );
    for (const aud of ['other-service', 'api', 'docs']) {
      await refusedOnDashboardRoutes(tenant, `Bearer ${await forgeDashboard(tenant.userId, { aud })}`, `dashboard claims, aud ${aud}`);
    }
  });

  test('wrong issuer', async () => {
    const { tenant, clientId } = await tenantWithClient();
    for (const iss of ['https://evil.example.com', 'service:v1-api', '']) {
      await refusedOnCompanyRoute(`Bearer ${await forgeMachine(tenant.companyId, clientId, { iss })}`, `iss "${iss}"`);
      await refusedOnDashboardRoutes(tenant, `Bearer ${await forgeDashboard(tenant.userId, { iss })}`, `iss "${iss}"`);
    }
  });

  test('alg "none" (unsigned)', async () => {
    const { tenant, clientId } = await tenantWithClient();
    const times = { iat: now(), exp: now() + 3600 };
    const machine = { iss: 'service:v3-api', aud: 'api', ...times, ...machineClaims(tenant.companyId, clientId) };
    const dashboard = { iss: 'service:v3-api', aud: 'dashboard', sub: tenant.userId, token_use: 'dashboard', ...times };
    for (const header of [{ alg: 'none', typ: 'JWT' }, { alg: 'None' }, { alg: 'NONE' }]) {
      await refusedOnCompanyRoute(`Bearer ${unsigned(machine, header)}`, `alg ${header.alg}`);
      await refusedOnDashboardRoutes(tenant, `Bearer ${unsigned(dashboard, header)}`, `alg ${header.alg}`);
    }
    // The unsigned token with a stray signature copied from a real token.
    const real = await machineToken(context.app, tenant);
    const stolenSignature = real.split('.')[2];
    await refusedOnCompanyRoute(`Bearer ${unsigned(machine)}${stolenSignature}`, 'alg none with a copied signature');
  });

  test('HS512 and HS384 with the right secret', async () => {
    const { tenant, clientId } = await tenantWithClient();
    for (const alg of ['HS512', 'HS384']) {
      await refusedOnCompanyRoute(`Bearer ${await forgeMachine(tenant.companyId, clientId, { alg })}`, alg);
      await refusedOnDashboardRoutes(tenant, `Bearer ${await forgeDashboard(tenant.userId, { alg })}`, alg);
    }
  });

  test('a real token with its payload altered', async () => {
    const { tenant } = await tenantWithClient();
    const other = await context.world.tenant();
    const real = await machineToken(context.app, tenant);
    const [header, , signature] = real.split('.');
    const claims = decodeJwt(real);
    const altered = `${header}.${base64url({ ...claims, company_id: other.companyId })}.${signature}`;
    await refusedOnCompanyRoute(`Bearer ${altered}`, 'altered payload');
    const truncated = real.slice(0, -4);
    await refusedOnCompanyRoute(`Bearer ${truncated}`, 'truncated signature');
  });

  test('garbage', async () => {
    const tenant = await context.world.tenant();
    const garbage = [
      'Bearer not-a-jwt',
      'Bearer a.b.c',
      'Bearer ....',
      `Bearer ${base64url({ alg: 'HS256' })}.${Buffer.from('not json').toString('base64url')}.sig`,
      `Bearer ${'x'.repeat(5000)}`,
      'Bearer two tokens',
      `Basic ${Buffer.from('user:password').toString('base64')}`,
      tenant.userToken,
      `Token ${tenant.userToken}`,
    ];
    for (const authorization of garbage) {
      await refusedOnCompanyRoute(authorization, JSON.stringify(authorization.slice(0, 40)));
      await refusedOnDashboardRoutes(tenant, authorization, JSON.stringify(authorization.slice(0, 40)));
    }
  });

  test('"Bearer" with nothing', async () => {
    const tenant = await context.world.tenant();
    for (const authorization of ['Bearer', 'Bearer ', 'Bearer    ', '']) {
      await refusedOnCompanyRoute(authorization, JSON.stringify(authorization));
      await refusedOnDashboardRoutes(tenant, authorization, JSON.stringify(authorization));
    }
  });

  test('a refresh token used as Bearer', async () => {
    const tenant = await context.world.tenant();
    const minted = await context.app.inject({ method: 'POST', url: '/v3/auth/generateRefreshToken', headers: tenant.dashboard });
    assert.equal(minted.statusCode, 200, minted.body);
    const refreshToken: string = json(minted).refreshToken;
    await refusedOnCompanyRoute(`Bearer ${refreshToken}`, 'refresh token');
    await refusedOnDashboardRoutes(tenant, `Bearer ${refreshToken}`, 'refresh token');

    // Forged lookalikes with the access-token secret are refused as well.
    const lookalike = await forge(
      { token_use: 'refresh', company_id: tenant.companyId, fam: randomUUID() },
      { aud: 'refresh', sub: tenant.userId },
    );
    await refusedOnDashboardRoutes(tenant, `Bearer ${lookalike}`, 'refresh lookalike');
    const dashboardAudience = await forge({ token_use: 'refresh', company_id: tenant.companyId }, { aud: 'dashboard', sub: tenant.userId });
    await refusedOnDashboardRoutes(tenant, `Bearer ${dashboardAudience}`, 'refresh token_use with dashboard audience');

    // The refresh token still works where it belongs.
    const exchanged = await context.app.inject({ method: 'POST', url: '/v3/auth/token', payload: { refresh_token: refreshToken } });
    assert.equal(exchanged.statusCode, 200, exchanged.body);
  });

  test('a docs token used as Bearer on /v3/*', async () => {
    const tenant = await context.world.tenant();
    const issued = await context.app.inject({ method: 'POST', url: '/v3/auth/docsAuth', headers: tenant.dashboard });
    assert.equal(issued.statusCode, 200, issued.body);
    const docsToken: string = json(issued).docsToken;
    await refusedOnCompanyRoute(`Bearer ${docsToken}`, 'docs token', DOCS_TOKEN_MESSAGE);
    await refusedOnDashboardRoutes(tenant, `Bearer ${docsToken}`, 'docs token', DOCS_TOKEN_MESSAGE);
    const write = await context.app.inject({
      method: 'PUT',
      url: '/v3/company',
      headers: { authorization: `Bearer ${docsToken}` },
      payload: { name: 'Docs write' },
    });
    assertUnauthorized(write, 'PUT /v3/company with a docs token', DOCS_TOKEN_MESSAGE);
    const companies = await context.app.inject({ method: 'GET', url: '/v3/companies', headers: { authorization: `Bearer ${docsToken}` } });
    assertUnauthorized(companies, 'GET /v3/companies with a docs token', DOCS_TOKEN_MESSAGE);
  });

  test('machine claims with the right secret but token_use added', async () => {
    const { tenant, clientId } = await tenantWithClient();
    for (const tokenUse of ['dashboard', 'docs', 'machine', '']) {
      const token = await forge({ ...machineClaims(tenant.companyId, clientId), token_use: tokenUse }, { sub: tenant.userId });
      await refusedOnCompanyRoute(`Bearer ${token}`, `machine claims, token_use "${tokenUse}"`);
      await refusedOnDashboardRoutes(tenant, `Bearer ${token}`, `machine claims, token_use "${tokenUse}"`);
    }
  });

  test('machine claims with the right secret for another company whose client_id is not there', async () => {
    const { tenant, clientId } = await tenantWithClient();
    const other = await context.world.tenant();
    // The real client_id of one company, claimed for another company.
    await refusedOnCompanyRoute(`Bearer ${await forgeMachine(other.companyId, clientId)}`, 'foreign company_id');
    const companies = await context.app.inject({
      method: 'GET',
      url: '/v3/companies',
      headers: { authorization: `Bearer ${await forgeMachine(other.companyId, clientId)}` },
    });
    assertUnauthorized(companies, 'GET /v3/companies with a foreign company_id');
    // A client_id that exists nowhere, and a company that does not exist.
    await refusedOnCompanyRoute(`Bearer ${await forgeMachine(tenant.companyId, 'cid_made_up')}`, 'made-up client_id');
    await refusedOnCompanyRoute(`Bearer ${await forgeMachine(randomUUID(), clientId)}`, 'unknown company');
    // Claims of the wrong type.
    await refusedOnCompanyRoute(
      `Bearer ${await forge({ ...machineClaims(tenant.companyId, clientId), company_id: [tenant.companyId] })}`,
      'company_id as an array',
    );
    await refusedOnCompanyRoute(
      `Bearer ${await forge({ company_id: tenant.companyId, grant_type: 'client_credentials', scope: 'read write' })}`,
      'no client_id',
    );
    await refusedOnCompanyRoute(
      `Bearer ${await forge({ ...machineClaims(tenant.companyId, clientId), grant_type: 'password' })}`,
      'grant_type password',
    );
  });

  test('a dashboard token for a user who does not exist', async () => {
    const tenant = await context.world.tenant();
    await refusedOnDashboardRoutes(tenant, `Bearer ${await forgeDashboard(randomUUID())}`, 'unknown user');
    await refusedOnDashboardRoutes(tenant, `Bearer ${await forge({ token_use: 'dashboard' }, { aud: 'dashboard' })}`, 'no sub');
  });
});

describe('a validly signed machine token without a usable scope', () => {
  test('is 403 Insufficient scope: read required on GET', async () => {
    const { tenant, clientId } = await tenantWithClient();
    for (const scope of ['', 'admin']) {
      const token = await forge(machineClaims(tenant.companyId, clientId, scope));
      const response = await context.app.inject({ method: 'GET', url: '/v3/company', headers: { authorization: `Bearer ${token}` } });
      assert.equal(response.statusCode, 403, response.body);
      assert.deepEqual(json(response), { success: false, message: 'Insufficient scope: read required', errors: [] });
    }
  });
});

describe('verified bearer tokens are remembered until they expire', () => {
  const ttls = { machineTokenTtlSeconds: 60, dashboardTokenTtlSeconds: 60, refreshTokenTtlSeconds: 3600, docsTokenTtlSeconds: 60 };

  test('the same answer, frozen, for the token\'s life; refused from its exp on; a token with one character of its signature changed never', async (t) => {
    t.mock.timers.enable({ apis: ['Date'], now: Date.now() });
    const tokens = createTokenService(TEST_SECRETS as unknown as Secrets, ttls);
    const token = await tokens.signMachineToken({ companyId: randomUUID(), clientId: 'client-a', scopes: ['read', 'write'] });
    const first = await tokens.verifyBearer(token);
    const again = await tokens.verifyBearer(token);
    assert.deepEqual(again, first);
    assert.ok(Object.isFrozen(again) && 'claims' in again && Object.isFrozen(again.claims), 'shared between requests, so frozen');

    const [head, body, signature] = token.split('.') as [string, string, string];
    // The first character: all six of its bits are signature (the last one's lowest two are padding).
    const altered = `${head}.${body}.${signature.startsWith('A') ? 'B' : 'A'}${signature.slice(1)}`;
    await assert.rejects(tokens.verifyBearer(altered), /Invalid or expired token/);

    const exp = decodeJwt(token).exp! * 1000;
    t.mock.timers.setTime(exp - 1);
    assert.deepEqual(await tokens.verifyBearer(token), first, 'valid up to the last millisecond before exp');
    t.mock.timers.setTime(exp);
    await assert.rejects(tokens.verifyBearer(token), /Invalid or expired token/, 'expired at exp, as jose would say');
  });
});
