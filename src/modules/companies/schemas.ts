import { Type } from '@sinclair/typebox';
import type { Static } from '@sinclair/typebox';
import { Nullable, PageQueryFields, Uuid } from '../../platform/http/schemas.js';
import { IncludeQuery, ReminderOffsets, StringEnum } from '../catalog/fields.js';
import { BOOKING_FIELD_NAMES } from '../../domain/booking-page.js';

/** The booking page and embed settings; all of it is public (GET /v3/public/company shows it). */
export const BookingPageSettingsSchema = Type.Object(
  {
    brandColor: Type.Optional(Nullable(Type.String({ pattern: '^#[0-9a-fA-F]{6}$', description: 'Colour of buttons and links, #rrggbb' }))),
    logoUrl: Type.Optional(Nullable(Type.String({ maxLength: 2048, description: 'An https image shown above the page title' }))),
    currency: Type.Optional(Nullable(Type.String({ pattern: '^[A-Z]{3}$', description: 'ISO 4217 code the page shows fees in' }))),
    fields: Type.Optional(
      Type.Array(
        Type.Object(
          {
            name: StringEnum(BOOKING_FIELD_NAMES, { description: 'The appointment custom field the answer is stored in' }),
            label: Type.String({ minLength: 1, maxLength: 100, description: 'The question shown to the visitor' }),
            required: Type.Boolean(),
          },
          { additionalProperties: false },
        ),
        { maxItems: 10, description: 'Custom fields the booking page asks, in this order' },
      ),
    ),
  },
  { additionalProperties: false, description: 'Booking page and embed settings (docs/api.md, Booking page settings)' },
);

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
    bookingPage: BookingPageSettingsSchema,
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
  bookingPage: Type.Optional(BookingPageSettingsSchema),
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
