/**
 * CalDAV (RFC 4791) provider client: iCloud, Fastmail, Nextcloud, Radicale and the like, with
 * basic credentials (an app password).
 *
 * The WebDAV requests are tsdav's (PROPFIND, REPORT sync-collection and calendar-query, PUT,
 * DELETE), each given our own `fetch`: every request goes through the OutboundFetch
 * (platform/outbound/fetch.ts), so the address rules and the deadline apply, and the status of
 * every answer is judged there before tsdav sees it (tsdav does not expose statuses and headers
 * of failed calls in a usable form). iCalendar is read and written in icalendar.ts.
 *
 * Ids: a calendar's id is the absolute URL of its collection, an event's id the absolute URL of
 * the object we PUT (`{calendar}/slotwise-{appointmentId}.ics`).
 *
 * Sync: the cursor (opaque JSON) keeps the calendar's sync token (RFC 6578) or, without one, its
 * getctag, and the window of the last full result. With a cursor whose window contains the new
 * one, an unchanged calendar answers `{full: false, events: [], removed: []}`; any change, or a
 * window reaching past the cursor's, answers a full result from a calendar-query of the window
 * (removed keys of changed recurring events cannot be known from a change list alone).
 */
import { calendarQuery, createObject, deleteObject, propfind, syncCollection } from 'tsdav';
import type { DAVResponse } from 'tsdav';
import { OutboundRefusedError } from '../../../platform/outbound/fetch.js';
import type { OutboundFetch } from '../../../platform/outbound/fetch.js';
import { errorCode, errorMessage, fieldOf, isRecord } from '../../../platform/values.js';
import { appointmentObject, busyOccurrences, calendarTimezone, isIanaZone, OWN_UID_PREFIX } from './icalendar.js';
import { GrantRevokedError, ProviderError, SyncCursorExpiredError } from './types.js';
import { parseRetryAfter } from '../../../platform/outbound/retry-after.js';
import type {
  BusyEvent,
  CaldavCalendarProvider,
  CaldavCredentials,
  CalendarSession,
  EventWrite,
  ProviderDeps,
  RemoteCalendar,
  SyncResult,
  SyncWindow,
} from './types.js';

const REFUSED = 'CalDAV server refused the user name or password';
const DAY_MS = 86_400_000;

interface CallOptions {
  /** What the call does, for messages ("listing the calendars"). */
  what: string;
  /** Statuses handed back to tsdav; any other one is turned into our error here. */
  accept: readonly number[];
  /** Redirects followed (discovery only; each hop goes through the same address rules). */
  redirects?: number;
  /** A sync-collection REPORT: a refused sync token means the cursor expired. */
  sync?: boolean;
}


/** The first element inside a DAV:error body (a precondition such as need-privileges), or null. */
function preconditionOf(body: string): string | null {
  const match = /<(?:[\w-]+:)?error\b[^>]*>\s*<(?:[\w-]+:)?([\w-]+)/.exec(body);
  return match ? match[1]! : null;
}

function unreachable(error: unknown, what: string): ProviderError {
  const cause = fieldOf(error, 'cause');
  // Refused before the request (the URL) or at the connection's address lookup (the cause).
  const refusal = [error, cause].find((e) => e instanceof OutboundRefusedError);
  if (refusal) return new ProviderError(`The CalDAV address is not allowed: ${errorMessage(refusal)}`, null);
  const name = fieldOf(error, 'name');
  const code = errorCode(cause) ?? errorCode(error);
  if (name === 'TimeoutError' || name === 'AbortError' || (code && /TIMEOUT/.test(code))) {
    return new ProviderError(`The CalDAV server did not answer in time while ${what}`, null);
  }
  const detail = code ?? (cause === undefined ? errorMessage(error) : errorMessage(cause));
  return new ProviderError(`The CalDAV server could not be reached while ${what}: ${detail}`, null);
}

