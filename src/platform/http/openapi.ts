/**
 * The served OpenAPI document, finished from what @fastify/swagger builds out of the route schemas:
 * names for generated clients (operationId), the OAuth 2.0 client-credentials scheme, `servers`
 * from configuration, the 429 and 503 answers every /v3 route can give, and no Ajv-only keywords.
 * test/platform/openapi-lint.test.ts runs Redocly's recommended rules on the result.
 */

import { REQUEST_EXAMPLES, RESPONSE_EXAMPLES } from './openapi-examples.js';
import { DATABASE_UNAVAILABLE } from '../errors.js';
import { isRecord } from '../values.js';

type Json = Record<string, unknown>;

/**
 * The generated document is plain JSON: these read it by checking shapes instead of asserting
 * them, so an unexpected shape is skipped, never a crash.
 */
const isJson = isRecord;
/** `node[key]` when it is an object. */
function objectAt(node: Json | undefined, key: string): Json | undefined {
  const value = node?.[key];
  return isJson(value) ? value : undefined;
}
/** `node[key]` as an object, created empty when missing. */
function ensureObject(node: Json, key: string): Json {
  const found = objectAt(node, key);
  if (found) return found;
  const created: Json = {};
  node[key] = created;
  return created;
}
/** The object values of `node` (those that are objects), with their keys. */
function objectEntries(node: Json | undefined): Array<[string, Json]> {
  return Object.entries(node ?? {}).filter((entry): entry is [string, Json] => isJson(entry[1]));
}

