import type { Db } from '../../platform/database/index.js';
import { localDate, localDayFinder } from '../../domain/local-time.js';

/** Longest an appointment can reach back into a window: the longest duration (a week) plus a day of padding. */
const MAX_APPOINTMENT_REACH_MS = 8 * 24 * 3_600_000;

/**
 * The reads behind an availability search and the unavailability calendar. Every query is scoped
 * by company and bounded by time, so a search touches only the rows of its window.
 */
export function createAvailabilityRepository(db: Db) {
  return {
    location(companyId: string, id: string) {
      return db
        .selectFrom('locations')
        .select(['id', 'timezoneName', 'weeklyAvailability', 'bookingTimerMinutes'])
        .where('companyId', '=', companyId)
        .where('id', '=', id)
        .where('archivedAt', 'is', null)
        .executeTakeFirst();
    },

    service(companyId: string, id: string) {
      return db
        .selectFrom('services')
        .selectAll()
        .where('companyId', '=', companyId)
        .where('id', '=', id)
        .where('archivedAt', 'is', null)
        .executeTakeFirst();
    },

    async serviceOfferedAt(companyId: string, serviceId: string, locationId: string): Promise<boolean> {
      const row = await db
        .selectFrom('serviceLocations')
        .select('serviceId')
        .where('companyId', '=', companyId)
        .where('serviceId', '=', serviceId)
        .where('locationId', '=', locationId)
        .executeTakeFirst();
      return row !== undefined;
    },

    /** Live resources that work at the location and provide the service. */
    bookableResources(companyId: string, locationId: string, serviceId: string) {
      return db
        .selectFrom('resources as r')
        .innerJoin('resourceLocations as rl', (j) => j.onRef('rl.companyId', '=', 'r.companyId').onRef('rl.resourceId', '=', 'r.id'))
        .innerJoin('resourceServices as rs', (j) => j.onRef('rs.companyId', '=', 'r.companyId').onRef('rs.resourceId', '=', 'r.id'))
        .select(['r.id', 'r.name', 'r.timezoneName', 'r.weeklyAvailability', 'r.bookingLimit'])
        .where('r.companyId', '=', companyId)
        .where('rl.locationId', '=', locationId)
        .where('rs.serviceId', '=', serviceId)
        .where('r.archivedAt', 'is', null)
        .orderBy('r.id')
        .execute();
    },

    /** One-off blocks overlapping [from, to) on any of the given scopes. */
    blocks(companyId: string, scope: { locationIds: string[]; resourceIds: string[]; serviceIds: string[] }, from: Date, to: Date) {
      return db
        .selectFrom('blocks')
        .select(['id', 'locationId', 'resourceId', 'serviceId', 'startTime', 'endTime', 'reason'])
        .where('companyId', '=', companyId)
        .where('startTime', '<', to)
        .where('endTime', '>', from)
        .where((eb) =>
          eb.or([
            scope.locationIds.length ? eb('locationId', 'in', scope.locationIds) : eb.val(false),
            scope.resourceIds.length ? eb('resourceId', 'in', scope.resourceIds) : eb.val(false),
            scope.serviceIds.length ? eb('serviceId', 'in', scope.serviceIds) : eb.val(false),
          ]),
        )
        .orderBy('startTime')
        .execute();
    },

    /** Recurring blocks of the scopes that may occur in [fromDate, toDate]. */
    recurringBlocks(companyId: string, scope: { locationIds: string[]; resourceIds: string[]; serviceIds: string[] }, fromDate: string, toDate: string) {
      return db
        .selectFrom('recurringBlocks')
        .selectAll()
        .where('companyId', '=', companyId)
        .where('startDate', '<=', toDate)
        .where((eb) => eb.or([eb('endDate', 'is', null), eb('endDate', '>=', fromDate)]))
        .where((eb) =>
          eb.or([
            scope.locationIds.length ? eb('locationId', 'in', scope.locationIds) : eb.val(false),
            scope.resourceIds.length ? eb('resourceId', 'in', scope.resourceIds) : eb.val(false),
            scope.serviceIds.length ? eb('serviceId', 'in', scope.serviceIds) : eb.val(false),
          ]),
        )
        .execute();
    },

    holidays(companyId: string, locationIds: string[], fromDate: string, toDate: string) {
      if (locationIds.length === 0) return Promise.resolve([]);
      return db
        .selectFrom('holidays')
        .select(['id', 'locationId', 'date', 'name'])
        .where('companyId', '=', companyId)
        .where('locationId', 'in', locationIds)
        .where('date', '>=', fromDate)
        .where('date', '<=', toDate)
        .execute();
    },

    /**
     * Appointments holding any of the resources in [from, to): BK, RS and unexpired IN. One index
     * range scan per resource on appointment_resources.
     */
    activeAppointmentsOfResources(companyId: string, resourceIds: string[], from: Date, to: Date, now: Date, excludeIds: string[] = []) {
      if (resourceIds.length === 0) return Promise.resolve([]);
      return db
        .selectFrom('appointmentResources as ar')
        .innerJoin('appointments as a', (j) => j.onRef('a.companyId', '=', 'ar.companyId').onRef('a.id', '=', 'ar.appointmentId'))
        .select(['a.id', 'a.serviceId', 'a.locationId', 'a.customerId', 'a.startTime', 'a.endTime', 'a.padding', 'a.duration', 'ar.resourceId'])
        .where('ar.companyId', '=', companyId)
        .where('ar.resourceId', 'in', resourceIds)
        .where('ar.status', 'in', ['IN', 'RS', 'BK'])
        // Bounded on both sides of start_time, so the index scan covers only the window: no
        // appointment is longer than a week (the duration limit), and padding reaches back a day.
        .where('ar.startTime', '<', to)
        .where('ar.startTime', '>', new Date(from.getTime() - MAX_APPOINTMENT_REACH_MS))
        .where('ar.endTime', '>', new Date(from.getTime() - 24 * 3_600_000))
        .where((eb) => eb.or([eb('ar.status', '!=', 'IN'), eb('ar.expiresAt', '>', now)]))
        .$if(excludeIds.length > 0, (q) => q.where('ar.appointmentId', 'not in', excludeIds))
        .execute();
    },

    resourcesByIds(companyId: string, ids: string[]) {
      if (ids.length === 0) return Promise.resolve([]);
      return db
        .selectFrom('resources')
        .select(['id', 'timezoneName', 'weeklyAvailability'])
        .where('companyId', '=', companyId)
        .where('id', 'in', ids)
        .where('archivedAt', 'is', null)
        .execute();
    },

    /** Active appointments, one row per resource, that touch any of the scopes in [from, to). */
    activeAppointmentsInScope(companyId: string, scope: { locationIds: string[]; resourceIds: string[]; serviceIds: string[] }, from: Date, to: Date, now: Date) {
      return db
        .selectFrom('appointmentResources as ar')
        .innerJoin('appointments as a', (j) => j.onRef('a.companyId', '=', 'ar.companyId').onRef('a.id', '=', 'ar.appointmentId'))
        .select(['a.id', 'a.startTime', 'a.endTime', 'ar.resourceId'])
        .where('ar.companyId', '=', companyId)
        .where('ar.status', 'in', ['IN', 'RS', 'BK'])
        .where((eb) => eb.or([eb('ar.status', '!=', 'IN'), eb('ar.expiresAt', '>', now)]))
        .where('ar.startTime', '<', to)
        .where('ar.startTime', '>', new Date(from.getTime() - MAX_APPOINTMENT_REACH_MS))
        .where('ar.endTime', '>', from)
        .where((eb) =>
          eb.or([
            scope.resourceIds.length ? eb('ar.resourceId', 'in', scope.resourceIds) : eb.val(false),
            scope.locationIds.length ? eb('a.locationId', 'in', scope.locationIds) : eb.val(false),
            scope.serviceIds.length ? eb('a.serviceId', 'in', scope.serviceIds) : eb.val(false),
          ]),
        )
        .execute();
    },

    /**
     * The service's active bookings per local day of its location's zone (daily limits). Days are
     * counted here with the same zone data as every other local date (not PostgreSQL's, which may
     * lack a zone name the API accepts).
     */
    async dailyUsage(companyId: string, serviceId: string, zone: string, from: Date, to: Date, now: Date, excludeIds: string[] = []) {
      const rows = await db
        .selectFrom('appointments')
        .select(['startTime', 'duration'])
        .where('companyId', '=', companyId)
        .where('serviceId', '=', serviceId)
        .where('status', 'in', ['IN', 'RS', 'BK'])
        .where((eb) => eb.or([eb('status', '!=', 'IN'), eb('expiresAt', '>', now)]))
        .where('startTime', '>=', from)
        .where('startTime', '<', to)
        .$if(excludeIds.length > 0, (q) => q.where('id', 'not in', excludeIds))
        .execute();
      const dayOf = localDayFinder(localDate(from, zone), localDate(to, zone), zone);
      const usage: Record<string, { count: number; minutes: number }> = {};
      for (const row of rows) {
        const day = (usage[dayOf(row.startTime.getTime())] ??= { count: 0, minutes: 0 });
        day.count += 1;
        day.minutes += row.duration;
      }
      return usage;
    },

    /** What one customer already holds of a service (the per-customer limits). */
    customerAppointments(companyId: string, customerId: string, serviceId: string, excludeIds: string[] = []) {
      return db
        .selectFrom('appointments as a')
        .leftJoin('appointmentResources as ar', (j) => j.onRef('ar.companyId', '=', 'a.companyId').onRef('ar.appointmentId', '=', 'a.id'))
        .select(['a.id', 'a.status', 'a.expiresAt', 'ar.resourceId'])
        .where('a.companyId', '=', companyId)
        .where('a.customerId', '=', customerId)
        .where('a.serviceId', '=', serviceId)
        .$if(excludeIds.length > 0, (q) => q.where('a.id', 'not in', excludeIds))
        .execute();
    },

    /** Allocations of the location that apply to the service (or to any service). */
    async allocations(companyId: string, locationId: string, serviceId: string, fromDate: string, toDate: string) {
      const [weekly, single] = await Promise.all([
        db
          .selectFrom('weeklyAllocations')
          .selectAll()
          .where('companyId', '=', companyId)
          .where('locationId', '=', locationId)
          .where((eb) => eb.or([eb('serviceId', '=', serviceId), eb('serviceId', 'is', null)]))
          .execute(),
        db
          .selectFrom('singleAllocations')
          .selectAll()
          .where('companyId', '=', companyId)
          .where('locationId', '=', locationId)
          .where((eb) => eb.or([eb('serviceId', '=', serviceId), eb('serviceId', 'is', null)]))
          .where('date', '>=', fromDate)
          .where('date', '<=', toDate)
          .execute(),
      ]);
      return { weekly, single };
    },
  };
}

export type AvailabilityRepository = ReturnType<typeof createAvailabilityRepository>;
