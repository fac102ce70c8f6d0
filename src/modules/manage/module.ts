import type { App } from '../../platform/http/types.js';
import type { AppParts } from '../parts.js';
import { createAvailabilityRepository } from '../availability/repository.js';
import { createAvailabilityService } from '../availability/service.js';
import { createAppointmentService } from '../appointments/service.js';
import { createManageService } from './service.js';
import { registerManageRoutes } from './routes.js';

/** Customer self-service: the manage link's routes (the links themselves: links.ts, used by notifications). */
export const manageModule = {
  name: 'manage',
  register(app: App, { db, secrets, tokens, repositories, availabilityCache, touch }: Pick<AppParts, 'db' | 'secrets' | 'tokens' | 'repositories' | 'availabilityCache' | 'touch'>) {
    // The same booking lifecycle and availability search the company routes use, with every rule.
    const appointments = createAppointmentService({ db, cursorSecret: secrets.CURSOR_SECRET, reads: createAvailabilityRepository, touch });
    const availability = createAvailabilityService({ db, repository: repositories.availability, cache: availabilityCache });
    registerManageRoutes(app, { manage: createManageService({ db, appointments, availability, tokens }) });
  },
};