/** Every operation's id, as a person would name the call. A route missing here fails the lint test. */
export const OPERATION_IDS: Record<string, string> = {
  'GET /openapi.json': 'getOpenApiDocument',
  'POST /v3/auth/signup': 'signUp',
  'POST /v3/auth/login': 'logIn',
  'GET /v3/auth/me': 'getCurrentUser',
  'PUT /v3/auth/me': 'updateCurrentUser',
  'POST /v3/auth/me/identities': 'linkIdentity',
  'POST /v3/auth/acceptInvitation': 'acceptInvitation',
  'POST /v3/auth/generateRefreshToken': 'generateRefreshToken',
  'POST /v3/auth/token': 'refreshAccessToken',
  'POST /v3/auth/docsAuth': 'createDocsToken',
  'POST /v3/company': 'createCompany',
  'GET /v3/company': 'getCompany',
  'PUT /v3/company': 'updateCompany',
  'PATCH /v3/company': 'patchCompany',
  'GET /v3/companies': 'listCompanies',
  'POST /v3/company/apiKey': 'rotateApiKey',
  'POST /v3/company/publicClientId': 'rotatePublicClientId',
  'POST /v3/oauth/token': 'getMachineToken',
  'POST /v3/clientId': 'createClientId',
  'GET /v3/clientIds': 'listClientIds',
  'DELETE /v3/clientId/{id}': 'revokeClientId',
  'GET /v3/public/locations': 'listPublicLocations',
  'GET /v3/public/services': 'listPublicServices',
  'GET /v3/public/company': 'getPublicCompany',
  'GET /v3/public/resources': 'listPublicResources',
  'GET /v3/public/availability': 'searchPublicAvailability',
  'POST /v3/public/appointment/hold': 'holdPublicAppointment',
  'GET /v3/manage/appointment': 'getManagedAppointment',
  'POST /v3/manage/appointment/cancel': 'cancelManagedAppointment',
  'POST /v3/manage/appointment/reschedule': 'rescheduleManagedAppointment',
  'GET /v3/manage/availability': 'searchManagedAvailability',
  'PUT /v3/public/appointment/{id}/book': 'bookPublicAppointment',
  'POST /v3/location': 'createLocation',
  'GET /v3/locations': 'listLocations',
  'GET /v3/location/{id}': 'getLocation',
  'PUT /v3/location/{id}': 'updateLocation',
  'PATCH /v3/location/{id}': 'patchLocation',
  'DELETE /v3/location/{id}': 'archiveLocation',
  'POST /v3/service': 'createService',
  'GET /v3/services': 'listServices',
  'GET /v3/service/{id}': 'getService',
  'PUT /v3/service/{id}': 'updateService',
  'PATCH /v3/service/{id}': 'patchService',
  'DELETE /v3/service/{id}': 'archiveService',
  'POST /v3/resource': 'createResource',
  'GET /v3/resources': 'listResources',
  'GET /v3/resource/{id}': 'getResource',
  'PUT /v3/resource/{id}': 'updateResource',
  'PATCH /v3/resource/{id}': 'patchResource',
  'DELETE /v3/resource/{id}': 'archiveResource',
  'POST /v3/resource/{id}/externalCalendar': 'connectExternalCalendar',
  'GET /v3/calendar/callback': 'externalCalendarCallback',
  'POST /v3/calendar/selectionSession': 'createCalendarSelectionSession',
  'GET /v3/resource/{id}/externalCalendars': 'listExternalCalendarConnections',
  'GET /v3/resource/{id}/externalCalendars/list': 'listExternalCalendars',
  'POST /v3/resource/{id}/externalCalendars/select': 'selectExternalCalendars',
  'POST /v3/resource/{id}/externalCalendars/sync': 'syncExternalCalendars',
  'DELETE /v3/resource/{id}/externalCalendar/{connectionId}': 'disconnectExternalCalendar',
  'GET /v3/mapping/ids': 'mapLegacyIds',
  'POST /v3/migration/sync': 'migrateFromV1',
  'GET /v3/migration/jobs/{id}': 'getMigrationJob',
  'POST /v3/customer': 'createCustomer',
  'GET /v3/customers': 'listCustomers',
  'GET /v3/customer/{id}': 'getCustomer',
  'PUT /v3/customer/{id}': 'updateCustomer',
  'PATCH /v3/customer/{id}': 'patchCustomer',
  'DELETE /v3/customer/{id}': 'archiveCustomer',
  'GET /v3/users': 'listUsers',
  'POST /v3/users/setUsers': 'setUsers',
  'POST /v3/users/adjustUsers': 'adjustUsers',
  'DELETE /v3/users/{id}': 'removeUser',
  'POST /v3/unavailability/blocks': 'createBlock',
  'GET /v3/unavailability/blocks': 'listBlocks',
  'DELETE /v3/unavailability/blocks/{id}': 'deleteBlock',
  'POST /v3/unavailability/recurringBlock': 'createRecurringBlock',
  'GET /v3/unavailability/recurringBlock': 'listRecurringBlocks',
  'GET /v3/unavailability/recurringBlock/{id}': 'getRecurringBlock',
  'PATCH /v3/unavailability/recurringBlock/{id}': 'patchRecurringBlock',
  'PUT /v3/unavailability/recurringBlock/{id}': 'updateRecurringBlock',
  'DELETE /v3/unavailability/recurringBlock/{id}': 'deleteRecurringBlock',
  'POST /v3/unavailability/holiday': 'createHoliday',
  'GET /v3/unavailability/holiday': 'listHolidays',
  'DELETE /v3/unavailability/holiday/{id}': 'deleteHoliday',
  'GET /v3/weeklyAllocation': 'listWeeklyAllocations',
  'POST /v3/weeklyAllocation/setWeeklyAllocations': 'setWeeklyAllocations',
  'GET /v3/singleAllocation': 'listSingleAllocations',
  'POST /v3/singleAllocation/setSingleAllocations': 'setSingleAllocations',
  'GET /v3/unavailability': 'listUnavailability',
  'GET /v3/unavailability/calendar': 'listUnavailabilityCalendar',
  'GET /v3/availability': 'searchAvailability',
  'POST /v3/appointment': 'createAppointment',
  'POST /v3/appointment/hold': 'holdAppointment',
  'GET /v3/appointment/{id}': 'getAppointment',
  'PUT /v3/appointment/{id}': 'updateAppointment',
  'PATCH /v3/appointment/{id}': 'patchAppointment',
  'DELETE /v3/appointment/{id}': 'deleteHold',
  'PUT /v3/appointment/{id}/reserve': 'reserveAppointment',
  'PUT /v3/appointment/{id}/book': 'bookAppointment',
  'PUT /v3/appointment/{id}/confirm': 'confirmAppointment',
  'PUT /v3/appointment/{id}/cancel': 'cancelAppointment',
  'PUT /v3/appointment/{id}/reschedule': 'rescheduleAppointment',
  'GET /v3/appointments': 'listAppointments',
  'GET /v3/appointments/cursor': 'listAppointmentsByCursor',
  'GET /v3/webhook': 'listWebhooks',
  'POST /v3/webhook': 'createWebhook',
  'POST /v3/webhook/setWebhooks': 'setWebhooks',
  'PUT /v3/webhook/{id}': 'updateWebhook',
  'PATCH /v3/webhook/{id}': 'patchWebhook',
  'DELETE /v3/webhook/{id}': 'deleteWebhook',
  'GET /v3/webhook/{id}/deliveries': 'listWebhookDeliveries',
  'GET /v3/emailTemplates': 'listTemplates',
  'POST /v3/emailTemplates': 'saveTemplate',
  'GET /v3/emailTemplates/defaults': 'listDefaultTemplates',
  'DELETE /v3/emailTemplates/{id}': 'deleteTemplate',
  'GET /v3/notifications': 'listNotifications',
};

