// /v3/emailTemplates: upsert on (company, type, recipientType, channel), the EMAIL default channel,
// save-time refusals, tenant isolation and roles; and the resolution order the notification worker
// uses (the specification, Notification templates, rule 2): SMS template, else email, else default.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { addMember, createTestContext, json, machineToken } from '../../helpers/app.js';
import type { TestContext } from '../../helpers/app.js';
import { createTemplateService } from '../../../src/modules/templates/service.js';
import { createTemplateRepository } from '../../../src/modules/templates/repository.js';
import { defaultTemplate } from '../../../src/modules/templates/defaults.js';
import type { Tenant } from '../../helpers/world.js';

let context: TestContext;
before(async () => {
  context = await createTestContext();
});
after(() => context.close());

interface Template {
  id: string;
  companyId: string;
  type: string;
  recipientType: string;
  channel: string;
  subject: string;
  body: string;
  createdAt: string;
  updatedAt: string;
}

const post = (headers: Record<string, string>, payload: Record<string, unknown>) =>
  context.app.inject({ method: 'POST', url: '/v3/emailTemplates', headers, payload });
const get = (headers: Record<string, string>, query = '') => context.app.inject({ method: 'GET', url: `/v3/emailTemplates${query}`, headers });
const remove = (headers: Record<string, string>, id: string) => context.app.inject({ method: 'DELETE', url: `/v3/emailTemplates/${id}`, headers });

async function list(tenant: Tenant, query = ''): Promise<Template[]> {
  const response = await get(tenant.dashboard, query);
  assert.equal(response.statusCode, 200, response.body);
  return json<{ data: Template[] }>(response).data;
}

function assertFieldError(response: LightMyRequestResponse, path: string, pattern: RegExp) {
  assert.equal(response.statusCode, 400, response.body);
  const body = json(response);
  assert.equal(body.success, false);
  const error = body.errors.find((e: { path: string }) => e.path === path);
  assert.ok(error, `an error at ${path}: ${response.body}`);
  assert.equal(error.location, 'body');
  assert.match(error.msg, pattern);
}

describe('upsert', () => {
  test('POST creates (201, channel EMAIL by default), then replaces the same key (200, same id)', async () => {
    const tenant = await context.world.tenant();
    const first = await post(tenant.dashboard, { type: 'APPOINTMENT_BOOKED', recipientType: 'CUSTOMER', subject: 'Booked {{service.name}}', body: 'Hello {{customer.firstName}}' });
    assert.equal(first.statusCode, 201, first.body);
    const created = json<Template>(first);
    assert.equal(created.channel, 'EMAIL');
    assert.equal(created.companyId, tenant.companyId);
    assert.equal(created.subject, 'Booked {{service.name}}');

    const second = await post(tenant.dashboard, { type: 'APPOINTMENT_BOOKED', recipientType: 'CUSTOMER', channel: 'EMAIL', subject: 'New', body: 'With {{appointment.resources}}' });
    assert.equal(second.statusCode, 200, second.body);
    const updated = json<Template>(second);
    assert.equal(updated.id, created.id);
    assert.equal(updated.body, 'With {{appointment.resources}}');
    assert.equal(updated.createdAt, created.createdAt);
    assert.ok(updated.updatedAt >= created.updatedAt);

    const rows = await list(tenant);
    assert.equal(rows.length, 1);
    assert.deepEqual(rows[0], updated);
  });

  test('the key includes the channel, the type and the recipient', async () => {
    const tenant = await context.world.tenant();
    const saves = [
      { type: 'APPOINTMENT_BOOKED', recipientType: 'CUSTOMER', subject: 's', body: 'email' },
      { type: 'APPOINTMENT_BOOKED', recipientType: 'CUSTOMER', channel: 'SMS', body: 'sms' },
      { type: 'APPOINTMENT_BOOKED', recipientType: 'RESOURCE', subject: 's', body: 'resource' },
      { type: 'APPOINTMENT_CANCELLED', recipientType: 'CUSTOMER', subject: 's', body: 'cancelled' },
    ];
    for (const save of saves) assert.equal((await post(tenant.dashboard, save)).statusCode, 201);
    assert.equal((await post(tenant.dashboard, saves[1]!)).statusCode, 200);

    const email = await list(tenant);
    assert.deepEqual(email.map((t) => `${t.type} ${t.recipientType} ${t.channel}`).sort(), [
      'APPOINTMENT_BOOKED CUSTOMER EMAIL',
      'APPOINTMENT_BOOKED RESOURCE EMAIL',
      'APPOINTMENT_CANCELLED CUSTOMER EMAIL',
    ]);
    const sms = await list(tenant, '?channel=SMS');
    assert.deepEqual(sms.map((t) => [t.body, t.subject]), [['sms', '']]);
    assert.equal((await list(tenant, '?type=APPOINTMENT_BOOKED&recipientType=RESOURCE')).length, 1);
    assert.equal((await list(tenant, '?channel=EMAIL&type=APPOINTMENT_REMINDER')).length, 0);
  });

  test('two concurrent saves of one key make one row', async () => {
    const tenant = await context.world.tenant();
    const payload = { type: 'APPOINTMENT_REMINDER', recipientType: 'BUSINESS', subject: 'r', body: 'b' };
    const statuses = (await Promise.all([post(tenant.dashboard, payload), post(tenant.dashboard, payload)])).map((r) => r.statusCode).sort();
    assert.deepEqual(statuses, [200, 201]);
    assert.equal((await list(tenant)).length, 1);
  });

  test('GET /v3/emailTemplates/defaults lists the platform defaults of a channel', async () => {
    const tenant = await context.world.tenant();
    const email = json<{ data: Array<Record<string, unknown>> }>(await get(tenant.dashboard, '/defaults')).data;
    assert.equal(email.length, 18);
    assert.ok(email.every((t) => t.channel === 'EMAIL' && t.isDefault === true && t.subject && t.body));
    const sms = json<{ data: Array<Record<string, unknown>> }>(await get(tenant.dashboard, '/defaults?channel=SMS')).data;
    assert.equal(sms.length, 15);
    assert.ok(!sms.some((t) => t.type === 'EXTERNAL_CALENDAR_EVENT'));
    const one = json<{ data: Array<Record<string, unknown>> }>(await get(tenant.dashboard, '/defaults?type=APPOINTMENT_CANCELLED&recipientType=RESOURCE')).data;
    assert.equal(one.length, 1);
    assert.equal(one[0]!.body, defaultTemplate('APPOINTMENT_CANCELLED', 'RESOURCE', 'EMAIL').body);
  });
});

