import type { App } from '../../platform/http/types.js';
import type { AppParts } from '../parts.js';
import { createLocationService } from './service.js';
import { registerLocationRoutes } from './routes.js';

export const locationsModule = {
  name: 'locations',
  register(app: App, { repositories, companySummary, touch }: Pick<AppParts, 'repositories' | 'companySummary' | 'touch'>) {
    const locations = createLocationService({
      repository: repositories.locations,
      links: repositories.catalogLinks,
      companySummary,
      // Opening hours and slot settings change slot generation: clear exactly the affected searches.
      onSlotSettingsChanged: (companyId, id) => touch(companyId, { locations: [id] }),
    });
    registerLocationRoutes(app, { locations });
  },
};
