// Every query of the notifications module: the outbox dispatcher's claims, reminders, message rows
// and the records a message is made from, and the notifications log's page.
import { sql } from 'kysely';
import type { Insertable, Selectable } from 'kysely';
import type { Db } from '../../platform/database/index.js';
import { transaction } from '../../platform/database/transaction.js';
import type { Channel, EventTrigger, NotificationsTable } from '../../platform/database/schema.js';
import type { SendOutcome } from '../../platform/messaging/outcome.js';
import { appointmentRepository } from '../appointments/repository.js';
import { toApi } from '../appointments/mapper.js';
import type { Appointment } from '../appointments/mapper.js';

export type NotificationRow = Selectable<NotificationsTable>;

/** An outbox event this worker holds. */
export interface ClaimedEvent {
  companyId: string;
  id: string;
  trigger: EventTrigger;
  appointmentId: string;
  locationId: string;
  payload: Appointment;
  createdAt: Date;
  /** The worker that held this event before and stopped (its lease ran out); null otherwise. */
  previousClaimer: string | null;
}

/** The event a claim names (company and id). */
export type EventKey = Pick<ClaimedEvent, 'companyId' | 'id'>;

/** What a claim update may change: renew it, mark the event processed, or give it back for later. */
export type ClaimChange = { claimedAt: Date } | { processedAt: Date } | { claimedAt: Date; claimedBy: null };

export interface ClaimRequest {
  now: Date;
  /** Claims taken before this have run out: their events are free again. */
  staleBefore: Date;
  instanceId: string;
  batchSize: number;
}

/** The records a message about an appointment is made from (null when one is gone). */
export interface MessageSources {
  company: { name: string; disableEmailNotifications: boolean; disableSmsNotifications: boolean };
  location: { name: string; timezoneName: string; address: unknown; phone: string | null; email: string | null };
  service: { name: string; duration: number };
  customer: { firstName: string; lastName: string | null; email: string; phone: string | null } | null;
  resources: Array<{ name: string; email: string | null; phone: string | null }>;
  /** Booked from a public page under an existing customer's email: the address is unproven. */
  customerUnconfirmed: boolean;
}

export interface LogFilter {
  /** The locations whose appointments' messages the caller may see (null: every one). */
  locationIds: string[] | null;
  appointmentId?: string | undefined;
  channel?: Channel | undefined;
  status?: NotificationRow['status'] | undefined;
  limit: number;
  offset: number;
}

/** Reminders look this far ahead at most (the largest allowed offset is a week). */
const MAX_REMINDER_OFFSET_MINUTES = 10_080;

/**
 * The reminder rows due at `now`, inserted (each with a new event id) and returned. An appointment
 * booked after its reminder time gets no reminder for that offset; only booked (BK) ones get any.
 */
async function insertDueReminders(trx: Db, now: Date) {
  const horizon = new Date(now.getTime() + MAX_REMINDER_OFFSET_MINUTES * 60_000);
  const due = await sql<{ companyId: string; appointmentId: string; offsetMinutes: number; eventId: string }>`
    insert into appointment_reminders (company_id, appointment_id, offset_minutes, event_id)
    select a.company_id, a.id, o.offset_minutes, gen_random_uuid()
    from appointments a
    join companies c on c.id = a.company_id
    join locations l on l.company_id = a.company_id and l.id = a.location_id
    cross join lateral unnest(coalesce(l.reminder_offsets, c.reminder_offsets)) as o(offset_minutes)
    where a.status = 'BK'
      and a.start_time > ${now}
      and a.start_time <= ${horizon}
      and a.start_time - make_interval(mins => o.offset_minutes) <= ${now}
      and a.start_time - make_interval(mins => o.offset_minutes) >= a.created_at
      and not exists (
        select 1 from appointment_reminders r
        where r.company_id = a.company_id and r.appointment_id = a.id and r.offset_minutes = o.offset_minutes)
    limit 500
    on conflict do nothing
    returning company_id, appointment_id, offset_minutes, event_id`.execute(trx);
  return due.rows;
}

