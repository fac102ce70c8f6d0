// Issue 12 (security review), items 5, 6 and 9: proxies, the public booking page's abuse limits,
// CORS, http origins, security headers, /metrics on its own port, Idempotency-Key binding,
// templates and location scope. Each test failed before the fix.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import pg from 'pg';
import { queriesDuring } from '../helpers/queries.js';
import { addMember, createTestContext, json, machineToken } from '../helpers/app.js';
import type { TestContext } from '../helpers/app.js';
import { ConfigError, loadConfig } from '../../src/platform/config.js';
import { dayAhead, setup, slot } from '../modules/appointments/fixtures.js';
import type { Setup } from '../modules/appointments/fixtures.js';

const ORIGIN = 'https://book.example.com';

// Behind a trusted proxy (127.0.0.1, where inject comes from), with tight public budgets.
let proxied: TestContext;
// The defaults: no proxy is trusted.
let plain: TestContext;
before(async () => {
  [proxied, plain] = await Promise.all([
    createTestContext({
      TRUST_PROXY: '127.0.0.1',
      RATE_LIMIT_OAUTH_TOKEN_IP: '2/1m',
      PUBLIC_ALLOW_HTTP_ORIGINS: 'true',
      RATE_LIMIT_PUBLIC_WRITE_IP: '6/1m',
      RATE_LIMIT_PUBLIC_HOLD_IP: '3/10m',
      RATE_LIMIT_PUBLIC_BOOK_EMAIL: '2/1h',
      PUBLIC_HOLDS_PER_COMPANY: '2',
      METRICS_PORT: '0',
    }),
    createTestContext({ RATE_LIMIT_OAUTH_TOKEN_IP: '2/1m' }),
  ]);
});
after(async () => {
  await Promise.all([proxied.close(), plain.close()]);
});

const tokenRequest = (context: TestContext, forwardedFor: string) =>
  context.app.inject({
    method: 'POST',
    url: '/v3/oauth/token',
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': forwardedFor },
    payload: new URLSearchParams({ grant_type: 'client_credentials', client_id: `cid_${randomUUID()}`, client_secret: 'x' }).toString(),
  });

describe('proxies (TRUST_PROXY)', () => {
  test('by default X-Forwarded-For is ignored: a caller cannot choose its address for the per-address budgets', async () => {
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await tokenRequest(plain, `192.0.2.${i}`)).statusCode);
    assert.deepEqual(statuses, [401, 401, 429]);
  });

  test('from a configured proxy, X-Forwarded-For names the caller', async () => {
    for (let i = 0; i < 3; i++) assert.equal((await tokenRequest(proxied, `192.0.2.${i}`)).statusCode, 401);
    const same = [];
    for (let i = 0; i < 3; i++) same.push((await tokenRequest(proxied, '192.0.2.200')).statusCode);
    assert.deepEqual(same, [401, 401, 429]);
  });

  test('TRUST_PROXY=true is refused; hops and address lists are read', () => {
    assert.throws(() => loadConfig({ TRUST_PROXY: 'true' }), ConfigError);
    assert.equal(loadConfig({}).security.trustProxy, false);
    assert.equal(loadConfig({ TRUST_PROXY: '1' }).security.trustProxy, 1);
    assert.deepEqual(loadConfig({ TRUST_PROXY: '10.0.0.0/8, loopback' }).security.trustProxy, ['10.0.0.0/8', 'loopback']);
  });
});

