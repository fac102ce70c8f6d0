// Issue 12, items 3, 4 and 9 (passwords): sessions end with a password change or a demotion,
// sign-in is throttled per address and per account, Argon2 work is capped, common passwords are
// refused.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { addMember, createTestContext, json, uniqueEmail } from '../../helpers/app.js';
import type { TestContext } from '../../helpers/app.js';
import { ApiError } from '../../../src/platform/errors.js';

let context: TestContext;
before(async () => {
  context = await createTestContext({ SIGN_IN_LOCK_AFTER_FAILURES: '3', SIGN_IN_LOCK_SECONDS: '60', SIGN_IN_LOCK_MAX_SECONDS: '600' });
});
after(() => context.close());

const inject = (method: 'GET' | 'POST' | 'PUT', url: string, headers: Record<string, string> = {}, payload?: Record<string, unknown>) =>
  context.app.inject({ method, url, headers, ...(payload ? { payload } : {}) });
const login = (email: string, password: string, remoteAddress = '127.0.0.1') =>
  context.app.inject({ method: 'POST', url: '/v3/auth/login', payload: { email, password }, remoteAddress });

describe('sessions end with a password change or a demotion', () => {
  test('after PUT /v3/auth/me changes the password, the old JWT and the old refresh token stop; the answer carries a new JWT', async () => {
    const tenant = await context.world.tenant();
    const refresh = json(await inject('POST', '/v3/auth/generateRefreshToken', tenant.dashboard)).refreshToken as string;
    const changed = await inject('PUT', '/v3/auth/me', { authorization: `Bearer ${tenant.userToken}` }, { password: 'a brand new passphrase', currentPassword: tenant.password });
    assert.equal(changed.statusCode, 200, changed.body);
    const fresh = json(changed).accessToken as string;
    assert.equal(typeof fresh, 'string');

    assert.equal((await inject('GET', '/v3/company', tenant.dashboard)).statusCode, 401, 'the old dashboard JWT is refused');
    assert.equal((await inject('GET', '/v3/company', { ...tenant.dashboard, authorization: `Bearer ${fresh}` })).statusCode, 200);
    assert.equal((await inject('POST', '/v3/auth/token', {}, { refresh_token: refresh })).statusCode, 401, 'the old refresh token is revoked');
    assert.equal((await login(tenant.email, tenant.password)).statusCode, 401);
    assert.equal((await login(tenant.email, 'a brand new passphrase')).statusCode, 200);
  });

  test('a demoted Owner cannot exchange their refresh token; the role is re-checked at every exchange', async () => {
    const tenant = await context.world.tenant();
    const second = await addMember(context, tenant, 'Owner');
    const refresh = json(await inject('POST', '/v3/auth/generateRefreshToken', second.headers)).refreshToken as string;
    const demoted = await inject('POST', '/v3/users/adjustUsers', tenant.dashboard, { users: [{ id: second.userId, role: 'User' }] });
    assert.equal(demoted.statusCode, 200, demoted.body);
    assert.equal((await inject('POST', '/v3/auth/token', {}, { refresh_token: refresh })).statusCode, 401, 'demotion revoked it');

    // A role changed by any other path (here: the database) is caught at the exchange itself.
    const third = await addMember(context, tenant, 'Owner');
    const another = json(await inject('POST', '/v3/auth/generateRefreshToken', third.headers)).refreshToken as string;
    await context.database.db.updateTable('companyUsers').set({ role: 'Admin' }).where('companyId', '=', tenant.companyId).where('userId', '=', third.userId).execute();
    const refused = await inject('POST', '/v3/auth/token', {}, { refresh_token: another });
    assert.equal(refused.statusCode, 403, refused.body);
    assert.match(json(refused).message, /no longer an Owner/);
  });
});

