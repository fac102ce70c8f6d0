// GET /v3/mapping/ids (core-interface.md "Migration and mapping"): v1 ids in, v3 ids out.
import { badRequest } from '../../platform/errors.js';
import { canonicalV1Id } from '../../domain/migration/convert.js';
import type { MigrationRepository, ScalarKey } from './repository.js';
import { SCALAR_TABLES } from './repository.js';
import type { MappingQuery } from './schemas.js';

/**
 * The stored legacy ids a v1 id may be kept as: as given, and as a plain decimal (v1 ids are
 * numbers in some v1 documents and strings in others, so `"0012"` and `12` name one record).
 */
export function legacyIdForms(value: string): string[] {
  return [...new Set([value, value.trim(), canonicalV1Id(value)])];
}

export function createMappingService({ repository }: { repository: Pick<MigrationRepository, 'idForLegacy' | 'allocationIdsForLegacy'> }) {
  return {
    /** Answers only the keys asked: a scalar is a v3 id or null, allocationId always an array. */
    async ids(companyId: string, query: MappingQuery) {
      const asked = Object.keys(query) as Array<keyof MappingQuery>;
      if (!asked.length) throw badRequest('Give at least one v1 id: locationId, serviceId, resourceId, customerId, appointmentId or allocationId');
      const answer: Partial<Record<ScalarKey, string | null>> & { allocationId?: string[] } = {};
      for (const key of asked) {
        const forms = legacyIdForms(query[key]!);
        if (key === 'allocationId') answer.allocationId = await repository.allocationIdsForLegacy(companyId, forms);
        else answer[key] = await repository.idForLegacy(companyId, SCALAR_TABLES[key], forms);
      }
      return answer;
    },
  };
}
