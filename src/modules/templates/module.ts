import type { App } from '../../platform/http/types.js';
import type { AppParts } from '../parts.js';
import { createTemplateService } from './service.js';
import { registerTemplateRoutes } from './routes.js';

/** Email and SMS notification templates of the company (platform defaults apply without one). */
export const templatesModule = {
  name: 'templates',
  register(app: App, { repositories }: Pick<AppParts, 'repositories'>) {
    registerTemplateRoutes(app, { templates: createTemplateService({ repository: repositories.templates }) });
  },
};
