import { randomUUID } from 'node:crypto';
import type { Selectable } from 'kysely';
import type { Principal } from '../../platform/auth/principal.js';
import type { AppointmentsTable } from '../../platform/database/schema.js';
import { ApiError, notFound, validationError } from '../../platform/errors.js';
import { assertCredentialChecked } from '../../platform/auth/credential-check.js';
import type { Db } from '../../platform/database/index.js';
import { withLeading } from '../../platform/database/transaction-control.js';
import type { LeadingStatement } from '../../platform/database/transaction-control.js';
import { appointmentRepository as repo } from './repository.js';
import type { AppointmentRow } from './repository.js';
import { customFields, toApi } from './mapper.js';
import { CUSTOM_FIELD_NAMES } from '../catalog/fields.js';
import type { Appointment } from './mapper.js';
import { bookingTransaction, dailyLimitsKey, eventsOf, lockKeys, touchChanged, visible } from './operation.js';
import type { BookingContext } from './operation.js';
import { createIdempotency, requestHash } from './idempotency.js';
import type { KeyedRequest } from './idempotency.js';
import { resolveCustomer } from './customers.js';
import { slotUnavailable } from './problems.js';
import type { PreparedSlot, SlotChecks } from './slot.js';
import type { NewSlotQuery, SlotRequest } from './schemas.js';
import { countedUnder } from '../availability/status-filter.js';
import { HOLD_STATUS } from '../../domain/appointment-status.js';

/** Create (BK) and hold (IN): a new appointment in a free slot. */

export interface NewSlotRequest {
  query: NewSlotQuery;
  body: SlotRequest;
  idempotencyKey?: string | undefined;
}

export type NewSlotResult = { appointment: Appointment; replayed: boolean };

/** CustomerId may come in the body or the query; both, and different, is a 400. */
function withQueryCustomer(query: NewSlotQuery, body: SlotRequest): SlotRequest {
  if (query.CustomerId === undefined) return body;
  if (body.CustomerId !== undefined && body.CustomerId !== query.CustomerId) {
    throw validationError('query', 'CustomerId', 'CustomerId in the query and CustomerId in the body differ; send it once');
  }
  return { ...body, CustomerId: query.CustomerId };
}

/**
 * The company's live public holds (how many, and when the first expires); `leading` goes in front
 * of the count in the same exchange (the try of the hold's locks).
 */
async function livePublicHolds(trx: Db, companyId: string, now: number, leading?: LeadingStatement) {
  const query = trx
    .selectFrom('appointments')
    .select((eb) => [eb.fn.countAll<string>().as('live'), eb.fn.min('expiresAt').as('firstExpiry')])
    .where('companyId', '=', companyId)
    .where('createdVia', '=', 'public')
    // Live holds: the hold rule of domain/appointment-status.ts, in SQL.
    .where(countedUnder([HOLD_STATUS], 'appointments', new Date(now)))
    .compile();
  const result = await trx.executeQuery(leading ? withLeading(query, leading) : query);
  return result.rows[0]!;
}

/**
 * A public booking page may hold only so many slots at once (issue 12: a script held a whole
 * day). 429 with Retry-After until the first of them is booked or expires.
 */
function assertPublicHoldRoom(row: { live: string | number; firstExpiry: Date | string | null }, cap: number, now: number) {
  if (Number(row.live) < cap) return;
  const firstExpiry = row.firstExpiry ? new Date(row.firstExpiry).getTime() : now + 60_000;
  const seconds = Math.max(1, Math.ceil((firstExpiry - now) / 1000));
  throw new ApiError(429, `Public write rate limit exceeded: the booking page already holds ${cap} slots; try again in ${seconds} seconds`, [], undefined, {
    'Retry-After': String(seconds),
  });
}

const NO_CUSTOM_FIELDS = Object.fromEntries(CUSTOM_FIELD_NAMES.map((name) => [name, null])) as Record<(typeof CUSTOM_FIELD_NAMES)[number], null>;

/**
 * The row of a new appointment in the prepared slot, every column given (the defaults of
 * migrations/0003 included), so its answer and its event are built before the one statement that
 * inserts it. created_at is the application's wall time, as updates set updated_at.
 */
function newAppointment(
  kind: 'create' | 'hold',
  principal: Principal,
  slot: PreparedSlot,
  fields: { companyId: string; id: string; customerId: string | null; body: SlotRequest; now: number; allowPaddingOverflow: boolean; ignoreExternalEvents: boolean },
): Selectable<AppointmentsTable> {
  const { prepared } = slot;
  const { body, now } = fields;
  const written = new Date();
  return {
    ...NO_CUSTOM_FIELDS,
    confirmed: false,
    rescheduledFromId: null,
    rescheduledToId: null,
    customerUnconfirmed: false,
    createdAt: written,
    updatedAt: written,
    companyId: fields.companyId,
    id: fields.id,
    locationId: prepared.location.id,
    serviceId: prepared.service.id,
    customerId: fields.customerId,
    status: kind === 'create' ? 'BK' : 'IN',
    startTime: new Date(slot.startMs),
    endTime: new Date(slot.endMs),
    duration: prepared.duration,
    padding: prepared.service.padding,
    expiresAt: kind === 'hold' ? new Date(now + prepared.location.bookingTimerMinutes * 60_000) : null,
    allowPaddingOverflow: fields.allowPaddingOverflow,
    ignoreExternalEvents: fields.ignoreExternalEvents,
    notes: body.notes ?? null,
    legacyId: body.legacyId ?? null,
    createdVia: principal.kind === 'public' ? 'public' : 'api',
    ...customFields(body),
  };
}

