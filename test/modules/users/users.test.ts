// Dashboard users: GET /v3/users, POST /v3/users/setUsers (create or update by email) and
// POST /v3/users/adjustUsers (change role and access by user id). Dashboard roles 2 of the
// specification (the specification, Authentication): Owner may assign any role including Owner;
// Admin may not assign Owner, may not change another Admin's role, and may promote User to Admin;
// at least one Owner must remain. "Dashboard user fields": linkedResourceId is required with role
// Resource and must belong to the company. All items of one request apply together or not at all.
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { addMember, createTestContext, json, machineToken, uniqueEmail } from '../../helpers/app.js';
import type { TestContext } from '../../helpers/app.js';
import type { Tenant } from '../../helpers/world.js';

let context: TestContext;
before(async () => {
  context = await createTestContext();
});
after(() => context.close());

type Role = 'Owner' | 'Admin' | 'User' | 'Resource';
interface Member {
  id: string;
  email: string;
  name: string;
  role: Role;
  locationAccessMode: 'COMPANY' | 'LOCATIONS';
  allowedLocationIds: string[];
  linkedResourceId: string | null;
  createdAt: string;
  updatedAt: string;
  temporaryPassword?: string;
}
interface FieldError {
  type: string;
  location: string;
  path: string;
  msg: string;
}

type Headers = Record<string, string>;

function setUsers(headers: Headers, users: Array<Record<string, unknown>>) {
  return context.app.inject({ method: 'POST', url: '/v3/users/setUsers', headers, payload: { users } });
}
function adjustUsers(headers: Headers, users: Array<Record<string, unknown>>) {
  return context.app.inject({ method: 'POST', url: '/v3/users/adjustUsers', headers, payload: { users } });
}

function changed(response: LightMyRequestResponse): Member[] {
  assert.equal(response.statusCode, 200, response.body);
  return json<{ data: Member[] }>(response).data;
}

async function members(tenant: Tenant): Promise<Member[]> {
  const response = await context.app.inject({ method: 'GET', url: '/v3/users?limit=100', headers: tenant.dashboard });
  assert.equal(response.statusCode, 200, response.body);
  return json<{ data: Member[] }>(response).data;
}
/** Every member as GET /v3/users shows it, as a comparable snapshot. */
async function snapshot(tenant: Tenant, headers: Headers = tenant.dashboard) {
  const response = await context.app.inject({ method: 'GET', url: '/v3/users?limit=100', headers });
  assert.equal(response.statusCode, 200, response.body);
  return json<{ data: Member[] }>(response).data;
}
async function roleOf(tenant: Tenant, userId: string): Promise<Role | undefined> {
  return (await members(tenant)).find((member) => member.id === userId)?.role;
}

function assertForbidden(response: LightMyRequestResponse, message?: RegExp) {
  assert.equal(response.statusCode, 403, response.body);
  const body = json(response);
  assert.equal(body.success, false);
  assert.deepEqual(body.errors, []);
  if (message) assert.match(body.message, message);
}

/** 400 with a field error at `path` (location body). */
function assertFieldError(response: LightMyRequestResponse, path: string): FieldError {
  assert.equal(response.statusCode, 400, response.body);
  const body = json(response);
  assert.equal(body.success, false);
  const entry = (body.errors as FieldError[]).find((e) => e.path === path);
  assert.ok(entry, `an error at ${path}: ${response.body}`);
  assert.equal(entry.location, 'body');
  return entry;
}

function login(email: string, password: string) {
  return context.app.inject({ method: 'POST', url: '/v3/auth/login', payload: { email, password } });
}

