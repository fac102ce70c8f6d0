import type { App } from '../../platform/http/types.js';
import type { BookingBundle } from './bundle.js';

// The page talks to /v3/public/* on its own origin only; nothing inline, so script-src 'self' holds.
const CSP = "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";
const PUBLIC_CLIENT_ID = /^[A-Za-z0-9_-]{1,200}$/;

function shell(clientId: string): string {
  return `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Book an appointment</title>
  <link rel="icon" href="data:,">
  <link rel="stylesheet" href="/book/assets/booking.css">
</head>
<body>
  <main id="app" data-client-id="${clientId}"><p>Loading…</p></main>
  <noscript>This booking page needs JavaScript.</noscript>
  <script type="module" src="/book/assets/booking.js"></script>
</body>
</html>
`;
}

export function registerBookingPageRoutes(app: App, bundle: () => Promise<BookingBundle>) {
  const none = { access: { mode: 'none' as const } };

  app.get('/book/assets/booking.js', { config: none, schema: { hide: true } }, async (_request, reply) =>
    reply.header('cache-control', 'public, max-age=300').type('application/javascript; charset=utf-8').send((await bundle()).js),
  );
  app.get('/book/assets/booking.css', { config: none, schema: { hide: true } }, async (_request, reply) =>
    reply.header('cache-control', 'public, max-age=300').type('text/css; charset=utf-8').send((await bundle()).css),
  );
  app.get<{ Params: { publicClientId: string } }>('/book/:publicClientId', { config: none, schema: { hide: true } }, async (request, reply) => {
    // Checked here so the id can go into the HTML attribute without escaping.
    if (!PUBLIC_CLIENT_ID.test(request.params.publicClientId)) return reply.callNotFound();
    return reply
      .header('content-security-policy', CSP)
      .header('cache-control', 'no-cache')
      .type('text/html; charset=utf-8')
      .send(shell(request.params.publicClientId));
  });
}
