import type { Static } from '@sinclair/typebox';
import { DateTime } from 'luxon';
import type { Db } from '../../platform/database/index.js';
import { validationError } from '../../platform/errors.js';
import { recurrenceIntervals } from '../../domain/recurrence.js';
import { addDays, localToInstant, weekdayIndex } from '../../domain/local-time.js';
import { WEEKDAYS, minutesOfDay } from '../../domain/weekly-availability.js';
import type { WeeklySchedule } from '../../domain/weekly-availability.js';
import { assertOwned } from '../catalog/ownership.js';
import type { AvailabilityRepository } from './repository.js';
import type { CalendarQuery, CalendarRowSchema } from './schemas.js';
import { MAX_SEARCH_DAYS } from './service.js';

/**
 * GET /v3/unavailability: every concrete interval that removes availability from the given
 * locations, resources and service, one row each, never merged. Rows are snake_case as the
 * specification says. `external_*` fields are null for every source but the intervals read from
 * a resource's external calendars (decisions.md: rows with source block, entity_type resource).
 */
type CalendarRow = Static<typeof CalendarRowSchema>;
type CalendarSource = CalendarRow['source'];
export type { CalendarQuery };

/** The reads the calendar makes. */
export type CalendarReads = Pick<
  AvailabilityRepository,
  'location' | 'service' | 'resourcesByIds' | 'blocks' | 'externalBusy' | 'recurringBlocks' | 'holidays' | 'activeAppointmentsInScope'
>;

const iso = (ms: number) => new Date(ms).toISOString();

function row(start: number, end: number, source: CalendarSource, entityType: CalendarRow['entity_type'], entityId: string, sourceId: string | null): CalendarRow {
  return {
    start_time: iso(start),
    end_time: iso(end),
    source,
    entity_type: entityType,
    entity_id: entityId,
    source_id: sourceId,
    external_transparency: null,
    external_event_type: null,
    external_busy: null,
  };
}

/** Closed time of a weekly schedule: a closed day is one day-wide row; an open day gives a row
 * for each closed stretch around its intervals (day-wide and partial rows are never merged). */
function weeklyClosedRows(schedule: WeeklySchedule, zone: string, from: string, to: string, entityType: CalendarRow['entity_type'], entityId: string): CalendarRow[] {
  const rows: CalendarRow[] = [];
  for (let date = from; date <= to; date = addDays(date, 1)) {
    const weekday = WEEKDAYS[weekdayIndex(date)]!;
    const intervals = [...(schedule[weekday] ?? [])].sort((a, b) => minutesOfDay(a.start) - minutesOfDay(b.start));
    let cursor = '00:00';
    for (const interval of intervals) {
      if (minutesOfDay(interval.start) > minutesOfDay(cursor)) {
        rows.push(row(localToInstant(date, cursor, zone).toMillis(), localToInstant(date, interval.start, zone).toMillis(), 'weekly', entityType, entityId, null));
      }
      cursor = interval.end;
    }
    if (minutesOfDay(cursor) < 1440) {
      rows.push(row(localToInstant(date, cursor, zone).toMillis(), localToInstant(date, '24:00', zone).toMillis(), 'weekly', entityType, entityId, null));
    }
  }
  return rows;
}

