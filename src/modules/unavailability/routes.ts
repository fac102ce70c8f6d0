import { Type } from '@sinclair/typebox';
import type { Static, TSchema } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import type { App } from '../../platform/http/types.js';
import { errorResponses, IdParams, Page, Security } from '../../platform/http/schemas.js';
import { requireCompany } from '../../platform/auth/principal.js';
import { mapSchemaErrors, validationErrors } from '../../platform/errors.js';
import { allocationFamilyOf, blockFamilyOf, codeForFamily } from './families.js';
import type { Family } from './families.js';
import {
  AllocationQuery,
  Block,
  BlockBody,
  BlockListQuery,
  Holiday,
  HolidayBody,
  HolidayListQuery,
  RecurringBlock,
  RecurringCreateBody,
  RecurringListQuery,
  RecurringUpdateBody,
  SingleAllocation,
  SingleAllocationsBody,
  WeeklyAllocation,
  WeeklyAllocationsBody,
} from './schemas.js';
import type { Caller } from './scope.js';
import type { UnavailabilityService } from './service.js';
import { WITHOUT_RESOURCE_ROLE, registerDeleteRoute } from '../catalog/routes.js';

const WRITE = WITHOUT_RESOURCE_ROLE;
const TAGS = ['Unavailability'];

/**
 * Routes with `attachValidation` see their schema failures here and report them as the error
 * handler would, with each legacy code in the caller's family (location, resource or service).
 */
function rejectInvalid(request: FastifyRequest, family: Family): void {
  const failure = request.validationError;
  if (!failure) return;
  // Fastify types the failures loosely; they are Ajv's (platform/validation.ts compiles every schema).
  const errors = mapSchemaErrors(failure.validation as Parameters<typeof mapSchemaErrors>[0], failure.validationContext);
  throw validationErrors(errors.map((error) => (error.code ? { ...error, code: codeForFamily(error.code, family) } : error)));
}

/** DELETE `url`/:id: 204 once `remove` has removed it (the catalog's shape). */
function deleteRoute(app: App, url: string, summary: string, remove: (principal: Caller, id: string) => Promise<void>) {
  registerDeleteRoute(app, url, { config: WRITE, tags: TAGS, summary, security: Security.company }, remove);
}

/** POST `url` of a block kind: schema failures are reported in the body's family (see rejectInvalid). */
function createRoute<B extends TSchema>(
  app: App,
  url: string,
  schema: { summary: string; body: B; ref: TSchema },
  create: (principal: Caller, body: Static<B>) => Promise<unknown>,
) {
  app.post(
    url,
    {
      config: WRITE,
      attachValidation: true,
      schema: { tags: TAGS, summary: schema.summary, security: Security.company, body: schema.body, response: { 201: schema.ref, ...errorResponses(400, 401, 403) } },
    },
    async (request, reply) => {
      rejectInvalid(request, blockFamilyOf(request.body));
      return reply.status(201).send(await create(requireCompany(request.principal), request.body));
    },
  );
}

/** GET `url`: a page of `ref`s in the caller's location scope. */
function listRoute<Q extends TSchema>(
  app: App,
  url: string,
  schema: { summary: string; querystring: Q; ref: TSchema },
  list: (principal: Caller, query: Static<Q>) => Promise<{ data: unknown[]; page: number; limit: number; total: number }>,
) {
  app.get(
    url,
    {
      schema: {
        tags: TAGS,
        summary: schema.summary,
        security: Security.company,
        querystring: schema.querystring,
        response: { 200: Page(schema.ref), ...errorResponses(400, 401, 403) },
      },
    },
    async (request) => list(requireCompany(request.principal), request.query),
  );
}

function registerBlockRoutes(app: App, unavailability: UnavailabilityService) {
  const ref = Type.Ref('UnavailabilityBlock');
  createRoute(app, '/v3/unavailability/blocks', { summary: 'Create a one-off block of a location, a resource or a service', body: BlockBody, ref }, (principal, body) =>
    unavailability.createBlock(principal, body),
  );
  listRoute(
    app,
    '/v3/unavailability/blocks',
    { summary: 'List one-off blocks by start time (in the caller\'s location scope)', querystring: BlockListQuery, ref },
    (principal, query) => unavailability.listBlocks(principal, query),
  );
  deleteRoute(app, '/v3/unavailability/blocks/:id', 'Remove a one-off block', (principal, id) => unavailability.deleteBlock(principal, id));
}

