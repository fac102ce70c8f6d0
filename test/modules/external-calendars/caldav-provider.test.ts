// The CalDAV provider client against a real CalDAV server (Debian's radicale, test/helpers/radicale.ts)
// and, for failures radicale cannot be made to show, plain node:http stand-ins on 127.0.0.1.
// Calendars are changed behind the provider's back with raw PUT/DELETE, as another client would.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createOutboundFetch } from '../../../src/platform/outbound/fetch.js';
import { createCaldavProvider } from '../../../src/modules/external-calendars/providers/caldav.js';
import { GrantRevokedError, ProviderError, SyncCursorExpiredError } from '../../../src/modules/external-calendars/providers/types.js';
import type { BusyEvent, CaldavCredentials, SyncWindow } from '../../../src/modules/external-calendars/providers/types.js';
import { radicaleMissing, startRadicale } from '../../helpers/radicale.js';
import type { Radicale } from '../../helpers/radicale.js';

const USER = 'olive@example.com';
const PASSWORD = 'an app password';
// A generous deadline: only a guard against a hang, never a measure of speed.
const provider = createCaldavProvider({ fetch: createOutboundFetch({ timeoutMs: 15_000, allowLoopbackHttp: true }) });
const WINDOW: SyncWindow = { from: new Date('2026-03-01T00:00:00Z'), to: new Date('2026-05-01T00:00:00Z'), zone: 'Europe/London' };

function ics(...components: string[]): string {
  return ['BEGIN:VCALENDAR', 'VERSION:2.0', 'PRODID:-//Another client//EN', ...components, 'END:VCALENDAR', ''].join('\r\n');
}

function vevent(uid: string, lines: string[]): string {
  return ['BEGIN:VEVENT', `UID:${uid}`, 'DTSTAMP:20260101T000000Z', ...lines, 'END:VEVENT'].join('\r\n');
}

function single(uid: string, start: string, end: string, extra: string[] = []): string {
  return ics(vevent(uid, [`DTSTART:${start}`, `DTEND:${end}`, `SUMMARY:${uid}`, ...extra]));
}

function byKey(events: BusyEvent[]): Record<string, [string, string]> {
  return Object.fromEntries(events.map((e) => [e.key, [e.start.toISOString(), e.end.toISOString()]]));
}

const LONDON_VTIMEZONE = [
  'BEGIN:VTIMEZONE',
  'TZID:Europe/London',
  'BEGIN:DAYLIGHT',
  'TZOFFSETFROM:+0000',
  'TZOFFSETTO:+0100',
  'TZNAME:BST',
  'DTSTART:19810329T010000',
  'RRULE:FREQ=YEARLY;BYMONTH=3;BYDAY=-1SU',
  'END:DAYLIGHT',
  'BEGIN:STANDARD',
  'TZOFFSETFROM:+0100',
  'TZOFFSETTO:+0000',
  'TZNAME:GMT',
  'DTSTART:19961027T020000',
  'RRULE:FREQ=YEARLY;BYMONTH=10;BYDAY=-1SU',
  'END:STANDARD',
  'END:VTIMEZONE',
].join('\r\n');

const NEW_YORK_CALENDAR_TIMEZONE = ics(
  [
    'BEGIN:VTIMEZONE',
    'TZID:America/New_York',
    'BEGIN:DAYLIGHT',
    'TZOFFSETFROM:-0500',
    'TZOFFSETTO:-0400',
    'DTSTART:20070311T020000',
    'RRULE:FREQ=YEARLY;BYMONTH=3;BYDAY=2SU',
    'END:DAYLIGHT',
    'BEGIN:STANDARD',
    'TZOFFSETFROM:-0400',
    'TZOFFSETTO:-0500',
    'DTSTART:20071104T020000',
    'RRULE:FREQ=YEARLY;BYMONTH=11;BYDAY=1SU',
    'END:STANDARD',
    'END:VTIMEZONE',
  ].join('\r\n'),
);

