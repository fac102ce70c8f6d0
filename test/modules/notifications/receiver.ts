// A real HTTPS webhook receiver on 127.0.0.1 with the checked-in self-signed certificate (valid for
// webhook-receiver.example.com, localhost and 127.0.0.1; see test/fixtures/webhooks/README.md).
//
// The application reaches it through its test-only allowance: WEBHOOK_TEST_CA_FILE trusts the
// certificate and WEBHOOK_TEST_HOSTS resolves webhook-receiver.example.com to 127.0.0.1, so webhook
// URLs name https://webhook-receiver.example.com:<port>/... and pass the production URL rules, and
// TLS is verified against that name.
//
// What a path answers:
//   /hang...      never answers (the connection stays open until the receiver closes)
//   /redirect...  302 with Location: /other
//   /fail...      500
//   /slow...      200 after `slowMs` (default 150 ms)
//   anything else 200 "ok"
import { readFileSync } from 'node:fs';
import { createServer } from 'node:https';
import type { IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';

export const RECEIVER_HOST = 'webhook-receiver.example.com';
export const CA_FILE = fileURLToPath(new URL('../../fixtures/webhooks/receiver-cert.pem', import.meta.url));
const KEY_FILE = fileURLToPath(new URL('../../fixtures/webhooks/receiver-key.pem', import.meta.url));

/** The environment that lets the application deliver to this receiver (test configuration only). */
export const WEBHOOK_TEST_ENV = { WEBHOOK_TEST_CA_FILE: CA_FILE, WEBHOOK_TEST_HOSTS: `${RECEIVER_HOST}=127.0.0.1` };

export interface Hit {
  method: string;
  /** Path and query as requested. */
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** The body parsed as JSON (null when it is not JSON). */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- checked field by field
  json: any;
}

export interface Receiver {
  port: number;
  /** https://webhook-receiver.example.com:<port><path> */
  url(path: string): string;
  hits: Hit[];
  /** Hits whose path and query are exactly those of `url` (a full URL or a path with its query). */
  hitsTo(url: string): Hit[];
  /** Hits whose path (query ignored) is `path`. */
  hitsToPath(path: string): Hit[];
  /** Resolves once `predicate` holds for the hits; rejects after `timeoutMs`. */
  waitFor(predicate: (hits: Hit[]) => boolean, timeoutMs: number, what: string): Promise<void>;
  slowMs: number;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const hits: Hit[] = [];
  const receiver = {} as Receiver;
  receiver.slowMs = 150;
  const server = createServer({ key: readFileSync(KEY_FILE), cert: readFileSync(CA_FILE) }, (request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let parsed: unknown;
      try {
        parsed = JSON.parse(body);
      } catch {
        parsed = null;
      }
      hits.push({ method: request.method ?? '', url: request.url ?? '', headers: request.headers, body, json: parsed });
      const path = (request.url ?? '').split('?')[0] ?? '';
      if (path.startsWith('/hang')) return; // never answers
      if (path.startsWith('/redirect')) return void response.writeHead(302, { location: '/other' }).end();
      if (path.startsWith('/fail')) return void response.writeHead(500, { 'content-type': 'text/plain' }).end('boom');
      if (path.startsWith('/slow')) {
        setTimeout(() => response.writeHead(200, { 'content-type': 'text/plain' }).end('ok'), receiver.slowMs);
        return;
      }
      response.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  Object.assign(receiver, {
    port,
    hits,
    url: (path: string) => `https://${RECEIVER_HOST}:${port}${path}`,
    hitsTo: (url: string) => {
      const target = url.startsWith('https://') ? `${new URL(url).pathname}${new URL(url).search}` : url;
      return hits.filter((hit) => hit.url === target);
    },
    hitsToPath: (path: string) => hits.filter((hit) => hit.url.split('?')[0] === path),
    async waitFor(predicate: (all: Hit[]) => boolean, timeoutMs: number, what: string) {
      const deadline = Date.now() + timeoutMs;
      while (!predicate(hits)) {
        if (Date.now() > deadline) throw new Error(`receiver: ${what} not seen within ${timeoutMs} ms (${hits.length} hits)`);
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  });
  return receiver;
}

/** A port on 127.0.0.1 that nothing listens on (a dead receiver: connections are refused). */
export async function deadPort(): Promise<number> {
  const { createServer: createNetServer } = await import('node:net');
  return new Promise((resolve, reject) => {
    const server = createNetServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as AddressInfo).port;
      server.close(() => resolve(port));
    });
  });
}
