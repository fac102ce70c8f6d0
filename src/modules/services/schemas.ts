import { Type } from '@sinclair/typebox';
import type { Static, TProperties } from '@sinclair/typebox';
import { Nullable, PageQueryFields, Uuid } from '../../platform/http/schemas.js';
import { CustomFields, CustomFieldsOut, IdList, IncludeQuery, Name, StringEnum, Summary, WeeklyAvailability } from '../catalog/fields.js';

/** What `include` may name on a list; a single read has them all. */
export const SERVICE_INCLUDES = ['locations', 'resources', 'company'];

const Count = (description: string, codes?: Record<string, string>) =>
  Type.Integer({ minimum: 0, maximum: 1_000_000, description, ...(codes ? { 'x-codes': codes } : {}) });
const Minutes = (description: string, max = 10_080) => Type.Integer({ minimum: 1, maximum: max, description });
const Money = (description: string) => Nullable(Type.Number({ minimum: 0, maximum: 99_999_999, multipleOf: 0.01, description }));

/** Every field of the specification's service table. */
const Fields = {
  name: Name(255, { required: 'SERVICE-120', minLength: 'SERVICE-120', maxLength: 'SERVICE-121' }),
  description: Nullable(Type.String({ maxLength: 5000 })),
  duration: Type.Integer({ minimum: 1, maximum: 10_080, description: 'Appointment length in minutes', 'x-codes': { minimum: 'SERVICE-123' } }),
  durationSelect: Type.Boolean({ description: 'Customers may choose the duration between durationMin and durationMax in steps of durationInterval' }),
  durationMin: Nullable(Type.Integer({ minimum: 0, maximum: 10_080 })),
  durationMax: Nullable(Type.Integer({ minimum: 0, maximum: 10_080 })),
  durationInterval: Nullable(Type.Integer({ minimum: 0, maximum: 10_080 })),
  availabilityType: StringEnum(['schedule', 'allocation'], { description: 'schedule: weekly schedules; allocation: only allocated windows', 'x-codes': { enum: 'SERVICE-104' } }),
  weeklyAvailability: Nullable(WeeklyAvailability),
  bookAheadUnit: StringEnum(['none', 'days', 'weeks', 'months'], {
    description: 'How far ahead booking is allowed, with bookAheadValue',
    'x-codes': { enum: 'SETTINGS-104' },
  }),
  bookAheadValue: Nullable(
    Type.Integer({ minimum: 1, maximum: 1440, description: '1-365 days, 1-52 weeks, 1-1440 months', 'x-codes': { minimum: 'SETTINGS-105', maximum: 'SETTINGS-105' } }),
  ),
  bookInAdvance: Type.Integer({ minimum: 0, maximum: 10_080, description: 'Minimum lead time in minutes', 'x-codes': { minimum: 'SETTINGS-103', maximum: 'SETTINGS-103' } }),
  bookingLimit: Count('Active appointments (BK and unexpired IN) per customer; 0 = unlimited'),
  maxBookingLimit: Count('Lifetime appointments per customer (RE not counted); 0 = unlimited'),
  maxResourceBookingLimit: Count('Lifetime appointments per customer and resource (RE not counted); 0 = unlimited'),
  dailyBookingLimitCount: Count('Bookings of the service per day; 0 = unlimited'),
  dailyBookingLimitMinutes: Count('Booked minutes of the service per day; 0 = unlimited'),
  bookingInterval: Nullable(Minutes('Minutes between slot starts (default: the duration)', 1440)),
  padding: Type.Integer({ minimum: 0, maximum: 1440, description: 'Buffer minutes after each appointment' }),
  bookingsPerSlot: Type.Integer({ minimum: 1, maximum: 10_000, description: 'Concurrent capacity at the same instant' }),
  feeAmount: Money('Fee'),
  feeTaxable: Type.Boolean(),
  cancellationFeeAmount: Money('Cancellation fee'),
  cancellationFeeTaxable: Type.Boolean(),
  nonRefundable: Type.Boolean(),
  imageUrl: Nullable(Type.String({ format: 'uri', maxLength: 2048 })),
  showOnline: Type.Boolean({ description: 'Offered on public booking pages' }),
  roundRobin: StringEnum(['NONE', 'RANDOM', 'BALANCED', 'COMBINED']),
  allowPaddingOverflow: Type.Boolean({ description: 'Default for holds and reservations' }),
  ignoreExternalEvents: Type.Boolean({ description: 'Default for holds and reservations' }),
  locationIds: IdList('Locations where the service is offered', { uniqueItems: 'LOCATION-110' }),
  legacyId: Nullable(Type.String({ maxLength: 100 })),
};

/** The same fields, each optional. */
const optional = <T extends TProperties>(fields: T) => Type.Partial(Type.Object(fields)).properties;

export const ServiceCreateBody = Type.Object(
  { ...optional(Fields), name: Fields.name, duration: Fields.duration, ...CustomFields() },
  { additionalProperties: false },
);
export const ServiceUpdateBody = Type.Object({ ...optional(Fields), ...CustomFields() }, { additionalProperties: false });
export const ServiceListQuery = Type.Object({
  ...PageQueryFields(500),
  include: IncludeQuery(SERVICE_INCLUDES),
  LocationId: Type.Optional(Uuid({ description: 'Only services offered at this location' })),
});

// An answer's `locationIds` are the stored links, without the write limits of the body's.
const { locationIds: _locationIds, ...StoredFields } = Fields;

export const Service = Type.Object(
  {
    id: Uuid(),
    companyId: Uuid(),
    ...StoredFields,
    locationIds: Type.Array(Uuid()),
    ...CustomFieldsOut(),
    createdAt: Type.String({ format: 'date-time' }),
    updatedAt: Type.String({ format: 'date-time' }),
    company: Type.Optional(Summary),
    locations: Type.Optional(Type.Array(Summary)),
    resources: Type.Optional(Type.Array(Summary)),
  },
  { $id: 'Service' },
);

export type ServiceCreate = Static<typeof ServiceCreateBody>;
export type ServiceUpdate = Static<typeof ServiceUpdateBody>;
