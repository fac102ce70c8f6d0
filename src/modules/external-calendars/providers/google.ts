/**
 * Google Calendar API v3 client: OAuth 2.0 authorization code with PKCE (oauth4webapi), the
 * calendar list, busy-time sync (events.list with sync tokens) and write-back of appointments.
 * Every request goes through `deps.fetch` (platform/outbound/fetch.ts), so the address rules and
 * the deadline apply; nothing here calls the global fetch.
 */
import { createHash } from 'node:crypto';
import { DateTime } from 'luxon';
import * as oauth from 'oauth4webapi';
import { errorMessage, fieldOf, isRecord } from '../../../platform/values.js';
import { GrantRevokedError, ProviderError, SyncCursorExpiredError } from './types.js';
import { parseRetryAfter } from '../../../platform/outbound/retry-after.js';
import type {
  BusyEvent,
  CalendarSession,
  EventWrite,
  OAuthCalendarProvider,
  OAuthClientConfig,
  OAuthTokens,
  ProviderDeps,
  RemoteCalendar,
  SyncResult,
  SyncWindow,
} from './types.js';

/**
 * calendar.readonly (the calendar list and every calendar's events) plus calendar.events (writing
 * events), rather than the full `calendar` scope, which would also let us create and delete
 * calendars and change their sharing: nothing here needs that.
 */
export const GOOGLE_SCOPES = ['https://www.googleapis.com/auth/calendar.readonly', 'https://www.googleapis.com/auth/calendar.events'] as const;

/** The private extended property that marks an event as one of our appointments. */
export const GOOGLE_APPOINTMENT_PROPERTY = 'slotwiseAppointmentId';

/** Google's issuer. oauth4webapi's server metadata needs one; no ID token is ever checked against it (see withoutIdToken). */
const GOOGLE_ISSUER = 'https://accounts.google.com';
/** events.list's largest page. */
const EVENTS_PAGE_SIZE = 2500;
/** calendarList.list's largest page. */
const CALENDAR_LIST_PAGE_SIZE = 250;
/** When a token answer has no expires_in; Google's access tokens live an hour. */
const DEFAULT_EXPIRES_IN_SECONDS = 3600;

/**
 * The event id we give an appointment's event, so a retried insert after a crash collides (409)
 * instead of adding a second event. Google ids are base32hex ([a-v0-9], 5 to 1024 characters); a
 * UUID's hex digits already are, anything else is hashed into hex.
 */
export function googleEventId(appointmentId: string): string {
  const compact = appointmentId.toLowerCase().replace(/-/g, '');
  const hex = /^[0-9a-f]{32}$/.test(compact) ? compact : createHash('sha256').update(appointmentId).digest('hex');
  return `slot${hex}`;
}

/** The ProviderError for an answer we cannot use; Retry-After is read whenever it is sent. */
function providerError(response: Response, detail: string): ProviderError {
  return new ProviderError(`Google answered ${response.status}: ${detail}`, response.status, parseRetryAfter(response.headers.get('retry-after')));
}

/** Google's error message from a JSON error body ({error: {code, message, errors: [...]}}), when there is one. */
function googleErrorDetail(body: unknown): string {
  const error = fieldOf(body, 'error');
  const message = fieldOf(error, 'message');
  const first = fieldOf(error, 'errors');
  const reason = Array.isArray(first) ? fieldOf(first[0], 'reason') : undefined;
  if (typeof message === 'string') return typeof reason === 'string' ? `${message} (${reason})` : message;
  return typeof error === 'string' ? error : 'no error details';
}

function stringField(value: unknown, name: string): string | undefined {
  const field = fieldOf(value, name);
  return typeof field === 'string' ? field : undefined;
}

function isValidZone(zone: string | undefined): zone is string {
  return zone !== undefined && zone !== '' && DateTime.now().setZone(zone).isValid;
}

/**
 * The token answer without its ID token. We ask for no `openid`, but with include_granted_scopes
 * Google adds an ID token when the same client was granted `openid` before (a "Sign in with
 * Google" on the same client id), and oauth4webapi would then check it, refusing the whole answer
 * when its `iss` is Google's other spelling (`accounts.google.com`) or the clock is off. We use
 * nothing from it.
 */
