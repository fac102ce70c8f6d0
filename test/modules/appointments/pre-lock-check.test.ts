// The pre-lock check of a new booking or hold (issue 11: a slot that committed appointments already
// fill is refused before any transaction or lock) reads the named resources' busy time in the same
// statement as the catalog (issue 18), so a booking is one exchange shorter. These tests watch the
// statements sent (test/helpers/queries.ts) and check that the folded read covers what the separate
// read did: the service's padding after the slot, expired holds, and pools (no resource named),
// which keep the separate read.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { createTestContext } from '../../helpers/app.js';
import type { TestContext } from '../../helpers/app.js';
import { queriesDuring } from '../../helpers/queries.js';
import { assertBadRequest, dayAhead, request, setup, slot } from './fixtures.js';
import type { Setup } from './fixtures.js';

let context: TestContext;
before(async () => {
  context = await createTestContext({}, { sharedOwner: true });
});
after(() => context.close());

const CATALOG_READ = /^select "s"\."id", "s"\."company_id"/;

/**
 * The first statement of a booking's transaction: its locks (the transaction's `begin` rides in
 * front of it, src/platform/database/transaction-control.ts, unseen by node-postgres's query).
 */
const LOCKS = /slotwise_try_advisory_xact_locks|^begin/i;

/** The statements of a request: whether it took locks, and which statements read busy time before them. */
async function sentFor(work: () => Promise<{ statusCode: number; body: string }>) {
  let answer: { statusCode: number; body: string } | undefined;
  const sent = await queriesDuring(async () => void (answer = await work()));
  const begin = sent.findIndex((text) => LOCKS.test(text));
  const beforeLocks = begin === -1 ? sent : sent.slice(0, begin);
  return {
    answer: answer!,
    began: begin !== -1,
    catalogReads: beforeLocks.filter((text) => CATALOG_READ.test(text)),
    separateBusyReads: beforeLocks.filter((text) => !CATALOG_READ.test(text) && text.includes('appointment_resources')),
  };
}

const book = (s: Setup, time: string, body: Record<string, unknown> = {}) => request(s, 'create', { ...slot(dayAhead(), time), ...body });

describe('the pre-lock check reads busy time with the catalog', () => {
  test('a free slot of a named resource: the catalog read carries the busy read, and no other statement reads busy time before the locks', async () => {
    const s = await setup(context);
    assert.equal((await book(s, '09:00')).statusCode, 201);
    const sent = await sentFor(() => book(s, '10:00'));
    assert.equal(sent.answer.statusCode, 201, sent.answer.body);
    assert.equal(sent.catalogReads.length, 1);
    assert.match(sent.catalogReads[0]!, /appointment_resources/);
    assert.deepEqual(sent.separateBusyReads, []);
    assert.ok(sent.began);
  });

  test('a slot committed appointments fill is refused (BOOKING-105) before any transaction', async () => {
    const s = await setup(context);
    assert.equal((await book(s, '10:00')).statusCode, 201);
    const sent = await sentFor(() => book(s, '10:00'));
    assertBadRequest(sent.answer as never, 'BOOKING-105');
    assert.equal(sent.began, false);
    assert.deepEqual(sent.separateBusyReads, []);
  });

  test('the service\'s padding after the slot reaches the next appointment: refused before any transaction', async () => {
    // 30 minutes of padding: 11:00-12:00 keeps the resource until 12:30, into the 12:00 booking.
    const s = await setup(context, { service: { padding: 30 } });
    assert.equal((await book(s, '12:00')).statusCode, 201);
    const sent = await sentFor(() => book(s, '11:00'));
    assertBadRequest(sent.answer as never, 'BOOKING-105');
    assert.equal(sent.began, false);
    // Without padding the same two slots are both free.
    const plain = await setup(context);
    assert.equal((await book(plain, '12:00')).statusCode, 201);
    assert.equal((await book(plain, '11:00')).statusCode, 201);
  });

  test('an expired hold does not fill the slot', async () => {
    const s = await setup(context);
    const held = await request(s, 'hold', slot(dayAhead(), '13:00'));
    assert.equal(held.statusCode, 201, held.body);
    const { id } = JSON.parse(held.body) as { id: string };
    const past = new Date(Date.now() - 60_000);
    for (const table of ['appointments', 'appointment_resources'] as const) {
      const idColumn = table === 'appointments' ? sql.ref('id') : sql.ref('appointment_id');
      await sql`update ${sql.table(table)} set expires_at = ${past} where company_id = ${s.tenant.companyId} and ${idColumn} = ${id}`.execute(context.database.db);
    }
    const sent = await sentFor(() => book(s, '13:00'));
    assert.equal(sent.answer.statusCode, 201, sent.answer.body);
    assert.deepEqual(sent.separateBusyReads, []);
  });

  test('no resource named (a pool): the busy time of the bookable resources is read on its own, and a full slot is still refused before any transaction', async () => {
    const s = await setup(context, { service: { roundRobin: 'RANDOM' } });
    assert.equal((await book(s, '14:00', { ResourceIds: undefined })).statusCode, 201);
    const sent = await sentFor(() => book(s, '14:00', { ResourceIds: undefined }));
    assertBadRequest(sent.answer as never, 'BOOKING-105');
    assert.equal(sent.began, false);
    assert.equal(sent.separateBusyReads.length, 1);
    assert.doesNotMatch(sent.catalogReads[0]!, /appointment_resources/);
  });
});
