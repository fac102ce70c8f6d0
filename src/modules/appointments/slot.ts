import { localDateOfMillis } from '../../domain/local-time.js';
import type { Principal } from '../../platform/auth/principal.js';
import { ApiError, badRequest, fieldError, forbidden, notFound, validationError } from '../../platform/errors.js';
import { pendingCredentialCheck } from '../../platform/auth/credential-check.js';
import type { ErrorLocation } from '../../platform/errors.js';
import type { Db } from '../../platform/database/index.js';
import { computeAvailability, slotOccupancy } from '../../domain/availability.js';
import type { ActiveAppointment, AvailabilityInput, RoundRobin } from '../../domain/availability.js';
import { leadTimeProblem, limitProblem, resolveDuration } from '../../domain/booking.js';
import { isResourceRole } from '../catalog/scope.js';
import { engineInput, loadEngineInputs } from '../availability/inputs.js';
import { assertTargetOpen, loadTarget, namedResources } from '../availability/target.js';
import type { FoundTarget, PreparedSearch, ServiceRow, TargetAnswer, TargetRequest } from '../availability/target.js';
import { appointmentRepository } from './repository.js';
import type { AppointmentRow } from './repository.js';
import type { LeadingStatement } from '../../platform/database/transaction-control.js';
import type { BusyAppointmentRow } from '../availability/repository.js';
import { visible } from './operation.js';
import type { BookingContext, BookingReads } from './operation.js';
import { NEVER_OPEN, NEVER_OPEN_HINT, problemError, slotUnavailable } from './problems.js';
import type { SlotRequest } from './schemas.js';

/**
 * The slot a booking asks for: checked before any lock (prepare), then inside the booking
 * transaction against what is committed (check), with the availability engine's own answer for
 * that one slot, built by the same loader and builder as the availability search.
 */

/** 'all': every named resource takes part; 'pool': the engine picks one (RANDOM, BALANCED). */
export type BookingMode = 'all' | 'pool';

export interface SlotPreparation {
  /** The location and service: from the query (create, hold) or stored on the appointment. */
  target: { locationId: string; serviceId: string; idsFrom: 'query' | 'stored' };
  body: SlotRequest;
  checkLeadTime: boolean;
  now: number;
  /** The resources when the body names none (the stored appointment's). */
  defaultResourceIds?: string[];
  customerIdLocation?: ErrorLocation;
  /** Read the named resources' committed busy time with the target, for committedFull (new bookings and holds). */
  readCommittedBusy?: boolean;
  /** The target statement's answer, already read (readStoredWithTarget). */
  found?: FoundTarget | undefined;
}

/** A stored appointment as the caller may see it, with its catalog read in the same exchange (readStoredWithTarget). */
export interface StoredWithTarget {
  row: AppointmentRow;
  /** The target statement's answer for the row's location and service; undefined when they were not the row's (it changed between the two reads). */
  found: FoundTarget | undefined;
}

/** A slot that passed every check that needs no lock. */
export interface PreparedSlot {
  /** The location, service, candidate resources, zone and duration; endDate is the slot's local date. */
  prepared: PreparedSearch;
  mode: BookingMode;
  roundRobin: RoundRobin;
  startMs: number;
  endMs: number;
  /** The slot's local date in the location's zone. */
  date: string;
  /** The named resources' committed busy rows that the slot reaches, when read with the target (readCommittedBusy). */
  committedBusy?: BusyAppointmentRow[] | undefined;
}

export interface SlotCheck {
  companyId: string;
  customerId: string | null;
  now: number;
  /** The appointment being booked, reserved or rescheduled, which must not compete with itself. */
  exclude: string[];
  /** false for an appointment that will be RS (reserve), which bookingLimit does not count. */
  countsAsActive: boolean;
  checkLeadTime: boolean;
  allowPaddingOverflow: boolean;
  ignoreExternalEvents: boolean;
}

/**
 * The check of an existing appointment's slot (book, reserve, reschedule): the appointment left
 * out, so it does not compete with itself, and its own padding and external-event choices unless
 * the request makes them again.
 */
export function existingSlotCheck(
  row: AppointmentRow,
  now: number,
  rules: { customerId: string | null; countsAsActive: boolean; checkLeadTime: boolean; choices?: { allowPaddingOverflow?: boolean | undefined; ignoreExternalEvents?: boolean | undefined } },
): SlotCheck {
  return {
    companyId: row.companyId,
    customerId: rules.customerId,
    now,
    exclude: [row.id],
    countsAsActive: rules.countsAsActive,
    checkLeadTime: rules.checkLeadTime,
    allowPaddingOverflow: rules.choices?.allowPaddingOverflow ?? row.allowPaddingOverflow,
    ignoreExternalEvents: rules.choices?.ignoreExternalEvents ?? row.ignoreExternalEvents,
  };
}

