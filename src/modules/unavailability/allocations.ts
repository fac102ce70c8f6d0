// Allocations: the weekly and the single-date windows in which a location (and optionally a
// service and a resource) takes bookings. Each set is replaced as a whole.
import { randomUUID } from 'node:crypto';
import type { Db } from '../../platform/database/index.js';
import { assertOwned } from '../catalog/ownership.js';
import { allocationFamilyOf } from './families.js';
import type { AllocationScope, UnavailabilityRepository } from './repository.js';
import { allocationProblems, fail } from './rules.js';
import type { AllocationItem, AllocationQuery, SingleAllocationInput, WeeklyAllocationInput } from './schemas.js';
import { scopeReferences, touched } from './scope.js';
import type { Caller, OnChanged, UnavailabilityAccess } from './scope.js';
import { singleView, weeklyView } from './views.js';

export interface AllocationServiceDeps {
  db: Db;
  repository: Pick<UnavailabilityRepository, 'weeklyAllocations' | 'singleAllocations' | 'replaceWeeklyAllocations' | 'replaceSingleAllocations'>;
  access: UnavailabilityAccess;
  onChanged: OnChanged;
}

/** A row of a new set: its scope, its weekday or date column (`W`) and its window. */
type NewRow<W> = AllocationScope &
  W & { companyId: string; id: string; startTime: string; endTime: string; bookingsPerSlot: number | null; legacyId: string | null };

/** The stored rows of a new set: each item with its scope and its weekday or date column (`when`). */
function rowsOf<I extends AllocationItem, W>(companyId: string, scope: AllocationScope, items: I[], when: (item: I) => W): Array<NewRow<W>> {
  return items.map((item) => ({
    companyId,
    id: randomUUID(),
    ...scope,
    ...when(item),
    startTime: item.start,
    endTime: item.end,
    bookingsPerSlot: item.bookingsPerSlot ?? null,
    legacyId: item.legacyId ?? null,
  }));
}

/** How one kind of set (weekly or single-date) is read, replaced and shown. */
interface SetKind<I extends AllocationItem, W, Row, View> {
  read(companyId: string, scope: AllocationScope): Promise<Row[]>;
  replace(companyId: string, scope: AllocationScope, rows: Array<NewRow<W>>): Promise<Row[]>;
  view(row: Row): View;
  /** The item's weekday or date column. */
  when(item: I): W;
  /** The day whose windows must not overlap. */
  dayOf(item: I): string;
}

export function createAllocationService({ db, repository, access, onChanged }: AllocationServiceDeps) {
  /** The query's scope, its ids the company's; a write also needs write access to its location. */
  async function allocationScope(principal: Caller, query: AllocationQuery, write: boolean): Promise<AllocationScope> {
    await assertOwned(db, principal.companyId, scopeReferences(query, 'query'));
    const scope = { locationId: query.LocationId, serviceId: query.ServiceId ?? null, resourceId: query.ResourceId ?? null };
    if (write) await access.assertWritable(principal, { ...scope, serviceId: null, resourceId: null });
    return scope;
  }

  /** The weekly and single-date sets share every rule; `kind` says how each is stored. */
  function setOf<I extends AllocationItem, W, Row, View>(kind: SetKind<I, W, Row, View>) {
    return {
      /** The set of exactly this scope; a caller who may not see the location sees it empty. */
      async list(principal: Caller, query: AllocationQuery) {
        const scope = await allocationScope(principal, query, false);
        const visible = await access.visibleTo(principal);
        if (visible && !visible.locationIds.includes(scope.locationId)) return { data: [] };
        return { data: (await kind.read(principal.companyId, scope)).map(kind.view) };
      },

      /**
       * Replaces the whole set of exactly this scope (an empty list clears it): the items are
       * checked, the scope resolved, the set replaced in one transaction, cached searches cleared.
       */
      async set(principal: Caller, query: AllocationQuery, items: I[]) {
        fail(allocationProblems(items, { dayOf: kind.dayOf, family: allocationFamilyOf(query), pair: Boolean(query.ServiceId && query.ResourceId) }));
        const scope = await allocationScope(principal, query, true);
        const rows = await kind.replace(principal.companyId, scope, rowsOf(principal.companyId, scope, items, kind.when));
        await onChanged(principal.companyId, touched(scope));
        return { data: rows.map(kind.view) };
      },
    };
  }

  const weekly = setOf({
    read: repository.weeklyAllocations,
    replace: repository.replaceWeeklyAllocations,
    view: weeklyView,
    when: (item: WeeklyAllocationInput) => ({ day: item.day }),
    dayOf: (item) => item.day,
  });
  const single = setOf({
    read: repository.singleAllocations,
    replace: repository.replaceSingleAllocations,
    view: singleView,
    when: (item: SingleAllocationInput) => ({ date: item.date }),
    dayOf: (item) => item.date,
  });

  return {
    listWeeklyAllocations: weekly.list,
    setWeeklyAllocations: weekly.set,
    listSingleAllocations: single.list,
    setSingleAllocations: single.set,
  };
}
