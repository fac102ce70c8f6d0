import { Type } from '@sinclair/typebox';
import type { Static } from '@sinclair/typebox';
import type { Principal } from '../../platform/auth/principal.js';
import type { App } from '../../platform/http/types.js';
import { LocalDate, Security, Uuid, errorResponses } from '../../platform/http/schemas.js';
import { requireCompany } from '../../platform/auth/principal.js';
import { validationError } from '../../platform/errors.js';
import { StringEnum } from '../catalog/fields.js';
import type { AvailabilityService } from './service.js';
import type { CalendarService } from './calendar.js';
import { badRequest } from '../../platform/errors.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const AvailabilityQuery = Type.Object({
  LocationId: Uuid(),
  ServiceId: Uuid(),
  startDate: LocalDate({ description: 'YYYY-MM-DD, a local date of the location' }),
  endDate: Type.Optional(LocalDate({ description: 'Default: startDate. At most 31 days after it.' })),
  duration: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_080, description: 'Minutes; one of the service\'s duration options' })),
  ResourceIds: Type.Optional(Type.Array(Type.String({ maxLength: 4000 }), { description: 'Comma-separated, or repeated' })),
  CustomerId: Type.Optional(Uuid({ description: 'Applies the per-customer limits' })),
  roundRobin: Type.Optional(StringEnum(['NONE', 'RANDOM', 'BALANCED', 'COMBINED'], { description: 'Default: the service\'s' })),
  timezone: Type.Optional(
    Type.String({
      format: 'iana-timezone',
      maxLength: 64,
      'x-codes': { format: 'AVAILABILITY-108', maxLength: 'AVAILABILITY-108' },
      description: 'IANA zone in which startDate and endDate are read and availableDays are reported (default: the location\'s); slots stay UTC instants',
    }),
  ),
});

export const AvailabilityResponse = Type.Object(
  {
    timezoneName: Type.String(),
    availableTimes: Type.Array(
      Type.Object({
        startTime: Type.String({ format: 'date-time' }),
        endTime: Type.String({ format: 'date-time' }),
        resourceIds: Type.Array(Uuid()),
        remaining: Type.Integer({ description: 'Bookings still possible at this time with the listed resources' }),
      }),
    ),
    availableDays: Type.Array(
      Type.Object({
        date: Type.String({ format: 'date' }),
        available: Type.Boolean(),
        reason: Type.Union([Type.String(), Type.Null()], { description: 'Why the day has no slot, for example `holiday` or `no free time`; null when it has one' }),
        holidayName: Type.Optional(Type.String({ description: 'With reason `holiday`: the name of the location\'s holiday, for example Christmas Day' })),
      }),
    ),
  },
  { $id: 'Availability' },
);

/** `ResourceIds=a,b` and `ResourceIds=a&ResourceIds=b` both mean [a, b]. */
export function resourceIdList(values: string[] | undefined): string[] | undefined {
  if (!values) return undefined;
  const ids = values.flatMap((v) => v.split(',')).map((v) => v.trim()).filter(Boolean);
  ids.forEach((id, index) => {
    if (!UUID.test(id)) throw validationError('query', `ResourceIds.${index}`, `${id} is not a valid uuid`);
  });
  return [...new Set(ids)];
}

const CalendarRow = Type.Object(
  {
    start_time: Type.String({ format: 'date-time' }),
    end_time: Type.String({ format: 'date-time' }),
    source: StringEnum(['weekly', 'recurring', 'appointment', 'holiday', 'block']),
    entity_type: StringEnum(['location', 'resource', 'service']),
    entity_id: Uuid(),
    source_id: Type.Union([Uuid(), Type.Null()], { description: 'The block, recurring block, holiday or appointment; null for weekly rows' }),
    external_transparency: Type.Union([Type.String(), Type.Null()]),
    external_event_type: Type.Union([Type.String(), Type.Null()]),
    external_busy: Type.Union([Type.Boolean(), Type.Null()]),
  },
  { $id: 'UnavailabilityRow' },
);