/** Claims of the dispatcher: pending events taken for a lease, renewed, finished or given back. */
function createClaims(db: Db) {
  return {
    /**
     * Reminder events for BK appointments whose reminder time (start minus an offset of the
     * location, else of the company) has come, once per appointment and offset: each reminder row
     * is written with its event in one transaction. Returns how many were written.
     */
    writeDueReminders(now: Date): Promise<number> {
      return transaction(db, async (trx) => {
        const due = await insertDueReminders(trx, now);
        // One read per company of every due appointment, and one insert of all the events.
        const byCompany = new Map<string, typeof due>();
        for (const reminder of due) byCompany.set(reminder.companyId, [...(byCompany.get(reminder.companyId) ?? []), reminder]);
        const events = [];
        for (const [companyId, reminders] of byCompany) {
          const rows = new Map((await appointmentRepository.byIds(trx, companyId, reminders.map((r) => r.appointmentId))).map((row) => [row.id, row]));
          for (const reminder of reminders) {
            const row = rows.get(reminder.appointmentId)!;
            events.push({ companyId, id: reminder.eventId, trigger: 'APPOINTMENT_REMINDER' as const, appointmentId: row.id, locationId: row.locationId, payload: toApi(row) });
          }
        }
        await appointmentRepository.addEvents(trx, events);
        return due.length;
      });
    },

    /** Claims pending events (or ones whose claim lease ran out) for this worker, oldest first. */
    async claimEvents({ now, staleBefore, instanceId, batchSize }: ClaimRequest): Promise<ClaimedEvent[]> {
      // previous_claimer is set when this event was claimed before by a worker whose lease ran out (a
      // worker that gives an event back after a failure clears its name).
      const result = await sql<ClaimedEvent>`
        with candidates as (
          select company_id, id, claimed_by as previous_claimer from outbox_events o
          where processed_at is null and (claimed_at is null or claimed_at < ${staleBefore})
            -- an appointment's events in order, even across workers: never past an earlier one
            -- that is still pending (claimed by another worker, say)
            and not exists (
              select 1 from outbox_events earlier
              where earlier.company_id = o.company_id and earlier.appointment_id = o.appointment_id
                and earlier.processed_at is null and earlier.created_at < o.created_at)
          order by created_at
          limit ${batchSize}
          for update skip locked)
        update outbox_events o set claimed_at = ${now}, claimed_by = ${instanceId}
        from candidates c
        where o.company_id = c.company_id and o.id = c.id
        returning o.company_id, o.id, o.trigger, o.appointment_id, o.location_id, o.payload, o.created_at, c.previous_claimer`.execute(db);
      return result.rows.sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime());
    },

    /** Changes this worker's claim of the event; nothing when another worker holds it now. */
    async updateClaim(event: EventKey, instanceId: string, change: ClaimChange): Promise<void> {
      await db
        .updateTable('outboxEvents')
        .set(change)
        .where('companyId', '=', event.companyId)
        .where('id', '=', event.id)
        .where('claimedBy', '=', instanceId)
        .execute();
    },

    /** Closes the event's webhook attempts and messages still pending as `interrupted`, with `reason`. */
    async closePending(event: EventKey, reason: string): Promise<void> {
      await db
        .updateTable('webhookDeliveries')
        .set({ outcome: 'interrupted', error: reason, finishedAt: new Date() })
        .where('companyId', '=', event.companyId)
        .where('eventId', '=', event.id)
        .where('outcome', '=', 'pending')
        .execute();
      await db
        .updateTable('notifications')
        .set({ status: 'interrupted', reason, finishedAt: new Date() })
        .where('companyId', '=', event.companyId)
        .where('eventId', '=', event.id)
        .where('status', '=', 'pending')
        .execute();
    },

    /** Idempotency keys stored before `before` answer nothing any more. */
    pruneIdempotencyKeys(before: Date): Promise<void> {
      return appointmentRepository.pruneIdempotencyKeys(db, before);
    },
  };
}

