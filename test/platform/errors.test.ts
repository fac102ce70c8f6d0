import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { createTestContext, json } from '../helpers/app.js';
import type { TestContext } from '../helpers/app.js';
import { mapSchemaErrors } from '../../src/platform/errors.js';

let context: TestContext;
before(async () => {
  context = await createTestContext();
});
after(() => context.close());

/** Every status this file has seen, to check that none is 422. */
const seen: number[] = [];

/** Injects into `app` and checks what every response must have: an x-request-id, and never 422. */
async function call(options: InjectOptions, app = context.app): Promise<LightMyRequestResponse> {
  const response = await app.inject(options);
  const requestId = response.headers['x-request-id'];
  assert.ok(typeof requestId === 'string' && requestId.length > 0, `${options.method} ${options.url} answered without x-request-id`);
  assert.notEqual(response.statusCode, 422, `${options.method} ${options.url} answered 422`);
  seen.push(response.statusCode);
  return response;
}

interface ErrorEntry {
  type: string;
  location: string;
  path: string;
  msg: string;
  code?: string;
}
interface ErrorBody {
  success: boolean;
  message: string;
  errors: ErrorEntry[];
  requestId?: string;
}

/** The specification's error body: success false, a message, errors[]; the status is not repeated. */
function errorBody(response: LightMyRequestResponse, status: number, message?: string): ErrorBody {
  assert.equal(response.statusCode, status, response.body);
  assert.match(String(response.headers['content-type']), /^application\/json/);
  const body = json<ErrorBody>(response);
  assert.equal(body.success, false);
  assert.equal(typeof body.message, 'string');
  assert.ok(body.message.length > 0);
  assert.ok(Array.isArray(body.errors));
  for (const entry of body.errors) {
    assert.equal(entry.type, 'field');
    assert.ok(['body', 'query', 'params', 'headers'].includes(entry.location), entry.location);
    assert.equal(typeof entry.path, 'string');
    assert.equal(typeof entry.msg, 'string');
  }
  for (const key of ['status', 'statusCode', 'error']) assert.equal(key in body, false, `the body repeats ${key}`);
  if (message !== undefined) assert.equal(body.message, message);
  return body;
}

function validation(response: LightMyRequestResponse): ErrorEntry[] {
  return errorBody(response, 400, 'Validation Error').errors;
}

function entryAt(errors: ErrorEntry[], path: string): ErrorEntry {
  const entry = errors.find((e) => e.path === path);
  assert.ok(entry, `no error for ${path} in ${JSON.stringify(errors)}`);
  return entry;
}

const signupBody = () => ({ email: `errors-${Math.random().toString(36).slice(2)}@example.com`, password: 'correct horse battery', name: 'Errors' });

describe('request bodies the framework cannot take', () => {
  test('malformed JSON is 400 with the error body', async () => {
    const response = await call({
      method: 'POST',
      url: '/v3/auth/signup',
      headers: { 'content-type': 'application/json' },
      payload: '{"email": "a@example.com", "password": ',
    });
    const body = errorBody(response, 400);
    assert.deepEqual(body.errors, []);
  });

  test('text/plain with a body on a JSON route is 400, never 415', async () => {
    const response = await call({
      method: 'POST',
      url: '/v3/auth/signup',
      headers: { 'content-type': 'text/plain' },
      payload: JSON.stringify(signupBody()),
    });
    errorBody(response, 400);
  });

  test('application/xml with a body on a JSON route is 400, never 415', async () => {
    const response = await call({
      method: 'POST',
      url: '/v3/auth/signup',
      headers: { 'content-type': 'application/xml' },
      payload: '<signup><email>a@example.com</email></signup>',
    });
    const body = errorBody(response, 400);
    assert.deepEqual(body.errors, []);
  });

  test('a body over BODY_LIMIT_BYTES is 400, never 413', async () => {
    const small = await createTestContext({ BODY_LIMIT_BYTES: '2048' });
    try {
      const payload = JSON.stringify({ ...signupBody(), name: 'x'.repeat(4096) });
      const response = await call({ method: 'POST', url: '/v3/auth/signup', headers: { 'content-type': 'application/json' }, payload }, small.app);
      const body = errorBody(response, 400);
      assert.deepEqual(body.errors, []);
      // Just under the limit the same route answers normally.
      const fits = await call({ method: 'POST', url: '/v3/auth/signup', payload: signupBody() }, small.app);
      assert.equal(fits.statusCode, 201, fits.body);
    } finally {
      await small.close();
    }
  });

  test('POST with Content-Type application/json and no body is a Validation Error naming the missing fields', async () => {
    const response = await call({ method: 'POST', url: '/v3/auth/signup', headers: { 'content-type': 'application/json' } });
    const errors = validation(response);
    for (const field of ['email', 'password', 'name']) {
      const entry = entryAt(errors, field);
      assert.equal(entry.location, 'body');
      assert.match(entry.msg, new RegExp(field));
    }
  });
});

