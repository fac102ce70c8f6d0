// An outbox event's webhook deliveries: one attempt per matching webhook, recorded before it is
// sent (deliveries are sent once, never retried: Delivery rules 7).
import type { Db } from '../../platform/database/index.js';
import type { EventTrigger } from '../../platform/database/schema.js';
import type { DeliveryOutcome } from '../webhooks/delivery-client.js';
import type { ActiveWebhook, DeliveryStart } from '../webhooks/repository.js';
import type { ClaimedEvent } from './repository.js';

/**
 * The webhooks module's part in delivery (modules/webhooks: repository.ts records, delivery-client.ts
 * sends). Each store function takes the connection to use.
 */
export interface WebhookChannel {
  activeFor(db: Db, companyId: string, locationId: string, trigger: EventTrigger): Promise<ActiveWebhook[]>;
  /** Records a pending attempt: its id, or null when it must not be sent (see startDelivery). */
  start(db: Db, delivery: DeliveryStart): Promise<string | null>;
  /** Records how the attempt ended (what it answers is not used). */
  finish(db: Db, companyId: string, id: string, outcome: DeliveryOutcome): Promise<unknown>;
  deliver(options: { url: string; headers: Record<string, string>; body: unknown }): Promise<DeliveryOutcome>;
}

export interface WebhookDeliveryDeps {
  db: Db;
  webhooks: WebhookChannel;
  /** Told each finished delivery's outcome (metrics). */
  onWebhookOutcome?: ((ok: boolean) => void) | undefined;
}

export function createWebhookDelivery({ db, webhooks, onWebhookOutcome }: WebhookDeliveryDeps) {
  /** One attempt: recorded, sent unless already recorded, finished. */
  async function attempt(event: ClaimedEvent, hook: ActiveWebhook): Promise<void> {
    const deliveryId = await webhooks.start(db, {
      companyId: event.companyId,
      webhookId: hook.id,
      eventId: event.id,
      trigger: event.trigger,
      appointmentId: event.appointmentId,
      url: hook.url,
    });
    if (!deliveryId) return;
    const outcome = await webhooks.deliver({ url: hook.url, headers: hook.headers, body: { appointment: event.payload, trigger: event.trigger } });
    await webhooks.finish(db, event.companyId, deliveryId, outcome);
    onWebhookOutcome?.(outcome.ok);
  }

  /** The event to every active webhook of its location whose triggers match. */
  return async function deliverWebhooks(event: ClaimedEvent): Promise<void> {
    const hooks = await webhooks.activeFor(db, event.companyId, event.locationId, event.trigger);
    // One receiver's slowness must not hold up another's (each has its own five-second deadline).
    const attempts = await Promise.allSettled(hooks.map((hook) => attempt(event, hook)));
    // Every attempt runs to its end before a failure is reported (no delivery is left mid-flight).
    const failed = attempts.filter((a): a is PromiseRejectedResult => a.status === 'rejected');
    if (failed.length) throw new AggregateError(failed.map((f): unknown => f.reason), 'webhook delivery failed');
  };
}
