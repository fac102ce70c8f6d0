import { Type } from '@sinclair/typebox';
import type { App } from '../../platform/http/types.js';
import { baseUrlOf } from '../../platform/http/types.js';
import { Email, Uuid, errorResponses, Security } from '../../platform/http/schemas.js';
import { requireCompany, requireDashboardUser, requireUser } from '../../platform/auth/principal.js';
import type { IdentityService } from './service.js';
import { DashboardSession, Password, User } from './schemas.js';

const TAGS = ['Identity'];

interface IdentityRouteDeps {
  identity: IdentityService;
  publicBaseUrl: string | undefined;
}

export function registerIdentityRoutes(app: App, deps: IdentityRouteDeps) {
  registerAccountRoutes(app, deps);
  registerTokenRoutes(app, deps);
}

/** Signup, sign-in and the signed-in user's own profile. */
function registerAccountRoutes(app: App, { identity }: IdentityRouteDeps) {
  app.post(
    '/v3/auth/signup',
    {
      config: { access: { mode: 'none' } },
      schema: {
        tags: TAGS,
        summary: 'Create a dashboard user',
        body: Type.Object(
          { email: Email(), password: Password, name: Type.String({ minLength: 1, maxLength: 255 }) },
          { additionalProperties: false },
        ),
        response: { 201: User, ...errorResponses(400, 403, 409) },
      },
    },
    async (request, reply) => reply.status(201).send(await identity.signup(request.body)),
  );

  app.post(
    '/v3/auth/login',
    {
      config: { access: { mode: 'none' } },
      schema: {
        tags: TAGS,
        summary: 'Sign in; returns the dashboard JWT',
        body: Type.Object({ email: Type.String({ maxLength: 254 }), password: Type.String({ maxLength: 256 }) }, { additionalProperties: false }),
        response: { 200: DashboardSession, ...errorResponses(400, 401, 429) },
      },
    },
    async (request, reply) => {
      reply.header('cache-control', 'no-store');
      return identity.login(request.body);
    },
  );

  app.get(
    '/v3/auth/me',
    {
      config: { access: { mode: 'user', machineMessage: 'Machine tokens have no dashboard profile' } },
      schema: {
        tags: TAGS,
        summary: 'The signed-in dashboard user and the companies they belong to',
        security: Security.dashboardUser,
        response: {
          200: Type.Object({
            ...User.properties,
            companies: Type.Array(Type.Object({ companyId: Uuid(), companyName: Type.String(), role: Type.String() })),
          }),
          ...errorResponses(401, 403),
        },
      },
    },
    async (request) => identity.me(requireUser(request.principal).userId),
  );

  app.put(
    '/v3/auth/me',
    {
      config: { access: { mode: 'user', machineMessage: 'Machine tokens cannot change dashboard profiles' } },
      schema: {
        tags: TAGS,
        summary: 'Change the signed-in user\'s profile (name, password)',
        security: Security.dashboardUser,
        body: Type.Object(
          {
            name: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
            password: Type.Optional(Password),
            currentPassword: Type.Optional(Type.String({ maxLength: 256 })),
          },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Object({
            ...User.properties,
            accessToken: Type.Optional(
              Type.String({ description: 'After a password change only: a new dashboard JWT. Every session issued before the change (this one included) has ended, and every refresh token is revoked.' }),
            ),
          }),
          ...errorResponses(400, 401, 403, 429),
        },
      },
    },
    async (request, reply) => {
      reply.header('cache-control', 'no-store');
      return identity.updateMe(requireUser(request.principal).userId, request.body);
    },
  );

}

/** Identity links, refresh tokens and the docs handoff token. */
function registerTokenRoutes(app: App, deps: IdentityRouteDeps) {
  const { identity } = deps;
  app.post(
    '/v3/auth/me/identities',
    {
      config: { access: { mode: 'user', machineMessage: 'Machine tokens have no dashboard profile' } },
      schema: {
        tags: TAGS,
        summary: 'Link an identity provider account to the signed-in user',
        description:
          'An account that has a password is never linked to an identity provider by email alone. Its owner signs in and sends an identity token of the configured provider here; from then on that provider account signs in as this user.',
        security: Security.dashboardUser,
        body: Type.Object({ identityToken: Type.String({ minLength: 1, maxLength: 8192 }) }, { additionalProperties: false }),
        response: { 200: Type.Object({ issuer: Type.String(), subject: Type.String() }), ...errorResponses(400, 401, 403, 409) },
      },
    },
    async (request) => identity.linkIdentity(requireUser(request.principal).userId, request.body.identityToken),
  );

  app.post(
    '/v3/auth/generateRefreshToken',
    {
      config: {
        access: { mode: 'company', roles: ['Owner'], machineMessage: 'Machine tokens cannot generate dashboard refresh tokens' },
      },
      schema: {
        tags: TAGS,
        summary: 'Mint a long-lived refresh token (Owner only)',
        security: Security.dashboardCompany,
        response: {
          200: Type.Object({ refreshToken: Type.String(), tokenType: Type.Literal('refresh'), expiresIn: Type.Integer() }),
          ...errorResponses(401, 403),
        },
      },
    },
    async (request, reply) => {
      const principal = requireDashboardUser(request.principal);
      reply.header('cache-control', 'no-store');
      return identity.generateRefreshToken(principal.companyId, principal.userId);
    },
  );

  app.post(
    '/v3/auth/token',
    {
      config: { access: { mode: 'none' } },
      schema: {
        tags: TAGS,
        summary: 'Exchange a refresh token for a new dashboard access token (the refresh token is rotated)',
        body: Type.Object({ refresh_token: Type.String({ minLength: 1, maxLength: 4096 }) }, { additionalProperties: false }),
        response: {
          200: Type.Object({ ...DashboardSession.properties, refreshToken: Type.String({ description: 'The rotated refresh token; the one sent is spent' }) }),
          ...errorResponses(400, 401, 403),
        },
      },
    },
    async (request, reply) => {
      reply.header('cache-control', 'no-store');
      return identity.exchangeRefreshToken(request.body.refresh_token);
    },
  );

  app.post(
    '/v3/auth/docsAuth',
    {
      config: { access: { mode: 'company' } },
      schema: {
        tags: TAGS,
        summary: 'Get a docs handoff token that opens /docs personalised for the company',
        description: 'The token opens /docs only; it is refused (401) on every /v3 route.',
        security: Security.company,
        response: {
          200: Type.Object({ docsToken: Type.String(), expiresIn: Type.Integer(), docsUrl: Type.String() }),
          ...errorResponses(401, 403),
        },
      },
    },
    async (request) =>
      identity.docsToken(requireCompany(request.principal).companyId, baseUrlOf(request, deps.publicBaseUrl)),
  );
}
