import type { App } from '../../platform/http/types.js';
import type { PageBundles } from './bundle.js';
import { PAGES } from './bundle.js';

// The pages talk to /v3/* on their own origin only; nothing inline, so script-src 'self' holds.
// A company's logo is any https URL (bookingPage.logoUrl), hence img-src https:. frame-ancestors
// is added per answer: 'none', except for an embedded booking page on the company's own sites.
const CSP = "default-src 'self'; img-src 'self' data: https:; style-src 'self'; script-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'";
const PUBLIC_CLIENT_ID = /^[A-Za-z0-9_-]{1,200}$/;
/** A manage token's shape (a JWT: base64url parts joined by dots; ours are about 300 characters). */
const MANAGE_TOKEN = /^[A-Za-z0-9_.-]{1,2048}$/;

const embedded = (query: { embed?: string }) => query.embed === '1';

/** The HTML of a page: its stylesheet and script, and one checked value for the script in a data attribute. */
function shell(page: (typeof PAGES)[number], title: string, data: string): string {
  return `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>${title}</title>
  <link rel="icon" href="data:,">
  <link rel="stylesheet" href="/book/assets/${page}.css">
</head>
<body>
  <main id="app" ${data}><p>Loading…</p></main>
  <noscript>This page needs JavaScript.</noscript>
  <script type="module" src="/book/assets/${page}.js"></script>
</body>
</html>
`;
}

/** The frame-ancestors sources of a company's embedded page (frame-ancestors.ts). */
type FrameAncestors = (publicClientId: string) => Promise<string>;

export function registerBookingPageRoutes(app: App, bundles: () => Promise<PageBundles>, frameAncestors: FrameAncestors) {
  const none = { access: { mode: 'none' as const } };

  // Both pages' files live under /book/assets/, so every path under /manage/ is a token (the
  // request log writes it as /manage/[redacted], src/app.ts serializeRequest).
  for (const page of PAGES) {
    app.get(`/book/assets/${page}.js`, { config: none, schema: { hide: true } }, async (_request, reply) =>
      reply.header('cache-control', 'public, max-age=300').type('application/javascript; charset=utf-8').send((await bundles())[page].js),
    );
    app.get(`/book/assets/${page}.css`, { config: none, schema: { hide: true } }, async (_request, reply) =>
      reply.header('cache-control', 'public, max-age=300').type('text/css; charset=utf-8').send((await bundles())[page].css),
    );
  }

  // The script other sites include to embed the page (web/embed/embed.ts; docs/api.md, Embed).
  app.get('/book/embed.js', { config: none, schema: { hide: true } }, async (_request, reply) =>
    reply.header('cache-control', 'public, max-age=300').type('application/javascript; charset=utf-8').send((await bundles()).embed),
  );
  app.get<{ Params: { publicClientId: string }; Querystring: { embed?: string } }>('/book/:publicClientId', {
    config: none,
    schema: { hide: true },
    // Framing is allowed only by frame-ancestors; the X-Frame-Options: DENY every answer gets
    // (platform/http/hooks.ts, a global onSend that runs before this one) would block it in older browsers.
    onSend: async (request, reply, payload) => {
      if (embedded(request.query) && !/frame-ancestors 'none'/.test(String(reply.getHeader('content-security-policy')))) reply.removeHeader('x-frame-options');
      return payload;
    },
  }, async (request, reply) => {
    // Checked here so the id can go into the HTML attribute without escaping.
    if (!PUBLIC_CLIENT_ID.test(request.params.publicClientId)) return reply.callNotFound();
    // Only the embed (?embed=1) may be framed, and only by the company's own sites. The answer
    // varies with the company's settings, so no-cache (revalidate) stays.
    const ancestors = embedded(request.query) ? await frameAncestors(request.params.publicClientId) : "'none'";
    return reply
      .header('content-security-policy', `${CSP}; frame-ancestors ${ancestors}`)
      .header('cache-control', 'no-cache')
      .type('text/html; charset=utf-8')
      .send(shell('booking', 'Book an appointment', `data-client-id="${request.params.publicClientId}"`));
  });

  app.get<{ Params: { token: string } }>('/manage/:token', { config: none, schema: { hide: true } }, async (request, reply) => {
    // Only the shape is checked here (so it can go into the attribute unescaped); the page's calls
    // to /v3/manage/* verify the token and say in words why one is refused.
    if (!MANAGE_TOKEN.test(request.params.token)) return reply.callNotFound();
    // The token is a credential: no cache keeps the page, no Referer carries its URL elsewhere,
    // and search engines are asked not to index a page that leaked anyway.
    return reply
      .header('content-security-policy', `${CSP}; frame-ancestors 'none'`)
      .header('cache-control', 'no-store')
      .header('referrer-policy', 'no-referrer')
      .header('x-robots-tag', 'noindex, nofollow')
      .type('text/html; charset=utf-8')
      .send(shell('manage', 'Your appointment', `data-token="${request.params.token}"`));
  });
}
