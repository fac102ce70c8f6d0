// Issue 12, items 7 and 8: setUsers invites people who are not members yet; the invitation is
// mailed (through the SMTP client, to the local SMTP stand-in) and takes effect only when accepted
// with the mailed token. Members can be removed, which revokes their refresh tokens and the client
// credentials they created.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { addMember, createClientCredentials, createTestContext, json, uniqueEmail } from '../../helpers/app.js';
import type { TestContext } from '../../helpers/app.js';
import { startSmtpStandIn } from '../../helpers/stand-ins.js';
import type { SmtpStandIn } from '../../helpers/stand-ins.js';
import type { Tenant } from '../../helpers/world.js';

let context: TestContext;
let smtp: SmtpStandIn;
before(async () => {
  smtp = await startSmtpStandIn();
  context = await createTestContext({ SMTP_URL: smtp.url, PUBLIC_BASE_URL: 'https://api.slotwise.test' });
});
after(async () => {
  await context.close();
  await smtp.close();
});

type Headers = Record<string, string>;
const inject = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, headers: Headers = {}, payload?: unknown) =>
  context.app.inject({ method, url, headers, ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }) });

/** Invites `email` and returns the token from the mail the stand-in received. */
async function invite(headers: Headers, email: string, role = 'User'): Promise<string> {
  const count = smtp.messages.length;
  const response = await inject('POST', '/v3/users/setUsers', headers, { users: [{ email, role }] });
  assert.equal(response.statusCode, 200, response.body);
  assert.equal(json(response).invitations[0].emailSent, true, response.body);
  await smtp.waitForMessages(count + 1);
  const mail = smtp.messages.filter((m) => m.to.includes(email.toLowerCase()) || m.to.includes(email)).at(-1);
  assert.ok(mail, 'the invitation was mailed to the address');
  assert.match(mail.text, /https:\/\/api\.slotwise\.test\/v3\/auth\/acceptInvitation/);
  const token = /inv_[A-Za-z0-9_-]+/.exec(mail.text)?.[0];
  assert.ok(token, mail.text);
  return token;
}

const accept = (payload: Record<string, unknown>) => inject('POST', '/v3/auth/acceptInvitation', {}, payload);
const login = (email: string, password: string) => inject('POST', '/v3/auth/login', {}, { email, password });
const roleIn = async (tenant: Tenant, userId: string) =>
  (json(await inject('GET', '/v3/users?limit=100', tenant.dashboard)).data as Array<{ id: string; role: string }>).find((m) => m.id === userId)?.role;

describe('invitations', () => {
  test('a new person accepts with the mailed token and a password, and is then a member', async () => {
    const tenant = await context.world.tenant();
    const email = uniqueEmail('new-hire');
    const token = await invite(tenant.dashboard, email, 'Admin');

    // A common password is refused (item 9), a wrong token is 401.
    const common = await accept({ token, password: 'password123' });
    assert.equal(common.statusCode, 400, common.body);
    assert.match(json(common).errors[0].msg, /common/);
    assert.equal((await accept({ token: 'inv_made-up', password: 'a fine long password' })).statusCode, 401);

    const accepted = await accept({ token, password: 'a fine long password', name: 'New Hire' });
    assert.equal(accepted.statusCode, 200, accepted.body);
    assert.equal(json(accepted).companyId, tenant.companyId);
    assert.equal(json(accepted).role, 'Admin');
    const session = await login(email, 'a fine long password');
    assert.equal(session.statusCode, 200, session.body);
    assert.equal(await roleIn(tenant, json(accepted).id), 'Admin');

    // A token is spent once.
    assert.equal((await accept({ token, password: 'a fine long password' })).statusCode, 401);
  });

  test('a squatter who signed up with the address first gets nothing; the mailbox owner takes the account', async () => {
    const tenant = await context.world.tenant();
    const email = uniqueEmail('new.hire');
    // The squatter signs up as the future hire (nobody checks the address at signup).
    const squatter = await context.world.user('squatter');
    await context.database.db.updateTable('users').set({ email }).where('id', '=', squatter.userId).execute();
    await context.database.db.updateTable('users').set({ emailVerifiedAt: null }).where('id', '=', squatter.userId).execute();

    const token = await invite(tenant.dashboard, email, 'Admin');
    // Before: setUsers made the squatter an Admin at once. Now nothing until the invitation is accepted.
    const squatterHeaders = { authorization: `Bearer ${squatter.userToken}`, 'x-api-key': tenant.apiKey };
    assert.equal((await inject('GET', '/v3/company', squatterHeaders)).statusCode, 403);

    // The person who reads the mail accepts: the unproven account is theirs now, with their password.
    assert.equal((await accept({ token })).statusCode, 400, 'a new password is required for an unproven account');
    const accepted = await accept({ token, password: 'the real hire password' });
    assert.equal(accepted.statusCode, 200, accepted.body);
    assert.equal((await inject('GET', '/v3/auth/me', { authorization: `Bearer ${squatter.userToken}` })).statusCode, 401, "the squatter's session ended");
    assert.equal((await login(email, squatter.password)).statusCode, 401, "the squatter's password is gone");
    assert.equal((await login(email, 'the real hire password')).statusCode, 200);
  });

  test('an account that proved its address accepts without a password and keeps its own', async () => {
    const tenant = await context.world.tenant();
    const other = await context.world.tenant();
    await context.database.db.updateTable('users').set({ emailVerifiedAt: new Date() }).where('id', '=', other.userId).execute();
    const token = await invite(tenant.dashboard, other.email);
    const withPassword = await accept({ token, password: 'another fine password' });
    assert.equal(withPassword.statusCode, 400, withPassword.body);
    const accepted = await accept({ token });
    assert.equal(accepted.statusCode, 200, accepted.body);
    assert.equal(await roleIn(tenant, other.userId), 'User');
    assert.equal((await login(other.email, other.password)).statusCode, 200);
  });

  test('an expired invitation is 401; an invitation whose sender may no longer grant the role is 403', async () => {
    const tenant = await context.world.tenant();
    const expiredToken = await invite(tenant.dashboard, uniqueEmail('late'));
    await context.database.db.updateTable('invitations').set({ expiresAt: new Date(Date.now() - 1000) }).where('companyId', '=', tenant.companyId).execute();
    assert.equal((await accept({ token: expiredToken, password: 'a fine long password' })).statusCode, 401);

    const admin = await addMember(context, tenant, 'Admin');
    const token = await invite(admin.headers, uniqueEmail('promoted'), 'Admin');
    await context.database.db.updateTable('companyUsers').set({ role: 'User' }).where('companyId', '=', tenant.companyId).where('userId', '=', admin.userId).execute();
    const refused = await accept({ token, password: 'a fine long password' });
    assert.equal(refused.statusCode, 403, refused.body);
  });
});

