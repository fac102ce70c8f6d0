// Rows as the API returns them (the schemas in schemas.ts describe these shapes), and lists as pages.
import { pageOf } from '../catalog/graph.js';
import type { BlockRow, HolidayRow, RecurringBlockRow, SingleAllocationRow, Window, WeeklyAllocationRow } from './repository.js';

export function blockView(row: BlockRow) {
  return {
    id: row.id,
    companyId: row.companyId,
    locationId: row.locationId,
    resourceId: row.resourceId,
    serviceId: row.serviceId,
    startTime: row.startTime.toISOString(),
    endTime: row.endTime.toISOString(),
    reason: row.reason,
    createdAt: row.createdAt.toISOString(),
  };
}

export function recurringView(row: RecurringBlockRow) {
  return {
    id: row.id,
    companyId: row.companyId,
    name: row.name,
    frequency: row.frequency,
    interval: row.interval,
    startDate: row.startDate,
    endDate: row.endDate,
    startTime: row.startTime,
    endTime: row.endTime,
    iana: row.iana,
    weekdays: row.weekdays,
    dayOfMonth: row.dayOfMonth,
    locationId: row.locationId,
    resourceId: row.resourceId,
    serviceId: row.serviceId,
    legacyId: row.legacyId,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

export function holidayView(row: HolidayRow) {
  return { id: row.id, companyId: row.companyId, locationId: row.locationId, date: row.date, name: row.name, createdAt: row.createdAt.toISOString() };
}

function allocationBase(row: WeeklyAllocationRow | SingleAllocationRow) {
  return {
    id: row.id,
    companyId: row.companyId,
    locationId: row.locationId,
    serviceId: row.serviceId,
    resourceId: row.resourceId,
    start: row.startTime,
    end: row.endTime,
    bookingsPerSlot: row.bookingsPerSlot,
    legacyId: row.legacyId,
    createdAt: row.createdAt.toISOString(),
  };
}
export const weeklyView = (row: WeeklyAllocationRow) => ({ ...allocationBase(row), day: row.day });
export const singleView = (row: SingleAllocationRow) => ({ ...allocationBase(row), date: row.date });

/**
 * The page `query` asks for (the schemas default limit to 20 and page to 1): `fetch` reads that
 * window of rows and the total, each row is shown with `view`.
 */
export async function pageView<R, V>(
  query: { limit?: number | undefined; page?: number | undefined },
  fetch: (window: Window) => Promise<{ rows: R[]; total: number }>,
  view: (row: R) => V,
) {
  const limit = query.limit ?? 20;
  const page = query.page ?? 1;
  const { rows, total } = await fetch({ limit, offset: (page - 1) * limit });
  return pageOf(rows.map(view), page, limit, total);
}
