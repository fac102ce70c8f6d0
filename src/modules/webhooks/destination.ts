// The destination rules for webhooks: which URLs a company may configure, which network addresses a
// delivery may ever connect to, and which request headers a company may set.
//
// Two layers, both always applied:
// - checkWebhookUrl runs when a webhook is created or replaced (a refusal is a 400) and again before every
//   delivery. It looks only at the URL text: https, no credentials, no fragment, and a host that is a
//   public-looking DNS name, never an IP literal in any spelling and never a local, internal or metadata name.
// - isForbiddenAddress runs at delivery time on every address the hostname resolves to (see
//   delivery-client.ts), because a public-looking name can still resolve to 127.0.0.1 or 169.254.169.254
//   (wildcard DNS services, DNS rebinding). Only public unicast addresses pass.
//
// Everything here is pure and synchronous; nothing touches the network.

import ipaddr from 'ipaddr.js';

export type UrlCheck = { ok: true; url: URL } | { ok: false; reason: string };
export type HeadersCheck = { ok: true; headers: Record<string, string> } | { ok: false; path: string; reason: string };

/** Longest webhook URL accepted, in characters. */
export const MAX_URL_LENGTH = 2048;

/**
 * Host names refused exactly (after lower-casing). Cloud instance-metadata endpoints and bare names that
 * only ever resolve inside a network. Single-label names are refused anyway; they are listed for the record.
 */
export const FORBIDDEN_HOSTNAMES: readonly string[] = [
  'localhost',
  'metadata', // GCP short name
  'metadata.google.internal', // GCP
  'metadata.goog', // GCP
  'instance-data', // AWS
  'instance-data.ec2.internal', // AWS
  'metadata.azure.com', // Azure (defensive: metadata only ever lives on 169.254.169.254 / 168.63.129.16)
  'metadata.azure.internal',
  'metadata.tencentyun.com', // Tencent Cloud, resolves to 169.254.0.23
  'metadata.platformequinix.com', // Equinix Metal
  'metadata.packet.net', // Equinix Metal (former Packet)
  'kubernetes.default',
  'kubernetes.default.svc',
];

/**
 * Suffixes refused for the host name itself and every name under it. Special-use and private-use names
 * (RFC 6761, RFC 6762, RFC 8375, RFC 2606 TLDs, ICANN's .internal) never resolve in public DNS, so a
 * webhook to one of them can only reach something inside our own network.
 */
export const FORBIDDEN_HOST_SUFFIXES: readonly string[] = [
  'localhost',
  'local', // mDNS, and Kubernetes cluster.local
  'localdomain',
  'internal', // *.internal, incl. GCP *.c.<project>.internal and AWS *.ec2.internal / *.compute.internal
  'intranet',
  'private',
  'corp',
  'home',
  'lan',
  'home.arpa',
  'arpa', // in-addr.arpa / ip6.arpa reverse names
  'svc', // Kubernetes service names
  'test',
  'invalid',
  'example',
  'onion',
];

