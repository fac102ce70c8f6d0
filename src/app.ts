import { randomUUID } from 'node:crypto';
import Fastify from 'fastify';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FastifyServerOptions } from 'fastify';
import type { Redis } from 'ioredis';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { AppConfig } from './platform/config.js';
import type { DatabaseHandle } from './platform/database/index.js';
import type { Secrets } from './platform/secrets.js';
import { registerErrorHandling } from './platform/errors.js';
import { registerValidation } from './platform/validation.js';
import { VALIDATION_ERROR, fieldError } from './platform/errors.js';
import { RedisUnavailableError, createRedisGuard } from './platform/redis.js';
import type { RedisGuard } from './platform/redis.js';
import { registerBodyParsers } from './platform/http/body-parsers.js';
import { registerRouteRegistry, registerStandardHeaders } from './platform/http/hooks.js';
import { registerOpenApiGenerator } from './platform/http/openapi-generator.js';
import { createTokenService } from './platform/auth/tokens.js';
import { createPrincipalRepository } from './platform/auth/principal-repository.js';
import { registerAuthentication } from './platform/auth/authenticate.js';
import { createPasswordHasher } from './platform/auth/passwords.js';
import { registerRateLimits } from './platform/rate-limit/index.js';
import { createEmailSender } from './platform/messaging/email.js';
import { createSmsSender } from './platform/messaging/sms.js';
import { registerMetrics } from './platform/metrics.js';
import type { Metrics } from './platform/metrics.js';
import type { App } from './platform/http/types.js';
import { createDisabledAvailabilityCache, createMemoryAvailabilityCache, createRedisAvailabilityCache } from './modules/availability/cache.js';
import type { AvailabilityCache } from './modules/availability/cache.js';
import { createRepositories } from './modules/parts.js';
import type { AppModule, AppParts } from './modules/parts.js';
import { operationsModule } from './modules/operations/module.js';
import { bookingPageModule } from './modules/booking-page/module.js';
import { identityModule } from './modules/identity/module.js';
import { companiesModule } from './modules/companies/module.js';
import { clientCredentialsModule } from './modules/client-credentials/module.js';
import { publicModule } from './modules/public/module.js';
import { locationsModule } from './modules/locations/module.js';
import { servicesModule } from './modules/services/module.js';
import { resourcesModule } from './modules/resources/module.js';
import { customersModule } from './modules/customers/module.js';
import { usersModule } from './modules/users/module.js';
import { unavailabilityModule } from './modules/unavailability/module.js';
import { availabilityModule } from './modules/availability/module.js';
import { appointmentsModule } from './modules/appointments/module.js';
import { webhooksModule } from './modules/webhooks/module.js';
import { templatesModule } from './modules/templates/module.js';
import { notificationsModule } from './modules/notifications/module.js';
import { externalCalendarsModule } from './modules/external-calendars/module.js';
import { migrationModule } from './modules/migration/module.js';
import { manageModule } from './modules/manage/module.js';
import { createExternalCalendarEngine } from './modules/external-calendars/engine.js';
import { lazySchemaController } from './platform/http/lazy-schemas.js';

/** Every capability, in the order its routes are registered (and listed in /openapi.json). */
export const MODULES: readonly AppModule[] = [
  operationsModule,
  bookingPageModule,
  identityModule,
  companiesModule,
  clientCredentialsModule,
  publicModule,
  locationsModule,
  servicesModule,
  resourcesModule,
  customersModule,
  usersModule,
  unavailabilityModule,
  availabilityModule,
  appointmentsModule,
  webhooksModule,
  templatesModule,
  notificationsModule,
  externalCalendarsModule,
  migrationModule,
  manageModule,
];

export interface BuildAppOptions {
  config: AppConfig;
  /** Shared state across instances (caches, rate limits); in-process state without it. */
  redis?: Redis | undefined;
  database: DatabaseHandle;
  secrets: Secrets;
  /** Set by the server during shutdown so /readyz fails while requests drain. */
  isDraining?: () => boolean;
  /**
   * Compile each route's validators and serializers on first use instead of at start
   * (platform/http/lazy-schemas.ts): for tests, which build the whole app and call a few routes.
   */
  compileSchemasOnFirstUse?: boolean;
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

/** Query parameters that carry a one-time secret (the external calendar OAuth callback's code and state). */
const SECRET_QUERY_PARAMETERS = ['code', 'state', 'token'];

/** Paths whose rest is a credential: the customer's manage page, /manage/<token> (modules/booking-page). */
const SECRET_PATH_PREFIXES = ['/manage/'];

/**
 * Fastify's request log fields (method, url, host, addresses), with the values of secret query
 * parameters and the token of a secret path replaced: the request line is logged before any route
 * could hide them.
 */
export function serializeRequest(request: FastifyRequest) {
  let url = request.url;
  // Everything after the prefix goes, query included: a malformed or over-long token is a credential too.
  const secretPrefix = SECRET_PATH_PREFIXES.find((prefix) => url.toLowerCase().startsWith(prefix));
  if (secretPrefix) url = `${secretPrefix}[redacted]`;
  const question = url.indexOf('?');
  if (question !== -1) {
    const query = new URLSearchParams(url.slice(question + 1));
    let changed = false;
    for (const name of SECRET_QUERY_PARAMETERS) {
      if (query.has(name)) {
        query.set(name, '[redacted]');
        changed = true;
      }
    }
    if (changed) url = `${url.slice(0, question)}?${query.toString()}`;
  }
  return { method: request.method, url, host: request.host, remoteAddress: request.ip, remotePort: request.socket?.remotePort };
}

/** Builds the whole HTTP application: platform hooks first, then every capability's routes. */
export async function buildApp({ config, database, secrets, redis, isDraining = () => false, compileSchemasOnFirstUse = false }: BuildAppOptions): Promise<App> {
  const app = Fastify({
    ...(compileSchemasOnFirstUse ? { schemaController: lazySchemaController } : {}),
    logger: { level: config.logLevel, redact: { paths: LOG_REDACTIONS, censor: '[redacted]' }, serializers: { req: serializeRequest } },
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
      // frameworkErrors types its reply over the raw server's generics; this app's reply is a FastifyReply.
      void (reply as FastifyReply).status(400).type('application/json; charset=utf-8').send({ success: false, message: VALIDATION_ERROR, errors: [fieldError('params', '', msg)] });
    },
  }).withTypeProvider<TypeBoxTypeProvider>();

