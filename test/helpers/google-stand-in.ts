import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createHash, randomBytes } from 'node:crypto';
import { DateTime } from 'luxon';

// A local stand-in of Google's OAuth 2.0 endpoints and Calendar API v3, on 127.0.0.1 and a random
// port, speaking Google's REST shapes: the consent page (auto-consents), the token endpoint with
// PKCE (S256 and plain), revocation, the calendar list and events (list with page and sync tokens,
// recurring events expanded with singleEvents, insert, get, patch, update, delete). Tests edit
// calendars directly (addEvent, updateEvent, deleteEvent) and inject failures and hangs.
//
// Storage is one Map of events per calendar in insertion order; a list walks it once and keeps
// the result for its page tokens, so 5,000 events cost one pass per sync, not one per page.

export interface GoogleDateTime {
  date?: string;
  dateTime?: string;
  timeZone?: string;
}

export interface GoogleAttendee {
  email: string;
  self?: boolean;
  organizer?: boolean;
  responseStatus?: 'needsAction' | 'declined' | 'tentative' | 'accepted';
}

/** An event resource as Google stores and returns it (fields beyond these are kept as given). */
export interface GoogleEvent {
  id: string;
  status?: 'confirmed' | 'tentative' | 'cancelled';
  summary?: string;
  description?: string;
  start?: GoogleDateTime;
  end?: GoogleDateTime;
  /** RRULE (FREQ=DAILY|WEEKLY, INTERVAL, COUNT, UNTIL, BYDAY) and EXDATE lines. */
  recurrence?: string[];
  recurringEventId?: string;
  originalStartTime?: GoogleDateTime;
  transparency?: 'opaque' | 'transparent';
  eventType?: string;
  attendees?: GoogleAttendee[];
  extendedProperties?: { private?: Record<string, string>; shared?: Record<string, string> };
  [field: string]: unknown;
}

export interface GoogleCalendarInit {
  id: string;
  summary?: string;
  /** Default UTC. null: answers carry no timeZone (the stand-in itself then reads dates in UTC). */
  timeZone?: string | null;
  accessRole?: 'owner' | 'writer' | 'reader' | 'freeBusyReader';
  primary?: boolean;
}

export interface RecordedRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  body: string;
  authorization: string | null;
}

export interface FailRule {
  status: number;
  retryAfterSeconds?: number;
  /** How many requests fail (default 1). */
  times?: number;
  /** Only requests whose path and query contain this. */
  pathIncludes?: string;
}

export interface HangRule {
  /** The answer is held this long (the request is then answered as usual, if anyone still waits). */
  ms: number;
  pathIncludes?: string;
}

export interface GoogleStandInOptions {
  /** The primary calendar's id (the user's address) and zone. */
  userEmail?: string;
  timeZone?: string;
  /** Caps every page (Google may return fewer items than maxResults), so paging shows with few events. */
  maxPageSize?: number | null;
  /** Lifetime of access tokens (default 3599 s, as Google). */
  accessTokenSeconds?: number;
  /** 'deny': the consent page answers ?error=access_denied. Changeable later through `consent`. */
  consent?: 'grant' | 'deny';
  /**
   * Scopes the user granted this client before; with include_granted_scopes=true they join the new
   * grant. With `openid` among the scopes, token answers carry an ID token, as Google's do.
   */
  previouslyGrantedScopes?: string[];
}

export interface GoogleStandIn {
  urls: { authUrl: string; tokenUrl: string; apiUrl: string; revokeUrl: string };
  clientId: string;
  clientSecret: string;
  /** The primary calendar's id. */
  primaryCalendarId: string;
  consent: 'grant' | 'deny';
  /** As the options; may be changed between calls. */
  maxPageSize: number | null;
  previouslyGrantedScopes: string[];
  requests: RecordedRequest[];
  addCalendar(calendar: GoogleCalendarInit): void;
  /** Adds an event (an id is made when none is given); returns its id. */
  addEvent(calendarId: string, event: Omit<GoogleEvent, 'id'> & { id?: string }): string;
  /** Patch semantics (objects merge, arrays and values replace, null removes); an occurrence id makes an exception. */
  updateEvent(calendarId: string, eventId: string, patch: Partial<GoogleEvent>): void;
  /** Cancels the event (a tombstone remains, as in Google); an occurrence id cancels that occurrence. */
  deleteEvent(calendarId: string, eventId: string): void;
  /** Stored events, cancelled ones included (check `status`); recurring events unexpanded. */
  events(calendarId: string): GoogleEvent[];
  /** Revokes one grant by its refresh or access token, or every grant. */
  revokeGrant(token?: string): void;
  /** Every sync token issued so far is answered 410 on its next use. */
  expireSyncTokens(): void;
  failNext(rule: FailRule): void;
  hangNext(rule: HangRule): void;
  close(): Promise<void>;
}

const SCOPE_FULL = 'https://www.googleapis.com/auth/calendar';
const READ_CALENDAR_LIST = [SCOPE_FULL, `${SCOPE_FULL}.readonly`, `${SCOPE_FULL}.calendarlist`, `${SCOPE_FULL}.calendarlist.readonly`];
const READ_EVENTS = [SCOPE_FULL, `${SCOPE_FULL}.readonly`, `${SCOPE_FULL}.events`, `${SCOPE_FULL}.events.readonly`];
const WRITE_EVENTS = [SCOPE_FULL, `${SCOPE_FULL}.events`];
/** Occurrences made of one recurring event at most (an endless rule stops here, about three years daily). */
const MAX_OCCURRENCES = 1000;
const EVENT_ID = /^[a-v0-9]{5,1024}$/;
/** Page walks remembered for their next page tokens. */
const MAX_PAGE_STATES = 1000;

