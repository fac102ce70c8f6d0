import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './ports.js';
import { spawnGroup } from './children.js';

// A real CalDAV server for the CalDAV provider's tests: Debian's radicale (3.x), started on
// 127.0.0.1 and a free port with its own storage folder, config and htpasswd file. Its helpers
// make calendars and write or delete raw iCalendar objects over HTTP with the test's global
// fetch, the way another calendar client of the same user would.

export const RADICALE_BINARY = '/usr/bin/radicale';

/** Why the radicale tests cannot run here, or null when they can. */
export function radicaleMissing(): string | null {
  return existsSync(RADICALE_BINARY)
    ? null
    : `${RADICALE_BINARY} is not installed; the CalDAV tests need Debian's radicale (apt-get install radicale)`;
}

export interface RadicaleOptions {
  /** user name -> password (stored in plain text: a test server only). */
  users?: Record<string, string>;
}

export interface CalendarOptions {
  displayName?: string;
  /** A whole VCALENDAR with one VTIMEZONE: the CalDAV calendar-timezone property. */
  timezone?: string;
}

export interface Radicale {
  /** http://127.0.0.1:port (no trailing slash). */
  base: string;
  /** Makes a calendar collection /user/slug/ with MKCALENDAR; returns its absolute URL (trailing slash). */
  makeCalendar(user: string, slug: string, options?: CalendarOptions): Promise<string>;
  /** PUTs a raw iCalendar object as `name` in a calendar; returns the object's absolute URL. */
  putObject(user: string, calendarUrl: string, name: string, ics: string): Promise<string>;
  /** DELETEs an object (404 tolerated). */
  deleteObject(user: string, url: string): Promise<void>;
  /** The raw iCalendar text of an object, or null when it does not exist. */
  getObject(user: string, url: string): Promise<string | null>;
  /** The names of the objects in a calendar (one PROPFIND Depth: 1). */
  listObjects(user: string, calendarUrl: string): Promise<string[]>;
  /** Kills the process group and removes the storage folder. */
  stop(): Promise<void>;
}

function xmlEscape(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

export async function startRadicale(options: RadicaleOptions = {}): Promise<Radicale> {
  const missing = radicaleMissing();
  if (missing) throw new Error(missing);
  const users = options.users ?? { alice: 'alice-password' };
  const folder = mkdtempSync(join(tmpdir(), 'slotwise-radicale-'));
  const port = await freePort();
  const htpasswd = join(folder, 'users');
  writeFileSync(htpasswd, Object.entries(users).map(([user, password]) => `${user}:${password}\n`).join(''));
  const config = join(folder, 'config');
  writeFileSync(
    config,
    [
      '[server]',
      `hosts = 127.0.0.1:${port}`,
      '[auth]',
      'type = htpasswd',
      `htpasswd_filename = ${htpasswd}`,
      'htpasswd_encryption = plain',
      // radicale waits after a wrong password (brute-force brake); tests check wrong passwords.
      'delay = 0',
      '[rights]',
      'type = owner_only',
      '[storage]',
      `filesystem_folder = ${join(folder, 'collections')}`,
      '[web]',
      'type = none',
      '[logging]',
      'level = warning',
      '',
    ].join('\n'),
  );

  let output = '';
  // Its own process group, also ended on SIGTERM or SIGINT (test/helpers/children.ts).
  const child: ChildProcess = spawnGroup(RADICALE_BINARY, ['--config', config], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));

  let stopped = false;
  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    if (child.exitCode === null && child.signalCode === null && child.pid) {
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
      await exited;
    }
    rmSync(folder, { recursive: true, force: true });
  };
  // Also on a runner stop or an exit that skips the test's after hook.
  process.once('exit', () => {
    if (!stopped && child.pid) {
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
      rmSync(folder, { recursive: true, force: true });
    }
  });

  const base = `http://127.0.0.1:${port}`;
  try {
    for (let attempt = 0; ; attempt++) {
      try {
        await fetch(`${base}/`, { method: 'OPTIONS' });
        break;
      } catch {
        // not listening yet
      }
      if (child.exitCode !== null) throw new Error(`radicale exited: ${output}`);
      if (attempt >= 400) throw new Error(`radicale did not answer on ${base}: ${output}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  } catch (error) {
    await stop();
    throw error;
  }

  const authorization = (user: string): string => {
    const password = users[user];
    if (password === undefined) throw new Error(`no radicale user ${user}`);
    return `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
  };
  const call = async (user: string, url: string, init: RequestInit, ok: number[]): Promise<Response> => {
    const response = await fetch(url, { ...init, headers: { authorization: authorization(user), ...(init.headers as Record<string, string>) } });
    if (!ok.includes(response.status)) {
      throw new Error(`radicale ${init.method ?? 'GET'} ${url} answered ${response.status}: ${await response.text()}`);
    }
    return response;
  };

  return {
    base,
    async makeCalendar(user, slug, calendar = {}) {
      const url = `${base}/${encodeURIComponent(user)}/${encodeURIComponent(slug)}/`;
      const props = [
        `<D:displayname>${xmlEscape(calendar.displayName ?? slug)}</D:displayname>`,
        '<C:supported-calendar-component-set><C:comp name="VEVENT"/></C:supported-calendar-component-set>',
        calendar.timezone ? `<C:calendar-timezone>${xmlEscape(calendar.timezone)}</C:calendar-timezone>` : '',
      ].join('');
      const body = `<?xml version="1.0" encoding="utf-8"?><C:mkcalendar xmlns:D="DAV:" xmlns:C="urn:ietf:params:xml:ns:caldav"><D:set><D:prop>${props}</D:prop></D:set></C:mkcalendar>`;
      await call(user, url, { method: 'MKCALENDAR', headers: { 'content-type': 'application/xml; charset=utf-8' }, body }, [201]);
      return url;
    },
    async putObject(user, calendarUrl, name, ics) {
      const url = new URL(name, calendarUrl).href;
      await call(user, url, { method: 'PUT', headers: { 'content-type': 'text/calendar; charset=utf-8' }, body: ics }, [200, 201, 204]);
      return url;
    },
    async deleteObject(user, url) {
      await call(user, url, { method: 'DELETE' }, [200, 204, 404]);
    },
    async getObject(user, url) {
      const response = await call(user, url, { method: 'GET' }, [200, 404]);
      return response.status === 404 ? null : response.text();
    },
    async listObjects(user, calendarUrl) {
      const body = '<?xml version="1.0" encoding="utf-8"?><D:propfind xmlns:D="DAV:"><D:prop><D:getetag/></D:prop></D:propfind>';
      const response = await call(user, calendarUrl, { method: 'PROPFIND', headers: { depth: '1', 'content-type': 'application/xml' }, body }, [207]);
      const text = await response.text();
      const path = decodeURIComponent(new URL(calendarUrl).pathname);
      return [...text.matchAll(/<(?:\w+:)?href>([^<]*)<\/(?:\w+:)?href>/g)]
        .map((match) => decodeURIComponent(match[1]!))
        .filter((href) => href !== path && href.startsWith(path))
        .map((href) => href.slice(path.length));
    },
    stop,
  };
}
