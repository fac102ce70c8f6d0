// An operation on an existing appointment takes its advisory locks and the row lock in one
// exchange (slotwise_lock_appointment, migrations/0016; issue 18) and reads the row again only
// when its version (xmin) changed since the read before the locks. These tests check both paths:
// an unchanged row is not read again, a changed or deleted one is, and the operation then acts on
// the database's version. An operation's first read under the locks may go in the same exchange
// (readAhead), and counts only for an unchanged row.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { withLeading } from '../../../src/platform/database/transaction-control.js';
import type { Db } from '../../../src/platform/database/index.js';
import type { LeadingStatement } from '../../../src/platform/database/transaction-control.js';
import { createTestContext, json } from '../../helpers/app.js';
import type { TestContext } from '../../helpers/app.js';
import { queriesDuring } from '../../helpers/queries.js';
import { changeExisting, readVisible } from '../../../src/modules/appointments/operation.js';
import type { AppointmentRow } from '../../../src/modules/appointments/repository.js';
import type { Principal } from '../../../src/platform/auth/principal.js';
import { ApiError } from '../../../src/platform/errors.js';
import { create, dayAhead, hold, operate, setup, slot } from './fixtures.js';
import type { Appointment, Setup } from './fixtures.js';

let context: TestContext;
before(async () => {
  context = await createTestContext({}, { sharedOwner: true });
});
after(() => context.close());

const LOCK_STATEMENT = /slotwise_lock_appointment/;
const ROW_LOCK_READ = /for update/i;
/** An appointment's read with the catalog read of its location and service behind it (appointments/slot.ts, readStoredWithTarget). */
const STORED_PAIR = /xmin[\s\S]*from "appointments" as "sa"/;

const machine = (s: Setup): Principal => ({ kind: 'machine', companyId: s.tenant.companyId, clientId: 'lock-appointment-test', scopes: ['write'] });

/**
 * changeExisting with `known` as the row read before the locks; answers the row the work was given
 * and what it was given of readAhead's answer.
 */
async function changeWith(s: Setup, known: AppointmentRow, readAhead?: (trx: Db, row: AppointmentRow, locks: LeadingStatement) => Promise<string>) {
  let given: AppointmentRow | undefined;
  let ahead: string | undefined;
  const sent = await queriesDuring(() =>
    changeExisting(
      { db: context.database.db, touch: async () => {} },
      {
        companyId: s.tenant.companyId,
        principal: machine(s),
        id: known.id,
        known,
        keys: (row) => row.resourceIds.map((resourceId) => `${s.tenant.companyId}:resource:${resourceId}`),
        ...(readAhead ? { readAhead } : {}),
        work: async (_trx, row, read) => {
          given = row;
          ahead = read;
          return { result: undefined, changed: [] };
        },
      },
    ),
  );
  return { given: given!, sent, ahead };
}

/** A readAhead that reads the appointment's notes, in the exchange of the locks. */
const readNotes = async (trx: Db, row: AppointmentRow, locks: LeadingStatement) => {
  const query = sql<{ notes: string | null }>`select notes from appointments where company_id = ${row.companyId} and id = ${row.id}`.compile(trx);
  const read = await trx.executeQuery(withLeading(query, locks));
  return `notes: ${read.rows[0]?.notes ?? ''}`;
};

const readRow = (s: Setup, id: string) => readVisible(context.database.db, machine(s), { companyId: s.tenant.companyId, id });

test('booking a hold sends its locks and row lock as one statement and does not read the row again', async () => {
  const s = await setup(context);
  // Two holds booked before the one measured. A statement is named from its second use in the
  // process, and a led statement named but not yet prepared on the connection goes in an exchange
  // of its own (platform/database/transaction-control.ts): what earlier test files of this process
  // sent decides where the window's read stands, so it is made prepared here.
  for (const day of [dayAhead(15), dayAhead(16)]) assert.equal((await operate(s, (await hold(s, slot(day, '10:00'))).id, 'book', {})).statusCode, 200);
  const held = await hold(s, slot(dayAhead(), '10:00'));
  const sent = await queriesDuring(async () => {
    const answer = await operate(s, held.id, 'book', {});
    assert.equal(answer.statusCode, 200, answer.body);
    assert.equal(json<Appointment>(answer).status, 'BK');
  });
  assert.equal(sent.filter((text) => LOCK_STATEMENT.test(text)).length, 1);
  assert.deepEqual(sent.filter((text) => ROW_LOCK_READ.test(text)), []);
  // The slot's read (the engine's window) goes in the same exchange, behind the locks.
  const locks = sent.find((text) => LOCK_STATEMENT.test(text))!;
  assert.match(locks, /appointment_resources/);
  assert.equal(sent.filter((text) => text.includes('appointment_resources') && text.includes('as busy')).length, 1, 'the window is read once');
});