interface Entry {
  event: GoogleEvent;
  changedAt: number;
  created: string;
  updated: string;
  /** A tombstone we made for an occurrence a series edit took away; dropped if the occurrence returns. */
  synthetic?: boolean;
}

interface Calendar {
  id: string;
  summary: string;
  timeZone: string;
  reportsZone: boolean;
  accessRole: NonNullable<GoogleCalendarInit['accessRole']>;
  primary: boolean;
  entries: Map<string, Entry>;
}

interface Grant {
  refreshToken: string | null;
  scopes: string[];
  revoked: boolean;
}

interface AuthCode {
  clientId: string;
  redirectUri: string;
  challenge: string | null;
  method: string;
  scopes: string[];
  offline: boolean;
  expiresAt: number;
}

interface SyncState {
  calendarId: string;
  version: number;
  epoch: number;
  lo: number;
  hi: number;
  singleEvents: boolean;
}

interface PageState {
  items: unknown[];
  offset: number;
  pageSize: number;
  /** Issued with the last page: the sync token of the walk's first moment. */
  syncToken: string | null;
}

/** A Google API error, thrown by handlers and written by the dispatcher. */
class ApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly reason: string,
    message: string,
    readonly googleStatus?: string,
  ) {
    super(message);
  }
}

const token = (prefix: string) => `${prefix}${randomBytes(24).toString('base64url')}`;
const clone = <T>(value: T): T => structuredClone(value);
const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Google's patch: nested objects merge, everything else replaces, null removes. */
function merge(target: Record<string, unknown>, patch: Record<string, unknown>): void {
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete target[key];
    else if (isObject(value) && isObject(target[key])) merge(target[key] as Record<string, unknown>, value);
    else target[key] = clone(value);
  }
}

// ---------------------------------------------------------------------------------------------
// Times and recurrence

/** Start and end instants (ms) of a start/end pair; all-day dates in the event's zone, else the calendar's. */
function instants(event: Pick<GoogleEvent, 'start' | 'end'>, calendarZone: string): [number, number] | null {
  const { start, end } = event;
  if (!start || !end) return null;
  if (start.date && end.date) {
    const zone = start.timeZone ?? calendarZone;
    return [DateTime.fromISO(start.date, { zone }).startOf('day').toMillis(), DateTime.fromISO(end.date, { zone }).startOf('day').toMillis()];
  }
  if (!start.dateTime || !end.dateTime) return null;
  const from = DateTime.fromISO(start.dateTime, { zone: start.timeZone ?? calendarZone });
  const to = DateTime.fromISO(end.dateTime, { zone: end.timeZone ?? calendarZone });
  return from.isValid && to.isValid ? [from.toMillis(), to.toMillis()] : null;
}

function checkTimes(event: GoogleEvent, calendarZone: string): void {
  const range = instants(event, calendarZone);
  if (!range) throw new ApiFailure(400, 'required', 'Missing end time.');
  if (range[1] < range[0]) throw new ApiFailure(400, 'timeRangeEmpty', 'The specified time range is empty.');
}

const WEEKDAYS: Record<string, number> = { MO: 1, TU: 2, WE: 3, TH: 4, FR: 5, SA: 6, SU: 7 };

interface Occurrence {
  id: string;
  start: DateTime;
  /** All-day occurrences: their first and (exclusive) last date. */
  allDay: boolean;
  endDate?: string;
  durationMs: number;
}

