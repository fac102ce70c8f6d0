import type { App } from '../../platform/http/types.js';
import type { AppParts } from '../parts.js';
import { createAvailabilityRepository } from '../availability/repository.js';
import { createAppointmentService } from './service.js';
import { registerAppointmentRoutes } from './routes.js';

/** The booking lifecycle: hold, reserve, book, confirm, reschedule, cancel; the lists. */
export const appointmentsModule = {
  name: 'appointments',
  register(app: App, { db, secrets, config, touch }: Pick<AppParts, 'db' | 'secrets' | 'config' | 'touch'>) {
    // Changes clear the cached searches of their location, service, resources and customer.
    const appointments = createAppointmentService({
      db,
      cursorSecret: secrets.CURSOR_SECRET,
      // Booking reads availability on its own transaction, so it builds the reads per connection.
      reads: createAvailabilityRepository,
      touch,
      publicHoldsPerCompany: config.security.publicHoldsPerCompany,
    });
    registerAppointmentRoutes(app, { appointments });
  },
};
