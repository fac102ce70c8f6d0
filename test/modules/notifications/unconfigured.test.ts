// Without SMTP and SMS configuration nothing is sent, and every message is still recorded, as not
// sent, with the reason; the company's channel flags give their own reason. Webhooks do not depend
// on either.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createTestContext } from '../../helpers/app.js';
import type { TestContext } from '../../helpers/app.js';
import { create, dayAhead, setup, slot } from '../appointments/fixtures.js';
import type { Setup } from '../appointments/fixtures.js';
import { WEBHOOK_TEST_ENV, startReceiver } from './receiver.js';
import type { Receiver } from './receiver.js';
import { createWebhook, deliveries, notificationLog, updateCompany } from './helpers.js';

let context: TestContext;
let receiver: Receiver;

before(async () => {
  receiver = await startReceiver();
  // No SMTP_URL and no SMS_* variables.
  context = await createTestContext({ ...WEBHOOK_TEST_ENV }, { dedicatedDatabase: true, sharedOwner: true });
});

after(async () => {
  await context.close();
  await receiver.close();
});

async function book(s: Setup, customerId: string): Promise<string> {
  return (await create(s, { ...slot(dayAhead(), '10:00'), CustomerId: customerId })).id;
}

/** A tenant with an email and an SMS recipient of every kind: customer, resource and business. */
async function tenant() {
  const tag = randomUUID().slice(0, 8);
  const s = await setup(context, {
    location: { email: `desk-${tag}@example.com`, phone: '+15551110000' },
    resources: [{ name: 'Ann', email: `ann-${tag}@example.com`, phone: '+15551110001' }],
  });
  const customerId = await s.tenant.customer({ firstName: 'Ada', email: `ada-${tag}@example.com`, phone: '+15551110002' });
  return { s, customerId };
}

const SMTP_REASON = 'SMTP is not configured (SMTP_URL)';
const SMS_REASON = /^SMS provider is not configured \(SMS_PROVIDER_URL, SMS_ACCOUNT_SID, SMS_AUTH_TOKEN, SMS_FROM\)$/;

test('without SMTP and SMS configuration every message is recorded not_sent with the missing configuration named', async () => {
  const { s, customerId } = await tenant();
  const url = receiver.url('/hook?x=1&unconfigured=1');
  const hook = await createWebhook(s, s.locationId, { url, triggers: ['NEW_APPOINTMENT'] });
  const appointmentId = await book(s, customerId);
  await context.app.dispatcher.drain();

  const log = await notificationLog(s, { appointmentId });
  assert.deepEqual(
    log.map((row) => `${row.channel} ${row.recipientType}`).sort(),
    ['EMAIL BUSINESS', 'EMAIL CUSTOMER', 'EMAIL RESOURCE', 'SMS BUSINESS', 'SMS CUSTOMER', 'SMS RESOURCE'],
  );
  for (const row of log) {
    assert.equal(row.status, 'not_sent', JSON.stringify(row));
    assert.equal(row.providerId, null);
    assert.ok(row.finishedAt);
    if (row.channel === 'EMAIL') assert.equal(row.reason, SMTP_REASON);
    else assert.match(row.reason ?? '', SMS_REASON);
    // What would have been sent is kept.
    assert.ok(row.body.length > 0);
  }
  const filtered = await notificationLog(s, { status: 'not_sent', channel: 'SMS' });
  assert.equal(filtered.length, 3);

  // Webhooks do not depend on SMTP or SMS.
  assert.equal(receiver.hitsTo(url).length, 1);
  assert.equal((await deliveries(s, hook.id)).data[0]!.outcome, 'delivered');
});

test('disableEmailNotifications: email rows say the channel is turned off; disableSmsNotifications: SMS rows do', async () => {
  const email = await tenant();
  await updateCompany(email.s, { disableEmailNotifications: true });
  const emailOff = await book(email.s, email.customerId);
  const sms = await tenant();
  await updateCompany(sms.s, { disableSmsNotifications: true });
  const smsOff = await book(sms.s, sms.customerId);
  await context.app.dispatcher.drain();

  const emailLog = await notificationLog(email.s, { appointmentId: emailOff });
  assert.equal(emailLog.length, 6);
  for (const row of emailLog) {
    assert.equal(row.status, 'not_sent');
    if (row.channel === 'EMAIL') assert.equal(row.reason, 'Email notifications are turned off for this company');
    else assert.match(row.reason ?? '', SMS_REASON);
  }
  const smsLog = await notificationLog(sms.s, { appointmentId: smsOff });
  assert.equal(smsLog.length, 6);
  for (const row of smsLog) {
    assert.equal(row.status, 'not_sent');
    if (row.channel === 'SMS') assert.equal(row.reason, 'SMS notifications are turned off for this company');
    else assert.equal(row.reason, SMTP_REASON);
  }
});
