import { Type } from '@sinclair/typebox';
import type { App } from '../../platform/http/types.js';
import { errorResponses, IdParams, Page, Security } from '../../platform/http/schemas.js';
import { requireCompany } from '../../platform/auth/principal.js';
import {
  DeliveriesQuery,
  LocationQuery,
  MAX_WEBHOOKS_PER_LOCATION,
  OptionalLocationQuery,
  SetWebhooksBody,
  Webhook,
  WebhookBody,
  WebhookChangeBody,
  WebhookDelivery,
} from './schemas.js';
import type { WebhookService } from './service.js';
import { WITHOUT_RESOURCE_ROLE } from '../catalog/routes.js';

// Webhook headers may carry a company's shared secret: Resource-role users have no access at all.
const ACCESS = WITHOUT_RESOURCE_ROLE;
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
    async (request, reply) => reply.status(201).send(await webhooks.create(requireCompany(request.principal), request.query.locationId, request.body)),
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
        body: SetWebhooksBody,
        response: { 200: Type.Object({ data: Type.Array(ref) }), ...errorResponses(400, 401, 403) },
      },
    },
    async (request) => webhooks.replace(requireCompany(request.principal), request.query.locationId, request.body.webhooks),
  );

  const updateSchema = {
    tags: TAGS,
    summary: 'Change a webhook (fields given; headers and triggers replace the stored ones)',
    security: Security.company,
    params: IdParams,
    querystring: OptionalLocationQuery,
    body: WebhookChangeBody,
    response: { 200: ref, ...errorResponses(400, 401, 403, 404) },
  };
  for (const method of ['put', 'patch'] as const) {
    app[method]('/v3/webhook/:id', { config: ACCESS, schema: updateSchema }, async (request) =>
      webhooks.update(requireCompany(request.principal), request.params.id, request.query.locationId, request.body),
    );
  }

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
        querystring: DeliveriesQuery,
        response: { 200: Page(deliveryRef), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => webhooks.deliveries(requireCompany(request.principal), request.params.id, request.query),
  );
}
