// Webhook configuration of a location (the specification's Webhook fields, Webhooks and templates
// and Delivery rules; docs/api.md: PUT and DELETE on /v3/webhook/:id?locationId=).
//
// Every URL and header set written here passes destination.ts (checkWebhookUrl, checkWebhookHeaders);
// a refusal is a 400 naming the field. Rows stored before these rules (for example plain http from an
// import) stay readable and changeable; they are never delivered (the delivery client checks again).
import { randomUUID } from 'node:crypto';
import type { Principal } from '../../platform/auth/principal.js';
import type { Db } from '../../platform/database/index.js';
import { badRequest, fieldError, forbidden, notFound, validationErrors } from '../../platform/errors.js';
import type { FieldError } from '../../platform/errors.js';
import { assertOwned } from '../catalog/ownership.js';
import { assertLocationsInScope, isResourceRole, locationScope, OUTSIDE_SCOPE_MESSAGE } from '../catalog/scope.js';
import { pageOf } from '../catalog/graph.js';
import { checkWebhookHeaders, checkWebhookUrl } from './destination.js';
import type { WebhookDeliveryRow, WebhookInsert, WebhookRepository, WebhookRow } from './repository.js';
import { MAX_WEBHOOKS_PER_LOCATION } from './schemas.js';
import type { DeliveriesQuery, WebhookChange, WebhookInput } from './schemas.js';

type Caller = Principal & { companyId: string };

const NOT_FOUND = 'Webhook not found';

