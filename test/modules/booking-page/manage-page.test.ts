// The customer's manage page /manage/:token without a browser: the HTML shell and its headers (the
// token is a credential: no cache, no Referer, nothing inline), the shape check before the token
// goes into the HTML, and the request log of the real server, which never carries the token.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createTestContext, TEST_SECRETS } from '../../helpers/app.js';
import type { TestContext } from '../../helpers/app.js';
import { withDebugServer } from '../../helpers/server.js';
import { createTokenService } from '../../../src/platform/auth/tokens.js';
import { create, dayAhead, setup, slot } from '../appointments/fixtures.js';

const tokens = createTokenService(TEST_SECRETS, { machineTokenTtlSeconds: 3600, dashboardTokenTtlSeconds: 3600, refreshTokenTtlSeconds: 3600, docsTokenTtlSeconds: 3600 });

describe('the manage page routes', () => {
  let context: TestContext;
  before(async () => {
    context = await createTestContext();
  });
  after(() => context.close());

  test('/manage/:token is an HTML shell with the token for the script, a self-only CSP, no-store and no-referrer', async () => {
    const s = await setup(context);
    const appointment = await create(s, slot(dayAhead(14), '10:00'));
    const token = await tokens.signManageToken({ companyId: appointment.companyId, appointmentId: appointment.id }, new Date(appointment.endTime));
    const response = await context.app.inject({ method: 'GET', url: `/manage/${token}` });
    assert.equal(response.statusCode, 200, response.body);
    assert.match(String(response.headers['content-type']), /^text\/html/);
    assert.match(response.body, /<html lang="en">/);
    assert.match(response.body, /name="viewport"/);
    assert.ok(response.body.includes(`data-token="${token}"`));
    const csp = String(response.headers['content-security-policy']);
    assert.match(csp, /script-src 'self'/);
    assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
    assert.equal(response.headers['cache-control'], 'no-store');
    assert.equal(response.headers['referrer-policy'], 'no-referrer');
    // Nothing inline: every script comes from this origin's manage bundle.
    assert.deepEqual(response.body.match(/<script[^>]*>/g), ['<script type="module" src="/book/assets/manage.js">']);
    assert.ok(response.body.includes('href="/book/assets/manage.css"'));
  });

  test('the shell checks the shape only: a well-formed token that is not valid still gets the page, which says so', async () => {
    const response = await context.app.inject({ method: 'GET', url: '/manage/not.a-valid_token' });
    assert.equal(response.statusCode, 200);
    assert.ok(response.body.includes('data-token="not.a-valid_token"'));
  });

  test('a token of another shape is 404, so nothing odd reaches the HTML', async () => {
    for (const bad of ['"><script>alert(1)</script>', 'a b', 'abc=', 'a/b', 'x'.repeat(2049), "a'b"]) {
      const response = await context.app.inject({ method: 'GET', url: `/manage/${encodeURIComponent(bad)}` });
      assert.equal(response.statusCode, 404, bad);
      assert.doesNotMatch(String(response.headers['content-type']), /html/);
    }
    assert.equal((await context.app.inject({ method: 'GET', url: '/manage/' })).statusCode, 404);
  });

  test('the manage bundle and its CSS are served apart from the booking page\'s, and none of /manage is in the OpenAPI document', async () => {
    const js = await context.app.inject({ method: 'GET', url: '/book/assets/manage.js' });
    assert.equal(js.statusCode, 200);
    assert.match(String(js.headers['content-type']), /javascript/);
    assert.ok(js.body.length > 1000);
    assert.ok(js.body.includes('/v3/manage/appointment'));
    assert.ok(!js.body.includes('/v3/public/appointment/hold'), 'the booking flow is not in the manage bundle');
    const booking = await context.app.inject({ method: 'GET', url: '/book/assets/booking.js' });
    assert.ok(!booking.body.includes('/v3/manage/appointment'), 'nor the manage flow in the booking bundle');
    const css = await context.app.inject({ method: 'GET', url: '/book/assets/manage.css' });
    assert.equal(css.statusCode, 200);
    assert.match(String(css.headers['content-type']), /text\/css/);
    const document = (await context.app.inject({ method: 'GET', url: '/openapi.json' })).json<{ paths: Record<string, unknown> }>();
    assert.deepEqual(Object.keys(document.paths).filter((path) => path.startsWith('/manage')), []);
  });
});

test('the real server logs the manage page\'s URL as /manage/[redacted], never the token', async () => {
  await withDebugServer(async (server) => {
    // Tokens of the page's shape (the page route checks nothing more), one of another shape (404),
    // and one with a query: each unique, so any trace of one in the output is found.
    const token = () => `eyJ${randomUUID().replaceAll('-', '')}.${randomUUID().replaceAll('-', '')}.${randomUUID().replaceAll('-', '_')}`;
    const page = token();
    const withQuery = token();
    const malformed = `${token()}~`;
    const upperCase = token();
    const bearer = token();
    assert.equal((await fetch(`${server.base}/manage/${page}`)).status, 200);
    assert.equal((await fetch(`${server.base}/manage/${withQuery}?utm_source=email`)).status, 200);
    assert.equal((await fetch(`${server.base}/manage/${malformed}`)).status, 404);
    assert.equal((await fetch(`${server.base}/MANAGE/${upperCase}`)).status, 404);
    // The page's own API calls carry the token in Authorization, which the log never writes.
    assert.equal((await fetch(`${server.base}/v3/manage/appointment`, { headers: { authorization: `Bearer ${bearer}` } })).status, 401);

    // Let the last lines reach the pipe.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const output = server.output();
    for (const [name, value] of Object.entries({ page, withQuery, malformed, upperCase, bearer })) {
      assert.equal(output.includes(value), false, `the ${name} token appears in the log`);
      // Nor any part of one (a JWT's parts are dot-separated).
      for (const part of value.split('.')) assert.equal(output.includes(part), false, `a part of the ${name} token appears in the log`);
    }
    const urls = output.split('\n').filter((line) => line.startsWith('{')).map((line) => (JSON.parse(line) as { req?: { url?: string } }).req?.url).filter(Boolean);
    assert.equal(urls.filter((url) => url === '/manage/[redacted]').length, 4, urls.join('\n'));
    assert.ok(urls.includes('/v3/manage/appointment'), 'other URLs are logged as they are');
  });
});
