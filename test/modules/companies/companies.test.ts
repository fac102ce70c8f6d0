import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { addMember, createTestContext, json, machineToken } from '../../helpers/app.js';
import type { TestContext } from '../../helpers/app.js';
import type { Tenant } from '../../helpers/world.js';

let context: TestContext;
before(async () => {
  context = await createTestContext();
});
after(() => context.close());

interface Company {
  id: string;
  name: string;
  publicClientId: string;
  allowedDomains: string[];
  disableEmailNotifications: boolean;
  disableSmsNotifications: boolean;
  disableEmailAndSmsNotifications: boolean;
  suspended: boolean;
  apiKeyPrefix?: string;
  apiKey?: string;
  createdAt: string;
  updatedAt: string;
}
interface CompanyPage {
  data: Company[];
  page: number;
  limit: number;
  total: number;
}
interface FieldError {
  type: string;
  location: string;
  path: string;
  msg: string;
  code?: string;
}

const userHeaders = (tenant: { userToken: string }) => ({ authorization: `Bearer ${tenant.userToken}` });

/** Another company for the tenant's user, who becomes its Owner. */
async function createCompany(tenant: { userToken: string }, name: string, body: Record<string, unknown> = {}): Promise<Company> {
  const response = await context.app.inject({ method: 'POST', url: '/v3/company', headers: userHeaders(tenant), payload: { name, ...body } });
  assert.equal(response.statusCode, 201, response.body);
  return json<Company>(response);
}

async function listCompanies(headers: Record<string, string>, query = ''): Promise<CompanyPage> {
  const response = await context.app.inject({ method: 'GET', url: `/v3/companies${query}`, headers });
  assert.equal(response.statusCode, 200, response.body);
  return json<CompanyPage>(response);
}

async function readCompany(headers: Record<string, string>): Promise<Company> {
  const response = await context.app.inject({ method: 'GET', url: '/v3/company', headers });
  assert.equal(response.statusCode, 200, response.body);
  return json<Company>(response);
}

async function writeCompany(method: 'PUT' | 'PATCH', tenant: Tenant, payload: Record<string, unknown>): Promise<Company> {
  const response = await context.app.inject({ method, url: '/v3/company', headers: tenant.dashboard, payload });
  assert.equal(response.statusCode, 200, response.body);
  return json<Company>(response);
}

function validationErrors(response: LightMyRequestResponse): FieldError[] {
  assert.equal(response.statusCode, 400, response.body);
  const body = json(response);
  assert.equal(body.success, false);
  assert.equal(body.message, 'Validation Error');
  return body.errors as FieldError[];
}

function assertForbidden(response: LightMyRequestResponse) {
  assert.equal(response.statusCode, 403, response.body);
  const body = json(response);
  assert.equal(body.success, false);
  assert.deepEqual(body.errors, []);
}

const names = (page: CompanyPage) => page.data.map((company) => company.name).sort();

