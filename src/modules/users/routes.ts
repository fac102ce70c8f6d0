import { Type } from '@sinclair/typebox';
import type { App } from '../../platform/http/types.js';
import { Email, Page, PageQueryFields, Security, Uuid, errorResponses } from '../../platform/http/schemas.js';
import { requireCompany } from '../../platform/auth/principal.js';
import { IdList, StringEnum } from '../catalog/fields.js';
import type { UserService } from './service.js';

const Role = StringEnum(['Owner', 'Admin', 'User', 'Resource']);
const Access = {
  role: Type.Optional(Role),
  locationAccessMode: Type.Optional(StringEnum(['COMPANY', 'LOCATIONS'], { description: 'COMPANY: every location; LOCATIONS: only allowedLocationIds' })),
  allowedLocationIds: Type.Optional(IdList('Locations the user may see and change, with LOCATIONS')),
  linkedResourceId: Type.Optional(Type.Union([Uuid(), Type.Null()], { description: 'Required when the role is Resource' })),
};

const Member = Type.Object(
  {
    id: Uuid({ description: 'User id' }),
    email: Type.String(),
    name: Type.String(),
    role: Role,
    locationAccessMode: Type.String(),
    allowedLocationIds: Type.Array(Uuid()),
    linkedResourceId: Type.Union([Uuid(), Type.Null()]),
    createdAt: Type.String({ format: 'date-time' }),
    updatedAt: Type.String({ format: 'date-time' }),
    temporaryPassword: Type.Optional(Type.String({ description: 'Only for an account setUsers just created without a password; shown once' })),
  },
  { $id: 'DashboardUser' },
);

const MANAGE = { access: { mode: 'company' as const, roles: ['Owner' as const, 'Admin' as const] } };
const TAGS = ['Users'];

export function registerUserRoutes(app: App, { users }: { users: UserService }) {
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
      config: MANAGE,
      schema: {
        tags: TAGS,
        summary: 'Add or update dashboard users by email, with role and access',
        description: 'Owner may assign any role; Admin may not assign Owner or change another Admin\'s role. At least one Owner must remain. All changes apply together or not at all.',
        security: Security.company,
        body: Type.Object(
          {
            users: Type.Array(
              Type.Object(
                {
                  email: Email(),
                  name: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
                  password: Type.Optional(Type.String({ minLength: 8, maxLength: 256, description: 'For a new account; omitted, a temporary one is returned' })),
                  ...Access,
                },
                { additionalProperties: false },
              ),
              { minItems: 1, maxItems: 100 },
            ),
          },
          { additionalProperties: false },
        ),
        response: { 200: Type.Object({ data: Type.Array(ref) }), ...errorResponses(400, 401, 403) },
      },
    },
    async (request) => users.setUsers(requireCompany(request.principal), request.body.users),
  );

  app.post(
    '/v3/users/adjustUsers',
    {
      config: MANAGE,
      schema: {
        tags: TAGS,
        summary: 'Change role and access of existing dashboard users, by user id',
        security: Security.company,
        body: Type.Object(
          {
            users: Type.Array(Type.Object({ id: Uuid(), ...Access }, { additionalProperties: false }), { minItems: 1, maxItems: 100 }),
          },
          { additionalProperties: false },
        ),
        response: { 200: Type.Object({ data: Type.Array(ref) }), ...errorResponses(400, 401, 403) },
      },
    },
    async (request) => users.adjustUsers(requireCompany(request.principal), request.body.users),
  );
}
