/**
 * Configuration comes only from environment variables. Every variable is listed in README.md.
 * Signing secrets are optional outside production: a missing one is generated once and kept in
 * the database (see secrets.ts), so `npm start` needs no configuration at all.
 */

/**
 * CALENDAR_TOKEN_SECRET signs Calendar Selection Tokens and OAuth `state` (the specification: "the
 * signing secret is managed by the service"); CREDENTIAL_ENCRYPTION_SECRET is the key of stored
 * provider credentials (platform/encryption.ts; rotation: CREDENTIAL_ENCRYPTION_PREVIOUS_SECRETS).
 * MANAGE_TOKEN_SECRET signs the customer's manage-link tokens (modules/manage), managed the same way.
 */
export const SECRET_NAMES = ['AUTH_TOKEN_SECRET', 'REFRESH_TOKEN_SECRET', 'CURSOR_SECRET', 'CALENDAR_TOKEN_SECRET', 'CREDENTIAL_ENCRYPTION_SECRET', 'MANAGE_TOKEN_SECRET'] as const;
export type SecretName = (typeof SECRET_NAMES)[number];

export interface OidcConfig {
  issuer: string;
  audience: string;
  jwksUrl: string;
}

export interface AppConfig {
  nodeEnv: string;
  isProduction: boolean;
  port: number;
  host: string;
  dataDir: string;
  databaseUrl: string | undefined;
  /**
   * How often an instance on the embedded database checks its tables against autovacuum's rules
   * (platform/database/embedded-upkeep.ts), in seconds; 0 turns it off. Unused with DATABASE_URL:
   * the server's own autovacuum does this there.
   */
  embeddedUpkeepSeconds: number;
  redisUrl: string | undefined;
  logLevel: string;
  /** Secrets given in the environment; missing ones are filled from the database at start. */
  secrets: Partial<Record<SecretName, string>>;
  signupEnabled: boolean;
  publicBaseUrl: string | undefined;
  bodyLimitBytes: number;
  dashboardTokenTtlSeconds: number;
  refreshTokenTtlSeconds: number;
  docsTokenTtlSeconds: number;
  machineTokenTtlSeconds: number;
  databasePoolSize: number;
  /** Repeated statements as named prepared statements on a PostgreSQL server (platform/database/prepared-statements.ts). */
  databasePreparedStatements: boolean;
  /** Longest wait for a database connection before a request answers 503 (PostgreSQL only). */
  databaseConnectTimeoutMs: number;
  /** Longest wait for a lock before a booking answers 409 BOOKING-137 (PostgreSQL only). */
  databaseLockTimeoutMs: number;
  /** Longest a statement may run (server side), and a little longer client side (a frozen server). */
  databaseStatementTimeoutMs: number;
  /** Redis is an optimisation: every call has this deadline, and a breaker skips Redis while it fails. */
  redis: { timeoutMs: number; breakerFailures: number; breakerCooldownMs: number };
  /** Deepest nesting of arrays and objects a JSON body may have (checked before parsing). */
  jsonMaxDepth: number;
  shutdownGraceMs: number;
  oidc: OidcConfig | undefined;
  /** The availability cache; off only for measuring the uncached path (bench). */
  availabilityCacheEnabled: boolean;
  /**
   * Validators and serializers of every route compiled when the server starts (a schema that cannot
   * compile stops it there), or on each route's first request (a start about 2.5 s of CPU shorter).
   */
  schemasCompiledAtStart: boolean;
  /** SMTP server for email notifications (smtp:// or smtps://); unset: email is recorded as not sent. */
  smtpUrl: string | undefined;
  emailFrom: string;
  /** Twilio-style SMS provider; any part unset: SMS is recorded as not sent. */
  sms: { baseUrl: string | undefined; accountSid: string | undefined; authToken: string | undefined; from: string | undefined };
  /** The outbox worker (webhooks, notifications, reminders) of this instance. */
  worker: { enabled: boolean; pollMs: number; leaseMs: number; batchSize: number };
  /**
   * Test-only: deliver webhooks to loopback receivers with this CA, resolving these names locally.
   * Refused at start unless NODE_ENV is test, and the delivery client refuses it too.
   */
  webhookTest: { caFile: string; hosts: Record<string, string[]> } | undefined;
  /** Rate budgets and admission queues (see README, Rate limits). */
  rateLimits: RateLimitConfig;
  /** External calendars (decisions.md "External calendars"; docs/api.md). */
  externalCalendars: ExternalCalendarConfig;
  /** The v1 importer (docs/migration.md). */
  migration: MigrationConfig;
  /** Security settings (docs/security.md). */
  security: SecurityConfig;
}

