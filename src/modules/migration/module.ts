import type { App } from '../../platform/http/types.js';
import type { AppParts } from '../parts.js';
import { registerMigrationRoutes } from './routes.js';
import { createMappingService } from './service.js';

/** Migration from v1: the id mapping (the importer is issue 16's next part). */
export const migrationModule = {
  name: 'migration',
  register(app: App, { repositories }: Pick<AppParts, 'repositories'>) {
    registerMigrationRoutes(app, { mapping: createMappingService({ repository: repositories.migration }) });
  },
};
