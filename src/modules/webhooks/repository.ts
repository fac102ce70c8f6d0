// Webhook configuration rows and their delivery records.
//
// Two audiences:
// - createWebhookRepository(db): the configuration routes (list, create, replace the set of a
//   location, change, delete, page through deliveries). Writes that depend on the whole set of a
//   location (the per-location cap, replace) run in one transaction under a lock on the location row.
// - activeWebhooksFor, startDelivery, finishDelivery: plain functions for the delivery worker, which
//   passes its own connection or transaction as `db`.
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Insertable, Selectable, Updateable } from 'kysely';
import type { Db } from '../../platform/database/index.js';
import { transaction } from '../../platform/database/transaction.js';
import type { DeliveryOutcome } from './delivery-client.js';
import type { EventTrigger, WebhookDeliveriesTable, WebhooksTable } from '../../platform/database/schema.js';
import { isForeignKeyViolation } from '../../platform/database/errors.js';
import { lockLocation } from '../catalog/location-lock.js';

export type WebhookRow = Selectable<WebhooksTable>;
export type WebhookDeliveryRow = Selectable<WebhookDeliveriesTable>;
export type WebhookInsert = Insertable<WebhooksTable>;
export type WebhookChanges = Updateable<WebhooksTable>;

function locationSet(executor: Db, companyId: string, locationId: string): Promise<WebhookRow[]> {
  return executor
    .selectFrom('webhooks')
    .selectAll()
    .where('companyId', '=', companyId)
    .where('locationId', '=', locationId)
    .orderBy('createdAt')
    .orderBy('id')
    .execute();
}

export function createWebhookRepository(db: Db) {
  return {
    /** Every webhook of a location, whatever its URL (rows stored before the rules stay visible), oldest first. */
    listByLocation(companyId: string, locationId: string): Promise<WebhookRow[]> {
      return locationSet(db, companyId, locationId);
    },

    byId(companyId: string, id: string): Promise<WebhookRow | undefined> {
      return db.selectFrom('webhooks').selectAll().where('companyId', '=', companyId).where('id', '=', id).executeTakeFirst();
    },

    /** Inserts one webhook unless its location already has `cap` of them: then null, nothing written. */
    insertCapped(row: WebhookInsert, cap: number): Promise<WebhookRow | null> {
      return transaction(db, async (trx) => {
        await lockLocation(trx, row.companyId, row.locationId);
        const { count } = await trx
          .selectFrom('webhooks')
          .select((eb) => eb.fn.countAll<number>().as('count'))
          .where('companyId', '=', row.companyId)
          .where('locationId', '=', row.locationId)
          .executeTakeFirstOrThrow();
        if (Number(count) >= cap) return null;
        return trx.insertInto('webhooks').values(row).returningAll().executeTakeFirstOrThrow();
      });
    },

    /**
     * Replaces the whole set of a location: deletes every webhook there (their delivery records go
     * with them) and inserts `rows`, in one transaction under the location lock.
     */
    replaceSet(companyId: string, locationId: string, rows: WebhookInsert[]): Promise<WebhookRow[]> {
      return transaction(db, async (trx) => {
        await lockLocation(trx, companyId, locationId);
        await trx.deleteFrom('webhooks').where('companyId', '=', companyId).where('locationId', '=', locationId).execute();
        // One statement gives every row the same now(); a microsecond apart keeps the order given.
        const ordered = rows.map((row, index) => ({ ...row, createdAt: sql<Date>`now() + ${index} * interval '1 microsecond'` }));
        if (ordered.length > 0) await trx.insertInto('webhooks').values(ordered).execute();
        return locationSet(trx, companyId, locationId);
      });
    },

    update(companyId: string, id: string, changes: WebhookChanges): Promise<WebhookRow | undefined> {
      return db
        .updateTable('webhooks')
        .set({ ...changes, updatedAt: new Date() })
        .where('companyId', '=', companyId)
        .where('id', '=', id)
        .returningAll()
        .executeTakeFirst();
    },

    /** Deletes a webhook and (by cascade) its delivery records; false when there was none. */
    async delete(companyId: string, id: string): Promise<boolean> {
      const result = await db.deleteFrom('webhooks').where('companyId', '=', companyId).where('id', '=', id).executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },

    /** A page of a webhook's delivery records, newest first (created_at desc, id desc). */
    async deliveriesPage(companyId: string, webhookId: string, window: { limit: number; offset: number }): Promise<{ rows: WebhookDeliveryRow[]; total: number }> {
      const base = db.selectFrom('webhookDeliveries').where('companyId', '=', companyId).where('webhookId', '=', webhookId);
      const [rows, count] = await Promise.all([
        base.selectAll().orderBy('createdAt', 'desc').orderBy('id', 'desc').limit(window.limit).offset(window.offset).execute(),
        base.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow(),
      ]);
      return { rows, total: Number(count.total) };
    },
  };
}

