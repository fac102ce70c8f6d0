// The hosted booking page in Debian's Chromium (playwright-core, no browser download): a visitor
// books end to end at desktop and phone widths, axe finds no serious or critical problem on any
// step, and a screenshot of each step is written to test-results/booking-page/ for a person to see.
// Run by `npm run test:browser`, not by `npm test`.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { DateTime } from 'luxon';
import { chromium } from 'playwright-core';
import type { Browser, Page } from 'playwright-core';
import { AxeBuilder } from '@axe-core/playwright';
import { createTestContext } from '../helpers/app.js';
import type { TestContext } from '../helpers/app.js';
import { freePort } from '../helpers/ports.js';
import { LONDON } from '../helpers/world.js';
import { dayAhead, request, setup, slot } from '../modules/appointments/fixtures.js';
import type { Setup } from '../modules/appointments/fixtures.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const SHOTS = 'test-results/booking-page';
const skip = existsSync(CHROMIUM) ? false : `${CHROMIUM} is missing: install Debian's chromium package (apt-get install chromium) to run the browser tests`;

describe('the hosted booking page in Chromium', { skip }, () => {
  let context: TestContext;
  let browser: Browser;
  let origin: string;

  before(async () => {
    const port = await freePort();
    origin = `http://127.0.0.1:${port}`;
    context = await createTestContext({ PUBLIC_ALLOW_HTTP_ORIGINS: 'true' });
    await context.app.listen({ port, host: '127.0.0.1' });
    await mkdir(SHOTS, { recursive: true });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless=new', '--no-sandbox', '--disable-gpu'] });
  });

  after(async () => {
    await browser?.close();
    await context?.close();
  });

  async function shop(): Promise<Setup> {
    const tenant = await context.world.tenant({ allowedDomains: [new URL(origin).host] });
    return setup(context, { tenant, service: { showOnline: true } });
  }

  async function accessible(page: Page, step: string) {
    const result = await new AxeBuilder({ page }).analyze();
    const bad = result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
    assert.deepEqual(bad.map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).join(', ')})`), [], `axe on step ${step}`);
  }

  async function step(page: Page, name: string, label: string) {
    await page.screenshot({ path: `${SHOTS}/${label}-${name}.png`, fullPage: true });
    await accessible(page, `${label} ${name}`);
  }

  /** A page in a context of its own (axe needs the page to come from browser.newContext). */
  async function open(options: Parameters<Browser['newContext']>[0] = {}): Promise<Page> {
    const page = await (await browser.newContext(options)).newPage();
    page.setDefaultTimeout(10_000);
    page.on('pageerror', (error) => console.error('page error:', error.message));
    page.on('console', (message) => { if (message.type() === 'error') console.error('page console:', message.text()); });
    return page;
  }

  /** From the calendar of the current month to `date`'s day (one Next month click when it is next month's). */
  async function pickDay(page: Page, date: string, zone: string) {
    const thisMonth = DateTime.now().setZone(zone).toFormat('yyyy-MM');
    if (date.slice(0, 7) !== thisMonth) await page.getByRole('button', { name: 'Next month' }).click();
    const label = DateTime.fromISO(date).setLocale('en').toFormat('cccc, MMMM d');
    await page.getByRole('button', { name: label }).click();
  }

  for (const [label, width, height] of [['desktop', 1280, 900], ['phone', 360, 740]] as const) {
    test(`books end to end at ${width} px`, async () => {
      const s = await shop();
      const page = await open({ viewport: { width, height }, timezoneId: LONDON, locale: 'en-GB' });
      try {
        await page.goto(`${origin}/book/${s.tenant.publicClientId}`);
        await page.getByRole('heading', { name: 'Choose a service' }).waitFor();
        await step(page, '1-service', label);
        await page.getByRole('button', { name: /60 min/ }).first().click();

        await page.getByRole('heading', { name: 'Choose a day' }).waitFor();
        await page.locator('table.calendar button:not([disabled])').first().waitFor();
        await step(page, '2-day', label);
        const date = dayAhead(14);
        await pickDay(page, date, LONDON);

        await page.getByRole('heading', { name: /Choose a time/ }).waitFor();
        await page.locator('ul.times button').first().waitFor();
        await step(page, '3-time', label);
        await page.getByRole('button', { name: '9:00 AM' }).click();

        await page.getByRole('heading', { name: 'Your details' }).waitFor();
        await step(page, '4-details', label);
        assert.match(await page.locator('main').innerText(), /Time left to finish: \d+:\d\d/);
        await page.getByLabel('Name').fill('Cara Jones');
        await page.getByLabel('Email').fill(`cara-${label}@example.com`);
        await page.getByLabel('Phone (optional)').fill('+442079460000');
        await page.getByRole('button', { name: 'Book', exact: true }).click();

        await page.getByRole('heading', { name: 'You are booked' }).waitFor();
        await step(page, '5-confirmed', label);
        const ics = await page.getByRole('link', { name: /calendar file/ }).getAttribute('href');
        assert.match(decodeURIComponent(ics ?? ''), /BEGIN:VCALENDAR[\s\S]*DTSTART:\d{8}T090000Z|BEGIN:VCALENDAR[\s\S]*DTSTART:\d{8}T080000Z/);
        assert.match((await page.getByRole('link', { name: 'Add to Google Calendar' }).getAttribute('href')) ?? '', /^https:\/\/calendar\.google\.com\//);

        const booked = await context.database.db.selectFrom('appointments').select(['status', 'startTime']).where('companyId', '=', s.tenant.companyId).execute();
        assert.equal(booked.length, 1);
        assert.equal(booked[0]!.status, 'BK');
        assert.equal(DateTime.fromJSDate(new Date(booked[0]!.startTime)).setZone(LONDON).toFormat('yyyy-MM-dd HH:mm'), `${date} 09:00`);
      } finally {
        await page.context().close();
      }
    });
  }

  const text = async (page: Page) => (await page.locator('main').innerText()).replace(/[\s\u202f]+/g, ' ');
  const localTime = (date: string, time: string, zone: string) =>
    DateTime.fromISO(`${date}T${time}`, { zone: LONDON }).setZone(zone).setLocale('en-US').toFormat('h:mm a');

  test('a visitor in New York sees the London location\'s times in New York time, and the location\'s zone beside it', async () => {
    const s = await shop();
    const zone = 'America/New_York';
    const page = await open({ viewport: { width: 1280, height: 900 }, timezoneId: zone });
    try {
      await page.goto(`${origin}/book/${s.tenant.publicClientId}`);
      await page.getByRole('button', { name: /60 min/ }).first().click();
      await page.locator('table.calendar button:not([disabled])').first().waitFor();
      assert.equal(await page.getByLabel('Your time zone').inputValue(), zone);
      assert.match(await text(page), /Times at the location are in Europe\/London\./);
      const date = dayAhead(14);
      await pickDay(page, date, zone);
      await page.locator('ul.times button').first().waitFor();
      await step(page, 'times', 'new-york');
      const shown = (await page.locator('ul.times button').allInnerTexts()).map((t) => t.replace(/[\s\u202f]+/g, ' '));
      assert.equal(shown[0], localTime(date, '09:00', zone), 'the first London slot, 09:00, in New York time');
      assert.equal(shown.at(-1), localTime(date, '16:00', zone), 'the last London slot, 16:00, in New York time');

      // Back in London time through the select: the same slots read 9:00 AM to 4:00 PM.
      await page.getByLabel('Your time zone').selectOption(LONDON);
      await page.getByRole('button', { name: '9:00 AM' }).waitFor();
      assert.doesNotMatch(await text(page), /Times at the location are in/);
    } finally {
      await page.context().close();
    }
  });

  test('losing a race for a time says so and lets the visitor pick another', async () => {
    const s = await shop();
    const page = await open({ viewport: { width: 360, height: 740 }, timezoneId: LONDON });
    try {
      await page.goto(`${origin}/book/${s.tenant.publicClientId}`);
      await page.getByRole('button', { name: /60 min/ }).first().click();
      await page.locator('table.calendar button:not([disabled])').first().waitFor();
      const date = dayAhead(14);
      await pickDay(page, date, LONDON);
      await page.getByRole('button', { name: '9:00 AM' }).waitFor();

      // Someone else takes 09:00 with every resource while the page still shows it.
      for (const resourceId of s.resourceIds) {
        const taken = await request(s, 'create', { ...slot(date, '09:00'), ResourceIds: [resourceId] });
        assert.equal(taken.statusCode, 201, taken.body);
      }
      await page.getByRole('button', { name: '9:00 AM' }).click();
      await page.getByRole('alert').waitFor();
      assert.match(await page.getByRole('alert').innerText(), /Someone else took this time.*pick another time/s);
      await page.getByRole('button', { name: '9:00 AM' }).waitFor({ state: 'detached' });
      await step(page, 'slot-taken', 'race');

      await page.getByRole('button', { name: '10:00 AM' }).click();
      await page.getByLabel('Name').fill('Ada Lovelace');
      await page.getByLabel('Email').fill('ada-race@example.com');
      await page.getByRole('button', { name: 'Book', exact: true }).click();
      await page.getByRole('heading', { name: 'You are booked' }).waitFor();
      assert.match(await text(page), /10:00 AM/);
    } finally {
      await page.context().close();
    }
  });

  test('a hold that ran out says so and sends the visitor back to the times', async () => {
    const s = await shop();
    const page = await open({ viewport: { width: 1280, height: 900 }, timezoneId: LONDON });
    try {
      await page.goto(`${origin}/book/${s.tenant.publicClientId}`);
      await page.getByRole('button', { name: /60 min/ }).first().click();
      await page.locator('table.calendar button:not([disabled])').first().waitFor();
      await pickDay(page, dayAhead(14), LONDON);
      await page.getByRole('button', { name: '11:00 AM' }).click();
      await page.getByLabel('Name').fill('Ada Lovelace');
      await page.getByLabel('Email').fill('ada-expired@example.com');
      // The hold runs out on the server (a booking timer of minutes is too long for a test to wait).
      await context.database.db.updateTable('appointments').set({ expiresAt: new Date(Date.now() - 1000) }).where('companyId', '=', s.tenant.companyId).execute();
      await page.getByRole('button', { name: 'Book', exact: true }).click();
      await page.getByRole('alert').waitFor();
      assert.match(await page.getByRole('alert').innerText(), /Your hold on this time ran out.*choose a time again/s);
      await page.getByRole('heading', { name: /Choose a time/ }).waitFor();
      await step(page, 'hold-expired', 'expiry');
    } finally {
      await page.context().close();
    }
  });

  test('a page whose origin the company does not allow says so in words', async () => {
    const tenant = await context.world.tenant({ allowedDomains: ['book.example.com'] });
    const page = await open();
    try {
      await page.goto(`${origin}/book/${tenant.publicClientId}`);
      await page.getByRole('alert').waitFor();
      assert.match(await page.getByRole('alert').innerText(), /not enabled for this address.*allowed domains/s);
      await step(page, 'not-allowed', 'error');
    } finally {
      await page.context().close();
    }
  });
});
