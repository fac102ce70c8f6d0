import { CUSTOM_FIELD_NAMES } from '../catalog/fields.js';
import type { AppointmentRow } from './repository.js';
import type { CustomFieldValues } from './schemas.js';

/** The appointment as every route returns it (and as events carry it). */
export function toApi(row: AppointmentRow) {
  return {
    id: row.id,
    companyId: row.companyId,
    locationId: row.locationId,
    serviceId: row.serviceId,
    customerId: row.customerId,
    resourceIds: row.resourceIds,
    status: row.status,
    startTime: row.startTime.toISOString(),
    endTime: row.endTime.toISOString(),
    duration: row.duration,
    padding: row.padding,
    timezoneName: row.timezoneName,
    expiresAt: row.expiresAt?.toISOString() ?? null,
    confirmed: row.confirmed,
    allowPaddingOverflow: row.allowPaddingOverflow,
    ignoreExternalEvents: row.ignoreExternalEvents,
    notes: row.notes,
    field1: row.field1,
    field2: row.field2,
    field3: row.field3,
    field4: row.field4,
    field5: row.field5,
    field6: row.field6,
    field7: row.field7,
    field8: row.field8,
    field9: row.field9,
    field10: row.field10,
    rescheduledFromId: row.rescheduledFromId,
    rescheduledToId: row.rescheduledToId,
    legacyId: row.legacyId,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}
export type Appointment = ReturnType<typeof toApi>;

/** The custom fields a body sets (a field left out is left as it is). */
export function customFields(body: CustomFieldValues): CustomFieldValues {
  const out: CustomFieldValues = {};
  for (const field of CUSTOM_FIELD_NAMES) if (body[field] !== undefined) out[field] = body[field];
  return out;
}