export interface OAuthProviderConfig {
  clientId: string;
  clientSecret: string;
  authUrl: string;
  tokenUrl: string;
  apiUrl: string;
  revokeUrl?: string;
}

export interface ExternalCalendarConfig {
  google: OAuthProviderConfig;
  microsoft: OAuthProviderConfig;
  /** How often each connection is read when nothing asks sooner (default 5 minutes). */
  syncIntervalSeconds: number;
  /** How often the calendar worker looks for due syncs and write-backs. */
  pollMs: number;
  /** Deadline of one provider call. */
  timeoutMs: number;
  /** How far ahead (and one day back) busy time is read. */
  horizonDays: number;
  /** Only with NODE_ENV=test: providers on http://127.0.0.1 (local stand-ins). */
  allowLoopbackHttp: boolean;
  /** Older CREDENTIAL_ENCRYPTION_SECRET values that still open stored credentials (rotation). */
  previousEncryptionSecrets: string[];
}

export interface MigrationConfig {
  /** Runs with more records than this answer 202 with a job (smaller ones answer at once unless Prefer: respond-async). */
  syncRecordLimit: number;
  /** An instance renews its claim on a running job this often (a third of it); past it another instance resumes the job. */
  leaseSeconds: number;
  /** How often the worker looks for jobs whose instance stopped. */
  pollMs: number;
  /** Largest body of POST /v3/migration/sync (an export document). */
  bodyLimitBytes: number;
  /** Deadline of one call to a v1 source. */
  timeoutMs: number;
  /** Only with NODE_ENV=test: a v1 source on http://127.0.0.1 (the local stand-in). */
  allowLoopbackHttp: boolean;
}

export interface SecurityConfig {
  /**
   * Which peers may set X-Forwarded-For/-Proto/-Host (Fastify's trustProxy): false (none, the
   * default), a number of hops, or addresses and CIDR ranges (proxy-addr names such as loopback).
   */
  trustProxy: boolean | number | string[];
  /** Public booking pages may call from http:// origins (local development only). */
  publicHttpOrigins: boolean;
  /** Serve GET /metrics on this port of its own instead of the API port; unset: the API port. */
  metricsPort: number | undefined;
  /** Argon2 work of this instance: hashes at once, waiting room and longest wait. */
  passwordWork: { concurrency: number; queue: number; maxWaitMs: number };
  /** Failed sign-ins of one account before it is locked; the lock doubles per further failure. */
  signInLock: { afterFailures: number; baseSeconds: number; maxSeconds: number };
  /** Holds a company's public booking page may have live at once. */
  publicHoldsPerCompany: number;
  /** How long an invitation can be accepted. */
  invitationTtlSeconds: number;
}

/** TRUST_PROXY: unset/false/0 → trust nobody; 1..n → hops; else a comma list of addresses/CIDRs. */
function readTrustProxy(env: Env): SecurityConfig['trustProxy'] {
  const raw = (env.TRUST_PROXY ?? '').trim();
  if (raw === '' || ['false', 'no', 'off', '0'].includes(raw.toLowerCase())) return false;
  if (['true', 'yes', 'on'].includes(raw.toLowerCase())) {
    throw new ConfigError('TRUST_PROXY=true would trust X-Forwarded-* from anyone; give the number of proxy hops or the proxies\' addresses (for example 1, or 10.0.0.0/8,loopback)');
  }
  if (/^\d+$/.test(raw)) return readInt(env, 'TRUST_PROXY', 0, 0, 20);
  return raw.split(',').map((part) => part.trim()).filter(Boolean);
}

/** A fixed-window budget: at most `limit` requests per `windowSeconds`. */
export interface RateBudget {
  limit: number;
  windowSeconds: number;
}

