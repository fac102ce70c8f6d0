import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import Fastify from 'fastify';
import { LOG_REDACTIONS } from '../../src/app.js';
import { withDebugServer } from '../helpers/server.js';

// Structured logs carry a request id on every request line and never a credential: the real
// server, at debug level, while every kind of credential goes through it.

interface Sent {
  status: number;
  body: Record<string, unknown>;
  requestId: string | null;
}

async function send(base: string, method: string, path: string, options: { headers?: Record<string, string>; json?: unknown; form?: Record<string, string>; raw?: string } = {}): Promise<Sent> {
  const headers: Record<string, string> = { ...options.headers };
  let body: string | undefined;
  if (options.json !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(options.json);
  } else if (options.form) {
    headers['content-type'] = 'application/x-www-form-urlencoded';
    body = new URLSearchParams(options.form).toString();
  } else if (options.raw !== undefined) {
    headers['content-type'] = 'application/json';
    body = options.raw;
  }
  const response = await fetch(`${base}${path}`, { method, headers, ...(body !== undefined ? { body } : {}) });
  const text = await response.text();
  return { status: response.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {}, requestId: response.headers.get('x-request-id') };
}

test('the server logs request ids, and no password, secret, token or API key, at debug level', async () => {
  await withDebugServer(async (server) => {
    const base = server.base;
    const secrets: Record<string, string> = {};
    const email = `logging-${randomUUID()}@example.com`;
    secrets.password = `pw-${randomUUID()}`;
    secrets.wrongPassword = `wrong-${randomUUID()}`;

    assert.equal((await send(base, 'POST', '/v3/auth/signup', { json: { email, password: secrets.password, name: 'Logging' } })).status, 201);
    const login = await send(base, 'POST', '/v3/auth/login', { json: { email, password: secrets.password } });
    assert.equal(login.status, 200);
    secrets.userToken = login.body.accessToken as string;
    assert.equal((await send(base, 'POST', '/v3/auth/login', { json: { email, password: secrets.wrongPassword } })).status, 401);
    // A body that does not parse, with a password in it: the 400 says nothing of the body, nor does the log.
    secrets.malformedPassword = `malformed-${randomUUID()}`;
    assert.equal((await send(base, 'POST', '/v3/auth/login', { raw: `{"email":"${email}","password":"${secrets.malformedPassword}"` })).status, 400);

    const bearer = { authorization: `Bearer ${secrets.userToken}` };
    const company = await send(base, 'POST', '/v3/company', { headers: bearer, json: { name: 'Logging Co' } });
    assert.equal(company.status, 201);
    secrets.apiKey = company.body.apiKey as string;
    const dashboard = { ...bearer, 'x-api-key': secrets.apiKey };
    const read = await send(base, 'GET', '/v3/company', { headers: dashboard });
    assert.equal(read.status, 200);
    // A wrong API key is refused; it is not logged either.
    secrets.wrongApiKey = `sk-${randomUUID()}`;
    assert.equal((await send(base, 'GET', '/v3/company', { headers: { ...bearer, 'x-api-key': secrets.wrongApiKey } })).status, 401);

    const client = await send(base, 'POST', '/v3/clientId', { headers: dashboard, json: {} });
    assert.equal(client.status, 201);
    const clientId = client.body.clientId as string;
    secrets.clientSecret = client.body.clientSecret as string;
    // The client secret in the form body, then as HTTP Basic, then a wrong one.
    const token = await send(base, 'POST', '/v3/oauth/token', { form: { grant_type: 'client_credentials', client_id: clientId, client_secret: secrets.clientSecret } });
    assert.equal(token.status, 200);
    secrets.machineToken = token.body.access_token as string;
    secrets.basic = Buffer.from(`${clientId}:${secrets.clientSecret}`).toString('base64');
    assert.equal((await send(base, 'POST', '/v3/oauth/token', { headers: { authorization: `Basic ${secrets.basic}` }, form: { grant_type: 'client_credentials' } })).status, 200);
    secrets.wrongSecret = `wrong-secret-${randomUUID()}`;
    assert.equal((await send(base, 'POST', '/v3/oauth/token', { form: { grant_type: 'client_credentials', client_id: clientId, client_secret: secrets.wrongSecret } })).status, 401);
    assert.equal((await send(base, 'GET', '/v3/company', { headers: { authorization: `Bearer ${secrets.machineToken}` } })).status, 200);

    // Refresh tokens, in answers and in a body.
    const refresh = await send(base, 'POST', '/v3/auth/generateRefreshToken', { headers: dashboard, json: {} });
    assert.equal(refresh.status, 200, JSON.stringify(refresh.body));
    secrets.refreshToken = refresh.body.refreshToken as string;
    const exchanged = await send(base, 'POST', '/v3/auth/token', { json: { refresh_token: secrets.refreshToken } });
    assert.equal(exchanged.status, 200, JSON.stringify(exchanged.body));
    secrets.rotatedRefreshToken = exchanged.body.refreshToken as string;
    // An external calendar OAuth callback carries a one-time code and a state in its query.
    secrets.oauthCode = `code-${randomUUID()}`;
    secrets.oauthState = `state-${randomUUID()}`;
    assert.equal((await send(base, 'GET', `/v3/calendar/callback?code=${secrets.oauthCode}&state=${secrets.oauthState}`)).status, 400);

    // Let the last lines reach the pipe.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const output = server.output();
    const lines = output.split('\n').filter((line) => line.trim() !== '');
    const records = lines.map((line) => {
      try {
        return JSON.parse(line) as Record<string, unknown>;
      } catch {
        return assert.fail(`every log line is JSON: ${line}`);
      }
    });
    assert.ok(records.some((r) => r.level === 20 || r.level === 30), 'the server logged');

    for (const [name, value] of Object.entries(secrets)) {
      assert.ok(value && value.length >= 16, `${name} was captured`);
      assert.equal(output.includes(value), false, `${name} appears in the log`);
    }
    assert.doesNotMatch(output, /client_secret=|"password"/);

    // Every request's lines carry its id, the one the answer's x-request-id header names.
    assert.ok(read.requestId);
    const ofRead = records.filter((r) => r.reqId === read.requestId);
    assert.deepEqual(ofRead.map((r) => r.msg), ['incoming request', 'request completed']);
    assert.deepEqual((ofRead[1]!.res as { statusCode: number }).statusCode, 200);
  });
});

