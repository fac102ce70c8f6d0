// The parts of external calendars that run without a request: provider clients, credential
// sessions, sync, write-back and the worker, built once by app.ts (AppParts.externalCalendars) so
// the resources module (deleting a resource), the notifications dispatcher (write-back of
// appointment events) and server.ts (the worker loop) share them.
import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { AppConfig } from '../../platform/config.js';
import type { Db } from '../../platform/database/index.js';
import { transaction } from '../../platform/database/transaction.js';
import { createSealer } from '../../platform/encryption.js';
import type { Secrets } from '../../platform/secrets.js';
import { buildMergeContext, renderTemplate } from '../templates/render.js';
import { createTemplateService } from '../templates/service.js';
import type { Repositories } from '../parts.js';
import { createCalendarProviders } from './providers/index.js';
import type { CalendarProviders } from './providers/index.js';
import { createSessions } from './sessions.js';
import { createCalendarSync } from './sync.js';
import { createWriteBack } from './write-back.js';
import { createCalendarWorker } from './worker.js';

export interface EngineDeps {
  db: Db;
  config: AppConfig;
  secrets: Secrets;
  repositories: Pick<Repositories, 'externalCalendars' | 'templates' | 'notifications' | 'resources'>;
  touch: (companyId: string, what: { resources: string[] }) => Promise<void> | void;
  log: FastifyBaseLogger;
  /** Tests replace the provider clients' configuration, never the clients. */
  providers?: CalendarProviders;
  clock?: () => number;
}

export function createExternalCalendarEngine(deps: EngineDeps) {
  const { db, config, repositories } = deps;
  const settings = config.externalCalendars;
  const clock = deps.clock ?? Date.now;
  const repository = repositories.externalCalendars;
  const providers = deps.providers ?? createCalendarProviders(settings);
  const sealer = createSealer(deps.secrets.CREDENTIAL_ENCRYPTION_SECRET, settings.previousEncryptionSecrets);
  const sessions = createSessions({ repository, sealer, providers, clock });
  const touchResource = async (companyId: string, resourceId: string) => {
    await deps.touch(companyId, { resources: [resourceId] });
  };
  const syncConnection = createCalendarSync({
    db,
    repository,
    sessions,
    resourceZone: async (companyId, resourceId) => (await repositories.resources.byId(companyId, resourceId))?.timezoneName ?? 'UTC',
    touchResource,
    horizonDays: settings.horizonDays,
    clock,
  });
  const templates = createTemplateService({ repository: repositories.templates });
  const instanceId = randomUUID();
  // One claim covers one sync (several calendars, each paged) or one write: generous, since a
  // claim that runs out lets another instance start the same work.
  const leaseMs = Math.max(5 * 60_000, settings.timeoutMs * 30);
  const writeBack = createWriteBack({
    db,
    repository,
    sessions,
    // The EXTERNAL_CALENDAR_EVENT template (the company's, else the platform default) with the
    // notification merge variables: subject = the event's title, body = its description.
    render: async (companyId, appointmentId) => {
      const appointment = await repositories.notifications.appointment(companyId, appointmentId);
      if (!appointment) return null;
      const sources = await repositories.notifications.messageSources(companyId, appointment);
      if (!sources) return null;
      const { company, location, service, customer, resources } = sources;
      const context = buildMergeContext({ appointment, company: { name: company.name }, location, service, customer, resources });
      const template = await templates.resolve(companyId, 'EXTERNAL_CALENDAR_EVENT', 'RESOURCE', 'EMAIL');
      const rendered = renderTemplate(template, context, 'EMAIL');
      return { title: rendered.subject ?? service.name, description: rendered.text, timeZone: location.timezoneName };
    },
    instanceId,
    leaseMs,
    clock,
    log: deps.log,
  });
  const worker = createCalendarWorker({
    repository,
    syncConnection,
    writeBack,
    instanceId,
    leaseMs,
    syncIntervalMs: settings.syncIntervalSeconds * 1000,
    batchSize: 10,
    clock,
    log: deps.log,
  });
  let kickListener: (() => void) | undefined;

  return {
    providers,
    sessions,
    syncConnection,
    writeBack,
    worker,
    touchResource,
    clock,
    /** Asks the worker loop (server.ts) for a pass now. */
    kick: () => kickListener?.(),
    onKick(listener: () => void) {
      kickListener = listener;
    },

    /** A deleted resource: every connection goes (intervals with it), revoked where the provider allows. */
    async disconnectResource(companyId: string, resourceId: string): Promise<void> {
      const connections = await repository.connectionsOfResource(companyId, resourceId);
      for (const connection of connections) {
        const removed = await transaction(db, (trx) => repository.deleteConnection(trx, companyId, connection.id));
        if (removed) await sessions.revoke(removed);
      }
      if (connections.length) await touchResource(companyId, resourceId);
    },
  };
}

export type ExternalCalendarEngine = ReturnType<typeof createExternalCalendarEngine>;
