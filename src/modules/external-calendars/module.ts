import type { App } from '../../platform/http/types.js';
import type { AppParts } from '../parts.js';
import { createResourceService } from '../resources/service.js';
import { registerExternalCalendarRoutes } from './routes.js';
import { createExternalCalendarService } from './service.js';
import type { ExternalCalendarEngine } from './engine.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** Sync, write-back and the calendar worker: server.ts runs the worker in a loop; tests call drain(). */
    externalCalendars: ExternalCalendarEngine;
  }
}

/** External calendars: connections, the Calendar Selection Token, calendar selection, sync on demand. */
export const externalCalendarsModule = {
  name: 'external-calendars',
  register(app: App, { db, config, tokens, repositories, externalCalendars, companySummary }: Pick<AppParts, 'db' | 'config' | 'tokens' | 'repositories' | 'externalCalendars' | 'companySummary'>) {
    const resources = createResourceService({ db, repository: repositories.resources, links: repositories.catalogLinks, companySummary });
    const calendars = createExternalCalendarService({
      db,
      repository: repositories.externalCalendars,
      sessions: externalCalendars.sessions,
      providers: externalCalendars.providers,
      tokens,
      syncConnection: externalCalendars.syncConnection,
      visibleResource: (principal, resourceId) => resources.visible(principal, resourceId),
      allowedDomains: async (companyId) => (await repositories.companies.byId(companyId))?.allowedDomains ?? [],
      touchResource: externalCalendars.touchResource,
      kick: externalCalendars.kick,
      publicBaseUrl: config.publicBaseUrl,
      // http redirect URLs only for tests; decisions.md: redirectUrl is https.
      allowHttp: config.externalCalendars.allowLoopbackHttp,
      syncIntervalMs: config.externalCalendars.syncIntervalSeconds * 1000,
      clock: externalCalendars.clock,
    });
    registerExternalCalendarRoutes(app, { calendars });
    app.decorate('externalCalendars', externalCalendars);
  },
};
