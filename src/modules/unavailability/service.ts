import { randomUUID } from 'node:crypto';
import { DateTime } from 'luxon';
import type { Updateable } from 'kysely';
import type { Principal } from '../../platform/auth/principal.js';
import { conflict, fieldError, forbidden, notFound, validationErrors } from '../../platform/errors.js';
import type { ErrorLocation, FieldError } from '../../platform/errors.js';
import type { Db } from '../../platform/database/index.js';
import type { RecurringBlocksTable } from '../../platform/database/schema.js';
import type { Frequency, RecurrenceRule } from '../../domain/recurrence.js';
import { localToInstant } from '../../domain/local-time.js';
import { minutesOfDay } from '../../domain/weekly-availability.js';
import type { Weekday } from '../../domain/weekly-availability.js';
import type { TouchedEntities } from '../availability/cache.js';
import { assertOwned } from '../catalog/ownership.js';
import type { IdReference } from '../catalog/ownership.js';
import { assertLocationsInScope, catalogScope, inScope, isResourceRole, locationScope, OUTSIDE_SCOPE_MESSAGE } from '../catalog/scope.js';
import { pageOf } from '../catalog/graph.js';
import type { CatalogLinks } from '../catalog/links.js';
import type {
  AllocationScope,
  BlockRow,
  HolidayRow,
  RecurringBlockRow,
  ScopeMatch,
  SingleAllocationRow,
  UnavailabilityRepository,
  WeeklyAllocationRow,
} from './repository.js';

type Caller = Principal & { companyId: string };

// --- Legacy code families -------------------------------------------------------------------

/** Blocks report the codes of their scope: location CALENDARBLOCK, resource RESOURCEBLOCK, service SERVICEBLOCK. */
export type BlockFamily = 'CALENDARBLOCK' | 'RESOURCEBLOCK' | 'SERVICEBLOCK';
/** Allocations report RESOURCEALLOCATION when a ResourceId scopes them, else SERVICEALLOCATION. */
export type AllocationFamily = 'RESOURCEALLOCATION' | 'SERVICEALLOCATION';
export type Family = BlockFamily | AllocationFamily;

/** Rules whose code numbers differ between the block families (legacy-error-codes.md, CALENDAR and blocks). */
const BLOCK_CODES = {
  reasonRequired: { CALENDARBLOCK: 'CALENDARBLOCK-103', RESOURCEBLOCK: 'RESOURCEBLOCK-100', SERVICEBLOCK: 'SERVICEBLOCK-103' },
  reasonLength: { CALENDARBLOCK: 'CALENDARBLOCK-104', RESOURCEBLOCK: 'RESOURCEBLOCK-101', SERVICEBLOCK: 'SERVICEBLOCK-104' },
  /** A one-off block whose start falls on a later date than its end. */
  startDateAfterEndDate: { CALENDARBLOCK: 'CALENDARBLOCK-106', RESOURCEBLOCK: 'RESOURCEBLOCK-DATE-100', SERVICEBLOCK: 'SERVICEBLOCK-100' },
  /** A recurring block whose endDate is before its startDate. */
  endDateBeforeStartDate: { CALENDARBLOCK: 'CALENDARBLOCK-106', RESOURCEBLOCK: 'RESOURCEBLOCK-103', SERVICEBLOCK: 'SERVICEBLOCK-106' },
} satisfies Record<string, Record<BlockFamily, string>>;

/**
 * Request schemas carry the code of the location family (blocks) or of the service family
 * (allocations) in `x-codes`; this gives the same rule's code in the caller's family.
 */
export function codeForFamily(code: string, family: Family): string {
  if (family === 'CALENDARBLOCK' || family === 'RESOURCEBLOCK' || family === 'SERVICEBLOCK') {
    const rule = [BLOCK_CODES.reasonRequired, BLOCK_CODES.reasonLength].find((codes) => codes.CALENDARBLOCK === code);
    if (rule) return rule[family];
    return code.replace(/^CALENDARBLOCK-/, `${family}-`);
  }
  return code.replace(/^SERVICEALLOCATION-/, `${family}-`);
}