async function failure(response: Response, options: CallOptions): Promise<Error> {
  const status = response.status;
  const body = status >= 400 && status < 500 ? await response.text().catch(() => '') : '';
  if (options.sync && body.includes('valid-sync-token')) {
    return new SyncCursorExpiredError('The CalDAV server no longer accepts the sync token; a full sync is needed');
  }
  if (status === 401) return new GrantRevokedError(REFUSED);
  if (status === 403) {
    // A DAV:error names a refused precondition of this request (a UID already used, no
    // privilege on this one collection): not a sign the credentials stopped working.
    const precondition = preconditionOf(body);
    if (precondition) return new ProviderError(`The CalDAV server refused ${options.what}: ${precondition}`, 403);
    return new GrantRevokedError(REFUSED);
  }
  const message = `The CalDAV server answered ${status} while ${options.what}`;
  if (status === 429 || status >= 500) return new ProviderError(message, status, parseRetryAfter(response.headers.get('retry-after')));
  return new ProviderError(message, status);
}

function isRedirect(status: number): boolean {
  return [301, 302, 303, 307, 308].includes(status);
}

/** Absolute URL of a DAV href (a path, usually) against the URL of the answer it came in. */
function resolveHref(href: string, base: string): string {
  return new URL(href, base).href;
}

/** A collection URL that relative names resolve inside of. */
function collectionUrl(url: string): string {
  const parsed = new URL(url);
  if (!parsed.pathname.endsWith('/')) parsed.pathname += '/';
  return parsed.href;
}

function sameResource(a: string, b: string): boolean {
  const strip = (url: string) => {
    const parsed = new URL(url);
    return `${parsed.origin}${decodeURIComponent(parsed.pathname).replace(/\/+$/, '')}`;
  };
  return strip(a) === strip(b);
}

// Reading tsdav's parsed XML: element names camelCased, namespaces dropped, text values coerced
// to numbers or booleans when they look like one (so `String()` where text is expected).

function textOf(value: unknown): string | null {
  if (value === undefined || value === null) return null;
  if (isRecord(value)) {
    const inner = value._cdata ?? value._text;
    return inner === undefined ? null : String(inner);
  }
  return String(value);
}

function hrefOf(value: unknown): string | null {
  const href = fieldOf(value, 'href');
  const first = Array.isArray(href) ? href[0] : href;
  const text = textOf(first);
  return text && text.trim() ? text.trim() : null;
}

function elementNames(value: unknown): string[] {
  return isRecord(value) ? Object.keys(value).filter((key) => !key.startsWith('_')) : [];
}

function propsOf(response: DAVResponse): Record<string, unknown> | null {
  return isRecord(response.props) ? response.props : null;
}

function isCalendarCollection(props: Record<string, unknown>): boolean {
  return elementNames(props.resourcetype).includes('calendar');
}

function supportsEvents(props: Record<string, unknown>): boolean {
  const comp = fieldOf(props.supportedCalendarComponentSet, 'comp');
  if (comp === undefined) return true;
  const names = (Array.isArray(comp) ? comp : [comp]).map((c) => String(fieldOf(fieldOf(c, '_attributes'), 'name') ?? '').toUpperCase());
  return names.includes('VEVENT');
}

/** DAV:bind on the collection is what creating an object needs; `write` and `all` contain it. */
function canWriteFrom(props: Record<string, unknown>): boolean {
  const set = props.currentUserPrivilegeSet;
  if (!isRecord(set)) return true;
  const privileges = set.privilege;
  const names = (Array.isArray(privileges) ? privileges : [privileges]).flatMap(elementNames);
  return names.some((name) => name === 'all' || name === 'write' || name === 'bind');
}

function calendarName(props: Record<string, unknown>, url: string): string {
  const displayName = textOf(props.displayname)?.trim();
  if (displayName) return displayName;
  const segments = new URL(url).pathname.split('/').filter(Boolean);
  return segments.length ? decodeURIComponent(segments[segments.length - 1]!) : url;
}

interface CursorState {
  v: 1;
  token: string | null;
  ctag: string | null;
  from: string;
  to: string;
  zone: string;
}

