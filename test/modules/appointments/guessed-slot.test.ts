// Guessed slots (src/modules/appointments/slot.ts, guessSlot and guessedLockAndCheck; issue 18,
// twentieth pass): a new booking at a location and service that an earlier booking of this process
// prepared guesses its window read and its locks from what that booking found, and sends its
// catalog read (which tries the locks) in front of the window read, in one exchange: two exchanges
// a booking where there were three. A guess is only a guess: these tests change the catalog after
// it was made and check that the answer is what the catalog says now, and that refusals (400,
// BOOKING-105, 401) write nothing, on the embedded database's one connection too.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { createClientCredentials, createTestContext, json } from '../../helpers/app.js';
import type { TestContext } from '../../helpers/app.js';
import { statementsDuring } from '../../helpers/queries.js';
import { assertBadRequest, dayAhead, newCustomer, request, setup, slot } from './fixtures.js';
import type { Setup } from './fixtures.js';

let context: TestContext;
before(async () => {
  context = await createTestContext({}, { sharedOwner: true });
});
after(() => context.close());

const CATALOG_READ = /^select "s"\."id", "s"\."company_id"/;
const TRY_LOCKS = /slotwise_try_advisory_xact_locks/;
/** The engine window's read (availability/repository.ts, engineWindowStatement). */
const WINDOW_READ = /from blocks b/;
/** Locks taken waiting (appointments/repository.ts, lock and lockRest). */
const WAITED_LOCKS = /pg_advisory_xact_lock\(/;

/**
 * A bookable tenant whose requests carry a write machine token (whose credential check rides
 * with the catalog read; a dashboard user's sign-in reads are exchanges of their own), and the
 * credential's id.
 */
async function machineSetup(options: Parameters<typeof setup>[1] = {}): Promise<Setup & { credentialId: string }> {
  const s = await setup(context, options);
  const { id, clientId, clientSecret } = await createClientCredentials(context.app, s.tenant);
  const form = new URLSearchParams({ grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret });
  const issued = await context.app.inject({ method: 'POST', url: '/v3/oauth/token', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: form.toString() });
  assert.equal(issued.statusCode, 200, issued.body);
  return { ...s, headers: { authorization: `Bearer ${json(issued).access_token as string}` }, credentialId: id };
}

const book = (s: Setup, date: string, time: string, body: Record<string, unknown> = {}) => request(s, 'create', { ...slot(date, time), ...body });

async function sentFor(work: () => Promise<LightMyRequestResponse>) {
  let answer: LightMyRequestResponse | undefined;
  const sent = (await statementsDuring(async () => void (answer = await work()))).map((statement) => statement.text);
  return { answer: answer!, sent };
}

const appointmentsOf = async (s: Setup) =>
  (await context.database.db.selectFrom('appointments').select(['id', 'startTime', 'status']).where('companyId', '=', s.tenant.companyId).orderBy('startTime').execute());

describe('guessed slots', () => {
  test('a second booking at a location and service: two exchanges, the catalog read trying the locks in front of the window read, then the insert with the commit', async () => {
    const s = await machineSetup();
    const date = dayAhead();
    const first = await sentFor(() => book(s, date, '09:00'));
    assert.equal(first.answer.statusCode, 201, first.answer.body);
    assert.equal(first.sent.length, 3, 'the first booking has nothing to guess from');
    assert.doesNotMatch(first.sent[0]!, TRY_LOCKS);
    // The connection's first use of a statement parses it, and pg then sends the two one after the
    // other (platform/database/transaction-control.ts, sendPipelined): measured after that.
    for (const time of ['10:00', '11:00']) assert.equal((await book(s, date, time)).statusCode, 201);
    const { answer, sent } = await sentFor(() => book(s, date, '12:00'));
    assert.equal(answer.statusCode, 201, answer.body);
    assert.equal(sent.length, 2, sent.join('\n---\n'));
    assert.match(sent[0]!, CATALOG_READ);
    assert.match(sent[0]!, TRY_LOCKS);
    assert.match(sent[0]!, WINDOW_READ);
    assert.match(sent[1]!, /insert into "appointments"/);
    const booked = json(answer) as { id: string; resourceIds: string[]; status: string };
    assert.deepEqual(booked.resourceIds, [s.resourceIds[0]]);
    assert.equal(booked.status, 'BK');
    assert.equal((await appointmentsOf(s)).length, 4);
  });

  test('a slot committed appointments fill is refused (BOOKING-105) on a guess, and nothing is written', async () => {
    const s = await machineSetup();
    const date = dayAhead();
    assert.equal((await book(s, date, '10:00')).statusCode, 201);
    const CustomerId = await newCustomer(s);
    const { answer, sent } = await sentFor(() => book(s, date, '10:00', { CustomerId }));
    assertBadRequest(answer, 'BOOKING-105');
    assert.match(sent[0]!, TRY_LOCKS);
    assert.equal(sent.filter((text) => WAITED_LOCKS.test(text)).length, 0, 'a refusal never waits for a lock');
    assert.equal((await appointmentsOf(s)).length, 1);
  });

  test('a daily limit added after the guess was made: the lock it did not try is taken, and the limit holds', async () => {
    const s = await machineSetup();
    const date = dayAhead();
    assert.equal((await book(s, date, '09:00')).statusCode, 201);
    await context.database.db.updateTable('services').set({ dailyBookingLimitCount: 1 }).where('companyId', '=', s.tenant.companyId).where('id', '=', s.serviceId).execute();
    const { answer, sent } = await sentFor(() => book(s, date, '11:00'));
    assertBadRequest(answer, 'BOOKING-106');
    assert.ok(sent.some((text) => WAITED_LOCKS.test(text)), 'the service\'s daily-limit lock, untried by the guess, is taken');
    assert.equal(sent.filter((text) => WINDOW_READ.test(text)).length, 2, 'the window is read again for the plan the catalog gives');
    // Another day is still open, and the basis now remembers the limit: a guess that holds, read once.
    const next = await sentFor(() => book(s, dayAhead(15), '11:00'));
    assert.equal(next.answer.statusCode, 201, next.answer.body);
    assert.ok(next.sent.some((text) => TRY_LOCKS.test(text) && CATALOG_READ.test(text)), next.sent.join('\n---\n'));
    assert.equal(next.sent.filter((text) => WINDOW_READ.test(text)).length, 1, next.sent.join('\n---\n'));
    assert.equal(next.sent.filter((text) => WAITED_LOCKS.test(text)).length, 0);
    assert.equal((await appointmentsOf(s)).length, 2);
  });

  test('the location moved to another zone after the guess: the slot is judged in the new zone', async () => {
    const s = await machineSetup();
    const date = dayAhead();
    assert.equal((await book(s, date, '09:00')).statusCode, 201);
    // 09:00-17:00 local every day, now in Auckland: 10:00 there is the evening before in London,
    // so the guess (London) reads the wrong days.
    const auckland = 'Pacific/Auckland';
    await context.database.db.updateTable('locations').set({ timezoneName: auckland }).where('companyId', '=', s.tenant.companyId).where('id', '=', s.locationId).execute();
    const there = slot(date, '10:00', 60, auckland);
    const { answer, sent } = await sentFor(() => request(s, 'create', there));
    assert.equal(answer.statusCode, 201, answer.body);
    assert.equal(sent.filter((text) => WINDOW_READ.test(text)).length, 2, sent.join('\n---\n'));
    // The same slot again is taken; a London 10:00 is 22:00 or 23:00 in Auckland, never open.
    assertBadRequest(await request(s, 'create', { ...there, CustomerId: await newCustomer(s) }), 'BOOKING-105');
    const london = await book(s, date, '10:00', { CustomerId: await newCustomer(s) });
    assert.equal(london.statusCode, 400, london.body);
    assert.match(json(london).message as string, /not open for booking/);
    assert.equal((await appointmentsOf(s)).length, 2);
  });

  test('a resource unlinked, a location archived after the guess: the 400 of each, nothing written, on the transaction\'s own connection', async () => {
    const s = await machineSetup();
    const date = dayAhead();
    assert.equal((await book(s, date, '09:00')).statusCode, 201);
    await context.database.db.deleteFrom('resourceServices').where('companyId', '=', s.tenant.companyId).where('resourceId', '=', s.resourceIds[0]!).execute();
    const unlinked = await book(s, date, '10:00');
    const body = assertBadRequest(unlinked, 'AVAILABILITY-104');
    assert.equal(body.errors[0]?.path, 'ResourceIds.0');
    await context.database.db.updateTable('locations').set({ archivedAt: new Date() }).where('companyId', '=', s.tenant.companyId).where('id', '=', s.locationId).execute();
    const archived = await book(s, date, '11:00');
    assert.equal(archived.statusCode, 400, archived.body);
    assert.equal((await appointmentsOf(s)).length, 1);
  });

  test('a revoked machine credential on a guess: 401, nothing written', async () => {
    const s = await machineSetup();
    const date = dayAhead();
    assert.equal((await book(s, date, '09:00')).statusCode, 201);
    await context.database.db.updateTable('clientCredentials').set({ revokedAt: new Date() }).where('companyId', '=', s.tenant.companyId).where('id', '=', s.credentialId).execute();
    const { answer, sent } = await sentFor(() => book(s, date, '10:00'));
    assert.equal(answer.statusCode, 401, answer.body);
    assert.match(sent[0]!, TRY_LOCKS, 'the refused request was a guessed one');
    assert.equal((await appointmentsOf(s)).length, 1);
  });

  test('many guessed bookings of one slot at once: one is booked', async () => {
    const s = await machineSetup({ service: { bookingsPerSlot: 1 } });
    const date = dayAhead();
    assert.equal((await book(s, date, '09:00')).statusCode, 201);
    const customers = await Promise.all(Array.from({ length: 8 }, () => newCustomer(s)));
    const answers = await Promise.all(customers.map((CustomerId) => book(s, date, '15:00', { CustomerId })));
    const booked = answers.filter((a) => a.statusCode === 201);
    assert.equal(booked.length, 1, answers.map((a) => `${a.statusCode} ${a.body}`).join('\n'));
    for (const refused of answers.filter((a) => a.statusCode !== 201)) {
      assert.ok(refused.statusCode === 400 || refused.statusCode === 409, refused.body);
      if (refused.statusCode === 400) assert.equal(json(refused).code, 'BOOKING-105', refused.body);
    }
    assert.equal((await appointmentsOf(s)).length, 2);
  });
});
