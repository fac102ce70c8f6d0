import { Type } from '@sinclair/typebox';
import type { TSchema } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';
import { sendJsonText } from '../../platform/http/types.js';
import type { App } from '../../platform/http/types.js';
import { errorResponses, IdParams, Page, Security } from '../../platform/http/schemas.js';
import { requireCompany } from '../../platform/auth/principal.js';
import { DEFERRED_CREDENTIAL_CHECK } from '../../platform/auth/credential-check.js';
import { ApiError, fieldError } from '../../platform/errors.js';
import { APPOINTMENT_STATUSES } from '../../domain/appointment-status.js';
import type { AppointmentStatus } from '../../domain/appointment-status.js';
import type { AppointmentService } from './service.js';
import {
  AppointmentSchema,
  BookBody,
  CreateBody,
  CreateQuery,
  CursorQuerySchema,
  IdempotencyHeaders,
  ListQuerySchema,
  PublicBookBody,
  PublicCreateQuery,
  PublicSlotBody,
  ReserveBody,
  RescheduleBody,
  UpdateBody,
} from './schemas.js';

export { AppointmentSchema };

const CURSOR_FIRST_KEYS = new Set(Object.keys(CursorQuerySchema.properties).filter((k) => k !== 'cursor'));

/** `status=BK,RS` and `status=BK&status=RS` both mean [BK, RS] (the schema's pattern admits only statuses). */
function statusList(values: string[] | undefined): AppointmentStatus[] | undefined {
  if (!values) return undefined;
  const named = new Set(values.flatMap((v) => v.split(',')).map((v) => v.trim()));
  return [...named].flatMap((v) => APPOINTMENT_STATUSES.filter((status) => status === v));
}

const TAGS = ['Appointments'];
const ref = Type.Ref('Appointment');

function replyCreated(reply: FastifyReply, result: { appointment: unknown; replayed: boolean }) {
  if (result.replayed) reply.header('idempotent-replayed', 'true');
  return reply.status(201).send(result.appointment);
}

/** The schema of an operation on one appointment, `PUT /v3/appointment/:id/...`. */
function transitionSchema<B extends TSchema>(summary: string, body: B) {
  return { tags: TAGS, summary, security: Security.company, params: IdParams, body, response: { 200: ref, ...errorResponses(400, 401, 403, 404) } };
}
function bodilessTransitionSchema(summary: string) {
  return { tags: TAGS, summary, security: Security.company, params: IdParams, response: { 200: ref, ...errorResponses(400, 401, 403, 404) } };
}

export function registerAppointmentRoutes(app: App, { appointments }: { appointments: AppointmentService }) {
  app.addSchema(AppointmentSchema);
  registerNewSlotRoutes(app, appointments);
  app.get(
    '/v3/appointment/:id',
    {
      schema: { tags: TAGS, summary: 'One appointment', security: Security.company, params: IdParams, response: { 200: ref, ...errorResponses(400, 401, 403, 404) } },
    },
    async (request) => {
      const principal = requireCompany(request.principal);
      return appointments.get(principal.companyId, principal, request.params.id);
    },
  );
  registerTransitionRoutes(app, appointments);
  registerChangeRoutes(app, appointments);
  registerListRoutes(app, appointments);
  registerPublicRoutes(app, appointments);
}

/**
 * Create (BK) and hold (IN) take the same request; the slot, every limit and the capacity are
 * checked and written in one transaction, serialised on the resources, customer and (with daily
 * limits) service.
 */
function registerNewSlotRoutes(app: App, appointments: AppointmentService) {
  const newSlotRoutes = [
    { url: '/v3/appointment', kind: 'create' as const, summary: 'Book a slot directly (status BK); emits NEW_APPOINTMENT' },
    { url: '/v3/appointment/hold', kind: 'hold' as const, summary: 'Hold a slot for checkout (status IN, expiresAt = now + the location\'s bookingTimerMinutes)' },
  ];
  for (const route of newSlotRoutes) {
    app.post(
      route.url,
      {
        config: DEFERRED_CREDENTIAL_CHECK,
        schema: {
          tags: TAGS,
          summary: route.summary,
          description: 'A slot taken meanwhile is a 400 (BOOKING-105).',
          security: Security.company,
          querystring: CreateQuery,
          headers: IdempotencyHeaders,
          body: CreateBody,
          response: { 201: ref, ...errorResponses(400, 401, 403) },
        },
      },
      async (request, reply) => {
        const principal = requireCompany(request.principal);
        const result = await appointments[route.kind](principal.companyId, principal, { query: request.query, body: request.body, idempotencyKey: request.headers['idempotency-key'] });
        return replyCreated(reply, result);
      },
    );
  }
}

