import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createTestContext, json, signup } from '../../helpers/app.js';
import type { TestContext } from '../../helpers/app.js';
import { startSmsStandIn, startSmtpStandIn } from '../../helpers/stand-ins.js';
import { create, dayAhead, newTenant, setup, slot } from '../appointments/fixtures.js';

let context: TestContext;
let owner: Awaited<ReturnType<typeof signup>>;
let smtp: Awaited<ReturnType<typeof startSmtpStandIn>>;
let sms: Awaited<ReturnType<typeof startSmsStandIn>>;
before(async () => {
  smtp = await startSmtpStandIn();
  sms = await startSmsStandIn();
  context = await createTestContext(
    { SMTP_URL: smtp.url, SMS_PROVIDER_URL: sms.baseUrl, SMS_ACCOUNT_SID: sms.accountSid, SMS_AUTH_TOKEN: sms.authToken, SMS_FROM: '+15550000000' },
    { dedicatedDatabase: true },
  );
  owner = await signup(context.app, 'owner');
});
after(async () => {
  await context.close();
  await smtp.close();
  await sms.close();
});

test('smoke: a booking becomes email and SMS', async () => {
  const s = await setup(context, await newTenant(context, owner), { resources: [{ email: 'r1@example.com', phone: '+15550001111' }] });
  const booked = await create(s, slot(dayAhead(), '10:00'));
  await context.app.dispatcher.drain();
  const log = json(await context.app.inject({ method: 'GET', url: `/v3/notifications?appointmentId=${booked.id}`, headers: s.headers }));
  assert.ok(log.total >= 2, JSON.stringify(log));
  for (const row of log.data) assert.equal(row.status, 'sent', JSON.stringify(row));
  assert.ok(smtp.messages.length >= 2);
  assert.ok(sms.messages.length >= 1);
});
