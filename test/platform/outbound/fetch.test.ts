// The outbound fetch every provider client uses: the webhook address rules and a deadline.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { OutboundRefusedError, createOutboundFetch, outboundUrlProblem } from '../../../src/platform/outbound/fetch.js';

let server: Server;
let base: string;

before(async () => {
  server = createServer((request, response) => {
    if (request.url === '/hang') return; // never answers
    if (request.url === '/redirect') {
      response.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data' }).end();
      return;
    }
    if (request.url === '/205') {
      response.writeHead(205).end();
      return;
    }
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ ok: true }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => {
  server.closeAllConnections();
  server.close();
});

test('outside tests only https to public addresses is called', async () => {
  const strict = createOutboundFetch({ timeoutMs: 1000, allowLoopbackHttp: false });
  await assert.rejects(strict(`${base}/`), OutboundRefusedError, 'plain http');
  await assert.rejects(strict('https://127.0.0.1:9443/'), /not an IP address/, 'a literal loopback address');
  await assert.rejects(strict('https://[::1]:9443/'), /not an IP address/, 'IPv6 loopback');
  await assert.rejects(strict('https://10.1.2.3/'), /not an IP address/, 'a private address');
  await assert.rejects(strict('https://metadata.google.internal/'), /local, internal or metadata/, 'an internal name');
  await assert.rejects(strict('https://localhost:9443/'), /fully qualified|local, internal/, 'localhost');
  // A public-looking name is checked by the connection's own lookup, when it dials.
  await assert.rejects(strict('https://localtest.me:9443/'), (error: Error) => /non-public address|ENOTFOUND|EAI_AGAIN/.test(`${error.message} ${String((error.cause as Error | undefined)?.message)} ${String((error as NodeJS.ErrnoException).code)}`), 'a name that resolves to loopback (or cannot be resolved here)');
  assert.equal(outboundUrlProblem(new URL('https://user:pw@calendar.example.com/'), false), 'the URL must not carry credentials');
  assert.equal(outboundUrlProblem(new URL('ftp://calendar.example.com/'), true), 'the URL must use https');
  assert.equal(outboundUrlProblem(new URL('http://calendar.example.com/'), true), 'the URL must use https', 'tests allow http on loopback only');
});

test('in tests, http on loopback answers; redirects are handed back, never followed', async () => {
  const local = createOutboundFetch({ timeoutMs: 2000, allowLoopbackHttp: true });
  const ok = await local(`${base}/`);
  assert.equal(ok.status, 200);
  assert.deepEqual(await ok.json(), { ok: true });
  const redirect = await local(`${base}/redirect`);
  assert.equal(redirect.status, 302);
  assert.equal((await local(`${base}/205`)).status, 205, 'a null-body status is not an error');
});

test('a server that never answers costs one deadline, not a hang', async () => {
  const local = createOutboundFetch({ timeoutMs: 200, allowLoopbackHttp: true });
  await assert.rejects(local(`${base}/hang`), (error: Error) => /abort|timeout/i.test(`${error.name} ${error.message}`));
});

test('a large answer on a connection the server closes at once is read whole, and the process lives (nodejs/undici#5360)', async () => {
  const { createServer: createTcpServer } = await import('node:net');
  const body = Buffer.alloc(512 * 1024, 0x61);
  const raw = createTcpServer((socket) => {
    socket.once('data', () => {
      socket.write(`HTTP/1.1 200 OK\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n`);
      socket.write(body);
      socket.end();
    });
  });
  await new Promise<void>((resolve) => raw.listen(0, '127.0.0.1', resolve));
  try {
    const local = createOutboundFetch({ timeoutMs: 5000, allowLoopbackHttp: true });
    const url = `http://127.0.0.1:${(raw.address() as AddressInfo).port}/`;
    for (let i = 0; i < 5; i++) {
      const response = await local(url);
      assert.equal((await response.arrayBuffer()).byteLength, body.length);
    }
  } finally {
    raw.close();
  }
});
