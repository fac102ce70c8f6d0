import { Type } from '@sinclair/typebox';
import type { App } from '../../platform/http/types.js';
import { errorResponses, IdParams, Page, Security } from '../../platform/http/schemas.js';
import { requireCompany } from '../../platform/auth/principal.js';
import { parseInclude } from '../catalog/fields.js';
import { registerDeleteRoute, WITHOUT_RESOURCE_ROLE } from '../catalog/routes.js';
import { Service, ServiceCreateBody, ServiceListQuery, ServiceUpdateBody } from './schemas.js';
import type { ServiceService } from './service.js';

const WRITE = WITHOUT_RESOURCE_ROLE;
const TAGS = ['Services'];

export function registerServiceRoutes(app: App, { services }: { services: ServiceService }) {
  app.addSchema(Service);
  const ref = Type.Ref('Service');

  app.post(
    '/v3/service',
    {
      config: WRITE,
      schema: { tags: TAGS, summary: 'Create a service', security: Security.company, body: ServiceCreateBody, response: { 201: ref, ...errorResponses(400, 401, 403) } },
    },
    async (request, reply) => reply.status(201).send(await services.create(requireCompany(request.principal), request.body)),
  );

  app.get(
    '/v3/services',
    {
      schema: {
        tags: TAGS,
        summary: 'List services (in the caller\'s location scope)',
        security: Security.company,
        querystring: ServiceListQuery,
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

  // PUT and PATCH are the same call (docs/api.md).
  for (const method of ['put', 'patch'] as const) {
    app[method](
      '/v3/service/:id',
      {
        config: WRITE,
        schema: {
          tags: TAGS,
          summary: 'Change a service (fields given; the rest stay)',
          security: Security.company,
          params: IdParams,
          body: ServiceUpdateBody,
          response: { 200: ref, ...errorResponses(400, 401, 403, 404) },
        },
      },
      async (request) => services.update(requireCompany(request.principal), request.params.id, request.body),
    );
  }

  registerDeleteRoute(app, '/v3/service/:id', { config: WRITE, tags: TAGS, summary: 'Archive a service', security: Security.company }, (principal, id) =>
    services.archive(principal, id),
  );
}