  registerValidation(app, { compileOnFirstUse: compileSchemasOnFirstUse });
  registerErrorHandling(app);
  await registerBodyParsers(app, { jsonMaxDepth: config.jsonMaxDepth });
  registerStandardHeaders(app);
  registerRouteRegistry(app);


  // Prometheus metrics: every answer is counted (onResponse); GET /metrics serves them.
  const metrics = registerMetrics(app, { database, log: app.log, ownPort: config.security.metricsPort !== undefined });
  await registerOpenApiGenerator(app);


  const tokens = createTokenService(secrets, config, config.oidc);
  registerAuthentication(app, { tokens, principals: createPrincipalRepository(database.db), publicHttpOrigins: config.security.publicHttpOrigins });
  const repositories = createRepositories(database.db);
  // Every Redis call has a deadline and goes through one breaker per instance (platform/redis.ts).
  const redisGuard = redis ? guardRedis(app, redis, config, metrics) : undefined;
  // Budgets per company or dashboard user, and admission to the appointment lists: after authentication.
  registerRateLimits(app, {
    config: config.rateLimits,
    redis: redisGuard,
    knownClientId: async (clientId) => (await repositories.clientCredentials.byClientId(clientId)) !== undefined,
  });

  const availabilityCache = buildAvailabilityCache(app, config, redisGuard);
  // Invitations go out by email at once (not through the outbox): the token exists only in the mail.
  const email = createEmailSender({ smtpUrl: config.smtpUrl, from: config.emailFrom });
  const sms = createSmsSender(config.sms);
  app.addHook('onClose', async () => {
    email.close();
    sms.close();
    // Answers still being compressed and stored (cache.ts) finish before Redis is closed under them.
    await availabilityCache.close();
  });
  const touch = availabilityCache.touch.bind(availabilityCache);
  const externalCalendars = createExternalCalendarEngine({ db: database.db, config, secrets, repositories, touch, log: app.log });
  const parts: AppParts = {
    config,
    db: database.db,
    secrets,
    log: app.log,
    tokens,
    // Every Argon2 hash and check of this instance goes through one gate (docs/security.md).
    passwords: createPasswordHasher(config.security.passwordWork),
    email,
    sms,
    metrics,
    repositories,
    availabilityCache,
    touch,
    externalCalendars,
    companySummary: async (companyId) => ({ id: companyId, name: (await repositories.companies.byId(companyId))?.name ?? '' }),
    isDraining,
  };
  for (const module of MODULES) module.register(app, parts);

  await app.ready();
  return app;
}

/** Every Redis call of this instance goes through this guard: a deadline and a circuit breaker. */
function guardRedis(app: App, redis: Redis, config: AppConfig, metrics: Metrics): RedisGuard {
  return createRedisGuard(redis, config.redis, {
    onFailure: (operation) => metrics.recordRedisFailure(operation),
    onOpen: (error) => {
      metrics.setRedisBreakerOpen(true);
      app.log.warn({ err: error }, 'Redis is failing; skipping it for a while (rate limits count in this instance, the availability cache is bypassed)');
    },
    onClose: () => {
      metrics.setRedisBreakerOpen(false);
      app.log.info('Redis answers again');
    },
  });
}

/** Shared in Redis when there is one, else in process; catalog and booking writes clear what they affect. */
function buildAvailabilityCache(app: App, config: AppConfig, redisGuard: RedisGuard | undefined): AvailabilityCache {
  if (!config.availabilityCacheEnabled) return createDisabledAvailabilityCache();
  if (!redisGuard) return createMemoryAvailabilityCache();
  return createRedisAvailabilityCache(redisGuard, (error, operation) => {
    // While the breaker is open every call is skipped: the breaker logged that once already.
    if (!(error instanceof RedisUnavailableError && redisGuard.open)) app.log.warn({ err: error, operation }, 'availability cache: Redis failed or held an unusable value; the cache was skipped for this call');
  });
}
