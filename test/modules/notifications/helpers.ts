// Shared by the notification delivery tests: a context whose webhooks, emails and SMS reach real
// stand-ins on this machine; webhook, company, template and log calls through the application; and
// a reminder scheduler with a chosen clock.
import assert from 'node:assert/strict';
import { createTestContext, json } from '../../helpers/app.js';
import type { TestContext } from '../../helpers/app.js';
import { startSmsStandIn, startSmtpStandIn } from '../../helpers/stand-ins.js';
import type { SmsStandIn, SmtpStandIn } from '../../helpers/stand-ins.js';
import { WEBHOOK_TEST_ENV, startReceiver } from './receiver.js';
import type { Receiver } from './receiver.js';
import { createDispatcher } from '../../../src/modules/notifications/dispatcher.js';
import type { EventTrigger } from '../../../src/platform/database/schema.js';
import type { Setup } from '../appointments/fixtures.js';

export const BOOKING_TRIGGERS = ['NEW_APPOINTMENT', 'APPOINTMENT_CANCELLED'];

export interface Delivering {
  context: TestContext;
  receiver: Receiver;
  smtp: SmtpStandIn;
  sms: SmsStandIn;
  close(): Promise<void>;
}

/**
 * A test context that delivers for real: webhooks to an HTTPS receiver, email to an SMTP server and
 * SMS to a Twilio-style stand-in. The dispatcher claims every company's events in its database,
 * so the database is the file's own. Every tenant of the file belongs to one owner.
 */
export async function startDelivering(env: Record<string, string> = {}): Promise<Delivering> {
  const receiver = await startReceiver();
  const smtp = await startSmtpStandIn();
  const sms = await startSmsStandIn();
  const context = await createTestContext(
    {
      ...WEBHOOK_TEST_ENV,
      SMTP_URL: smtp.url,
      EMAIL_FROM: 'Slotwise Tests <no-reply@slotwise.test>',
      SMS_PROVIDER_URL: sms.baseUrl,
      SMS_ACCOUNT_SID: sms.accountSid,
      SMS_AUTH_TOKEN: sms.authToken,
      SMS_FROM: '+15550000000',
      ...env,
    },
    { dedicatedDatabase: true, sharedOwner: true },
  );
  return {
    context,
    receiver,
    smtp,
    sms,
    async close() {
      await context.close();
      await receiver.close();
      await smtp.close();
      await sms.close();
    },
  };
}

export interface Webhook {
  id: string;
  locationId: string;
  url: string;
  headers: Record<string, string>;
  triggers: string[];
  active: boolean;
}

export interface Delivery {
  id: string;
  webhookId: string;
  eventId: string;
  trigger: string;
  appointmentId: string;
  url: string;
  outcome: 'pending' | 'delivered' | 'failed' | 'interrupted';
  statusCode: number | null;
  error: string | null;
  durationMs: number | null;
  address: string | null;
  createdAt: string;
  finishedAt: string | null;
}

export interface NotificationRow {
  id: string;
  eventId: string;
  appointmentId: string;
  type: string;
  channel: 'EMAIL' | 'SMS';
  recipientType: 'CUSTOMER' | 'RESOURCE' | 'BUSINESS';
  recipient: string;
  subject: string | null;
  body: string;
  status: 'pending' | 'sent' | 'not_sent' | 'failed' | 'interrupted';
  reason: string | null;
  providerId: string | null;
  createdAt: string;
  finishedAt: string | null;
}

export async function createWebhook(s: Setup, locationId: string, body: Record<string, unknown>): Promise<Webhook> {
  const response = await s.context.app.inject({ method: 'POST', url: `/v3/webhook?locationId=${locationId}`, headers: s.headers, payload: body });
  assert.equal(response.statusCode, 201, response.body);
  return json(response);
}

