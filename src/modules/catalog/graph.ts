/** Helpers for nested objects in catalog responses. */

export interface Linked {
  id: string;
  name: string;
}

/** Groups link rows by their owner key: [{locationId, id, name}] → Map(locationId → [{id, name}]). */
export function groupLinks<K extends string>(rows: Array<Record<K, string> & Linked>, key: K): Map<string, Linked[]> {
  const grouped = new Map<string, Linked[]>();
  for (const row of rows) {
    const list = grouped.get(row[key]) ?? [];
    list.push({ id: row.id, name: row.name });
    grouped.set(row[key], list);
  }
  return grouped;
}

export type CompanySummaryLookup = (companyId: string) => Promise<{ id: string; name: string }>;

/** The rows a 1-based page covers. */
export function pageWindow({ page, limit }: { page: number; limit: number }) {
  return { limit, offset: (page - 1) * limit };
}

export function pageOf<T>(data: T[], page: number, limit: number, total: number) {
  return { data, page, limit, total };
}
