import type { Channel, RecipientType, TemplateType } from '../../platform/database/schema.js';

/**
 * The platform's default templates: one for every type and recipient by email, and a short SMS
 * body for every type but EXTERNAL_CALENDAR_EVENT (a calendar event is never an SMS). They use the
 * same merge variables as a company's templates, multi-resource forms included, so nothing needs
 * configuring before messages go out. A company's own template of the same type, recipient and
 * channel replaces the default (see the service's `resolve`).
 */
export const TEMPLATE_TYPES: readonly TemplateType[] = [
  'APPOINTMENT_BOOKED',
  'APPOINTMENT_CONFIRMED',
  'APPOINTMENT_CANCELLED',
  'APPOINTMENT_RESCHEDULED',
  'APPOINTMENT_REMINDER',
  'EXTERNAL_CALENDAR_EVENT',
];
export const RECIPIENT_TYPES: readonly RecipientType[] = ['CUSTOMER', 'RESOURCE', 'BUSINESS'];
export const CHANNELS: readonly Channel[] = ['EMAIL', 'SMS'];

export interface DefaultTemplate {
  type: TemplateType;
  recipientType: RecipientType;
  channel: Channel;
  subject: string;
  body: string;
}

type NotificationType = Exclude<TemplateType, 'EXTERNAL_CALENDAR_EVENT'>;

/** What happened, in the words of each type: for the customer, and for staff. */
const WORDING: Record<NotificationType, { customer: string; staff: string; subject: string }> = {
  APPOINTMENT_BOOKED: { customer: 'your appointment is booked', staff: 'a new appointment has been booked', subject: 'Appointment booked' },
  APPOINTMENT_CONFIRMED: { customer: 'your appointment is confirmed', staff: 'an appointment has been confirmed', subject: 'Appointment confirmed' },
  APPOINTMENT_CANCELLED: { customer: 'your appointment has been cancelled', staff: 'an appointment has been cancelled', subject: 'Appointment cancelled' },
  APPOINTMENT_RESCHEDULED: {
    customer: 'your appointment has been moved to a new time',
    staff: 'an appointment has been moved to a new time',
    subject: 'Appointment rescheduled',
  },
  APPOINTMENT_REMINDER: { customer: 'this is a reminder of your appointment', staff: 'this is a reminder of an upcoming appointment', subject: 'Reminder' },
};

const WHEN = '{{appointment.date}}, {{appointment.time}} to {{appointment.endTime}} ({{appointment.timezone}})';

/** The appointment's details, shared by every email body. */
const DETAILS = [
  'Service: {{service.name}} ({{appointment.duration}} minutes)',
  `When: ${WHEN}`,
  'Where: {{location.name}}{{#if location.address}}, {{location.address}}{{/if}}',
  '{{#if resources.[1]}}With: {{appointment.resources}}{{else}}With: {{appointment.resource}}{{/if}}',
].join('\n');

const CUSTOMER_LINES = [
  'Customer: {{customer.name}}',
  '{{#if customer.email}}Email: {{customer.email}}\n{{/if}}{{#if customer.phone}}Phone: {{customer.phone}}\n{{/if}}',
].join('\n');

/** One line per resource with its contact details: the multi-resource form for staff. */
const RESOURCE_LIST = [
  'Resources:',
  '{{#each resources}}- {{name}}{{#if email}} <{{email}}>{{/if}}{{#if phone}}, {{phone}}{{/if}}',
  '{{/each}}',
].join('\n');

const NOTES = '{{#if appointment.notes}}Notes: {{appointment.notes}}\n{{/if}}';

const CONTACT = [
  '{{#if location.phone}}Questions? Call {{location.phone}}{{#if location.email}} or write to {{location.email}}{{/if}}.',
  '{{else}}{{#if location.email}}Questions? Write to {{location.email}}.',
  '{{/if}}{{/if}}',
].join('');

/** The customer's manage link, in the messages of an appointment they can still change (empty: no line). */
const MANAGE = '{{#if appointment.manageUrl}}See, reschedule or cancel your appointment: {{appointment.manageUrl}}\n\n{{/if}}';
const WITH_MANAGE_LINK = new Set<NotificationType>(['APPOINTMENT_BOOKED', 'APPOINTMENT_RESCHEDULED']);

