import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { AppConfig } from '../../platform/config.js';
import type { App } from '../../platform/http/types.js';
import type { AppParts } from '../parts.js';
import { activeWebhooksFor, finishDelivery, startDelivery } from '../webhooks/repository.js';
import { defaultResolve, deliverWebhook } from '../webhooks/delivery-client.js';
import { createTemplateService } from '../templates/service.js';
import { buildMergeContext, renderTemplate } from '../templates/render.js';
import { createCustomerLinks } from '../manage/links.js';
import { createDispatcher } from './dispatcher.js';
import type { Dispatcher } from './dispatcher.js';
import { registerNotificationRoutes } from './routes.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** The outbox dispatcher: server.ts runs it in a loop; tests call app.dispatcher.drain(). */
    dispatcher: Dispatcher;
  }
}

/**
 * Test configuration only (loadConfig refuses it outside NODE_ENV=test, and the delivery client
 * refuses the allowance too): trust this CA for loopback receivers, and resolve these names locally.
 */
function webhookTestOptions(test: NonNullable<AppConfig['webhookTest']>) {
  return {
    testAllowance: { allowLoopback: true as const, ca: readFileSync(test.caFile) },
    resolve: async (hostname: string) => test.hosts[hostname.toLowerCase()] ?? defaultResolve(hostname),
  };
}

/** The notifications log, and the outbox dispatcher: webhooks, email and SMS, reminders. */
export const notificationsModule = {
  name: 'notifications',
  register(
    app: App,
    { db, config, log, metrics, repositories, email, sms, externalCalendars, tokens }: Pick<AppParts, 'db' | 'config' | 'log' | 'metrics' | 'repositories' | 'email' | 'sms' | 'externalCalendars' | 'tokens'>,
  ) {
    registerNotificationRoutes(app, { repository: repositories.notifications });
    const templates = createTemplateService({ repository: repositories.templates });
    const webhookTest = config.webhookTest ? webhookTestOptions(config.webhookTest) : undefined;
    const dispatcher = createDispatcher({
      db,
      repository: repositories.notifications,
      instanceId: randomUUID(),
      leaseMs: config.worker.leaseMs,
      batchSize: config.worker.batchSize,
      log,
      onWebhookOutcome: (ok) => metrics.recordWebhookOutcome(ok ? 'delivered' : 'failed'),
      // Write-back: what the appointment's external calendars should show; the calendar worker does it.
      calendars: {
        async reconcile(event) {
          await externalCalendars.writeBack.reconcile(event.companyId, event.appointmentId);
          externalCalendars.kick();
        },
      },
      webhooks: {
        activeFor: activeWebhooksFor,
        start: startDelivery,
        finish: finishDelivery,
        deliver: (options) => deliverWebhook({ ...options, ...webhookTest }),
      },
      messages: {
        template: templates.resolve,
        render: renderTemplate,
        context: buildMergeContext,
        email,
        sms,
      },
      links: createCustomerLinks({ db, tokens, publicBaseUrl: config.publicBaseUrl, emailFrom: config.emailFrom }),
    });
    app.decorate('dispatcher', dispatcher);
  },
};
