import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { checkWebhookHeaders, checkWebhookUrl, isForbiddenAddress } from '../../../src/modules/webhooks/destination.js';

// Every one of these must be refused when a webhook is created or replaced.
const HOSTILE_URLS: ReadonlyArray<readonly [string, string]> = [
  // scheme, credentials, fragment
  ['plain http', 'http://example.com/hook'],
  ['ftp', 'ftp://example.com/hook'],
  ['javascript', 'javascript:alert(1)'],
  ['scheme-relative', '//example.com/hook'],
  ['username and password', 'https://user:pass@example.com/hook'],
  ['username only', 'https://user@example.com/hook'],
  ['empty credentials', 'https://:@example.com/hook'],
  ['credentials hiding an IP', 'https://example.com@127.0.0.1/hook'],
  ['fragment', 'https://example.com/hook#frag'],
  ['empty fragment', 'https://example.com/hook#'],
  ['backslash authority trick', 'https://example.com\\@127.0.0.1/'],
  ['embedded newline', 'https://exam\nple.com/hook'],
  ['leading space', ' https://example.com/hook'],
  // IPv4 literals in every spelling
  ['dotted loopback', 'https://127.0.0.1/hook'],
  ['decimal loopback', 'https://2130706433/hook'],
  ['octal loopback', 'https://0177.0.0.1/hook'],
  ['hex loopback', 'https://0x7f.0.0.1/hook'],
  ['single hex loopback', 'https://0x7f000001/hook'],
  ['short loopback', 'https://127.1/hook'],
  ['short hex loopback', 'https://0x7f.1/hook'],
  ['zero-padded loopback', 'https://127.000.000.001/hook'],
  ['percent-encoded loopback', 'https://%31%32%37.0.0.1/hook'],
  ['full-width digit loopback', 'https://\uff11\uff12\uff17.\uff10.\uff10.\uff11/hook'],
  ['loopback with trailing dot', 'https://127.0.0.1./hook'],
  ['0.0.0.0', 'https://0.0.0.0/hook'],
  ['bare 0', 'https://0/hook'],
  ['private 10/8', 'https://10.0.0.1/hook'],
  ['private 192.168/16', 'https://192.168.1.1/hook'],
  ['cloud metadata IP', 'https://169.254.169.254/latest/meta-data/'],
  ['cloud metadata IP in decimal', 'https://2852039166/latest/meta-data/'],
  ['Alibaba metadata IP', 'https://100.100.100.200/latest/meta-data/'],
  ['public IPv4 literal', 'https://93.184.215.14/hook'],
  ['IPv4 literal with port', 'https://8.8.8.8:8443/hook'],
  // IPv6 literals
  ['IPv6 loopback', 'https://[::1]/hook'],
  ['IPv6 unspecified', 'https://[::]/hook'],
  ['IPv4-mapped loopback', 'https://[::ffff:127.0.0.1]/hook'],
  ['IPv4-mapped loopback, long form', 'https://[0:0:0:0:0:ffff:7f00:1]/hook'],
  ['IPv4-mapped metadata', 'https://[::ffff:169.254.169.254]/hook'],
  ['IPv4-compatible loopback', 'https://[::127.0.0.1]/hook'],
  ['NAT64 loopback', 'https://[64:ff9b::7f00:1]/hook'],
  ['6to4 loopback', 'https://[2002:7f00:1::]/hook'],
  ['IPv6 link-local', 'https://[fe80::1]/hook'],
  ['AWS IMDS IPv6', 'https://[fd00:ec2::254]/hook'],
  ['public IPv6 literal', 'https://[2606:4700:4700::1111]/hook'],
  // localhost and single labels
  ['localhost', 'https://localhost/hook'],
  ['LOCALHOST upper-case', 'https://LOCALHOST:8443/hook'],
  ['localhost with trailing dot', 'https://localhost./hook'],
  ['subdomain of localhost', 'https://api.localhost/hook'],
  ['single-label name', 'https://intranet/hook'],
  ['trailing dot FQDN', 'https://example.com./hook'],
  ['empty label', 'https://a..example.com/hook'],
  ['leading dot', 'https://.example.com/hook'],
  // metadata and internal names
  ['GCP metadata', 'https://metadata.google.internal/computeMetadata/v1/'],
  ['GCP metadata short name', 'https://metadata/computeMetadata/v1/'],
  ['GCP metadata.goog', 'https://metadata.goog/computeMetadata/v1/'],
  ['AWS instance-data', 'https://instance-data/latest/meta-data/'],
  ['AWS instance-data FQDN', 'https://instance-data.ec2.internal/latest/meta-data/'],
  ['Azure metadata name', 'https://metadata.azure.com/metadata/instance'],
  ['Tencent metadata name', 'https://metadata.tencentyun.com/latest/meta-data/'],
  ['any .internal', 'https://billing.corp.internal/hook'],
  ['mDNS .local', 'https://printer.local/hook'],
  ['Kubernetes cluster.local', 'https://api.default.svc.cluster.local/hook'],
  ['Kubernetes svc', 'https://kubernetes.default.svc/hook'],
  ['.localdomain', 'https://box.localdomain/hook'],
  ['.home.arpa', 'https://router.home.arpa/hook'],
  ['reverse DNS name', 'https://1.0.0.127.in-addr.arpa/hook'],
  ['.test TLD', 'https://hooks.example.test/hook'],
  ['numeric TLD', 'https://example.123/hook'],
  // malformed
  ['port 0', 'https://example.com:0/hook'],
  ['not a URL', 'not a url'],
  ['empty', ''],
  ['too long', `https://example.com/${'a'.repeat(2100)}`],
];

