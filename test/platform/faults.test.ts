// Issue 11's findings, each pinned: a connection cut while in use fails only its request (503) and
// the process goes on; an unreachable database is 503 with Retry-After; lock waits are bounded
// (409 BOOKING-137) and a full slot is refused without waiting; hostile input is a cheap 400.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/platform/config.js';
import { openDatabase } from '../../src/platform/database/index.js';
import { isCommitOutcomeUnknown, isDatabaseUnavailable, markCommitOutcomeUnknown, markFromDatabase } from '../../src/platform/database/errors.js';
import { jsonNestingExceeds, textProblem } from '../../src/platform/validation.js';
import { TEST_SECRETS, createTestContext, json, openTestDatabase } from '../helpers/app.js';
import { createWorld } from '../helpers/world.js';
import type { TestContext } from '../helpers/app.js';
import type { App } from '../../src/platform/http/types.js';
import { dayAhead, setup, slot } from '../modules/appointments/fixtures.js';
import type { Setup } from '../modules/appointments/fixtures.js';

const config = loadConfig({ NODE_ENV: 'test', LOG_LEVEL: 'silent' });
let context: TestContext;

before(async () => {
  context = await createTestContext();
});
after(async () => {
  await context.close();
});

function nested(depth: number): string {
  return '['.repeat(depth) + ']'.repeat(depth);
}

describe('hostile input is a 400, cheaply', () => {
  test('the nesting scan counts brackets outside strings only', () => {
    assert.equal(jsonNestingExceeds(nested(64), 64), false);
    assert.equal(jsonNestingExceeds(nested(65), 64), true);
    assert.equal(jsonNestingExceeds(JSON.stringify({ a: '[[[[[[[[[[' }), 3), false, 'brackets in strings do not count');
    assert.equal(jsonNestingExceeds(JSON.stringify({ a: 'quote \\" [[[[' }), 2), false, 'escaped quotes stay inside the string');
  });

  test('a body nested 5,000 deep is refused before parsing on the open routes (signup, login, both token routes)', async () => {
    const deep = `{"a":${nested(5000)}}`;
    for (const url of ['/v3/auth/signup', '/v3/auth/login', '/v3/auth/token', '/v3/oauth/token']) {
      const response = await context.app.inject({ method: 'POST', url, headers: { 'content-type': 'application/json' }, payload: deep });
      assert.equal(response.statusCode, 400, `${url}: ${response.body}`);
      const body = json(response);
      assert.equal(body.success, false);
      assert.match(body.errors[0].msg, /more than 64 levels deep; the limit is 64/);
      assert.equal(body.errors[0].location, 'body');
    }
  });

  test('a body just within the limit is parsed and validated as usual', async () => {
    let value: unknown = 'x';
    for (let i = 0; i < 62; i++) value = [value];
    const response = await context.app.inject({ method: 'POST', url: '/v3/auth/login', payload: { email: 'a@example.com', password: value } });
    assert.equal(response.statusCode, 400, response.body);
    assert.equal(json(response).errors[0].path, 'password', 'an ordinary schema error, not the nesting limit');
  });

  test('the text policy walks without recursion and names the field', () => {
    let deep: unknown = { name: 'ok\u0000' };
    for (let i = 0; i < 20_000; i++) deep = { x: deep };
    assert.equal(textProblem(deep)!.msg, 'must not contain the NUL character');
    assert.deepEqual(textProblem({ a: ['fine', 'bad \udfff'] }), { path: ['a', '1'], msg: 'must be valid Unicode text: it contains an unpaired surrogate (U+DFFF)' });
    assert.equal(textProblem({ emoji: 'paired \ud83d\ude00 is fine' }), null);
    assert.match(textProblem({ x: 'a\ufffe' })!.msg, /noncharacter U\+FFFE/);
    assert.match(textProblem({ x: 'a\u{10FFFF}' })!.msg, /noncharacter U\+10FFFF/);
    assert.deepEqual(textProblem({ ['k\udfff']: 1 })!.path, ['k\udfff']);
  });

  test('a lone surrogate in a location address is a 400 naming the field, not a 500', async () => {
    const tenant = await context.world.tenant();
    const response = await context.app.inject({
      method: 'POST',
      url: '/v3/location',
      headers: { ...tenant.dashboard, 'content-type': 'application/json' },
      // Written by hand: JSON.stringify would escape the surrogate the same way.
      payload: '{"name":"Main","timezoneName":"Europe/London","address":{"city":"\\udfff"}}',
    });
    assert.equal(response.statusCode, 400, response.body);
    const body = json(response);
    assert.equal(body.errors[0].path, 'address.city');
    assert.match(body.errors[0].msg, /unpaired surrogate/);
    const listed = json(await context.app.inject({ method: 'GET', url: '/v3/locations', headers: tenant.dashboard }));
    assert.equal(listed.total, 0, 'nothing was written');
  });

  test('lone surrogates and noncharacters are refused in query strings too', async () => {
    const tenant = await context.world.tenant();
    const response = await context.app.inject({ method: 'GET', url: `/v3/customers?search=${encodeURIComponent('\ufffe')}`, headers: tenant.dashboard });
    assert.equal(response.statusCode, 400, response.body);
    assert.equal(json(response).errors[0].location, 'query');
  });

  test('a path id longer than 100 characters is the specification\'s 400, not Fastify\'s 414', async () => {
    const tenant = await context.world.tenant();
    const response = await context.app.inject({ method: 'GET', url: `/v3/location/${'a'.repeat(150)}`, headers: tenant.dashboard });
    assert.equal(response.statusCode, 400, response.body);
    const body = json(response);
    assert.equal(body.success, false);
    assert.equal(body.errors[0].location, 'params');
  });

  test('a body over the size limit keeps its 400', async () => {
    const small = await createTestContext({ BODY_LIMIT_BYTES: '2048' });
    try {
      const response = await small.app.inject({ method: 'POST', url: '/v3/auth/login', payload: { email: 'a@example.com', password: 'x'.repeat(4096) } });
      assert.equal(response.statusCode, 400, response.body);
      assert.equal(json(response).message, 'Request body is too large');
    } finally {
      await small.close();
    }
  });
});

