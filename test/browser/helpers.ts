// Shared by the booking page's browser tests: Debian's Chromium (playwright-core, no browser
// download), a page in a context of its own, axe on each step with its screenshot written to
// test-results/booking-page/, and the slot picker's month-by-month walk to a day.
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

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const SHOTS = 'test-results/booking-page';
/** The `skip` option of a browser suite: false, or why it cannot run here. */
export const skip = existsSync(CHROMIUM) ? false : `${CHROMIUM} is missing: install Debian's chromium package (apt-get install chromium) to run the browser tests`;

/** The app listening on a free port of 127.0.0.1, where the browser reaches it. */
export async function listeningApp(env: Record<string, string> = {}): Promise<{ context: TestContext; origin: string }> {
  const port = await freePort();
  const context = await createTestContext(env);
  await context.app.listen({ port, host: '127.0.0.1' });
  return { context, origin: `http://127.0.0.1:${port}` };
}

/** Headless Chromium, with the screenshot folder made. */
export async function launch(shots = SHOTS): Promise<Browser> {
  await mkdir(shots, { recursive: true });
  return chromium.launch({ executablePath: CHROMIUM, args: ['--headless=new', '--no-sandbox', '--disable-gpu'] });
}

/** A page in a context of its own (axe needs the page to come from browser.newContext). */
export async function open(browser: Browser, options: Parameters<Browser['newContext']>[0] = {}): Promise<Page> {
  const page = await (await browser.newContext(options)).newPage();
  page.setDefaultTimeout(10_000);
  page.on('pageerror', (error) => console.error('page error:', error.message));
  page.on('console', (message) => { if (message.type() === 'error') console.error('page console:', message.text()); });
  return page;
}

export async function accessible(page: Page, step: string) {
  const result = await new AxeBuilder({ page }).analyze();
  const bad = result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  assert.deepEqual(bad.map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).join(', ')})`), [], `axe on step ${step}`);
}

/** A screenshot of the step (`<shots>/<label>-<name>.png`) and axe on it. */
export async function step(page: Page, name: string, label: string, shots = SHOTS) {
  await page.screenshot({ path: `${shots}/${label}-${name}.png`, fullPage: true });
  await accessible(page, `${label} ${name}`);
}

/** The page's text with every run of spaces (ICU puts a narrow no-break space before AM/PM) as one space. */
export const text = async (page: Page) => (await page.locator('main').innerText()).replace(/[\s\u202f]+/g, ' ');

/** The times the picker lists for the chosen day, as "9:00 AM". */
export const shownTimes = async (page: Page) => (await page.locator('ul.times button').allInnerTexts()).map((t) => t.replace(/[\s\u202f]+/g, ' '));

/**
 * From the calendar on screen to `date`'s day (yyyy-MM-dd): "Next month" or "Previous month" once
 * per month between the month shown and `date`'s, then the day.
 */
export async function pickDay(page: Page, date: string) {
  const shown = page.locator('.month strong');
  const target = DateTime.fromISO(date).startOf('month');
  const current = DateTime.fromFormat(await shown.innerText(), 'MMMM yyyy', { locale: 'en' });
  assert.ok(current.isValid, `the calendar's month title: ${await shown.innerText()}`);
  const months = Math.round(target.diff(current, 'months').months);
  for (let i = 1; i <= Math.abs(months); i++) {
    await page.getByRole('button', { name: months > 0 ? 'Next month' : 'Previous month' }).click();
    await page.locator('.month strong', { hasText: current.plus({ months: Math.sign(months) * i }).setLocale('en').toFormat('MMMM yyyy') }).waitFor();
  }
  const label = DateTime.fromISO(date).setLocale('en').toFormat('cccc, MMMM d');
  await page.getByRole('button', { name: label }).click();
  await page.getByRole('heading', { name: new RegExp(`Choose a time: ${label}`) }).waitFor();
}
