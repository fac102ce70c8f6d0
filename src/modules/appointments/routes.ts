import { Type } from '@sinclair/typebox';
import type { Static, TSchema } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { App } from '../../platform/http/types.js';
import { errorResponses, IdParams, Instant, LocalDate, Nullable, Page, PageQueryFields, Security, Uuid } from '../../platform/http/schemas.js';
import { requireCompany } from '../../platform/auth/principal.js';
import { ApiError, fieldError } from '../../platform/errors.js';
import { CustomFields, CustomFieldsOut, EmailField, Phone, StringEnum } from '../catalog/fields.js';
import type { AppointmentService, ListQuery, SlotRequest } from './service.js';

const STATUSES = ['IN', 'RS', 'BK', 'CN', 'RE'] as const;

export const AppointmentSchema = Type.Object(
  {
    id: Uuid(),
    companyId: Uuid(),
    locationId: Uuid(),
    serviceId: Uuid(),
    customerId: Nullable(Uuid()),
    resourceIds: Type.Array(Uuid()),
    status: StringEnum(STATUSES, { description: 'IN held, RS reserved, BK booked, CN cancelled, RE rescheduled away' }),
    startTime: Type.String({ format: 'date-time' }),
    endTime: Type.String({ format: 'date-time' }),
    duration: Type.Integer({ description: 'Minutes' }),
    padding: Type.Integer({ description: 'Minutes after endTime that stay occupied (the service\'s padding when booked)' }),
    timezoneName: Type.String({ description: 'The location\'s IANA time zone' }),
    expiresAt: Nullable(Type.String({ format: 'date-time', description: 'When a hold (IN) gives its slot back' })),
    confirmed: Type.Boolean(),
    allowPaddingOverflow: Type.Boolean(),
    ignoreExternalEvents: Type.Boolean(),
    notes: Nullable(Type.String()),
    ...CustomFieldsOut(),
    rescheduledFromId: Nullable(Uuid()),
    rescheduledToId: Nullable(Uuid()),
    legacyId: Nullable(Type.String()),
    createdAt: Type.String({ format: 'date-time' }),
    updatedAt: Type.String({ format: 'date-time' }),
  },
  { $id: 'Appointment' },
);

const SlotFields = {
  Unavailability: Type.Object(
    {
      startTime: Instant({ description: 'ISO 8601 with an offset' }),
      endTime: Instant({ description: 'ISO 8601 with an offset' }),
    },
    { additionalProperties: false },
  ),
  duration: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_080, description: 'Minutes; must equal endTime - startTime' })),
  overrideDuration: Type.Optional(Type.Boolean({ description: 'Accepted for v1 compatibility: a duration other than the service\'s is allowed whenever the service permits it (durationSelect)' })),
  ResourceIds: Type.Optional(Type.Array(Uuid(), { maxItems: 50, uniqueItems: true, description: 'Required when the service\'s roundRobin is NONE; with RANDOM or BALANCED the pool to pick from' })),
  allowPaddingOverflow: Type.Optional(Type.Boolean({ description: 'Default: the service\'s' })),
  ignoreExternalEvents: Type.Optional(Type.Boolean({ description: 'Default: the service\'s' })),
  notes: Type.Optional(Nullable(Type.String({ maxLength: 5000 }))),
  ...CustomFields(),
};

// A booking page cannot choose to overrun padding or external calendar events (the service
// decides), nor write notes or custom fields: the company's own customer mail prints them, so a
// stranger's text would reach the customer as the company's (issue 12).
const PublicSlotFields = {
  Unavailability: SlotFields.Unavailability,
  duration: SlotFields.duration,
  overrideDuration: SlotFields.overrideDuration,
  ResourceIds: SlotFields.ResourceIds,
};

const CustomerFields = {
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 255, description: 'Customer name, when CustomerId is not given' })),
  email: Type.Optional(EmailField({ required: 'BOOKING-109', format: 'EMAIL-102', maxLength: 'EMAIL-102' })),
  phone: Type.Optional(Nullable(Phone('CONTACT-101'))),
};

const CreateBody = Type.Object(
  {
    ...SlotFields,
    CustomerId: Type.Optional(Uuid()),
    ...CustomerFields,
    legacyId: Type.Optional(Nullable(Type.String({ maxLength: 100 }))),
  },
  { additionalProperties: false },
);

/** The creation body; a CustomerId, when sent, must be the appointment's own customer. */
const RescheduleBody = Type.Object(
  { ...CreateBody.properties, Unavailability: Type.Optional(SlotFields.Unavailability) },
  { additionalProperties: false },
);