describe('GET /v3/users', () => {
  test('lists the members of the company with role and access, and nobody else', async () => {
    const tenant = await context.world.tenant();
    const other = await context.world.tenant();
    const admin = await addMember(context, tenant, 'Admin');
    const list = await members(tenant);
    assert.deepEqual(list.map((m) => m.id).sort(), [tenant.userId, admin.userId].sort());
    const owner = list.find((m) => m.id === tenant.userId)!;
    assert.deepEqual(
      { email: owner.email, role: owner.role, locationAccessMode: owner.locationAccessMode, allowedLocationIds: owner.allowedLocationIds, linkedResourceId: owner.linkedResourceId },
      { email: tenant.email, role: 'Owner', locationAccessMode: 'COMPANY', allowedLocationIds: [], linkedResourceId: null },
    );
    assert.equal(list.some((m) => m.id === other.userId), false);
    assert.equal(JSON.stringify(list).includes('password'), false, 'no password material is listed');
  });
});

describe('Dashboard roles 2: who may assign which role', () => {
  test('an Owner assigns any role, including Owner', async () => {
    const tenant = await context.world.tenant();
    const member = await addMember(context, tenant, 'User');
    const resource = await tenant.resource();
    for (const [role, extra] of [
      ['Admin', {}],
      ['Resource', { linkedResourceId: resource }],
      ['Owner', {}],
      ['User', {}],
    ] as const) {
      const [after] = changed(await adjustUsers(tenant.dashboard, [{ id: member.userId, role, ...extra }]));
      assert.equal(after!.role, role);
      assert.equal(after!.linkedResourceId, role === 'Resource' ? resource : null);
      assert.equal(await roleOf(tenant, member.userId), role);
    }
    // And invites a new person as Owner by email (issue 12: an invitation, not an account).
    const invited = await setUsers(tenant.dashboard, [{ email: uniqueEmail('co-owner'), role: 'Owner' }]);
    assert.equal(invited.statusCode, 200, invited.body);
    assert.equal(json(invited).invitations[0].role, 'Owner');
  });

  test('an Admin cannot assign Owner (403), neither to a member nor to a new account', async () => {
    const tenant = await context.world.tenant();
    const admin = await addMember(context, tenant, 'Admin');
    const user = await addMember(context, tenant, 'User');
    const before = await snapshot(tenant);
    assertForbidden(await adjustUsers(admin.headers, [{ id: user.userId, role: 'Owner' }]), /Owner/);
    assertForbidden(await adjustUsers(admin.headers, [{ id: admin.userId, role: 'Owner' }]), /Owner/);
    const email = uniqueEmail('would-be-owner');
    assertForbidden(await setUsers(admin.headers, [{ email, role: 'Owner' }]), /Owner/);
    assert.deepEqual(await snapshot(tenant), before);
    assert.equal((await login(email, 'anything at all')).statusCode, 401, 'no account was created');
  });

  test("an Admin cannot change another Admin's role (403)", async () => {
    const tenant = await context.world.tenant();
    const admin = await addMember(context, tenant, 'Admin');
    const otherAdmin = await addMember(context, tenant, 'Admin');
    for (const role of ['User', 'Resource'] as const) {
      assertForbidden(await adjustUsers(admin.headers, [{ id: otherAdmin.userId, role }]), /Admin/);
    }
    assertForbidden(await setUsers(admin.headers, [{ email: otherAdmin.email, role: 'User' }]), /Admin/);
    assert.equal(await roleOf(tenant, otherAdmin.userId), 'Admin');
  });

  test('an Admin promotes a User to Admin (200)', async () => {
    const tenant = await context.world.tenant();
    const admin = await addMember(context, tenant, 'Admin');
    const user = await addMember(context, tenant, 'User');
    const [after] = changed(await adjustUsers(admin.headers, [{ id: user.userId, role: 'Admin' }]));
    assert.equal(after!.role, 'Admin');
    assert.equal(await roleOf(tenant, user.userId), 'Admin');
    // The new Admin can now manage users.
    assert.equal((await context.app.inject({ method: 'GET', url: '/v3/users', headers: user.headers })).statusCode, 200);
  });

  test('an Admin cannot change an Owner (403), not even their access', async () => {
    const tenant = await context.world.tenant();
    const admin = await addMember(context, tenant, 'Admin');
    const location = await tenant.location({ timezone: 'Europe/Berlin' });
    const before = await snapshot(tenant);
    assertForbidden(await adjustUsers(admin.headers, [{ id: tenant.userId, role: 'Admin' }]), /Owner/);
    assertForbidden(await adjustUsers(admin.headers, [{ id: tenant.userId, locationAccessMode: 'LOCATIONS', allowedLocationIds: [location] }]), /Owner/);
    assertForbidden(await setUsers(admin.headers, [{ email: tenant.email, role: 'User' }]), /Owner/);
    assert.deepEqual(await snapshot(tenant), before);
  });

  test('User- and Resource-role members manage nobody (403 Insufficient role)', async () => {
    const tenant = await context.world.tenant();
    const user = await addMember(context, tenant, 'User');
    const resourceMember = await addMember(context, tenant, 'Resource');
    for (const headers of [user.headers, resourceMember.headers]) {
      assertForbidden(await context.app.inject({ method: 'GET', url: '/v3/users', headers }), /^Insufficient role/);
      assertForbidden(await setUsers(headers, [{ email: uniqueEmail('x'), role: 'User' }]), /^Insufficient role/);
      assertForbidden(await adjustUsers(headers, [{ id: user.userId, role: 'Admin' }]), /^Insufficient role/);
    }
    assert.equal(await roleOf(tenant, user.userId), 'User');
  });

  // Issue 12, item 1 (docs/api.md): user administration needs a dashboard user. Before, an Admin
  // minted client credentials and, with their machine token, made themselves Owner and demoted
  // the real Owner. This test replaces "a machine token ignores roles: it may assign Owner".
  test('machine tokens get 403 on setUsers, adjustUsers and member removal, whatever their scope', async () => {
    const tenant = await context.world.tenant();
    const admin = await addMember(context, tenant, 'Admin');
    const created = await context.app.inject({ method: 'POST', url: '/v3/clientId', headers: admin.headers, payload: {} });
    assert.equal(created.statusCode, 201, created.body);
    const { clientId, clientSecret } = json(created);
    const token = await context.app.inject({
      method: 'POST',
      url: '/v3/oauth/token',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret }).toString(),
    });
    const headers = { authorization: `Bearer ${json(token).access_token}` };
    const before = await snapshot(tenant);
    const message = /dashboard user/;
    assertForbidden(await adjustUsers(headers, [{ id: admin.userId, role: 'Owner' }, { id: tenant.userId, role: 'User' }]), message);
    assertForbidden(await setUsers(headers, [{ email: uniqueEmail('planted'), role: 'Owner' }]), message);
    assertForbidden(await context.app.inject({ method: 'DELETE', url: `/v3/users/${tenant.userId}`, headers }), message);
    assertForbidden(await adjustUsers({ authorization: `Bearer ${await machineToken(context.app, tenant)}` }, [{ id: admin.userId, role: 'Owner' }]), message);
    assert.deepEqual(await snapshot(tenant), before);
  });
});

