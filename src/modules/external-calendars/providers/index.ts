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
  return {
    oauth: {
      google: createGoogleProvider(config.google, { fetch }),
      microsoft: createMicrosoftProvider(config.microsoft, { fetch }),
    },
    caldav: createCaldavProvider({ fetch }),
    configured: (name) => config[name].clientId !== '' && config[name].clientSecret !== '',
  };
}
