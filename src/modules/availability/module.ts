import type { App } from '../../platform/http/types.js';
import type { AppParts } from '../parts.js';
import { createAvailabilityService } from './service.js';
import { createCalendarService } from './calendar.js';
import { registerAvailabilityRoutes } from './routes.js';

/** The availability search (slots) and the unavailability calendar. */
export const availabilityModule = {
  name: 'availability',
  register(app: App, { db, repositories, availabilityCache }: Pick<AppParts, 'db' | 'repositories' | 'availabilityCache'>) {
    registerAvailabilityRoutes(app, {
      availability: createAvailabilityService({ db, repository: repositories.availability, cache: availabilityCache }),
      calendar: createCalendarService({ db, repository: repositories.availability }),
    });
  },
};