describe('the database away', () => {
  test('every request that needs it answers 503 with Retry-After and the error body; /readyz 503; /healthz 200', async () => {
    // Nothing listens on port 1: every connection is refused at once.
    const database = await openDatabase({ databaseUrl: 'postgres://postgres@127.0.0.1:1/absent', poolSize: 2, connectTimeoutMs: 1000 });
    const app = await buildApp({ config, database, secrets: TEST_SECRETS });
    try {
      for (const [method, url, payload] of [
        ['POST', '/v3/auth/login', { email: 'a@example.com', password: 'whatever it is' }],
        ['POST', '/v3/auth/signup', { email: 'a@example.com', password: 'a long enough password', name: 'A' }],
        ['POST', '/v3/oauth/token', { grant_type: 'client_credentials', client_id: 'x', client_secret: 'y' }],
        ['GET', '/v3/public/company', undefined],
      ] as const) {
        const response = await app.inject({ method, url, ...(payload ? { payload } : {}), headers: { 'x-client-id': 'pub_x', origin: 'https://example.com' } });
        assert.equal(response.statusCode, 503, `${method} ${url}: ${response.body}`);
        assert.equal(response.headers['retry-after'], '2');
        const body = json(response);
        assert.equal(body.success, false);
        assert.match(body.message, /cannot reach its database/);
        assert.deepEqual(body.errors, []);
      }
      assert.equal((await app.inject({ method: 'GET', url: '/readyz' })).statusCode, 503);
      assert.equal((await app.inject({ method: 'GET', url: '/healthz' })).statusCode, 200);
      const metrics = await app.inject({ method: 'GET', url: '/metrics' });
      assert.match(metrics.body, /slotwise_database_unavailable_total [1-9]/);
    } finally {
      await app.close();
      await database.close();
    }
  });

  test('errors that mean "unreachable" are told apart from query errors, and only the database layer\'s count', () => {
    const db = <T>(error: T) => markFromDatabase(error);
    assert.equal(isDatabaseUnavailable(db(Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }))), true);
    assert.equal(isDatabaseUnavailable(db(new Error('Connection terminated unexpectedly'))), true);
    assert.equal(isDatabaseUnavailable(db(new Error('Query read timeout'))), true, 'a frozen server');
    assert.equal(isDatabaseUnavailable(db(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }))), true);
    assert.equal(isDatabaseUnavailable(db(new AggregateError([Object.assign(new Error('x'), { code: 'ECONNREFUSED' })]))), true);
    assert.equal(isDatabaseUnavailable(db(Object.assign(new Error('cannot execute INSERT in a read-only transaction'), { code: '25006' }))), true, 'a failover to a standby');
    assert.equal(isDatabaseUnavailable(db(Object.assign(new Error('could not extend file'), { code: '53100' }))), true, 'disk full');
    assert.equal(isDatabaseUnavailable(db(Object.assign(new Error('duplicate key'), { code: '23505' }))), false);
    // An exchange that carried a commit: without an answer of the server its outcome is unknown.
    assert.equal(isCommitOutcomeUnknown(markCommitOutcomeUnknown(Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }))), true, 'a broken pipe is no answer');
    assert.equal(isCommitOutcomeUnknown(markCommitOutcomeUnknown(new Error('Query read timeout'))), true);
    assert.equal(isCommitOutcomeUnknown(markCommitOutcomeUnknown(Object.assign(new Error('duplicate key'), { code: '23505', severity: 'ERROR' }))), false, 'a server error is an answer');
    assert.equal(isDatabaseUnavailable(db(new Error('something else'))), false);
    // A client hanging up mid-request raises ECONNRESET too: not the database, never a 503.
    assert.equal(isDatabaseUnavailable(Object.assign(new Error('aborted'), { code: 'ECONNRESET' })), false);
    assert.equal(isDatabaseUnavailable(Object.assign(new Error('fetch failed'), { cause: Object.assign(new Error('x'), { code: 'ENOTFOUND' }) })), false);
  });
});

