import { Type } from '@sinclair/typebox';
import type { Static } from '@sinclair/typebox';
import { Nullable, PageQueryFields, Uuid } from '../../platform/http/schemas.js';
import { StringEnum } from '../catalog/fields.js';

const CHANNELS = ['EMAIL', 'SMS'] as const;
const STATUSES = ['pending', 'sent', 'not_sent', 'failed', 'interrupted'] as const;

export const Notification = Type.Object(
  {
    id: Uuid(),
    eventId: Uuid(),
    appointmentId: Uuid(),
    type: Type.String({ description: 'Template type, for example APPOINTMENT_BOOKED' }),
    channel: StringEnum(CHANNELS),
    recipientType: StringEnum(['CUSTOMER', 'RESOURCE', 'BUSINESS']),
    recipient: Type.String({ description: 'Email address or phone number' }),
    subject: Nullable(Type.String({ description: 'Null for SMS: the subject is not sent' })),
    body: Type.String(),
    status: StringEnum(STATUSES, { description: 'not_sent: channel off or not configured (see reason); failed: the provider refused or could not be reached; interrupted: the sending was cut off (a crash) and it is unknown whether the provider got it; never repeated' }),
    reason: Nullable(Type.String()),
    providerId: Nullable(Type.String({ description: 'The SMTP message id or the SMS provider\'s message sid' })),
    createdAt: Type.String({ format: 'date-time' }),
    finishedAt: Nullable(Type.String({ format: 'date-time' })),
  },
  { $id: 'Notification' },
);

export const NotificationLogQuery = Type.Object({
  appointmentId: Type.Optional(Uuid()),
  channel: Type.Optional(StringEnum(CHANNELS)),
  status: Type.Optional(StringEnum(STATUSES)),
  ...PageQueryFields(100),
});
export type NotificationLogQuery = Static<typeof NotificationLogQuery>;