const PublicCreateQuery = Type.Object({ LocationId: Uuid(), ServiceId: Uuid() });
const CreateQuery = Type.Object({
  ...PublicCreateQuery.properties,
  CustomerId: Type.Optional(Uuid({ description: 'The customer, as in the body (either place; both and different is a 400)' })),
});

const IdempotencyHeaders = Type.Object({
  'idempotency-key': Type.Optional(Type.String({ minLength: 1, maxLength: 255, description: 'A retried POST with the same key returns the first answer instead of booking twice (kept 24 hours)' })),
});

const ListFilters = {
  LocationId: Type.Optional(Uuid()),
  ServiceId: Type.Optional(Uuid()),
  ResourceId: Type.Optional(Uuid()),
  CustomerId: Type.Optional(Uuid()),
  status: Type.Optional(
    Type.Array(Type.String({ pattern: `^(${STATUSES.join('|')})(,(${STATUSES.join('|')}))*$`, description: 'IN, RS, BK, CN or RE' }), {
      maxItems: 5,
      description: 'One or more statuses, comma-separated or repeated',
    }),
  ),
  startDate: Type.Optional(LocalDate({ description: 'Appointments starting on or after this date (the location\'s zone with LocationId, else UTC)' })),
  endDate: Type.Optional(LocalDate({ description: 'Appointments starting on or before this date' })),
  sort: Type.Optional(StringEnum(['startTime', 'createdAt'], { default: 'startTime' })),
  order: Type.Optional(StringEnum(['asc', 'desc'], { default: 'asc' })),
};

const ListQuerySchema = Type.Object({ ...ListFilters, ...PageQueryFields(100) });
const CursorQuerySchema = Type.Object({
  ...ListFilters,
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20, description: 'Page size, at most 100', 'x-codes': { maximum: 'LIMIT-100' } })),
  cursor: Type.Optional(Type.String({ maxLength: 4000, description: 'From nextCursor; a continuation sends nothing else' })),
});
const CURSOR_FIRST_KEYS = new Set(Object.keys(CursorQuerySchema.properties).filter((k) => k !== 'cursor'));

/** `status=BK,RS` and `status=BK&status=RS` both mean [BK, RS]. */
function statusList(values: string[] | undefined): ListQuery['status'] {
  if (!values) return undefined;
  return [...new Set(values.flatMap((v) => v.split(',')).map((v) => v.trim()).filter(Boolean))] as ListQuery['status'];
}

const TAGS = ['Appointments'];

function replyCreated(reply: FastifyReply, result: { appointment: unknown; replayed: boolean }) {
  if (result.replayed) reply.header('idempotent-replayed', 'true');
  return reply.status(201).send(result.appointment);
}

