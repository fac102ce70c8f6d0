import type { App } from '../../platform/http/types.js';
import type { AppParts } from '../parts.js';
import { buildPageBundles } from './bundle.js';
import type { PageBundles } from './bundle.js';
import { createFrameAncestors } from './frame-ancestors.js';
import { registerBookingPageRoutes } from './routes.js';

/**
 * The hosted pages: the booking page /book/:publicClientId, a client of /v3/public/* only, and the
 * customer's manage page /manage/:token, a client of /v3/manage/* only (docs/api.md, Booking page
 * and Customer self-service); and /book/embed.js, which frames the booking page on allowed sites.
 */
export const bookingPageModule = {
  name: 'booking-page',
  register(app: App, { db, config }: Pick<AppParts, 'db' | 'config'>) {
    let built: Promise<PageBundles> | undefined;
    const bundles = () => (built ??= buildPageBundles());
    // Started at once so the first visitor does not wait; a failure is logged here and answered as 500.
    bundles().catch((error: unknown) => app.log.error({ err: error }, 'booking page: the bundle did not build'));
    registerBookingPageRoutes(app, bundles, createFrameAncestors(db, config.security.publicHttpOrigins));
  },
};
