import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Db } from '../../platform/database/index.js';
import type { Channel, EventTrigger, RecipientType, TemplateType } from '../../platform/database/schema.js';
import { appointmentRepository } from '../appointments/repository.js';
import { IDEMPOTENCY_WINDOW_MS, toApi } from '../appointments/service.js';
import type { Appointment } from '../appointments/service.js';
import type { DeliveryOutcome } from '../webhooks/delivery-client.js';
import type { SendOutcome } from '../../platform/messaging/outcome.js';

/**
 * Drains the outbox written by booking: each event goes to the location's active webhooks whose
 * triggers match, and becomes email and SMS messages to the customer, the resources and the
 * business. It also writes APPOINTMENT_REMINDER events when a booked appointment reaches one of its
 * reminder offsets.
 *
 * Exactly-once across instances and restarts:
 * - events are claimed with FOR UPDATE SKIP LOCKED for a lease; a crashed worker's claims expire
 *   and another worker takes them over;
 * - every webhook attempt and every message has a row keyed by (webhook or recipient, event),
 *   inserted before it is sent, so a taken-over event never repeats what was already attempted
 *   (deliveries are sent once, never retried: Delivery rules 7);
 * - a reminder is a row keyed by (appointment, offset), written with its event in one transaction.
 */

export interface DispatcherDeps {
  db: Db;
  /** Names this instance's claims (diagnostics). */
  instanceId: string;
  leaseMs: number;
  batchSize: number;
  now?: () => number;
  webhooks: {
    activeFor(db: Db, companyId: string, locationId: string, trigger: string): Promise<Array<{ id: string; url: string; headers: Record<string, string> }>>;
    start(db: Db, delivery: { companyId: string; webhookId: string; eventId: string; trigger: string; appointmentId: string; url: string }): Promise<string | null>;
    finish(db: Db, companyId: string, id: string, outcome: DeliveryOutcome): Promise<void>;
    deliver(options: { url: string; headers: Record<string, string>; body: unknown }): Promise<DeliveryOutcome>;
  };
  messages: {
    template(companyId: string, type: TemplateType, recipientType: RecipientType, channel: Channel): Promise<{ subject: string; body: string }>;
    render(template: { subject: string; body: string }, context: unknown, channel: Channel): { subject: string | null; text: string };
    context(data: MessageData): unknown;
    email: { send(message: { to: string; subject: string; text: string }): Promise<SendOutcome> };
    sms: { send(message: { to: string; body: string }): Promise<SendOutcome> };
  };
  log?: { warn(object: unknown, message: string): void };
  /** Told each finished webhook delivery's outcome (metrics). */
  onWebhookOutcome?: (ok: boolean) => void;
}

/** What a message is made from (the templates' merge variables come from it). */
export interface MessageData {
  appointment: Appointment;
  previousAppointment: Appointment | null;
  company: { name: string };
  location: { name: string; timezoneName: string; address: unknown; phone: string | null; email: string | null };
  service: { name: string; duration: number };
  customer: { firstName: string; lastName: string | null; email: string; phone: string | null } | null;
  resources: Array<{ name: string; email: string | null; phone: string | null }>;
}

/** Which template each trigger's messages use. */
export const TEMPLATE_OF: Record<EventTrigger, TemplateType> = {
  NEW_APPOINTMENT: 'APPOINTMENT_BOOKED',
  APPOINTMENT_CONFIRMED: 'APPOINTMENT_CONFIRMED',
  APPOINTMENT_CANCELLED: 'APPOINTMENT_CANCELLED',
  APPOINTMENT_RESCHEDULED: 'APPOINTMENT_RESCHEDULED',
  APPOINTMENT_REMINDER: 'APPOINTMENT_REMINDER',
};

