import { randomBytes } from 'node:crypto';
import type { AppConfig, SecretName } from './config.js';
import { SECRET_NAMES } from './config.js';
import type { Db } from './database/index.js';

export type Secrets = Record<SecretName, string>;

/**
 * Signing secrets: those given in the environment win. A missing one (allowed outside production)
 * is generated once and kept in the database, so every instance on the same database, and every
 * restart, signs and verifies with the same value. `on conflict do nothing` plus a re-read makes
 * two instances starting together agree on one value.
 */
export async function resolveSecrets(db: Db, config: AppConfig): Promise<Secrets> {
  const resolved: Partial<Secrets> = { ...config.secrets };
  for (const name of SECRET_NAMES) {
    if (resolved[name]) continue;
    await db
      .insertInto('serviceSecrets')
      .values({ name, value: randomBytes(48).toString('base64url') })
      .onConflict((oc) => oc.column('name').doNothing())
      .execute();
    const row = await db.selectFrom('serviceSecrets').select('value').where('name', '=', name).executeTakeFirstOrThrow();
    resolved[name] = row.value;
  }
  // The loop above filled every name of SECRET_NAMES, which are the keys of Secrets.
  return resolved as Secrets;
}