export interface ScopeInput {
  LocationId?: string | undefined;
  ResourceId?: string | undefined;
  ServiceId?: string | undefined;
}
const SCOPE_KEYS = ['LocationId', 'ResourceId', 'ServiceId'] as const;

/** The family of a (possibly invalid) block body: its first scope id decides; none means location. */
export function blockFamilyOf(input: unknown): BlockFamily {
  const body = (typeof input === 'object' && input !== null ? input : {}) as Record<string, unknown>;
  if (body.LocationId !== undefined) return 'CALENDARBLOCK';
  if (body.ResourceId !== undefined) return 'RESOURCEBLOCK';
  if (body.ServiceId !== undefined) return 'SERVICEBLOCK';
  return 'CALENDARBLOCK';
}

export function allocationFamilyOf(query: unknown): AllocationFamily {
  const values = (typeof query === 'object' && query !== null ? query : {}) as Record<string, unknown>;
  return values.ResourceId !== undefined && values.ResourceId !== '' ? 'RESOURCEALLOCATION' : 'SERVICEALLOCATION';
}

// --- Inputs -------------------------------------------------------------------------------------

export interface BlockInput extends ScopeInput {
  startTime: string;
  endTime: string;
  reason: string;
}

export interface BlockListQuery extends ScopeInput {
  startDate?: string | undefined;
  endDate?: string | undefined;
  limit: number;
  page: number;
}

export const FREQUENCIES = ['DAILY', 'WEEKLY', 'BIWEEKLY', 'MONTHLY', 'YEARLY'] as const satisfies readonly Frequency[];

/** Largest interval per frequency and its code (REPEAT-102 .. REPEAT-105). */
export const INTERVAL_LIMITS: Record<Frequency, { max: number; code: string }> = {
  DAILY: { max: 365, code: 'REPEAT-102' },
  WEEKLY: { max: 52, code: 'REPEAT-103' },
  BIWEEKLY: { max: 52, code: 'REPEAT-103' },
  MONTHLY: { max: 12, code: 'REPEAT-104' },
  YEARLY: { max: 5, code: 'REPEAT-105' },
};

export interface RecurringBlockInput extends ScopeInput {
  name?: string;
  frequency?: Frequency;
  interval?: number;
  startDate?: string;
  endDate?: string | null;
  startTime?: string;
  endTime?: string;
  iana?: string;
  weekdays?: number[];
  dayOfMonth?: number | null;
  legacyId?: string | null;
}
export type RecurringBlockCreate = RecurringBlockInput & Pick<RecurrenceRule, 'frequency' | 'startDate' | 'startTime' | 'endTime' | 'iana'> & { name: string };

export interface ListQuery extends ScopeInput {
  limit: number;
  page: number;
}

export interface HolidayInput {
  LocationId: string;
  date: string;
  name: string;
}

export interface HolidayListQuery {
  LocationId?: string | undefined;
  startDate?: string | undefined;
  endDate?: string | undefined;
  limit: number;
  page: number;
}

export interface AllocationQuery {
  LocationId: string;
  ServiceId?: string | undefined;
  ResourceId?: string | undefined;
}

interface AllocationItem {
  start: string;
  end: string;
  bookingsPerSlot?: number | null | undefined;
  legacyId?: string | null | undefined;
}
export interface WeeklyAllocationInput extends AllocationItem {
  day: Weekday;
}
export interface SingleAllocationInput extends AllocationItem {
  date: string;
}

// --- Scope --------------------------------------------------------------------------------------

interface Scope {
  locationId: string | null;
  resourceId: string | null;
  serviceId: string | null;
}

const familyOfScope = (scope: Scope): BlockFamily => (scope.locationId ? 'CALENDARBLOCK' : scope.resourceId ? 'RESOURCEBLOCK' : 'SERVICEBLOCK');

/** Exactly one of LocationId, ResourceId, ServiceId. */
function scopeProblems(input: ScopeInput): FieldError[] {
  const given = SCOPE_KEYS.filter((key) => input[key] !== undefined);
  if (given.length === 1) return [];
  if (given.length === 0) return [fieldError('body', 'LocationId', 'One of LocationId, ResourceId or ServiceId is required')];
  return given.slice(1).map((key) => fieldError('body', key, `Give only one of LocationId, ResourceId or ServiceId (got ${given.join(', ')})`));
}

