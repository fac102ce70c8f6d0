// Rows written straight to the database, for the tests of what reads them (availability, the
// unavailability calendar, the cache) without going through the routes that write them: those
// routes also clear the availability cache, which some of these tests must not do.
import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { DateTime } from 'luxon';
import type { AppointmentStatus, Database } from '../../src/platform/database/schema.js';

/** A block of one scope (a location, a resource or a service) from `start` for `minutes`. */
export async function insertBlock(
  db: Kysely<Database>,
  companyId: string,
  scope: { locationId?: string; resourceId?: string; serviceId?: string },
  start: DateTime,
  minutes = 60,
): Promise<string> {
  const id = randomUUID();
  await db
    .insertInto('blocks')
    .values({
      companyId,
      id,
      locationId: scope.locationId ?? null,
      resourceId: scope.resourceId ?? null,
      serviceId: scope.serviceId ?? null,
      startTime: start.toJSDate(),
      endTime: start.plus({ minutes }).toJSDate(),
      reason: 'test',
    })
    .execute();
  return id;
}

/** An appointment (BK, 60 minutes, no customer unless said otherwise) and its resource rows. */
export async function insertAppointment(
  db: Kysely<Database>,
  row: {
    companyId: string;
    locationId: string;
    serviceId: string;
    resourceIds: string[];
    start: DateTime;
    minutes?: number;
    status?: AppointmentStatus;
    expiresAt?: Date | null;
    customerId?: string | null;
    padding?: number;
  },
): Promise<string> {
  const id = randomUUID();
  const { companyId, status = 'BK', expiresAt = null, minutes = 60 } = row;
  const startTime = row.start.toJSDate();
  const endTime = row.start.plus({ minutes }).toJSDate();
  await db
    .insertInto('appointments')
    .values({
      companyId,
      id,
      locationId: row.locationId,
      serviceId: row.serviceId,
      customerId: row.customerId ?? null,
      status,
      startTime,
      endTime,
      duration: minutes,
      padding: row.padding ?? 0,
      expiresAt,
    })
    .execute();
  for (const resourceId of row.resourceIds) {
    await db.insertInto('appointmentResources').values({ companyId, appointmentId: id, resourceId, startTime, endTime, status, expiresAt }).execute();
  }
  return id;
}
