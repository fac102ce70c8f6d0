// The customer's manage page in Debian's Chromium (playwright-core, no browser download): the
// customer sees the appointment, cancels it, reschedules it through the booking page's slot picker,
// and every refused link (forged, expired, cancelled, moved) is a page in words with the next step.
// axe finds no serious or critical problem on any step, and a screenshot of each step is written to
// test-results/manage-page/. Run by `npm run test:browser`, not by `npm test`.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { SignJWT } from 'jose';
import { DateTime } from 'luxon';
import type { Browser, Page } from 'playwright-core';
import { TEST_SECRETS } from '../helpers/app.js';
import type { TestContext } from '../helpers/app.js';
import { LONDON } from '../helpers/world.js';
import { createTokenService } from '../../src/platform/auth/tokens.js';
import { create, dayAhead, setup, slot } from '../modules/appointments/fixtures.js';
import type { Appointment } from '../modules/appointments/fixtures.js';
import { launch, listeningApp, open as openIn, pickDay, skip, step as stepIn } from './helpers.js';

const SHOTS = 'test-results/manage-page';

// The tokens the emails carry, signed as the app signs them (createTestContext uses TEST_SECRETS).
const tokens = createTokenService(TEST_SECRETS, { machineTokenTtlSeconds: 3600, dashboardTokenTtlSeconds: 3600, refreshTokenTtlSeconds: 3600, docsTokenTtlSeconds: 3600 });
const tokenFor = (a: Appointment) => tokens.signManageToken({ companyId: a.companyId, appointmentId: a.id }, new Date(a.endTime));

