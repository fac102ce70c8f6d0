// Every query of external calendars: connections (and their one-time state and selection code),
// selected calendars, imported busy intervals, and write-back rows. Every one is scoped by company.
import { sql } from 'kysely';
import type { Insertable, Selectable } from 'kysely';
import type { Db } from '../../platform/database/index.js';
import type { ExternalCalendarConnectionsTable, ExternalEventWritesTable } from '../../platform/database/schema.js';
import type { BusyEvent, SyncResult } from './providers/types.js';

export type ConnectionRow = Selectable<ExternalCalendarConnectionsTable>;
export type EventWriteRow = Selectable<ExternalEventWritesTable>;

/** What a sync changed in one calendar's intervals. */
export interface SyncCounts {
  imported: number;
  updated: number;
  removed: number;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Rows per insert statement when a sync stores many intervals. */
const INSERT_CHUNK = 500;

export function createExternalCalendarRepository(db: Db) {
  return {
    async insertConnection(row: Insertable<ExternalCalendarConnectionsTable>): Promise<void> {
      await db.insertInto('externalCalendarConnections').values(row).execute();
    },

    connection(companyId: string, id: string): Promise<ConnectionRow | undefined> {
      return db.selectFrom('externalCalendarConnections').selectAll().where('companyId', '=', companyId).where('id', '=', id).executeTakeFirst();
    },

    connectionsOfResource(companyId: string, resourceId: string): Promise<ConnectionRow[]> {
      return db
        .selectFrom('externalCalendarConnections')
        .selectAll()
        .where('companyId', '=', companyId)
        .where('resourceId', '=', resourceId)
        .orderBy('createdAt')
        .orderBy('id')
        .execute();
    },

    /**
     * Uses up an OAuth state: only the first caller with the right nonce, before it expires, gets
     * the connection back (one statement, so two callbacks racing cannot both pass).
     */
    async consumeState(companyId: string, id: string, nonce: string, now: Date): Promise<ConnectionRow | undefined> {
      return db
        .updateTable('externalCalendarConnections')
        .set({ stateNonce: null, stateExpiresAt: null })
        .where('companyId', '=', companyId)
        .where('id', '=', id)
        .where('stateNonce', '=', nonce)
        .where('stateExpiresAt', '>', now)
        .returningAll()
        .executeTakeFirst();
    },

    /** The tokens are in: the connection is connected (and, with selection, has a one-time code). */
    async markConnected(
      companyId: string,
      id: string,
      fields: { credentialsEnc: string; selectionCodeHash: string | null; selectionCodeExpiresAt: Date | null; now: Date },
    ): Promise<void> {
      await db
        .updateTable('externalCalendarConnections')
        .set({
          status: 'connected',
          credentialsEnc: fields.credentialsEnc,
          codeVerifierEnc: null,
          selectionCodeHash: fields.selectionCodeHash,
          selectionCodeExpiresAt: fields.selectionCodeExpiresAt,
          lastError: null,
          nextSyncAt: fields.now,
        })
        .where('companyId', '=', companyId)
        .where('id', '=', id)
        .execute();
    },

    /** Uses up a selection code (once, before it expires). */
    consumeSelectionCode(codeHash: string, now: Date) {
      return db
        .updateTable('externalCalendarConnections')
        .set({ selectionCodeHash: null, selectionCodeExpiresAt: null })
        .where('selectionCodeHash', '=', codeHash)
        .where('selectionCodeExpiresAt', '>', now)
        .returning(['companyId', 'id', 'resourceId'])
        .executeTakeFirst();
    },

    /** The connection's sealed credentials as stored now (another instance may have refreshed them). */
    async credentialsEnc(companyId: string, id: string): Promise<string | null> {
      const row = await db.selectFrom('externalCalendarConnections').select('credentialsEnc').where('companyId', '=', companyId).where('id', '=', id).executeTakeFirst();
      return row?.credentialsEnc ?? null;
    },

    async setCredentials(companyId: string, id: string, credentialsEnc: string): Promise<void> {
      await db.updateTable('externalCalendarConnections').set({ credentialsEnc }).where('companyId', '=', companyId).where('id', '=', id).execute();
    },

    /** The grant is gone or the provider refuses us: status error, no more syncs until reconnected. */
    async markError(companyId: string, id: string, message: string): Promise<void> {
      await db
        .updateTable('externalCalendarConnections')
        .set({ status: 'error', lastError: message.slice(0, 500), nextSyncAt: null })
        .where('companyId', '=', companyId)
        .where('id', '=', id)
        .execute();
    },

    async setWriteCalendar(trx: Db, companyId: string, id: string, writeCalendarId: string | null): Promise<void> {
      await trx.updateTable('externalCalendarConnections').set({ writeCalendarId }).where('companyId', '=', companyId).where('id', '=', id).execute();
    },

    /** Asks for a sync as soon as a worker is free (after select, or on demand). */
    async syncSoon(companyId: string, id: string, now: Date): Promise<void> {
      await db
        .updateTable('externalCalendarConnections')
        .set({ nextSyncAt: now })
        .where('companyId', '=', companyId)
        .where('id', '=', id)
        .where('status', '=', 'connected')
        .execute();
    },

    /** Removes a connection; its calendars, intervals and write rows go with it (cascade). */
    async deleteConnection(trx: Db, companyId: string, id: string): Promise<ConnectionRow | undefined> {
      return trx.deleteFrom('externalCalendarConnections').where('companyId', '=', companyId).where('id', '=', id).returningAll().executeTakeFirst();
    },

    selectedCalendars(companyId: string, connectionId: string) {
      return db
        .selectFrom('externalCalendars')
        .select(['calendarId', 'name', 'syncCursor'])
        .where('companyId', '=', companyId)
        .where('connectionId', '=', connectionId)
        .orderBy('calendarId')
        .execute();
    },

    /** The selection becomes exactly `calendars`: calendars no longer selected lose their intervals. */
    async replaceSelection(trx: Db, companyId: string, connectionId: string, calendars: Array<{ id: string; name: string }>): Promise<void> {
      const keep = calendars.map((c) => c.id);
      let removal = trx.deleteFrom('externalCalendars').where('companyId', '=', companyId).where('connectionId', '=', connectionId);
      if (keep.length) removal = removal.where('calendarId', 'not in', keep);
      await removal.execute();
      if (!calendars.length) return;
      await trx
        .insertInto('externalCalendars')
        .values(calendars.map((c) => ({ companyId, connectionId, calendarId: c.id, name: c.name, syncCursor: null })))
        .onConflict((oc) => oc.columns(['companyId', 'connectionId', 'calendarId']).doUpdateSet((eb) => ({ name: eb.ref('excluded.name') })))
        .execute();
    },

    async setCursor(trx: Db, companyId: string, connectionId: string, calendarId: string, cursor: string | null): Promise<void> {
      await trx
        .updateTable('externalCalendars')
        .set({ syncCursor: cursor })
        .where('companyId', '=', companyId)
        .where('connectionId', '=', connectionId)
        .where('calendarId', '=', calendarId)
        .execute();
    },

    /**
     * Claims connections whose sync is due (or whose claim ran out) for this worker, so two
     * instances never sync one connection at once.
     */
    async claimDueSyncs(request: { now: Date; staleBefore: Date; instanceId: string; limit: number }): Promise<ConnectionRow[]> {
      const { now, staleBefore, instanceId, limit } = request;
      return db
        .updateTable('externalCalendarConnections')
        .set({ syncClaimedAt: now, syncClaimedBy: instanceId })
        .where(({ eb, selectFrom }) =>
          eb(
            sql.raw('(company_id, id)'),
            'in',
            selectFrom('externalCalendarConnections')
              .select(['companyId', 'id'])
              // A literal, not a parameter: external_calendar_connections_due_idx is partial
              // (where status = 'connected'), and a generic plan can use it only when the text says so.
              .where('status', '=', sql.lit('connected'))
              .where('nextSyncAt', '<=', now)
              .where((w) => w.or([w('syncClaimedAt', 'is', null), w('syncClaimedAt', '<', staleBefore)]))
              .orderBy('nextSyncAt')
              .limit(limit)
              .forUpdate()
              .skipLocked(),
          ),
        )
        .returningAll()
        .execute();
    },

    /**
     * A sync ended (well or not): the next one is planned, and `claimedBy`'s claim released. A
     * claim another worker took over meanwhile is left alone; a sync on demand (claimedBy null)
     * never touches the worker's claim.
     */
    async finishSync(
      companyId: string,
      id: string,
      fields: { lastSyncedAt?: Date; lastError: string | null; nextSyncAt: Date | null },
      claimedBy: string | null,
    ): Promise<void> {
      await db
        .updateTable('externalCalendarConnections')
        .set({
          ...fields,
          syncClaimedAt: sql<Date | null>`case when sync_claimed_by = ${claimedBy} then null else sync_claimed_at end`,
          syncClaimedBy: sql<string | null>`case when sync_claimed_by = ${claimedBy} then null else sync_claimed_by end`,
        })
        .where('companyId', '=', companyId)
        .where('id', '=', id)
        .execute();
    },

    /**
     * Of the appointment ids our write-back markers name, those of this company that hold this
     * resource: their events are the resource's own bookings. A marker of another company, or of
     * another resource's booking, is somebody else's busy time.
     */
    async markedAppointmentsOfResource(companyId: string, resourceId: string, appointmentIds: string[]): Promise<Set<string>> {
      const ids = [...new Set(appointmentIds.filter((id) => UUID.test(id)))];
      if (!ids.length) return new Set();
      const rows = await db
        .selectFrom('appointmentResources')
        .select('appointmentId')
        .where('companyId', '=', companyId)
        .where('resourceId', '=', resourceId)
        .where('appointmentId', 'in', ids)
        .execute();
      return new Set(rows.map((r) => r.appointmentId));
    },

    /** Event ids we wrote through this connection: never read back as busy time. */
    async ownEventIds(companyId: string, connectionId: string): Promise<Set<string>> {
      const rows = await db
        .selectFrom('externalEventWrites')
        .select('providerEventId')
        .where('companyId', '=', companyId)
        .where('connectionId', '=', connectionId)
        .where('providerEventId', 'is not', null)
        .execute();
      return new Set(rows.map((r) => r.providerEventId!));
    },

    /**
     * Stores one calendar's sync result: a full result replaces the calendar's intervals, an
     * incremental one adds, changes and removes by key. Returns what changed.
     */
    async applySync(
      trx: Db,
      target: { companyId: string; connectionId: string; calendarId: string; resourceId: string },
      result: Pick<SyncResult, 'full' | 'events' | 'removed'>,
    ): Promise<SyncCounts> {
      const { companyId, connectionId, calendarId, resourceId } = target;
      const scoped = () =>
        trx
          .selectFrom('externalBusyIntervals')
          .select(['eventKey', 'startTime', 'endTime', 'transparency', 'eventType'])
          .where('companyId', '=', companyId)
          .where('connectionId', '=', connectionId)
          .where('calendarId', '=', calendarId);
      const keys = [...new Set([...result.events.map((e) => e.key), ...(result.full ? [] : result.removed)])];
      const existingRows = result.full ? await scoped().execute() : keys.length ? await scoped().where('eventKey', 'in', keys).execute() : [];
      const existing = new Map(existingRows.map((r) => [r.eventKey, r]));

      const incoming = new Map<string, BusyEvent>();
      for (const event of result.events) incoming.set(event.key, event);
      const toRemove = result.full
        ? existingRows.filter((r) => !incoming.has(r.eventKey)).map((r) => r.eventKey)
        : result.removed.filter((key) => existing.has(key) && !incoming.has(key));
      const counts: SyncCounts = { imported: 0, updated: 0, removed: toRemove.length };
      const writes: BusyEvent[] = [];
      for (const event of incoming.values()) {
        const before = existing.get(event.key);
        if (!before) counts.imported++;
        else if (
          before.startTime.getTime() !== event.start.getTime() ||
          before.endTime.getTime() !== event.end.getTime() ||
          before.transparency !== event.transparency ||
          before.eventType !== event.eventType
        ) counts.updated++;
        else continue;
        writes.push(event);
      }

      for (let i = 0; i < toRemove.length; i += INSERT_CHUNK) {
        await trx
          .deleteFrom('externalBusyIntervals')
          .where('companyId', '=', companyId)
          .where('connectionId', '=', connectionId)
          .where('calendarId', '=', calendarId)
          .where('eventKey', 'in', toRemove.slice(i, i + INSERT_CHUNK))
          .execute();
      }
      for (let i = 0; i < writes.length; i += INSERT_CHUNK) {
        await trx
          .insertInto('externalBusyIntervals')
          .values(
            writes.slice(i, i + INSERT_CHUNK).map((e) => ({
              companyId,
              connectionId,
              calendarId,
              eventKey: e.key,
              resourceId,
              startTime: e.start,
              endTime: e.end,
              transparency: e.transparency,
              eventType: e.eventType,
            })),
          )
          .onConflict((oc) =>
            oc.columns(['companyId', 'connectionId', 'calendarId', 'eventKey']).doUpdateSet((eb) => ({
              startTime: eb.ref('excluded.startTime'),
              endTime: eb.ref('excluded.endTime'),
              transparency: eb.ref('excluded.transparency'),
              eventType: eb.ref('excluded.eventType'),
            })),
          )
          .execute();
      }
      return counts;
    },

    /** Connections of these resources that write booked appointments to a calendar. */
    writeConnections(trx: Db, companyId: string, resourceIds: string[]) {
      if (!resourceIds.length) return Promise.resolve([]);
      return trx
        .selectFrom('externalCalendarConnections')
        .select(['id', 'resourceId', 'writeCalendarId'])
        .where('companyId', '=', companyId)
        .where('resourceId', 'in', resourceIds)
        .where('status', '=', 'connected')
        .where('writeCalendarId', 'is not', null)
        .execute();
    },

    writesOfAppointment(trx: Db, companyId: string, appointmentId: string): Promise<EventWriteRow[]> {
      return trx.selectFrom('externalEventWrites').selectAll().where('companyId', '=', companyId).where('appointmentId', '=', appointmentId).forUpdate().execute();
    },

    /** Sets what should be in the calendar for (appointment, connection); the worker makes it so. */
    async upsertWrite(
      trx: Db,
      row: {
        companyId: string;
        appointmentId: string;
        connectionId: string;
        calendarId: string;
        desired: 'present' | 'absent';
        startTime: Date | null;
        endTime: Date | null;
        providerEventId?: string | null;
        /** Kept from the first appointment of a reschedule chain; defaults to this appointment. */
        eventAppointmentId?: string;
      },
    ): Promise<void> {
      await trx
        .insertInto('externalEventWrites')
        .values({
          // Named one by one: callers may pass a whole row, whose claim and revision must not travel.
          companyId: row.companyId,
          appointmentId: row.appointmentId,
          connectionId: row.connectionId,
          calendarId: row.calendarId,
          desired: row.desired,
          startTime: row.startTime,
          endTime: row.endTime,
          providerEventId: row.providerEventId ?? null,
          eventAppointmentId: row.eventAppointmentId ?? row.appointmentId,
          done: false,
          attempts: 0,
          nextAttemptAt: new Date(),
        })
        .onConflict((oc) =>
          oc.columns(['companyId', 'appointmentId', 'connectionId']).doUpdateSet((eb) => ({
            calendarId: eb.ref('excluded.calendarId'),
            desired: eb.ref('excluded.desired'),
            startTime: eb.ref('excluded.startTime'),
            endTime: eb.ref('excluded.endTime'),
            done: false,
            attempts: 0,
            nextAttemptAt: eb.ref('excluded.nextAttemptAt'),
            lastError: null,
            revision: sql<number>`external_event_writes.revision + 1`,
            updatedAt: sql<Date>`now()`,
          })),
        )
        .execute();
    },

    async deleteWrite(trx: Db, companyId: string, appointmentId: string, connectionId: string): Promise<void> {
      await trx.deleteFrom('externalEventWrites').where('companyId', '=', companyId).where('appointmentId', '=', appointmentId).where('connectionId', '=', connectionId).execute();
    },

    /** Claims write rows that are due (or whose claim ran out) for this worker. */
    async claimDueWrites(request: { now: Date; staleBefore: Date; instanceId: string; limit: number }): Promise<EventWriteRow[]> {
      const { now, staleBefore, instanceId, limit } = request;
      return db
        .updateTable('externalEventWrites')
        .set({ claimedAt: now, claimedBy: instanceId })
        .where(({ eb, selectFrom }) =>
          eb(
            sql.raw('(company_id, appointment_id, connection_id)'),
            'in',
            selectFrom('externalEventWrites')
              .select(['companyId', 'appointmentId', 'connectionId'])
              .where('done', '=', false)
              .where('nextAttemptAt', '<=', now)
              .where((w) => w.or([w('claimedAt', 'is', null), w('claimedAt', '<', staleBefore)]))
              .orderBy('nextAttemptAt')
              .limit(limit)
              .forUpdate()
              .skipLocked(),
          ),
        )
        .returningAll()
        .execute();
    },

    /**
     * Records a write attempt. `expected` is the row as claimed: when the row was changed meanwhile
     * (a reschedule or cancel re-set it), only the event id is kept and the new wish stays pending.
     */
    async finishWrite(
      expected: EventWriteRow,
      outcome: { providerEventId: string | null; done: boolean; lastError: string | null; nextAttemptAt: Date | null },
    ): Promise<void> {
      const key = (q: ReturnType<typeof db.updateTable<'externalEventWrites'>>) =>
        q.where('companyId', '=', expected.companyId).where('appointmentId', '=', expected.appointmentId).where('connectionId', '=', expected.connectionId);
      await key(db.updateTable('externalEventWrites').set({ providerEventId: outcome.providerEventId })).execute();
      await key(
        db.updateTable('externalEventWrites').set({
          done: outcome.done,
          attempts: outcome.done ? expected.attempts : expected.attempts + 1,
          lastError: outcome.lastError,
          nextAttemptAt: outcome.nextAttemptAt ?? expected.nextAttemptAt,
          claimedAt: null,
          claimedBy: null,
        }),
      )
        .where('revision', '=', expected.revision)
        .where('claimedBy', '=', expected.claimedBy)
        .execute();
      // Changed meanwhile: release the claim so the new wish is picked up at once.
      await key(db.updateTable('externalEventWrites').set({ claimedAt: null, claimedBy: null })).where('claimedBy', '=', expected.claimedBy).execute();
    },
  };
}

export type ExternalCalendarRepository = ReturnType<typeof createExternalCalendarRepository>;
