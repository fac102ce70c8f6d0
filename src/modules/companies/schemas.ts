import { Type } from '@sinclair/typebox';
import type { Static } from '@sinclair/typebox';
import { PageQueryFields, Uuid } from '../../platform/http/schemas.js';
import { IncludeQuery, ReminderOffsets } from '../catalog/fields.js';

export const Company = Type.Object(
  {
    id: Uuid(),
    name: Type.String(),
    publicClientId: Type.String({ description: 'Sent by public booking pages as x-client-id' }),
    allowedDomains: Type.Array(Type.String(), { description: 'Hosts whose Origin may call /v3/public/*' }),
    disableEmailNotifications: Type.Boolean(),
    disableSmsNotifications: Type.Boolean(),
    disableEmailAndSmsNotifications: Type.Boolean({ description: 'Legacy (v1): true only when both channels are disabled' }),
    suspended: Type.Boolean(),
    reminderOffsets: Type.Array(Type.Integer(), { description: 'Minutes before the start at which APPOINTMENT_REMINDER is sent for booked appointments (a location may override)' }),
    locations: Type.Optional(
      Type.Array(Type.Object({ id: Uuid(), name: Type.String(), timezoneName: Type.String() }), { description: 'With include=locations on lists' }),
    ),
    apiKeyPrefix: Type.Optional(Type.String({ description: 'Start of the API key, to recognise it. Omitted for roles that may not see credentials.' })),
    createdAt: Type.String({ format: 'date-time' }),
    updatedAt: Type.String({ format: 'date-time' }),
  },
  { $id: 'Company' },
);

export const CompanyWithApiKey = Type.Object({
  ...Company.properties,
  apiKey: Type.String({ description: 'Shown once. Only a hash is stored.' }),
});

const Name = Type.String({ minLength: 1, maxLength: 255, 'x-codes': { required: 'COMPANY-112', minLength: 'COMPANY-112' } });
const WriteFields = {
  allowedDomains: Type.Optional(Type.Array(Type.String({ maxLength: 300 }), { maxItems: 100 })),
  disableEmailNotifications: Type.Optional(Type.Boolean()),
  disableSmsNotifications: Type.Optional(Type.Boolean()),
  reminderOffsets: Type.Optional(ReminderOffsets),
  disableNotifications: Type.Optional(
    Type.Boolean({ deprecated: true, description: 'Write only. When neither channel flag is in the body, both take this value.' }),
  ),
};

export const CompanyCreateBody = Type.Object({ name: Name, ...WriteFields }, { additionalProperties: false });
export const CompanyUpdateBody = Type.Object({ name: Type.Optional(Name), ...WriteFields }, { additionalProperties: false });
export const CompanyListQuery = Type.Object({
  ...PageQueryFields(100),
  search: Type.Optional(Type.String({ maxLength: 255, description: 'Case-insensitive prefix of the name' })),
  include: IncludeQuery(['locations']),
});

export type CompanyCreate = Static<typeof CompanyCreateBody>;
export type CompanyUpdate = Static<typeof CompanyUpdateBody>;