describe('POST /v3/company', () => {
  test('creates the company, shows the API key once, and makes the caller its Owner', async () => {
    const user = await context.world.user('creator');
    const response = await context.app.inject({
      method: 'POST',
      url: '/v3/company',
      headers: userHeaders(user),
      payload: { name: 'Created Co' },
    });
    assert.equal(response.statusCode, 201, response.body);
    const created = json<Company>(response);
    assert.match(created.id, /^[0-9a-f-]{36}$/);
    assert.equal(created.name, 'Created Co');
    assert.equal(typeof created.apiKey, 'string');
    assert.ok(created.apiKey!.length >= 32);
    assert.ok(created.apiKey!.startsWith(created.apiKeyPrefix!));
    assert.equal(typeof created.publicClientId, 'string');
    assert.deepEqual(created.allowedDomains, []);
    assert.equal(created.disableEmailNotifications, false);
    assert.equal(created.disableSmsNotifications, false);
    assert.equal(created.disableEmailAndSmsNotifications, false);
    assert.equal('disableNotifications' in created, false);

    // The key works with the user's JWT; later reads never show it again.
    const headers = { ...userHeaders(user), 'x-api-key': created.apiKey! };
    const read = await readCompany(headers);
    assert.equal(read.id, created.id);
    assert.equal('apiKey' in read, false);
    assert.equal(read.apiKeyPrefix, created.apiKeyPrefix);
    const listed = await listCompanies(userHeaders(user));
    assert.equal(listed.data.some((company) => 'apiKey' in company), false);
    assert.doesNotMatch(JSON.stringify(listed), new RegExp(created.apiKey!));
    // Only a hash is stored.
    const row = await context.database.db.selectFrom('companies').selectAll().where('id', '=', created.id).executeTakeFirstOrThrow();
    assert.equal(Object.values(row).some((value) => String(value).includes(created.apiKey!)), false);

    const me = await context.app.inject({ method: 'GET', url: '/v3/auth/me', headers: userHeaders(user) });
    assert.equal(me.statusCode, 200, me.body);
    assert.deepEqual(json(me).companies, [{ companyId: created.id, companyName: 'Created Co', role: 'Owner' }]);
  });

  test('a missing or empty name is 400 at path "name"', async () => {
    const user = await context.world.user('nameless');
    for (const payload of [{}, { name: '' }, { name: 42 }]) {
      const response = await context.app.inject({ method: 'POST', url: '/v3/company', headers: userHeaders(user), payload });
      const entry = validationErrors(response).find((e) => e.path === 'name');
      assert.ok(entry, response.body);
      assert.equal(entry.location, 'body');
    }
    const me = await context.app.inject({ method: 'GET', url: '/v3/auth/me', headers: userHeaders(user) });
    assert.deepEqual(json(me).companies, []);
  });

  test('disableNotifications on creation sets both channel flags', async () => {
    const tenant = await context.world.tenant();
    const created = await createCompany(tenant, 'Quiet Co', { disableNotifications: true });
    assert.equal(created.disableEmailNotifications, true);
    assert.equal(created.disableSmsNotifications, true);
    assert.equal(created.disableEmailAndSmsNotifications, true);
    assert.equal('disableNotifications' in created, false);
  });

  test('a machine token cannot create a company', async () => {
    const tenant = await context.world.tenant();
    const token = await machineToken(context.app, tenant);
    const response = await context.app.inject({
      method: 'POST',
      url: '/v3/company',
      headers: { authorization: `Bearer ${token}` },
      payload: { name: 'Robot Co' },
    });
    assertForbidden(response);
  });
});