async function withoutIdToken(response: Response): Promise<Response> {
  if (response.status !== 200) return response;
  let body: unknown;
  try {
    body = JSON.parse(await response.clone().text());
  } catch {
    return response;
  }
  if (!isRecord(body) || !('id_token' in body)) return response;
  const { id_token: _idToken, ...rest } = body;
  const headers = new Headers(response.headers);
  headers.delete('content-length');
  return new Response(JSON.stringify(rest), { status: response.status, statusText: response.statusText, headers });
}

// ---------------------------------------------------------------------------------------------
// Events as busy time

type Classified = { busy: true; event: BusyEvent } | { busy: false; key: string };

/**
 * One events.list item as busy time, or as a key that is not busy: cancelled, transparent,
 * declined by the calendar's own attendee, a working-location entry (Google's counterpart of
 * Graph's `workingElsewhere`, which decisions.md leaves out), or outside the window. An event
 * Slotwise wrote is busy like any other, with its `marker`: which company's it is, is for the core.
 */
function classifyEvent(item: unknown, calendarZone: string | undefined, window: SyncWindow): Classified | null {
  const key = stringField(item, 'id');
  if (key === undefined) return null;
  const notBusy: Classified = { busy: false, key };
  if (stringField(item, 'status') === 'cancelled') return notBusy;
  const transparency = stringField(item, 'transparency') ?? 'opaque';
  if (transparency === 'transparent') return notBusy;
  const eventType = stringField(item, 'eventType') ?? 'default';
  if (eventType === 'workingLocation') return notBusy;
  const attendees = fieldOf(item, 'attendees');
  if (Array.isArray(attendees) && attendees.some((a) => fieldOf(a, 'self') === true && fieldOf(a, 'responseStatus') === 'declined')) return notBusy;
  const marker = stringField(fieldOf(fieldOf(item, 'extendedProperties'), 'private'), GOOGLE_APPOINTMENT_PROPERTY);

  const start = fieldOf(item, 'start');
  const end = fieldOf(item, 'end');
  const range = eventRange(start, end, calendarZone, window.zone);
  if (!range) return notBusy;
  const [from, to] = range;
  if (to <= from || to <= window.from.getTime() || from >= window.to.getTime()) return notBusy;
  const event: BusyEvent = { key, start: new Date(from), end: new Date(to), transparency, eventType };
  if (marker) event.marker = marker;
  return { busy: true, event };
}

/**
 * Start and end instants (ms) of an event's start/end objects. An all-day event (`date`, end
 * exclusive) runs from midnight to midnight in the event's zone, else the calendar's, else the
 * window's; Luxon places midnight (a skipped midnight moves to the first valid time).
 */
function eventRange(start: unknown, end: unknown, calendarZone: string | undefined, fallbackZone: string): [number, number] | null {
  const startDate = stringField(start, 'date');
  const endDate = stringField(end, 'date');
  if (startDate !== undefined && endDate !== undefined) {
    const eventZone = stringField(start, 'timeZone');
    const zone = [eventZone, calendarZone, fallbackZone].find(isValidZone) ?? 'UTC';
    const from = DateTime.fromISO(startDate, { zone }).startOf('day');
    const to = DateTime.fromISO(endDate, { zone }).startOf('day');
    return from.isValid && to.isValid ? [from.toMillis(), to.toMillis()] : null;
  }
  const startTime = stringField(start, 'dateTime');
  const endTime = stringField(end, 'dateTime');
  if (startTime === undefined || endTime === undefined) return null;
  // Google sends an offset; a time without one is read in its own zone.
  const at = (value: string, zone: string | undefined) => DateTime.fromISO(value, { zone: [zone, calendarZone].find(isValidZone) ?? 'UTC' });
  const from = at(startTime, stringField(start, 'timeZone'));
  const to = at(endTime, stringField(end, 'timeZone'));
  return from.isValid && to.isValid ? [from.toMillis(), to.toMillis()] : null;
}

// ---------------------------------------------------------------------------------------------
// Cursors

/**
 * Our cursor: the sync token and the window of the full read that issued it. A sync token keeps
 * that read's timeMin/timeMax, so it never reports events in days the window has since grown
 * into; a window the cursor does not cover is read in full instead.
 */