function emailTemplate(type: NotificationType, recipientType: RecipientType): DefaultTemplate {
  const words = WORDING[type];
  const subjectTail = '{{service.name}} on {{appointment.date}} at {{appointment.time}}';
  if (recipientType === 'CUSTOMER') {
    return {
      type,
      recipientType,
      channel: 'EMAIL',
      subject: `${words.subject}: ${subjectTail}`,
      body: [
        'Hello{{#if customer.firstName}} {{customer.firstName}}{{/if}},',
        '',
        `${capitalise(words.customer)} at {{company.name}}.`,
        '',
        DETAILS,
        '',
        `${WITH_MANAGE_LINK.has(type) ? MANAGE : ''}${NOTES}${CONTACT}`,
        '',
        '{{company.name}}',
        '',
      ].join('\n'),
    };
  }
  const greeting = recipientType === 'RESOURCE' ? 'Hello,' : 'Hello {{location.name}} team,';
  return {
    type,
    recipientType,
    channel: 'EMAIL',
    subject: `${words.subject}: ${subjectTail} with {{customer.name}}`,
    body: [greeting, '', `${capitalise(words.staff)}.`, '', DETAILS, '', CUSTOMER_LINES, RESOURCE_LIST, NOTES, 'Appointment id: {{appointment.id}}', ''].join('\n'),
  };
}

const SMS_WORDS: Record<NotificationType, string> = {
  APPOINTMENT_BOOKED: 'booked',
  APPOINTMENT_CONFIRMED: 'confirmed',
  APPOINTMENT_CANCELLED: 'cancelled',
  APPOINTMENT_RESCHEDULED: 'moved to',
  APPOINTMENT_REMINDER: 'reminder:',
};

function smsTemplate(type: NotificationType, recipientType: RecipientType): DefaultTemplate {
  const word = SMS_WORDS[type];
  const when = '{{appointment.date}} {{appointment.time}}';
  let body: string;
  if (recipientType === 'CUSTOMER') {
    body =
      type === 'APPOINTMENT_REMINDER'
        ? `{{company.name}} reminder: {{service.name}} ${when} with {{appointment.resources}} at {{location.name}}.`
        : type === 'APPOINTMENT_RESCHEDULED'
          ? `{{company.name}}: your {{service.name}} is moved to ${when} with {{appointment.resources}} at {{location.name}}.`
          : `{{company.name}}: your {{service.name}} ${when} with {{appointment.resources}} at {{location.name}} is ${word}.`;
  } else {
    const prefix = type === 'APPOINTMENT_REMINDER' ? 'Reminder' : type === 'APPOINTMENT_RESCHEDULED' ? 'Moved' : capitalise(word);
    body = `${prefix}: {{service.name}} ${when}, {{customer.name}}, with {{appointment.resources}} at {{location.name}}.`;
  }
  return { type, recipientType, channel: 'SMS', subject: '', body };
}

/** Calendar events: subject = the event's title, body = the event's details. */
function calendarTemplate(recipientType: RecipientType): DefaultTemplate {
  const subject =
    recipientType === 'CUSTOMER'
      ? '{{service.name}} at {{company.name}}'
      : recipientType === 'RESOURCE'
        ? '{{service.name}}: {{customer.name}}'
        : '{{service.name}}: {{customer.name}} with {{appointment.resources}}';
  return {
    type: 'EXTERNAL_CALENDAR_EVENT',
    recipientType,
    channel: 'EMAIL',
    subject,
    body: [DETAILS, '', CUSTOMER_LINES, RESOURCE_LIST, NOTES, 'Appointment id: {{appointment.id}}', ''].join('\n'),
  };
}

function capitalise(words: string): string {
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/** Every default, in a stable order: type, recipient, then EMAIL before SMS. */
export const DEFAULT_TEMPLATES: readonly DefaultTemplate[] = TEMPLATE_TYPES.flatMap((type) =>
  RECIPIENT_TYPES.flatMap((recipientType) =>
    type === 'EXTERNAL_CALENDAR_EVENT' ? [calendarTemplate(recipientType)] : [emailTemplate(type, recipientType), smsTemplate(type, recipientType)],
  ),
);

const byKey = new Map(DEFAULT_TEMPLATES.map((template) => [`${template.type}|${template.recipientType}|${template.channel}`, template]));

/**
 * The platform default for a type, recipient and channel. There is no SMS default for
 * EXTERNAL_CALENDAR_EVENT (that type cannot be an SMS); asked for one, this answers the email
 * default, so the function is total.
 */
export function defaultTemplate(type: TemplateType, recipientType: RecipientType, channel: Channel): DefaultTemplate {
  return byKey.get(`${type}|${recipientType}|${channel}`) ?? byKey.get(`${type}|${recipientType}|EMAIL`)!;
}