/** The requested times against the service's duration rules, the clock and (when asked) lead time. */
function slotTimes(service: ServiceRow, body: SlotRequest, options: { checkLeadTime: boolean; now: number }) {
  if (!body.Unavailability) {
    throw validationError('body', 'Unavailability', 'Unavailability.startTime and Unavailability.endTime are required', 'BOOKING-139');
  }
  const startMs = Date.parse(body.Unavailability.startTime);
  const endMs = Date.parse(body.Unavailability.endTime);
  const duration = resolveDuration(service, startMs, endMs, body.duration);
  if (typeof duration !== 'number') throw problemError(duration);
  if (startMs < options.now) throw problemError({ path: 'Unavailability.startTime', msg: 'startTime is in the past', code: 'BOOKING-103' });
  if (options.checkLeadTime) {
    const lead = leadTimeProblem(service, startMs, options.now);
    if (lead) throw problemError(lead);
  }
  return { startMs, endMs, duration };
}

/** The body's times for the target statement's busy read, when both are valid times (slotTimes judges them after). */
function requestedSlot(body: SlotRequest, now: number): { start: Date; end: Date; now: Date } | undefined {
  if (!body.Unavailability) return undefined;
  const start = Date.parse(body.Unavailability.startTime);
  const end = Date.parse(body.Unavailability.endTime);
  if (!Number.isFinite(start) || !Number.isFinite(end) || end <= start) return undefined;
  return { start: new Date(start), end: new Date(end), now: new Date(now) };
}

/** How the service's roundRobin takes the resources: named ones, or none named. */
function bookingMode(roundRobin: RoundRobin, named: boolean): BookingMode {
  const pool = roundRobin === 'RANDOM' || roundRobin === 'BALANCED';
  if (named) return pool ? 'pool' : 'all';
  if (pool) return 'pool';
  if (roundRobin === 'COMBINED') return 'all';
  throw validationError('body', 'ResourceIds', 'ResourceIds is required: the service\'s roundRobin is NONE, so the caller names the resource', 'BOOKING-407');
}

/**
 * True when the appointments already committed leave the requested slot no room, by the engine's
 * own capacity rule (slotOccupancy): for named or COMBINED resources when any of them is full,
 * for a pool (RANDOM, BALANCED) when all are. Only appointments are looked at, so a slot this
 * passes may still be refused inside the transaction (limits, blocks); never the other way round.
 * Allocation services take their capacity from the allocation: left to the full check.
 */
async function committedFull(reads: Pick<BookingReads, 'busyAppointmentsOfResources'>, companyId: string, slot: PreparedSlot, now: number): Promise<boolean> {
  const { service, resources } = slot.prepared;
  if (service.availabilityType === 'allocation' || resources.length === 0) return false;
  const occupiedUntil = slot.endMs + service.padding * 60_000;
  const window = { from: new Date(slot.startMs), to: new Date(occupiedUntil), now: new Date(now) };
  // Read with the target when the resources were named (one exchange fewer), else now.
  const rows = slot.committedBusy ?? (await reads.busyAppointmentsOfResources(companyId, resources.map((r) => r.id), window));
  const byResource = new Map<string, ActiveAppointment[]>();
  for (const row of rows) {
    const list = byResource.get(row.resourceId) ?? [];
    list.push({ id: row.id, serviceId: row.serviceId, resourceIds: [row.resourceId], padding: row.padding, start: row.start, end: row.end });
    byResource.set(row.resourceId, list);
  }
  const full = (resourceId: string) => {
    const sorted = (byResource.get(resourceId) ?? []).sort((a, b) => a.start - b.start);
    const { sharing, blocked } = slotOccupancy(sorted, 0, service.id, slot.startMs, slot.endMs, occupiedUntil);
    return blocked || sharing >= service.bookingsPerSlot;
  };
  return slot.mode === 'all' ? resources.some((r) => full(r.id)) : resources.every((r) => full(r.id));
}

