import { Type } from '@sinclair/typebox';
import type { App } from '../../platform/http/types.js';
import { errorResponses, IdParams, Nullable, Page, PageQueryFields, Security, Uuid } from '../../platform/http/schemas.js';
import { requireCompany } from '../../platform/auth/principal.js';
import { Address, EmailField, IncludeQuery, Name, Phone, ReminderOffsets, Summary, TimezoneName, WeeklyAvailability, parseInclude } from '../catalog/fields.js';
import { LOCATION_INCLUDES } from './service.js';
import type { LocationService } from './service.js';


const Fields = {
  name: Name(50, { required: 'LOCATION-117', minLength: 'LOCATION-117', maxLength: 'LOCATION-125' }),
  timezoneName: TimezoneName({ required: 'LOCATION-120', format: 'LOCATION-101' }),
  address: Type.Optional(Nullable(Address)),
  phone: Type.Optional(Nullable(Phone('LOCATION-126'))),
  email: Type.Optional(Nullable(EmailField())),
  weeklyAvailability: Type.Optional(Nullable(WeeklyAvailability)),
  bookingTimerMinutes: Type.Optional(
    Type.Integer({ minimum: 1, maximum: 30, 'x-codes': { minimum: 'SETTINGS-102', maximum: 'SETTINGS-102' }, description: 'Minutes a hold lasts (1 to 30, default 10)' }),
  ),
  reminderOffsets: Type.Optional(Nullable(ReminderOffsets)),
  legacyId: Type.Optional(Nullable(Type.String({ maxLength: 100 }))),
};

const Location = Type.Object(
  {
    id: Uuid(),
    companyId: Uuid(),
    name: Type.String(),
    timezoneName: Type.String(),
    phone: Nullable(Type.String()),
    email: Nullable(Type.String()),
    weeklyAvailability: Nullable(WeeklyAvailability),
    bookingTimerMinutes: Type.Integer(),
    reminderOffsets: Nullable(Type.Array(Type.Integer(), { description: 'Minutes before the start for APPOINTMENT_REMINDER; null: the company\'s' })),
    legacyId: Nullable(Type.String()),
    createdAt: Type.String({ format: 'date-time' }),
    updatedAt: Type.String({ format: 'date-time' }),
    address: Type.Optional(Nullable(Address)),
    company: Type.Optional(Summary),
    services: Type.Optional(Type.Array(Summary)),
    resources: Type.Optional(Type.Array(Summary)),
  },
  { $id: 'Location', description: 'Lists omit address, company, services and resources unless `include` names them; a single read has them all.' },
);

const WRITE = { access: { mode: 'company' as const, roles: ['Owner' as const, 'Admin' as const, 'User' as const] } };
const TAGS = ['Locations'];

export function registerLocationRoutes(app: App, { locations }: { locations: LocationService }) {
  app.addSchema(Location);
  const ref = Type.Ref('Location');

  app.post(
    '/v3/location',
    {
      config: WRITE,
      schema: {
        tags: TAGS,
        summary: 'Create a location',
        security: Security.company,
        body: Type.Object(Fields, { additionalProperties: false }),
        response: { 201: ref, ...errorResponses(400, 401, 403) },
      },
    },
    async (request, reply) => reply.status(201).send(await locations.create(requireCompany(request.principal), request.body)),
  );

  app.get(
    '/v3/locations',
    {
      schema: {
        tags: TAGS,
        summary: 'List locations (in the caller\'s location scope)',
        security: Security.company,
        querystring: Type.Object({ ...PageQueryFields(500), include: IncludeQuery(LOCATION_INCLUDES) }),
        response: { 200: Page(ref), ...errorResponses(400, 401, 403) },
      },
    },
    async (request) => {
      const { limit = 20, page = 1, include } = request.query;
      return locations.list(requireCompany(request.principal), { limit, page, include: parseInclude(include) });
    },
  );

  app.get(
    '/v3/location/:id',
    {
      schema: {
        tags: TAGS,
        summary: 'Read a location with its address, company, services and resources',
        security: Security.company,
        params: IdParams,
        response: { 200: ref, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => locations.read(requireCompany(request.principal), request.params.id),
  );

  const updateSchema = {
    tags: TAGS,
    summary: 'Change a location (fields given; the rest stay)',
    security: Security.company,
    params: IdParams,
    body: Type.Object(
      { ...Fields, name: Type.Optional(Fields.name), timezoneName: Type.Optional(Fields.timezoneName) },
      { additionalProperties: false },
    ),
    response: { 200: ref, ...errorResponses(400, 401, 403, 404) },
  };
  app.put('/v3/location/:id', { config: WRITE, schema: updateSchema }, async (request) =>
    locations.update(requireCompany(request.principal), request.params.id, request.body),
  );
  app.patch('/v3/location/:id', { config: WRITE, schema: updateSchema }, async (request) =>
    locations.update(requireCompany(request.principal), request.params.id, request.body),
  );

  app.delete(
    '/v3/location/:id',
    {
      config: WRITE,
      schema: {
        tags: TAGS,
        summary: 'Archive a location: later reads give 404, lists omit it, history stays',
        security: Security.company,
        params: IdParams,
        response: { 204: Type.Null(), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      await locations.archive(requireCompany(request.principal), request.params.id);
      return reply.status(204).send(null);
    },
  );
}