/** A weekly 09:00-10:00 London series over the clocks going forward (29 March 2026). */
function weeklyLondon(uid: string, withVtimezone: boolean): string {
  const master = vevent(uid, [
    'DTSTART;TZID=Europe/London:20260316T090000',
    'DTEND;TZID=Europe/London:20260316T100000',
    'RRULE:FREQ=WEEKLY;COUNT=7',
    'EXDATE;TZID=Europe/London:20260406T090000',
    'SUMMARY:Weekly',
  ]);
  // 13 April moved to the afternoon; 27 April (after the window) moved back into it, to 24 April.
  const moved = vevent(uid, [
    'RECURRENCE-ID;TZID=Europe/London:20260413T090000',
    'DTSTART;TZID=Europe/London:20260413T140000',
    'DTEND;TZID=Europe/London:20260413T150000',
    'SUMMARY:Weekly, later',
  ]);
  const pulledIn = vevent(uid, [
    'RECURRENCE-ID;TZID=Europe/London:20260427T090000',
    'DTSTART;TZID=Europe/London:20260424T100000',
    'DTEND;TZID=Europe/London:20260424T110000',
    'SUMMARY:Weekly, earlier',
  ]);
  return withVtimezone ? ics(LONDON_VTIMEZONE, master, moved, pulledIn) : ics(master, moved, pulledIn);
}

function expectedWeekly(uid: string): Record<string, [string, string]> {
  return {
    [`${uid}#2026-03-16T09:00:00Z`]: ['2026-03-16T09:00:00.000Z', '2026-03-16T10:00:00.000Z'],
    [`${uid}#2026-03-23T09:00:00Z`]: ['2026-03-23T09:00:00.000Z', '2026-03-23T10:00:00.000Z'],
    // British Summer Time from 29 March: 09:00 London is 08:00 UTC.
    [`${uid}#2026-03-30T08:00:00Z`]: ['2026-03-30T08:00:00.000Z', '2026-03-30T09:00:00.000Z'],
    [`${uid}#2026-04-13T08:00:00Z`]: ['2026-04-13T13:00:00.000Z', '2026-04-13T14:00:00.000Z'],
    [`${uid}#2026-04-20T08:00:00Z`]: ['2026-04-20T08:00:00.000Z', '2026-04-20T09:00:00.000Z'],
    [`${uid}#2026-04-27T08:00:00Z`]: ['2026-04-24T09:00:00.000Z', '2026-04-24T10:00:00.000Z'],
  };
}