interface GoogleCursor {
  syncToken: string;
  from: string;
  to: string;
}

/** A cursor we cannot read (or a bare sync token stored before cursors carried their window). */
function readCursor(cursor: string): GoogleCursor {
  let parsed: unknown;
  try {
    parsed = JSON.parse(cursor);
  } catch {
    parsed = null;
  }
  const syncToken = stringField(parsed, 'syncToken');
  const from = stringField(parsed, 'from');
  const to = stringField(parsed, 'to');
  if (!syncToken || !from || !to || Number.isNaN(Date.parse(from)) || Number.isNaN(Date.parse(to))) {
    throw new SyncCursorExpiredError('The Google sync cursor is unreadable; a full sync is needed');
  }
  return { syncToken, from, to };
}

function covers(cursor: GoogleCursor, window: SyncWindow): boolean {
  return Date.parse(cursor.from) <= window.from.getTime() && Date.parse(cursor.to) >= window.to.getTime();
}

// ---------------------------------------------------------------------------------------------
// The provider

export function createGoogleProvider(config: OAuthClientConfig, deps: ProviderDeps): OAuthCalendarProvider {
  const apiUrl = config.apiUrl.replace(/\/+$/, '');
  const server: oauth.AuthorizationServer = {
    issuer: GOOGLE_ISSUER,
    token_endpoint: config.tokenUrl,
    ...(config.revokeUrl ? { revocation_endpoint: config.revokeUrl } : {}),
  };
  const client: oauth.Client = { client_id: config.clientId };
  const clientAuth = oauth.ClientSecretPost(config.clientSecret);
  // oauth4webapi refuses http:// unless told; http only happens against test stand-ins, which
  // deps.fetch itself admits only with NODE_ENV=test.
  const oauthOptions = (url: string) => ({
    [oauth.customFetch]: deps.fetch,
    ...(new URL(url).protocol === 'http:' ? { [oauth.allowInsecureRequests]: true } : {}),
  });

  /** Sends a token-endpoint request and reads its answer, mapping every failure onto the contract. */
  async function tokenCall(what: string, send: () => Promise<Response>, read: (response: Response) => Promise<oauth.TokenEndpointResponse>): Promise<OAuthTokens> {
    let response: Response;
    try {
      response = await send();
    } catch (error) {
      throw new ProviderError(`Google ${what} failed: ${errorMessage(error)}`, null);
    }
    if (response.status === 429 || response.status >= 500) throw providerError(response, `${what} failed`);
    let result: oauth.TokenEndpointResponse;
    try {
      result = await read(await withoutIdToken(response));
    } catch (error) {
      throw tokenError(what, response, error);
    }
    return {
      accessToken: result.access_token,
      refreshToken: result.refresh_token ?? null,
      expiresAt: Date.now() + (result.expires_in ?? DEFAULT_EXPIRES_IN_SECONDS) * 1000,
    };
  }

  function tokenError(what: string, response: Response, error: unknown): Error {
    if (error instanceof oauth.ResponseBodyError) {
      const detail = error.error_description ? `${error.error}: ${error.error_description}` : error.error;
      if (error.error === 'invalid_grant') return new GrantRevokedError(`Google refused the grant (${detail})`);
      return providerError(response, `${what} refused (${detail})`);
    }
    return providerError(response, `${what}: ${errorMessage(error)}`);
  }

  return {
    name: 'google',

    authorizationUrl({ state, codeChallenge, redirectUri }) {
      const url = new URL(config.authUrl);
      url.searchParams.set('response_type', 'code');
      url.searchParams.set('client_id', config.clientId);
      url.searchParams.set('redirect_uri', redirectUri);
      url.searchParams.set('scope', GOOGLE_SCOPES.join(' '));
      url.searchParams.set('state', state);
      url.searchParams.set('code_challenge', codeChallenge);
      url.searchParams.set('code_challenge_method', 'S256');
      // offline + consent: Google issues a refresh token on every consent, not only the first.
      url.searchParams.set('access_type', 'offline');
      url.searchParams.set('prompt', 'consent');
      url.searchParams.set('include_granted_scopes', 'true');
      return url.href;
    },

    async exchangeCode({ code, codeVerifier, redirectUri }) {
      // The core checks `state` (signed and single-use) before calling; only the code is left.
      const callback = oauth.validateAuthResponse(server, client, new URLSearchParams({ code }), oauth.skipStateCheck);
      return tokenCall(
        'code exchange',
        () => oauth.authorizationCodeGrantRequest(server, client, clientAuth, callback, redirectUri, codeVerifier, oauthOptions(config.tokenUrl)),
        (response) => oauth.processAuthorizationCodeResponse(server, client, response),
      );
    },

    async refresh(refreshToken) {
      return tokenCall(
        'token refresh',
        () => oauth.refreshTokenGrantRequest(server, client, clientAuth, refreshToken, oauthOptions(config.tokenUrl)),
        (response) => oauth.processRefreshTokenResponse(server, client, response),
      );
    },

    async revoke(token) {
      if (!config.revokeUrl) return;
      let response: Response;
      try {
        response = await oauth.revocationRequest(server, client, clientAuth, token, oauthOptions(config.revokeUrl));
      } catch (error) {
        throw new ProviderError(`Google revocation failed: ${errorMessage(error)}`, null);
      }
      if (response.status === 429 || response.status >= 500) throw providerError(response, 'revocation failed');
      try {
        await oauth.processRevocationResponse(response);
      } catch (error) {
        // A token Google no longer knows is as revoked as it gets.
        if (error instanceof oauth.ResponseBodyError && error.error === 'invalid_token') return;
        throw tokenError('revocation', response, error);
      }
    },

    session(accessToken) {
      return createSession(apiUrl, accessToken, deps);
    },
  };
}