describe('a booking whose commit got no answer', () => {
  test('is a 503 that says the change may be saved, not a plain retry; and it was saved', { skip: process.env.TEST_DATABASE_URL ? 'the fault is made inside the embedded database' : false }, async () => {
    const pglite = context.database.embedded!;
    const s = await setup(context, { tenant: await context.world.tenant() });
    // The booking's last exchange carries its commit (platform/database/transaction-control.ts):
    // once a Parse of `commit` went by, the Sync after it runs and then its call rejects, as a
    // connection lost before the answer came back would.
    const original = pglite.execProtocolStream.bind(pglite);
    const commitParse = Buffer.from('\0commit\0');
    const holds = (message: Uint8Array, part: Buffer) => Buffer.from(message.buffer, message.byteOffset, message.length).includes(part);
    let commitSent = false;
    pglite.execProtocolStream = ((message: Uint8Array, options?: object) => {
      if (message[0] === 0x50 && holds(message, commitParse)) commitSent = true;
      if (!(commitSent && message[0] === 0x53)) return original(message, options);
      commitSent = false;
      pglite.execProtocolStream = original;
      return original(message, options).then(() => Promise.reject(new Error('Connection terminated unexpectedly')));
    }) as typeof pglite.execProtocolStream;
    try {
      const response = await context.app.inject({
        method: 'POST',
        url: `/v3/appointment?LocationId=${s.locationId}&ServiceId=${s.serviceId}`,
        headers: s.headers,
        payload: { ResourceIds: [s.resourceIds[0]], CustomerId: s.customerId, ...slot(dayAhead(), '10:00') },
      });
      assert.equal(response.statusCode, 503, response.body);
      assert.equal(response.headers['retry-after'], '2');
      assert.match(json(response).message, /may have been saved; read it back, or retry with the same Idempotency-Key/);
    } finally {
      pglite.execProtocolStream = original;
    }
    const saved = await context.database.db.selectFrom('appointments').select('id').where('companyId', '=', s.tenant.companyId).execute();
    assert.equal(saved.length, 1, 'the booking committed');
  });
});

