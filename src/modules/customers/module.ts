import type { App } from '../../platform/http/types.js';
import type { AppParts } from '../parts.js';
import { createCustomerService } from './service.js';
import { registerCustomerRoutes } from './routes.js';

export const customersModule = {
  name: 'customers',
  register(app: App, { repositories }: Pick<AppParts, 'repositories'>) {
    registerCustomerRoutes(app, { customers: createCustomerService({ repository: repositories.customers }) });
  },
};
