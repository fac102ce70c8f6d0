// Recurring blocks: a rule of wall-clock times in a zone (daily, weekly, monthly, ...) that blocks a
// location, a resource or a service.
import { randomUUID } from 'node:crypto';
import type { Updateable } from 'kysely';
import type { Db } from '../../platform/database/index.js';
import type { RecurringBlocksTable } from '../../platform/database/schema.js';
import { conflict, forbidden, notFound } from '../../platform/errors.js';
import type { RecurrenceRule } from '../../domain/recurrence.js';
import { assertOwned } from '../catalog/ownership.js';
import { OUTSIDE_SCOPE_MESSAGE } from '../catalog/scope.js';
import { familyOfScope } from './families.js';
import type { RecurringBlockRow, UnavailabilityRepository } from './repository.js';
import { fail, recurrenceProblems, sortedWeekdays, WEEKLY_FREQUENCIES } from './rules.js';
import type { RecurringCreateBody, RecurringListQuery, RecurringUpdateBody } from './schemas.js';
import { filterOf, isVisible, SCOPE_KEYS, scopeOf, scopeProblems, scopeReferences, touched } from './scope.js';
import type { Caller, OnChanged, Scope, UnavailabilityAccess } from './scope.js';
import { pageView, recurringView } from './views.js';

export interface RecurringBlockServiceDeps {
  db: Db;
  repository: Pick<UnavailabilityRepository, 'insertRecurring' | 'recurringById' | 'pageRecurring' | 'updateRecurring' | 'deleteRecurring'>;
  access: UnavailabilityAccess;
  onChanged: OnChanged;
}

const NOT_FOUND = 'Recurring block not found';
const CHANGED_MEANWHILE = 'The recurring block changed while this request ran; try again';

/** The rule's columns as stored: absent end date and day of month are null, weekdays sorted. */
function storedRule(rule: RecurrenceRule) {
  return { ...rule, endDate: rule.endDate ?? null, weekdays: sortedWeekdays(rule.weekdays), dayOfMonth: rule.dayOfMonth ?? null };
}

/** The stored rule with the fields a change gives. */
function mergedRule(current: RecurringBlockRow, input: RecurringUpdateBody): RecurrenceRule {
  const frequency = input.frequency ?? current.frequency;
  const frequencyChanged = frequency !== current.frequency;
  return {
    frequency,
    interval: input.interval ?? current.interval,
    startDate: input.startDate ?? current.startDate,
    endDate: input.endDate !== undefined ? input.endDate : current.endDate,
    startTime: input.startTime ?? current.startTime,
    endTime: input.endTime ?? current.endTime,
    iana: input.iana ?? current.iana,
    // A change of frequency drops weekdays or day of month the new frequency has no use for,
    // unless the body sets them.
    weekdays: input.weekdays ?? (frequencyChanged && !WEEKLY_FREQUENCIES.includes(frequency) ? [] : current.weekdays),
    dayOfMonth: input.dayOfMonth !== undefined ? input.dayOfMonth : frequencyChanged && frequency !== 'MONTHLY' ? null : current.dayOfMonth,
  };
}

const sameScope = (a: Scope, b: Scope) => a.locationId === b.locationId && a.resourceId === b.resourceId && a.serviceId === b.serviceId;

/**
 * The update of a locked rule: the change merged into it, checked as a new rule would be. The scope
 * the caller's access was checked on (`checked`) must still be the rule's.
 */
function changesOf(locked: RecurringBlockRow, checked: Scope, input: RecurringUpdateBody, movesScope: boolean): Updateable<RecurringBlocksTable> {
  if (!sameScope(locked, checked)) throw conflict(CHANGED_MEANWHILE);
  const scope = movesScope ? scopeOf(input) : { locationId: locked.locationId, resourceId: locked.resourceId, serviceId: locked.serviceId };
  const rule = mergedRule(locked, input);
  fail(recurrenceProblems(rule, familyOfScope(scope)));
  return {
    ...storedRule(rule),
    ...scope,
    ...(input.name !== undefined ? { name: input.name } : {}),
    ...(input.legacyId !== undefined ? { legacyId: input.legacyId } : {}),
  };
}

export function createRecurringBlockService({ db, repository, access, onChanged }: RecurringBlockServiceDeps) {
  return {
    async createRecurringBlock(principal: Caller, input: RecurringCreateBody) {
      fail(scopeProblems(input));
      const scope = scopeOf(input);
      const rule: RecurrenceRule = {
        frequency: input.frequency,
        interval: input.interval ?? 1,
        startDate: input.startDate,
        endDate: input.endDate ?? null,
        startTime: input.startTime,
        endTime: input.endTime,
        iana: input.iana,
        weekdays: input.weekdays ?? [],
        dayOfMonth: input.dayOfMonth ?? null,
      };
      fail(recurrenceProblems(rule, familyOfScope(scope)));
      await assertOwned(db, principal.companyId, scopeReferences(input, 'body'));
      await access.assertWritable(principal, scope);
      const row = await repository.insertRecurring({
        companyId: principal.companyId,
        id: randomUUID(),
        name: input.name,
        ...storedRule(rule),
        ...scope,
        legacyId: input.legacyId ?? null,
      });
      await onChanged(principal.companyId, touched(scope));
      return recurringView(row);
    },

    async listRecurringBlocks(principal: Caller, query: RecurringListQuery) {
      await assertOwned(db, principal.companyId, scopeReferences(query, 'query'));
      const scope = filterOf(query);
      return pageView(
        query,
        async (window) => repository.pageRecurring(principal.companyId, { scope, visible: await access.visibleTo(principal), ...window }),
        recurringView,
      );
    },

    async readRecurringBlock(principal: Caller, id: string) {
      const row = await repository.recurringById(principal.companyId, id);
      if (!row) throw notFound(NOT_FOUND);
      if (!isVisible(await access.visibleTo(principal), row)) throw forbidden(OUTSIDE_SCOPE_MESSAGE);
      return recurringView(row);
    },

    /** Changes the fields given; the merged rule must pass every rule a new one must. */
    async updateRecurringBlock(principal: Caller, id: string, input: RecurringUpdateBody) {
      const current = await repository.recurringById(principal.companyId, id);
      if (!current) throw notFound(NOT_FOUND);
      await access.assertWritable(principal, current);
      const movesScope = SCOPE_KEYS.some((key) => input[key] !== undefined);
      if (movesScope) {
        fail(scopeProblems(input));
        await assertOwned(db, principal.companyId, scopeReferences(input, 'body'));
        await access.assertWritable(principal, scopeOf(input));
      }
      const result = await repository.updateRecurring(principal.companyId, id, (locked) => changesOf(locked, current, input, movesScope));
      if (!result) throw notFound(NOT_FOUND);
      await onChanged(principal.companyId, touched(result.before, result.after));
      return recurringView(result.after);
    },

    async deleteRecurringBlock(principal: Caller, id: string) {
      const row = await repository.recurringById(principal.companyId, id);
      if (!row) throw notFound(NOT_FOUND);
      await access.assertWritable(principal, row);
      // A concurrent change that moved the rule to another scope makes this delete miss: the access
      // checked above was for the old scope.
      const deleted = await repository.deleteRecurring(principal.companyId, id, row);
      if (!deleted) {
        if (await repository.recurringById(principal.companyId, id)) throw conflict(CHANGED_MEANWHILE);
        throw notFound(NOT_FOUND);
      }
      await onChanged(principal.companyId, touched(deleted));
    },
  };
}
