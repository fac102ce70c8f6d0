// One webhook delivery: a single HTTPS POST of JSON to a company's endpoint, made safe against
// server-side request forgery.
//
// - The URL and headers are checked again with the configuration rules (destination.ts), so a row stored
//   before the rules existed (for example plain http) is refused, not delivered.
// - The hostname is resolved here, at delivery time, and EVERY address it resolves to must be public
//   (isForbiddenAddress); one private answer refuses the whole delivery (DNS rebinding, split answers).
// - The TCP connection is then pinned to the checked address: the connector dials that IP itself and
//   never resolves the name again, while TLS still sends the hostname as SNI and verifies the server
//   certificate against the hostname with the normal trust store.
// - Redirects are never followed (a 3xx is a failed delivery), nothing is retried, one deadline covers
//   resolution, connection, request, response headers and response body.
// - It never throws: every problem is an outcome with `ok: false` and a short `error`.
//
// Tests reach a local HTTPS receiver through WebhookTestAllowance, which is honoured only when
// process.env.NODE_ENV === 'test'; in any other environment passing it refuses the delivery.

import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { performance } from 'node:perf_hooks';
import { Agent, buildConnector } from 'undici';
import { collect } from '../../platform/outbound/collect.js';
import ipaddr from 'ipaddr.js';
import { checkWebhookHeaders, checkWebhookUrl, isForbiddenAddress } from './destination.js';
import { errorCode, errorMessage } from '../../platform/values.js';

export const DEFAULT_TIMEOUT_MS = 5000;
/** Upper bound on timeoutMs; larger values are clamped to it. */
export const MAX_TIMEOUT_MS = 30_000;
/** Response bytes read (and discarded) at most; the rest of a larger response is not waited for. */
export const MAX_RESPONSE_BYTES = 64 * 1024;
export const USER_AGENT = 'Slotwise-Webhooks/1';

/**
 * Test-only permission to deliver to a loopback receiver (127.0.0.0/8 or ::1) whose certificate is
 * signed by `ca`. Nothing else is relaxed: the URL and header rules, the other address ranges, TLS
 * hostname verification, the deadline and the no-redirect rule all still apply. deliverWebhook refuses
 * any delivery that carries it unless process.env.NODE_ENV === 'test', so production configuration
 * cannot switch it on; wiring code must only build one when NODE_ENV is 'test'.
 */
export interface WebhookTestAllowance {
  readonly allowLoopback: true;
  /** PEM certificate(s) trusted instead of the system roots for this delivery. */
  readonly ca: string | Buffer;
}

export interface DeliveryOptions {
  url: string;
  /** The webhook's configured headers; they are checked again with checkWebhookHeaders. */
  headers: Record<string, string>;
  /** Sent as JSON. A body JSON.stringify cannot encode makes the outcome a failure. */
  body: unknown;
  /** Deadline for the whole exchange in milliseconds; default 5000, clamped to [1, 30000]. */
  timeoutMs?: number;
  /**
   * Resolves a hostname to its addresses; default dns.promises.lookup(host, { all: true }).
   * Whatever it returns is still checked address by address, so injecting one cannot widen what is allowed.
   */
  resolve?: (hostname: string) => Promise<string[]>;
  /** See WebhookTestAllowance. Refused unless NODE_ENV is 'test'. */
  testAllowance?: WebhookTestAllowance;
}

export interface DeliveryOutcome {
  /** True only when the receiver answered 2xx and the response was read within the deadline. */
  ok: boolean;
  /** The HTTP status received, or null when no response arrived (refused, DNS, connect, TLS, timeout). */
  status: number | null;
  /** Null when ok; otherwise a short reason starting with a category: refused, dns, tls, network, timeout, redirect, http. */
  error: string | null;
  durationMs: number;
  /** The address the connection was pinned to, or null when none was chosen. */
  address: string | null;
}

export async function defaultResolve(hostname: string): Promise<string[]> {
  const answers = await lookup(hostname, { all: true });
  return answers.map((a) => a.address);
}

function isLoopback(address: string): boolean {
  try {
    if (isIP(address) === 4) return ipaddr.IPv4.parse(address).range() === 'loopback';
    if (isIP(address) === 6) {
      const v6 = ipaddr.IPv6.parse(address);
      return v6.range() === 'loopback' && !v6.zoneId;
    }
  } catch {
    return false;
  }
  return false;
}

class DeadlineError extends Error {}

/** Resolves or rejects with `promise`, or rejects with DeadlineError once `signal` aborts, whichever is first. */
function beforeDeadline<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    promise.catch(() => undefined);
    return Promise.reject(new DeadlineError());
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new DeadlineError());
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error instanceof Error ? error : new Error(String(error)));
      },
    );
  });
}

function short(text: string): string {
  return text.length > 200 ? `${text.slice(0, 197)}...` : text;
}

const TIMEOUT_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_CONNECT_TIMEOUT']);

function describeTransportError(error: unknown, timedOut: boolean, timeoutMs: number): string {
  const code = errorCode(error);
  if (timedOut || error instanceof DeadlineError || (code && TIMEOUT_CODES.has(code))) return `timeout: no complete answer within ${timeoutMs} ms`;
  const message = errorMessage(error);
  if (code && (code.startsWith('ERR_TLS') || code.includes('CERT') || code.startsWith('ERR_SSL') || /certificate|self.signed/i.test(code))) {
    return short(`tls: ${code}`);
  }
  if (/certificate|ssl|tls/i.test(message)) return short(`tls: ${code ?? message}`);
  return short(`network: ${code ?? message}`);
}