describe('request text that is not what it claims', () => {
  test('a JSON body that is not valid UTF-8 is a 400, not silently "repaired"', async () => {
    const bytes = Buffer.concat([Buffer.from('{"email":"a'), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from('@example.com","password":"whatever it is"}')]);
    const response = await context.app.inject({ method: 'POST', url: '/v3/auth/login', headers: { 'content-type': 'application/json' }, payload: bytes });
    assert.equal(response.statusCode, 400, response.body);
    assert.match(json(response).errors[0].msg, /not valid UTF-8/);
  });

  test('a path with broken percent-encoding is the specification\'s 400, not Fastify\'s body', async () => {
    const tenant = await context.world.tenant();
    for (const url of ['/v3/location/%ED%BF%BF', '/v3/location/%E0%A4%A']) {
      const response = await context.app.inject({ method: 'GET', url, headers: tenant.dashboard });
      assert.equal(response.statusCode, 400, `${url}: ${response.body}`);
      const body = json(response);
      assert.equal(body.success, false);
      assert.equal(body.errors[0].location, 'params');
      assert.equal(body.code, undefined);
    }
  });
});

// The rest needs a PostgreSQL server of the test's own: backends are terminated, locks held.
const skipPostgres = process.env.TEST_DATABASE_URL ? false : 'TEST_DATABASE_URL is not set: connections and lock waits are PostgreSQL\'s';

