// The route schemas of blocks, recurring blocks, holidays and allocations, and the service input
// types derived from them (one source: what the route validates is what the service is typed with).
import { Type } from '@sinclair/typebox';
import type { Static, TProperties, TSchema } from '@sinclair/typebox';
import { Instant, LocalDate, Nullable, PageQueryFields, Uuid } from '../../platform/http/schemas.js';
import { StringEnum, TimezoneName } from '../catalog/fields.js';
import { WEEKDAYS } from '../../domain/weekly-availability.js';
import { FREQUENCIES } from './rules.js';

/** The same fields, every one optional. */
const optional = <T extends TProperties>(fields: T) => Type.Partial(Type.Object(fields)).properties;

const TIME = '^([01][0-9]|2[0-3]):[0-5][0-9]$';
const END_TIME = '^(([01][0-9]|2[0-3]):[0-5][0-9]|24:00)$';
const Time = (required: string) =>
  Type.String({ pattern: TIME, description: 'HH:MM (00:00 to 23:59)', 'x-codes': { required, pattern: 'INVALIDTIME-100' } });
const EndTime = (required: string, description: string) =>
  Type.String({ pattern: END_TIME, description, 'x-codes': { required, pattern: 'INVALIDTIME-100' } });
const DateField = LocalDate;
const LegacyId = Nullable(Type.String({ maxLength: 100, description: 'Identifier of the record in v1' }));

const FAMILY_NOTE =
  'Legacy codes in `x-codes` are those of a location scope (CALENDARBLOCK); with a ResourceId or ServiceId the errors carry the RESOURCEBLOCK or SERVICEBLOCK code of the same rule.';
const ALLOCATION_FAMILY_NOTE =
  'Legacy codes in `x-codes` are SERVICEALLOCATION codes; when ResourceId is given the errors carry the RESOURCEALLOCATION code of the same rule.';

const ScopeIds = {
  LocationId: Type.Optional(Uuid({ description: 'Block a whole location (exactly one of LocationId, ResourceId, ServiceId)' })),
  ResourceId: Type.Optional(Uuid({ description: 'Block one resource' })),
  ServiceId: Type.Optional(Uuid({ description: 'Block one service' })),
};
const ScopeOut = {
  locationId: Nullable(Uuid()),
  resourceId: Nullable(Uuid()),
  serviceId: Nullable(Uuid()),
};
const ScopeFilters = {
  LocationId: Type.Optional(Uuid({ description: 'Only rows scoped to this location' })),
  ResourceId: Type.Optional(Uuid({ description: 'Only rows scoped to this resource' })),
  ServiceId: Type.Optional(Uuid({ description: 'Only rows scoped to this service (several filters: rows matching any)' })),
};
const DateQuery = (description: string) => Type.Optional(DateField({ description }));

// --- One-off blocks ---------------------------------------------------------------------------------

export const BlockBody = Type.Object(
  {
    ...ScopeIds,
    startTime: Instant({ description: 'ISO 8601 with an offset', 'x-codes': { required: 'CALENDARBLOCK-REQUIRED-100' } }),
    endTime: Instant({ description: 'ISO 8601 with an offset; after startTime', 'x-codes': { required: 'CALENDARBLOCK-REQUIRED-101' } }),
    reason: Type.String({
      minLength: 2,
      maxLength: 50,
      description: '2 to 50 characters',
      'x-codes': { required: 'CALENDARBLOCK-103', minLength: 'CALENDARBLOCK-104', maxLength: 'CALENDARBLOCK-104', type: 'CALENDARBLOCK-104' },
    }),
  },
  { additionalProperties: false, description: FAMILY_NOTE },
);
export type BlockBody = Static<typeof BlockBody>;

/** LocationId, ResourceId and ServiceId as a body or a list filter gives them (each optional). */
export type ScopeInput = Pick<BlockBody, 'LocationId' | 'ResourceId' | 'ServiceId'>;

export const BlockListQuery = Type.Object({
  ...PageQueryFields(500),
  ...ScopeFilters,
  startDate: DateQuery('Blocks ending after the start of this day (in the LocationId filter\'s time zone, else UTC)'),
  endDate: DateQuery('Blocks starting before the end of this day'),
});
export type BlockListQuery = Static<typeof BlockListQuery>;

