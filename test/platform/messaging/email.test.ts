import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import type { Server, Socket } from 'node:net';
import { DEFAULT_SMTP_TIMEOUT_MS, SMTP_NOT_CONFIGURED, createEmailSender, smtpTransportOptions } from '../../../src/platform/messaging/email.js';
import type { SendOutcome } from '../../../src/platform/messaging/email.js';
import { startSmtpStandIn } from '../../helpers/stand-ins.js';
import type { SmtpStandIn } from '../../helpers/stand-ins.js';
import { freePort } from '../../helpers/server.js';

// Email goes to a real SMTP server (smtp-server) on 127.0.0.1, with and without AUTH.

const FROM = 'Slotwise <no-reply@slotwise.test>';
const USER = 'mailer@slotwise.test';
const PASS = 'p@ss:w/rd%20secret';

function failedReason(outcome: SendOutcome): string {
  assert.equal(outcome.status, 'failed', JSON.stringify(outcome));
  return outcome.status === 'failed' ? outcome.reason : '';
}

function assertNoCredentials(reason: string) {
  for (const secret of [PASS, encodeURIComponent(PASS), USER, Buffer.from(PASS).toString('base64'), Buffer.from(`\0${USER}\0${PASS}`).toString('base64')]) {
    assert.ok(!reason.includes(secret), `reason leaks a credential: ${reason}`);
  }
}

describe('not configured', () => {
  test('without SMTP_URL every send is not_sent with the reason', async () => {
    for (const smtpUrl of [undefined, '']) {
      const sender = createEmailSender({ smtpUrl, from: FROM });
      assert.equal(sender.configured, false);
      assert.deepEqual(await sender.send({ to: 'ann@example.test', subject: 'Hi', text: 'Hello' }), {
        status: 'not_sent',
        reason: 'SMTP is not configured (SMTP_URL)',
      });
      assert.equal(SMTP_NOT_CONFIGURED, 'SMTP is not configured (SMTP_URL)');
      sender.close();
    }
  });
});

describe('server without AUTH', () => {
  let smtp: SmtpStandIn;
  before(async () => {
    smtp = await startSmtpStandIn();
  });
  after(() => smtp.close());

  test('delivers envelope, headers, subject and plain text', async () => {
    assert.match(smtp.url, /^smtp:\/\/127\.0\.0\.1:\d+$/);
    const sender = createEmailSender({ smtpUrl: smtp.url, from: FROM });
    assert.equal(sender.configured, true);
    const text = 'Your appointment with Dr. Ünal & Ana Lima\nis on Tuesday 3 March at 09:30.\n\n— Slotwise ✓';
    const outcome = await sender.send({ to: 'ann@example.test', subject: 'Booked: Tuesday 09:30 ✓', text });
    sender.close();

    assert.equal(outcome.status, 'sent', JSON.stringify(outcome));
    assert.equal(smtp.messages.length, 1);
    const [received] = smtp.messages;
    assert.equal(received!.from, 'no-reply@slotwise.test');
    assert.deepEqual(received!.to, ['ann@example.test']);
    assert.equal(received!.subject, 'Booked: Tuesday 09:30 ✓');
    assert.equal(received!.text.trimEnd(), text);
    assert.equal(received!.html, null, 'plain text only');
    assert.equal(received!.fromHeader, '"Slotwise" <no-reply@slotwise.test>');
    assert.equal(received!.user, null);
    assert.match(received!.raw, /^Auto-Submitted: auto-generated\r$/m);
    assert.equal(outcome.status === 'sent' && outcome.providerId, received!.messageId, 'providerId is the Message-ID');
  });

  test('a line break in the subject cannot add headers or recipients', async () => {
    const sender = createEmailSender({ smtpUrl: smtp.url, from: FROM });
    const before = smtp.messages.length;
    const outcome = await sender.send({ to: 'ann@example.test', subject: 'Hi\r\nBcc: evil@example.test', text: 'x' });
    assert.equal(outcome.status, 'sent');
    const received = smtp.messages[before]!;
    assert.deepEqual(received.to, ['ann@example.test']);
    assert.doesNotMatch(received.raw, /^Bcc:/im);
  });

  test('anything but one plain address is refused before connecting', async () => {
    const sender = createEmailSender({ smtpUrl: smtp.url, from: FROM });
    const before = smtp.messages.length;
    for (const to of ['', 'ann@example.test, evil@example.test', 'Ann <ann@example.test>', 'ann@example.test\r\nBcc: evil@example.test', 'ann', 'ann@@example.test']) {
      assert.deepEqual(await sender.send({ to, subject: 'Hi', text: 'x' }), { status: 'failed', reason: 'Invalid recipient address' }, to);
    }
    assert.equal(smtp.messages.length, before);
  });

  test('concurrent sends each use their own connection and all arrive', async () => {
    const sender = createEmailSender({ smtpUrl: smtp.url, from: FROM });
    const before = smtp.messages.length;
    const outcomes = await Promise.all([1, 2, 3, 4, 5].map((n) => sender.send({ to: `guest${n}@example.test`, subject: `Message ${n}`, text: `Body ${n}` })));
    assert.deepEqual(outcomes.map((o) => o.status), ['sent', 'sent', 'sent', 'sent', 'sent']);
    const ids = outcomes.map((o) => (o.status === 'sent' ? o.providerId : null));
    assert.equal(new Set(ids).size, 5, 'distinct Message-IDs');
    assert.deepEqual(smtp.messages.slice(before).map((m) => m.subject).sort(), ['Message 1', 'Message 2', 'Message 3', 'Message 4', 'Message 5']);
  });
});

