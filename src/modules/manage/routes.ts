import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { App } from '../../platform/http/types.js';
import { errorResponses, Security } from '../../platform/http/schemas.js';
import { validationError } from '../../platform/errors.js';
import { AvailabilityResponse } from '../availability/schemas.js';
import { requireManage } from './service.js';
import type { ManageService } from './service.js';
import { ManageAvailabilityQuery, ManageRescheduleBody, ManagedAppointmentSchema, RescheduledSchema } from './schemas.js';

const TAGS = ['Customer self-service'];
/** Only a manage-link token opens these routes, and it opens nothing else (platform/auth/authenticate.ts). */
const MANAGE = { access: { mode: 'manage' as const } };
/**
 * Every answer, refusals included, is the customer's own and keyed by a token in a header: a
 * browser cache keys by URL only, and would otherwise answer the next link opened in the same
 * browser with this one's (410 and 404 are cacheable by default).
 */
const NO_STORE = {
  onSend: async (_request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    reply.header('cache-control', 'no-store');
    return payload;
  },
};
const ERRORS = errorResponses(400, 401, 403, 404, 410);
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** `ResourceIds=a,b` and `ResourceIds=a&ResourceIds=b` both mean [a, b]. */
function resourceIdList(values: string[] | undefined): string[] | undefined {
  if (!values) return undefined;
  const ids = values.flatMap((v) => v.split(',')).map((v) => v.trim()).filter(Boolean);
  ids.forEach((id, index) => {
    if (!UUID.test(id)) throw validationError('query', `ResourceIds.${index}`, `${id} is not a valid uuid`);
  });
  return [...new Set(ids)];
}

export function registerManageRoutes(app: App, { manage }: { manage: ManageService }) {
  app.addSchema(ManagedAppointmentSchema);
  const ref = Type.Ref('ManagedAppointment');

  app.get(
    '/v3/manage/appointment',
    {
      config: MANAGE,
      ...NO_STORE,
      schema: {
        tags: TAGS,
        summary: 'The manage link\'s appointment, and whether the customer may cancel or reschedule it now',
        security: Security.manage,
        response: { 200: ref, ...ERRORS },
      },
    },
    async (request) => manage.get(requireManage(request.principal)),
  );

  app.post(
    '/v3/manage/appointment/cancel',
    {
      config: MANAGE,
      ...NO_STORE,
      schema: {
        tags: TAGS,
        summary: 'Cancel the manage link\'s appointment (BK or RS → CN), within the service\'s notice; sends the cancellation with its calendar entry',
        security: Security.manage,
        response: { 200: ref, ...ERRORS },
      },
    },
    async (request) => manage.cancel(requireManage(request.principal)),
  );

  app.post(
    '/v3/manage/appointment/reschedule',
    {
      config: MANAGE,
      ...NO_STORE,
      schema: {
        tags: TAGS,
        summary: 'Move the manage link\'s appointment to a slot from GET /v3/manage/availability (BK → RE plus a new BK); the old link then answers 410',
        security: Security.manage,
        body: ManageRescheduleBody,
        response: { 200: RescheduledSchema, ...ERRORS },
      },
    },
    async (request) => manage.reschedule(requireManage(request.principal), request.body),
  );

  app.get(
    '/v3/manage/availability',
    {
      config: MANAGE,
      ...NO_STORE,
      schema: {
        tags: TAGS,
        summary: 'Open slots of the appointment\'s service at its location: the slot picker of a reschedule',
        security: Security.manage,
        querystring: ManageAvailabilityQuery,
        response: { 200: Type.Ref(AvailabilityResponse.$id!), ...ERRORS },
      },
    },
    async (request, reply) => {
      const json = await manage.availability(requireManage(request.principal), { ...request.query, ResourceIds: resourceIdList(request.query.ResourceIds) });
      return reply.type('application/json; charset=utf-8').send(json);
    },
  );
}
