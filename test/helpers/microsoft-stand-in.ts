import { createServer } from 'node:http';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { DateTime, IANAZone } from 'luxon';

// A local stand-in of the Microsoft identity platform (v2 authorize and token endpoints) and of
// the Microsoft Graph v1.0 calendar endpoints Slotwise uses, on 127.0.0.1 and a random port. It
// speaks the real shapes: PKCE S256, single-use codes, rotating refresh tokens, AADSTS errors,
// calendarView delta rounds with @odata.nextLink / @odata.deltaLink and @removed entries,
// recurring series expanded into occurrences with their own ids, transactionId idempotency.
// Test controls edit the mailbox from the "server side" and inject failures and hangs.

// ---------------------------------------------------------------------------------------------
// Shapes

export interface GraphDateTimeTimeZone {
  /** Wall time, for example 2026-03-09T09:00:00 (or a midnight for all-day events). */
  dateTime: string;
  /** IANA, or a Windows name the stand-in knows (see WINDOWS_ZONES). */
  timeZone: string;
}

export interface GraphRecurrence {
  pattern: {
    type: 'daily' | 'weekly';
    interval?: number;
    /** Weekly: sunday, monday, ... */
    daysOfWeek?: string[];
    firstDayOfWeek?: string;
  };
  range: {
    type: 'endDate' | 'numbered' | 'noEnd';
    /** YYYY-MM-DD, the first day of the series. */
    startDate: string;
    /** endDate: the last day an occurrence may fall on (inclusive). */
    endDate?: string;
    numberOfOccurrences?: number;
  };
}

/** An event as a test adds it, in Graph's own field names. */
export interface GraphEventInput {
  subject?: string;
  body?: { contentType: string; content: string };
  start: GraphDateTimeTimeZone;
  end: GraphDateTimeTimeZone;
  isAllDay?: boolean;
  isCancelled?: boolean;
  /** free, tentative, busy, oof, workingElsewhere, unknown (busy when absent). */
  showAs?: string;
  /** The mailbox owner's answer: organizer (default), accepted, tentativelyAccepted, declined, notResponded, none. */
  responseStatus?: { response: string };
  recurrence?: GraphRecurrence | null;
  /** Defaults to start.timeZone. */
  originalStartTimeZone?: string;
  transactionId?: string;
  singleValueExtendedProperties?: { id: string; value: string }[];
}

/** An event as the stand-in holds it (a single instance or a series master). */
export interface StoredGraphEvent extends GraphEventInput {
  id: string;
  calendarId: string;
  type: 'singleInstance' | 'seriesMaster';
  changeKey: string;
  createdDateTime: string;
  lastModifiedDateTime: string;
}