// RFC 9110 token.
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
// Printable ASCII and horizontal tab: no CR, LF, NUL or any other control character, nothing beyond ASCII.
const HEADER_VALUE = /^[\t\x20-\x7e]*$/;
// Characters that never belong in the URL text as typed: whitespace, control characters, backslash.
// (The WHATWG parser silently strips or reinterprets them, which is how parser differentials start.)
// eslint-disable-next-line no-control-regex
const UNSAFE_URL_CHARS = /[\u0000-\u0020\u007f-\u009f\\\s]/u;
const LABEL = /^[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?$/;

/**
 * The rule for a webhook URL, applied on create and replace and before every delivery.
 * Returns the parsed URL when allowed, else a reason suitable for a 400 message.
 */
export function checkWebhookUrl(url: string): UrlCheck {
  if (typeof url !== 'string' || url.length === 0) return refuse('must be a non-empty string');
  if (url.length > MAX_URL_LENGTH) return refuse(`must be at most ${MAX_URL_LENGTH} characters`);
  if (UNSAFE_URL_CHARS.test(url)) return refuse('must not contain whitespace, control characters or backslashes');
  if (!/^https:\/\//i.test(url)) return refuse('must use https');
  // '#' can only start a fragment (it ends the authority and the path), even an empty one.
  if (url.includes('#')) return refuse('must not contain a fragment');
  const authority = url.slice('https://'.length).split(/[/?]/, 1)[0] ?? '';
  if (authority.includes('@')) return refuse('must not contain a username or password');

  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return refuse('is not a valid URL');
  }
  if (parsed.protocol !== 'https:') return refuse('must use https');
  if (parsed.username !== '' || parsed.password !== '') return refuse('must not contain a username or password');
  if (parsed.hash !== '') return refuse('must not contain a fragment');
  if (parsed.port === '0') return refuse('must not use port 0');

  const hostReason = checkHostname(parsed.hostname);
  if (hostReason) return refuse(hostReason);
  return { ok: true, url: parsed };
}

function refuse(reason: string): UrlCheck {
  return { ok: false, reason: `webhook URL ${reason}` };
}

/** Why a parsed (WHATWG-normalised, lower-case, punycode) host name is refused, or null when it is allowed. */
function checkHostname(hostname: string): string | null {
  if (hostname === '') return 'must have a host';
  // IPv6 literals keep their brackets in URL.hostname; WHATWG has already turned every numeric IPv4 spelling
  // (2130706433, 0177.0.0.1, 0x7f.1, 127.1, %31%32%37.0.0.1, full-width digits) into dotted-quad.
  if (hostname.startsWith('[') || hostname.includes(':')) return 'host must be a DNS name, not an IP address';
  if (ipaddr.isValid(hostname)) return 'host must be a DNS name, not an IP address';
  if (hostname.endsWith('.')) return 'host must not end with a dot';
  if (hostname.length > 253) return 'host is too long';
  const labels = hostname.split('.');
  if (labels.length < 2) return 'host must be a fully qualified domain name';
  if (!labels.every((label) => LABEL.test(label))) return 'host is not a valid DNS name';
  const tld = labels[labels.length - 1]!;
  // A numeric or hex last label is how IP addresses are spelled; never a real top-level domain.
  if (/^[0-9]+$/.test(tld) || /^0x[0-9a-f]*$/.test(tld)) return 'host must be a DNS name, not an IP address';
  if (FORBIDDEN_HOSTNAMES.includes(hostname)) return 'host is a local, internal or metadata name';
  for (const suffix of FORBIDDEN_HOST_SUFFIXES) {
    if (hostname === suffix || hostname.endsWith(`.${suffix}`)) return 'host is a local, internal or metadata name';
  }
  return null;
}

/**
 * Single addresses that ipaddr.js calls public unicast but that are cloud control-plane endpoints.
 * (169.254.169.254, 169.254.170.2, fd00:ec2::254 and 100.100.100.200 are already inside the link-local,
 * unique-local and carrier-grade NAT ranges; they are listed to make the intent explicit.)
 */
export const FORBIDDEN_ADDRESSES: readonly string[] = [
  '169.254.169.254', // AWS, GCP, Azure, OCI, DigitalOcean... instance metadata
  '169.254.170.2', // AWS ECS task metadata / credentials
  '169.254.169.253', // AWS VPC DNS
  'fd00:ec2::254', // AWS IMDS over IPv6
  'fd00:ec2::23', // AWS VPC DNS over IPv6
  '100.100.100.200', // Alibaba Cloud metadata
  '168.63.129.16', // Azure WireServer / host platform (a public-looking address)
];
const forbiddenAddressSet = new Set(FORBIDDEN_ADDRESSES.map((a) => ipaddr.parse(a).toNormalizedString()));
const GLOBAL_UNICAST_V6 = ipaddr.IPv6.parseCIDR('2000::/3');

/**
 * True unless `address` is a canonical IP address in public unicast space. Fail-closed: anything that
 * does not parse, or is spelled ambiguously (short, octal or hex IPv4, a zone id), is forbidden.
 *
 * IPv4: only ipaddr.js's `unicast` range passes, so private, loopback, link-local (incl. 169.254.169.254),
 * carrier-grade NAT (incl. 100.100.100.200), unspecified (0.0.0.0/8), broadcast, multicast, reserved,
 * benchmarking, documentation, AS112 and AMT ranges are all forbidden, plus FORBIDDEN_ADDRESSES.
 * IPv6: only global unicast 2000::/3 outside every special range passes, so ::1, ::, fe80::/10,
 * fc00::/7 (incl. fd00:ec2::254), multicast, IPv4-mapped (::ffff:0:0/96, whatever the embedded IPv4),
 * IPv4-compatible (::a.b.c.d), NAT64 (64:ff9b::/96), 6to4 (2002::/16) and Teredo (2001::/32) are all
 * forbidden: the embedding forms are refused outright rather than decoded.
 */
export function isForbiddenAddress(address: string): boolean {
  if (typeof address !== 'string' || address.includes('%')) return true;
  let ip: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    if (ipaddr.IPv4.isValidFourPartDecimal(address)) {
      if (address.split('.').some((octet) => octet.length > 1 && octet.startsWith('0'))) return true;
      ip = ipaddr.IPv4.parse(address);
    } else if (ipaddr.IPv6.isValid(address)) {
      ip = ipaddr.IPv6.parse(address);
    } else {
      return true;
    }
  } catch {
    return true;
  }
  if (forbiddenAddressSet.has(ip.toNormalizedString())) return true;
  if (ip instanceof ipaddr.IPv4) return ip.range() !== 'unicast';
  if (ip.isIPv4MappedAddress()) return true;
  if (!ip.match(GLOBAL_UNICAST_V6)) return true;
  return ip.range() !== 'unicast';
}