describe('At least one Owner must remain', () => {
  test('demoting the last Owner is 400 and changes nothing', async () => {
    const tenant = await context.world.tenant();
    await addMember(context, tenant, 'Admin');
    const before = await snapshot(tenant);
    for (const response of [
      await adjustUsers(tenant.dashboard, [{ id: tenant.userId, role: 'Admin' }]),
      await setUsers(tenant.dashboard, [{ email: tenant.email, role: 'User' }]),
    ]) {
      assert.equal(response.statusCode, 400, response.body);
      assert.match(json(response).message, /Owner/);
    }
    assert.deepEqual(await snapshot(tenant), before);
    assert.equal(await roleOf(tenant, tenant.userId), 'Owner');
  });

  test('with two Owners, one may be demoted; then the other is the last', async () => {
    const tenant = await context.world.tenant();
    const second = await addMember(context, tenant, 'Owner');
    const [after] = changed(await adjustUsers(second.headers, [{ id: tenant.userId, role: 'Admin' }]));
    assert.equal(after!.role, 'Admin');
    assert.equal(await roleOf(tenant, tenant.userId), 'Admin');
    assert.equal((await adjustUsers(second.headers, [{ id: second.userId, role: 'Admin' }])).statusCode, 400);
    assert.equal(await roleOf(tenant, second.userId), 'Owner');
  });

  test('two concurrent adjustUsers demoting each of two Owners: exactly one succeeds, one Owner remains', async () => {
    const tenant = await context.world.tenant();
    const second = await addMember(context, tenant, 'Owner');
    // Each Owner demotes the other, at the same time.
    const responses = await Promise.all([
      adjustUsers(tenant.dashboard, [{ id: second.userId, role: 'Admin' }]),
      adjustUsers(second.headers, [{ id: tenant.userId, role: 'Admin' }]),
    ]);
    // The loser is refused either as the last Owner (400) or, having been demoted first, as an
    // Admin who may not change an Owner (403): the role is re-read under the lock.
    const statuses = responses.map((r) => r.statusCode).sort();
    assert.equal(statuses[0], 200, responses.map((r) => r.body).join('\n'));
    assert.ok([400, 403].includes(statuses[1]!), responses.map((r) => r.body).join('\n'));
    // Whoever was demoted is an Admin now, so the tenant's Owner headers still read the list.
    const list = await snapshot(tenant);
    const owners = list.filter((m) => m.role === 'Owner').map((m) => m.id);
    assert.equal(owners.length, 1, JSON.stringify(list));
    // The Owner who remains is the one whose own demotion did not happen.
    const winner = responses[0]!.statusCode === 200 ? tenant.userId : second.userId;
    assert.deepEqual(owners, [winner]);
  });

  test('the same Owner firing both demotions at once: exactly one succeeds', async () => {
    const tenant = await context.world.tenant();
    const second = await addMember(context, tenant, 'Owner');
    const responses = await Promise.all([
      adjustUsers(tenant.dashboard, [{ id: second.userId, role: 'User' }]),
      adjustUsers(tenant.dashboard, [{ id: tenant.userId, role: 'User' }]),
    ]);
    const statuses = responses.map((r) => r.statusCode).sort();
    assert.equal(statuses[0], 200, responses.map((r) => r.body).join('\n'));
    assert.ok([400, 403].includes(statuses[1]!), responses.map((r) => r.body).join('\n'));
    const list = await snapshot(tenant, responses[1]!.statusCode === 200 ? second.headers : tenant.dashboard);
    assert.equal(list.filter((m) => m.role === 'Owner').length, 1, JSON.stringify(list));
  });
});

