import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createTenant, createTestContext, json, machineToken } from './helpers/app.js';
import type { TestContext } from './helpers/app.js';

let context: TestContext;
before(async () => {
  context = await createTestContext();
});
after(() => context.close());

test('a new company can be read with a machine token', async () => {
  const tenant = await createTenant(context.app, 'Smoke Co');
  const token = await machineToken(context.app, tenant);
  const response = await context.app.inject({ method: 'GET', url: '/v3/company', headers: { authorization: `Bearer ${token}` } });
  assert.equal(response.statusCode, 200);
  assert.equal(json(response).name, 'Smoke Co');
});
