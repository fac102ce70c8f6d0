// Connections of a resource to external calendars: connect (OAuth with PKCE, or CalDAV
// credentials checked by a real PROPFIND), the OAuth callback, the Calendar Selection Token, the
// calendar list and selection, sync on demand and disconnect (decisions.md, External calendars).
import { randomUUID } from 'node:crypto';
import { calculatePKCECodeChallenge, generateRandomCodeVerifier } from 'oauth4webapi';
import type { Db } from '../../platform/database/index.js';
import { transaction } from '../../platform/database/transaction.js';
import type { CompanyPrincipal, Principal } from '../../platform/auth/principal.js';
import { TokenError, CALENDAR_SELECTION_TTL_SECONDS, OAUTH_STATE_TTL_SECONDS } from '../../platform/auth/tokens.js';
import type { TokenService } from '../../platform/auth/tokens.js';
import { randomToken, sha256 } from '../../platform/crypto.js';
import { ApiError, badRequest, notFound, unauthorized, validationError } from '../../platform/errors.js';
import { outboundUrlProblem } from '../../platform/outbound/fetch.js';
import { errorMessage } from '../../platform/values.js';
import { CALENDAR_SELECTION_TOKEN_MESSAGE } from '../../platform/auth/authenticate.js';
import type { CalendarProviders } from './providers/index.js';
import { GrantRevokedError, ProviderError } from './providers/types.js';
import type { CalendarSession, OAuthProviderName, ProviderName, RemoteCalendar } from './providers/types.js';
import type { ConnectionRow, ExternalCalendarRepository, SyncCounts } from './repository.js';
import type { ConnectBody, CallbackQuery, SelectBody } from './schemas.js';
import type { Sessions } from './sessions.js';
import type { SyncConnection } from './sync.js';

/** A selection code (handed to the redirectUrl) works once, for 10 minutes. */
export const SELECTION_CODE_TTL_MS = 10 * 60_000;
export const CALLBACK_PATH = '/v3/calendar/callback';

export interface ExternalCalendarDeps {
  db: Db;
  repository: ExternalCalendarRepository;
  sessions: Sessions;
  providers: CalendarProviders;
  tokens: Pick<TokenService, 'signOAuthState' | 'verifyOAuthState' | 'signCalendarSelectionToken'>;
  syncConnection: SyncConnection;
  /** 404 for an unknown resource, 403 outside the caller's scope (resources/service.ts). */
  visibleResource: (principal: CompanyPrincipal, resourceId: string) => Promise<unknown>;
  allowedDomains: (companyId: string) => Promise<string[]>;
  /** Clears the availability cache of a resource (its busy time changed). */
  touchResource: (companyId: string, resourceId: string) => Promise<void>;
  /** The schedule of syncs (EXTERNAL_CALENDAR_SYNC_INTERVAL_SECONDS). */
  syncIntervalMs: number;
  /** Wakes the calendar worker (a sync is due now). */
  kick: () => void;
  /** The callback's origin (PUBLIC_BASE_URL), else the request's own. */
  publicBaseUrl: string | undefined;
  /** http:// redirect URLs and provider URLs on loopback (tests, local development). */
  allowHttp: boolean;
  clock: () => number;
}

/** Who may act on a resource's connections: a company caller, or the token of one connection. */
interface Actor {
  companyId: string;
  /** Set for a Calendar Selection Token: only this connection. */
  connectionId: string | null;
}

const PROVIDER_NAMES: Record<ProviderName, string> = { google: 'Google', microsoft: 'Microsoft', caldav: 'CalDAV' };

