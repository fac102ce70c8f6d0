import { Type } from '@sinclair/typebox';
import type { FastifyContextConfig } from 'fastify';
import type { App } from '../../platform/http/types.js';
import { errorResponses, IdParams } from '../../platform/http/schemas.js';
import { requireCompany } from '../../platform/auth/principal.js';
import type { CompanyPrincipal } from '../../platform/auth/principal.js';

/** Every company caller but a Resource-role user: catalog writes, and every customer route. */
export const WITHOUT_RESOURCE_ROLE = { access: { mode: 'company' as const, roles: ['Owner' as const, 'Admin' as const, 'User' as const] } };

/**
 * DELETE `url` (ending in /:id): `remove` runs for the caller's company, and the answer is 204 with
 * no body. The archive and revoke routes of the catalog and of client ids share this shape.
 */
export function registerDeleteRoute(
  app: App,
  url: string,
  route: { config: FastifyContextConfig; tags: string[]; summary: string; security: Array<Record<string, string[]>> },
  remove: (principal: CompanyPrincipal, id: string) => Promise<unknown>,
) {
  const { config, tags, summary, security } = route;
  app.delete(
    url,
    { config, schema: { tags, summary, security, params: IdParams, response: { 204: Type.Null(), ...errorResponses(400, 401, 403, 404) } } },
    async (request, reply) => {
      await remove(requireCompany(request.principal), request.params.id);
      return reply.status(204).send(null);
    },
  );
}
