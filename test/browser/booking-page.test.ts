// The hosted booking page in Debian's Chromium (playwright-core, no browser download): a visitor
// books end to end at desktop and phone widths, axe finds no serious or critical problem on any
// step, and a screenshot of each step is written to test-results/booking-page/ for a person to see.
// Run by `npm run test:browser`, not by `npm test`.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { DateTime } from 'luxon';
import type { Browser, Page } from 'playwright-core';
import type { TestContext } from '../helpers/app.js';
import { LONDON } from '../helpers/world.js';
import { dayAhead, request, setup, slot } from '../modules/appointments/fixtures.js';
import { readableBrand } from '../../web/booking/brand.js';
import type { Setup } from '../modules/appointments/fixtures.js';
import { launch, open as openIn, pickDay, skip, step, text, listeningApp } from './helpers.js';

describe('the hosted booking page in Chromium', { skip }, () => {
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

  async function shop(): Promise<Setup> {
    const tenant = await context.world.tenant({ name: 'Acme Dental', allowedDomains: [new URL(origin).host] });
    return setup(context, { tenant, service: { showOnline: true } });
  }

  const open = (options: Parameters<Browser['newContext']>[0] = {}): Promise<Page> => openIn(browser, options);

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
        await pickDay(page, date);

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

  const localTime = (date: string, time: string, zone: string) =>
    DateTime.fromISO(`${date}T${time}`, { zone: LONDON }).setZone(zone).setLocale('en-US').toFormat('h:mm a');

  /** What a keyboard user reaches: the focused element's accessible words (label, aria-label or text). */
  const focused = (page: Page) =>
    page.evaluate(() => {
      const element = document.activeElement as HTMLElement | null;
      if (!element) return '';
      const label = element.id ? document.querySelector(`label[for="${element.id}"]`)?.textContent : null;
      return (element.getAttribute('aria-label') ?? label ?? element.textContent ?? '').replace(/[\s\u202f]+/g, ' ').trim();
    });

  /** The focused element's words once they settle: focus moves in the render after the heading shows. */
  async function focusedSettled(page: Page, expected: string | RegExp) {
    let words = '';
    for (let i = 0; i < 50; i++) {
      words = await focused(page);
      if (typeof expected === 'string' ? words === expected : expected.test(words)) break;
      await page.waitForTimeout(100);
    }
    return words;
  }

  /** Tab forward (at most 80 times) until the focused element's words match, as a keyboard user would. */
  async function tabTo(page: Page, words: RegExp) {
    for (let i = 0; i < 80; i++) {
      await page.keyboard.press('Tab');
      if (words.test(await focused(page))) return;
    }
    assert.fail(`Tab never reached ${words}`);
  }

  test('books end to end with the keyboard alone, each step\'s heading taking focus', async () => {
    const s = await shop();
    const page = await open({ viewport: { width: 360, height: 740 }, timezoneId: LONDON, locale: 'en-GB' });
    try {
      await page.goto(`${origin}/book/${s.tenant.publicClientId}`);
      // The heading shows before the services have loaded; a person starts once they are there.
      await page.getByRole('button', { name: /60 min/ }).first().waitFor();
      await tabTo(page, /60 min/);
      await page.keyboard.press('Enter');
      await page.locator('table.calendar button:not([disabled])').first().waitFor();
      assert.equal(await focusedSettled(page, 'Choose a day'), 'Choose a day', 'the new step\'s heading has focus');

      const date = dayAhead(14);
      if (date.slice(0, 7) !== DateTime.now().setZone(LONDON).toFormat('yyyy-MM')) {
        await tabTo(page, /^Next month$/);
        await page.keyboard.press('Enter');
      }
      await tabTo(page, new RegExp(`^${DateTime.fromISO(date).setLocale('en').toFormat('cccc, MMMM d')}$`));
      await page.keyboard.press('Enter');
      await page.locator('ul.times button').first().waitFor();
      assert.match(await focusedSettled(page, /^Choose a time/), /^Choose a time/);
      await tabTo(page, /^9:00 AM$/);
      await page.keyboard.press('Enter');

      await page.getByRole('heading', { name: 'Your details' }).waitFor();
      assert.equal(await focusedSettled(page, 'Your details'), 'Your details');
      await tabTo(page, /^Name$/);
      await page.keyboard.type('Kim Keys');
      await tabTo(page, /^Email$/);
      await page.keyboard.type('kim.keys@example.com');
      await tabTo(page, /^Book$/);
      await page.keyboard.press('Enter');
      await page.getByRole('heading', { name: 'You are booked' }).waitFor();
      assert.equal(await focusedSettled(page, 'You are booked'), 'You are booked');
      await step(page, 'confirmed', 'keyboard');

      const booked = await context.database.db.selectFrom('appointments').select(['status', 'startTime']).where('companyId', '=', s.tenant.companyId).execute();
      assert.deepEqual(booked.map((b) => [b.status, DateTime.fromJSDate(new Date(b.startTime)).setZone(LONDON).toFormat('yyyy-MM-dd HH:mm')]), [['BK', `${date} 09:00`]]);
    } finally {
      await page.context().close();
    }
  });

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
      await pickDay(page, date);
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
      await pickDay(page, date);
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

  test('the company\'s settings: a chosen resource or anyone, its question, its currency, colour and logo', async () => {
    const tenant = await context.world.tenant({ name: 'Acme Dental', allowedDomains: [new URL(origin).host] });
    const s = await setup(context, { tenant, service: { showOnline: true, feeAmount: 25 }, resources: [{ name: 'Ann Lee' }, { name: 'Bob Stone' }] });
    const bookingPage = {
      brandColor: '#ffcc00', // too light on white: the page darkens it
      logoUrl: 'https://logo.invalid/logo.png', // .invalid never resolves: the image fails at once, with or without the CSP
      currency: 'EUR',
      fields: [{ name: 'field3', label: 'Reason for the visit', required: true }],
    };
    const settings = await context.app.inject({ method: 'PUT', url: '/v3/company', headers: tenant.dashboard, payload: { bookingPage } });
    assert.equal(settings.statusCode, 200, settings.body);
    const companyName = (await context.database.db.selectFrom('companies').select('name').where('id', '=', tenant.companyId).executeTakeFirstOrThrow()).name;
    const [ann, bob] = s.resourceIds as [string, string];
    const date = dayAhead(14);
    const page = await open({ viewport: { width: 1280, height: 900 }, timezoneId: LONDON });
    try {
      await page.goto(`${origin}/book/${tenant.publicClientId}`);
      // The heading shows while the services still load: wait for them before reading the fee.
      await page.getByRole('button', { name: /60 min/ }).first().waitFor();
      assert.match(await text(page), /60 min · €25\.00/);
      // The logo cannot load here (an .invalid host); a broken logo hides instead of breaking the layout.
      const logo = page.locator('img.logo');
      assert.equal(await logo.getAttribute('src'), bookingPage.logoUrl);
      assert.equal(await logo.getAttribute('alt'), companyName);
      await logo.waitFor({ state: 'hidden' });
      await step(page, '1-service', 'settings');

      await page.getByRole('button', { name: /60 min/ }).click();
      await page.getByRole('heading', { name: 'Choose who to book with' }).waitFor();
      await step(page, '2-resource', 'settings');
      await page.getByRole('button', { name: 'Bob Stone' }).click();
      await page.locator('table.calendar button:not([disabled])').first().waitFor();
      await pickDay(page, date);
      await page.getByRole('button', { name: '9:00 AM' }).click();

      await page.getByRole('heading', { name: 'Your details' }).waitFor();
      const brand = readableBrand(bookingPage.brandColor);
      const rgb = `rgb(${[1, 3, 5].map((i) => parseInt(brand.slice(i, i + 2), 16)).join(', ')})`;
      assert.equal(await page.getByRole('button', { name: 'Book', exact: true }).evaluate((button) => getComputedStyle(button).backgroundColor), rgb);
      assert.notEqual(brand, bookingPage.brandColor);
      const question = page.getByLabel('Reason for the visit');
      assert.equal(await question.getAttribute('required'), '');
      await step(page, '3-details', 'settings');

      // The server's refusal is shown beside the field (the browser's own check taken away to reach it).
      await page.getByLabel('Name').fill('Cara Jones');
      await page.getByLabel('Email').fill('cara-settings@example.com');
      await question.evaluate((input) => input.removeAttribute('required'));
      await page.getByRole('button', { name: 'Book', exact: true }).click();
      await page.getByText('Reason for the visit is required').waitFor();
      assert.equal(await question.getAttribute('aria-invalid'), 'true');
      await step(page, '4-field-refused', 'settings');

      await question.fill('A loose filling');
      await page.getByRole('button', { name: 'Book', exact: true }).click();
      await page.getByRole('heading', { name: 'You are booked' }).waitFor();
      await step(page, '5-confirmed', 'settings');

      // Anyone available: no resource named by the visitor, one picked for the time.
      await page.getByRole('button', { name: 'Book another appointment' }).click();
      await page.getByRole('button', { name: /60 min/ }).click();
      await page.getByRole('button', { name: 'Anyone available' }).click();
      await page.locator('table.calendar button:not([disabled])').first().waitFor();
      await pickDay(page, date);
      await page.getByRole('button', { name: '10:00 AM' }).click();
      await page.getByLabel('Name').fill('Dan Brown');
      await page.getByLabel('Email').fill('dan-settings@example.com');
      await page.getByLabel('Reason for the visit').fill('Check-up');
      await page.getByRole('button', { name: 'Book', exact: true }).click();
      await page.getByRole('heading', { name: 'You are booked' }).waitFor();

      const booked = await context.database.db
        .selectFrom('appointments as a')
        .innerJoin('appointmentResources as ar', (j) => j.onRef('ar.companyId', '=', 'a.companyId').onRef('ar.appointmentId', '=', 'a.id'))
        .select(['a.id', 'a.status', 'a.startTime', 'a.field3', 'ar.resourceId'])
        .where('a.companyId', '=', tenant.companyId)
        .orderBy('a.startTime')
        .execute();
      const at = (row: { startTime: Date | string }) => DateTime.fromJSDate(new Date(row.startTime)).setZone(LONDON).toFormat('HH:mm');
      assert.deepEqual(booked.map((row) => [at(row), row.status, row.field3]), [['09:00', 'BK', 'A loose filling'], ['10:00', 'BK', 'Check-up']], 'one resource each');
      assert.equal(booked[0]!.resourceId, bob, 'the chosen resource');
      assert.ok([ann, bob].includes(booked[1]!.resourceId), 'anyone: one of the two');
    } finally {
      await page.context().close();
    }
  });
});
