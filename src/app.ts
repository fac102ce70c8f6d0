import { randomUUID } from 'node:crypto';
import Fastify from 'fastify';
import type { FastifyReply } from 'fastify';
import type { FastifyServerOptions } from 'fastify';
import type { Redis } from 'ioredis';
import formbody from '@fastify/formbody';
import swagger from '@fastify/swagger';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { AppConfig } from './platform/config.js';
import type { DatabaseHandle } from './platform/database/index.js';
import type { Secrets } from './platform/secrets.js';
import { registerErrorHandling } from './platform/errors.js';
import { jsonNestingExceeds, registerValidation } from './platform/validation.js';
import { VALIDATION_ERROR, fieldError, validationError } from './platform/errors.js';
import { RedisUnavailableError, createRedisGuard } from './platform/redis.js';
import { parseFormBody } from './platform/http/form-body.js';
import { ErrorBodySchema } from './platform/http/schemas.js';
import { createTokenService } from './platform/auth/tokens.js';
import { createPrincipalRepository } from './platform/auth/principal-repository.js';
import { registerAuthentication } from './platform/auth/authenticate.js';
import { registerRateLimits } from './platform/rate-limit/index.js';
import { createIdentityRepository } from './modules/identity/repository.js';
import { createIdentityService } from './modules/identity/service.js';
import { registerIdentityRoutes } from './modules/identity/routes.js';
import { createCompanyRepository } from './modules/companies/repository.js';
import { createCompanyService } from './modules/companies/service.js';
import { registerCompanyRoutes } from './modules/companies/routes.js';
import { createClientCredentialRepository } from './modules/client-credentials/repository.js';
import { createClientCredentialService } from './modules/client-credentials/service.js';
import { registerClientCredentialRoutes } from './modules/client-credentials/routes.js';
import { registerOperationsRoutes } from './modules/operations/routes.js';
import { registerPublicRoutes } from './modules/public/routes.js';
import { createPublicRepository } from './modules/public/repository.js';
import { createCatalogLinks } from './modules/catalog/links.js';
import { createLocationRepository } from './modules/locations/repository.js';
import { createLocationService } from './modules/locations/service.js';
import { registerLocationRoutes } from './modules/locations/routes.js';
import { createServiceRepository } from './modules/services/repository.js';
import { createServiceService } from './modules/services/service.js';
import { registerServiceRoutes } from './modules/services/routes.js';
import { createResourceRepository } from './modules/resources/repository.js';
import { createResourceService } from './modules/resources/service.js';
import { registerResourceRoutes } from './modules/resources/routes.js';
import { createCustomerRepository } from './modules/customers/repository.js';
import { createCustomerService } from './modules/customers/service.js';
import { registerCustomerRoutes } from './modules/customers/routes.js';
import { createUserRepository } from './modules/users/repository.js';
import { createUserService } from './modules/users/service.js';
import { registerUserRoutes } from './modules/users/routes.js';
import { createUnavailabilityRepository } from './modules/unavailability/repository.js';
import { createUnavailabilityService } from './modules/unavailability/service.js';
import { registerUnavailabilityRoutes } from './modules/unavailability/routes.js';
import { createAvailabilityRepository } from './modules/availability/repository.js';
import { createAvailabilityService } from './modules/availability/service.js';
import { registerAvailabilityRoutes } from './modules/availability/routes.js';
import { createCalendarService } from './modules/availability/calendar.js';
import { createDisabledAvailabilityCache, createMemoryAvailabilityCache, createRedisAvailabilityCache } from './modules/availability/cache.js';
import type { AvailabilityCache } from './modules/availability/cache.js';
import { createAppointmentService } from './modules/appointments/service.js';
import { registerAppointmentRoutes } from './modules/appointments/routes.js';
import { registerWebhookRoutes } from './modules/webhooks/routes.js';
import { createTemplateService } from './modules/templates/service.js';
import { registerTemplateRoutes } from './modules/templates/routes.js';
import type { App } from './platform/http/types.js';
import { readFileSync } from 'node:fs';
import type { EventTrigger } from './platform/database/schema.js';
import { createEmailSender } from './platform/messaging/email.js';
import { createSmsSender } from './platform/messaging/sms.js';
import { createDispatcher } from './modules/notifications/dispatcher.js';
import type { Dispatcher } from './modules/notifications/dispatcher.js';
import { registerNotificationRoutes } from './modules/notifications/routes.js';
import { activeWebhooksFor, finishDelivery, startDelivery } from './modules/webhooks/repository.js';
import { defaultResolve, deliverWebhook } from './modules/webhooks/delivery-client.js';
import { buildMergeContext, renderTemplate } from './modules/templates/render.js';
import type { MergeContext } from './modules/templates/render.js';
import { registerMetrics } from './platform/metrics.js';
import { createPasswordHasher } from './platform/auth/passwords.js';