export function createCalendarService({ db, repository }: { db: Db; repository: CalendarReads }) {
  return {
    async rows(companyId: string, query: CalendarQuery, nowMs: number = Date.now()) {
      const locationIds = query.LocationIds ?? [];
      const resourceIds = query.ResourceIds ?? [];
      const serviceIds = query.ServiceId ? [query.ServiceId] : [];
      if (locationIds.length + resourceIds.length + serviceIds.length === 0) {
        throw validationError('query', 'LocationIds', 'At least one of LocationIds, ResourceIds or ServiceId is required');
      }
      await assertOwned(db, companyId, [
        { table: 'locations', ids: locationIds, location: 'query', path: 'LocationIds' },
        { table: 'resources', ids: resourceIds, location: 'query', path: 'ResourceIds' },
        { table: 'services', ids: serviceIds, location: 'query', path: 'ServiceId', single: true },
      ]);
      const endDate = query.endDate ?? query.startDate;
      if (endDate < query.startDate) throw validationError('query', 'endDate', 'endDate must be on or after startDate');
      if (DateTime.fromISO(endDate).diff(DateTime.fromISO(query.startDate), 'days').days + 1 > MAX_SEARCH_DAYS) {
        throw validationError('query', 'endDate', `A calendar covers at most ${MAX_SEARCH_DAYS} days`);
      }

      const locations = (await Promise.all(locationIds.map((id) => repository.location(companyId, id)))).filter((l) => l !== undefined);
      const resources = (await repository.resourcesByIds(companyId, resourceIds));
      const services = (await Promise.all(serviceIds.map((id) => repository.service(companyId, id)))).filter((s) => s !== undefined);
      // Dates are read in the first location's zone, else the first resource's, else UTC.
      const zone = locations[0]?.timezoneName ?? resources.find((r) => r.timezoneName)?.timezoneName ?? 'UTC';
      const from = localToInstant(query.startDate, '00:00', zone);
      const to = localToInstant(addDays(endDate, 1), '00:00', zone);
      const scope = { locationIds, resourceIds, serviceIds };

      const [blocks, external, recurring, holidays, appointments] = await Promise.all([
        repository.blocks(companyId, scope, from.toJSDate(), to.toJSDate()),
        repository.externalBusy(companyId, resourceIds, from.toJSDate(), to.toJSDate()),
        repository.recurringBlocks(companyId, scope, addDays(query.startDate, -1), addDays(endDate, 1)),
        repository.holidays(companyId, locationIds, addDays(query.startDate, -1), addDays(endDate, 1)),
        repository.activeAppointmentsInScope(companyId, scope, { from: from.toJSDate(), to: to.toJSDate(), now: new Date(nowMs) }),
      ]);

      const rows: CalendarRow[] = [];
      // Schedules and holidays in another zone than the query's may reach into the window from the
      // local day before or after, so they are read a day wider; rows outside are dropped below.
      const fromDate = addDays(query.startDate, -1);
      const toDate = addDays(endDate, 1);
      for (const location of locations) {
        if (location.weeklyAvailability) rows.push(...weeklyClosedRows(location.weeklyAvailability, location.timezoneName, fromDate, toDate, 'location', location.id));
      }
      for (const resource of resources) {
        if (resource.weeklyAvailability) {
          rows.push(...weeklyClosedRows(resource.weeklyAvailability, resource.timezoneName ?? zone, fromDate, toDate, 'resource', resource.id));
        }
      }
      for (const service of services) {
        if (service.weeklyAvailability) rows.push(...weeklyClosedRows(service.weeklyAvailability, zone, fromDate, toDate, 'service', service.id));
      }
      const scopeOf = (r: { locationId: string | null; resourceId: string | null; serviceId: string | null }) =>
        r.resourceId ? (['resource', r.resourceId] as const) : r.serviceId ? (['service', r.serviceId] as const) : (['location', r.locationId!] as const);
      for (const block of blocks) {
        const [type, id] = scopeOf(block);
        rows.push(row(block.startTime.getTime(), block.endTime.getTime(), 'block', type, id, block.id));
      }
      for (const interval of external) {
        rows.push({
          ...row(interval.startTime.getTime(), interval.endTime.getTime(), 'block', 'resource', interval.resourceId, null),
          external_transparency: interval.transparency,
          external_event_type: interval.eventType,
          external_busy: true,
        });
      }
      for (const rule of recurring) {
        const [type, id] = scopeOf(rule);
        for (const o of recurrenceIntervals(rule, from.toMillis(), to.toMillis())) rows.push(row(o.start, o.end, 'recurring', type, id, rule.id));
      }
      for (const holiday of holidays) {
        const tz = locations.find((l) => l.id === holiday.locationId)?.timezoneName ?? zone;
        rows.push(row(localToInstant(holiday.date, '00:00', tz).toMillis(), localToInstant(addDays(holiday.date, 1), '00:00', tz).toMillis(), 'holiday', 'location', holiday.locationId, holiday.id));
      }
      for (const appointment of appointments) {
        rows.push(row(appointment.startTime.getTime(), appointment.endTime.getTime(), 'appointment', 'resource', appointment.resourceId, appointment.id));
      }
      const fromMs = from.toMillis();
      const toMs = to.toMillis();
      return rows
        .filter((r) => Date.parse(r.start_time) < toMs && Date.parse(r.end_time) > fromMs)
        .sort((a, b) => a.start_time.localeCompare(b.start_time) || a.source.localeCompare(b.source) || a.entity_id.localeCompare(b.entity_id));
    },
  };
}

export type CalendarService = ReturnType<typeof createCalendarService>;
