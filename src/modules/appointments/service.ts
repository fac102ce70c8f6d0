import { createHash, randomUUID } from 'node:crypto';
import { DateTime } from 'luxon';
import type { Principal } from '../../platform/auth/principal.js';
import { ApiError, badRequest, fieldError, forbidden, notFound, validationError } from '../../platform/errors.js';
import type { ErrorLocation } from '../../platform/errors.js';
import type { Db } from '../../platform/database/index.js';
import { isLockTimeout } from '../../platform/database/errors.js';
import { transaction as runTransaction } from '../../platform/database/transaction.js';
import type { AppointmentStatus, EventTrigger } from '../../platform/database/schema.js';
import type { WeeklySchedule } from '../../domain/weekly-availability.js';
import { computeAvailability, slotOccupancy } from '../../domain/availability.js';
import type { ActiveAppointment } from '../../domain/availability.js';
import type { RoundRobin } from '../../domain/availability.js';
import { leadTimeProblem, limitProblem, resolveDuration, transitionProblem } from '../../domain/booking.js';
import type { BookingProblem, Operation } from '../../domain/booking.js';
import { localToInstant } from '../../domain/local-time.js';
import { assertOwned } from '../catalog/ownership.js';
import { CUSTOM_FIELD_NAMES } from '../catalog/fields.js';
import { isResourceRole, locationScope } from '../catalog/scope.js';
import { createAvailabilityRepository } from '../availability/repository.js';
import type { AvailabilityRepository } from '../availability/repository.js';
import { customerUsage, loadEngineInputs, loadTarget, serviceNotOfferedError, unlinkedResourceError } from '../availability/inputs.js';
import type { PreparedSearch } from '../availability/inputs.js';
import type { TouchedEntities } from '../availability/cache.js';
import { appointmentRepository as repo } from './repository.js';
import type { AppointmentFilters, AppointmentRow, SortKey, SortOrder } from './repository.js';
import { CURSOR_LIFETIME_MS, decodeCursor, encodeCursor } from './cursor.js';

