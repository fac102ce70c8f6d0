import { Type } from '@sinclair/typebox';
import type { App } from '../../platform/http/types.js';
import type { Db } from '../../platform/database/index.js';
import { errorResponses, Nullable, Page, PageQueryFields, Security, Uuid } from '../../platform/http/schemas.js';
import { requireCompany } from '../../platform/auth/principal.js';
import { StringEnum } from '../catalog/fields.js';
import { locationScope } from '../catalog/scope.js';
import { ApiError, fieldError } from '../../platform/errors.js';


const Notification = Type.Object(
  {
    id: Uuid(),
    eventId: Uuid(),
    appointmentId: Uuid(),
    type: Type.String({ description: 'Template type, for example APPOINTMENT_BOOKED' }),
    channel: StringEnum(['EMAIL', 'SMS']),
    recipientType: StringEnum(['CUSTOMER', 'RESOURCE', 'BUSINESS']),
    recipient: Type.String({ description: 'Email address or phone number' }),
    subject: Nullable(Type.String({ description: 'Null for SMS: the subject is not sent' })),
    body: Type.String(),
    status: StringEnum(['pending', 'sent', 'not_sent', 'failed', 'interrupted'], { description: 'not_sent: channel off or not configured (see reason); failed: the provider refused or could not be reached; interrupted: the sending was cut off (a crash) and it is unknown whether the provider got it; never repeated' }),
    reason: Nullable(Type.String()),
    providerId: Nullable(Type.String({ description: 'The SMTP message id or the SMS provider\'s message sid' })),
    createdAt: Type.String({ format: 'date-time' }),
    finishedAt: Nullable(Type.String({ format: 'date-time' })),
  },
  { $id: 'Notification' },
);

// The log holds customers' contact details: the roles that may see customers may see it.
const ACCESS = { access: { mode: 'company' as const, roles: ['Owner' as const, 'Admin' as const, 'User' as const] } };

/** GET /v3/notifications: every message built for the company's appointment events, newest first. */
export function registerNotificationRoutes(app: App, { db }: { db: Db }) {
  app.addSchema(Notification);
  app.get(
    '/v3/notifications',
    {
      config: ACCESS,
      schema: {
        tags: ['Notifications'],
        summary: 'The notifications log: every email and SMS built for appointment events, sent or not, newest first',
        security: Security.company,
        querystring: Type.Object({
          appointmentId: Type.Optional(Uuid()),
          channel: Type.Optional(StringEnum(['EMAIL', 'SMS'])),
          status: Type.Optional(StringEnum(['pending', 'sent', 'not_sent', 'failed', 'interrupted'])),
          ...PageQueryFields(100),
        }),
        response: { 200: Page(Type.Ref('Notification')), ...errorResponses(400, 401, 403) },
      },
    },
    async (request) => {
      const principal = requireCompany(request.principal);
      const { companyId } = principal;
      const { appointmentId, channel, status } = request.query;
      const limit = request.query.limit ?? 20;
      const page = request.query.page ?? 1;
      // Another company's (or an unknown) appointment id in a query is a 400 naming it, as everywhere.
      if (appointmentId) {
        const known = await db.selectFrom('appointments').select('id').where('companyId', '=', companyId).where('id', '=', appointmentId).executeTakeFirst();
        const msg = `${appointmentId} is not an appointment of this company`;
        if (!known) throw new ApiError(400, msg, [fieldError('query', 'appointmentId', msg)]);
      }
      let base = db.selectFrom('notifications').where('companyId', '=', companyId);
      // A location-scoped user sees the messages of their locations' appointments only.
      const scope = locationScope(principal);
      if (scope) {
        const locations = [...scope];
        base = base.where((eb) =>
          eb.exists(
            eb
              .selectFrom('appointments as a')
              .select('a.id')
              .whereRef('a.companyId', '=', 'notifications.companyId')
              .whereRef('a.id', '=', 'notifications.appointmentId')
              .where('a.locationId', 'in', locations.length ? locations : ['00000000-0000-0000-0000-000000000000']),
          ),
        );
      }
      if (appointmentId) base = base.where('appointmentId', '=', appointmentId);
      if (channel) base = base.where('channel', '=', channel);
      if (status) base = base.where('status', '=', status);
      const [rows, count] = await Promise.all([
        base.selectAll().orderBy('createdAt', 'desc').orderBy('id', 'desc').limit(limit).offset((page - 1) * limit).execute(),
        base.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow(),
      ]);
      return {
        data: rows.map(({ companyId: _company, ...row }) => ({
          ...row,
          createdAt: row.createdAt.toISOString(),
          finishedAt: row.finishedAt?.toISOString() ?? null,
        })),
        page,
        limit,
        total: Number(count.total),
      };
    },
  );
}
