import { randomUUID } from 'node:crypto';
import type { Selectable } from 'kysely';
import type { Principal } from '../../platform/auth/principal.js';
import type { AppointmentsTable } from '../../platform/database/schema.js';
import { validationError } from '../../platform/errors.js';
import type { Db } from '../../platform/database/index.js';
import { holdsCapacity } from '../../domain/appointment-status.js';
import { limitProblem } from '../../domain/booking.js';
import { CUSTOM_FIELD_NAMES } from '../catalog/fields.js';
import { assertOwned } from '../catalog/ownership.js';
import { customerUsage } from '../availability/inputs.js';
import { appointmentRepository as repo } from './repository.js';
import type { AppointmentRow } from './repository.js';
import { customFields, toApi } from './mapper.js';
import { changeExisting, dailyLimitsKey, emit, lockKeys, refuse } from './operation.js';
import type { BookingContext } from './operation.js';
import { problemError } from './problems.js';
import { existingSlotCheck } from './slot.js';
import type { PreparedSlot, SlotChecks } from './slot.js';
import type { SlotRequest, UpdateRequest } from './schemas.js';

/** Reschedule (a new slot) and the metadata update (notes, custom fields, the customer). */

/** The replacement of a rescheduled appointment: the new slot, the body's changes, the rest kept. */
function replacement(row: AppointmentRow, slot: PreparedSlot, fields: { id: string; body: SlotRequest; allowPaddingOverflow: boolean; ignoreExternalEvents: boolean }): Selectable<AppointmentsTable> {
  const { body } = fields;
  // Every column given, as for a new booking (new-slot.ts): the row inserted is the row answered.
  const written = new Date();
  return {
    createdAt: written,
    updatedAt: written,
    rescheduledToId: null,
    customerUnconfirmed: false,
    companyId: row.companyId,
    id: fields.id,
    locationId: row.locationId,
    serviceId: row.serviceId,
    customerId: row.customerId,
    status: 'BK',
    startTime: new Date(slot.startMs),
    endTime: new Date(slot.endMs),
    duration: slot.prepared.duration,
    padding: slot.prepared.service.padding,
    expiresAt: null,
    confirmed: row.confirmed,
    allowPaddingOverflow: fields.allowPaddingOverflow,
    ignoreExternalEvents: fields.ignoreExternalEvents,
    notes: body.notes !== undefined ? body.notes : row.notes,
    rescheduledFromId: row.id,
    legacyId: body.legacyId ?? null,
    createdVia: row.createdVia,
    ...(Object.fromEntries(CUSTOM_FIELD_NAMES.map((f) => [f, body[f] !== undefined ? body[f] : row[f]])) as Record<(typeof CUSTOM_FIELD_NAMES)[number], string | null>),
  };
}

export function createChanges(ctx: BookingContext, slots: SlotChecks) {
  const { db } = ctx;

  /**
   * The customer limits of an appointment that holds its slot, checked again for a metadata update
   * as the specification asks. Daily limits belong to the slot, which the update does not move.
   */
  async function assertCustomerLimits(trx: Db, row: AppointmentRow, customerId: string, now: number) {
    const reads = ctx.reads(trx);
    const service = await reads.service(row.companyId, row.serviceId);
    if (!service) return;
    const rows = await reads.customerAppointments(row.companyId, customerId, row.serviceId, [row.id]);
    const usage = customerUsage(rows.map((r) => ({ ...r, expiresAt: r.expiresAt?.getTime() ?? null })), now);
    const resources = await repo.resources(trx, row.companyId, row.resourceIds);
    const problem = limitProblem({ ...service, dailyBookingLimitCount: 0, dailyBookingLimitMinutes: 0 }, resources, { day: { count: 0, minutes: 0 }, customer: usage }, row.duration, row.status !== 'RS');
    if (problem) throw problemError(problem);
  }

  return {
    /** BK → RE plus a new BK in the requested slot, linked both ways. */
    async reschedule(companyId: string, principal: Principal, id: string, body: SlotRequest) {
      const now = ctx.clock();
      // The row and the catalog read of its location and service (with the body's resources) in one exchange.
      const { row: before, found } = await slots.readStoredWithTarget(companyId, principal, id, body);
      refuse('reschedule', before, now);
      // The creation body is accepted; a CustomerId, when sent, must be the appointment's own.
      if (body.CustomerId !== undefined && body.CustomerId !== before.customerId) {
        throw validationError('body', 'CustomerId', 'CustomerId must be the appointment\'s own customer: a rescheduled appointment keeps its customer (change it with PUT /v3/appointment/:id)');
      }
      const slot = await slots.prepareSlot(companyId, principal, {
        target: { locationId: before.locationId, serviceId: before.serviceId, idsFrom: 'stored' },
        body,
        checkLeadTime: true,
        now,
        defaultResourceIds: before.resourceIds,
        found,
      });
      const check = (row: AppointmentRow) => existingSlotCheck(row, now, { customerId: row.customerId, countsAsActive: true, checkLeadTime: true, choices: body });
      return changeExisting(ctx, {
        companyId,
        principal,
        id,
        keys: (row) => lockKeys(companyId, { resources: [...row.resourceIds, ...slot.prepared.resources.map((r) => r.id)], customerId: row.customerId, dailyLimits: dailyLimitsKey(slot.prepared) }),
        // The new slot's check goes with the locks (one exchange); it answers the resources it takes.
        readAhead: (trx, row, locks) => slots.checkSlot(trx, slot, check(row), locks),
        work: async (trx, row, checked) => {
          refuse('reschedule', row, now);
          const { allowPaddingOverflow, ignoreExternalEvents } = check(row);
          const resourceIds = checked ?? (await slots.checkSlot(trx, slot, check(row)));
          const newId = randomUUID();
          const replaced = await repo.insert(trx, replacement(row, slot, { id: newId, body, allowPaddingOverflow, ignoreExternalEvents }), resourceIds, row.timezoneName);
          // The events in this order: the move, then the new appointment.
          const original = await repo.update(trx, row, { status: 'RE', rescheduledToId: newId }, ['APPOINTMENT_RESCHEDULED']);
          await emit(trx, replaced, ['NEW_APPOINTMENT']);
          return { result: toApi(replaced), changed: [original, replaced] };
        },
        known: before,
      });
    },

    /**
     * Notes, custom fields and the customer. For an appointment that holds its slot (IN, RS, BK)
     * the customer limits are checked again, as the specification asks even for metadata-only updates.
     */
    async update(companyId: string, principal: Principal, id: string, body: UpdateRequest) {
      const now = ctx.clock();
      if (body.CustomerId) await assertOwned(db, companyId, [{ table: 'customers', ids: [body.CustomerId], location: 'body', path: 'CustomerId', single: true }]);
      return changeExisting(ctx, {
        companyId,
        principal,
        id,
        keys: (row) => lockKeys(companyId, { resources: [], customerId: body.CustomerId ?? row.customerId }),
        work: async (trx, row) => {
          const customerId = body.CustomerId ?? row.customerId;
          const holding = holdsCapacity({ status: row.status, expiresAt: row.expiresAt?.getTime() ?? null }, now);
          if (holding && customerId) await assertCustomerLimits(trx, row, customerId, now);
          const updated = await repo.update(trx, row, {
            ...(body.notes !== undefined ? { notes: body.notes } : {}),
            ...(body.CustomerId !== undefined ? { customerId: body.CustomerId } : {}),
            ...customFields(body),
          });
          return { result: toApi(updated), changed: body.CustomerId && body.CustomerId !== row.customerId ? [row, updated] : [] };
        },
      });
    },
  };
}