export function createNewSlotOperations(ctx: BookingContext & { publicHoldsPerCompany?: number | undefined }, slots: SlotChecks) {
  const { db } = ctx;
  const { storedAnswer, idempotent } = createIdempotency(ctx.clock);

  /**
   * A retry of a request that already succeeded is answered before the slot is checked again
   * (the booking exists even if the request would no longer pass: lead time, archived records),
   * but not before the caller's location scope: a narrowed user does not read it back.
   */
  async function replayOf(principal: Principal, keyed: KeyedRequest): Promise<NewSlotResult | null> {
    if (!keyed.key) return null;
    const replay = await storedAnswer(db, { ...keyed, key: keyed.key });
    if (!replay) return null;
    if (!visible(principal, { ...replay, createdVia: principal.kind === 'public' ? 'public' : 'api' })) throw notFound('Appointment not found');
    return { appointment: replay, replayed: true };
  }

  async function takeNewSlot(kind: 'create' | 'hold', companyId: string, principal: Principal, request: NewSlotRequest): Promise<NewSlotResult> {
    const now = ctx.clock();
    const { query } = request;
    const body = withQueryCustomer(query, request.body);
    const keyed: KeyedRequest = { companyId, key: request.idempotencyKey, hash: requestHash({ kind, principal, query, body }) };
    const earlier = await replayOf(principal, keyed);
    if (earlier) return earlier;
    const slot = await slots.prepareSlot(companyId, principal, {
      target: { locationId: query.LocationId, serviceId: query.ServiceId, idsFrom: 'query' },
      body,
      checkLeadTime: true,
      now,
      customerIdLocation: request.body.CustomerId === undefined && query.CustomerId !== undefined ? 'query' : 'body',
      readCommittedBusy: true,
    });
    const { prepared } = slot;
    const allowPaddingOverflow = body.allowPaddingOverflow ?? prepared.service.allowPaddingOverflow;
    const ignoreExternalEvents = body.ignoreExternalEvents ?? prepared.service.ignoreExternalEvents;
    // Before any transaction or lock: a slot that committed appointments already fill is refused
    // with one indexed read, so a crowd after a hot slot is turned away at once (issue 11).
    // A retry of this very request may be what fills it: the first attempt committed after the
    // replay check above (its answer was stored in the same transaction), so look once more.
    if (await slots.committedFull(companyId, slot, now)) {
      const replay = await replayOf(principal, keyed);
      if (replay) return replay;
      throw slotUnavailable();
    }
    assertCredentialChecked(principal);
    let created: AppointmentRow | undefined;
    const result = await bookingTransaction(db, async (trx) => {
      created = undefined;
      return idempotent(trx, keyed, async () => {
        const customerId = await resolveCustomer(trx, companyId, body, kind === 'create');
        const publicHold = kind === 'hold' && principal.kind === 'public' && ctx.publicHoldsPerCompany !== undefined;
        const check = { companyId, customerId, now, exclude: [], countsAsActive: true, checkLeadTime: true, allowPaddingOverflow, ignoreExternalEvents };
        const keys = lockKeys(companyId, { resources: prepared.resources.map((r) => r.id), customerId, dailyLimits: dailyLimitsKey(prepared) });
        let resourceIds: string[];
        if (publicHold) {
          // Public holds of a company are counted under a lock of their own, so the cap holds; the
          // count is read between the locks and the slot's check, behind the try of every lock in
          // one exchange. Someone holds one of these locks: when what is committed already fills
          // the slot, refuse now instead of queueing behind them only to be refused (the fast
          // refusal of issue 11); else wait for the rest, and count again under all of them.
          const publicKeys = [...keys, `${companyId}:public-holds`];
          const tried = repo.tryLocks(publicKeys);
          let live = await livePublicHolds(trx, companyId, now, tried);
          const taken = await repo.locksTaken(tried);
          if (taken >= 0) {
            await slots.checkSlot(trx, slot, check);
            await repo.lockRest(trx, publicKeys, taken);
            live = await livePublicHolds(trx, companyId, now);
          }
          assertPublicHoldRoom(live, ctx.publicHoldsPerCompany!, now);
          resourceIds = await slots.checkSlot(trx, slot, check);
        } else {
          // The same, with the locks' first statement and the slot's read in one exchange.
          resourceIds = await slots.lockAndCheckSlot(trx, keys, slot, check);
        }
        const id = randomUUID();
        const row = newAppointment(kind, principal, slot, { companyId, id, customerId, body, now, allowPaddingOverflow, ignoreExternalEvents });
        const answer: AppointmentRow = { ...row, timezoneName: prepared.location.timezoneName, resourceIds: [...resourceIds].sort() };
        // The event goes in with the appointment: one statement for the row, its resources and the
        // outbox. Without an Idempotency-Key it is the transaction's last statement, and the commit
        // goes with it (with one, idempotent() stores the answer after it).
        created = await repo.insert(trx, row, resourceIds, answer.timezoneName, kind === 'create' ? eventsOf(answer, ['NEW_APPOINTMENT']) : [], {
          lastInTransaction: !keyed.key,
        });
        return toApi(created);
      });
    });
    if (created) await touchChanged(ctx.touch, [created]);
    return result;
  }

  return {
    create: (companyId: string, principal: Principal, request: NewSlotRequest) => takeNewSlot('create', companyId, principal, request),
    hold: (companyId: string, principal: Principal, request: NewSlotRequest) => takeNewSlot('hold', companyId, principal, request),
  };
}
