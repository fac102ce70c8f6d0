import type { Db } from '../../platform/database/index.js';

/**
 * Serialises writes to the rows one location owns as a set (webhooks: cap check plus insert;
 * allocation sets; holidays). FOR NO KEY UPDATE conflicts with itself but not with the KEY SHARE
 * locks that foreign-key checks take, so bookings and other rows referencing the location are
 * never held up by it.
 */
export async function lockLocation(trx: Db, companyId: string, locationId: string): Promise<void> {
  await trx.selectFrom('locations').select('id').where('companyId', '=', companyId).where('id', '=', locationId).forNoKeyUpdate().execute();
}