export const Block = Type.Object(
  {
    id: Uuid(),
    companyId: Uuid(),
    ...ScopeOut,
    startTime: Type.String({ format: 'date-time', description: 'UTC' }),
    endTime: Type.String({ format: 'date-time', description: 'UTC' }),
    reason: Nullable(Type.String()),
    createdAt: Type.String({ format: 'date-time' }),
  },
  { $id: 'UnavailabilityBlock', description: 'A one-off block of a location, a resource or a service' },
);

// --- Recurring blocks -------------------------------------------------------------------------------

const RecurringFields = {
  name: Type.String({ minLength: 1, maxLength: 100 }),
  frequency: StringEnum(FREQUENCIES, { 'x-codes': { enum: 'REPEAT-101', type: 'REPEAT-101' } }),
  interval: Type.Integer({
    description: 'Every `interval` days, weeks, months or years (BIWEEKLY: every 2 × interval weeks). 1-365 DAILY (REPEAT-102), 1-52 WEEKLY and BIWEEKLY (REPEAT-103), 1-12 MONTHLY (REPEAT-104), 1-5 YEARLY (REPEAT-105). Default 1.',
  }),
  startDate: DateField({ description: 'YYYY-MM-DD, first day of the rule', 'x-codes': { required: 'CALENDARBLOCK-REQUIRED-100' } }),
  endDate: Nullable(DateField({ description: 'YYYY-MM-DD, last day (inclusive), on or after startDate; null: no end' })),
  startTime: Time('CALENDARBLOCK-REQUIRED-102'),
  endTime: EndTime(
    'CALENDARBLOCK-REQUIRED-103',
    'HH:MM; "24:00" is midnight at the end of the day; an endTime before startTime ends on the next day (overnight); equal to startTime is refused',
  ),
  iana: TimezoneName({}),
  weekdays: Type.Array(Type.Integer({ minimum: 0, maximum: 6, 'x-codes': { minimum: 'REPEAT-107', maximum: 'REPEAT-107', type: 'REPEAT-107' } }), {
    uniqueItems: true,
    maxItems: 7,
    description: '0 = Sunday … 6 = Saturday. Required (non-empty) for WEEKLY and BIWEEKLY (REPEAT-106); not allowed otherwise',
  }),
  dayOfMonth: Nullable(Type.Integer({ minimum: 1, maximum: 31, description: 'MONTHLY only: 1-31 (null: the start date\'s day); months without that day are skipped' })),
  legacyId: LegacyId,
};

export const RecurringCreateBody = Type.Object(
  {
    ...optional(RecurringFields),
    name: RecurringFields.name,
    frequency: RecurringFields.frequency,
    startDate: RecurringFields.startDate,
    startTime: RecurringFields.startTime,
    endTime: RecurringFields.endTime,
    iana: RecurringFields.iana,
    ...ScopeIds,
  },
  { additionalProperties: false, description: FAMILY_NOTE },
);
export type RecurringCreateBody = Static<typeof RecurringCreateBody>;

export const RecurringUpdateBody = Type.Object(
  { ...optional(RecurringFields), ...ScopeIds },
  { additionalProperties: false, description: `Fields given change; the merged rule must be valid. A scope id given moves the rule to that scope. ${FAMILY_NOTE}` },
);
export type RecurringUpdateBody = Static<typeof RecurringUpdateBody>;

export const RecurringListQuery = Type.Object({ ...PageQueryFields(500), ...ScopeFilters });
export type RecurringListQuery = Static<typeof RecurringListQuery>;

export const RecurringBlock = Type.Object(
  {
    id: Uuid(),
    companyId: Uuid(),
    name: Type.String(),
    frequency: Type.String(),
    interval: Type.Integer(),
    startDate: Type.String({ format: 'date' }),
    endDate: Nullable(Type.String({ format: 'date' })),
    startTime: Type.String(),
    endTime: Type.String(),
    iana: Type.String(),
    weekdays: Type.Array(Type.Integer()),
    dayOfMonth: Nullable(Type.Integer()),
    ...ScopeOut,
    legacyId: Nullable(Type.String()),
    createdAt: Type.String({ format: 'date-time' }),
    updatedAt: Type.String({ format: 'date-time' }),
  },
  { $id: 'RecurringBlock', description: 'A structured recurrence of wall-clock times in `iana`' },
);