interface ClaimedEvent {
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

/** Reminders look this far ahead at most (the largest allowed offset is a week). */
const MAX_REMINDER_OFFSET_MINUTES = 10_080;

/** How often a worker looks for due reminders: reminders go out within this long of their time. */
export const REMINDER_SCAN_MS = 15_000;
/** An event whose processing failed part-way is offered again after this long. */
export const RETRY_AFTER_FAILURE_MS = 30_000;

export function createDispatcher(deps: DispatcherDeps) {
  const { db } = deps;
  const clock = deps.now ?? Date.now;
  let lastReminderScan = 0;

  /**
   * Reminder events for BK appointments whose reminder time (start minus an offset of the location,
   * else of the company) has come, once per appointment and offset. An appointment booked after its
   * reminder time gets no reminder for that offset; a cancelled or rescheduled one (CN, RE) none.
   */
  async function scheduleReminders(): Promise<number> {
    const now = new Date(clock());
    const horizon = new Date(now.getTime() + MAX_REMINDER_OFFSET_MINUTES * 60_000);
    return db.transaction().execute(async (trx) => {
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
      // One read per company of every due appointment, and one insert of all the events.
      const byCompany = new Map<string, typeof due.rows>();
      for (const reminder of due.rows) byCompany.set(reminder.companyId, [...(byCompany.get(reminder.companyId) ?? []), reminder]);
      const events = [];
      for (const [companyId, reminders] of byCompany) {
        const rows = new Map((await appointmentRepository.byIds(trx, companyId, reminders.map((r) => r.appointmentId))).map((row) => [row.id, row]));
        for (const reminder of reminders) {
          const row = rows.get(reminder.appointmentId)!;
          events.push({ companyId, id: reminder.eventId, trigger: 'APPOINTMENT_REMINDER' as const, appointmentId: row.id, locationId: row.locationId, payload: toApi(row) });
        }
      }
      await appointmentRepository.addEvents(trx, events);
      return due.rows.length;
    });
  }

  /** Claims pending events (or ones whose claim lease ran out) for this worker. */
  async function claim(): Promise<ClaimedEvent[]> {
    const now = new Date(clock());
    const staleBefore = new Date(now.getTime() - deps.leaseMs);
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
        limit ${deps.batchSize}
        for update skip locked)
      update outbox_events o set claimed_at = ${now}, claimed_by = ${deps.instanceId}
      from candidates c
      where o.company_id = c.company_id and o.id = c.id
      returning o.company_id, o.id, o.trigger, o.appointment_id, o.location_id, o.payload, o.created_at, c.previous_claimer`.execute(db);
    return result.rows.sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime());
  }

  /**
   * Attempts of this event left pending ended without an answer we know of (a worker stopped, or
   * processing failed part-way): the receiver may or may not have got them. They are closed as
   * `interrupted` (delivery unknown, not `failed`), never repeated (deliveries are sent once).
   */
  async function closePending(event: ClaimedEvent, reason: string): Promise<void> {
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
  }

  async function deliverWebhooks(event: ClaimedEvent): Promise<void> {
    const hooks = await deps.webhooks.activeFor(db, event.companyId, event.locationId, event.trigger);
    // One receiver's slowness must not hold up another's (each has its own five-second deadline).
    const attempts = await Promise.allSettled(
      hooks.map(async (hook) => {
        const deliveryId = await deps.webhooks.start(db, {
          companyId: event.companyId,
          webhookId: hook.id,
          eventId: event.id,
          trigger: event.trigger,
          appointmentId: event.appointmentId,
          url: hook.url,
        });
        if (!deliveryId) return;
        const outcome = await deps.webhooks.deliver({ url: hook.url, headers: hook.headers, body: { appointment: event.payload, trigger: event.trigger } });
        await deps.webhooks.finish(db, event.companyId, deliveryId, outcome);
        deps.onWebhookOutcome?.(outcome.ok);
      }),
    );
    // Every attempt runs to its end before a failure is reported (no delivery is left mid-flight).
    const failed = attempts.filter((a): a is PromiseRejectedResult => a.status === 'rejected');
    if (failed.length) throw new AggregateError(failed.map((f) => f.reason as unknown), 'webhook delivery failed');
  }

  async function messageData(event: ClaimedEvent): Promise<{ data: MessageData; channels: { EMAIL: boolean; SMS: boolean }; customerUnconfirmed: boolean } | null> {
    const { companyId } = event;
    let appointment = event.payload;
    let previousAppointment: Appointment | null = null;
    // A rescheduled appointment's message tells the new time and keeps the old one at hand.
    if (event.trigger === 'APPOINTMENT_RESCHEDULED' && appointment.rescheduledToId) {
      const replacement = await appointmentRepository.byId(db, companyId, appointment.rescheduledToId);
      if (replacement) {
        previousAppointment = appointment;
        appointment = toApi(replacement);
      }
    }
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
      // Booked from a public page under an existing customer's email: the address is unproven.
      db.selectFrom('appointments').select('customerUnconfirmed').where('companyId', '=', companyId).where('id', '=', appointment.id).executeTakeFirst(),
    ]);
    if (!company || !location || !service) return null;
    return {
      data: {
        appointment,
        previousAppointment,
        company: { name: company.name },
        location,
        service,
        customer: customer ?? null,
        resources: resources.map(({ name, email, phone }) => ({ name, email, phone })),
      },
      // The company's channel flags suppress their channel (webhooks are not affected).
      channels: { EMAIL: !company.disableEmailNotifications, SMS: !company.disableSmsNotifications },
      customerUnconfirmed: unconfirmed?.customerUnconfirmed === true,
    };
  }

  /** Every message an event sends: per recipient and channel, built from the channel's template. */
  async function sendMessages(event: ClaimedEvent): Promise<void> {
    // A replacement made by reschedule is announced by the APPOINTMENT_RESCHEDULED message.
    if (event.trigger === 'NEW_APPOINTMENT' && event.payload.rescheduledFromId) return;
    const loaded = await messageData(event);
    if (!loaded) return;
    const { data, channels, customerUnconfirmed } = loaded;
    const type = TEMPLATE_OF[event.trigger];
    const recipients: Array<{ recipientType: RecipientType; channel: Channel; to: string }> = [];
    if (data.customer && !customerUnconfirmed) {
      recipients.push({ recipientType: 'CUSTOMER', channel: 'EMAIL', to: data.customer.email });
      if (data.customer.phone) recipients.push({ recipientType: 'CUSTOMER', channel: 'SMS', to: data.customer.phone });
    }
    for (const resource of data.resources) {
      if (resource.email) recipients.push({ recipientType: 'RESOURCE', channel: 'EMAIL', to: resource.email });
      if (resource.phone) recipients.push({ recipientType: 'RESOURCE', channel: 'SMS', to: resource.phone });
    }
    if (data.location.email) recipients.push({ recipientType: 'BUSINESS', channel: 'EMAIL', to: data.location.email });
    if (data.location.phone) recipients.push({ recipientType: 'BUSINESS', channel: 'SMS', to: data.location.phone });

    const context = deps.messages.context(data);
    // Email and SMS are built separately, each from its own channel's template (Notification
    // templates 3); recipients of one type and channel share the rendered message.
    const built = new Map<string, { subject: string | null; text: string }>();
    for (const recipient of recipients) {
      const key = `${recipient.recipientType}:${recipient.channel}`;
      let rendered = built.get(key);
      if (!rendered) {
        rendered = deps.messages.render(await deps.messages.template(event.companyId, type, recipient.recipientType, recipient.channel), context, recipient.channel);
        built.set(key, rendered);
      }
      const id = randomUUID();
      const inserted = await db
        .insertInto('notifications')
        .values({
          companyId: event.companyId,
          id,
          eventId: event.id,
          appointmentId: event.appointmentId,
          type,
          channel: recipient.channel,
          recipientType: recipient.recipientType,
          recipient: recipient.to,
          subject: rendered.subject,
          body: rendered.text,
        })
        .onConflict((oc) => oc.columns(['companyId', 'eventId', 'channel', 'recipientType', 'recipient']).doNothing())
        .returning('id')
        .executeTakeFirst();
      if (!inserted) continue;
      const outcome: SendOutcome = !channels[recipient.channel]
        ? { status: 'not_sent', reason: `${recipient.channel === 'EMAIL' ? 'Email' : 'SMS'} notifications are turned off for this company` }
        : recipient.channel === 'EMAIL'
          ? await deps.messages.email.send({ to: recipient.to, subject: rendered.subject ?? '', text: rendered.text })
          : await deps.messages.sms.send({ to: recipient.to, body: rendered.text });
      await db
        .updateTable('notifications')
        .set({
          status: outcome.status,
          reason: outcome.status === 'sent' ? null : outcome.reason,
          providerId: outcome.status === 'sent' ? outcome.providerId : null,
          finishedAt: new Date(),
        })
        .where('companyId', '=', event.companyId)
        .where('id', '=', id)
        .execute();
    }
  }

  async function process(event: ClaimedEvent): Promise<void> {
    if (event.previousClaimer) await closePending(event, 'interrupted: the worker stopped during the attempt; not repeated');
    // The claim is renewed while the event is worked on, so a slow receiver or SMTP server never
    // lets another worker take it over (and close a live attempt as interrupted).
    const mine = () => db.updateTable('outboxEvents').where('companyId', '=', event.companyId).where('id', '=', event.id).where('claimedBy', '=', deps.instanceId);
    const heartbeat = setInterval(() => {
      mine().set({ claimedAt: new Date(clock()) }).execute().catch((error: unknown) => deps.log?.warn({ err: error, eventId: event.id }, 'outbox claim renewal failed'));
    }, Math.max(250, Math.floor(deps.leaseMs / 3)));
    heartbeat.unref();
    try {
      // A failing webhook or message never stops the other channel.
      const results = await Promise.allSettled([deliverWebhooks(event), sendMessages(event)]);
      const failed = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
      for (const result of failed) deps.log?.warn({ err: result.reason, eventId: event.id }, 'outbox event partly failed');
      if (failed.length === 0) {
        await mine().set({ processedAt: new Date() }).execute();
      } else {
        // Something went wrong before every attempt was made (a database error, say): the event is
        // offered again in about RETRY_AFTER_FAILURE_MS. Attempts already made are rows keyed by the
        // event, so the retry does only what is missing.
        // An attempt the failure cut off (its row written, its answer unknown) is closed, not repeated.
        const reason = failed.map((f) => (f.reason instanceof Error ? f.reason.message : String(f.reason))).join('; ');
        await closePending(event, `error: ${reason}`.slice(0, 500));
        await mine().set({ claimedAt: new Date(clock() - deps.leaseMs + RETRY_AFTER_FAILURE_MS), claimedBy: null }).execute();
      }
    } finally {
      clearInterval(heartbeat);
    }
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
      if (scan) await appointmentRepository.pruneIdempotencyKeys(db, new Date(clock() - IDEMPOTENCY_WINDOW_MS));
      const events = await claim();
      // Events of one appointment in order (a booking before its cancellation); others in parallel.
      const byAppointment = new Map<string, ClaimedEvent[]>();
      for (const event of events) {
        const key = `${event.companyId}:${event.appointmentId}`;
        byAppointment.set(key, [...(byAppointment.get(key) ?? []), event]);
      }
      await Promise.all(
        [...byAppointment.values()].map(async (sequence) => {
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
