// The booking page's routes without a browser: the HTML shell, the bundle, and the same-origin
// requests it makes to /v3/public/* (browsers send no Origin on a same-origin GET).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createTestContext, json } from '../../helpers/app.js';
import type { TestContext } from '../../helpers/app.js';

describe('the booking page routes', () => {
  let context: TestContext;
  before(async () => {
    context = await createTestContext({ PUBLIC_ALLOW_HTTP_ORIGINS: 'true' });
  });
  after(() => context.close());

  test('/book/:publicClientId is an HTML shell with the client id, a viewport and a self-only CSP', async () => {
    const tenant = await context.world.tenant();
    const response = await context.app.inject({ method: 'GET', url: `/book/${tenant.publicClientId}` });
    assert.equal(response.statusCode, 200);
    assert.match(String(response.headers['content-type']), /^text\/html/);
    assert.match(response.body, /<html lang="en">/);
    assert.match(response.body, /name="viewport"/);
    assert.ok(response.body.includes(`data-client-id="${tenant.publicClientId}"`));
    assert.match(String(response.headers['content-security-policy']), /script-src 'self'/);
  });

  test('an id that is not a client id token is 404, so nothing odd reaches the HTML', async () => {
    const response = await context.app.inject({ method: 'GET', url: `/book/${encodeURIComponent('"><script>')}` });
    assert.equal(response.statusCode, 404);
  });

  test('the bundle and its CSS are served with cache headers, and none of /book is in the OpenAPI document', async () => {
    const js = await context.app.inject({ method: 'GET', url: '/book/assets/booking.js' });
    assert.equal(js.statusCode, 200);
    assert.match(String(js.headers['content-type']), /javascript/);
    assert.match(String(js.headers['cache-control']), /max-age=/);
    assert.ok(js.body.length > 1000);
    const css = await context.app.inject({ method: 'GET', url: '/book/assets/booking.css' });
    assert.equal(css.statusCode, 200);
    assert.match(String(css.headers['content-type']), /text\/css/);
    const document = json<{ paths: Record<string, unknown> }>(await context.app.inject({ method: 'GET', url: '/openapi.json' }));
    assert.deepEqual(Object.keys(document.paths).filter((path) => path.startsWith('/book')), []);
  });

  test('a same-origin request (Sec-Fetch-Site, no Origin) is checked as this host against allowedDomains', async () => {
    const allowed = await context.world.tenant({ allowedDomains: ['book.example.test'] });
    const other = await context.world.tenant({ allowedDomains: ['elsewhere.example.test'] });
    const call = (clientId: string, headers: Record<string, string>) =>
      context.app.inject({ method: 'GET', url: '/v3/public/company', headers: { 'x-client-id': clientId, host: 'book.example.test', ...headers } });

    assert.equal((await call(allowed.publicClientId, { 'sec-fetch-site': 'same-origin' })).statusCode, 200);
    const refused = await call(other.publicClientId, { 'sec-fetch-site': 'same-origin' });
    assert.equal(refused.statusCode, 403);
    assert.match(json(refused).message, /not an allowed domain/);
    assert.equal((await call(allowed.publicClientId, { 'sec-fetch-site': 'cross-site' })).statusCode, 403, 'another site\'s request without Origin stays refused');
    assert.equal((await call(allowed.publicClientId, {})).statusCode, 403);
  });
});