function scopeOf(input: ScopeInput): Scope {
  return { locationId: input.LocationId ?? null, resourceId: input.ResourceId ?? null, serviceId: input.ServiceId ?? null };
}

/** Ownership references for scope ids given in a body or query: 400 naming a foreign or unknown id. */
function scopeReferences(input: ScopeInput, location: ErrorLocation): IdReference[] {
  return [
    { table: 'locations', ids: input.LocationId ? [input.LocationId] : [], location, path: 'LocationId', single: true },
    { table: 'resources', ids: input.ResourceId ? [input.ResourceId] : [], location, path: 'ResourceId', single: true },
    { table: 'services', ids: input.ServiceId ? [input.ServiceId] : [], location, path: 'ServiceId', single: true },
  ];
}

function touched(...scopes: Array<Partial<Scope>>): TouchedEntities {
  const locations = new Set<string>();
  const resources = new Set<string>();
  const services = new Set<string>();
  for (const scope of scopes) {
    if (scope.locationId) locations.add(scope.locationId);
    if (scope.resourceId) resources.add(scope.resourceId);
    if (scope.serviceId) services.add(scope.serviceId);
  }
  return {
    ...(locations.size ? { locations: [...locations] } : {}),
    ...(resources.size ? { resources: [...resources] } : {}),
    ...(services.size ? { services: [...services] } : {}),
  };
}

// --- Rules ----------------------------------------------------------------------------------------

function fail(problems: FieldError[]) {
  if (problems.length) throw validationErrors(problems);
}

/** An ISO 8601 instant with an offset (Ajv's date-time), keeping the offset the caller wrote. */
function parseInstant(value: string): DateTime {
  const normalised = value.replace(/^(\d{4}-\d{2}-\d{2})[ t]/, '$1T').replace(/z$/, 'Z');
  return DateTime.fromISO(normalised, { setZone: true });
}

/**
 * End after start. Equal instants: TIME-101. End before start on the same date (in the start's
 * offset, as the caller wrote it): TIME-100. On an earlier date: the family's date-order code.
 */
function blockProblems(input: BlockInput, family: BlockFamily): FieldError[] {
  const start = parseInstant(input.startTime);
  const end = parseInstant(input.endTime);
  const problems: FieldError[] = [];
  if (!start.isValid) problems.push(fieldError('body', 'startTime', 'startTime must be a valid date-time'));
  if (!end.isValid) problems.push(fieldError('body', 'endTime', 'endTime must be a valid date-time'));
  if (problems.length) return problems;
  if (+end === +start) return [fieldError('body', 'endTime', 'endTime must be after startTime, not equal to it', `${family}-TIME-101`)];
  if (end < start) {
    if (end.setZone(start.zone).toISODate() === start.toISODate()) {
      return [fieldError('body', 'endTime', 'startTime is after endTime on the same date', `${family}-TIME-100`)];
    }
    return [fieldError('body', 'endTime', 'startTime is on a later date than endTime', BLOCK_CODES.startDateAfterEndDate[family])];
  }
  return [];
}

const sortedWeekdays = (weekdays: number[] | null | undefined) => [...(weekdays ?? [])].sort((a, b) => a - b);

const WEEKLY_FREQUENCIES: Frequency[] = ['WEEKLY', 'BIWEEKLY'];

