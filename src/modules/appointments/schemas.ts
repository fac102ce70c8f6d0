import { Type } from '@sinclair/typebox';
import type { Static } from '@sinclair/typebox';
import { Instant, LocalDate, Nullable, PageQueryFields, Uuid } from '../../platform/http/schemas.js';
import { APPOINTMENT_STATUSES } from '../../domain/appointment-status.js';
import type { AppointmentStatus } from '../../domain/appointment-status.js';
import { CustomFields, CustomFieldsOut, EmailField, Phone, StringEnum } from '../catalog/fields.js';
import type { CUSTOM_FIELD_NAMES } from '../catalog/fields.js';

/**
 * The route schemas of the appointment routes, and the service inputs they type: every input the
 * service takes is `Static<typeof ...>` of the schema its route validates.
 */

export const AppointmentSchema = Type.Object(
  {
    id: Uuid(),
    companyId: Uuid(),
    locationId: Uuid(),
    serviceId: Uuid(),
    customerId: Nullable(Uuid()),
    resourceIds: Type.Array(Uuid()),
    status: StringEnum(APPOINTMENT_STATUSES, { description: 'IN held, RS reserved, BK booked, CN cancelled, RE rescheduled away' }),
    startTime: Type.String({ format: 'date-time' }),
    endTime: Type.String({ format: 'date-time' }),
    duration: Type.Integer({ description: 'Minutes' }),
    padding: Type.Integer({ description: 'Minutes after endTime that stay occupied (the service\'s padding when booked)' }),
    timezoneName: Type.String({ description: 'The location\'s IANA time zone' }),
    expiresAt: Nullable(Type.String({ format: 'date-time', description: 'When a hold (IN) gives its slot back' })),
    confirmed: Type.Boolean(),
    allowPaddingOverflow: Type.Boolean(),
    ignoreExternalEvents: Type.Boolean(),
    notes: Nullable(Type.String()),
    ...CustomFieldsOut(),
    rescheduledFromId: Nullable(Uuid()),
    rescheduledToId: Nullable(Uuid()),
    legacyId: Nullable(Type.String()),
    createdAt: Type.String({ format: 'date-time' }),
    updatedAt: Type.String({ format: 'date-time' }),
  },
  { $id: 'Appointment' },
);

const CustomFieldsIn = CustomFields();

const SlotFields = {
  Unavailability: Type.Object(
    {
      startTime: Instant({ description: 'ISO 8601 with an offset' }),
      endTime: Instant({ description: 'ISO 8601 with an offset' }),
    },
    { additionalProperties: false },
  ),
  duration: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_080, description: 'Minutes; must equal endTime - startTime' })),
  overrideDuration: Type.Optional(Type.Boolean({ description: 'Accepted for v1 compatibility: a duration other than the service\'s is allowed whenever the service permits it (durationSelect)' })),
  ResourceIds: Type.Optional(Type.Array(Uuid(), { maxItems: 50, uniqueItems: true, description: 'Required when the service\'s roundRobin is NONE; with RANDOM or BALANCED the pool to pick from' })),
  allowPaddingOverflow: Type.Optional(Type.Boolean({ description: 'Default: the service\'s' })),
  ignoreExternalEvents: Type.Optional(Type.Boolean({ description: 'Default: the service\'s' })),
  notes: Type.Optional(Nullable(Type.String({ maxLength: 5000 }))),
  ...CustomFieldsIn,
};

// A booking page cannot choose to overrun padding or external calendar events (the service
// decides), nor write notes or custom fields on a hold: the company's own customer mail prints
// notes, so a stranger's text would reach the customer as the company's (issue 12). The custom
// fields the company's page asks (bookingPage.fields) are answered at book, PublicBookBody.
export const PublicSlotBody = Type.Object(
  {
    Unavailability: SlotFields.Unavailability,
    duration: SlotFields.duration,
    overrideDuration: SlotFields.overrideDuration,
    ResourceIds: SlotFields.ResourceIds,
  },
  { additionalProperties: false },
);

const CustomerFields = {
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 255, description: 'Customer name, when CustomerId is not given' })),
  email: Type.Optional(EmailField({ required: 'BOOKING-109', format: 'EMAIL-102', maxLength: 'EMAIL-102' })),
  phone: Type.Optional(Nullable(Phone('CONTACT-101'))),
};

export const CreateBody = Type.Object(
  {
    ...SlotFields,
    CustomerId: Type.Optional(Uuid()),
    ...CustomerFields,
    legacyId: Type.Optional(Nullable(Type.String({ maxLength: 100 }))),
  },
  { additionalProperties: false },
);

