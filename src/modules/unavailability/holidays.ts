// Holidays: whole days on which a location is closed, at most one per location and date.
import { randomUUID } from 'node:crypto';
import type { Db } from '../../platform/database/index.js';
import { conflict, fieldError, notFound } from '../../platform/errors.js';
import { assertOwned } from '../catalog/ownership.js';
import type { UnavailabilityRepository } from './repository.js';
import { dateRangeProblems, fail } from './rules.js';
import type { HolidayBody, HolidayListQuery } from './schemas.js';
import { scopeReferences, touched } from './scope.js';
import type { Caller, OnChanged, UnavailabilityAccess } from './scope.js';
import { holidayView, pageView } from './views.js';

export interface HolidayServiceDeps {
  db: Db;
  repository: Pick<UnavailabilityRepository, 'insertHoliday' | 'holidayById' | 'pageHolidays' | 'deleteHoliday'>;
  access: UnavailabilityAccess;
  onChanged: OnChanged;
}

/** A holiday's scope: its location only. */
const atLocation = (locationId: string) => ({ locationId, resourceId: null, serviceId: null });

export function createHolidayService({ db, repository, access, onChanged }: HolidayServiceDeps) {
  return {
    async createHoliday(principal: Caller, input: HolidayBody) {
      await assertOwned(db, principal.companyId, scopeReferences(input, 'body'));
      await access.assertWritable(principal, atLocation(input.LocationId));
      const row = await repository.insertHoliday({
        companyId: principal.companyId,
        id: randomUUID(),
        locationId: input.LocationId,
        date: input.date,
        name: input.name,
      });
      if (!row) throw conflict(`The location already has a holiday on ${input.date}`, [fieldError('body', 'date', `A holiday on ${input.date} already exists at this location`)]);
      await onChanged(principal.companyId, touched({ locationId: row.locationId }));
      return holidayView(row);
    },

    async listHolidays(principal: Caller, query: HolidayListQuery) {
      fail(dateRangeProblems(query.startDate, query.endDate));
      await assertOwned(db, principal.companyId, scopeReferences(query, 'query'));
      const visible = await access.visibleTo(principal);
      const filter = { locationId: query.LocationId ?? null, visibleLocationIds: visible ? visible.locationIds : null, from: query.startDate ?? null, to: query.endDate ?? null };
      return pageView(query, (window) => repository.pageHolidays(principal.companyId, { ...filter, ...window }), holidayView);
    },

    async deleteHoliday(principal: Caller, id: string) {
      const row = await repository.holidayById(principal.companyId, id);
      if (!row) throw notFound('Holiday not found');
      await access.assertWritable(principal, atLocation(row.locationId));
      if (!(await repository.deleteHoliday(principal.companyId, id))) throw notFound('Holiday not found');
      await onChanged(principal.companyId, touched({ locationId: row.locationId }));
    },
  };
}