describe('sign-in throttling', () => {
  test('failed sign-ins lock the account with a clear 429 and Retry-After, even for the right password; the lock doubles', async () => {
    const user = await context.world.user('locked');
    for (let i = 0; i < 2; i++) assert.equal((await login(user.email, 'wrong password!', `10.1.0.${i}`)).statusCode, 401);
    // The third failure (SIGN_IN_LOCK_AFTER_FAILURES=3) locks at once, from any address.
    const third = await login(user.email, 'wrong password!', '10.1.0.9');
    assert.equal(third.statusCode, 429, third.body);
    const locked = await login(user.email, user.password, '10.1.0.10');
    assert.equal(locked.statusCode, 429, locked.body);
    assert.match(json(locked).message, /too many failed sign-ins for this account; try again in \d+ seconds/);
    const retryAfter = Number(locked.headers['retry-after']);
    assert.ok(retryAfter > 0 && retryAfter <= 60, String(retryAfter));

    // After the lock, one more failure locks for twice as long.
    await context.database.db.updateTable('users').set({ signInLockedUntil: new Date(Date.now() - 1000) }).where('id', '=', user.userId).execute();
    const fourth = await login(user.email, 'wrong password!', '10.1.0.11');
    assert.equal(fourth.statusCode, 429);
    assert.ok(Number(fourth.headers['retry-after']) > 60, fourth.headers['retry-after'] as string);

    // Lock over: the right password signs in and the count starts again.
    await context.database.db.updateTable('users').set({ signInLockedUntil: new Date(Date.now() - 1000) }).where('id', '=', user.userId).execute();
    assert.equal((await login(user.email, user.password)).statusCode, 200);
    const row = await context.database.db.selectFrom('users').select(['failedSignIns']).where('id', '=', user.userId).executeTakeFirstOrThrow();
    assert.equal(row.failedSignIns, 0);
  });

  test('wrong current passwords on PUT /v3/auth/me count towards the same lock', async () => {
    const user = await context.world.user('changer');
    const headers = { authorization: `Bearer ${user.userToken}` };
    for (let i = 0; i < 2; i++) {
      assert.equal((await inject('PUT', '/v3/auth/me', headers, { password: 'a brand new passphrase', currentPassword: 'wrong guess' })).statusCode, 400);
    }
    assert.equal((await inject('PUT', '/v3/auth/me', headers, { password: 'a brand new passphrase', currentPassword: 'wrong guess' })).statusCode, 429);
    assert.equal((await inject('PUT', '/v3/auth/me', headers, { password: 'a brand new passphrase', currentPassword: user.password })).statusCode, 429);
  });

  test('a flood from one address is refused per address before any password is checked', async () => {
    const flood = await createTestContext({ RATE_LIMIT_SIGN_IN: '5/1m' });
    try {
      const email = uniqueEmail('target');
      const statuses: number[] = [];
      for (let i = 0; i < 7; i++) {
        const response = await flood.app.inject({ method: 'POST', url: '/v3/auth/login', payload: { email, password: `guess ${i}` }, remoteAddress: '203.0.113.7' });
        statuses.push(response.statusCode);
        if (response.statusCode === 429) {
          assert.equal(json(response).message, 'Sign-in rate limit exceeded');
          assert.ok(Number(response.headers['retry-after']) >= 1);
        }
      }
      assert.deepEqual(statuses, [401, 401, 401, 401, 401, 429, 429]);
      // Signup, refresh-token exchange and invitation acceptance share the address budget.
      for (const [url, payload] of [
        ['/v3/auth/signup', { email: uniqueEmail('x'), password: 'a fine long password', name: 'x' }],
        ['/v3/auth/token', { refresh_token: 'x' }],
        ['/v3/auth/acceptInvitation', { token: 'x' }],
      ] as const) {
        assert.equal((await flood.app.inject({ method: 'POST', url, payload, remoteAddress: '203.0.113.7' })).statusCode, 429, url);
      }
      // Another address is not affected.
      assert.equal((await flood.app.inject({ method: 'POST', url: '/v3/auth/login', payload: { email, password: 'guess' }, remoteAddress: '203.0.113.8' })).statusCode, 401);
    } finally {
      await flood.close();
    }
  });

  test('Argon2 work is capped: beyond the concurrency and the queue, 429 with Retry-After', async () => {
    // Imported in the tests that use them, so the rest of the file also runs against code without them.
    const { createPasswordHasher } = await import('../../../src/platform/auth/passwords.js');
    const hasher = createPasswordHasher({ concurrency: 1, queue: 0, maxWaitMs: 1000 });
    const first = hasher.hash('a password being hashed');
    await assert.rejects(hasher.verify('$argon2id$v=19$m=19456,t=2,p=1$x$y', 'another'), (error: unknown) => {
      assert.ok(error instanceof ApiError);
      assert.equal(error.statusCode, 429);
      assert.equal(error.headers['Retry-After'], '1');
      return true;
    });
    assert.match(await first, /^\$argon2id\$/);
    assert.equal(hasher.stats.active, 0);
  });
});

describe('common passwords (item 9)', () => {
  test('signup, password change and invitation acceptance refuse the most common passwords', async () => {
    const { isCommonPassword } = await import('../../../src/platform/auth/passwords.js');
    assert.equal(isCommonPassword('Password123'), true);
    assert.equal(isCommonPassword('qwertyuiop'), true);
    assert.equal(isCommonPassword('correct horse battery'), false);
    const signupResponse = await inject('POST', '/v3/auth/signup', {}, { email: uniqueEmail('weak'), password: 'password1', name: 'Weak' });
    assert.equal(signupResponse.statusCode, 400, signupResponse.body);
    assert.equal(json(signupResponse).errors[0].path, 'password');
    assert.match(json(signupResponse).errors[0].msg, /common/);
    const user = await context.world.user('strong');
    const change = await inject('PUT', '/v3/auth/me', { authorization: `Bearer ${user.userToken}` }, { password: 'iloveyou1', currentPassword: user.password });
    assert.equal(change.statusCode, 400, change.body);
  });
});
