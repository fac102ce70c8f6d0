import { Type } from '@sinclair/typebox';
import type { App } from '../../platform/http/types.js';
import { IdParams, Page, PageQueryFields, Security, Uuid, errorResponses } from '../../platform/http/schemas.js';
import { baseUrlOf } from '../../platform/http/types.js';
import { MACHINE_USER_ADMIN_MESSAGE } from './role-rules.js';
import { requireCompany } from '../../platform/auth/principal.js';
import type { UserService } from './service.js';
import { AcceptInvitationBody, AdjustUsersBody, Invitation, Member, SetUsersBody } from './schemas.js';

const MANAGE = { access: { mode: 'company' as const, roles: ['Owner' as const, 'Admin' as const] } };
/** User administration: Owner or Admin dashboard users only; machine tokens get 403 (docs/api.md, Dashboard users). */
const ADMINISTER = { access: { ...MANAGE.access, machineMessage: MACHINE_USER_ADMIN_MESSAGE } };
const TAGS = ['Users'];

export function registerUserRoutes(app: App, { users, publicBaseUrl }: { users: UserService; publicBaseUrl: string | undefined }) {
  app.addSchema(Member);
  const ref = Type.Ref('DashboardUser');

  app.get(
    '/v3/users',
    {
      config: MANAGE,
      schema: {
        tags: TAGS,
        summary: 'Dashboard users of the company (Owner or Admin)',
        security: Security.company,
        querystring: Type.Object(PageQueryFields(100)),
        response: { 200: Page(ref), ...errorResponses(400, 401, 403) },
      },
    },
    async (request) => {
      const { limit = 20, page = 1 } = request.query;
      return users.list(requireCompany(request.principal).companyId, limit, page);
    },
  );

  app.post(
    '/v3/users/setUsers',
    {
      config: ADMINISTER,
      schema: {
        tags: TAGS,
        summary: 'Update members by email; invite anyone else',
        description:
          'A member of the company has role and access changed at once (data). Anyone else, with an account or not, is sent an invitation by email (invitations) and becomes a member only by accepting it at POST /v3/auth/acceptInvitation with the mailed token. ' +
          'Owner may assign any role; Admin may not assign Owner or change another Admin\'s role. At least one Owner must remain. All changes apply together or not at all. Dashboard users only: machine tokens get 403.',
        security: Security.company,
        body: SetUsersBody,
        response: { 200: Type.Object({ data: Type.Array(ref), invitations: Type.Array(Invitation) }), ...errorResponses(400, 401, 403) },
      },
    },
    async (request) => users.setUsers(requireCompany(request.principal), request.body.users, baseUrlOf(request, publicBaseUrl)),
  );

  app.post(
    '/v3/users/adjustUsers',
    {
      config: ADMINISTER,
      schema: {
        tags: TAGS,
        summary: 'Change role and access of existing dashboard users, by user id',
        security: Security.company,
        body: AdjustUsersBody,
        response: { 200: Type.Object({ data: Type.Array(ref) }), ...errorResponses(400, 401, 403) },
      },
    },
    async (request) => users.adjustUsers(requireCompany(request.principal), request.body.users),
  );

  app.delete(
    '/v3/users/:id',
    {
      config: ADMINISTER,
      schema: {
        tags: TAGS,
        summary: 'Remove a member from the company',
        description:
          'Owner removes anyone; Admin removes Users, Resource-role users and themselves. The last Owner cannot be removed. The member\'s refresh tokens for the company and the client credentials they created are revoked.',
        security: Security.company,
        params: IdParams,
        response: { 204: Type.Null(), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      await users.removeUser(requireCompany(request.principal), request.params.id);
      return reply.status(204).send(null);
    },
  );

  app.post(
    '/v3/auth/acceptInvitation',
    {
      config: { access: { mode: 'none' } },
      schema: {
        tags: ['Identity'],
        summary: 'Accept an invitation with the token mailed to the invited address',
        description:
          'The token proves the caller reads mail at the address. No account yet: password (and optionally name) make one. An account that never confirmed its address: password is required and replaces the old one, ending its sessions. A confirmed account: send no password; sign in with the existing one.',
        body: AcceptInvitationBody,
        response: {
          200: Type.Object({ companyId: Uuid(), companyName: Type.String(), ...Member.properties }),
          ...errorResponses(400, 401, 403, 429),
        },
      },
    },
    async (request) => users.acceptInvitation(request.body),
  );
}