export type WebhookRepository = ReturnType<typeof createWebhookRepository>;

// --- For the delivery worker ------------------------------------------------------------------

export interface ActiveWebhook {
  id: string;
  url: string;
  headers: Record<string, string>;
}

/**
 * The webhooks that receive an event (Delivery rules 3): those of the appointment's location with
 * `active` true whose triggers contain `trigger`, oldest first. Rows whose URL or headers break the
 * current rules (stored before them) are returned too: the delivery client refuses them, so the
 * refusal is recorded where the company can read it.
 */
export function activeWebhooksFor(db: Db, companyId: string, locationId: string, trigger: EventTrigger): Promise<ActiveWebhook[]> {
  return db
    .selectFrom('webhooks')
    .select(['id', 'url', 'headers'])
    .where('companyId', '=', companyId)
    .where('locationId', '=', locationId)
    .where('active', '=', true)
    .where((eb) => eb(eb.val<string>(trigger), '=', eb.fn.any('triggers')))
    .orderBy('createdAt')
    .orderBy('id')
    .execute();
}

export interface DeliveryStart {
  companyId: string;
  webhookId: string;
  eventId: string;
  trigger: EventTrigger;
  appointmentId: string;
  /** The URL the attempt goes to, as configured at the time. */
  url: string;
}

/**
 * Records a pending delivery of one event to one webhook, before the request is sent. Returns the new
 * record's id, or null when this (webhook, event) pair was already recorded (the attempt was made or
 * is being made by another worker: do not send) or when the webhook no longer exists (deleted or
 * replaced since it was chosen: do not send either).
 */
export async function startDelivery(db: Db, input: DeliveryStart): Promise<string | null> {
  const id = randomUUID();
  try {
    // INSERT ... SELECT from the webhook row: a webhook deleted in the meantime inserts nothing
    // instead of failing the foreign key (which would abort the caller's transaction).
    const row = await db
      .insertInto('webhookDeliveries')
      .columns(['companyId', 'id', 'webhookId', 'eventId', 'trigger', 'appointmentId', 'url'])
      .expression((eb) =>
        eb
          .selectFrom('webhooks')
          .select([
            'webhooks.companyId',
            sql<string>`${id}::uuid`.as('id'),
            'webhooks.id as webhookId',
            sql<string>`${input.eventId}::uuid`.as('eventId'),
            sql<string>`${input.trigger}::text`.as('trigger'),
            sql<string>`${input.appointmentId}::uuid`.as('appointmentId'),
            sql<string>`${input.url}::text`.as('url'),
          ])
          .where('webhooks.companyId', '=', input.companyId)
          .where('webhooks.id', '=', input.webhookId),
      )
      .onConflict((oc) => oc.columns(['companyId', 'webhookId', 'eventId']).doNothing())
      .returning('id')
      .executeTakeFirst();
    return row?.id ?? null;
  } catch (error) {
    // The webhook was deleted between the SELECT and the foreign-key check.
    if (isForeignKeyViolation(error)) return null;
    throw error;
  }
}

/** What one attempt ended with. */
export type DeliveryResult = DeliveryOutcome;

/**
 * Records the end of an attempt: outcome `delivered` when ok, else `failed`, with the status code,
 * error, duration, pinned address and finished_at. Only a pending record changes (an attempt ends
 * once); returns whether it did.
 */
export async function finishDelivery(db: Db, companyId: string, id: string, outcome: DeliveryResult): Promise<boolean> {
  const result = await db
    .updateTable('webhookDeliveries')
    .set({
      outcome: outcome.ok ? 'delivered' : 'failed',
      statusCode: outcome.status,
      error: outcome.error,
      durationMs: Math.max(0, Math.round(outcome.durationMs)),
      address: outcome.address,
      finishedAt: new Date(),
    })
    .where('companyId', '=', companyId)
    .where('id', '=', id)
    .where('outcome', '=', 'pending')
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}