/** Per-instance admission of an expensive route: concurrency caps and a bounded FIFO queue. */
export interface AdmissionLimits {
  /** Requests served at once by this instance, every company together. */
  concurrency: number;
  /** Requests of one company served at once by this instance. */
  companyConcurrency: number;
  /** Requests that may wait for a slot; beyond it a request is refused at once. */
  queue: number;
  /** Longest wait in the queue before the request is refused. */
  maxWaitMs: number;
}

export interface RateLimitConfig {
  /** false: no budgets and no admission (nothing answers 429). */
  enabled: boolean;
  /** Prefix of every Redis key of the limiter. */
  keyPrefix: string;
  budgets: {
    /** Sign-in, signup, refresh-token exchange, password change, invitation acceptance: per IP address. */
    signIn: RateBudget;
    /** Token requests per IP address, known client id or not. */
    oauthTokenIp: RateBudget;
    /** Public booking page requests per IP address, before the company's budget. */
    publicReadIp: RateBudget;
    publicWriteIp: RateBudget;
    /** Public holds per IP address. */
    publicHoldIp: RateBudget;
    /** Public bookings per customer email (for every company together). */
    publicBookEmail: RateBudget;
    /** Per OAuth client id. */
    oauthToken: RateBudget;
    /** Every token request of the deployment together. */
    oauthTokenGlobal: RateBudget;
    availability: RateBudget;
    apiRead: RateBudget;
    apiWrite: RateBudget;
    publicRead: RateBudget;
    publicWrite: RateBudget;
    appointmentList: RateBudget;
    appointmentCursor: RateBudget;
  };
  admission: {
    appointmentList: AdmissionLimits;
    appointmentCursor: AdmissionLimits;
  };
}

export class ConfigError extends Error {}

type Env = Record<string, string | undefined>;

function readInt(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ConfigError(`${name} must be a whole number from ${min} to ${max}, got "${raw}"`);
  }
  return value;
}

function readBool(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (['1', 'true', 'yes', 'on'].includes(raw.toLowerCase())) return true;
  if (['0', 'false', 'no', 'off'].includes(raw.toLowerCase())) return false;
  throw new ConfigError(`${name} must be true or false, got "${raw}"`);
}

const WINDOW_UNITS: Record<string, number> = { s: 1, m: 60, h: 3600 };

/** `600/60s`, `600/1m`, `600/m` or `600/60` (seconds): requests per window. */
function readBudget(env: Env, name: string, fallback: RateBudget): RateBudget {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const match = /^\s*(\d+)\s*\/\s*(\d*)\s*([smh]?)\s*$/i.exec(raw);
  const limit = Number(match?.[1]);
  const windowSeconds = match && (match[2] || match[3]) ? Number(match[2] || 1) * WINDOW_UNITS[(match[3] || 's').toLowerCase()]! : NaN;
  if (!match || !(limit >= 1 && limit <= 1_000_000_000) || !(windowSeconds >= 1 && windowSeconds <= 86_400)) {
    throw new ConfigError(`${name} must be requests per window such as 600/60s, 600/1m or 50/1h (at least 1 request, a window of 1 second to 24 hours), got "${raw}"`);
  }
  return { limit, windowSeconds };
}

function readAdmission(env: Env, prefix: string, fallback: AdmissionLimits): AdmissionLimits {
  return {
    concurrency: readInt(env, `${prefix}_CONCURRENCY`, fallback.concurrency, 1, 10_000),
    companyConcurrency: readInt(env, `${prefix}_COMPANY_CONCURRENCY`, fallback.companyConcurrency, 1, 10_000),
    queue: readInt(env, `${prefix}_QUEUE`, fallback.queue, 0, 100_000),
    maxWaitMs: readInt(env, `${prefix}_MAX_WAIT_MS`, fallback.maxWaitMs, 0, 600_000),
  };
}