const ALLOWED_URLS = [
  'https://example.com/hook?x=1',
  'https://example.com',
  'https://hooks.example.com:8443/v1/events?token=abc&x=1',
  'https://api.xn--nxasmq6b.com/hook',
  'https://my_service.example.org/hook',
  'HTTPS://Example.COM/Hook',
];

describe('checkWebhookUrl: hostile destinations are refused at create/replace time', () => {
  test(`at least 30 hostile destinations in the table (${HOSTILE_URLS.length})`, () => {
    assert.ok(HOSTILE_URLS.length >= 30);
  });
  for (const [name, url] of HOSTILE_URLS) {
    test(`refuses ${name}: ${JSON.stringify(url.length > 80 ? `${url.slice(0, 77)}...` : url)}`, () => {
      const result = checkWebhookUrl(url);
      assert.equal(result.ok, false, `${url} was allowed`);
      if (!result.ok) assert.match(result.reason, /^webhook URL /);
    });
  }
});

describe('checkWebhookUrl: public https URLs are allowed', () => {
  for (const url of ALLOWED_URLS) {
    test(`allows ${url}`, () => {
      const result = checkWebhookUrl(url);
      assert.ok(result.ok, result.ok ? '' : result.reason);
      assert.equal(result.url.protocol, 'https:');
    });
  }
  test('the query string is kept', () => {
    const result = checkWebhookUrl('https://example.com/hook?x=1&y=two');
    assert.ok(result.ok);
    assert.equal(result.url.search, '?x=1&y=two');
  });
  test('reasons name the problem', () => {
    const reason = (url: string) => {
      const result = checkWebhookUrl(url);
      return result.ok ? '' : result.reason;
    };
    assert.match(reason('http://example.com/'), /https/);
    assert.match(reason('https://u:p@example.com/'), /username or password/);
    assert.match(reason('https://example.com/#x'), /fragment/);
    assert.match(reason('https://2130706433/'), /not an IP address/);
    assert.match(reason('https://[::1]/'), /not an IP address/);
    assert.match(reason('https://metadata.google.internal/'), /metadata/);
    assert.match(reason('https://intranet/'), /fully qualified/);
  });
});

describe('isForbiddenAddress', () => {
  const forbidden = [
    '127.0.0.1',
    '127.255.255.254',
    '10.0.0.1',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.0.1',
    '169.254.169.254',
    '169.254.170.2',
    '100.64.0.1',
    '100.100.100.200',
    '168.63.129.16',
    '0.0.0.0',
    '0.1.2.3',
    '255.255.255.255',
    '224.0.0.1',
    '240.0.0.1',
    '192.0.0.8',
    '192.0.2.1',
    '198.18.0.1',
    '198.51.100.7',
    '203.0.113.9',
    '::1',
    '::',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '::ffff:10.0.0.1',
    '::ffff:169.254.169.254',
    '::ffff:8.8.8.8',
    '::127.0.0.1',
    'fe80::1',
    'fe80::1%eth0',
    'fc00::1',
    'fd00:ec2::254',
    'fd12:3456::1',
    'ff02::1',
    '64:ff9b::7f00:1',
    '2002:7f00:1::1',
    '2002:c0a8:101::1',
    '2001:0:4136:e378:8000:63bf:3fff:fdd2',
    '2001:db8::1',
    'fec0::1',
    '100::1',
    // not canonical or not an address at all: fail closed
    '2130706433',
    '0177.0.0.1',
    '0x7f.0.0.1',
    '127.1',
    '010.0.0.1',
    'example.com',
    '',
    '[::1]',
  ];
  for (const address of forbidden) {
    test(`forbids ${JSON.stringify(address)}`, () => assert.equal(isForbiddenAddress(address), true));
  }
  const allowed = ['8.8.8.8', '93.184.215.14', '1.1.1.1', '172.32.0.1', '100.128.0.1', '2606:4700:4700::1111', '2a00:1450:4001:80b::200e'];
  for (const address of allowed) {
    test(`allows public ${address}`, () => assert.equal(isForbiddenAddress(address), false));
  }
});

