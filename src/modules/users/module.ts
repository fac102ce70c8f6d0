import type { App } from '../../platform/http/types.js';
import type { AppParts } from '../parts.js';
import { createUserService } from './service.js';
import { registerUserRoutes } from './routes.js';

/** Dashboard users: memberships and roles, invitations (mailed at once, not through the outbox), removal. */
export const usersModule = {
  name: 'users',
  register(app: App, { db, config, repositories, passwords, email }: Pick<AppParts, 'db' | 'config' | 'repositories' | 'passwords' | 'email'>) {
    const users = createUserService({
      db,
      repository: repositories.users,
      passwords,
      email,
      invitationTtlSeconds: config.security.invitationTtlSeconds,
    });
    registerUserRoutes(app, { users, publicBaseUrl: config.publicBaseUrl });
  },
};