function readRateLimits(env: Env): RateLimitConfig {
  const minute = (limit: number): RateBudget => ({ limit, windowSeconds: 60 });
  return {
    enabled: readBool(env, 'RATE_LIMITS_ENABLED', true),
    keyPrefix: env.RATE_LIMIT_KEY_PREFIX || 'rl:',
    budgets: {
      signIn: readBudget(env, 'RATE_LIMIT_SIGN_IN', minute(20)),
      oauthTokenIp: readBudget(env, 'RATE_LIMIT_OAUTH_TOKEN_IP', minute(120)),
      publicReadIp: readBudget(env, 'RATE_LIMIT_PUBLIC_READ_IP', minute(600)),
      publicWriteIp: readBudget(env, 'RATE_LIMIT_PUBLIC_WRITE_IP', minute(60)),
      publicHoldIp: readBudget(env, 'RATE_LIMIT_PUBLIC_HOLD_IP', { limit: 10, windowSeconds: 600 }),
      publicBookEmail: readBudget(env, 'RATE_LIMIT_PUBLIC_BOOK_EMAIL', { limit: 5, windowSeconds: 3600 }),
      oauthToken: readBudget(env, 'RATE_LIMIT_OAUTH_TOKEN', minute(60)),
      oauthTokenGlobal: readBudget(env, 'RATE_LIMIT_OAUTH_TOKEN_GLOBAL', minute(1200)),
      availability: readBudget(env, 'RATE_LIMIT_AVAILABILITY', minute(600)),
      apiRead: readBudget(env, 'RATE_LIMIT_API_READ', minute(1200)),
      apiWrite: readBudget(env, 'RATE_LIMIT_API_WRITE', minute(600)),
      publicRead: readBudget(env, 'RATE_LIMIT_PUBLIC_READ', minute(2400)),
      publicWrite: readBudget(env, 'RATE_LIMIT_PUBLIC_WRITE', minute(300)),
      appointmentList: readBudget(env, 'RATE_LIMIT_APPOINTMENT_LIST', minute(120)),
      appointmentCursor: readBudget(env, 'RATE_LIMIT_APPOINTMENT_CURSOR', minute(600)),
    },
    admission: {
      // Together below DATABASE_POOL_SIZE's default (10), so other routes always find a connection.
      appointmentList: readAdmission(env, 'APPOINTMENT_LIST', { concurrency: 4, companyConcurrency: 2, queue: 16, maxWaitMs: 2000 }),
      appointmentCursor: readAdmission(env, 'APPOINTMENT_CURSOR', { concurrency: 5, companyConcurrency: 3, queue: 32, maxWaitMs: 5000 }),
    },
  };
}

