import { Type } from '@sinclair/typebox';
import type { Static } from '@sinclair/typebox';
import { Nullable, PageQueryFields, Uuid } from '../../platform/http/schemas.js';
import { EmailField, IdList, IncludeQuery, Name, Phone, Summary, TimezoneName, WeeklyAvailability } from '../catalog/fields.js';

/** What `include` may name on a list; a single read has them all. */
export const RESOURCE_INCLUDES = ['locations', 'services', 'company'];

const Fields = {
  name: Name(255, { required: 'RESOURCE-114', minLength: 'RESOURCE-114', maxLength: 'RESOURCE-115' }),
  email: Type.Optional(Nullable(EmailField())),
  phone: Type.Optional(Nullable(Phone('CONTACT-101'))),
  timezoneName: Type.Optional(Nullable(TimezoneName({ format: 'RESOURCE-100' }))),
  weeklyAvailability: Type.Optional(Nullable(WeeklyAvailability)),
  bookingLimit: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000, description: 'Active appointments per customer with this resource for the current service; 0 = unlimited' })),
  locationIds: Type.Optional(IdList('Locations the resource works at')),
  serviceIds: Type.Optional(IdList('Services the resource provides', { uniqueItems: 'RESOURCE-109' })),
  legacyId: Type.Optional(Nullable(Type.String({ maxLength: 100 }))),
};

export const Resource = Type.Object(
  {
    id: Uuid(),
    companyId: Uuid(),
    name: Type.String(),
    email: Nullable(Type.String()),
    phone: Nullable(Type.String()),
    timezoneName: Nullable(Type.String()),
    weeklyAvailability: Nullable(WeeklyAvailability),
    bookingLimit: Type.Integer(),
    legacyId: Nullable(Type.String()),
    locationIds: Type.Array(Uuid()),
    serviceIds: Type.Array(Uuid()),
    createdAt: Type.String({ format: 'date-time' }),
    updatedAt: Type.String({ format: 'date-time' }),
    company: Type.Optional(Summary),
    locations: Type.Optional(Type.Array(Summary)),
    services: Type.Optional(Type.Array(Summary)),
  },
  { $id: 'Resource' },
);

export const ResourceCreateBody = Type.Object(Fields, { additionalProperties: false });
export const ResourceUpdateBody = Type.Object({ ...Fields, name: Type.Optional(Fields.name) }, { additionalProperties: false });
export const ResourceListQuery = Type.Object({
  ...PageQueryFields(500),
  include: IncludeQuery(RESOURCE_INCLUDES),
  LocationId: Type.Optional(Uuid({ description: 'Only resources working at this location' })),
  ServiceId: Type.Optional(Uuid({ description: 'Only resources providing this service' })),
});

export type ResourceCreate = Static<typeof ResourceCreateBody>;
export type ResourceUpdate = Static<typeof ResourceUpdateBody>;