/**
 * POST `body` as JSON to `url` once. Never throws and never follows redirects; see the module comment
 * for the safety rules. The outcome is meant to be stored as the delivery record.
 */
export async function deliverWebhook(options: DeliveryOptions): Promise<DeliveryOutcome> {
  const started = performance.now();
  let address: string | null = null;
  let status: number | null = null;
  const done = (ok: boolean, error: string | null): DeliveryOutcome => ({
    ok,
    status,
    error,
    durationMs: Math.max(0, Math.round(performance.now() - started)),
    address,
  });

  let timer: ReturnType<typeof setTimeout> | undefined;
  let agent: Agent | undefined;
  let timedOut = false;
  let timeoutMs = DEFAULT_TIMEOUT_MS;
  try {
    const allowance = options.testAllowance;
    if (allowance !== undefined) {
      if (process.env.NODE_ENV !== 'test') return done(false, 'refused: the test allowance is only honoured when NODE_ENV is test');
      if (allowance.allowLoopback !== true || (typeof allowance.ca !== 'string' && !Buffer.isBuffer(allowance.ca))) {
        return done(false, 'refused: malformed test allowance');
      }
    }
    if (typeof options.timeoutMs === 'number' && Number.isFinite(options.timeoutMs)) {
      timeoutMs = Math.min(MAX_TIMEOUT_MS, Math.max(1, Math.round(options.timeoutMs)));
    }

    const urlCheck = checkWebhookUrl(options.url);
    if (!urlCheck.ok) return done(false, `refused: ${urlCheck.reason}`);
    const url = urlCheck.url;
    const headersCheck = checkWebhookHeaders(options.headers);
    if (!headersCheck.ok) return done(false, `refused: header ${JSON.stringify(headersCheck.path)}: ${headersCheck.reason}`);

    let payload: string | undefined;
    try {
      payload = JSON.stringify(options.body);
    } catch {
      payload = undefined;
    }
    if (typeof payload !== 'string') return done(false, 'refused: the body cannot be encoded as JSON');

    const controller = new AbortController();
    timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, timeoutMs);

    const hostname = url.hostname;
    const resolve = options.resolve ?? defaultResolve;
    let addresses: string[];
    try {
      addresses = await beforeDeadline(Promise.resolve().then(() => resolve(hostname)), controller.signal);
    } catch (error) {
      if (timedOut || error instanceof DeadlineError) return done(false, `timeout: no complete answer within ${timeoutMs} ms`);
      return done(false, short(`dns: ${errorCode(error) ?? errorMessage(error)}`));
    }
    if (!Array.isArray(addresses) || addresses.length === 0) return done(false, `dns: ${hostname} has no addresses`);
    for (const candidate of addresses) {
      const allowed = typeof candidate === 'string' && (!isForbiddenAddress(candidate) || (allowance !== undefined && isLoopback(candidate)));
      // The record says what happened, never which internal address a name resolved to: the
      // company reads it, and it would map the network behind this service for them.
      if (!allowed) return done(false, short(`refused: ${hostname} resolves to a non-public address`));
    }
    const pinned = addresses.find((a) => isIP(a) === 4) ?? addresses[0]!;
    address = pinned;

    const baseConnect = buildConnector({
      timeout: timeoutMs,
      maxCachedSessions: 0,
      rejectUnauthorized: true,
      ...(allowance ? { ca: allowance.ca } : {}),
    });
    agent = new Agent({
      connections: 1,
      pipelining: 1,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
      // Pin: dial the checked IP; keep the hostname for SNI and certificate verification.
      connect: (connectOptions, callback) => {
        baseConnect({ ...connectOptions, hostname: pinned, servername: hostname }, callback);
      },
    });

    const headers: Record<string, string> = { ...headersCheck.headers };
    if (!Object.keys(headers).some((name) => name.toLowerCase() === 'user-agent')) headers['user-agent'] = USER_AGENT;
    headers['content-type'] = 'application/json';

    // Collected without backpressure (platform/outbound/collect.ts): a receiver that answers a
    // large body and closes the connection must not be able to end this process.
    let answer: Awaited<ReturnType<typeof collect>>;
    try {
      answer = await beforeDeadline(
        collect(agent, {
          url,
          method: 'POST',
          headers,
          body: payload,
          signal: controller.signal,
          maxBytes: MAX_RESPONSE_BYTES,
          onStatus: (received) => {
            status = received;
          },
        }),
        controller.signal,
      );
    } catch (error) {
      const reason = describeTransportError(error, timedOut, timeoutMs);
      return done(false, status !== null && reason.startsWith('timeout') ? `${reason} (response body not complete)` : reason);
    }
    status = answer.status;

    if (status >= 200 && status < 300) return done(true, null);
    if (status >= 300 && status < 400) return done(false, `redirect: ${status} not followed`);
    return done(false, `http: status ${status}`);
  } catch (error) {
    return done(false, describeTransportError(error, timedOut, timeoutMs));
  } finally {
    if (timer !== undefined) clearTimeout(timer);
    if (agent !== undefined) agent.destroy().catch(() => undefined);
  }
}
