import { Type } from '@sinclair/typebox';
import type { TSchema } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import type { App } from '../../platform/http/types.js';
import { errorResponses, IdParams, Instant, LocalDate, Nullable, Page, PageQueryFields, Security, Uuid } from '../../platform/http/schemas.js';
import { requireCompany } from '../../platform/auth/principal.js';
import { mapSchemaErrors, validationErrors } from '../../platform/errors.js';
import { StringEnum, TimezoneName } from '../catalog/fields.js';
import { WEEKDAYS } from '../../domain/weekly-availability.js';
import { FREQUENCIES, allocationFamilyOf, blockFamilyOf, codeForFamily } from './service.js';
import type { Family, RecurringBlockCreate, RecurringBlockInput, UnavailabilityService } from './service.js';

const optional = (fields: Record<string, TSchema>) => Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, Type.Optional(v)]));

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

// --- Schemas ---------------------------------------------------------------------------------------

const BlockBody = Type.Object(
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

const Block = Type.Object(
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

const RecurringCreateBody = Type.Object(
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
const RecurringUpdateBody = Type.Object(
  { ...optional(RecurringFields), ...ScopeIds },
  { additionalProperties: false, description: `Fields given change; the merged rule must be valid. A scope id given moves the rule to that scope. ${FAMILY_NOTE}` },
);

const RecurringBlock = Type.Object(
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

const HolidayBody = Type.Object(
  {
    LocationId: Uuid({ description: 'The location that is closed' }),
    date: DateField({ description: 'YYYY-MM-DD, in the location\'s time zone' }),
    name: Type.String({ minLength: 1, maxLength: 100 }),
  },
  { additionalProperties: false },
);

const Holiday = Type.Object(
  { id: Uuid(), companyId: Uuid(), locationId: Uuid(), date: Type.String({ format: 'date' }), name: Type.String(), createdAt: Type.String({ format: 'date-time' }) },
  { $id: 'Holiday', description: 'A whole day on which a location is closed' },
);

const AllocationQuery = Type.Object({
  LocationId: Uuid({ description: 'Required' }),
  ServiceId: Type.Optional(Uuid({ description: 'Optional; absent means allocations without a service' })),
  ResourceId: Type.Optional(Uuid({ description: 'Optional; absent means allocations without a resource' })),
});

const AllocationItemFields = {
  start: Time('SERVICEALLOCATION-REQUIRED-102'),
  end: EndTime('SERVICEALLOCATION-REQUIRED-103', 'HH:MM, after start; "24:00" is midnight'),
  bookingsPerSlot: Type.Optional(
    Nullable(Type.Integer({ minimum: 1, maximum: 10_000, description: 'Concurrent capacity; only when both ServiceId and ResourceId are given' })),
  ),
  legacyId: Type.Optional(LegacyId),
};

const WeeklyAllocationsBody = Type.Object(
  {
    allocations: Type.Array(
      Type.Object({ day: StringEnum(WEEKDAYS), ...AllocationItemFields }, { additionalProperties: false }),
      { maxItems: 500, description: 'The whole new set; [] clears it' },
    ),
  },
  { additionalProperties: false, description: ALLOCATION_FAMILY_NOTE },
);
const SingleAllocationsBody = Type.Object(
  {
    allocations: Type.Array(
      Type.Object(
        { date: DateField({ description: 'YYYY-MM-DD', 'x-codes': { required: 'SERVICEALLOCATION-REQUIRED-100' } }), ...AllocationItemFields },
        { additionalProperties: false },
      ),
      { maxItems: 500, description: 'The whole new set; [] clears it' },
    ),
  },
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
const WeeklyAllocation = Type.Object(AllocationOut({ day: Type.String() }), { $id: 'WeeklyAllocation' });
const SingleAllocation = Type.Object(AllocationOut({ date: Type.String({ format: 'date' }) }), { $id: 'SingleAllocation' });

// --- Routes ----------------------------------------------------------------------------------------

const WRITE = { access: { mode: 'company' as const, roles: ['Owner' as const, 'Admin' as const, 'User' as const] } };
const TAGS = ['Unavailability'];

/**
 * Routes with `attachValidation` see their schema failures here and report them as the error
 * handler would, with each legacy code in the caller's family (location, resource or service).
 */
function rejectInvalid(request: FastifyRequest, family: Family): void {
  const failure = request.validationError;
  if (!failure) return;
  const errors = mapSchemaErrors(failure.validation as Parameters<typeof mapSchemaErrors>[0], failure.validationContext);
  throw validationErrors(errors.map((error) => (error.code ? { ...error, code: codeForFamily(error.code, family) } : error)));
}

export function registerUnavailabilityRoutes(app: App, { unavailability }: { unavailability: UnavailabilityService }) {
  for (const schema of [Block, RecurringBlock, Holiday, WeeklyAllocation, SingleAllocation]) app.addSchema(schema);
  const blockRef = Type.Ref('UnavailabilityBlock');
  const recurringRef = Type.Ref('RecurringBlock');
  const holidayRef = Type.Ref('Holiday');

  // --- one-off blocks ---------------------------------------------------------------------------

  app.post(
    '/v3/unavailability/blocks',
    {
      config: WRITE,
      attachValidation: true,
      schema: {
        tags: TAGS,
        summary: 'Create a one-off block of a location, a resource or a service',
        security: Security.company,
        body: BlockBody,
        response: { 201: blockRef, ...errorResponses(400, 401, 403) },
      },
    },
    async (request, reply) => {
      rejectInvalid(request, blockFamilyOf(request.body));
      return reply.status(201).send(await unavailability.createBlock(requireCompany(request.principal), request.body));
    },
  );

  app.get(
    '/v3/unavailability/blocks',
    {
      schema: {
        tags: TAGS,
        summary: 'List one-off blocks by start time (in the caller\'s location scope)',
        security: Security.company,
        querystring: Type.Object({
          ...PageQueryFields(500),
          ...ScopeFilters,
          startDate: DateQuery('Blocks ending after the start of this day (in the LocationId filter\'s time zone, else UTC)'),
          endDate: DateQuery('Blocks starting before the end of this day'),
        }),
        response: { 200: Page(blockRef), ...errorResponses(400, 401, 403) },
      },
    },
    async (request) => {
      const { limit = 20, page = 1, ...filters } = request.query;
      return unavailability.listBlocks(requireCompany(request.principal), { ...filters, limit, page });
    },
  );

  app.delete(
    '/v3/unavailability/blocks/:id',
    {
      config: WRITE,
      schema: {
        tags: TAGS,
        summary: 'Remove a one-off block',
        security: Security.company,
        params: IdParams,
        response: { 204: Type.Null(), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      await unavailability.deleteBlock(requireCompany(request.principal), request.params.id);
      return reply.status(204).send(null);
    },
  );

  // --- recurring blocks -------------------------------------------------------------------------

  app.post(
    '/v3/unavailability/recurringBlock',
    {
      config: WRITE,
      attachValidation: true,
      schema: {
        tags: TAGS,
        summary: 'Create a recurring block',
        security: Security.company,
        body: RecurringCreateBody,
        response: { 201: recurringRef, ...errorResponses(400, 401, 403) },
      },
    },
    async (request, reply) => {
      rejectInvalid(request, blockFamilyOf(request.body));
      return reply
        .status(201)
        .send(await unavailability.createRecurringBlock(requireCompany(request.principal), request.body as RecurringBlockCreate));
    },
  );

  app.get(
    '/v3/unavailability/recurringBlock',
    {
      schema: {
        tags: TAGS,
        summary: 'List recurring blocks (in the caller\'s location scope)',
        security: Security.company,
        querystring: Type.Object({ ...PageQueryFields(500), ...ScopeFilters }),
        response: { 200: Page(recurringRef), ...errorResponses(400, 401, 403) },
      },
    },
    async (request) => {
      const { limit = 20, page = 1, ...filters } = request.query;
      return unavailability.listRecurringBlocks(requireCompany(request.principal), { ...filters, limit, page });
    },
  );

  app.get(
    '/v3/unavailability/recurringBlock/:id',
    {
      schema: {
        tags: TAGS,
        summary: 'Read a recurring block',
        security: Security.company,
        params: IdParams,
        response: { 200: recurringRef, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => unavailability.readRecurringBlock(requireCompany(request.principal), request.params.id),
  );

  const updateSchema = {
    tags: TAGS,
    summary: 'Change a recurring block (fields given; the rest stay)',
    security: Security.company,
    params: IdParams,
    body: RecurringUpdateBody,
    response: { 200: recurringRef, ...errorResponses(400, 401, 403, 404) },
  };
  for (const method of ['patch', 'put'] as const) {
    app[method](
      '/v3/unavailability/recurringBlock/:id',
      { config: WRITE, attachValidation: true, schema: updateSchema },
      async (request) => {
        // A change without a scope id keeps the stored scope; its family's codes never come from the schema.
        rejectInvalid(request, blockFamilyOf(request.body));
        return unavailability.updateRecurringBlock(requireCompany(request.principal), request.params.id, request.body as RecurringBlockInput);
      },
    );
  }

  app.delete(
    '/v3/unavailability/recurringBlock/:id',
    {
      config: WRITE,
      schema: {
        tags: TAGS,
        summary: 'Delete a recurring block',
        security: Security.company,
        params: IdParams,
        response: { 204: Type.Null(), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      await unavailability.deleteRecurringBlock(requireCompany(request.principal), request.params.id);
      return reply.status(204).send(null);
    },
  );

  // --- holidays ---------------------------------------------------------------------------------

  app.post(
    '/v3/unavailability/holiday',
    {
      config: WRITE,
      schema: {
        tags: TAGS,
        summary: 'Close a location for a whole day',
        security: Security.company,
        body: HolidayBody,
        response: { 201: holidayRef, ...errorResponses(400, 401, 403, 409) },
      },
    },
    async (request, reply) => reply.status(201).send(await unavailability.createHoliday(requireCompany(request.principal), request.body)),
  );

  app.get(
    '/v3/unavailability/holiday',
    {
      schema: {
        tags: TAGS,
        summary: 'List holidays by date (in the caller\'s location scope)',
        security: Security.company,
        querystring: Type.Object({
          ...PageQueryFields(500),
          LocationId: Type.Optional(Uuid({ description: 'Only this location\'s holidays' })),
          startDate: DateQuery('Holidays on or after this date'),
          endDate: DateQuery('Holidays on or before this date'),
        }),
        response: { 200: Page(holidayRef), ...errorResponses(400, 401, 403) },
      },
    },
    async (request) => {
      const { limit = 20, page = 1, ...filters } = request.query;
      return unavailability.listHolidays(requireCompany(request.principal), { ...filters, limit, page });
    },
  );

  app.delete(
    '/v3/unavailability/holiday/:id',
    {
      config: WRITE,
      schema: {
        tags: TAGS,
        summary: 'Delete a holiday',
        security: Security.company,
        params: IdParams,
        response: { 204: Type.Null(), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      await unavailability.deleteHoliday(requireCompany(request.principal), request.params.id);
      return reply.status(204).send(null);
    },
  );

  // --- allocations ------------------------------------------------------------------------------

  const weeklyRef = Type.Ref('WeeklyAllocation');
  const singleRef = Type.Ref('SingleAllocation');
  const allocationList = (summary: string, ref: TSchema) => ({
    tags: TAGS,
    summary,
    security: Security.company,
    querystring: AllocationQuery,
    response: { 200: Type.Object({ data: Type.Array(ref) }), ...errorResponses(400, 401, 403) },
  });

  app.get(
    '/v3/weeklyAllocation',
    { schema: allocationList('List the weekly allocations of exactly this scope (LocationId, and ServiceId and ResourceId or their absence)', weeklyRef) },
    async (request) => unavailability.listWeeklyAllocations(requireCompany(request.principal), request.query),
  );

  app.post(
    '/v3/weeklyAllocation/setWeeklyAllocations',
    {
      config: WRITE,
      attachValidation: true,
      schema: { ...allocationList('Replace the whole set of weekly allocations of exactly this scope', weeklyRef), body: WeeklyAllocationsBody },
    },
    async (request) => {
      rejectInvalid(request, allocationFamilyOf(request.query));
      return unavailability.setWeeklyAllocations(requireCompany(request.principal), request.query, request.body.allocations);
    },
  );

  app.get(
    '/v3/singleAllocation',
    { schema: allocationList('List the single-date allocations of exactly this scope (LocationId, and ServiceId and ResourceId or their absence)', singleRef) },
    async (request) => unavailability.listSingleAllocations(requireCompany(request.principal), request.query),
  );

  app.post(
    '/v3/singleAllocation/setSingleAllocations',
    {
      config: WRITE,
      attachValidation: true,
      schema: { ...allocationList('Replace the whole set of single-date allocations of exactly this scope', singleRef), body: SingleAllocationsBody },
    },
    async (request) => {
      rejectInvalid(request, allocationFamilyOf(request.query));
      return unavailability.setSingleAllocations(requireCompany(request.principal), request.query, request.body.allocations);
    },
  );
}