/** Ajv keywords that are not JSON Schema 2020-12 (ajv-formats' date bounds): enforced, not described. */
const AJV_ONLY_KEYWORDS = ['formatMinimum', 'formatMaximum', 'formatExclusiveMinimum', 'formatExclusiveMaximum'];

function stripAjvKeywords(node: unknown): void {
  if (Array.isArray(node)) {
    for (const item of node) stripAjvKeywords(item);
    return;
  }
  if (!isJson(node)) return;
  for (const keyword of AJV_ONLY_KEYWORDS) delete node[keyword];
  for (const value of Object.values(node)) stripAjvKeywords(value);
}

const RATE_LIMIT_HEADERS: Json = {
  'Retry-After': { description: 'Seconds to wait before trying again', schema: { type: 'integer', minimum: 0 } },
  'RateLimit-Limit': { description: 'Requests allowed in the window of the budget that binds', schema: { type: 'integer' } },
  'RateLimit-Remaining': { description: 'Requests left in that window (0 here)', schema: { type: 'integer' } },
  'RateLimit-Reset': { description: 'Seconds until the window resets', schema: { type: 'integer' } },
  'RateLimit-Policy': { description: 'The budget as `limit;w=windowSeconds`', schema: { type: 'string' } },
};

const ERROR_CONTENT = (example: Json) => ({ 'application/json': { schema: { $ref: '#/components/schemas/ErrorBody' }, example } });

const SHARED_RESPONSES: Json = {
  TooManyRequests: {
    description: 'Rate limited: the caller spent this route family\'s budget (or the appointment lists are at capacity). Wait Retry-After seconds.',
    headers: Object.fromEntries(Object.keys(RATE_LIMIT_HEADERS).map((name) => [name, { $ref: `#/components/headers/${name}` }])),
    content: ERROR_CONTENT({ success: false, message: 'API write rate limit exceeded', errors: [] }),
  },
  ServiceUnavailable: {
    description: 'The database is down, restarting, read-only after a failover, or too busy to answer in time; retry after Retry-After seconds (the same request will succeed once it is back, with no restart).',
    headers: { 'Retry-After': { $ref: '#/components/headers/Retry-After' } },
    content: ERROR_CONTENT({ success: false, message: DATABASE_UNAVAILABLE, errors: [], requestId: 'b1d9c2a4-5f7e-4c1a-9d2b-3e4f5a6b7c8d' }),
  },
};

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'options', 'head'];

export interface FinishOptions {
  /** PUBLIC_BASE_URL: the origin clients use. Unset: `/`, the origin the document was fetched from. */
  publicBaseUrl: string | undefined;
}

