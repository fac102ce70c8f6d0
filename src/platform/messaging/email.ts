import { createTransport } from 'nodemailer';
import type { NodemailerError, SMTPTransportOptions } from 'nodemailer';
import { cleanReason } from './outcome.js';
import type { SendOutcome } from './outcome.js';

export type { SendOutcome } from './outcome.js';

/**
 * Email through SMTP (nodemailer), configured by one URL:
 *
 *   smtp://[user:pass@]host[:port]    plain connection, upgraded with STARTTLS when the server offers it
 *                                     (port 587 unless given)
 *   smtps://[user:pass@]host[:port]   TLS from the first byte (port 465 unless given)
 *
 * User name and password are percent-decoded. Certificates are always verified. No query string is
 * read: one that is present is refused rather than silently ignored.
 *
 * Each send opens its own connection and closes it afterwards (no pool): notifications are few and
 * bursty, a broken or half-closed pooled connection cannot fail the next message, and nothing stays
 * open after shutdown. Callers bound concurrency themselves (one connection per concurrent send).
 *
 * Nothing here logs: nodemailer's logger and debug output are off, and failure reasons have the
 * credentials removed.
 */

export const SMTP_NOT_CONFIGURED = 'SMTP is not configured (SMTP_URL)';
/** Default for each wait: connecting, the greeting, DNS, and any silence on the socket. */
export const DEFAULT_SMTP_TIMEOUT_MS = 10_000;
/** The whole send (connect to QUIT) is cut off at this many times the per-step timeout. */
const WHOLE_SEND_FACTOR = 3;

/** A file sent with a message, built in memory (never read from a path or URL). */
export interface EmailAttachment {
  filename: string;
  content: string;
  /** For example `text/calendar; charset=utf-8; method=REQUEST`. */
  contentType: string;
}

export interface EmailMessage {
  /** One plain address (`someone@example.com`); display names and lists are refused. */
  to: string;
  subject: string;
  text: string;
  attachments?: EmailAttachment[] | undefined;
}

export interface EmailSender {
  /** False when no SMTP_URL was given: every send answers not_sent. */
  readonly configured: boolean;
  /** Never throws: every problem is an outcome. */
  send(message: EmailMessage): Promise<SendOutcome>;
  /** Releases the transport. Sends are one connection each, so this only matters for tidiness. */
  close(): void;
}

export interface EmailSenderOptions {
  smtpUrl?: string | undefined;
  /** The From header and envelope sender: `no-reply@example.com` or `Name <no-reply@example.com>`. */
  from: string;
  /** Per-step timeout in milliseconds (default 10 s); the whole send gets three times this. */
  timeoutMs?: number;
}

const SINGLE_ADDRESS = /^[^\s@<>,;:"()[\]\\]+@[^\s@<>,;:"()[\]\\]+$/;

/**
 * Nodemailer options for an SMTP URL. Throws on anything but an smtp:// or smtps:// URL with a host;
 * the error never repeats the URL, which may hold a password.
 */
export function smtpTransportOptions(smtpUrl: string, timeoutMs: number = DEFAULT_SMTP_TIMEOUT_MS): SMTPTransportOptions {
  let url: URL;
  try {
    url = new URL(smtpUrl);
  } catch {
    throw new Error('SMTP_URL is not a valid URL (expected smtp://[user:pass@]host[:port] or smtps://...)');
  }
  if (url.protocol !== 'smtp:' && url.protocol !== 'smtps:') {
    throw new Error('SMTP_URL must start with smtp:// or smtps://');
  }
  if (!url.hostname) throw new Error('SMTP_URL has no host');
  if (url.search) throw new Error('SMTP_URL must not have a query string');
  if (url.pathname !== '' && url.pathname !== '/') throw new Error('SMTP_URL must not have a path');
  const secure = url.protocol === 'smtps:';
  const user = decodeURIComponent(url.username);
  const pass = decodeURIComponent(url.password);
  // URL keeps IPv6 literals in brackets; sockets want them bare.
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  return {
    host,
    port: url.port ? Number(url.port) : secure ? 465 : 587,
    secure,
    ...(user || pass ? { auth: { user, pass } } : {}),
    connectionTimeout: timeoutMs,
    greetingTimeout: timeoutMs,
    socketTimeout: timeoutMs,
    dnsTimeout: timeoutMs,
    socketCloseTimeout: Math.min(timeoutMs, 5_000),
    logger: false,
    debug: false,
  };
}

export function createEmailSender(options: EmailSenderOptions): EmailSender {
  const timeoutMs = options.timeoutMs ?? DEFAULT_SMTP_TIMEOUT_MS;
  if (!options.smtpUrl) {
    return {
      configured: false,
      send: async () => ({ status: 'not_sent', reason: SMTP_NOT_CONFIGURED }),
      close: () => {},
    };
  }
  const transportOptions = smtpTransportOptions(options.smtpUrl, timeoutMs);
  const user = transportOptions.auth?.user;
  const pass = transportOptions.auth?.pass;
  // AUTH PLAIN sends base64("\0user\0pass"); cleanReason also removes that form.
  const secrets = [user, pass, user !== undefined && pass !== undefined ? `\0${user}\0${pass}` : undefined];
  const transport = createTransport(transportOptions);

  return {
    configured: true,
    async send(message) {
      if (!SINGLE_ADDRESS.test(message.to)) return { status: 'failed', reason: 'Invalid recipient address' };
      try {
        const info = await transport.sendMail({
          from: options.from,
          to: message.to,
          subject: message.subject,
          text: message.text,
          ...(message.attachments?.length ? { attachments: message.attachments.map((a) => ({ filename: a.filename, content: a.content, contentType: a.contentType })) } : {}),
          // Automated mail (RFC 3834): out-of-office responders should not answer it.
          headers: { 'Auto-Submitted': 'auto-generated' },
          disableFileAccess: true,
          disableUrlAccess: true,
          signal: AbortSignal.timeout(timeoutMs * WHOLE_SEND_FACTOR),
        });
        if (info.rejected.length > 0 || info.accepted.length === 0) {
          return { status: 'failed', reason: cleanReason(`SMTP server rejected the recipient: ${info.response ?? ''}`, secrets) };
        }
        return { status: 'sent', providerId: typeof info.messageId === 'string' && info.messageId ? info.messageId : null };
      } catch (error) {
        return { status: 'failed', reason: describeFailure(error, timeoutMs * WHOLE_SEND_FACTOR, secrets) };
      }
    },
    close() {
      transport.close();
    },
  };
}

function describeFailure(error: unknown, wholeSendMs: number, secrets: Array<string | undefined>): string {
  if (!(error instanceof Error)) return 'SMTP send failed';
  const failure = error as NodemailerError;
  if (failure.code === 'EABORT') return `SMTP send failed (ETIMEDOUT): not finished within ${wholeSendMs} ms`;
  const code = failure.code ? ` (${failure.code})` : '';
  return cleanReason(`SMTP send failed${code}: ${failure.message}`, secrets);
}
