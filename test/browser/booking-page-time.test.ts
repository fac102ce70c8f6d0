// The booking page's time handling in Chromium, against the real clock: a visitor in New York books
// a London location's time inside the next weeks when the two zones are not the usual hours apart
// (their daylight saving time starts or ends on different dates), a visitor whose own clock jumps
// that day sees each time of the day once, and a hold really runs out (a location's booking timer
// of one minute, waited for in real time, so this file takes over a minute).
// Run by `npm run test:browser`, not by `npm test`.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { DateTime } from 'luxon';
import type { Browser, Page } from 'playwright-core';
import { json } from '../helpers/app.js';
import type { TestContext } from '../helpers/app.js';
import { ALWAYS_OPEN, LONDON } from '../helpers/world.js';
import type { BookableOptions } from '../helpers/world.js';
import { dayAhead, setup } from '../modules/appointments/fixtures.js';
import type { Setup } from '../modules/appointments/fixtures.js';
import { launch, open as openIn, pickDay, shownTimes, skip, step, text, listeningApp } from './helpers.js';

const NEW_YORK = 'America/New_York';
const KOLKATA = 'Asia/Kolkata';
/** How far ahead the tests look for a change of offsets: every zone used here has one within a year. */
const SEARCH_DAYS = 400;

const label = (time: DateTime, zone: string) => time.setZone(zone).setLocale('en-US').toFormat('h:mm a');
const plusDays = (date: string, days: number) => DateTime.fromISO(date).plus({ days }).toISODate()!;

/** Minutes between `zone`'s and `visitor`'s clocks at `zone`'s 09:00 on `date`. */
function gap(date: string, zone: string, visitor: string): number {
  const nine = DateTime.fromISO(`${date}T09:00`, { zone });
  return nine.offset - nine.setZone(visitor).offset;
}

/**
 * The next stretch of days after today (in `zone`) on which `zone` and `visitor` are a different
 * number of hours apart than today: its first day, and the first day after it (back to the other
 * gap). In November, for London and New York: the second Sunday of March to the day before the
 * last Sunday of March.
 */
function nextGapWindow(zone: string, visitor: string): { first: string; after: string } {
  const today = dayAhead(0, zone);
  let first: string | undefined;
  for (let i = 1; i <= SEARCH_DAYS; i++) {
    const date = plusDays(today, i);
    if (!first && gap(date, zone, visitor) !== gap(today, zone, visitor)) first = date;
    else if (first && gap(date, zone, visitor) !== gap(first, zone, visitor)) return { first, after: date };
  }
  throw new Error(`${zone} and ${visitor} do not change their gap twice in ${SEARCH_DAYS} days`);
}

/** The next day after today on which `zone`'s clock jumps (a day of 23 or 25 hours). */
function nextJumpDay(zone: string): string {
  const today = DateTime.now().setZone(zone).startOf('day');
  for (let i = 1; i <= SEARCH_DAYS; i++) {
    const day = today.plus({ days: i });
    if (day.plus({ days: 1 }).diff(day, 'hours').hours !== 24) return day.toISODate()!;
  }
  throw new Error(`${zone} has no daylight saving change in ${SEARCH_DAYS} days`);
}

