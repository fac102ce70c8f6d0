import { Type } from '@sinclair/typebox';
import type { TSchema } from '@sinclair/typebox';
import type { App } from '../../platform/http/types.js';
import { errorResponses, IdParams, Nullable, Page, PageQueryFields, Security, Uuid } from '../../platform/http/schemas.js';
import { requireCompany } from '../../platform/auth/principal.js';
import { CustomFields, CustomFieldsOut, IdList, StringEnum, IncludeQuery, Name, Summary, WeeklyAvailability, parseInclude } from '../catalog/fields.js';
import { SERVICE_INCLUDES } from './service.js';
import type { ServiceService, ServiceWrite } from './service.js';

const Count = (description: string, codes?: Record<string, string>) =>
  Type.Integer({ minimum: 0, maximum: 1_000_000, description, ...(codes ? { 'x-codes': codes } : {}) });
const Minutes = (description: string, max = 10_080) => Type.Integer({ minimum: 1, maximum: max, description });
const Money = (description: string) => Nullable(Type.Number({ minimum: 0, maximum: 99_999_999, multipleOf: 0.01, description }));

/** Every field of the specification's service table. */
const Fields = {
  name: Name(255, { required: 'SERVICE-120', minLength: 'SERVICE-120', maxLength: 'SERVICE-121' }),
  description: Nullable(Type.String({ maxLength: 5000 })),
  duration: Type.Integer({ minimum: 1, maximum: 10_080, description: 'Appointment length in minutes', 'x-codes': { minimum: 'SERVICE-123' } }),
  durationSelect: Type.Boolean({ description: 'Customers may choose the duration between durationMin and durationMax in steps of durationInterval' }),
  durationMin: Nullable(Type.Integer({ minimum: 0, maximum: 10_080 })),
  durationMax: Nullable(Type.Integer({ minimum: 0, maximum: 10_080 })),
  durationInterval: Nullable(Type.Integer({ minimum: 0, maximum: 10_080 })),
  availabilityType: StringEnum(['schedule', 'allocation'], { description: 'schedule: weekly schedules; allocation: only allocated windows', 'x-codes': { enum: 'SERVICE-104' } }),
  weeklyAvailability: Nullable(WeeklyAvailability),
  bookAheadUnit: StringEnum(['none', 'days', 'weeks', 'months'], {
    description: 'How far ahead booking is allowed, with bookAheadValue',
    'x-codes': { enum: 'SETTINGS-104' },
  }),
  bookAheadValue: Nullable(
    Type.Integer({ minimum: 1, maximum: 1440, description: '1-365 days, 1-52 weeks, 1-1440 months', 'x-codes': { minimum: 'SETTINGS-105', maximum: 'SETTINGS-105' } }),
  ),
  bookInAdvance: Type.Integer({ minimum: 0, maximum: 10_080, description: 'Minimum lead time in minutes', 'x-codes': { minimum: 'SETTINGS-103', maximum: 'SETTINGS-103' } }),
  bookingLimit: Count('Active appointments (BK and unexpired IN) per customer; 0 = unlimited'),
  maxBookingLimit: Count('Lifetime appointments per customer (RE not counted); 0 = unlimited'),
  maxResourceBookingLimit: Count('Lifetime appointments per customer and resource (RE not counted); 0 = unlimited'),
  dailyBookingLimitCount: Count('Bookings of the service per day; 0 = unlimited'),
  dailyBookingLimitMinutes: Count('Booked minutes of the service per day; 0 = unlimited'),
  bookingInterval: Nullable(Minutes('Minutes between slot starts (default: the duration)', 1440)),
  padding: Type.Integer({ minimum: 0, maximum: 1440, description: 'Buffer minutes after each appointment' }),
  bookingsPerSlot: Type.Integer({ minimum: 1, maximum: 10_000, description: 'Concurrent capacity at the same instant' }),
  feeAmount: Money('Fee'),
  feeTaxable: Type.Boolean(),
  cancellationFeeAmount: Money('Cancellation fee'),
  cancellationFeeTaxable: Type.Boolean(),
  nonRefundable: Type.Boolean(),
  imageUrl: Nullable(Type.String({ format: 'uri', maxLength: 2048 })),
  showOnline: Type.Boolean({ description: 'Offered on public booking pages' }),
  roundRobin: StringEnum(['NONE', 'RANDOM', 'BALANCED', 'COMBINED']),
  allowPaddingOverflow: Type.Boolean({ description: 'Default for holds and reservations' }),
  ignoreExternalEvents: Type.Boolean({ description: 'Default for holds and reservations' }),
  locationIds: IdList('Locations where the service is offered', { uniqueItems: 'LOCATION-110' }),
  legacyId: Nullable(Type.String({ maxLength: 100 })),
};