describe('POST /v3/users/setUsers', () => {
  // Issue 12, item 7: nobody creates an account or chooses a password for someone else's address.
  // These replace "creates a new account with a temporaryPassword" and "a new account with a
  // password": a new address gets an invitation (test/modules/users/invitations.test.ts accepts it).
  test('a new address gets an invitation, not an account; a password is refused', async () => {
    const tenant = await context.world.tenant();
    const email = uniqueEmail('new-staff');
    const response = await setUsers(tenant.dashboard, [{ email, role: 'Admin' }]);
    assert.equal(response.statusCode, 200, response.body);
    const body = json(response);
    assert.deepEqual(body.data, []);
    assert.equal(body.invitations.length, 1);
    assert.equal(body.invitations[0].email, email);
    assert.equal(body.invitations[0].role, 'Admin');
    assert.equal(body.invitations[0].emailSent, false, 'no SMTP_URL in this file');
    assert.equal(JSON.stringify(body).includes('token'), false, 'the token is only in the mail');
    assert.equal((await members(tenant)).some((m) => m.email === email), false);
    const row = await context.database.db.selectFrom('users').select('id').where('email', '=', email).executeTakeFirst();
    assert.equal(row, undefined, 'no account was made');
    assertFieldError(await setUsers(tenant.dashboard, [{ email: uniqueEmail('x'), password: 'chosen password 1', role: 'User' }]), 'users.0.password');
  });

  test('updates an existing member found by email, ignoring case, without a temporaryPassword', async () => {
    const tenant = await context.world.tenant();
    const member = await addMember(context, tenant, 'User');
    const location = await tenant.location({ timezone: 'Europe/Berlin' });
    const [updated] = changed(
      await setUsers(tenant.dashboard, [{ email: member.email.toUpperCase(), role: 'Admin', locationAccessMode: 'LOCATIONS', allowedLocationIds: [location] }]),
    );
    assert.equal(updated!.id, member.userId);
    assert.equal(updated!.email, member.email, 'the stored email is unchanged');
    assert.equal(updated!.role, 'Admin');
    assert.equal(updated!.locationAccessMode, 'LOCATIONS');
    assert.deepEqual(updated!.allowedLocationIds, [location]);
    assert.equal('temporaryPassword' in updated!, false);
    const list = await members(tenant);
    assert.equal(list.filter((m) => m.email.toLowerCase() === member.email.toLowerCase()).length, 1, 'no second account');
    // The member's own password still works.
    assert.equal((await login(member.email, member.password)).statusCode, 200);
  });

  test('an existing account of another company is invited, not added (issue 12, item 7)', async () => {
    const tenant = await context.world.tenant();
    const other = await context.world.tenant();
    const response = await setUsers(tenant.dashboard, [{ email: other.email, role: 'User' }]);
    assert.equal(response.statusCode, 200, response.body);
    assert.equal(json(response).invitations[0].email, other.email);
    assert.equal((await members(tenant)).some((m) => m.id === other.userId), false, 'not a member until they accept');
    // Still the Owner of their own company.
    assert.equal(await roleOf(other, other.userId), 'Owner');
  });

  test('duplicate emails in one request (ignoring case) are 400 and change nothing', async () => {
    const tenant = await context.world.tenant();
    const email = uniqueEmail('twice');
    const before = await snapshot(tenant);
    const response = await setUsers(tenant.dashboard, [
      { email, role: 'User' },
      { email: email.toUpperCase(), role: 'Admin' },
    ]);
    assertFieldError(response, 'users.1.email');
    assert.deepEqual(await snapshot(tenant), before);
  });
});

