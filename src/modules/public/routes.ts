import { Type } from '@sinclair/typebox';
import { Address, WeeklyAvailability } from '../catalog/fields.js';
import type { PublicRepository } from './repository.js';
import { assertOwned } from '../catalog/ownership.js';
import type { App } from '../../platform/http/types.js';
import { errorResponses, Nullable, Security, Uuid } from '../../platform/http/schemas.js';
import { notFound } from '../../platform/errors.js';
import { requireCompany } from '../../platform/auth/principal.js';
import type { CompanyRepository } from '../companies/repository.js';

/** Routes for public booking pages: x-client-id plus an Origin among the company's Allowed Domains.
 * They show only what a booking page needs, never settings or credentials. */
const PUBLIC = { access: { mode: 'public' as const } };

export function registerPublicRoutes(app: App, { companies, catalog }: { companies: CompanyRepository; catalog: PublicRepository }) {
  app.get(
    '/v3/public/locations',
    {
      config: PUBLIC,
      schema: {
        tags: ['Public booking'],
        summary: 'Locations of the company, with their address and opening hours',
        security: Security.public,
        response: {
          200: Type.Object({
            data: Type.Array(
              Type.Object({
                id: Uuid(),
                name: Type.String(),
                timezoneName: Type.String(),
                address: Nullable(Address),
                phone: Nullable(Type.String()),
                email: Nullable(Type.String()),
                weeklyAvailability: Nullable(WeeklyAvailability),
              }),
            ),
          }),
          ...errorResponses(401, 403),
        },
      },
    },
    async (request) => ({ data: await catalog.locations(requireCompany(request.principal).companyId) }),
  );

  app.get(
    '/v3/public/services',
    {
      config: PUBLIC,
      schema: {
        tags: ['Public booking'],
        summary: 'Services offered online (showOnline), optionally at one location',
        security: Security.public,
        querystring: Type.Object({ LocationId: Type.Optional(Uuid()) }),
        response: {
          200: Type.Object({
            data: Type.Array(
              Type.Object({
                id: Uuid(),
                name: Type.String(),
                description: Nullable(Type.String()),
                duration: Type.Integer(),
                durationSelect: Type.Boolean(),
                durationMin: Nullable(Type.Integer()),
                durationMax: Nullable(Type.Integer()),
                durationInterval: Nullable(Type.Integer()),
                feeAmount: Nullable(Type.Number()),
                imageUrl: Nullable(Type.String()),
                locationIds: Type.Array(Uuid()),
              }),
            ),
          }),
          ...errorResponses(400, 401, 403),
        },
      },
    },
    async (request) => {
      const { companyId } = requireCompany(request.principal);
      if (request.query.LocationId) {
        await assertOwned(catalog.db, companyId, [{ table: 'locations', ids: [request.query.LocationId], location: 'query', path: 'LocationId', single: true }]);
      }
      return { data: await catalog.onlineServices(companyId, request.query.LocationId) };
    },
  );

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
