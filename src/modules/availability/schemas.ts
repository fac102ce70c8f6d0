import { Type } from '@sinclair/typebox';
import type { Static } from '@sinclair/typebox';
import { LocalDate, Uuid } from '../../platform/http/schemas.js';
import { StringEnum } from '../catalog/fields.js';

/** The route schemas of the availability search and the unavailability calendar, and the service inputs they type. */

export const AvailabilityQuery = Type.Object({
  LocationId: Uuid(),
  ServiceId: Uuid(),
  startDate: LocalDate({ description: 'YYYY-MM-DD, a local date of the location' }),
  endDate: Type.Optional(LocalDate({ description: 'Default: startDate. At most 31 days after it.' })),
  duration: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_080, description: 'Minutes; one of the service\'s duration options' })),
  ResourceIds: Type.Optional(Type.Array(Type.String({ maxLength: 4000 }), { description: 'Comma-separated, or repeated' })),
  CustomerId: Type.Optional(Uuid({ description: 'Applies the per-customer limits' })),
  roundRobin: Type.Optional(StringEnum(['NONE', 'RANDOM', 'BALANCED', 'COMBINED'], { description: 'Default: the service\'s' })),
  timezone: Type.Optional(
    Type.String({
      format: 'iana-timezone',
      maxLength: 64,
      'x-codes': { format: 'AVAILABILITY-108', maxLength: 'AVAILABILITY-108' },
      description: 'IANA zone in which startDate and endDate are read and availableDays are reported (default: the location\'s); slots stay UTC instants',
    }),
  ),
  format: Type.Optional(
    StringEnum(['full', 'compact'], {
      description: 'Default full. compact: the answer lists each resource id once, in `resources`, and each slot gives `resourceIndexes` into it instead of `resourceIds`',
    }),
  ),
});

/** A public booking page's search: it does not identify the customer. */
export const PublicAvailabilityQuery = Type.Omit(AvailabilityQuery, ['CustomerId']);

/**
 * The search the service runs: the query, with ResourceIds split into single ids (the route's
 * resourceIdList accepts them comma-separated or repeated).
 */
export type AvailabilitySearch = Static<typeof AvailabilityQuery>;

export const AvailabilityResponse = Type.Object(
  {
    timezoneName: Type.String(),
    availableTimes: Type.Array(
      Type.Object({
        startTime: Type.String({ format: 'date-time' }),
        endTime: Type.String({ format: 'date-time' }),
        resourceIds: Type.Array(Uuid()),
        remaining: Type.Integer({ description: 'Bookings still possible at this time with the listed resources' }),
      }),
    ),
    availableDays: Type.Array(
      Type.Object({
        date: Type.String({ format: 'date' }),
        available: Type.Boolean(),
        reason: Type.Union([Type.String(), Type.Null()], { description: 'Why the day has no slot, for example `holiday` or `no free time`; null when it has one' }),
        holidayName: Type.Optional(Type.String({ description: 'With reason `holiday`: the name of the location\'s holiday, for example Christmas Day' })),
      }),
    ),
  },
  { $id: 'Availability' },
);

/**
 * The answer with `format=compact`: each slot's resources as indexes into `resources`. It types the
 * service's answer; the routes describe it in words (routes.ts says why).
 */
export const CompactAvailabilityResponse = Type.Object(
  {
    timezoneName: Type.String(),
    resources: Type.Array(Uuid(), { description: 'Every resource id some slot lists, each once, in id order' }),
    availableTimes: Type.Array(
      Type.Object({
        startTime: Type.String({ format: 'date-time' }),
        endTime: Type.String({ format: 'date-time' }),
        resourceIndexes: Type.Array(Type.Integer({ minimum: 0 }), { description: 'Positions in `resources`' }),
        remaining: Type.Integer({ description: 'Bookings still possible at this time with the listed resources' }),
      }),
    ),
    availableDays: AvailabilityResponse.properties.availableDays,
  },
);

export const CalendarRowSchema = Type.Object(
  {
    start_time: Type.String({ format: 'date-time' }),
    end_time: Type.String({ format: 'date-time' }),
    source: StringEnum(['weekly', 'recurring', 'appointment', 'holiday', 'block']),
    entity_type: StringEnum(['location', 'resource', 'service']),
    entity_id: Uuid(),
    source_id: Type.Union([Uuid(), Type.Null()], { description: 'The block, recurring block, holiday or appointment; null for weekly rows' }),
    external_transparency: Type.Union([Type.String(), Type.Null()]),
    external_event_type: Type.Union([Type.String(), Type.Null()]),
    external_busy: Type.Union([Type.Boolean(), Type.Null()]),
  },
  { $id: 'UnavailabilityRow' },
);

export const CalendarQuerySchema = Type.Object({
  LocationIds: Type.Optional(Type.Array(Type.String({ maxLength: 4000 }), { description: 'Comma-separated, or repeated' })),
  ResourceIds: Type.Optional(Type.Array(Type.String({ maxLength: 4000 }), { description: 'Comma-separated, or repeated' })),
  ServiceId: Type.Optional(Uuid()),
  startDate: LocalDate(),
  endDate: Type.Optional(LocalDate()),
  roundRobin: Type.Optional(Type.String({ description: 'Removed: sending it is a 400' })),
});

/** The calendar the service reads: the query without the removed roundRobin, with the id lists split. */
export type CalendarQuery = Omit<Static<typeof CalendarQuerySchema>, 'roundRobin'>;