test('booking and reserving a hold read the row and its location and service in one exchange: three exchanges in all', async () => {
  const s = await setup(context);
  // Prepared first (see the test above): a led statement not yet prepared goes in an exchange of its own.
  for (const day of [dayAhead(17), dayAhead(18)]) assert.equal((await operate(s, (await hold(s, slot(day, '10:00'))).id, 'book', {})).statusCode, 200);
  for (const day of [dayAhead(19), dayAhead(20)]) assert.equal((await operate(s, (await hold(s, slot(day, '10:00'))).id, 'reserve', {})).statusCode, 200);
  for (const operation of ['book', 'reserve']) {
    const held = await hold(s, slot(dayAhead(21), operation === 'book' ? '10:00' : '12:00'));
    const sent = await queriesDuring(async () => {
      const answer = await operate(s, held.id, operation, {});
      assert.equal(answer.statusCode, 200, answer.body);
      assert.equal(json<Appointment>(answer).status, operation === 'book' ? 'BK' : 'RS');
    });
    // After the caller's authentication: the row's read, then the catalog read that takes the
    // location and the service from the row, in one exchange; then the locks with the slot's read;
    // then the update with the commit.
    const pair = sent.findIndex((text) => STORED_PAIR.test(text));
    assert.ok(pair >= 0, `${operation}: ${sent.join('\n---\n')}`);
    assert.equal(sent.length - pair, 3, `${operation}: ${sent.slice(pair).join('\n---\n')}`);
    assert.match(sent[pair + 1]!, /slotwise_lock_appointment/);
  }
});

test('a reschedule reads the row and the catalog (with the resources its body names) in one exchange, and the new slot with the locks', async () => {
  const s = await setup(context);
  const reschedule = async (day: string) => {
    const booked = await create(s, slot(day, '10:00'));
    return queriesDuring(async () => {
      const answer = await operate(s, booked.id, 'reschedule', { ...slot(day, '12:00'), ResourceIds: [s.resourceIds[0]] });
      assert.equal(answer.statusCode, 200, answer.body);
      assert.equal(Date.parse(json<Appointment>(answer).startTime), Date.parse(slot(day, '12:00').Unavailability.startTime));
    });
  };
  // Prepared first (see the first test): a led statement not yet prepared goes in an exchange of its own.
  await reschedule(dayAhead(22));
  await reschedule(dayAhead(23));
  const sent = await reschedule(dayAhead(24));
  const pair = sent.findIndex((text) => STORED_PAIR.test(text));
  assert.ok(pair >= 0, sent.join('\n---\n'));
  // The body's resources are read along: the catalog read checks that they are live records.
  assert.match(sent[pair]!, /"live_resources"/);
  assert.doesNotMatch(sent[pair]!, /'\[\]'::json as "live_resources"/);
  const locks = sent[pair + 1]!;
  assert.match(locks, /slotwise_lock_appointment/);
  assert.match(locks, /as busy/, 'the new slot is read behind the locks');
  assert.equal(sent.slice(pair).filter((text) => text.includes('as busy')).length, 1, 'and only there');
  assert.equal(sent.filter((text) => text.includes('from "services" as "s"')).length, 0, 'the catalog is not read again');
  // The pair, the locks with the slot's read, then the writes.
  assert.ok(sent.length - pair <= 6, sent.slice(pair).join('\n---\n'));
});

