import { Type } from '@sinclair/typebox';
import type { App } from '../../platform/http/types.js';
import { errorResponses, IdParams, Page, Security } from '../../platform/http/schemas.js';
import { requireCompany } from '../../platform/auth/principal.js';
import { parseInclude } from '../catalog/fields.js';
import { registerDeleteRoute, WITHOUT_RESOURCE_ROLE } from '../catalog/routes.js';
import { Location, LocationCreateBody, LocationListQuery, LocationUpdateBody } from './schemas.js';
import type { LocationService } from './service.js';

const WRITE = WITHOUT_RESOURCE_ROLE;
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
        body: LocationCreateBody,
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
        querystring: LocationListQuery,
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

  // PUT and PATCH are the same call (docs/api.md).
  for (const method of ['put', 'patch'] as const) {
    app[method](
      '/v3/location/:id',
      {
        config: WRITE,
        schema: {
          tags: TAGS,
          summary: 'Change a location (fields given; the rest stay)',
          security: Security.company,
          params: IdParams,
          body: LocationUpdateBody,
          response: { 200: ref, ...errorResponses(400, 401, 403, 404) },
        },
      },
      async (request) => locations.update(requireCompany(request.principal), request.params.id, request.body),
    );
  }

  registerDeleteRoute(
    app,
    '/v3/location/:id',
    { config: WRITE, tags: TAGS, summary: 'Archive a location: later reads give 404, lists omit it, history stays', security: Security.company },
    (principal, id) => locations.archive(principal, id),
  );
}
