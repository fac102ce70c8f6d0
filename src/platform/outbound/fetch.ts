/**
 * A `fetch` for calling providers we do not run (Google, Microsoft Graph, CalDAV servers, a v1
 * source): the webhook URL rules (modules/webhooks/destination.ts) with a deadline.
 * - https only, and every address the name resolves to must be public; the connection dials the
 *   address that was checked (the lookup is the check), so DNS cannot be switched in between.
 * - `allowLoopbackHttp` (NODE_ENV=test only, decisions.md "External calendars") also accepts
 *   http:// and https:// on 127.0.0.1 / ::1 / localhost, so tests run local stand-ins.
 * - every call has a deadline covering connect, headers and body; a hung provider costs one call.
 * - redirects are not followed (a redirect could lead to an internal address).
 * - the answer is collected without backpressure (collect.ts says why: undici 7 can otherwise
 *   end the process when a server closes the connection).
 * - an idempotent request that got no answer byte because the connection was reset or closed is
 *   sent once more, within the same deadline (`isStaleConnectionFailure`).
 */
import { lookup as dnsLookup } from 'node:dns';
import type { LookupAddress, LookupOneOptions, LookupAllOptions } from 'node:dns';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import { Agent } from 'undici';
import { collect } from './collect.js';
import type { CollectedResponse } from './collect.js';
import { checkWebhookUrl, isForbiddenAddress } from '../../modules/webhooks/destination.js';

export interface OutboundOptions {
  /** Deadline of one call, from the start to the last byte of the body. */
  timeoutMs: number;
  /** Tests only (NODE_ENV=test): plain http and loopback addresses are accepted. */
  allowLoopbackHttp: boolean;
}

export type OutboundFetch = (input: string | URL, init?: RequestInit) => Promise<Response>;

/** The most of an answer's body kept; a longer answer is an error (a calendar page is far smaller). */
export const MAX_ANSWER_BYTES = 16 * 1024 * 1024;

/** A request body as bytes or text, with the content type it implies when the caller set none. */
function bodyOf(body: RequestInit['body']): { data: string | Buffer | undefined; type: string | null } {
  if (body === undefined || body === null) return { data: undefined, type: null };
  if (typeof body === 'string') return { data: body, type: 'text/plain;charset=UTF-8' };
  if (body instanceof URLSearchParams) return { data: body.toString(), type: 'application/x-www-form-urlencoded;charset=UTF-8' };
  if (body instanceof ArrayBuffer) return { data: Buffer.from(body), type: null };
  if (ArrayBuffer.isView(body)) return { data: Buffer.from(body.buffer, body.byteOffset, body.byteLength), type: null };
  throw new TypeError('outbound fetch: unsupported body type (strings, form parameters and bytes only)');
}

/**
 * Methods whose RFCs call them idempotent (RFC 9110 9.2.2; PROPFIND RFC 4918 9.1, REPORT
 * RFC 3253 3.6, which CalDAV sync sends): sending one twice has the effect of sending it once, so
 * one that may never have arrived can be sent again. POST and PATCH never are.
 */
const IDEMPOTENT_METHODS = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE', 'PROPFIND', 'REPORT']);

/** Socket failures that mean "the server closed this connection", as undici and Node.js name them. */
const CONNECTION_CLOSED_CODES = new Set(['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET']);

/**
 * True when a request failed because its connection was reset or closed before any answer byte
 * arrived: the classic case is a kept-alive connection the server closes just as the client reuses
 * it (a server's idle timeout, or one that stalls past it). undici does not retry the request
 * that was running on such a connection (its RetryHandler also resumes bodies with Range
 * requests and treats 3xx as errors, which a provider client does not want), so outboundFetch
 * sends an idempotent one once more.
 */
function isStaleConnectionFailure(error: unknown, answerStarted: boolean): boolean {
  if (answerStarted || !(error instanceof Error)) return false;
  const code = (error as NodeJS.ErrnoException).code;
  return code !== undefined && CONNECTION_CLOSED_CODES.has(code);
}

/** A refusal before any byte was sent: the URL or its addresses break the rules. */
export class OutboundRefusedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'OutboundRefusedError';
  }
}

