/**
 * npm run bench:calendar-sync
 *
 * Times the sync of one external calendar holding 5,000 events (issue 15), through the whole
 * stack: POST /v3/resource/:id/externalCalendars/sync on an app connected by the real OAuth dance
 * (or CalDAV credentials) to a local provider: the Google and Microsoft stand-ins of the tests,
 * and a real radicale (1,000 events: see CALDAV_EVENTS) when it is installed. For each: the first (full) sync, a sync with nothing
 * changed, and a sync after 50 edits. Embedded database; PostgreSQL too when BENCH_DATABASE_URL
 * (else DATABASE_URL, default the local server) can be reached.
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { DateTime } from 'luxon';
import pg from 'pg';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/platform/config.js';
import { openDatabase } from '../src/platform/database/index.js';
import type { DatabaseHandle } from '../src/platform/database/index.js';
import { migrate } from '../src/platform/database/migrate.js';
import { resolveSecrets } from '../src/platform/secrets.js';
import type { App } from '../src/platform/http/types.js';
import { startGoogleStandIn } from '../test/helpers/google-stand-in.js';
import { startMicrosoftStandIn } from '../test/helpers/microsoft-stand-in.js';
import { radicaleMissing, startRadicale } from '../test/helpers/radicale.js';
import { createWorld } from '../test/helpers/world.js';

const EVENTS = 5000;
const EDITS = 50;
/**
 * Radicale stores one file per object and slows with every object a collection holds: putting
 * 5,000 takes about ten minutes on this machine, so its calendar holds 1,000.
 */
const CALDAV_EVENTS = 1000;
const REDIRECT_HOST = 'bench.calendar.example';
const fmt = (ms: number) => `${ms.toFixed(0)} ms`;

/** A provider under test: its app settings, how to fill and edit its calendar, and how to connect. */
interface Target {
  name: string;
  env: Record<string, string>;
  fill(): Promise<void>;
  edit(): Promise<void>;
  connectBody?: Record<string, string>;
  calendarId: string;
  close(): Promise<void>;
}

/** Event i: within the next 300 days, on a weekday hour between 08:00 and 18:00 London. */
function eventTime(i: number, shift = 0) {
  const start = DateTime.now().setZone('Europe/London').startOf('day').plus({ days: 1 + (i % 300), hours: 8 + (Math.floor(i / 300) % 10), minutes: shift });
  return { start: start.toJSDate(), end: start.plus({ minutes: 45 }).toJSDate() };
}

async function googleTarget(): Promise<Target> {
  const google = await startGoogleStandIn({ timeZone: 'Europe/London' });
  const ids: string[] = [];
  let round = 0;
  return {
    name: 'Google (stand-in)',
    env: {
      GOOGLE_CLIENT_ID: google.clientId,
      GOOGLE_CLIENT_SECRET: google.clientSecret,
      GOOGLE_AUTH_URL: google.urls.authUrl,
      GOOGLE_TOKEN_URL: google.urls.tokenUrl,
      GOOGLE_API_URL: google.urls.apiUrl,
      GOOGLE_REVOKE_URL: google.urls.revokeUrl,
    },
    calendarId: google.primaryCalendarId,
    async fill() {
      for (let i = 0; i < EVENTS; i++) {
        const { start, end } = eventTime(i);
        ids.push(google.addEvent(google.primaryCalendarId, { summary: `Event ${i}`, start: { dateTime: start.toISOString() }, end: { dateTime: end.toISOString() } }));
      }
    },
    async edit() {
      round++;
      for (let i = 0; i < EDITS; i++) {
        const { start, end } = eventTime(i, 15 * round);
        google.updateEvent(google.primaryCalendarId, ids[i]!, { start: { dateTime: start.toISOString() }, end: { dateTime: end.toISOString() } });
      }
    },
    close: () => google.close(),
  };
}

async function microsoftTarget(): Promise<Target> {
  const graph = await startMicrosoftStandIn();
  const ids: string[] = [];
  let round = 0;
  const utc = (d: Date) => ({ dateTime: d.toISOString().replace('Z', ''), timeZone: 'UTC' });
  return {
    name: 'Microsoft Graph (stand-in)',
    env: {
      MICROSOFT_CLIENT_ID: graph.clientId,
      MICROSOFT_CLIENT_SECRET: graph.clientSecret,
      MICROSOFT_AUTH_URL: graph.urls.authUrl,
      MICROSOFT_TOKEN_URL: graph.urls.tokenUrl,
      MICROSOFT_GRAPH_URL: graph.urls.apiUrl,
    },
    calendarId: graph.defaultCalendarId,
    async fill() {
      for (let i = 0; i < EVENTS; i++) {
        const { start, end } = eventTime(i);
        ids.push(graph.addEvent(graph.defaultCalendarId, { subject: `Event ${i}`, start: utc(start), end: utc(end) }));
      }
    },
    async edit() {
      round++;
      for (let i = 0; i < EDITS; i++) {
        const { start, end } = eventTime(i, 15 * round);
        graph.updateEvent(ids[i]!, { start: utc(start), end: utc(end) });
      }
    },
    close: () => graph.close(),
  };
}