describe('linkedResourceId', () => {
  test('role Resource without linkedResourceId is 400 at users.N.linkedResourceId', async () => {
    const tenant = await context.world.tenant();
    const member = await addMember(context, tenant, 'User');
    const before = await snapshot(tenant);
    assertFieldError(await setUsers(tenant.dashboard, [{ email: uniqueEmail('r'), role: 'Resource' }]), 'users.0.linkedResourceId');
    assertFieldError(await adjustUsers(tenant.dashboard, [{ id: member.userId, role: 'Resource' }]), 'users.0.linkedResourceId');
    assertFieldError(await adjustUsers(tenant.dashboard, [{ id: member.userId, role: 'Resource', linkedResourceId: null }]), 'users.0.linkedResourceId');
    // The index is the failing item's.
    assertFieldError(
      await setUsers(tenant.dashboard, [
        { email: uniqueEmail('fine'), role: 'User' },
        { email: uniqueEmail('r'), role: 'Resource' },
      ]),
      'users.1.linkedResourceId',
    );
    assert.deepEqual(await snapshot(tenant), before);
  });

  test("another company's resource is 400 naming it at users.N.linkedResourceId", async () => {
    const tenant = await context.world.tenant();
    const other = await context.world.tenant();
    const foreign = await other.resource();
    const member = await addMember(context, tenant, 'User');
    const before = await snapshot(tenant);
    for (const response of [
      await adjustUsers(tenant.dashboard, [{ id: member.userId, role: 'Resource', linkedResourceId: foreign }]),
      await setUsers(tenant.dashboard, [{ email: uniqueEmail('r'), role: 'Resource', linkedResourceId: foreign }]),
    ]) {
      const entry = assertFieldError(response, 'users.0.linkedResourceId');
      assert.ok(entry.msg.includes(foreign));
      assert.ok(json(response).message.includes(foreign), response.body);
    }
    assert.deepEqual(await snapshot(tenant), before);
  });

  test('a Resource user keeps the linked resource when only their access changes, and loses it with another role', async () => {
    const tenant = await context.world.tenant();
    const resource = await tenant.resource();
    const member = await addMember(context, tenant, 'User');
    changed(await adjustUsers(tenant.dashboard, [{ id: member.userId, role: 'Resource', linkedResourceId: resource }]));
    const [same] = changed(await adjustUsers(tenant.dashboard, [{ id: member.userId, locationAccessMode: 'COMPANY' }]));
    assert.deepEqual([same!.role, same!.linkedResourceId], ['Resource', resource]);
    const [user] = changed(await adjustUsers(tenant.dashboard, [{ id: member.userId, role: 'User' }]));
    assert.deepEqual([user!.role, user!.linkedResourceId], ['User', null]);
  });
});