/** A recurring event's occurrences, in its start zone, by RRULE FREQ=DAILY|WEEKLY with INTERVAL, COUNT, UNTIL, BYDAY and EXDATE. */
function occurrences(master: GoogleEvent, calendarZone: string): Occurrence[] {
  const rule = master.recurrence?.find((line) => line.startsWith('RRULE:'));
  if (!rule || !master.start || !master.end) return [];
  const parts = new Map(rule.slice('RRULE:'.length).split(';').map((part) => part.split('=') as [string, string]));
  const freq = parts.get('FREQ');
  if (freq !== 'DAILY' && freq !== 'WEEKLY') throw new ApiFailure(400, 'invalid', `Unsupported recurrence in the stand-in: ${rule}`);
  const interval = Number(parts.get('INTERVAL') ?? '1');
  const count = parts.has('COUNT') ? Number(parts.get('COUNT')) : Infinity;
  const byDay = parts.get('BYDAY')?.split(',').map((day) => WEEKDAYS[day.slice(-2)] ?? 0);

  const allDay = master.start.date !== undefined;
  const zone = master.start.timeZone ?? calendarZone;
  const first = allDay
    ? DateTime.fromISO(master.start.date ?? '', { zone })
    : DateTime.fromISO(master.start.dateTime ?? '', { zone: master.start.timeZone ?? calendarZone }).setZone(zone);
  if (!first.isValid) throw new ApiFailure(400, 'invalid', 'Invalid start time.');
  const range = instants(master, calendarZone);
  const durationMs = range ? range[1] - range[0] : 0;
  const durationDays = allDay ? DateTime.fromISO(master.end.date ?? '').diff(DateTime.fromISO(master.start.date ?? ''), 'days').days : 0;

  const untilText = parts.get('UNTIL');
  let until = Infinity;
  if (untilText) {
    const utc = /Z$/.test(untilText);
    const parsed = untilText.includes('T')
      ? DateTime.fromFormat(untilText.replace(/Z$/, ''), "yyyyMMdd'T'HHmmss", { zone: utc ? 'UTC' : zone })
      : DateTime.fromFormat(untilText, 'yyyyMMdd', { zone }).endOf('day');
    until = parsed.toMillis();
  }
  const excluded = new Set<number>();
  for (const line of master.recurrence ?? []) {
    const match = /^EXDATE(?:;TZID=([^:;]+))?(?:;VALUE=DATE)?:(.+)$/.exec(line);
    if (!match) continue;
    for (const value of (match[2] ?? '').split(',')) {
      const exZone = value.endsWith('Z') ? 'UTC' : (match[1] ?? zone);
      const parsed = value.includes('T')
        ? DateTime.fromFormat(value.replace(/Z$/, ''), "yyyyMMdd'T'HHmmss", { zone: exZone })
        : DateTime.fromFormat(value, 'yyyyMMdd', { zone });
      if (parsed.isValid) excluded.add(allDay ? parsed.startOf('day').toMillis() : parsed.toMillis());
    }
  }

  const result: Occurrence[] = [];
  const firstDay = DateTime.fromObject({ year: first.year, month: first.month, day: first.day }, { zone: 'UTC' });
  const firstWeek = firstDay.minus({ days: firstDay.weekday - 1 });
  let generated = 0;
  // Walk the calendar days (as UTC dates, so DST never shifts the walk), making each matching
  // day's wall-clock start in the event's zone; Luxon moves a skipped time forward.
  for (let day = firstDay; generated < count && generated < MAX_OCCURRENCES; day = day.plus({ days: 1 })) {
    const dayIndex = Math.round(day.diff(firstDay, 'days').days);
    if (dayIndex > 366 * 30) break;
    const matches =
      freq === 'DAILY'
        ? dayIndex % interval === 0 && (!byDay || byDay.includes(day.weekday))
        : Math.floor(Math.round(day.diff(firstWeek, 'days').days) / 7) % interval === 0 && (byDay ?? [first.weekday]).includes(day.weekday);
    if (!matches) continue;
    const start = allDay
      ? DateTime.fromObject({ year: day.year, month: day.month, day: day.day }, { zone })
      : DateTime.fromObject({ year: day.year, month: day.month, day: day.day, hour: first.hour, minute: first.minute, second: first.second }, { zone });
    if (start.toMillis() > until) break;
    generated += 1;
    if (excluded.has(start.toMillis())) continue;
    const suffix = allDay ? start.toFormat('yyyyMMdd') : start.toUTC().toFormat("yyyyMMdd'T'HHmmss'Z'");
    result.push({
      id: `${master.id}_${suffix}`,
      start,
      allDay,
      ...(allDay ? { endDate: day.plus({ days: durationDays }).toISODate() ?? '' } : {}),
      durationMs,
    });
  }
  return result;
}

/** One occurrence as the event resource Google returns with singleEvents=true. */
function occurrenceEvent(master: GoogleEvent, occurrence: Occurrence): GoogleEvent {
  const { recurrence: _recurrence, ...rest } = clone(master);
  const zone = occurrence.start.zoneName ?? 'UTC';
  const when = (at: DateTime): GoogleDateTime => ({ dateTime: at.toISO({ suppressMilliseconds: true }) ?? '', timeZone: zone });
  const startDate = occurrence.start.toISODate() ?? '';
  const allDayStart: GoogleDateTime = { date: startDate, ...(master.start?.timeZone ? { timeZone: master.start.timeZone } : {}) };
  return {
    ...rest,
    id: occurrence.id,
    recurringEventId: master.id,
    originalStartTime: occurrence.allDay ? allDayStart : when(occurrence.start),
    start: occurrence.allDay ? allDayStart : when(occurrence.start),
    end: occurrence.allDay
      ? { date: occurrence.endDate ?? startDate, ...(master.end?.timeZone ? { timeZone: master.end.timeZone } : {}) }
      : when(occurrence.start.plus({ milliseconds: occurrence.durationMs })),
  };
}

// ---------------------------------------------------------------------------------------------
// The server

