import { Type } from '@sinclair/typebox';
import type { Static } from '@sinclair/typebox';
import { Nullable, Uuid } from '../../platform/http/schemas.js';
import { StringEnum } from '../catalog/fields.js';
import { APPOINTMENT_STATUSES } from '../../domain/appointment-status.js';
import { PublicSlotBody } from '../appointments/schemas.js';
import { PublicAvailabilityQuery } from '../availability/schemas.js';

/** The route schemas of the customer's manage page (docs/api.md, Customer self-service). */

const Allowed = (what: string) =>
  Type.Object(
    {
      allowed: Type.Boolean({ description: `Whether the customer may ${what} now` }),
      reason: Nullable(Type.String({ description: 'Why not, in words the page can show; null when allowed' })),
    },
    { additionalProperties: false },
  );

export const ManagedAppointmentSchema = Type.Object(
  {
    id: Uuid(),
    status: StringEnum(APPOINTMENT_STATUSES, { description: 'BK booked or RS reserved; CN in the answer of the cancel itself (afterwards the link answers 410)' }),
    startTime: Type.String({ format: 'date-time' }),
    endTime: Type.String({ format: 'date-time' }),
    duration: Type.Integer({ description: 'Minutes' }),
    timezoneName: Type.String({ description: 'The location\'s IANA time zone' }),
    service: Type.Object({ id: Uuid(), name: Type.String() }),
    location: Type.Object({ id: Uuid(), name: Type.String(), timezoneName: Type.String() }),
    resources: Type.Array(Type.Object({ id: Uuid(), name: Type.String() })),
    cancel: Allowed('cancel'),
    reschedule: Allowed('reschedule'),
  },
  { $id: 'ManagedAppointment' },
);
export type ManagedAppointment = Static<typeof ManagedAppointmentSchema>;

/** The replacement after a reschedule, with the manage token of the replacement (the old one answers 410 from now on). */
export const RescheduledSchema = Type.Object({
  appointment: Type.Ref('ManagedAppointment'),
  manageToken: Type.String({ description: 'The replacement\'s manage token; the new confirmation email carries its link too' }),
});

/** The new slot, as a public booking page sends it: no customer, notes or overrides (the service decides). */
export const ManageRescheduleBody = PublicSlotBody;
export type ManageRescheduleRequest = Static<typeof ManageRescheduleBody>;

/** The slot picker: the public search without location and service (they are the appointment's). */
export const ManageAvailabilityQuery = Type.Omit(PublicAvailabilityQuery, ['LocationId', 'ServiceId', 'roundRobin', 'format']);
export type ManageAvailabilitySearch = Static<typeof ManageAvailabilityQuery>;
