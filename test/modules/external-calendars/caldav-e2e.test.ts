// External calendars end to end with a real CalDAV server (Debian's radicale, started by
// test/helpers/radicale.ts): the shared provider story (scenario.ts) with CalDAV credentials,
// and a wrong password refused at connect. A database of its own: the workers claim every company's work.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import ICAL from 'ical.js';
import { createTestContext, json } from '../../helpers/app.js';
import type { TestContext } from '../../helpers/app.js';
import { radicaleMissing, startRadicale } from '../../helpers/radicale.js';
import type { Radicale } from '../../helpers/radicale.js';
import { calendarSetup, runProviderStory } from './scenario.js';
import type { ProviderHarness } from './scenario.js';

const USER = 'ann@example.com';
const PASSWORD = 'ann-app-password';
const missing = radicaleMissing();
let radicale: Radicale;
let context: TestContext;
let calendarUrl: string;

before(async () => {
  if (missing) return;
  radicale = await startRadicale({ users: { [USER]: PASSWORD } });
  calendarUrl = await radicale.makeCalendar(USER, 'work', { displayName: 'Work' });
  context = await createTestContext({}, { dedicatedDatabase: true });
});
after(async () => {
  await context?.close();
  await radicale?.stop();
});

const stamp = (d: Date) => d.toISOString().replace(/[-:]/g, '').replace(/\.\d{3}/, '');

function vevent(uid: string, start: Date, end: Date, extra: string[] = []): string {
  return ['BEGIN:VCALENDAR', 'VERSION:2.0', 'PRODID:-//test//EN', 'BEGIN:VEVENT', `UID:${uid}`, `DTSTAMP:${stamp(new Date())}`, `DTSTART:${stamp(start)}`, `DTEND:${stamp(end)}`, ...extra, 'END:VEVENT', 'END:VCALENDAR', ''].join('\r\n');
}

/** iCalendar marks free time with TRANSP and a declined invitation with the user's PARTSTAT. */
function harness(): ProviderHarness {
  let counter = 0;
  return {
    provider: 'caldav',
    calendarId: calendarUrl,
    async addEvent(calendarId, { start, end, kind, title }) {
      const uid = `event-${++counter}-${Date.now()}`;
      const extra = [`SUMMARY:${title ?? kind}`];
      if (kind === 'free') extra.push('TRANSP:TRANSPARENT');
      if (kind === 'declined') extra.push(`ATTENDEE;PARTSTAT=DECLINED:mailto:${USER}`, `ORGANIZER:mailto:boss@example.com`);
      await radicale.putObject(USER, calendarId, `${uid}.ics`, vevent(uid, start, end, extra));
      return uid;
    },
    async moveEvent(calendarId, eventId, start, end) {
      await radicale.putObject(USER, calendarId, `${eventId}.ics`, vevent(eventId, start, end, ['SUMMARY:moved']));
    },
    async removeEvent(calendarId, eventId) {
      await radicale.deleteObject(USER, `${calendarId}${eventId}.ics`);
    },
    async writtenEvents(calendarId) {
      const names = (await radicale.listObjects(USER, calendarId)).filter((name) => name.startsWith('slotwise-'));
      const events = [];
      for (const name of names) {
        const text = await radicale.getObject(USER, `${calendarId}${name}`);
        if (!text) continue;
        const event = new ICAL.Event(new ICAL.Component(ICAL.parse(text)).getFirstSubcomponent('vevent')!);
        events.push({ id: name, title: event.summary, description: event.description ?? '', start: event.startDate.toJSDate(), end: event.endDate.toJSDate() });
      }
      return events;
    },
  };
}

test('CalDAV (radicale): connect, select, busy time in and out, write-back, disconnect', { skip: missing ?? false }, async () => {
  // The declined invitation is matched on the user's address: the user name is an email here.
  await runProviderStory(context, harness(), { url: `${radicale.base}/${USER}/`, username: USER, password: PASSWORD });
});

test('a wrong CalDAV password or a server that is not CalDAV is a 400 naming the field', { skip: missing ?? false }, async () => {
  const s = await calendarSetup(context);
  const wrong = await context.app.inject({
    method: 'POST',
    url: `/v3/resource/${s.resourceIds[0]}/externalCalendar`,
    headers: s.headers,
    payload: { provider: 'caldav', url: `${radicale.base}/${USER}/`, username: USER, password: 'nope' },
  });
  assert.equal(wrong.statusCode, 400, wrong.body);
  assert.equal(json(wrong).errors[0].path, 'password');
  const missingFields = await context.app.inject({ method: 'POST', url: `/v3/resource/${s.resourceIds[0]}/externalCalendar`, headers: s.headers, payload: { provider: 'caldav', url: `${radicale.base}/` } });
  assert.equal(missingFields.statusCode, 400);
  const notHttps = await context.app.inject({
    method: 'POST',
    url: `/v3/resource/${s.resourceIds[0]}/externalCalendar`,
    headers: s.headers,
    payload: { provider: 'caldav', url: 'http://calendar.example.com/dav/', username: USER, password: PASSWORD },
  });
  assert.equal(notHttps.statusCode, 400);
  assert.equal(json(notHttps).errors[0].path, 'url');
});
