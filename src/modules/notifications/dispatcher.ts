import type { Db } from '../../platform/database/index.js';
import { IDEMPOTENCY_WINDOW_MS } from '../appointments/idempotency.js';
import { createMessageSender } from './messages.js';
import type { CustomerLinkSource, MessageChannels } from './messages.js';
import { createEventProcessor } from './processing.js';
import { createNotificationRepository } from './repository.js';
import type { NotificationRepository } from './repository.js';
import type { ClaimedEvent } from './repository.js';
import { createWebhookDelivery } from './webhook-delivery.js';
import type { WebhookChannel } from './webhook-delivery.js';


/**
 * Drains the outbox written by booking: each event goes to the location's active webhooks whose
 * triggers match (webhook-delivery.ts), and becomes email and SMS messages to the customer, the
 * resources and the business (messages.ts). It also writes APPOINTMENT_REMINDER events when a
 * booked appointment reaches one of its reminder offsets. Its queries are in repository.ts.
 *
 * Exactly-once across instances and restarts:
 * - events are claimed with FOR UPDATE SKIP LOCKED for a lease; a crashed worker's claims expire
 *   and another worker takes them over (processing.ts renews the claim while it works);
 * - every webhook attempt and every message has a row keyed by (webhook or recipient, event),
 *   inserted before it is sent, so a taken-over event never repeats what was already attempted
 *   (deliveries are sent once, never retried: Delivery rules 7);
 * - a reminder is a row keyed by (appointment, offset), written with its event in one transaction.
 *
 * `C` is the merge context messages are rendered with (modules/templates/render.ts: MergeContext).
 */
export interface DispatcherDeps<C = unknown> {
  /** The dispatcher's queries run on it (repository.ts), and the webhook store functions get it. */
  db: Db;
  /** The application's (AppParts.repositories.notifications); tests that build a dispatcher alone get one on `db`. */
  repository?: NotificationRepository;
  /** Names this instance's claims (diagnostics). */
  instanceId: string;
  leaseMs: number;
  batchSize: number;
  now?: () => number;
  webhooks: WebhookChannel;
  messages: MessageChannels<C>;
  /** The manage link and .ics of customer messages (modules/manage/links.ts); none without. */
  links?: CustomerLinkSource;
  log?: { warn(object: unknown, message: string): void };
  /** External calendar write-back of each event (modules/external-calendars/write-back.ts); rerun safely. */
  calendars?: { reconcile(event: ClaimedEvent): Promise<void> };
  /** Told each finished webhook delivery's outcome (metrics). */
  onWebhookOutcome?: (ok: boolean) => void;
}

/** How often a worker looks for due reminders: reminders go out within this long of their time. */
export const REMINDER_SCAN_MS = 15_000;

/** Events of one appointment in order (a booking before its cancellation); the sequences of others apart. */
function byAppointment(events: ClaimedEvent[]): ClaimedEvent[][] {
  const sequences = new Map<string, ClaimedEvent[]>();
  for (const event of events) {
    const key = `${event.companyId}:${event.appointmentId}`;
    sequences.set(key, [...(sequences.get(key) ?? []), event]);
  }
  return [...sequences.values()];
}

export function createDispatcher<C>(deps: DispatcherDeps<C>) {
  const { db } = deps;
  const clock = deps.now ?? Date.now;
  const repository = deps.repository ?? createNotificationRepository(db);
  const process = createEventProcessor({
    repository,
    instanceId: deps.instanceId,
    leaseMs: deps.leaseMs,
    clock,
    log: deps.log,
    deliverWebhooks: createWebhookDelivery({ db, webhooks: deps.webhooks, onWebhookOutcome: deps.onWebhookOutcome }),
    sendMessages: createMessageSender({ repository, messages: deps.messages, links: deps.links }),
    ...(deps.calendars ? { writeCalendars: (event: ClaimedEvent) => deps.calendars!.reconcile(event) } : {}),
  });
  let lastReminderScan = 0;

  /**
   * Reminder events for BK appointments whose reminder time (start minus an offset of the location,
   * else of the company) has come, once per appointment and offset. An appointment booked after its
   * reminder time gets no reminder for that offset; a cancelled or rescheduled one (CN, RE) none.
   */
  function scheduleReminders(): Promise<number> {
    return repository.writeDueReminders(new Date(clock()));
  }

  /** Claims pending events (or ones whose claim lease ran out) for this worker. */
  function claim(): Promise<ClaimedEvent[]> {
    const now = new Date(clock());
    return repository.claimEvents({ now, staleBefore: new Date(now.getTime() - deps.leaseMs), instanceId: deps.instanceId, batchSize: deps.batchSize });
  }

  const dispatcher = {
    scheduleReminders,

    /**
     * One pass: reminders due now (looked for at most every REMINDER_SCAN_MS, as the scan reads a
     * week of booked appointments), then one batch of events. Returns how much it did.
     */
    async runOnce(options: { scanReminders?: boolean } = {}): Promise<{ reminders: number; events: number }> {
      const scan = options.scanReminders ?? clock() - lastReminderScan >= REMINDER_SCAN_MS;
      if (scan) lastReminderScan = clock();
      const reminders = scan ? await scheduleReminders() : 0;
      // On the same slow cadence: idempotency keys past their 24 hours answer nothing any more.
      if (scan) await repository.pruneIdempotencyKeys(new Date(clock() - IDEMPOTENCY_WINDOW_MS));
      const events = await claim();
      await Promise.all(
        byAppointment(events).map(async (sequence) => {
          for (const event of sequence) await process(event);
        }),
      );
      return { reminders, events: events.length };
    },

    /** Passes until the outbox has nothing claimable (tests and shutdown). */
    async drain(maxPasses = 50): Promise<number> {
      let total = 0;
      for (let pass = 0; pass < maxPasses; pass++) {
        const { reminders, events } = await dispatcher.runOnce({ scanReminders: pass === 0 });
        total += events;
        if (events === 0 && reminders === 0) break;
      }
      return total;
    },
  };
  return dispatcher;
}

export type Dispatcher = ReturnType<typeof createDispatcher>;