test('LOG_REDACTIONS censor credential headers and fields that reach a log object', () => {
  let written = '';
  const stream = new Writable({
    write(chunk, _encoding, done) {
      written += String(chunk);
      done();
    },
  });
  // Fastify's own request serializer writes no header and no body; this one writes the request
  // as it comes, as a custom serializer might some day.
  const app = Fastify({ logger: { level: 'trace', redact: { paths: LOG_REDACTIONS, censor: '[redacted]' }, stream, serializers: { req: (req) => req as unknown as Record<string, unknown> } } });
  const values = ['Bearer abc.def.ghi-secret', 'sk_live_apikey_secret', 'pub-client-secret', 'session=cookie-secret', 'hunter2-password-secret', 'client-secret-value', 'refresh-token-secret', 'form-body-secret'];
  app.log.info({
    req: {
      method: 'POST',
      url: '/v3/oauth/token',
      headers: { authorization: values[0], 'x-api-key': values[1], 'x-client-id': values[2], cookie: values[3], 'content-type': 'application/json' },
      body: `client_secret=${values[7]}`,
    },
  });
  app.log.error({ err: Object.assign(new Error('boom'), { password: values[4] }), body: { client_secret: values[5], refresh_token: values[6] } }, 'failed');
  app.log.info({ password: values[4], clientSecret: values[5] }, 'top level');
  for (const value of values) assert.equal(written.includes(value), false, value);
  assert.match(written, /\[redacted\]/);
  assert.match(written, /application\/json/, 'other headers stay');
  assert.match(written, /boom/, 'the error itself stays');
});