/** The rules of a whole recurring block (on create, and on change after merging). */
function recurrenceProblems(rule: RecurrenceRule, family: BlockFamily): FieldError[] {
  const problems: FieldError[] = [];
  const limit = INTERVAL_LIMITS[rule.frequency];
  if (!Number.isInteger(rule.interval) || rule.interval < 1 || rule.interval > limit.max) {
    problems.push(fieldError('body', 'interval', `interval must be 1 to ${limit.max} for ${rule.frequency}`, limit.code));
  }
  if (WEEKLY_FREQUENCIES.includes(rule.frequency)) {
    if (!rule.weekdays?.length) problems.push(fieldError('body', 'weekdays', `weekdays are required for ${rule.frequency}`, 'REPEAT-106'));
  } else if (rule.weekdays?.length) {
    problems.push(fieldError('body', 'weekdays', 'weekdays apply only to WEEKLY and BIWEEKLY rules'));
  }
  if (rule.dayOfMonth !== null && rule.dayOfMonth !== undefined && rule.frequency !== 'MONTHLY') {
    problems.push(fieldError('body', 'dayOfMonth', 'dayOfMonth applies only to MONTHLY rules'));
  }
  if (rule.endDate && rule.endDate < rule.startDate) {
    problems.push(fieldError('body', 'endDate', 'endDate must be on or after startDate', BLOCK_CODES.endDateBeforeStartDate[family]));
  }
  if (rule.startTime === rule.endTime) {
    problems.push(fieldError('body', 'endTime', 'endTime must differ from startTime (an earlier endTime ends on the next day)', `${family}-TIME-101`));
  }
  return problems;
}

/** Each window ends after it starts on its own day, and windows of one day do not overlap. */
function allocationProblems<T extends AllocationItem>(items: T[], dayOf: (item: T) => string, family: AllocationFamily, pair: boolean): FieldError[] {
  const problems: FieldError[] = [];
  items.forEach((item, index) => {
    const start = minutesOfDay(item.start);
    const end = minutesOfDay(item.end);
    if (end === start) {
      problems.push(fieldError('body', `allocations.${index}.end`, 'end must be after start, not equal to it', `${family}-TIME-101`));
    } else if (end < start) {
      problems.push(fieldError('body', `allocations.${index}.end`, 'start is after end (use "24:00" for midnight)', `${family}-TIME-100`));
    }
    if (item.bookingsPerSlot !== undefined && item.bookingsPerSlot !== null && !pair) {
      problems.push(
        fieldError('body', `allocations.${index}.bookingsPerSlot`, 'bookingsPerSlot applies only when both ServiceId and ResourceId scope the allocations'),
      );
    }
  });
  const byDay = new Map<string, Array<{ index: number; start: number; end: number }>>();
  items.forEach((item, index) => {
    const list = byDay.get(dayOf(item)) ?? [];
    list.push({ index, start: minutesOfDay(item.start), end: minutesOfDay(item.end) });
    byDay.set(dayOf(item), list);
  });
  for (const [day, windows] of byDay) {
    const sorted = windows.filter((w) => w.end > w.start).sort((a, b) => a.start - b.start || a.index - b.index);
    for (let i = 1; i < sorted.length; i++) {
      if (sorted[i]!.start < sorted[i - 1]!.end) {
        problems.push(fieldError('body', `allocations.${sorted[i]!.index}.start`, `overlaps allocations.${sorted[i - 1]!.index} on ${day}`));
      }
    }
  }
  return problems;
}

// --- Views ------------------------------------------------------------------------------------------

function blockView(row: BlockRow) {
  return {
    id: row.id,
    companyId: row.companyId,
    locationId: row.locationId,
    resourceId: row.resourceId,
    serviceId: row.serviceId,
    startTime: row.startTime.toISOString(),
    endTime: row.endTime.toISOString(),
    reason: row.reason,
    createdAt: row.createdAt.toISOString(),
  };
}

