import type { App } from '../../platform/http/types.js';
import type { AppParts } from '../parts.js';
import { registerOperationsRoutes } from './routes.js';

/** /healthz, /readyz, /openapi.json and /docs. */
export const operationsModule = {
  name: 'operations',
  register(app: App, { db, tokens, isDraining, config, repositories }: Pick<AppParts, 'db' | 'tokens' | 'isDraining' | 'config' | 'repositories'>) {
    registerOperationsRoutes(app, {
      db,
      tokens,
      isDraining,
      publicBaseUrl: config.publicBaseUrl,
      companyForDocs: async (companyId) => {
        const row = await repositories.companies.byId(companyId);
        return row && { id: row.id, name: row.name, publicClientId: row.publicClientId };
      },
    });
  },
};
