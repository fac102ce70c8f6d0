import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { WINDOWS_ZONE_NAMES } from '../../../src/domain/windows-zones.js';
import { IANAZone } from 'luxon';
import {
  MICROSOFT_MARKER_PROPERTY,
  createMicrosoftProvider,
  ianaZoneOf,
} from '../../../src/modules/external-calendars/providers/microsoft.js';
import { GrantRevokedError, ProviderError, SyncCursorExpiredError } from '../../../src/modules/external-calendars/providers/types.js';
import type { BusyEvent, EventWrite, OAuthCalendarProvider, SyncWindow } from '../../../src/modules/external-calendars/providers/types.js';
import { createOutboundFetch } from '../../../src/platform/outbound/fetch.js';
import { startMicrosoftStandIn } from '../../helpers/microsoft-stand-in.js';
import type { GraphEventInput, MicrosoftStandIn } from '../../helpers/microsoft-stand-in.js';

// The Microsoft provider against the local identity platform and Graph stand-in
// (test/helpers/microsoft-stand-in.ts), through the real OutboundFetch with loopback allowed.

const REDIRECT = 'https://app.slotwise.test/v3/calendar/callback';
// Generous: a deadline only guards against a hang; the hang tests use their own short one.
const fetchDeadlineMs = 10_000;

let standIn: MicrosoftStandIn;
let provider: OAuthCalendarProvider;

function providerFor(target: MicrosoftStandIn, timeoutMs = fetchDeadlineMs): OAuthCalendarProvider {
  return createMicrosoftProvider(
    { clientId: target.clientId, clientSecret: target.clientSecret, ...target.urls },
    { fetch: createOutboundFetch({ timeoutMs, allowLoopbackHttp: true }) },
  );
}

before(async () => {
  standIn = await startMicrosoftStandIn({ redirectUris: [REDIRECT], maxPageSize: 50 });
  provider = providerFor(standIn);
});

after(async () => {
  await standIn.close();
});

