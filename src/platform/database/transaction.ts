import type { Db } from './index.js';
import { errorCode } from '../values.js';
import { isPoolerMismatch, isStalePlan } from './prepared-statements.js';

const PG_DEADLOCK = '40P01';
const PG_SERIALIZATION = '40001';

/**
 * The one way a module opens a transaction: retried (up to three attempts) when PostgreSQL picks it as a deadlock or
 * serialisation victim, or when a named prepared statement failed for a reason that is not the
 * statement's (its plan went stale under a migration by another instance, or a pooler lost it;
 * prepared-statements.ts): those abort the whole transaction, so running it again
 * is safe, and the caller sees success or a real failure instead of an accident of timing.
 */
export async function transaction<T>(db: Db, work: (trx: Db) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await db.transaction().execute(work);
    } catch (error) {
      const code = errorCode(error);
      if (attempt < 3 && (code === PG_DEADLOCK || code === PG_SERIALIZATION || isStalePlan(error) || isPoolerMismatch(error))) continue;
      throw error;
    }
  }
}