describe('GET /v3/companies', () => {
  test('with the dashboard JWT alone lists only the caller\'s companies', async () => {
    const mine = await context.world.tenant({ name: 'Mine First' });
    const second = await createCompany(mine, 'Mine Second');
    const other = await context.world.tenant({ name: 'Not Mine' });

    const page = await listCompanies(userHeaders(mine));
    assert.deepEqual(page.data.map((company) => company.id).sort(), [mine.companyId, second.id].sort());
    assert.equal(page.total, 2);
    assert.equal(page.page, 1);
    assert.equal(page.limit, 20);
    assert.equal(page.data.some((company) => company.id === other.companyId), false);

    // A member sees the company they were added to, and only that one.
    const member = await addMember(context, other, 'User');
    const memberPage = await listCompanies(userHeaders(member));
    assert.deepEqual(memberPage.data.map((company) => company.id), [other.companyId]);
  });

  test('search is a case-insensitive prefix of the name', async () => {
    const tenant = await context.world.tenant({ name: 'Acme Dental' });
    await createCompany(tenant, 'acme Vet');
    await createCompany(tenant, 'The Acme Shop');
    const headers = userHeaders(tenant);

    const acme = await listCompanies(headers, '?search=ACME');
    assert.deepEqual(names(acme), ['Acme Dental', 'acme Vet']);
    assert.equal(acme.total, 2);
    assert.deepEqual(names(await listCompanies(headers, '?search=acme%20d')), ['Acme Dental']);
    assert.deepEqual(names(await listCompanies(headers, '?search=the')), ['The Acme Shop']);
    assert.deepEqual(names(await listCompanies(headers, '?search=Shop')), []);
    assert.equal((await listCompanies(headers, '?search=Dental')).total, 0);
  });

  test('% and _ in search are literal characters', async () => {
    const tenant = await context.world.tenant({ name: '50% Off' });
    for (const name of ['50 Off Club', '5_0 Deals', '500 Club', 'Back\\slash']) await createCompany(tenant, name);
    const headers = userHeaders(tenant);

    assert.deepEqual(names(await listCompanies(headers, `?search=${encodeURIComponent('50%')}`)), ['50% Off']);
    assert.deepEqual(names(await listCompanies(headers, `?search=${encodeURIComponent('5_')}`)), ['5_0 Deals']);
    assert.deepEqual(names(await listCompanies(headers, `?search=${encodeURIComponent('%')}`)), []);
    assert.deepEqual(names(await listCompanies(headers, `?search=${encodeURIComponent('_')}`)), []);
    assert.deepEqual(names(await listCompanies(headers, `?search=${encodeURIComponent('back\\')}`)), ['Back\\slash']);
  });

  test('limit, page and total page through the list without overlap', async () => {
    const tenant = await context.world.tenant({ name: 'Paged A' });
    await createCompany(tenant, 'Paged B');
    await createCompany(tenant, 'Paged C');
    const headers = userHeaders(tenant);

    const first = await listCompanies(headers, '?limit=2&page=1');
    assert.deepEqual({ page: first.page, limit: first.limit, total: first.total, count: first.data.length }, { page: 1, limit: 2, total: 3, count: 2 });
    const second = await listCompanies(headers, '?limit=2&page=2');
    assert.deepEqual({ page: second.page, limit: second.limit, total: second.total, count: second.data.length }, { page: 2, limit: 2, total: 3, count: 1 });
    const beyond = await listCompanies(headers, '?limit=2&page=3');
    assert.deepEqual({ total: beyond.total, count: beyond.data.length }, { total: 3, count: 0 });
    assert.deepEqual([...first.data, ...second.data].map((company) => company.name).sort(), ['Paged A', 'Paged B', 'Paged C']);

    const max = await listCompanies(headers, '?limit=100');
    assert.equal(max.limit, 100);
    assert.equal(max.data.length, 3);
  });

  test('limit 101 is 400 at path "limit", never shrunk', async () => {
    const tenant = await context.world.tenant();
    const response = await context.app.inject({ method: 'GET', url: '/v3/companies?limit=101', headers: userHeaders(tenant) });
    const errors = validationErrors(response);
    assert.equal(errors.length, 1, response.body);
    assert.equal(errors[0]!.path, 'limit');
    assert.equal(errors[0]!.location, 'query');
  });

  test('a machine token sees only its own company', async () => {
    const tenant = await context.world.tenant({ name: 'Machine Home' });
    await createCompany(tenant, 'Machine Sibling');
    const token = await machineToken(context.app, tenant, 'read');
    const headers = { authorization: `Bearer ${token}` };

    const page = await listCompanies(headers);
    assert.deepEqual(page.data.map((company) => company.id), [tenant.companyId]);
    assert.equal(page.total, 1);
    assert.equal((await listCompanies(headers, '?search=machine%20s')).total, 0);
    assert.deepEqual(names(await listCompanies(headers, '?search=MACHINE')), ['Machine Home']);
    // Another company's API key does not change the token's company.
    const other = await context.world.tenant();
    const withKey = await listCompanies({ ...headers, 'x-api-key': other.apiKey });
    assert.deepEqual(withKey.data.map((company) => company.id), [tenant.companyId]);
  });
});

describe('GET /v3/company', () => {
  test('returns the company fields, without the API key or disableNotifications', async () => {
    const tenant = await context.world.tenant({ name: 'Read Co' });
    const company = await readCompany(tenant.dashboard);
    assert.equal(company.id, tenant.companyId);
    assert.equal(company.name, 'Read Co');
    assert.equal(company.publicClientId, tenant.publicClientId);
    assert.deepEqual(company.allowedDomains, []);
    assert.equal(company.disableEmailNotifications, false);
    assert.equal(company.disableSmsNotifications, false);
    assert.equal(company.disableEmailAndSmsNotifications, false);
    assert.equal(company.suspended, false);
    assert.ok(!Number.isNaN(Date.parse(company.createdAt)));
    assert.equal('apiKey' in company, false);
    assert.equal('disableNotifications' in company, false);
    assert.ok(tenant.apiKey.startsWith(company.apiKeyPrefix!));
  });

  test('a Resource-role user reads the company without credential material', async () => {
    const tenant = await context.world.tenant();
    const resource = await addMember(context, tenant, 'Resource');
    const company = await readCompany(resource.headers);
    assert.equal(company.id, tenant.companyId);
    assert.equal('apiKeyPrefix' in company, false);
    assert.equal('apiKey' in company, false);
  });
});