function readCursor(cursor: string): CursorState {
  let parsed: unknown;
  try {
    parsed = JSON.parse(cursor);
  } catch {
    parsed = null;
  }
  const field = (name: string) => fieldOf(parsed, name);
  const token = field('token');
  const ctag = field('ctag');
  const from = field('from');
  const to = field('to');
  const zone = field('zone');
  if (
    !isRecord(parsed) ||
    field('v') !== 1 ||
    (token !== null && typeof token !== 'string') ||
    (ctag !== null && typeof ctag !== 'string') ||
    (token === null && ctag === null) ||
    typeof from !== 'string' ||
    typeof to !== 'string' ||
    typeof zone !== 'string'
  ) {
    throw new SyncCursorExpiredError('The CalDAV sync cursor is not readable; a full sync is needed');
  }
  return { v: 1, token, ctag, from, to, zone };
}

function covers(state: CursorState, window: SyncWindow): boolean {
  return state.zone === window.zone && Date.parse(state.from) <= window.from.getTime() && Date.parse(state.to) >= window.to.getTime();
}

/** iCalendar UTC date-time (20260101T000000Z) for time-range filters. */
function icalUtc(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z').replace(/[-:]/g, '');
}

export function createCaldavProvider(deps: ProviderDeps): CaldavCalendarProvider {
  return {
    name: 'caldav',
    async check(credentials) {
      await new CaldavClient(deps.fetch, credentials).discover();
    },
    session(credentials) {
      return new CaldavClient(deps.fetch, credentials);
    },
  };
}

type Discovered = { kind: 'home' | 'calendar'; url: string };

class CaldavClient implements CalendarSession {
  private readonly authorization: string;
  private readonly userAddress: string | null;
  private discovered: Discovered | null = null;

  constructor(
    private readonly outbound: OutboundFetch,
    private readonly credentials: CaldavCredentials,
  ) {
    this.authorization = `Basic ${Buffer.from(`${credentials.username}:${credentials.password}`, 'utf8').toString('base64')}`;
    // The user's attendee address, for invitations they declined: the user name when it is an email.
    this.userAddress = /^[^@\s]+@[^@\s]+$/.test(credentials.username) ? credentials.username.toLowerCase() : null;
  }

  /** The `fetch` given to tsdav for one request: credentials, redirects, and the status judged here. */
  private fetchFor(options: CallOptions, landed?: { url: string }): typeof fetch {
    return async (input, init = {}) => {
      let url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
      const headers = new Headers(init.headers);
      headers.set('authorization', this.authorization);
      for (let hop = 0; ; hop++) {
        let response: Response;
        try {
          response = await this.outbound(url, { ...init, headers });
        } catch (error) {
          throw unreachable(error, options.what);
        }
        const location = response.headers.get('location');
        if (isRedirect(response.status) && location && hop < (options.redirects ?? 0)) {
          url = new URL(location, url).href;
          continue;
        }
        if (landed) landed.url = url;
        if (options.accept.includes(response.status)) return response;
        throw await failure(response, options);
      }
    };
  }

  private absolute(id: string): string {
    try {
      return new URL(id, this.credentials.url).href;
    } catch {
      throw new ProviderError(`Not a CalDAV URL: ${id}`, null);
    }
  }

  /** The calendar home (or the one calendar) the credentials' URL leads to. */
  async discover(): Promise<Discovered> {
    if (this.discovered) return this.discovered;
    let start: URL;
    try {
      start = new URL(this.credentials.url);
    } catch {
      throw new ProviderError('The CalDAV URL is not a valid URL', null);
    }
    if (start.protocol !== 'https:' && start.protocol !== 'http:') throw new ProviderError('The CalDAV URL must be an https URL', null);
    let found = await this.probe(start.href);
    // RFC 6764: a server that does not answer at the given URL may point the way from its
    // well-known address.
    const wellKnown = new URL('/.well-known/caldav', start).href;
    if (!found && start.href !== wellKnown) found = await this.probe(wellKnown);
    if (!found) {
      throw new ProviderError(`${start.href} is not a CalDAV server, principal or calendar (no calendar home was found there)`, null);
    }
    this.discovered = found;
    return found;
  }