export function webhookView(row: WebhookRow) {
  // Headers written through this API are strings; a value of another type can only come from a row
  // stored outside it, and is shown as its JSON text rather than failing the answer.
  const headers: Record<string, string> = {};
  const stored: Record<string, unknown> = row.headers ?? {};
  for (const [name, value] of Object.entries(stored)) {
    headers[name] = typeof value === 'string' ? value : JSON.stringify(value);
  }
  return {
    id: row.id,
    companyId: row.companyId,
    locationId: row.locationId,
    url: row.url,
    headers,
    triggers: row.triggers,
    active: row.active,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

export function deliveryView(row: WebhookDeliveryRow) {
  return {
    id: row.id,
    webhookId: row.webhookId,
    eventId: row.eventId,
    trigger: row.trigger,
    appointmentId: row.appointmentId,
    url: row.url,
    outcome: row.outcome,
    statusCode: row.statusCode,
    error: row.error,
    durationMs: row.durationMs,
    address: row.address,
    createdAt: row.createdAt.toISOString(),
    finishedAt: row.finishedAt ? row.finishedAt.toISOString() : null,
  };
}

/** The destination rules for the fields given; `prefix` is '' or `webhooks.N.` (setWebhooks). */
function destinationProblems(input: WebhookChange, prefix: string): FieldError[] {
  const problems: FieldError[] = [];
  if (input.url !== undefined) {
    const url = checkWebhookUrl(input.url);
    if (!url.ok) problems.push(fieldError('body', `${prefix}url`, url.reason));
  }
  if (input.headers !== undefined) {
    const headers = checkWebhookHeaders(input.headers);
    if (!headers.ok) problems.push(fieldError('body', headers.path === '' ? `${prefix}headers` : `${prefix}headers.${headers.path}`, headers.reason));
  }
  return problems;
}

/** Headers as checkWebhookHeaders returns them (a fresh plain object), for storing as JSON. */
function storedHeaders(headers: Record<string, unknown> | undefined): string {
  if (headers === undefined) return '{}';
  const checked = checkWebhookHeaders(headers);
  if (!checked.ok) throw new Error('headers must be checked before they are stored');
  return JSON.stringify(checked.headers);
}

export function createWebhookService({ db, repository }: { db: Db; repository: WebhookRepository }) {
  /** Resource-role users never reach these routes (the routes say so); checked here as well. */
  function assertRole(principal: Caller): void {
    if (isResourceRole(principal)) throw forbidden('A Resource-role user cannot manage webhooks');
  }

  /** The query's locationId: a live location of the company (else 400 naming it) inside the caller's scope (else 403). */
  async function assertLocation(principal: Caller, locationId: string): Promise<void> {
    assertRole(principal);
    await assertOwned(db, principal.companyId, [{ table: 'locations', ids: [locationId], location: 'query', path: 'locationId', single: true }]);
    assertLocationsInScope(principal, [locationId]);
  }

  /**
   * The webhook in the path: the company's (else 404), of the query's location when one is given
   * (else 404), and of a location inside the caller's scope (else 403).
   */
  async function webhookOf(principal: Caller, id: string, locationId: string | undefined): Promise<WebhookRow> {
    assertRole(principal);
    if (locationId !== undefined) {
      await assertOwned(db, principal.companyId, [{ table: 'locations', ids: [locationId], location: 'query', path: 'locationId', single: true }]);
    }
    const row = await repository.byId(principal.companyId, id);
    if (!row || (locationId !== undefined && row.locationId !== locationId)) throw notFound(NOT_FOUND);
    const scope = locationScope(principal);
    if (scope && !scope.has(row.locationId)) throw forbidden(OUTSIDE_SCOPE_MESSAGE);
    return row;
  }

  function newRow(companyId: string, locationId: string, input: WebhookInput): WebhookInsert {
    return {
      companyId,
      id: randomUUID(),
      locationId,
      url: input.url,
      headers: storedHeaders(input.headers),
      triggers: [...input.triggers],
      active: input.active ?? true,
    };
  }

  return {
    async list(principal: Caller, locationId: string) {
      await assertLocation(principal, locationId);
      return { data: (await repository.listByLocation(principal.companyId, locationId)).map(webhookView) };
    },

    async create(principal: Caller, locationId: string, input: WebhookInput) {
      await assertLocation(principal, locationId);
      const problems = destinationProblems(input, '');
      if (problems.length > 0) throw validationErrors(problems);
      const row = await repository.insertCapped(newRow(principal.companyId, locationId, input), MAX_WEBHOOKS_PER_LOCATION);
      if (!row) {
        throw badRequest(`A location can have at most ${MAX_WEBHOOKS_PER_LOCATION} webhooks`, undefined, [
          fieldError('query', 'locationId', `Location ${locationId} already has ${MAX_WEBHOOKS_PER_LOCATION} webhooks`),
        ]);
      }
      return webhookView(row);
    },

    /** Replaces the whole set of the location; every entry is checked before anything changes. */
    async replace(principal: Caller, locationId: string, inputs: WebhookInput[]) {
      await assertLocation(principal, locationId);
      const problems = inputs.flatMap((input, index) => destinationProblems(input, `webhooks.${index}.`));
      if (problems.length > 0) throw validationErrors(problems);
      // The schema caps the list too; kept here so the rule holds for any caller of the service.
      if (inputs.length > MAX_WEBHOOKS_PER_LOCATION) {
        throw validationErrors([fieldError('body', 'webhooks', `A location can have at most ${MAX_WEBHOOKS_PER_LOCATION} webhooks`)]);
      }
      const rows = await repository.replaceSet(
        principal.companyId,
        locationId,
        inputs.map((input) => newRow(principal.companyId, locationId, input)),
      );
      return { data: rows.map(webhookView) };
    },

    /** Changes the fields given; `headers` and `triggers` replace the stored ones as a whole. */
    async update(principal: Caller, id: string, locationId: string | undefined, input: WebhookChange) {
      await webhookOf(principal, id, locationId);
      const problems = destinationProblems(input, '');
      if (problems.length > 0) throw validationErrors(problems);
      const row = await repository.update(principal.companyId, id, {
        ...(input.url !== undefined ? { url: input.url } : {}),
        ...(input.headers !== undefined ? { headers: storedHeaders(input.headers) } : {}),
        ...(input.triggers !== undefined ? { triggers: [...input.triggers] } : {}),
        ...(input.active !== undefined ? { active: input.active } : {}),
      });
      if (!row) throw notFound(NOT_FOUND);
      return webhookView(row);
    },

    async remove(principal: Caller, id: string, locationId: string | undefined) {
      await webhookOf(principal, id, locationId);
      if (!(await repository.delete(principal.companyId, id))) throw notFound(NOT_FOUND);
    },

    async deliveries(principal: Caller, id: string, query: DeliveriesQuery) {
      await webhookOf(principal, id, undefined);
      const { limit = 20, page = 1 } = query;
      const { rows, total } = await repository.deliveriesPage(principal.companyId, id, { limit, offset: (page - 1) * limit });
      return pageOf(rows.map(deliveryView), page, limit, total);
    },
  };
}

export type WebhookService = ReturnType<typeof createWebhookService>;