export function createSlotChecks(ctx: Pick<BookingContext, 'db' | 'reads'>) {
  const { db } = ctx;
  const committed = ctx.reads(db);

  /**
   * Everything about a requested slot that can be checked before taking locks: ids are the
   * company's, the service is offered at the location, the resources are linked to both, the caller
   * may book there, the duration rules and the times.
   */
  async function prepareSlot(companyId: string, principal: Principal, request: SlotPreparation): Promise<PreparedSlot> {
    const { target: ids, body } = request;
    const resourceIds = body.ResourceIds ?? request.defaultResourceIds;
    const targetRequest: TargetRequest = {
      LocationId: ids.locationId,
      ServiceId: ids.serviceId,
      ResourceIds: body.ResourceIds ?? [],
      CustomerId: body.CustomerId,
      location: 'body',
      ...(request.customerIdLocation ? { customerIdLocation: request.customerIdLocation } : {}),
      ...(ids.idsFrom === 'stored' ? { missing: () => badRequest('The appointment\'s location or service has been archived') } : {}),
      ...(request.readCommittedBusy ? { slot: requestedSlot(body, request.now) } : {}),
      ...(request.found ? { found: request.found } : {}),
    };
    const target = await loadTarget(db, committed, companyId, targetRequest, principal);
    const { location, service } = target;
    assertTargetOpen(target, { principal, named: { locationId: ids.locationId, serviceId: service.id }, onlineOnly: principal.kind === 'public', requireOffered: ids.idsFrom === 'query' });
    const { startMs, endMs, duration } = slotTimes(service, body, request);

    const roundRobin = service.roundRobin;
    const named = resourceIds !== undefined && resourceIds.length > 0;
    const candidates = named ? await namedResources(db, companyId, target, resourceIds, 'body') : target.bookable;
    const mode = bookingMode(roundRobin, named);
    if (candidates.length === 0) throw slotUnavailable();
    if (isResourceRole(principal)) {
      const own = principal.linkedResourceId;
      if (mode === 'pool' || candidates.some((r) => r.id !== own)) throw forbidden('A Resource-role user may book only their linked resource');
    }
    const zone = location.timezoneName;
    const date = localDateOfMillis(startMs, zone);
    const prepared: PreparedSearch = { location, service, resources: candidates, zone, endDate: date, duration };
    // Read only for named resources (body.ResourceIds), which are then the candidates.
    return { prepared, mode, roundRobin, startMs, endMs, date, committedBusy: target.committedBusy };
  }

  /**
   * An appointment (404 unless the caller may see it, as readVisible) and the catalog read of its
   * location and service, in one exchange: the row's read goes in front of the target statement,
   * which takes the location and the service from the row by its id (StoredTargetIds). Outside a
   * transaction each statement has its own snapshot, so the catalog answer counts only when it
   * is of the row's location and service; otherwise the slot's preparation reads it again.
   * `named`: the resources and the customer a body names (a reschedule's), read along as
   * prepareSlot's catalog read would for that body; the answer then serves only that body.
   */
  async function readStoredWithTarget(companyId: string, principal: Principal, id: string, named: Pick<SlotRequest, 'ResourceIds' | 'CustomerId'> = {}): Promise<StoredWithTarget> {
    const lead = appointmentRepository.byIdAhead(db, companyId, id);
    let answer: TargetAnswer;
    // What prepareSlot's target request names for a body with these ids.
    const ids = { appointmentId: id, resourceIds: named.ResourceIds ?? [], customerId: named.CustomerId ?? null };
    try {
      answer = await committed.target(companyId, ids, pendingCredentialCheck(principal), { leading: lead });
    } catch (error) {
      // Failed before anything was sent: the row's read never went either. (A plan made stale by
      // a migration was already sent again by the pool wrapper, platform/database/index.ts.)
      if (!lead.settled) throw error;
      // The exchange failed: the row's read failed with it, and its error is the one to answer.
      await appointmentRepository.byIdLed(db, lead);
      throw error;
    }
    const row = await appointmentRepository.byIdLed(db, lead);
    if (!row || !visible(principal, row)) throw notFound('Appointment not found');
    const same = answer !== undefined && answer.service.id === row.serviceId && answer.location?.id === row.locationId;
    return { row, found: same ? { answer, resourceIds: ids.resourceIds, customerId: ids.customerId } : undefined };
  }

  /**
   * The stored slot of an appointment, re-validated (reserve, book): same time, same resources.
   * `found`: its catalog read, already made (readStoredWithTarget).
   */
  async function prepareStoredSlot(companyId: string, principal: Principal, row: AppointmentRow, now: number, found?: StoredWithTarget['found']): Promise<PreparedSlot> {
    return prepareSlot(companyId, principal, {
      target: { locationId: row.locationId, serviceId: row.serviceId, idsFrom: 'stored' },
      body: { Unavailability: { startTime: row.startTime.toISOString(), endTime: row.endTime.toISOString() }, duration: row.duration },
      checkLeadTime: false,
      now,
      defaultResourceIds: row.resourceIds,
      found,
    }).catch((error: unknown) => {
      // The stored resources may have been unlinked or archived since the hold: the slot is gone.
      if (error instanceof ApiError && error.statusCode === 400 && error.errors.some((e) => e.path.startsWith('ResourceIds'))) {
        throw slotUnavailable();
      }
      throw error;
    });
  }

  /**
   * Inside the booking transaction, after the locks: the limits and the slot itself, against what is
   * committed now. Returns the resources the appointment takes.
   */
  async function checkSlot(trx: Db, slot: PreparedSlot, check: SlotCheck, leading?: LeadingStatement): Promise<string[]> {
    const { prepared, mode, roundRobin, startMs, date } = slot;
    const inputs = await loadEngineInputs(ctx.reads(trx), check.companyId, prepared, {
      startDate: date,
      roundRobin,
      CustomerId: check.customerId,
      now: check.now,
      excludeAppointmentIds: check.exclude,
      leading,
    });
    const limit = limitProblem(
      prepared.service,
      mode === 'all' ? prepared.resources : [],
      { day: inputs.dailyUsage[date] ?? { count: 0, minutes: 0 }, customer: inputs.customer ?? null },
      prepared.duration,
      check.countsAsActive,
    );
    if (limit) throw problemError(limit);
    // For a reservation (RS), active limits do not count: the engine sees no active usage.
    const customer = inputs.customer && !check.countsAsActive ? { ...inputs.customer, activeCount: 0, activeByResource: {} } : inputs.customer;
    const input = engineInput(prepared, inputs, {
      now: check.now,
      startDate: date,
      endDate: date,
      roundRobin: mode === 'all' ? 'COMBINED' : roundRobin,
      customer,
      // Booking a hold or a reservation keeps the slot it was given: lead time was checked then.
      ...(check.checkLeadTime ? {} : { serviceOverrides: { bookInAdvance: 0, bookAheadUnit: 'none' as const, bookAheadValue: null } }),
      allowPaddingOverflow: check.allowPaddingOverflow,
      ignoreExternalEvents: check.ignoreExternalEvents,
    });
    const startIso = new Date(startMs).toISOString();
    const endIso = new Date(slot.endMs).toISOString();
    const offered = (engine: AvailabilityInput) => computeAvailability(engine).availableTimes.find((s) => s.startTime === startIso && s.endTime === endIso);
    const found = offered(input);
    // A copy: the engine's lists are shared between its slots and read only.
    if (found) return [...found.resourceIds];
    // Taken (BOOKING-105) only if the time would be free without the other bookings; otherwise it
    // was never open: a closed day, outside the hours, a holiday, a block, or off the slot grid.
    const { customer: _customer, ...withoutCustomer } = input;
    if (offered({ ...withoutCustomer, appointments: [], dailyUsage: {} })) throw slotUnavailable();
    const holiday = inputs.holidays.find((h) => h.date === date);
    const msg = holiday ? `${NEVER_OPEN}: ${date} is a holiday at this location (${holiday.name})` : `${NEVER_OPEN}${NEVER_OPEN_HINT}`;
    throw new ApiError(400, msg, [fieldError('body', 'Unavailability.startTime', msg)]);
  }

  /**
   * The booking's advisory locks and checkSlot in one exchange: every lock is tried without
   * waiting (when one is held, refuse at once if what is committed already fills the slot, else
   * wait for the rest), and the try goes in front of checkSlot's read
   * (platform/database/transaction-control.ts, withLeading). With every lock taken, the read ran
   * after them and saw everything committed before: it is the check. With one held, the read is
   * the fast refusal's, and the check runs again once the rest are taken.
   */
  async function lockAndCheckSlot(trx: Db, keys: string[], slot: PreparedSlot, check: SlotCheck): Promise<string[]> {
    const tried = appointmentRepository.tryLocks(keys);
    const resourceIds = await checkSlot(trx, slot, check, tried);
    const taken = await appointmentRepository.locksTaken(tried);
    if (taken < 0) return resourceIds;
    await appointmentRepository.lockRest(trx, keys, taken);
    return checkSlot(trx, slot, check);
  }

  return {
    prepareSlot,
    readStoredWithTarget,
    prepareStoredSlot,
    checkSlot,
    lockAndCheckSlot,
    committedFull: (companyId: string, slot: PreparedSlot, now: number) => committedFull(committed, companyId, slot, now),
  };
}

export type SlotChecks = ReturnType<typeof createSlotChecks>;