  private async probe(url: string): Promise<Discovered | null> {
    const what = 'looking for the calendars';
    const landed = { url };
    const responses = await propfind({
      url,
      depth: '0',
      props: { 'd:resourcetype': {}, 'd:current-user-principal': {}, 'c:calendar-home-set': {} },
      // Anything but a multistatus means "not here": the caller tries elsewhere, then says so.
      fetch: this.fetchFor({ what, accept: [200, 204, 207, 301, 302, 303, 307, 308, 400, 404, 405, 406, 409, 415, 501], redirects: 3 }, landed),
    });
    const props = responses.map(propsOf).find((p) => p !== null);
    if (!props) return null;
    const here = responses.find((r) => propsOf(r) === props)?.href;
    if (isCalendarCollection(props)) return { kind: 'calendar', url: resolveHref(here ?? landed.url, landed.url) };
    const home = hrefOf(props.calendarHomeSet);
    if (home) return { kind: 'home', url: resolveHref(home, landed.url) };
    const principal = hrefOf(props.currentUserPrincipal);
    if (!principal) return null;
    const principalUrl = resolveHref(principal, landed.url);
    const principalResponses = await propfind({
      url: principalUrl,
      depth: '0',
      props: { 'c:calendar-home-set': {} },
      fetch: this.fetchFor({ what, accept: [207, 404] }),
    });
    const principalHome = principalResponses.map((r) => hrefOf(propsOf(r)?.calendarHomeSet)).find((h) => h !== null);
    return principalHome ? { kind: 'home', url: resolveHref(principalHome, principalUrl) } : null;
  }

  async listCalendars(): Promise<RemoteCalendar[]> {
    const found = await this.discover();
    const responses = await propfind({
      url: found.url,
      depth: found.kind === 'home' ? '1' : '0',
      props: {
        'd:resourcetype': {},
        'd:displayname': {},
        'd:current-user-privilege-set': {},
        'c:supported-calendar-component-set': {},
      },
      fetch: this.fetchFor({ what: 'listing the calendars', accept: [207] }),
    });
    const calendars: RemoteCalendar[] = [];
    for (const response of responses) {
      const props = propsOf(response);
      if (!props || !response.href || !isCalendarCollection(props) || !supportsEvents(props)) continue;
      const id = resolveHref(response.href, found.url);
      calendars.push({ id, name: calendarName(props, id), primary: calendars.length === 0, canWrite: canWriteFrom(props) });
    }
    return calendars;
  }

  async syncCalendar(calendarId: string, cursor: string | null, window: SyncWindow): Promise<SyncResult> {
    const url = this.absolute(calendarId);
    const state = cursor === null ? null : readCursor(cursor);
    if (state && covers(state, window)) {
      if (state.token !== null) {
        const responses = await syncCollection({
          url,
          props: { 'd:getetag': {} },
          syncLevel: 1,
          syncToken: state.token,
          fetch: this.fetchFor({ what: 'checking the calendar for changes', accept: [207], sync: true }),
        });
        const changed = responses.some((r) => typeof r.href === 'string' && !sameResource(resolveHref(r.href, url), url));
        if (!changed) {
          const token = textOf(fieldOf(fieldOf(responses[0]?.raw, 'multistatus'), 'syncToken')) ?? state.token;
          return { full: false, events: [], removed: [], cursor: JSON.stringify({ ...state, token }) };
        }
      } else if (state.ctag !== null) {
        const props = await this.collectionProps(url);
        if (textOf(props.getctag) === state.ctag) return { full: false, events: [], removed: [], cursor };
      }
    }
    return this.fullSync(url, window);
  }

