import type { Principal } from '../../platform/auth/principal.js';
import type { Db } from '../../platform/database/index.js';
import type { TouchedEntities } from '../availability/cache.js';
import { appointmentRepository as repo } from './repository.js';
import { toApi } from './mapper.js';
import type { Appointment } from './mapper.js';
import { readVisible } from './operation.js';
import type { BookingContext, BookingReads } from './operation.js';
import { createSlotChecks } from './slot.js';
import { createNewSlotOperations } from './new-slot.js';
import { createTransitions } from './transitions.js';
import { createChanges } from './changes.js';
import { createAppointmentLists } from './lists.js';

/**
 * The booking lifecycle, composed from its parts: slot.ts (the slot, before the locks and inside
 * the transaction), new-slot.ts (create and hold, with idempotency.ts), transitions.ts (reserve,
 * book, confirm, cancel, delete), changes.ts (reschedule, the metadata update), lists.ts (pages and
 * cursors); operation.ts holds what they share (transaction, locks, visibility, events).
 */

export interface AppointmentDeps {
  db: Db;
  cursorSecret: string;
  /** The availability reads on a connection (availability/repository.ts): the handle, or a booking's transaction. */
  reads: (db: Db) => BookingReads;
  /** Clears the cached availability answers that depend on these records (after commit). */
  touch: (companyId: string, entities: TouchedEntities) => Promise<void>;
  now?: () => number;
  /** Live holds a company's public booking page may have at once (PUBLIC_HOLDS_PER_COMPANY). */
  publicHoldsPerCompany?: number;
}

export function createAppointmentService(deps: AppointmentDeps) {
  const { db } = deps;
  const ctx: BookingContext = { db, clock: deps.now ?? Date.now, reads: deps.reads, touch: deps.touch };
  const slots = createSlotChecks(ctx);
  return {
    ...createNewSlotOperations({ ...ctx, publicHoldsPerCompany: deps.publicHoldsPerCompany }, slots),
    ...createTransitions(ctx, slots),
    ...createChanges(ctx, slots),
    ...createAppointmentLists({ db, repository: deps.reads(db), cursorSecret: deps.cursorSecret, clock: ctx.clock }),

    async get(companyId: string, principal: Principal, id: string): Promise<Appointment> {
      return toApi(await readVisible(db, principal, { companyId, id }));
    },

    /** Events written for an appointment (for tests and support; delivery is the outbox worker's). */
    events: (companyId: string, appointmentId: string) => repo.events(db, companyId, appointmentId),
  };
}

export type AppointmentService = ReturnType<typeof createAppointmentService>;