describe('PUT and PATCH /v3/company', () => {
  test('change only the fields given', async () => {
    const tenant = await context.world.tenant({ name: 'Before', allowedDomains: ['keep.example.com'], disableEmailNotifications: true });

    const renamed = await writeCompany('PUT', tenant, { name: 'After' });
    assert.equal(renamed.name, 'After');
    assert.deepEqual(renamed.allowedDomains, ['keep.example.com']);
    assert.equal(renamed.disableEmailNotifications, true);
    assert.equal(renamed.disableSmsNotifications, false);

    const patched = await writeCompany('PATCH', tenant, { disableSmsNotifications: true });
    assert.equal(patched.name, 'After');
    assert.deepEqual(patched.allowedDomains, ['keep.example.com']);
    assert.equal(patched.disableEmailNotifications, true);
    assert.equal(patched.disableSmsNotifications, true);

    const domains = await writeCompany('PATCH', tenant, { allowedDomains: ['new.example.com'] });
    assert.equal(domains.name, 'After');
    assert.deepEqual(domains.allowedDomains, ['new.example.com']);
    assert.equal(domains.disableEmailNotifications, true);

    const unchanged = await writeCompany('PUT', tenant, {});
    assert.deepEqual({ ...unchanged, updatedAt: undefined }, { ...domains, updatedAt: undefined });

    const read = await readCompany(tenant.dashboard);
    assert.deepEqual({ ...read, updatedAt: undefined }, { ...domains, updatedAt: undefined });
    assert.equal(read.publicClientId, tenant.publicClientId);
  });

  test('bad values are 400 naming the field and change nothing', async () => {
    const tenant = await context.world.tenant({ name: 'Strict Co' });
    for (const [payload, path] of [
      [{ name: '' }, 'name'],
      [{ disableEmailNotifications: 'true' }, 'disableEmailNotifications'],
      [{ disableNotifications: 1 }, 'disableNotifications'],
      [{ allowedDomains: 'example.com' }, 'allowedDomains'],
      [{ apiKey: 'mine' }, 'apiKey'],
      [{ publicClientId: 'pub_x' }, 'publicClientId'],
    ] as const) {
      const response = await context.app.inject({ method: 'PUT', url: '/v3/company', headers: tenant.dashboard, payload });
      const errors = validationErrors(response);
      assert.ok(errors.some((e) => e.path === path && e.location === 'body'), response.body);
    }
    const read = await readCompany(tenant.dashboard);
    assert.equal(read.name, 'Strict Co');
    assert.equal(read.publicClientId, tenant.publicClientId);
  });

  test('disableNotifications alone sets both channel flags and is never returned', async () => {
    const tenant = await context.world.tenant();
    const on = await writeCompany('PUT', tenant, { disableNotifications: true });
    assert.deepEqual(
      [on.disableEmailNotifications, on.disableSmsNotifications, on.disableEmailAndSmsNotifications],
      [true, true, true],
    );
    assert.equal('disableNotifications' in on, false);
    const read = await readCompany(tenant.dashboard);
    assert.equal('disableNotifications' in read, false);
    assert.equal(read.disableEmailAndSmsNotifications, true);

    const off = await writeCompany('PATCH', tenant, { disableNotifications: false });
    assert.deepEqual(
      [off.disableEmailNotifications, off.disableSmsNotifications, off.disableEmailAndSmsNotifications],
      [false, false, false],
    );
    assert.equal('disableNotifications' in off, false);
  });

  test('with a channel flag in the same body, disableNotifications is ignored', async () => {
    const tenant = await context.world.tenant();
    const first = await writeCompany('PUT', tenant, { disableNotifications: true, disableSmsNotifications: true });
    assert.equal(first.disableSmsNotifications, true);
    assert.equal(first.disableEmailNotifications, false, 'the email flag is left as it was');

    const second = await writeCompany('PUT', tenant, { disableNotifications: true, disableEmailNotifications: false });
    assert.equal(second.disableEmailNotifications, false);
    assert.equal(second.disableSmsNotifications, true, 'the sms flag is left as it was');

    const third = await writeCompany('PATCH', tenant, { disableNotifications: false, disableEmailNotifications: true });
    assert.equal(third.disableEmailNotifications, true);
    assert.equal(third.disableSmsNotifications, true, 'disableNotifications false did not clear the sms flag');

    const created = await createCompany(tenant, 'Mixed Co', { disableNotifications: true, disableEmailNotifications: false });
    assert.equal(created.disableEmailNotifications, false);
    assert.equal(created.disableSmsNotifications, false);
  });

  test('disableEmailAndSmsNotifications is true only when both flags are true', async () => {
    const tenant = await context.world.tenant();
    for (const [email, sms] of [
      [true, false],
      [false, true],
      [true, true],
      [false, false],
    ] as const) {
      const company = await writeCompany('PUT', tenant, { disableEmailNotifications: email, disableSmsNotifications: sms });
      assert.equal(company.disableEmailAndSmsNotifications, email && sms, `email ${email}, sms ${sms}`);
      assert.equal((await readCompany(tenant.dashboard)).disableEmailAndSmsNotifications, email && sms);
    }
  });

  test('a User-role member cannot change the company; an Admin can', async () => {
    const tenant = await context.world.tenant({ name: 'Role Co' });
    const user = await addMember(context, tenant, 'User');
    assertForbidden(await context.app.inject({ method: 'PUT', url: '/v3/company', headers: user.headers, payload: { name: 'By User' } }));
    const admin = await addMember(context, tenant, 'Admin');
    const response = await context.app.inject({ method: 'PATCH', url: '/v3/company', headers: admin.headers, payload: { name: 'By Admin' } });
    assert.equal(response.statusCode, 200, response.body);
    assert.equal(json(response).name, 'By Admin');
  });
});