export interface RegisteredRoute {
  method: string;
  url: string;
  hidden: boolean;
}

declare module 'fastify' {
  interface FastifyInstance {
    registeredRoutes: RegisteredRoute[];
    dispatcher: Dispatcher;
  }
}

/**
 * Test configuration only (loadConfig refuses it outside NODE_ENV=test, and the delivery client
 * refuses the allowance too): trust this CA for loopback receivers, and resolve these names locally.
 */
function webhookTestOptions(test: NonNullable<AppConfig['webhookTest']>) {
  return {
    testAllowance: { allowLoopback: true as const, ca: readFileSync(test.caFile) },
    resolve: async (hostname: string) => test.hosts[hostname.toLowerCase()] ?? defaultResolve(hostname),
  };
}

export interface BuildAppOptions {
  config: AppConfig;
  /** Shared state across instances (caches, rate limits); in-process state without it. */
  redis?: Redis | undefined;
  database: DatabaseHandle;
  secrets: Secrets;
  /** Set by the server during shutdown so /readyz fails while requests drain. */
  isDraining?: () => boolean;
}

/** Field names that hold a credential, wherever a log object carries them (top level or one level down). */
const SECRET_FIELDS = ['password', 'client_secret', 'clientSecret', 'refresh_token', 'refreshToken', 'access_token', 'accessToken', 'apiKey', 'authToken', 'token'];

/**
 * Never logged. Request logs carry only the method, URL, host and remote address (no headers, no
 * body) and error logs the error itself, so these are a second line: a header or a credential field
 * that reaches a log object some day is written as [redacted]. test/platform/logging.test.ts reads
 * the real server's output at debug level while sending every kind of credential.
 */
export const LOG_REDACTIONS = [
  'req.headers.authorization',
  'req.headers["proxy-authorization"]',
  'req.headers["x-api-key"]',
  'req.headers["x-client-id"]',
  'req.headers.cookie',
  'req.body',
  ...SECRET_FIELDS.flatMap((field) => [field, `*.${field}`]),
];