export interface RecordedRequest {
  method: string;
  /** Path and query as sent. */
  url: string;
  pathname: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface FailRule {
  status: number;
  retryAfterSeconds?: number;
  /** How many matching requests fail (default 1). */
  times?: number;
  /** Only requests whose path and query contain this. */
  pathIncludes?: string;
}

export interface HangRule {
  /** How long the answer is held back. */
  ms: number;
  pathIncludes?: string;
  times?: number;
}

export interface MicrosoftStandInOptions {
  clientId?: string;
  clientSecret?: string;
  /** When given, authorize and token refuse any other redirect_uri. */
  redirectUris?: string[];
  accessTokenLifetimeSeconds?: number;
  /** Page size without a Prefer: odata.maxpagesize header. */
  defaultPageSize?: number;
  /** The most a Prefer: odata.maxpagesize may ask for. */
  maxPageSize?: number;
  /** Answer the authorize request with this error instead of consenting. */
  denyConsent?: { error: string; description: string };
}

export interface MicrosoftStandIn {
  port: number;
  urls: { authUrl: string; tokenUrl: string; apiUrl: string };
  clientId: string;
  clientSecret: string;
  /** The mailbox's default calendar ("Calendar"), present from the start. */
  defaultCalendarId: string;
  requests: RecordedRequest[];
  addCalendar(input: { name: string; canEdit?: boolean; isDefaultCalendar?: boolean }): string;
  /** Adds an event as if made in Outlook; returns its id. Visible in the next delta round. */
  addEvent(calendarId: string, event: GraphEventInput): string;
  updateEvent(eventId: string, patch: Partial<GraphEventInput>): void;
  deleteEvent(eventId: string): void;
  /** The calendar's events (single instances and series masters), as stored. */
  events(calendarId: string): StoredGraphEvent[];
  /** From now on the authorize endpoint answers this error (null: consents again). */
  denyConsent(error: { error: string; description: string } | null): void;
  /** A grant without the authorize round trip. */
  issueTokens(): { accessToken: string; refreshToken: string };
  /** Revokes every grant: refresh tokens get invalid_grant, access tokens 401. */
  revokeGrant(): void;
  /** Every access token issued so far answers 401 (refresh tokens still work). */
  expireAccessTokens(): void;
  /** Every delta and skip token issued so far answers 410 Gone. */
  expireDeltaTokens(): void;
  failNext(rule: FailRule): void;
  hangNext(rule: HangRule): void;
  close(): Promise<void>;
}

// ---------------------------------------------------------------------------------------------
// Time zones: IANA names, and the Windows names tests and the provider write. Any other name is
// refused on writes as Graph refuses zones it does not support.

const WINDOWS_ZONES: Readonly<Record<string, string>> = {
  utc: 'UTC',
  'pacific standard time': 'America/Los_Angeles',
  'mountain standard time': 'America/Denver',
  'central standard time': 'America/Chicago',
  'eastern standard time': 'America/New_York',
  'gmt standard time': 'Europe/London',
  'w. europe standard time': 'Europe/Berlin',
  'romance standard time': 'Europe/Paris',
  'central europe standard time': 'Europe/Budapest',
  'india standard time': 'Asia/Kolkata',
  'tokyo standard time': 'Asia/Tokyo',
  'aus eastern standard time': 'Australia/Sydney',
  'pacific sa standard time': 'America/Santiago',
};

function zoneOf(name: string | undefined): string | null {
  if (!name) return null;
  const windows = WINDOWS_ZONES[name.toLowerCase()];
  if (windows) return windows;
  return IANAZone.isValidZone(name) ? name : null;
}

const WEEKDAYS: Readonly<Record<string, number>> = { monday: 1, tuesday: 2, wednesday: 3, thursday: 4, friday: 5, saturday: 6, sunday: 7 };

function graphDateTime(value: DateTime): string {
  return value.toFormat("yyyy-MM-dd'T'HH:mm:ss.SSS'0000'");
}

function opaqueId(prefix: string): string {
  return `${prefix}${randomBytes(30).toString('base64url')}`;
}

// ---------------------------------------------------------------------------------------------
// Occurrences

interface Occurrence {
  id: string;
  event: StoredGraphEvent;
  type: 'singleInstance' | 'occurrence';
  /** In the event's zone; midnights for all-day events. */
  start: DateTime;
  end: DateTime;
}

type DeltaItem = Occurrence | { removedId: string };

function occurrenceId(masterId: string, date: string): string {
  return `AAMkOC${Buffer.from(`${masterId}|${date}`).toString('base64url')}`;
}

/** The event's occurrences overlapping [from, to) (ms); a series is expanded only as far as needed. */
function expand(event: StoredGraphEvent, from: number, to: number): Occurrence[] {
  const zone = zoneOf(event.isAllDay ? (event.originalStartTimeZone ?? event.start.timeZone) : event.start.timeZone) ?? 'UTC';
  const endZone = zoneOf(event.end.timeZone) ?? zone;
  const firstStart = event.isAllDay ? DateTime.fromISO(event.start.dateTime.slice(0, 10), { zone }) : DateTime.fromISO(event.start.dateTime, { zone });
  const firstEnd = event.isAllDay ? DateTime.fromISO(event.end.dateTime.slice(0, 10), { zone }) : DateTime.fromISO(event.end.dateTime, { zone: endZone }).setZone(zone);
  const overlaps = (start: DateTime, end: DateTime) => {
    const s = start.toMillis();
    const e = end.toMillis();
    return s < to && (e > from || (e === s && s >= from));
  };
  if (!event.recurrence) {
    return overlaps(firstStart, firstEnd) ? [{ id: event.id, event, type: 'singleInstance', start: firstStart, end: firstEnd }] : [];
  }
  // Occurrences keep the first one's wall-clock times: the end is so many days and a time of day later.
  const endDayOffset = Math.round(firstEnd.startOf('day').diff(firstStart.startOf('day'), 'days').days);
  const at = (date: DateTime, time: DateTime) =>
    DateTime.fromObject({ year: date.year, month: date.month, day: date.day, hour: time.hour, minute: time.minute, second: time.second }, { zone });
  const { pattern, range } = event.recurrence;
  const interval = Math.max(1, pattern.interval ?? 1);
  const rangeStart = DateTime.fromISO(range.startDate, { zone });
  const rangeEnd = range.type === 'endDate' && range.endDate ? DateTime.fromISO(range.endDate, { zone }) : null;
  const limit = range.type === 'numbered' ? (range.numberOfOccurrences ?? 1) : Number.POSITIVE_INFINITY;

  const dates: (() => DateTime | null) = (() => {
    if (pattern.type === 'daily') {
      let index = 0;
      return () => rangeStart.plus({ days: interval * index++ });
    }
    const days = new Set((pattern.daysOfWeek ?? []).map((name) => WEEKDAYS[name.toLowerCase()]).filter((day): day is number => day !== undefined));
    if (days.size === 0) days.add(rangeStart.weekday);
    const firstDay = WEEKDAYS[(pattern.firstDayOfWeek ?? 'sunday').toLowerCase()] ?? 7;
    const weekStart = rangeStart.minus({ days: (rangeStart.weekday - firstDay + 7) % 7 });
    let week = 0;
    let offset = 0;
    return () => {
      for (;;) {
        if (offset === 7) {
          offset = 0;
          week += interval;
        }
        const date = weekStart.plus({ days: week * 7 + offset++ });
        if (date < rangeStart || !days.has(date.weekday)) continue;
        return date;
      }
    };
  })();

  const found: Occurrence[] = [];
  for (let count = 0; count < limit && count < 100_000; count += 1) {
    const date = dates();
    if (!date || (rangeEnd && date > rangeEnd)) break;
    const start = event.isAllDay ? date : at(date, firstStart);
    if (start.toMillis() >= to) break;
    const end = event.isAllDay ? date.plus({ days: endDayOffset }) : at(date.plus({ days: endDayOffset }), firstEnd);
    if (overlaps(start, end)) {
      found.push({ id: occurrenceId(event.id, date.toISODate()!), event, type: 'occurrence', start, end });
    }
  }
  return found;
}

// ---------------------------------------------------------------------------------------------
// The server

interface Calendar {
  id: string;
  name: string;
  canEdit: boolean;
  isDefaultCalendar: boolean;
  events: Map<string, StoredGraphEvent>;
  /** Every change in order; `before` is the event as it was (null: it was created). */
  log: { seq: number; eventId: string; before: StoredGraphEvent | null }[];
}

interface Grant {
  scope: string;
  revoked: boolean;
}

interface DeltaRound {
  calendarId: string;
  from: number;
  to: number;
}

interface PageSession {
  round: DeltaRound;
  items: DeltaItem[];
  /** The change sequence the round's deltaLink continues from. */
  endSeq: number;
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly body: unknown,
    readonly headers: Record<string, string> = {},
  ) {
    super(`HTTP ${status}`);
  }
}

