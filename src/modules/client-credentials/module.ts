import type { App } from '../../platform/http/types.js';
import type { AppParts } from '../parts.js';
import { createClientCredentialService } from './service.js';
import { registerClientCredentialRoutes } from './routes.js';

/** Machine clients: client ids and secrets, and POST /v3/oauth/token. */
export const clientCredentialsModule = {
  name: 'client-credentials',
  register(app: App, { repositories, tokens }: Pick<AppParts, 'repositories' | 'tokens'>) {
    registerClientCredentialRoutes(app, { clientCredentials: createClientCredentialService({ repository: repositories.clientCredentials, tokens }) });
  },
};