/** reserve, book, confirm, cancel: the moves of States and transitions that keep the slot. */
function registerTransitionRoutes(app: App, appointments: AppointmentService) {
  app.put(
    '/v3/appointment/:id/reserve',
    { config: DEFERRED_CREDENTIAL_CHECK, schema: transitionSchema('Reserve a hold (IN → RS); allowPaddingOverflow and ignoreExternalEvents may be chosen here and are kept', ReserveBody) },
    // No body at all is an empty one.
    async (request) => {
      const principal = requireCompany(request.principal);
      return appointments.reserve(principal.companyId, principal, request.params.id, request.body ?? {});
    },
  );
  app.put(
    '/v3/appointment/:id/book',
    { config: DEFERRED_CREDENTIAL_CHECK, schema: transitionSchema('Book a hold (IN → BK, NEW_APPOINTMENT) or a reservation (RS → BK, NEW_APPOINTMENT and APPOINTMENT_CONFIRMED); slot and limits are checked again', BookBody) },
    async (request) => {
      const principal = requireCompany(request.principal);
      return appointments.book(principal.companyId, principal, request.params.id, request.body ?? {});
    },
  );
  app.put('/v3/appointment/:id/confirm', { schema: bodilessTransitionSchema('Confirm: sets confirmed on BK, books RS; idempotent (APPOINTMENT_CONFIRMED once)') }, async (request) => {
    const principal = requireCompany(request.principal);
    return appointments.confirm(principal.companyId, principal, request.params.id);
  });
  app.put('/v3/appointment/:id/cancel', { schema: bodilessTransitionSchema('Cancel (BK or RS → CN); emits APPOINTMENT_CANCELLED') }, async (request) => {
    const principal = requireCompany(request.principal);
    return appointments.cancel(principal.companyId, principal, request.params.id);
  });
}

/** reschedule, the metadata update and delete. */
function registerChangeRoutes(app: App, appointments: AppointmentService) {
  app.put(
    '/v3/appointment/:id/reschedule',
    { schema: transitionSchema('Reschedule (BK → RE plus a new BK, linked both ways); returns the replacement', RescheduleBody) },
    async (request) => {
      const principal = requireCompany(request.principal);
      return appointments.reschedule(principal.companyId, principal, request.params.id, request.body);
    },
  );

  for (const method of ['PUT', 'PATCH'] as const) {
    app.route({
      method,
      url: '/v3/appointment/:id',
      schema: {
        tags: TAGS,
        summary: 'Change notes, custom fields or the customer; the customer limits are checked again',
        security: Security.company,
        params: IdParams,
        body: UpdateBody,
        response: { 200: ref, ...errorResponses(400, 401, 403, 404) },
      },
      handler: async (request) => {
        const principal = requireCompany(request.principal);
        return appointments.update(principal.companyId, principal, request.params.id, request.body);
      },
    });
  }

  app.delete(
    '/v3/appointment/:id',
    {
      schema: { tags: TAGS, summary: 'Delete a hold (IN only)', security: Security.company, params: IdParams, response: { 204: Type.Null(), ...errorResponses(400, 401, 403, 404) } },
    },
    async (request, reply) => {
      const principal = requireCompany(request.principal);
      await appointments.remove(principal.companyId, principal, request.params.id);
      return reply.status(204).send(null);
    },
  );
}