/** Every delivery record of a webhook, as the company reads them (newest first). */
export async function deliveries(s: Setup, webhookId: string): Promise<{ data: Delivery[]; total: number }> {
  const response = await s.context.app.inject({ method: 'GET', url: `/v3/webhook/${webhookId}/deliveries?limit=100`, headers: s.headers });
  assert.equal(response.statusCode, 200, response.body);
  return json(response);
}

export async function updateCompany(s: Setup, body: Record<string, unknown>) {
  const response = await s.context.app.inject({ method: 'PUT', url: '/v3/company', headers: s.headers, payload: body });
  assert.equal(response.statusCode, 200, response.body);
  return json(response);
}

export async function updateLocation(s: Setup, locationId: string, body: Record<string, unknown>) {
  const response = await s.context.app.inject({ method: 'PUT', url: `/v3/location/${locationId}`, headers: s.headers, payload: body });
  assert.equal(response.statusCode, 200, response.body);
  return json(response);
}

export async function saveTemplate(s: Setup, body: Record<string, unknown>) {
  const response = await s.context.app.inject({ method: 'POST', url: '/v3/emailTemplates', headers: s.headers, payload: body });
  assert.ok(response.statusCode === 201 || response.statusCode === 200, response.body);
  return json(response);
}

/** The notifications log of the company (GET /v3/notifications), every page. */
export async function notificationLog(s: Setup, query: Record<string, string> = {}): Promise<NotificationRow[]> {
  const rows: NotificationRow[] = [];
  for (let page = 1; ; page++) {
    const params = new URLSearchParams({ ...query, limit: '100', page: String(page) });
    const response = await s.context.app.inject({ method: 'GET', url: `/v3/notifications?${params}`, headers: s.headers });
    assert.equal(response.statusCode, 200, response.body);
    const body = json<{ data: NotificationRow[]; total: number }>(response);
    rows.push(...body.data);
    if (rows.length >= body.total || body.data.length === 0) return rows;
  }
}

export async function appointmentStatus(s: Setup, id: string): Promise<string> {
  const response = await s.context.app.inject({ method: 'GET', url: `/v3/appointment/${id}`, headers: s.headers });
  assert.equal(response.statusCode, 200, response.body);
  return json(response).status;
}

/**
 * Writes the reminder events due at the instant `at` (milliseconds), as the dispatcher's own
 * scheduling step does, with its clock set to `at`. Only scheduling runs here; the application's
 * dispatcher (app.dispatcher.drain()) then delivers what was written, through its real wiring.
 */
export async function scheduleRemindersAt(context: TestContext, at: number): Promise<number> {
  const unused = () => {
    throw new Error('scheduling only: nothing is delivered by this dispatcher');
  };
  const scheduler = createDispatcher({
    db: context.database.db,
    instanceId: 'reminder-clock',
    leaseMs: 60_000,
    batchSize: 20,
    now: () => at,
    webhooks: { activeFor: unused, start: unused, finish: unused, deliver: unused },
    messages: { template: unused, render: unused, context: unused, email: { send: unused }, sms: { send: unused } },
  });
  return scheduler.scheduleReminders();
}

/** The appointment_reminders rows of an appointment: offsets, largest first. */
export async function reminderOffsets(context: TestContext, companyId: string, appointmentId: string): Promise<number[]> {
  const rows = await context.database.db
    .selectFrom('appointmentReminders')
    .select('offsetMinutes')
    .where('companyId', '=', companyId)
    .where('appointmentId', '=', appointmentId)
    .orderBy('offsetMinutes', 'desc')
    .execute();
  return rows.map((row) => row.offsetMinutes);
}

/** Outbox events of an appointment with a trigger. */
export async function outboxEvents(context: TestContext, companyId: string, appointmentId: string, trigger?: EventTrigger) {
  let query = context.database.db
    .selectFrom('outboxEvents')
    .selectAll()
    .where('companyId', '=', companyId)
    .where('appointmentId', '=', appointmentId);
  if (trigger) query = query.where('trigger', '=', trigger);
  return query.orderBy('createdAt').execute();
}