function graphError(status: number, code: string, message: string): HttpError {
  const date = new Date().toISOString().slice(0, 19);
  return new HttpError(status, { error: { code, message, innerError: { date, 'request-id': randomUUID(), 'client-request-id': randomUUID() } } });
}

function aadError(status: number, error: string, code: number, message: string): HttpError {
  const timestamp = new Date().toISOString().replace('T', ' ').slice(0, 19) + 'Z';
  const traceId = randomUUID();
  const correlationId = randomUUID();
  return new HttpError(status, {
    error,
    error_description: `AADSTS${code}: ${message}\r\nTrace ID: ${traceId}\r\nCorrelation ID: ${correlationId}\r\nTimestamp: ${timestamp}`,
    error_codes: [code],
    timestamp,
    trace_id: traceId,
    correlation_id: correlationId,
    error_uri: `https://login.microsoftonline.com/error?code=${code}`,
  });
}

function preference(headers: IncomingHttpHeaders, name: string): string | null {
  const value = headers.prefer;
  const text = Array.isArray(value) ? value.join(', ') : (value ?? '');
  const match = new RegExp(`${name.replace(/\./g, '\\.')}\\s*=\\s*"?([^",]+)"?`, 'i').exec(text);
  return match ? match[1]!.trim() : null;
}