describe('routes', () => {
  test('an unmatched route is 404 with the error body', async () => {
    const response = await call({ method: 'GET', url: '/v3/no-such-thing?x=1' });
    const body = errorBody(response, 404);
    assert.deepEqual(body.errors, []);
    const post = await call({ method: 'POST', url: '/nowhere', payload: {} });
    errorBody(post, 404);
  });
});

describe('schema failures', () => {
  test('a body field: location body, the field as path', async () => {
    const response = await call({ method: 'POST', url: '/v3/auth/signup', payload: { ...signupBody(), email: 'not-an-email' } });
    const errors = validation(response);
    assert.equal(errors.length, 1, JSON.stringify(errors));
    assert.deepEqual(
      { type: errors[0]!.type, location: errors[0]!.location, path: errors[0]!.path },
      { type: 'field', location: 'body', path: 'email' },
    );
    assert.ok(errors[0]!.msg.length > 0);
  });

  test('a wrongly typed body field is not coerced: a number where a string is expected is 400', async () => {
    const response = await call({ method: 'POST', url: '/v3/auth/signup', payload: { ...signupBody(), name: 12345 } });
    assert.equal(entryAt(validation(response), 'name').location, 'body');
  });

  test('an unknown body field is 400 naming it', async () => {
    const response = await call({ method: 'POST', url: '/v3/auth/signup', payload: { ...signupBody(), favouriteColour: 'teal' } });
    const entry = entryAt(validation(response), 'favouriteColour');
    assert.equal(entry.location, 'body');
    assert.match(entry.msg, /favouriteColour/);
  });

  test('query parameters: limit over the maximum, zero and non-numeric are 400 at path limit, location query', async () => {
    const tenant = await context.world.tenant();
    for (const limit of ['101', '0', 'abc', '-1', '2.5']) {
      const response = await call({
        method: 'GET',
        url: `/v3/companies?limit=${limit}`,
        headers: { authorization: `Bearer ${tenant.userToken}` },
      });
      const errors = validation(response);
      const entry = entryAt(errors, 'limit');
      assert.equal(entry.location, 'query', `limit=${limit}`);
      assert.equal(entry.type, 'field');
    }
    const page = await call({ method: 'GET', url: '/v3/companies?page=0', headers: { authorization: `Bearer ${tenant.userToken}` } });
    assert.equal(entryAt(validation(page), 'page').location, 'query');
  });

  test('a NUL character in a body or query string is 400 naming the field, never 500', async () => {
    const tenant = await context.world.tenant();
    const inBody = await call({ method: 'POST', url: '/v3/customer', headers: tenant.dashboard, payload: { firstName: 'Nul', email: 'nul@example.com', notes: 'a\u0000b' } });
    assert.equal(errorBody(inBody, 400, 'Validation Error').errors[0]!.path, 'notes');
    const nested = await call({ method: 'POST', url: '/v3/location', headers: tenant.dashboard, payload: { name: 'N', timezoneName: 'UTC', address: { country: 'G\u0000' } } });
    assert.equal(errorBody(nested, 400, 'Validation Error').errors[0]!.path, 'address.country');
    const inQuery = await call({ method: 'GET', url: '/v3/companies?search=%00', headers: { authorization: tenant.dashboard.authorization! } });
    const body = errorBody(inQuery, 400, 'Validation Error');
    assert.equal(body.errors[0]!.path, 'search');
    assert.equal(body.errors[0]!.location, 'query');
  });

  test('dates outside 1900 to 2999 are 400 at the date, never 500', async () => {
    const tenant = await context.world.tenant();
    const id = '00000000-0000-4000-8000-000000000000';
    for (const url of [
      `/v3/availability?LocationId=${id}&ServiceId=${id}&startDate=9999-12-31`,
      `/v3/unavailability?LocationIds=${id}&startDate=0001-01-01`,
      `/v3/unavailability?LocationIds=${id}&startDate=2026-01-01&endDate=9999-12-31`,
    ]) {
      const response = await call({ method: 'GET', url, headers: tenant.dashboard });
      const entry = errorBody(response, 400, 'Validation Error').errors[0]!;
      assert.match(entry.path, /^(startDate|endDate)$/, url);
      assert.equal(entry.location, 'query', url);
    }
  });

  test('a page number too large for any offset is 400 at path page, never 500', async () => {
    const tenant = await context.world.tenant();
    for (const url of ['/v3/locations?page=100000000000000000000', '/v3/customers?page=1000001', '/v3/clientIds?page=99999999999']) {
      const response = await call({ method: 'GET', url, headers: tenant.dashboard });
      const body = errorBody(response, 400, 'Validation Error');
      assert.equal(body.errors[0]!.path, 'page', url);
      assert.equal(body.errors[0]!.location, 'query', url);
    }
  });

  test('a path parameter: DELETE /v3/clientId/not-a-uuid is 400 at path id, location params', async () => {
    const tenant = await context.world.tenant();
    const response = await call({ method: 'DELETE', url: '/v3/clientId/not-a-uuid', headers: tenant.dashboard });
    const entry = entryAt(validation(response), 'id');
    assert.equal(entry.location, 'params');
  });

  test('a nested body field uses dot notation', async () => {
    const tenant = await context.world.tenant();
    const response = await call({
      method: 'PUT',
      url: '/v3/company',
      headers: tenant.dashboard,
      payload: { allowedDomains: ['ok.example.com', 42] },
    });
    const entry = entryAt(validation(response), 'allowedDomains.1');
    assert.equal(entry.location, 'body');
  });

  test('mapSchemaErrors turns an Ajv instance path into dot notation', () => {
    const mapped = mapSchemaErrors([{ instancePath: '/Customer/email', keyword: 'format', params: { format: 'email' } }], 'body');
    assert.equal(mapped.length, 1);
    assert.deepEqual({ ...mapped[0], msg: undefined }, { type: 'field', location: 'body', path: 'Customer.email', msg: undefined });
    assert.match(mapped[0]!.msg, /Customer\.email/);

    const missing = mapSchemaErrors(
      [{ instancePath: '/Unavailability', keyword: 'required', params: { missingProperty: 'startTime' } }],
      'body',
    );
    assert.equal(missing[0]!.path, 'Unavailability.startTime');

    const query = mapSchemaErrors([{ instancePath: '/limit', keyword: 'maximum', message: 'must be <= 100', params: { limit: 100 } }], 'querystring');
    assert.deepEqual({ location: query[0]!.location, path: query[0]!.path }, { location: 'query', path: 'limit' });

    const params = mapSchemaErrors([{ instancePath: '/id', keyword: 'format', params: { format: 'uuid' } }], 'params');
    assert.deepEqual({ location: params[0]!.location, path: params[0]!.path }, { location: 'params', path: 'id' });
  });
});

