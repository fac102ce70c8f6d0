// The email and SMS messages of an outbox event: who gets which, built from the channel's template,
// each recorded as a row before it is sent so that it is never sent twice.
import { randomUUID } from 'node:crypto';
import type { Channel, EventTrigger, RecipientType, TemplateType } from '../../platform/database/schema.js';
import type { SendOutcome } from '../../platform/messaging/outcome.js';
import type { EmailAttachment } from '../../platform/messaging/email.js';
import type { Appointment } from '../appointments/mapper.js';
import type { ClaimedEvent, MessageSources, NotificationRepository } from './repository.js';

/** What a message is made from (the templates' merge variables come from it). */
export interface MessageData {
  appointment: Appointment;
  previousAppointment: Appointment | null;
  company: { name: string };
  location: { name: string; timezoneName: string; address: unknown; phone: string | null; email: string | null };
  service: { name: string; duration: number };
  customer: { firstName: string; lastName: string | null; email: string; phone: string | null } | null;
  resources: Array<{ name: string; email: string | null; phone: string | null }>;
  /** The customer's manage link: set only in the data of customer messages. */
  manageUrl?: string | null;
}

/** Which template each trigger's messages use. */
export const TEMPLATE_OF: Record<EventTrigger, TemplateType> = {
  NEW_APPOINTMENT: 'APPOINTMENT_BOOKED',
  APPOINTMENT_CONFIRMED: 'APPOINTMENT_CONFIRMED',
  APPOINTMENT_CANCELLED: 'APPOINTMENT_CANCELLED',
  APPOINTMENT_RESCHEDULED: 'APPOINTMENT_RESCHEDULED',
  APPOINTMENT_REMINDER: 'APPOINTMENT_REMINDER',
};

export interface RenderedMessage {
  subject: string | null;
  text: string;
}

/**
 * How messages are built and sent: templates resolved and rendered with a merge context `C` made
 * from the message data (modules/templates), and the email and SMS senders (platform/messaging).
 */
export interface MessageChannels<C> {
  template(companyId: string, type: TemplateType, recipientType: RecipientType, channel: Channel): Promise<{ subject: string; body: string }>;
  render(template: { subject: string; body: string }, context: C, channel: Channel): RenderedMessage;
  context(data: MessageData): C;
  email: { send(message: { to: string; subject: string; text: string; attachments?: EmailAttachment[] | undefined }): Promise<SendOutcome> };
  sms: { send(message: { to: string; body: string }): Promise<SendOutcome> };
}

interface Recipient {
  recipientType: RecipientType;
  channel: Channel;
  to: string;
}

/** The customer (unless their address is unproven), every resource and the business, on each channel they have an address for. */
function recipientsOf(sources: MessageSources): Recipient[] {
  const recipients: Recipient[] = [];
  if (sources.customer && !sources.customerUnconfirmed) {
    recipients.push({ recipientType: 'CUSTOMER', channel: 'EMAIL', to: sources.customer.email });
    if (sources.customer.phone) recipients.push({ recipientType: 'CUSTOMER', channel: 'SMS', to: sources.customer.phone });
  }
  for (const resource of sources.resources) {
    if (resource.email) recipients.push({ recipientType: 'RESOURCE', channel: 'EMAIL', to: resource.email });
    if (resource.phone) recipients.push({ recipientType: 'RESOURCE', channel: 'SMS', to: resource.phone });
  }
  if (sources.location.email) recipients.push({ recipientType: 'BUSINESS', channel: 'EMAIL', to: sources.location.email });
  if (sources.location.phone) recipients.push({ recipientType: 'BUSINESS', channel: 'SMS', to: sources.location.phone });
  return recipients;
}

/** Customer self-service in customer messages (modules/manage/links.ts): the manage link and the .ics. */
export interface CustomerLinkSource {
  manageUrl(appointment: Appointment): Promise<string | null>;
  calendarFile(trigger: EventTrigger, data: MessageData, manageUrl: string | null): Promise<EmailAttachment | null>;
}

