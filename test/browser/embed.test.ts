// The embed in Debian's Chromium: a test site (a tiny node:http server on ports of its own) carries
// the one-line /book/embed.js snippet. On an origin the company allows, the frame shows the page,
// follows its content's height and takes a booking end to end; on another origin the browser
// refuses to frame it (CSP frame-ancestors). Screenshots go to test-results/embed/.
// Run by `npm run test:browser`, not by `npm test`.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import { DateTime } from 'luxon';
import { chromium } from 'playwright-core';
import type { Browser, Frame, Page } from 'playwright-core';
import { AxeBuilder } from '@axe-core/playwright';
import { createTestContext } from '../helpers/app.js';
import type { TestContext } from '../helpers/app.js';
import { freePort } from '../helpers/ports.js';
import { LONDON } from '../helpers/world.js';
import { dayAhead, setup } from '../modules/appointments/fixtures.js';
import type { Setup } from '../modules/appointments/fixtures.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const SHOTS = 'test-results/embed';
const skip = existsSync(CHROMIUM) ? false : `${CHROMIUM} is missing: install Debian's chromium package (apt-get install chromium) to run the browser tests`;
const FRAME = 'slotwise-booking iframe';

/** The test site's page: some text of its own, and the one-line snippet for `clientId`. */
function sitePage(slotwise: string, clientId: string): string {
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Acme Dental</title></head>
<body>
  <main>
    <h1>Acme Dental</h1>
    <p>Book a visit below.</p>
    <script src="${slotwise}/book/embed.js" data-client-id="${clientId}" async></script>
  </main>
  <footer><p>Acme Dental, 1 High Street</p></footer>
</body>
</html>
`;
}

describe('the booking page embedded in another site, in Chromium', { skip }, () => {
  let context: TestContext;
  let browser: Browser;
  let slotwise: string;
  /** The test site on an origin the test companies allow, and the same site on one they do not. */
  let allowedSite: string;
  let otherSite: string;
  const sites: Server[] = [];

  before(async () => {
    const port = await freePort();
    slotwise = `http://127.0.0.1:${port}`;
    context = await createTestContext({ PUBLIC_ALLOW_HTTP_ORIGINS: 'true' });
    await context.app.listen({ port, host: '127.0.0.1' });
    const origins: string[] = [];
    for (let i = 0; i < 2; i += 1) {
      const server = createServer((request, response) => {
        const clientId = new URL(request.url ?? '/', 'http://site').searchParams.get('client') ?? '';
        if (!/^[A-Za-z0-9_-]+$/.test(clientId)) return void response.writeHead(404).end();
        response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(sitePage(slotwise, clientId));
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      sites.push(server);
      const address = server.address();
      origins.push(`http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`);
    }
    [allowedSite, otherSite] = origins as [string, string];
    await mkdir(SHOTS, { recursive: true });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless=new', '--no-sandbox', '--disable-gpu'] });
  });

  after(async () => {
    await browser?.close();
    for (const server of sites) await new Promise((resolve) => server.close(resolve));
    await context?.close();
  });

  /**
   * A company whose allowedDomains hold the test site's host (it frames the page) and Slotwise's
   * own host (the framed page calls /v3/public/* from there): nothing is allowed implicitly.
   */
  async function shop(): Promise<Setup> {
    const tenant = await context.world.tenant({ name: 'Acme Dental', allowedDomains: [new URL(allowedSite).host, new URL(slotwise).host] });
    return setup(context, { tenant, service: { showOnline: true } });
  }

  async function open(): Promise<Page> {
    const page = await (await browser.newContext({ viewport: { width: 1024, height: 768 }, timezoneId: LONDON, locale: 'en-GB' })).newPage();
    page.setDefaultTimeout(10_000);
    page.on('pageerror', (error) => console.error('page error:', error.message));
    return page;
  }

  async function frameOf(page: Page): Promise<Frame> {
    const frame = await (await page.locator(FRAME).elementHandle())?.contentFrame();
    assert.ok(frame, 'the embed made an iframe');
    return frame;
  }

  /**
   * Once the frame's content is `height` px tall, the iframe is that tall too: waits (on the
   * browser's own polling, no clock of ours) for the host page to have resized it.
   */
  async function followsContent(page: Page): Promise<number> {
    const content = await (await frameOf(page)).evaluate(() => Math.ceil(document.body.getBoundingClientRect().height));
    await page.waitForFunction(
      ([selector, height]) => document.querySelector(selector)?.getBoundingClientRect().height === height,
      [FRAME, content] as const,
    );
    return content;
  }

  async function accessible(page: Page, step: string) {
    const result = await new AxeBuilder({ page }).analyze();
    const bad = result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
    assert.deepEqual(bad.map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).join(', ')})`), [], `axe on step ${step}`);
  }

  test('on an allowed origin the frame shows the page, follows its height, and takes a booking', async () => {
    const s = await shop();
    const page = await open();
    try {
      await page.goto(`${allowedSite}/?client=${s.tenant.publicClientId}`);
      assert.equal(await page.locator(FRAME).getAttribute('title'), 'Book an appointment');
      assert.equal(await page.locator(FRAME).getAttribute('src'), `${slotwise}/book/${s.tenant.publicClientId}?embed=1`);
      const frame = page.frameLocator(FRAME);
      await frame.getByRole('heading', { name: 'Choose a service' }).waitFor();
      await frame.getByRole('button', { name: /60 min/ }).first().waitFor();
      const services = await followsContent(page);
      assert.notEqual(services, 150, 'not the iframe\'s default height');
      await page.screenshot({ path: `${SHOTS}/1-service.png`, fullPage: true });
      await accessible(page, 'service');

      await frame.getByRole('button', { name: /60 min/ }).first().click();
      await frame.getByRole('heading', { name: 'Choose a day' }).waitFor();
      await frame.locator('table.calendar button:not([disabled])').first().waitFor();
      const calendar = await followsContent(page);
      assert.ok(calendar > services, `the frame grew with the calendar (${services} px, then ${calendar} px)`);
      await page.screenshot({ path: `${SHOTS}/2-day.png`, fullPage: true });
      await accessible(page, 'day');

      const date = dayAhead(14);
      if (date.slice(0, 7) !== DateTime.now().setZone(LONDON).toFormat('yyyy-MM')) await frame.getByRole('button', { name: 'Next month' }).click();
      await frame.getByRole('button', { name: DateTime.fromISO(date).setLocale('en').toFormat('cccc, MMMM d') }).click();
      await frame.getByRole('button', { name: '9:00 AM' }).click();
      await frame.getByLabel('Name').fill('Cara Jones');
      await frame.getByLabel('Email').fill('cara-embed@example.com');
      await followsContent(page);
      await page.screenshot({ path: `${SHOTS}/3-details.png`, fullPage: true });
      await frame.getByRole('button', { name: 'Book', exact: true }).click();
      await frame.getByRole('heading', { name: 'You are booked' }).waitFor();
      await followsContent(page);
      await page.screenshot({ path: `${SHOTS}/4-confirmed.png`, fullPage: true });
      await accessible(page, 'confirmed');

      const booked = await context.database.db.selectFrom('appointments').select(['status', 'startTime']).where('companyId', '=', s.tenant.companyId).execute();
      assert.equal(booked.length, 1);
      assert.equal(booked[0]!.status, 'BK');
      assert.equal(DateTime.fromJSDate(new Date(booked[0]!.startTime)).setZone(LONDON).toFormat('yyyy-MM-dd HH:mm'), `${date} 09:00`);
    } finally {
      await page.context().close();
    }
  });

  test('on an origin the company does not allow, the browser refuses to frame the page', async () => {
    const s = await shop();
    const page = await open();
    try {
      // Chromium reports the refusal on the embedding page's console ("Framing '…' violates the
      // following Content Security Policy directive: frame-ancestors …"): the sign that it is final.
      const refused = page.waitForEvent('console', (message) => /frame-ancestors/.test(message.text()));
      await page.goto(`${otherSite}/?client=${s.tenant.publicClientId}`);
      assert.match((await refused).text(), /violates|Refused/);
      assert.doesNotMatch((await refused).text(), new RegExp(new URL(otherSite).host), 'the other site is not among the sources');
      assert.equal(await page.frameLocator(FRAME).getByRole('heading').count(), 0, 'the frame shows no part of the booking page');
      assert.notEqual((await frameOf(page)).url(), `${slotwise}/book/${s.tenant.publicClientId}?embed=1`);
      await page.screenshot({ path: `${SHOTS}/refused.png`, fullPage: true });
    } finally {
      await page.context().close();
    }
  });

  test('the company\'s brand colour reaches the framed page', async () => {
    const s = await shop();
    const brand = '#0b6e4f';
    const saved = await context.app.inject({ method: 'PUT', url: '/v3/company', headers: s.tenant.dashboard, payload: { bookingPage: { brandColor: brand } } });
    assert.equal(saved.statusCode, 200, saved.body);
    const page = await open();
    try {
      await page.goto(`${allowedSite}/?client=${s.tenant.publicClientId}`);
      const button = page.frameLocator(FRAME).getByRole('button', { name: /60 min/ }).first();
      await button.waitFor();
      const shown = await button.evaluate((element) => getComputedStyle(element).getPropertyValue('--brand').trim().toLowerCase());
      assert.equal(shown, brand);
      await page.screenshot({ path: `${SHOTS}/brand.png`, fullPage: true });
    } finally {
      await page.context().close();
    }
  });
});
