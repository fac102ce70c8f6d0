// External calendars end to end with Microsoft Graph (its local stand-in,
// test/helpers/microsoft-stand-in.ts): the shared provider story (scenario.ts), a revoked grant,
// and an expired delta link. The OAuth state, token scope and tenancy rules are provider-blind
// and tested once, in google-e2e.test.ts. A database of its own: the workers claim every company's work.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { DateTime } from 'luxon';
import { createTestContext, json } from '../../helpers/app.js';
import type { TestContext } from '../../helpers/app.js';
import { startMicrosoftStandIn } from '../../helpers/microsoft-stand-in.js';
import type { MicrosoftStandIn } from '../../helpers/microsoft-stand-in.js';
import { ianaZoneOf } from '../../../src/modules/external-calendars/providers/microsoft.js';
import { dayAhead } from '../appointments/fixtures.js';
import { PUBLIC_BASE_URL, calendarSetup, connectWithSelection, runProviderStory, syncNow } from './scenario.js';
import type { ProviderHarness } from './scenario.js';

let graph: MicrosoftStandIn;
let context: TestContext;

before(async () => {
  graph = await startMicrosoftStandIn();
  context = await createTestContext(
    {
      MICROSOFT_CLIENT_ID: graph.clientId,
      MICROSOFT_CLIENT_SECRET: graph.clientSecret,
      MICROSOFT_AUTH_URL: graph.urls.authUrl,
      MICROSOFT_TOKEN_URL: graph.urls.tokenUrl,
      MICROSOFT_GRAPH_URL: graph.urls.apiUrl,
      PUBLIC_BASE_URL,
    },
    { dedicatedDatabase: true },
  );
});
after(async () => {
  await context?.close();
  await graph?.close();
});

const utc = (d: Date) => ({ dateTime: d.toISOString().replace('Z', ''), timeZone: 'UTC' });
const instant = (value: { dateTime: string; timeZone: string }) => DateTime.fromISO(value.dateTime, { zone: ianaZoneOf(value.timeZone) ?? 'UTC' }).toJSDate();

/** Graph marks free time with showAs and a declined invitation with responseStatus. */
function harnessFor(stand: MicrosoftStandIn): ProviderHarness {
  return {
    provider: 'microsoft',
    calendarId: stand.defaultCalendarId,
    async addEvent(calendarId, { start, end, kind, title }) {
      return stand.addEvent(calendarId, {
        subject: title ?? kind,
        start: utc(start),
        end: utc(end),
        ...(kind === 'free' ? { showAs: 'free' } : {}),
        ...(kind === 'declined' ? { responseStatus: { response: 'declined' } } : {}),
      });
    },
    async moveEvent(_calendarId, eventId, start, end) {
      stand.updateEvent(eventId, { start: utc(start), end: utc(end) });
    },
    async removeEvent(_calendarId, eventId) {
      stand.deleteEvent(eventId);
    },
    async writtenEvents(calendarId) {
      return stand
        .events(calendarId)
        .filter((e) => e.transactionId?.startsWith('slotwise-') && !e.isCancelled)
        .map((e) => ({ id: e.id, title: e.subject ?? '', description: e.body?.content ?? '', start: instant(e.start), end: instant(e.end) }));
    },
  };
}

test('Microsoft: connect, select, busy time in and out, write-back, disconnect', async () => {
  await runProviderStory(context, harnessFor(graph));
});

test('an expired delta link is followed by a full read; a revoked grant marks the connection error', async () => {
  const s = await calendarSetup(context);
  const { connectionId } = await connectWithSelection(s, harnessFor(graph));
  const selected = await context.app.inject({ method: 'POST', url: `/v3/resource/${s.resourceIds[0]}/externalCalendars/select`, headers: s.headers, payload: { calendarIds: [graph.defaultCalendarId] } });
  assert.equal(selected.statusCode, 200, selected.body);
  const start = DateTime.fromISO(`${dayAhead(11)}T10:00`, { zone: s.zone });
  graph.addEvent(graph.defaultCalendarId, { subject: 'busy', start: utc(start.toJSDate()), end: utc(start.plus({ hours: 1 }).toJSDate()) });
  await syncNow(s);
  graph.expireDeltaTokens();
  graph.addEvent(graph.defaultCalendarId, { subject: 'busy 2', start: utc(start.plus({ hours: 2 }).toJSDate()), end: utc(start.plus({ hours: 3 }).toJSDate()) });
  const counts = await syncNow(s);
  assert.equal(counts.imported, 1, JSON.stringify(counts));
  assert.equal(counts.removed, 0);

  graph.revokeGrant();
  const refused = await context.app.inject({ method: 'POST', url: `/v3/resource/${s.resourceIds[0]}/externalCalendars/sync`, headers: s.headers });
  assert.equal(refused.statusCode, 400, refused.body);
  const list = json(await context.app.inject({ method: 'GET', url: `/v3/resource/${s.resourceIds[0]}/externalCalendars`, headers: s.headers }));
  const shown = list.data.find((c: { id: string }) => c.id === connectionId);
  assert.equal(shown.status, 'error');
  assert.match(shown.lastError, /revoked/);
});
