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
import { dayAhead, setup } from '../modules/appointments/fixtures.js';
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