describe('public origins and CORS', () => {
  test('a preflight is answered with CORS only for an origin some company allows', async () => {
    const tenant = await plain.world.tenant();
    const allowed = await plain.app.inject({ method: 'PUT', url: '/v3/company', headers: tenant.dashboard, payload: { allowedDomains: [`cors-${tenant.companyId}.example.com`] } });
    assert.equal(allowed.statusCode, 200, allowed.body);
    const preflight = (origin: string) =>
      plain.app.inject({ method: 'OPTIONS', url: '/v3/public/company', headers: { origin, 'access-control-request-method': 'GET' } });
    const good = await preflight(`https://cors-${tenant.companyId}.example.com`);
    assert.equal(good.headers['access-control-allow-origin'], `https://cors-${tenant.companyId}.example.com`);
    for (const origin of ['https://evil.example.net', `http://cors-${tenant.companyId}.example.com`, 'null']) {
      const bad = await preflight(origin);
      assert.equal(bad.statusCode, 204);
      assert.equal(bad.headers['access-control-allow-origin'], undefined, origin);
      assert.equal(bad.headers['access-control-allow-methods'], undefined, origin);
    }
  });

  test('http origins are accepted only with PUBLIC_ALLOW_HTTP_ORIGINS', async () => {
    const tenant = await proxied.world.tenant();
    await proxied.app.inject({ method: 'PUT', url: '/v3/company', headers: tenant.dashboard, payload: { allowedDomains: ['localhost:5173'] } });
    const response = await proxied.app.inject({ method: 'GET', url: '/v3/public/company', headers: { 'x-client-id': tenant.publicClientId, origin: 'http://localhost:5173' } });
    assert.equal(response.statusCode, 200, response.body);
  });
});

describe('headers and /metrics', () => {
  test('/docs cannot be framed; every answer says nosniff', async () => {
    const docs = await plain.app.inject({ method: 'GET', url: '/docs' });
    assert.equal(docs.statusCode, 200);
    assert.match(String(docs.headers['content-security-policy']), /frame-ancestors 'none'/);
    assert.equal(docs.headers['x-frame-options'], 'DENY');
    assert.equal(docs.headers['x-content-type-options'], 'nosniff');
    const api = await plain.app.inject({ method: 'GET', url: '/v3/locations' });
    assert.equal(api.headers['x-content-type-options'], 'nosniff');
    assert.equal(api.headers['referrer-policy'], 'no-referrer');
  });

  test('with METRICS_PORT, /metrics is not on the API port but on its own', async () => {
    assert.equal((await proxied.app.inject({ method: 'GET', url: '/metrics' })).statusCode, 404);
    assert.equal((await plain.app.inject({ method: 'GET', url: '/metrics' })).statusCode, 200, 'unset: the API port, as before');
    // Imported here, so the rest of the file also runs against code without it.
    const { startMetricsServer } = await import('../../src/platform/metrics.js');
    const server = await startMetricsServer(proxied.app.metrics, 0, '127.0.0.1');
    try {
      const response = await fetch(`http://127.0.0.1:${server.port}/metrics`);
      assert.equal(response.status, 200);
      assert.match(await response.text(), /http_requests_total|process_cpu/);
      assert.equal((await fetch(`http://127.0.0.1:${server.port}/v3/locations`)).status, 404);
    } finally {
      await server.close();
    }
  });
});

