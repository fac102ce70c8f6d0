import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createTestContext, json } from '../../helpers/app.js';
import type { TestContext } from '../../helpers/app.js';

let context: TestContext;
before(async () => {
  context = await createTestContext();
});
after(() => context.close());

test('/openapi.json is OpenAPI 3.1 and describes every route that is not hidden', async () => {
  const response = await context.app.inject({ method: 'GET', url: '/openapi.json' });
  assert.equal(response.statusCode, 200);
  const document = json(response);
  assert.equal(document.openapi, '3.1.0');
  const missing: string[] = [];
  const documented = context.app.registeredRoutes.filter((route) => !route.hidden && route.method !== 'HEAD');
  assert.ok(documented.length > 30, 'the app registers its routes');
  for (const route of documented) {
    const path = route.url.replace(/:([A-Za-z]+)/g, '{$1}');
    if (!document.paths?.[path]?.[route.method.toLowerCase()]) missing.push(`${route.method} ${route.url}`);
  }
  assert.deepEqual(missing, []);
});

test('every documented /v3 operation names its error responses with the shared error body', async () => {
  const document = json(await context.app.inject({ method: 'GET', url: '/openapi.json' }));
  const withoutErrors: string[] = [];
  for (const [path, operations] of Object.entries<Record<string, { responses?: Record<string, unknown> }>>(document.paths)) {
    if (!path.startsWith('/v3/')) continue;
    for (const [method, operation] of Object.entries(operations)) {
      const statuses = Object.keys(operation.responses ?? {});
      if (!statuses.some((status) => status.startsWith('4'))) withoutErrors.push(`${method.toUpperCase()} ${path}`);
    }
  }
  assert.deepEqual(withoutErrors, []);
  assert.ok(document.components.schemas.ErrorBody, 'the error body is a named component');
});

test('/docs serves the interactive reference and its assets', async () => {
  const page = await context.app.inject({ method: 'GET', url: '/docs' });
  assert.equal(page.statusCode, 200);
  assert.match(page.headers['content-type'] as string, /text\/html/);
  assert.match(page.body, /swagger-ui-bundle\.js/);
  for (const asset of ['/docs/assets/swagger-ui-bundle.js', '/docs/assets/swagger-ui.css', '/docs/assets/init.js']) {
    assert.equal((await context.app.inject({ method: 'GET', url: asset })).statusCode, 200, asset);
  }
  assert.equal((await context.app.inject({ method: 'GET', url: '/docs/assets/nope.js' })).statusCode, 404);
});

test('/healthz and /readyz answer', async () => {
  assert.deepEqual(json(await context.app.inject({ method: 'GET', url: '/healthz' })), { status: 'ok' });
  assert.deepEqual(json(await context.app.inject({ method: 'GET', url: '/readyz' })), { status: 'ready' });
});
