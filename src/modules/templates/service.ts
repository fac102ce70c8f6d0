import { randomUUID } from 'node:crypto';
import type { Channel, RecipientType, TemplateType } from '../../platform/database/schema.js';
import { fieldError, notFound, validationErrors } from '../../platform/errors.js';
import type { FieldError } from '../../platform/errors.js';
import { DEFAULT_TEMPLATES, defaultTemplate } from './defaults.js';
import { compileCheck } from './render.js';
import type { TemplateRepository } from './repository.js';
import type { TemplateFilter, TemplateRow } from './repository.js';
import type { TemplateInput } from './schemas.js';

/** Where a resolved template came from. */
export type TemplateSource = 'company-sms' | 'company-email' | 'default';

export interface ResolvedTemplate {
  subject: string;
  body: string;
  source: TemplateSource;
}

export const SMS_CALENDAR_EVENT_MESSAGE = 'EXTERNAL_CALENDAR_EVENT templates cannot use channel SMS';

export function view(row: TemplateRow) {
  return {
    id: row.id,
    companyId: row.companyId,
    type: row.type,
    recipientType: row.recipientType,
    channel: row.channel,
    subject: row.subject,
    body: row.body,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}
export type TemplateView = ReturnType<typeof view>;

/** The checks of a template before it is saved: every problem, each naming its field. */
function problemsOf(input: TemplateInput, channel: Channel): FieldError[] {
  const errors: FieldError[] = [];
  if (input.type === 'EXTERNAL_CALENDAR_EVENT' && channel === 'SMS') errors.push(fieldError('body', 'channel', SMS_CALENDAR_EVENT_MESSAGE));
  if (channel === 'EMAIL' && !input.subject?.trim()) errors.push(fieldError('body', 'subject', 'subject is required for EMAIL templates'));
  // A blank body would send an empty message, on either channel.
  if (!input.body.trim()) errors.push(fieldError('body', 'body', 'body must not be blank'));
  for (const field of ['subject', 'body'] as const) {
    const source = input[field];
    if (source === undefined) continue;
    const problem = compileCheck(source);
    if (problem) errors.push(fieldError('body', field, `${field}: ${problem}`));
  }
  return errors;
}

export function createTemplateService({ repository }: { repository: TemplateRepository }) {
  return {
    /** The company's own templates; `channel` undefined means both channels. */
    async list(companyId: string, filter: TemplateFilter = {}): Promise<TemplateView[]> {
      return (await repository.list(companyId, filter)).map(view);
    },

    /** The platform defaults, filtered like `list`. */
    defaults(filter: TemplateFilter = {}) {
      return DEFAULT_TEMPLATES.filter(
        (t) =>
          (!filter.channel || t.channel === filter.channel) &&
          (!filter.type || t.type === filter.type) &&
          (!filter.recipientType || t.recipientType === filter.recipientType),
      );
    },

    /**
     * Saves the company's template for (type, recipientType, channel): inserted when there is
     * none, else replaced (subject and body; the id stays). 400 naming the field for
     * EXTERNAL_CALENDAR_EVENT with SMS, a missing EMAIL subject, a nested each or a template that
     * does not compile.
     */
    async upsert(companyId: string, input: TemplateInput): Promise<{ template: TemplateView; created: boolean }> {
      const channel = input.channel ?? 'EMAIL';
      const errors = problemsOf(input, channel);
      if (errors.length) throw validationErrors(errors);
      const { inserted, ...row } = await repository.upsert(companyId, {
        id: randomUUID(),
        type: input.type,
        recipientType: input.recipientType,
        channel,
        subject: input.subject ?? '',
        body: input.body,
      });
      return { template: view(row), created: inserted };
    },

    async remove(companyId: string, id: string): Promise<void> {
      if (!(await repository.remove(companyId, id))) throw notFound('Template not found');
    },

    /**
     * The template to send for one message (the specification, Notification templates, rule 2).
     * SMS: the company's SMS template, else its EMAIL template of the same type and recipient (the
     * body is then sent as the SMS text), else the platform's SMS default. EMAIL: the company's
     * EMAIL template, else the platform's email default. There is no SMS for
     * EXTERNAL_CALENDAR_EVENT; asked for one, the email template or default is returned.
     */
    async resolve(companyId: string, type: TemplateType, recipientType: RecipientType, channel: Channel): Promise<ResolvedTemplate> {
      const rows = await repository.forRecipient(companyId, type, recipientType);
      const sms = rows.find((row) => row.channel === 'SMS');
      const email = rows.find((row) => row.channel === 'EMAIL');
      if (channel === 'SMS' && sms) return { subject: sms.subject, body: sms.body, source: 'company-sms' };
      if (email) return { subject: email.subject, body: email.body, source: 'company-email' };
      const fallback = defaultTemplate(type, recipientType, channel);
      return { subject: fallback.subject, body: fallback.body, source: 'default' };
    },
  };
}

export type TemplateService = ReturnType<typeof createTemplateService>;
