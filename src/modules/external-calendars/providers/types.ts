/**
 * The contract between the external-calendar core (connections, sync, write-back) and each
 * provider client (google.ts, microsoft.ts, caldav.ts). Providers only speak their protocol; the
 * core owns storage, encryption, scheduling, retries and tenancy.
 *
 * Every client is built over an OutboundFetch (platform/outbound/fetch.ts): https and public
 * addresses only outside tests, and a deadline on every call.
 */
import type { OutboundFetch } from '../../../platform/outbound/fetch.js';

export type ProviderName = 'google' | 'microsoft' | 'caldav';
export type OAuthProviderName = Exclude<ProviderName, 'caldav'>;

/** Tokens of an OAuth grant. `refreshToken` null: the provider kept the old one (keep it). */
export interface OAuthTokens {
  accessToken: string;
  refreshToken: string | null;
  /** Milliseconds since the epoch. */
  expiresAt: number;
}

/** The grant is gone (revoked, expired, `invalid_grant`): the connection goes to status "error". */
export class GrantRevokedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'GrantRevokedError';
  }
}

/**
 * The provider answered an error or could not be reached. `status` null: no answer (network,
 * deadline). `retryAfterMs`: from Retry-After (429, 503), when given.
 */
export class ProviderError extends Error {
  constructor(
    message: string,
    readonly status: number | null,
    readonly retryAfterMs: number | null = null,
  ) {
    super(message);
    this.name = 'ProviderError';
  }
}

/** The incremental cursor is no longer accepted (Google 410, Graph 410 / syncStateNotFound, CalDAV invalid sync-token): sync in full. */
export class SyncCursorExpiredError extends Error {
  constructor(message = 'The sync cursor expired; a full sync is needed') {
    super(message);
    this.name = 'SyncCursorExpiredError';
  }
}

export interface RemoteCalendar {
  id: string;
  name: string;
  primary: boolean;
  canWrite: boolean;
}

/** One busy occurrence. A recurring event arrives as its occurrences, each with its own key. */
export interface BusyEvent {
  /** Unique within its calendar and stable across syncs (occurrence id, or uid + recurrence id). */
  key: string;
  start: Date;
  end: Date;
  /** The provider's transparency or showAs value (for example `opaque`, `busy`, `OPAQUE`). */
  transparency: string | null;
  /** The provider's event type (for example `default`, `outOfOffice`); null when it has none. */
  eventType: string | null;
  /**
   * The appointment id our write-back marker names (Google private extended property
   * slotwiseAppointmentId, Graph transactionId `slotwise-<uuid>[-suffix]` or the marker extended
   * property, iCalendar UID `slotwise-<id>` or X-SLOTWISE-APPOINTMENT-ID), for events Slotwise
   * wrote — from any company; null/absent otherwise. The core drops only the ones that are its own:
   * a calendar shared by two companies (or a write calendar that is another resource's busy
   * calendar) must still block the other company's time.
   */
  marker?: string | null;
}

export interface SyncResult {
  /** True: `events` is the calendar's whole busy set in the window; every other stored key goes. */
  full: boolean;
  /** Busy occurrences added or changed. Free/transparent, cancelled and declined ones never appear here. */
  events: BusyEvent[];
  /**
   * Keys that are gone or no longer busy (deleted, cancelled, declined, made free). Only read
   * when `full` is false. May name keys never stored (ignored).
   */
  removed: string[];
  /** Opaque; given back on the next sync of this calendar. Null: the provider has no cursor. */
  cursor: string | null;
}

export interface SyncWindow {
  from: Date;
  to: Date;
  /**
   * IANA zone for all-day events when neither the event nor its calendar names one (the
   * resource's zone). An all-day event covers its days from midnight to midnight in the event's
   * zone, else the calendar's, else this one.
   */
  zone: string;
}

/** An appointment as an event in a calendar we write to. */
export interface EventWrite {
  /** Ties the provider's event to the appointment (event id, extended property, or iCalendar UID). */
  appointmentId: string;
  title: string;
  description: string;
  start: Date;
  end: Date;
  /** IANA zone of the location, for providers that store one. */
  timeZone: string;
}

/** What can be done with one connection's credentials. */
export interface CalendarSession {
  listCalendars(): Promise<RemoteCalendar[]>;
  /**
   * Busy occurrences of one calendar. `cursor` null: a full sync of the window. Events written by
   * Slotwise (carrying our appointment marker, whichever company wrote them) are returned like any
   * other busy event, with `marker` set to the appointment id; providers do not decide ownership.
   * A cursor whose window does not cover `window` gives a full result. Throws
   * SyncCursorExpiredError when the cursor is refused or unreadable (the core then calls again
   * with null).
   */
  syncCalendar(calendarId: string, cursor: string | null, window: SyncWindow): Promise<SyncResult>;
  /**
   * Creates the appointment's event, or moves/retitles it when `eventId` (what an earlier call
   * returned) is given. Idempotent: called again after a crash with `eventId` null, it finds the
   * event it made before by the appointment's id and updates that one instead of adding another.
   * Returns the provider's event id.
   */
  putEvent(calendarId: string, eventId: string | null, write: EventWrite): Promise<string>;
  /** Deletes the event; one already gone (404, 410) counts as deleted. */
  deleteEvent(calendarId: string, eventId: string): Promise<void>;
  /**
   * Deletes the event putEvent makes for this appointment without knowing its id (a create that
   * succeeded at the provider but whose answer was lost). Only where the id follows from the
   * appointment (Google, CalDAV); absent elsewhere. One that is not there counts as deleted.
   */
  deleteAppointmentEvent?(calendarId: string, appointmentId: string): Promise<void>;
}

/** Google and Microsoft: OAuth 2.0 authorization code with PKCE, offline access. */
export interface OAuthCalendarProvider {
  readonly name: OAuthProviderName;
  /** Where the user is sent to consent; asks for offline access so a refresh token is issued. */
  authorizationUrl(request: { state: string; codeChallenge: string; redirectUri: string }): string;
  /** Throws GrantRevokedError on `invalid_grant`, ProviderError on anything else. */
  exchangeCode(request: { code: string; codeVerifier: string; redirectUri: string }): Promise<OAuthTokens>;
  /** Throws GrantRevokedError when the refresh token is revoked or expired. */
  refresh(refreshToken: string): Promise<OAuthTokens>;
  /** Revokes the grant where the provider offers revocation (Google); a no-op elsewhere. */
  revoke(token: string): Promise<void>;
  /** API calls with an access token; a 401 from the API throws GrantRevokedError. */
  session(accessToken: string): CalendarSession;
}

export interface CaldavCredentials {
  url: string;
  username: string;
  password: string;
}

/** CalDAV: basic credentials (an app password), no OAuth. */
export interface CaldavCalendarProvider {
  readonly name: 'caldav';
  /** A real PROPFIND: throws GrantRevokedError on 401/403, ProviderError when it is not a CalDAV collection or home. */
  check(credentials: CaldavCredentials): Promise<void>;
  session(credentials: CaldavCredentials): CalendarSession;
}

export interface OAuthClientConfig {
  clientId: string;
  clientSecret: string;
  authUrl: string;
  tokenUrl: string;
  /** Google: https://www.googleapis.com/calendar/v3; Microsoft: https://graph.microsoft.com/v1.0 */
  apiUrl: string;
  /** Google only: https://oauth2.googleapis.com/revoke */
  revokeUrl?: string;
}

export interface ProviderDeps {
  fetch: OutboundFetch;
}
