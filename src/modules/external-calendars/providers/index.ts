// The three provider clients, built once from configuration over one OutboundFetch (https and
// public addresses outside tests, a deadline on every call).
import type { ExternalCalendarConfig } from '../../../platform/config.js';
import { createOutboundFetch } from '../../../platform/outbound/fetch.js';
import { createCaldavProvider } from './caldav.js';
import { createGoogleProvider } from './google.js';
import { createMicrosoftProvider } from './microsoft.js';
import type { CaldavCalendarProvider, OAuthCalendarProvider, OAuthProviderName } from './types.js';

export interface CalendarProviders {
  oauth: Record<OAuthProviderName, OAuthCalendarProvider>;
  caldav: CaldavCalendarProvider;
  /** Whether the operator configured the OAuth client of a provider (GOOGLE_CLIENT_ID, MICROSOFT_CLIENT_ID). */
  configured(name: OAuthProviderName): boolean;
}

export function createCalendarProviders(config: ExternalCalendarConfig): CalendarProviders {
  const fetch = createOutboundFetch({ timeoutMs: config.timeoutMs, allowLoopbackHttp: config.allowLoopbackHttp });
  // Built on first use: a provider whose client is not configured is never built (its OAuth
  // client refuses an empty secret), and connecting to it answers 400 before it is asked for.
  const built: Partial<Record<OAuthProviderName, OAuthCalendarProvider>> = {};
  const oauth = {
    get google() {
      return (built.google ??= createGoogleProvider(config.google, { fetch }));
    },
    get microsoft() {
      return (built.microsoft ??= createMicrosoftProvider(config.microsoft, { fetch }));
    },
  };
  return {
    oauth,
    caldav: createCaldavProvider({ fetch }),
    configured: (name) => config[name].clientId !== '' && config[name].clientSecret !== '',
  };
}
