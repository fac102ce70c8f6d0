/**
 * Microsoft Graph calendars (Microsoft identity platform v2 OAuth, Graph v1.0) behind the
 * provider contract of ./types.ts. Every HTTP call goes through the OutboundFetch given in
 * `deps`, so the address rules and the deadline of platform/outbound/fetch.ts apply to each.
 *
 * Graph is called with plain fetch and JSON rather than @microsoft/microsoft-graph-client: we use
 * five endpoints, and the SDK takes our fetch only by replacing its middleware chain, whose
 * default retry handler would otherwise wait out 429s itself and hide Retry-After from the core,
 * which owns retries and scheduling.
 */
import { createHash } from 'node:crypto';
import { DateTime, IANAZone } from 'luxon';
import { ianaToWindows, windowsToIana } from '../../../domain/windows-zones.js';
import * as oauth from 'oauth4webapi';
import { errorMessage, fieldOf } from '../../../platform/values.js';
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
import { GrantRevokedError, ProviderError, SyncCursorExpiredError } from './types.js';
import { parseRetryAfter } from '../../../platform/outbound/retry-after.js';

/** offline_access: a refresh token is issued. Calendars.ReadWrite: read busy time, write appointments. */
export const MICROSOFT_SCOPE = 'offline_access Calendars.ReadWrite';

/**
 * Our appointment marker: a single-value extended property (a string named in our own property
 * set GUID) holding the appointment id. Written on every event we create, with the transactionId.
 */
export const MICROSOFT_MARKER_PROPERTY = 'String {94c401e7-13ee-4208-97a9-0401b055d988} Name slotwiseAppointmentId';

/** Prefix of the transactionId of every event we create; sync recognises our events by it. */
export const MICROSOFT_TRANSACTION_PREFIX = 'slotwise-';

/** Events per delta page we ask for (Prefer: odata.maxpagesize); Graph may send fewer. */
const DELTA_PAGE_SIZE = 200;
/** A guard against a provider that never ends a paging round. */
const MAX_PAGES = 2_000;

/** Token endpoint errors meaning the grant itself is gone: the user must connect again. */
const GRANT_GONE_ERRORS = new Set(['invalid_grant', 'interaction_required', 'consent_required']);

// ---------------------------------------------------------------------------------------------
// Time zones

/** The IANA zone of a Graph time zone name, or null when it names none we can place (custom zones, unknown names). */
export function ianaZoneOf(name: unknown): string | null {
  if (typeof name !== 'string' || name.trim() === '') return null;
  const trimmed = name.trim();
  if (trimmed.toLowerCase() === 'tzone://microsoft/utc') return 'UTC';
  const mapped = windowsToIana(trimmed);
  if (mapped) return mapped;
  return IANAZone.isValidZone(trimmed) ? trimmed : null;
}

// ---------------------------------------------------------------------------------------------
// Small readers of Graph JSON

function stringField(value: unknown, name: string): string | null {
  const field = fieldOf(value, name);
  return typeof field === 'string' && field !== '' ? field : null;
}

function listField(value: unknown, name: string): unknown[] {
  const field = fieldOf(value, name);
  return Array.isArray(field) ? field : [];
}

/** The first line of a provider's message: Microsoft appends trace and correlation ids on further lines. */
function firstLine(text: string): string {
  return text.split(/\r?\n/, 1)[0]!.trim();
}

// ---------------------------------------------------------------------------------------------
// OAuth (Microsoft identity platform v2)

function tokenFailure(error: unknown, answered: Response | null): Error {
  if (error instanceof GrantRevokedError || error instanceof ProviderError) return error;
  if (error instanceof oauth.ResponseBodyError) {
    const detail = error.error_description ? `: ${firstLine(error.error_description)}` : '';
    // invalid_grant covers AADSTS70000 (revoked), 700082 (expired by inactivity), 50173 (password
    // changed), 54005 (code already redeemed), 501481 (PKCE verifier mismatch): connect again.
    if (GRANT_GONE_ERRORS.has(error.error)) return new GrantRevokedError(`Microsoft refused the grant (${error.error}${detail})`);
    return new ProviderError(`Microsoft token endpoint answered ${error.status} ${error.error}${detail}`, error.status, parseRetryAfter(error.response.headers.get('retry-after')));
  }
  if (answered) {
    return new ProviderError(`Microsoft token endpoint answered ${answered.status} (${errorMessage(error)})`, answered.status, parseRetryAfter(answered.headers.get('retry-after')));
  }
  return new ProviderError(`Microsoft token endpoint could not be reached: ${errorMessage(error)}`, null);
}

