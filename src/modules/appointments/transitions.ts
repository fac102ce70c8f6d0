import type { Principal } from '../../platform/auth/principal.js';
import { fieldError, validationError, validationErrors } from '../../platform/errors.js';
import { bookingFieldProblems } from '../../domain/booking-page.js';
import type { Db } from '../../platform/database/index.js';
import { assertOwned } from '../catalog/ownership.js';
import { appointmentRepository as repo } from './repository.js';
import type { AppointmentRow } from './repository.js';
import { customFields, toApi } from './mapper.js';
import { changeExisting, dailyLimitsKey, lockKeys, refuse } from './operation.js';
import type { BookingContext } from './operation.js';
import { customerExists, resolveCustomer } from './customers.js';
import { existingSlotCheck } from './slot.js';
import type { SlotChecks } from './slot.js';
import type { BookRequest, CustomFieldValues, ReserveRequest } from './schemas.js';

/**
 * The moves of States and transitions that keep the slot: reserve, book, confirm, cancel, delete.
 * Each one's update is the last statement of its transaction (changeExisting runs nothing after
 * the work), so it carries the commit (lastInTransaction, platform/database/transaction-control.ts).
 */

/** Confirm of a booked appointment: sets confirmed, and APPOINTMENT_CONFIRMED only the first time. */
async function confirmBooked(trx: Db, row: AppointmentRow) {
  if (row.confirmed) return { result: toApi(row), changed: [] };
  const confirmed = await repo.update(trx, row, { confirmed: true }, ['APPOINTMENT_CONFIRMED'], { lastInTransaction: true });
  return { result: toApi(confirmed), changed: [] };
}

/** A customer named for a hold that already has one is refused: change it with PUT instead. */
function assertCustomerChoice(before: AppointmentRow, customer: BookRequest) {
  if (before.customerId && customer.CustomerId && customer.CustomerId !== before.customerId) {
    throw validationError('body', 'CustomerId', 'The appointment already has a customer; change it with PUT /v3/appointment/:id');
  }
  if (before.customerId && !customer.CustomerId && (customer.email || customer.name)) {
    throw validationError('body', customer.email ? 'email' : 'name', 'The appointment already has a customer; contact details are taken only for a hold without one');
  }
}