/** A node:http server on 127.0.0.1 answering with `handler`; closed by the caller. */
async function standIn(handler: (response: ServerResponse) => void): Promise<{ server: Server; url: string }> {
  const server = createServer((request, response) => {
    request.resume();
    handler(response);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/` };
}

async function closeStandIn(server: Server | undefined): Promise<void> {
  if (!server) return;
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

const missing = radicaleMissing();

describe('CalDAV provider against radicale', { skip: missing ?? false }, () => {
  let radicale: Radicale;
  let credentials: CaldavCredentials;

  before(async () => {
    radicale = await startRadicale({ users: { [USER]: PASSWORD, other: 'other password' } });
    credentials = { url: `${radicale.base}/`, username: USER, password: PASSWORD };
  });
  after(async () => {
    await radicale?.stop();
  });

  test('check: good credentials pass from the server root, the principal, a calendar and the well-known address', async () => {
    const calendar = await radicale.makeCalendar(USER, 'checked');
    for (const url of [`${radicale.base}/`, `${radicale.base}/${encodeURIComponent(USER)}/`, calendar, `${radicale.base}/.well-known/caldav`]) {
      await provider.check({ ...credentials, url });
    }
  });

  test('check: a wrong password is a revoked grant', async () => {
    await assert.rejects(provider.check({ ...credentials, password: 'wrong' }), (error: unknown) => {
      assert.ok(error instanceof GrantRevokedError, String(error));
      assert.equal(error.message, 'CalDAV server refused the user name or password');
      return true;
    });
    await assert.rejects(provider.session({ ...credentials, password: 'wrong' }).listCalendars(), GrantRevokedError);
  });

  test('check: a server that is not CalDAV is a provider error saying so', async (t) => {
    const { server, url } = await standIn((response) => {
      response.writeHead(200, { 'content-type': 'text/html' });
      response.end('<html><body>Welcome</body></html>');
    });
    t.after(() => closeStandIn(server));
    await assert.rejects(provider.check({ ...credentials, url }), (error: unknown) => {
      assert.ok(error instanceof ProviderError && !(error instanceof GrantRevokedError), String(error));
      assert.match(error.message, /is not a CalDAV server/);
      return true;
    });
  });

  test('listCalendars: the calendar collections of the home, named, the first one primary; a calendar URL lists itself', async () => {
    const user = 'other';
    const other: CaldavCredentials = { url: `${radicale.base}/`, username: user, password: 'other password' };
    const work = await radicale.makeCalendar(user, 'work', { displayName: 'Work' });
    const home = await radicale.makeCalendar(user, 'home', { displayName: 'Home & garden' });
    const calendars = await provider.session(other).listCalendars();
    assert.deepEqual(calendars.map((c) => c.id).sort(), [home, work].sort());
    assert.deepEqual(Object.fromEntries(calendars.map((c) => [c.id, c.name])), { [work]: 'Work', [home]: 'Home & garden' });
    assert.deepEqual(calendars.map((c) => c.primary), [true, false]);
    assert.ok(calendars.every((c) => c.canWrite));

    const one = await provider.session({ ...other, url: work }).listCalendars();
    assert.deepEqual(one, [{ id: work, name: 'Work', primary: true, canWrite: true }]);
  });

  test('sync: full, then incremental; raw adds, edits and deletes show, an unchanged calendar answers nothing', async () => {
    const calendar = await radicale.makeCalendar(USER, 'synced');
    const session = provider.session(credentials);
    await radicale.putObject(USER, calendar, 'a.ics', single('a', '20260305T100000Z', '20260305T110000Z'));
    const bUrl = await radicale.putObject(USER, calendar, 'b.ics', single('b', '20260306T100000Z', '20260306T113000Z'));
    await radicale.putObject(USER, calendar, 'outside.ics', single('outside', '20260605T100000Z', '20260605T110000Z'));

    const first = await session.syncCalendar(calendar, null, WINDOW);
    assert.equal(first.full, true);
    assert.deepEqual(byKey(first.events), {
      a: ['2026-03-05T10:00:00.000Z', '2026-03-05T11:00:00.000Z'],
      b: ['2026-03-06T10:00:00.000Z', '2026-03-06T11:30:00.000Z'],
    });
    assert.deepEqual(first.events.map((e) => [e.transparency, e.eventType]), [['OPAQUE', null], ['OPAQUE', null]]);
    assert.equal(typeof first.cursor, 'string');

    const unchanged = await session.syncCalendar(calendar, first.cursor, WINDOW);
    assert.deepEqual({ ...unchanged, cursor: null }, { full: false, events: [], removed: [], cursor: null });

    // Another client adds c, moves a and deletes b.
    await radicale.putObject(USER, calendar, 'c.ics', single('c', '20260310T090000Z', '20260310T100000Z'));
    await radicale.putObject(USER, calendar, 'a.ics', single('a', '20260305T140000Z', '20260305T150000Z'));
    await radicale.deleteObject(USER, bUrl);
    const changed = await session.syncCalendar(calendar, unchanged.cursor, WINDOW);
    assert.equal(changed.full, true, 'a changed calendar answers its whole busy set');
    assert.deepEqual(byKey(changed.events), {
      a: ['2026-03-05T14:00:00.000Z', '2026-03-05T15:00:00.000Z'],
      c: ['2026-03-10T09:00:00.000Z', '2026-03-10T10:00:00.000Z'],
    });

    const quiet = await session.syncCalendar(calendar, changed.cursor, WINDOW);
    assert.equal(quiet.full, false);
    assert.deepEqual(quiet.events, []);

    // A server without sync tokens is asked for its getctag instead.
    const ctagOnly = JSON.stringify({ ...JSON.parse(quiet.cursor!), token: null });
    assert.deepEqual(await session.syncCalendar(calendar, ctagOnly, WINDOW), { full: false, events: [], removed: [], cursor: ctagOnly });
    await radicale.putObject(USER, calendar, 'c.ics', single('c', '20260310T090000Z', '20260310T093000Z'));
    const afterCtag = await session.syncCalendar(calendar, ctagOnly, WINDOW);
    assert.equal(afterCtag.full, true);
    assert.deepEqual(byKey(afterCtag.events).c, ['2026-03-10T09:00:00.000Z', '2026-03-10T09:30:00.000Z']);

    // A window reaching past the cursor's is answered in full.
    const wider = await session.syncCalendar(calendar, afterCtag.cursor, { ...WINDOW, to: new Date('2026-07-01T00:00:00Z') });
    assert.equal(wider.full, true);
    assert.deepEqual(Object.keys(byKey(wider.events)).sort(), ['a', 'c', 'outside']);
  });

  test('sync: a sync token the server no longer knows, or an unreadable cursor, asks for a full sync', async () => {
    const calendar = await radicale.makeCalendar(USER, 'expired');
    const session = provider.session(credentials);
    const first = await session.syncCalendar(calendar, null, WINDOW);
    const stale = JSON.stringify({ ...JSON.parse(first.cursor!), token: 'http://radicale.org/ns/sync/0000000000000000000000000000000000000000000000000000000000000000' });
    await assert.rejects(session.syncCalendar(calendar, stale, WINDOW), SyncCursorExpiredError);
    await assert.rejects(session.syncCalendar(calendar, 'not a cursor', WINDOW), SyncCursorExpiredError);
  });

  test('sync: free, cancelled, declined events and tasks are not busy time; events Slotwise wrote are, with their marker', async () => {
    const calendar = await radicale.makeCalendar(USER, 'filtered');
    const put = (name: string, text: string) => radicale.putObject(USER, calendar, name, text);
    await put('busy.ics', single('busy', '20260302T090000Z', '20260302T100000Z', ['TRANSP:OPAQUE']));
    await put('free.ics', single('free', '20260302T100000Z', '20260302T110000Z', ['TRANSP:TRANSPARENT']));
    await put('cancelled.ics', single('cancelled', '20260302T110000Z', '20260302T120000Z', ['STATUS:CANCELLED']));
    await put('declined.ics', single('declined', '20260302T120000Z', '20260302T130000Z', [
      'ORGANIZER:mailto:boss@example.com',
      `ATTENDEE;PARTSTAT=DECLINED:mailto:${USER.toUpperCase()}`,
    ]));
    await put('accepted.ics', single('accepted', '20260302T130000Z', '20260302T140000Z', [
      'ORGANIZER:mailto:boss@example.com',
      `ATTENDEE;PARTSTAT=ACCEPTED:mailto:${USER}`,
      'ATTENDEE;PARTSTAT=DECLINED:mailto:someone-else@example.com',
    ]));
    await put('ours.ics', single('slotwise-appointment-1', '20260302T140000Z', '20260302T150000Z'));
    await put('ours-copied.ics', single('copied-by-a-client', '20260302T150000Z', '20260302T160000Z', ['X-SLOTWISE-APPOINTMENT-ID:appointment-2']));
    // Written by Slotwise (any company) but free: not busy, marker or not.
    await put('ours-free.ics', single('slotwise-appointment-3', '20260302T170000Z', '20260302T180000Z', ['TRANSP:TRANSPARENT']));
    await put('task.ics', ics(['BEGIN:VTODO', 'UID:task', 'DTSTAMP:20260101T000000Z', 'DTSTART:20260302T160000Z', 'DUE:20260302T170000Z', 'SUMMARY:Task', 'END:VTODO'].join('\r\n')));
    // One occurrence of a busy series declined, one made free.
    await put('series.ics', ics(
      vevent('series', ['DTSTART:20260303T090000Z', 'DTEND:20260303T100000Z', 'RRULE:FREQ=DAILY;COUNT=3', `ATTENDEE;PARTSTAT=ACCEPTED:mailto:${USER}`]),
      vevent('series', ['RECURRENCE-ID:20260304T090000Z', 'DTSTART:20260304T090000Z', 'DTEND:20260304T100000Z', `ATTENDEE;PARTSTAT=DECLINED:mailto:${USER}`]),
      vevent('series', ['RECURRENCE-ID:20260305T090000Z', 'DTSTART:20260305T090000Z', 'DTEND:20260305T100000Z', 'TRANSP:TRANSPARENT']),
    ));

    const result = await provider.session(credentials).syncCalendar(calendar, null, WINDOW);
    assert.deepEqual(Object.keys(byKey(result.events)).sort(), ['accepted', 'busy', 'copied-by-a-client', 'series#2026-03-03T09:00:00Z', 'slotwise-appointment-1']);
    const markers = Object.fromEntries(result.events.map((event) => [event.key, event.marker ?? null]));
    assert.deepEqual(markers, {
      accepted: null,
      busy: null,
      'copied-by-a-client': 'appointment-2',
      'series#2026-03-03T09:00:00Z': null,
      'slotwise-appointment-1': 'appointment-1',
    });
  });

  test('sync: a weekly London series over the DST change, with an EXDATE and moved occurrences, lands on the right instants', async () => {
    const calendar = await radicale.makeCalendar(USER, 'recurring');
    // Once with the VTIMEZONE in the object (ical.js reads it), once with only the IANA TZID (Luxon).
    await radicale.putObject(USER, calendar, 'with-vtimezone.ics', weeklyLondon('weekly-vtz', true));
    await radicale.putObject(USER, calendar, 'iana-only.ics', weeklyLondon('weekly-iana', false));
    const window: SyncWindow = { ...WINDOW, to: new Date('2026-04-25T00:00:00Z') };
    const result = await provider.session(credentials).syncCalendar(calendar, null, window);
    assert.deepEqual(byKey(result.events), { ...expectedWeekly('weekly-vtz'), ...expectedWeekly('weekly-iana') });
  });

  test('sync: an all-day event covers midnight to midnight in the calendar\'s zone, else the window\'s', async () => {
    const london = await radicale.makeCalendar(USER, 'all-day');
    const newYork = await radicale.makeCalendar(USER, 'all-day-new-york', { timezone: NEW_YORK_CALENDAR_TIMEZONE });
    // 29 March 2026: London's clocks go forward, so its day is 23 hours long.
    const allDay = ics(vevent('holiday', ['DTSTART;VALUE=DATE:20260329', 'DTEND;VALUE=DATE:20260330', 'SUMMARY:Day off']));
    await radicale.putObject(USER, london, 'holiday.ics', allDay);
    await radicale.putObject(USER, newYork, 'holiday.ics', allDay);
    const session = provider.session(credentials);
    assert.deepEqual(byKey((await session.syncCalendar(london, null, WINDOW)).events), {
      holiday: ['2026-03-29T00:00:00.000Z', '2026-03-29T23:00:00.000Z'],
    });
    assert.deepEqual(byKey((await session.syncCalendar(newYork, null, WINDOW)).events), {
      holiday: ['2026-03-29T04:00:00.000Z', '2026-03-30T04:00:00.000Z'],
    });
  });

  test('putEvent writes one object per appointment, moves it, and deleteEvent removes it (also when already gone)', async () => {
    const calendar = await radicale.makeCalendar(USER, 'written');
    const session = provider.session(credentials);
    const write = {
      appointmentId: 'appt-42',
      title: 'Haircut, with Olive',
      description: 'Booked online\nSecond line',
      start: new Date('2026-03-20T10:00:00Z'),
      end: new Date('2026-03-20T10:45:00Z'),
      timeZone: 'Europe/London',
    };
    const id = await session.putEvent(calendar, null, write);
    assert.equal(id, `${calendar}slotwise-appt-42.ics`);
    // Called again after a crash, before the id was stored: the same object, not a second one.
    assert.equal(await session.putEvent(calendar, null, write), id);
    assert.deepEqual(await radicale.listObjects(USER, calendar), ['slotwise-appt-42.ics']);
    const stored = (await radicale.getObject(USER, id))!.replace(/\r\n /g, '');
    assert.match(stored, /^UID:slotwise-appt-42\r?$/m);
    assert.match(stored, /^X-SLOTWISE-APPOINTMENT-ID:appt-42\r?$/m);
    assert.match(stored, /^SUMMARY:Haircut\\, with Olive\r?$/m);
    assert.match(stored, /^DESCRIPTION:Booked online\\nSecond line\r?$/m);
    assert.match(stored, /^DTSTART:20260320T100000Z\r?$/m);
    assert.match(stored, /^DTEND:20260320T104500Z\r?$/m);

    // Rescheduled: the same object, new times; read back as busy time carrying its marker (the
    // core, not the provider, tells its own appointments from another company's).
    const moved = { ...write, start: new Date('2026-03-21T15:00:00Z'), end: new Date('2026-03-21T16:00:00Z') };
    assert.equal(await session.putEvent(calendar, id, moved), id);
    assert.deepEqual(await radicale.listObjects(USER, calendar), ['slotwise-appt-42.ics']);
    assert.match((await radicale.getObject(USER, id))!, /^DTSTART:20260321T150000Z\r?$/m);
    assert.deepEqual((await session.syncCalendar(calendar, null, WINDOW)).events, [
      { key: 'slotwise-appt-42', start: moved.start, end: moved.end, transparency: 'OPAQUE', eventType: null, marker: 'appt-42' },
    ]);

    await session.deleteEvent(calendar, id);
    assert.equal(await radicale.getObject(USER, id), null);
    await session.deleteEvent(calendar, id);
  });

  test('every request goes through the OutboundFetch it was given', async () => {
    const calendar = await radicale.makeCalendar(USER, 'routed');
    await radicale.putObject(USER, calendar, 'a.ics', single('a', '20260305T100000Z', '20260305T110000Z'));
    // The provider only knows a name that does not resolve; only its fetch knows where the server is.
    const outbound = createOutboundFetch({ timeoutMs: 15_000, allowLoopbackHttp: true });
    const methods = new Set<string>();
    const routed = createCaldavProvider({
      fetch: (input, init) => {
        const url = new URL(String(input));
        assert.equal(url.host, 'caldav.invalid');
        methods.add(init?.method ?? 'GET');
        return outbound(`${radicale.base}${url.pathname}${url.search}`, init);
      },
    });
    const routedCredentials = { ...credentials, url: 'http://caldav.invalid/' };
    await routed.check(routedCredentials);
    const session = routed.session(routedCredentials);
    const routedCalendar = (await session.listCalendars()).find((c) => c.id.endsWith('/routed/'))!.id;
    assert.equal(routedCalendar, calendar.replace(radicale.base, 'http://caldav.invalid'));
    const first = await session.syncCalendar(routedCalendar, null, WINDOW);
    assert.deepEqual(Object.keys(byKey(first.events)), ['a']);
    assert.equal((await session.syncCalendar(routedCalendar, first.cursor, WINDOW)).full, false);
    const id = await session.putEvent(routedCalendar, null, {
      appointmentId: 'routed', title: 'Routed', description: '', start: new Date('2026-03-09T10:00:00Z'), end: new Date('2026-03-09T11:00:00Z'), timeZone: 'UTC',
    });
    await session.deleteEvent(routedCalendar, id);
    assert.deepEqual([...methods].sort(), ['DELETE', 'PROPFIND', 'PUT', 'REPORT']);
  });
});

describe('CalDAV provider failures (stand-ins)', () => {
  const servers: Server[] = [];
  after(async () => {
    for (const server of servers) await closeStandIn(server);
  });

  test('a server that never answers is a provider error with no status, within the deadline', async () => {
    const { server, url } = await standIn(() => {
      // never answers
    });
    servers.push(server);
    const impatient = createCaldavProvider({ fetch: createOutboundFetch({ timeoutMs: 300, allowLoopbackHttp: true }) });
    const credentials = { url, username: USER, password: PASSWORD };
    for (const call of [() => impatient.check(credentials), () => impatient.session(credentials).syncCalendar(`${url}cal/`, null, WINDOW)]) {
      await assert.rejects(call(), (error: unknown) => {
        assert.ok(error instanceof ProviderError, String(error));
        assert.equal(error.status, null);
        assert.match(error.message, /did not answer in time/);
        return true;
      });
    }
  });

  test('an address the outbound rules refuse is a provider error naming the rule', async () => {
    const strict = createCaldavProvider({ fetch: createOutboundFetch({ timeoutMs: 15_000, allowLoopbackHttp: false }) });
    await assert.rejects(strict.check({ url: 'http://127.0.0.1:9/', username: USER, password: PASSWORD }), (error: unknown) => {
      assert.ok(error instanceof ProviderError, String(error));
      assert.equal(error.status, null);
      assert.match(error.message, /not allowed: .*https/);
      return true;
    });
  });

  test('429 and 503 carry their status and Retry-After; 401 is a revoked grant', async () => {
    const cases: Array<[number, Record<string, string>]> = [[503, { 'retry-after': '7' }], [429, { 'retry-after': '2' }], [500, {}]];
    for (const [status, headers] of cases) {
      const { server, url } = await standIn((response) => {
        response.writeHead(status, headers);
        response.end('busy');
      });
      servers.push(server);
      await assert.rejects(provider.session({ url, username: USER, password: PASSWORD }).listCalendars(), (error: unknown) => {
        assert.ok(error instanceof ProviderError, String(error));
        assert.equal(error.status, status);
        assert.equal(error.retryAfterMs, headers['retry-after'] ? Number(headers['retry-after']) * 1000 : null);
        return true;
      });
    }
    const { server, url } = await standIn((response) => {
      response.writeHead(401, { 'www-authenticate': 'Basic realm="x"' });
      response.end();
    });
    servers.push(server);
    await assert.rejects(provider.session({ url, username: USER, password: PASSWORD }).putEvent(`${url}cal/`, null, {
      appointmentId: 'a', title: 't', description: '', start: new Date('2026-03-01T10:00:00Z'), end: new Date('2026-03-01T11:00:00Z'), timeZone: 'UTC',
    }), GrantRevokedError);
  });
});