export function loadConfig(env: Env = process.env): AppConfig {
  const nodeEnv = env.NODE_ENV ?? 'development';
  const isProduction = nodeEnv === 'production';

  const secrets: Partial<Record<SecretName, string>> = {};
  for (const name of SECRET_NAMES) {
    const value = env[name];
    if (value !== undefined && value !== '') {
      if (value.length < 32) throw new ConfigError(`${name} must be at least 32 characters long`);
      secrets[name] = value;
    }
  }
  if (isProduction) {
    const missing = SECRET_NAMES.filter((name) => secrets[name] === undefined);
    if (missing.length > 0) {
      throw new ConfigError(`NODE_ENV=production requires these secrets to be set: ${missing.join(', ')}`);
    }
  }

  const oidcIssuer = env.OIDC_ISSUER;
  let oidc: OidcConfig | undefined;
  if (oidcIssuer) {
    const jwksUrl = env.OIDC_JWKS_URL;
    const audience = env.OIDC_AUDIENCE;
    if (!jwksUrl || !audience) throw new ConfigError('OIDC_ISSUER requires OIDC_JWKS_URL and OIDC_AUDIENCE');
    oidc = { issuer: oidcIssuer, audience, jwksUrl };
  }

  let webhookTest: AppConfig['webhookTest'];
  if (env.WEBHOOK_TEST_CA_FILE || env.WEBHOOK_TEST_HOSTS) {
    if (nodeEnv !== 'test') throw new ConfigError('WEBHOOK_TEST_CA_FILE and WEBHOOK_TEST_HOSTS exist only for tests (NODE_ENV=test)');
    const hosts: Record<string, string[]> = {};
    for (const pair of (env.WEBHOOK_TEST_HOSTS ?? '').split(',').filter(Boolean)) {
      const [name, address] = pair.split('=');
      if (!name || !address) throw new ConfigError('WEBHOOK_TEST_HOSTS is name=address,name=address');
      (hosts[name.toLowerCase()] ??= []).push(address);
    }
    webhookTest = { caFile: env.WEBHOOK_TEST_CA_FILE ?? '', hosts };
  }

  return {
    nodeEnv,
    isProduction,
    port: readInt(env, 'PORT', 3000, 0, 65535),
    host: env.HOST || '0.0.0.0',
    dataDir: env.DATA_DIR || './data',
    embeddedUpkeepSeconds: readInt(env, 'EMBEDDED_UPKEEP_SECONDS', 10, 0, 3600),
    databaseUrl: env.DATABASE_URL || undefined,
    redisUrl: env.REDIS_URL || undefined,
    logLevel: env.LOG_LEVEL || (nodeEnv === 'test' ? 'silent' : 'info'),
    secrets,
    signupEnabled: readBool(env, 'SIGNUP_ENABLED', true),
    publicBaseUrl: env.PUBLIC_BASE_URL || undefined,
    bodyLimitBytes: readInt(env, 'BODY_LIMIT_BYTES', 1_048_576, 1024, 104_857_600),
    dashboardTokenTtlSeconds: readInt(env, 'DASHBOARD_TOKEN_TTL_SECONDS', 3600, 60, 86_400),
    refreshTokenTtlSeconds: readInt(env, 'REFRESH_TOKEN_TTL_SECONDS', 30 * 86_400, 3600, 365 * 86_400),
    docsTokenTtlSeconds: readInt(env, 'DOCS_TOKEN_TTL_SECONDS', 900, 60, 86_400),
    machineTokenTtlSeconds: 3600,
    databasePoolSize: readInt(env, 'DATABASE_POOL_SIZE', 10, 1, 500),
    databasePreparedStatements: readBool(env, 'DATABASE_PREPARED_STATEMENTS', true),
    databaseConnectTimeoutMs: readInt(env, 'DATABASE_CONNECT_TIMEOUT_MS', 5000, 100, 600_000),
    databaseLockTimeoutMs: readInt(env, 'DATABASE_LOCK_TIMEOUT_MS', 2000, 0, 600_000),
    databaseStatementTimeoutMs: readInt(env, 'DATABASE_STATEMENT_TIMEOUT_MS', 30_000, 0, 3_600_000),
    redis: {
      timeoutMs: readInt(env, 'REDIS_TIMEOUT_MS', 100, 1, 60_000),
      breakerFailures: readInt(env, 'REDIS_BREAKER_FAILURES', 3, 1, 1000),
      breakerCooldownMs: readInt(env, 'REDIS_BREAKER_COOLDOWN_MS', 5000, 100, 600_000),
    },
    jsonMaxDepth: readInt(env, 'JSON_MAX_DEPTH', 64, 2, 1000),
    shutdownGraceMs: readInt(env, 'SHUTDOWN_GRACE_MS', 10_000, 0, 600_000),
    oidc,
    availabilityCacheEnabled: readBool(env, 'AVAILABILITY_CACHE', true),
    schemasCompiledAtStart: readBool(env, 'SCHEMAS_COMPILED_AT_START', true),
    smtpUrl: env.SMTP_URL || undefined,
    emailFrom: env.EMAIL_FROM || 'Slotwise <no-reply@slotwise.local>',
    sms: {
      baseUrl: env.SMS_PROVIDER_URL || undefined,
      accountSid: env.SMS_ACCOUNT_SID || undefined,
      authToken: env.SMS_AUTH_TOKEN || undefined,
      from: env.SMS_FROM || undefined,
    },
    worker: {
      enabled: readBool(env, 'WORKER_ENABLED', true),
      pollMs: readInt(env, 'OUTBOX_POLL_MS', 1000, 50, 60_000),
      leaseMs: readInt(env, 'OUTBOX_LEASE_MS', 60_000, 1000, 3_600_000),
      batchSize: readInt(env, 'OUTBOX_BATCH_SIZE', 20, 1, 500),
    },
    webhookTest,
    rateLimits: readRateLimits(env),
    externalCalendars: {
      google: {
        clientId: env.GOOGLE_CLIENT_ID ?? '',
        clientSecret: env.GOOGLE_CLIENT_SECRET ?? '',
        authUrl: env.GOOGLE_AUTH_URL || 'https://accounts.google.com/o/oauth2/v2/auth',
        tokenUrl: env.GOOGLE_TOKEN_URL || 'https://oauth2.googleapis.com/token',
        apiUrl: env.GOOGLE_API_URL || 'https://www.googleapis.com/calendar/v3',
        revokeUrl: env.GOOGLE_REVOKE_URL || 'https://oauth2.googleapis.com/revoke',
      },
      microsoft: {
        clientId: env.MICROSOFT_CLIENT_ID ?? '',
        clientSecret: env.MICROSOFT_CLIENT_SECRET ?? '',
        authUrl: env.MICROSOFT_AUTH_URL || 'https://login.microsoftonline.com/common/oauth2/v2.0/authorize',
        tokenUrl: env.MICROSOFT_TOKEN_URL || 'https://login.microsoftonline.com/common/oauth2/v2.0/token',
        apiUrl: env.MICROSOFT_GRAPH_URL || 'https://graph.microsoft.com/v1.0',
      },
      syncIntervalSeconds: readInt(env, 'EXTERNAL_CALENDAR_SYNC_INTERVAL_SECONDS', 300, 10, 86_400),
      pollMs: readInt(env, 'EXTERNAL_CALENDAR_POLL_MS', 5000, 50, 600_000),
      timeoutMs: readInt(env, 'EXTERNAL_CALENDAR_TIMEOUT_MS', 10_000, 100, 120_000),
      horizonDays: readInt(env, 'EXTERNAL_CALENDAR_HORIZON_DAYS', 365, 1, 1095),
      allowLoopbackHttp: nodeEnv === 'test',
      previousEncryptionSecrets: (env.CREDENTIAL_ENCRYPTION_PREVIOUS_SECRETS ?? '').split(',').map((v) => v.trim()).filter(Boolean),
    },
    migration: {
      syncRecordLimit: readInt(env, 'MIGRATION_SYNC_RECORD_LIMIT', 2000, 0, 1_000_000),
      leaseSeconds: readInt(env, 'MIGRATION_LEASE_SECONDS', 60, 1, 3600),
      pollMs: readInt(env, 'MIGRATION_POLL_MS', 10_000, 50, 600_000),
      bodyLimitBytes: readInt(env, 'MIGRATION_BODY_LIMIT_BYTES', 268_435_456, 1024, 1_073_741_824),
      timeoutMs: readInt(env, 'MIGRATION_SOURCE_TIMEOUT_MS', 30_000, 100, 300_000),
      allowLoopbackHttp: nodeEnv === 'test',
    },
    security: {
      trustProxy: readTrustProxy(env),
      publicHttpOrigins: readBool(env, 'PUBLIC_ALLOW_HTTP_ORIGINS', false),
      metricsPort: env.METRICS_PORT ? readInt(env, 'METRICS_PORT', 0, 0, 65535) : undefined,
      passwordWork: {
        concurrency: readInt(env, 'PASSWORD_HASH_CONCURRENCY', 2, 1, 256),
        queue: readInt(env, 'PASSWORD_HASH_QUEUE', 32, 0, 10_000),
        maxWaitMs: readInt(env, 'PASSWORD_HASH_MAX_WAIT_MS', 5000, 0, 60_000),
      },
      signInLock: {
        afterFailures: readInt(env, 'SIGN_IN_LOCK_AFTER_FAILURES', 5, 1, 1000),
        baseSeconds: readInt(env, 'SIGN_IN_LOCK_SECONDS', 30, 1, 86_400),
        maxSeconds: readInt(env, 'SIGN_IN_LOCK_MAX_SECONDS', 900, 1, 86_400),
      },
      publicHoldsPerCompany: readInt(env, 'PUBLIC_HOLDS_PER_COMPANY', 50, 1, 100_000),
      invitationTtlSeconds: readInt(env, 'INVITATION_TTL_SECONDS', 7 * 86_400, 300, 90 * 86_400),
    },
  };
}
