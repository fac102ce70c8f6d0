/**
 * One HTTP exchange whose whole answer is collected without backpressure.
 *
 * Why not undici's `fetch` or `request`: when a response body is read more slowly than it arrives,
 * undici 7 pauses its HTTP/1 parser, and if the server then closes the connection (a
 * `Connection: close` answer, which CalDAV servers and webhook receivers send) the parser's
 * `finish()` asserts `!paused` from a socket event handler: an uncatchable AssertionError that ends
 * the process (nodejs/undici#5360, fixed only in undici 8, which needs Node 22). A handler that
 * never pauses keeps the parser running: bytes past `maxBytes` are counted and dropped, never
 * held back, so a large or endless answer costs memory up to `maxBytes` and its deadline, and
 * nothing else.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Dispatcher } from 'undici';

export interface CollectRequest {
  url: URL;
  method: string;
  headers: Record<string, string>;
  body?: string | Buffer | undefined;
  signal: AbortSignal;
  /** Bytes kept of the answer's body; the rest is read and dropped. */
  maxBytes: number;
  /** Told the status as soon as the headers arrive (a record of a body that then fails keeps it). */
  onStatus?: (status: number) => void;
}

export interface CollectedResponse {
  status: number;
  statusText: string;
  headers: Headers;
  body: Buffer;
  /** True when the body was longer than maxBytes (and `body` holds only its start). */
  truncated: boolean;
}

function toHeaders(raw: IncomingHttpHeaders): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(raw)) {
    if (value === undefined) continue;
    for (const item of Array.isArray(value) ? value : [value]) headers.append(name, item);
  }
  return headers;
}

export function collect(dispatcher: Dispatcher, request: CollectRequest): Promise<CollectedResponse> {
  return new Promise<CollectedResponse>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let kept = 0;
    let truncated = false;
    let status = 0;
    let statusText = '';
    let headers = new Headers();
    let settled = false;
    let controllerRef: Dispatcher.DispatchController | undefined;
    const fail = (error: Error) => {
      if (settled) return;
      settled = true;
      request.signal.removeEventListener('abort', onAbort);
      reject(error);
    };
    const onAbort = () => {
      const reason = request.signal.reason instanceof Error ? request.signal.reason : new Error('The operation was aborted');
      controllerRef?.abort(reason);
      fail(reason);
    };
    if (request.signal.aborted) return onAbort();
    request.signal.addEventListener('abort', onAbort, { once: true });

    const handler: Dispatcher.DispatchHandler = {
      onRequestStart(controller) {
        controllerRef = controller;
      },
      onResponseStart(_controller, statusCode, rawHeaders, statusMessage) {
        status = statusCode;
        statusText = statusMessage ?? '';
        headers = toHeaders(rawHeaders);
        request.onStatus?.(statusCode);
      },
      onResponseData(_controller, chunk) {
        // Never pause (see above): keep up to maxBytes, drop the rest.
        if (kept >= request.maxBytes) {
          truncated = true;
          return;
        }
        const room = request.maxBytes - kept;
        if (chunk.length > room) truncated = true;
        const piece = chunk.length > room ? chunk.subarray(0, room) : chunk;
        chunks.push(piece);
        kept += piece.length;
      },
      onResponseEnd() {
        if (settled) return;
        settled = true;
        request.signal.removeEventListener('abort', onAbort);
        resolve({ status, statusText, headers, body: Buffer.concat(chunks), truncated });
      },
      onResponseError(_controller, error) {
        fail(error);
      },
    };
    try {
      dispatcher.dispatch(
        {
          origin: request.url.origin,
          path: `${request.url.pathname}${request.url.search}`,
          method: request.method as Dispatcher.HttpMethod,
          headers: request.headers,
          body: request.body ?? null,
        },
        handler,
      );
    } catch (error) {
      fail(error instanceof Error ? error : new Error(String(error)));
    }
  });
}
