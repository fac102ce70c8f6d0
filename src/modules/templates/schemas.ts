// The route schemas of notification templates, and the service input types derived from them.
import { Type } from '@sinclair/typebox';
import type { Static } from '@sinclair/typebox';
import { Uuid } from '../../platform/http/schemas.js';
import { StringEnum } from '../catalog/fields.js';
import { CHANNELS, RECIPIENT_TYPES, TEMPLATE_TYPES } from './defaults.js';

const TemplateTypeField = (description?: string) => StringEnum(TEMPLATE_TYPES, description ? { description } : {});
const RecipientTypeField = () => StringEnum(RECIPIENT_TYPES);
const ChannelField = (description: string) => StringEnum(CHANNELS, { description });

const SUBJECT_MAX = 500;
const BODY_MAX = 20_000;

export const Template = Type.Object(
  {
    id: Uuid(),
    companyId: Uuid(),
    type: TemplateTypeField(),
    recipientType: RecipientTypeField(),
    channel: ChannelField('EMAIL or SMS'),
    subject: Type.String({ description: 'Handlebars; for SMS stored but never sent' }),
    body: Type.String({ description: 'Handlebars; plain text' }),
    createdAt: Type.String({ format: 'date-time' }),
    updatedAt: Type.String({ format: 'date-time' }),
  },
  { $id: 'NotificationTemplate' },
);

export const DefaultTemplate = Type.Object(
  {
    type: TemplateTypeField(),
    recipientType: RecipientTypeField(),
    channel: ChannelField('EMAIL or SMS'),
    subject: Type.String(),
    body: Type.String(),
    isDefault: Type.Literal(true),
  },
  { $id: 'DefaultNotificationTemplate' },
);

export const TemplateListQuery = Type.Object({
  channel: Type.Optional(ChannelField('EMAIL (default) or SMS')),
  type: Type.Optional(TemplateTypeField()),
  recipientType: Type.Optional(RecipientTypeField()),
});
export type TemplateListQuery = Static<typeof TemplateListQuery>;

export const TemplateBody = Type.Object(
  {
    type: TemplateTypeField('EXTERNAL_CALENDAR_EVENT cannot use channel SMS'),
    recipientType: RecipientTypeField(),
    channel: Type.Optional(ChannelField('EMAIL (default) or SMS')),
    subject: Type.Optional(
      Type.String({ maxLength: SUBJECT_MAX, description: 'Required for EMAIL; for SMS stored but never sent. Handlebars merge variables.' }),
    ),
    body: Type.String({ minLength: 1, maxLength: BODY_MAX, description: 'Handlebars merge variables; nested {{#each}} blocks are refused' }),
  },
  { additionalProperties: false },
);
/** A template to save: the channel is EMAIL when omitted; the subject is required (not blank) for EMAIL, stored but never sent for SMS. */
export type TemplateInput = Static<typeof TemplateBody>;