interface ApiAnswer {
  response: Response;
  body: unknown;
}

function createSession(apiUrl: string, accessToken: string, deps: ProviderDeps): CalendarSession {
  /** One API call. 401 is the grant's end; every other status is left to the caller. */
  async function call(method: string, url: URL, body?: unknown): Promise<ApiAnswer> {
    let response: Response;
    try {
      response = await deps.fetch(url, {
        method,
        headers: {
          authorization: `Bearer ${accessToken}`,
          accept: 'application/json',
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    } catch (error) {
      throw new ProviderError(`Google ${method} ${url.pathname} failed: ${errorMessage(error)}`, null);
    }
    const text = await response.text();
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      parsed = text;
    }
    if (response.status === 401) throw new GrantRevokedError(`Google refused the access token: ${googleErrorDetail(parsed)}`);
    return { response, body: parsed };
  }

  const fail = ({ response, body }: ApiAnswer): ProviderError => providerError(response, googleErrorDetail(body));
  const ok = (answer: ApiAnswer) => answer.response.status >= 200 && answer.response.status < 300;
  const eventsUrl = (calendarId: string, eventId?: string) =>
    new URL(`${apiUrl}/calendars/${encodeURIComponent(calendarId)}/events${eventId === undefined ? '' : `/${encodeURIComponent(eventId)}`}`);

  function eventBody(write: EventWrite) {
    const at = (instant: Date) => ({
      dateTime: DateTime.fromJSDate(instant, { zone: write.timeZone }).toISO({ suppressMilliseconds: true }),
      timeZone: write.timeZone,
    });
    return {
      summary: write.title,
      description: write.description,
      start: at(write.start),
      end: at(write.end),
      extendedProperties: { private: { [GOOGLE_APPOINTMENT_PROPERTY]: write.appointmentId } },
    };
  }

  /** Inserts with the appointment's own id; a 409 means an earlier attempt made it: update that one. */
  async function insert(calendarId: string, write: EventWrite): Promise<string> {
    const id = googleEventId(write.appointmentId);
    const inserted = await call('POST', eventsUrl(calendarId), { id, ...eventBody(write) });
    if (ok(inserted)) return stringField(inserted.body, 'id') ?? id;
    if (inserted.response.status !== 409) throw fail(inserted);
    const patched = await patch(calendarId, id, write);
    if (ok(patched)) return id;
    throw fail(patched);
  }

  // status confirmed: an event deleted in Google keeps its id (insert answers 409), and patching
  // its status is how Google restores it.
  const patch = (calendarId: string, eventId: string, write: EventWrite) => call('PATCH', eventsUrl(calendarId, eventId), { ...eventBody(write), status: 'confirmed' });

  return {
    async listCalendars() {
      const calendars: RemoteCalendar[] = [];
      let pageToken: string | undefined;
      do {
        const url = new URL(`${apiUrl}/users/me/calendarList`);
        url.searchParams.set('maxResults', String(CALENDAR_LIST_PAGE_SIZE));
        if (pageToken) url.searchParams.set('pageToken', pageToken);
        const answer = await call('GET', url);
        if (!ok(answer)) throw fail(answer);
        const items = fieldOf(answer.body, 'items');
        for (const item of Array.isArray(items) ? items : []) {
          const id = stringField(item, 'id');
          if (id === undefined) continue;
          const accessRole = stringField(item, 'accessRole');
          calendars.push({
            id,
            name: stringField(item, 'summaryOverride') ?? stringField(item, 'summary') ?? id,
            primary: fieldOf(item, 'primary') === true,
            canWrite: accessRole === 'owner' || accessRole === 'writer',
          });
        }
        pageToken = stringField(answer.body, 'nextPageToken');
      } while (pageToken);
      return calendars;
    },

    async syncCalendar(calendarId, cursor, window): Promise<SyncResult> {
      const stored = cursor === null ? null : readCursor(cursor);
      const incremental = stored !== null && covers(stored, window) ? stored : null;
      // A full read covers exactly the window asked for; the core then replaces the calendar's set.
      const round = incremental ? { from: incremental.from, to: incremental.to } : { from: window.from.toISOString(), to: window.to.toISOString() };
      // Last state of each key wins: an event may change between pages of one walk.
      const states = new Map<string, Classified>();
      let calendarZone: string | undefined;
      let nextSyncToken: string | undefined;
      let pageToken: string | undefined;
      do {
        const url = eventsUrl(calendarId);
        url.searchParams.set('singleEvents', 'true');
        url.searchParams.set('showDeleted', 'true');
        url.searchParams.set('maxResults', String(EVENTS_PAGE_SIZE));
        if (incremental) {
          // Google refuses timeMin/timeMax with a syncToken: the token carries the first query.
          url.searchParams.set('syncToken', incremental.syncToken);
        } else {
          url.searchParams.set('timeMin', round.from);
          url.searchParams.set('timeMax', round.to);
        }
        if (pageToken) url.searchParams.set('pageToken', pageToken);
        const answer = await call('GET', url);
        if (answer.response.status === 410 && incremental) throw new SyncCursorExpiredError();
        if (!ok(answer)) throw fail(answer);
        calendarZone ??= stringField(answer.body, 'timeZone');
        const items = fieldOf(answer.body, 'items');
        for (const item of Array.isArray(items) ? items : []) {
          if (!isRecord(item)) continue;
          const state = classifyEvent(item, calendarZone, window);
          if (state) states.set(state.busy ? state.event.key : state.key, state);
        }
        pageToken = stringField(answer.body, 'nextPageToken');
        nextSyncToken = stringField(answer.body, 'nextSyncToken');
      } while (pageToken);

      const events: BusyEvent[] = [];
      const removed: string[] = [];
      for (const state of states.values()) {
        if (state.busy) events.push(state.event);
        else removed.push(state.key);
      }
      const nextCursor: GoogleCursor | null = nextSyncToken ? { syncToken: nextSyncToken, ...round } : null;
      return { full: !incremental, events, removed, cursor: nextCursor ? JSON.stringify(nextCursor) : null };
    },

    async putEvent(calendarId, eventId, write) {
      if (eventId === null) return insert(calendarId, write);
      const patched = await patch(calendarId, eventId, write);
      if (ok(patched)) return eventId;
      // Gone for good (404) or deleted (410): the appointment still exists, so it gets an event again.
      if (patched.response.status === 404 || patched.response.status === 410) return insert(calendarId, write);
      throw fail(patched);
    },

    async deleteEvent(calendarId, eventId) {
      const answer = await call('DELETE', eventsUrl(calendarId, eventId));
      if (ok(answer) || answer.response.status === 404 || answer.response.status === 410) return;
      throw fail(answer);
    },

    deleteAppointmentEvent(calendarId, appointmentId) {
      return this.deleteEvent(calendarId, googleEventId(appointmentId));
    },
  };
}
