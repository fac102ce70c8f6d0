import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:https';
import type { Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { DEFAULT_TIMEOUT_MS, deliverWebhook } from '../../../src/modules/webhooks/delivery-client.js';
import type { DeliveryOptions, WebhookTestAllowance } from '../../../src/modules/webhooks/delivery-client.js';

// A real HTTPS receiver on 127.0.0.1 with the checked-in self-signed certificate, valid for
// webhook-receiver.example.com, localhost and 127.0.0.1 (see test/fixtures/webhooks/README.md).
// Deliveries name it webhook-receiver.example.com and inject a resolver answering 127.0.0.1, so the
// production URL rules apply unchanged and TLS is verified against that name.

const fixtures = new URL('../../fixtures/webhooks/', import.meta.url);
const cert = readFileSync(new URL('receiver-cert.pem', fixtures), 'utf8');
const key = readFileSync(new URL('receiver-key.pem', fixtures), 'utf8');
const HOST = 'webhook-receiver.example.com';
const allowance: WebhookTestAllowance = { allowLoopback: true, ca: cert };

interface Hit {
  method: string;
  url: string;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

let server: Server;
let port = 0;
let hits: Hit[] = [];
let connections = 0;

const hitsTo = (path: string) => hits.filter((h) => h.url.split('?')[0] === path).length;
const resolveTo =
  (...addresses: string[]) =>
  async (): Promise<string[]> =>
    addresses;
const url = (path: string, host = HOST) => `https://${host}:${port}${path}`;
const deliver = (path: string, extra: Partial<DeliveryOptions> = {}) =>
  deliverWebhook({
    url: url(path),
    headers: {},
    body: { trigger: 'CREATE', appointment: { id: 'a1' } },
    resolve: resolveTo('127.0.0.1'),
    testAllowance: allowance,
    timeoutMs: 2000,
    ...extra,
  });

before(async () => {
  server = createServer({ key, cert }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      hits.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      const path = (req.url ?? '').split('?')[0];
      switch (path) {
        case '/hook':
          res.writeHead(200, { 'content-type': 'text/plain' }).end('thanks');
          return;
        case '/accepted':
          res.writeHead(202).end();
          return;
        case '/hang':
          return; // never answers
        case '/slow-body':
          res.writeHead(200, { 'content-type': 'text/plain' });
          res.write('partial'); // headers arrive, the body never ends
          return;
        case '/redirect':
          res.writeHead(302, { location: '/target' }).end();
          return;
        case '/redirect-metadata':
          res.writeHead(307, { location: 'https://169.254.169.254/latest/meta-data/' }).end();
          return;
        case '/target':
          res.writeHead(200).end();
          return;
        case '/fail':
          res.writeHead(500).end('boom');
          return;
        case '/reset':
          req.socket.destroy();
          return;
        default:
          res.writeHead(404).end();
      }
    });
  });
  server.on('connection', () => {
    connections += 1;
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});

after(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

describe('deliverWebhook to a real HTTPS receiver', () => {
  test('POSTs the JSON body with Content-Type application/json and the configured headers', async () => {
    hits = [];
    const body = { trigger: 'CREATE', appointment: { id: 'a1', resources: [{ id: 'r1' }, { id: 'r2' }], note: 'caf\u00e9 \u2615' } };
    const outcome = await deliver('/hook?x=1&y=2', { headers: { Authorization: 'Bearer s3cret', 'X-Slotwise-Test': 'yes' }, body });
    assert.deepEqual({ ...outcome, durationMs: 0 }, { ok: true, status: 200, error: null, durationMs: 0, address: '127.0.0.1' });
    assert.equal(hits.length, 1);
    const hit = hits[0]!;
    assert.equal(hit.method, 'POST');
    assert.equal(hit.url, '/hook?x=1&y=2');
    assert.equal(hit.headers['content-type'], 'application/json');
    assert.equal(hit.headers['authorization'], 'Bearer s3cret');
    assert.equal(hit.headers['x-slotwise-test'], 'yes');
    assert.equal(hit.headers['host'], `${HOST}:${port}`);
    assert.match(String(hit.headers['user-agent']), /Slotwise-Webhooks/);
    assert.equal(hit.headers['content-length'], String(Buffer.byteLength(hit.body)));
    assert.deepEqual(JSON.parse(hit.body), body);
  });

  test('any 2xx is a success', async () => {
    const outcome = await deliver('/accepted');
    assert.equal(outcome.ok, true);
    assert.equal(outcome.status, 202);
  });

  test('a receiver that never answers fails at the deadline, quickly', async () => {
    hits = [];
    const started = Date.now();
    const outcome = await deliver('/hang', { timeoutMs: 300 });
    const elapsed = Date.now() - started;
    assert.equal(outcome.ok, false);
    assert.equal(outcome.status, null);
    assert.match(outcome.error ?? '', /^timeout: .*300 ms/);
    assert.ok(elapsed >= 250 && elapsed < 2000, `took ${elapsed} ms`);
    assert.ok(outcome.durationMs >= 250 && outcome.durationMs < 2000, `durationMs ${outcome.durationMs}`);
    assert.equal(hitsTo('/hang'), 1);
  });

  test('the deadline covers the response body too', async () => {
    const started = Date.now();
    const outcome = await deliver('/slow-body', { timeoutMs: 300 });
    assert.equal(outcome.ok, false);
    assert.equal(outcome.status, 200);
    assert.match(outcome.error ?? '', /^timeout: .*response body/);
    assert.ok(Date.now() - started < 2000);
  });

  test('without timeoutMs the deadline is the default five seconds', async () => {
    // Not waited out (tests stay fast): the constant is the default, and a prompt receiver succeeds under it.
    assert.equal(DEFAULT_TIMEOUT_MS, 5000);
    const outcome = await deliver('/hook', { timeoutMs: undefined });
    assert.equal(outcome.ok, true);
  });

  test('a resolver slower than the deadline is a timeout, without connecting', async () => {
    const before = connections;
    const outcome = await deliver('/hook', { timeoutMs: 200, resolve: () => sleep(1000).then(() => ['127.0.0.1']) });
    assert.equal(outcome.ok, false);
    assert.match(outcome.error ?? '', /^timeout/);
    assert.equal(outcome.address, null);
    assert.equal(connections, before);
  });

  test('a redirect is not followed: recorded as a failure and the target is never requested', async () => {
    hits = [];
    const outcome = await deliver('/redirect');
    assert.equal(outcome.ok, false);
    assert.equal(outcome.status, 302);
    assert.equal(outcome.error, 'redirect: 302 not followed');
    await sleep(100);
    assert.equal(hitsTo('/redirect'), 1);
    assert.equal(hitsTo('/target'), 0);
  });

  test('a redirect to the metadata address is not followed either', async () => {
    hits = [];
    const outcome = await deliver('/redirect-metadata');
    assert.equal(outcome.ok, false);
    assert.equal(outcome.status, 307);
    assert.match(outcome.error ?? '', /^redirect/);
    assert.equal(hits.length, 1);
  });

  test('a 500 is a failure and is not retried', async () => {
    hits = [];
    const outcome = await deliver('/fail');
    assert.deepEqual({ ...outcome, durationMs: 0 }, { ok: false, status: 500, error: 'http: status 500', durationMs: 0, address: '127.0.0.1' });
    await sleep(200);
    assert.equal(hitsTo('/fail'), 1);
  });

  test('a connection dropped before the answer is a failure and is not retried', async () => {
    hits = [];
    const outcome = await deliver('/reset');
    assert.equal(outcome.ok, false);
    assert.equal(outcome.status, null);
    assert.match(outcome.error ?? '', /^network: /);
    await sleep(200);
    assert.equal(hitsTo('/reset'), 1);
  });

  test('the name is resolved once and the connection pinned to the checked address (DNS rebinding)', async () => {
    hits = [];
    const answers = [['127.0.0.1'], ['10.0.0.1'], ['169.254.169.254']];
    let calls = 0;
    const outcome = await deliver('/hook', { resolve: async () => answers[calls++] ?? ['10.0.0.1'] });
    assert.equal(outcome.ok, true);
    assert.equal(outcome.address, '127.0.0.1');
    assert.equal(calls, 1);
    assert.equal(hitsTo('/hook'), 1);
  });

  test('the certificate is verified against the hostname, not the pinned address', async () => {
    hits = [];
    const outcome = await deliverWebhook({ url: url('/hook', 'other-name.example.net'), headers: {}, body: {}, resolve: resolveTo('127.0.0.1'), testAllowance: allowance });
    assert.equal(outcome.ok, false);
    assert.equal(outcome.status, null);
    assert.match(outcome.error ?? '', /^tls: /);
    assert.equal(hits.length, 0);
  });

  test('a certificate not signed by the trusted CA is refused', async () => {
    hits = [];
    const other = { allowLoopback: true as const, ca: readFileSync(new URL('other-ca-cert.pem', fixtures), 'utf8') };
    const outcome = await deliver('/hook', { testAllowance: other });
    assert.equal(outcome.ok, false);
    assert.match(outcome.error ?? '', /^tls: /);
    assert.equal(hits.length, 0);
  });
});

describe('deliverWebhook refuses hostile destinations without connecting', () => {
  const privateAnswers: ReadonlyArray<readonly [string, string[], boolean]> = [
    // [what, resolver answer, with the test allowance]
    ['10.0.0.1', ['10.0.0.1'], true],
    ['192.168.1.10', ['192.168.1.10'], true],
    ['172.16.5.4', ['172.16.5.4'], true],
    ['127.0.0.1 without the allowance', ['127.0.0.1'], false],
    ['::1 without the allowance', ['::1'], false],
    ['::ffff:127.0.0.1 (mapped loopback is never allowed)', ['::ffff:127.0.0.1'], true],
    ['::ffff:10.0.0.1', ['::ffff:10.0.0.1'], true],
    ['169.254.169.254', ['169.254.169.254'], true],
    ['fd00:ec2::254', ['fd00:ec2::254'], true],
    ['100.100.100.200', ['100.100.100.200'], true],
    ['100.64.0.1 (carrier-grade NAT)', ['100.64.0.1'], true],
    ['0.0.0.0', ['0.0.0.0'], true],
    ['::', ['::'], true],
    ['fe80::1', ['fe80::1'], true],
    ['one private address among public ones', ['8.8.8.8', '10.0.0.1'], true],
    ['a private address after the loopback one', ['127.0.0.1', '192.168.0.1'], true],
    ['a non-address', ['not-an-ip'], true],
  ];
  for (const [what, answer, withAllowance] of privateAnswers) {
    test(`a name resolving to ${what} is refused`, async () => {
      const before = connections;
      const outcome = await deliver('/hook', { resolve: resolveTo(...answer), testAllowance: withAllowance ? allowance : undefined });
      assert.equal(outcome.ok, false);
      assert.equal(outcome.status, null);
      // Issue 12: the record names no internal address.
      assert.equal(outcome.error, 'refused: webhook-receiver.example.com resolves to a non-public address');
      for (const address of answer) assert.equal((outcome.error ?? '').includes(String(address)), false);
      assert.equal(outcome.address, null);
      assert.equal(connections, before, 'no connection was made');
    });
  }

  test('a name with no addresses, or a failing resolver, is a DNS failure', async () => {
    const empty = await deliver('/hook', { resolve: resolveTo() });
    assert.match(empty.error ?? '', /^dns: /);
    const failing = await deliver('/hook', {
      resolve: async () => {
        throw Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' });
      },
    });
    assert.deepEqual({ ...failing, durationMs: 0 }, { ok: false, status: null, error: 'dns: ENOTFOUND', durationMs: 0, address: null });
  });

  const hostileUrls = [
    `http://${HOST}/hook`,
    'https://127.0.0.1/hook',
    'https://2130706433/hook',
    'https://[::1]/hook',
    'https://[::ffff:127.0.0.1]/hook',
    'https://localhost/hook',
    'https://metadata.google.internal/computeMetadata/v1/',
    'https://169.254.169.254/latest/meta-data/',
    'https://user:pass@example.com/hook',
    'https://example.com/hook#x',
  ];
  for (const hostile of hostileUrls) {
    test(`the URL rules apply at delivery time too: ${hostile}`, async () => {
      let resolved = false;
      const before = connections;
      const outcome = await deliverWebhook({
        url: hostile,
        headers: {},
        body: {},
        testAllowance: allowance,
        resolve: async () => {
          resolved = true;
          return ['127.0.0.1'];
        },
      });
      assert.equal(outcome.ok, false);
      assert.match(outcome.error ?? '', /^refused: webhook URL /);
      assert.equal(resolved, false);
      assert.equal(connections, before);
    });
  }

  test('localhost through the real resolver is refused by the URL rule, even with the allowance', async () => {
    const before = connections;
    const outcome = await deliverWebhook({ url: `https://localhost:${port}/hook`, headers: {}, body: {}, testAllowance: allowance });
    assert.equal(outcome.ok, false);
    assert.match(outcome.error ?? '', /^refused: /);
    assert.equal(connections, before);
  });

  test('without the test allowance, the loopback receiver is refused', async () => {
    const before = connections;
    const outcome = await deliver('/hook', { testAllowance: undefined });
    assert.equal(outcome.ok, false);
    assert.match(outcome.error ?? '', /resolves to a non-public address$/);
    assert.equal((outcome.error ?? '').includes('127.0.0.1'), false);
    assert.equal(connections, before);
  });

  test('the test allowance is refused unless NODE_ENV is test', async () => {
    const saved = process.env.NODE_ENV;
    const before = connections;
    try {
      for (const env of ['production', 'development', '', undefined]) {
        if (env === undefined) delete process.env.NODE_ENV;
        else process.env.NODE_ENV = env;
        const outcome = await deliver('/hook');
        assert.equal(outcome.ok, false);
        assert.match(outcome.error ?? '', /^refused: the test allowance/);
      }
    } finally {
      process.env.NODE_ENV = saved;
    }
    assert.equal(connections, before);
  });

  test('configured headers are checked again: content-type and host cannot be overridden', async () => {
    const before = connections;
    const attempts: Record<string, string>[] = [{ 'Content-Type': 'text/plain' }, { Host: 'metadata.google.internal' }, { 'X-Bad': 'a\r\nHost: x' }];
    for (const headers of attempts) {
      const outcome = await deliver('/hook', { headers });
      assert.equal(outcome.ok, false);
      assert.match(outcome.error ?? '', /^refused: header /);
    }
    assert.equal(connections, before);
  });

  test('a body that is not JSON is refused, and deliverWebhook never throws', async () => {
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    for (const body of [circular, 10n, undefined, () => 1]) {
      const outcome = await deliver('/hook', { body });
      assert.equal(outcome.ok, false);
      assert.match(outcome.error ?? '', /^refused: the body/);
    }
    const weird = await deliverWebhook({ url: 42 as unknown as string, headers: null as unknown as Record<string, string>, body: {} });
    assert.equal(weird.ok, false);
  });
});
