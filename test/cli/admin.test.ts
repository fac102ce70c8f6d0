import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { runAdminCommand, UsageError } from '../../src/cli/admin.js';
import { createTestContext, json, uniqueEmail } from '../helpers/app.js';
import type { TestContext } from '../helpers/app.js';

let context: TestContext;
before(async () => {
  context = await createTestContext();
});
after(() => context.close());

test('create-company makes the company and its Owner, who can then sign in and use the API key', async () => {
  const email = uniqueEmail('operator');
  const result = (await runAdminCommand(context.database.db, ['create-company', '--name', 'Operated Co', '--owner-email', email])) as {
    company: { id: string; apiKey: string };
    owner: { generatedPassword: string };
  };
  assert.ok(result.owner.generatedPassword.length >= 12);
  const login = await context.app.inject({ method: 'POST', url: '/v3/auth/login', payload: { email, password: result.owner.generatedPassword } });
  assert.equal(login.statusCode, 200);
  const company = await context.app.inject({
    method: 'GET',
    url: '/v3/company',
    headers: { authorization: `Bearer ${json(login).accessToken}`, 'x-api-key': result.company.apiKey },
  });
  assert.equal(company.statusCode, 200);
  assert.equal(json(company).id, result.company.id);
});

test('suspend refuses every call of the company with 403; reinstate lets it back in', async () => {
  const email = uniqueEmail('operator');
  const { company } = (await runAdminCommand(context.database.db, [
    'create-company', '--name', 'Suspended Co', '--owner-email', email, '--owner-password', 'long enough password',
  ])) as { company: { id: string; apiKey: string } };
  const login = await context.app.inject({ method: 'POST', url: '/v3/auth/login', payload: { email, password: 'long enough password' } });
  const headers = { authorization: `Bearer ${json(login).accessToken}`, 'x-api-key': company.apiKey };

  const suspended = (await runAdminCommand(context.database.db, ['suspend', '--company', company.id])) as { suspended: boolean };
  assert.equal(suspended.suspended, true);
  const refused = await context.app.inject({ method: 'GET', url: '/v3/company', headers });
  assert.equal(refused.statusCode, 403);
  assert.equal(json(refused).message, 'Company account is suspended');

  await runAdminCommand(context.database.db, ['reinstate', '--company', company.id]);
  assert.equal((await context.app.inject({ method: 'GET', url: '/v3/company', headers })).statusCode, 200);
});

test('list returns every company, and no API key or hash', async () => {
  const email = uniqueEmail('operator');
  const { company } = (await runAdminCommand(context.database.db, ['create-company', '--name', 'Listed Co', '--owner-email', email])) as {
    company: { id: string };
  };
  const listed = (await runAdminCommand(context.database.db, ['list'])) as Array<Record<string, unknown>>;
  const row = listed.find((c) => c.id === company.id);
  assert.ok(row);
  assert.equal(row.apiKey, undefined);
  assert.equal(row.apiKeyHash, undefined);
});

test('bad usage is a UsageError, and an unknown company is refused', async () => {
  await assert.rejects(runAdminCommand(context.database.db, ['create-company', '--name', 'x']), UsageError);
  await assert.rejects(runAdminCommand(context.database.db, ['frobnicate']), UsageError);
  await assert.rejects(runAdminCommand(context.database.db, ['suspend', '--company', 'nope']), UsageError);
  await assert.rejects(
    runAdminCommand(context.database.db, ['suspend', '--company', '00000000-0000-4000-8000-000000000000']),
    /Company not found/,
  );
});
