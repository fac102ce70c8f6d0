import type { App } from '../../platform/http/types.js';
import type { AppParts } from '../parts.js';
import { createIdentityService } from './service.js';
import { registerIdentityRoutes } from './routes.js';

/** Signup, login, profile, refresh tokens and the docs token. */
export const identityModule = {
  name: 'identity',
  register(app: App, { config, repositories, tokens, passwords }: Pick<AppParts, 'config' | 'repositories' | 'tokens' | 'passwords'>) {
    const identity = createIdentityService({
      repository: repositories.identity,
      tokens,
      signupEnabled: config.signupEnabled,
      passwords,
      signInLock: config.security.signInLock,
    });
    registerIdentityRoutes(app, { identity, publicBaseUrl: config.publicBaseUrl });
  },
};
