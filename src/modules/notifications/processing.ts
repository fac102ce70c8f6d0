// Working on one claimed event: its webhooks and messages, its claim renewed meanwhile, and the
// event marked processed, or given back for a retry when something failed part-way.
import type { ClaimedEvent, NotificationRepository } from './repository.js';
import { errorMessage } from '../../platform/values.js';

/** An event whose processing failed part-way is offered again after this long. */
export const RETRY_AFTER_FAILURE_MS = 30_000;

export interface ProcessingDeps {
  repository: Pick<NotificationRepository, 'updateClaim' | 'closePending'>;
  instanceId: string;
  leaseMs: number;
  clock: () => number;
  log?: { warn(object: unknown, message: string): void } | undefined;
  /** The event's two channels; a failing one never stops the other. */
  deliverWebhooks(event: ClaimedEvent): Promise<void>;
  sendMessages(event: ClaimedEvent): Promise<void>;
  /** External calendar write-back (idempotent: it records a wish, the calendar worker acts on it). */
  writeCalendars?(event: ClaimedEvent): Promise<void>;
}

export function createEventProcessor(deps: ProcessingDeps) {
  const { repository, instanceId, clock } = deps;

  /**
   * The claim is renewed while the event is worked on, so a slow receiver or SMTP server never
   * lets another worker take it over (and close a live attempt as interrupted). Returns the stop.
   */
  function keepClaim(event: ClaimedEvent): () => void {
    const heartbeat = setInterval(() => {
      repository
        .updateClaim(event, instanceId, { claimedAt: new Date(clock()) })
        .catch((error: unknown) => deps.log?.warn({ err: error, eventId: event.id }, 'outbox claim renewal failed'));
    }, Math.max(250, Math.floor(deps.leaseMs / 3)));
    heartbeat.unref();
    return () => clearInterval(heartbeat);
  }

  /**
   * Something went wrong before every attempt was made (a database error, say): the event is
   * offered again in about RETRY_AFTER_FAILURE_MS. Attempts already made are rows keyed by the
   * event, so the retry does only what is missing. An attempt the failure cut off (its row
   * written, its answer unknown) is closed, not repeated.
   */
  async function giveBack(event: ClaimedEvent, failed: PromiseRejectedResult[]): Promise<void> {
    const reason = failed.map((f) => errorMessage(f.reason)).join('; ');
    await repository.closePending(event, `error: ${reason}`.slice(0, 500));
    await repository.updateClaim(event, instanceId, { claimedAt: new Date(clock() - deps.leaseMs + RETRY_AFTER_FAILURE_MS), claimedBy: null });
  }

  return async function process(event: ClaimedEvent): Promise<void> {
    // Attempts of this event left pending by a worker that stopped ended without an answer we know
    // of: the receiver may or may not have got them. They are closed as `interrupted` (delivery
    // unknown, not `failed`), never repeated (deliveries are sent once).
    if (event.previousClaimer) await repository.closePending(event, 'interrupted: the worker stopped during the attempt; not repeated');
    const stop = keepClaim(event);
    try {
      const results = await Promise.allSettled([deps.deliverWebhooks(event), deps.sendMessages(event), deps.writeCalendars?.(event)]);
      const failed = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
      for (const result of failed) deps.log?.warn({ err: result.reason, eventId: event.id }, 'outbox event partly failed');
      if (failed.length === 0) await repository.updateClaim(event, instanceId, { processedAt: new Date() });
      else await giveBack(event, failed);
    } finally {
      stop();
    }
  };
}