function toTokens(json: oauth.TokenEndpointResponse): OAuthTokens {
  const expiresIn = typeof json.expires_in === 'number' && json.expires_in > 0 ? json.expires_in : 3600;
  return { accessToken: json.access_token, refreshToken: json.refresh_token ?? null, expiresAt: Date.now() + expiresIn * 1000 };
}

// ---------------------------------------------------------------------------------------------
// Events read from Graph

/** The instant of a Graph dateTimeTimeZone; a zone we cannot place is read as `fallbackZone`. */
function instantOf(value: unknown, fallbackZone: string): DateTime | null {
  const dateTime = stringField(value, 'dateTime');
  if (!dateTime) return null;
  const zone = ianaZoneOf(fieldOf(value, 'timeZone')) ?? fallbackZone;
  const parsed = DateTime.fromISO(dateTime, { zone });
  return parsed.isValid ? parsed : null;
}

/**
 * The calendar day a Graph all-day boundary names. All-day events are stored as midnights; the
 * Prefer outlook.timezone header relabels them (keeping midnight) or converts them, depending on
 * the mailbox, so a midnight is read as its date and any other time is converted to `zone` first.
 */
function dayOf(value: unknown, zone: string): string | null {
  const dateTime = stringField(value, 'dateTime');
  if (!dateTime) return null;
  if (/^\d{4}-\d{2}-\d{2}(T00:00(:00(\.0+)?)?)?$/.test(dateTime)) return dateTime.slice(0, 10);
  return instantOf(value, zone)?.setZone(zone).toISODate() ?? null;
}

/**
 * The zone an all-day event's days are counted in: the event's own (originalStartTimeZone, then
 * start.timeZone unless it is only the UTC we asked the answer in), else the window's.
 */
function allDayZone(entry: unknown, fallbackZone: string): string {
  const original = ianaZoneOf(fieldOf(entry, 'originalStartTimeZone'));
  if (original) return original;
  const labelled = ianaZoneOf(fieldOf(fieldOf(entry, 'start'), 'timeZone'));
  return labelled && labelled !== 'UTC' ? labelled : fallbackZone;
}

function spanOf(entry: unknown, fallbackZone: string): { start: Date; end: Date } | null {
  if (fieldOf(entry, 'isAllDay') === true) {
    const zone = allDayZone(entry, fallbackZone);
    const firstDay = dayOf(fieldOf(entry, 'start'), zone);
    if (!firstDay) return null;
    const start = DateTime.fromISO(firstDay, { zone });
    const endDay = dayOf(fieldOf(entry, 'end'), zone);
    const end = endDay && endDay > firstDay ? DateTime.fromISO(endDay, { zone }) : start.plus({ days: 1 });
    return start.isValid && end.isValid ? { start: start.toJSDate(), end: end.toJSDate() } : null;
  }
  const start = instantOf(fieldOf(entry, 'start'), fallbackZone);
  const end = instantOf(fieldOf(entry, 'end'), fallbackZone);
  return start && end ? { start: start.toJSDate(), end: end.toJSDate() } : null;
}

const UUID_AFTER_PREFIX = new RegExp(`^${MICROSOFT_TRANSACTION_PREFIX}([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})(?:-|$)`, 'i');

/**
 * The appointment id of an event Slotwise wrote (by any company), or null: our extended
 * property's value when Graph sends it, else the uuid of our transactionId
 * (`slotwise-<uuid>[-suffix]`, see transactionIdFor); an id that is no uuid loses only the suffix.
 */
