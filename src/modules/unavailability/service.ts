// The unavailability service: one part per kind (blocks.ts, recurring-blocks.ts, holidays.ts,
// allocations.ts), each taking the Pick of the repository it uses, sharing the access rules of
// scope.ts. This file puts the parts together into the one service the routes use.
import type { Db } from '../../platform/database/index.js';
import { createAllocationService } from './allocations.js';
import { createBlockService } from './blocks.js';
import { createHolidayService } from './holidays.js';
import { createRecurringBlockService } from './recurring-blocks.js';
import type { UnavailabilityRepository } from './repository.js';
import { createUnavailabilityAccess } from './scope.js';
import type { AccessDeps, OnChanged } from './scope.js';


export interface UnavailabilityDeps {
  db: Db;
  repository: UnavailabilityRepository;
  links: AccessDeps['links'];
  /** Told after every successful write which records' availability may have changed (the availability cache listens). */
  onChanged: OnChanged;
}

export function createUnavailabilityService({ db, repository, links, onChanged }: UnavailabilityDeps) {
  const access = createUnavailabilityAccess({ links, repository });
  const parts = { db, repository, access, onChanged };
  return {
    ...createBlockService(parts),
    ...createRecurringBlockService(parts),
    ...createHolidayService(parts),
    ...createAllocationService(parts),
  };
}

export type UnavailabilityService = ReturnType<typeof createUnavailabilityService>;
