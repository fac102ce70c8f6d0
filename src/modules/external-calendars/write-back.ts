// Write-back (decisions.md, External calendars): a BK appointment of a resource with a write
// calendar becomes an event there; reschedule moves it, cancel deletes it.
//
// Two halves, so a crash loses nothing and duplicates nothing:
// - `reconcile` (run by the outbox dispatcher for every appointment event, in one transaction)
//   records per appointment and connection what should be in the calendar: present at these
//   times, or absent. A reschedule hands the old appointment's rows (and provider event ids) to
//   its replacement, so the same provider event is moved rather than deleted and made anew.
// - `processDue` (the calendar worker) makes the provider match the rows, with backoff on errors
//   and 429 (Retry-After honoured). A provider call that succeeded before a crash is repeated
//   with the same appointment id, which each provider client turns into the same event.
import type { Db } from '../../platform/database/index.js';
import { transaction } from '../../platform/database/transaction.js';
import { errorMessage } from '../../platform/values.js';
import { appointmentRepository } from '../appointments/repository.js';
import type { AppointmentRow } from '../appointments/repository.js';
import { GrantRevokedError, ProviderError } from './providers/types.js';
import type { EventWrite } from './providers/types.js';
import type { EventWriteRow, ExternalCalendarRepository } from './repository.js';
import type { Sessions } from './sessions.js';

/** First retry after a failed write; doubled per attempt up to MAX_RETRY_DELAY_MS. */
export const FIRST_RETRY_DELAY_MS = 30_000;
export const MAX_RETRY_DELAY_MS = 3_600_000;
/** A write whose connection is in error waits this long before looking again. */
const DISCONNECTED_RETRY_MS = 3_600_000;

/** The wait before the next attempt: the provider's Retry-After when longer than our backoff. */
export function retryDelayMs(attempts: number, retryAfterMs: number | null): number {
  const backoff = Math.min(MAX_RETRY_DELAY_MS, FIRST_RETRY_DELAY_MS * 2 ** Math.min(attempts, 16));
  return Math.max(backoff, Math.min(retryAfterMs ?? 0, MAX_RETRY_DELAY_MS));
}

export interface WriteBackDeps {
  db: Db;
  repository: Pick<
    ExternalCalendarRepository,
    'writeConnections' | 'writesOfAppointment' | 'upsertWrite' | 'deleteWrite' | 'claimDueWrites' | 'finishWrite' | 'connection' | 'markError'
  >;
  sessions: Pick<Sessions, 'run'>;
  /** The event's title and description, from the EXTERNAL_CALENDAR_EVENT template. */
  render: (companyId: string, appointmentId: string) => Promise<{ title: string; description: string; timeZone: string } | null>;
  instanceId: string;
  leaseMs: number;
  clock: () => number;
  log?: { warn(object: unknown, message: string): void };
}

const sameTime = (a: Date | null, b: Date | null) => (a?.getTime() ?? null) === (b?.getTime() ?? null);
/** How far a reschedule chain is followed (each link is one reschedule before the dispatcher ran). */
const MAX_CHAIN = 20;