async function caldavTarget(): Promise<Target | null> {
  if (radicaleMissing()) return null;
  const user = 'bench@example.com';
  const password = 'bench-password';
  const radicale = await startRadicale({ users: { [user]: password } });
  const calendarUrl = await radicale.makeCalendar(user, 'work', { displayName: 'Work' });
  let round = 0;
  const stamp = (d: Date) => d.toISOString().replace(/[-:]/g, '').replace(/\.\d{3}/, '');
  const object = (i: number, shift = 0) => {
    const { start, end } = eventTime(i, shift);
    return ['BEGIN:VCALENDAR', 'VERSION:2.0', 'PRODID:-//bench//EN', 'BEGIN:VEVENT', `UID:event-${i}`, `DTSTAMP:${stamp(new Date())}`, `DTSTART:${stamp(start)}`, `DTEND:${stamp(end)}`, `SUMMARY:Event ${i}`, 'END:VEVENT', 'END:VCALENDAR', ''].join('\r\n');
  };
  return {
    name: 'CalDAV (radicale)',
    env: {},
    connectBody: { provider: 'caldav', url: `${radicale.base}/${user}/`, username: user, password },
    calendarId: calendarUrl,
    async fill() {
      // Eight PUTs at a time: radicale writes each object as a file.
      for (let i = 0; i < CALDAV_EVENTS; i += 8) {
        await Promise.all(Array.from({ length: Math.min(8, CALDAV_EVENTS - i) }, (_, k) => radicale.putObject(user, calendarUrl, `event-${i + k}.ics`, object(i + k))));
      }
    },
    async edit() {
      round++;
      for (let i = 0; i < EDITS; i++) await radicale.putObject(user, calendarUrl, `event-${i}.ics`, object(i, 15 * round));
    },
    close: () => radicale.stop(),
  };
}

async function inject(app: App, method: 'GET' | 'POST' | 'PUT', url: string, headers: Record<string, string>, payload?: unknown) {
  const response = await app.inject({ method, url, headers, ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }) });
  if (response.statusCode >= 400) throw new Error(`${method} ${url}: ${response.statusCode} ${response.body}`);
  return response;
}

async function runTarget(label: string, database: DatabaseHandle, target: Target) {
  const config = loadConfig({ NODE_ENV: 'test', LOG_LEVEL: 'silent', RATE_LIMITS_ENABLED: 'false', PUBLIC_BASE_URL: 'http://127.0.0.1:9', WORKER_ENABLED: 'false', ...target.env });
  const secrets = await resolveSecrets(database.db, config);
  const app = await buildApp({ config, database, secrets });
  try {
    const tenant = await createWorld(app).tenant();
    await inject(app, 'PUT', '/v3/company', tenant.dashboard, { allowedDomains: [REDIRECT_HOST] });
    const resourceId = await tenant.resource({ name: `Bench ${randomUUID().slice(0, 8)}`, timezoneName: 'Europe/London' });
    const base = `/v3/resource/${resourceId}`;
    if (target.connectBody) {
      await inject(app, 'POST', `${base}/externalCalendar`, tenant.dashboard, target.connectBody);
    } else {
      const created = await inject(app, 'POST', `${base}/externalCalendar`, tenant.dashboard, { provider: target.name.startsWith('Google') ? 'google' : 'microsoft', redirectUrl: `https://${REDIRECT_HOST}/done` });
      const consent = await fetch(JSON.parse(created.body).authUrl, { redirect: 'manual' });
      const callback = new URL(consent.headers.get('location')!);
      await app.inject({ method: 'GET', url: `${callback.pathname}${callback.search}` });
    }
    await inject(app, 'POST', `${base}/externalCalendars/select`, tenant.dashboard, { calendarIds: [target.calendarId] });
    const sync = async () => {
      const t = performance.now();
      const response = await inject(app, 'POST', `${base}/externalCalendars/sync`, tenant.dashboard);
      return { ms: performance.now() - t, counts: JSON.parse(response.body) as { imported: number; updated: number; removed: number } };
    };
    const first = await sync();
    const unchanged = await sync();
    await target.edit();
    const edited = await sync();
    console.log(`  ${label} ${target.name}: full sync of ${first.counts.imported} events ${fmt(first.ms)}; nothing changed ${fmt(unchanged.ms)}; ${EDITS} edits ${fmt(edited.ms)} (${JSON.stringify(edited.counts)})`);
  } finally {
    await app.close();
  }
}

async function main() {
  console.log(`External calendar sync benchmark: one calendar of ${EVENTS} events, then ${EDITS} edits`);
  const targets: Target[] = [await googleTarget(), await microsoftTarget()];
  const caldav = await caldavTarget();
  if (caldav) targets.push(caldav);
  else console.log('  CalDAV: skipped (radicale is not installed: apt-get install radicale)');
  for (const target of targets) {
    const t = performance.now();
    await target.fill();
    console.log(`  filled ${target.name} in ${fmt(performance.now() - t)}`);
  }
  try {
    console.log('\nEmbedded database (PGlite):');
    const embedded = await openDatabase({});
    await migrate(embedded.db);
    for (const target of targets) await runTarget('embedded', embedded, target);
    await embedded.close();

    const serverUrl = process.env.BENCH_DATABASE_URL || process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
    const admin = new pg.Client({ connectionString: serverUrl });
    try {
      await admin.connect();
    } catch (error) {
      console.log(`\nPostgreSQL: skipped (${(error as Error).message}); set BENCH_DATABASE_URL`);
      return;
    }
    const name = `slotwise_bench_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
    await admin.query(`create database ${name}`);
    const url = new URL(serverUrl);
    url.pathname = `/${name}`;
    try {
      console.log('\nPostgreSQL:');
      const server = await openDatabase({ databaseUrl: url.toString(), poolSize: 10 });
      await migrate(server.db);
      for (const target of targets) await runTarget('postgres', server, target);
      await server.close();
    } finally {
      await admin.query(`drop database if exists ${name} with (force)`);
      await admin.end();
    }
  } finally {
    for (const target of targets) await target.close();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
