import { Type } from '@sinclair/typebox';
import type { App } from '../../platform/http/types.js';
import { errorResponses, IdParams, Page, Security } from '../../platform/http/schemas.js';
import { requireCompany } from '../../platform/auth/principal.js';
import { parseInclude } from '../catalog/fields.js';
import { registerDeleteRoute, WITHOUT_RESOURCE_ROLE } from '../catalog/routes.js';
import { Resource, ResourceCreateBody, ResourceListQuery, ResourceUpdateBody } from './schemas.js';
import type { ResourceService } from './service.js';

const WRITE = WITHOUT_RESOURCE_ROLE;
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
        body: ResourceCreateBody,
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
        querystring: ResourceListQuery,
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

  // PUT and PATCH are the same call (docs/api.md). No role list: a Resource-role user may change
  // their own resource (the service checks which).
  for (const method of ['put', 'patch'] as const) {
    app[method](
      '/v3/resource/:id',
      {
        schema: {
          tags: TAGS,
          summary: 'Change a resource (fields given; a Resource-role user may change only their own, not its links)',
          security: Security.company,
          params: IdParams,
          body: ResourceUpdateBody,
          response: { 200: ref, ...errorResponses(400, 401, 403, 404) },
        },
      },
      async (request) => resources.update(requireCompany(request.principal), request.params.id, request.body),
    );
  }

  registerDeleteRoute(app, '/v3/resource/:id', { config: WRITE, tags: TAGS, summary: 'Archive a resource', security: Security.company }, (principal, id) =>
    resources.archive(principal, id),
  );
}