function isLoopback(address: string): boolean {
  try {
    return isIP(address) !== 0 && ipaddr.process(address).range() === 'loopback';
  } catch {
    return false;
  }
}

/** Why `url` may not be called, or null when it may. */
export function outboundUrlProblem(url: URL, allowLoopbackHttp: boolean): string | null {
  const loopbackHost = ['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname);
  if (url.username || url.password) return 'the URL must not carry credentials';
  if (url.protocol === 'http:' && allowLoopbackHttp && loopbackHost) return null;
  if (url.protocol !== 'https:') return 'the URL must use https';
  if (allowLoopbackHttp && loopbackHost) return null;
  // The webhook URL rules (decisions.md): a DNS name that is not local, internal or metadata.
  const check = checkWebhookUrl(url.toString());
  return check.ok ? null : check.reason.replace(/^webhook URL /, 'the URL ');
}

export function createOutboundFetch(options: OutboundOptions): OutboundFetch {
  type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;
  // The connection's own lookup: resolve, refuse if any address is not public, dial the first.
  const checkedLookup = (hostname: string, lookupOptions: LookupOneOptions | LookupAllOptions, callback: LookupCallback) => {
    dnsLookup(hostname, { all: true }, (error, addresses) => {
      if (error) return callback(error, []);
      const list = addresses;
      const refused = list.find((a) => isForbiddenAddress(a.address) && !(options.allowLoopbackHttp && isLoopback(a.address)));
      if (refused || list.length === 0) {
        const refusal: NodeJS.ErrnoException = new OutboundRefusedError(`${hostname} resolves to a non-public address`);
        refusal.code = 'EREFUSED_ADDRESS';
        return callback(refusal, []);
      }
      if ('all' in lookupOptions && lookupOptions.all) return callback(null, list);
      const first = list[0]!;
      return callback(null, first.address, first.family);
    });
  };
  const agent = new Agent({
    connect: { lookup: checkedLookup, timeout: options.timeoutMs },
    headersTimeout: options.timeoutMs,
    bodyTimeout: options.timeoutMs,
  });

  return async function outboundFetch(input, init = {}) {
    const url = new URL(String(input));
    const problem = outboundUrlProblem(url, options.allowLoopbackHttp);
    if (problem) throw new OutboundRefusedError(`refused ${url.origin}: ${problem}`);
    // A literal IP is not looked up: check it here.
    const literal = url.hostname.replace(/^\[|\]$/g, '');
    if (isIP(literal) && isForbiddenAddress(literal) && !(options.allowLoopbackHttp && isLoopback(literal))) {
      throw new OutboundRefusedError(`refused ${url.origin}: not a public address`);
    }
    const deadline = AbortSignal.timeout(options.timeoutMs);
    const signal = init.signal ? AbortSignal.any([init.signal, deadline]) : deadline;
    const headers: Record<string, string> = {};
    new Headers(init.headers).forEach((value, name) => {
      headers[name] = value;
    });
    const { data, type } = bodyOf(init.body);
    if (data !== undefined && type && headers['content-type'] === undefined) headers['content-type'] = type;
    const method = (init.method ?? 'GET').toUpperCase();
    // Never followed (redirect: manual): a 3xx is handed back as it is.
    let answerStarted = false;
    const send = () => {
      answerStarted = false;
      return collect(agent, { url, method, headers, body: data, signal, maxBytes: MAX_ANSWER_BYTES, onStatus: () => (answerStarted = true) });
    };
    let answer: CollectedResponse;
    try {
      answer = await send();
    } catch (error) {
      if (!IDEMPOTENT_METHODS.has(method) || !isStaleConnectionFailure(error, answerStarted)) throw error;
      // Once more, on a new connection (undici drops the one that failed), under the same deadline
      // (a deadline already past fails it at once); a second failure is the answer.
      answer = await send();
    }
    if (answer.truncated) throw new Error(`${url.origin} answered more than ${MAX_ANSWER_BYTES} bytes`);
    // Response refuses any body, even an empty one, with the null-body statuses (205 included).
    return new Response([204, 205, 304].includes(answer.status) ? null : new Uint8Array(answer.body), {
      status: answer.status,
      statusText: answer.statusText,
      headers: answer.headers,
    });
  };
}
