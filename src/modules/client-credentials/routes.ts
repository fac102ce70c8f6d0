import { Type } from '@sinclair/typebox';
import type { App } from '../../platform/http/types.js';
import { IdParams, Page, PageQueryFields, Uuid, errorResponses, Security } from '../../platform/http/schemas.js';
import { requireCompany } from '../../platform/auth/principal.js';
import type { ClientCredentialService } from './service.js';

const ClientCredential = Type.Object(
  {
    id: Uuid({ description: 'Record id, used to revoke' }),
    clientId: Type.String(),
    name: Type.Union([Type.String(), Type.Null()]),
    createdAt: Type.String({ format: 'date-time' }),
    lastUsedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    revokedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  },
  { $id: 'ClientCredential' },
);

const MANAGE = {
  mode: 'company' as const,
  roles: ['Owner' as const, 'Admin' as const],
  machineMessage: 'Machine tokens cannot manage client credentials',
};
const TAGS = ['Credentials'];

export function registerClientCredentialRoutes(app: App, { clientCredentials }: { clientCredentials: ClientCredentialService }) {
  app.addSchema(ClientCredential);

  app.post(
    '/v3/oauth/token',
    {
      config: { access: { mode: 'none' } },
      schema: {
        tags: TAGS,
        summary: 'Get a machine access token (OAuth 2.0 client credentials)',
        description:
          'Form body (application/x-www-form-urlencoded; JSON is accepted too). Credentials in the body or as HTTP Basic. ' +
          'scope is "read", "write" or "read write"; omitted or blank gives both. The token is an HS256 JWT lasting one hour; there is no refresh token.',
        consumes: ['application/x-www-form-urlencoded', 'application/json'],
        body: Type.Object({
          grant_type: Type.String({ description: 'client_credentials' }),
          client_id: Type.Optional(Type.String({ maxLength: 200 })),
          client_secret: Type.Optional(Type.String({ maxLength: 200 })),
          scope: Type.Optional(Type.String({ maxLength: 200 })),
        }),
        response: {
          200: Type.Object({
            access_token: Type.String(),
            token_type: Type.Literal('Bearer'),
            expires_in: Type.Integer(),
            scope: Type.String(),
          }),
          ...errorResponses(400, 401, 403),
        },
      },
    },
    async (request, reply) => {
      reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
      return clientCredentials.issueToken(request.body, request.headers.authorization);
    },
  );

  app.post(
    '/v3/clientId',
    {
      config: { access: MANAGE },
      schema: {
        tags: TAGS,
        summary: 'Create a client id and secret (Owner or Admin); the secret is shown once',
        security: Security.dashboardCompany,
        body: Type.Object({ name: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })) }, { additionalProperties: false }),
        response: {
          201: Type.Object({ ...ClientCredential.properties, clientSecret: Type.String({ description: 'Shown once; only a hash is kept' }) }),
          ...errorResponses(400, 401, 403),
        },
      },
    },
    async (request, reply) => {
      const principal = requireCompany(request.principal);
      const userId = principal.kind === 'dashboard' ? principal.userId : null;
      return reply.status(201).send(await clientCredentials.create(principal.companyId, userId, request.body.name));
    },
  );

  app.get(
    '/v3/clientIds',
    {
      config: { access: MANAGE },
      schema: {
        tags: TAGS,
        summary: 'List the company\'s client ids (never their secrets)',
        security: Security.dashboardCompany,
        querystring: Type.Object(PageQueryFields(100)),
        response: { 200: Page(Type.Ref('ClientCredential')), ...errorResponses(400, 401, 403) },
      },
    },
    async (request) => {
      const { limit = 20, page = 1 } = request.query;
      return clientCredentials.list(requireCompany(request.principal).companyId, limit, page);
    },
  );

  app.delete(
    '/v3/clientId/:id',
    {
      config: { access: MANAGE },
      schema: {
        tags: TAGS,
        summary: 'Revoke a client id: no token is issued for it again, and its live tokens stop working',
        security: Security.dashboardCompany,
        params: IdParams,
        response: { 204: Type.Null(), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      await clientCredentials.revoke(requireCompany(request.principal).companyId, request.params.id);
      return reply.status(204).send(null);
    },
  );
}