describe('server requiring AUTH', () => {
  let smtp: SmtpStandIn;
  let port: number;
  before(async () => {
    smtp = await startSmtpStandIn({ auth: { user: USER, pass: PASS } });
    port = smtp.port;
  });
  after(() => smtp.close());

  test('logs in with the percent-decoded user and password from the URL and delivers', async () => {
    assert.equal(smtp.url, `smtp://${encodeURIComponent(USER)}:${encodeURIComponent(PASS)}@127.0.0.1:${port}`);
    const sender = createEmailSender({ smtpUrl: smtp.url, from: FROM });
    const outcome = await sender.send({ to: 'bob@example.test', subject: 'Reminder', text: 'See you tomorrow.' });
    assert.equal(outcome.status, 'sent', JSON.stringify(outcome));
    const received = smtp.messages.at(-1)!;
    assert.equal(received.user, USER);
    assert.deepEqual(received.to, ['bob@example.test']);
    assert.equal(received.subject, 'Reminder');
    assert.equal(received.text.trimEnd(), 'See you tomorrow.');
  });

  test('a wrong password fails without the credentials in the reason', async () => {
    const wrong = 'Wr0ng-Secret-Password';
    const sender = createEmailSender({ smtpUrl: `smtp://${encodeURIComponent(USER)}:${wrong}@127.0.0.1:${port}`, from: FROM });
    const before = smtp.messages.length;
    const reason = failedReason(await sender.send({ to: 'bob@example.test', subject: 'x', text: 'x' }));
    assert.match(reason, /EAUTH/);
    assert.match(reason, /535/);
    assertNoCredentials(reason);
    assert.ok(!reason.includes(wrong) && !reason.includes(Buffer.from(wrong).toString('base64')), reason);
    assert.equal(smtp.messages.length, before);
  });

  test('no credentials where the server requires them fails', async () => {
    const sender = createEmailSender({ smtpUrl: `smtp://127.0.0.1:${port}`, from: FROM });
    const reason = failedReason(await sender.send({ to: 'bob@example.test', subject: 'x', text: 'x' }));
    assert.match(reason, /530|auth/i);
  });
});

