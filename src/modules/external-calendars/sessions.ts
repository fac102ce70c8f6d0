// Opening a connection's stored credentials as a provider session: OAuth access tokens are
// refreshed shortly before they expire (and re-sealed, which also moves them to the current
// encryption key); a refused refresh is a revoked grant.
import type { Sealer } from '../../platform/encryption.js';
import type { CalendarProviders } from './providers/index.js';
import { GrantRevokedError } from './providers/types.js';
import type { CaldavCredentials, CalendarSession, OAuthTokens } from './providers/types.js';
import type { ConnectionRow, ExternalCalendarRepository } from './repository.js';

/** Refresh this long before the access token's expiry, so a call never starts with a dying token. */
export const REFRESH_MARGIN_MS = 5 * 60_000;

export type StoredCredentials = ({ kind: 'oauth' } & OAuthTokens) | ({ kind: 'caldav' } & CaldavCredentials);

export interface SessionDeps {
  repository: Pick<ExternalCalendarRepository, 'setCredentials' | 'credentialsEnc'>;
  sealer: Sealer;
  providers: CalendarProviders;
  clock: () => number;
}

export function createSessions({ repository, sealer, providers, clock }: SessionDeps) {
  function credentialsOf(connection: Pick<ConnectionRow, 'credentialsEnc'>): StoredCredentials {
    if (!connection.credentialsEnc) throw new GrantRevokedError('The connection has no credentials: connect it again');
    return JSON.parse(sealer.open(connection.credentialsEnc)) as StoredCredentials;
  }

  const api = {
    seal: (credentials: StoredCredentials) => sealer.seal(JSON.stringify(credentials)),
    /** Other secrets of a connection (the PKCE verifier). */
    sealText: (plain: string) => sealer.seal(plain),
    openText: (sealed: string) => sealer.open(sealed),
    credentialsOf,

    /**
     * A session for the connection's provider; throws GrantRevokedError when access is gone.
     * `forceRefresh`: refresh the OAuth access token even if it looks fresh (after a 401).
     */
    async open(connection: ConnectionRow, options: { forceRefresh?: boolean } = {}): Promise<CalendarSession> {
      const credentials = credentialsOf(connection);
      if (credentials.kind === 'caldav') return providers.caldav.session(credentials);
      if (connection.provider === 'caldav') throw new GrantRevokedError('Stored credentials do not match the provider');
      const provider = providers.oauth[connection.provider];
      let tokens: OAuthTokens = credentials;
      if (options.forceRefresh || tokens.expiresAt - clock() < REFRESH_MARGIN_MS || sealer.isStale(connection.credentialsEnc!)) {
        if (!tokens.refreshToken) throw new GrantRevokedError('The provider issued no refresh token: connect the calendar again');
        let fresh: OAuthTokens;
        try {
          fresh = await provider.refresh(tokens.refreshToken);
        } catch (error) {
          // Another instance may have refreshed first, with a provider that then refused the
          // older refresh token: its stored tokens are the good ones.
          const stored = error instanceof GrantRevokedError ? await repository.credentialsEnc(connection.companyId, connection.id) : null;
          if (!stored || stored === connection.credentialsEnc) throw error;
          connection.credentialsEnc = stored;
          return api.open(connection);
        }
        tokens = { accessToken: fresh.accessToken, refreshToken: fresh.refreshToken ?? tokens.refreshToken, expiresAt: fresh.expiresAt };
        const sealed = sealer.seal(JSON.stringify({ kind: 'oauth', ...tokens }));
        await repository.setCredentials(connection.companyId, connection.id, sealed);
        // The caller's row carries the new tokens too: its next call does not refresh again.
        connection.credentialsEnc = sealed;
      }
      return provider.session(tokens.accessToken);
    },

    /**
     * Runs `call` with a session. An OAuth API that answers 401 may only have dropped the access
     * token early (a password change, a policy): the token is refreshed and the call made once
     * more; only a refused refresh (or a second 401) means the grant is gone.
     */
    async run<T>(connection: ConnectionRow, call: (session: CalendarSession) => Promise<T>): Promise<T> {
      try {
        return await call(await api.open(connection));
      } catch (error) {
        if (!(error instanceof GrantRevokedError) || connection.provider === 'caldav') throw error;
        return call(await api.open(connection, { forceRefresh: true }));
      }
    },

    /** Revokes the grant at the provider where it offers revocation; never throws. */
    async revoke(connection: Pick<ConnectionRow, 'provider' | 'credentialsEnc'>): Promise<void> {
      if (connection.provider === 'caldav' || !connection.credentialsEnc) return;
      try {
        const credentials = credentialsOf(connection);
        if (credentials.kind !== 'oauth') return;
        await providers.oauth[connection.provider].revoke(credentials.refreshToken ?? credentials.accessToken);
      } catch {
        // Best effort: the connection is gone from our side whatever the provider answers.
      }
    },
  };
  return api;
}

export type Sessions = ReturnType<typeof createSessions>;