describe('refusals at save time', () => {
  let tenant: Tenant;
  before(async () => {
    tenant = await context.world.tenant();
  });

  test('EXTERNAL_CALENDAR_EVENT with channel SMS is a 400; with EMAIL it is saved', async () => {
    assertFieldError(await post(tenant.dashboard, { type: 'EXTERNAL_CALENDAR_EVENT', recipientType: 'RESOURCE', channel: 'SMS', body: 'x' }), 'channel', /cannot use channel SMS/);
    const saved = await post(tenant.dashboard, { type: 'EXTERNAL_CALENDAR_EVENT', recipientType: 'RESOURCE', subject: '{{service.name}}: {{customer.name}}', body: '{{appointment.resources}}' });
    assert.equal(saved.statusCode, 201, saved.body);
  });

  test('a nested each is a 400 naming body or subject', async () => {
    const nested = '{{#each resources}}{{#if email}}{{#each ../resources}}{{name}}{{/each}}{{/if}}{{/each}}';
    assertFieldError(await post(tenant.dashboard, { type: 'APPOINTMENT_BOOKED', recipientType: 'RESOURCE', subject: 's', body: nested }), 'body', /^body: Nested \{\{#each\}\}/);
    assertFieldError(await post(tenant.dashboard, { type: 'APPOINTMENT_BOOKED', recipientType: 'RESOURCE', subject: nested, body: 'b' }), 'subject', /^subject: Nested/);
    assertFieldError(await post(tenant.dashboard, { type: 'APPOINTMENT_BOOKED', recipientType: 'RESOURCE', channel: 'SMS', body: nested }), 'body', /Nested/);
  });

  test('a template that does not compile is a 400 naming the field', async () => {
    assertFieldError(await post(tenant.dashboard, { type: 'APPOINTMENT_CONFIRMED', recipientType: 'CUSTOMER', subject: 'ok', body: 'Hi {{customer.firstName' }), 'body', /^body: Does not compile/);
    assertFieldError(await post(tenant.dashboard, { type: 'APPOINTMENT_CONFIRMED', recipientType: 'CUSTOMER', subject: '{{#if x}}open', body: 'ok' }), 'subject', /^subject: Does not compile/);
    assertFieldError(await post(tenant.dashboard, { type: 'APPOINTMENT_CONFIRMED', recipientType: 'CUSTOMER', subject: 'ok', body: '{{shout customer.name}}' }), 'body', /Unknown helper "shout"/);
  });

  test('an EMAIL template needs a subject; an SMS one does not', async () => {
    assertFieldError(await post(tenant.dashboard, { type: 'APPOINTMENT_CANCELLED', recipientType: 'BUSINESS', body: 'b' }), 'subject', /required for EMAIL/);
    assertFieldError(await post(tenant.dashboard, { type: 'APPOINTMENT_CANCELLED', recipientType: 'BUSINESS', subject: '  ', body: 'b' }), 'subject', /required for EMAIL/);
    assert.equal((await post(tenant.dashboard, { type: 'APPOINTMENT_CANCELLED', recipientType: 'BUSINESS', channel: 'SMS', body: 'b' })).statusCode, 201);
  });

  test('a blank body is a 400 on either channel: it would send an empty message', async () => {
    assertFieldError(await post(tenant.dashboard, { type: 'APPOINTMENT_REMINDER', recipientType: 'CUSTOMER', channel: 'SMS', body: '   ' }), 'body', /blank/);
    assertFieldError(await post(tenant.dashboard, { type: 'APPOINTMENT_REMINDER', recipientType: 'CUSTOMER', subject: 's', body: ' \n ' }), 'body', /blank/);
  });

  test('schema: unknown type, recipient or channel, empty body and unknown fields are 400', async () => {
    assertFieldError(await post(tenant.dashboard, { type: 'APPOINTMENT_LOST', recipientType: 'CUSTOMER', subject: 's', body: 'b' }), 'type', /must be one of/);
    assertFieldError(await post(tenant.dashboard, { type: 'APPOINTMENT_BOOKED', recipientType: 'DOG', subject: 's', body: 'b' }), 'recipientType', /must be one of/);
    assertFieldError(await post(tenant.dashboard, { type: 'APPOINTMENT_BOOKED', recipientType: 'CUSTOMER', channel: 'FAX', subject: 's', body: 'b' }), 'channel', /must be one of/);
    assertFieldError(await post(tenant.dashboard, { type: 'APPOINTMENT_BOOKED', recipientType: 'CUSTOMER', subject: 's', body: '' }), 'body', /fewer than 1/);
    assertFieldError(await post(tenant.dashboard, { type: 'APPOINTMENT_BOOKED', recipientType: 'CUSTOMER', subject: 's', body: 'b', colour: 'red' }), 'colour', /not a recognised field/);
    assert.equal((await get(tenant.dashboard, '?channel=FAX')).statusCode, 400);
    // Nothing of the above was saved.
    assert.equal((await list(tenant, '?type=APPOINTMENT_BOOKED')).length, 0);
  });
});

describe('delete, tenant isolation and roles', () => {
  test("DELETE removes the company's template (204), then 404; another company's is 404 and stays", async () => {
    const a = await context.world.tenant();
    const b = await context.world.tenant();
    const mine = json<Template>(await post(a.dashboard, { type: 'APPOINTMENT_BOOKED', recipientType: 'CUSTOMER', subject: 'a', body: 'a' }));
    const theirs = json<Template>(await post(b.dashboard, { type: 'APPOINTMENT_BOOKED', recipientType: 'CUSTOMER', subject: 'b', body: 'b' }));
    assert.notEqual(mine.id, theirs.id);

    assert.equal((await remove(a.dashboard, theirs.id)).statusCode, 404);
    assert.deepEqual((await list(b)).map((t) => t.id), [theirs.id]);
    assert.deepEqual((await list(a)).map((t) => t.id), [mine.id], "one company never sees the other's templates");

    assert.equal((await remove(a.dashboard, mine.id)).statusCode, 204);
    assert.equal((await remove(a.dashboard, mine.id)).statusCode, 404);
    assert.equal((await remove(a.dashboard, 'not-a-uuid')).statusCode, 400);
    assert.deepEqual(await list(a), []);
    assert.equal((await list(b)).length, 1);
  });

  test('a save in one company does not touch the same key in another', async () => {
    const a = await context.world.tenant();
    const b = await context.world.tenant();
    const payload = { type: 'APPOINTMENT_REMINDER', recipientType: 'CUSTOMER', subject: 's', body: 'from a' };
    assert.equal((await post(a.dashboard, payload)).statusCode, 201);
    assert.equal((await post(b.dashboard, { ...payload, body: 'from b' })).statusCode, 201, 'the key is per company');
    assert.equal((await list(a))[0]!.body, 'from a');
  });

  test('Owner, Admin, User and machine tokens may; a Resource-role user gets 403; no credentials 401', async () => {
    const tenant = await context.world.tenant();
    const payload = { type: 'APPOINTMENT_BOOKED', recipientType: 'BUSINESS', subject: 's', body: 'b' };
    for (const role of ['Admin', 'User'] as const) {
      const member = await addMember(context, tenant, role);
      assert.equal((await get(member.headers)).statusCode, 200, role);
      assert.ok([200, 201].includes((await post(member.headers, payload)).statusCode), role);
    }
    const token = await machineToken(context.app, tenant, 'read write');
    assert.equal((await get({ authorization: `Bearer ${token}` })).statusCode, 200);
    assert.equal((await post({ authorization: `Bearer ${token}` }, payload)).statusCode, 200);

    const resource = await addMember(context, tenant, 'Resource');
    const saved = (await list(tenant))[0]!;
    for (const response of [
      await get(resource.headers),
      await get(resource.headers, '/defaults'),
      await post(resource.headers, payload),
      await remove(resource.headers, saved.id),
    ]) {
      assert.equal(response.statusCode, 403, response.body);
      assert.match(json(response).message, /Insufficient role/);
    }
    assert.equal((await get({})).statusCode, 401);
    assert.equal((await list(tenant)).length, 1, 'the Resource user deleted nothing');
  });
});

describe('resolution for sending (the service the notification worker calls)', () => {
  test('SMS: the SMS template, else the email template of that type and recipient, else the SMS default', async () => {
    const tenant = await context.world.tenant();
    const templates = createTemplateService({ repository: createTemplateRepository(context.database.db) });
    const resolve = (channel: 'EMAIL' | 'SMS', recipientType: 'CUSTOMER' | 'RESOURCE' = 'CUSTOMER') =>
      templates.resolve(tenant.companyId, 'APPOINTMENT_BOOKED', recipientType, channel);

    const smsDefault = defaultTemplate('APPOINTMENT_BOOKED', 'CUSTOMER', 'SMS');
    const emailDefault = defaultTemplate('APPOINTMENT_BOOKED', 'CUSTOMER', 'EMAIL');
    assert.deepEqual(await resolve('SMS'), { subject: smsDefault.subject, body: smsDefault.body, source: 'default' });
    assert.deepEqual(await resolve('EMAIL'), { subject: emailDefault.subject, body: emailDefault.body, source: 'default' });

    await post(tenant.dashboard, { type: 'APPOINTMENT_BOOKED', recipientType: 'CUSTOMER', subject: 'E', body: 'email body' });
    assert.deepEqual(await resolve('SMS'), { subject: 'E', body: 'email body', source: 'company-email' });
    assert.deepEqual(await resolve('EMAIL'), { subject: 'E', body: 'email body', source: 'company-email' });

    const sms = json<Template>(await post(tenant.dashboard, { type: 'APPOINTMENT_BOOKED', recipientType: 'CUSTOMER', channel: 'SMS', subject: 'not sent', body: 'sms body' }));
    assert.deepEqual(await resolve('SMS'), { subject: 'not sent', body: 'sms body', source: 'company-sms' });
    assert.deepEqual(await resolve('EMAIL'), { subject: 'E', body: 'email body', source: 'company-email' }, 'email never uses the SMS template');

    // Other recipients, types and companies keep their defaults.
    assert.equal((await resolve('SMS', 'RESOURCE')).source, 'default');
    assert.equal((await templates.resolve(tenant.companyId, 'APPOINTMENT_CANCELLED', 'CUSTOMER', 'SMS')).source, 'default');
    const other = await context.world.tenant();
    assert.equal((await templates.resolve(other.companyId, 'APPOINTMENT_BOOKED', 'CUSTOMER', 'SMS')).source, 'default');

    assert.equal((await remove(tenant.dashboard, sms.id)).statusCode, 204);
    assert.equal((await resolve('SMS')).source, 'company-email', 'deleting the SMS template falls back to the email one');
  });

  test('EMAIL for EXTERNAL_CALENDAR_EVENT uses the company template or the default', async () => {
    const tenant = await context.world.tenant();
    const templates = createTemplateService({ repository: createTemplateRepository(context.database.db) });
    assert.equal((await templates.resolve(tenant.companyId, 'EXTERNAL_CALENDAR_EVENT', 'RESOURCE', 'EMAIL')).source, 'default');
    await post(tenant.dashboard, { type: 'EXTERNAL_CALENDAR_EVENT', recipientType: 'RESOURCE', subject: '{{service.name}}', body: 'details' });
    assert.deepEqual(await templates.resolve(tenant.companyId, 'EXTERNAL_CALENDAR_EVENT', 'RESOURCE', 'EMAIL'), { subject: '{{service.name}}', body: 'details', source: 'company-email' });
  });
});