export async function startMicrosoftStandIn(options: MicrosoftStandInOptions = {}): Promise<MicrosoftStandIn> {
  const clientId = options.clientId ?? randomUUID();
  const clientSecret = options.clientSecret ?? randomBytes(24).toString('base64url');
  const accessLifetime = options.accessTokenLifetimeSeconds ?? 3599;
  const defaultPageSize = options.defaultPageSize ?? 10;
  const maxPageSize = options.maxPageSize ?? 1000;
  let consentError = options.denyConsent ?? null;

  const requests: RecordedRequest[] = [];
  const calendars = new Map<string, Calendar>();
  const calendarOfEvent = new Map<string, string>();
  const byTransactionId = new Map<string, string>();
  let seq = 0;

  const codes = new Map<string, { redirectUri: string; challenge: string; scope: string; expiresAt: number; used: boolean }>();
  const grants: Grant[] = [];
  const refreshTokens = new Map<string, Grant>();
  const accessTokens = new Map<string, { grant: Grant; expiresAt: number }>();

  const skipTokens = new Map<string, { session: PageSession; offset: number }>();
  const deltaTokens = new Map<string, { round: DeltaRound; seq: number }>();
  const expiredTokens = new Set<string>();

  const failRules: (FailRule & { remaining: number })[] = [];
  const hangRules: (HangRule & { remaining: number })[] = [];
  const timers = new Set<NodeJS.Timeout>();

  let base = '';

  // --- mailbox ---------------------------------------------------------------------------------

  function addCalendar(input: { name: string; canEdit?: boolean; isDefaultCalendar?: boolean }): string {
    const id = opaqueId('AAMkAC');
    calendars.set(id, { id, name: input.name, canEdit: input.canEdit ?? true, isDefaultCalendar: input.isDefaultCalendar ?? false, events: new Map(), log: [] });
    return id;
  }

  function calendarOf(id: string): Calendar {
    const calendar = calendars.get(id);
    if (!calendar) throw graphError(404, 'ErrorItemNotFound', 'The specified object was not found in the store.');
    return calendar;
  }

  function storedEvent(id: string): { calendar: Calendar; event: StoredGraphEvent } {
    const calendarId = calendarOfEvent.get(id);
    const calendar = calendarId ? calendars.get(calendarId) : undefined;
    const event = calendar?.events.get(id);
    if (!calendar || !event) throw graphError(404, 'ErrorItemNotFound', 'The specified object was not found in the store.');
    return { calendar, event };
  }

  function checkTimes(event: GraphEventInput): void {
    for (const boundary of [event.start, event.end]) {
      if (!boundary || typeof boundary.dateTime !== 'string' || !DateTime.fromISO(boundary.dateTime).isValid) {
        throw graphError(400, 'ErrorInvalidRequest', 'A start and an end with a valid dateTime are required.');
      }
      if (!zoneOf(boundary.timeZone)) throw graphError(400, 'TimeZoneNotSupportedException', `A valid TimeZone value must be specified. The following TimeZone value is not supported: '${boundary.timeZone}'.`);
    }
  }

  function record(calendar: Calendar, eventId: string, before: StoredGraphEvent | null): void {
    seq += 1;
    calendar.log.push({ seq, eventId, before });
  }

  function insert(calendar: Calendar, input: GraphEventInput): StoredGraphEvent {
    checkTimes(input);
    const now = new Date().toISOString();
    const event: StoredGraphEvent = {
      showAs: 'busy',
      isAllDay: false,
      isCancelled: false,
      responseStatus: { response: 'organizer' },
      ...structuredClone(input),
      originalStartTimeZone: input.originalStartTimeZone ?? input.start.timeZone,
      id: opaqueId('AAMkAG'),
      calendarId: calendar.id,
      type: input.recurrence ? 'seriesMaster' : 'singleInstance',
      changeKey: randomBytes(12).toString('base64url'),
      createdDateTime: now,
      lastModifiedDateTime: now,
    };
    calendar.events.set(event.id, event);
    calendarOfEvent.set(event.id, calendar.id);
    if (event.transactionId) byTransactionId.set(event.transactionId, event.id);
    record(calendar, event.id, null);
    return event;
  }

  function patch(eventId: string, changes: Partial<GraphEventInput>): StoredGraphEvent {
    const { calendar, event } = storedEvent(eventId);
    // Graph keeps the transactionId a create was made with.
    const { transactionId: _ignored, ...rest } = structuredClone(changes);
    const next: StoredGraphEvent = {
      ...event,
      ...rest,
      type: (rest.recurrence === undefined ? event.recurrence : rest.recurrence) ? 'seriesMaster' : 'singleInstance',
      changeKey: randomBytes(12).toString('base64url'),
      lastModifiedDateTime: new Date().toISOString(),
    };
    if (rest.start && !rest.originalStartTimeZone) next.originalStartTimeZone = rest.start.timeZone;
    checkTimes(next);
    calendar.events.set(eventId, next);
    record(calendar, eventId, event);
    return next;
  }

  function remove(eventId: string): void {
    const { calendar, event } = storedEvent(eventId);
    calendar.events.delete(eventId);
    calendarOfEvent.delete(eventId);
    if (event.transactionId) byTransactionId.delete(event.transactionId);
    record(calendar, eventId, event);
  }

  // --- rendering -------------------------------------------------------------------------------

  function boundaryOf(occurrence: Occurrence, which: 'start' | 'end', preferZone: string | null): GraphDateTimeTimeZone {
    const value = occurrence[which];
    const own = occurrence.event[which].timeZone;
    // All-day events stay midnights, only relabelled; timed ones are converted.
    if (occurrence.event.isAllDay) return { dateTime: `${value.toISODate()}T00:00:00.0000000`, timeZone: preferZone ?? own };
    const zone = (preferZone && zoneOf(preferZone)) || zoneOf(own) || 'UTC';
    return { dateTime: graphDateTime(value.setZone(zone)), timeZone: preferZone && zoneOf(preferZone) ? preferZone : own };
  }

  function render(occurrence: Occurrence, headers: IncomingHttpHeaders, expand: string | null): Record<string, unknown> {
    const event = occurrence.event;
    const preferZone = preference(headers, 'outlook.timezone');
    const asText = preference(headers, 'outlook.body-content-type')?.toLowerCase() === 'text';
    const content = event.body?.content ?? '';
    const isHtml = event.body?.contentType?.toLowerCase() === 'html';
    const escaped = content.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
    const rendered: Record<string, unknown> = {
      '@odata.type': '#microsoft.graph.event',
      '@odata.etag': `W/"${event.changeKey}"`,
      id: occurrence.id,
      createdDateTime: event.createdDateTime,
      lastModifiedDateTime: event.lastModifiedDateTime,
      changeKey: event.changeKey,
      categories: [],
      originalStartTimeZone: event.originalStartTimeZone ?? event.start.timeZone,
      originalEndTimeZone: event.end.timeZone,
      iCalUId: createHash('sha256').update(occurrence.id).digest('hex').slice(0, 40),
      reminderMinutesBeforeStart: 15,
      isReminderOn: true,
      subject: event.subject ?? '',
      bodyPreview: content.slice(0, 255),
      importance: 'normal',
      sensitivity: 'normal',
      isAllDay: event.isAllDay ?? false,
      isCancelled: event.isCancelled ?? false,
      isOrganizer: (event.responseStatus?.response ?? 'organizer') === 'organizer',
      showAs: event.showAs ?? 'busy',
      type: occurrence.type,
      seriesMasterId: occurrence.type === 'occurrence' ? event.id : null,
      responseStatus: { response: event.responseStatus?.response ?? 'organizer', time: '0001-01-01T00:00:00Z' },
      // Graph stores a text body as HTML and answers HTML unless text is preferred.
      body: asText || !isHtml ? { contentType: asText ? 'text' : 'html', content: asText ? content : `<html><body>${escaped}</body></html>` } : event.body,
      start: boundaryOf(occurrence, 'start', preferZone),
      end: boundaryOf(occurrence, 'end', preferZone),
      recurrence: occurrence.type === 'singleInstance' && event.type === 'seriesMaster' ? event.recurrence : null,
      location: { displayName: '', locationType: 'default', uniqueIdType: 'unknown' },
      attendees: [],
      organizer: { emailAddress: { name: 'Stand-in User', address: 'user@stand-in.example' } },
    };
    if (occurrence.type === 'singleInstance' && event.type === 'seriesMaster') rendered.type = 'seriesMaster';
    if (event.transactionId) rendered.transactionId = event.transactionId;
    if (expand?.includes('singleValueExtendedProperties')) rendered.singleValueExtendedProperties = event.singleValueExtendedProperties ?? [];
    return rendered;
  }

  /** The stored event (a master or single instance) as one Graph answer. */
  function renderStored(event: StoredGraphEvent, headers: IncomingHttpHeaders, expandParameter: string | null): Record<string, unknown> {
    const [occurrence] = expand({ ...event, recurrence: null }, Number.NEGATIVE_INFINITY, Number.POSITIVE_INFINITY);
    return render({ ...occurrence!, event }, headers, expandParameter);
  }

  // --- delta -----------------------------------------------------------------------------------

  function fullRound(round: DeltaRound): DeltaItem[] {
    const calendar = calendarOf(round.calendarId);
    const items: Occurrence[] = [];
    for (const event of calendar.events.values()) items.push(...expand(event, round.from, round.to));
    return items.sort((a, b) => a.start.toMillis() - b.start.toMillis());
  }

  function changesSince(round: DeltaRound, since: number): DeltaItem[] {
    const calendar = calendarOf(round.calendarId);
    // The log is in sequence order: find the first change after `since` by bisection.
    let low = 0;
    let high = calendar.log.length;
    while (low < high) {
      const middle = (low + high) >> 1;
      if (calendar.log[middle]!.seq <= since) low = middle + 1;
      else high = middle;
    }
    const before = new Map<string, StoredGraphEvent | null>();
    for (let index = low; index < calendar.log.length; index += 1) {
      const change = calendar.log[index]!;
      if (!before.has(change.eventId)) before.set(change.eventId, change.before);
    }
    const items: DeltaItem[] = [];
    for (const [eventId, previous] of before) {
      const current = calendar.events.get(eventId);
      const now = current ? expand(current, round.from, round.to) : [];
      const nowIds = new Set(now.map((occurrence) => occurrence.id));
      if (previous) {
        for (const occurrence of expand(previous, round.from, round.to)) {
          if (!nowIds.has(occurrence.id)) items.push({ removedId: occurrence.id });
        }
      }
      items.push(...now);
    }
    return items;
  }

  function servePage(session: PageSession, offset: number, headers: IncomingHttpHeaders, query: URLSearchParams): Record<string, unknown> {
    const asked = Number(preference(headers, 'odata.maxpagesize'));
    const size = Number.isInteger(asked) && asked > 0 ? Math.min(asked, maxPageSize) : defaultPageSize;
    const page = session.items.slice(offset, offset + size);
    const expandParameter = query.get('$expand');
    const value = page.map((item) =>
      'removedId' in item ? { '@odata.type': '#microsoft.graph.event', id: item.removedId, '@removed': { reason: 'deleted' } } : render(item, headers, expandParameter),
    );
    const path = `${base}/v1.0/me/calendars/${encodeURIComponent(session.round.calendarId)}/calendarView/delta`;
    const body: Record<string, unknown> = { '@odata.context': `${base}/v1.0/$metadata#Collection(event)`, value };
    if (offset + size < session.items.length) {
      const token = randomBytes(24).toString('base64url');
      skipTokens.set(token, { session, offset: offset + size });
      body['@odata.nextLink'] = `${path}?$skiptoken=${token}`;
    } else {
      const token = randomBytes(24).toString('base64url');
      deltaTokens.set(token, { round: session.round, seq: session.endSeq });
      body['@odata.deltaLink'] = `${path}?$deltatoken=${token}`;
    }
    return body;
  }

  function delta(calendarId: string, query: URLSearchParams, headers: IncomingHttpHeaders): Record<string, unknown> {
    const lower = new Map([...query.entries()].map(([key, value]) => [key.toLowerCase(), value]));
    const skipToken = lower.get('$skiptoken');
    const deltaToken = lower.get('$deltatoken');
    const gone = () => graphError(410, 'SyncStateNotFound', 'The sync state generation is not found. Please restart the sync.');
    if (skipToken !== undefined) {
      if (expiredTokens.has(skipToken)) throw gone();
      const state = skipTokens.get(skipToken);
      if (!state) throw graphError(400, 'ErrorInvalidUrlQuery', 'The skip token is not valid.');
      return servePage(state.session, state.offset, headers, query);
    }
    if (deltaToken !== undefined) {
      if (expiredTokens.has(deltaToken)) throw gone();
      const state = deltaTokens.get(deltaToken);
      if (!state) throw graphError(400, 'ErrorInvalidUrlQuery', 'The delta token is not valid.');
      const endSeq = seq;
      return servePage({ round: state.round, items: changesSince(state.round, state.seq), endSeq }, 0, headers, query);
    }
    const start = lower.get('startdatetime');
    const end = lower.get('enddatetime');
    const from = start ? DateTime.fromISO(start, { zone: 'utc' }) : null;
    const to = end ? DateTime.fromISO(end, { zone: 'utc' }) : null;
    if (!from?.isValid || !to?.isValid) {
      throw graphError(400, 'ErrorInvalidParameter', "This request requires a time window specified by the query string parameters StartDateTime and EndDateTime.");
    }
    if (to <= from) throw graphError(400, 'ErrorInvalidParameter', 'The EndDateTime must be later than the StartDateTime.');
    calendarOf(calendarId);
    const round: DeltaRound = { calendarId, from: from.toMillis(), to: to.toMillis() };
    return servePage({ round, items: fullRound(round), endSeq: seq }, 0, headers, query);
  }

  // --- OAuth -----------------------------------------------------------------------------------

  function issue(grant: Grant, withRefresh: boolean): Record<string, unknown> {
    const accessToken = `EwB${randomBytes(32).toString('base64url')}`;
    accessTokens.set(accessToken, { grant, expiresAt: Date.now() + accessLifetime * 1000 });
    const body: Record<string, unknown> = {
      token_type: 'Bearer',
      scope: grant.scope.split(' ').filter((scope) => scope !== 'offline_access').join(' '),
      expires_in: accessLifetime,
      ext_expires_in: accessLifetime,
      access_token: accessToken,
    };
    if (withRefresh) {
      const refreshToken = `M.C${randomBytes(48).toString('base64url')}`;
      refreshTokens.set(refreshToken, grant);
      body.refresh_token = refreshToken;
    }
    return body;
  }

  function authorize(url: URL, response: ServerResponse): void {
    const query = url.searchParams;
    const redirectUri = query.get('redirect_uri');
    if (query.get('client_id') !== clientId) {
      throw new HttpError(400, `AADSTS700016: Application with identifier '${query.get('client_id') ?? ''}' was not found in the directory.`);
    }
    if (!redirectUri || (options.redirectUris && !options.redirectUris.includes(redirectUri))) {
      throw new HttpError(400, `AADSTS50011: The redirect URI '${redirectUri ?? ''}' specified in the request does not match the redirect URIs configured for the application.`);
    }
    const back = new URL(redirectUri);
    const state = query.get('state');
    const fail = (error: string, description: string) => {
      back.searchParams.set('error', error);
      back.searchParams.set('error_description', description);
      if (state !== null) back.searchParams.set('state', state);
      response.writeHead(302, { location: back.href });
      response.end();
    };
    if (query.get('response_type') !== 'code') return fail('unsupported_response_type', 'AADSTS700054: response_type is not enabled for the application.');
    if ((query.get('response_mode') ?? 'query') !== 'query') return fail('invalid_request', 'AADSTS900144: only response_mode=query is enabled in this stand-in.');
    const challenge = query.get('code_challenge');
    if (!challenge || query.get('code_challenge_method') !== 'S256' || !/^[A-Za-z0-9_-]{43}$/.test(challenge)) {
      return fail('invalid_request', 'AADSTS501491: Invalid size of Code_Challenge parameter, or a method other than S256.');
    }
    const scope = query.get('scope') ?? '';
    if (!scope.trim()) return fail('invalid_request', "AADSTS900144: The request body must contain the following parameter: 'scope'.");
    if (consentError) return fail(consentError.error, consentError.description);
    const code = `M.C5${randomBytes(32).toString('base64url')}`;
    codes.set(code, { redirectUri, challenge, scope, expiresAt: Date.now() + 10 * 60_000, used: false });
    back.searchParams.set('code', code);
    if (state !== null) back.searchParams.set('state', state);
    back.searchParams.set('session_state', randomUUID());
    response.writeHead(302, { location: back.href });
    response.end();
  }

  function token(request: IncomingMessage, raw: string): Record<string, unknown> {
    const form = new URLSearchParams(raw);
    let id = form.get('client_id');
    let secret = form.get('client_secret');
    const basic = /^Basic (.+)$/i.exec(request.headers.authorization ?? '');
    if (basic) {
      const [user, pass] = Buffer.from(basic[1]!, 'base64').toString('utf8').split(':');
      id = decodeURIComponent(user ?? '');
      secret = decodeURIComponent(pass ?? '');
    }
    if (id !== clientId) throw aadError(400, 'unauthorized_client', 700016, `Application with identifier '${id ?? ''}' was not found in the directory.`);
    if (secret !== clientSecret) throw aadError(401, 'invalid_client', 7000215, 'Invalid client secret provided.');
    const grantType = form.get('grant_type');
    if (grantType === 'authorization_code') {
      const code = codes.get(form.get('code') ?? '');
      if (!code) throw aadError(400, 'invalid_grant', 70000, "The provided value for the 'code' parameter is not valid.");
      if (code.used) throw aadError(400, 'invalid_grant', 54005, 'OAuth2 Authorization code was already redeemed, please retry with a new valid code or use an existing refresh token.');
      // Any redemption attempt spends the code, as a stolen code must not be tried twice.
      code.used = true;
      if (code.expiresAt < Date.now()) throw aadError(400, 'invalid_grant', 70008, 'The provided authorization code or refresh token has expired due to inactivity.');
      if (form.get('redirect_uri') !== code.redirectUri) throw aadError(400, 'invalid_grant', 50148, 'The redirect_uri does not match the one in the authorization request.');
      const verifier = form.get('code_verifier') ?? '';
      const computed = createHash('sha256').update(verifier).digest('base64url');
      if (!/^[A-Za-z0-9._~-]{43,128}$/.test(verifier) || computed !== code.challenge) {
        throw aadError(400, 'invalid_grant', 501481, 'The Code_Verifier does not match the code_challenge supplied in the authorization request.');
      }
      const grant: Grant = { scope: code.scope, revoked: false };
      grants.push(grant);
      return issue(grant, code.scope.split(' ').includes('offline_access'));
    }
    if (grantType === 'refresh_token') {
      const grant = refreshTokens.get(form.get('refresh_token') ?? '');
      if (!grant) throw aadError(400, 'invalid_grant', 9002313, 'Invalid request. Request is malformed or invalid.');
      if (grant.revoked) throw aadError(400, 'invalid_grant', 50173, 'The provided grant has expired due to it being revoked, a fresh auth token is needed.');
      // A new refresh token every time; the old one stays valid (as at Microsoft) until it expires.
      return issue(grant, true);
    }
    throw aadError(400, 'unsupported_grant_type', 70003, `The app requested an unsupported grant type '${grantType ?? ''}'.`);
  }

  // --- Graph -----------------------------------------------------------------------------------

  function authenticate(request: IncomingMessage): void {
    const match = /^Bearer (.+)$/i.exec(request.headers.authorization ?? '');
    const held = match ? accessTokens.get(match[1]!) : undefined;
    if (!held || held.grant.revoked || held.expiresAt < Date.now()) {
      const error = graphError(401, 'InvalidAuthenticationToken', match ? 'Lifetime validation failed, the token is expired.' : 'Access token is empty.');
      throw new HttpError(401, error.body, {
        'www-authenticate': 'Bearer realm="", authorization_uri="https://login.microsoftonline.com/common/oauth2/authorize", client_id="00000003-0000-0000-c000-000000000000"',
      });
    }
  }

  function parseJson(raw: string): Record<string, unknown> {
    try {
      const parsed: unknown = JSON.parse(raw);
      if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
    } catch {
      // answered below
    }
    throw graphError(400, 'BadRequest', 'Unable to read JSON request payload.');
  }

  function graph(request: IncomingMessage, url: URL, raw: string): { status: number; body: unknown } {
    authenticate(request);
    const segments = url.pathname.split('/').slice(2).map(decodeURIComponent);
    const method = request.method ?? 'GET';
    const [me, collection, id, sub, fn] = segments;
    if (me !== 'me') throw graphError(400, 'BadRequest', 'Resource not found for the segment.');
    if (collection === 'calendars' && id === undefined && method === 'GET') {
      const all = [...calendars.values()];
      const top = Math.max(1, Math.min(Number(url.searchParams.get('$top') ?? 10) || 10, 1000));
      const skip = Number(url.searchParams.get('$skip') ?? 0) || 0;
      const body: Record<string, unknown> = {
        '@odata.context': `${base}/v1.0/$metadata#users('stand-in')/calendars`,
        value: all.slice(skip, skip + top).map((calendar) => ({
          id: calendar.id,
          name: calendar.name,
          color: 'auto',
          hexColor: '',
          isDefaultCalendar: calendar.isDefaultCalendar,
          changeKey: 'AAAAAA==',
          canShare: calendar.canEdit,
          canViewPrivateItems: true,
          canEdit: calendar.canEdit,
          allowedOnlineMeetingProviders: ['teamsForBusiness'],
          defaultOnlineMeetingProvider: 'teamsForBusiness',
          isTallyingResponses: true,
          isRemovable: !calendar.isDefaultCalendar,
          owner: { name: 'Stand-in User', address: 'user@stand-in.example' },
        })),
      };
      if (skip + top < all.length) body['@odata.nextLink'] = `${base}/v1.0/me/calendars?$top=${top}&$skip=${skip + top}`;
      return { status: 200, body };
    }
    if (collection === 'calendarView' && id === 'delta' && method === 'GET') {
      const fallback = [...calendars.values()].find((calendar) => calendar.isDefaultCalendar);
      return { status: 200, body: delta(fallback?.id ?? '', url.searchParams, request.headers) };
    }
    if (collection === 'calendars' && id !== undefined && sub === 'calendarView' && fn === 'delta' && method === 'GET') {
      return { status: 200, body: delta(id, url.searchParams, request.headers) };
    }
    if (collection === 'calendars' && id !== undefined && sub === 'events' && fn === undefined && method === 'POST') {
      const calendar = calendarOf(id);
      if (!calendar.canEdit) throw graphError(403, 'ErrorAccessDenied', 'Access is denied. Check credentials and try again.');
      const input = parseJson(raw) as unknown as GraphEventInput;
      const existing = input.transactionId ? byTransactionId.get(input.transactionId) : undefined;
      if (existing) return { status: 201, body: renderStored(storedEvent(existing).event, request.headers, url.searchParams.get('$expand')) };
      return { status: 201, body: renderStored(insert(calendar, input), request.headers, url.searchParams.get('$expand')) };
    }
    if (collection === 'events' && id !== undefined && sub === undefined) {
      if (method === 'GET') return { status: 200, body: renderStored(storedEvent(id).event, request.headers, url.searchParams.get('$expand')) };
      if (method === 'PATCH') {
        if (!storedEvent(id).calendar.canEdit) throw graphError(403, 'ErrorAccessDenied', 'Access is denied. Check credentials and try again.');
        return { status: 200, body: renderStored(patch(id, parseJson(raw) as Partial<GraphEventInput>), request.headers, null) };
      }
      if (method === 'DELETE') {
        remove(id);
        return { status: 204, body: null };
      }
    }
    throw graphError(400, 'BadRequest', `Unsupported request ${method} ${url.pathname}`);
  }

  // --- HTTP ------------------------------------------------------------------------------------

  function send(response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
    if (response.writableEnded || response.destroyed) return;
    if (status === 204 || body === null) {
      response.writeHead(status, headers);
      response.end();
      return;
    }
    if (typeof body === 'string') {
      response.writeHead(status, { 'content-type': 'text/html; charset=utf-8', ...headers });
      response.end(`<html><body><p>${body}</p></body></html>`);
      return;
    }
    response.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', ...headers });
    response.end(JSON.stringify(body));
  }

  function handle(request: IncomingMessage, response: ServerResponse, raw: string): void {
    const url = new URL(request.url ?? '/', base);
    try {
      const failing = failRules.find((rule) => rule.remaining > 0 && (!rule.pathIncludes || url.pathname.concat(url.search).includes(rule.pathIncludes)));
      if (failing) {
        failing.remaining -= 1;
        const headers: Record<string, string> = failing.retryAfterSeconds === undefined ? {} : { 'retry-after': String(failing.retryAfterSeconds) };
        const body = url.pathname.includes('/oauth2/')
          ? aadError(failing.status, 'temporarily_unavailable', 90033, 'A transient error has occurred. Please try again.').body
          : graphError(failing.status, failing.status === 429 ? 'TooManyRequests' : 'ServiceNotAvailable', 'The service is temporarily unavailable.').body;
        return send(response, failing.status, body, headers);
      }
      if (/^\/[^/]+\/oauth2\/v2\.0\/authorize$/.test(url.pathname) && request.method === 'GET') return authorize(url, response);
      if (/^\/[^/]+\/oauth2\/v2\.0\/token$/.test(url.pathname) && request.method === 'POST') return send(response, 200, token(request, raw));
      if (url.pathname.startsWith('/v1.0/')) {
        const { status, body } = graph(request, url, raw);
        const preferZone = preference(request.headers, 'outlook.timezone');
        return send(response, status, body, preferZone ? { 'preference-applied': `outlook.timezone="${preferZone}"` } : {});
      }
      send(response, 404, graphError(404, 'NotFound', `No route for ${url.pathname}`).body);
    } catch (error) {
      if (error instanceof HttpError) return send(response, error.status, error.body, error.headers);
      send(response, 500, graphError(500, 'InternalServerError', String(error)).body);
    }
  }

  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const url = request.url ?? '/';
      requests.push({ method: request.method ?? 'GET', url, pathname: new URL(url, base).pathname, headers: request.headers, body: raw });
      const hang = hangRules.find((rule) => rule.remaining > 0 && (!rule.pathIncludes || url.includes(rule.pathIncludes)));
      if (!hang) return handle(request, response, raw);
      hang.remaining -= 1;
      const timer = setTimeout(() => {
        timers.delete(timer);
        handle(request, response, raw);
      }, hang.ms);
      timers.add(timer);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  base = `http://127.0.0.1:${port}`;
  const defaultCalendarId = addCalendar({ name: 'Calendar', isDefaultCalendar: true });

  return {
    port,
    urls: {
      authUrl: `${base}/common/oauth2/v2.0/authorize`,
      tokenUrl: `${base}/common/oauth2/v2.0/token`,
      apiUrl: `${base}/v1.0`,
    },
    clientId,
    clientSecret,
    defaultCalendarId,
    requests,
    addCalendar,
    addEvent: (calendarId, event) => insert(calendarOf(calendarId), event).id,
    updateEvent: (eventId, changes) => {
      patch(eventId, changes);
    },
    deleteEvent: remove,
    events: (calendarId) => [...calendarOf(calendarId).events.values()].map((event) => structuredClone(event)),
    denyConsent: (error) => {
      consentError = error;
    },
    issueTokens: () => {
      const grant: Grant = { scope: 'offline_access Calendars.ReadWrite', revoked: false };
      grants.push(grant);
      const body = issue(grant, true);
      return { accessToken: String(body.access_token), refreshToken: String(body.refresh_token) };
    },
    revokeGrant: () => {
      for (const grant of grants) grant.revoked = true;
    },
    expireAccessTokens: () => {
      for (const held of accessTokens.values()) held.expiresAt = 0;
    },
    expireDeltaTokens: () => {
      for (const token of skipTokens.keys()) expiredTokens.add(token);
      for (const token of deltaTokens.keys()) expiredTokens.add(token);
    },
    failNext: (rule) => {
      failRules.push({ ...rule, remaining: rule.times ?? 1 });
    },
    hangNext: (rule) => {
      hangRules.push({ ...rule, remaining: rule.times ?? 1 });
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const timer of timers) clearTimeout(timer);
        timers.clear();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