const optional = (fields: Record<string, TSchema>) => Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, Type.Optional(v)]));

const CreateBody = Type.Object(
  { ...optional(Fields), name: Fields.name, duration: Fields.duration, ...CustomFields() },
  { additionalProperties: false },
);
const UpdateBody = Type.Object({ ...optional(Fields), ...CustomFields() }, { additionalProperties: false });

const Service = Type.Object(
  {
    id: Uuid(),
    companyId: Uuid(),
    ...Object.fromEntries(Object.entries(Fields).filter(([k]) => k !== 'locationIds').map(([k, v]) => [k, v])),
    locationIds: Type.Array(Uuid()),
    ...CustomFieldsOut(),
    createdAt: Type.String({ format: 'date-time' }),
    updatedAt: Type.String({ format: 'date-time' }),
    company: Type.Optional(Summary),
    locations: Type.Optional(Type.Array(Summary)),
    resources: Type.Optional(Type.Array(Summary)),
  },
  { $id: 'Service' },
);

const WRITE = { access: { mode: 'company' as const, roles: ['Owner' as const, 'Admin' as const, 'User' as const] } };
const TAGS = ['Services'];

export function registerServiceRoutes(app: App, { services }: { services: ServiceService }) {
  app.addSchema(Service);
  const ref = Type.Ref('Service');

  app.post(
    '/v3/service',
    {
      config: WRITE,
      schema: { tags: TAGS, summary: 'Create a service', security: Security.company, body: CreateBody, response: { 201: ref, ...errorResponses(400, 401, 403) } },
    },
    async (request, reply) =>
      reply.status(201).send(await services.create(requireCompany(request.principal), request.body as ServiceWrite & { name: string; duration: number })),
  );

  app.get(
    '/v3/services',
    {
      schema: {
        tags: TAGS,
        summary: 'List services (in the caller\'s location scope)',
        security: Security.company,
        querystring: Type.Object({
          ...PageQueryFields(500),
          include: IncludeQuery(SERVICE_INCLUDES),
          LocationId: Type.Optional(Uuid({ description: 'Only services offered at this location' })),
        }),
        response: { 200: Page(ref), ...errorResponses(400, 401, 403) },
      },
    },
    async (request) => {
      const { limit = 20, page = 1, include, LocationId } = request.query;
      return services.list(requireCompany(request.principal), { limit, page, include: parseInclude(include), locationId: LocationId });
    },
  );

  app.get(
    '/v3/service/:id',
    {
      schema: {
        tags: TAGS,
        summary: 'Read a service with its company, locations and resources',
        security: Security.company,
        params: IdParams,
        response: { 200: ref, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => services.read(requireCompany(request.principal), request.params.id),
  );

  const updateSchema = {
    tags: TAGS,
    summary: 'Change a service (fields given; the rest stay)',
    security: Security.company,
    params: IdParams,
    body: UpdateBody,
    response: { 200: ref, ...errorResponses(400, 401, 403, 404) },
  };
  app.put('/v3/service/:id', { config: WRITE, schema: updateSchema }, async (request) =>
    services.update(requireCompany(request.principal), request.params.id, request.body as ServiceWrite),
  );
  app.patch('/v3/service/:id', { config: WRITE, schema: updateSchema }, async (request) =>
    services.update(requireCompany(request.principal), request.params.id, request.body as ServiceWrite),
  );

  app.delete(
    '/v3/service/:id',
    {
      config: WRITE,
      schema: {
        tags: TAGS,
        summary: 'Archive a service',
        security: Security.company,
        params: IdParams,
        response: { 204: Type.Null(), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      await services.archive(requireCompany(request.principal), request.params.id);
      return reply.status(204).send(null);
    },
  );
}
