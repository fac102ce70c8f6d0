import { after, before, test } from 'node:test';
import { createTestContext, signup } from '../../helpers/app.js';
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

test('probe', async () => {
  let t = Date.now();
  const lap = (s: string) => { console.log(s, Date.now() - t); t = Date.now(); };
  const s = await setup(context, await newTenant(context, owner), { resources: [{ email: 'r1@example.com', phone: '+15550001111' }] });
  lap('setup');
  await create(s, slot(dayAhead(), '10:00'));
  lap('create');
  await context.app.dispatcher.drain();
  lap('drain');
  await create(s, slot(dayAhead(), '12:00'));
  lap('create2');
  await context.app.dispatcher.drain();
  lap('drain2');
});
