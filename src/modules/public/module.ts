import type { App } from '../../platform/http/types.js';
import type { AppParts } from '../parts.js';
import { registerPublicRoutes } from './routes.js';

/** Read-only catalog routes for public booking pages (x-client-id plus an allowed Origin). */
export const publicModule = {
  name: 'public',
  register(app: App, { repositories }: Pick<AppParts, 'repositories'>) {
    registerPublicRoutes(app, { companies: repositories.companies, catalog: repositories.publicCatalog });
  },
};
