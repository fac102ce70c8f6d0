import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import { randomUUID } from 'node:crypto';
import { SignJWT, exportJWK, generateKeyPair } from 'jose';
import type { CryptoKey } from 'jose';
import { createTestContext, json } from '../../helpers/app.js';
import type { TestContext } from '../../helpers/app.js';

// Dashboard JWTs from an external OpenID Connect issuer, verified against its JWKS (served here by
// a local stand-in of the issuer's key endpoint).

const ISSUER = 'https://identity.example.test';
const AUDIENCE = 'slotwise-dashboard';
let context: TestContext;
let jwksServer: Server;
let privateKey: CryptoKey;
let strangerKey: CryptoKey;

before(async () => {
  const pair = await generateKeyPair('RS256');
  privateKey = pair.privateKey;
  strangerKey = (await generateKeyPair('RS256')).privateKey;
  const jwk = { ...(await exportJWK(pair.publicKey)), kid: 'key-1', alg: 'RS256', use: 'sig' };
  jwksServer = createServer((_request, response) => {
    response.setHeader('content-type', 'application/json');
    response.end(JSON.stringify({ keys: [jwk] }));
  });
  await new Promise<void>((resolve) => jwksServer.listen(0, '127.0.0.1', resolve));
  const address = jwksServer.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  context = await createTestContext({ OIDC_ISSUER: ISSUER, OIDC_AUDIENCE: AUDIENCE, OIDC_JWKS_URL: `http://127.0.0.1:${port}/jwks` });
});
after(async () => {
  await context.close();
  jwksServer.close();
});

function idToken(claims: Record<string, unknown>, key: CryptoKey = privateKey, audience = AUDIENCE) {
  return new SignJWT(claims)
    .setProtectedHeader({ alg: 'RS256', kid: 'key-1' })
    .setIssuer(ISSUER)
    .setAudience(audience)
    .setIssuedAt()
    .setExpirationTime('5m')
    .sign(key);
}

test('an issuer token signs the user in by (issuer, subject), and can create and use a company', async () => {
  const email = `oidc-${randomUUID()}@example.com`;
  const sub = randomUUID();
  const token = await idToken({ sub, email, email_verified: true, name: 'Ida External' });
  const me = await context.app.inject({ method: 'GET', url: '/v3/auth/me', headers: { authorization: `Bearer ${token}` } });
  assert.equal(me.statusCode, 200);
  assert.equal(json(me).email, email);

  const company = await context.app.inject({
    method: 'POST',
    url: '/v3/company',
    headers: { authorization: `Bearer ${token}` },
    payload: { name: 'Federated Co' },
  });
  assert.equal(company.statusCode, 201);
  const read = await context.app.inject({
    method: 'GET',
    url: '/v3/company',
    headers: { authorization: `Bearer ${await idToken({ sub })}`, 'x-api-key': json(company).apiKey },
  });
  assert.equal(read.statusCode, 200, 'a later token for the same subject is the same user, the Owner, even without an email');
});

// Issue 12, item 2: an issuer token for victim@... with email_verified false read the victim's
// companies as Owner, and a verified one was linked to the victim's password account.
test('an unverified email signs nobody in, and a password account is never taken over by email', async () => {
  const victim = await context.world.tenant();
  for (const claims of [
    { sub: randomUUID(), email: victim.email, email_verified: false },
    { sub: randomUUID(), email: victim.email, email_verified: 'true' },
    { sub: randomUUID(), email: victim.email },
  ]) {
    const response = await context.app.inject({ method: 'GET', url: '/v3/company', headers: { authorization: `Bearer ${await idToken(claims)}`, 'x-api-key': victim.apiKey } });
    assert.equal(response.statusCode, 401, response.body);
    assert.match(json(response).message, /not verified/);
  }
  const verifiedSub = randomUUID();
  const verified = await idToken({ sub: verifiedSub, email: victim.email.toUpperCase(), email_verified: true });
  const refused = await context.app.inject({ method: 'GET', url: '/v3/company', headers: { authorization: `Bearer ${verified}`, 'x-api-key': victim.apiKey } });
  assert.equal(refused.statusCode, 401, refused.body);
  assert.match(json(refused).message, /password/);

  // The account's owner consents while signed in with the password: from then on the issuer
  // account signs in as them.
  const linked = await context.app.inject({
    method: 'POST',
    url: '/v3/auth/me/identities',
    headers: { authorization: `Bearer ${victim.userToken}` },
    payload: { identityToken: verified },
  });
  assert.equal(linked.statusCode, 200, linked.body);
  assert.deepEqual(json(linked), { issuer: ISSUER, subject: verifiedSub });
  const read = await context.app.inject({ method: 'GET', url: '/v3/company', headers: { authorization: `Bearer ${verified}`, 'x-api-key': victim.apiKey } });
  assert.equal(read.statusCode, 200, read.body);
  // Nobody else can link the same identity.
  const other = await context.world.tenant();
  const again = await context.app.inject({ method: 'POST', url: '/v3/auth/me/identities', headers: { authorization: `Bearer ${other.userToken}` }, payload: { identityToken: verified } });
  assert.equal(again.statusCode, 409, again.body);
});

test('issuer tokens with a wrong audience, an unknown key or no email are refused with 401', async () => {
  const email = `oidc-${randomUUID()}@example.com`;
  for (const token of [
    await idToken({ email }, privateKey, 'someone-else'),
    await idToken({ email }, strangerKey),
    await idToken({ sub: 'no-email' }),
    await idToken({ email, email_verified: true }),
  ]) {
    const response = await context.app.inject({ method: 'GET', url: '/v3/auth/me', headers: { authorization: `Bearer ${token}` } });
    assert.equal(response.statusCode, 401);
    assert.equal(json(response).success, false);
  }
});
