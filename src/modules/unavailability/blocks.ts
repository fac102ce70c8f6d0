// One-off blocks: a location, a resource or a service is unavailable from one instant to another.
import { randomUUID } from 'node:crypto';
import type { Db } from '../../platform/database/index.js';
import { notFound } from '../../platform/errors.js';
import { localToInstant } from '../../domain/local-time.js';
import { assertOwned } from '../catalog/ownership.js';
import { familyOfScope } from './families.js';
import type { UnavailabilityRepository } from './repository.js';
import { blockProblems, dateRangeProblems, fail, parseInstant, reasonProblems } from './rules.js';
import type { BlockBody, BlockListQuery } from './schemas.js';
import { filterOf, scopeOf, scopeProblems, scopeReferences, touched } from './scope.js';
import type { Caller, OnChanged, UnavailabilityAccess } from './scope.js';
import { blockView, pageView } from './views.js';

export interface BlockServiceDeps {
  db: Db;
  repository: Pick<UnavailabilityRepository, 'insertBlock' | 'blockById' | 'pageBlocks' | 'deleteBlock' | 'locationZone'>;
  access: UnavailabilityAccess;
  onChanged: OnChanged;
}

export function createBlockService({ db, repository, access, onChanged }: BlockServiceDeps) {
  return {
    async createBlock(principal: Caller, input: BlockBody) {
      fail(scopeProblems(input));
      const scope = scopeOf(input);
      const family = familyOfScope(scope);
      const reason = input.reason.trim();
      fail(reasonProblems(reason, family));
      fail(blockProblems(input, family));
      await assertOwned(db, principal.companyId, scopeReferences(input, 'body'));
      await access.assertWritable(principal, scope);
      const row = await repository.insertBlock({
        companyId: principal.companyId,
        id: randomUUID(),
        ...scope,
        startTime: parseInstant(input.startTime).toJSDate(),
        endTime: parseInstant(input.endTime).toJSDate(),
        reason,
      });
      await onChanged(principal.companyId, touched(scope));
      return blockView(row);
    },

    async listBlocks(principal: Caller, query: BlockListQuery) {
      fail(dateRangeProblems(query.startDate, query.endDate));
      await assertOwned(db, principal.companyId, scopeReferences(query, 'query'));
      // Bare dates are read in the LocationId filter's time zone, else in UTC.
      const zone = (query.LocationId && (await repository.locationZone(principal.companyId, query.LocationId))) || 'UTC';
      const from = query.startDate ? localToInstant(query.startDate, '00:00', zone).toJSDate() : null;
      const to = query.endDate ? localToInstant(query.endDate, '24:00', zone).toJSDate() : null;
      const scope = filterOf(query);
      return pageView(
        query,
        async (window) => repository.pageBlocks(principal.companyId, { scope, visible: await access.visibleTo(principal), from, to, ...window }),
        blockView,
      );
    },

    async deleteBlock(principal: Caller, id: string) {
      const row = await repository.blockById(principal.companyId, id);
      if (!row) throw notFound('Block not found');
      await access.assertWritable(principal, row);
      if (!(await repository.deleteBlock(principal.companyId, id))) throw notFound('Block not found');
      await onChanged(principal.companyId, touched(row));
    },
  };
}