describe('allowedDomains', () => {
  test('are normalised to lower-case hosts (with port), origins reduced to their host, duplicates dropped', async () => {
    const tenant = await context.world.tenant();
    const company = await writeCompany('PUT', tenant, {
      allowedDomains: [
        'https://Booking.Example.com',
        'booking.example.com',
        'localhost:5173',
        '  Shop.Example.org  ',
        'http://app.example.net:8080',
        'https://booking.example.com/',
      ],
    });
    assert.deepEqual(company.allowedDomains, ['booking.example.com', 'localhost:5173', 'shop.example.org', 'app.example.net:8080']);
    assert.deepEqual((await readCompany(tenant.dashboard)).allowedDomains, company.allowedDomains);
    assert.deepEqual((await writeCompany('PATCH', tenant, { allowedDomains: [] })).allowedDomains, []);
  });

  test('a wildcard is 400 with code COMPANY-102 at the offending entry', async () => {
    const tenant = await context.world.tenant({ name: 'Wild Co', allowedDomains: ['kept.example.com'] });
    for (const wildcard of ['*', '*.example.com', 'https://*.example.com']) {
      const response = await context.app.inject({
        method: 'PUT',
        url: '/v3/company',
        headers: tenant.dashboard,
        payload: { allowedDomains: ['fine.example.com', wildcard] },
      });
      const errors = validationErrors(response);
      assert.equal(json(response).code, 'COMPANY-102');
      assert.equal(errors.length, 1, response.body);
      assert.deepEqual({ path: errors[0]!.path, location: errors[0]!.location, code: errors[0]!.code }, {
        path: 'allowedDomains.1',
        location: 'body',
        code: 'COMPANY-102',
      });
    }
    assert.deepEqual((await readCompany(tenant.dashboard)).allowedDomains, ['kept.example.com']);

    // Creation refuses it the same way and creates nothing.
    const user = await context.world.user('wild');
    const response = await context.app.inject({
      method: 'POST',
      url: '/v3/company',
      headers: userHeaders(user),
      payload: { name: 'Wild Two', allowedDomains: ['*'] },
    });
    assert.equal(validationErrors(response)[0]!.code, 'COMPANY-102');
    const me = await context.app.inject({ method: 'GET', url: '/v3/auth/me', headers: userHeaders(user) });
    assert.deepEqual(json(me).companies, []);
  });

  test('entries that are not a host or a bare http(s) origin are 400', async () => {
    const tenant = await context.world.tenant();
    for (const bad of [
      'https://example.com/booking',
      'https://example.com?x=1',
      'https://user:pw@example.com',
      'ftp://example.com',
      'not a domain',
      'example..com',
      '',
      'exa_mple.com',
    ]) {
      const response = await context.app.inject({ method: 'PUT', url: '/v3/company', headers: tenant.dashboard, payload: { allowedDomains: [bad] } });
      const errors = validationErrors(response);
      assert.equal(errors[0]!.path, 'allowedDomains.0', `${bad}: ${response.body}`);
    }
    assert.deepEqual((await readCompany(tenant.dashboard)).allowedDomains, []);
  });
});