export function registerAppointmentRoutes(app: App, { appointments }: { appointments: AppointmentService }) {
  app.addSchema(AppointmentSchema);
  const ref = Type.Ref('Appointment');

  // Create (BK) and hold (IN) take the same request; the slot, every limit and the capacity are
  // checked and written in one transaction, serialised on the resources, customer and (with daily limits) service.
  const newSlotRoutes = [
    { url: '/v3/appointment', kind: 'create' as const, summary: 'Book a slot directly (status BK); emits NEW_APPOINTMENT' },
    { url: '/v3/appointment/hold', kind: 'hold' as const, summary: 'Hold a slot for checkout (status IN, expiresAt = now + the location\'s bookingTimerMinutes)' },
  ];
  for (const route of newSlotRoutes) {
    app.post(
      route.url,
      {
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
        const result = await appointments[route.kind](principal.companyId, principal, request.query, request.body as SlotRequest, request.headers['idempotency-key']);
        return replyCreated(reply, result);
      },
    );
  }

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

  const transition = (path: string, summary: string, body: TSchema | null, handler: (companyId: string, request: FastifyRequest) => Promise<unknown>) =>
    app.put(
      path,
      {
        schema: {
          tags: TAGS,
          summary,
          security: Security.company,
          params: IdParams,
          ...(body ? { body } : {}),
          response: { 200: ref, ...errorResponses(400, 401, 403, 404) },
        },
      },
      async (request) => handler(requireCompany(request.principal).companyId, request as FastifyRequest),
    );

  const idOf = (request: FastifyRequest) => (request.params as { id: string }).id;
  const principalOf = (request: FastifyRequest) => requireCompany(request.principal);

  transition(
    '/v3/appointment/:id/reserve',
    'Reserve a hold (IN → RS); allowPaddingOverflow and ignoreExternalEvents may be chosen here and are kept',
    Type.Object({ allowPaddingOverflow: Type.Optional(Type.Boolean()), ignoreExternalEvents: Type.Optional(Type.Boolean()) }, { additionalProperties: false }),
    (companyId, request) => appointments.reserve(companyId, principalOf(request), idOf(request), (request.body ?? {}) as { allowPaddingOverflow?: boolean }),
  );
  transition(
    '/v3/appointment/:id/book',
    'Book a hold (IN → BK, NEW_APPOINTMENT) or a reservation (RS → BK, NEW_APPOINTMENT and APPOINTMENT_CONFIRMED); slot and limits are checked again',
    Type.Object({ CustomerId: Type.Optional(Uuid()), ...CustomerFields }, { additionalProperties: false }),
    (companyId, request) => appointments.book(companyId, principalOf(request), idOf(request), (request.body ?? {}) as { CustomerId?: string }),
  );
  transition(
    '/v3/appointment/:id/confirm',
    'Confirm: sets confirmed on BK, books RS; idempotent (APPOINTMENT_CONFIRMED once)',
    null,
    (companyId, request) => appointments.confirm(companyId, principalOf(request), idOf(request)),
  );
  transition(
    '/v3/appointment/:id/cancel',
    'Cancel (BK or RS → CN); emits APPOINTMENT_CANCELLED',
    null,
    (companyId, request) => appointments.cancel(companyId, principalOf(request), idOf(request)),
  );
  transition(
    '/v3/appointment/:id/reschedule',
    'Reschedule (BK → RE plus a new BK, linked both ways); returns the replacement',
    RescheduleBody,
    (companyId, request) => appointments.reschedule(companyId, principalOf(request), idOf(request), request.body as SlotRequest),
  );

  const UpdateBody = Type.Object(
    { notes: Type.Optional(Nullable(Type.String({ maxLength: 5000 }))), CustomerId: Type.Optional(Uuid()), ...CustomFields() },
    { additionalProperties: false },
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
        return appointments.update(principal.companyId, principal, request.params.id, request.body as Static<typeof UpdateBody>);
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

  app.get(
    '/v3/appointments',
    {
      schema: {
        tags: TAGS,
        summary: 'Appointments, page by page (with total); (page - 1) * limit at most 10,000',
        security: Security.company,
        querystring: ListQuerySchema,
        response: { 200: Page(ref), ...errorResponses(400, 401, 403) },
      },
    },
    async (request) => {
      const principal = requireCompany(request.principal);
      return appointments.list(principal.companyId, principal, { ...request.query, status: statusList(request.query.status) });
    },
  );

  app.get(
    '/v3/appointments/cursor',
    {
      // The specification's own messages for unknown and extra parameters come before schema checks.
      preValidation: async (request) => {
        const keys = Object.keys(request.query as Record<string, unknown>);
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
        response: { 200: Type.Object({ data: Type.Array(ref), nextCursor: Nullable(Type.String()) }), ...errorResponses(400, 401, 403) },
      },
    },
    async (request) => {
      const principal = requireCompany(request.principal);
      const { cursor, ...query } = request.query;
      if (cursor !== undefined) return appointments.cursorNext(principal.companyId, principal, cursor);
      return appointments.cursorFirst(principal.companyId, principal, { ...query, status: statusList(query.status) });
    },
  );

  // Public booking pages: hold a slot, then book it with the customer's details.
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
        body: Type.Object(PublicSlotFields, { additionalProperties: false }),
        response: { 201: ref, ...errorResponses(400, 401, 403) },
      },
    },
    async (request, reply) => {
      const principal = requireCompany(request.principal);
      // Only the two ids of the public query: a booking page never names a customer (unknown query
      // parameters are not refused, so a CustomerId sent anyway must not reach the service).
      const query = { LocationId: request.query.LocationId, ServiceId: request.query.ServiceId };
      const result = await appointments.hold(principal.companyId, principal, query, request.body as SlotRequest, request.headers['idempotency-key']);
      return replyCreated(reply, result);
    },
  );

  app.put(
    '/v3/public/appointment/:id/book',
    {
      config: PUBLIC,
      schema: {
        tags: ['Public booking'],
        summary: 'Book a hold made by a public booking page, for the customer given by name, email and phone',
        security: Security.public,
        params: IdParams,
        body: Type.Object(
          { name: Type.String({ minLength: 1, maxLength: 255 }), email: EmailField({ required: 'BOOKING-109', format: 'EMAIL-102', maxLength: 'EMAIL-102' }), phone: Type.Optional(Nullable(Phone('CONTACT-101'))) },
          { additionalProperties: false },
        ),
        response: { 200: ref, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const principal = requireCompany(request.principal);
      const body = request.body as { name: string; email: string; phone?: string | null };
      return appointments.book(principal.companyId, principal, request.params.id, body);
    },
  );
}

