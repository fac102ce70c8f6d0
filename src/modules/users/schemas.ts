import { Type } from '@sinclair/typebox';
import type { Static } from '@sinclair/typebox';
import { Email, Uuid } from '../../platform/http/schemas.js';
import { Password } from '../identity/schemas.js';
import { IdList, StringEnum } from '../catalog/fields.js';

export const Role = StringEnum(['Owner', 'Admin', 'User', 'Resource']);
export const Access = {
  role: Type.Optional(Role),
  locationAccessMode: Type.Optional(StringEnum(['COMPANY', 'LOCATIONS'], { description: 'COMPANY: every location; LOCATIONS: only allowedLocationIds' })),
  allowedLocationIds: Type.Optional(IdList('Locations the user may see and change, with LOCATIONS')),
  linkedResourceId: Type.Optional(Type.Union([Uuid(), Type.Null()], { description: 'Required when the role is Resource' })),
};

export const Member = Type.Object(
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
  },
  { $id: 'DashboardUser' },
);

export const Invitation = Type.Object({
  id: Uuid(),
  email: Type.String(),
  role: Role,
  locationAccessMode: Type.String(),
  allowedLocationIds: Type.Array(Uuid()),
  linkedResourceId: Type.Union([Uuid(), Type.Null()]),
  expiresAt: Type.String({ format: 'date-time' }),
  emailSent: Type.Boolean({ description: 'false: the mail could not be sent (or SMTP is not configured); call setUsers again to resend' }),
});

export const AccessFields = Type.Object(Access);
export type AccessFields = Static<typeof AccessFields>;

export const SetUsersBody = Type.Object(
  {
    users: Type.Array(Type.Object({ email: Email(), ...Access }, { additionalProperties: false }), { minItems: 1, maxItems: 100 }),
  },
  { additionalProperties: false },
);
export type SetUserItem = Static<typeof SetUsersBody>['users'][number];

export const AdjustUsersBody = Type.Object(
  {
    users: Type.Array(Type.Object({ id: Uuid(), ...Access }, { additionalProperties: false }), { minItems: 1, maxItems: 100 }),
  },
  { additionalProperties: false },
);
export type AdjustUserItem = Static<typeof AdjustUsersBody>['users'][number];

export const AcceptInvitationBody = Type.Object(
  { token: Type.String({ minLength: 1, maxLength: 200 }), password: Type.Optional(Password), name: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })) },
  { additionalProperties: false },
);
export type AcceptInvitationInput = Static<typeof AcceptInvitationBody>;
