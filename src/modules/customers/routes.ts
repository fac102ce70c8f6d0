import { Type } from '@sinclair/typebox';
import type { App } from '../../platform/http/types.js';
import { errorResponses, IdParams, Page, Security } from '../../platform/http/schemas.js';
import { requireCompany } from '../../platform/auth/principal.js';
import { registerDeleteRoute, WITHOUT_RESOURCE_ROLE } from '../catalog/routes.js';
import { Customer, CustomerCreateBody, CustomerListQuery, CustomerUpdateBody } from './schemas.js';
import type { CustomerService } from './service.js';

// Customers are company-wide; Resource-role users have no access to them.
const ACCESS = WITHOUT_RESOURCE_ROLE;
const TAGS = ['Customers'];

export function registerCustomerRoutes(app: App, { customers }: { customers: CustomerService }) {
  app.addSchema(Customer);
  const ref = Type.Ref('Customer');

  app.post(
    '/v3/customer',
    {
      config: ACCESS,
      schema: {
        tags: TAGS,
        summary: 'Create a customer (email unique in the company: a duplicate is 409)',
        security: Security.company,
        body: CustomerCreateBody,
        response: { 201: ref, ...errorResponses(400, 401, 403, 409) },
      },
    },
    async (request, reply) => reply.status(201).send(await customers.create(requireCompany(request.principal).companyId, request.body)),
  );

  app.get(
    '/v3/customers',
    {
      config: ACCESS,
      schema: {
        tags: TAGS,
        summary: 'List customers',
        security: Security.company,
        querystring: CustomerListQuery,
        response: { 200: Page(ref), ...errorResponses(400, 401, 403) },
      },
    },
    async (request) => {
      const { limit = 20, page = 1, email } = request.query;
      return customers.list(requireCompany(request.principal).companyId, { limit, page, email });
    },
  );

  app.get(
    '/v3/customer/:id',
    {
      config: ACCESS,
      schema: { tags: TAGS, summary: 'Read a customer', security: Security.company, params: IdParams, response: { 200: ref, ...errorResponses(400, 401, 403, 404) } },
    },
    async (request) => customers.read(requireCompany(request.principal).companyId, request.params.id),
  );

  // PUT and PATCH are the same call (docs/api.md).
  for (const method of ['put', 'patch'] as const) {
    app[method](
      '/v3/customer/:id',
      {
        config: ACCESS,
        schema: {
          tags: TAGS,
          summary: 'Change a customer (fields given; the rest stay)',
          security: Security.company,
          params: IdParams,
          body: CustomerUpdateBody,
          response: { 200: ref, ...errorResponses(400, 401, 403, 404, 409) },
        },
      },
      async (request) => customers.update(requireCompany(request.principal).companyId, request.params.id, request.body),
    );
  }

  registerDeleteRoute(
    app,
    '/v3/customer/:id',
    { config: ACCESS, tags: TAGS, summary: 'Archive a customer (a missing id is 400)', security: Security.company },
    (principal, id) => customers.archive(principal.companyId, id),
  );
}