function markerOf(entry: unknown): string | null {
  const id = MICROSOFT_MARKER_PROPERTY.toLowerCase();
  const property = listField(entry, 'singleValueExtendedProperties').find((p) => stringField(p, 'id')?.toLowerCase() === id);
  const value = stringField(property, 'value');
  if (value) return value;
  const transactionId = stringField(entry, 'transactionId');
  if (!transactionId?.startsWith(MICROSOFT_TRANSACTION_PREFIX)) return null;
  const uuid = UUID_AFTER_PREFIX.exec(transactionId)?.[1];
  if (uuid) return uuid;
  const rest = transactionId.slice(MICROSOFT_TRANSACTION_PREFIX.length).replace(/-[0-9a-f]{16}$/, '');
  return rest === '' ? null : rest;
}

/** The busy occurrence a delta entry describes, or null when it is gone or not busy time. */
function busyOf(entry: unknown, id: string, fallbackZone: string): BusyEvent | null {
  if (fieldOf(entry, '@removed') !== undefined) return null;
  const type = stringField(entry, 'type');
  // calendarView lists a series as its occurrences; a master is no busy time of its own.
  if (type === 'seriesMaster') return null;
  if (fieldOf(entry, 'isCancelled') === true) return null;
  const showAs = stringField(entry, 'showAs');
  if (showAs && ['free', 'workingelsewhere'].includes(showAs.toLowerCase())) return null;
  if (stringField(fieldOf(entry, 'responseStatus'), 'response')?.toLowerCase() === 'declined') return null;
  const span = spanOf(entry, fallbackZone);
  if (!span || span.end.getTime() <= span.start.getTime()) return null;
  // Ours or another company's: the core decides (BusyEvent.marker in ./types.ts).
  const marker = markerOf(entry);
  const event: BusyEvent = { key: id, start: span.start, end: span.end, transparency: showAs, eventType: type };
  if (marker) event.marker = marker;
  return event;
}

// ---------------------------------------------------------------------------------------------
// Cursors

/**
 * Our cursor: the deltaLink and the window its round was started with. Graph fixes a round's
 * window in its first request, so a deltaLink cannot report events in days the window has since
 * grown into; a window the cursor does not cover is synced in full instead.
 */
interface DeltaCursor {
  link: string;
  from: string;
  to: string;
}

function readCursor(cursor: string, apiOrigin: string): DeltaCursor {
  let parsed: unknown;
  try {
    parsed = JSON.parse(cursor);
  } catch {
    throw new SyncCursorExpiredError('The Microsoft sync cursor is unreadable; a full sync is needed');
  }
  const link = stringField(parsed, 'link');
  const from = stringField(parsed, 'from');
  const to = stringField(parsed, 'to');
  if (!link || !from || !to || Number.isNaN(Date.parse(from)) || Number.isNaN(Date.parse(to))) {
    throw new SyncCursorExpiredError('The Microsoft sync cursor is unreadable; a full sync is needed');
  }
  let origin: string | null;
  try {
    origin = new URL(link).origin;
  } catch {
    origin = null;
  }
  // A cursor for another Graph address (the configuration changed) is refused like an expired one.
  if (origin !== apiOrigin) throw new SyncCursorExpiredError('The Microsoft sync cursor names another Graph address; a full sync is needed');
  return { link, from, to };
}

function covers(cursor: DeltaCursor, window: SyncWindow): boolean {
  return Date.parse(cursor.from) <= window.from.getTime() && Date.parse(cursor.to) >= window.to.getTime();
}

/** Graph's answer that a delta or skip token is no longer known. */
function refusesCursor(status: number, json: unknown): boolean {
  if (status === 410) return true;
  const code = stringField(fieldOf(json, 'error'), 'code')?.toLowerCase() ?? '';
  return status >= 400 && status < 500 && (code.includes('syncstate') || code.includes('resync'));
}

// ---------------------------------------------------------------------------------------------
// Events written by us

/** Graph's transactionId of our create: derived from the appointment, so a retried create finds the first. */
function transactionIdFor(appointmentId: string, replacing: string | null): string {
  // After the event was deleted in Outlook it is made again under a new id, derived from the gone
  // one so a retry of that re-creation is just as idempotent.
  const suffix = replacing === null ? '' : `-${createHash('sha256').update(replacing).digest('hex').slice(0, 16)}`;
  return `${MICROSOFT_TRANSACTION_PREFIX}${appointmentId}${suffix}`;
}