function pkce(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

/** The user's side of the consent: follow the authorization URL to the redirect and read the code. */
async function consent(url: string): Promise<URL> {
  const response = await fetch(url, { redirect: 'manual' });
  assert.equal(response.status, 302);
  const location = response.headers.get('location');
  assert.ok(location);
  return new URL(location);
}

const window2026: SyncWindow = { from: new Date('2026-03-01T00:00:00Z'), to: new Date('2026-04-30T00:00:00Z'), zone: 'Europe/Berlin' };

function timed(subject: string, start: string, end: string, extra: Partial<GraphEventInput> = {}): GraphEventInput {
  return { subject, start: { dateTime: start, timeZone: 'UTC' }, end: { dateTime: end, timeZone: 'UTC' }, ...extra };
}

function byKey(events: BusyEvent[]): Map<string, BusyEvent> {
  return new Map(events.map((event) => [event.key, event]));
}

function lastRequest(matches: (request: MicrosoftStandIn['requests'][number]) => boolean) {
  return standIn.requests.filter(matches).at(-1);
}

function newSession() {
  return provider.session(standIn.issueTokens().accessToken);
}

describe('OAuth', () => {
  test('the authorization URL asks the v2 endpoint for a code with PKCE and offline access', () => {
    const url = new URL(provider.authorizationUrl({ state: 'st-1', codeChallenge: 'c'.repeat(43), redirectUri: REDIRECT }));
    assert.equal(url.origin + url.pathname, standIn.urls.authUrl);
    const query = Object.fromEntries(url.searchParams);
    assert.deepEqual(query, {
      client_id: standIn.clientId,
      response_type: 'code',
      redirect_uri: REDIRECT,
      response_mode: 'query',
      scope: 'offline_access Calendars.ReadWrite',
      state: 'st-1',
      code_challenge: 'c'.repeat(43),
      code_challenge_method: 'S256',
      prompt: 'select_account',
    });
  });

  test('the PKCE round trip gives tokens that work, and the code works once', async () => {
    const { verifier, challenge } = pkce();
    const back = await consent(provider.authorizationUrl({ state: 'state-42', codeChallenge: challenge, redirectUri: REDIRECT }));
    assert.equal(back.origin + back.pathname, REDIRECT);
    assert.equal(back.searchParams.get('state'), 'state-42');
    const code = back.searchParams.get('code');
    assert.ok(code);

    const before = Date.now();
    const tokens = await provider.exchangeCode({ code, codeVerifier: verifier, redirectUri: REDIRECT });
    assert.ok(tokens.accessToken);
    assert.ok(tokens.refreshToken, 'offline_access gives a refresh token');
    assert.ok(tokens.expiresAt >= before + 3_000_000 && tokens.expiresAt <= Date.now() + 3_600_000);
    const calendars = await provider.session(tokens.accessToken).listCalendars();
    assert.ok(calendars.some((calendar) => calendar.id === standIn.defaultCalendarId));

    const tokenCall = lastRequest((request) => request.pathname.endsWith('/oauth2/v2.0/token'));
    const form = new URLSearchParams(tokenCall?.body);
    assert.equal(form.get('grant_type'), 'authorization_code');
    assert.equal(form.get('client_secret'), standIn.clientSecret);
    assert.equal(form.get('code_verifier'), verifier);

    await assert.rejects(provider.exchangeCode({ code, codeVerifier: verifier, redirectUri: REDIRECT }), (error: unknown) => {
      assert.ok(error instanceof GrantRevokedError);
      assert.match(error.message, /AADSTS54005/);
      assert.doesNotMatch(error.message, /Trace ID/, 'only the first line of the description is kept');
      return true;
    });
  });

  test('a wrong code verifier is refused as a dead grant', async () => {
    const { challenge } = pkce();
    const back = await consent(provider.authorizationUrl({ state: 's', codeChallenge: challenge, redirectUri: REDIRECT }));
    await assert.rejects(
      provider.exchangeCode({ code: back.searchParams.get('code') ?? '', codeVerifier: pkce().verifier, redirectUri: REDIRECT }),
      (error: unknown) => error instanceof GrantRevokedError && /AADSTS501481/.test(error.message),
    );
  });

  test('a refused consent comes back to the redirect URI with the error and the state', async () => {
    standIn.denyConsent({ error: 'access_denied', description: 'AADSTS65004: User declined to consent to access the app.' });
    try {
      const back = await consent(provider.authorizationUrl({ state: 'st-9', codeChallenge: pkce().challenge, redirectUri: REDIRECT }));
      assert.equal(back.searchParams.get('error'), 'access_denied');
      assert.match(back.searchParams.get('error_description') ?? '', /AADSTS65004/);
      assert.equal(back.searchParams.get('state'), 'st-9');
      assert.equal(back.searchParams.get('code'), null);
    } finally {
      standIn.denyConsent(null);
    }
  });

  test('refresh returns the rotated refresh token, and the new tokens work', async () => {
    const first = standIn.issueTokens();
    const second = await provider.refresh(first.refreshToken);
    assert.ok(second.refreshToken);
    assert.notEqual(second.refreshToken, first.refreshToken);
    assert.notEqual(second.accessToken, first.accessToken);
    const third = await provider.refresh(second.refreshToken);
    assert.ok(third.refreshToken);
    await provider.session(third.accessToken).listCalendars();
    const form = new URLSearchParams(lastRequest((request) => request.pathname.endsWith('/token'))?.body);
    assert.equal(form.get('grant_type'), 'refresh_token');
    assert.equal(form.get('scope'), 'offline_access Calendars.ReadWrite');
  });

  test('an unknown refresh token and a wrong client secret are told apart', async () => {
    await assert.rejects(provider.refresh('M.C-not-a-token'), GrantRevokedError);
    const misconfigured = createMicrosoftProvider(
      { clientId: standIn.clientId, clientSecret: 'wrong', ...standIn.urls },
      { fetch: createOutboundFetch({ timeoutMs: fetchDeadlineMs, allowLoopbackHttp: true }) },
    );
    await assert.rejects(misconfigured.refresh(standIn.issueTokens().refreshToken), (error: unknown) => {
      assert.ok(error instanceof ProviderError, 'invalid_client is our configuration, not the user revoking');
      assert.equal(error.status, 401);
      return true;
    });
  });

  test('a token endpoint answering 503 with Retry-After is a ProviderError carrying it', async () => {
    standIn.failNext({ status: 503, retryAfterSeconds: 12, pathIncludes: '/oauth2/v2.0/token' });
    await assert.rejects(provider.refresh(standIn.issueTokens().refreshToken), (error: unknown) => {
      assert.ok(error instanceof ProviderError);
      assert.equal(error.status, 503);
      assert.equal(error.retryAfterMs, 12_000);
      return true;
    });
  });

  test('an expired access token is a 401 from Graph: GrantRevokedError', async () => {
    const tokens = standIn.issueTokens();
    standIn.expireAccessTokens();
    await assert.rejects(provider.session(tokens.accessToken).listCalendars(), GrantRevokedError);
    const fresh = await provider.refresh(tokens.refreshToken);
    await provider.session(fresh.accessToken).listCalendars();
  });

  test('revoke is a no-op: Microsoft has no per-token revocation', async () => {
    const before = standIn.requests.length;
    await provider.revoke('anything');
    assert.equal(standIn.requests.length, before);
  });

  test('a revoked grant: refresh and Graph both throw GrantRevokedError', async () => {
    const tokens = standIn.issueTokens();
    standIn.revokeGrant();
    await assert.rejects(provider.refresh(tokens.refreshToken), (error: unknown) => error instanceof GrantRevokedError && /AADSTS50173/.test(error.message));
    await assert.rejects(provider.session(tokens.accessToken).listCalendars(), GrantRevokedError);
  });
});

describe('calendars', () => {
  test('lists every calendar with primary and write access', async () => {
    const shared = standIn.addCalendar({ name: 'Team (read only)', canEdit: false });
    const work = standIn.addCalendar({ name: 'Work' });
    const calendars = await newSession().listCalendars();
    assert.deepEqual(
      calendars.find((calendar) => calendar.id === standIn.defaultCalendarId),
      { id: standIn.defaultCalendarId, name: 'Calendar', primary: true, canWrite: true },
    );
    assert.deepEqual(calendars.find((calendar) => calendar.id === shared), { id: shared, name: 'Team (read only)', primary: false, canWrite: false });
    assert.deepEqual(calendars.find((calendar) => calendar.id === work), { id: work, name: 'Work', primary: false, canWrite: true });
  });

  test('follows @odata.nextLink through a long list', async () => {
    const many = await startMicrosoftStandIn();
    try {
      for (let index = 0; index < 130; index += 1) many.addCalendar({ name: `Calendar ${index}` });
      const calendars = await providerFor(many).session(many.issueTokens().accessToken).listCalendars();
      assert.equal(calendars.length, 131);
      assert.equal(new Set(calendars.map((calendar) => calendar.id)).size, 131);
      assert.equal(many.requests.filter((request) => request.pathname === '/v1.0/me/calendars').length, 2);
    } finally {
      await many.close();
    }
  });
});

describe('sync', () => {
  test('a full sync, then incremental syncs see additions, edits and deletions', async () => {
    const calendarId = standIn.addCalendar({ name: 'Sync' });
    const kept = standIn.addEvent(calendarId, timed('Dentist', '2026-03-10T09:00:00', '2026-03-10T10:00:00'));
    const moved = standIn.addEvent(calendarId, timed('Lunch', '2026-03-11T12:00:00', '2026-03-11T13:00:00'));
    const deleted = standIn.addEvent(calendarId, timed('Call', '2026-03-12T15:00:00', '2026-03-12T15:30:00'));
    standIn.addEvent(calendarId, timed('Long ago', '2025-01-10T09:00:00', '2025-01-10T10:00:00'));
    const session = newSession();

    const first = await session.syncCalendar(calendarId, null, window2026);
    assert.equal(first.full, true);
    assert.ok(first.cursor);
    assert.deepEqual(first.removed, []);
    assert.deepEqual(
      [...byKey(first.events).keys()].sort(),
      [kept, moved, deleted].sort(),
      'events outside the window are not listed',
    );
    assert.deepEqual(byKey(first.events).get(kept), {
      key: kept,
      start: new Date('2026-03-10T09:00:00Z'),
      end: new Date('2026-03-10T10:00:00Z'),
      transparency: 'busy',
      eventType: 'singleInstance',
    });
    const deltaCall = lastRequest((request) => request.pathname.endsWith('/calendarView/delta'));
    assert.equal(deltaCall?.pathname, `/v1.0/me/calendars/${calendarId}/calendarView/delta`);
    assert.match(String(deltaCall?.headers.prefer), /outlook\.timezone="UTC"/);
    assert.match(String(deltaCall?.headers.prefer), /odata\.maxpagesize=\d+/);

    const quiet = await session.syncCalendar(calendarId, first.cursor, window2026);
    assert.deepEqual({ full: quiet.full, events: quiet.events, removed: quiet.removed }, { full: false, events: [], removed: [] });

    const added = standIn.addEvent(calendarId, timed('New', '2026-03-20T08:00:00', '2026-03-20T09:00:00'));
    standIn.updateEvent(moved, { start: { dateTime: '2026-03-11T14:00:00', timeZone: 'UTC' }, end: { dateTime: '2026-03-11T15:00:00', timeZone: 'UTC' } });
    standIn.deleteEvent(deleted);
    const second = await session.syncCalendar(calendarId, quiet.cursor, window2026);
    assert.equal(second.full, false);
    const changed = byKey(second.events);
    assert.deepEqual([...changed.keys()].sort(), [added, moved].sort());
    assert.deepEqual(changed.get(moved)?.start, new Date('2026-03-11T14:00:00Z'));
    assert.deepEqual(second.removed, [deleted]);
    assert.ok(standIn.requests.at(-1)?.url.includes('$deltatoken='), 'the incremental sync follows the deltaLink');

    // Moved out of the window: gone from the window's busy set.
    standIn.updateEvent(added, { start: { dateTime: '2026-06-20T08:00:00', timeZone: 'UTC' }, end: { dateTime: '2026-06-20T09:00:00', timeZone: 'UTC' } });
    const third = await session.syncCalendar(calendarId, second.cursor, window2026);
    assert.deepEqual(third.removed, [added]);
    assert.deepEqual(third.events, []);
  });

  test('free, working elsewhere, cancelled and declined events are not busy; events Slotwise wrote are, with their marker', async () => {
    const calendarId = standIn.addCalendar({ name: 'Kinds' });
    const at = (day: number) => [`2026-03-${day}T09:00:00`, `2026-03-${day}T10:00:00`] as const;
    const busy = standIn.addEvent(calendarId, timed('Busy', ...at(10)));
    const tentative = standIn.addEvent(calendarId, timed('Maybe', ...at(11), { showAs: 'tentative' }));
    const away = standIn.addEvent(calendarId, timed('Holiday', ...at(12), { showAs: 'oof' }));
    const accepted = standIn.addEvent(calendarId, timed('Invited', ...at(13), { responseStatus: { response: 'accepted' } }));
    const free = standIn.addEvent(calendarId, timed('Free', ...at(16), { showAs: 'free' }));
    standIn.addEvent(calendarId, timed('Elsewhere', ...at(17), { showAs: 'workingElsewhere' }));
    standIn.addEvent(calendarId, timed('Cancelled', ...at(18), { isCancelled: true }));
    standIn.addEvent(calendarId, timed('Declined', ...at(19), { responseStatus: { response: 'declined' } }));
    // Written by Slotwise, by this company or another: a transactionId with or without the
    // suffix of a re-creation (transactionIdFor); free stays free.
    const oursId = randomUUID();
    const ours = standIn.addEvent(calendarId, timed('Ours', ...at(20), { transactionId: `slotwise-${oursId}` }));
    const recreatedId = randomUUID();
    const recreated = standIn.addEvent(calendarId, timed('Recreated', ...at(21), { transactionId: `slotwise-${recreatedId}-0123456789abcdef` }));
    standIn.addEvent(calendarId, timed('Ours, free', ...at(23), { transactionId: `slotwise-${randomUUID()}`, showAs: 'free' }));
    standIn.addEvent(calendarId, timed('Zero', '2026-03-24T09:00:00', '2026-03-24T09:00:00'));
    const session = newSession();

    const full = await session.syncCalendar(calendarId, null, window2026);
    const events = byKey(full.events);
    assert.deepEqual([...events.keys()].sort(), [busy, tentative, away, accepted, ours, recreated].sort());
    assert.equal(events.get(busy)?.marker ?? null, null);
    assert.equal(events.get(ours)?.marker, oursId);
    assert.equal(events.get(recreated)?.marker, recreatedId);
    assert.deepEqual([events.get(ours)?.start, events.get(ours)?.transparency], [new Date('2026-03-20T09:00:00Z'), 'busy']);
    assert.equal(events.get(tentative)?.transparency, 'tentative');
    assert.equal(events.get(away)?.transparency, 'oof');

    standIn.updateEvent(busy, { showAs: 'free' });
    standIn.updateEvent(tentative, { isCancelled: true });
    standIn.updateEvent(accepted, { responseStatus: { response: 'declined' } });
    standIn.updateEvent(free, { showAs: 'busy' });
    const next = await session.syncCalendar(calendarId, full.cursor, window2026);
    assert.deepEqual(next.removed.sort(), [busy, tentative, accepted].sort());
    assert.deepEqual(next.events.map((event) => event.key), [free]);
  });

  test('a recurring series arrives as its occurrences, each with its own key, keeping wall-clock time across DST', async () => {
    const calendarId = standIn.addCalendar({ name: 'Series' });
    // Mondays and Thursdays 09:00-10:00 Berlin time, 16 to 30 March 2026 (clocks go forward on the 29th).
    const weekly = standIn.addEvent(calendarId, {
      subject: 'Standup',
      start: { dateTime: '2026-03-16T09:00:00', timeZone: 'W. Europe Standard Time' },
      end: { dateTime: '2026-03-16T10:00:00', timeZone: 'W. Europe Standard Time' },
      recurrence: {
        pattern: { type: 'weekly', interval: 1, daysOfWeek: ['monday', 'thursday'], firstDayOfWeek: 'sunday' },
        range: { type: 'endDate', startDate: '2026-03-16', endDate: '2026-03-30' },
      },
    });
    // Three daily occurrences from 1 April.
    standIn.addEvent(calendarId, {
      subject: 'Course',
      start: { dateTime: '2026-04-01T14:00:00', timeZone: 'UTC' },
      end: { dateTime: '2026-04-01T15:00:00', timeZone: 'UTC' },
      recurrence: { pattern: { type: 'daily', interval: 1 }, range: { type: 'numbered', startDate: '2026-04-01', numberOfOccurrences: 3 } },
    });
    const session = newSession();
    const full = await session.syncCalendar(calendarId, null, window2026);
    const starts = full.events.map((event) => event.start.toISOString()).sort();
    assert.deepEqual(starts, [
      '2026-03-16T08:00:00.000Z',
      '2026-03-19T08:00:00.000Z',
      '2026-03-23T08:00:00.000Z',
      '2026-03-26T08:00:00.000Z',
      '2026-03-30T07:00:00.000Z',
      '2026-04-01T14:00:00.000Z',
      '2026-04-02T14:00:00.000Z',
      '2026-04-03T14:00:00.000Z',
    ]);
    assert.equal(new Set(full.events.map((event) => event.key)).size, 8);
    assert.ok(full.events.every((event) => event.eventType === 'occurrence' && event.key !== weekly));

    // Cutting the series short removes the occurrences past the new end.
    standIn.updateEvent(weekly, {
      recurrence: {
        pattern: { type: 'weekly', interval: 1, daysOfWeek: ['monday', 'thursday'] },
        range: { type: 'endDate', startDate: '2026-03-16', endDate: '2026-03-20' },
      },
    });
    const cut = await session.syncCalendar(calendarId, full.cursor, window2026);
    const gone = full.events.filter((event) => ['2026-03-23', '2026-03-26', '2026-03-30'].includes(event.start.toISOString().slice(0, 10)));
    assert.deepEqual(cut.removed.sort(), gone.map((event) => event.key).sort());
    assert.equal(cut.events.length, 2);
  });

  test('an all-day event covers its day in its own zone (a Windows name), 23 hours on the spring-forward day', async () => {
    const calendarId = standIn.addCalendar({ name: 'All day' });
    const springForward = standIn.addEvent(calendarId, {
      subject: 'Offsite',
      isAllDay: true,
      start: { dateTime: '2026-03-08T00:00:00', timeZone: 'Pacific Standard Time' },
      end: { dateTime: '2026-03-09T00:00:00', timeZone: 'Pacific Standard Time' },
    });
    const twoDays = standIn.addEvent(calendarId, {
      subject: 'Conference',
      isAllDay: true,
      start: { dateTime: '2026-03-28T00:00:00', timeZone: 'America/New_York' },
      end: { dateTime: '2026-03-30T00:00:00', timeZone: 'America/New_York' },
    });
    const custom = standIn.addEvent(calendarId, {
      subject: 'Custom zone',
      isAllDay: true,
      originalStartTimeZone: 'Customized Time Zone',
      start: { dateTime: '2026-03-29T00:00:00', timeZone: 'UTC' },
      end: { dateTime: '2026-03-30T00:00:00', timeZone: 'UTC' },
    });
    const full = await newSession().syncCalendar(calendarId, null, window2026);
    const events = byKey(full.events);
    assert.deepEqual(events.get(springForward)?.start, new Date('2026-03-08T08:00:00Z'));
    assert.deepEqual(events.get(springForward)?.end, new Date('2026-03-09T07:00:00Z'));
    assert.deepEqual(events.get(twoDays)?.start, new Date('2026-03-28T04:00:00Z'));
    assert.deepEqual(events.get(twoDays)?.end, new Date('2026-03-30T04:00:00Z'));
    // A zone Graph cannot name falls back to the window's (Berlin, which springs forward on the 29th).
    assert.deepEqual(events.get(custom)?.start, new Date('2026-03-28T23:00:00Z'));
    assert.deepEqual(events.get(custom)?.end, new Date('2026-03-29T22:00:00Z'));
  });

  test('an expired delta token is SyncCursorExpiredError, and a full sync starts over', async () => {
    const calendarId = standIn.addCalendar({ name: 'Expiry' });
    const event = standIn.addEvent(calendarId, timed('Kept', '2026-03-10T09:00:00', '2026-03-10T10:00:00'));
    const session = newSession();
    const first = await session.syncCalendar(calendarId, null, window2026);
    standIn.expireDeltaTokens();
    await assert.rejects(session.syncCalendar(calendarId, first.cursor, window2026), SyncCursorExpiredError);
    const again = await session.syncCalendar(calendarId, null, window2026);
    assert.equal(again.full, true);
    assert.deepEqual(again.events.map((busy) => busy.key), [event]);
    await assert.rejects(session.syncCalendar(calendarId, 'not a cursor', window2026), SyncCursorExpiredError);
  });

  test('a window the cursor does not cover is synced in full', async () => {
    const calendarId = standIn.addCalendar({ name: 'Growing window' });
    const session = newSession();
    const first = await session.syncCalendar(calendarId, null, window2026);
    const later = standIn.addEvent(calendarId, timed('Beyond the first window', '2026-05-05T09:00:00', '2026-05-05T10:00:00'));
    const grown: SyncWindow = { ...window2026, to: new Date('2026-05-31T00:00:00Z') };
    const second = await session.syncCalendar(calendarId, first.cursor, grown);
    assert.equal(second.full, true);
    assert.deepEqual(second.events.map((busy) => busy.key), [later]);
    const narrower: SyncWindow = { ...grown, from: new Date('2026-03-15T00:00:00Z') };
    const third = await session.syncCalendar(calendarId, second.cursor, narrower);
    assert.equal(third.full, false, 'a window inside the round still syncs incrementally');
  });

  test('pages of a round are followed by @odata.nextLink; 5,000 events sync in full and then incrementally', async () => {
    const calendarId = standIn.addCalendar({ name: 'Busy person' });
    const ids: string[] = [];
    for (let index = 0; index < 5_000; index += 1) {
      const start = new Date(Date.UTC(2026, 2, 1, 0, 0) + index * 15 * 60_000);
      const end = new Date(start.getTime() + 10 * 60_000);
      ids.push(standIn.addEvent(calendarId, timed(`Slot ${index}`, start.toISOString().slice(0, 19), end.toISOString().slice(0, 19))));
    }
    const session = newSession();
    const before = standIn.requests.length;
    const full = await session.syncCalendar(calendarId, null, window2026);
    assert.equal(full.events.length, 5_000);
    assert.deepEqual(new Set(full.events.map((event) => event.key)), new Set(ids));
    // The stand-in caps pages at 50 events (maxPageSize).
    assert.equal(standIn.requests.length - before, 100);
    assert.ok(standIn.requests.slice(before + 1).every((request) => request.url.includes('$skiptoken=') || request.url.includes('$deltatoken=')));

    standIn.deleteEvent(ids[10]!);
    standIn.updateEvent(ids[20]!, { showAs: 'free' });
    const next = await session.syncCalendar(calendarId, full.cursor, window2026);
    assert.deepEqual(next.removed.sort(), [ids[10]!, ids[20]!].sort());
    assert.deepEqual(next.events, []);
  });

  test('429 with Retry-After is a ProviderError carrying it; a 5xx too', async () => {
    const calendarId = standIn.addCalendar({ name: 'Throttled' });
    const session = newSession();
    standIn.failNext({ status: 429, retryAfterSeconds: 7, pathIncludes: '/calendarView/delta' });
    await assert.rejects(session.syncCalendar(calendarId, null, window2026), (error: unknown) => {
      assert.ok(error instanceof ProviderError);
      assert.equal(error.status, 429);
      assert.equal(error.retryAfterMs, 7_000);
      return true;
    });
    standIn.failNext({ status: 500, pathIncludes: '/me/calendars' });
    await assert.rejects(session.listCalendars(), (error: unknown) => error instanceof ProviderError && error.status === 500 && error.retryAfterMs === null);
  });

  test('a hung Graph or token endpoint is a ProviderError without status at the deadline', async () => {
    const hurried = providerFor(standIn, 300);
    standIn.hangNext({ ms: 5_000, pathIncludes: '/calendarView/delta' });
    await assert.rejects(hurried.session(standIn.issueTokens().accessToken).syncCalendar(standIn.defaultCalendarId, null, window2026), (error: unknown) => {
      assert.ok(error instanceof ProviderError);
      assert.equal(error.status, null);
      return true;
    });
    standIn.hangNext({ ms: 5_000, pathIncludes: '/oauth2/v2.0/token' });
    await assert.rejects(hurried.refresh(standIn.issueTokens().refreshToken), (error: unknown) => error instanceof ProviderError && error.status === null);
  });
});

describe('write-back', () => {
  const appointmentId = randomUUID();
  const write: EventWrite = {
    appointmentId,
    title: 'Check-up with Ann',
    description: 'Booked through Slotwise.\nRoom 2',
    start: new Date('2026-03-10T14:00:00Z'),
    end: new Date('2026-03-10T15:00:00Z'),
    timeZone: 'Europe/Berlin',
  };

  test('putEvent twice without an event id makes one event, marked as ours, which sync returns with its marker', async () => {
    const calendarId = standIn.addCalendar({ name: 'Write' });
    const session = newSession();
    const first = await session.putEvent(calendarId, null, write);
    const second = await session.putEvent(calendarId, null, write);
    assert.equal(second, first);
    const stored = standIn.events(calendarId);
    assert.equal(stored.length, 1);
    const [event] = stored;
    assert.equal(event?.id, first);
    assert.equal(event?.subject, write.title);
    assert.deepEqual(event?.body, { contentType: 'text', content: write.description });
    assert.deepEqual(event?.start, { dateTime: '2026-03-10T15:00:00', timeZone: 'W. Europe Standard Time' });
    assert.deepEqual(event?.end, { dateTime: '2026-03-10T16:00:00', timeZone: 'W. Europe Standard Time' });
    assert.equal(event?.transactionId, `slotwise-${appointmentId}`);
    assert.deepEqual(event?.singleValueExtendedProperties, [{ id: MICROSOFT_MARKER_PROPERTY, value: appointmentId }]);
    const posts = standIn.requests.filter((request) => request.method === 'POST' && request.pathname === `/v1.0/me/calendars/${calendarId}/events`);
    assert.equal(posts.length, 2, 'the second create relies on the transactionId');

    // The core, not the provider, tells its own appointments from another company's.
    const sync = await session.syncCalendar(calendarId, null, window2026);
    assert.deepEqual(sync.events.map((e) => [e.key, e.start, e.end, e.marker]), [[first, write.start, write.end, appointmentId]]);
  });

  test('a create retried after the appointment moved finds the first event and brings it up to date', async () => {
    const calendarId = standIn.addCalendar({ name: 'Retry' });
    const session = newSession();
    const retried = { ...write, appointmentId: randomUUID() };
    const id = await session.putEvent(calendarId, null, retried);
    const moved = { ...retried, start: new Date('2026-03-11T08:00:00Z'), end: new Date('2026-03-11T08:30:00Z') };
    assert.equal(await session.putEvent(calendarId, null, moved), id);
    const [event] = standIn.events(calendarId);
    assert.equal(standIn.events(calendarId).length, 1);
    assert.deepEqual(event?.start, { dateTime: '2026-03-11T09:00:00', timeZone: 'W. Europe Standard Time' });
  });

  test('putEvent with the event id moves and retitles it; delete removes it, and deleting it again succeeds', async () => {
    const calendarId = standIn.addCalendar({ name: 'Move' });
    const session = newSession();
    const own = { ...write, appointmentId: randomUUID() };
    const id = await session.putEvent(calendarId, null, own);
    const moved = { ...own, title: 'Moved check-up', start: new Date('2026-03-12T09:30:00Z'), end: new Date('2026-03-12T10:00:00Z') };
    assert.equal(await session.putEvent(calendarId, id, moved), id);
    const [event] = standIn.events(calendarId);
    assert.equal(event?.subject, 'Moved check-up');
    assert.deepEqual(event?.start, { dateTime: '2026-03-12T10:30:00', timeZone: 'W. Europe Standard Time' });
    assert.ok(standIn.requests.some((request) => request.method === 'PATCH' && request.pathname === `/v1.0/me/events/${id}`));

    await session.deleteEvent(calendarId, id);
    assert.deepEqual(standIn.events(calendarId), []);
    await session.deleteEvent(calendarId, id);
  });

  test('an event deleted in Outlook is made again when the appointment moves', async () => {
    const calendarId = standIn.addCalendar({ name: 'Recreate' });
    const session = newSession();
    const own = { ...write, appointmentId: randomUUID() };
    const id = await session.putEvent(calendarId, null, own);
    standIn.deleteEvent(id);
    const moved = { ...own, start: new Date('2026-03-13T09:00:00Z'), end: new Date('2026-03-13T10:00:00Z') };
    const again = await session.putEvent(calendarId, id, moved);
    assert.notEqual(again, id);
    const stored = standIn.events(calendarId);
    assert.equal(stored.length, 1);
    assert.equal(stored[0]?.id, again);
    assert.ok(stored[0]?.transactionId?.startsWith(`slotwise-${own.appointmentId}-`));
    assert.equal(await session.putEvent(calendarId, id, moved), again, 'retrying the re-creation finds the same event');
  });

  test('a zone without a Windows name is written in UTC; an ambiguous wall time too', async () => {
    const calendarId = standIn.addCalendar({ name: 'Zones' });
    const session = newSession();
    await session.putEvent(calendarId, null, { ...write, appointmentId: randomUUID(), timeZone: 'Europe/Amsterdam' });
    // 02:30 on 25 October 2026 happens twice in Berlin: first in summer time (00:30Z), then in winter time (01:30Z).
    for (const start of ['2026-10-25T00:30:00Z', '2026-10-25T01:30:00Z']) {
      const repeated = { ...write, appointmentId: randomUUID(), start: new Date(start), end: new Date('2026-10-25T02:30:00Z') };
      await session.putEvent(calendarId, null, repeated);
    }
    const [amsterdam, summer, winter] = standIn.events(calendarId);
    assert.deepEqual(amsterdam?.start, { dateTime: '2026-03-10T14:00:00', timeZone: 'UTC' });
    assert.deepEqual(summer?.start, { dateTime: '2026-10-25T00:30:00', timeZone: 'UTC' });
    assert.deepEqual(winter?.start, { dateTime: '2026-10-25T01:30:00', timeZone: 'UTC' });
    assert.deepEqual(winter?.end, { dateTime: '2026-10-25T03:30:00', timeZone: 'W. Europe Standard Time' });
  });

  test('writing to a calendar without write access is a ProviderError 403', async () => {
    const calendarId = standIn.addCalendar({ name: 'Read only', canEdit: false });
    await assert.rejects(newSession().putEvent(calendarId, null, { ...write, appointmentId: randomUUID() }), (error: unknown) => error instanceof ProviderError && error.status === 403);
  });
});

describe('time zone names', () => {
  test('every Windows name maps to a zone this runtime knows; IANA names pass through; custom ones do not', () => {
    for (const name of WINDOWS_ZONE_NAMES) assert.ok(IANAZone.isValidZone(ianaZoneOf(name) ?? ''), name);
    assert.equal(ianaZoneOf('pacific standard time'), 'America/Los_Angeles');
    assert.equal(ianaZoneOf('Europe/Vienna'), 'Europe/Vienna');
    assert.equal(ianaZoneOf('tzone://Microsoft/Utc'), 'UTC');
    assert.equal(ianaZoneOf('Customized Time Zone'), null);
    assert.equal(ianaZoneOf(''), null);
  });
});
