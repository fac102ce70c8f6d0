import type { PublicRepository } from './repository.js';
import { assertOwned } from '../catalog/ownership.js';
import type { App } from '../../platform/http/types.js';
import { errorResponses, Security } from '../../platform/http/schemas.js';
import { ApiError, fieldError, notFound } from '../../platform/errors.js';
import { requireCompany } from '../../platform/auth/principal.js';
import type { CompanyRepository } from '../companies/repository.js';
import { bookingPageView } from '../companies/service.js';
import { PublicCompany, PublicLocations, PublicResources, PublicResourcesQuery, PublicServices, PublicServicesQuery } from './schemas.js';

/** Routes for public booking pages: x-client-id plus an Origin among the company's Allowed Domains.
 * They show only what a booking page needs, never settings or credentials. */
const PUBLIC = { access: { mode: 'public' as const } };
const TAGS = ['Public booking'];

export function registerPublicRoutes(
  app: App,
  { companies, catalog }: { companies: Pick<CompanyRepository, 'byId'>; catalog: Pick<PublicRepository, 'db' | 'locations' | 'onlineServices' | 'isOnlineService' | 'bookableResources'> },
) {
  app.get(
    '/v3/public/locations',
    {
      config: PUBLIC,
      schema: {
        tags: TAGS,
        summary: 'Locations of the company, with their address and opening hours',
        security: Security.public,
        response: { 200: PublicLocations, ...errorResponses(401, 403) },
      },
    },
    async (request) => ({ data: await catalog.locations(requireCompany(request.principal).companyId) }),
  );

  app.get(
    '/v3/public/services',
    {
      config: PUBLIC,
      schema: {
        tags: TAGS,
        summary: 'Services offered online (showOnline), optionally at one location',
        security: Security.public,
        querystring: PublicServicesQuery,
        response: { 200: PublicServices, ...errorResponses(400, 401, 403) },
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
    '/v3/public/resources',
    {
      config: PUBLIC,
      schema: {
        tags: TAGS,
        summary: 'The resources a visitor may choose for a service at a location (the ones availability and hold may pick), by name',
        security: Security.public,
        querystring: PublicResourcesQuery,
        response: { 200: PublicResources, ...errorResponses(400, 401, 403) },
      },
    },
    async (request) => {
      const { companyId } = requireCompany(request.principal);
      const { LocationId, ServiceId } = request.query;
      await assertOwned(catalog.db, companyId, [
        { table: 'locations', ids: [LocationId], location: 'query', path: 'LocationId', single: true },
        { table: 'services', ids: [ServiceId], location: 'query', path: 'ServiceId', single: true },
      ]);
      // A service not shown online reads exactly as an unknown one, as on /v3/public/availability.
      if (!(await catalog.isOnlineService(companyId, ServiceId))) {
        const msg = `${ServiceId} is not a service of this company`;
        throw new ApiError(400, msg, [fieldError('query', 'ServiceId', msg)]);
      }
      return { data: await catalog.bookableResources(companyId, LocationId, ServiceId) };
    },
  );

  app.get(
    '/v3/public/company',
    {
      config: PUBLIC,
      schema: {
        tags: TAGS,
        summary: 'The company behind the public client id, as a booking page shows it',
        security: Security.public,
        response: { 200: PublicCompany, ...errorResponses(401, 403) },
      },
    },
    async (request) => {
      const company = await companies.byId(requireCompany(request.principal).companyId);
      if (!company) throw notFound('Company not found');
      return { id: company.id, name: company.name, bookingPage: bookingPageView(company.bookingPage) };
    },
  );
}