/** What messages are made from, and their rows (written before sending, finished after). */
function createMessageRows(db: Db) {
  return {
    /** The appointment as the API shows it (the one a reschedule made, say). */
    async appointment(companyId: string, id: string): Promise<Appointment | undefined> {
      const row = await appointmentRepository.byId(db, companyId, id);
      return row ? toApi(row) : undefined;
    },

    async messageSources(companyId: string, appointment: Appointment): Promise<MessageSources | null> {
      const [company, location, service, customer, resources, unconfirmed] = await Promise.all([
        db.selectFrom('companies').select(['name', 'disableEmailNotifications', 'disableSmsNotifications']).where('id', '=', companyId).executeTakeFirst(),
        db.selectFrom('locations').select(['name', 'timezoneName', 'address', 'phone', 'email']).where('companyId', '=', companyId).where('id', '=', appointment.locationId).executeTakeFirst(),
        db.selectFrom('services').select(['name', 'duration']).where('companyId', '=', companyId).where('id', '=', appointment.serviceId).executeTakeFirst(),
        appointment.customerId
          ? db.selectFrom('customers').select(['firstName', 'lastName', 'email', 'phone']).where('companyId', '=', companyId).where('id', '=', appointment.customerId).executeTakeFirst()
          : Promise.resolve(undefined),
        appointment.resourceIds.length
          ? db.selectFrom('resources').select(['id', 'name', 'email', 'phone']).where('companyId', '=', companyId).where('id', 'in', appointment.resourceIds).orderBy('name').orderBy('id').execute()
          : Promise.resolve([]),
        db.selectFrom('appointments').select('customerUnconfirmed').where('companyId', '=', companyId).where('id', '=', appointment.id).executeTakeFirst(),
      ]);
      if (!company || !location || !service) return null;
      return {
        company,
        location,
        service,
        customer: customer ?? null,
        resources: resources.map(({ name, email, phone }) => ({ name, email, phone })),
        customerUnconfirmed: unconfirmed?.customerUnconfirmed === true,
      };
    },

    /**
     * Inserts a pending message row unless one exists for this (event, channel, recipient type,
     * recipient): true when this call inserted it, and may send it.
     */
    async insertMessage(row: Insertable<NotificationsTable>): Promise<boolean> {
      const inserted = await db
        .insertInto('notifications')
        .values(row)
        .onConflict((oc) => oc.columns(['companyId', 'eventId', 'channel', 'recipientType', 'recipient']).doNothing())
        .returning('id')
        .executeTakeFirst();
      return inserted !== undefined;
    },

    /** Records how sending the message ended. */
    async finishMessage(companyId: string, id: string, outcome: SendOutcome): Promise<void> {
      await db
        .updateTable('notifications')
        .set({
          status: outcome.status,
          reason: outcome.status === 'sent' ? null : outcome.reason,
          providerId: outcome.status === 'sent' ? outcome.providerId : null,
          finishedAt: new Date(),
        })
        .where('companyId', '=', companyId)
        .where('id', '=', id)
        .execute();
    },
  };
}

/** The notifications log (GET /v3/notifications). */
function createLog(db: Db) {
  return {
    async appointmentExists(companyId: string, id: string): Promise<boolean> {
      const row = await db.selectFrom('appointments').select('id').where('companyId', '=', companyId).where('id', '=', id).executeTakeFirst();
      return row !== undefined;
    },

    /** A page of the company's messages, newest first, and how many the filter matches. */
    async pageLog(companyId: string, filter: LogFilter): Promise<{ rows: NotificationRow[]; total: number }> {
      let base = db.selectFrom('notifications').where('companyId', '=', companyId);
      const locations = filter.locationIds;
      if (locations) {
        base = base.where((eb) =>
          eb.exists(
            eb
              .selectFrom('appointments as a')
              .select('a.id')
              .whereRef('a.companyId', '=', 'notifications.companyId')
              .whereRef('a.id', '=', 'notifications.appointmentId')
              // A scope of no locations matches nothing.
              .where((inner) => (locations.length ? inner('a.locationId', 'in', locations) : inner.val(false))),
          ),
        );
      }
      if (filter.appointmentId) base = base.where('appointmentId', '=', filter.appointmentId);
      if (filter.channel) base = base.where('channel', '=', filter.channel);
      if (filter.status) base = base.where('status', '=', filter.status);
      const [rows, count] = await Promise.all([
        base.selectAll().orderBy('createdAt', 'desc').orderBy('id', 'desc').limit(filter.limit).offset(filter.offset).execute(),
        base.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow(),
      ]);
      return { rows, total: Number(count.total) };
    },
  };
}

export function createNotificationRepository(db: Db) {
  return { ...createClaims(db), ...createMessageRows(db), ...createLog(db) };
}

export type NotificationRepository = ReturnType<typeof createNotificationRepository>;
