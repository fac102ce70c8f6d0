import { randomUUID } from 'node:crypto';
import { ApiError, conflict, forbidden, unauthorized, validationError } from '../../platform/errors.js';
import { COMMON_PASSWORD_MESSAGE, isCommonPassword } from '../../platform/auth/passwords.js';
import type { PasswordHasher } from '../../platform/auth/passwords.js';
import { SUSPENDED_MESSAGE } from '../../platform/auth/authenticate.js';
import type { SecurityConfig } from '../../platform/config.js';
import { TokenError } from '../../platform/auth/tokens.js';
import type { TokenService } from '../../platform/auth/tokens.js';
import type { IdentityRepository } from './repository.js';

export interface IdentityServiceDeps {
  repository: IdentityRepository;
  tokens: TokenService;
  signupEnabled: boolean;
  passwords: PasswordHasher;
  signInLock: SecurityConfig['signInLock'];
}

/** 400 on the field when a new password is one of the common ones. */
export function assertUncommonPassword(password: string, path = 'password') {
  if (isCommonPassword(password)) throw validationError('body', path, COMMON_PASSWORD_MESSAGE);
}

/** 429 while an account is locked after failed sign-ins; no password is checked meanwhile. */
function assertNotLocked(lockedUntil: Date | null, now = Date.now()) {
  if (!lockedUntil || lockedUntil.getTime() <= now) return;
  const seconds = Math.max(1, Math.ceil((lockedUntil.getTime() - now) / 1000));
  throw new ApiError(429, `Sign-in rate limit exceeded: too many failed sign-ins for this account; try again in ${seconds} seconds`, [], undefined, {
    'Retry-After': String(seconds),
  });
}

function publicUser(user: { id: string; email: string; name: string; createdAt: Date }) {
  return { id: user.id, email: user.email, name: user.name, createdAt: user.createdAt.toISOString() };
}

export function createIdentityService({ repository, tokens, signupEnabled, passwords, signInLock }: IdentityServiceDeps) {
  async function dashboardSession(user: { id: string; tokenVersion: number }) {
    return {
      accessToken: await tokens.signDashboardToken({ userId: user.id, tokenVersion: user.tokenVersion }),
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
      assertUncommonPassword(input.password);
      const passwordHash = await passwords.hash(input.password);
      const user = await repository.insertUser({ id: randomUUID(), email: input.email, name: input.name, passwordHash });
      if (!user) throw conflict('A user with this email already exists');
      return publicUser(user);
    },

    async login(input: { email: string; password: string }) {
      const user = await repository.userByEmail(input.email);
      if (!user || !user.passwordHash) {
        await passwords.burn(input.password);
        throw unauthorized('Invalid email or password');
      }
      assertNotLocked(user.signInLockedUntil);
      if (!(await passwords.verify(user.passwordHash, input.password))) {
        // The failure that locks the account says so at once.
        assertNotLocked(await repository.recordFailedSignIn(user.id, signInLock));
        throw unauthorized('Invalid email or password');
      }
      if (user.failedSignIns > 0) await repository.clearFailedSignIns(user.id);
      return dashboardSession(user);
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
      const changes: { name?: string } = {};
      if (input.name !== undefined) changes.name = input.name;
      if (input.password === undefined) return publicUser(await repository.updateUser(userId, changes));
      assertUncommonPassword(input.password);
      if (user.passwordHash) {
        if (input.currentPassword === undefined) {
          throw validationError('body', 'currentPassword', 'currentPassword is required to change the password');
        }
        // A stolen session must not become a way to guess the password: the same lock as sign-in.
        assertNotLocked(user.signInLockedUntil);
        if (!(await passwords.verify(user.passwordHash, input.currentPassword))) {
          assertNotLocked(await repository.recordFailedSignIn(user.id, signInLock));
          throw validationError('body', 'currentPassword', 'currentPassword is not correct');
        }
      }
      const updated = await repository.changePassword(userId, { ...changes, passwordHash: await passwords.hash(input.password) });
      // Every earlier session has ended, this one included: the answer carries its successor.
      return { ...publicUser(updated), accessToken: (await dashboardSession(updated)).accessToken };
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
      const membership = await repository.membership(claims.companyId, claims.userId);
      if (!membership) {
        await repository.revokeRefreshFamily(claims.companyId, claims.familyId, now);
        throw unauthorized('The user no longer belongs to the company of this refresh token');
      }
      // Refresh tokens are an Owner's (generateRefreshToken): one held by a demoted user ends here.
      if (membership.role !== 'Owner') {
        await repository.revokeRefreshFamily(claims.companyId, claims.familyId, now);
        throw forbidden('Refresh tokens are for Owners; this user is no longer an Owner of the company');
      }
      const user = await repository.userById(claims.userId);
      if (!user) throw unauthorized('Invalid or expired refresh token');
      return {
        ...(await dashboardSession(user)),
        refreshToken: await mintRefreshToken(claims.companyId, claims.userId, claims.familyId),
      };
    },

    /**
     * Links an identity provider's account to the signed-in user: the consent that lets the
     * provider sign in to an account that has a password.
     */
    async linkIdentity(userId: string, identityToken: string) {
      let verified;
      try {
        verified = await tokens.verifyBearer(identityToken);
      } catch (error) {
        if (error instanceof TokenError) throw validationError('body', 'identityToken', error.message);
        throw error;
      }
      if (verified.kind !== 'oidc') throw validationError('body', 'identityToken', 'identityToken must be a token of the configured identity provider');
      if (!(await repository.linkIdentity(userId, verified.issuer, verified.subject))) {
        throw conflict('This identity is linked to another account');
      }
      return { issuer: verified.issuer, subject: verified.subject };
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
