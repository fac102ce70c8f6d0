// The route schemas of webhook configuration and delivery records, and the service input types
// derived from them.
import { Type } from '@sinclair/typebox';
import type { Static } from '@sinclair/typebox';
import { Nullable, PageQueryFields, Uuid } from '../../platform/http/schemas.js';
import type { EventTrigger } from '../../platform/database/schema.js';
import { StringEnum } from '../catalog/fields.js';
import { MAX_URL_LENGTH } from './destination.js';

/** The trigger names of the specification (Events, Triggers). */
export const WEBHOOK_TRIGGERS = [
  'NEW_APPOINTMENT',
  'APPOINTMENT_CONFIRMED',
  'APPOINTMENT_CANCELLED',
  'APPOINTMENT_RESCHEDULED',
  'APPOINTMENT_REMINDER',
] as const satisfies readonly EventTrigger[];

/** Most webhooks one location may have (create and replace alike). */
export const MAX_WEBHOOKS_PER_LOCATION = 20;

const Trigger = StringEnum(WEBHOOK_TRIGGERS);

// The schema gives the shape; the destination rules (public https, header names and values) are
// checked by the service with destination.ts, so their messages say exactly what is wrong.
const Fields = {
  url: Type.String({
    minLength: 1,
    maxLength: MAX_URL_LENGTH,
    description: 'Public https URL; query strings allowed. No credentials, fragment, IP literal, localhost or internal/metadata host.',
  }),
  headers: Type.Optional(
    Type.Record(Type.String(), Type.String(), {
      description: 'Flat object of string values sent with every delivery. Hop-by-hop, framing, cookie, forwarding and cloud-metadata names are refused.',
    }),
  ),
  triggers: Type.Array(Trigger, { minItems: 1, uniqueItems: true, description: 'One or more trigger names, each at most once' }),
  active: Type.Optional(Type.Boolean({ description: 'false keeps the webhook and stops delivery (default true)' })),
};

export const WebhookBody = Type.Object(Fields, { additionalProperties: false });
export type WebhookInput = Static<typeof WebhookBody>;

export const SetWebhooksBody = Type.Object(
  { webhooks: Type.Array(WebhookBody, { maxItems: MAX_WEBHOOKS_PER_LOCATION }) },
  { additionalProperties: false },
);

export const WebhookChangeBody = Type.Object(
  { ...Fields, url: Type.Optional(Fields.url), triggers: Type.Optional(Fields.triggers) },
  { additionalProperties: false },
);
export type WebhookChange = Static<typeof WebhookChangeBody>;

export const Webhook = Type.Object(
  {
    id: Uuid(),
    companyId: Uuid(),
    locationId: Uuid(),
    url: Type.String(),
    headers: Type.Record(Type.String(), Type.String(), { description: 'Shown only to company callers allowed to manage webhooks (they may carry a shared secret)' }),
    triggers: Type.Array(Trigger),
    active: Type.Boolean(),
    createdAt: Type.String({ format: 'date-time' }),
    updatedAt: Type.String({ format: 'date-time' }),
  },
  { $id: 'Webhook' },
);

export const WebhookDelivery = Type.Object(
  {
    id: Uuid(),
    webhookId: Uuid(),
    eventId: Uuid(),
    trigger: Type.String(),
    appointmentId: Uuid(),
    url: Type.String({ description: 'The URL the attempt went to' }),
    outcome: StringEnum(['pending', 'delivered', 'failed', 'interrupted'] as const, { description: 'pending while the attempt runs; delivered on 2xx; failed otherwise (refused destinations included); interrupted: the attempt was cut off (a crash) and the receiver may or may not have got it; never repeated' }),
    statusCode: Nullable(Type.Integer()),
    error: Nullable(Type.String({ description: 'Why it failed: starts with refused, dns, tls, network, timeout, redirect or http' })),
    durationMs: Nullable(Type.Integer()),
    address: Nullable(Type.String({ description: 'The (public) IP address the connection was pinned to' })),
    createdAt: Type.String({ format: 'date-time' }),
    finishedAt: Nullable(Type.String({ format: 'date-time' })),
  },
  { $id: 'WebhookDelivery' },
);

export const LocationQuery = Type.Object({ locationId: Uuid({ description: 'The location whose webhooks these are' }) });
export const OptionalLocationQuery = Type.Object({
  locationId: Type.Optional(Uuid({ description: 'When given, the webhook must belong to this location (else 404)' })),
});

export const DeliveriesQuery = Type.Object(PageQueryFields(100));
export type DeliveriesQuery = Static<typeof DeliveriesQuery>;
