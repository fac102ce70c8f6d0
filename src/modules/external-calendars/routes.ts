import type { App } from '../../platform/http/types.js';
import { errorResponses, Security } from '../../platform/http/schemas.js';
import { requireCompany } from '../../platform/auth/principal.js';
import {
  CallbackQuery,
  ConnectAnswer,
  ConnectBody,
  Connection,
  ConnectionList,
  ConnectionParams,
  ListQuery,
  RemoteCalendar,
  RemoteCalendarList,
  ResourceParams,
  SelectBody,
  SelectionSessionAnswer,
  SelectionSessionBody,
  SyncAnswer,
} from './schemas.js';
import type { ExternalCalendarService } from './service.js';

const TAGS = ['External calendars'];
/** Company credentials; the Calendar Selection Token too (the service checks its resource and connection). */
const WITH_SELECTION_TOKEN = { mode: 'company' as const, calendarSelection: true as const };

export function registerExternalCalendarRoutes(app: App, { calendars }: { calendars: ExternalCalendarService }) {
  app.addSchema(Connection);
  app.addSchema(RemoteCalendar);
  const originOf = (request: { protocol: string; host: string }) => `${request.protocol}://${request.host}`;

  app.post(
    '/v3/resource/:id/externalCalendar',
    {
      schema: {
        tags: TAGS,
        summary: 'Connect an external calendar to a resource',
        description:
          'google and microsoft: `{provider, redirectUrl, useOnSchedCalendarSelection}` answers `status: "pending"` and an `authUrl` to open in the user\'s browser ' +
          '(OAuth 2.0 with PKCE; the provider returns to GET /v3/calendar/callback, which sends the browser on to redirectUrl). ' +
          'caldav: `{provider, url, username, password}` is checked by a real PROPFIND and answers `status: "connected"`. Secrets are stored encrypted and never returned.',
        security: Security.company,
        params: ResourceParams,
        body: ConnectBody,
        response: { 201: ConnectAnswer, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => reply.status(201).send(await calendars.connect(requireCompany(request.principal), request.params.id, request.body, originOf(request))),
  );

  app.get(
    '/v3/calendar/callback',
    {
      config: { access: { mode: 'none' } },
      schema: {
        tags: TAGS,
        summary: 'OAuth callback of Google and Microsoft (the provider sends the browser here)',
        description:
          'No credentials: the signed, single-use state (15 minutes) names the connection. Redirects (302) to the redirectUrl with `?code=<one-time selection code>&connectionId=` ' +
          'when useOnSchedCalendarSelection was true, else `?status=connected&connectionId=`; a provider error returns as `?status=error&error=`. A bad, expired or reused state is 400.',
        querystring: CallbackQuery,
        response: {
          302: {
            type: 'null',
            description: 'To the redirectUrl, with `code` and `connectionId`, or `status` (`connected` or `error`), `error` and `connectionId`',
            headers: { location: { type: 'string', description: 'The redirectUrl with the answer in its query' } },
          },
          ...errorResponses(400, 429),
        },
      },
    },
    async (request, reply) => {
      reply.header('cache-control', 'no-store');
      return reply.redirect(await calendars.callback(request.query, originOf(request)), 302);
    },
  );

  app.post(
    '/v3/calendar/selectionSession',
    {
      config: { access: { mode: 'none' } },
      schema: {
        tags: TAGS,
        summary: 'Exchange a one-time selection code for a Calendar Selection Token',
        description: 'The code comes from the callback\'s redirect; it works once, for 10 minutes. The token lasts 15 minutes and works only on list, select and disconnect of its connection.',
        body: SelectionSessionBody,
        response: { 200: SelectionSessionAnswer, ...errorResponses(400, 429) },
      },
    },
    async (request, reply) => {
      reply.header('cache-control', 'no-store');
      return calendars.selectionSession(request.body.code);
    },
  );

  app.get(
    '/v3/resource/:id/externalCalendars',
    {
      schema: {
        tags: TAGS,
        summary: 'The resource\'s external calendar connections',
        security: Security.company,
        params: ResourceParams,
        response: { 200: ConnectionList, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => calendars.connections(requireCompany(request.principal), request.params.id),
  );

  app.get(
    '/v3/resource/:id/externalCalendars/list',
    {
      config: { access: WITH_SELECTION_TOKEN },
      schema: {
        tags: TAGS,
        summary: 'The calendars of the connected account',
        description: 'Without provider, the provider is inferred: exactly one provider must be connected. Accepts a Calendar Selection Token.',
        security: Security.companyOrCalendarSelection,
        params: ResourceParams,
        querystring: ListQuery,
        response: { 200: RemoteCalendarList, ...errorResponses(400, 401, 403, 404, 503) },
      },
    },
    async (request) => calendars.listCalendars(request.principal, request.params.id, request.query.provider),
  );

  app.post(
    '/v3/resource/:id/externalCalendars/select',
    {
      config: { access: WITH_SELECTION_TOKEN },
      schema: {
        tags: TAGS,
        summary: 'Choose the calendars read as busy time, and the one booked appointments are written to',
        description: 'Answers the list as GET .../externalCalendars/list does. An unknown calendar id is 400 naming it. The new selection is read at once. Accepts a Calendar Selection Token.',
        security: Security.companyOrCalendarSelection,
        params: ResourceParams,
        body: SelectBody,
        response: { 200: RemoteCalendarList, ...errorResponses(400, 401, 403, 404, 503) },
      },
    },
    async (request) => calendars.select(request.principal, request.params.id, request.body),
  );

  app.post(
    '/v3/resource/:id/externalCalendars/sync',
    {
      schema: {
        tags: TAGS,
        summary: 'Read the resource\'s selected calendars now',
        security: Security.company,
        params: ResourceParams,
        response: { 200: SyncAnswer, ...errorResponses(400, 401, 403, 404, 503) },
      },
    },
    async (request) => calendars.syncNow(requireCompany(request.principal), request.params.id),
  );

  app.delete(
    '/v3/resource/:id/externalCalendar/:connectionId',
    {
      config: { access: WITH_SELECTION_TOKEN },
      schema: {
        tags: TAGS,
        summary: 'Disconnect: the connection, its tokens (revoked at the provider where it can be) and its busy intervals go',
        security: Security.companyOrCalendarSelection,
        params: ConnectionParams,
        response: { 204: { type: 'null', description: 'Disconnected' }, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      await calendars.disconnect(request.principal, request.params.id, request.params.connectionId);
      return reply.status(204).send();
    },
  );
}