describe('checkWebhookHeaders', () => {
  test('a flat object of strings passes and keeps names as given', () => {
    const result = checkWebhookHeaders({ Authorization: 'Bearer abc', 'X-Signature-Version': '2', 'x-empty': '' });
    assert.deepEqual(result, { ok: true, headers: { Authorization: 'Bearer abc', 'X-Signature-Version': '2', 'x-empty': '' } });
  });
  test('an empty object passes', () => {
    assert.deepEqual(checkWebhookHeaders({}), { ok: true, headers: {} });
  });
  for (const value of [null, undefined, 'x', 42, ['a', 'b'], new Map([['a', 'b']])]) {
    test(`refuses a non-object: ${Object.prototype.toString.call(value)}`, () => {
      const result = checkWebhookHeaders(value);
      assert.equal(result.ok, false);
      if (!result.ok) assert.equal(result.path, '');
    });
  }
  for (const value of [1, true, null, { nested: 'x' }, ['a']]) {
    test(`refuses a non-string value: ${JSON.stringify(value)}`, () => {
      const result = checkWebhookHeaders({ 'X-Ok': 'fine', 'X-Bad': value });
      assert.deepEqual(result, { ok: false, path: 'X-Bad', reason: 'header value must be a string' });
    });
  }
  const refusedNames = [
    'Connection',
    'keep-alive',
    'Proxy-Authenticate',
    'proxy-authorization',
    'Proxy-Anything',
    'TE',
    'Trailer',
    'Transfer-Encoding',
    'Upgrade',
    'Host',
    'Content-Length',
    'Content-Type',
    'content-encoding',
    'Expect',
    'Cookie',
    'Set-Cookie',
    'Forwarded',
    'X-Forwarded-For',
    'X-Forwarded-Host',
    'X-Real-IP',
    'Metadata',
    'Metadata-Flavor',
    'X-Google-Metadata-Request',
    'X-aws-ec2-metadata-token',
    'X-aws-ec2-metadata-token-ttl-seconds',
    'X-aliyun-ecs-metadata-token',
    'X-IDENTITY-HEADER',
  ];
  for (const name of refusedNames) {
    test(`refuses the header name ${name}`, () => {
      const result = checkWebhookHeaders({ [name]: 'x' });
      assert.equal(result.ok, false);
      if (!result.ok) {
        assert.equal(result.path, name);
        assert.match(result.reason, /may not be set/);
      }
    });
  }
  for (const name of ['', 'Bad Name', 'Bad:Name', 'X-Ünïcode', 'a(b)', ':authority', 'X-Tab\t']) {
    test(`refuses the invalid name ${JSON.stringify(name)}`, () => {
      const result = checkWebhookHeaders({ [name]: 'x' });
      assert.equal(result.ok, false);
      if (!result.ok) assert.match(result.reason, /valid HTTP token/);
    });
  }
  for (const value of ['a\r\nX-Injected: 1', 'a\nb', 'a\rb', 'a\u0000b', 'a\u007fb', 'caf\u00e9', 'emoji \u{1f600}']) {
    test(`refuses the value ${JSON.stringify(value)}`, () => {
      const result = checkWebhookHeaders({ 'X-Value': value });
      assert.equal(result.ok, false);
      if (!result.ok) assert.equal(result.path, 'X-Value');
    });
  }
  test('a tab inside a value is allowed', () => {
    assert.equal(checkWebhookHeaders({ 'X-Value': 'a\tb' }).ok, true);
  });
  test('the same name twice in different case is refused', () => {
    const result = checkWebhookHeaders({ 'X-Token': 'a', 'x-token': 'b' });
    assert.equal(result.ok, false);
    if (!result.ok) assert.match(result.reason, /repeated/);
  });
  test('too many headers, or too long a value, is refused', () => {
    const many = Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`X-H${i}`, 'v']));
    assert.equal(checkWebhookHeaders(many).ok, false);
    assert.equal(checkWebhookHeaders({ 'X-Long': 'v'.repeat(8193) }).ok, false);
    assert.equal(checkWebhookHeaders({ 'X-Long': 'v'.repeat(8192) }).ok, true);
  });
  test('a JSON-parsed "__proto__" key is just a header name, and does not pollute', () => {
    const parsed: unknown = JSON.parse('{"__proto__": "x", "X-A": "1"}');
    const result = checkWebhookHeaders(parsed);
    assert.ok(result.ok);
    assert.equal(Object.getPrototypeOf(result.headers), Object.prototype);
    assert.deepEqual(Object.keys(result.headers).sort(), ['X-A', '__proto__']);
  });
});