describe('POST /v3/users/adjustUsers', () => {
  test('a user id that is not a member of the company is 400 at users.N.id', async () => {
    const tenant = await context.world.tenant();
    const other = await context.world.tenant();
    const member = await addMember(context, tenant, 'User');
    const before = await snapshot(tenant);
    for (const id of [randomUUID(), other.userId]) {
      const entry = assertFieldError(await adjustUsers(tenant.dashboard, [{ id, role: 'User' }]), 'users.0.id');
      assert.ok(entry.msg.includes(id), entry.msg);
      assertFieldError(await adjustUsers(tenant.dashboard, [{ id: member.userId, role: 'Admin' }, { id, role: 'User' }]), 'users.1.id');
    }
    assert.deepEqual(await snapshot(tenant), before);
    assert.equal(await roleOf(other, other.userId), 'Owner', "the other company's Owner is untouched");
  });

  test('the same id twice is 400', async () => {
    const tenant = await context.world.tenant();
    const member = await addMember(context, tenant, 'User');
    assertFieldError(
      await adjustUsers(tenant.dashboard, [
        { id: member.userId, role: 'Admin' },
        { id: member.userId, role: 'User' },
      ]),
      'users.1.id',
    );
    assert.equal(await roleOf(tenant, member.userId), 'User');
  });
});

describe('One request, one transaction', () => {
  test('setUsers: a failing item leaves the other items unapplied, including invitations', async () => {
    const tenant = await context.world.tenant();
    const member = await addMember(context, tenant, 'User');
    const before = await snapshot(tenant);
    const newEmail = uniqueEmail('never');
    const response = await setUsers(tenant.dashboard, [
      { email: newEmail, role: 'User' },
      { email: member.email, role: 'Admin' },
      { email: uniqueEmail('broken'), role: 'Resource' },
    ]);
    assertFieldError(response, 'users.2.linkedResourceId');
    assert.deepEqual(await snapshot(tenant), before);
    const invitation = await context.database.db.selectFrom('invitations').select('id').where('email', '=', newEmail).executeTakeFirst();
    assert.equal(invitation, undefined, 'no invitation was made');
  });

  test('adjustUsers: a member that is not one leaves the other items unapplied', async () => {
    const tenant = await context.world.tenant();
    const member = await addMember(context, tenant, 'User');
    const location = await tenant.location({ timezone: 'Europe/Berlin' });
    const before = await snapshot(tenant);
    assertFieldError(
      await adjustUsers(tenant.dashboard, [
        { id: member.userId, role: 'Admin', locationAccessMode: 'LOCATIONS', allowedLocationIds: [location] },
        { id: randomUUID(), role: 'User' },
      ]),
      'users.1.id',
    );
    assert.deepEqual(await snapshot(tenant), before);
  });

  test('a refused item (403) leaves the allowed items unapplied', async () => {
    const tenant = await context.world.tenant();
    const admin = await addMember(context, tenant, 'Admin');
    const user = await addMember(context, tenant, 'User');
    const before = await snapshot(tenant);
    assertForbidden(
      await adjustUsers(admin.headers, [
        { id: user.userId, role: 'Admin' },
        { id: tenant.userId, role: 'Admin' },
      ]),
    );
    assertForbidden(
      await setUsers(admin.headers, [
        { email: uniqueEmail('ok'), role: 'User' },
        { email: uniqueEmail('owner'), role: 'Owner' },
      ]),
    );
    assert.deepEqual(await snapshot(tenant), before);
  });

  test('the last-Owner rule applies to the request as a whole', async () => {
    const tenant = await context.world.tenant();
    const user = await addMember(context, tenant, 'User');
    // Demoting the Owner while promoting another member to Owner in the same request is fine...
    const promoted = await adjustUsers(tenant.dashboard, [
      { id: tenant.userId, role: 'Admin' },
      { id: user.userId, role: 'Owner' },
    ]);
    assert.deepEqual(changed(promoted).map((m) => [m.id, m.role]).sort(), [
      [tenant.userId, 'Admin'],
      [user.userId, 'Owner'],
    ].sort());
    // ...but a request that leaves no Owner changes nothing at all.
    const response = await adjustUsers(user.headers, [
      { id: tenant.userId, locationAccessMode: 'COMPANY' },
      { id: user.userId, role: 'Admin' },
    ]);
    assert.equal(response.statusCode, 400, response.body);
    assert.equal(await roleOf(tenant, user.userId), 'Owner');
    assert.equal(await roleOf(tenant, tenant.userId), 'Admin');
  });
});