export async function startGoogleStandIn(options: GoogleStandInOptions = {}): Promise<GoogleStandIn> {
  const clientId = `${randomBytes(6).toString('hex')}-standin.apps.googleusercontent.com`;
  const clientSecret = token('GOCSPX-');
  const userEmail = options.userEmail ?? 'user@example.com';
  const accessTokenSeconds = options.accessTokenSeconds ?? 3599;
  const calendars = new Map<string, Calendar>();
  const codes = new Map<string, AuthCode>();
  const grants = new Set<Grant>();
  const accessTokens = new Map<string, { grant: Grant; expiresAt: number }>();
  const syncTokens = new Map<string, SyncState>();
  const pages = new Map<string, PageState>();
  const failRules: (FailRule & { times: number })[] = [];
  const hangRules: HangRule[] = [];
  const timers = new Set<NodeJS.Timeout>();
  let version = 0;
  let epoch = 0;

  const calendarOf = (id: string): Calendar => {
    const found = id === 'primary' ? [...calendars.values()].find((c) => c.primary) : calendars.get(id);
    if (!found) throw new ApiFailure(404, 'notFound', 'Not Found');
    return found;
  };

  const touch = (calendar: Calendar, event: GoogleEvent, previous?: Entry): Entry => {
    version += 1;
    const now = new Date().toISOString();
    const entry: Entry = { event, changedAt: version, created: previous?.created ?? now, updated: now };
    calendar.entries.set(event.id, entry);
    return entry;
  };

  /** A stored event, or an occurrence of a stored recurring event made into an exception. */
  const findForChange = (calendar: Calendar, eventId: string): Entry | null => {
    const stored = calendar.entries.get(eventId);
    if (stored && !stored.synthetic) return stored;
    const cut = eventId.lastIndexOf('_');
    const master = cut > 0 ? calendar.entries.get(eventId.slice(0, cut)) : undefined;
    if (!master?.event.recurrence || master.event.status === 'cancelled') return null;
    const occurrence = occurrences(master.event, calendar.timeZone).find((o) => o.id === eventId);
    if (!occurrence) return null;
    return touch(calendar, occurrenceEvent(master.event, occurrence), master);
  };

  /** After a series changed: occurrences it no longer has get tombstones, returning ones lose theirs. */
  const reconcileSeries = (calendar: Calendar, before: GoogleEvent, after: GoogleEvent) => {
    const kept = new Set(after.status === 'cancelled' ? [] : occurrences(after, calendar.timeZone).map((o) => o.id));
    for (const id of kept) if (calendar.entries.get(id)?.synthetic) calendar.entries.delete(id);
    if (after.status === 'cancelled') {
      // A deleted series takes its exceptions with it.
      for (const entry of [...calendar.entries.values()]) {
        if (entry.event.recurringEventId === before.id && entry.event.status !== 'cancelled') touch(calendar, { ...entry.event, status: 'cancelled' }, entry);
      }
      return;
    }
    for (const occurrence of occurrences(before, calendar.timeZone)) {
      if (kept.has(occurrence.id) || calendar.entries.has(occurrence.id)) continue;
      const tombstone = touch(calendar, { id: occurrence.id, status: 'cancelled', recurringEventId: before.id, originalStartTime: occurrenceEvent(before, occurrence).originalStartTime });
      tombstone.synthetic = true;
    }
  };

  const changeEvent = (calendar: Calendar, eventId: string, patch: Record<string, unknown>, replace = false): Entry => {
    const entry = findForChange(calendar, eventId);
    if (!entry) throw new ApiFailure(404, 'notFound', 'Not Found');
    const before = clone(entry.event);
    const next: GoogleEvent = replace ? ({ id: eventId, ...clone(patch) } as GoogleEvent) : clone(entry.event);
    if (!replace) merge(next, patch);
    next.id = eventId;
    if (next.status !== 'cancelled') checkTimes(next, calendar.timeZone);
    const updated = touch(calendar, next, entry);
    if (before.recurrence || next.recurrence) reconcileSeries(calendar, before, next);
    return updated;
  };

  const cancelEvent = (calendar: Calendar, eventId: string): void => {
    const entry = findForChange(calendar, eventId);
    if (!entry) throw new ApiFailure(404, 'notFound', 'Not Found');
    if (entry.event.status === 'cancelled') throw new ApiFailure(410, 'deleted', 'Resource has been deleted');
    const before = clone(entry.event);
    touch(calendar, { ...entry.event, status: 'cancelled' }, entry);
    if (before.recurrence) reconcileSeries(calendar, before, { ...before, status: 'cancelled' });
  };

  const insertEvent = (calendar: Calendar, event: GoogleEvent): Entry => {
    if (!EVENT_ID.test(event.id)) throw new ApiFailure(400, 'invalid', 'Invalid resource id value.');
    if (calendar.entries.has(event.id) && !calendar.entries.get(event.id)?.synthetic) {
      throw new ApiFailure(409, 'duplicate', 'The requested identifier already exists.');
    }
    checkTimes(event, calendar.timeZone);
    if (event.recurrence) occurrences(event, calendar.timeZone);
    return touch(calendar, { status: 'confirmed', eventType: 'default', ...clone(event) });
  };

  /** The resource as returned: Google's bookkeeping fields added; a tombstone carries only its identity. */
  const present = (calendar: Calendar, entry: Entry | null, event: GoogleEvent): GoogleEvent => {
    const etag = `"${entry?.changedAt ?? version}"`;
    if (event.status === 'cancelled') {
      return {
        kind: 'calendar#event',
        etag,
        id: event.id,
        status: 'cancelled',
        ...(event.recurringEventId ? { recurringEventId: event.recurringEventId, originalStartTime: event.originalStartTime } : {}),
      };
    }
    return {
      kind: 'calendar#event',
      etag,
      htmlLink: `https://www.google.com/calendar/event?eid=${Buffer.from(`${event.id} ${calendar.id}`).toString('base64url')}`,
      created: entry?.created,
      updated: entry?.updated,
      creator: { email: userEmail },
      organizer: { email: calendar.id, self: true },
      iCalUID: `${event.recurringEventId ?? event.id}@google.com`,
      sequence: 0,
      ...clone(event),
    };
  };

  const listEvents = (calendar: Calendar, query: { lo: number; hi: number; singleEvents: boolean; showDeleted: boolean; since: number | null }): GoogleEvent[] => {
    const items: GoogleEvent[] = [];
    const incremental = query.since !== null;
    // Google: timeMin bounds the end (exclusive), timeMax the start (exclusive).
    const overlaps = (range: [number, number] | null) =>
      range !== null && range[0] < query.hi && (range[1] > query.lo || (range[0] === range[1] && range[0] >= query.lo));
    for (const entry of calendar.entries.values()) {
      if (incremental && entry.changedAt <= (query.since ?? 0)) continue;
      const event = entry.event;
      const cancelled = event.status === 'cancelled';
      if (cancelled && !incremental && !query.showDeleted) continue;
      if (event.recurrence) {
        // A series' occurrences in the query's range (a sync token keeps the range of its first walk).
        const inRange: GoogleEvent[] = [];
        for (const occurrence of occurrences(event, calendar.timeZone)) {
          if (calendar.entries.has(occurrence.id)) continue;
          const instance = occurrenceEvent(event, occurrence);
          if (overlaps(instants(instance, calendar.timeZone))) inRange.push(instance);
        }
        if (query.singleEvents) {
          for (const instance of inRange) items.push(present(calendar, entry, cancelled ? { ...instance, status: 'cancelled' } : instance));
        } else if (incremental || inRange.length > 0) {
          items.push(present(calendar, entry, event));
        }
        continue;
      }
      if (!incremental) {
        const range = instants(event, calendar.timeZone) ?? instants({ start: event.originalStartTime, end: event.originalStartTime }, calendar.timeZone);
        if (range && !overlaps(range)) continue;
      }
      items.push(present(calendar, entry, event));
    }
    return items;
  };

  // --- HTTP ---------------------------------------------------------------------------------

  const json = (response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    const text = JSON.stringify(body);
    response.writeHead(status, { 'content-type': 'application/json; charset=UTF-8', 'content-length': Buffer.byteLength(text), ...headers });
    response.end(text);
  };
  const apiError = (response: ServerResponse, failure: ApiFailure, headers: Record<string, string> = {}) => {
    const statusNames: Record<number, string> = { 400: 'INVALID_ARGUMENT', 401: 'UNAUTHENTICATED', 403: 'PERMISSION_DENIED', 404: 'NOT_FOUND', 409: 'ALREADY_EXISTS', 410: 'GONE', 429: 'RESOURCE_EXHAUSTED', 500: 'INTERNAL', 503: 'UNAVAILABLE' };
    json(
      response,
      failure.status,
      {
        error: {
          code: failure.status,
          message: failure.message,
          errors: [{ domain: failure.status === 429 ? 'usageLimits' : 'global', reason: failure.reason, message: failure.message }],
          status: failure.googleStatus ?? statusNames[failure.status] ?? 'UNKNOWN',
        },
      },
      headers,
    );
  };
  const oauthError = (response: ServerResponse, status: number, error: string, description: string) => json(response, status, { error, error_description: description });
  const page = (response: ServerResponse, status: number, text: string) => {
    response.writeHead(status, { 'content-type': 'text/html; charset=utf-8' });
    response.end(`<!doctype html><title>Error</title><p>${text.replace(/[<&]/g, '')}</p>`);
  };

  const authorize = (response: ServerResponse, query: URLSearchParams) => {
    const redirectUri = query.get('redirect_uri');
    if (query.get('client_id') !== clientId) return page(response, 401, 'Error 401: invalid_client. The OAuth client was not found.');
    if (!redirectUri || !/^https?:\/\//.test(redirectUri)) return page(response, 400, 'Error 400: redirect_uri_mismatch');
    if (query.get('response_type') !== 'code') return page(response, 400, 'Error 400: unsupported_response_type');
    const asked = (query.get('scope') ?? '').split(' ').filter(Boolean);
    const earlier = query.get('include_granted_scopes') === 'true' ? standIn.previouslyGrantedScopes : [];
    const scopes = [...new Set([...earlier, ...asked])];
    if (asked.length === 0) return page(response, 400, 'Error 400: invalid_request. Missing required parameter: scope');
    const challenge = query.get('code_challenge');
    const method = query.get('code_challenge_method') ?? 'plain';
    if (challenge !== null && method !== 'S256' && method !== 'plain') return page(response, 400, 'Error 400: invalid_request. Invalid code_challenge_method');
    const target = new URL(redirectUri);
    const state = query.get('state');
    if (standIn.consent === 'deny') {
      target.searchParams.set('error', 'access_denied');
    } else {
      const code = token('4/0A');
      codes.set(code, { clientId, redirectUri, challenge, method, scopes, offline: query.get('access_type') === 'offline', expiresAt: Date.now() + 10 * 60_000 });
      target.searchParams.set('code', code);
      target.searchParams.set('scope', scopes.join(' '));
    }
    if (state !== null) target.searchParams.set('state', state);
    response.writeHead(302, { location: target.href });
    response.end();
  };

  const issueAccessToken = (grant: Grant) => {
    const accessToken = token('ya29.');
    accessTokens.set(accessToken, { grant, expiresAt: Date.now() + accessTokenSeconds * 1000 });
    return accessToken;
  };

  /** An ID token shaped like Google's (iss in its short spelling); its signature is not a real one. */
  const idToken = () => {
    const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const now = Math.floor(Date.now() / 1000);
    const claims = { iss: 'accounts.google.com', azp: clientId, aud: clientId, sub: '110169484474386276334', email: userEmail, email_verified: true, iat: now, exp: now + 3600 };
    return `${part({ alg: 'RS256', kid: 'stand-in', typ: 'JWT' })}.${part(claims)}.${randomBytes(64).toString('base64url')}`;
  };
  const withIdToken = (grant: Grant) => (grant.scopes.includes('openid') ? { id_token: idToken() } : {});

  const tokenEndpoint = (request: IncomingMessage, response: ServerResponse, raw: string) => {
    const form = new URLSearchParams(raw);
    let id = form.get('client_id');
    let secret = form.get('client_secret');
    const basic = /^Basic (.+)$/i.exec(request.headers.authorization ?? '');
    if (basic) {
      const [user, pass] = Buffer.from(basic[1] ?? '', 'base64').toString('utf8').split(':').map((part) => decodeURIComponent(part));
      id = user ?? null;
      secret = pass ?? null;
    }
    if (id !== clientId || secret !== clientSecret) return oauthError(response, 401, 'invalid_client', 'Unauthorized');
    const grantType = form.get('grant_type');
    if (grantType === 'authorization_code') {
      const code = codes.get(form.get('code') ?? '');
      // A code is spent by any attempt, right or wrong.
      codes.delete(form.get('code') ?? '');
      if (!code || code.expiresAt < Date.now()) return oauthError(response, 400, 'invalid_grant', 'Malformed auth code.');
      if (form.get('redirect_uri') !== code.redirectUri) return oauthError(response, 400, 'redirect_uri_mismatch', 'Bad Request');
      if (code.challenge !== null) {
        const verifier = form.get('code_verifier');
        if (!verifier) return oauthError(response, 400, 'invalid_grant', 'Missing code verifier.');
        const expected = code.method === 'S256' ? createHash('sha256').update(verifier).digest('base64url') : verifier;
        if (!/^[A-Za-z0-9\-._~]{43,128}$/.test(verifier) || expected !== code.challenge) return oauthError(response, 400, 'invalid_grant', 'Invalid code verifier.');
      }
      const grant: Grant = { refreshToken: code.offline ? token('1//') : null, scopes: code.scopes, revoked: false };
      grants.add(grant);
      return json(response, 200, {
        access_token: issueAccessToken(grant),
        expires_in: accessTokenSeconds,
        ...(grant.refreshToken ? { refresh_token: grant.refreshToken } : {}),
        scope: grant.scopes.join(' '),
        token_type: 'Bearer',
        ...withIdToken(grant),
      });
    }
    if (grantType === 'refresh_token') {
      const grant = [...grants].find((g) => g.refreshToken !== null && g.refreshToken === form.get('refresh_token'));
      if (!grant || grant.revoked) return oauthError(response, 400, 'invalid_grant', 'Token has been expired or revoked.');
      return json(response, 200, {
        access_token: issueAccessToken(grant),
        expires_in: accessTokenSeconds,
        scope: grant.scopes.join(' '),
        token_type: 'Bearer',
        ...withIdToken(grant),
      });
    }
    return oauthError(response, 400, 'unsupported_grant_type', `Invalid grant_type: ${grantType ?? ''}`);
  };

  const grantOf = (value: string): Grant | undefined => accessTokens.get(value)?.grant ?? [...grants].find((g) => g.refreshToken === value);

  const revokeEndpoint = (response: ServerResponse, query: URLSearchParams, raw: string) => {
    const value = query.get('token') ?? new URLSearchParams(raw).get('token') ?? '';
    const grant = grantOf(value);
    if (!grant || grant.revoked) return oauthError(response, 400, 'invalid_token', 'Token expired or revoked');
    grant.revoked = true;
    json(response, 200, {});
  };

  const requireScope = (grant: Grant, allowed: string[]) => {
    if (!grant.scopes.some((scope) => allowed.includes(scope))) {
      throw new ApiFailure(403, 'insufficientPermissions', 'Request had insufficient authentication scopes.', 'PERMISSION_DENIED');
    }
  };

  const listPage = (response: ServerResponse, state: PageState, extra: Record<string, unknown>) => {
    const items = state.items.slice(state.offset, state.offset + state.pageSize);
    const nextOffset = state.offset + state.pageSize;
    let nextPageToken: string | undefined;
    if (nextOffset < state.items.length) {
      nextPageToken = token('');
      pages.set(nextPageToken, { ...state, offset: nextOffset });
      // Page tokens stay valid for retries; only the oldest walks are forgotten.
      if (pages.size > MAX_PAGE_STATES) pages.delete(pages.keys().next().value ?? '');
    }
    json(response, 200, { ...extra, etag: `"${version}"`, ...(nextPageToken ? { nextPageToken } : state.syncToken ? { nextSyncToken: state.syncToken } : {}), items });
  };

  const pageSize = (query: URLSearchParams, fallback: number, max: number) => {
    const asked = query.has('maxResults') ? Number(query.get('maxResults')) : fallback;
    if (!Number.isInteger(asked) || asked < 1) throw new ApiFailure(400, 'invalid', 'Invalid value for maxResults');
    return Math.min(asked, max, standIn.maxPageSize ?? Infinity);
  };

  const parseTime = (query: URLSearchParams, name: string, fallback: number) => {
    const value = query.get(name);
    if (value === null) return fallback;
    // RFC 3339 with a mandatory offset, as Google requires.
    if (!/(Z|[+-]\d\d:\d\d)$/i.test(value)) throw new ApiFailure(400, 'badRequest', 'Bad Request');
    const parsed = DateTime.fromISO(value, { setZone: true });
    if (!parsed.isValid) throw new ApiFailure(400, 'badRequest', 'Bad Request');
    return parsed.toMillis();
  };

  const eventsList = (response: ServerResponse, calendar: Calendar, query: URLSearchParams) => {
    const pageToken = query.get('pageToken');
    if (pageToken) {
      const state = pages.get(pageToken);
      if (!state) throw new ApiFailure(400, 'invalid', 'Invalid page token value.');
      return listPage(response, state, eventsHeader(calendar));
    }
    const size = pageSize(query, 250, 2500);
    const singleEvents = query.get('singleEvents') === 'true';
    const syncToken = query.get('syncToken');
    let lo: number, hi: number, since: number | null;
    if (syncToken !== null) {
      for (const forbidden of ['timeMin', 'timeMax', 'orderBy', 'q', 'iCalUID', 'updatedMin', 'privateExtendedProperty', 'sharedExtendedProperty']) {
        if (query.has(forbidden)) throw new ApiFailure(400, 'invalid', `The ${forbidden} parameter cannot be used together with syncToken.`);
      }
      const sync = syncTokens.get(syncToken);
      if (!sync || sync.calendarId !== calendar.id) throw new ApiFailure(400, 'invalid', 'Invalid sync token value.');
      if (sync.epoch !== epoch) throw new ApiFailure(410, 'fullSyncRequired', 'Sync token is no longer valid, a full sync is required.');
      if (sync.singleEvents !== singleEvents) throw new ApiFailure(400, 'invalid', 'singleEvents must match the request that issued the sync token.');
      ({ lo, hi } = sync);
      since = sync.version;
    } else {
      lo = parseTime(query, 'timeMin', -Infinity);
      hi = parseTime(query, 'timeMax', Infinity);
      if (hi <= lo) throw new ApiFailure(400, 'timeRangeEmpty', 'The specified time range is empty.');
      since = null;
    }
    // The token names this moment, so an edit made while the pages are walked comes next time.
    const nextSync = token('C');
    syncTokens.set(nextSync, { calendarId: calendar.id, version, epoch, lo, hi, singleEvents });
    const items = listEvents(calendar, { lo, hi, singleEvents, showDeleted: query.get('showDeleted') === 'true', since });
    listPage(response, { items, offset: 0, pageSize: size, syncToken: nextSync }, eventsHeader(calendar));
  };

  const eventsHeader = (calendar: Calendar) => ({
    kind: 'calendar#events',
    summary: calendar.summary,
    updated: new Date().toISOString(),
    ...(calendar.reportsZone ? { timeZone: calendar.timeZone } : {}),
    accessRole: calendar.accessRole,
    defaultReminders: [],
  });

  const calendarApi = (request: IncomingMessage, response: ServerResponse, path: string, query: URLSearchParams, raw: string) => {
    const bearer = /^Bearer (.+)$/i.exec(request.headers.authorization ?? '')?.[1];
    const access = bearer ? accessTokens.get(bearer) : undefined;
    if (!access || access.grant.revoked || access.expiresAt < Date.now()) {
      throw new ApiFailure(401, 'authError', 'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.', 'UNAUTHENTICATED');
    }
    const grant = access.grant;
    const method = request.method ?? 'GET';
    const body = (): Record<string, unknown> => {
      try {
        const parsed: unknown = JSON.parse(raw || '{}');
        if (isObject(parsed)) return parsed;
      } catch {
        // answered below
      }
      throw new ApiFailure(400, 'parseError', 'Parse Error');
    };
    const writable = (calendar: Calendar) => {
      requireScope(grant, WRITE_EVENTS);
      if (calendar.accessRole !== 'owner' && calendar.accessRole !== 'writer') throw new ApiFailure(403, 'requiredAccessLevel', 'You need to have writer access to this calendar.');
    };

    if (path === '/users/me/calendarList' && method === 'GET') {
      requireScope(grant, READ_CALENDAR_LIST);
      const pageToken = query.get('pageToken');
      const state = pageToken ? pages.get(pageToken) : undefined;
      if (pageToken && !state) throw new ApiFailure(400, 'invalid', 'Invalid page token value.');
      const items = [...calendars.values()].map((c) => ({
        kind: 'calendar#calendarListEntry',
        etag: `"${c.id}"`,
        id: c.id,
        summary: c.summary,
        ...(c.reportsZone ? { timeZone: c.timeZone } : {}),
        accessRole: c.accessRole,
        defaultReminders: [],
        ...(c.primary ? { primary: true } : {}),
      }));
      return listPage(response, state ?? { items, offset: 0, pageSize: pageSize(query, 100, 250), syncToken: null }, { kind: 'calendar#calendarList' });
    }
    const match = /^\/calendars\/([^/]+)\/events(?:\/([^/]+))?$/.exec(path);
    if (!match) throw new ApiFailure(404, 'notFound', 'Not Found');
    const calendar = calendarOf(decodeURIComponent(match[1] ?? ''));
    const eventId = match[2] === undefined ? undefined : decodeURIComponent(match[2]);
    if (eventId === undefined && method === 'GET') {
      requireScope(grant, READ_EVENTS);
      return eventsList(response, calendar, query);
    }
    if (eventId === undefined && method === 'POST') {
      writable(calendar);
      const event = body();
      const id = typeof event.id === 'string' ? event.id : randomBytes(13).toString('hex');
      const entry = insertEvent(calendar, { ...event, id } as GoogleEvent);
      return json(response, 200, present(calendar, entry, entry.event));
    }
    if (eventId === undefined) throw new ApiFailure(405, 'methodNotAllowed', 'Method Not Allowed');
    if (method === 'GET') {
      requireScope(grant, READ_EVENTS);
      const entry = calendar.entries.get(eventId);
      if (!entry || entry.synthetic) throw new ApiFailure(404, 'notFound', 'Not Found');
      return json(response, 200, present(calendar, entry, entry.event));
    }
    writable(calendar);
    if (method === 'PATCH' || method === 'PUT') {
      const entry = changeEvent(calendar, eventId, body(), method === 'PUT');
      return json(response, 200, present(calendar, entry, entry.event));
    }
    if (method === 'DELETE') {
      cancelEvent(calendar, eventId);
      response.writeHead(204);
      return response.end();
    }
    throw new ApiFailure(405, 'methodNotAllowed', 'Method Not Allowed');
  };

  const handle = (request: IncomingMessage, response: ServerResponse, raw: string) => {
    const url = new URL(request.url ?? '/', 'http://stand-in');
    const where = `${url.pathname}${url.search}`;
    const failIndex = failRules.findIndex((rule) => !rule.pathIncludes || where.includes(rule.pathIncludes));
    const failing = failIndex >= 0 ? failRules[failIndex] : undefined;
    if (failing) {
      failing.times -= 1;
      if (failing.times <= 0) failRules.splice(failIndex, 1);
      const headers: Record<string, string> = failing.retryAfterSeconds === undefined ? {} : { 'retry-after': String(failing.retryAfterSeconds) };
      const reason = failing.status === 429 ? 'rateLimitExceeded' : failing.status >= 500 ? 'backendError' : 'failed';
      return apiError(response, new ApiFailure(failing.status, reason, failing.status === 429 ? 'Rate Limit Exceeded' : 'Injected failure'), headers);
    }
    try {
      if (url.pathname === '/o/oauth2/v2/auth' && request.method === 'GET') return authorize(response, url.searchParams);
      if (url.pathname === '/token' && request.method === 'POST') return tokenEndpoint(request, response, raw);
      if (url.pathname === '/revoke' && request.method === 'POST') return revokeEndpoint(response, url.searchParams, raw);
      if (url.pathname.startsWith('/calendar/v3/')) return calendarApi(request, response, url.pathname.slice('/calendar/v3'.length), url.searchParams, raw);
      throw new ApiFailure(404, 'notFound', 'Not Found');
    } catch (error) {
      if (error instanceof ApiFailure) return apiError(response, error);
      return apiError(response, new ApiFailure(500, 'backendError', error instanceof Error ? error.message : String(error)));
    }
  };

  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const url = new URL(request.url ?? '/', 'http://stand-in');
      standIn.requests.push({ method: request.method ?? 'GET', path: url.pathname, query: url.searchParams, body: raw, authorization: request.headers.authorization ?? null });
      const where = `${url.pathname}${url.search}`;
      const hangIndex = hangRules.findIndex((rule) => !rule.pathIncludes || where.includes(rule.pathIncludes));
      if (hangIndex < 0) return handle(request, response, raw);
      const [hang] = hangRules.splice(hangIndex, 1);
      const timer = setTimeout(() => {
        timers.delete(timer);
        if (!response.destroyed) handle(request, response, raw);
      }, hang?.ms ?? 0);
      timers.add(timer);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  const base = `http://127.0.0.1:${port}`;

  const standIn: GoogleStandIn = {
    urls: { authUrl: `${base}/o/oauth2/v2/auth`, tokenUrl: `${base}/token`, apiUrl: `${base}/calendar/v3`, revokeUrl: `${base}/revoke` },
    clientId,
    clientSecret,
    primaryCalendarId: userEmail,
    consent: options.consent ?? 'grant',
    maxPageSize: options.maxPageSize ?? null,
    previouslyGrantedScopes: options.previouslyGrantedScopes ?? [],
    requests: [],
    addCalendar(init) {
      if (calendars.has(init.id)) throw new Error(`calendar ${init.id} exists`);
      calendars.set(init.id, {
        id: init.id,
        summary: init.summary ?? init.id,
        timeZone: init.timeZone ?? 'UTC',
        reportsZone: init.timeZone !== null,
        accessRole: init.accessRole ?? 'owner',
        primary: init.primary ?? false,
        entries: new Map(),
      });
    },
    addEvent(calendarId, event) {
      const calendar = calendarOf(calendarId);
      return insertEvent(calendar, { ...event, id: event.id ?? randomBytes(13).toString('hex') }).event.id;
    },
    updateEvent(calendarId, eventId, patch) {
      changeEvent(calendarOf(calendarId), eventId, patch);
    },
    deleteEvent(calendarId, eventId) {
      cancelEvent(calendarOf(calendarId), eventId);
    },
    events(calendarId) {
      return [...calendarOf(calendarId).entries.values()].filter((entry) => !entry.synthetic).map((entry) => clone(entry.event));
    },
    revokeGrant(value) {
      for (const grant of grants) if (value === undefined || grantOf(value) === grant) grant.revoked = true;
    },
    expireSyncTokens() {
      epoch += 1;
    },
    failNext(rule) {
      failRules.push({ ...rule, times: rule.times ?? 1 });
    },
    hangNext(rule) {
      hangRules.push(rule);
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const timer of timers) clearTimeout(timer);
        timers.clear();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
  standIn.addCalendar({ id: userEmail, summary: userEmail, timeZone: options.timeZone ?? 'UTC', accessRole: 'owner', primary: true });
  return standIn;
}