/**
 * A boundary as Graph's dateTimeTimeZone: the wall time in the location's zone under its Windows
 * name (which every Graph write accepts), or UTC when the zone has no Windows name here or the
 * wall time is ambiguous (a repeated hour when clocks go back).
 */
function boundary(instant: Date, zone: string): { dateTime: string; timeZone: string } {
  const windowsName = ianaToWindows(zone);
  if (windowsName) {
    const local = DateTime.fromJSDate(instant, { zone });
    if (local.getPossibleOffsets().length === 1) return { dateTime: local.toFormat("yyyy-MM-dd'T'HH:mm:ss"), timeZone: windowsName };
  }
  return { dateTime: DateTime.fromJSDate(instant, { zone: 'UTC' }).toFormat("yyyy-MM-dd'T'HH:mm:ss"), timeZone: 'UTC' };
}

function eventBody(write: EventWrite): Record<string, unknown> {
  return {
    subject: write.title,
    body: { contentType: 'text', content: write.description },
    start: boundary(write.start, write.timeZone),
    end: boundary(write.end, write.timeZone),
    showAs: 'busy',
  };
}

/** Whether an event Graph returned already says what `write` says (a retried create found the first one). */
function matches(entry: unknown, write: EventWrite): boolean {
  const span = spanOf(entry, 'UTC');
  const body = fieldOf(entry, 'body');
  // We ask for the body as text; a mailbox answering HTML is not compared rather than always rewritten.
  const sameBody =
    stringField(body, 'contentType')?.toLowerCase() !== 'text' ||
    (stringField(body, 'content') ?? '').replace(/\r\n/g, '\n').trim() === write.description.replace(/\r\n/g, '\n').trim();
  return (
    span !== null &&
    span.start.getTime() === write.start.getTime() &&
    span.end.getTime() === write.end.getTime() &&
    (stringField(entry, 'subject') ?? '') === write.title &&
    sameBody
  );
}

// ---------------------------------------------------------------------------------------------
// The provider

