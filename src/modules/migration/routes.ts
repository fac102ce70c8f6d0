import type { App } from '../../platform/http/types.js';
import { errorResponses, IdParams, Security } from '../../platform/http/schemas.js';
import { requireCompany } from '../../platform/auth/principal.js';
import { validationError } from '../../platform/errors.js';
import { outboundUrlProblem } from '../../platform/outbound/fetch.js';
import { MappingAnswer, MappingQuery, MigrationJob, MigrationPreferHeader, MigrationReport, MigrationSyncBody } from './schemas.js';
import type { createMappingService } from './service.js';
import type { MigrationService } from './jobs.js';

/** Migration workflows: Owners and Admins of the company; machine tokens 403 (Machine flow 8). */
export const MIGRATION_ACCESS = {
  mode: 'company' as const,
  roles: ['Owner' as const, 'Admin' as const],
  machineMessage: 'Machine tokens cannot use migration workflows',
};

export function registerMigrationRoutes(
  app: App,
  { mapping, migration, bodyLimit, allowLoopbackHttp }: { mapping: ReturnType<typeof createMappingService>; migration: MigrationService; bodyLimit: number; allowLoopbackHttp: boolean },
) {
  app.get(
    '/v3/mapping/ids',
    {
      config: { access: MIGRATION_ACCESS },
      schema: {
        tags: ['Migration'],
        summary: 'v1 ids to v3 ids (only the keys asked)',
        description:
          'Each query key is a v1 id. Scalars answer the v3 id or null; `allocationId` answers an array, since one v1 allocation becomes one weekly row per weekday or several single rows. ' +
          'v1 ids are compared as decimal strings (`"0012"` and `"12"` are the same id). Only the caller\'s company is searched.',
        security: Security.dashboardCompany,
        querystring: MappingQuery,
        response: { 200: MappingAnswer, ...errorResponses(400, 401, 403) },
      },
    },
    async (request) => mapping.ids(requireCompany(request.principal).companyId, request.query),
  );

  app.post(
    '/v3/migration/sync',
    {
      bodyLimit,
      config: { access: MIGRATION_ACCESS },
      schema: {
        tags: ['Migration'],
        summary: 'Import a v1 company (live API or export document)',
        description:
          'Idempotent on legacyId: records the company already has are skipped, so a run after a partial failure completes the rest. ' +
          'Each record (or small batch) is its own transaction: a bad record fails alone and is listed in `failed`. `dryRun: true` reports and writes nothing. ' +
          'An export of up to 2,000 records (MIGRATION_SYNC_RECORD_LIMIT) answers 200 with the report; a larger one, an `api` source, or `Prefer: respond-async` answers 202 with a job to follow at GET /v3/migration/jobs/{id}. ' +
          'One writing run per company at a time: another answers 409. docs/migration.md explains the procedure.',
        security: Security.dashboardCompany,
        headers: MigrationPreferHeader,
        body: MigrationSyncBody,
        response: { 200: MigrationReport, 202: MigrationJob, ...errorResponses(400, 401, 403, 409) },
      },
    },
    async (request, reply) => {
      const principal = requireCompany(request.principal);
      const { source } = request.body;
      if (source.type === 'api') {
        // The webhook URL rules: https to a public address (no loopback, private or link-local).
        for (const field of ['baseUrl', 'tokenUrl'] as const) {
          const problem = outboundUrlProblem(new URL(source[field]), allowLoopbackHttp);
          if (problem) throw validationError('body', `source.${field}`, `source.${field} ${problem}`);
        }
      }
      const preferAsync = /\brespond-async\b/i.test(request.headers.prefer ?? '');
      const userId = principal.kind === 'dashboard' ? principal.userId : null;
      const started = await migration.start(principal.companyId, userId, request.body, { preferAsync });
      if (started.kind === 'report') return started.report;
      if (preferAsync) reply.header('preference-applied', 'respond-async');
      reply.header('location', `/v3/migration/jobs/${started.job.id}`);
      return reply.status(202).send(started.job);
    },
  );

  app.get(
    '/v3/migration/jobs/:id',
    {
      config: { access: MIGRATION_ACCESS },
      schema: {
        tags: ['Migration'],
        summary: 'A migration job: progress per kind, then the report',
        description: 'A job of another company is not found (404). `status` is running, succeeded or failed; a failed job says why in `error` and what landed in `report`.',
        security: Security.dashboardCompany,
        params: IdParams,
        response: { 200: MigrationJob, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => migration.job(requireCompany(request.principal).companyId, request.params.id),
  );
}
