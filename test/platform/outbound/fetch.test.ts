// The outbound fetch every provider client uses: the webhook address rules and a deadline.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
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

interface SeenRequest {
  /** 1 for the first request the server saw, 2 for the next, on any connection. */
  index: number;
  connection: number;
  method: string;
}

/**
 * A raw HTTP/1.1 server that answers with keep-alive, and resets the connection (TCP RST) of the
 * requests `resetWhen` picks: what a client meets when it sends on a kept-alive connection the
 * server is dropping (its idle timeout), or when a server restarts.
 */
async function resettingServer(resetWhen: (seen: SeenRequest) => 'reset' | 'reset-mid-body' | 'hang' | 'answer') {
  const { createServer: createTcpServer } = await import('node:net');
  const requests: SeenRequest[] = [];
  let connections = 0;
  const raw = createTcpServer((socket) => {
    const connection = ++connections;
    let pending = '';
    socket.on('error', () => {});
    socket.on('data', (chunk) => {
      pending += chunk.toString('latin1');
      // Requests here carry no body, or a Content-Length one: split on the header end and length.
      for (;;) {
        const headerEnd = pending.indexOf('\r\n\r\n');
        if (headerEnd < 0) return;
        const length = Number(/content-length: *(\d+)/i.exec(pending.slice(0, headerEnd))?.[1] ?? 0);
        if (pending.length < headerEnd + 4 + length) return;
        const method = pending.slice(0, pending.indexOf(' '));
        pending = pending.slice(headerEnd + 4 + length);
        const seen = { index: requests.length + 1, connection, method };
        requests.push(seen);
        const what = resetWhen(seen);
        if (what === 'reset') return void socket.resetAndDestroy();
        if (what === 'hang') return;
        if (what === 'reset-mid-body') {
          socket.write('HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nhalf');
          setTimeout(() => socket.resetAndDestroy(), 20);
          return;
        }
        socket.write('HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 11\r\nKeep-Alive: timeout=30\r\n\r\n{"ok":true}');
      }
    });
  });
  await new Promise<void>((resolve) => raw.listen(0, '127.0.0.1', resolve));
  const sockets = new Set<Socket>();
  raw.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  const close = () => {
    for (const socket of sockets) socket.destroy();
    raw.close();
  };
  return { url: `http://127.0.0.1:${(raw.address() as AddressInfo).port}/`, requests, close };
}

test('an idempotent request whose connection is reset before any answer is sent once more, on another connection', async () => {
  // The second request the server sees meets a reset; every other one is answered.
  const server = await resettingServer(({ index }) => (index === 2 ? 'reset' : 'answer'));
  try {
    const local = createOutboundFetch({ timeoutMs: 5000, allowLoopbackHttp: true });
    assert.equal((await local(server.url)).status, 200);
    const again = await local(server.url, { method: 'PUT', body: '{}' });
    assert.equal(again.status, 200);
    assert.deepEqual(await again.json(), { ok: true });
    assert.deepEqual(server.requests.map(({ method }) => method), ['GET', 'PUT', 'PUT']);
    assert.notEqual(server.requests[2]!.connection, server.requests[1]!.connection, 'the reset connection is not used again');
  } finally {
    server.close();
  }
});

test('a POST or PATCH on a reset connection is not sent again (it may have been done); a second reset is the answer', async () => {
  // GETs are answered, everything else is reset.
  const server = await resettingServer(({ method }) => (method === 'GET' ? 'answer' : 'reset'));
  try {
    const local = createOutboundFetch({ timeoutMs: 5000, allowLoopbackHttp: true });
    for (const method of ['POST', 'PATCH']) {
      assert.equal((await local(server.url)).status, 200);
      const before = server.requests.length;
      await assert.rejects(local(server.url, { method, body: '{}' }), (error: NodeJS.ErrnoException) => error.code === 'ECONNRESET');
      assert.equal(server.requests.length - before, 1, `${method} sent once`);
    }
  } finally {
    server.close();
  }
  // Every request is reset: one GET is sent twice, then fails.
  const always = await resettingServer(() => 'reset');
  try {
    const local = createOutboundFetch({ timeoutMs: 5000, allowLoopbackHttp: true });
    await assert.rejects(local(always.url), (error: NodeJS.ErrnoException) => error.code === 'ECONNRESET');
    assert.equal(always.requests.length, 2);
  } finally {
    always.close();
  }
});

test('a GET reset after its answer began is not sent again (the answer is broken, not lost)', async () => {
  const server = await resettingServer(() => 'reset-mid-body');
  try {
    const local = createOutboundFetch({ timeoutMs: 5000, allowLoopbackHttp: true });
    await assert.rejects(local(server.url));
    assert.equal(server.requests.length, 1);
  } finally {
    server.close();
  }
});

test('a request sent again after a reset is still bound by the one deadline: a server that then hangs costs that deadline', async () => {
  const server = await resettingServer(({ index }) => (index === 1 ? 'reset' : 'hang'));
  try {
    const local = createOutboundFetch({ timeoutMs: 300, allowLoopbackHttp: true });
    await assert.rejects(local(server.url), (error: Error) => /abort|timeout/i.test(`${error.name} ${error.message}`));
    assert.equal(server.requests.length, 2);
  } finally {
    server.close();
  }
});
