import type { App } from '../../platform/http/types.js';
import { buildBookingBundle } from './bundle.js';
import type { BookingBundle } from './bundle.js';
import { registerBookingPageRoutes } from './routes.js';

/** The hosted booking page /book/:publicClientId, a client of /v3/public/* only (docs/api.md, Booking page). */
export const bookingPageModule = {
  name: 'booking-page',
  register(app: App) {
    let built: Promise<BookingBundle> | undefined;
    const bundle = () => (built ??= buildBookingBundle());
    // Started at once so the first visitor does not wait; a failure is logged here and answered as 500.
    bundle().catch((error: unknown) => app.log.error({ err: error }, 'booking page: the bundle did not build'));
    registerBookingPageRoutes(app, bundle);
  },
};