describe('the customer\'s manage page in Chromium', { skip }, () => {
  let context: TestContext;
  let browser: Browser;
  let origin: string;

  before(async () => {
    ({ context, origin } = await listeningApp());
    browser = await launch(SHOTS);
  });

  after(async () => {
    await browser?.close();
    await context?.close();
  });

  /** A booking of the world's 60-minute Consult with its first resource at Main (London), `days` ahead at `time`. */
  async function booked(days = 14, time = '10:00'): Promise<Appointment> {
    const s = await setup(context);
    return create(s, slot(dayAhead(days), time));
  }

  const statusOf = async (id: string) =>
    (await context.database.db.selectFrom('appointments').select('status').where('id', '=', id).executeTakeFirstOrThrow()).status;

  const step = (page: Page, name: string, label: string) => stepIn(page, name, label, SHOTS);
  const open = (options: Parameters<Browser['newContext']>[0] = {}): Promise<Page> => openIn(browser, options);

  const text = async (page: Page) => (await page.locator('main').innerText()).replace(/[\s\u202f]+/g, ' ');
  /** How the page writes a date: "Tuesday, December 8". */
  const dayWords = (date: string) => DateTime.fromISO(date).setLocale('en-US').toFormat('cccc, MMMM d');

  for (const [label, width, height] of [['desktop', 1280, 900], ['phone', 360, 740]] as const) {
    test(`at ${width} px: a visitor in New York sees the London appointment in both zones, cancels it, and the reloaded link says it was cancelled`, async () => {
      const appointment = await booked(14, '10:00');
      const page = await open({ viewport: { width, height }, timezoneId: 'America/New_York', locale: 'en-US' });
      try {
        await page.goto(`${origin}/manage/${await tokenFor(appointment)}`);
        await page.getByRole('heading', { name: 'Appointment details' }).waitFor();
        await step(page, 'cancel-1-appointment', label);
        const shown = await text(page);
        assert.match(shown, /Consult · 60 min/);
        assert.match(shown, new RegExp(`${dayWords(dayAhead(14))}.*5:00 AM EST`), 'the time in the visitor\'s zone');
        assert.match(shown, /10:00 AM GMT at the location \(Europe\/London\)/, 'and in the location\'s');
        assert.match(shown, /Location Main/);
        assert.match(shown, /With Resource 0/);
        assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'Appointment details', 'the step\'s heading has focus');

        await page.getByRole('button', { name: 'Cancel appointment' }).click();
        await page.getByRole('heading', { name: 'Cancel this appointment?' }).waitFor();
        await step(page, 'cancel-2-confirm', label);
        assert.equal(await statusOf(appointment.id), 'BK', 'nothing happens before the confirmation');
        await page.getByRole('button', { name: 'Yes, cancel it' }).click();

        await page.getByRole('heading', { name: 'Your appointment is cancelled' }).waitFor();
        assert.match(await page.getByRole('status').innerText(), /Consult, .* is cancelled/);
        await step(page, 'cancel-3-cancelled', label);
        assert.equal(await statusOf(appointment.id), 'CN');

        await page.reload();
        await page.getByRole('heading', { name: 'This appointment was cancelled' }).waitFor();
        assert.match(await text(page), /book a new appointment or contact the business/);
        await step(page, 'cancel-4-reloaded', label);
      } finally {
        await page.context().close();
      }
    });

    test(`at ${width} px: reschedules through the slot picker; the old link says it was moved and the new address opens the new time`, async () => {
      const appointment = await booked(14, '10:00');
      const oldToken = await tokenFor(appointment);
      const page = await open({ viewport: { width, height }, timezoneId: LONDON, locale: 'en-GB' });
      try {
        await page.goto(`${origin}/manage/${oldToken}`);
        await page.getByRole('heading', { name: 'Appointment details' }).waitFor();
        assert.doesNotMatch(await text(page), /at the location/, 'one zone when the visitor\'s is the location\'s');
        await step(page, 'move-1-appointment', label);
        await page.getByRole('button', { name: 'Reschedule' }).click();

        await page.getByRole('heading', { name: 'Choose a day' }).waitFor();
        await page.locator('table.calendar button:not([disabled])').first().waitFor();
        assert.match(await text(page), /Now booked for .*10:00 AM/);
        await step(page, 'move-2-day', label);
        const date = dayAhead(15);
        await pickDay(page, date);
        await page.getByRole('heading', { name: /Choose a time/ }).waitFor();
        await page.locator('ul.times button').first().waitFor();
        await step(page, 'move-3-time', label);
        await page.getByRole('button', { name: '11:00 AM' }).click();

        await page.getByRole('heading', { name: 'Move your appointment?' }).waitFor();
        assert.match(await text(page), new RegExp(`From ${dayWords(dayAhead(14))}.*10:00 AM GMT to ${dayWords(date)}.*11:00 AM GMT\\.`));
        await step(page, 'move-4-confirm', label);
        await page.getByRole('button', { name: 'Move to this time' }).click();

        await page.getByRole('heading', { name: 'Appointment details' }).waitFor();
        assert.match(await page.getByRole('status').innerText(), /moved to .*11:00/);
        await step(page, 'move-5-moved', label);
        const newPath = new URL(page.url()).pathname;
        assert.match(newPath, /^\/manage\/[A-Za-z0-9_.-]+$/);
        assert.notEqual(newPath, `/manage/${oldToken}`, 'the address holds the new link');
        assert.equal(await statusOf(appointment.id), 'RE');
        const moved = await context.database.db.selectFrom('appointments').select(['status', 'startTime']).where('rescheduledFromId', '=', appointment.id).executeTakeFirstOrThrow();
        assert.equal(moved.status, 'BK');
        assert.equal(DateTime.fromJSDate(new Date(moved.startTime)).setZone(LONDON).toFormat('yyyy-MM-dd HH:mm'), `${date} 11:00`);

        // The new address works after a reload, and shows the new time.
        await page.reload();
        await page.getByRole('heading', { name: 'Appointment details' }).waitFor();
        assert.match(await text(page), new RegExp(`When ${dayWords(date)}.*11:00 AM`));
        await step(page, 'move-6-reloaded', label);

        // The old link, as an older email still has it.
        await page.goto(`${origin}/manage/${oldToken}`);
        await page.getByRole('heading', { name: 'This appointment was moved' }).waitFor();
        assert.match(await text(page), /use the link in the newest email/);
        await step(page, 'move-7-old-link', label);
      } finally {
        await page.context().close();
      }
    });
  }

  test('inside the service\'s notice the page offers no change and says why, once', async () => {
    const s = await setup(context);
    const appointment = await create(s, slot(dayAhead(2), '10:00'));
    // The service now asks a week's notice; the appointment is two days away.
    await context.database.db.updateTable('services').set({ bookInAdvance: 10_080 }).where('companyId', '=', s.tenant.companyId).where('id', '=', s.serviceId).execute();
    const page = await open({ viewport: { width: 1280, height: 900 }, timezoneId: LONDON });
    try {
      await page.goto(`${origin}/manage/${await tokenFor(appointment)}`);
      await page.getByRole('heading', { name: 'Appointment details' }).waitFor();
      const shown = await text(page);
      assert.match(shown, /Changes online are not possible\. Changes must be made at least 10080 minutes before the appointment starts; please contact the business\./);
      assert.equal(shown.match(/10080 minutes/g)?.length, 1, 'the shared reason is said once');
      assert.equal(await page.getByRole('button').count(), 0);
      await step(page, 'notice', 'too-late');
    } finally {
      await page.context().close();
    }
  });

  test('a forged, an expired and a cancelled appointment\'s link are each refused with a page that says why and what to do', async () => {
    const appointment = await booked(14, '12:00');
    const genuine = await tokenFor(appointment);
    const [header, payload] = genuine.split('.');
    const other = await tokenFor(await booked(14, '13:00'));
    // The claims of this appointment under another token's signature.
    const forged = `${header}.${payload}.${other.split('.')[2]}`;
    const expired = await new SignJWT({ token_use: 'manage', company_id: appointment.companyId, appointment_id: appointment.id })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setIssuer('service:v3-api')
      .setAudience('manage')
      .setIssuedAt(Math.floor(Date.now() / 1000) - 7200)
      .setExpirationTime(Math.floor(Date.now() / 1000) - 60)
      .sign(new TextEncoder().encode(TEST_SECRETS.MANAGE_TOKEN_SECRET));
    // Another appointment, cancelled through its link; its link replayed afterwards.
    const spent = await booked(14, '15:00');
    const spentToken = await tokenFor(spent);
    const cancelled = await context.app.inject({ method: 'POST', url: '/v3/manage/appointment/cancel', headers: { authorization: `Bearer ${spentToken}` } });
    assert.equal(cancelled.statusCode, 200, cancelled.body);

    const page = await open({ viewport: { width: 1280, height: 900 }, timezoneId: LONDON });
    try {
      for (const [name, token, heading, next] of [
        ['forged', forged, 'This link is not valid or has expired', /use the link in the most recent email/],
        ['expired', expired, 'This link is not valid or has expired', /use the link in the most recent email/],
        ['cancelled', spentToken, 'This appointment was cancelled', /book a new appointment or contact the business/],
        ['unknown', 'not.a-token', 'This link is not valid or has expired', /contact the business/],
      ] as const) {
        await page.goto(`${origin}/manage/${token}`);
        await page.getByRole('heading', { name: heading }).waitFor().catch(async (e) => assert.fail(`${name}: ${await text(page)} ${e}`));
        assert.match(await text(page), next, name);
        assert.equal(await page.getByRole('button').count(), 0, `${name}: no action is offered on a refused link`);
        await step(page, name, 'refused');
      }
      assert.equal(await statusOf(appointment.id), 'BK', 'the forged and expired links changed nothing');
    } finally {
      await page.context().close();
    }
  });
});
