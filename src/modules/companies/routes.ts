import { Type } from '@sinclair/typebox';
import type { App } from '../../platform/http/types.js';
import { PageQueryFields, Page, Uuid, errorResponses, Security } from '../../platform/http/schemas.js';
import { requireCompany, requireUser } from '../../platform/auth/principal.js';
import type { CompanyService } from './service.js';
import { IncludeQuery, ReminderOffsets, parseInclude } from '../catalog/fields.js';

const Company = Type.Object(
  {
    id: Uuid(),
    name: Type.String(),
    publicClientId: Type.String({ description: 'Sent by public booking pages as x-client-id' }),
    allowedDomains: Type.Array(Type.String(), { description: 'Hosts whose Origin may call /v3/public/*' }),
    disableEmailNotifications: Type.Boolean(),
    disableSmsNotifications: Type.Boolean(),
    disableEmailAndSmsNotifications: Type.Boolean({ description: 'Legacy (v1): true only when both channels are disabled' }),
    suspended: Type.Boolean(),
    reminderOffsets: Type.Array(Type.Integer(), { description: 'Minutes before the start at which APPOINTMENT_REMINDER is sent for booked appointments (a location may override)' }),
    locations: Type.Optional(
      Type.Array(Type.Object({ id: Uuid(), name: Type.String(), timezoneName: Type.String() }), { description: 'With include=locations on lists' }),
    ),
    apiKeyPrefix: Type.Optional(Type.String({ description: 'Start of the API key, to recognise it. Omitted for roles that may not see credentials.' })),
    createdAt: Type.String({ format: 'date-time' }),
    updatedAt: Type.String({ format: 'date-time' }),
  },
  { $id: 'Company' },
);

const CompanyWithApiKey = Type.Object({
  ...Company.properties,
  apiKey: Type.String({ description: 'Shown once. Only a hash is stored.' }),
});

const Name = Type.String({ minLength: 1, maxLength: 255, 'x-codes': { required: 'COMPANY-112', minLength: 'COMPANY-112' } });
const WriteFields = {
  allowedDomains: Type.Optional(Type.Array(Type.String({ maxLength: 300 }), { maxItems: 100 })),
  disableEmailNotifications: Type.Optional(Type.Boolean()),
  disableSmsNotifications: Type.Optional(Type.Boolean()),
  reminderOffsets: Type.Optional(ReminderOffsets),
  disableNotifications: Type.Optional(
    Type.Boolean({ deprecated: true, description: 'Write only. When neither channel flag is in the body, both take this value.' }),
  ),
};

const TAGS = ['Company'];
const DASHBOARD_ONLY = 'Machine tokens cannot manage dashboard credentials';

export function registerCompanyRoutes(app: App, { companies }: { companies: CompanyService }) {
  app.addSchema(Company);

  app.post(
    '/v3/company',
    {
      config: { access: { mode: 'user', machineMessage: 'Machine tokens cannot create companies' } },
      schema: {
        tags: TAGS,
        summary: 'Create a company; the caller becomes its Owner',
        description: 'Needs only the dashboard JWT. The response carries the API key, shown this once.',
        security: Security.dashboardUser,
        body: Type.Object({ name: Name, ...WriteFields }, { additionalProperties: false }),
        response: { 201: CompanyWithApiKey, ...errorResponses(400, 401, 403) },
      },
    },
    async (request, reply) => reply.status(201).send(await companies.create(requireUser(request.principal).userId, request.body)),
  );

  app.get(
    '/v3/companies',
    {
      config: { access: { mode: 'userOrMachine' } },
      schema: {
        tags: TAGS,
        summary: 'Companies of the caller',
        description: 'A dashboard user sees the companies they belong to; a machine token sees its bound company. `search` matches the start of the name, ignoring case.',
        security: Security.userOrMachine,
        querystring: Type.Object({
          ...PageQueryFields(100),
          search: Type.Optional(Type.String({ maxLength: 255, description: 'Case-insensitive prefix of the name' })),
          include: IncludeQuery(['locations']),
        }),
        response: { 200: Page(Type.Ref('Company')), ...errorResponses(400, 401, 403) },
      },
    },
    async (request) => {
      const { limit = 20, page = 1, search, include } = request.query;
      return companies.list(request.principal!, { limit, page, search, include: parseInclude(include) });
    },
  );

  app.get(
    '/v3/company',
    {
      schema: {
        tags: TAGS,
        summary: 'The caller\'s company',
        security: Security.company,
        response: { 200: Type.Ref('Company'), ...errorResponses(401, 403) },
      },
    },
    async (request) => companies.read(requireCompany(request.principal)),
  );

  const updateSchema = {
    tags: TAGS,
    summary: 'Change company settings (fields given; the rest stay)',
    security: Security.company,
    body: Type.Object({ name: Type.Optional(Name), ...WriteFields }, { additionalProperties: false }),
    response: { 200: Type.Ref('Company'), ...errorResponses(400, 401, 403) },
  };
  const updateAccess = { access: { mode: 'company' as const, roles: ['Owner' as const, 'Admin' as const] } };
  app.put('/v3/company', { config: updateAccess, schema: updateSchema }, async (request) =>
    companies.update(requireCompany(request.principal), request.body),
  );
  // PATCH is accepted as the same call (decisions.md, General).
  app.patch('/v3/company', { config: updateAccess, schema: updateSchema }, async (request) =>
    companies.update(requireCompany(request.principal), request.body),
  );

  app.post(
    '/v3/company/apiKey',
    {
      config: { access: { mode: 'company', roles: ['Owner', 'Admin'], machineMessage: DASHBOARD_ONLY } },
      schema: {
        tags: TAGS,
        summary: 'Rotate the company API key (Owner or Admin); the old key stops working at once',
        security: Security.dashboardCompany,
        response: { 200: CompanyWithApiKey, ...errorResponses(401, 403) },
      },
    },
    async (request) => companies.rotateApiKey(requireCompany(request.principal)),
  );

  app.post(
    '/v3/company/publicClientId',
    {
      config: { access: { mode: 'company', roles: ['Owner', 'Admin'], machineMessage: DASHBOARD_ONLY } },
      schema: {
        tags: TAGS,
        summary: 'Rotate the public client id (Owner or Admin); the old one becomes invalid',
        security: Security.dashboardCompany,
        response: { 200: Type.Ref('Company'), ...errorResponses(401, 403) },
      },
    },
    async (request) => companies.rotatePublicClientId(requireCompany(request.principal)),
  );
}