describe('member removal', () => {
  test('an Owner removes a member: membership, refresh tokens and their client credentials end', async () => {
    const tenant = await context.world.tenant();
    const second = await addMember(context, tenant, 'Owner');
    const refresh = json(await inject('POST', '/v3/auth/generateRefreshToken', second.headers)).refreshToken as string;
    const created = await inject('POST', '/v3/clientId', second.headers, {});
    const { clientId, clientSecret } = json(created);
    const tokenForm = (id: string, secret: string) =>
      context.app.inject({
        method: 'POST',
        url: '/v3/oauth/token',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams({ grant_type: 'client_credentials', client_id: id, client_secret: secret }).toString(),
      });
    const machine = json(await tokenForm(clientId, clientSecret)).access_token as string;
    const owners = await createClientCredentials(context.app, tenant);

    const removed = await inject('DELETE', `/v3/users/${second.userId}`, tenant.dashboard);
    assert.equal(removed.statusCode, 204, removed.body);
    assert.equal(await roleIn(tenant, second.userId), undefined);
    assert.equal((await inject('GET', '/v3/company', second.headers)).statusCode, 403);
    assert.equal((await inject('POST', '/v3/auth/token', {}, { refresh_token: refresh })).statusCode, 401);
    assert.equal((await tokenForm(clientId, clientSecret)).statusCode, 401, 'their client credentials are revoked');
    assert.equal((await inject('GET', '/v3/locations', { authorization: `Bearer ${machine}` })).statusCode, 401, 'live tokens of them stop');
    assert.equal((await tokenForm(owners.clientId, owners.clientSecret)).statusCode, 200, "the remaining Owner's credentials are untouched");
  });

  test('the last Owner cannot be removed; an Admin removes a User but not an Owner or another Admin; unknown ids are 404', async () => {
    const tenant = await context.world.tenant();
    const admin = await addMember(context, tenant, 'Admin');
    const otherAdmin = await addMember(context, tenant, 'Admin');
    const user = await addMember(context, tenant, 'User');
    assert.equal((await inject('DELETE', `/v3/users/${tenant.userId}`, tenant.dashboard)).statusCode, 400);
    assert.equal((await inject('DELETE', `/v3/users/${tenant.userId}`, admin.headers)).statusCode, 403);
    assert.equal((await inject('DELETE', `/v3/users/${otherAdmin.userId}`, admin.headers)).statusCode, 403);
    assert.equal((await inject('DELETE', `/v3/users/${user.userId}`, user.headers)).statusCode, 403);
    assert.equal((await inject('DELETE', `/v3/users/${user.userId}`, admin.headers)).statusCode, 204);
    const foreign = await context.world.tenant();
    assert.equal((await inject('DELETE', `/v3/users/${foreign.userId}`, tenant.dashboard)).statusCode, 404);
    assert.equal(await roleIn(tenant, tenant.userId), 'Owner');
  });
});