test('a plan made stale by a migration: the pool wrapper sends the row and catalog pair again, and the booking goes through', async () => {
  // A database of its own: the test changes a column's type, which other tests' statements return.
  const own = await createTestContext({}, { dedicatedDatabase: true, sharedOwner: true });
  try {
    const s = await setup(own);
    for (const day of [dayAhead(15), dayAhead(16)]) assert.equal((await operate(s, (await hold(s, slot(day, '10:00'))).id, 'book', {})).statusCode, 200);
    const held = await hold(s, slot(dayAhead(), '10:00'));
    // The row's read returns notes: a new type makes its prepared plan stale (0A000) on every connection.
    await sql`alter table appointments alter column notes type varchar(20000)`.execute(own.database.db);
    const sent = await queriesDuring(async () => {
      const answer = await operate(s, held.id, 'book', {});
      assert.equal(answer.statusCode, 200, answer.body);
      assert.equal(json<Appointment>(answer).status, 'BK');
    });
    // On a pool of connections (PostgreSQL) the booking may get one where the pair was never
    // prepared, and then nothing is stale: only the embedded database (one connection) is sure to
    // send the stale pair, and the same pair again (platform/database/index.ts).
    const pairs = sent.flatMap((text, i) => (STORED_PAIR.test(text) ? [i] : []));
    assert.ok(pairs.length === 1 || pairs.length === 2, sent.join('\n---\n'));
    if (!process.env.TEST_DATABASE_URL) assert.equal(pairs.length, 2, 'sent again after the stale plan');
    // Nothing else reads the row or the catalog: the next exchange takes the locks.
    assert.match(sent[pairs.at(-1)! + 1]!, /slotwise_lock_appointment/);
    assert.equal(sent.filter((text) => text.includes('"services" as "s"')).length, pairs.length, 'the catalog read only in the pairs');
  } finally {
    await own.close();
  }
});

test('a read ahead of an unchanged row goes with the locks, and the work is given its answer', async () => {
  const s = await setup(context);
  const held = await hold(s, slot(dayAhead(), '16:00'));
  const known = await readRow(s, held.id);
  const { given, sent, ahead } = await changeWith(s, known, readNotes);
  assert.equal(given, known);
  assert.equal(ahead, 'notes: ');
  const exchange = sent.filter((text) => LOCK_STATEMENT.test(text));
  assert.equal(exchange.length, 1);
  assert.match(exchange[0]!, /select notes from appointments/);
  // Answered without a statement of its own: the locks go alone, and the work still gets the answer.
  const alone = await changeWith(s, known, async () => 'nothing read');
  assert.equal(alone.ahead, 'nothing read');
  assert.equal(alone.sent.filter((text) => LOCK_STATEMENT.test(text)).length, 1);
});

test('a read ahead of a row changed meanwhile counts for nothing, its refusal neither; for an unchanged row its refusal stands', async () => {
  const s = await setup(context);
  const held = await hold(s, slot(dayAhead(), '09:00'));
  const known = await readRow(s, held.id);
  await sql`update appointments set notes = 'changed meanwhile', updated_at = now() where company_id = ${s.tenant.companyId} and id = ${held.id}`.execute(context.database.db);
  // It read the new notes (after the locks), but of a row whose version it did not know.
  const changed = await changeWith(s, known, readNotes);
  assert.equal(changed.given.notes, 'changed meanwhile');
  assert.equal(changed.ahead, undefined);
  const refusing = async (trx: Db, row: AppointmentRow, locks: LeadingStatement) => {
    await readNotes(trx, row, locks);
    throw new ApiError(400, 'refused by the read ahead');
  };
  const refusedBefore = await changeWith(s, known, refusing);
  assert.equal(refusedBefore.given.notes, 'changed meanwhile', 'the work ran on the new version');
  const current = await readRow(s, held.id);
  await assert.rejects(changeWith(s, current, refusing), /refused by the read ahead/);
  // Refused before it sent anything: the locks were never sent either, and the refusal stands.
  const sent = await queriesDuring(() =>
    assert.rejects(
      changeWith(s, current, async () => {
        throw new ApiError(400, 'refused before any statement');
      }),
      /refused before any statement/,
    ),
  );
  assert.deepEqual(sent.filter((text) => LOCK_STATEMENT.test(text)), []);
});

test('an unchanged row: the work is given the row read before the locks, and nothing reads it again', async () => {
  const s = await setup(context);
  const held = await hold(s, slot(dayAhead(), '11:00'));
  const known = await readRow(s, held.id);
  assert.match(known.rowVersion ?? '', /^\d+$/);
  const { given, sent } = await changeWith(s, known);
  assert.equal(given, known);
  assert.deepEqual(sent.filter((text) => ROW_LOCK_READ.test(text)), []);
});