describe('the public booking page (item 6 and the public items of 9)', () => {
  async function bookingPage(): Promise<Setup> {
    const tenant = await proxied.world.tenant({ allowedDomains: ['book.example.com'] });
    return setup(proxied, { tenant, service: { showOnline: true } });
  }
  const from = (s: Setup, address: string) => ({ 'x-client-id': s.tenant.publicClientId, origin: ORIGIN, 'x-forwarded-for': address });
  const hold = (s: Setup, time: string, address: string, extra: Record<string, unknown> = {}) =>
    proxied.app.inject({
      method: 'POST',
      url: `/v3/public/appointment/hold?LocationId=${s.locationId}&ServiceId=${s.serviceId}`,
      headers: from(s, address),
      payload: { ResourceIds: [s.resourceIds[0]], ...slot(dayAhead(), time), ...extra },
    });
  const book = (s: Setup, id: string, email: string, address: string, name = 'Visitor') =>
    proxied.app.inject({ method: 'PUT', url: `/v3/public/appointment/${id}/book`, headers: from(s, address), payload: { name, email } });
  function assertRefused(response: LightMyRequestResponse, message: RegExp) {
    assert.equal(response.statusCode, 429, response.body);
    assert.match(json(response).message, message);
    assert.ok(Number(response.headers['retry-after']) >= 1);
  }

  test("a company's live public holds are capped; one address's holds are limited; others still hold", async () => {
    const page = await bookingPage();
    assert.equal((await hold(page, '09:00', '198.51.100.1')).statusCode, 201);
    const second = await hold(page, '10:00', '198.51.100.1');
    assert.equal(second.statusCode, 201, second.body);
    // PUBLIC_HOLDS_PER_COMPANY=2: the whole day cannot be held.
    assertRefused(await hold(page, '11:00', '198.51.100.2'), /already holds 2 slots/);
    // The address's own hold budget (3 per 10 minutes; refusals count too) is spent after its third try.
    assertRefused(await hold(page, '11:00', '198.51.100.1'), /already holds 2 slots/);
    assertRefused(await hold(page, '11:00', '198.51.100.1'), /^Public write rate limit exceeded$/);
    // Booking a hold frees room for the next visitor.
    assert.equal((await book(page, json(second).id, `v-${randomUUID()}@example.com`, '198.51.100.3')).statusCode, 200);
    assert.equal((await hold(page, '11:00', '198.51.100.4')).statusCode, 201);
  });

  /** The exchange that tries a hold's locks with the count of the company's live public holds behind it. */
  const LOCKS_WITH_COUNT = /slotwise_try_advisory_xact_locks[\s\S]*"created_via" = /;

  test("a public hold tries its locks and counts the company's live public holds in one exchange", async () => {
    // Two holds first (another company's): a led statement not yet prepared on the connection goes
    // in an exchange of its own (platform/database/transaction-control.ts).
    const warm = await bookingPage();
    for (const [time, address] of [['09:00', '198.51.100.21'], ['10:00', '198.51.100.22']] as const) assert.equal((await hold(warm, time, address)).statusCode, 201);
    const page = await bookingPage();
    const sent = await queriesDuring(async () => {
      const held = await hold(page, '09:00', '198.51.100.23');
      assert.equal(held.statusCode, 201, held.body);
    });
    const tried = sent.findIndex((text) => text.includes('slotwise_try_advisory_xact_locks'));
    assert.ok(tried >= 0, sent.join('\n---\n'));
    assert.equal(sent.filter((text) => text.includes('"created_via" = ')).length, 1, 'counted once');
    if (process.env.TEST_DATABASE_URL) {
      // A pool of connections: the hold may get one where the count is not yet prepared, and then
      // it goes right after the try, in an exchange of its own.
      assert.match(`${sent[tried]}\n${sent[tried + 1]}`, LOCKS_WITH_COUNT);
    } else assert.match(sent[tried]!, LOCKS_WITH_COUNT, 'one connection, its statements prepared: one exchange');
  });

  /** Until a session waits for the advisory lock of `key` (pg_locks; bigint keys come as two int4 halves). */
  async function untilWaitingOn(admin: pg.Client, key: string) {
    for (let i = 0; i < 500; i++) {
      const { rows } = await admin.query<{ n: string }>(
        `select count(*) as n from pg_locks l, (select hashtextextended($1, 0) as h) k
          where l.locktype = 'advisory' and not l.granted
            and l.classid::int8 = ((k.h >> 32) & 4294967295) and l.objid::int8 = (k.h & 4294967295)`,
        [key],
      );
      if (Number(rows[0]!.n) > 0) return;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    throw new Error(`no session ever waited on ${key}`);
  }

  /**
   * On PostgreSQL: a booking page, its company's public-holds lock key and a connection of the
   * test's own to hold it (rolled back and closed afterwards, which frees any lock it holds).
   */
  async function withLockHolder(t: { skip: (message: string) => void }, run: (page: Setup, admin: pg.Client, key: string) => Promise<void>) {
    if (!process.env.TEST_DATABASE_URL) {
      t.skip('TEST_DATABASE_URL is not set: the embedded database has one connection');
      return;
    }
    const page = await bookingPage();
    const admin = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
    await admin.connect();
    try {
      await run(page, admin, `${page.tenant.companyId}:public-holds`);
    } finally {
      await admin.query('rollback').catch(() => {});
      await admin.end();
    }
  }

  test('public holds committed while a hold waits for the lock count: it is refused at the cap (PostgreSQL)', (t) =>
    withLockHolder(t, async (page, admin, key) => {
      await admin.query('begin');
      await admin.query('select pg_advisory_xact_lock(hashtextextended($1, 0))', [key]);
      const waiting = hold(page, '09:00', '198.51.100.25');
      await untilWaitingOn(admin, key);
      // PUBLIC_HOLDS_PER_COMPANY=2 live public holds, committed by the transaction the hold waits for.
      for (const hour of [10, 11]) {
        const start = new Date(Date.parse(slot(dayAhead(), `${hour}:00`).Unavailability.startTime));
        await admin.query(
          `insert into appointments (company_id, id, location_id, service_id, status, start_time, end_time, duration, padding, created_via, expires_at, resource_ids)
           values ($1, $2, $3, $4, 'IN', $5, $6, 60, 0, 'public', now() + interval '10 minutes', array[$7]::uuid[])`,
          [page.tenant.companyId, randomUUID(), page.locationId, page.serviceId, start, new Date(start.getTime() + 3_600_000), page.resourceIds[0]],
        );
      }
      await admin.query('commit');
      assertRefused(await waiting, /already holds 2 slots/);
    }));

  test('a public hold whose lock is held waits for it and counts the live holds again under every lock (PostgreSQL)', (t) =>
    withLockHolder(t, async (page, admin, key) => {
      await admin.query('select pg_advisory_lock(hashtextextended($1, 0))', [key]);
      const sent = queriesDuring(async () => {
        const held = await hold(page, '09:00', '198.51.100.24');
        assert.equal(held.statusCode, 201, held.body);
      });
      await untilWaitingOn(admin, key);
      await admin.query('select pg_advisory_unlock_all()');
      // The admin connection's own statements are node-postgres calls too: left out.
      const texts = (await sent).filter((text) => !text.includes('pg_stat_activity') && !text.includes('pg_advisory_unlock_all'));
      const counts = texts.flatMap((text, i) => (text.includes('"created_via" = ') ? [i] : []));
      assert.equal(counts.length, 2, `counted again after the wait: ${texts.join('\n---\n')}`);
      // The second count is made once the rest of the locks are taken (waited for).
      const waited = texts.findIndex((text) => text.includes('pg_advisory_xact_lock(h)'));
      assert.ok(waited > counts[0]! && waited < counts[1]!, texts.join('\n---\n'));
    }));

  test("one address's junk does not use up the company's budget: a real visitor still holds", async () => {
    const page = await bookingPage();
    const junk = [];
    for (let i = 0; i < 7; i++) junk.push((await book(page, 'junk', `x${i}@example.com`, '203.0.113.66')).statusCode);
    // RATE_LIMIT_PUBLIC_WRITE_IP=6/1m: the address is refused before the company's budget is spent.
    assert.deepEqual(junk, [400, 400, 400, 400, 400, 400, 429]);
    assert.equal((await hold(page, '09:00', '203.0.113.99')).statusCode, 201);
  });

  test('public bookings are limited per customer email', async () => {
    const page = await bookingPage();
    const email = `often-${randomUUID()}@example.com`;
    for (const [time, address] of [['09:00', '198.51.100.11'], ['10:00', '198.51.100.12']] as const) {
      const held = await hold(page, time, address);
      assert.equal(held.statusCode, 201, held.body);
      assert.equal((await book(page, json(held).id, email, address)).statusCode, 200);
    }
    const third = await hold(page, '11:00', '198.51.100.13');
    assert.equal(third.statusCode, 201, third.body);
    assertRefused(await book(page, json(third).id, email.toUpperCase(), '198.51.100.13'), /^Public write rate limit exceeded$/);
    assert.equal((await book(page, json(third).id, `other-${randomUUID()}@example.com`, '198.51.100.13')).statusCode, 200);
  });

  test('a public hold takes no notes or custom fields (the company mail would print them)', async () => {
    const page = await bookingPage();
    for (const extra of [{ notes: 'Click https://phish.example to pay' }, { field1: 'x' }]) {
      const response = await hold(page, '09:00', '198.51.100.21', extra);
      assert.equal(response.statusCode, 400, response.body);
    }
  });

  test("a public booking under an existing customer's email changes nothing of theirs and mails them nothing", async () => {
    const page = await bookingPage();
    const existing = await proxied.database.db.selectFrom('customers').selectAll().where('id', '=', page.customerId).executeTakeFirstOrThrow();
    const held = await hold(page, '09:00', '198.51.100.31');
    const booked = await book(page, json(held).id, existing.email.toUpperCase(), '198.51.100.31', 'Mallory Impostor');
    assert.equal(booked.statusCode, 200, booked.body);
    assert.equal(json(booked).customerId, page.customerId);
    const after = await proxied.database.db.selectFrom('customers').selectAll().where('id', '=', page.customerId).executeTakeFirstOrThrow();
    assert.deepEqual([after.firstName, after.lastName, after.email], [existing.firstName, existing.lastName, existing.email]);

    const fresh = await hold(page, '10:00', '198.51.100.32');
    const newEmail = `new-${randomUUID()}@example.com`;
    assert.equal((await book(page, json(fresh).id, newEmail, '198.51.100.32')).statusCode, 200);
    await proxied.app.dispatcher.drain();
    const messages = await proxied.database.db.selectFrom('notifications').select(['appointmentId', 'recipientType', 'recipient']).where('companyId', '=', page.tenant.companyId).execute();
    const toCustomers = messages.filter((m) => m.recipientType === 'CUSTOMER');
    assert.deepEqual(toCustomers.map((m) => m.recipient), [newEmail], 'only the customer the page created is written to');
  });
});

describe('Idempotency-Key and templates (item 9)', () => {
  test('a key is bound to its caller: another caller of the company does not get the stored answer', async () => {
    const s = await setup(proxied);
    const machine = { authorization: `Bearer ${await machineToken(proxied.app, s.tenant)}` };
    const user = await addMember(proxied, s.tenant, 'User');
    const key = `key-${randomUUID()}`;
    const create = (headers: Record<string, string>) =>
      proxied.app.inject({
        method: 'POST',
        url: `/v3/appointment?LocationId=${s.locationId}&ServiceId=${s.serviceId}`,
        headers: { ...headers, 'idempotency-key': key },
        payload: { ResourceIds: [s.resourceIds[0]], CustomerId: s.customerId, ...slot(dayAhead(), '09:00') },
      });
    const first = await create(machine);
    assert.equal(first.statusCode, 201, first.body);
    assert.equal((await create(machine)).headers['idempotent-replayed'], 'true');
    const other = await create(user.headers);
    assert.notEqual(other.statusCode, 201, other.body);
    assert.equal(other.headers['idempotent-replayed'], undefined);
  });

  test('a replay checks the caller\'s location scope as it is now', async () => {
    const s = await setup(proxied);
    const user = await addMember(proxied, s.tenant, 'Admin');
    const key = `key-${randomUUID()}`;
    const create = () =>
      proxied.app.inject({
        method: 'POST',
        url: `/v3/appointment?LocationId=${s.locationId}&ServiceId=${s.serviceId}`,
        headers: { ...user.headers, 'idempotency-key': key },
        payload: { ResourceIds: [s.resourceIds[0]], CustomerId: s.customerId, ...slot(dayAhead(), '10:00') },
      });
    assert.equal((await create()).statusCode, 201);
    const elsewhere = await s.tenant.location({ name: 'Elsewhere' });
    await proxied.database.db
      .updateTable('companyUsers')
      .set({ locationAccessMode: 'LOCATIONS', allowedLocationIds: [elsewhere] })
      .where('companyId', '=', s.tenant.companyId)
      .where('userId', '=', user.userId)
      .execute();
    const replay = await create();
    assert.equal(replay.statusCode, 404, replay.body);
  });

  test('a User limited to some locations cannot change company-wide templates; an unscoped User can', async () => {
    const s = await setup(plain);
    const scoped = await addMember(plain, s.tenant, 'User');
    await plain.database.db
      .updateTable('companyUsers')
      .set({ locationAccessMode: 'LOCATIONS', allowedLocationIds: [s.locationId] })
      .where('companyId', '=', s.tenant.companyId)
      .where('userId', '=', scoped.userId)
      .execute();
    const unscoped = await addMember(plain, s.tenant, 'User');
    const save = (headers: Record<string, string>) =>
      plain.app.inject({ method: 'POST', url: '/v3/emailTemplates', headers, payload: { type: 'APPOINTMENT_BOOKED', recipientType: 'CUSTOMER', subject: 'Hi', body: 'Booked' } });
    const refused = await save(scoped.headers);
    assert.equal(refused.statusCode, 403, refused.body);
    assert.equal((await plain.app.inject({ method: 'GET', url: '/v3/emailTemplates', headers: scoped.headers })).statusCode, 200, 'reading stays allowed');
    assert.ok([200, 201].includes((await save(unscoped.headers)).statusCode));
  });
});
