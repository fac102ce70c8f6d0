/**
 * Configuration comes only from environment variables. Every variable is listed in README.md.
 * Signing secrets are optional outside production: a missing one is generated once and kept in
 * the database (see secrets.ts), so `npm start` needs no configuration at all.
 */

export const SECRET_NAMES = ['AUTH_TOKEN_SECRET', 'REFRESH_TOKEN_SECRET', 'CURSOR_SECRET'] as const;
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
  shutdownGraceMs: number;
  oidc: OidcConfig | undefined;
  /** The availability cache; off only for measuring the uncached path (bench). */
  availabilityCacheEnabled: boolean;
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
    shutdownGraceMs: readInt(env, 'SHUTDOWN_GRACE_MS', 10_000, 0, 600_000),
    oidc,
    availabilityCacheEnabled: readBool(env, 'AVAILABILITY_CACHE', true),
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
  };
}