describe('refusals and unreachable servers', () => {
  test('a recipient the server rejects fails with its answer', async () => {
    const smtp = await startSmtpStandIn({ rejectRecipients: ['gone@example.test'] });
    try {
      const sender = createEmailSender({ smtpUrl: smtp.url, from: FROM });
      const reason = failedReason(await sender.send({ to: 'gone@example.test', subject: 'x', text: 'x' }));
      assert.match(reason, /550/);
      assert.match(reason, /Mailbox unavailable/);
      assert.equal(smtp.messages.length, 0);
    } finally {
      await smtp.close();
    }
  });

  test('a port nobody listens on fails at once', async () => {
    const port = await freePort();
    const sender = createEmailSender({ smtpUrl: `smtp://${encodeURIComponent(USER)}:${encodeURIComponent(PASS)}@127.0.0.1:${port}`, from: FROM });
    const started = Date.now();
    const reason = failedReason(await sender.send({ to: 'ann@example.test', subject: 'x', text: 'x' }));
    assert.ok(Date.now() - started < 2_000, `took ${Date.now() - started} ms`);
    assert.match(reason, /ECONNREFUSED|ECONNECTION/);
    assertNoCredentials(reason);
  });

  test('a server that accepts the connection but never greets fails after the timeout', async () => {
    const sockets = new Set<Socket>();
    const silent: Server = createServer((socket) => {
      sockets.add(socket);
      socket.on('error', () => {});
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const address = silent.address();
    const port = typeof address === 'object' && address ? address.port : 0;
    try {
      const sender = createEmailSender({ smtpUrl: `smtp://127.0.0.1:${port}`, from: FROM, timeoutMs: 300 });
      const started = Date.now();
      const reason = failedReason(await sender.send({ to: 'ann@example.test', subject: 'x', text: 'x' }));
      const took = Date.now() - started;
      assert.ok(took >= 250 && took < 3_000, `took ${took} ms`);
      assert.match(reason, /greeting|timeout|ETIMEDOUT/i);
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });

  test('a server that keeps talking but never finishes is cut off at three times the timeout', async () => {
    // Greets, then answers EHLO with an endless multi-line reply: the socket is never idle, so only
    // the whole-send deadline can end it.
    const sockets = new Set<Socket>();
    const timers = new Set<NodeJS.Timeout>();
    const drip: Server = createServer((socket) => {
      sockets.add(socket);
      socket.on('error', () => {});
      socket.write('220 drip.test ESMTP\r\n');
      socket.once('data', () => {
        const timer = setInterval(() => socket.write('250-still thinking\r\n'), 50);
        timers.add(timer);
      });
    });
    await new Promise<void>((resolve) => drip.listen(0, '127.0.0.1', resolve));
    const address = drip.address();
    const port = typeof address === 'object' && address ? address.port : 0;
    try {
      const sender = createEmailSender({ smtpUrl: `smtp://127.0.0.1:${port}`, from: FROM, timeoutMs: 200 });
      const started = Date.now();
      const reason = failedReason(await sender.send({ to: 'ann@example.test', subject: 'x', text: 'x' }));
      const took = Date.now() - started;
      assert.ok(took >= 550 && took < 3_000, `took ${took} ms`);
      assert.equal(reason, 'SMTP send failed (ETIMEDOUT): not finished within 600 ms');
    } finally {
      for (const timer of timers) clearInterval(timer);
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => drip.close(() => resolve()));
    }
  });

  test('smtps:// verifies the certificate: an untrusted one fails and nothing is sent', async () => {
    const smtp = await startSmtpStandIn({ secure: true, auth: { user: USER, pass: PASS } });
    try {
      assert.match(smtp.url, /^smtps:\/\//);
      const sender = createEmailSender({ smtpUrl: smtp.url, from: FROM });
      const reason = failedReason(await sender.send({ to: 'ann@example.test', subject: 'x', text: 'x' }));
      assert.match(reason, /certificate/i);
      assertNoCredentials(reason);
      assert.equal(smtp.messages.length, 0);
    } finally {
      await smtp.close();
    }
  });
});

describe('smtpTransportOptions', () => {
  test('smtp:// and smtps:// with default ports, decoded credentials and timeouts', () => {
    assert.deepEqual(smtpTransportOptions('smtp://mail.example.test'), {
      host: 'mail.example.test',
      port: 587,
      secure: false,
      connectionTimeout: DEFAULT_SMTP_TIMEOUT_MS,
      greetingTimeout: DEFAULT_SMTP_TIMEOUT_MS,
      socketTimeout: DEFAULT_SMTP_TIMEOUT_MS,
      dnsTimeout: DEFAULT_SMTP_TIMEOUT_MS,
      socketCloseTimeout: 5_000,
      logger: false,
      debug: false,
    });
    const secure = smtpTransportOptions(`smtps://${encodeURIComponent(USER)}:${encodeURIComponent(PASS)}@mail.example.test`, 2_000);
    assert.equal(secure.port, 465);
    assert.equal(secure.secure, true);
    assert.deepEqual(secure.auth, { user: USER, pass: PASS });
    assert.equal(secure.connectionTimeout, 2_000);
    assert.equal(secure.socketCloseTimeout, 2_000);
    assert.equal(smtpTransportOptions('smtp://apikey:k@mail.example.test:2525').port, 2525);
    assert.equal(smtpTransportOptions('smtp://[::1]:25').host, '::1');
  });

  test('anything else is refused without repeating the URL', () => {
    for (const url of ['http://user:hunter2hunter2@mail.example.test', 'mail.example.test', 'smtp://user:hunter2hunter2@mail.example.test/?pool=true', 'smtp://user:hunter2hunter2@mail.example.test/path']) {
      assert.throws(
        () => createEmailSender({ smtpUrl: url, from: FROM }),
        (error: Error) => error.message.startsWith('SMTP_URL') && !error.message.includes('hunter2'),
        url,
      );
    }
  });
});