/** Builds the whole HTTP application: platform hooks first, then every capability's routes. */
export async function buildApp({ config, database, secrets, redis, isDraining = () => false }: BuildAppOptions): Promise<App> {
  const app = Fastify({
    logger: { level: config.logLevel, redact: { paths: LOG_REDACTIONS, censor: '[redacted]' } },
    bodyLimit: config.bodyLimitBytes,
    requestIdHeader: 'x-request-id',
    genReqId: () => randomUUID(),
    // X-Forwarded-* is believed only from the proxies TRUST_PROXY names (none by default):
    // anyone else could choose their own address for the per-IP budgets.
    // (Fastify's overloads do not take the union; each member is a valid trustProxy value.)
    trustProxy: config.security.trustProxy as FastifyServerOptions['trustProxy'] & boolean,
    // Path parameters are checked by their schemas (a 400 naming the parameter); the router's own
    // limit (100 characters by default) would answer 414 in Fastify's body instead. Node's header
    // limit (16 KiB) bounds a URL anyway.
    routerOptions: { ignoreTrailingSlash: false, maxParamLength: 16_384 },
    // A path the router cannot even read (bad percent-encoding, a parameter past the limit above)
    // is the caller's mistake: the specification's 400 body, not Fastify's own.
    frameworkErrors: (error, request, reply) => {
      const msg = error.code === 'FST_ERR_MAX_PARAM_LENGTH' ? 'a path parameter is too long' : 'the path is not valid: check its percent-encoding (UTF-8)';
      reply.header('x-request-id', request.id);
      void (reply as FastifyReply).status(400).type('application/json; charset=utf-8').send({ success: false, message: VALIDATION_ERROR, errors: [fieldError('params', '', msg)] });
    },
  }).withTypeProvider<TypeBoxTypeProvider>();

  registerValidation(app);
  registerErrorHandling(app);

  // A POST with Content-Type: application/json and no body (curl -X POST -H ...) is not an error.
  const defaultJsonParser = app.getDefaultJsonParser('error', 'error');
  // Bytes, decoded strictly: invalid UTF-8 is refused, never replaced with U+FFFD in silence.
  const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, raw, done) => {
    let text: string;
    try {
      text = utf8.decode(raw as Buffer);
    } catch {
      return done(validationError('body', '', 'request body is not valid UTF-8 text'), undefined);
    }
    if (text.trim() === '') return done(null, undefined);
    // Nesting is checked on the text, in one pass, before parsing (hostile input: issue 11).
    if (jsonNestingExceeds(text, config.jsonMaxDepth)) {
      return done(validationError('body', '', `request body nests arrays and objects more than ${config.jsonMaxDepth} levels deep; the limit is ${config.jsonMaxDepth}`), undefined);
    }
    return defaultJsonParser(request, text, done);
  });
  // Forms for OAuth token requests; a JSON text sent as a form is refused with a message that says so.
  await app.register(formbody, { parser: parseFormBody });

  app.addHook('onSend', async (request, reply, payload) => {
    reply.header('x-request-id', request.id);
    // The usual headers on every answer: no MIME sniffing, no framing (older browsers read
    // X-Frame-Options; CSP frame-ancestors is set on the /docs page), no referrer leaks.
    reply.header('x-content-type-options', 'nosniff');
    reply.header('x-frame-options', 'DENY');
    reply.header('referrer-policy', 'no-referrer');
    return payload;
  });

  // Every route as registered, so a test can prove /openapi.json describes them all.
  const routes: RegisteredRoute[] = [];
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    for (const method of methods) routes.push({ method, url: route.url, hidden: route.schema?.hide === true });
  });
  app.decorate('registeredRoutes', routes);

  // Prometheus metrics: every answer is counted (onResponse); GET /metrics serves them.
  const metrics = registerMetrics(app, { database, log: app.log, ownPort: config.security.metricsPort !== undefined });

  app.addSchema(ErrorBodySchema);
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Slotwise API',
        version: '3.0.0',
        description:
          'Multi-tenant appointment scheduling and booking. Every failure has the body `{success: false, message, errors[]}`. ' +
          'Authenticate with a machine token (OAuth 2.0 client credentials at POST /v3/oauth/token), a dashboard JWT plus x-api-key, or, on /v3/public/*, x-client-id plus an allowed Origin.',
      },
      components: {
        securitySchemes: {
          machineToken: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'From POST /v3/oauth/token' },
          dashboardJwt: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'From POST /v3/auth/login' },
          apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key', description: 'Company API key, with a dashboard JWT' },
          publicClientId: { type: 'apiKey', in: 'header', name: 'x-client-id', description: 'Public client id; the Origin must be an Allowed Domain' },
        },
      },
    },
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => String(json.$id ?? `def-${i}`) },
  });

  const tokens = createTokenService(secrets, config, config.oidc);
  const principals = createPrincipalRepository(database.db);
  registerAuthentication(app, { tokens, principals, publicHttpOrigins: config.security.publicHttpOrigins });
  const clientCredentialRepository = createClientCredentialRepository(database.db);
  // Budgets per company or dashboard user, and admission to the appointment lists: after authentication.
  // Every Redis call has a deadline and goes through one breaker per instance (platform/redis.ts).
  const redisGuard = redis
    ? createRedisGuard(redis, config.redis, {
        onFailure: (operation) => metrics.recordRedisFailure(operation),
        onOpen: (error) => {
          metrics.setRedisBreakerOpen(true);
          app.log.warn({ err: error }, 'Redis is failing; skipping it for a while (rate limits count in this instance, the availability cache is bypassed)');
        },
        onClose: () => {
          metrics.setRedisBreakerOpen(false);
          app.log.info('Redis answers again');
        },
      })
    : undefined;
  registerRateLimits(app, {
    config: config.rateLimits,
    redis: redisGuard,
    knownClientId: async (clientId) => (await clientCredentialRepository.byClientId(clientId)) !== undefined,
  });
  // Every Argon2 hash and check of this instance goes through one gate (docs/security.md).
  const passwords = createPasswordHasher(config.security.passwordWork);

  const companyRepository = createCompanyRepository(database.db);
  const companies = createCompanyService({ repository: companyRepository });
  const identity = createIdentityService({
    repository: createIdentityRepository(database.db),
    tokens,
    signupEnabled: config.signupEnabled,
    passwords,
    signInLock: config.security.signInLock,
  });
  const clientCredentials = createClientCredentialService({
    repository: clientCredentialRepository,
    tokens,
  });

  registerOperationsRoutes(app, {
    db: database.db,
    tokens,
    isDraining,
    publicBaseUrl: config.publicBaseUrl,
    companyForDocs: async (companyId) => {
      const row = await companyRepository.byId(companyId);
      return row && { id: row.id, name: row.name, publicClientId: row.publicClientId };
    },
  });
  registerIdentityRoutes(app, { identity, publicBaseUrl: config.publicBaseUrl });
  registerCompanyRoutes(app, { companies });
  registerClientCredentialRoutes(app, { clientCredentials });
  registerPublicRoutes(app, { companies: companyRepository, catalog: createPublicRepository(database.db) });

  const companySummary = async (companyId: string) => {
    const row = await companyRepository.byId(companyId);
    return { id: companyId, name: row?.name ?? '' };
  };
  const availabilityCache: AvailabilityCache = !config.availabilityCacheEnabled
    ? createDisabledAvailabilityCache()
    : redisGuard
      ? createRedisAvailabilityCache(redisGuard, (error, operation) => {
          // While the breaker is open every call is skipped: the breaker logged that once already.
          if (!(error instanceof RedisUnavailableError && redisGuard.open)) app.log.warn({ err: error, operation }, 'availability cache: Redis did not answer');
        })
      : createMemoryAvailabilityCache();
  // Catalog writes that can change slot generation clear exactly the cached searches they affect.
  const touch = availabilityCache.touch.bind(availabilityCache);
  const catalogLinks = createCatalogLinks(database.db);
  registerLocationRoutes(app, {
    locations: createLocationService({
      repository: createLocationRepository(database.db),
      links: catalogLinks,
      companySummary,
      onSlotSettingsChanged: (companyId, id) => touch(companyId, { locations: [id] }),
    }),
  });
  registerServiceRoutes(app, {
    services: createServiceService({
      db: database.db,
      repository: createServiceRepository(database.db),
      links: catalogLinks,
      companySummary,
      onSlotSettingsChanged: (companyId, id) => touch(companyId, { services: [id] }),
    }),
  });
  registerResourceRoutes(app, {
    resources: createResourceService({
      db: database.db,
      repository: createResourceRepository(database.db),
      links: catalogLinks,
      companySummary,
      onSlotSettingsChanged: (companyId, id) => touch(companyId, { resources: [id] }),
    }),
  });
  registerCustomerRoutes(app, { customers: createCustomerService({ repository: createCustomerRepository(database.db) }) });
  // Invitations go out by email at once (not through the outbox): the token exists only in the mail.
  const email = createEmailSender({ smtpUrl: config.smtpUrl, from: config.emailFrom });
  registerUserRoutes(app, {
    users: createUserService({
      db: database.db,
      repository: createUserRepository(database.db),
      passwords,
      email,
      invitationTtlSeconds: config.security.invitationTtlSeconds,
    }),
    publicBaseUrl: config.publicBaseUrl,
  });
  registerUnavailabilityRoutes(app, {
    unavailability: createUnavailabilityService({
      db: database.db,
      repository: createUnavailabilityRepository(database.db),
      links: catalogLinks,
      // Blocks, holidays and allocations clear exactly the cached searches of what they touch.
      onChanged: touch,
    }),
  });

  const availability = createAvailabilityService({ db: database.db, repository: createAvailabilityRepository(database.db), cache: availabilityCache });
  registerAvailabilityRoutes(app, {
    availability,
    calendar: createCalendarService({ db: database.db, repository: createAvailabilityRepository(database.db) }),
  });

  // Appointment changes clear the cached searches of their location, service, resources and customer.
  registerAppointmentRoutes(app, {
    appointments: createAppointmentService({ db: database.db, cursorSecret: secrets.CURSOR_SECRET, touch, publicHoldsPerCompany: config.security.publicHoldsPerCompany }),
  });

  // Webhook configuration of each location and the delivery records the company can read.
  registerWebhookRoutes(app, { db: database.db });

  // Email and SMS notification templates of the company (platform defaults apply without one).
  const templates = createTemplateService({ db: database.db });
  registerTemplateRoutes(app, { templates });
  registerNotificationRoutes(app, { db: database.db });

  // The outbox dispatcher: webhooks, email and SMS, reminders. server.ts runs it in a loop; tests
  // call app.dispatcher.drain() to deliver what is pending.
  const sms = createSmsSender(config.sms);
  const webhookTest = config.webhookTest ? webhookTestOptions(config.webhookTest) : undefined;
  const dispatcher = createDispatcher({
    db: database.db,
    instanceId: randomUUID(),
    leaseMs: config.worker.leaseMs,
    batchSize: config.worker.batchSize,
    log: app.log,
    onWebhookOutcome: (ok) => metrics.recordWebhookOutcome(ok ? 'delivered' : 'failed'),
    webhooks: {
      activeFor: (db, companyId, locationId, trigger) => activeWebhooksFor(db, companyId, locationId, trigger as EventTrigger),
      start: (db, delivery) => startDelivery(db, { ...delivery, trigger: delivery.trigger as EventTrigger }),
      finish: async (db, companyId, id, outcome) => void (await finishDelivery(db, companyId, id, outcome)),
      deliver: (options) => deliverWebhook({ ...options, ...webhookTest }),
    },
    messages: {
      template: (companyId, type, recipientType, channel) => templates.resolve(companyId, type, recipientType, channel),
      render: (template, context, channel) => renderTemplate(template, context as MergeContext, channel),
      context: (data) => buildMergeContext(data),
      email,
      sms,
    },
  });
  app.decorate('dispatcher', dispatcher);
  app.addHook('onClose', async () => {
    email.close();
    sms.close();
  });

  await app.ready();
  return app;
}
