import type { App } from '../../platform/http/types.js';
import type { AppParts } from '../parts.js';
import { createServiceService } from './service.js';
import { registerServiceRoutes } from './routes.js';

export const servicesModule = {
  name: 'services',
  register(app: App, { db, repositories, companySummary, touch }: Pick<AppParts, 'db' | 'repositories' | 'companySummary' | 'touch'>) {
    const services = createServiceService({
      db,
      repository: repositories.services,
      links: repositories.catalogLinks,
      companySummary,
      onSlotSettingsChanged: (companyId, id) => touch(companyId, { services: [id] }),
    });
    registerServiceRoutes(app, { services });
  },
};
