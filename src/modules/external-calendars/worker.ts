// The calendar worker of one instance: syncs connections whose time has come (every
// EXTERNAL_CALENDAR_SYNC_INTERVAL_SECONDS, or at once after select) and makes the write-back rows
// true at the providers. Claims (SKIP LOCKED, with a lease) keep two instances off one connection
// or one event; a provider that hangs costs one call's deadline, never the loop.
import { errorMessage } from '../../platform/values.js';
import { GrantRevokedError, ProviderError } from './providers/types.js';
import type { ExternalCalendarRepository } from './repository.js';
import type { SyncConnection } from './sync.js';
import type { WriteBack } from './write-back.js';

/** After a failed sync, the next try waits this long (or the provider's Retry-After, if longer). */
export const SYNC_RETRY_MS = 60_000;

export interface CalendarWorkerDeps {
  repository: Pick<ExternalCalendarRepository, 'claimDueSyncs' | 'finishSync'>;
  syncConnection: SyncConnection;
  writeBack: Pick<WriteBack, 'processDue'>;
  instanceId: string;
  leaseMs: number;
  syncIntervalMs: number;
  batchSize: number;
  clock: () => number;
  log?: { warn(object: unknown, message: string): void };
}

export function createCalendarWorker(deps: CalendarWorkerDeps) {
  const { repository, clock } = deps;

  /** The next due connection, claimed: one at a time, so a claim's lease covers one sync only. */
  async function claimNext() {
    const now = clock();
    const [connection] = await repository.claimDueSyncs({ now: new Date(now), staleBefore: new Date(now - deps.leaseMs), instanceId: deps.instanceId, limit: 1 });
    return connection;
  }

  async function syncDue(): Promise<number> {
    let count = 0;
    for (let connection = await claimNext(); connection; connection = count < deps.batchSize ? await claimNext() : undefined) {
      count++;
      try {
        await deps.syncConnection(connection);
        await repository.finishSync(connection.companyId, connection.id, { lastSyncedAt: new Date(clock()), lastError: null, nextSyncAt: new Date(clock() + deps.syncIntervalMs) }, deps.instanceId);
      } catch (error) {
        deps.log?.warn({ err: error, connectionId: connection.id }, 'external calendar sync failed');
        // A revoked grant already marked the connection `error` (no next sync); anything else is tried again later.
        const nextSyncAt = error instanceof GrantRevokedError ? null : new Date(clock() + Math.max(SYNC_RETRY_MS, error instanceof ProviderError ? (error.retryAfterMs ?? 0) : 0));
        const lastError = error instanceof GrantRevokedError ? `Access was revoked at the provider: ${errorMessage(error)}` : errorMessage(error);
        await repository.finishSync(connection.companyId, connection.id, { lastError: lastError.slice(0, 500), nextSyncAt }, deps.instanceId);
      }
    }
    return count;
  }

  return {
    syncDue,
    /** One pass: due syncs, then due writes. Returns how much it did. */
    async runOnce(): Promise<number> {
      const synced = await syncDue();
      const written = await deps.writeBack.processDue(deps.batchSize);
      return synced + written;
    },
    /** Passes until nothing is due (tests). */
    async drain(maxPasses = 20): Promise<number> {
      let total = 0;
      for (let pass = 0; pass < maxPasses; pass++) {
        const done = await this.runOnce();
        total += done;
        if (done === 0) break;
      }
      return total;
    },
  };
}

export type CalendarWorker = ReturnType<typeof createCalendarWorker>;