test('a row changed after it was read: read again under the locks, and the work is given the new version', async () => {
  const s = await setup(context);
  const held = await hold(s, slot(dayAhead(), '12:00'));
  const known = await readRow(s, held.id);
  // Another request's change, committed between this operation's read and its locks.
  await sql`update appointments set notes = 'changed meanwhile', updated_at = now() where company_id = ${s.tenant.companyId} and id = ${held.id}`.execute(context.database.db);
  const { given, sent } = await changeWith(s, known);
  assert.notEqual(given, known);
  assert.equal(given.notes, 'changed meanwhile');
  assert.notEqual(given.rowVersion, known.rowVersion);
  assert.equal(sent.filter((text) => ROW_LOCK_READ.test(text)).length, 1);
});

test('the location\'s time zone changed after the row was read: read again under the locks (the zone is not the appointment\'s version)', async () => {
  const s = await setup(context);
  const held = await hold(s, slot(dayAhead(), '15:00'));
  const known = await readRow(s, held.id);
  await sql`update locations set timezone_name = 'Europe/Paris' where company_id = ${s.tenant.companyId} and id = ${s.locationId}`.execute(context.database.db);
  const { given, sent } = await changeWith(s, known);
  assert.notEqual(given, known);
  assert.equal(given.timezoneName, 'Europe/Paris');
  assert.equal(given.rowVersion, known.rowVersion);
  assert.equal(sent.filter((text) => ROW_LOCK_READ.test(text)).length, 1);
});

test('a row deleted after it was read: 404, as when the read under the locks finds nothing', async () => {
  const s = await setup(context);
  const held = await hold(s, slot(dayAhead(), '13:00'));
  const known = await readRow(s, held.id);
  await context.database.db.transaction().execute(async (trx) => {
    for (const table of ['outbox_events', 'appointment_resources']) await sql`delete from ${sql.table(table)} where company_id = ${s.tenant.companyId} and appointment_id = ${held.id}`.execute(trx);
    await sql`delete from appointments where company_id = ${s.tenant.companyId} and id = ${held.id}`.execute(trx);
  });
  await assert.rejects(changeWith(s, known), (error: unknown) => error instanceof ApiError && error.statusCode === 404);
});

test('a row read without a version (built in memory): read again under the locks', async () => {
  const s = await setup(context);
  const held = await hold(s, slot(dayAhead(), '14:00'));
  const { rowVersion: _version, ...known } = await readRow(s, held.id);
  const { given, sent } = await changeWith(s, known);
  assert.notEqual(given, known);
  assert.equal(given.id, held.id);
  assert.equal(sent.filter((text) => ROW_LOCK_READ.test(text)).length, 1);
});

test('every change answers the appointment as stored (the update answers only its id; the row under the locks and the change make the answer)', async () => {
  const s = await setup(context);
  const stored = async (id: string) => {
    const read = await context.app.inject({ method: 'GET', url: `/v3/appointment/${id}`, headers: s.headers });
    assert.equal(read.statusCode, 200, read.body);
    return json<Appointment>(read);
  };
  const held = await hold(s, slot(dayAhead(), '10:00'));
  for (const [operation, payload] of [
    ['reserve', { allowPaddingOverflow: true }],
    ['book', {}],
    ['confirm', {}],
    ['', { notes: 'changed', field1: 'one' }],
    ['cancel', {}],
  ] as const) {
    const answer = await operate(s, held.id, operation, payload);
    assert.equal(answer.statusCode, 200, `${operation}: ${answer.body}`);
    assert.deepEqual(json<Appointment>(answer), await stored(held.id), operation || 'update');
  }
  // Booking a hold without a customer: the customer found or created goes into the answer too.
  const bare = await hold(s, { ...slot(dayAhead(), '12:00'), CustomerId: undefined });
  const booked = await operate(s, bare.id, 'book', { CustomerId: s.customerId });
  assert.equal(booked.statusCode, 200, booked.body);
  assert.deepEqual(json<Appointment>(booked), await stored(bare.id));
  assert.equal(json<Appointment>(booked).customerId, s.customerId);
});