function registerListRoutes(app: App, appointments: AppointmentService) {
  app.get(
    '/v3/appointments',
    {
      config: DEFERRED_CREDENTIAL_CHECK,
      schema: {
        tags: TAGS,
        summary: 'Appointments, page by page (with total); (page - 1) * limit at most 10,000',
        security: Security.company,
        querystring: ListQuerySchema,
        response: { 200: Page(ref), ...errorResponses(400, 401, 403) },
      },
    },
    async (request, reply) => {
      const principal = requireCompany(request.principal);
      // JSON text as PostgreSQL built it (lists.ts): sent as it is, not serialised again.
      const json = await appointments.list(principal.companyId, principal, { ...request.query, status: statusList(request.query.status) });
      return sendJsonText(reply, json);
    },
  );

  app.get(
    '/v3/appointments/cursor',
    {
      config: DEFERRED_CREDENTIAL_CHECK,
      // The specification's own messages for unknown and extra parameters come before schema checks.
      preValidation: async (request) => {
        const keys = Object.keys(request.query);
        if (keys.includes('cursor')) {
          const extra = keys.filter((k) => k !== 'cursor');
          if (extra.length > 0) {
            throw new ApiError(400, 'A continuation request must provide only the appointment cursor', extra.map((k) => fieldError('query', k, `${k} is not allowed with cursor`)));
          }
          return;
        }
        const unknown = keys.find((k) => !CURSOR_FIRST_KEYS.has(k));
        if (unknown !== undefined) {
          throw new ApiError(400, `Unsupported appointment cursor query parameter ${unknown}`, [fieldError('query', unknown, `Unsupported appointment cursor query parameter ${unknown}`)]);
        }
      },
      schema: {
        tags: TAGS,
        summary: 'Appointments by cursor: the first request sends filters, sort, order and limit; every later one only cursor',
        description: 'The cursor is signed, bound to the company, the filters and the position, and expires one hour after the first page. nextCursor is null on the last page.',
        security: Security.company,
        querystring: CursorQuerySchema,
        response: { 200: Type.Object({ data: Type.Array(ref), nextCursor: Type.Union([Type.String(), Type.Null()]) }), ...errorResponses(400, 401, 403) },
      },
    },
    async (request, reply) => {
      const principal = requireCompany(request.principal);
      const { cursor, ...query } = request.query;
      // JSON text as PostgreSQL built it (lists.ts): sent as it is, not serialised again.
      const json =
        cursor !== undefined
          ? await appointments.cursorNext(principal.companyId, principal, cursor)
          : await appointments.cursorFirst(principal.companyId, principal, { ...query, status: statusList(query.status) });
      return sendJsonText(reply, json);
    },
  );
}

/** Public booking pages: hold a slot, then book it with the customer's details. */
function registerPublicRoutes(app: App, appointments: AppointmentService) {
  const PUBLIC = { access: { mode: 'public' as const } };
  app.post(
    '/v3/public/appointment/hold',
    {
      config: PUBLIC,
      schema: {
        tags: ['Public booking'],
        summary: 'Hold a slot from a public booking page (status IN); only services shown online',
        security: Security.public,
        querystring: PublicCreateQuery,
        headers: IdempotencyHeaders,
        // A booking page cannot choose to overrun padding or external calendar events: the service decides.
        body: PublicSlotBody,
        response: { 201: ref, ...errorResponses(400, 401, 403) },
      },
    },
    async (request, reply) => {
      const principal = requireCompany(request.principal);
      // Only the two ids of the public query: a booking page never names a customer (unknown query
      // parameters are not refused, so a CustomerId sent anyway must not reach the service).
      const query = { LocationId: request.query.LocationId, ServiceId: request.query.ServiceId };
      const result = await appointments.hold(principal.companyId, principal, { query, body: request.body, idempotencyKey: request.headers['idempotency-key'] });
      return replyCreated(reply, result);
    },
  );

  app.put(
    '/v3/public/appointment/:id/book',
    {
      config: PUBLIC,
      schema: {
        tags: ['Public booking'],
        summary: 'Book a hold made by a public booking page, for the customer given by name, email and phone, with the answers to the custom fields the company\'s page asks',
        security: Security.public,
        params: IdParams,
        body: PublicBookBody,
        response: { 200: ref, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const principal = requireCompany(request.principal);
      const { name, email, phone, ...answers } = request.body;
      return appointments.book(principal.companyId, principal, request.params.id, { name, email, ...(phone !== undefined ? { phone } : {}) }, answers);
    },
  );
}
