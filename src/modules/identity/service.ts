import { randomUUID } from 'node:crypto';
import { conflict, forbidden, unauthorized, validationError } from '../../platform/errors.js';
import { burnPasswordCheck, hashPassword, verifyPassword } from '../../platform/auth/passwords.js';
import { SUSPENDED_MESSAGE } from '../../platform/auth/authenticate.js';
import { TokenError } from '../../platform/auth/tokens.js';
import type { TokenService } from '../../platform/auth/tokens.js';
import type { IdentityRepository } from './repository.js';

export interface IdentityServiceDeps {
  repository: IdentityRepository;
  tokens: TokenService;
  signupEnabled: boolean;
}

function publicUser(user: { id: string; email: string; name: string; createdAt: Date }) {
  return { id: user.id, email: user.email, name: user.name, createdAt: user.createdAt.toISOString() };
}

export function createIdentityService({ repository, tokens, signupEnabled }: IdentityServiceDeps) {
  async function dashboardSession(userId: string) {
    return {
      accessToken: await tokens.signDashboardToken({ userId }),
      tokenType: 'Bearer' as const,
      expiresIn: tokens.ttls.dashboardTokenTtlSeconds,
    };
  }

  async function mintRefreshToken(companyId: string, userId: string, familyId: string) {
    const tokenId = randomUUID();
    const expiresAt = new Date(Date.now() + tokens.ttls.refreshTokenTtlSeconds * 1000);
    await repository.insertRefreshToken({ companyId, id: tokenId, userId, familyId, expiresAt });
    return tokens.signRefreshToken({ companyId, userId, tokenId, familyId });
  }

  return {
    async signup(input: { email: string; password: string; name: string }) {
      if (!signupEnabled) throw forbidden('Signup is disabled on this deployment');
      const passwordHash = await hashPassword(input.password);
      const user = await repository.insertUser({ id: randomUUID(), email: input.email, name: input.name, passwordHash });
      if (!user) throw conflict('A user with this email already exists');
      return publicUser(user);
    },

    async login(input: { email: string; password: string }) {
      const user = await repository.userByEmail(input.email);
      if (!user || !user.passwordHash) {
        await burnPasswordCheck(input.password);
        throw unauthorized('Invalid email or password');
      }
      if (!(await verifyPassword(user.passwordHash, input.password))) throw unauthorized('Invalid email or password');
      return dashboardSession(user.id);
    },

    async me(userId: string) {
      const user = await repository.userById(userId);
      if (!user) throw unauthorized('Invalid or expired token');
      const companies = await repository.membershipsOfUser(userId);
      return { ...publicUser(user), companies };
    },

    async updateMe(userId: string, input: { name?: string; password?: string; currentPassword?: string }) {
      const user = await repository.userById(userId);
      if (!user) throw unauthorized('Invalid or expired token');
      const changes: { name?: string; passwordHash?: string } = {};
      if (input.name !== undefined) changes.name = input.name;
      if (input.password !== undefined) {
        if (user.passwordHash) {
          if (input.currentPassword === undefined) {
            throw validationError('body', 'currentPassword', 'currentPassword is required to change the password');
          }
          if (!(await verifyPassword(user.passwordHash, input.currentPassword))) {
            throw validationError('body', 'currentPassword', 'currentPassword is not correct');
          }
        }
        changes.passwordHash = await hashPassword(input.password);
      }
      return publicUser(await repository.updateUser(userId, changes));
    },

    /** Owner only (enforced by the route): a long-lived token that /v3/auth/token exchanges. */
    async generateRefreshToken(companyId: string, userId: string) {
      return {
        refreshToken: await mintRefreshToken(companyId, userId, randomUUID()),
        tokenType: 'refresh' as const,
        expiresIn: tokens.ttls.refreshTokenTtlSeconds,
      };
    },

    /**
     * Exchanges a refresh token for a new dashboard access token and rotates it. A token can be
     * spent once; presenting a spent token again revokes its whole family (it was stolen, or
     * replayed), so the thief and the owner both have to sign in again.
     */
    async exchangeRefreshToken(refreshToken: string) {
      let claims;
      try {
        claims = await tokens.verifyRefreshToken(refreshToken);
      } catch (error) {
        if (error instanceof TokenError) throw unauthorized(error.message);
        throw error;
      }
      const now = new Date();
      if (!(await repository.spendRefreshToken(claims.companyId, claims.tokenId, now))) {
        await repository.revokeRefreshFamily(claims.companyId, claims.familyId, now);
        throw unauthorized('Invalid or expired refresh token');
      }
      const company = await repository.companySuspended(claims.companyId);
      if (!company) throw unauthorized('Invalid or expired refresh token');
      if (company.suspendedAt) throw forbidden(SUSPENDED_MESSAGE);
      if (!(await repository.membership(claims.companyId, claims.userId))) {
        await repository.revokeRefreshFamily(claims.companyId, claims.familyId, now);
        throw unauthorized('The user no longer belongs to the company of this refresh token');
      }
      return {
        ...(await dashboardSession(claims.userId)),
        refreshToken: await mintRefreshToken(claims.companyId, claims.userId, claims.familyId),
      };
    },

    async docsToken(companyId: string, baseUrl: string) {
      const docsToken = await tokens.signDocsToken({ companyId });
      return {
        docsToken,
        expiresIn: tokens.ttls.docsTokenTtlSeconds,
        // The fragment never reaches a server log; the page reads it and sends it as a Bearer.
        docsUrl: `${baseUrl}/docs#token=${docsToken}`,
      };
    },
  };
}

export type IdentityService = ReturnType<typeof createIdentityService>;
