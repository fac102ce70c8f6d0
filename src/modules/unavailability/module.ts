import type { App } from '../../platform/http/types.js';
import type { AppParts } from '../parts.js';
import { createUnavailabilityService } from './service.js';
import { registerUnavailabilityRoutes } from './routes.js';

/** Blocks, recurring blocks, holidays and allocations (writes; availability reads them). */
export const unavailabilityModule = {
  name: 'unavailability',
  register(app: App, { db, repositories, touch }: Pick<AppParts, 'db' | 'repositories' | 'touch'>) {
    const unavailability = createUnavailabilityService({
      db,
      repository: repositories.unavailability,
      links: repositories.catalogLinks,
      // Each write clears exactly the cached searches of what it touches.
      onChanged: touch,
    });
    registerUnavailabilityRoutes(app, { unavailability });
  },
};