/** The creation body; a CustomerId, when sent, must be the appointment's own customer. */
export const RescheduleBody = Type.Object(
  { ...CreateBody.properties, Unavailability: Type.Optional(SlotFields.Unavailability) },
  { additionalProperties: false },
);

/**
 * Body of create, hold and reschedule (the specification's creation body). Unavailability is
 * optional here as it is for reschedule; the service answers its absence with BOOKING-139.
 */
export type SlotRequest = Static<typeof RescheduleBody>;

/** The custom fields field1 to field10 of a body. */
export type CustomFieldValues = Pick<SlotRequest, (typeof CUSTOM_FIELD_NAMES)[number]>;

export const PublicCreateQuery = Type.Object({ LocationId: Uuid(), ServiceId: Uuid() });
export const CreateQuery = Type.Object({
  ...PublicCreateQuery.properties,
  CustomerId: Type.Optional(Uuid({ description: 'The customer, as in the body (either place; both and different is a 400)' })),
});

/** The query of create and hold: the location and service, and the customer when not in the body. */
export type NewSlotQuery = Static<typeof CreateQuery>;

export const IdempotencyHeaders = Type.Object({
  'idempotency-key': Type.Optional(Type.String({ minLength: 1, maxLength: 255, description: 'A retried POST with the same key returns the first answer instead of booking twice (kept 24 hours)' })),
});

export const ReserveBody = Type.Object({ allowPaddingOverflow: Type.Optional(Type.Boolean()), ignoreExternalEvents: Type.Optional(Type.Boolean()) }, { additionalProperties: false });
export type ReserveRequest = Static<typeof ReserveBody>;

export const BookBody = Type.Object({ CustomerId: Type.Optional(Uuid()), ...CustomerFields }, { additionalProperties: false });
/** The customer of book: CustomerId, or the details to find or create one by (a hold without one). */
export type BookRequest = Static<typeof BookBody>;

/**
 * The visitor's details, and the answers to the custom fields the company's booking page asks
 * (bookingPage.fields, checked by bookingFieldProblems in src/domain/booking-page.ts): a field the
 * page does not ask is refused, so a page never writes the fields a company keeps for its staff.
 */
export const PublicBookBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 255 }),
    email: EmailField({ required: 'BOOKING-109', format: 'EMAIL-102', maxLength: 'EMAIL-102' }),
    phone: Type.Optional(Nullable(Phone('CONTACT-101'))),
    ...CustomFieldsIn,
  },
  { additionalProperties: false },
);

export const UpdateBody = Type.Object(
  { notes: Type.Optional(Nullable(Type.String({ maxLength: 5000 }))), CustomerId: Type.Optional(Uuid()), ...CustomFieldsIn },
  { additionalProperties: false },
);
export type UpdateRequest = Static<typeof UpdateBody>;

const ListFilters = {
  LocationId: Type.Optional(Uuid()),
  ServiceId: Type.Optional(Uuid()),
  ResourceId: Type.Optional(Uuid()),
  CustomerId: Type.Optional(Uuid()),
  status: Type.Optional(
    Type.Array(Type.String({ pattern: `^(${APPOINTMENT_STATUSES.join('|')})(,(${APPOINTMENT_STATUSES.join('|')}))*$`, description: 'IN, RS, BK, CN or RE' }), {
      maxItems: 5,
      description: 'One or more statuses, comma-separated or repeated',
    }),
  ),
  startDate: Type.Optional(LocalDate({ description: 'Appointments starting on or after this date (the location\'s zone with LocationId, else UTC)' })),
  endDate: Type.Optional(LocalDate({ description: 'Appointments starting on or before this date' })),
  sort: Type.Optional(StringEnum(['startTime', 'createdAt'], { default: 'startTime' })),
  order: Type.Optional(StringEnum(['asc', 'desc'], { default: 'asc' })),
};

export const ListQuerySchema = Type.Object({ ...ListFilters, ...PageQueryFields(100) });
export const CursorQuerySchema = Type.Object({
  ...ListFilters,
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20, description: 'Page size, at most 100', 'x-codes': { maximum: 'LIMIT-100' } })),
  cursor: Type.Optional(Type.String({ maxLength: 4000, description: 'From nextCursor; a continuation sends nothing else' })),
});

/** The filters, sort, order and limit of a list, with `status` split into statuses (the route's statusList). */
export type ListQuery = Omit<Static<typeof CursorQuerySchema>, 'status' | 'cursor'> & { status?: AppointmentStatus[] | undefined };
/** A page of the paged list. */
export type PageListQuery = ListQuery & Pick<Static<typeof ListQuerySchema>, 'page'>;