export function createTransitions(ctx: BookingContext, slots: SlotChecks) {
  const { db } = ctx;

  /**
   * A booking page's answers against the fields the company's page asks (bookingPage.fields): a
   * required one missing, or a field it does not ask, is a 400 at `fieldN` before anything is written.
   */
  async function assertPageAnswers(companyId: string, answers: CustomFieldValues) {
    const company = await db.selectFrom('companies').select('bookingPage').where('id', '=', companyId).executeTakeFirst();
    const problems = bookingFieldProblems(company?.bookingPage.fields ?? [], answers);
    if (problems.length > 0) throw validationErrors(problems.map((p) => fieldError('body', p.path, p.message)));
  }

  /** IN → BK and RS → BK (book, and confirm of a reservation); confirm of a BK only sets confirmed. */
  async function moveToBooked(companyId: string, principal: Principal, id: string, operation: 'book' | 'confirm', customer: BookRequest, answers?: CustomFieldValues) {
    const now = ctx.clock();
    // The row and its catalog read in one exchange (the catalog answer is used by prepareStoredSlot below).
    const { row: before, found } = await slots.readStoredWithTarget(companyId, principal, id);
    if (answers) await assertPageAnswers(companyId, answers);
    if (operation === 'confirm' && before.status === 'BK') {
      // Confirm is idempotent: APPOINTMENT_CONFIRMED only the first time.
      return changeExisting(ctx, {
        companyId,
        principal,
        id,
        known: before,
        keys: () => [],
        work: async (trx, row) => {
          refuse('confirm', row, now);
          return confirmBooked(trx, row);
        },
      });
    }
    refuse(operation, before, now);
    if (customer.CustomerId) await assertOwned(db, companyId, [{ table: 'customers', ids: [customer.CustomerId], location: 'body', path: 'CustomerId', single: true }]);
    const slot = await slots.prepareStoredSlot(companyId, principal, before, now, found);
    assertCustomerChoice(before, customer);
    // A hold without a customer gets one here; it is found or created before the locks, so the
    // customer's lock is taken with the others and their limits cannot be raced.
    let newCustomerId: string | null = null;
    // A booking page that names an existing customer's email proves nothing about the address:
    // the customer's record stays as it is (findOrCreateCustomer never overwrites) and the
    // appointment sends the customer no message (issue 12).
    const unconfirmed = principal.kind === 'public' && !before.customerId && customer.email !== undefined && (await customerExists(db, companyId, customer.email));
    const check = (row: AppointmentRow, customerId: string | null) => existingSlotCheck(row, now, { customerId, countsAsActive: true, checkLeadTime: false });
    return changeExisting(ctx, {
      companyId,
      principal,
      id,
      keys: (row) => lockKeys(companyId, { resources: row.resourceIds, customerId: row.customerId, dailyLimits: dailyLimitsKey(slot.prepared) }),
      // The slot's check goes with the locks (one exchange), for the customer the work books for;
      // none for a row the work would not check, or whose customer is still to be found.
      readAhead: async (trx, row, locks) => {
        const customerId = row.customerId ?? newCustomerId;
        if (row.status === 'BK' || customerId === null) return false;
        await slots.checkSlot(trx, slot, check(row, customerId), locks);
        return true;
      },
      work: async (trx, row, checked) => {
        refuse(operation, row, now);
        // Booked meanwhile by a concurrent call (refuse() above already turned book away): confirm
        // stays idempotent.
        if (row.status === 'BK') return confirmBooked(trx, row);
        const customerId = row.customerId ?? newCustomerId ?? (await resolveCustomer(trx, companyId, customer, true));
        if (!checked) await slots.checkSlot(trx, slot, check(row, customerId));
        const fromReserved = row.status === 'RS';
        // A reservation becomes a booking and is confirmed by the same call.
        const updated = await repo.update(
          trx,
          row,
          {
            status: 'BK',
            expiresAt: null,
            customerId,
            ...(answers ? customFields(answers) : {}),
            ...(fromReserved ? { confirmed: true } : {}),
            ...(unconfirmed ? { customerUnconfirmed: true } : {}),
          },
          fromReserved ? ['NEW_APPOINTMENT', 'APPOINTMENT_CONFIRMED'] : ['NEW_APPOINTMENT'],
          { lastInTransaction: true },
        );
        return { result: toApi(updated), changed: [updated] };
      },
      prelude: async (trx) => {
        newCustomerId = before.customerId ? null : await resolveCustomer(trx, companyId, customer, true);
        return newCustomerId ? lockKeys(companyId, { resources: [], customerId: newCustomerId }) : [];
      },
      known: before,
    });
  }

  return {
    /** IN → RS. allowPaddingOverflow and ignoreExternalEvents may be chosen again here, and are kept. */
    async reserve(companyId: string, principal: Principal, id: string, body: ReserveRequest) {
      const now = ctx.clock();
      const { row: before, found } = await slots.readStoredWithTarget(companyId, principal, id);
      refuse('reserve', before, now);
      const slot = await slots.prepareStoredSlot(companyId, principal, before, now, found);
      const check = (row: AppointmentRow) => existingSlotCheck(row, now, { customerId: row.customerId, countsAsActive: false, checkLeadTime: false, choices: body });
      return changeExisting(ctx, {
        companyId,
        principal,
        id,
        keys: (row) => lockKeys(companyId, { resources: row.resourceIds, customerId: row.customerId, dailyLimits: dailyLimitsKey(slot.prepared) }),
        // The slot's check goes with the locks (one exchange).
        readAhead: async (trx, row, locks) => {
          await slots.checkSlot(trx, slot, check(row), locks);
          return true;
        },
        work: async (trx, row, checked) => {
          refuse('reserve', row, now);
          const { allowPaddingOverflow, ignoreExternalEvents } = check(row);
          if (!checked) await slots.checkSlot(trx, slot, check(row));
          const updated = await repo.update(trx, row, { status: 'RS', expiresAt: null, allowPaddingOverflow, ignoreExternalEvents }, [], { lastInTransaction: true });
          return { result: toApi(updated), changed: [updated] };
        },
        known: before,
      });
    },

    /** IN → BK, RS → BK; the slot and every limit are checked again. */
    /** `answers`: a booking page's custom fields, checked against the company's bookingPage.fields. */
    book: (companyId: string, principal: Principal, id: string, customer: BookRequest = {}, answers?: CustomFieldValues) =>
      moveToBooked(companyId, principal, id, 'book', customer, answers),

    /** Sets confirmed (RS → BK as book does); idempotent. */
    confirm: (companyId: string, principal: Principal, id: string) => moveToBooked(companyId, principal, id, 'confirm', {}),

    /** BK or RS → CN; the slot's cached availability is cleared. */
    async cancel(companyId: string, principal: Principal, id: string) {
      const now = ctx.clock();
      return changeExisting(ctx, {
        companyId,
        principal,
        id,
        keys: (row) => lockKeys(companyId, { resources: row.resourceIds }),
        work: async (trx, row) => {
          refuse('cancel', row, now);
          const updated = await repo.update(trx, row, { status: 'CN', expiresAt: null }, ['APPOINTMENT_CANCELLED'], { lastInTransaction: true });
          return { result: toApi(updated), changed: [updated] };
        },
      });
    },

    /** Only IN can be deleted: a hold given up before checkout. */
    async remove(companyId: string, principal: Principal, id: string): Promise<void> {
      const now = ctx.clock();
      await changeExisting(ctx, {
        companyId,
        principal,
        id,
        keys: (row) => lockKeys(companyId, { resources: row.resourceIds }),
        work: async (trx, row) => {
          refuse('delete', row, now);
          await repo.delete(trx, companyId, id);
          return { result: undefined, changed: [row] };
        },
      });
    },
  };
}
