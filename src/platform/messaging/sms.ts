import { cleanReason } from './outcome.js';
import type { SendOutcome } from './outcome.js';
import { fieldOf, isRecord } from '../values.js';

export type { SendOutcome } from './outcome.js';

/**
 * SMS through a Twilio-style Messages API:
 *
 *   POST {baseUrl}/2010-04-01/Accounts/{AccountSid}/Messages.json
 *   Authorization: Basic base64(AccountSid:AuthToken)
 *   Content-Type: application/x-www-form-urlencoded      To, From (or MessagingServiceSid), Body
 *
 * A 2xx answer is `sent`, with the JSON `sid` as the provider id; any other answer is `failed` with
 * the provider's error `message` (Twilio answers `{code, message, more_info, status}`). The base URL
 * is configurable (SMS_PROVIDER_URL) so a compatible provider, a relay, or a local stand-in can take
 * Twilio's place; it defaults to https://api.twilio.com.
 *
 * A `from` that is a Messaging Service SID (MG followed by 32 hex digits) is sent as
 * MessagingServiceSid instead of From, as Twilio expects. Redirects are not followed (they would
 * carry the credentials elsewhere). Each request, body included, is bounded by one deadline.
 * Nothing here logs, and the auth token never appears in a reason.
 */

export const SMS_NOT_CONFIGURED = 'SMS provider is not configured (SMS_PROVIDER_URL, SMS_ACCOUNT_SID, SMS_AUTH_TOKEN, SMS_FROM)';
export const DEFAULT_SMS_BASE_URL = 'https://api.twilio.com';
export const DEFAULT_SMS_TIMEOUT_MS = 10_000;

export interface SmsMessage {
  /** The recipient's number, E.164 (`+15551234567`). */
  to: string;
  /** Plain text. */
  body: string;
}

export interface SmsSender {
  /** False unless account SID, auth token and sender are all given: every send answers not_sent. */
  readonly configured: boolean;
  /** Never throws: every problem is an outcome. */
  send(message: SmsMessage): Promise<SendOutcome>;
  /** Nothing to release (requests use the global fetch); present so both senders close alike. */
  close(): void;
}

export interface SmsSenderOptions {
  /** Default https://api.twilio.com; any path is kept as a prefix. */
  baseUrl?: string | undefined;
  accountSid?: string | undefined;
  authToken?: string | undefined;
  /** A sender number, alphanumeric sender id, or Messaging Service SID. */
  from?: string | undefined;
  /** Deadline for the whole request in milliseconds (default 10 s). */
  timeoutMs?: number;
}

const MESSAGING_SERVICE_SID = /^MG[0-9a-fA-F]{32}$/;

/** The provider's base URL without a trailing slash. Throws on anything but a plain http(s) URL. */
export function smsBaseUrl(baseUrl: string | undefined): string {
  if (!baseUrl) return DEFAULT_SMS_BASE_URL;
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new Error('SMS_PROVIDER_URL is not a valid URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new Error('SMS_PROVIDER_URL must start with https:// or http://');
  if (url.username || url.password) throw new Error('SMS_PROVIDER_URL must not contain credentials (use SMS_ACCOUNT_SID and SMS_AUTH_TOKEN)');
  if (url.search || url.hash) throw new Error('SMS_PROVIDER_URL must not have a query string or fragment');
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}

export function createSmsSender(options: SmsSenderOptions): SmsSender {
  const { accountSid, authToken, from } = options;
  const timeoutMs = options.timeoutMs ?? DEFAULT_SMS_TIMEOUT_MS;
  if (!accountSid || !authToken || !from) {
    return {
      configured: false,
      send: async () => ({ status: 'not_sent', reason: SMS_NOT_CONFIGURED }),
      close: () => {},
    };
  }
  const endpoint = `${smsBaseUrl(options.baseUrl)}/2010-04-01/Accounts/${encodeURIComponent(accountSid)}/Messages.json`;
  const authorization = `Basic ${Buffer.from(`${accountSid}:${authToken}`, 'utf8').toString('base64')}`;
  const secrets = [authToken];
  const senderField = MESSAGING_SERVICE_SID.test(from) ? 'MessagingServiceSid' : 'From';

  return {
    configured: true,
    async send(message) {
      const form = new URLSearchParams([
        ['To', message.to],
        [senderField, from],
        ['Body', message.body],
      ]);
      try {
        const response = await fetch(endpoint, {
          method: 'POST',
          headers: {
            authorization,
            'content-type': 'application/x-www-form-urlencoded; charset=utf-8',
            accept: 'application/json',
          },
          body: form.toString(),
          redirect: 'manual',
          signal: AbortSignal.timeout(timeoutMs),
        });
        const body = parseJson(await response.text());
        if (response.status >= 200 && response.status < 300) {
          const sid = body?.sid;
          return { status: 'sent', providerId: typeof sid === 'string' && sid ? sid : null };
        }
        return { status: 'failed', reason: cleanReason(describeRefusal(response.status, body), secrets) };
      } catch (error) {
        return { status: 'failed', reason: cleanReason(describeError(error, timeoutMs), secrets) };
      }
    },
    close: () => {},
  };
}

function parseJson(text: string): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(text);
    return isRecord(value) ? value : null;
  } catch {
    return null;
  }
}

function describeRefusal(status: number, body: Record<string, unknown> | null): string {
  const code = typeof body?.code === 'number' || typeof body?.code === 'string' ? `, code ${body.code}` : '';
  const message = typeof body?.message === 'string' && body.message ? `: ${body.message}` : '';
  const redirect = status >= 300 && status < 400 ? ' (redirects are not followed)' : '';
  return `SMS provider refused the message (HTTP ${status}${code})${message}${redirect}`;
}

function describeError(error: unknown, timeoutMs: number): string {
  if (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError')) {
    return `SMS provider did not answer within ${timeoutMs} ms`;
  }
  const cause = error instanceof Error ? error.cause : undefined;
  const causeCode = fieldOf(cause, 'code');
  const causeMessage = fieldOf(cause, 'message');
  const detail = typeof causeCode === 'string' ? causeCode : typeof causeMessage === 'string' ? causeMessage : error instanceof Error ? error.message : '';
  return `Could not reach the SMS provider${detail ? ` (${detail})` : ''}`;
}