const CalendarQuery = Type.Object({
  LocationIds: Type.Optional(Type.Array(Type.String({ maxLength: 4000 }), { description: 'Comma-separated, or repeated' })),
  ResourceIds: Type.Optional(Type.Array(Type.String({ maxLength: 4000 }), { description: 'Comma-separated, or repeated' })),
  ServiceId: Type.Optional(Uuid()),
  startDate: LocalDate(),
  endDate: Type.Optional(LocalDate()),
  roundRobin: Type.Optional(Type.String({ description: 'Removed: sending it is a 400' })),
});

/** Comma-separated or repeated uuids of one query parameter. */
function idList(name: string, values: string[] | undefined): string[] | undefined {
  if (!values) return undefined;
  const ids = values.flatMap((v) => v.split(',')).map((v) => v.trim()).filter(Boolean);
  ids.forEach((id, index) => {
    if (!UUID.test(id)) throw validationError('query', `${name}.${index}`, `${id} is not a valid uuid`);
  });
  return [...new Set(ids)];
}

export function registerAvailabilityRoutes(app: App, { availability, calendar }: { availability: AvailabilityService; calendar: CalendarService }) {
  app.addSchema(AvailabilityResponse);
  app.addSchema(CalendarRow);

  const calendarHandler = async (request: { principal: Principal | null; query: Static<typeof CalendarQuery> }) => {
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
    querystring: CalendarQuery,
    response: { 200: Type.Object({ data: Type.Array(Type.Ref('UnavailabilityRow')) }), ...errorResponses(400, 401, 403) },
  };
  app.get('/v3/unavailability', { schema: calendarSchema }, calendarHandler);
  app.get('/v3/unavailability/calendar', { schema: { ...calendarSchema, deprecated: true, summary: 'Deprecated: the same as GET /v3/unavailability' } }, calendarHandler);

  app.get(
    '/v3/public/availability',
    {
      config: { access: { mode: 'public' } },
      schema: {
        tags: ['Public booking'],
        summary: 'Open slots for a public booking page (services shown online only)',
        security: Security.public,
        querystring: Type.Omit(AvailabilityQuery, ['CustomerId']),
        response: { 200: Type.Ref('Availability'), ...errorResponses(400, 401, 403) },
      },
    },
    async (request, reply) => {
      const principal = requireCompany(request.principal);
      // A booking page does not identify the customer: the per-customer limits are applied when the
      // customer is known (hold and book), and a customer id here would let a page probe customers.
      const { CustomerId, ...query } = request.query as Static<typeof AvailabilityQuery>;
      if (CustomerId !== undefined) throw validationError('query', 'CustomerId', 'CustomerId is not accepted on public routes');
      const json = await availability.searchJson(principal.companyId, null, { ...query, ResourceIds: resourceIdList(query.ResourceIds) }, { onlineOnly: true });
      return reply.type('application/json; charset=utf-8').send(json);
    },
  );

  app.get(
    '/v3/availability',
    {
      schema: {
        tags: ['Availability'],
        summary: 'Open slots of a service at a location',
        description:
          'Slots start every bookingInterval minutes from the start of each open window, in the location\'s time zone; times are UTC instants. ' +
          'An empty result is a valid 200; availableDays says why a day has no slot.',
        security: Security.company,
        querystring: AvailabilityQuery,
        response: { 200: Type.Ref('Availability'), ...errorResponses(400, 401, 403) },
      },
    },
    async (request, reply) => {
      const principal = requireCompany(request.principal);
      // The JSON text is sent as it is (a string payload is not serialised again).
      const json = await availability.searchJson(principal.companyId, principal, { ...request.query, ResourceIds: resourceIdList(request.query.ResourceIds) });
      return reply.type('application/json; charset=utf-8').send(json);
    },
  );
}