  private async collectionProps(url: string): Promise<Record<string, unknown>> {
    const responses = await propfind({
      url,
      depth: '0',
      props: { 'd:resourcetype': {}, 'cs:getctag': {}, 'd:sync-token': {}, 'c:calendar-timezone': {} },
      fetch: this.fetchFor({ what: 'reading the calendar', accept: [207] }),
    });
    const props = responses.map(propsOf).find((p) => p !== null);
    if (!props || !isCalendarCollection(props)) throw new ProviderError(`${url} is not a CalDAV calendar`, null);
    return props;
  }

  private async fullSync(url: string, window: SyncWindow): Promise<SyncResult> {
    // The token or ctag is read before the events, so a change made in between shows next time.
    const props = await this.collectionProps(url);
    const token = textOf(props.syncToken);
    const ctag = textOf(props.getctag);
    const fallbackZone = calendarTimezone(textOf(props.calendarTimezone)) ?? { iana: isIanaZone(window.zone) ? window.zone : 'UTC' };
    const from = window.from.getTime();
    const to = window.to.getTime();
    // The server places all-day and floating events by its own zone (UTC unless told): ask for a
    // day more on each side, and cut precisely here.
    const responses = await calendarQuery({
      url,
      depth: '1',
      props: { 'd:getetag': {}, 'c:calendar-data': {} },
      filters: {
        'comp-filter': {
          _attributes: { name: 'VCALENDAR' },
          'comp-filter': {
            _attributes: { name: 'VEVENT' },
            'time-range': { _attributes: { start: icalUtc(from - DAY_MS), end: icalUtc(to + DAY_MS) } },
          },
        },
      },
      fetch: this.fetchFor({ what: 'reading the events', accept: [207] }),
    });
    const events = new Map<string, BusyEvent>();
    for (const response of responses) {
      const data = textOf(propsOf(response)?.calendarData);
      if (!data) continue;
      let found: BusyEvent[];
      try {
        found = busyOccurrences(data, { from, to, fallbackZone, userAddress: this.userAddress });
      } catch {
        // One object the parser cannot read must not stop the calendar's other busy time.
        continue;
      }
      for (const event of found) if (!events.has(event.key)) events.set(event.key, event);
    }
    const state: CursorState = { v: 1, token, ctag, from: window.from.toISOString(), to: window.to.toISOString(), zone: window.zone };
    return { full: true, events: [...events.values()], removed: [], cursor: token === null && ctag === null ? null : JSON.stringify(state) };
  }

  async putEvent(calendarId: string, eventId: string | null, write: EventWrite): Promise<string> {
    const calendar = collectionUrl(this.absolute(calendarId));
    // The object's name follows from the appointment, so a retry after a crash (eventId null)
    // overwrites the object it made before instead of adding a second one.
    const own = new URL(`${OWN_UID_PREFIX}${encodeURIComponent(write.appointmentId)}.ics`, calendar).href;
    const given = eventId === null ? null : this.absolute(eventId);
    const target = given && given.startsWith(calendar) ? given : own;
    // An object keeps its UID for life (servers answer 409 to a PUT that changes it); the core
    // keys a rescheduled appointment's event on the chain's first appointment, so it never does.
    await createObject({
      url: target,
      data: appointmentObject(write),
      headers: { 'content-type': 'text/calendar; charset=utf-8' },
      fetch: this.fetchFor({ what: 'writing the event', accept: [200, 201, 204] }),
    });
    return target;
  }

  async deleteEvent(calendarId: string, eventId: string): Promise<void> {
    const url = new URL(eventId, collectionUrl(this.absolute(calendarId))).href;
    await deleteObject({ url, fetch: this.fetchFor({ what: 'deleting the event', accept: [200, 202, 204, 404, 410] }) });
  }

  /** The object putEvent makes for an appointment is named after it. */
  deleteAppointmentEvent(calendarId: string, appointmentId: string): Promise<void> {
    return this.deleteEvent(calendarId, `${OWN_UID_PREFIX}${encodeURIComponent(appointmentId)}.ics`);
  }
}