/** The appointment as every route returns it (and as events carry it). */
export function toApi(row: AppointmentRow) {
  return {
    id: row.id,
    companyId: row.companyId,
    locationId: row.locationId,
    serviceId: row.serviceId,
    customerId: row.customerId,
    resourceIds: row.resourceIds,
    status: row.status,
    startTime: row.startTime.toISOString(),
    endTime: row.endTime.toISOString(),
    duration: row.duration,
    padding: row.padding,
    timezoneName: row.timezoneName,
    expiresAt: row.expiresAt?.toISOString() ?? null,
    confirmed: row.confirmed,
    allowPaddingOverflow: row.allowPaddingOverflow,
    ignoreExternalEvents: row.ignoreExternalEvents,
    notes: row.notes,
    field1: row.field1,
    field2: row.field2,
    field3: row.field3,
    field4: row.field4,
    field5: row.field5,
    field6: row.field6,
    field7: row.field7,
    field8: row.field8,
    field9: row.field9,
    field10: row.field10,
    rescheduledFromId: row.rescheduledFromId,
    rescheduledToId: row.rescheduledToId,
    legacyId: row.legacyId,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}
export type Appointment = ReturnType<typeof toApi>;

type CustomFieldValues = Partial<Record<(typeof CUSTOM_FIELD_NAMES)[number], string | null>>;

/** A customer given by contact details instead of CustomerId: found by email in the company, or created. */
export interface CustomerDetails {
  name?: string | undefined;
  email?: string | undefined;
  phone?: string | null | undefined;
}

/** Body of create, hold and reschedule (the specification's creation body). */
export interface SlotRequest extends CustomerDetails, CustomFieldValues {
  Unavailability?: { startTime: string; endTime: string } | undefined;
  duration?: number | undefined;
  overrideDuration?: boolean | undefined;
  ResourceIds?: string[] | undefined;
  CustomerId?: string | undefined;
  allowPaddingOverflow?: boolean | undefined;
  ignoreExternalEvents?: boolean | undefined;
  notes?: string | null | undefined;
  legacyId?: string | null | undefined;
}

export interface ListQuery {
  LocationId?: string | undefined;
  ServiceId?: string | undefined;
  ResourceId?: string | undefined;
  CustomerId?: string | undefined;
  status?: AppointmentStatus[] | undefined;
  startDate?: string | undefined;
  endDate?: string | undefined;
  sort?: SortKey | undefined;
  order?: SortOrder | undefined;
  limit?: number | undefined;
}

export const MAX_LIST_OFFSET = 10_000;
export const IDEMPOTENCY_WINDOW_MS = 24 * 3_600_000;
export const INVALID_CURSOR = 'Invalid or expired appointment cursor';
export const SLOT_UNAVAILABLE = 'That time is no longer available; choose a time from the availability endpoint';
export const LOCK_BUSY = 'Other requests are booking the same resources right now and this one could not get its turn in time; retry in a moment (with the same Idempotency-Key, it can never book twice)';
/** A time that no booking took: it was never offered. Distinct from SLOT_UNAVAILABLE (BOOKING-105). */
export const NEVER_OPEN = 'That time is not open for booking';
const NEVER_OPEN_HINT = ': the location, service or resource is closed then (or it is blocked, or not a slot start); choose a time from the availability endpoint';

export interface AppointmentDeps {
  db: Db;
  cursorSecret: string;
  /** Clears the cached availability answers that depend on these records (after commit). */
  touch: (companyId: string, entities: TouchedEntities) => Promise<void>;
  now?: () => number;
  /** Live holds a company's public booking page may have at once (PUBLIC_HOLDS_PER_COMPANY). */
  publicHoldsPerCompany?: number;
}

/**
 * Whose an Idempotency-Key is: the key is bound to its caller, so another caller of the company
 * who sends the same key never gets the first caller's answer.
 */
function idempotencyCaller(principal: Principal): string {
  switch (principal.kind) {
    case 'machine':
      return `machine:${principal.clientId}`;
    case 'dashboard':
    case 'user':
      return `user:${principal.userId}`;
    case 'public':
      return `public:${principal.origin}`;
  }
}

/** The query of create and hold: the location and service, and the customer when not in the body. */
export interface NewSlotQuery {
  LocationId: string;
  ServiceId: string;
  CustomerId?: string | undefined;
}

/** CustomerId may come in the body or the query; both, and different, is a 400. */
function withQueryCustomer(query: NewSlotQuery, body: SlotRequest): SlotRequest {
  if (query.CustomerId === undefined) return body;
  if (body.CustomerId !== undefined && body.CustomerId !== query.CustomerId) {
    throw validationError('query', 'CustomerId', 'CustomerId in the query and CustomerId in the body differ; send it once');
  }
  return { ...body, CustomerId: query.CustomerId };
}

/** A 400 for a booking rule, with its legacy code, naming the field when there is one. */
function problemError(problem: BookingProblem, location: ErrorLocation = 'body'): ApiError {
  return new ApiError(400, problem.msg, problem.path ? [fieldError(location, problem.path, problem.msg, problem.code)] : [], problem.code);
}


/** Who may see an appointment: scope by location, and a Resource-role user only their resource's. */
function visible(principal: Principal, row: { locationId: string; resourceIds: string[]; createdVia: string }): boolean {
  if (principal.kind === 'public') return row.createdVia === 'public';
  const scope = locationScope(principal);
  if (scope && !scope.has(row.locationId)) return false;
  if (isResourceRole(principal)) return principal.linkedResourceId !== null && row.resourceIds.includes(principal.linkedResourceId);
  return true;
}

function splitName(name: string): { firstName: string; lastName: string | null } {
  const trimmed = name.trim();
  const space = trimmed.indexOf(' ');
  return space < 0 ? { firstName: trimmed, lastName: null } : { firstName: trimmed.slice(0, space), lastName: trimmed.slice(space + 1).trim() || null };
}

export function createAppointmentService(deps: AppointmentDeps) {
  const { db } = deps;
  const clock = deps.now ?? Date.now;
  const availabilityRepository: AvailabilityRepository = createAvailabilityRepository(db);

  /**
   * One transaction (retried on deadlock, platform/database/transaction.ts). A lock wait that runs
   * past DATABASE_LOCK_TIMEOUT_MS is BOOKING-137: the records are busy, and a retry will find them
   * free; the client's Idempotency-Key keeps that retry from booking twice.
   */
  async function transaction<T>(work: (trx: Db) => Promise<T>): Promise<T> {
    try {
      return await runTransaction(db, work);
    } catch (error) {
      if (isLockTimeout(error)) throw new ApiError(409, LOCK_BUSY, [], 'BOOKING-137', { 'Retry-After': '1' });
      throw error;
    }
  }

  function lockKeys(companyId: string, parts: { resources: string[]; customerId?: string | null; dailyLimits?: string | null }): string[] {
    const keys = parts.resources.map((id) => `${companyId}:resource:${id}`);
    if (parts.customerId) keys.push(`${companyId}:customer:${parts.customerId}`);
    if (parts.dailyLimits) keys.push(`${companyId}:service-daily-limits:${parts.dailyLimits}`);
    return keys;
  }

  async function readVisible(trx: Db, principal: Principal, companyId: string, id: string, forUpdate = false): Promise<AppointmentRow> {
    const row = await repo.byId(trx, companyId, id, { forUpdate });
    if (!row || !visible(principal, row)) throw notFound('Appointment not found');
    return row;
  }

  async function emit(trx: Db, row: AppointmentRow, triggers: EventTrigger[]) {
    const payload = toApi(row);
    // One statement per event, so each gets its own created_at and consumers see them in order.
    for (const trigger of triggers) {
      await repo.addEvents(trx, [{ companyId: row.companyId, id: randomUUID(), trigger, appointmentId: row.id, locationId: row.locationId, payload }]);
    }
  }

  async function afterCommit(rows: AppointmentRow[]) {
    const first = rows[0];
    if (!first) return;
    const entities: TouchedEntities = {
      locations: [...new Set(rows.map((r) => r.locationId))],
      services: [...new Set(rows.map((r) => r.serviceId))],
      resources: [...new Set(rows.flatMap((r) => r.resourceIds))],
      customers: [...new Set(rows.flatMap((r) => (r.customerId ? [r.customerId] : [])))],
    };
    await deps.touch(first.companyId, entities);
  }

  /**
   * Everything about a requested slot that can be checked before taking locks: ids are the
   * company's, the service is offered at the location, the resources are linked to both, the caller
   * may book there, the duration rules and the times.
   */
  async function prepareSlot(
    companyId: string,
    principal: Principal,
    target: { locationId: string; serviceId: string; idsFrom: 'query' | 'stored' },
    body: SlotRequest,
    options: { checkLeadTime: boolean; now: number; defaultResourceIds?: string[]; customerIdLocation?: ErrorLocation },
  ) {
    const resourceIds = body.ResourceIds ?? options.defaultResourceIds;
    const { location, service, offered, bookable } = await loadTarget(db, availabilityRepository, companyId, {
      LocationId: target.locationId,
      ServiceId: target.serviceId,
      ResourceIds: body.ResourceIds ?? [],
      CustomerId: body.CustomerId,
      location: 'body',
      ...(options.customerIdLocation ? { customerIdLocation: options.customerIdLocation } : {}),
      ...(target.idsFrom === 'stored' ? { missing: () => badRequest('The appointment\'s location or service has been archived') } : {}),
    });
    const scope = locationScope(principal);
    if (scope && !scope.has(target.locationId)) throw forbidden('This location is outside your location access');
    if (principal.kind === 'public' && !service.showOnline) {
      const msg = `${service.id} is not a service of this company`;
      throw new ApiError(400, msg, [fieldError('query', 'ServiceId', msg)]);
    }
    if (target.idsFrom === 'query' && !offered) {
      throw serviceNotOfferedError(service.id, location.id);
    }

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

    const roundRobin = service.roundRobin as RoundRobin;
    let candidates = bookable;
    // 'all': every named resource takes part; 'pool': the engine picks one (RANDOM, BALANCED).
    let mode: 'all' | 'pool';
    if (resourceIds && resourceIds.length > 0) {
      const linked = new Set(bookable.map((r) => r.id));
      const index = resourceIds.findIndex((id) => !linked.has(id));
      if (index >= 0) {
        throw await unlinkedResourceError(db, companyId, { locationId: location.id, serviceId: service.id, resourceId: resourceIds[index]! }, 'body', `ResourceIds.${index}`);
      }
      candidates = bookable.filter((r) => resourceIds.includes(r.id));
      mode = roundRobin === 'RANDOM' || roundRobin === 'BALANCED' ? 'pool' : 'all';
    } else if (roundRobin === 'RANDOM' || roundRobin === 'BALANCED') {
      mode = 'pool';
    } else if (roundRobin === 'COMBINED') {
      mode = 'all';
    } else {
      throw validationError('body', 'ResourceIds', 'ResourceIds is required: the service\'s roundRobin is NONE, so the caller names the resource', 'BOOKING-407');
    }
    if (candidates.length === 0) throw problemError({ path: null, msg: SLOT_UNAVAILABLE, code: 'BOOKING-105' });
    if (isResourceRole(principal)) {
      const own = principal.linkedResourceId;
      if (mode === 'pool' || candidates.some((r) => r.id !== own)) throw forbidden('A Resource-role user may book only their linked resource');
    }
    const zone = location.timezoneName;
    const date = DateTime.fromMillis(startMs, { zone }).toISODate()!;
    const prepared: PreparedSearch = { location, service, resources: candidates, zone, endDate: date, duration };
    return { prepared, mode, roundRobin, startMs, endMs, date };
  }

  type PreparedSlot = Awaited<ReturnType<typeof prepareSlot>>;

  /**
   * Inside the booking transaction, after the locks: the limits and the slot itself, against what is
   * committed now. Returns the resources the appointment takes. `exclude`: the appointment being
   * booked, reserved or rescheduled, which must not compete with itself.
   */
  async function checkSlot(
    trx: Db,
    companyId: string,
    slot: PreparedSlot,
    customerId: string | null,
    options: { now: number; exclude: string[]; countsAsActive: boolean; checkLeadTime: boolean; allowPaddingOverflow: boolean; ignoreExternalEvents: boolean },
  ): Promise<string[]> {
    const { prepared, mode, roundRobin, startMs, date } = slot;
    const { service } = prepared;
    const inputs = await loadEngineInputs(createAvailabilityRepository(trx), companyId, prepared, { startDate: date, roundRobin, CustomerId: customerId }, options.now, options.exclude);
    const limit = limitProblem(
      service,
      mode === 'all' ? prepared.resources : [],
      { day: inputs.dailyUsage[date] ?? { count: 0, minutes: 0 }, customer: inputs.customer ?? null },
      prepared.duration,
      options.countsAsActive,
    );
    if (limit) throw problemError(limit);
    // For a reservation (RS), active limits do not count: the engine sees no active usage.
    const customer = inputs.customer && !options.countsAsActive ? { ...inputs.customer, activeCount: 0, activeByResource: {} } : inputs.customer;
    const engineInput: Parameters<typeof computeAvailability>[0] = {
      now: options.now,
      timezoneName: prepared.zone,
      locationWeekly: prepared.location.weeklyAvailability as WeeklySchedule | null,
      service: {
        ...service,
        weeklyAvailability: service.weeklyAvailability as WeeklySchedule | null,
        // Booking a hold or a reservation keeps the slot it was given: lead time was checked then.
        ...(options.checkLeadTime ? {} : { bookInAdvance: 0, bookAheadUnit: 'none' as const, bookAheadValue: null }),
      },
      resources: inputs.engineResources,
      startDate: date,
      endDate: date,
      duration: prepared.duration,
      roundRobin: mode === 'all' ? 'COMBINED' : roundRobin,
      busy: inputs.busy,
      appointments: inputs.appointments,
      dailyUsage: inputs.dailyUsage,
      weeklyMinutes: inputs.weeklyMinutes,
      ...(customer ? { customer } : {}),
      allowPaddingOverflow: options.allowPaddingOverflow,
      ignoreExternalEvents: options.ignoreExternalEvents,
    };
    const startIso = new Date(startMs).toISOString();
    const endIso = new Date(slot.endMs).toISOString();
    const offered = (input: typeof engineInput) => computeAvailability(input).availableTimes.find((s) => s.startTime === startIso && s.endTime === endIso);
    const found = offered(engineInput);
    if (found) return found.resourceIds;
    // Taken (BOOKING-105) only if the time would be free without the other bookings; otherwise it
    // was never open: a closed day, outside the hours, a holiday, a block, or off the slot grid.
    const { customer: _customer, ...withoutCustomer } = engineInput;
    if (offered({ ...withoutCustomer, appointments: [], dailyUsage: {} })) throw problemError({ path: null, msg: SLOT_UNAVAILABLE, code: 'BOOKING-105' });
    const holiday = inputs.holidays.find((h) => h.date === date);
    const msg = holiday ? `${NEVER_OPEN}: ${date} is a holiday at this location (${holiday.name})` : `${NEVER_OPEN}${NEVER_OPEN_HINT}`;
    throw new ApiError(400, msg, [fieldError('body', 'Unavailability.startTime', msg)]);
  }

  /**
   * True when the appointments already committed leave the requested slot no room, by the engine's
   * own capacity rule (slotOccupancy): for named or COMBINED resources when any of them is full,
   * for a pool (RANDOM, BALANCED) when all are. Only appointments are looked at, so a slot this
   * passes may still be refused inside the transaction (limits, blocks); never the other way round.
   * Allocation services take their capacity from the allocation: left to the full check.
   */
  async function committedFull(companyId: string, slot: PreparedSlot, now: number): Promise<boolean> {
    const { service, resources } = slot.prepared;
    if (service.availabilityType === 'allocation' || resources.length === 0) return false;
    const occupiedUntil = slot.endMs + service.padding * 60_000;
    const rows = await availabilityRepository.activeAppointmentsOfResources(companyId, resources.map((r) => r.id), new Date(slot.startMs), new Date(occupiedUntil), new Date(now));
    const byResource = new Map<string, ActiveAppointment[]>();
    for (const row of rows) {
      const list = byResource.get(row.resourceId) ?? [];
      list.push({ id: row.id, serviceId: row.serviceId, resourceIds: [row.resourceId], padding: row.padding, start: row.startTime.getTime(), end: row.endTime.getTime() });
      byResource.set(row.resourceId, list);
    }
    const full = (resourceId: string) => {
      const sorted = (byResource.get(resourceId) ?? []).sort((a, b) => a.start - b.start);
      const { sharing, blocked } = slotOccupancy(sorted, 0, service.id, slot.startMs, slot.endMs, occupiedUntil);
      return blocked || sharing >= service.bookingsPerSlot;
    };
    return slot.mode === 'all' ? resources.some((r) => full(r.id)) : resources.every((r) => full(r.id));
  }

  /** The customer of a new booking: CustomerId, else found or created from name and email. */
  async function resolveCustomer(trx: Db, companyId: string, body: SlotRequest | CustomerDetails & { CustomerId?: string | undefined }, required: boolean): Promise<string | null> {
    if (body.CustomerId) return body.CustomerId;
    if (body.email || body.name) {
      if (!body.email) throw validationError('body', 'email', 'email is required when CustomerId is not given', 'BOOKING-109');
      if (!body.name?.trim()) throw validationError('body', 'name', 'name is required when CustomerId is not given', 'BOOKING-110');
      return repo.findOrCreateCustomer(trx, companyId, { id: randomUUID(), ...splitName(body.name), email: body.email, phone: body.phone ?? null });
    }
    if (required) throw badRequest('Either CustomerId, or name and email, must be supplied', 'BOOKING-135');
    return null;
  }

  /** The first answer stored under a live key; 400 when the key was used for another request. */
  async function storedAnswer(conn: Db, companyId: string, key: string, requestHash: string, forUpdate = false): Promise<Appointment | null> {
    let query = conn.selectFrom('idempotencyKeys').selectAll().where('companyId', '=', companyId).where('key', '=', key);
    if (forUpdate) query = query.forUpdate();
    const stored = await query.executeTakeFirst();
    if (!stored || stored.response === null || stored.createdAt.getTime() < clock() - IDEMPOTENCY_WINDOW_MS) return null;
    if (stored.requestHash !== requestHash) {
      throw validationError('headers', 'Idempotency-Key', 'This Idempotency-Key was already used with a different request');
    }
    return stored.response as Appointment;
  }

  /**
   * An Idempotency-Key on a POST: the key row is inserted first, in the same transaction as the
   * work, so a concurrent retry waits on the unique key and then reads the first answer; a failed
   * first attempt rolls the key back with everything else.
   */
  async function idempotent(trx: Db, companyId: string, key: string | undefined, requestHash: string, work: () => Promise<Appointment>): Promise<{ appointment: Appointment; replayed: boolean }> {
    if (!key) return { appointment: await work(), replayed: false };
    const inserted = await trx
      .insertInto('idempotencyKeys')
      .values({ companyId, key, requestHash })
      .onConflict((oc) => oc.columns(['companyId', 'key']).doNothing())
      .returning('key')
      .executeTakeFirst();
    if (!inserted) {
      const replay = await storedAnswer(trx, companyId, key, requestHash, true);
      if (replay) return { appointment: replay, replayed: true };
      await trx.updateTable('idempotencyKeys').set({ requestHash, createdAt: new Date(), statusCode: null, response: null }).where('companyId', '=', companyId).where('key', '=', key).execute();
    }
    const appointment = await work();
    await trx.updateTable('idempotencyKeys').set({ statusCode: 201, response: JSON.stringify(appointment) }).where('companyId', '=', companyId).where('key', '=', key).execute();
    return { appointment, replayed: false };
  }

  /**
   * A public booking page may hold only so many slots at once (issue 12: a script held a whole
   * day). 429 with Retry-After until the first of them is booked or expires.
   */
  async function assertPublicHoldRoom(trx: Db, companyId: string, cap: number, now: number) {
    const row = await trx
      .selectFrom('appointments')
      .select((eb) => [eb.fn.countAll<string>().as('live'), eb.fn.min('expiresAt').as('firstExpiry')])
      .where('companyId', '=', companyId)
      .where('createdVia', '=', 'public')
      .where('status', '=', 'IN')
      .where('expiresAt', '>', new Date(now))
      .executeTakeFirstOrThrow();
    if (Number(row.live) < cap) return;
    const firstExpiry = row.firstExpiry ? new Date(row.firstExpiry as Date).getTime() : now + 60_000;
    const seconds = Math.max(1, Math.ceil((firstExpiry - now) / 1000));
    throw new ApiError(429, `Public write rate limit exceeded: the booking page already holds ${cap} slots; try again in ${seconds} seconds`, [], undefined, {
      'Retry-After': String(seconds),
    });
  }

  /** Create (BK) and hold (IN): a new appointment in a free slot. */
  async function takeNewSlot(
    kind: 'create' | 'hold',
    companyId: string,
    principal: Principal,
    query: NewSlotQuery,
    requestBody: SlotRequest,
    idempotencyKey: string | undefined,
  ) {
    const now = clock();
    const body = withQueryCustomer(query, requestBody);
    // The route family and the caller are part of the request: a public caller can never replay a
    // dashboard answer, nor one caller another's.
    const requestHash = createHash('sha256')
      .update(JSON.stringify({ kind, via: principal.kind === 'public' ? 'public' : 'api', caller: idempotencyCaller(principal), query, body }))
      .digest('hex');
    // A retry of a request that already succeeded is answered before the slot is checked again
    // (the booking exists even if the request would no longer pass: lead time, archived records),
    // but not before the caller's location scope: a narrowed user does not read it back.
    const replayOf = async () => {
      if (!idempotencyKey) return null;
      const replay = await storedAnswer(db, companyId, idempotencyKey, requestHash);
      if (!replay) return null;
      if (!visible(principal, { ...replay, createdVia: principal.kind === 'public' ? 'public' : 'api' })) throw notFound('Appointment not found');
      return { appointment: replay, replayed: true };
    };
    const earlier = await replayOf();
    if (earlier) return earlier;
    const slot = await prepareSlot(companyId, principal, { locationId: query.LocationId, serviceId: query.ServiceId, idsFrom: 'query' }, body, {
      checkLeadTime: true,
      now,
      customerIdLocation: requestBody.CustomerId === undefined && query.CustomerId !== undefined ? 'query' : 'body',
    });
    const { prepared } = slot;
    const allowPaddingOverflow = body.allowPaddingOverflow ?? prepared.service.allowPaddingOverflow;
    const ignoreExternalEvents = body.ignoreExternalEvents ?? prepared.service.ignoreExternalEvents;
    // Before any transaction or lock: a slot that committed appointments already fill is refused
    // with one indexed read, so a crowd after a hot slot is turned away at once (issue 11).
    // A retry of this very request may be what fills it: the first attempt committed after the
    // replay check above (its answer was stored in the same transaction), so look once more.
    if (await committedFull(companyId, slot, now)) {
      const replay = await replayOf();
      if (replay) return replay;
      throw problemError({ path: null, msg: SLOT_UNAVAILABLE, code: 'BOOKING-105' });
    }
    let created: AppointmentRow | undefined;
    const result = await transaction(async (trx) => {
      created = undefined;
      return idempotent(trx, companyId, idempotencyKey, requestHash, async () => {
        const customerId = await resolveCustomer(trx, companyId, body, kind === 'create');
        const publicHold = kind === 'hold' && principal.kind === 'public' && deps.publicHoldsPerCompany !== undefined;
        const slotCheck = { now, exclude: [], countsAsActive: true, checkLeadTime: true, allowPaddingOverflow, ignoreExternalEvents };
        // Someone holds one of these locks: when what is committed already fills the slot, refuse
        // now instead of queueing behind them only to be refused (the fast refusal of issue 11).
        await repo.lock(
          trx,
          [
            ...lockKeys(companyId, { resources: prepared.resources.map((r) => r.id), customerId, dailyLimits: dailyLimitsKey(prepared) }),
            // Public holds of a company are counted under a lock of their own, so the cap holds.
            ...(publicHold ? [`${companyId}:public-holds`] : []),
          ],
          { whenContended: async () => void (await checkSlot(trx, companyId, slot, customerId, slotCheck)) },
        );
        if (publicHold) await assertPublicHoldRoom(trx, companyId, deps.publicHoldsPerCompany!, now);
        const resourceIds = await checkSlot(trx, companyId, slot, customerId, slotCheck);
        const id = randomUUID();
        await repo.insert(
          trx,
          {
            companyId,
            id,
            locationId: prepared.location.id,
            serviceId: prepared.service.id,
            customerId,
            status: kind === 'create' ? 'BK' : 'IN',
            startTime: new Date(slot.startMs),
            endTime: new Date(slot.endMs),
            duration: prepared.duration,
            padding: prepared.service.padding,
            expiresAt: kind === 'hold' ? new Date(now + prepared.location.bookingTimerMinutes * 60_000) : null,
            allowPaddingOverflow,
            ignoreExternalEvents,
            notes: body.notes ?? null,
            legacyId: body.legacyId ?? null,
            createdVia: principal.kind === 'public' ? 'public' : 'api',
            ...customFields(body),
          },
          resourceIds,
        );
        created = (await repo.byId(trx, companyId, id))!;
        if (kind === 'create') await emit(trx, created, ['NEW_APPOINTMENT']);
        return toApi(created);
      });
    });
    if (created) await afterCommit([created]);
    return result;
  }

  /**
   * An operation on an existing appointment. Locks are taken before the row lock, in every
   * operation, so lock order is the same everywhere.
   */
  async function changeExisting<T>(
    companyId: string,
    principal: Principal,
    id: string,
    keys: (row: AppointmentRow) => string[],
    work: (trx: Db, row: AppointmentRow) => Promise<{ result: T; changed: AppointmentRow[] }>,
    /** Runs first in the transaction (before any lock); returns further keys to lock. */
    prelude?: (trx: Db) => Promise<string[]>,
    /** The row as already read by the caller (saves reading it again). */
    known?: AppointmentRow,
  ): Promise<T> {
    const before = known ?? (await readVisible(db, principal, companyId, id));
    let changed: AppointmentRow[] = [];
    const result = await transaction(async (trx) => {
      const extra = prelude ? await prelude(trx) : [];
      const locked = new Set([...keys(before), ...extra]);
      await repo.lock(trx, [...locked]);
      const row = await readVisible(trx, principal, companyId, id, true);
      // Changed meanwhile (a new customer, say): lock what the row needs now. Taken out of order, so
      // a deadlock is possible; PostgreSQL then aborts one transaction and it is retried.
      const missing = keys(row).filter((key) => !locked.has(key));
      if (missing.length > 0) await repo.lock(trx, missing);
      const outcome = await work(trx, row);
      changed = outcome.changed;
      return outcome.result;
    });
    await afterCommit(changed);
    return result;
  }

  /**
   * The lock of a service's daily limits. Per service, not per day: the service's days are local
   * days of each booking's location, and locations of one service may be in different zones, so
   * two bookings that count against the same day could name different dates.
   */
  function dailyLimitsKey(prepared: PreparedSearch): string | null {
    const s = prepared.service;
    return s.dailyBookingLimitCount > 0 || s.dailyBookingLimitMinutes > 0 ? s.id : null;
  }

  function refuse(operation: Operation, row: AppointmentRow, now: number) {
    const problem = transitionProblem(operation, row.status, row.expiresAt?.getTime() ?? null, now);
    if (problem) throw problemError(problem);
  }

  /** The stored slot of an appointment, re-validated (reserve, book): same time, same resources. */
  async function prepareStoredSlot(companyId: string, principal: Principal, row: AppointmentRow, now: number) {
    return prepareSlot(
      companyId,
      principal,
      { locationId: row.locationId, serviceId: row.serviceId, idsFrom: 'stored' },
      { Unavailability: { startTime: row.startTime.toISOString(), endTime: row.endTime.toISOString() }, duration: row.duration },
      { checkLeadTime: false, now, defaultResourceIds: row.resourceIds },
    ).catch((error: unknown) => {
      // The stored resources may have been unlinked or archived since the hold: the slot is gone.
      if (error instanceof ApiError && error.statusCode === 400 && error.errors.some((e) => e.path.startsWith('ResourceIds'))) {
        throw problemError({ path: null, msg: SLOT_UNAVAILABLE, code: 'BOOKING-105' });
      }
      throw error;
    });
  }

  /** Confirm of a booked appointment: sets confirmed, and APPOINTMENT_CONFIRMED only the first time. */
  async function confirmBooked(trx: Db, row: AppointmentRow) {
    if (row.confirmed) return { result: toApi(row), changed: [] };
    const confirmed = await repo.update(trx, row, { confirmed: true });
    await emit(trx, confirmed, ['APPOINTMENT_CONFIRMED']);
    return { result: toApi(confirmed), changed: [] };
  }

  async function customerExists(companyId: string, email: string): Promise<boolean> {
    const row = await db
      .selectFrom('customers')
      .select('id')
      .where('companyId', '=', companyId)
      .where((eb) => eb(eb.fn('lower', ['email']), '=', email.toLowerCase()))
      .where('archivedAt', 'is', null)
      .executeTakeFirst();
    return row !== undefined;
  }

  async function moveToBooked(companyId: string, principal: Principal, id: string, operation: 'book' | 'confirm', customer: CustomerDetails & { CustomerId?: string | undefined }) {
    const now = clock();
    const before = await readVisible(db, principal, companyId, id);
    if (operation === 'confirm' && before.status === 'BK') {
      // Confirm is idempotent: APPOINTMENT_CONFIRMED only the first time.
      return changeExisting(companyId, principal, id, () => [], async (trx, row) => {
        refuse('confirm', row, now);
        return confirmBooked(trx, row);
      });
    }
    refuse(operation, before, now);
    if (customer.CustomerId) await assertOwned(db, companyId, [{ table: 'customers', ids: [customer.CustomerId], location: 'body', path: 'CustomerId', single: true }]);
    const slot = await prepareStoredSlot(companyId, principal, before, now);
    if (before.customerId && customer.CustomerId && customer.CustomerId !== before.customerId) {
      throw validationError('body', 'CustomerId', 'The appointment already has a customer; change it with PUT /v3/appointment/:id');
    }
    if (before.customerId && !customer.CustomerId && (customer.email || customer.name)) {
      throw validationError('body', customer.email ? 'email' : 'name', 'The appointment already has a customer; contact details are taken only for a hold without one');
    }
    // A hold without a customer gets one here; it is found or created before the locks, so the
    // customer's lock is taken with the others and their limits cannot be raced.
    let newCustomerId: string | null = null;
    // A booking page that names an existing customer's email proves nothing about the address:
    // the customer's record stays as it is (findOrCreateCustomer never overwrites) and the
    // appointment sends the customer no message (issue 12).
    const unconfirmed = principal.kind === 'public' && !before.customerId && customer.email !== undefined && (await customerExists(companyId, customer.email));
    return changeExisting(
      companyId,
      principal,
      id,
      (row) => lockKeys(companyId, { resources: row.resourceIds, customerId: row.customerId, dailyLimits: dailyLimitsKey(slot.prepared) }),
      async (trx, row) => {
        refuse(operation, row, now);
        // Booked meanwhile by a concurrent call (refuse() above already turned book away): confirm
        // stays idempotent.
        if (row.status === 'BK') return confirmBooked(trx, row);
        const customerId = row.customerId ?? newCustomerId ?? (await resolveCustomer(trx, companyId, customer, true));
        await checkSlot(trx, companyId, slot, customerId, {
          now,
          exclude: [row.id],
          countsAsActive: true,
          checkLeadTime: false,
          allowPaddingOverflow: row.allowPaddingOverflow,
          ignoreExternalEvents: row.ignoreExternalEvents,
        });
        const fromReserved = row.status === 'RS';
        const updated = await repo.update(trx, row, { status: 'BK', expiresAt: null, customerId, ...(fromReserved ? { confirmed: true } : {}), ...(unconfirmed ? { customerUnconfirmed: true } : {}) });
        // A reservation becomes a booking and is confirmed by the same call.
        await emit(trx, updated, fromReserved ? ['NEW_APPOINTMENT', 'APPOINTMENT_CONFIRMED'] : ['NEW_APPOINTMENT']);
        return { result: toApi(updated), changed: [updated] };
      },
      async (trx) => {
        newCustomerId = before.customerId ? null : await resolveCustomer(trx, companyId, customer, true);
        return newCustomerId ? lockKeys(companyId, { resources: [], customerId: newCustomerId }) : [];
      },
      before,
    );
  }

  function listFilters(companyId: string, principal: Principal, query: ListQuery, zone: string | null): AppointmentFilters {
    const startOf = (date: string) => (zone ? localToInstant(date, '00:00', zone).toJSDate() : new Date(`${date}T00:00:00Z`));
    const nextDay = (date: string) => DateTime.fromISO(date, { zone: 'UTC' }).plus({ days: 1 }).toISODate()!;
    const scope = locationScope(principal);
    return {
      LocationId: query.LocationId,
      ServiceId: query.ServiceId,
      CustomerId: query.CustomerId,
      status: query.status,
      from: query.startDate ? startOf(query.startDate) : undefined,
      to: query.endDate ? startOf(nextDay(query.endDate)) : undefined,
      // A Resource-role user lists only their resource's appointments.
      ResourceId: isResourceRole(principal) ? (principal.linkedResourceId ?? '00000000-0000-0000-0000-000000000000') : query.ResourceId,
      locationIds: scope ? [...scope] : null,
    };
  }

  async function validateListQuery(companyId: string, principal: Principal, query: ListQuery): Promise<AppointmentFilters> {
    await assertOwned(db, companyId, [
      { table: 'locations', ids: query.LocationId ? [query.LocationId] : [], location: 'query', path: 'LocationId', single: true },
      { table: 'services', ids: query.ServiceId ? [query.ServiceId] : [], location: 'query', path: 'ServiceId', single: true },
      { table: 'resources', ids: query.ResourceId ? [query.ResourceId] : [], location: 'query', path: 'ResourceId', single: true },
      { table: 'customers', ids: query.CustomerId ? [query.CustomerId] : [], location: 'query', path: 'CustomerId', single: true },
    ]);
    if (query.startDate && query.endDate && query.endDate < query.startDate) throw validationError('query', 'endDate', 'endDate must be on or after startDate');
    const location = query.LocationId ? await availabilityRepository.location(companyId, query.LocationId) : undefined;
    return listFilters(companyId, principal, query, location?.timezoneName ?? null);
  }

  return {
    create: (companyId: string, principal: Principal, query: NewSlotQuery, body: SlotRequest, idempotencyKey?: string) =>
      takeNewSlot('create', companyId, principal, query, body, idempotencyKey),

    hold: (companyId: string, principal: Principal, query: NewSlotQuery, body: SlotRequest, idempotencyKey?: string) =>
      takeNewSlot('hold', companyId, principal, query, body, idempotencyKey),

    async get(companyId: string, principal: Principal, id: string): Promise<Appointment> {
      return toApi(await readVisible(db, principal, companyId, id));
    },

    /** IN → RS. allowPaddingOverflow and ignoreExternalEvents may be chosen again here, and are kept. */
    async reserve(companyId: string, principal: Principal, id: string, body: { allowPaddingOverflow?: boolean | undefined; ignoreExternalEvents?: boolean | undefined }) {
      const now = clock();
      const before = await readVisible(db, principal, companyId, id);
      refuse('reserve', before, now);
      const slot = await prepareStoredSlot(companyId, principal, before, now);
      return changeExisting(
        companyId,
        principal,
        id,
        (row) => lockKeys(companyId, { resources: row.resourceIds, customerId: row.customerId, dailyLimits: dailyLimitsKey(slot.prepared) }),
        async (trx, row) => {
          refuse('reserve', row, now);
          const allowPaddingOverflow = body.allowPaddingOverflow ?? row.allowPaddingOverflow;
          const ignoreExternalEvents = body.ignoreExternalEvents ?? row.ignoreExternalEvents;
          await checkSlot(trx, companyId, slot, row.customerId, { now, exclude: [row.id], countsAsActive: false, checkLeadTime: false, allowPaddingOverflow, ignoreExternalEvents });
          const updated = await repo.update(trx, row, { status: 'RS', expiresAt: null, allowPaddingOverflow, ignoreExternalEvents });
          return { result: toApi(updated), changed: [updated] };
        },
        undefined,
        before,
      );
    },

    /** IN → BK, RS → BK; the slot and every limit are checked again. */
    book: (companyId: string, principal: Principal, id: string, customer: CustomerDetails & { CustomerId?: string | undefined } = {}) =>
      moveToBooked(companyId, principal, id, 'book', customer),

    /** Sets confirmed (RS → BK as book does); idempotent. */
    confirm: (companyId: string, principal: Principal, id: string) => moveToBooked(companyId, principal, id, 'confirm', {}),

    /** BK or RS → CN; the slot's cached availability is cleared. */
    async cancel(companyId: string, principal: Principal, id: string) {
      const now = clock();
      return changeExisting(companyId, principal, id, (row) => lockKeys(companyId, { resources: row.resourceIds }), async (trx, row) => {
        refuse('cancel', row, now);
        const updated = await repo.update(trx, row, { status: 'CN', expiresAt: null });
        await emit(trx, updated, ['APPOINTMENT_CANCELLED']);
        return { result: toApi(updated), changed: [updated] };
      });
    },

    /** BK → RE plus a new BK in the requested slot, linked both ways. */
    async reschedule(companyId: string, principal: Principal, id: string, body: SlotRequest) {
      const now = clock();
      const before = await readVisible(db, principal, companyId, id);
      refuse('reschedule', before, now);
      // The creation body is accepted; a CustomerId, when sent, must be the appointment's own.
      if (body.CustomerId !== undefined && body.CustomerId !== before.customerId) {
        throw validationError('body', 'CustomerId', 'CustomerId must be the appointment\'s own customer: a rescheduled appointment keeps its customer (change it with PUT /v3/appointment/:id)');
      }
      const slot = await prepareSlot(companyId, principal, { locationId: before.locationId, serviceId: before.serviceId, idsFrom: 'stored' }, body, {
        checkLeadTime: true,
        now,
        defaultResourceIds: before.resourceIds,
      });
      return changeExisting(
        companyId,
        principal,
        id,
        (row) => lockKeys(companyId, { resources: [...row.resourceIds, ...slot.prepared.resources.map((r) => r.id)], customerId: row.customerId, dailyLimits: dailyLimitsKey(slot.prepared) }),
        async (trx, row) => {
          refuse('reschedule', row, now);
          const allowPaddingOverflow = body.allowPaddingOverflow ?? row.allowPaddingOverflow;
          const ignoreExternalEvents = body.ignoreExternalEvents ?? row.ignoreExternalEvents;
          const resourceIds = await checkSlot(trx, companyId, slot, row.customerId, { now, exclude: [row.id], countsAsActive: true, checkLeadTime: true, allowPaddingOverflow, ignoreExternalEvents });
          const newId = randomUUID();
          await repo.insert(
            trx,
            {
              companyId,
              id: newId,
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
              allowPaddingOverflow,
              ignoreExternalEvents,
              notes: body.notes !== undefined ? body.notes : row.notes,
              rescheduledFromId: row.id,
              legacyId: body.legacyId ?? null,
              createdVia: row.createdVia,
              ...Object.fromEntries(CUSTOM_FIELD_NAMES.map((f) => [f, body[f] !== undefined ? body[f] : row[f]])),
            },
            resourceIds,
          );
          const original = await repo.update(trx, row, { status: 'RE', rescheduledToId: newId });
          const replacement = (await repo.byId(trx, companyId, newId))!;
          await emit(trx, original, ['APPOINTMENT_RESCHEDULED']);
          await emit(trx, replacement, ['NEW_APPOINTMENT']);
          return { result: toApi(replacement), changed: [original, replacement] };
        },
        undefined,
        before,
      );
    },

    /**
     * Notes, custom fields and the customer. For an appointment that holds its slot (IN, RS, BK)
     * the customer limits are checked again, as the specification asks even for metadata-only updates.
     */
    async update(companyId: string, principal: Principal, id: string, body: CustomFieldValues & { notes?: string | null | undefined; CustomerId?: string | undefined }) {
      const now = clock();
      if (body.CustomerId) await assertOwned(db, companyId, [{ table: 'customers', ids: [body.CustomerId], location: 'body', path: 'CustomerId', single: true }]);
      return changeExisting(
        companyId,
        principal,
        id,
        (row) => lockKeys(companyId, { resources: [], customerId: body.CustomerId ?? row.customerId }),
        async (trx, row) => {
          const customerId = body.CustomerId ?? row.customerId;
          const active = row.status === 'BK' || row.status === 'RS' || (row.status === 'IN' && (row.expiresAt?.getTime() ?? 0) > now);
          if (active && customerId) {
            const reads = createAvailabilityRepository(trx);
            const service = await reads.service(companyId, row.serviceId);
            if (service) {
              const rows = await reads.customerAppointments(companyId, customerId, row.serviceId, [row.id]);
              const usage = customerUsage(rows, now);
              const resources = await repo.resources(trx, companyId, row.resourceIds);
              // Daily limits belong to the slot, which a metadata update does not move.
              const problem = limitProblem({ ...service, dailyBookingLimitCount: 0, dailyBookingLimitMinutes: 0 }, resources, { day: { count: 0, minutes: 0 }, customer: usage }, row.duration, row.status !== 'RS');
              if (problem) throw problemError(problem);
            }
          }
          const updated = await repo.update(trx, row, {
            ...(body.notes !== undefined ? { notes: body.notes } : {}),
            ...(body.CustomerId !== undefined ? { customerId: body.CustomerId } : {}),
            ...customFields(body),
          });
          return { result: toApi(updated), changed: body.CustomerId && body.CustomerId !== row.customerId ? [row, updated] : [] };
        },
      );
    },

    /** Only IN can be deleted: a hold given up before checkout. */
    async remove(companyId: string, principal: Principal, id: string): Promise<void> {
      const now = clock();
      await changeExisting(companyId, principal, id, (row) => lockKeys(companyId, { resources: row.resourceIds }), async (trx, row) => {
        refuse('delete', row, now);
        await repo.delete(trx, companyId, id);
        return { result: undefined, changed: [row] };
      });
    },

    async list(companyId: string, principal: Principal, query: ListQuery & { page?: number | undefined }) {
      const limit = query.limit ?? 20;
      const page = query.page ?? 1;
      const offset = (page - 1) * limit;
      if (offset > MAX_LIST_OFFSET) {
        throw validationError('query', 'page', `(page - 1) * limit must not exceed ${MAX_LIST_OFFSET.toLocaleString('en-US')}; use GET /v3/appointments/cursor to walk further`);
      }
      const filters = await validateListQuery(companyId, principal, query);
      const { rows, total } = await repo.page(db, companyId, filters, query.sort ?? 'startTime', query.order ?? 'asc', limit, offset);
      return { data: rows.map(toApi), page, limit, total };
    },

    /** First page of a cursor walk: the query is validated once and carried, signed, in the cursor. */
    async cursorFirst(companyId: string, principal: Principal, query: ListQuery) {
      const filters = await validateListQuery(companyId, principal, query);
      const normalised: ListQuery = { ...query, sort: query.sort ?? 'startTime', order: query.order ?? 'asc', limit: query.limit ?? 20 };
      return cursorPage(companyId, normalised, filters, null, clock() + CURSOR_LIFETIME_MS);
    },

    async cursorNext(companyId: string, principal: Principal, cursor: string) {
      const state = decodeCursor(deps.cursorSecret, cursor, companyId, clock());
      if (!state) throw new ApiError(400, INVALID_CURSOR, [fieldError('query', 'cursor', INVALID_CURSOR)]);
      const query = state.q as ListQuery;
      const location = query.LocationId ? await availabilityRepository.location(companyId, query.LocationId) : undefined;
      const filters = listFilters(companyId, principal, query, location?.timezoneName ?? null);
      return cursorPage(companyId, query, filters, { value: new Date(state.p[0]), id: state.p[1] }, state.e);
    },

    /** Events written for an appointment (for tests and support; delivery is the outbox worker's). */
    events: (companyId: string, appointmentId: string) => repo.events(db, companyId, appointmentId),
  };

  async function cursorPage(companyId: string, query: ListQuery, filters: AppointmentFilters, after: { value: Date; id: string } | null, expiresAt: number) {
    const sort = query.sort ?? 'startTime';
    const limit = query.limit ?? 20;
    const rows = await repo.after(db, companyId, filters, sort, query.order ?? 'asc', limit + 1, after);
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    const nextCursor =
      rows.length > limit && last
        ? encodeCursor(deps.cursorSecret, { c: companyId, q: query as Record<string, unknown>, p: [last[sort].getTime(), last.id], e: expiresAt })
        : null;
    return { data: page.map(toApi), nextCursor };
  }
}

function customFields(body: CustomFieldValues): CustomFieldValues {
  const out: CustomFieldValues = {};
  for (const field of CUSTOM_FIELD_NAMES) if (body[field] !== undefined) out[field] = body[field];
  return out;
}

export type AppointmentService = ReturnType<typeof createAppointmentService>;
