// The OpenAPI document the app serves passes Redocly's recommended rules with no error and no
// warning, names every operation, and describes the machine-token flow, servers, 429 and 503.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createTestContext, json } from '../helpers/app.js';
import type { TestContext } from '../helpers/app.js';
import { OPERATION_IDS } from '../../src/platform/http/openapi.js';

const REDOCLY = join(dirname(createRequire(import.meta.url).resolve('@redocly/cli/package.json')), 'bin', 'cli.js');
const BASE_URL = 'https://api.slotwise.test';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the document is walked field by field
type Loose = Record<string, any>;

let context: TestContext;
let document: Loose;
before(async () => {
  context = await createTestContext({ PUBLIC_BASE_URL: BASE_URL });
  const response = await context.app.inject({ method: 'GET', url: '/openapi.json', headers: { host: 'attacker.test' } });
  assert.equal(response.statusCode, 200);
  document = json(response);
});
after(() => context.close());

function operations(): Array<{ key: string; method: string; path: string; operation: Loose }> {
  return Object.entries<Loose>(document.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, operation]) => ({ key: `${method.toUpperCase()} ${path}`, method, path, operation })),
  );
}

test('redocly lint (recommended rules) reports no error and no warning on the served document', () => {
  const dir = mkdtempSync(join(tmpdir(), 'slotwise-openapi-'));
  try {
    const file = join(dir, 'openapi.json');
    writeFileSync(file, JSON.stringify(document));
    const result = spawnSync(process.execPath, [REDOCLY, 'lint', file, '--extends=recommended', '--format=json', '--max-problems=1000'], {
      encoding: 'utf8',
      // No telemetry, no update check: the lint runs offline.
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', CI: 'true' },
      timeout: 60_000,
    });
    const report = JSON.parse(result.stdout) as { totals: { errors: number; warnings: number }; problems: Array<{ ruleId: string; message: string; location: Array<{ pointer: string }> }> };
    // One deliberate exception: the OAuth callback is a browser redirect (302) by nature; it has
    // no 2xx answer to document (RFC 6749 4.1.2 sends the user agent on).
    const redirectOnly = (p: { ruleId: string; location: Array<{ pointer: string }> }) =>
      p.ruleId === 'operation-2xx-response' && p.location[0]?.pointer === '#/paths/~1v3~1calendar~1callback/get/responses';
    const kept = report.problems.filter((p) => !redirectOnly(p));
    const problems = kept.map((p) => `${p.ruleId} ${p.location[0]?.pointer}: ${p.message}`);
    assert.deepEqual(problems, []);
    const excepted = report.problems.length - kept.length;
    assert.ok(report.totals.errors + report.totals.warnings === excepted, JSON.stringify(report.totals));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('every operation has the operationId a person would choose, each once', () => {
  const ids = operations().map(({ key, operation }) => [key, operation.operationId]);
  for (const [key, id] of ids) assert.equal(id, OPERATION_IDS[key!], key);
  assert.equal(new Set(ids.map(([, id]) => id)).size, ids.length);
  const byId = Object.fromEntries(ids.map(([key, id]) => [id, key]));
  assert.equal(byId.createAppointment, 'POST /v3/appointment');
  assert.equal(byId.bookAppointment, 'PUT /v3/appointment/{id}/book');
  assert.equal(byId.searchAvailability, 'GET /v3/availability');
});

test('every PATCH the server accepts is documented, and PUT on recurring blocks', () => {
  const documented = new Set(operations().map((o) => o.key));
  const patches = context.app.registeredRoutes.filter((r) => r.method === 'PATCH').map((r) => `PATCH ${r.url.replace(/:([A-Za-z]+)/g, '{$1}')}`);
  assert.ok(patches.length >= 8);
  for (const key of patches) assert.ok(documented.has(key), key);
  assert.ok(documented.has('PUT /v3/unavailability/recurringBlock/{id}'));
});

test('servers come from PUBLIC_BASE_URL, not from the request\'s Host', () => {
  assert.deepEqual(document.servers.map((s: { url: string }) => s.url), [BASE_URL]);
  assert.doesNotMatch(JSON.stringify(document), /attacker\.test/);
});

test('an OAuth 2.0 client-credentials scheme points at the token route and is offered wherever a machine token works', () => {
  const scheme = document.components.securitySchemes.oauth2ClientCredentials;
  assert.equal(scheme.type, 'oauth2');
  assert.equal(scheme.flows.clientCredentials.tokenUrl, `${BASE_URL}/v3/oauth/token`);
  assert.deepEqual(Object.keys(scheme.flows.clientCredentials.scopes), ['read', 'write']);
  const search = document.paths['/v3/availability'].get;
  assert.deepEqual(search.security.at(-1), { oauth2ClientCredentials: ['read'] });
  assert.deepEqual(document.paths['/v3/appointment'].post.security.at(-1), { oauth2ClientCredentials: ['write'] });
  assert.deepEqual(document.paths['/v3/oauth/token'].post.security, []);
});

test('every /v3 operation documents 429 with Retry-After and the RateLimit headers, and 503', () => {
  for (const { key, path, operation } of operations()) {
    if (!path.startsWith('/v3/')) continue;
    assert.deepEqual(operation.responses['429'], { $ref: '#/components/responses/TooManyRequests' }, key);
    assert.deepEqual(operation.responses['503'], { $ref: '#/components/responses/ServiceUnavailable' }, key);
  }
  const headers = Object.keys(document.components.responses.TooManyRequests.headers);
  assert.deepEqual(headers, ['Retry-After', 'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'RateLimit-Policy']);
});

test('no Ajv-only keyword reaches the document', () => {
  assert.doesNotMatch(JSON.stringify(document), /"format(Exclusive)?(Minimum|Maximum)"/);
});

test('every request body has an example, the main answers have one, and no answer is described as "Default Response"', () => {
  const missing: string[] = [];
  for (const { key, operation } of operations()) {
    for (const [type, media] of Object.entries<Record<string, unknown>>(operation.requestBody?.content ?? {})) {
      if (media.example === undefined) missing.push(`${key} ${type}`);
    }
    for (const [status, response] of Object.entries<Record<string, unknown>>(operation.responses)) {
      assert.notEqual(response.description, 'Default Response', `${key} ${status}`);
    }
  }
  assert.deepEqual(missing, []);
  for (const [path, method, status] of [
    ['/v3/availability', 'get', '200'],
    ['/v3/appointment/hold', 'post', '201'],
    ['/v3/appointment/{id}/book', 'put', '200'],
    ['/v3/location', 'post', '201'],
    ['/v3/oauth/token', 'post', '200'],
  ] as const) {
    assert.ok(document.paths[path][method].responses[status].content['application/json'].example, `${method} ${path}`);
  }
});
