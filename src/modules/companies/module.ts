import type { App } from '../../platform/http/types.js';
import type { AppParts } from '../parts.js';
import { createCompanyService } from './service.js';
import { registerCompanyRoutes } from './routes.js';

/** Companies: creation, settings, API keys and allowed domains. */
export const companiesModule = {
  name: 'companies',
  register(app: App, { repositories }: Pick<AppParts, 'repositories'>) {
    registerCompanyRoutes(app, { companies: createCompanyService({ repository: repositories.companies }) });
  },
};
