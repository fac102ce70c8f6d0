import { Type } from '@sinclair/typebox';
import type { App } from '../../platform/http/types.js';
import { errorResponses, IdParams, Nullable, Page, PageQueryFields, Security, Uuid } from '../../platform/http/schemas.js';
import { requireCompany } from '../../platform/auth/principal.js';
import { EmailField, IdList, IncludeQuery, Name, Phone, Summary, TimezoneName, WeeklyAvailability, parseInclude } from '../catalog/fields.js';
import { RESOURCE_INCLUDES } from './service.js';
import type { ResourceService } from './service.js';


const Fields = {
  name: Name(255, { required: 'RESOURCE-114', minLength: 'RESOURCE-114', maxLength: 'RESOURCE-115' }),
  email: Type.Optional(Nullable(EmailField())),
  phone: Type.Optional(Nullable(Phone('CONTACT-101'))),
  timezoneName: Type.Optional(Nullable(TimezoneName({ format: 'RESOURCE-100' }))),
  weeklyAvailability: Type.Optional(Nullable(WeeklyAvailability)),
  bookingLimit: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000, description: 'Active appointments per customer with this resource for the current service; 0 = unlimited' })),
  locationIds: Type.Optional(IdList('Locations the resource works at')),
  serviceIds: Type.Optional(IdList('Services the resource provides', { uniqueItems: 'RESOURCE-109' })),
  legacyId: Type.Optional(Nullable(Type.String({ maxLength: 100 }))),
};

const Resource = Type.Object(
  {
    id: Uuid(),
    companyId: Uuid(),
    name: Type.String(),
    email: Nullable(Type.String()),
    phone: Nullable(Type.String()),
    timezoneName: Nullable(Type.String()),
    weeklyAvailability: Nullable(WeeklyAvailability),
    bookingLimit: Type.Integer(),
    legacyId: Nullable(Type.String()),
    locationIds: Type.Array(Uuid()),
    serviceIds: Type.Array(Uuid()),
    createdAt: Type.String({ format: 'date-time' }),
    updatedAt: Type.String({ format: 'date-time' }),
    company: Type.Optional(Summary),
    locations: Type.Optional(Type.Array(Summary)),
    services: Type.Optional(Type.Array(Summary)),
  },
  { $id: 'Resource' },
);

const WRITE = { access: { mode: 'company' as const, roles: ['Owner' as const, 'Admin' as const, 'User' as const] } };
const TAGS = ['Resources'];

export function registerResourceRoutes(app: App, { resources }: { resources: ResourceService }) {
  app.addSchema(Resource);
  const ref = Type.Ref('Resource');

  app.post(
    '/v3/resource',
    {
      config: WRITE,
      schema: {
        tags: TAGS,
        summary: 'Create a resource (a person or thing that is booked)',
        security: Security.company,
        body: Type.Object(Fields, { additionalProperties: false }),
        response: { 201: ref, ...errorResponses(400, 401, 403) },
      },
    },
    async (request, reply) => reply.status(201).send(await resources.create(requireCompany(request.principal), request.body)),
  );

  app.get(
    '/v3/resources',
    {
      schema: {
        tags: TAGS,
        summary: 'List resources (in the caller\'s location scope; a Resource-role user sees only their own)',
        security: Security.company,
        querystring: Type.Object({
          ...PageQueryFields(500),
          include: IncludeQuery(RESOURCE_INCLUDES),
          LocationId: Type.Optional(Uuid({ description: 'Only resources working at this location' })),
          ServiceId: Type.Optional(Uuid({ description: 'Only resources providing this service' })),
        }),
        response: { 200: Page(ref), ...errorResponses(400, 401, 403) },
      },
    },
    async (request) => {
      const { limit = 20, page = 1, include, LocationId, ServiceId } = request.query;
      return resources.list(requireCompany(request.principal), { limit, page, include: parseInclude(include), locationId: LocationId, serviceId: ServiceId });
    },
  );

  app.get(
    '/v3/resource/:id',
    {
      schema: {
        tags: TAGS,
        summary: 'Read a resource with its company, locations and services',
        security: Security.company,
        params: IdParams,
        response: { 200: ref, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => resources.read(requireCompany(request.principal), request.params.id),
  );

  const updateSchema = {
    tags: TAGS,
    summary: 'Change a resource (fields given; a Resource-role user may change only their own, not its links)',
    security: Security.company,
    params: IdParams,
    body: Type.Object({ ...Fields, name: Type.Optional(Fields.name) }, { additionalProperties: false }),
    response: { 200: ref, ...errorResponses(400, 401, 403, 404) },
  };
  app.put('/v3/resource/:id', { schema: updateSchema }, async (request) =>
    resources.update(requireCompany(request.principal), request.params.id, request.body),
  );
  app.patch('/v3/resource/:id', { schema: updateSchema }, async (request) =>
    resources.update(requireCompany(request.principal), request.params.id, request.body),
  );

  app.delete(
    '/v3/resource/:id',
    {
      config: WRITE,
      schema: {
        tags: TAGS,
        summary: 'Archive a resource',
        security: Security.company,
        params: IdParams,
        response: { 204: Type.Null(), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      await resources.archive(requireCompany(request.principal), request.params.id);
      return reply.status(204).send(null);
    },
  );
}
