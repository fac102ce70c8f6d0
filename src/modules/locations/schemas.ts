import { Type } from '@sinclair/typebox';
import type { Static } from '@sinclair/typebox';
import { Nullable, PageQueryFields, Uuid } from '../../platform/http/schemas.js';
import { Address, EmailField, IncludeQuery, Name, Phone, ReminderOffsets, Summary, TimezoneName, WeeklyAvailability } from '../catalog/fields.js';

/** What `include` may name on a list; a single read has them all. */
export const LOCATION_INCLUDES = ['services', 'resources', 'address', 'company'];

const Fields = {
  name: Name(50, { required: 'LOCATION-117', minLength: 'LOCATION-117', maxLength: 'LOCATION-125' }),
  timezoneName: TimezoneName({ required: 'LOCATION-120', format: 'LOCATION-101' }),
  address: Type.Optional(Nullable(Address)),
  phone: Type.Optional(Nullable(Phone('LOCATION-126'))),
  email: Type.Optional(Nullable(EmailField())),
  weeklyAvailability: Type.Optional(Nullable(WeeklyAvailability)),
  bookingTimerMinutes: Type.Optional(
    Type.Integer({ minimum: 1, maximum: 30, 'x-codes': { minimum: 'SETTINGS-102', maximum: 'SETTINGS-102' }, description: 'Minutes a hold lasts (1 to 30, default 10)' }),
  ),
  /** null: the company's reminder offsets apply. */
  reminderOffsets: Type.Optional(Nullable(ReminderOffsets)),
  legacyId: Type.Optional(Nullable(Type.String({ maxLength: 100 }))),
};

export const Location = Type.Object(
  {
    id: Uuid(),
    companyId: Uuid(),
    name: Type.String(),
    timezoneName: Type.String(),
    phone: Nullable(Type.String()),
    email: Nullable(Type.String()),
    weeklyAvailability: Nullable(WeeklyAvailability),
    bookingTimerMinutes: Type.Integer(),
    reminderOffsets: Nullable(Type.Array(Type.Integer(), { description: 'Minutes before the start for APPOINTMENT_REMINDER; null: the company\'s' })),
    legacyId: Nullable(Type.String()),
    createdAt: Type.String({ format: 'date-time' }),
    updatedAt: Type.String({ format: 'date-time' }),
    address: Type.Optional(Nullable(Address)),
    company: Type.Optional(Summary),
    services: Type.Optional(Type.Array(Summary)),
    resources: Type.Optional(Type.Array(Summary)),
  },
  { $id: 'Location', description: 'Lists omit address, company, services and resources unless `include` names them; a single read has them all.' },
);

export const LocationCreateBody = Type.Object(Fields, { additionalProperties: false });
export const LocationUpdateBody = Type.Object(
  { ...Fields, name: Type.Optional(Fields.name), timezoneName: Type.Optional(Fields.timezoneName) },
  { additionalProperties: false },
);
export const LocationListQuery = Type.Object({ ...PageQueryFields(500), include: IncludeQuery(LOCATION_INCLUDES) });

export type LocationCreate = Static<typeof LocationCreateBody>;
export type LocationUpdate = Static<typeof LocationUpdateBody>;