function recurringView(row: RecurringBlockRow) {
  return {
    id: row.id,
    companyId: row.companyId,
    name: row.name,
    frequency: row.frequency,
    interval: row.interval,
    startDate: row.startDate,
    endDate: row.endDate,
    startTime: row.startTime,
    endTime: row.endTime,
    iana: row.iana,
    weekdays: row.weekdays,
    dayOfMonth: row.dayOfMonth,
    locationId: row.locationId,
    resourceId: row.resourceId,
    serviceId: row.serviceId,
    legacyId: row.legacyId,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

function holidayView(row: HolidayRow) {
  return { id: row.id, companyId: row.companyId, locationId: row.locationId, date: row.date, name: row.name, createdAt: row.createdAt.toISOString() };
}

function allocationBase(row: WeeklyAllocationRow | SingleAllocationRow) {
  return {
    id: row.id,
    companyId: row.companyId,
    locationId: row.locationId,
    serviceId: row.serviceId,
    resourceId: row.resourceId,
    start: row.startTime,
    end: row.endTime,
    bookingsPerSlot: row.bookingsPerSlot,
    legacyId: row.legacyId,
    createdAt: row.createdAt.toISOString(),
  };
}
const weeklyView = (row: WeeklyAllocationRow) => ({ ...allocationBase(row), day: row.day });
const singleView = (row: SingleAllocationRow) => ({ ...allocationBase(row), date: row.date });

// --- Service --------------------------------------------------------------------------------------

export interface UnavailabilityDeps {
  db: Db;
  repository: UnavailabilityRepository;
  links: CatalogLinks;
  /** Told after every successful write which records' availability may have changed (the availability cache listens). */
  onChanged: (companyId: string, entities: TouchedEntities) => Promise<void>;
}

export function createUnavailabilityService(deps: UnavailabilityDeps) {
  const { repository, links } = deps;

  /**
   * Writes need a role other than Resource (the routes say so too) and, for a location-scoped
   * user, a scope inside their locations: a location they may access, or a resource or service
   * linked to one of them.
   */
  async function assertWritable(principal: Caller, scope: Scope) {
    if (isResourceRole(principal)) throw forbidden('A Resource-role user cannot change unavailability');
    const allowed = locationScope(principal);
    if (!allowed) return;
    if (scope.locationId) return assertLocationsInScope(principal, [scope.locationId]);
    const locationIds = scope.resourceId
      ? await links.resourceLocationIds(principal.companyId, scope.resourceId)
      : await links.serviceLocationIds(principal.companyId, scope.serviceId!);
    if (!inScope(allowed, locationIds)) throw forbidden(OUTSIDE_SCOPE_MESSAGE);
  }

  /**
   * What the caller may read: null is everything. A location-scoped user sees their locations and
   * the resources and services linked to them; a Resource-role user its resource, that resource's
   * locations and its services.
   */
  async function visibleTo(principal: Caller): Promise<ScopeMatch | null> {
    const scope = await catalogScope(principal, (resourceId) => links.resourceLocationIds(principal.companyId, resourceId));
    if (isResourceRole(principal)) {
      const resourceId = scope.linkedResourceId;
      return {
        locationIds: [...(scope.locationIds ?? [])],
        resourceIds: resourceId ? [resourceId] : [],
        serviceIds: resourceId ? await links.resourceServiceIds(principal.companyId, resourceId) : [],
      };
    }
    if (!scope.locationIds) return null;
    const locationIds = [...scope.locationIds];
    return { locationIds, ...(await repository.linkedToLocations(principal.companyId, locationIds)) };
  }

  function isVisible(visible: ScopeMatch | null, scope: Scope): boolean {
    if (!visible) return true;
    return (
      (scope.locationId !== null && visible.locationIds.includes(scope.locationId)) ||
      (scope.resourceId !== null && visible.resourceIds.includes(scope.resourceId)) ||
      (scope.serviceId !== null && visible.serviceIds.includes(scope.serviceId))
    );
  }

  /** A list filter: the scope ids given (any of them matches), or null for no filter. */
  function filterOf(input: ScopeInput): ScopeMatch | null {
    if (!input.LocationId && !input.ResourceId && !input.ServiceId) return null;
    return {
      locationIds: input.LocationId ? [input.LocationId] : [],
      resourceIds: input.ResourceId ? [input.ResourceId] : [],
      serviceIds: input.ServiceId ? [input.ServiceId] : [],
    };
  }

  function dateRangeProblems(startDate: string | undefined, endDate: string | undefined): FieldError[] {
    if (startDate && endDate && endDate < startDate) return [fieldError('query', 'endDate', 'endDate must be on or after startDate')];
    return [];
  }

  async function allocationScope(principal: Caller, query: AllocationQuery, write: boolean): Promise<AllocationScope> {
    await assertOwned(deps.db, principal.companyId, scopeReferences(query, 'query'));
    const scope = { locationId: query.LocationId, serviceId: query.ServiceId ?? null, resourceId: query.ResourceId ?? null };
    if (write) await assertWritable(principal, { ...scope, serviceId: null, resourceId: null });
    return scope;
  }

  async function allocationsVisible(principal: Caller, locationId: string) {
    const visible = await visibleTo(principal);
    return !visible || visible.locationIds.includes(locationId);
  }

  /**
   * The weekly and single-date sets share every rule: the items are checked, the scope resolved,
   * the set of exactly that scope replaced in one transaction, and cached searches cleared.
   */
  async function replaceAllocations<I extends AllocationItem, Row, Insert>(
    principal: Caller,
    query: AllocationQuery,
    allocations: I[],
    dayOf: (item: I) => string,
    /** The item's weekday or date column. */
    when: (item: I) => { day: string } | { date: string },
    replace: (companyId: string, scope: AllocationScope, rows: Insert[]) => Promise<Row[]>,
    view: (row: Row) => unknown,
  ) {
    fail(allocationProblems(allocations, dayOf, allocationFamilyOf(query), Boolean(query.ServiceId && query.ResourceId)));
    const scope = await allocationScope(principal, query, true);
    const rows = await replace(
      principal.companyId,
      scope,
      allocations.map(
        (item) =>
          ({
            companyId: principal.companyId,
            id: randomUUID(),
            ...scope,
            ...when(item),
            startTime: item.start,
            endTime: item.end,
            bookingsPerSlot: item.bookingsPerSlot ?? null,
            legacyId: item.legacyId ?? null,
          }) as Insert,
      ),
    );
    await deps.onChanged(principal.companyId, touched(scope));
    return { data: rows.map(view) };
  }

  return {
    // --- one-off blocks -------------------------------------------------------------------------

    async createBlock(principal: Caller, input: BlockInput) {
      fail(scopeProblems(input));
      const scope = scopeOf(input);
      const family = familyOfScope(scope);
      const reason = input.reason.trim();
      if (reason.length < 2 || reason.length > 50) {
        fail([fieldError('body', 'reason', 'reason must be 2 to 50 characters', BLOCK_CODES.reasonLength[family])]);
      }
      fail(blockProblems(input, family));
      await assertOwned(deps.db, principal.companyId, scopeReferences(input, 'body'));
      await assertWritable(principal, scope);
      const row = await repository.insertBlock({
        companyId: principal.companyId,
        id: randomUUID(),
        ...scope,
        startTime: parseInstant(input.startTime).toJSDate(),
        endTime: parseInstant(input.endTime).toJSDate(),
        reason,
      });
      await deps.onChanged(principal.companyId, touched(scope));
      return blockView(row);
    },

    async listBlocks(principal: Caller, query: BlockListQuery) {
      fail(dateRangeProblems(query.startDate, query.endDate));
      await assertOwned(deps.db, principal.companyId, scopeReferences(query, 'query'));
      // Bare dates are read in the LocationId filter's time zone, else in UTC.
      const zone = (query.LocationId && (await repository.locationZone(principal.companyId, query.LocationId))) || 'UTC';
      const from = query.startDate ? localToInstant(query.startDate, '00:00', zone).toJSDate() : null;
      const to = query.endDate ? localToInstant(query.endDate, '24:00', zone).toJSDate() : null;
      const { rows, total } = await repository.pageBlocks(
        principal.companyId,
        { scope: filterOf(query), visible: await visibleTo(principal), from, to },
        query.limit,
        (query.page - 1) * query.limit,
      );
      return pageOf(rows.map(blockView), query.page, query.limit, total);
    },

    async deleteBlock(principal: Caller, id: string) {
      const row = await repository.blockById(principal.companyId, id);
      if (!row) throw notFound('Block not found');
      await assertWritable(principal, row);
      if (!(await repository.deleteBlock(principal.companyId, id))) throw notFound('Block not found');
      await deps.onChanged(principal.companyId, touched(row));
    },

    // --- recurring blocks -----------------------------------------------------------------------

    async createRecurringBlock(principal: Caller, input: RecurringBlockCreate) {
      fail(scopeProblems(input));
      const scope = scopeOf(input);
      const rule: RecurrenceRule = {
        frequency: input.frequency,
        interval: input.interval ?? 1,
        startDate: input.startDate,
        endDate: input.endDate ?? null,
        startTime: input.startTime,
        endTime: input.endTime,
        iana: input.iana,
        weekdays: input.weekdays ?? [],
        dayOfMonth: input.dayOfMonth ?? null,
      };
      fail(recurrenceProblems(rule, familyOfScope(scope)));
      await assertOwned(deps.db, principal.companyId, scopeReferences(input, 'body'));
      await assertWritable(principal, scope);
      const row = await repository.insertRecurring({
        companyId: principal.companyId,
        id: randomUUID(),
        name: input.name,
        ...rule,
        endDate: rule.endDate ?? null,
        weekdays: sortedWeekdays(rule.weekdays),
        dayOfMonth: rule.dayOfMonth ?? null,
        ...scope,
        legacyId: input.legacyId ?? null,
      });
      await deps.onChanged(principal.companyId, touched(scope));
      return recurringView(row);
    },

    async listRecurringBlocks(principal: Caller, query: ListQuery) {
      await assertOwned(deps.db, principal.companyId, scopeReferences(query, 'query'));
      const { rows, total } = await repository.pageRecurring(
        principal.companyId,
        { scope: filterOf(query), visible: await visibleTo(principal) },
        query.limit,
        (query.page - 1) * query.limit,
      );
      return pageOf(rows.map(recurringView), query.page, query.limit, total);
    },

    async readRecurringBlock(principal: Caller, id: string) {
      const row = await repository.recurringById(principal.companyId, id);
      if (!row) throw notFound('Recurring block not found');
      if (!isVisible(await visibleTo(principal), row)) throw forbidden(OUTSIDE_SCOPE_MESSAGE);
      return recurringView(row);
    },

    /** Changes the fields given; the merged rule must pass every rule a new one must. */
    async updateRecurringBlock(principal: Caller, id: string, input: RecurringBlockInput) {
      const current = await repository.recurringById(principal.companyId, id);
      if (!current) throw notFound('Recurring block not found');
      await assertWritable(principal, current);
      const movesScope = SCOPE_KEYS.some((key) => input[key] !== undefined);
      if (movesScope) {
        fail(scopeProblems(input));
        await assertOwned(deps.db, principal.companyId, scopeReferences(input, 'body'));
        await assertWritable(principal, scopeOf(input));
      }
      const result = await repository.updateRecurring(principal.companyId, id, (locked) => {
        // The scope checked above must still be the rule's scope.
        if (locked.locationId !== current.locationId || locked.resourceId !== current.resourceId || locked.serviceId !== current.serviceId) {
          throw conflict('The recurring block changed while this request ran; try again');
        }
        const scope = movesScope ? scopeOf(input) : { locationId: locked.locationId, resourceId: locked.resourceId, serviceId: locked.serviceId };
        const frequency = input.frequency ?? locked.frequency;
        const frequencyChanged = frequency !== locked.frequency;
        const rule: RecurrenceRule = {
          frequency,
          interval: input.interval ?? locked.interval,
          startDate: input.startDate ?? locked.startDate,
          endDate: input.endDate !== undefined ? input.endDate : locked.endDate,
          startTime: input.startTime ?? locked.startTime,
          endTime: input.endTime ?? locked.endTime,
          iana: input.iana ?? locked.iana,
          // A change of frequency drops weekdays or day of month the new frequency has no use for,
          // unless the body sets them.
          weekdays: input.weekdays ?? (frequencyChanged && !WEEKLY_FREQUENCIES.includes(frequency) ? [] : locked.weekdays),
          dayOfMonth: input.dayOfMonth !== undefined ? input.dayOfMonth : frequencyChanged && frequency !== 'MONTHLY' ? null : locked.dayOfMonth,
        };
        fail(recurrenceProblems(rule, familyOfScope(scope)));
        const changes: Updateable<RecurringBlocksTable> = {
          ...rule,
          endDate: rule.endDate ?? null,
          weekdays: sortedWeekdays(rule.weekdays),
          dayOfMonth: rule.dayOfMonth ?? null,
          ...scope,
          ...(input.name !== undefined ? { name: input.name } : {}),
          ...(input.legacyId !== undefined ? { legacyId: input.legacyId } : {}),
        };
        return changes;
      });
      if (!result) throw notFound('Recurring block not found');
      await deps.onChanged(principal.companyId, touched(result.before, result.after));
      return recurringView(result.after);
    },

    async deleteRecurringBlock(principal: Caller, id: string) {
      const row = await repository.recurringById(principal.companyId, id);
      if (!row) throw notFound('Recurring block not found');
      await assertWritable(principal, row);
      // A concurrent change that moved the rule to another scope makes this delete miss: the access
      // checked above was for the old scope.
      const deleted = await repository.deleteRecurring(principal.companyId, id, row);
      if (!deleted) {
        if (await repository.recurringById(principal.companyId, id)) throw conflict('The recurring block changed while this request ran; try again');
        throw notFound('Recurring block not found');
      }
      await deps.onChanged(principal.companyId, touched(deleted));
    },

    // --- holidays -------------------------------------------------------------------------------

    async createHoliday(principal: Caller, input: HolidayInput) {
      await assertOwned(deps.db, principal.companyId, scopeReferences(input, 'body'));
      await assertWritable(principal, { locationId: input.LocationId, resourceId: null, serviceId: null });
      const row = await repository.insertHoliday({
        companyId: principal.companyId,
        id: randomUUID(),
        locationId: input.LocationId,
        date: input.date,
        name: input.name,
      });
      if (!row) throw conflict(`The location already has a holiday on ${input.date}`, [fieldError('body', 'date', `A holiday on ${input.date} already exists at this location`)]);
      await deps.onChanged(principal.companyId, touched({ locationId: row.locationId }));
      return holidayView(row);
    },

    async listHolidays(principal: Caller, query: HolidayListQuery) {
      fail(dateRangeProblems(query.startDate, query.endDate));
      await assertOwned(deps.db, principal.companyId, scopeReferences(query, 'query'));
      const visible = await visibleTo(principal);
      const { rows, total } = await repository.pageHolidays(
        principal.companyId,
        { locationId: query.LocationId ?? null, visibleLocationIds: visible ? visible.locationIds : null, from: query.startDate ?? null, to: query.endDate ?? null },
        query.limit,
        (query.page - 1) * query.limit,
      );
      return pageOf(rows.map(holidayView), query.page, query.limit, total);
    },

    async deleteHoliday(principal: Caller, id: string) {
      const row = await repository.holidayById(principal.companyId, id);
      if (!row) throw notFound('Holiday not found');
      await assertWritable(principal, { locationId: row.locationId, resourceId: null, serviceId: null });
      if (!(await repository.deleteHoliday(principal.companyId, id))) throw notFound('Holiday not found');
      await deps.onChanged(principal.companyId, touched({ locationId: row.locationId }));
    },

    // --- allocations ----------------------------------------------------------------------------

    async listWeeklyAllocations(principal: Caller, query: AllocationQuery) {
      const scope = await allocationScope(principal, query, false);
      if (!(await allocationsVisible(principal, scope.locationId))) return { data: [] };
      return { data: (await repository.weeklyAllocations(principal.companyId, scope)).map(weeklyView) };
    },

    /** Replaces the whole weekly set of exactly this scope; an empty list clears it. */
    setWeeklyAllocations(principal: Caller, query: AllocationQuery, allocations: WeeklyAllocationInput[]) {
      return replaceAllocations(principal, query, allocations, (item) => item.day, (item) => ({ day: item.day }), repository.replaceWeeklyAllocations, weeklyView);
    },

    async listSingleAllocations(principal: Caller, query: AllocationQuery) {
      const scope = await allocationScope(principal, query, false);
      if (!(await allocationsVisible(principal, scope.locationId))) return { data: [] };
      return { data: (await repository.singleAllocations(principal.companyId, scope)).map(singleView) };
    },

    /** Replaces the whole single-date set of exactly this scope; an empty list clears it. */
    setSingleAllocations(principal: Caller, query: AllocationQuery, allocations: SingleAllocationInput[]) {
      return replaceAllocations(principal, query, allocations, (item) => item.date, (item) => ({ date: item.date }), repository.replaceSingleAllocations, singleView);
    },
  };
}

export type UnavailabilityService = ReturnType<typeof createUnavailabilityService>;
