import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { randomBytes } from 'node:crypto';
import { SMTPServer } from 'smtp-server';
import type { SMTPServerError } from 'smtp-server';
import { simpleParser } from 'mailparser';

// Local stand-ins of the providers this service sends through, speaking their real protocols on
// 127.0.0.1 and a random port: an SMTP server (smtp-server) and a Twilio-style Messages API
// (node:http). They record what they receive so tests can check it.

/** Resolves once `list` holds at least `count` entries; rejects after `timeoutMs`. */
async function waitForCount(list: readonly unknown[], count: number, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (list.length < count) {
    if (Date.now() > deadline) throw new Error(`expected ${count} ${what}, received ${list.length} within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

// ---------------------------------------------------------------------------------------------
// SMTP

export interface SmtpStandInOptions {
  /** Require AUTH (PLAIN or LOGIN) with exactly these credentials; without it AUTH is not offered. */
  auth?: { user: string; pass: string };
  /** Recipients answered with 550 at RCPT TO (compared case-insensitively). */
  rejectRecipients?: string[];
  /** Implicit TLS (smtps://) with smtp-server's built-in certificate, which clients do not trust. */
  secure?: boolean;
}

export interface ReceivedEmail {
  /** Envelope sender (MAIL FROM). */
  from: string;
  /** Envelope recipients (RCPT TO). */
  to: string[];
  subject: string;
  text: string;
  html: string | null;
  /** The From header as text, e.g. `Slotwise <no-reply@example.com>`. */
  fromHeader: string;
  messageId: string | null;
  /** The user name the client authenticated as, or null. */
  user: string | null;
  /** The whole message as received (headers and body). */
  raw: string;
}

export interface SmtpStandIn {
  port: number;
  /** smtp://user:pass@127.0.0.1:port (credentials only when auth was asked for; smtps:// when secure). */
  url: string;
  messages: ReceivedEmail[];
  waitForMessages(count: number, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

export async function startSmtpStandIn(options: SmtpStandInOptions = {}): Promise<SmtpStandIn> {
  const messages: ReceivedEmail[] = [];
  const rejected = new Set((options.rejectRecipients ?? []).map((address) => address.toLowerCase()));
  const auth = options.auth;
  const server = new SMTPServer({
    secure: options.secure ?? false,
    // No STARTTLS: the built-in certificate is untrusted, and an opportunistic upgrade would fail.
    disabledCommands: auth ? ['STARTTLS'] : ['STARTTLS', 'AUTH'],
    authOptional: !auth,
    allowInsecureAuth: true,
    authMethods: ['PLAIN', 'LOGIN'],
    logger: false,
    closeTimeout: 1_000,
    onAuth(attempt, _session, callback) {
      if (auth && attempt.username === auth.user && attempt.password === auth.pass) {
        callback(null, { user: attempt.username });
        return;
      }
      const error: SMTPServerError = new Error('Invalid username or password');
      error.responseCode = 535;
      callback(error);
    },
    onRcptTo(address, _session, callback) {
      if (rejected.has(address.address.toLowerCase())) {
        const error: SMTPServerError = new Error(`Mailbox unavailable: ${address.address}`);
        error.responseCode = 550;
        callback(error);
        return;
      }
      callback();
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        const raw = Buffer.concat(chunks);
        simpleParser(raw).then(
          (parsed) => {
            messages.push({
              from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
              to: session.envelope.rcptTo.map((recipient) => recipient.address),
              subject: parsed.subject ?? '',
              text: parsed.text ?? '',
              html: typeof parsed.html === 'string' ? parsed.html : null,
              fromHeader: parsed.from?.text ?? '',
              messageId: parsed.messageId ?? null,
              user: typeof session.user === 'string' ? session.user : null,
              raw: raw.toString('utf8'),
            });
            callback(null, `Message queued as ${randomBytes(6).toString('hex')}`);
          },
          (error: Error) => callback(error),
        );
      });
    },
  });
  // Client-side failures (a refused certificate, a dropped connection) surface here; they are the
  // client's outcome to report, not the stand-in's.
  server.on('error', () => {});
  await new Promise<void>((resolve, reject) => {
    server.server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const address = server.server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  const credentials = auth ? `${encodeURIComponent(auth.user)}:${encodeURIComponent(auth.pass)}@` : '';
  return {
    port,
    url: `${options.secure ? 'smtps' : 'smtp'}://${credentials}127.0.0.1:${port}`,
    messages,
    waitForMessages: (count, timeoutMs = 5_000) => waitForCount(messages, count, timeoutMs, 'emails'),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

// ---------------------------------------------------------------------------------------------
// SMS (Twilio-style Messages API)

export interface SmsStandInOptions {
  accountSid?: string;
  authToken?: string;
  /** Wait this long before answering each request (to test client timeouts). */
  delayMs?: number;
}

export interface ReceivedSms {
  to: string;
  /** From, or MessagingServiceSid when that was sent instead. */
  from: string;
  body: string;
  /** The sid the stand-in answered with. */
  sid: string;
}

export interface SmsStandIn {
  /** http://127.0.0.1:port, to use as SMS_PROVIDER_URL. */
  baseUrl: string;
  accountSid: string;
  authToken: string;
  /** Accepted messages only. */
  messages: ReceivedSms[];
  /** Every request's status, accepted or not, in order. */
  statuses: number[];
  /** Can be changed while running. */
  delayMs: number;
  waitForMessages(count: number, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

const E164 = /^\+[1-9]\d{6,14}$/;

export async function startSmsStandIn(options: SmsStandInOptions = {}): Promise<SmsStandIn> {
  const accountSid = options.accountSid ?? `AC${randomBytes(16).toString('hex')}`;
  const authToken = options.authToken ?? randomBytes(16).toString('hex');
  const expectedAuthorization = `Basic ${Buffer.from(`${accountSid}:${authToken}`).toString('base64')}`;
  const timers = new Set<NodeJS.Timeout>();

  const reply = (response: ServerResponse, status: number, body: Record<string, unknown>) => {
    standIn.statuses.push(status);
    response.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
    response.end(JSON.stringify(body));
  };
  const error = (response: ServerResponse, status: number, code: number, message: string) =>
    reply(response, status, { code, message, more_info: `https://www.twilio.com/docs/errors/${code}`, status });

  const handle = (request: IncomingMessage, response: ServerResponse, raw: string) => {
    const path = new URL(request.url ?? '/', 'http://stand-in').pathname;
    const match = /^\/2010-04-01\/Accounts\/([^/]+)\/Messages\.json$/.exec(path);
    if (!match) return error(response, 404, 20404, `The requested resource ${path} was not found`);
    if (request.method !== 'POST') return error(response, 405, 20004, 'Method not allowed');
    if (request.headers.authorization !== expectedAuthorization || decodeURIComponent(match[1]!) !== accountSid) {
      return error(response, 401, 20003, 'Authenticate');
    }
    const form = (request.headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded') ? new URLSearchParams(raw) : new URLSearchParams();
    const to = form.get('To');
    const from = form.get('From') ?? form.get('MessagingServiceSid');
    const body = form.get('Body');
    if (!to) return error(response, 400, 21604, "A 'To' phone number is required.");
    if (!from) return error(response, 400, 21603, "A 'From' phone number is required.");
    if (!body) return error(response, 400, 21602, 'Message body is required.');
    if (!E164.test(to)) return error(response, 400, 21211, `The 'To' number ${to} is not a valid phone number.`);
    const sid = `SM${randomBytes(16).toString('hex')}`;
    standIn.messages.push({ to, from, body, sid });
    const now = new Date().toUTCString().replace('GMT', '+0000');
    reply(response, 201, {
      sid,
      account_sid: accountSid,
      to,
      from: form.get('From'),
      messaging_service_sid: form.get('MessagingServiceSid'),
      body,
      status: 'queued',
      direction: 'outbound-api',
      num_segments: '1',
      api_version: '2010-04-01',
      date_created: now,
      date_updated: now,
      date_sent: null,
      error_code: null,
      error_message: null,
      uri: `/2010-04-01/Accounts/${accountSid}/Messages/${sid}.json`,
    });
  };

  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      if (standIn.delayMs <= 0) return handle(request, response, raw);
      const timer = setTimeout(() => {
        timers.delete(timer);
        handle(request, response, raw);
      }, standIn.delayMs);
      timers.add(timer);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;

  const standIn: SmsStandIn = {
    baseUrl: `http://127.0.0.1:${port}`,
    accountSid,
    authToken,
    messages: [],
    statuses: [],
    delayMs: options.delayMs ?? 0,
    waitForMessages: (count, timeoutMs = 5_000) => waitForCount(standIn.messages, count, timeoutMs, 'text messages'),
    close: () =>
      new Promise<void>((resolve) => {
        for (const timer of timers) clearTimeout(timer);
        timers.clear();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
  return standIn;
}
