// Sync in: each selected calendar of a connection read into busy intervals of its resource
// (decisions.md, External calendars). Incremental where the provider gives a cursor; an expired
// cursor falls back to a full sync; our own write-back events are never taken as busy time.
import type { Db } from '../../platform/database/index.js';
import { transaction } from '../../platform/database/transaction.js';
import { errorMessage } from '../../platform/values.js';
import { GrantRevokedError, SyncCursorExpiredError } from './providers/types.js';
import type { CalendarSession, SyncResult, SyncWindow } from './providers/types.js';
import type { ConnectionRow, ExternalCalendarRepository, SyncCounts } from './repository.js';
import type { Sessions } from './sessions.js';

const DAY_MS = 86_400_000;

export interface SyncDeps {
  db: Db;
  repository: Pick<ExternalCalendarRepository, 'selectedCalendars' | 'ownEventIds' | 'markedAppointmentsOfResource' | 'applySync' | 'setCursor' | 'markError'>;
  sessions: Pick<Sessions, 'run'>;
  /** The zone all-day events fall back to: the resource's. */
  resourceZone: (companyId: string, resourceId: string) => Promise<string>;
  /** Clears the availability cache of the resource (its busy time changed). */
  touchResource: (companyId: string, resourceId: string) => Promise<void>;
  horizonDays: number;
  clock: () => number;
}

/** Reads one calendar; a refused cursor means a full read. */
async function readCalendar(session: CalendarSession, calendarId: string, cursor: string | null, window: SyncWindow): Promise<SyncResult> {
  try {
    return await session.syncCalendar(calendarId, cursor, window);
  } catch (error) {
    if (cursor !== null && error instanceof SyncCursorExpiredError) return session.syncCalendar(calendarId, null, window);
    throw error;
  }
}

export function createCalendarSync(deps: SyncDeps) {
  const { repository } = deps;

  /**
   * Syncs every selected calendar of the connection. A revoked grant marks the connection
   * `error` (its syncs stop) and is thrown on; other errors are thrown for the caller to record.
   */
  return async function syncConnection(connection: ConnectionRow): Promise<SyncCounts> {
    const { companyId, id: connectionId, resourceId } = connection;
    const totals: SyncCounts = { imported: 0, updated: 0, removed: 0 };
    const calendars = await repository.selectedCalendars(companyId, connectionId);
    if (!calendars.length) return totals;
    // Whole UTC days: a window that moves only once a day lets providers stay incremental
    // (CalDAV answers in full whenever the window leaves the one its cursor was made for).
    const today = Math.floor(deps.clock() / DAY_MS) * DAY_MS;
    const window: SyncWindow = { from: new Date(today - DAY_MS), to: new Date(today + (deps.horizonDays + 1) * DAY_MS), zone: await deps.resourceZone(companyId, resourceId) };
    const own = await repository.ownEventIds(companyId, connectionId);
    try {
      for (const calendar of calendars) {
        const result = await deps.sessions.run(connection, (session) => readCalendar(session, calendar.calendarId, calendar.syncCursor, window));
        // Events we wrote for this resource's bookings are already busy as appointments: never
        // twice. Marked events of another company or another resource are busy time like any other.
        const markers = result.events.flatMap((e) => (e.marker ? [e.marker] : []));
        const ownBookings = markers.length ? await repository.markedAppointmentsOfResource(companyId, resourceId, markers) : new Set<string>();
        const isOwn = (e: (typeof result.events)[number]) => own.has(e.key) || (e.marker ? ownBookings.has(e.marker) : false);
        const events = result.events.filter((e) => !isOwn(e));
        const removed = [...result.removed, ...result.events.filter(isOwn).map((e) => e.key)];
        const counts = await transaction(deps.db, async (trx) => {
          const changed = await repository.applySync(trx, { companyId, connectionId, calendarId: calendar.calendarId, resourceId }, { full: result.full, events, removed });
          await repository.setCursor(trx, companyId, connectionId, calendar.calendarId, result.cursor);
          return changed;
        });
        totals.imported += counts.imported;
        totals.updated += counts.updated;
        totals.removed += counts.removed;
      }
    } catch (error) {
      if (error instanceof GrantRevokedError) await repository.markError(companyId, connectionId, `Access was revoked at the provider: ${errorMessage(error)}`);
      throw error;
    } finally {
      if (totals.imported + totals.updated + totals.removed > 0) await deps.touchResource(companyId, resourceId);
    }
    return totals;
  };
}

export type SyncConnection = ReturnType<typeof createCalendarSync>;
