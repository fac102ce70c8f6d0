import { createHash } from 'node:crypto';
import type { Principal } from '../../platform/auth/principal.js';
import { validationError } from '../../platform/errors.js';
import type { Db } from '../../platform/database/index.js';
import type { Appointment } from './mapper.js';

/**
 * Idempotency-Key on create and hold: a retried POST with the same key, from the same caller, within
 * 24 hours gets the first answer instead of booking twice (docs/api.md).
 */

export const IDEMPOTENCY_WINDOW_MS = 24 * 3_600_000;

/**
 * Whose an Idempotency-Key is: the key is bound to its caller, so another caller of the company
 * who sends the same key never gets the first caller's answer.
 */
function idempotencyCaller(principal: Principal): string {
  switch (principal.kind) {
    case 'machine':
      return `machine:${principal.clientId}`;
    case 'dashboard':
    case 'user':
      return `user:${principal.userId}`;
    case 'public':
      return `public:${principal.origin}`;
    case 'calendarSelection':
      return `calendarSelection:${principal.selection.connectionId}`;
    case 'manage':
      return `manage:${principal.manage.appointmentId}`;
  }
}

/**
 * The fingerprint a key is stored with. The route family and the caller are part of the request:
 * a public caller can never replay a dashboard answer, nor one caller another's.
 */
export function requestHash(request: { kind: 'create' | 'hold'; principal: Principal; query: unknown; body: unknown }): string {
  const { kind, principal, query, body } = request;
  return createHash('sha256')
    .update(JSON.stringify({ kind, via: principal.kind === 'public' ? 'public' : 'api', caller: idempotencyCaller(principal), query, body }))
    .digest('hex');
}

/** A request's key (none: not idempotent) and its fingerprint. */
export interface KeyedRequest {
  companyId: string;
  key: string | undefined;
  hash: string;
}

export function createIdempotency(clock: () => number) {
  /** The first answer stored under a live key; 400 when the key was used for another request. */
  async function storedAnswer(conn: Db, request: KeyedRequest & { key: string }, forUpdate = false): Promise<Appointment | null> {
    let query = conn.selectFrom('idempotencyKeys').selectAll().where('companyId', '=', request.companyId).where('key', '=', request.key);
    if (forUpdate) query = query.forUpdate();
    const stored = await query.executeTakeFirst();
    if (!stored || stored.response === null || stored.createdAt.getTime() < clock() - IDEMPOTENCY_WINDOW_MS) return null;
    if (stored.requestHash !== request.hash) {
      throw validationError('headers', 'Idempotency-Key', 'This Idempotency-Key was already used with a different request');
    }
    // The JSON column holds what idempotent() below stored: toApi's answer.
    return stored.response as Appointment;
  }

  /**
   * An Idempotency-Key on a POST: the key row is inserted first, in the same transaction as the
   * work, so a concurrent retry waits on the unique key and then reads the first answer; a failed
   * first attempt rolls the key back with everything else.
   */
  async function idempotent(trx: Db, request: KeyedRequest, work: () => Promise<Appointment>): Promise<{ appointment: Appointment; replayed: boolean }> {
    const { companyId, key, hash } = request;
    if (!key) return { appointment: await work(), replayed: false };
    const inserted = await trx
      .insertInto('idempotencyKeys')
      .values({ companyId, key, requestHash: hash })
      .onConflict((oc) => oc.columns(['companyId', 'key']).doNothing())
      .returning('key')
      .executeTakeFirst();
    if (!inserted) {
      const replay = await storedAnswer(trx, { companyId, key, hash }, true);
      if (replay) return { appointment: replay, replayed: true };
      await trx.updateTable('idempotencyKeys').set({ requestHash: hash, createdAt: new Date(), statusCode: null, response: null }).where('companyId', '=', companyId).where('key', '=', key).execute();
    }
    const appointment = await work();
    await trx.updateTable('idempotencyKeys').set({ statusCode: 201, response: JSON.stringify(appointment) }).where('companyId', '=', companyId).where('key', '=', key).execute();
    return { appointment, replayed: false };
  }

  return { storedAnswer, idempotent };
}

export type Idempotency = ReturnType<typeof createIdempotency>;
