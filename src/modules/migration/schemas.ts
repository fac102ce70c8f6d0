import { Type } from '@sinclair/typebox';
import type { Static } from '@sinclair/typebox';
import { Uuid } from '../../platform/http/schemas.js';

const V1Id = (what: string) => Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: `A v1 ${what} id` }));

export const MappingQuery = Type.Object(
  {
    locationId: V1Id('location'),
    serviceId: V1Id('service'),
    resourceId: V1Id('resource'),
    customerId: V1Id('customer'),
    appointmentId: V1Id('appointment'),
    allocationId: V1Id('allocation (service or resource allocation)'),
  },
  { additionalProperties: false },
);
export type MappingQuery = Static<typeof MappingQuery>;

const MaybeUuid = Type.Union([Uuid(), Type.Null()]);

/** Only the keys asked are present: scalars a v3 id or null, allocationId always an array. */
export const MappingAnswer = Type.Object({
  locationId: Type.Optional(MaybeUuid),
  serviceId: Type.Optional(MaybeUuid),
  resourceId: Type.Optional(MaybeUuid),
  customerId: Type.Optional(MaybeUuid),
  appointmentId: Type.Optional(MaybeUuid),
  allocationId: Type.Optional(Type.Array(Uuid(), { description: 'Weekly and single allocations made from the v1 allocation' })),
});