describe('Location scope changes take effect on the next request', () => {
  test('a User narrowed to one location sees only it at once, and everything again when widened', async () => {
    const tenant = await context.world.tenant();
    const member = await addMember(context, tenant, 'User');
    const location1 = await tenant.location({ timezone: 'Europe/Berlin' });
    const location2 = await tenant.location({ timezone: 'Europe/Berlin' });
    const locations = async () => {
      const response = await context.app.inject({ method: 'GET', url: '/v3/locations', headers: member.headers });
      assert.equal(response.statusCode, 200, response.body);
      return json<{ data: Array<{ id: string }> }>(response).data.map((l) => l.id).sort();
    };
    const readLocation2 = () => context.app.inject({ method: 'GET', url: `/v3/location/${location2}`, headers: member.headers });

    assert.deepEqual(await locations(), [location1, location2].sort());
    assert.equal((await readLocation2()).statusCode, 200);

    changed(await adjustUsers(tenant.dashboard, [{ id: member.userId, locationAccessMode: 'LOCATIONS', allowedLocationIds: [location1] }]));
    assert.deepEqual(await locations(), [location1]);
    assertForbidden(await readLocation2());
    assertForbidden(await context.app.inject({ method: 'PUT', url: `/v3/location/${location2}`, headers: member.headers, payload: { phone: '5550199' } }));

    changed(await adjustUsers(tenant.dashboard, [{ id: member.userId, allowedLocationIds: [location2] }]));
    assert.deepEqual(await locations(), [location2]);
    assert.equal((await readLocation2()).statusCode, 200);

    changed(await adjustUsers(tenant.dashboard, [{ id: member.userId, locationAccessMode: 'COMPANY' }]));
    assert.deepEqual(await locations(), [location1, location2].sort());
  });

  test('a role change takes effect on the next request too', async () => {
    const tenant = await context.world.tenant();
    const member = await addMember(context, tenant, 'User');
    const list = () => context.app.inject({ method: 'GET', url: '/v3/users', headers: member.headers });
    assertForbidden(await list());
    changed(await adjustUsers(tenant.dashboard, [{ id: member.userId, role: 'Admin' }]));
    assert.equal((await list()).statusCode, 200);
    changed(await adjustUsers(tenant.dashboard, [{ id: member.userId, role: 'User' }]));
    assertForbidden(await list());
  });
});
