import type { App } from '../../platform/http/types.js';
import type { AppParts } from '../parts.js';
import { createResourceService } from './service.js';
import { registerResourceRoutes } from './routes.js';

export const resourcesModule = {
  name: 'resources',
  register(app: App, { db, repositories, companySummary, touch, externalCalendars }: Pick<AppParts, 'db' | 'repositories' | 'companySummary' | 'touch' | 'externalCalendars'>) {
    const resources = createResourceService({
      db,
      repository: repositories.resources,
      links: repositories.catalogLinks,
      companySummary,
      onSlotSettingsChanged: (companyId, id) => touch(companyId, { resources: [id] }),
      onArchived: (companyId, id) => externalCalendars.disconnectResource(companyId, id),
    });
    registerResourceRoutes(app, { resources });
  },
};
