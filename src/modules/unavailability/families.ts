// Legacy code families: the same rule carries a different v1 code depending on what a block or an
// allocation set is scoped to (docs/api.md, legacy error codes of CALENDAR and blocks).
// A body or query may be anything here (families are decided before validation): read with fieldOf.
import { fieldOf } from '../../platform/values.js';

/** Blocks report the codes of their scope: location CALENDARBLOCK, resource RESOURCEBLOCK, service SERVICEBLOCK. */
export type BlockFamily = 'CALENDARBLOCK' | 'RESOURCEBLOCK' | 'SERVICEBLOCK';
/** Allocations report RESOURCEALLOCATION when a ResourceId scopes them, else SERVICEALLOCATION. */
export type AllocationFamily = 'RESOURCEALLOCATION' | 'SERVICEALLOCATION';
export type Family = BlockFamily | AllocationFamily;

/** Rules whose code numbers differ between the block families. */
export const BLOCK_CODES = {
  reasonRequired: { CALENDARBLOCK: 'CALENDARBLOCK-103', RESOURCEBLOCK: 'RESOURCEBLOCK-100', SERVICEBLOCK: 'SERVICEBLOCK-103' },
  reasonLength: { CALENDARBLOCK: 'CALENDARBLOCK-104', RESOURCEBLOCK: 'RESOURCEBLOCK-101', SERVICEBLOCK: 'SERVICEBLOCK-104' },
  /** A one-off block whose start falls on a later date than its end. */
  startDateAfterEndDate: { CALENDARBLOCK: 'CALENDARBLOCK-106', RESOURCEBLOCK: 'RESOURCEBLOCK-DATE-100', SERVICEBLOCK: 'SERVICEBLOCK-100' },
  /** A recurring block whose endDate is before its startDate. */
  endDateBeforeStartDate: { CALENDARBLOCK: 'CALENDARBLOCK-106', RESOURCEBLOCK: 'RESOURCEBLOCK-103', SERVICEBLOCK: 'SERVICEBLOCK-106' },
} satisfies Record<string, Record<BlockFamily, string>>;

/**
 * Request schemas carry the code of the location family (blocks) or of the service family
 * (allocations) in `x-codes`; this gives the same rule's code in the caller's family.
 */
export function codeForFamily(code: string, family: Family): string {
  if (family === 'CALENDARBLOCK' || family === 'RESOURCEBLOCK' || family === 'SERVICEBLOCK') {
    const rule = [BLOCK_CODES.reasonRequired, BLOCK_CODES.reasonLength].find((codes) => codes.CALENDARBLOCK === code);
    if (rule) return rule[family];
    return code.replace(/^CALENDARBLOCK-/, `${family}-`);
  }
  return code.replace(/^SERVICEALLOCATION-/, `${family}-`);
}


/** The family of a (possibly invalid) block body: its first scope id decides; none means location. */
export function blockFamilyOf(input: unknown): BlockFamily {
  if (fieldOf(input, 'LocationId') !== undefined) return 'CALENDARBLOCK';
  if (fieldOf(input, 'ResourceId') !== undefined) return 'RESOURCEBLOCK';
  if (fieldOf(input, 'ServiceId') !== undefined) return 'SERVICEBLOCK';
  return 'CALENDARBLOCK';
}

export function allocationFamilyOf(query: unknown): AllocationFamily {
  const resourceId = fieldOf(query, 'ResourceId');
  return resourceId !== undefined && resourceId !== '' ? 'RESOURCEALLOCATION' : 'SERVICEALLOCATION';
}

/** The family of a valid scope: the scope id it has. */
export function familyOfScope(scope: { locationId: string | null; resourceId: string | null }): BlockFamily {
  return scope.locationId ? 'CALENDARBLOCK' : scope.resourceId ? 'RESOURCEBLOCK' : 'SERVICEBLOCK';
}