export interface MessageSenderDeps<C> {
  repository: Pick<NotificationRepository, 'appointment' | 'messageSources' | 'insertMessage' | 'finishMessage'>;
  messages: MessageChannels<C>;
  links?: CustomerLinkSource | undefined;
}

export function createMessageSender<C>({ repository, messages, links }: MessageSenderDeps<C>) {
  /** The message data of an event, or null when a record it needs is gone. */
  async function messageData(event: ClaimedEvent): Promise<{ data: MessageData; sources: MessageSources } | null> {
    let appointment = event.payload;
    let previousAppointment: Appointment | null = null;
    // A rescheduled appointment's message tells the new time and keeps the old one at hand.
    if (event.trigger === 'APPOINTMENT_RESCHEDULED' && appointment.rescheduledToId) {
      const replacement = await repository.appointment(event.companyId, appointment.rescheduledToId);
      if (replacement) {
        previousAppointment = appointment;
        appointment = replacement;
      }
    }
    const sources = await repository.messageSources(event.companyId, appointment);
    if (!sources) return null;
    const { company, location, service, customer, resources } = sources;
    return { data: { appointment, previousAppointment, company: { name: company.name }, location, service, customer, resources }, sources };
  }

  /** Sends one recorded message, unless the company turned its channel off (webhooks are not affected). */
  function send(recipient: Recipient, rendered: RenderedMessage, sources: MessageSources, attachments?: EmailAttachment[]): Promise<SendOutcome> {
    const enabled = recipient.channel === 'EMAIL' ? !sources.company.disableEmailNotifications : !sources.company.disableSmsNotifications;
    if (!enabled) {
      return Promise.resolve({ status: 'not_sent', reason: `${recipient.channel === 'EMAIL' ? 'Email' : 'SMS'} notifications are turned off for this company` });
    }
    return recipient.channel === 'EMAIL'
      ? messages.email.send({ to: recipient.to, subject: rendered.subject ?? '', text: rendered.text, attachments })
      : messages.sms.send({ to: recipient.to, body: rendered.text });
  }

  /** Every message an event sends: per recipient and channel, built from the channel's template. */
  return async function sendMessages(event: ClaimedEvent): Promise<void> {
    // A replacement made by reschedule is announced by the APPOINTMENT_RESCHEDULED message.
    if (event.trigger === 'NEW_APPOINTMENT' && event.payload.rescheduledFromId) return;
    const loaded = await messageData(event);
    if (!loaded) return;
    const type = TEMPLATE_OF[event.trigger];
    const context = messages.context(loaded.data);
    // The customer's messages alone carry the manage link (it acts for the customer) and the
    // calendar entry; both are made once, for the first customer message.
    let customer: { context: C; attachments: EmailAttachment[] } | undefined;
    const customerExtras = async () => {
      if (!customer) {
        const manageUrl = links ? await links.manageUrl(loaded.data.appointment) : null;
        const file = links ? await links.calendarFile(event.trigger, loaded.data, manageUrl) : null;
        customer = { context: manageUrl ? messages.context({ ...loaded.data, manageUrl }) : context, attachments: file ? [file] : [] };
      }
      return customer;
    };
    // Email and SMS are built separately, each from its own channel's template (Notification
    // templates 3); recipients of one type and channel share the rendered message.
    const built = new Map<string, RenderedMessage>();
    for (const recipient of recipientsOf(loaded.sources)) {
      const key = `${recipient.recipientType}:${recipient.channel}`;
      const extras = recipient.recipientType === 'CUSTOMER' ? await customerExtras() : undefined;
      let rendered = built.get(key);
      if (!rendered) {
        rendered = messages.render(await messages.template(event.companyId, type, recipient.recipientType, recipient.channel), extras?.context ?? context, recipient.channel);
        built.set(key, rendered);
      }
      const id = randomUUID();
      const inserted = await repository.insertMessage({
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
      });
      if (!inserted) continue;
      const attachments = recipient.channel === 'EMAIL' ? extras?.attachments : undefined;
      await repository.finishMessage(event.companyId, id, await send(recipient, rendered, loaded.sources, attachments));
    }
  };
}
