import { Type } from '@sinclair/typebox';
import type { App } from '../../platform/http/types.js';
import { errorResponses, IdParams, Nullable, Page, PageQueryFields, Security, Uuid } from '../../platform/http/schemas.js';
import { requireCompany } from '../../platform/auth/principal.js';
import { StringEnum } from '../catalog/fields.js';
import { MAX_URL_LENGTH } from './destination.js';
import { MAX_WEBHOOKS_PER_LOCATION, WEBHOOK_TRIGGERS } from './service.js';
import type { WebhookChange, WebhookInput, WebhookService } from './service.js';


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

const WebhookBody = Type.Object(Fields, { additionalProperties: false });

const Webhook = Type.Object(
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

const WebhookDelivery = Type.Object(
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

const LocationQuery = Type.Object({ locationId: Uuid({ description: 'The location whose webhooks these are' }) });
const OptionalLocationQuery = Type.Object({
  locationId: Type.Optional(Uuid({ description: 'When given, the webhook must belong to this location (else 404)' })),
});

// Webhook headers may carry a company's shared secret: Resource-role users have no access at all.
const ACCESS = { access: { mode: 'company' as const, roles: ['Owner' as const, 'Admin' as const, 'User' as const] } };
const TAGS = ['Webhooks'];

export function registerWebhookRoutes(app: App, { webhooks }: { webhooks: WebhookService }) {
  app.addSchema(Webhook);
  app.addSchema(WebhookDelivery);
  const ref = Type.Ref('Webhook');
  const deliveryRef = Type.Ref('WebhookDelivery');

  app.get(
    '/v3/webhook',
    {
      config: ACCESS,
      schema: {
        tags: TAGS,
        summary: 'List the webhooks of a location (rows with destinations stored before the rules stay visible)',
        security: Security.company,
        querystring: LocationQuery,
        response: { 200: Type.Object({ data: Type.Array(ref) }), ...errorResponses(400, 401, 403) },
      },
    },
    async (request) => webhooks.list(requireCompany(request.principal), request.query.locationId),
  );

  app.post(
    '/v3/webhook',
    {
      config: ACCESS,
      schema: {
        tags: TAGS,
        summary: `Create a webhook at a location (at most ${MAX_WEBHOOKS_PER_LOCATION} per location)`,
        security: Security.company,
        querystring: LocationQuery,
        body: WebhookBody,
        response: { 201: ref, ...errorResponses(400, 401, 403) },
      },
    },
    async (request, reply) =>
      reply.status(201).send(await webhooks.create(requireCompany(request.principal), request.query.locationId, request.body as WebhookInput)),
  );

  app.post(
    '/v3/webhook/setWebhooks',
    {
      config: ACCESS,
      schema: {
        tags: TAGS,
        summary: 'Replace every webhook of a location in one transaction (an empty list removes them all)',
        security: Security.company,
        querystring: LocationQuery,
        body: Type.Object(
          { webhooks: Type.Array(WebhookBody, { maxItems: MAX_WEBHOOKS_PER_LOCATION }) },
          { additionalProperties: false },
        ),
        response: { 200: Type.Object({ data: Type.Array(ref) }), ...errorResponses(400, 401, 403) },
      },
    },
    async (request) =>
      webhooks.replace(requireCompany(request.principal), request.query.locationId, request.body.webhooks as WebhookInput[]),
  );

  const updateSchema = {
    tags: TAGS,
    summary: 'Change a webhook (fields given; headers and triggers replace the stored ones)',
    security: Security.company,
    params: IdParams,
    querystring: OptionalLocationQuery,
    body: Type.Object(
      { ...Fields, url: Type.Optional(Fields.url), triggers: Type.Optional(Fields.triggers) },
      { additionalProperties: false },
    ),
    response: { 200: ref, ...errorResponses(400, 401, 403, 404) },
  };
  app.put('/v3/webhook/:id', { config: ACCESS, schema: updateSchema }, async (request) =>
    webhooks.update(requireCompany(request.principal), request.params.id, request.query.locationId, request.body as WebhookChange),
  );
  app.patch('/v3/webhook/:id', { config: ACCESS, schema: updateSchema }, async (request) =>
    webhooks.update(requireCompany(request.principal), request.params.id, request.query.locationId, request.body as WebhookChange),
  );

  app.delete(
    '/v3/webhook/:id',
    {
      config: ACCESS,
      schema: {
        tags: TAGS,
        summary: 'Delete a webhook and its delivery records',
        security: Security.company,
        params: IdParams,
        querystring: OptionalLocationQuery,
        response: { 204: Type.Null(), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      await webhooks.remove(requireCompany(request.principal), request.params.id, request.query.locationId);
      return reply.status(204).send(null);
    },
  );

  app.get(
    '/v3/webhook/:id/deliveries',
    {
      config: ACCESS,
      schema: {
        tags: TAGS,
        summary: 'Delivery attempts of a webhook, newest first',
        security: Security.company,
        params: IdParams,
        querystring: Type.Object(PageQueryFields(100)),
        response: { 200: Page(deliveryRef), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const { limit = 20, page = 1 } = request.query;
      return webhooks.deliveries(requireCompany(request.principal), request.params.id, { limit, page });
    },
  );
}