describe('PostgreSQL faults', { skip: skipPostgres }, () => {
  let waiting: { app: App; close(): Promise<void> };
  let bounded: { app: App; close(): Promise<void> };
  let admin: pg.Client;

  before(async () => {
    // One dedicated database, so terminating "every backend" touches no other test file.
    const patient = await openTestDatabase({ dedicated: true, lockTimeoutMs: 0 });
    const url = (await patient.db.selectNoFrom((eb) => eb.fn<string>('current_database', []).as('name')).executeTakeFirstOrThrow()).name;
    const serverUrl = new URL(process.env.TEST_DATABASE_URL!);
    serverUrl.pathname = `/${url}`;
    const impatient = await openDatabase({ databaseUrl: serverUrl.toString(), poolSize: 3, lockTimeoutMs: 300 });
    const waitingApp = await buildApp({ config, database: patient, secrets: TEST_SECRETS });
    const boundedApp = await buildApp({ config, database: impatient, secrets: TEST_SECRETS });
    waiting = { app: waitingApp, close: async () => { await waitingApp.close(); await patient.close(); } };
    bounded = { app: boundedApp, close: async () => { await boundedApp.close(); await impatient.close(); } };
    admin = new pg.Client({ connectionString: serverUrl.toString() });
    await admin.connect();
  });
  after(async () => {
    await admin?.end();
    await bounded?.close();
    await waiting?.close();
  });

  async function world(app: App): Promise<Setup> {
    return setup({ app } as TestContext, { tenant: await createWorld(app).tenant() });
  }

  const resourceKey = (s: Setup) => `${s.tenant.companyId}:resource:${s.resourceIds[0]}`;
  const book = (app: App, s: Setup, body: Record<string, unknown>) =>
    app.inject({ method: 'POST', url: `/v3/appointment?LocationId=${s.locationId}&ServiceId=${s.serviceId}`, headers: s.headers, payload: { ResourceIds: [s.resourceIds[0]], CustomerId: s.customerId, ...body } });

  async function untilWaitingOnLock(): Promise<void> {
    for (let i = 0; i < 500; i++) {
      const { rows } = await admin.query<{ n: string }>("select count(*) as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock' and pid <> pg_backend_pid()");
      if (Number(rows[0]!.n) > 0) return;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    throw new Error('no request ever waited on the lock');
  }

  test('a backend terminated under a request in flight fails that request with 503; the process goes on and the next request succeeds', async () => {
    const s = await world(waiting.app);
    await admin.query('select pg_advisory_lock(hashtextextended($1, 0))', [resourceKey(s)]);
    const inFlight = book(waiting.app, s, slot(dayAhead(), '10:00'));
    await untilWaitingOnLock();
    // What the fault drill did: every backend of the database but ours.
    await admin.query('select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()');
    const answer = await inFlight;
    assert.equal(answer.statusCode, 503, answer.body);
    assert.equal(answer.headers['retry-after'], '2');
    await admin.query('select pg_advisory_unlock_all()');
    // No restart: the pool dropped the dead connections and opens new ones.
    const again = await book(waiting.app, s, slot(dayAhead(), '10:00'));
    assert.equal(again.statusCode, 201, again.body);
  });

  test('a lock wait past DATABASE_LOCK_TIMEOUT_MS is 409 BOOKING-137 with Retry-After, and nothing is written', async () => {
    const s = await world(bounded.app);
    await admin.query('select pg_advisory_lock(hashtextextended($1, 0))', [resourceKey(s)]);
    try {
      const answer = await book(bounded.app, s, slot(dayAhead(), '11:00'));
      assert.equal(answer.statusCode, 409, answer.body);
      assert.equal(json(answer).code, 'BOOKING-137');
      assert.match(json(answer).message, /retry/);
      assert.equal(answer.headers['retry-after'], '1');
    } finally {
      await admin.query('select pg_advisory_unlock_all()');
    }
    const { rows } = await admin.query('select 1 from appointments where company_id = $1', [s.tenant.companyId]);
    assert.equal(rows.length, 0);
  });

  const holdAt = async (app: App, s: Setup, time: string): Promise<string> => {
    const held = await app.inject({ method: 'POST', url: `/v3/appointment/hold?LocationId=${s.locationId}&ServiceId=${s.serviceId}`, headers: s.headers, payload: { ResourceIds: [s.resourceIds[0]], CustomerId: s.customerId, ...slot(dayAhead(), time) } });
    assert.equal(held.statusCode, 201, held.body);
    return json(held).id as string;
  };
  const bookHold = (app: App, s: Setup, id: string) => app.inject({ method: 'PUT', url: `/v3/appointment/${id}/book`, headers: s.headers, payload: {} });

  /** Sets an appointment's status (and its resource rows') behind the API's back. */
  const setStatus = (s: Setup, id: string, status: string) =>
    Promise.all([
      admin.query('update appointments set status = $3, expires_at = null where company_id = $1 and id = $2', [s.tenant.companyId, id, status]),
      admin.query('update appointment_resources set status = $3, expires_at = null where company_id = $1 and appointment_id = $2', [s.tenant.companyId, id, status]),
    ]);

  /**
   * Starts `request` while another transaction holds the resource's lock, runs `meanwhile` in that
   * transaction once the request waits on the lock, commits, and answers the request's answer.
   */
  async function whileLockHeld<T>(s: Setup, request: () => Promise<T>, meanwhile: () => Promise<unknown> = async () => {}): Promise<T> {
    await admin.query('begin');
    let answer: Promise<T>;
    try {
      await admin.query('select pg_advisory_xact_lock(hashtextextended($1, 0))', [resourceKey(s)]);
      answer = request();
      await untilWaitingOnLock();
      await meanwhile();
      await admin.query('commit');
    } catch (error) {
      await admin.query('rollback');
      throw error;
    }
    return answer;
  }

  test('booking a hold whose lock is held past DATABASE_LOCK_TIMEOUT_MS is 409 BOOKING-137 (the wait is inside slotwise_lock_appointment), and the hold stays a hold', async () => {
    const s = await world(bounded.app);
    const id = await holdAt(bounded.app, s, '13:00');
    await admin.query('select pg_advisory_lock(hashtextextended($1, 0))', [resourceKey(s)]);
    try {
      const answer = await bookHold(bounded.app, s, id);
      assert.equal(answer.statusCode, 409, answer.body);
      assert.equal(json(answer).code, 'BOOKING-137');
    } finally {
      await admin.query('select pg_advisory_unlock_all()');
    }
    const { rows } = await admin.query<{ status: string }>('select status from appointments where company_id = $1 and id = $2', [s.tenant.companyId, id]);
    assert.equal(rows[0]!.status, 'IN');
  });

  test('a hold changed by a transaction that holds its lock: the booking waits, reads the row again under the lock and refuses it', async () => {
    const s = await world(waiting.app);
    const id = await holdAt(waiting.app, s, '14:00');
    // Another transaction holds the resource's lock and cancels the hold (as no route can: it
    // changes the row behind the booking's back); the booking read the hold before waiting.
    await admin.query('begin');
    let booking: ReturnType<typeof bookHold> | undefined;
    try {
      await admin.query('select pg_advisory_xact_lock(hashtextextended($1, 0))', [resourceKey(s)]);
      await admin.query(`update appointments set status = 'CN', updated_at = now() where company_id = $1 and id = $2`, [s.tenant.companyId, id]);
      await admin.query(`update appointment_resources set status = 'CN' where company_id = $1 and appointment_id = $2`, [s.tenant.companyId, id]);
      booking = bookHold(waiting.app, s, id);
      await untilWaitingOnLock();
      await admin.query('commit');
    } catch (error) {
      await admin.query('rollback');
      throw error;
    }
    const answer = await booking;
    assert.equal(answer.statusCode, 400, answer.body);
    assert.equal(json(answer).code, 'BOOKING-108');
    const { rows } = await admin.query<{ status: string }>('select status from appointments where company_id = $1 and id = $2', [s.tenant.companyId, id]);
    assert.equal(rows[0]!.status, 'CN');
  });

  test('a new booking that found its lock held waits, then checks the slot again under the lock: filled meanwhile, it is refused', async () => {
    // The booking's first read goes with its try of the locks (appointments/slot.ts,
    // lockAndCheckSlot); with a lock held that read is only the fast refusal's. Here it finds the
    // slot free, and the transaction holding the lock fills the slot before it lets go.
    const s = await world(waiting.app);
    const id = await holdAt(waiting.app, s, '15:00');
    await setStatus(s, id, 'CN');
    const answer = await whileLockHeld(s, () => book(waiting.app, s, slot(dayAhead(), '15:00')), () => setStatus(s, id, 'BK'));
    assert.equal(answer.statusCode, 400, answer.body);
    assert.equal(json(answer).code, 'BOOKING-105');
    const { rows } = await admin.query('select id from appointments where company_id = $1', [s.tenant.companyId]);
    assert.deepEqual(rows.map((r: { id: string }) => r.id), [id], 'no second appointment in the slot');

    // Not filled meanwhile: the booking goes through once the lock is free.
    const later = await whileLockHeld(s, () => book(waiting.app, s, slot(dayAhead(), '16:00')));
    assert.equal(later.statusCode, 201, later.body);
  });

  test('booking an unchanged hold whose lock is held: its slot is read after the lock, and a slot filled meanwhile is refused', async () => {
    // Book reads its slot in the exchange of its locks (changeExisting's readAhead): the read must
    // see what the lock's holder committed. An earlier hold of the same slot, cancelled behind the
    // API's back, comes back as booked while the hold being booked waits for its lock.
    const s = await world(waiting.app);
    const other = await holdAt(waiting.app, s, '09:00');
    await setStatus(s, other, 'CN');
    const id = await holdAt(waiting.app, s, '09:00');
    const answer = await whileLockHeld(s, () => bookHold(waiting.app, s, id), () => setStatus(s, other, 'BK'));
    assert.equal(answer.statusCode, 400, answer.body);
    assert.equal(json(answer).code, 'BOOKING-105');
    const { rows } = await admin.query<{ status: string }>('select status from appointments where company_id = $1 and id = $2', [s.tenant.companyId, id]);
    assert.equal(rows[0]!.status, 'IN', 'the hold stays a hold');
  });

  test('a slot already full is refused at once (BOOKING-105) even while another transaction holds its lock', async () => {
    const s = await world(bounded.app);
    const first = await book(bounded.app, s, slot(dayAhead(), '12:00'));
    assert.equal(first.statusCode, 201, first.body);
    await admin.query('select pg_advisory_lock(hashtextextended($1, 0))', [resourceKey(s)]);
    try {
      // Were it to wait for the lock it would answer BOOKING-137: the refusal comes from the
      // committed occupancy, checked before waiting.
      const second = await book(bounded.app, s, slot(dayAhead(), '12:00'));
      assert.equal(second.statusCode, 400, second.body);
      assert.equal(json(second).code, 'BOOKING-105');
    } finally {
      await admin.query('select pg_advisory_unlock_all()');
    }
  });
});
