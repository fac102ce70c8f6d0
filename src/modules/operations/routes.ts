import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Type } from '@sinclair/typebox';
import { sql } from 'kysely';
import type { App } from '../../platform/http/types.js';
import { baseUrlOf } from '../../platform/http/types.js';
import type { Db } from '../../platform/database/index.js';
import { errorResponses } from '../../platform/http/schemas.js';
import { unauthorized } from '../../platform/errors.js';
import type { TokenService } from '../../platform/auth/tokens.js';
import { TokenError } from '../../platform/auth/tokens.js';
import { DOCS_HTML, DOCS_INIT_JS } from './docs-page.js';
import { finishOpenApiDocument } from '../../platform/http/openapi.js';
import { isRecord } from '../../platform/values.js';

const swaggerUiDir = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
const DOCS_ASSETS: Record<string, { file: string; type: string }> = {
  'swagger-ui.css': { file: join(swaggerUiDir, 'swagger-ui.css'), type: 'text/css; charset=utf-8' },
  'swagger-ui-bundle.js': { file: join(swaggerUiDir, 'swagger-ui-bundle.js'), type: 'application/javascript; charset=utf-8' },
};
// frame-ancestors 'none': the page (which holds a docs token) cannot be framed for clickjacking.
const DOCS_CSP = "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

export interface OperationsDeps {
  db: Db;
  tokens: TokenService;
  /** True once shutdown has begun: /readyz then fails so the load balancer stops sending traffic. */
  isDraining: () => boolean;
  publicBaseUrl: string | undefined;
  companyForDocs: (companyId: string) => Promise<{ id: string; name: string; publicClientId: string } | undefined>;
}

export function registerOperationsRoutes(app: App, deps: OperationsDeps) {
  const none = { access: { mode: 'none' as const } };
  let finished: Record<string, unknown> | undefined;

  // The probes are for load balancers, not API clients, and answer no 4xx: they stay out of the
  // OpenAPI document (docs/api.md, Operations, describes them).
  app.get(
    '/healthz',
    { config: none, schema: { hide: true, tags: ['Operations'], summary: 'Liveness: 200 while the process runs', response: { 200: Type.Object({ status: Type.Literal('ok') }) } } },
    async () => ({ status: 'ok' as const }),
  );

  app.get(
    '/readyz',
    {
      config: none,
      schema: {
        hide: true,
        tags: ['Operations'],
        summary: 'Readiness: 200 once the database answers; 503 when it does not or while shutting down',
        response: { 200: Type.Object({ status: Type.Literal('ready') }), 503: Type.Object({ status: Type.String(), reason: Type.String() }) },
      },
    },
    async (_request, reply) => {
      if (deps.isDraining()) return reply.status(503).send({ status: 'unavailable', reason: 'shutting down' });
      try {
        await sql`select 1`.execute(deps.db);
        return { status: 'ready' as const };
      } catch {
        return reply.status(503).send({ status: 'unavailable', reason: 'database not answering' });
      }
    },
  );

  app.get(
    '/openapi.json',
    {
      config: none,
      schema: {
        tags: ['Operations'],
        summary: 'The OpenAPI 3.1 document; with a docs handoff token as Bearer, personalised for its company',
        response: { 200: Type.Object({}, { additionalProperties: true, description: 'This OpenAPI 3.1 document' }), ...errorResponses(401) },
      },
    },
    async (request) => {
      // Finished once (the routes do not change after start); each answer is a copy.
      finished ??= finishOpenApiDocument(app.swagger(), { publicBaseUrl: deps.publicBaseUrl });
      const document = structuredClone(finished);
      const baseUrl = baseUrlOf(request, deps.publicBaseUrl);
      const header = request.headers.authorization;
      if (header) {
        const token = /^Bearer\s+(\S+)$/i.exec(header)?.[1];
        let verified;
        try {
          verified = token ? await deps.tokens.verifyBearer(token) : undefined;
        } catch (error) {
          if (!(error instanceof TokenError)) throw error;
        }
        if (!verified || verified.kind !== 'docs') throw unauthorized('Invalid or expired docs token');
        const company = await deps.companyForDocs(verified.claims.companyId);
        if (!company) throw unauthorized('Invalid or expired docs token');
        document['x-slotwise-company'] = company;
        const info = isRecord(document.info) ? document.info : (document.info = {});
        info.description =
          `${typeof info.description === 'string' ? info.description : ''}\n\n## Your company\n\n| | |\n|---|---|\n| Company | ${company.name} |\n` +
          `| Company id | \`${company.id}\` |\n| Public client id (x-client-id) | \`${company.publicClientId}\` |\n| Base address | ${baseUrl} |\n`;
      }
      return document;
    },
  );

  app.get('/docs', { config: none, schema: { hide: true } }, async (_request, reply) =>
    reply.header('content-security-policy', DOCS_CSP).type('text/html; charset=utf-8').send(DOCS_HTML),
  );

  app.get('/docs/assets/init.js', { config: none, schema: { hide: true } }, async (_request, reply) =>
    reply.type('application/javascript; charset=utf-8').send(DOCS_INIT_JS),
  );

  app.get<{ Params: { name: string } }>('/docs/assets/:name', { config: none, schema: { hide: true } }, async (request, reply) => {
    const asset = DOCS_ASSETS[request.params.name];
    if (!asset) return reply.callNotFound();
    return reply.header('cache-control', 'public, max-age=86400').type(asset.type).send(await readFile(asset.file));
  });
}
