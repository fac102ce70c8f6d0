// The embed without a browser: /book/embed.js, and who may frame /book/:id?embed=1 (CSP
// frame-ancestors from the company's allowedDomains). test/browser/embed.test.ts embeds it for real.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createTestContext } from '../../helpers/app.js';
import type { TestContext } from '../../helpers/app.js';

/** The sources of one directive of a CSP header, or undefined when it has none. */
function directive(csp: unknown, name: string): string | undefined {
  return String(csp).split(';').map((part) => part.trim()).find((part) => part.startsWith(`${name} `))?.slice(name.length + 1);
}

describe('the embed', () => {
  let context: TestContext;
  let httpContext: TestContext;
  before(async () => {
    context = await createTestContext();
    httpContext = await createTestContext({ PUBLIC_ALLOW_HTTP_ORIGINS: 'true' });
  });
  after(async () => {
    await context?.close();
    await httpContext?.close();
  });

  const page = (target: TestContext, url: string) => target.app.inject({ method: 'GET', url });

  test('/book/embed.js is a cached JavaScript file that defines <slotwise-booking>', async () => {
    const response = await page(context, '/book/embed.js');
    assert.equal(response.statusCode, 200);
    assert.match(String(response.headers['content-type']), /^application\/javascript/);
    assert.match(String(response.headers['cache-control']), /max-age=/);
    assert.match(response.body, /slotwise-booking/);
    assert.match(response.body, /slotwise:height/);
    assert.doesNotMatch(response.body, /^\s*(import|export)\b/m, 'a classic script, not a module');
  });

  test('?embed=1 may be framed by the company\'s allowedDomains over https only', async () => {
    const tenant = await context.world.tenant({ allowedDomains: ['www.shop.example', 'localhost:8443'] });
    const response = await page(context, `/book/${tenant.publicClientId}?embed=1`);
    assert.equal(response.statusCode, 200);
    assert.equal(directive(response.headers['content-security-policy'], 'frame-ancestors'), 'https://www.shop.example https://localhost:8443');
    assert.equal(response.headers['x-frame-options'], undefined, 'X-Frame-Options: DENY would block older browsers');
    assert.equal(response.headers['cache-control'], 'no-cache');
    assert.equal(directive(response.headers['content-security-policy'], 'script-src'), "'self'");
    assert.equal(directive(response.headers['content-security-policy'], 'img-src'), "'self' data: https:");
  });

  test('with PUBLIC_ALLOW_HTTP_ORIGINS, http origins of the same hosts may frame it too', async () => {
    const tenant = await httpContext.world.tenant({ allowedDomains: ['127.0.0.1:5173'] });
    const response = await page(httpContext, `/book/${tenant.publicClientId}?embed=1`);
    assert.equal(directive(response.headers['content-security-policy'], 'frame-ancestors'), 'https://127.0.0.1:5173 http://127.0.0.1:5173');
  });

  test('without ?embed=1, nobody may frame the page', async () => {
    const tenant = await context.world.tenant({ allowedDomains: ['www.shop.example'] });
    for (const url of [`/book/${tenant.publicClientId}`, `/book/${tenant.publicClientId}?embed=0`, `/book/${tenant.publicClientId}?embed=true`]) {
      const response = await page(context, url);
      assert.equal(response.statusCode, 200);
      assert.equal(directive(response.headers['content-security-policy'], 'frame-ancestors'), "'none'", url);
      assert.equal(response.headers['x-frame-options'], 'DENY', url);
      assert.equal(directive(response.headers['content-security-policy'], 'img-src'), "'self' data: https:");
    }
  });

  test('an unknown client id, a company with no allowedDomains, or a suspended one: \'none\'', async () => {
    const bare = await context.world.tenant();
    const suspended = await context.world.tenant({ allowedDomains: ['www.shop.example'] });
    await context.database.db.updateTable('companies').set({ suspendedAt: new Date() }).where('id', '=', suspended.companyId).execute();
    for (const clientId of ['pub_unknown', bare.publicClientId, suspended.publicClientId]) {
      const response = await page(context, `/book/${clientId}?embed=1`);
      assert.equal(response.statusCode, 200);
      assert.equal(directive(response.headers['content-security-policy'], 'frame-ancestors'), "'none'", clientId);
      assert.equal(response.headers['x-frame-options'], 'DENY', clientId);
    }
  });

  test('a change of allowedDomains applies to the next page load (nothing cached)', async () => {
    const tenant = await context.world.tenant({ allowedDomains: ['old.shop.example'] });
    const update = await context.app.inject({ method: 'PUT', url: '/v3/company', headers: tenant.dashboard, payload: { allowedDomains: ['new.shop.example'] } });
    assert.equal(update.statusCode, 200, update.body);
    const response = await page(context, `/book/${tenant.publicClientId}?embed=1`);
    assert.equal(directive(response.headers['content-security-policy'], 'frame-ancestors'), 'https://new.shop.example');
  });
});