/** Most headers a webhook may configure, and the longest name and value, in characters. */
export const MAX_HEADERS = 50;
export const MAX_HEADER_NAME_LENGTH = 256;
export const MAX_HEADER_VALUE_LENGTH = 8192;

/**
 * Header names a webhook may not set (compared lower-case).
 * - hop-by-hop (RFC 9110 §7.6.1) and proxy-* names: they describe the connection, not the message;
 * - host, content-length, content-type, content-encoding, expect: framing and routing, set by the client
 *   (the body is always uncompressed application/json);
 * - cookie, set-cookie: not ours to forward;
 * - forwarding headers (forwarded, x-forwarded-*, x-real-ip, x-original-url, x-rewrite-url): they carry
 *   client identity and routing that receivers' proxies trust, so a sender must not forge them;
 * - cloud instance-metadata request headers (GCP, AWS IMDSv2, Alibaba, Azure managed identity): the
 *   markers that let a request be accepted by a metadata service if one were ever reached.
 */
export const FORBIDDEN_HEADER_NAMES: readonly string[] = [
  // hop-by-hop
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  // framing and routing, set by us
  'host',
  'content-length',
  'content-type',
  'content-encoding',
  'expect',
  // cookies
  'cookie',
  'set-cookie',
  // forwarding
  'forwarded',
  'x-forwarded-for',
  'x-forwarded-host',
  'x-forwarded-proto',
  'x-forwarded-port',
  'x-forwarded-prefix',
  'x-real-ip',
  'x-original-url',
  'x-rewrite-url',
  'x-http-method-override',
  // cloud metadata
  'metadata',
  'metadata-flavor',
  'x-google-metadata-request',
  'x-aws-ec2-metadata-token',
  'x-aws-ec2-metadata-token-ttl-seconds',
  'x-aliyun-ecs-metadata-token',
  'x-aliyun-ecs-metadata-token-ttl-seconds',
  'x-identity-header',
];
const forbiddenHeaderNames = new Set(FORBIDDEN_HEADER_NAMES);

/**
 * The rule for a webhook's configured headers: a plain object whose values are all strings, at most
 * MAX_HEADERS entries, each name an HTTP token not in FORBIDDEN_HEADER_NAMES (nor starting with `proxy-`)
 * and not repeated in another case, each value printable ASCII or tab (no CR, LF or other control
 * characters). On refusal, `path` is the offending header name as given ('' for the object itself).
 * On success the headers are returned as given (same names and case), in a fresh object.
 */
export function checkWebhookHeaders(headers: unknown): HeadersCheck {
  if (typeof headers !== 'object' || headers === null || Array.isArray(headers)) {
    return { ok: false, path: '', reason: 'headers must be an object of string values' };
  }
  const proto: unknown = Object.getPrototypeOf(headers);
  if (proto !== Object.prototype && proto !== null) {
    return { ok: false, path: '', reason: 'headers must be a plain object of string values' };
  }
  const entries: Array<[string, unknown]> = Object.entries(headers);
  if (entries.length > MAX_HEADERS) return { ok: false, path: '', reason: `at most ${MAX_HEADERS} headers are allowed` };
  const seen = new Set<string>();
  // A Map, not an object: a header named __proto__ is an entry like any other.
  const result = new Map<string, string>();
  for (const [name, value] of entries) {
    if (name.length === 0 || name.length > MAX_HEADER_NAME_LENGTH || !TOKEN.test(name)) {
      return { ok: false, path: name, reason: 'header name must be a valid HTTP token' };
    }
    const lower = name.toLowerCase();
    if (forbiddenHeaderNames.has(lower) || lower.startsWith('proxy-')) {
      return { ok: false, path: name, reason: `header ${lower} may not be set on a webhook` };
    }
    if (seen.has(lower)) return { ok: false, path: name, reason: 'header name is repeated' };
    seen.add(lower);
    if (typeof value !== 'string') return { ok: false, path: name, reason: 'header value must be a string' };
    if (value.length > MAX_HEADER_VALUE_LENGTH) {
      return { ok: false, path: name, reason: `header value must be at most ${MAX_HEADER_VALUE_LENGTH} characters` };
    }
    if (!HEADER_VALUE.test(value)) {
      return { ok: false, path: name, reason: 'header value must be printable ASCII without CR, LF or control characters' };
    }
    result.set(name, value);
  }
  return { ok: true, headers: Object.fromEntries(result) };
}
