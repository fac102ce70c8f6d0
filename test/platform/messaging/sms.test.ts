import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import { DEFAULT_SMS_BASE_URL, SMS_NOT_CONFIGURED, createSmsSender, smsBaseUrl } from '../../../src/platform/messaging/sms.js';
import type { SendOutcome } from '../../../src/platform/messaging/sms.js';
import { startSmsStandIn } from '../../helpers/stand-ins.js';
import type { SmsStandIn } from '../../helpers/stand-ins.js';
import { freePort } from '../../helpers/server.js';

// SMS goes to a local stand-in of a Twilio-style Messages API (POST .../Messages.json, Basic auth,
// form body, 201 with a sid, JSON errors).

const FROM = '+15005550006';

function failedReason(outcome: SendOutcome): string {
  assert.equal(outcome.status, 'failed', JSON.stringify(outcome));
  return outcome.status === 'failed' ? outcome.reason : '';
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  return `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
}

describe('not configured', () => {
  test('any of account SID, auth token or sender missing: not_sent with the reason', async () => {
    const full = { baseUrl: 'http://127.0.0.1:9', accountSid: 'AC123', authToken: 'token', from: FROM };
    const variants = [{}, { ...full, accountSid: undefined }, { ...full, authToken: undefined }, { ...full, from: undefined }, { ...full, accountSid: '', authToken: '', from: '' }, { baseUrl: full.baseUrl }];
    for (const options of variants) {
      const sender = createSmsSender(options);
      assert.equal(sender.configured, false, JSON.stringify(options));
      assert.deepEqual(await sender.send({ to: '+15551234567', body: 'Hi' }), {
        status: 'not_sent',
        reason: 'SMS provider is not configured (SMS_PROVIDER_URL, SMS_ACCOUNT_SID, SMS_AUTH_TOKEN, SMS_FROM)',
      });
    }
    assert.equal(SMS_NOT_CONFIGURED, 'SMS provider is not configured (SMS_PROVIDER_URL, SMS_ACCOUNT_SID, SMS_AUTH_TOKEN, SMS_FROM)');
  });

  test('credentials without a base URL are configured for Twilio itself', () => {
    assert.equal(DEFAULT_SMS_BASE_URL, 'https://api.twilio.com');
    assert.equal(smsBaseUrl(undefined), 'https://api.twilio.com');
    assert.equal(smsBaseUrl(''), 'https://api.twilio.com');
    assert.equal(createSmsSender({ accountSid: 'AC123', authToken: 'token', from: FROM }).configured, true);
  });
});

describe('against the stand-in provider', () => {
  let provider: SmsStandIn;
  before(async () => {
    provider = await startSmsStandIn();
  });
  after(() => provider.close());

  test('posts To, From and the plain-text Body with Basic auth; the sid is the provider id', async () => {
    const sender = createSmsSender({ baseUrl: provider.baseUrl, accountSid: provider.accountSid, authToken: provider.authToken, from: FROM });
    assert.equal(sender.configured, true);
    const body = 'Reminder: Dr. Ünal & Ana Lima, Tue 09:30 ✓\nReply STOP=opt out +1 100%';
    const outcome = await sender.send({ to: '+15551234567', body });
    assert.equal(outcome.status, 'sent', JSON.stringify(outcome));
    const received = provider.messages.at(-1)!;
    assert.deepEqual({ to: received.to, from: received.from, body: received.body }, { to: '+15551234567', from: FROM, body });
    assert.match(received.sid, /^SM[0-9a-f]{32}$/);
    assert.deepEqual(outcome, { status: 'sent', providerId: received.sid });
    assert.equal(provider.statuses.at(-1), 201);
  });

  test('a trailing slash on the base URL is harmless', async () => {
    const sender = createSmsSender({ baseUrl: `${provider.baseUrl}/`, accountSid: provider.accountSid, authToken: provider.authToken, from: FROM });
    assert.equal((await sender.send({ to: '+15551234567', body: 'x' })).status, 'sent');
  });

  test('a Messaging Service SID as sender goes as MessagingServiceSid', async () => {
    const service = `MG${'ab'.repeat(16)}`;
    const sender = createSmsSender({ baseUrl: provider.baseUrl, accountSid: provider.accountSid, authToken: provider.authToken, from: service });
    assert.equal((await sender.send({ to: '+15551234567', body: 'x' })).status, 'sent');
    assert.equal(provider.messages.at(-1)!.from, service);
  });

  test('wrong credentials: 401 JSON error, failed with its message and no token in the reason', async () => {
    const token = 'wrong-token-0123456789abcdef';
    const count = provider.messages.length;
    const sender = createSmsSender({ baseUrl: provider.baseUrl, accountSid: provider.accountSid, authToken: token, from: FROM });
    const reason = failedReason(await sender.send({ to: '+15551234567', body: 'x' }));
    assert.equal(reason, 'SMS provider refused the message (HTTP 401, code 20003): Authenticate');
    assert.ok(!reason.includes(token));
    assert.equal(provider.messages.length, count);
    assert.equal(provider.statuses.at(-1), 401);
  });

  test("an account SID that is not the token's is refused too", async () => {
    const sender = createSmsSender({ baseUrl: provider.baseUrl, accountSid: 'ACother', authToken: provider.authToken, from: FROM });
    assert.match(failedReason(await sender.send({ to: '+15551234567', body: 'x' })), /HTTP 401.*Authenticate/);
  });

  test('a message the provider refuses fails with its message', async () => {
    const sender = createSmsSender({ baseUrl: provider.baseUrl, accountSid: provider.accountSid, authToken: provider.authToken, from: FROM });
    assert.equal(
      failedReason(await sender.send({ to: '555-1234', body: 'x' })),
      "SMS provider refused the message (HTTP 400, code 21211): The 'To' number 555-1234 is not a valid phone number.",
    );
    assert.equal(failedReason(await sender.send({ to: '+15551234567', body: '' })), 'SMS provider refused the message (HTTP 400, code 21602): Message body is required.');
  });

  test('a slow provider fails at the timeout', async () => {
    provider.delayMs = 2_000;
    try {
      const count = provider.messages.length;
      const sender = createSmsSender({ baseUrl: provider.baseUrl, accountSid: provider.accountSid, authToken: provider.authToken, from: FROM, timeoutMs: 200 });
      const started = Date.now();
      const reason = failedReason(await sender.send({ to: '+15551234567', body: 'x' }));
      const took = Date.now() - started;
      assert.ok(took >= 180 && took < 1_500, `took ${took} ms`);
      assert.equal(reason, 'SMS provider did not answer within 200 ms');
      assert.equal(provider.messages.length, count);
    } finally {
      provider.delayMs = 0;
    }
  });
});

describe('unreachable and misbehaving providers', () => {
  test('a port nobody listens on fails at once', async () => {
    const port = await freePort();
    const sender = createSmsSender({ baseUrl: `http://127.0.0.1:${port}`, accountSid: 'AC1', authToken: 'secret-token-xyz', from: FROM });
    const started = Date.now();
    const reason = failedReason(await sender.send({ to: '+15551234567', body: 'x' }));
    assert.ok(Date.now() - started < 2_000);
    assert.equal(reason, 'Could not reach the SMS provider (ECONNREFUSED)');
  });

  test('redirects are not followed (the credentials stay with the configured host)', async () => {
    const provider = await startSmsStandIn();
    const redirector = createServer((request, response) => {
      response.writeHead(307, { location: `${provider.baseUrl}${request.url}` });
      response.end();
    });
    const base = await listen(redirector);
    try {
      const sender = createSmsSender({ baseUrl: base, accountSid: provider.accountSid, authToken: provider.authToken, from: FROM });
      assert.equal(failedReason(await sender.send({ to: '+15551234567', body: 'x' })), 'SMS provider refused the message (HTTP 307) (redirects are not followed)');
      assert.deepEqual(provider.statuses, []);
    } finally {
      redirector.close();
      await provider.close();
    }
  });

  test('an error answer that is not JSON fails with the status', async () => {
    const broken = createServer((_request, response) => {
      response.writeHead(502, { 'content-type': 'text/html' });
      response.end('<html>Bad gateway</html>');
    });
    const base = await listen(broken);
    try {
      const sender = createSmsSender({ baseUrl: `${base}/prefix`, accountSid: 'AC1', authToken: 'token', from: FROM });
      assert.equal(failedReason(await sender.send({ to: '+15551234567', body: 'x' })), 'SMS provider refused the message (HTTP 502)');
    } finally {
      broken.close();
    }
  });

  test('a path prefix on the base URL is kept', async () => {
    let seen = '';
    const recorder = createServer((request, response) => {
      seen = `${request.method} ${request.url}`;
      response.writeHead(201, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ sid: 'SM1' }));
    });
    const base = await listen(recorder);
    try {
      const sender = createSmsSender({ baseUrl: `${base}/relay/twilio/`, accountSid: 'AC 1', authToken: 'token', from: FROM });
      assert.deepEqual(await sender.send({ to: '+15551234567', body: 'x' }), { status: 'sent', providerId: 'SM1' });
      assert.equal(seen, 'POST /relay/twilio/2010-04-01/Accounts/AC%201/Messages.json');
    } finally {
      recorder.close();
    }
  });

  test('a base URL that is not plain http(s) is refused at creation', () => {
    for (const baseUrl of ['ftp://sms.example.test', 'sms.example.test', 'https://user:pw@sms.example.test', 'https://sms.example.test/?x=1']) {
      assert.throws(() => createSmsSender({ baseUrl, accountSid: 'AC1', authToken: 'token', from: FROM }), /^Error: SMS_PROVIDER_URL/, baseUrl);
    }
  });
});
