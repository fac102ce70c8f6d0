import { Type } from '@sinclair/typebox';
import type { App } from '../../platform/http/types.js';
import { Page, errorResponses, Security } from '../../platform/http/schemas.js';
import { requireCompany } from '../../platform/auth/principal.js';
import { registerDeleteRoute } from '../catalog/routes.js';
import { ClientCredential, ClientCredentialCreateBody, ClientCredentialListQuery, CreatedClientCredential, TokenAnswer, TokenRequestBody } from './schemas.js';
import type { ClientCredentialService } from './service.js';

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
        body: TokenRequestBody,
        response: { 200: TokenAnswer, ...errorResponses(400, 401, 403) },
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
        body: ClientCredentialCreateBody,
        response: { 201: CreatedClientCredential, ...errorResponses(400, 401, 403) },
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
        querystring: ClientCredentialListQuery,
        response: { 200: Page(Type.Ref('ClientCredential')), ...errorResponses(400, 401, 403) },
      },
    },
    async (request) => {
      const { limit = 20, page = 1 } = request.query;
      return clientCredentials.list(requireCompany(request.principal).companyId, { limit, page });
    },
  );

  registerDeleteRoute(
    app,
    '/v3/clientId/:id',
    {
      config: { access: MANAGE },
      tags: TAGS,
      summary: 'Revoke a client id: no token is issued for it again, and its live tokens stop working',
      security: Security.dashboardCompany,
    },
    (principal, id) => clientCredentials.revoke(principal.companyId, id),
  );
}