describe('bookingPage settings', () => {
  const settings = { brandColor: '#0b6e4f', logoUrl: 'https://cdn.example.com/logo.png', currency: 'EUR', fields: [{ name: 'field2', label: 'Reason for the visit', required: true }] };

  test('start empty, are replaced whole by PUT, and are what GET /v3/public/company shows', async () => {
    const tenant = await context.world.tenant({ allowedDomains: ['shop.example.com'] });
    assert.deepEqual((await readCompany(tenant.dashboard) as Company & { bookingPage: unknown }).bookingPage, { brandColor: null, logoUrl: null, currency: null, fields: [] });

    const written = (await writeCompany('PUT', tenant, { bookingPage: settings })) as Company & { bookingPage: unknown };
    assert.deepEqual(written.bookingPage, settings);
    const renamed = (await writeCompany('PATCH', tenant, { name: 'Renamed' })) as Company & { bookingPage: unknown };
    assert.deepEqual(renamed.bookingPage, settings, 'a write without bookingPage keeps it');

    const pub = await context.app.inject({ method: 'GET', url: '/v3/public/company', headers: { 'x-client-id': tenant.publicClientId, origin: 'https://shop.example.com' } });
    assert.equal(pub.statusCode, 200, pub.body);
    assert.deepEqual(json(pub), { id: tenant.companyId, name: 'Renamed', bookingPage: settings });

    const cleared = (await writeCompany('PUT', tenant, { bookingPage: { currency: 'USD' } })) as Company & { bookingPage: unknown };
    assert.deepEqual(cleared.bookingPage, { brandColor: null, logoUrl: null, currency: 'USD', fields: [] });
  });

  test('bad settings are 400 at their path and change nothing', async () => {
    const tenant = await context.world.tenant();
    await writeCompany('PUT', tenant, { bookingPage: settings });
    for (const [bookingPage, path] of [
      [{ brandColor: 'red' }, 'bookingPage.brandColor'],
      [{ logoUrl: 'http://cdn.example.com/logo.png' }, 'bookingPage.logoUrl'],
      [{ logoUrl: 'not a url' }, 'bookingPage.logoUrl'],
      [{ currency: 'eur' }, 'bookingPage.currency'],
      [{ currency: 'XYZ' }, 'bookingPage.currency'],
      [{ fields: [{ name: 'field11', label: 'x', required: false }] }, 'bookingPage.fields.0.name'],
      [{ fields: [{ name: 'field1', label: '', required: false }] }, 'bookingPage.fields.0.label'],
      [{ fields: [{ name: 'field1', label: 'a', required: false }, { name: 'field1', label: 'b', required: true }] }, 'bookingPage.fields.1.name'],
      [{ slug: 'mine' }, 'bookingPage.slug'],
    ] as const) {
      const response = await context.app.inject({ method: 'PUT', url: '/v3/company', headers: tenant.dashboard, payload: { bookingPage } });
      const errors = validationErrors(response);
      assert.ok(errors.some((e) => e.path === path && e.location === 'body'), `${path}: ${response.body}`);
    }
    assert.deepEqual((await readCompany(tenant.dashboard) as Company & { bookingPage: unknown }).bookingPage, settings);
  });
});

describe('tenant isolation', () => {
  test('my JWT with another company\'s API key is 403 and changes nothing', async () => {
    const me = await context.world.tenant();
    const other = await context.world.tenant({ name: 'Other Co' });
    const headers = { authorization: `Bearer ${me.userToken}`, 'x-api-key': other.apiKey };
    assertForbidden(await context.app.inject({ method: 'GET', url: '/v3/company', headers }));
    assertForbidden(await context.app.inject({ method: 'PUT', url: '/v3/company', headers, payload: { name: 'Hijacked' } }));
    assertForbidden(await context.app.inject({ method: 'POST', url: '/v3/company/apiKey', headers }));
    assert.equal((await readCompany(other.dashboard)).name, 'Other Co');
  });
});

