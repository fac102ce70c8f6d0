import { Type } from '@sinclair/typebox';
import type { App } from '../../platform/http/types.js';
import { Uuid, errorResponses, Security } from '../../platform/http/schemas.js';
import { notFound } from '../../platform/errors.js';
import { requireCompany } from '../../platform/auth/principal.js';
import type { CompanyRepository } from '../companies/repository.js';

/** Routes for public booking pages: x-client-id plus an Origin among the company's Allowed Domains.
 * They show only what a booking page needs, never settings or credentials. */
export function registerPublicRoutes(app: App, { companies }: { companies: CompanyRepository }) {
  app.get(
    '/v3/public/company',
    {
      config: { access: { mode: 'public' } },
      schema: {
        tags: ['Public booking'],
        summary: 'The company behind the public client id, as a booking page shows it',
        security: Security.public,
        response: { 200: Type.Object({ id: Uuid(), name: Type.String() }), ...errorResponses(401, 403) },
      },
    },
    async (request) => {
      const company = await companies.byId(requireCompany(request.principal).companyId);
      if (!company) throw notFound('Company not found');
      return { id: company.id, name: company.name };
    },
  );
}
