import { Type } from '@sinclair/typebox';
import type { App } from '../../platform/http/types.js';
import { Page, errorResponses, Security } from '../../platform/http/schemas.js';
import { requireCompany, requireUser } from '../../platform/auth/principal.js';
import type { CompanyService } from './service.js';
import { parseInclude } from '../catalog/fields.js';
import { Company, CompanyCreateBody, CompanyListQuery, CompanyUpdateBody, CompanyWithApiKey } from './schemas.js';

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
        body: CompanyCreateBody,
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
        querystring: CompanyListQuery,
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

  // PUT and PATCH are the same call (docs/api.md).
  for (const method of ['put', 'patch'] as const) {
    app[method](
      '/v3/company',
      {
        config: { access: { mode: 'company', roles: ['Owner', 'Admin'] } },
        schema: {
          tags: TAGS,
          summary: 'Change company settings (fields given; the rest stay)',
          security: Security.company,
          body: CompanyUpdateBody,
          response: { 200: Type.Ref('Company'), ...errorResponses(400, 401, 403) },
        },
      },
      async (request) => companies.update(requireCompany(request.principal), request.body),
    );
  }

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