export function createWriteBack(deps: WriteBackDeps) {
  const { repository } = deps;

  /**
   * Takes over the write rows of the appointments this one replaced, the whole chain back (two
   * reschedules before the dispatcher ran leave rows on the first), so their events move rather
   * than multiply. An adopted row keeps the appointment its provider event is keyed on, so even
   * a create still in flight for the old row is found again by the replacement's first write.
   */
  async function adoptPredecessors(trx: Db, row: AppointmentRow): Promise<void> {
    let previousId = row.rescheduledFromId;
    for (let depth = 0; previousId && depth < MAX_CHAIN; depth++) {
      const inherited = await repository.writesOfAppointment(trx, row.companyId, previousId);
      const own = new Set((await repository.writesOfAppointment(trx, row.companyId, row.id)).map((w) => w.connectionId));
      for (const write of inherited) {
        if (own.has(write.connectionId)) {
          // This connection already has a row for the replacement: the old event goes.
          if (write.desired !== 'absent') await repository.upsertWrite(trx, { ...write, desired: 'absent' });
          continue;
        }
        await repository.upsertWrite(trx, { ...write, appointmentId: row.id });
        await repository.deleteWrite(trx, row.companyId, write.appointmentId, write.connectionId);
      }
      const previous = await appointmentRepository.byId(trx, row.companyId, previousId);
      previousId = previous?.rescheduledFromId ?? null;
    }
  }

  async function reconcileIn(trx: Db, companyId: string, appointmentId: string, depth = 0): Promise<void> {
    const row = await appointmentRepository.byId(trx, companyId, appointmentId);
    if (!row) return;
    if (row.status === 'RE' && row.rescheduledToId && depth < MAX_CHAIN) return reconcileIn(trx, companyId, row.rescheduledToId, depth + 1);
    await adoptPredecessors(trx, row);
    const writes = await repository.writesOfAppointment(trx, companyId, row.id);
    const targets = row.status === 'BK' ? await repository.writeConnections(trx, companyId, row.resourceIds) : [];
    for (const target of targets) {
      const existing = writes.find((w) => w.connectionId === target.id);
      const wish = { desired: 'present' as const, calendarId: target.writeCalendarId!, startTime: row.startTime, endTime: row.endTime };
      if (existing && existing.desired === 'present' && existing.calendarId === wish.calendarId && sameTime(existing.startTime, wish.startTime) && sameTime(existing.endTime, wish.endTime)) continue;
      await repository.upsertWrite(trx, { companyId, appointmentId: row.id, connectionId: target.id, ...wish });
    }
    for (const write of writes) {
      if (targets.some((t) => t.id === write.connectionId) || write.desired === 'absent') continue;
      await repository.upsertWrite(trx, { ...write, desired: 'absent' });
    }
  }

  /** Makes one row true at the provider. */
  async function apply(write: EventWriteRow): Promise<void> {
    const now = deps.clock();
    const connection = await repository.connection(write.companyId, write.connectionId);
    if (!connection || connection.status !== 'connected') {
      await repository.finishWrite(write, {
        providerEventId: write.providerEventId,
        done: false,
        lastError: 'The calendar connection is not connected',
        nextAttemptAt: new Date(now + DISCONNECTED_RETRY_MS),
      });
      return;
    }
    try {
      if (write.desired === 'absent') {
        await deps.sessions.run(connection, async (session) => {
          if (write.providerEventId) await session.deleteEvent(write.calendarId, write.providerEventId);
          // No id recorded: a create may still have reached the provider before its answer was
          // lost. Where the event's id follows from the appointment, that event goes too.
          else await session.deleteAppointmentEvent?.(write.calendarId, write.eventAppointmentId);
        });
        await repository.finishWrite(write, { providerEventId: null, done: true, lastError: null, nextAttemptAt: null });
        return;
      }
      const rendered = await deps.render(write.companyId, write.appointmentId);
      if (!rendered) {
        await repository.finishWrite(write, { providerEventId: write.providerEventId, done: true, lastError: 'The appointment is gone', nextAttemptAt: null });
        return;
      }
      // Keyed on the chain's first appointment: a repeated create finds the event made before.
      const event: EventWrite = { appointmentId: write.eventAppointmentId, title: rendered.title, description: rendered.description, start: write.startTime!, end: write.endTime!, timeZone: rendered.timeZone };
      const providerEventId = await deps.sessions.run(connection, (session) => session.putEvent(write.calendarId, write.providerEventId, event));
      await repository.finishWrite(write, { providerEventId, done: true, lastError: null, nextAttemptAt: null });
    } catch (error) {
      if (error instanceof GrantRevokedError) await repository.markError(connection.companyId, connection.id, `Access was revoked at the provider: ${errorMessage(error)}`);
      const retryAfter = error instanceof ProviderError ? error.retryAfterMs : null;
      deps.log?.warn({ err: error, connectionId: write.connectionId, appointmentId: write.appointmentId }, 'external calendar write failed; will retry');
      await repository.finishWrite(write, {
        providerEventId: write.providerEventId,
        done: false,
        lastError: errorMessage(error).slice(0, 500),
        nextAttemptAt: new Date(now + retryDelayMs(write.attempts, retryAfter)),
      });
    }
  }

  return {
    /** Records what the appointment's write calendars should show (outbox dispatcher, per event). */
    reconcile(companyId: string, appointmentId: string): Promise<void> {
      return transaction(deps.db, (trx) => reconcileIn(trx, companyId, appointmentId));
    },

    /** Up to `limit` due writes, claimed one at a time (a lease covers one provider call); returns how many. */
    async processDue(limit = 20): Promise<number> {
      let count = 0;
      while (count < limit) {
        const now = deps.clock();
        const [write] = await repository.claimDueWrites({ now: new Date(now), staleBefore: new Date(now - deps.leaseMs), instanceId: deps.instanceId, limit: 1 });
        if (!write) break;
        count++;
        await apply(write);
      }
      return count;
    },
  };
}

export type WriteBack = ReturnType<typeof createWriteBack>;