function registerRecurringBlockRoutes(app: App, unavailability: UnavailabilityService) {
  const recurringRef = Type.Ref('RecurringBlock');
  createRoute(app, '/v3/unavailability/recurringBlock', { summary: 'Create a recurring block', body: RecurringCreateBody, ref: recurringRef }, (principal, body) =>
    unavailability.createRecurringBlock(principal, body),
  );
  listRoute(
    app,
    '/v3/unavailability/recurringBlock',
    { summary: 'List recurring blocks (in the caller\'s location scope)', querystring: RecurringListQuery, ref: recurringRef },
    (principal, query) => unavailability.listRecurringBlocks(principal, query),
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
    app[method]('/v3/unavailability/recurringBlock/:id', { config: WRITE, attachValidation: true, schema: updateSchema }, async (request) => {
      // A change without a scope id keeps the stored scope; its family's codes never come from the schema.
      rejectInvalid(request, blockFamilyOf(request.body));
      return unavailability.updateRecurringBlock(requireCompany(request.principal), request.params.id, request.body);
    });
  }

  deleteRoute(app, '/v3/unavailability/recurringBlock/:id', 'Delete a recurring block', (principal, id) => unavailability.deleteRecurringBlock(principal, id));
}

function registerHolidayRoutes(app: App, unavailability: UnavailabilityService) {
  const ref = Type.Ref('Holiday');
  app.post(
    '/v3/unavailability/holiday',
    {
      config: WRITE,
      schema: {
        tags: TAGS,
        summary: 'Close a location for a whole day',
        security: Security.company,
        body: HolidayBody,
        response: { 201: ref, ...errorResponses(400, 401, 403, 409) },
      },
    },
    async (request, reply) => reply.status(201).send(await unavailability.createHoliday(requireCompany(request.principal), request.body)),
  );
  listRoute(
    app,
    '/v3/unavailability/holiday',
    { summary: 'List holidays by date (in the caller\'s location scope)', querystring: HolidayListQuery, ref },
    (principal, query) => unavailability.listHolidays(principal, query),
  );
  deleteRoute(app, '/v3/unavailability/holiday/:id', 'Delete a holiday', (principal, id) => unavailability.deleteHoliday(principal, id));
}

/** GET `path` and POST `path`/`setter` of one kind of allocation set (weekly or single-date). */
function allocationRoutes<B extends TSchema>(
  app: App,
  kind: { path: string; setter: string; adjective: string; ref: TSchema; body: B },
  list: (principal: Caller, query: AllocationQuery) => Promise<{ data: unknown[] }>,
  set: (principal: Caller, query: AllocationQuery, body: Static<B>) => Promise<{ data: unknown[] }>,
) {
  const schema = (summary: string) => ({
    tags: TAGS,
    summary,
    security: Security.company,
    querystring: AllocationQuery,
    response: { 200: Type.Object({ data: Type.Array(kind.ref) }), ...errorResponses(400, 401, 403) },
  });
  app.get(
    kind.path,
    { schema: schema(`List the ${kind.adjective} allocations of exactly this scope (LocationId, and ServiceId and ResourceId or their absence)`) },
    async (request) => list(requireCompany(request.principal), request.query),
  );
  app.post(
    `${kind.path}/${kind.setter}`,
    {
      config: WRITE,
      attachValidation: true,
      schema: { ...schema(`Replace the whole set of ${kind.adjective} allocations of exactly this scope`), body: kind.body },
    },
    async (request) => {
      rejectInvalid(request, allocationFamilyOf(request.query));
      return set(requireCompany(request.principal), request.query, request.body);
    },
  );
}

function registerAllocationRoutes(app: App, unavailability: UnavailabilityService) {
  allocationRoutes(
    app,
    { path: '/v3/weeklyAllocation', setter: 'setWeeklyAllocations', adjective: 'weekly', ref: Type.Ref('WeeklyAllocation'), body: WeeklyAllocationsBody },
    (principal, query) => unavailability.listWeeklyAllocations(principal, query),
    (principal, query, body) => unavailability.setWeeklyAllocations(principal, query, body.allocations),
  );
  allocationRoutes(
    app,
    { path: '/v3/singleAllocation', setter: 'setSingleAllocations', adjective: 'single-date', ref: Type.Ref('SingleAllocation'), body: SingleAllocationsBody },
    (principal, query) => unavailability.listSingleAllocations(principal, query),
    (principal, query, body) => unavailability.setSingleAllocations(principal, query, body.allocations),
  );
}

export function registerUnavailabilityRoutes(app: App, { unavailability }: { unavailability: UnavailabilityService }) {
  for (const schema of [Block, RecurringBlock, Holiday, WeeklyAllocation, SingleAllocation]) app.addSchema(schema);
  registerBlockRoutes(app, unavailability);
  registerRecurringBlockRoutes(app, unavailability);
  registerHolidayRoutes(app, unavailability);
  registerAllocationRoutes(app, unavailability);
}
