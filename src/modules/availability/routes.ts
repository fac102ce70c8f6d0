import { Type } from '@sinclair/typebox';
import type { Static } from '@sinclair/typebox';
import type { Principal } from '../../platform/auth/principal.js';
import type { App } from '../../platform/http/types.js';
import { Security, errorResponses } from '../../platform/http/schemas.js';
import { requireCompany } from '../../platform/auth/principal.js';
import { DEFERRED_CREDENTIAL_CHECK } from '../../platform/auth/credential-check.js';
import { badRequest, validationError } from '../../platform/errors.js';
import Negotiator from 'negotiator';
import type { FastifyReply } from 'fastify';
import type { AvailabilityService, SearchAnswer } from './service.js';
import type { CalendarService } from './calendar.js';
import { AvailabilityQuery, AvailabilityResponse, CalendarQuerySchema, CalendarRowSchema, PublicAvailabilityQuery } from './schemas.js';
import type { AvailabilitySearch } from './schemas.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Comma-separated or repeated uuids of one query parameter. */
function idList(name: string, values: string[] | undefined): string[] | undefined {
  if (!values) return undefined;
  const ids = values.flatMap((v) => v.split(',')).map((v) => v.trim()).filter(Boolean);
  ids.forEach((id, index) => {
    if (!UUID.test(id)) throw validationError('query', `${name}.${index}`, `${id} is not a valid uuid`);
  });
  return [...new Set(ids)];
}

/** `ResourceIds=a,b` and `ResourceIds=a&ResourceIds=b` both mean [a, b]. */
function resourceIdList(values: string[] | undefined): string[] | undefined {
  return idList('ResourceIds', values);
}

/**
 * The full answer, described as the 200. `format=compact` changes its shape (schemas.ts,
 * CompactAvailabilityResponse, which the description spells out); it is not a union in the 200
 * because a union would make every typed client (packages/client) narrow the default answer it
 * always gets, and a component no operation names fails the document's lint.
 */
const AVAILABILITY_ANSWER = Type.Ref('Availability', {
  description:
    'The availability. With `format=compact`: `resources` (each resource id once, in id order) is added, and each of `availableTimes` has `resourceIndexes` (positions in `resources`) instead of `resourceIds`',
});

export function registerAvailabilityRoutes(app: App, { availability, calendar }: { availability: AvailabilityService; calendar: CalendarService }) {
  app.addSchema(AvailabilityResponse);
  app.addSchema(CalendarRowSchema);
  registerCalendarRoutes(app, calendar);

  app.get(
    '/v3/public/availability',
    {
      config: { access: { mode: 'public' } },
      schema: {
        tags: ['Public booking'],
        summary: 'Open slots for a public booking page (services shown online only)',
        security: Security.public,
        querystring: PublicAvailabilityQuery,
        response: { 200: AVAILABILITY_ANSWER, ...errorResponses(400, 401, 403) },
      },
    },
    async (request, reply) => {
      const principal = requireCompany(request.principal);
      // A booking page does not identify the customer: the per-customer limits are applied when the
      // customer is known (hold and book), and a customer id here would let a page probe customers.
      // The schema leaves CustomerId out, but unknown query parameters are not refused: read it anyway.
      const { CustomerId, ...query }: AvailabilitySearch = request.query;
      if (CustomerId !== undefined) throw validationError('query', 'CustomerId', 'CustomerId is not accepted on public routes');
      const answer = await availability.answer(principal.companyId, null, { ...query, ResourceIds: resourceIdList(query.ResourceIds) }, { onlineOnly: true });
      return sendAnswer(request.headers['accept-encoding'], reply, answer);
    },
  );

  app.get(
    '/v3/availability',
    {
      config: DEFERRED_CREDENTIAL_CHECK,
      schema: {
        tags: ['Availability'],
        summary: 'Open slots of a service at a location',
        description:
          'Slots start every bookingInterval minutes from the start of each open window, in the location\'s time zone; times are UTC instants. ' +
          'An empty result is a valid 200; availableDays says why a day has no slot.',
        security: Security.company,
        querystring: AvailabilityQuery,
        response: { 200: AVAILABILITY_ANSWER, ...errorResponses(400, 401, 403) },
      },
    },
    async (request, reply) => {
      const principal = requireCompany(request.principal);
      const answer = await availability.answer(principal.companyId, principal, { ...request.query, ResourceIds: resourceIdList(request.query.ResourceIds) });
      return sendAnswer(request.headers['accept-encoding'], reply, answer);
    },
  );
}

/**
 * Sends an availability answer as it is (a Buffer payload is not serialised again): a cached
 * answer's gzip bytes with Content-Encoding when the client's Accept-Encoding takes gzip over the
 * uncompressed answer (RFC 9110: q-values, a coding named refuses `*`, names in any case, by
 * jshttp's negotiator), else its JSON bytes. The answer varies with
 * Accept-Encoding either way, for caches between us and the client.
 */
function sendAnswer(acceptEncoding: string | undefined, reply: FastifyReply, answer: SearchAnswer): FastifyReply {
  reply.header('vary', 'Accept-Encoding');
  reply.type('application/json; charset=utf-8');
  if (!('cached' in answer)) return reply.send(answer.body);
  if (acceptEncoding !== undefined && new Negotiator({ headers: { 'accept-encoding': acceptEncoding } }).encoding(['gzip', 'identity']) === 'gzip') {
    return reply.header('content-encoding', 'gzip').send(answer.cached.gzip);
  }
  return reply.send(answer.cached.bytes());
}

/** GET /v3/unavailability and its deprecated alias /v3/unavailability/calendar. */
function registerCalendarRoutes(app: App, calendar: CalendarService) {
  const calendarHandler = async (request: { principal: Principal | null; query: Static<typeof CalendarQuerySchema> }) => {
    const principal = requireCompany(request.principal);
    if (request.query.roundRobin !== undefined) throw badRequest('The roundRobin parameter has been removed from this route');
    return {
      data: await calendar.rows(principal.companyId, {
        LocationIds: idList('LocationIds', request.query.LocationIds),
        ResourceIds: idList('ResourceIds', request.query.ResourceIds),
        ServiceId: request.query.ServiceId,
        startDate: request.query.startDate,
        endDate: request.query.endDate,
      }),
    };
  };
  const calendarSchema = {
    tags: ['Unavailability'],
    summary: 'Every interval that removes availability, one row each (not merged)',
    description: 'At least one of LocationIds, ResourceIds or ServiceId. Dates are read in the first location\'s zone, else the first resource\'s, else UTC; at most 31 days.',
    security: Security.company,
    querystring: CalendarQuerySchema,
    response: { 200: Type.Object({ data: Type.Array(Type.Ref('UnavailabilityRow')) }), ...errorResponses(400, 401, 403) },
  };
  app.get('/v3/unavailability', { schema: calendarSchema }, calendarHandler);
  app.get('/v3/unavailability/calendar', { schema: { ...calendarSchema, deprecated: true, summary: 'Deprecated: the same as GET /v3/unavailability' } }, calendarHandler);
}