// --- Holidays ---------------------------------------------------------------------------------------

export const HolidayBody = Type.Object(
  {
    LocationId: Uuid({ description: 'The location that is closed' }),
    date: DateField({ description: 'YYYY-MM-DD, in the location\'s time zone' }),
    name: Type.String({ minLength: 1, maxLength: 100 }),
  },
  { additionalProperties: false },
);
export type HolidayBody = Static<typeof HolidayBody>;

export const HolidayListQuery = Type.Object({
  ...PageQueryFields(500),
  LocationId: Type.Optional(Uuid({ description: 'Only this location\'s holidays' })),
  startDate: DateQuery('Holidays on or after this date'),
  endDate: DateQuery('Holidays on or before this date'),
});
export type HolidayListQuery = Static<typeof HolidayListQuery>;

export const Holiday = Type.Object(
  { id: Uuid(), companyId: Uuid(), locationId: Uuid(), date: Type.String({ format: 'date' }), name: Type.String(), createdAt: Type.String({ format: 'date-time' }) },
  { $id: 'Holiday', description: 'A whole day on which a location is closed' },
);

// --- Allocations ------------------------------------------------------------------------------------

export const AllocationQuery = Type.Object({
  LocationId: Uuid({ description: 'Required' }),
  ServiceId: Type.Optional(Uuid({ description: 'Optional; absent means allocations without a service' })),
  ResourceId: Type.Optional(Uuid({ description: 'Optional; absent means allocations without a resource' })),
});
export type AllocationQuery = Static<typeof AllocationQuery>;

const AllocationItemFields = {
  start: Time('SERVICEALLOCATION-REQUIRED-102'),
  end: EndTime('SERVICEALLOCATION-REQUIRED-103', 'HH:MM, after start; "24:00" is midnight'),
  bookingsPerSlot: Type.Optional(
    Nullable(Type.Integer({ minimum: 1, maximum: 10_000, description: 'Concurrent capacity; only when both ServiceId and ResourceId are given' })),
  ),
  legacyId: Type.Optional(LegacyId),
};
const WeeklyAllocationItem = Type.Object({ day: StringEnum(WEEKDAYS), ...AllocationItemFields }, { additionalProperties: false });
export type WeeklyAllocationInput = Static<typeof WeeklyAllocationItem>;
/** What the weekly and single-date items share. */
export type AllocationItem = Omit<WeeklyAllocationInput, 'day'>;
export const WeeklyAllocationsBody = Type.Object(
  { allocations: Type.Array(WeeklyAllocationItem, { maxItems: 500, description: 'The whole new set; [] clears it' }) },
  { additionalProperties: false, description: ALLOCATION_FAMILY_NOTE },
);

const SingleAllocationItem = Type.Object(
  { date: DateField({ description: 'YYYY-MM-DD', 'x-codes': { required: 'SERVICEALLOCATION-REQUIRED-100' } }), ...AllocationItemFields },
  { additionalProperties: false },
);
export type SingleAllocationInput = Static<typeof SingleAllocationItem>;
export const SingleAllocationsBody = Type.Object(
  { allocations: Type.Array(SingleAllocationItem, { maxItems: 500, description: 'The whole new set; [] clears it' }) },
  { additionalProperties: false, description: ALLOCATION_FAMILY_NOTE },
);

const AllocationOut = (when: Record<string, TSchema>) => ({
  id: Uuid(),
  companyId: Uuid(),
  locationId: Uuid(),
  serviceId: Nullable(Uuid()),
  resourceId: Nullable(Uuid()),
  ...when,
  start: Type.String(),
  end: Type.String(),
  bookingsPerSlot: Nullable(Type.Integer()),
  legacyId: Nullable(Type.String()),
  createdAt: Type.String({ format: 'date-time' }),
});
export const WeeklyAllocation = Type.Object(AllocationOut({ day: Type.String() }), { $id: 'WeeklyAllocation' });
export const SingleAllocation = Type.Object(AllocationOut({ date: Type.String({ format: 'date' }) }), { $id: 'SingleAllocation' });