describe('credential rotation', () => {
  test('POST /v3/company/apiKey by the Owner issues a new key; the old one stops working', async () => {
    const tenant = await context.world.tenant();
    const response = await context.app.inject({ method: 'POST', url: '/v3/company/apiKey', headers: tenant.dashboard });
    assert.equal(response.statusCode, 200, response.body);
    const rotated = json<Company>(response);
    assert.equal(rotated.id, tenant.companyId);
    assert.equal(typeof rotated.apiKey, 'string');
    assert.notEqual(rotated.apiKey, tenant.apiKey);
    assert.ok(rotated.apiKey!.startsWith(rotated.apiKeyPrefix!));

    const old = await context.app.inject({ method: 'GET', url: '/v3/company', headers: tenant.dashboard });
    assert.equal(old.statusCode, 401, old.body);
    const fresh = await readCompany({ ...userHeaders(tenant), 'x-api-key': rotated.apiKey! });
    assert.equal('apiKey' in fresh, false);
    assert.equal(fresh.apiKeyPrefix, rotated.apiKeyPrefix);
  });

  test('POST /v3/company/apiKey by an Admin works; by a User or a machine token is 403', async () => {
    const tenant = await context.world.tenant();
    const user = await addMember(context, tenant, 'User');
    assertForbidden(await context.app.inject({ method: 'POST', url: '/v3/company/apiKey', headers: user.headers }));
    const token = await machineToken(context.app, tenant);
    assertForbidden(await context.app.inject({ method: 'POST', url: '/v3/company/apiKey', headers: { authorization: `Bearer ${token}` } }));
    // Neither refusal rotated the key.
    assert.equal((await readCompany(tenant.dashboard)).id, tenant.companyId);

    const admin = await addMember(context, tenant, 'Admin');
    const response = await context.app.inject({ method: 'POST', url: '/v3/company/apiKey', headers: admin.headers });
    assert.equal(response.statusCode, 200, response.body);
    assert.notEqual(json(response).apiKey, tenant.apiKey);
  });

  test('POST /v3/company/publicClientId by the Owner or an Admin issues a new id; by a User or a machine token is 403', async () => {
    const tenant = await context.world.tenant();
    const response = await context.app.inject({ method: 'POST', url: '/v3/company/publicClientId', headers: tenant.dashboard });
    assert.equal(response.statusCode, 200, response.body);
    const rotated = json<Company>(response);
    assert.notEqual(rotated.publicClientId, tenant.publicClientId);
    assert.equal('apiKey' in rotated, false);
    assert.equal((await readCompany(tenant.dashboard)).publicClientId, rotated.publicClientId);

    const user = await addMember(context, tenant, 'User');
    assertForbidden(await context.app.inject({ method: 'POST', url: '/v3/company/publicClientId', headers: user.headers }));
    const token = await machineToken(context.app, tenant);
    assertForbidden(
      await context.app.inject({ method: 'POST', url: '/v3/company/publicClientId', headers: { authorization: `Bearer ${token}` } }),
    );
    assert.equal((await readCompany(tenant.dashboard)).publicClientId, rotated.publicClientId);

    const admin = await addMember(context, tenant, 'Admin');
    const byAdmin = await context.app.inject({ method: 'POST', url: '/v3/company/publicClientId', headers: admin.headers });
    assert.equal(byAdmin.statusCode, 200, byAdmin.body);
    assert.notEqual(json(byAdmin).publicClientId, rotated.publicClientId);
  });
});

test('GET /v3/companies?include=locations nests each company\'s live locations; without include there are none', async () => {
  const tenant = await context.world.tenant();
  const harbour = await tenant.location({ name: 'Harbour', timezone: 'Australia/Adelaide' });
  const withInclude = json(await context.app.inject({ method: 'GET', url: '/v3/companies?include=locations', headers: userHeaders(tenant) }));
  assert.deepEqual(withInclude.data[0].locations, [{ id: harbour, name: 'Harbour', timezoneName: 'Australia/Adelaide' }]);
  const plain = json(await context.app.inject({ method: 'GET', url: '/v3/companies', headers: userHeaders(tenant) }));
  assert.equal('locations' in plain.data[0], false);
  const bad = await context.app.inject({ method: 'GET', url: '/v3/companies?include=secrets', headers: userHeaders(tenant) });
  assert.equal(bad.statusCode, 400);
  assert.equal(json(bad).errors[0].path, 'include');
});
