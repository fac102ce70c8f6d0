import type { App } from '../../platform/http/types.js';
import type { AppParts } from '../parts.js';
import { createWebhookService } from './service.js';
import { registerWebhookRoutes } from './routes.js';

/** Webhook configuration of each location and the delivery records the company can read. */
export const webhooksModule = {
  name: 'webhooks',
  register(app: App, { db, repositories }: Pick<AppParts, 'db' | 'repositories'>) {
    registerWebhookRoutes(app, { webhooks: createWebhookService({ db, repository: repositories.webhooks }) });
  },
};
