import type { SelectQueryBuilder } from 'kysely';
import type { Database } from '../../platform/database/schema.js';

/**
 * One page of the rows `filtered` finds, with the count of all of them: both queries start from the
 * same filters, so the total always matches the rows a later page would give.
 */
export async function countedPage<TB extends keyof Database, F, O>(
  filtered: SelectQueryBuilder<Database, TB, F>,
  rows: (filtered: SelectQueryBuilder<Database, TB, F>) => SelectQueryBuilder<Database, TB, O>,
  window: { limit: number; offset: number },
) {
  const [found, count] = await Promise.all([
    rows(filtered).limit(window.limit).offset(window.offset).execute(),
    filtered.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow(),
  ]);
  return { rows: found, total: Number(count.total) };
}