describe('failures the caller did not cause', () => {
  test('a 500 says nothing about internals and carries the request id; /readyz is then 503', async () => {
    // A database of its own: this test closes it.
    const broken = await createTestContext({}, { dedicatedDatabase: true });
    try {
      const tenant = await broken.world.tenant();
      await broken.database.close();
      const response = await call({ method: 'GET', url: '/v3/company', headers: tenant.dashboard }, broken.app);
      const body = errorBody(response, 500, 'Internal Server Error');
      assert.deepEqual(body.errors, []);
      assert.equal(typeof body.requestId, 'string');
      assert.equal(body.requestId, response.headers['x-request-id']);
      assert.deepEqual(Object.keys(body).sort(), ['errors', 'message', 'requestId', 'success']);
      assert.doesNotMatch(response.body, /destroyed|kysely|pglite|pool|stack|at \w+ \(/i);

      const ready = await call({ method: 'GET', url: '/readyz' }, broken.app);
      assert.equal(ready.statusCode, 503);
      const health = await call({ method: 'GET', url: '/healthz' }, broken.app);
      assert.equal(health.statusCode, 200);
    } finally {
      // The database is already closed; the application and (in CI's second pass) Redis are left.
      await broken.app.close();
      await broken.redis?.quit();
    }
  });

  test('each request gets its own x-request-id', async () => {
    const first = await call({ method: 'GET', url: '/healthz' });
    const second = await call({ method: 'GET', url: '/healthz' });
    assert.notEqual(first.headers['x-request-id'], second.headers['x-request-id']);
  });

  test('no response in this file was 422', () => {
    assert.ok(seen.length > 20, `only ${seen.length} responses recorded`);
    assert.equal(seen.includes(422), false);
  });
});
