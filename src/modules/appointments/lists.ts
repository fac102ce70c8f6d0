import { DateTime } from 'luxon';
import type { Principal } from '../../platform/auth/principal.js';
import { pendingCredentialCheck, settleCredentialCheck } from '../../platform/auth/credential-check.js';
import { ApiError, fieldError, validationError } from '../../platform/errors.js';
import type { Db } from '../../platform/database/index.js';
import { jsonBytes } from '../../platform/http/types.js';
import { localToInstant } from '../../domain/local-time.js';
import { assertOwned } from '../catalog/ownership.js';
import { isResourceRole, locationScope } from '../catalog/scope.js';
import type { AvailabilityRepository } from '../availability/repository.js';
import { appointmentRepository as repo } from './repository.js';
import type { AppointmentFilters } from './repository.js';
import { CURSOR_LIFETIME_MS, decodeCursor, encodeCursor } from './cursor.js';
import { INVALID_CURSOR } from './problems.js';
import type { ListQuery, PageListQuery } from './schemas.js';

/** GET /v3/appointments (pages with a total) and GET /v3/appointments/cursor (a signed keyset walk). */

export const MAX_LIST_OFFSET = 10_000;

export interface ListDeps {
  db: Db;
  /** The location's zone, in which startDate and endDate are read. */
  repository: Pick<AvailabilityRepository, 'location'>;
  cursorSecret: string;
  clock: () => number;
}

/** The filters of a validated query: dates as instants, the caller's location scope, a Resource-role user's resource. */
function listFilters(principal: Principal, query: ListQuery, zone: string | null): AppointmentFilters {
  const startOf = (date: string) => (zone ? localToInstant(date, '00:00', zone).toJSDate() : new Date(`${date}T00:00:00Z`));
  const nextDay = (date: string) => DateTime.fromISO(date, { zone: 'UTC' }).plus({ days: 1 }).toISODate()!;
  const scope = locationScope(principal);
  return {
    LocationId: query.LocationId,
    ServiceId: query.ServiceId,
    CustomerId: query.CustomerId,
    status: query.status,
    from: query.startDate ? startOf(query.startDate) : undefined,
    to: query.endDate ? startOf(nextDay(query.endDate)) : undefined,
    // A Resource-role user lists only their resource's appointments.
    ResourceId: isResourceRole(principal) ? (principal.linkedResourceId ?? '00000000-0000-0000-0000-000000000000') : query.ResourceId,
    locationIds: scope ? [...scope] : null,
  };
}

export function createAppointmentLists(deps: ListDeps) {
  const { db, repository } = deps;

  async function filtersFor(companyId: string, principal: Principal, query: ListQuery): Promise<AppointmentFilters> {
    const location = query.LocationId ? await repository.location(companyId, query.LocationId) : undefined;
    return listFilters(principal, query, location?.timezoneName ?? null);
  }

  async function validateListQuery(companyId: string, principal: Principal, query: ListQuery): Promise<AppointmentFilters> {
    await assertOwned(db, companyId, [
      { table: 'locations', ids: query.LocationId ? [query.LocationId] : [], location: 'query', path: 'LocationId', single: true },
      { table: 'services', ids: query.ServiceId ? [query.ServiceId] : [], location: 'query', path: 'ServiceId', single: true },
      { table: 'resources', ids: query.ResourceId ? [query.ResourceId] : [], location: 'query', path: 'ResourceId', single: true },
      { table: 'customers', ids: query.CustomerId ? [query.CustomerId] : [], location: 'query', path: 'CustomerId', single: true },
    ]);
    if (query.startDate && query.endDate && query.endDate < query.startDate) throw validationError('query', 'endDate', 'endDate must be on or after startDate');
    return filtersFor(companyId, principal, query);
  }

  /** A page of a cursor walk, as the answer's JSON bytes (the appointments come as PostgreSQL built them: repository afterJson). */
  async function cursorPage(
    companyId: string,
    principal: Principal,
    query: ListQuery,
    filters: AppointmentFilters,
    after: { value: Date; id: string } | null,
    expiresAt: number,
  ): Promise<Buffer> {
    const sort = query.sort ?? 'startTime';
    const limit = query.limit ?? 20;
    // A machine caller's credential check rides along with the page (platform/auth/credential-check.ts).
    const { data, next, machineContext } = await repo.afterJson(db, { companyId, filters, sort, order: query.order ?? 'asc', limit, credentialOf: pendingCredentialCheck(principal) }, after);
    settleCredentialCheck(principal, machineContext);
    const nextCursor = next ? encodeCursor(deps.cursorSecret, { c: companyId, q: query, p: next, e: expiresAt }) : null;
    return jsonBytes(['{"data":', data, `,"nextCursor":${JSON.stringify(nextCursor)}}`]);
  }

  return {
    /** A page with the total, as the answer's JSON bytes (the appointments as PostgreSQL built them: repository pageJson). */
    async list(companyId: string, principal: Principal, query: PageListQuery): Promise<Buffer> {
      const limit = query.limit ?? 20;
      const page = query.page ?? 1;
      const offset = (page - 1) * limit;
      if (offset > MAX_LIST_OFFSET) {
        throw validationError('query', 'page', `(page - 1) * limit must not exceed ${MAX_LIST_OFFSET.toLocaleString('en-US')}; use GET /v3/appointments/cursor to walk further`);
      }
      const filters = await validateListQuery(companyId, principal, query);
      // A machine caller's credential check rides along with the page (platform/auth/credential-check.ts).
      const { data, total, machineContext } = await repo.pageJson(db, { companyId, filters, sort: query.sort ?? 'startTime', order: query.order ?? 'asc', limit, credentialOf: pendingCredentialCheck(principal) }, offset);
      settleCredentialCheck(principal, machineContext);
      return jsonBytes(['{"data":', data, `,"page":${page},"limit":${limit},"total":${total}}`]);
    },

    /** First page of a cursor walk: the query is validated once and carried, signed, in the cursor. */
    async cursorFirst(companyId: string, principal: Principal, query: ListQuery): Promise<Buffer> {
      const filters = await validateListQuery(companyId, principal, query);
      const normalised: ListQuery = { ...query, sort: query.sort ?? 'startTime', order: query.order ?? 'asc', limit: query.limit ?? 20 };
      return cursorPage(companyId, principal, normalised, filters, null, deps.clock() + CURSOR_LIFETIME_MS);
    },

    async cursorNext(companyId: string, principal: Principal, cursor: string): Promise<Buffer> {
      const state = decodeCursor<ListQuery>(deps.cursorSecret, cursor, companyId, deps.clock());
      if (!state) throw new ApiError(400, INVALID_CURSOR, [fieldError('query', 'cursor', INVALID_CURSOR)]);
      const filters = await filtersFor(companyId, principal, state.q);
      return cursorPage(companyId, principal, state.q, filters, { value: new Date(state.p[0]), id: state.p[1] }, state.e);
    },
  };
}
