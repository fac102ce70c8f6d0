import { randomUUID } from 'node:crypto';
import type { App } from '../../platform/http/types.js';
import { createSealer } from '../../platform/encryption.js';
import { createOutboundFetch } from '../../platform/outbound/fetch.js';
import type { AppParts } from '../parts.js';
import { createPlanChecks } from './checks.js';
import { createImporter } from './importer.js';
import { createMigrationService } from './jobs.js';
import type { MigrationService } from './jobs.js';
import { createMigrationJobRepository, createMigrationWrites } from './repository.js';
import { registerMigrationRoutes } from './routes.js';
import { createMappingService } from './service.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** v1 import jobs: server.ts runs resumeStale() in a loop and stop() on shutdown; tests call drain(). */
    migration: MigrationService;
  }
}

/** Migration from v1: the importer (POST /v3/migration/sync), its jobs and the id mapping. */
export const migrationModule = {
  name: 'migration',
  register(app: App, { db, config, secrets, repositories, touch, log }: Pick<AppParts, 'db' | 'config' | 'secrets' | 'repositories' | 'touch' | 'log'>) {
    const settings = config.migration;
    const migration = createMigrationService({
      db,
      jobs: createMigrationJobRepository(db),
      importer: createImporter({ db, writes: createMigrationWrites(db), touch }),
      checkPlan: createPlanChecks(),
      sealer: createSealer(secrets.CREDENTIAL_ENCRYPTION_SECRET, config.externalCalendars.previousEncryptionSecrets),
      fetch: createOutboundFetch({ timeoutMs: settings.timeoutMs, allowLoopbackHttp: settings.allowLoopbackHttp }),
      config: settings,
      instanceId: `${process.pid}-${randomUUID()}`,
      log,
    });
    registerMigrationRoutes(app, {
      mapping: createMappingService({ repository: repositories.migration }),
      migration,
      bodyLimit: settings.bodyLimitBytes,
      allowLoopbackHttp: settings.allowLoopbackHttp,
    });
    app.decorate('migration', migration);
    // Jobs of this instance stop between two transactions and are released for another instance.
    app.addHook('onClose', () => migration.stop());
  },
};