export function createExternalCalendarService(deps: ExternalCalendarDeps) {
  const { repository } = deps;

  /**
   * The Calendar Selection Token works only on its own connection's resource (and, on
   * disconnect, its own connection): anything else is 401, as on every other route.
   */
  async function actorFor(principal: Principal | null, resourceId: string, connectionId?: string): Promise<Actor> {
    if (principal?.kind === 'calendarSelection') {
      const { selection } = principal;
      if (selection.resourceId !== resourceId || (connectionId !== undefined && selection.connectionId !== connectionId)) {
        throw unauthorized(CALENDAR_SELECTION_TOKEN_MESSAGE);
      }
      return { companyId: selection.companyId, connectionId: selection.connectionId };
    }
    if (!principal || !('companyId' in principal)) throw unauthorized('Authentication required');
    await deps.visibleResource(principal, resourceId);
    return { companyId: principal.companyId, connectionId: null };
  }

  function callbackUrl(requestOrigin: string): string {
    return `${(deps.publicBaseUrl ?? requestOrigin).replace(/\/+$/, '')}${CALLBACK_PATH}`;
  }

  /** The connection list/select act on: the token's own, else the one of `provider` (inferred when only one provider is connected). */
  async function pickConnection(actor: Actor, resourceId: string, provider: ProviderName | undefined): Promise<ConnectionRow> {
    const all = (await repository.connectionsOfResource(actor.companyId, resourceId)).filter((c) => actor.connectionId === null || c.id === actor.connectionId);
    const candidates = all.filter((c) => c.status !== 'pending');
    if (provider) {
      const match = candidates.filter((c) => c.provider === provider).at(-1);
      if (!match) throw validationError('query', 'provider', `No ${PROVIDER_NAMES[provider]} calendar is connected to this resource`);
      return match;
    }
    const providers = [...new Set(candidates.map((c) => c.provider))];
    if (providers.length === 0) throw badRequest('No external calendar is connected to this resource: connect one with POST /v3/resource/{id}/externalCalendar');
    if (providers.length > 1) {
      throw validationError('query', 'provider', `This resource has calendars of more than one provider connected (${providers.join(', ')}): say which with provider`);
    }
    return candidates.at(-1)!;
  }

  /** A provider failure in a request: a revoked grant marks the connection, and both are a clear 400 (never a 500). */
  async function providerCall<T>(connection: ConnectionRow, call: (session: CalendarSession) => Promise<T>): Promise<T> {
    try {
      return await deps.sessions.run(connection, call);
    } catch (error) {
      if (error instanceof GrantRevokedError) {
        await repository.markError(connection.companyId, connection.id, `Access was revoked at the provider: ${errorMessage(error)}`);
        throw badRequest(`${PROVIDER_NAMES[connection.provider]} refused this connection's access (${errorMessage(error)}); connect the calendar again`);
      }
      throw unavailable(connection, error);
    }
  }

  /**
   * A provider failure that is not the caller's: the provider down, slow, or answering what we
   * cannot read (a malformed document, credentials sealed by a key this instance lacks). 503,
   * never a 500.
   */
  function unavailable(connection: ConnectionRow, error: unknown): ApiError {
    if (error instanceof ApiError) return error;
    const what = error instanceof ProviderError ? 'could not be reached or answered an error' : 'answered something that could not be used';
    return new ApiError(503, `${PROVIDER_NAMES[connection.provider]} ${what}: ${errorMessage(error)}`.slice(0, 500));
  }

  async function connectCaldav(companyId: string, resourceId: string, body: ConnectBody) {
    const { url, username, password } = body;
    if (!url) throw validationError('body', 'url', 'url is required for caldav');
    if (!username) throw validationError('body', 'username', 'username is required for caldav');
    if (!password) throw validationError('body', 'password', 'password is required for caldav');
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw validationError('body', 'url', 'url is not a valid URL');
    }
    const problem = outboundUrlProblem(parsed, deps.allowHttp);
    if (problem) throw validationError('body', 'url', problem);
    const credentials = { url: parsed.toString(), username, password };
    try {
      await deps.providers.caldav.check(credentials);
    } catch (error) {
      if (error instanceof GrantRevokedError) throw validationError('body', 'password', 'The CalDAV server refused this user name or password');
      throw validationError('body', 'url', `The CalDAV server could not be used: ${errorMessage(error)}`);
    }
    const id = randomUUID();
    await repository.insertConnection({
      companyId,
      id,
      resourceId,
      provider: 'caldav',
      status: 'connected',
      credentialsEnc: deps.sessions.seal({ kind: 'caldav', ...credentials }),
      nextSyncAt: new Date(deps.clock()),
    });
    return { id, provider: 'caldav' as const, status: 'connected' as const };
  }

  async function connectOAuth(companyId: string, resourceId: string, provider: OAuthProviderName, body: ConnectBody, requestOrigin: string) {
    if (!deps.providers.configured(provider)) {
      throw badRequest(`${PROVIDER_NAMES[provider]} calendars are not configured on this server (${provider.toUpperCase()}_CLIENT_ID and ${provider.toUpperCase()}_CLIENT_SECRET)`);
    }
    if (!body.redirectUrl) throw validationError('body', 'redirectUrl', `redirectUrl is required for ${provider}`);
    let redirect: URL;
    try {
      redirect = new URL(body.redirectUrl);
    } catch {
      throw validationError('body', 'redirectUrl', 'redirectUrl is not a valid URL');
    }
    if (redirect.protocol !== 'https:' && !(redirect.protocol === 'http:' && deps.allowHttp)) throw validationError('body', 'redirectUrl', 'redirectUrl must use https');
    if (!(await deps.allowedDomains(companyId)).includes(redirect.host.toLowerCase())) {
      throw validationError('body', 'redirectUrl', `redirectUrl's host ${redirect.host} is not one of the company's allowedDomains`);
    }
    const id = randomUUID();
    const nonce = randomToken('', 24);
    const verifier = generateRandomCodeVerifier();
    const state = await deps.tokens.signOAuthState({ companyId, resourceId, connectionId: id, nonce });
    await repository.insertConnection({
      companyId,
      id,
      resourceId,
      provider,
      status: 'pending',
      useSelection: body.useOnSchedCalendarSelection ?? false,
      redirectUrl: redirect.toString(),
      stateNonce: nonce,
      stateExpiresAt: new Date(deps.clock() + OAUTH_STATE_TTL_SECONDS * 1000),
      codeVerifierEnc: deps.sessions.sealText(verifier),
    });
    const authUrl = deps.providers.oauth[provider].authorizationUrl({ state, codeChallenge: await calculatePKCECodeChallenge(verifier), redirectUri: callbackUrl(requestOrigin) });
    return { id, provider, status: 'pending' as const, authUrl };
  }

  /** Appends the answer to the caller's redirectUrl (keeping its own query). */
  function redirectTo(base: string, params: Record<string, string>): string {
    const url = new URL(base);
    for (const [key, value] of Object.entries(params)) url.searchParams.set(key, value);
    return url.toString();
  }

  return {
    async connect(principal: CompanyPrincipal, resourceId: string, body: ConnectBody, requestOrigin: string) {
      await deps.visibleResource(principal, resourceId);
      if (body.provider === 'caldav') return connectCaldav(principal.companyId, resourceId, body);
      return connectOAuth(principal.companyId, resourceId, body.provider, body, requestOrigin);
    },

    /**
     * GET /v3/calendar/callback: no credentials; the signed, single-use state names the
     * connection. Returns where to send the browser.
     */
    async callback(query: CallbackQuery, requestOrigin: string): Promise<string> {
      if (!query.state) throw validationError('query', 'state', 'state is required');
      let claims;
      try {
        claims = await deps.tokens.verifyOAuthState(query.state);
      } catch (error) {
        if (error instanceof TokenError) throw validationError('query', 'state', 'state is invalid or has expired');
        throw error;
      }
      const connection = await repository.consumeState(claims.companyId, claims.connectionId, claims.nonce, new Date(deps.clock()));
      if (!connection || connection.provider === 'caldav' || !connection.redirectUrl) throw validationError('query', 'state', 'state was already used or has expired');
      const back = (params: Record<string, string>) => redirectTo(connection.redirectUrl!, { ...params, connectionId: connection.id });
      if (query.error || !query.code) {
        const reason = query.error ?? 'no authorization code was returned';
        await repository.markError(connection.companyId, connection.id, `Authorization failed: ${reason}${query.error_description ? `: ${query.error_description}` : ''}`);
        return back({ status: 'error', error: reason });
      }
      const provider = deps.providers.oauth[connection.provider];
      let tokens;
      try {
        // Opening the verifier is inside the try too: a value sealed by a key this instance no
        // longer has sends the browser back with an error, never a 500.
        tokens = await provider.exchangeCode({ code: query.code, codeVerifier: deps.sessions.openText(connection.codeVerifierEnc ?? ''), redirectUri: callbackUrl(requestOrigin) });
      } catch (error) {
        await repository.markError(connection.companyId, connection.id, `Authorization failed: ${errorMessage(error)}`);
        return back({ status: 'error', error: errorMessage(error).slice(0, 200) });
      }
      const now = deps.clock();
      const code = connection.useSelection ? randomToken('csc_', 24) : null;
      await repository.markConnected(connection.companyId, connection.id, {
        credentialsEnc: deps.sessions.seal({ kind: 'oauth', ...tokens }),
        selectionCodeHash: code ? sha256(code) : null,
        selectionCodeExpiresAt: code ? new Date(now + SELECTION_CODE_TTL_MS) : null,
        now: new Date(now),
      });
      return code ? back({ code }) : back({ status: 'connected' });
    },

    /** POST /v3/calendar/selectionSession: a one-time code for a 15-minute Calendar Selection Token. */
    async selectionSession(code: string) {
      const connection = await repository.consumeSelectionCode(sha256(code), new Date(deps.clock()));
      if (!connection) throw validationError('body', 'code', 'code is invalid, expired or already used');
      const token = await deps.tokens.signCalendarSelectionToken({ companyId: connection.companyId, resourceId: connection.resourceId, connectionId: connection.id });
      return { token, tokenType: 'Bearer' as const, expiresIn: CALENDAR_SELECTION_TTL_SECONDS, connectionId: connection.id, resourceId: connection.resourceId };
    },

    async connections(principal: CompanyPrincipal, resourceId: string) {
      await deps.visibleResource(principal, resourceId);
      const rows = await repository.connectionsOfResource(principal.companyId, resourceId);
      return {
        data: rows.map((c) => ({
          id: c.id,
          provider: c.provider,
          status: c.status,
          lastSyncedAt: c.lastSyncedAt?.toISOString() ?? null,
          lastError: c.lastError,
          writeCalendarId: c.writeCalendarId,
        })),
      };
    },

    /** The provider's calendars, with what is selected and written to. */
    async listCalendars(principal: Principal | null, resourceId: string, provider: ProviderName | undefined) {
      const actor = await actorFor(principal, resourceId);
      const connection = await pickConnection(actor, resourceId, provider);
      const remote = await providerCall(connection, (session) => session.listCalendars());
      return { data: await withSelection(connection, remote) };
    },

    async select(principal: Principal | null, resourceId: string, body: SelectBody) {
      const actor = await actorFor(principal, resourceId);
      const connection = await pickConnection(actor, resourceId, body.provider);
      const remote = await providerCall(connection, (session) => session.listCalendars());
      const byId = new Map(remote.map((c) => [c.id, c]));
      body.calendarIds.forEach((id, index) => {
        if (!byId.has(id)) throw validationError('body', `calendarIds.${index}`, `Calendar ${JSON.stringify(id)} is not one of this connection's calendars`);
      });
      const write = body.writeCalendarId ?? null;
      if (write !== null) {
        const calendar = byId.get(write);
        if (!calendar) throw validationError('body', 'writeCalendarId', `Calendar ${JSON.stringify(write)} is not one of this connection's calendars`);
        if (!calendar.canWrite) throw validationError('body', 'writeCalendarId', `Calendar ${JSON.stringify(write)} is read-only for this account`);
      }
      const changedIntervals = await transaction(deps.db, async (trx) => {
        const before = await trx
          .selectFrom('externalCalendars')
          .select('calendarId')
          .where('companyId', '=', connection.companyId)
          .where('connectionId', '=', connection.id)
          .execute();
        await repository.replaceSelection(trx, connection.companyId, connection.id, body.calendarIds.map((id) => ({ id, name: byId.get(id)!.name })));
        await repository.setWriteCalendar(trx, connection.companyId, connection.id, write);
        return before.some((c) => !body.calendarIds.includes(c.calendarId));
      });
      if (changedIntervals) await deps.touchResource(connection.companyId, resourceId);
      // Read the new selection right away (the worker takes it at once).
      await repository.syncSoon(connection.companyId, connection.id, new Date(deps.clock()));
      deps.kick();
      const updated = (await repository.connection(connection.companyId, connection.id)) ?? connection;
      return { data: await withSelection(updated, remote) };
    },

    /** POST .../externalCalendars/sync: every connected connection of the resource, now. */
    async syncNow(principal: CompanyPrincipal, resourceId: string): Promise<SyncCounts> {
      await deps.visibleResource(principal, resourceId);
      const connections = (await repository.connectionsOfResource(principal.companyId, resourceId)).filter((c) => c.status === 'connected');
      if (!connections.length) throw badRequest('No external calendar is connected to this resource');
      const totals: SyncCounts = { imported: 0, updated: 0, removed: 0 };
      for (const connection of connections) {
        try {
          const counts = await deps.syncConnection(connection);
          totals.imported += counts.imported;
          totals.updated += counts.updated;
          totals.removed += counts.removed;
          await repository.finishSync(connection.companyId, connection.id, { lastSyncedAt: new Date(deps.clock()), lastError: null, nextSyncAt: new Date(deps.clock() + deps.syncIntervalMs) }, null);
        } catch (error) {
          if (error instanceof GrantRevokedError) {
            throw badRequest(`${PROVIDER_NAMES[connection.provider]} refused this connection's access (${errorMessage(error)}); connect the calendar again`);
          }
          if (error instanceof ApiError) throw error;
          await repository.finishSync(connection.companyId, connection.id, { lastError: errorMessage(error).slice(0, 500), nextSyncAt: new Date(deps.clock() + 60_000) }, null);
          throw unavailable(connection, error);
        }
      }
      return totals;
    },

    /** DELETE .../externalCalendar/:connectionId: the connection, its tokens and its intervals go. */
    async disconnect(principal: Principal | null, resourceId: string, connectionId: string): Promise<void> {
      const actor = await actorFor(principal, resourceId, connectionId);
      const existing = await repository.connection(actor.companyId, connectionId);
      if (!existing || existing.resourceId !== resourceId) throw notFound('External calendar connection not found');
      const removed = await transaction(deps.db, (trx) => repository.deleteConnection(trx, actor.companyId, connectionId));
      if (!removed) throw notFound('External calendar connection not found');
      await deps.touchResource(actor.companyId, resourceId);
      // Google revokes the whole grant of the account to our client, not one token: while another
      // connection of this resource uses the same provider (a reconnect of the same account, most
      // likely), revoking would break it. docs/api.md says what is left to the user then.
      const siblings = (await repository.connectionsOfResource(actor.companyId, resourceId)).filter((c) => c.provider === removed.provider);
      if (siblings.length === 0) await deps.sessions.revoke(removed);
    },

  };

  async function withSelection(connection: ConnectionRow, remote: RemoteCalendar[]) {
    const selected = new Set((await repository.selectedCalendars(connection.companyId, connection.id)).map((c) => c.calendarId));
    return remote.map((c) => ({ id: c.id, name: c.name, primary: c.primary, selected: selected.has(c.id), canWrite: c.canWrite, write: connection.writeCalendarId === c.id }));
  }
}

export type ExternalCalendarService = ReturnType<typeof createExternalCalendarService>;
