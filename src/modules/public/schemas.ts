import { Type } from '@sinclair/typebox';
import type { TSchema } from '@sinclair/typebox';
import { Nullable, Uuid } from '../../platform/http/schemas.js';
import { Address, StringEnum, WeeklyAvailability } from '../catalog/fields.js';
import { BookingPageSettingsSchema } from '../companies/schemas.js';

/** A public list: every record at once, under `data` (a booking page needs no paging). */
const DataList = <T extends TSchema>(item: T) => Type.Object({ data: Type.Array(item) });

export const PublicLocations = DataList(
  Type.Object({
    id: Uuid(),
    name: Type.String(),
    timezoneName: Type.String(),
    address: Nullable(Address),
    phone: Nullable(Type.String()),
    email: Nullable(Type.String()),
    weeklyAvailability: Nullable(WeeklyAvailability),
  }),
);

export const PublicServicesQuery = Type.Object({ LocationId: Type.Optional(Uuid()) });

export const PublicServices = DataList(
  Type.Object({
    id: Uuid(),
    name: Type.String(),
    description: Nullable(Type.String()),
    duration: Type.Integer(),
    durationSelect: Type.Boolean(),
    durationMin: Nullable(Type.Integer()),
    durationMax: Nullable(Type.Integer()),
    durationInterval: Nullable(Type.Integer()),
    feeAmount: Nullable(Type.Number()),
    imageUrl: Nullable(Type.String()),
    roundRobin: StringEnum(['NONE', 'RANDOM', 'BALANCED', 'COMBINED'], {
      description: 'How a hold without a chosen resource gets one: NONE needs the page to name one, RANDOM and BALANCED pick one, COMBINED takes them all',
    }),
    locationIds: Type.Array(Uuid()),
  }),
);

export const PublicResourcesQuery = Type.Object({ LocationId: Uuid(), ServiceId: Uuid() });

/** A resource as a visitor chooses it: its name only (email and phone are the staff's own). */
export const PublicResources = DataList(Type.Object({ id: Uuid(), name: Type.String() }));

export const PublicCompany = Type.Object({ id: Uuid(), name: Type.String(), bookingPage: BookingPageSettingsSchema });