export function createMicrosoftProvider(config: OAuthClientConfig, deps: ProviderDeps): OAuthCalendarProvider {
  const api = config.apiUrl.replace(/\/+$/, '');
  const apiOrigin = new URL(api).origin;
  const authorizationServer: oauth.AuthorizationServer = { issuer: new URL(config.tokenUrl).origin, token_endpoint: config.tokenUrl };
  const client: oauth.Client = { client_id: config.clientId };
  const clientAuthentication = oauth.ClientSecretPost(config.clientSecret);
  // Plain http only ever reaches here in tests: the OutboundFetch refuses it everywhere else.
  const insecure = new URL(config.tokenUrl).protocol === 'http:';

  /** One token endpoint call through oauth4webapi, its errors turned into the contract's. */
  async function tokenCall(
    send: (options: oauth.TokenEndpointRequestOptions) => Promise<Response>,
    process: (response: Response) => Promise<oauth.TokenEndpointResponse>,
  ): Promise<OAuthTokens> {
    const seen: { response: Response | null } = { response: null };
    const options: oauth.TokenEndpointRequestOptions = {
      [oauth.customFetch]: async (url, init) => {
        seen.response = await deps.fetch(url, init);
        return seen.response;
      },
      [oauth.allowInsecureRequests]: insecure,
      // v2 endpoints want the scope on every grant; a refresh may ask for the same scopes or fewer.
      additionalParameters: { scope: MICROSOFT_SCOPE },
    };
    try {
      return toTokens(await process(await send(options)));
    } catch (error) {
      throw tokenFailure(error, seen.response);
    }
  }

  function session(accessToken: string): CalendarSession {
    async function call(method: string, url: string, options: { body?: unknown; prefer?: string[] } = {}): Promise<{ response: Response; json: unknown }> {
      // Links come from Graph's answers and carry our token: they must stay on the Graph address.
      if (new URL(url).origin !== apiOrigin) throw new ProviderError(`Microsoft Graph sent a link outside ${apiOrigin}`, null);
      const headers: Record<string, string> = { authorization: `Bearer ${accessToken}`, accept: 'application/json' };
      if (options.prefer?.length) headers.prefer = options.prefer.join(', ');
      if (options.body !== undefined) headers['content-type'] = 'application/json';
      let response: Response;
      let text: string;
      try {
        response = await deps.fetch(url, { method, headers, body: options.body === undefined ? undefined : JSON.stringify(options.body) });
        text = await response.text();
      } catch (error) {
        throw new ProviderError(`Microsoft Graph could not be reached: ${errorMessage(error)}`, null);
      }
      let json: unknown;
      try {
        json = text ? JSON.parse(text) : null;
      } catch {
        json = null;
      }
      if (response.status === 401) {
        throw new GrantRevokedError(`Microsoft Graph refused the access token (401 ${stringField(fieldOf(json, 'error'), 'code') ?? ''})`.trim());
      }
      return { response, json };
    }

    function failure(response: Response, json: unknown): ProviderError {
      const error = fieldOf(json, 'error');
      const code = stringField(error, 'code') ?? response.statusText;
      const message = stringField(error, 'message');
      return new ProviderError(
        `Microsoft Graph answered ${response.status} ${code}${message ? `: ${firstLine(message)}` : ''}`,
        response.status,
        parseRetryAfter(response.headers.get('retry-after')),
      );
    }

    async function listCalendars(): Promise<RemoteCalendar[]> {
      const calendars: RemoteCalendar[] = [];
      let link: string | null = `${api}/me/calendars?$select=id,name,canEdit,isDefaultCalendar&$top=100`;
      for (let page = 0; link !== null; page += 1) {
        if (page >= MAX_PAGES) throw new ProviderError('Microsoft Graph did not end the calendar list', null);
        const { response, json }: { response: Response; json: unknown } = await call('GET', link);
        if (!response.ok) throw failure(response, json);
        for (const entry of listField(json, 'value')) {
          const id = stringField(entry, 'id');
          if (!id) continue;
          calendars.push({
            id,
            name: stringField(entry, 'name') ?? id,
            primary: fieldOf(entry, 'isDefaultCalendar') === true,
            canWrite: fieldOf(entry, 'canEdit') === true,
          });
        }
        link = stringField(json, '@odata.nextLink');
      }
      return calendars;
    }

    async function syncCalendar(calendarId: string, cursor: string | null, window: SyncWindow): Promise<SyncResult> {
      const stored = cursor === null ? null : readCursor(cursor, apiOrigin);
      const full = stored === null || !covers(stored, window);
      const round = full ? { from: window.from.toISOString(), to: window.to.toISOString() } : { from: stored.from, to: stored.to };
      let link = full
        ? `${api}/me/calendars/${encodeURIComponent(calendarId)}/calendarView/delta?startDateTime=${encodeURIComponent(round.from)}&endDateTime=${encodeURIComponent(round.to)}`
        : stored.link;
      // Graph may list an event more than once in a round; the last entry is its state.
      const busy = new Map<string, BusyEvent>();
      const removed = new Set<string>();
      for (let page = 0; ; page += 1) {
        if (page >= MAX_PAGES) throw new ProviderError('Microsoft Graph did not end the delta round', null);
        const { response, json } = await call('GET', link, { prefer: [`odata.maxpagesize=${DELTA_PAGE_SIZE}`, 'outlook.timezone="UTC"'] });
        if (!response.ok) {
          // The first request of a full round carries no token to refuse.
          if (refusesCursor(response.status, json) && !(full && page === 0)) throw new SyncCursorExpiredError();
          throw failure(response, json);
        }
        for (const entry of listField(json, 'value')) {
          const id = stringField(entry, 'id');
          if (!id) continue;
          const event = busyOf(entry, id, window.zone);
          if (event) {
            busy.set(id, event);
            removed.delete(id);
          } else {
            busy.delete(id);
            removed.add(id);
          }
        }
        const next = stringField(json, '@odata.nextLink');
        if (next) {
          link = next;
          continue;
        }
        const deltaLink = stringField(json, '@odata.deltaLink');
        if (!deltaLink) throw new ProviderError('Microsoft Graph ended a delta page without a next or delta link', response.status);
        const nextCursor: DeltaCursor = { link: deltaLink, ...round };
        return { full, events: [...busy.values()], removed: full ? [] : [...removed], cursor: JSON.stringify(nextCursor) };
      }
    }

    async function create(calendarId: string, write: EventWrite, replacing: string | null): Promise<string> {
      const { response, json } = await call('POST', `${api}/me/calendars/${encodeURIComponent(calendarId)}/events`, {
        body: {
          ...eventBody(write),
          transactionId: transactionIdFor(write.appointmentId, replacing),
          singleValueExtendedProperties: [{ id: MICROSOFT_MARKER_PROPERTY, value: write.appointmentId }],
        },
        prefer: ['outlook.timezone="UTC"', 'outlook.body-content-type="text"'],
      });
      if (!response.ok) throw failure(response, json);
      const id = stringField(json, 'id');
      if (!id) throw new ProviderError('Microsoft Graph created an event without an id', response.status);
      // A repeated transactionId answers the event made before, as it was then: bring it up to date.
      if (!matches(json, write)) return update(calendarId, id, write, false);
      return id;
    }

    async function update(calendarId: string, eventId: string, write: EventWrite, recreate: boolean): Promise<string> {
      const { response, json } = await call('PATCH', `${api}/me/events/${encodeURIComponent(eventId)}`, { body: eventBody(write) });
      // Deleted in Outlook meanwhile: the appointment still stands, so it gets an event again
      // (once: the update of a just-created event does not go round again).
      if ((response.status === 404 || response.status === 410) && recreate) return create(calendarId, write, eventId);
      if (!response.ok) throw failure(response, json);
      return stringField(json, 'id') ?? eventId;
    }

    return {
      listCalendars,
      syncCalendar,
      putEvent: (calendarId, eventId, write) => (eventId === null ? create(calendarId, write, null) : update(calendarId, eventId, write, true)),
      async deleteEvent(_calendarId, eventId) {
        const { response, json } = await call('DELETE', `${api}/me/events/${encodeURIComponent(eventId)}`);
        if (response.ok || response.status === 404 || response.status === 410) return;
        throw failure(response, json);
      },
    };
  }

  return {
    name: 'microsoft',

    authorizationUrl({ state, codeChallenge, redirectUri }) {
      const url = new URL(config.authUrl);
      const parameters: Record<string, string> = {
        client_id: config.clientId,
        response_type: 'code',
        redirect_uri: redirectUri,
        response_mode: 'query',
        scope: MICROSOFT_SCOPE,
        state,
        code_challenge: codeChallenge,
        code_challenge_method: 'S256',
        // Microsoft issues a refresh token whenever offline_access is granted, so consent need not
        // be forced; select_account lets someone signed in to several accounts (work and personal)
        // pick the one whose calendar they mean.
        prompt: 'select_account',
      };
      for (const [name, value] of Object.entries(parameters)) url.searchParams.set(name, value);
      return url.href;
    },

    exchangeCode({ code, codeVerifier, redirectUri }) {
      // The core has already checked `state` (its own signed value), so the callback parameters
      // are only the code; validateAuthResponse brands them as oauth4webapi requires.
      return tokenCall(
        (options) => {
          const parameters = oauth.validateAuthResponse(authorizationServer, client, new URLSearchParams({ code }), oauth.skipStateCheck);
          return oauth.authorizationCodeGrantRequest(authorizationServer, client, clientAuthentication, parameters, redirectUri, codeVerifier, options);
        },
        (response) => oauth.processAuthorizationCodeResponse(authorizationServer, client, response),
      );
    },

    refresh(refreshToken) {
      // Microsoft answers a new refresh token on every refresh: toTokens passes it on to be stored.
      return tokenCall(
        (options) => oauth.refreshTokenGrantRequest(authorizationServer, client, clientAuthentication, refreshToken, options),
        (response) => oauth.processRefreshTokenResponse(authorizationServer, client, response),
      );
    },

    async revoke() {
      // The identity platform has no endpoint revoking one refresh token (only an admin's
      // revokeSignInSessions, which signs the user out of everything); the user removes the app's
      // consent at https://myapps.microsoft.com. Dropping the stored tokens is all we can do.
    },

    session,
  };
}
