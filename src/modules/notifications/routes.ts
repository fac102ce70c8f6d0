import { Type } from '@sinclair/typebox';
import type { App } from '../../platform/http/types.js';
import { errorResponses, Page, Security } from '../../platform/http/schemas.js';
import { requireCompany } from '../../platform/auth/principal.js';
import type { Principal } from '../../platform/auth/principal.js';
import { locationScope } from '../catalog/scope.js';
import { ApiError, fieldError } from '../../platform/errors.js';
import type { NotificationRepository } from './repository.js';
import { Notification, NotificationLogQuery } from './schemas.js';
import { WITHOUT_RESOURCE_ROLE } from '../catalog/routes.js';

// The log holds customers' contact details: the roles that may see customers may see it.
const ACCESS = WITHOUT_RESOURCE_ROLE;

type LogRepository = Pick<NotificationRepository, 'appointmentExists' | 'pageLog'>;

/** A page of the company's notifications log, newest first. */
async function logPage(repository: LogRepository, principal: Principal & { companyId: string }, query: NotificationLogQuery) {
  const { companyId } = principal;
  const { appointmentId, channel, status, limit = 20, page = 1 } = query;
  // Another company's (or an unknown) appointment id in a query is a 400 naming it, as everywhere.
  if (appointmentId && !(await repository.appointmentExists(companyId, appointmentId))) {
    const msg = `${appointmentId} is not an appointment of this company`;
    throw new ApiError(400, msg, [fieldError('query', 'appointmentId', msg)]);
  }
  // A location-scoped user sees the messages of their locations' appointments only.
  const scope = locationScope(principal);
  const { rows, total } = await repository.pageLog(companyId, {
    locationIds: scope ? [...scope] : null,
    appointmentId,
    channel,
    status,
    limit,
    offset: (page - 1) * limit,
  });
  return {
    data: rows.map(({ companyId: _company, ...row }) => ({
      ...row,
      createdAt: row.createdAt.toISOString(),
      finishedAt: row.finishedAt?.toISOString() ?? null,
    })),
    page,
    limit,
    total,
  };
}

/** GET /v3/notifications: every message built for the company's appointment events, newest first. */
export function registerNotificationRoutes(app: App, { repository }: { repository: LogRepository }) {
  app.addSchema(Notification);
  app.get(
    '/v3/notifications',
    {
      config: ACCESS,
      schema: {
        tags: ['Notifications'],
        summary: 'The notifications log: every email and SMS built for appointment events, sent or not, newest first',
        security: Security.company,
        querystring: NotificationLogQuery,
        response: { 200: Page(Type.Ref('Notification')), ...errorResponses(400, 401, 403) },
      },
    },
    async (request) => logPage(repository, requireCompany(request.principal), request.query),
  );
}