describe('the booking page across time zones and in real time', { skip }, () => {
  let context: TestContext;
  let browser: Browser;
  let origin: string;

  before(async () => {
    ({ context, origin } = await listeningApp({ PUBLIC_ALLOW_HTTP_ORIGINS: 'true' }));
    browser = await launch();
  });

  after(async () => {
    await browser?.close();
    await context?.close();
  });

  // The service's book-ahead is left at none (no limit), so a day months ahead can be booked.
  async function shop(options: BookableOptions = {}): Promise<Setup> {
    const tenant = await context.world.tenant({ name: 'Acme Dental', allowedDomains: [new URL(origin).host] });
    return setup(context, { tenant, ...options, service: { showOnline: true } });
  }

  const open = (options: Parameters<Browser['newContext']>[0] = {}): Promise<Page> => openIn(browser, options);

  async function chooseService(page: Page, s: Setup) {
    await page.goto(`${origin}/book/${s.tenant.publicClientId}`);
    await page.getByRole('button', { name: /60 min/ }).first().click();
    await page.locator('table.calendar button:not([disabled])').first().waitFor();
  }

  /** The location's hourly starts 09:00 to 16:00 on `date`, as the visitor's clock reads them. */
  const nineToFour = (date: string, zone: string, visitor: string) =>
    Array.from({ length: 8 }, (_, i) => label(DateTime.fromISO(`${date}T09:00`, { zone }).plus({ hours: i }), visitor));

  test('a New York visitor books a London time in the weeks their clocks change on different dates', async () => {
    const s = await shop();
    const { first, after: back } = nextGapWindow(LONDON, NEW_YORK);
    // A day inside the window, halfway through it (the first day when the window is one day long).
    const inside = plusDays(first, Math.floor(DateTime.fromISO(back).diff(DateTime.fromISO(first), 'days').days / 2));
    const nineInside = DateTime.fromISO(`${inside}T09:00`, { zone: LONDON });
    assert.notEqual(gap(inside, LONDON, NEW_YORK), gap(back, LONDON, NEW_YORK), 'the two days are a different number of hours apart');

    const page = await open({ viewport: { width: 1280, height: 900 }, timezoneId: NEW_YORK });
    try {
      await chooseService(page, s);
      assert.equal(await page.getByLabel('Your time zone').inputValue(), NEW_YORK);

      // The first day after the window: the other gap, so London's 09:00 is another New York hour.
      await pickDay(page, back);
      await page.locator('ul.times button').first().waitFor();
      assert.deepEqual(await shownTimes(page), nineToFour(back, LONDON, NEW_YORK), `${back}: London 09:00-16:00 in New York time`);
      await step(page, 'after-window', 'dst');
      await page.getByRole('button', { name: 'Back' }).click();

      await pickDay(page, inside);
      await page.locator('ul.times button').first().waitFor();
      const times = await shownTimes(page);
      assert.deepEqual(times, nineToFour(inside, LONDON, NEW_YORK), `${inside}: London 09:00-16:00 in New York time`);
      assert.notEqual(times[0], nineToFour(back, LONDON, NEW_YORK)[0]);
      await step(page, 'inside-window', 'dst');

      await page.getByRole('button', { name: label(nineInside, NEW_YORK), exact: true }).click();
      await page.getByRole('heading', { name: 'Your details' }).waitFor();
      await page.getByLabel('Name').fill('Grace Hopper');
      await page.getByLabel('Email').fill('grace-dst@example.com');
      await page.getByRole('button', { name: 'Book', exact: true }).click();
      await page.getByRole('heading', { name: 'You are booked' }).waitFor();
      assert.match(await text(page), new RegExp(`${label(nineInside, NEW_YORK)} EDT|${label(nineInside, NEW_YORK)} EST`));
      await step(page, 'booked', 'dst');

      const booked = await context.database.db.selectFrom('appointments').select(['status', 'startTime']).where('companyId', '=', s.tenant.companyId).execute();
      assert.equal(booked.length, 1);
      assert.equal(booked[0]!.status, 'BK');
      assert.equal(new Date(booked[0]!.startTime).toISOString(), nineInside.toUTC().toISO(), `London's 09:00 on ${inside}`);
    } finally {
      await page.context().close();
    }
  });

  test('on the day a London visitor\'s clock jumps, each time of the day is listed once, as Luxon reads it', async () => {
    // A location in a zone without daylight saving time, open around the clock: the jump is inside the list.
    const s = await shop({ zone: KOLKATA, hours: ALWAYS_OPEN });
    const jump = nextJumpDay(LONDON);
    const start = DateTime.fromISO(jump, { zone: LONDON }).startOf('day');
    const end = start.plus({ days: 1 });
    // The location's hourly starts (its whole hours, 60-minute slots) that fall on the visitor's day.
    const expected: string[] = [];
    for (let at = start.setZone(KOLKATA).startOf('hour'); at < end; at = at.plus({ hours: 1 })) if (at >= start) expected.push(label(at, LONDON));
    assert.equal(expected.length, end.diff(start, 'hours').hours, 'one start per hour of a 23- or 25-hour day');

    const page = await open({ viewport: { width: 1280, height: 900 }, timezoneId: LONDON });
    try {
      await chooseService(page, s);
      assert.match(await text(page), /Times at the location are in Asia\/Kolkata\./);
      await pickDay(page, jump);
      await page.locator('ul.times button').first().waitFor();
      assert.deepEqual(await shownTimes(page), expected, `the times of ${jump} in London`);
      await step(page, 'jump-day', 'dst');
    } finally {
      await page.context().close();
    }
  });

  test('a hold runs out in real time: the countdown says so, the page goes back to the times, and the server let the time go', async () => {
    const s = await shop({ location: { bookingTimerMinutes: 1 } });
    const page = await open({ viewport: { width: 1280, height: 900 }, timezoneId: LONDON });
    const date = dayAhead(14);
    try {
      await chooseService(page, s);
      await pickDay(page, date);
      await page.getByRole('button', { name: '11:00 AM' }).click();
      await page.getByRole('heading', { name: 'Your details' }).waitFor();
      const visible = page.locator('p[aria-hidden="true"]', { hasText: 'Time left to finish' });
      const spoken = page.locator('[aria-live="polite"][aria-atomic="true"]');
      assert.match(await visible.innerText(), /^Time left to finish: (1:00|0:[0-5]\d)$/);
      // The live region speaks whole minutes, then "0:30" for the last half minute.
      assert.equal(await spoken.innerText(), 'Time left to finish: 1:00');
      await step(page, 'held', 'expiry');
      const [held] = await context.database.db.selectFrom('appointments').select(['id', 'expiresAt']).where('companyId', '=', s.tenant.companyId).execute();
      assert.ok(held?.expiresAt);

      await spoken.filter({ hasText: 'Time left to finish: 0:30' }).waitFor({ timeout: 45_000 });
      assert.match(await visible.innerText(), /^Time left to finish: 0:[0-3]\d$/);
      await page.getByLabel('Name').fill('Ada Lovelace');
      await page.getByLabel('Email').fill('ada-expired@example.com');

      // Nobody presses Book: the countdown runs out and the page says so by itself.
      // The page's clock when the alert first shows (polled each frame), to compare with expiresAt.
      const ranOutAt = await (await page.waitForFunction(() => (document.querySelector('[role="alert"]') ? Date.now() : 0), undefined, { timeout: 45_000, polling: 'raf' })).jsonValue();
      assert.match(await page.getByRole('alert').innerText(), /Your hold on this time ran out.*choose a time again/s);
      assert.ok(ranOutAt >= new Date(held.expiresAt).getTime(), `the page gave up the hold at ${new Date(ranOutAt).toISOString()}, before its expiresAt ${new Date(held.expiresAt).toISOString()}`);
      await page.getByRole('heading', { name: /Choose a time/ }).waitFor();
      await page.locator('ul.times button').first().waitFor();
      assert.equal(await page.getByRole('heading', { name: 'Your details' }).count(), 0);
      await step(page, 'ran-out', 'expiry');

      // The server let it go: the old hold cannot be booked, and the same time can be held again.
      const headers = { 'x-client-id': s.tenant.publicClientId, origin };
      const late = await context.app.inject({ method: 'PUT', url: `/v3/public/appointment/${held.id}/book`, headers, payload: { name: 'Ada Lovelace', email: 'ada-expired@example.com' } });
      assert.equal(late.statusCode, 400, late.body);
      assert.equal(json(late).code, 'BOOKING-111');
      const start = DateTime.fromISO(`${date}T11:00`, { zone: LONDON });
      const again = await context.app.inject({
        method: 'POST',
        url: `/v3/public/appointment/hold?LocationId=${s.locationId}&ServiceId=${s.serviceId}`,
        headers,
        payload: { Unavailability: { startTime: start.toISO(), endTime: start.plus({ hours: 1 }).toISO() }, ResourceIds: s.resourceIds },
      });
      assert.equal(again.statusCode, 201, again.body);
    } finally {
      await page.context().close();
    }
  });
});
