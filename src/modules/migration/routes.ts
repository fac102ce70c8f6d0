import type { App } from '../../platform/http/types.js';
import { errorResponses, Security } from '../../platform/http/schemas.js';
import { requireCompany } from '../../platform/auth/principal.js';
import { MappingAnswer, MappingQuery } from './schemas.js';
import type { createMappingService } from './service.js';

/** Migration workflows: Owners and Admins of the company; machine tokens 403 (Machine flow 8). */
export const MIGRATION_ACCESS = {
  mode: 'company' as const,
  roles: ['Owner' as const, 'Admin' as const],
  machineMessage: 'Machine tokens cannot use migration workflows',
};

export function registerMigrationRoutes(app: App, { mapping }: { mapping: ReturnType<typeof createMappingService> }) {
  app.get(
    '/v3/mapping/ids',
    {
      config: { access: MIGRATION_ACCESS },
      schema: {
        tags: ['Migration'],
        summary: 'v1 ids to v3 ids (only the keys asked)',
        description:
          'Each query key is a v1 id. Scalars answer the v3 id or null; `allocationId` answers an array, since one v1 allocation becomes one weekly row per weekday or several single rows. ' +
          'v1 ids are compared as decimal strings (`"0012"` and `"12"` are the same id). Only the caller\'s company is searched.',
        security: Security.dashboardCompany,
        querystring: MappingQuery,
        response: { 200: MappingAnswer, ...errorResponses(400, 401, 403) },
      },
    },
    async (request) => mapping.ids(requireCompany(request.principal).companyId, request.query),
  );
}