/** The example of the body (PATCH takes its PUT's) and of the success answer, where one is written. */
function addExamples(operation: Json, operationId: string | undefined): void {
  if (!operationId) return;
  const request = REQUEST_EXAMPLES[operationId] ?? REQUEST_EXAMPLES[operationId.replace(/^patch/, 'update')];
  if (request !== undefined) for (const [, media] of objectEntries(objectAt(objectAt(operation, 'requestBody'), 'content'))) media.example = request;
  const answer = RESPONSE_EXAMPLES[operationId];
  if (answer === undefined) return;
  for (const [status, response] of objectEntries(objectAt(operation, 'responses'))) {
    if (!status.startsWith('2')) continue;
    for (const [, media] of objectEntries(objectAt(response, 'content'))) media.example = answer;
  }
}

/** Words for a schema name: `RecurringBlock` → `recurring block`. */
const words = (name: string) => name.replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase();

/** A success answer says what it carries instead of the generator's "Default Response". */
function describeResponses(operation: Json, responses: Json): void {
  for (const [status, response] of objectEntries(responses)) {
    if (!status.startsWith('2') || (response.description && response.description !== 'Default Response')) continue;
    const schema = objectAt(objectEntries(objectAt(response, 'content'))[0]?.[1], 'schema');
    const refName = (value: unknown) => (typeof value === 'string' ? value.split('/').at(-1) : undefined);
    const ref = refName(schema?.$ref);
    const items = refName(objectAt(objectAt(objectAt(schema, 'properties'), 'data'), 'items')?.$ref);
    if (status === '204') response.description = 'Done; no body';
    else if (ref) response.description = status === '201' ? `The created ${words(ref)}` : `The ${words(ref)}`;
    else if (items) response.description = `The ${words(items)} records, in \`data\``;
    else response.description = `Success: ${String(operation.summary ?? 'the answer')}`;
  }
}

/** Finishes a copy of the generated document; the input is not changed. */
export function finishOpenApiDocument(generated: object, options: FinishOptions): Json {
  const document: Json = { ...structuredClone(generated) };
  stripAjvKeywords(document);
  const base = options.publicBaseUrl?.replace(/\/+$/, '');
  document.servers = [{ url: base ?? '/', description: base ? 'This deployment (PUBLIC_BASE_URL)' : 'The server this document was fetched from' }];
  ensureObject(document, 'info').license = { name: 'Proprietary', url: `${base ?? ''}/docs` };

  const components = ensureObject(document, 'components');
  ensureObject(components, 'securitySchemes').oauth2ClientCredentials = {
    type: 'oauth2',
    description: 'A machine token from a client id and secret (POST /v3/oauth/token); /docs fetches it for you',
    flows: {
      clientCredentials: {
        tokenUrl: `${base ?? ''}/v3/oauth/token`,
        scopes: { read: 'Read the company\'s data', write: 'Create, change and delete the company\'s data' },
      },
    },
  };
  Object.assign(ensureObject(components, 'responses'), SHARED_RESPONSES);
  Object.assign(ensureObject(components, 'headers'), RATE_LIMIT_HEADERS);

  for (const [path, item] of objectEntries(objectAt(document, 'paths'))) {
    for (const method of METHODS) {
      const operation = objectAt(item, method);
      if (!operation) continue;
      const key = `${method.toUpperCase()} ${path}`;
      const operationId = OPERATION_IDS[key];
      if (operationId) operation.operationId = operationId;
      // An operation that needs no credentials says so (an empty requirement), instead of saying nothing.
      const security = Array.isArray(operation.security) ? operation.security.filter(isJson) : [];
      if (security.length === 0) operation.security = [];
      // Wherever a machine token works, the client-credentials flow can get one: read or write scope.
      if (security.some((requirement) => 'machineToken' in requirement)) {
        const scope = method === 'get' || method === 'head' ? 'read' : 'write';
        operation.security = [...security, { oauth2ClientCredentials: [scope] }];
      }
      const responses = ensureObject(operation, 'responses');
      addExamples(operation, operationId);
      describeResponses(operation, responses);
      if (path.startsWith('/v3/')) responses['429'] = { $ref: '#/components/responses/TooManyRequests' };
      if (path.startsWith('/v3/') || path === '/openapi.json') responses['503'] = { $ref: '#/components/responses/ServiceUnavailable' };
    }
  }
  return document;
}
