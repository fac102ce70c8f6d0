import type { Db } from '../../platform/database/index.js';
import { ApiError, fieldError } from '../../platform/errors.js';
import type { ErrorLocation, FieldError } from '../../platform/errors.js';

export type CatalogTable = 'locations' | 'services' | 'resources' | 'customers';

const NOUN: Record<CatalogTable, string> = {
  locations: 'location',
  services: 'service',
  resources: 'resource',
  customers: 'customer',
};

export interface IdReference {
  table: CatalogTable;
  ids: string[];
  location: ErrorLocation;
  /** `locationIds` gives paths `locationIds.0`, ...; `LocationId` (single) gives `LocationId`. */
  path: string;
  single?: boolean;
  /** The legacy catalog code of an entry that is not a live record (LOCATION-111, RESOURCE-110). */
  code?: string;
}

/**
 * Ids in a body or query must be live records of the caller's company. Another company's id and
 * an unknown id look the same to the caller: 400 naming the value (never 404, never a hint that
 * the record exists elsewhere).
 */
export async function assertOwned(db: Db, companyId: string, references: IdReference[]): Promise<void> {
  const errors: FieldError[] = [];
  // One query per reference, all at once: each is an index lookup by (company_id, id).
  const found = await Promise.all(
    references.map((reference) =>
      reference.ids.length === 0
        ? Promise.resolve([])
        : db
            .selectFrom(reference.table)
            .select('id')
            .where('companyId', '=', companyId)
            .where('id', 'in', reference.ids)
            .where('archivedAt', 'is', null)
            .execute(),
    ),
  );
  references.forEach((reference, referenceIndex) => {
    const known = new Set(found[referenceIndex]!.map((row) => row.id));
    reference.ids.forEach((id, index) => {
      if (known.has(id)) return;
      const path = reference.single ? reference.path : `${reference.path}.${index}`;
      errors.push(fieldError(reference.location, path, `${id} is not a ${NOUN[reference.table]} of this company`, reference.code));
    });
  });
  if (errors.length > 0) {
    const message = errors.length === 1 ? errors[0]!.msg : `These ids are not records of this company: ${errors.map((e) => e.msg.split(' ')[0]).join(', ')}`;
    const codes = new Set(errors.map((e) => e.code));
    throw new ApiError(400, message, errors, codes.size === 1 ? [...codes][0] : undefined);
  }
}
